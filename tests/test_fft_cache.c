/* The on-disk cache of compiled FFT kernels (backends/opencl/fft/fft_cache.h):
 * its file format and key without a device, then, on the OpenCL device
 * with VkFFT, in fresh processes that each point XDG_CACHE_HOME at a test
 * directory: a hit after a first use, a corrupt entry rebuilt, entries of
 * another transform ignored, several processes making the same plan at
 * once, an unwritable cache directory and the switch that turns the cache
 * off.  Every process checks its phase correlation against the known
 * shift, so a plan made from cached kernels is proved to compute.
 *
 * The parent never touches OpenCL (it forks after), so PoCL's threads are
 * never forked.  PoCL's own kernel cache is one directory for the whole
 * suite (POCL_CACHE_DIR), so that only parvis's FFT cache starts cold. */
#include "test_util.h"
#include "../backends/opencl/fft/fft_cache.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The known answer: moving is reference shifted circularly by this. */
#define SHIFT_X 5
#define SHIFT_Y (-3)
#define CONCURRENT_PROCESSES 4

/* ----------------------------------------------------------- format */

static const unsigned char first_binary[] = "first program's binary\0with a zero inside";
static const unsigned char second_binary[] = {0, 1, 2, 3, 0, 0, 255, 7};

static unsigned char *entry_bytes(uint64_t key, size_t *size)
{
    pv_fft_cache_program programs[2] = {
        {11, sizeof first_binary, first_binary},
        {22, sizeof second_binary, second_binary},
    };
    FILE *file = tmpfile();
    assert_non_null(file);
    assert_true(pv_fft_cache_write(file, key, programs, 2));
    long length = ftell(file);
    assert_true(length > 0);
    unsigned char *data = malloc((size_t)length);
    assert_non_null(data);
    rewind(file);
    assert_int_equal(fread(data, 1, (size_t)length, file), (size_t)length);
    fclose(file);
    *size = (size_t)length;
    return data;
}

static int parses(const unsigned char *data, size_t size, uint64_t key)
{
    pv_fft_cache_entry entry = {0};
    int ok = pv_fft_cache_parse(data, size, key, &entry);
    if (ok)
        pv_fft_cache_entry_free(&entry);
    else
        assert_null(entry.programs);   /* untouched on rejection */
    return ok;
}

static void test_entry_round_trip(void **state)
{
    (void)state;
    size_t size = 0;
    unsigned char *data = entry_bytes(0x1234, &size);
    pv_fft_cache_entry entry = {0};
    assert_true(pv_fft_cache_parse(data, size, 0x1234, &entry));
    assert_int_equal(entry.count, 2);
    assert_int_equal(entry.programs[0].source_hash, 11);
    assert_int_equal(entry.programs[0].size, sizeof first_binary);
    assert_memory_equal(entry.programs[0].binary, first_binary, sizeof first_binary);
    assert_int_equal(entry.programs[1].source_hash, 22);
    assert_memory_equal(entry.programs[1].binary, second_binary, sizeof second_binary);
    pv_fft_cache_entry_free(&entry);
    free(data);
}

/* Every damage a file can suffer is refused: another key, a wrong magic,
 * a flipped payload byte (checksum), a cut or lengthened file, a header
 * claiming more programs than the payload holds. */
static void test_entry_damage_refused(void **state)
{
    (void)state;
    size_t size = 0;
    unsigned char *data = entry_bytes(0x1234, &size);
    assert_false(parses(data, size, 0x1235));
    assert_false(parses(data, size - 1, 0x1234));
    assert_false(parses(data, sizeof(pv_fft_cache_header) - 1, 0x1234));
    assert_false(parses(NULL, 0, 0x1234));
    unsigned char *longer = malloc(size + 1);
    assert_non_null(longer);
    memcpy(longer, data, size);
    longer[size] = 0;
    assert_false(parses(longer, size + 1, 0x1234));
    free(longer);
    data[size - 3] ^= 0x40;
    assert_false(parses(data, size, 0x1234));
    data[size - 3] ^= 0x40;
    data[0] = 'X';
    assert_false(parses(data, size, 0x1234));
    data[0] = 'P';
    uint64_t three = 3;
    memcpy(data + 16, &three, sizeof three);   /* magic, key, then count */
    assert_false(parses(data, size, 0x1234));
    free(data);
}

static void test_key_covers_identity(void **state)
{
    (void)state;
    pv_fft_cache_identity base = {"device", "vendor", "driver 1.0", "OpenCL 3.0", "VkFFT",
                                  10226, {64, 48, 1}, 1, "f32 r2c+c2r dense"};
    uint64_t key = pv_fft_cache_key(&base);
    assert_int_equal(pv_fft_cache_key(&base), key);
    pv_fft_cache_identity other = base;
    other.device = "another device";
    assert_true(pv_fft_cache_key(&other) != key);
    other = base;
    other.driver = "driver 1.1";
    assert_true(pv_fft_cache_key(&other) != key);
    other = base;
    other.engine_version = 10227;
    assert_true(pv_fft_cache_key(&other) != key);
    other = base;
    other.size[0] = 48;
    other.size[1] = 64;
    assert_true(pv_fft_cache_key(&other) != key);
    other = base;
    other.batch = 2;
    assert_true(pv_fft_cache_key(&other) != key);
    other = base;
    other.transform = "f64 r2c+c2r dense";
    assert_true(pv_fft_cache_key(&other) != key);
}

/* ------------------------------------------------ fresh processes */

typedef struct child_report {
    int status;                /* pv_status of the whole run */
    double dx, dy;
    pv_fft_cache_stats stats;
} child_report;

/* A reference image and its circular shift by (SHIFT_X, SHIFT_Y). */
static pv_status shifted_pair(int width, int height, pv_image *reference, pv_image *moving)
{
    pv_status status = pv_image_alloc(reference, width, height, PV_PIXEL_F32);
    if (status == PV_OK)
        status = pv_image_alloc(moving, width, height, PV_PIXEL_F32);
    if (status != PV_OK)
        return status;
    tu_fill_random(reference, 7);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int sx = ((x - SHIFT_X) % width + width) % width;
            int sy = ((y - SHIFT_Y) % height + height) % height;
            tu_set_pixel(moving, x, y, *tu_fpixel(reference, sx, sy));
        }
    return PV_OK;
}

/* In the child: phase-correlate a width x height pair on the OpenCL
 * device with VkFFT, and report. */
static child_report correlate_in_child(int width, int height)
{
    child_report report;
    memset(&report, 0, sizeof report);
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    pv_context *ctx = NULL;
    pv_image reference = {0}, moving = {0};
    pv_shift shift;
    pv_status status = pv_context_create(&ctx, &options);
    if (status == PV_OK)
        status = pv_context_set_fft_engine(ctx, PV_FFT_VKFFT);
    if (status == PV_OK)
        status = shifted_pair(width, height, &reference, &moving);
    if (status == PV_OK)
        status = pv_phase_correlate(ctx, &reference, &moving, NULL, &shift);
    if (status == PV_OK) {
        report.dx = shift.dx;
        report.dy = shift.dy;
    } else
        fprintf(stderr, "child: %s\n", pv_last_error());
    report.status = status;
    pv_image_free(&reference);
    pv_image_free(&moving);
    pv_context_destroy(ctx);
    pv_fft_cache_get_stats(&report.stats);
    return report;
}

typedef struct child {
    pid_t pid;
    int from_child;
} child;

/* Fork a process with XDG_CACHE_HOME=cache_home (and, when set, one more
 * environment variable) that correlates one pair and reports. */
static child start_child(const char *cache_home, int width, int height, const char *extra_name,
                         const char *extra_value)
{
    int pipe_ends[2];
    assert_int_equal(pipe(pipe_ends), 0);
    fflush(NULL);
    child c = {fork(), pipe_ends[0]};
    assert_true(c.pid >= 0);
    if (c.pid == 0) {
        close(pipe_ends[0]);
        setenv("XDG_CACHE_HOME", cache_home, 1);
        if (extra_name)
            setenv(extra_name, extra_value, 1);
        child_report report = correlate_in_child(width, height);
        ssize_t written = write(pipe_ends[1], &report, sizeof report);
        _exit(written == (ssize_t)sizeof report ? 0 : 1);
    }
    close(pipe_ends[1]);
    return c;
}

static child_report finish_child(child c)
{
    child_report report;
    memset(&report, 0, sizeof report);
    report.status = PV_ERR_OPENCL;
    ssize_t got = read(c.from_child, &report, sizeof report);
    close(c.from_child);
    int status = 0;
    assert_int_equal(waitpid(c.pid, &status, 0), c.pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(got, (ssize_t)sizeof report);
    assert_int_equal(report.status, PV_OK);
    /* Integer shift, no sub-pixel step: exact. */
    assert_true(report.dx == SHIFT_X);
    assert_true(report.dy == SHIFT_Y);
    return report;
}

static child_report run_child(const char *cache_home, int width, int height)
{
    return finish_child(start_child(cache_home, width, height, NULL, NULL));
}

/* Whether a fresh process finds an OpenCL device and VkFFT is built. */
static int vkfft_runs(void)
{
    return pv_fft_engine_available(PV_FFT_VKFFT) && tu_child_sees_opencl();
}

/* -------------------------------------------------- cache directory */

typedef struct entry_list {
    int count;
    int temporaries;   /* files other than entries (half-written ones) */
    char paths[16][4200];
    uint64_t keys[16];
} entry_list;

static void list_entries(const char *cache_home, entry_list *list)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/parvis/fft", cache_home);
    memset(list, 0, sizeof *list);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(e->d_name);
        if (len != 23 || strcmp(e->d_name + 16, ".fftbin") != 0) {
            list->temporaries++;
            continue;
        }
        if (list->count == 16)
            continue;
        snprintf(list->paths[list->count], sizeof list->paths[0], "%s/%s", dir, e->d_name);
        list->keys[list->count++] = strtoull(e->d_name, NULL, 16);
    }
    closedir(d);
}

static int entry_valid(const char *path, uint64_t key)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return 0;
    pv_fft_cache_entry entry = {0};
    int ok = pv_fft_cache_read(file, key, &entry);
    fclose(file);
    pv_fft_cache_entry_free(&entry);
    return ok;
}

static void assert_all_valid(const char *cache_home, int expected_count)
{
    entry_list list;
    list_entries(cache_home, &list);
    assert_int_equal(list.count, expected_count);
    assert_int_equal(list.temporaries, 0);
    for (int i = 0; i < list.count; i++)
        assert_true(entry_valid(list.paths[i], list.keys[i]));
}

/* An absolute path under the suite's temporary directory, in a buffer of
 * the caller's (two may be alive at once). */
static const char *test_path(const char *name, char *path, size_t size)
{
    char cwd[2048];
    assert_non_null(getcwd(cwd, sizeof cwd));
    const char *relative = tu_tmp_path(name);   /* makes tests/tmp */
    int n = snprintf(path, size, "%s/%s", cwd, relative);
    assert_true(n > 0 && (size_t)n < size);
    return path;
}

/* An empty directory for XDG_CACHE_HOME. */
static const char *fresh_home(const char *name, char *path, size_t size)
{
    test_path(name, path, size);
    char command[4200];
    snprintf(command, sizeof command, "rm -rf '%s'", path);
    assert_int_equal(system(command), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    return path;
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    assert_int_equal(fseek(file, 0, SEEK_END), 0);
    long length = ftell(file);
    assert_true(length > 0);
    rewind(file);
    unsigned char *data = malloc((size_t)length);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)length, file), (size_t)length);
    fclose(file);
    *size = (size_t)length;
    return data;
}

static void write_file(const char *path, const unsigned char *data, size_t size)
{
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fwrite(data, 1, size, file), size);
    assert_int_equal(fclose(file), 0);
}

/* ------------------------------------------------------------ tests */

/* The first process compiles and stores; the second makes every plan from
 * the cache (a hit each, no compile, nothing stored) and still computes. */
static void test_hit_after_first_use(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char home_buffer[3000];
    const char *home = fresh_home("fftc-hit", home_buffer, sizeof home_buffer);
    child_report first = run_child(home, 64, 48);
    assert_int_equal(first.stats.hits, 0);
    assert_true(first.stats.misses >= 1);
    assert_int_equal(first.stats.stored, first.stats.misses);
    assert_int_equal(first.stats.rejected, 0);
    assert_all_valid(home, (int)first.stats.stored);

    child_report second = run_child(home, 64, 48);
    assert_int_equal(second.stats.misses, 0);
    assert_int_equal(second.stats.hits, first.stats.misses);
    assert_int_equal(second.stats.stored, 0);
    assert_int_equal(second.stats.rejected, 0);
}

/* A flipped byte in an entry's payload: refused, removed, compiled again,
 * and a valid entry written in its place. */
static void test_corrupt_entry_rebuilt(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char home_buffer[3000];
    const char *home = fresh_home("fftc-corrupt", home_buffer, sizeof home_buffer);
    child_report first = run_child(home, 64, 48);
    entry_list list;
    list_entries(home, &list);
    assert_true(list.count >= 1);
    for (int i = 0; i < list.count; i++) {
        size_t size = 0;
        unsigned char *data = read_file(list.paths[i], &size);
        data[size / 2] ^= 0x5a;
        write_file(list.paths[i], data, size);
        free(data);
    }
    child_report second = run_child(home, 64, 48);
    assert_int_equal(second.stats.hits, 0);
    assert_int_equal(second.stats.rejected, (unsigned long)list.count);
    assert_int_equal(second.stats.misses, first.stats.misses);
    assert_int_equal(second.stats.stored, first.stats.stored);
    assert_all_valid(home, list.count);
}

/* Entries of another transform size, put where this size's entries are:
 * once as they are (another key in the header: refused), once with the
 * header's key rewritten to this size's (a valid file whose programs were
 * compiled from other sources: each refused by its source hash).  Both
 * times the plans are compiled again and correct entries replace them. */
static void test_foreign_entries_ignored(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char home_buffer[3000];
    const char *home = fresh_home("fftc-foreign", home_buffer, sizeof home_buffer);
    run_child(home, 64, 48);
    entry_list mine;
    list_entries(home, &mine);
    char other_home_buffer[3000];
    const char *other_home = fresh_home("fftc-foreign-other", other_home_buffer, sizeof other_home_buffer);
    run_child(other_home, 80, 60);
    entry_list theirs;
    list_entries(other_home, &theirs);
    assert_true(mine.count >= 1 && theirs.count >= 1);

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < mine.count; i++) {
            size_t size = 0;
            unsigned char *data = read_file(theirs.paths[i % theirs.count], &size);
            if (pass == 1)
                memcpy(data + 8, &mine.keys[i], sizeof mine.keys[i]);   /* after the magic */
            write_file(mine.paths[i], data, size);
            free(data);
        }
        child_report report = run_child(home, 64, 48);
        assert_int_equal(report.stats.hits, 0);
        assert_true(report.stats.rejected >= (unsigned long)mine.count);
        assert_int_equal(report.stats.stored, (unsigned long)mine.count);
        assert_all_valid(home, mine.count);
    }
}

/* Several processes making the same plans at once in an empty cache: all
 * compute, and the directory ends with one whole entry per plan and no
 * half-written file. */
static void test_concurrent_first_use(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char home_buffer[3000];
    const char *home = fresh_home("fftc-concurrent", home_buffer, sizeof home_buffer);
    child children[CONCURRENT_PROCESSES];
    for (int i = 0; i < CONCURRENT_PROCESSES; i++)
        children[i] = start_child(home, 64, 48, NULL, NULL);
    unsigned long plans = 0;
    for (int i = 0; i < CONCURRENT_PROCESSES; i++) {
        child_report report = finish_child(children[i]);
        plans = report.stats.hits + report.stats.misses;
    }
    assert_true(plans >= 1);
    assert_all_valid(home, (int)plans);
    child_report after = run_child(home, 64, 48);
    assert_int_equal(after.stats.hits, plans);
    assert_int_equal(after.stats.misses, 0);
}

/* XDG_CACHE_HOME a regular file: no directory can be made under it (not
 * even by root).  Plans are compiled, the failed stores counted, and the
 * results are right. */
static void test_unwritable_cache_directory(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char blocker_buffer[3000];
    const char *blocker = test_path("fftc-blocker", blocker_buffer, sizeof blocker_buffer);
    write_file(blocker, (const unsigned char *)"x", 1);
    child_report report = run_child(blocker, 64, 48);
    assert_int_equal(report.stats.hits, 0);
    assert_true(report.stats.misses >= 1);
    assert_int_equal(report.stats.stored, 0);
    assert_int_equal(report.stats.store_failures, report.stats.misses);
}

/* PARVIS_NO_FFT_CACHE=1: nothing read, nothing written. */
static void test_cache_switched_off(void **state)
{
    (void)state;
    if (!vkfft_runs())
        skip();
    char home_buffer[3000];
    const char *home = fresh_home("fftc-off", home_buffer, sizeof home_buffer);
    child_report report =
        finish_child(start_child(home, 64, 48, "PARVIS_NO_FFT_CACHE", "1"));
    assert_int_equal(report.stats.hits + report.stats.misses + report.stats.stored, 0);
    assert_all_valid(home, 0);
}

int main(void)
{
    /* One PoCL kernel cache for every process of the suite. */
    char pocl_buffer[3000];
    const char *pocl_cache = test_path("fftc-pocl", pocl_buffer, sizeof pocl_buffer);
    mkdir(pocl_cache, 0700);
    setenv("POCL_CACHE_DIR", pocl_cache, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_round_trip),
        cmocka_unit_test(test_entry_damage_refused),
        cmocka_unit_test(test_key_covers_identity),
        cmocka_unit_test(test_hit_after_first_use),
        cmocka_unit_test(test_corrupt_entry_rebuilt),
        cmocka_unit_test(test_foreign_entries_ignored),
        cmocka_unit_test(test_concurrent_first_use),
        cmocka_unit_test(test_unwritable_cache_directory),
        cmocka_unit_test(test_cache_switched_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
