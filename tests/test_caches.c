/* Caches and their failure modes: the OpenCL runtime without a writable
 * cache directory, a binary-cache entry holding the wrong program, the
 * tuning cache's writer against planted symbolic links and an unusable
 * cache location; and two front-end answers that must not depend on the
 * backend or hide a bad argument (1-wide phase correlation, a disparity
 * error border that leaves no pixel). */
#include "test_util.h"
#include "io_limits.h"
#ifdef PV_HAVE_OPENCL
#include "../backends/opencl/runtime/runtime_cache.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

static void remove_tree(const char *path)
{
    char command[4300];
    snprintf(command, sizeof command, "rm -rf '%s'", path);
    assert_int_equal(system(command), 0);
}

static char *read_whole(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    char *data = malloc(1 << 24);
    *size = data ? fread(data, 1, 1 << 24, file) : 0;
    fclose(file);
    return data;
}

/* The cache entry `name` of dir, read whole; its path is left in path. */
static char *read_entry(const char *dir, const char *name, char *path, size_t path_size,
                        size_t *size)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    char *data = read_whole(path, size);
    assert_non_null(data);
    return data;
}

/* A fresh cache root for one test: XDG_CACHE_HOME points at an empty
 * directory (home) whose parvis/ subdirectory (dir) the library fills;
 * leave_cache_home puts the caller's XDG_CACHE_HOME back. */
typedef struct cache_home {
    char home[4096], dir[4200], saved[4096];
} cache_home;

static void enter_cache_home(cache_home *cache, const char *name)
{
    snprintf(cache->home, sizeof cache->home, "%s", tu_tmp_path(name));
    remove_tree(cache->home);
    mkdir(cache->home, 0755);
    snprintf(cache->dir, sizeof cache->dir, "%s/parvis", cache->home);
    const char *saved = getenv("XDG_CACHE_HOME");
    snprintf(cache->saved, sizeof cache->saved, "%s", saved ? saved : "");
    setenv("XDG_CACHE_HOME", cache->home, 1);
}

static void leave_cache_home(const cache_home *cache)
{
    if (cache->saved[0])
        setenv("XDG_CACHE_HOME", cache->saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
}

static pv_status blur_once(pv_context *ctx)
{
    pv_image src, dst;
    pv_status status = pv_image_alloc(&src, 16, 16, PV_PIXEL_F32);
    if (status != PV_OK)
        return status;
    status = pv_image_alloc(&dst, 16, 16, PV_PIXEL_F32);
    if (status == PV_OK)
        status = pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0);
    image_list_free(&src, &dst, NULL);
    return status;
}

/* ------------------------------------------- no writable cache directory */

/* In a fresh process whose XDG_CACHE_HOME is a regular file (no directory
 * can be made under it, not even by root): the OpenCL backend must still
 * start and compute, uncached. */
static void test_opencl_starts_without_a_writable_cache(void **state)
{
    (void)state;
    if (!tu_child_sees_opencl())
        skip();
    const char *blocker = tu_tmp_path("cache-blocker");
    tu_write_file(blocker, "x", 1);
    const char *tmp = tu_tmp_path("cache-tmpdir");
    mkdir(tmp, 0700);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("XDG_CACHE_HOME", blocker, 1);
        setenv("TMPDIR", tmp, 1);
        unsetenv("POCL_CACHE_DIR");
        pv_context_options options;
        pv_context_options_default(&options);
        options.backend = PV_BACKEND_OPENCL;
        pv_context *ctx = NULL;
        pv_status status = pv_context_create(&ctx, &options);
        if (status == PV_OK)
            status = blur_once(ctx);
        if (status != PV_OK)
            fprintf(stderr, "without a cache: %s\n", pv_last_error());
        pv_context_destroy(ctx);
        _exit(status == PV_OK ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ------------------------------------------- a binary-cache entry swapped */

#define CACHE_HEADER_KEY 8  /* magic[8], then the key (u64) */

typedef struct file_list {
    int count;
    char names[64][64];
} file_list;

static void list_entries(const char *dir, file_list *list)
{
    list->count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && list->count < 64)
        if (strstr(e->d_name, ".clbin") && strlen(e->d_name) < 64)
            snprintf(list->names[list->count++], 64, "%s", e->d_name);
    closedir(d);
}

static int listed(const file_list *list, const char *name)
{
    for (int i = 0; i < list->count; i++)
        if (strcmp(list->names[i], name) == 0)
            return 1;
    return 0;
}

static pv_status sad_once(pv_context *ctx, pv_image *disparity)
{
    pv_image left, right;
    pv_status status = pv_image_alloc(&left, 40, 24, PV_PIXEL_U8);
    if (status == PV_OK)
        status = pv_image_alloc(&right, 40, 24, PV_PIXEL_U8);
    if (status != PV_OK)
        return status;
    tu_fill_random(&left, 5);
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 40; x++)
            ((uint8_t *)right.data)[y * 40 + x] = ((uint8_t *)left.data)[y * 40 + (x + 2) % 40];
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 6;
    status = pv_stereo_sad(ctx, &left, &right, &params, disparity);
    image_list_free(&left, &right, NULL);
    return status;
}

/* Every new SAD entry gets a filter program's binary behind its own valid
 * header (magic, its key, a correct checksum): the runtime must notice the
 * program does not have its kernels, drop the entry, rebuild from source,
 * compute the right answer and leave a working entry for the next run. */
static void test_swapped_binary_cache_entry_is_repaired(void **state)
{
    (void)state;
    pv_context_destroy(tu_new_opencl_or_skip());
    cache_home cache;
    enter_cache_home(&cache, "swap-cache");

    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    assert_int_equal(blur_once(ctx), PV_OK);
    file_list filter_entries, all;
    list_entries(cache.dir, &filter_entries);
    assert_true(filter_entries.count > 0);
    pv_image expected, got;
    assert_int_equal(pv_image_alloc(&expected, 40, 24, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&got, 40, 24, PV_PIXEL_F32), PV_OK);
    assert_int_equal(sad_once(ctx, &expected), PV_OK);
    pv_context_destroy(ctx);
    list_entries(cache.dir, &all);

    char path[4400];
    size_t donor_size = 0;
    char *donor = read_entry(cache.dir, filter_entries.names[0], path, sizeof path, &donor_size);
    assert_true(donor_size > 32);
    int swapped = 0;
    for (int i = 0; i < all.count; i++) {
        if (listed(&filter_entries, all.names[i]))
            continue;
        size_t size = 0;
        char *own = read_entry(cache.dir, all.names[i], path, sizeof path, &size);
        assert_true(size > 32);
        memcpy(donor + CACHE_HEADER_KEY, own + CACHE_HEADER_KEY, 8); /* its own key */
        tu_write_file(path, donor, donor_size);
        free(own);
        swapped++;
    }
    assert_true(swapped > 0);

    ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    assert_int_equal(sad_once(ctx, &got), PV_OK);
    assert_true(tu_rel_linf(&got, &expected) == 0.0);
    pv_context_destroy(ctx);
    for (int i = 0; i < all.count; i++) {
        if (listed(&filter_entries, all.names[i]))
            continue;
        size_t size = 0; /* stored again: */
        char *now = read_entry(cache.dir, all.names[i], path, sizeof path, &size);
        assert_false(size == donor_size && memcmp(now + 16, donor + 16, size - 16) == 0);
        free(now);
    }
    /* The repaired cache serves the next context. */
    ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    tu_fill_image(&got, 0.0f);
    assert_int_equal(sad_once(ctx, &got), PV_OK);
    assert_true(tu_rel_linf(&got, &expected) == 0.0);
    pv_context_destroy(ctx);

    free(donor);
    image_list_free(&expected, &got, NULL);
    leave_cache_home(&cache);
}

/* ------------------------------- a binary-cache entry claiming too much */

#ifdef PV_HAVE_OPENCL
#define CACHE_HEADER_SIZE 24 /* after magic[8] and the key: the size (u64) */
#define ENTRY_KEY 0x1234567890abcdefull

/* An entry for ENTRY_KEY whose header claims `claimed` bytes and a
 * checksum of `body`, followed by body. */
static void write_entry(const char *path, uint64_t claimed, const unsigned char *body,
                        size_t body_size)
{
    pv_cl_cache_header header;
    memcpy(header.magic, PV_CL_CACHE_MAGIC, 8);
    header.key = ENTRY_KEY;
    header.size = claimed;
    header.checksum = pv_cl_fnv1a(PV_CL_FNV_START, body, body_size);
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fwrite(&header, sizeof header, 1, file), 1);
    assert_int_equal(fwrite(body, 1, body_size, file), body_size);
    assert_int_equal(fclose(file), 0);
}

/* The reader on the file at arg: "untouched" when it refused the entry
 * without a failed allocation (under the child's address-space limit a
 * reader that allocates what the header claims sees malloc fail with
 * ENOMEM). */
static pv_status read_entry_limited(const void *arg, int *untouched)
{
    FILE *file = fopen(arg, "rb");
    if (!file)
        return PV_ERR_IO;
    size_t size = 0;
    errno = 0;
    unsigned char *binary = pv_cl_cache_read_entry(file, ENTRY_KEY, &size);
    int out_of_memory = errno == ENOMEM;
    fclose(file);
    *untouched = binary == NULL && !out_of_memory;
    free(binary);
    return binary ? PV_OK : PV_ERR_FORMAT;
}

static int entry_reads_back(const char *path, size_t expected_size)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    size_t size = 0;
    unsigned char *binary = pv_cl_cache_read_entry(file, ENTRY_KEY, &size);
    fclose(file);
    free(binary);
    return binary != NULL && size == expected_size;
}
#endif

/* A header claiming (almost) 1 GiB in a file of a few hundred bytes: the
 * reader compares the claim with the file's size before allocating (it
 * used to allocate the claim, then find the file short).  Checked on the
 * reader itself in a child whose address space may grow by 64 MiB only,
 * then through a context: the entry is dropped and the program rebuilt. */
static void test_binary_cache_entry_claiming_1gib_is_refused_unread(void **state)
{
    (void)state;
#ifndef PV_HAVE_OPENCL
    skip();
#else
    unsigned char body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (unsigned char)(i * 7);
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_tmp_path("claims-1gib.clbin"));

    write_entry(path, sizeof body, body, sizeof body);
    assert_true(entry_reads_back(path, sizeof body)); /* the well-formed entry is read */
    const uint64_t wrong[] = {((uint64_t)1 << 30) - 1, sizeof body + 1, sizeof body - 1};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        write_entry(path, wrong[i], body, sizeof body);
        io_limited_result r;
        io_run_limited(read_entry_limited, path, 64, &r);
        assert_int_equal(r.status, PV_ERR_FORMAT);
        assert_true(r.untouched);
    }

    pv_context *probe = tu_context(PV_BACKEND_OPENCL);
    int opencl = probe && pv_context_backend(probe) == PV_BACKEND_OPENCL;
    pv_context_destroy(probe);
    if (!opencl)
        return;
    cache_home cache;
    enter_cache_home(&cache, "claims-cache");

    pv_image expected, got;
    assert_int_equal(pv_image_alloc(&expected, 40, 24, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&got, 40, 24, PV_PIXEL_F32), PV_OK);
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    assert_int_equal(sad_once(ctx, &expected), PV_OK);
    pv_context_destroy(ctx);
    file_list entries;
    list_entries(cache.dir, &entries);
    assert_true(entries.count > 0);
    const uint64_t claim = ((uint64_t)1 << 30) - 1;
    for (int i = 0; i < entries.count; i++) {
        char entry[4400];
        snprintf(entry, sizeof entry, "%s/%s", cache.dir, entries.names[i]);
        FILE *file = fopen(entry, "r+b");
        assert_non_null(file);
        assert_int_equal(fseek(file, CACHE_HEADER_SIZE - 8, SEEK_SET), 0);
        assert_int_equal(fwrite(&claim, sizeof claim, 1, file), 1);
        assert_int_equal(fclose(file), 0);
    }

    ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    assert_int_equal(sad_once(ctx, &got), PV_OK);
    assert_true(tu_rel_linf(&got, &expected) == 0.0);
    pv_context_destroy(ctx);
    for (int i = 0; i < entries.count; i++) { /* each stored again with its true size */
        char entry[4400];
        snprintf(entry, sizeof entry, "%s/%s", cache.dir, entries.names[i]);
        FILE *file = fopen(entry, "rb");
        assert_non_null(file);
        pv_cl_cache_header header;
        assert_int_equal(fread(&header, sizeof header, 1, file), 1);
        assert_int_equal(fseek(file, 0, SEEK_END), 0);
        assert_true(header.size + sizeof header == (uint64_t)ftell(file));
        fclose(file);
    }
    image_list_free(&expected, &got, NULL);
    leave_cache_home(&cache);
#endif
}

/* ------------------------------------------------------ the tuning cache */

static pv_context *tune_context(const char *dir)
{
    setenv("PARVIS_TUNE_DIR", dir, 1);
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (ctx && pv_context_backend(ctx) != PV_BACKEND_OPENCL) {
        pv_context_destroy(ctx);
        ctx = NULL;
    }
    return ctx;
}

static void quick_tune_options(pv_tune_options *options)
{
    pv_tune_options_default(options);
    options->op = "sad";
    options->max_candidates = 1;
    options->runs = 1;
    options->width = 64;
    options->height = 32;
    options->ndisp = 8;
    options->write_cache = 1;
}

static int file_says(const char *path, const char *text)
{
    size_t size = 0;
    char *data = read_whole(path, &size);
    int same = data && size == strlen(text) && memcmp(data, text, size) == 0;
    free(data);
    return same;
}

/* Links planted at the old predictable temporary name (<path>.<pid>.tmp)
 * and at the final name must not lead the writer to another file. */
static void test_tune_writer_refuses_planted_links(void **state)
{
    (void)state;
    char dir[4096], path[4300], victim[4300], victim2[4300], planted[4400];
    snprintf(dir, sizeof dir, "%s", tu_tmp_path("tune-links"));
    remove_tree(dir);
    mkdir(dir, 0755);
    pv_context *ctx = tune_context(dir);
    if (!ctx) {
        unsetenv("PARVIS_TUNE_DIR");
        skip();
    }
    assert_int_equal(pv_tune_cache_path(ctx, path, sizeof path), PV_OK);
    snprintf(victim, sizeof victim, "%s/victim-temporary", dir);
    snprintf(victim2, sizeof victim2, "%s/victim-final", dir);
    tu_write_file(victim, "precious\n", 9);
    tu_write_file(victim2, "precious too\n", 13);
    snprintf(planted, sizeof planted, "%s.%ld.tmp", path, (long)getpid());
    assert_int_equal(symlink(victim, planted), 0);
    assert_int_equal(symlink(victim2, path), 0);

    assert_int_equal(pv_tune_check_cache_writable(ctx), PV_ERR_IO);
    assert_non_null(strstr(pv_context_last_error(ctx), "symbolic link"));
    pv_tune_options options;
    quick_tune_options(&options);
    pv_tune_result results[2];
    int count = 0;
    assert_int_equal(pv_tune(ctx, &options, results, 2, &count), PV_ERR_IO);
    assert_true(file_says(victim, "precious\n"));
    assert_true(file_says(victim2, "precious too\n"));
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* left as it was, not replaced */

    /* With only the temporary-name link left, the cache is written (to a
     * private file, renamed) and the link's target is still untouched. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(pv_tune_check_cache_writable(ctx), PV_OK);
    assert_int_equal(pv_tune(ctx, &options, results, 2, &count), PV_OK);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_true(file_says(victim, "precious\n"));
    assert_true(file_says(victim2, "precious too\n"));
    pv_context_destroy(ctx);
    unsetenv("PARVIS_TUNE_DIR");
}

/* No HOME, no XDG_CACHE_HOME, no PARVIS_TUNE_DIR: the check fails at once
 * and pv_tune fails before its search (no result is filled). */
static void test_tune_without_cache_location_fails_first(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    char home[4096] = "", xdg[4096] = "";
    if (getenv("HOME"))
        snprintf(home, sizeof home, "%s", getenv("HOME"));
    if (getenv("XDG_CACHE_HOME"))
        snprintf(xdg, sizeof xdg, "%s", getenv("XDG_CACHE_HOME"));
    unsetenv("HOME");
    unsetenv("XDG_CACHE_HOME");
    tu_set_env("PARVIS_TUNE_DIR", NULL);
    assert_int_equal(pv_tune_check_cache_writable(ctx), PV_ERR_IO);
    pv_tune_options options;
    quick_tune_options(&options);
    options.op = NULL;
    options.max_candidates = 0; /* the full search: must not start */
    pv_tune_result results[2];
    memset(results, 0x5a, sizeof results);
    int count = -7;
    assert_int_equal(pv_tune(ctx, &options, results, 2, &count), PV_ERR_IO);
    assert_int_equal(count, -7);
    assert_non_null(strstr(pv_last_error(), "cache"));
    if (home[0])
        setenv("HOME", home, 1);
    if (xdg[0])
        setenv("XDG_CACHE_HOME", xdg, 1);
    pv_context_destroy(ctx);
}

/* ----------------------------------------- same answer on both backends */

static void test_one_wide_phase_correlation_is_refused_everywhere(void **state)
{
    (void)state;
    pv_backend_kind kinds[2] = {PV_BACKEND_CPU, PV_BACKEND_OPENCL};
    int sizes[3][2] = {{1, 1}, {1, 4}, {1, 2}};
    for (int k = 0; k < 2; k++) {
        pv_context *ctx = tu_context(kinds[k]);
        if (!ctx)
            continue;
        for (int i = 0; i < 3; i++) {
            pv_image a, b;
            assert_int_equal(pv_image_alloc(&a, sizes[i][0], sizes[i][1], PV_PIXEL_F32), PV_OK);
            assert_int_equal(pv_image_alloc(&b, sizes[i][0], sizes[i][1], PV_PIXEL_F32), PV_OK);
            tu_fill_random(&a, 3);
            tu_fill_random(&b, 4);
            pv_shift shift = {1.5, 2.5, 3.5, 4.5, 7u};
            assert_int_equal(pv_phase_correlate(ctx, &a, &b, NULL, &shift), PV_ERR_INVALID);
            assert_true(shift.dx == 1.5 && shift.flags == 7u);
            assert_non_null(strstr(pv_last_error(), "at least 2"));
            pv_phasecorr_plan *plan = NULL;
            assert_int_equal(pv_phasecorr_plan_create(ctx, &a, NULL, 1, &plan), PV_ERR_INVALID);
            assert_null(plan);
            pv_volume va = pv_volume_wrap(a.data, sizes[i][0], sizes[i][1], 1);
            pv_volume vb = pv_volume_wrap(b.data, sizes[i][0], sizes[i][1], 1);
            assert_int_equal(pv_phase_correlate3d(ctx, &va, &vb, NULL, &shift), PV_ERR_INVALID);
            image_list_free(&a, &b, NULL);
        }
        /* Two samples along x are enough, on every backend. */
        pv_image a, b;
        assert_int_equal(pv_image_alloc(&a, 2, 1, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_image_alloc(&b, 2, 1, PV_PIXEL_F32), PV_OK);
        ((float *)a.data)[0] = 1.0f;
        ((float *)b.data)[1] = 1.0f;
        pv_shift shift;
        assert_int_equal(pv_phase_correlate(ctx, &a, &b, NULL, &shift), PV_OK);
        image_list_free(&a, &b, NULL);
        pv_context_destroy(ctx);
    }
}

static void test_disparity_error_border_must_leave_pixels(void **state)
{
    (void)state;
    pv_image disparity, truth;
    assert_int_equal(pv_image_alloc(&disparity, 9, 6, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&truth, 9, 6, PV_PIXEL_U8), PV_OK);
    tu_fill_image(&truth, 4.0f);
    tu_fill_image(&disparity, 4.0f);
    double bad = -1.0;
    /* 6 rows: border 2 keeps rows 2..3, border 3 keeps none. */
    assert_int_equal(pv_disparity_error(&disparity, &truth, 1.0f, 0.5f, 2, &bad), PV_OK);
    assert_true(bad == 0.0);
    tu_fill_image(&disparity, 9.0f);
    assert_int_equal(pv_disparity_error(&disparity, &truth, 1.0f, 0.5f, 2, &bad), PV_OK);
    assert_true(bad == 1.0);
    bad = -1.0;
    int too_large[] = {3, 4, 5, 100};
    for (size_t i = 0; i < sizeof too_large / sizeof too_large[0]; i++) {
        assert_int_equal(pv_disparity_error(&disparity, &truth, 1.0f, 0.5f, too_large[i], &bad),
                         PV_ERR_INVALID);
        assert_true(bad == -1.0);
        assert_non_null(strstr(pv_last_error(), "leaves no pixel"));
    }
    image_list_free(&disparity, &truth, NULL);
}

int main(void)
{
    /* The cache-less start must run first: it needs a process that has made
     * no OpenCL call yet (its child inherits that state). */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opencl_starts_without_a_writable_cache),
        cmocka_unit_test(test_swapped_binary_cache_entry_is_repaired),
        cmocka_unit_test(test_binary_cache_entry_claiming_1gib_is_refused_unread),
        cmocka_unit_test(test_tune_writer_refuses_planted_links),
        cmocka_unit_test(test_tune_without_cache_location_fails_first),
        cmocka_unit_test(test_one_wide_phase_correlation_is_refused_everywhere),
        cmocka_unit_test(test_disparity_error_border_must_leave_pixels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
