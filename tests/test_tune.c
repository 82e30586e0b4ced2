/* Tests of the auto-tuner (include/parvis/tune.h).
 *
 *   - a short search for every tunable family on the OpenCL device (tiny
 *     synthetic workloads, one to three candidates): the kept parameters
 *     (every parameter of the family) are applied to the context, are no
 *     slower than the defaults and are read back from the cache; BP and
 *     SAD still give the CPU oracle's disparities on a fresh pair (BP:
 *     identical on >= 99.5% of pixels, SAD: >= 99.9%, stereo.h's
 *     tolerances); an unknown family (or "fft", the engine choice) is
 *     refused; a spent time budget keeps the defaults; a candidate the
 *     kernels cannot honour is refused by the
 *     backend, and one that runs but computes something else (a reduction
 *     group that is not a power of two) is caught by the oracle;
 *   - the cache: written where PARVIS_TUNE_DIR points, read back into a
 *     fresh context with the same values; a corrupt file, one with a bad
 *     checksum, one for another device, and one naming an unknown
 *     parameter are each ignored (defaults stay) with a logged warning;
 *   - the API: set / get / list round trips, defaults restored by
 *     pv_tune_use_defaults, bad arguments give PV_ERR_INVALID, the CPU
 *     backend has nothing to tune;
 *   - the layers under it: every tunable family is one of the backend
 *     table's parameter families, the table's parameter slots refuse an
 *     unknown family or name, a kernel module's lookup of a misspelled
 *     parameter fails the call that made it (and only that call), and the
 *     context describes its device (the OpenCL runtime's description, or
 *     the host's) without anyone enumerating devices again.
 *
 * Everything runs in a scratch cache directory under the build tree.
 * OpenCL parts are skipped without an OpenCL device or with
 * PARVIS_TEST_SKIP_OPENCL=1. */
#include "test_tune_util.h"

#include "../lib/core/internal.h"
#include "../lib/tune/tune_search.h"
#ifdef PV_HAVE_OPENCL
#include "../backends/opencl/runtime/runtime.h"
#endif

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pv_context *g_cpu;
static pv_context *g_opencl;

static int opencl_disabled_by_env(void)
{
    const char *skip = getenv("PARVIS_TEST_SKIP_OPENCL");
    return skip && strcmp(skip, "1") == 0;
}

static pv_context *new_opencl(void)
{
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (ctx && pv_context_backend(ctx) != PV_BACKEND_OPENCL) {
        pv_context_destroy(ctx);
        ctx = NULL;
    }
    return ctx;
}

static char g_dir[4096];

static int group_setup(void **state)
{
    (void)state;
    tt_use_scratch_cache(g_dir, sizeof g_dir, "tune");
    setenv("PARVIS_NO_TUNE", "1", 1); /* the tests load explicitly */
    g_cpu = tu_context(PV_BACKEND_CPU);
    g_opencl = opencl_disabled_by_env() ? NULL : new_opencl();
    return g_cpu ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    pv_context_destroy(g_cpu);
    if (g_opencl)
        pv_context_destroy(g_opencl);
    return 0;
}

static pv_context *opencl_or_skip(void)
{
    if (!g_opencl)
        skip();
    return g_opencl;
}

/* ---------------------------------------------------------------- helpers */

static void cache_path(pv_context *ctx, char *path, size_t size)
{
    assert_int_equal(pv_tune_cache_path(ctx, path, size), PV_OK);
    assert_true(strncmp(path, g_dir, strlen(g_dir)) == 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fputs(text, file) >= 0, 1);
    assert_int_equal(fclose(file), 0);
}

static char *read_text(const char *path)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    char *text = calloc(65536, 1);
    assert_non_null(text);
    size_t n = fread(text, 1, 65535, file);
    fclose(file);
    text[n] = '\0';
    return text;
}

/* FNV-1a 64, as the cache file's checksum line. */
static unsigned long long fnv1a(const char *text, size_t size)
{
    unsigned long long hash = 14695981039346656037ull;
    for (size_t i = 0; i < size; i++) {
        hash ^= (unsigned char)text[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

/* A well-formed file (valid checksum) with the given identity and body. */
static void write_signed(const char *path, const char *device, const char *driver,
                         const char *body)
{
    char text[8192];
    int n = snprintf(text, sizeof text, "parvis-tune 1\ndevice %s\ndriver %s\nparvis %s\n%s",
                     device, driver, pv_version(), body);
    assert_true(n > 0 && (size_t)n < sizeof text - 32);
    snprintf(text + n, sizeof text - (size_t)n, "end %016llx\n", fnv1a(text, (size_t)n));
    write_text(path, text);
}

static void device_identity(pv_context *ctx, char *name, char *driver)
{
    pv_device_info devices[16];
    int count = 0;
    assert_int_equal(pv_device_list(devices, 16, &count), PV_OK);
    for (int i = 0; i < count && i < 16; i++)
        if (strcmp(devices[i].name, pv_context_device_name(ctx)) == 0) {
            strcpy(name, devices[i].name);
            strcpy(driver, devices[i].driver_version);
            return;
        }
    fail_msg("the context's device is not listed");
}

/* Runs pv_tune_load with PARVIS_LOG=1 and stderr captured; returns the
 * number of parameters applied and whether a warning was logged. */
static int load_capturing(pv_context *ctx, int *warned)
{
    const char *log_path = tu_tmp_path("tune-log.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    tu_set_env("PARVIS_LOG", "1");
    int applied = -1;
    pv_status status = pv_tune_load(ctx, &applied);
    tu_set_env("PARVIS_LOG", NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(status, PV_OK);
    char *log = read_text(log_path);
    *warned = strstr(log, "warning: ignoring") != NULL;
    free(log);
    return applied;
}

static int param_value(pv_context *ctx, const char *family, const char *name)
{
    int value = -1;
    assert_int_equal(pv_tune_get(ctx, family, name, &value), PV_OK);
    return value;
}

/* ----------------------------------------------------------------- search */

static void random_pair(pv_image *left, pv_image *right, int width, int height, int shift)
{
    assert_int_equal(pv_image_alloc(left, width, height, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(right, width, height, PV_PIXEL_U8), PV_OK);
    tu_fill_random(left, 77u);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int xs = x + shift < width ? x + shift : width - 1;
            ((uint8_t *)right->data)[y * width + x] = ((uint8_t *)left->data)[y * width + xs];
        }
}

static double identical_share(const pv_image *a, const pv_image *b)
{
    size_t same = 0, total = (size_t)a->width * (size_t)a->height;
    for (size_t i = 0; i < total; i++)
        same += ((const float *)a->data)[i] == ((const float *)b->data)[i];
    return (double)same / (double)total;
}

/* BP (3 levels) or SAD (window 7) with 12 disparities. */
static pv_status stereo12(pv_context *ctx, int is_bp, const pv_image *left, const pv_image *right,
                          pv_image *out)
{
    pv_bp_params bp;
    pv_sad_params sad;
    pv_bp_params_default(&bp);
    pv_sad_params_default(&sad);
    bp.ndisp = sad.ndisp = 12;
    bp.levels = 3;
    sad.window = 7;
    return is_bp ? pv_stereo_bp(ctx, left, right, &bp, out)
                 : pv_stereo_sad(ctx, left, right, &sad, out);
}

/* The tuned context still gives the CPU's answer on a fresh pair (BP:
 * identical disparities on >= 99.5% of pixels, SAD: >= 99.9%). */
static void check_tuned_output(pv_context *ctx, const char *op)
{
    pv_image left, right, a, b;
    random_pair(&left, &right, 72, 40, 5);
    assert_int_equal(pv_image_alloc(&a, 72, 40, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&b, 72, 40, PV_PIXEL_F32), PV_OK);
    const int is_bp = strcmp(op, "bp") == 0;
    assert_int_equal(stereo12(g_cpu, is_bp, &left, &right, &a), PV_OK);
    assert_int_equal(stereo12(ctx, is_bp, &left, &right, &b), PV_OK);
    assert_true(identical_share(&a, &b) >= (is_bp ? 0.995 : 0.999));
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&a);
    pv_image_free(&b);
}

/* The progress callback's record: the results it was given. */
typedef struct progress_log {
    int calls;
    pv_tune_result last;
} progress_log;

static void record_progress(void *user, const pv_tune_result *result)
{
    progress_log *log = user;
    log->calls++;
    log->last = *result;
}

/* One family's short search on a tiny workload: the kept values are
 * applied, are no slower than the defaults, were reported through the
 * progress callback, and a fresh context reads them back from the
 * cache. */
static void check_search(const char *op, int candidates)
{
    pv_context *ctx = opencl_or_skip();
    char path[4096];
    cache_path(ctx, path, sizeof path);
    pv_tune_options options;
    pv_tune_options_default(&options);
    options.op = op;
    options.max_candidates = candidates;
    options.runs = 1;
    options.width = 64;
    options.height = 48;
    options.ndisp = 16;
    progress_log progress = {0};
    options.progress = record_progress;
    options.progress_user = &progress;
    pv_tune_result results[2];
    int count = 0;
    pv_status status = pv_tune(ctx, &options, results, 2, &count);
    if (status != PV_OK)
        fail_msg("pv_tune(%s): %s", op, pv_context_last_error(ctx));
    assert_int_equal(count, 1);
    const pv_tune_result *r = &results[0];
    assert_int_equal(progress.calls, 1);
    assert_memory_equal(&progress.last, r, sizeof *r);
    print_message("tune %s: %d tried, %d rejected, %d timed once, default %.3f ms, best %.3f ms, "
                  "%.1f s\n", op, r->tried, r->rejected, r->pruned, r->default_ms, r->best_ms,
                  r->search_ms / 1000.0);
    assert_string_equal(r->op, op);
    assert_true(r->tried >= 1 && r->tried <= candidates);
    assert_true(r->pruned <= r->tried);
    assert_true(r->default_ms > 0.0 && r->best_ms > 0.0);
    /* the defaults are kept unless something beat them clearly: on the
     * one workload, or (families with two, whose result gives the main
     * workload's times) on the mean of both relative times, which
     * test_two_workload_search checks through the search's record */
    if (pv_tune_workload_count(op) == 1)
        assert_true(r->best_ms == r->default_ms ||
                    r->best_ms < r->default_ms * (1.0 - PV_TUNE_MIN_GAIN));
    assert_true(r->search_ms > 0.0);
    pv_tune_param listed[PV_TUNE_MAX_PARAMS];
    int listed_count = 0;
    assert_int_equal(pv_tune_list(ctx, op, listed, PV_TUNE_MAX_PARAMS, &listed_count), PV_OK);
    assert_int_equal(r->param_count, listed_count); /* every parameter of the family kept */
    for (int i = 0; i < r->param_count; i++)
        assert_int_equal(param_value(ctx, op, r->params[i].name), r->params[i].value);

    /* a fresh context reads the same values back */
    pv_context *fresh = new_opencl();
    assert_non_null(fresh);
    int warned = 1;
    int applied = load_capturing(fresh, &warned);
    assert_false(warned);
    assert_true(applied >= r->param_count);
    for (int i = 0; i < r->param_count; i++)
        assert_int_equal(param_value(fresh, op, r->params[i].name), r->params[i].value);
    pv_context_destroy(fresh);
}

static void test_search_bp(void **state)
{
    (void)state;
    check_search("bp", 3);
    /* kept for the workload's ndisp class (16: <= 96) */
    assert_int_equal(param_value(g_opencl, "bp", "BP_NDISP_CLASS"), 1);
    check_tuned_output(g_opencl, "bp");
}

static void test_search_sad(void **state)
{
    (void)state;
    check_search("sad", 2);
    check_tuned_output(g_opencl, "sad");
}

/* Every other family: one candidate beside the defaults keeps the test
 * short (each candidate is a kernel build on PoCL). */
static void test_search_every_family(void **state)
{
    (void)state;
    int families = 0;
    for (int i = 0; pv_tune_family_name(i); i++, families++)
        if (strcmp(pv_tune_family_name(i), "bp") != 0 && strcmp(pv_tune_family_name(i), "sad") != 0)
            check_search(pv_tune_family_name(i), 1);
    assert_int_equal(families, 9); /* filter sad bp register flow features octreg geometry sgm */
}

/* A spent time budget starts no candidate: the defaults alone are
 * measured and kept. */
static void test_budget_stops_search(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    pv_tune_options options;
    pv_tune_options_default(&options);
    options.op = "geometry";
    options.width = 64;
    options.height = 48;
    options.runs = 1;
    options.write_cache = 0;
    options.budget_s = 1e-6;
    pv_tune_result result;
    int count = 0;
    assert_int_equal(pv_tune(ctx, &options, &result, 1, &count), PV_OK);
    assert_int_equal(count, 1);
    assert_int_equal(result.tried, 0);
    assert_true(result.default_ms > 0.0 && result.best_ms == result.default_ms);
    options.budget_s = -1.0;
    assert_int_equal(pv_tune(ctx, &options, &result, 1, &count), PV_ERR_INVALID);
    options.budget_s = NAN;
    assert_int_equal(pv_tune(ctx, &options, &result, 1, &count), PV_ERR_INVALID);
}

/* Unknown families are refused before any work; "fft" (the engine choice)
 * is a parameter family but not a searched one. */
static void test_unknown_family(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    pv_tune_options options;
    pv_tune_options_default(&options);
    pv_tune_result results[1];
    int count = -1;
    static const char *const refused[] = {"nope", "fft", "", "BP"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        options.op = refused[i];
        assert_int_equal(pv_tune(ctx, &options, results, 1, &count), PV_ERR_INVALID);
        assert_int_equal(count, -1); /* untouched */
    }
    assert_null(pv_tune_family_name(-1));
    assert_null(pv_tune_family_name(9));
    assert_int_equal(pv_tune_set(ctx, "nope", "BP_WG_X", 32), PV_ERR_INVALID);
}

/* The oracle check of a candidate: the defaults pass; a value the kernels
 * cannot honour is refused by the backend, and one that runs but computes
 * something else is caught by the comparison with the CPU. */
static pv_status check_with(pv_context *ctx, const char *family, const char *name, int value)
{
    pv_tune_options options;
    pv_tune_options_default(&options);
    options.width = 64;
    options.height = 48;
    options.ndisp = 16;
    pv_tune_workload *w = NULL;
    assert_int_equal(pv_tune_workload_make(ctx, family, 0, &options, &w), PV_OK);
    assert_int_equal(pv_tune_workload_check(ctx, w), PV_OK);
    int saved = param_value(ctx, family, name);
    assert_int_equal(pv_tune_set(ctx, family, name, value), PV_OK);
    pv_status status = pv_tune_workload_check(ctx, w);
    assert_int_equal(pv_tune_set(ctx, family, name, saved), PV_OK);
    assert_int_equal(pv_tune_workload_check(ctx, w), PV_OK);
    pv_tune_workload_free(w);
    return status;
}

static void test_oracle_rejects_wrong_candidate(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    assert_int_equal(check_with(ctx, "features", "SIFT_EXT_RUN", 64), PV_ERR_UNSUPPORTED);
    /* the arg-max and inlier-count reductions halve their group each step:
     * a group of 96 (not a power of two) drops part of every group's values */
    assert_int_equal(check_with(ctx, "register", "PC_REDUCE_WG", 96), PV_ERR_MISMATCH);
    assert_int_equal(check_with(ctx, "geometry", "GEOM_WG", 96), PV_ERR_MISMATCH);
}

/* ------------------------------------------------- two workloads, one score */

/* |a - b| <= tolerance. */
static void assert_true_close(double a, double b, double tolerance)
{
    if (!(fabs(a - b) <= tolerance))
        fail_msg("%.15g is not within %g of %.15g", a, tolerance, b);
}

/* The score of a family with two workloads, on known values: the mean of
 * the times relative to the defaults'.  The case that made it: a BP
 * small-level size a few per cent slower on the main workload but 1.32x
 * faster on the small one is the better choice; the main workload alone
 * would have kept the other. */
static void test_relative_score(void **state)
{
    (void)state;
    const double defaults[] = {5.0, 0.6};
    const double same[] = {5.0, 0.6}, small_faster[] = {5.1, 0.6 / 1.32},
                 main_faster_small_slower[] = {4.9, 0.6 * 1.32};
    assert_true_close(pv_tune_relative_score(same, defaults, 2), 1.0, 1e-12);
    assert_true_close(pv_tune_relative_score(small_faster, defaults, 2),
                        (5.1 / 5.0 + 1.0 / 1.32) / 2.0, 1e-12);
    assert_true(pv_tune_clearly_faster(pv_tune_relative_score(small_faster, defaults, 2), 1.0));
    assert_false(pv_tune_clearly_faster(
        pv_tune_relative_score(main_faster_small_slower, defaults, 2), 1.0));
    /* the main workload alone: the first is no gain, the second one */
    assert_false(pv_tune_clearly_faster(pv_tune_relative_score(small_faster, defaults, 1), 1.0));
    assert_false(pv_tune_clearly_faster(
        pv_tune_relative_score(main_faster_small_slower, defaults, 1), 1.0));
    const double missing[] = {5.0, 0.0}, rejected[] = {-1.0, 0.6};
    assert_true(pv_tune_relative_score(missing, defaults, 2) < 0);
    assert_true(pv_tune_relative_score(rejected, defaults, 2) < 0);
    assert_true(pv_tune_relative_score(same, defaults, 0) < 0);
    assert_true(pv_tune_relative_score(same, defaults, PV_TUNE_MAX_WORKLOADS + 1) < 0);
}

/* The lookup's list of families (tune_families.c) and the search's table
 * (tune_search.c) name the same families: each listed family has a search,
 * and names outside the list (the FFT engine's "fft", a misspelling) have
 * none. */
static void test_families_match_searches(void **state)
{
    (void)state;
    int count = 0;
    for (int i = 0; pv_tune_family(i); i++, count++) {
        assert_true(pv_tune_search_knows(pv_tune_family(i)));
        assert_true(pv_tune_family_known(pv_tune_family(i)));
        assert_true(pv_tune_family_weight(i) > 0);
        assert_string_equal(pv_tune_family_name(i), pv_tune_family(i));
    }
    assert_int_equal(count, 9);
    assert_false(pv_tune_search_knows("fft"));
    assert_false(pv_tune_family_known("fft"));
    assert_false(pv_tune_search_knows("sgmm"));
    assert_false(pv_tune_search_knows(NULL));
}

/* Which families have a second workload, and what their workloads are. */
static void test_workload_table(void **state)
{
    (void)state;
    assert_int_equal(pv_tune_workload_count("bp"), 2);
    assert_int_equal(pv_tune_workload_count("geometry"), 2);
    assert_int_equal(pv_tune_workload_count("sad"), 1);
    assert_int_equal(pv_tune_workload_count("nope"), 0);
    assert_int_equal(pv_tune_workload_count(NULL), 0);
    pv_context *ctx = opencl_or_skip();
    pv_tune_options options;
    pv_tune_options_default(&options);
    pv_tune_workload *w = (pv_tune_workload *)&options; /* must stay untouched */
    assert_int_equal(pv_tune_workload_make(ctx, "sad", 1, &options, &w), PV_ERR_INVALID);
    assert_int_equal(pv_tune_workload_make(ctx, "bp", -1, &options, &w), PV_ERR_INVALID);
    assert_ptr_equal(w, &options);
    /* the default sizes: the bench's Tsukuba case and homography cases */
    assert_int_equal(pv_tune_workload_make(ctx, "geometry", 0, &options, &w), PV_OK);
    assert_string_equal(pv_tune_workload_describe(w), "10000 matches");
    assert_int_equal(pv_tune_workload_runs(w, 3), 9);
    pv_tune_workload_free(w);
}

/* Index of parameter name in a trace. */
static int trace_param(const pv_tune_trace *trace, const char *name)
{
    for (int i = 0; i < trace->param_count; i++)
        if (strcmp(trace->names[i], name) == 0)
            return i;
    fail_msg("no parameter %s in the trace", name);
    return -1;
}

/* A search of one parameter of a family with two workloads, restricted
 * to that parameter's sweep, and what its record must show:
 *   - the defaults were timed on both workloads, first;
 *   - every candidate differs from the defaults in that parameter only,
 *     and each one neither rejected nor timed once only was timed on both;
 *   - no candidate timed on both has a mean relative time clearly lower
 *     (by more than PV_TUNE_MIN_GAIN) than the search's winner: the
 *     winner is the best on both workloads together, whatever the main
 *     workload alone says;
 *   - the kept values are the defaults, or the winner after a
 *     confirmation that timed it clearly faster than the defaults on the
 *     mean of both workloads; they are applied to the context. */
static void check_two_workload_search(pv_context *ctx, const char *op, const char *name,
                                      const pv_tune_options *options)
{
    pv_tune_trace *trace = calloc(1, sizeof *trace);
    assert_non_null(trace);
    pv_tune_result result;
    memset(&result, 0, sizeof result);
    const pv_tune_search_spec spec = {0.0, name, trace};
    pv_status status = pv_tune_search(ctx, op, options, &spec, &result);
    if (status != PV_OK)
        fail_msg("pv_tune_search(%s, %s): %s", op, name, pv_context_last_error(ctx));
    assert_int_equal(trace->workloads, 2);
    assert_true(trace->count >= 1 && trace->count <= PV_TUNE_TRACE_MAX);
    const pv_tune_trace_entry *defaults = &trace->measured[0];
    assert_true(defaults->ms[0] > 0.0 && defaults->ms[1] > 0.0 && !defaults->pruned);
    const int swept = trace_param(trace, name);
    assert_true(trace->winner >= 0 && trace->winner < trace->count);
    const pv_tune_trace_entry *winner = &trace->measured[trace->winner];
    const double winner_score = pv_tune_relative_score(winner->ms, defaults->ms, 2);
    assert_true(winner_score > 0.0);
    for (int i = 1; i < trace->count; i++) {
        const pv_tune_trace_entry *e = &trace->measured[i];
        for (int p = 0; p < trace->param_count; p++)
            if (p != swept)
                assert_int_equal(e->value[p], defaults->value[p]);
        assert_int_not_equal(e->value[swept], defaults->value[swept]);
        const int was_rejected = e->ms[0] < 0 || e->ms[1] < 0;
        print_message("%s %s=%d: %.3f / %.3f ms%s%s\n", op, name, e->value[swept], e->ms[0],
                      e->ms[1], e->pruned ? " (timed once)" : "",
                      was_rejected ? " (rejected)" : "");
        if (was_rejected || e->pruned)
            continue;
        assert_true(e->ms[0] > 0.0 && e->ms[1] > 0.0);
        assert_false(pv_tune_clearly_faster(pv_tune_relative_score(e->ms, defaults->ms, 2),
                                            winner_score));
    }
    int kept[PV_TUNE_MAX_PARAMS];
    for (int p = 0; p < trace->param_count; p++)
        kept[p] = param_value(ctx, op, trace->names[p]);
    if (trace->winner == 0) {
        assert_false(trace->confirmed);
        assert_memory_equal(kept, defaults->value, sizeof(int) * (size_t)trace->param_count);
    } else {
        assert_true(trace->confirmed);
        const double confirmed = pv_tune_relative_score(trace->confirm_winner_ms,
                                                        trace->confirm_default_ms, 2);
        assert_true(confirmed > 0.0);
        assert_int_equal(trace->winner_kept, pv_tune_clearly_faster(confirmed, 1.0));
        const pv_tune_trace_entry *expected = trace->winner_kept ? winner : defaults;
        assert_memory_equal(kept, expected->value, sizeof(int) * (size_t)trace->param_count);
    }
    print_message("%s: %d configurations, defaults %.3f / %.3f ms, kept %s=%d\n", op,
                  trace->count, defaults->ms[0], defaults->ms[1], name, kept[swept]);
    free(trace);
}

static void test_two_workload_search(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    pv_tune_options options;
    pv_tune_options_default(&options);
    options.runs = 3;
    options.width = 64;
    options.height = 48;
    options.ndisp = 16;
    /* BP: the small-level size on the 64x48 pair and its 32x24 half, both
     * with 16 disparities (one build per candidate serves both) and 5
     * levels, so each value changes which levels run in one work-group */
    check_two_workload_search(ctx, "bp", "BP_SMALL_LEVEL_PIXELS", &options);
    check_tuned_output(ctx, "bp");
    /* the group height's second look, judged on both workloads */
    check_two_workload_search(ctx, "bp", "BP_WG_Y", &options);
    check_two_workload_search(ctx, "geometry", "GEOM_WG", &options);
    /* a parameter the family's search does not sweep */
    pv_tune_result result;
    const pv_tune_search_spec spec = {0.0, "BP_COOP_LANES", NULL};
    int before = param_value(ctx, "bp", "BP_WG_X");
    assert_int_equal(pv_tune_search(ctx, "bp", &options, &spec, &result), PV_ERR_INVALID);
    assert_int_equal(param_value(ctx, "bp", "BP_WG_X"), before);
    assert_int_equal(pv_tune_use_defaults(ctx), PV_OK);
}

/* ------------------------------------------------------------ bad caches */

/* Each file must be ignored with a warning, leaving the defaults. */
static void check_ignored(const char *what)
{
    pv_context *ctx = new_opencl();
    assert_non_null(ctx);
    int default_x = param_value(ctx, "bp", "BP_WG_X");
    int warned = 0;
    int applied = load_capturing(ctx, &warned);
    print_message("%s: applied %d, warned %d\n", what, applied, warned);
    assert_int_equal(applied, 0);
    assert_true(warned);
    assert_int_equal(param_value(ctx, "bp", "BP_WG_X"), default_x);
    pv_context_destroy(ctx);
}

static void test_corrupt_files(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    char path[4096], name[256], driver[128];
    cache_path(ctx, path, sizeof path);
    device_identity(ctx, name, driver);

    write_text(path, "\x7f" "ELF garbage that is no tuning file\n");
    check_ignored("garbage");

    write_signed(path, name, driver, "param bp BP_WG_X 8\n");
    char *text = read_text(path);
    char *digit = strstr(text, "BP_WG_X 8");
    assert_non_null(digit);
    digit[8] = '4'; /* value changed after signing */
    write_text(path, text);
    free(text);
    check_ignored("checksum mismatch");

    write_signed(path, "Another GPU 9000", driver, "param bp BP_WG_X 8\n");
    check_ignored("another device");

    write_signed(path, name, "0.0-other-driver", "param bp BP_WG_X 8\n");
    check_ignored("another driver");

    write_signed(path, name, driver, "param bp BP_NO_SUCH_PARAM 8\n");
    check_ignored("unknown parameter");

    write_signed(path, name, driver, "param bp BP_WG_X -5\n");
    check_ignored("value out of range");

    write_signed(path, name, driver, "param bp BP_WG_X 8\n");
    text = read_text(path);
    text[strlen(text) - 5] = '\0'; /* truncated */
    write_text(path, text);
    free(text);
    check_ignored("truncated");

    /* and a good one is used */
    write_signed(path, name, driver, "param bp BP_WG_X 8\nparam sad SAD_WG_Y 2\n");
    pv_context *good = new_opencl();
    int warned = 1;
    assert_int_equal(load_capturing(good, &warned), 2);
    assert_false(warned);
    assert_int_equal(param_value(good, "bp", "BP_WG_X"), 8);
    assert_int_equal(param_value(good, "sad", "SAD_WG_Y"), 2);
    pv_context_destroy(good);
    remove(path);
}

/* ------------------------------------------------------------------- API */

static void test_api(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    pv_tune_param params[PV_TUNE_MAX_PARAMS];
    int count = 0;
    assert_int_equal(pv_tune_list(ctx, "bp", params, PV_TUNE_MAX_PARAMS, &count), PV_OK);
    assert_true(count >= 5);
    assert_int_equal(pv_tune_set(ctx, "bp", "BP_LOCAL_VALUES", 7), PV_OK);
    assert_int_equal(param_value(ctx, "bp", "BP_LOCAL_VALUES"), 7);
    assert_int_equal(pv_tune_use_defaults(ctx), PV_OK);
    assert_true(ctx->tune_cache_read); /* a later first call reads no cache over them */
    for (int i = 0; i < count; i++)
        assert_int_equal(param_value(ctx, "bp", params[i].name), params[i].value);
    int value;
    assert_int_equal(pv_tune_set(ctx, "bp", "NO_SUCH", 1), PV_ERR_INVALID);
    assert_int_equal(pv_tune_set(ctx, "nope", "BP_WG_X", 1), PV_ERR_INVALID);
    assert_int_equal(pv_tune_set(ctx, "bp", "BP_WG_X", -1), PV_ERR_INVALID);
    assert_int_equal(pv_tune_get(ctx, "bp", "NO_SUCH", &value), PV_ERR_INVALID);
    assert_int_equal(pv_tune_get(ctx, "bp", "BP_WG_X", NULL), PV_ERR_INVALID);
    assert_int_equal(pv_tune_list(ctx, "bp", NULL, 3, &count), PV_ERR_INVALID);
}

/* ------------------------------------------------------- the table's slots */

/* Whether the backend's table lists family among its parameter families. */
static int table_has_family(const pv_context *ctx, const char *family)
{
    for (int i = 0; ctx->ops->device->param_family_name(i); i++)
        if (strcmp(ctx->ops->device->param_family_name(i), family) == 0)
            return 1;
    return 0;
}

static void test_parameter_slots(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    assert_non_null(pv_tune_family(0));
    for (int i = 0; pv_tune_family(i); i++)
        assert_true(table_has_family(ctx, pv_tune_family(i)));
    assert_false(pv_tune_family_known("fft")); /* a family, but not a tunable one */
    assert_true(table_has_family(ctx, "fft"));
    int value = -5;
    const pv_device_ops *device = ctx->ops->device;
    assert_int_equal(device->param_get(ctx, "nope", "BP_WG_X", &value), PV_ERR_INVALID);
    assert_int_equal(device->param_get(ctx, "bp", "BP_WGX", &value), PV_ERR_INVALID);
    assert_int_equal(value, -5); /* untouched on error */
    assert_int_equal(device->param_set(ctx, "sad", "SAD_WG", 4), PV_ERR_INVALID);
    assert_int_equal(device->param_reset(ctx, "nope"), PV_ERR_INVALID);
    assert_int_equal(device->param_set(ctx, "sad", "SAD_WG_X", 32), PV_OK);
    assert_int_equal(device->param_get(ctx, "sad", "SAD_WG_X", &value), PV_OK);
    assert_int_equal(value, 32);
    assert_int_equal(device->param_reset(ctx, "sad"), PV_OK);
    /* the CPU backend has no parameter slots at all */
    assert_null(g_cpu->ops->device->param_list);
}

#ifdef PV_HAVE_OPENCL
/* A kernel module that looks up a parameter the table lacks does not get
 * to run on a made-up value: its call fails, naming the parameter. */
static void test_misspelled_lookup_fails_the_call(void **state)
{
    (void)state;
    pv_context *ctx = opencl_or_skip();
    pv_image left, right, out;
    assert_int_equal(pv_image_alloc(&left, 64, 48, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&right, 64, 48, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&out, 64, 48, PV_PIXEL_F32), PV_OK);
    memset(left.data, 40, 64 * 48);
    memset(right.data, 40, 64 * 48);
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 16;
    pv_context_lock(ctx);
    assert_int_equal(pv_cl_param(ctx, "sad", "SAD_WG_XX", 9), 9);
    pv_context_unlock(ctx);
    assert_int_equal(pv_stereo_sad(ctx, &left, &right, &params, &out), PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(ctx), "sad.SAD_WG_XX"));
    assert_int_equal(pv_stereo_sad(ctx, &left, &right, &params, &out), PV_OK);
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&out);
}
#endif

/* The context's device description, filled once when it was made. */
static void test_device_description(void **state)
{
    (void)state;
    const pv_device_info *host = &g_cpu->device;
    assert_int_equal(host->type, PV_DEVICE_CPU);
    assert_string_equal(host->name, pv_context_device_name(g_cpu));
    assert_true(host->compute_units >= 1);
    assert_true(host->global_memory > 0);
    pv_context *ctx = opencl_or_skip();
    pv_device_info listed[16];
    int count = 0;
    assert_int_equal(pv_device_list(listed, 16, &count), PV_OK);
    assert_true(ctx->device_index < count);
    const pv_device_info *device = &ctx->device;
    assert_string_equal(device->name, listed[ctx->device_index].name);
    assert_string_equal(device->driver_version, listed[ctx->device_index].driver_version);
    assert_true(device->max_alloc > 0 && device->max_alloc <= device->global_memory);
    assert_true(device->local_memory > 0);
    assert_true(device->compute_units >= 1);
    assert_string_equal(device->name, pv_context_device_name(ctx));
}

/* The significance margin of the search, on known values: 3 % faster
 * replaces the best, 3 % or less does not, a rejected candidate (< 0)
 * never does, and the first timed configuration always does. */
static void test_gain_margin(void **state)
{
    (void)state;
    assert_true(pv_tune_clearly_faster(96.9, 100.0));
    assert_false(pv_tune_clearly_faster(97.0, 100.0));
    assert_false(pv_tune_clearly_faster(98.5, 100.0));
    assert_false(pv_tune_clearly_faster(100.0, 100.0));
    assert_false(pv_tune_clearly_faster(120.0, 100.0));
    assert_false(pv_tune_clearly_faster(-1.0, 100.0));
    assert_true(pv_tune_clearly_faster(5.0, -1.0));
    assert_false(pv_tune_clearly_faster(-1.0, -1.0));
}

static void test_bad_options(void **state)
{
    (void)state;
    pv_tune_options options;
    pv_tune_options_default(&options);
    pv_tune_result results[2];
    int count = 0;
    assert_int_equal(pv_tune(NULL, &options, results, 2, &count), PV_ERR_INVALID);
    assert_int_equal(pv_tune(g_cpu, NULL, results, 2, &count), PV_ERR_INVALID);
    assert_int_equal(pv_tune(g_cpu, &options, NULL, 2, &count), PV_ERR_INVALID);
    assert_int_equal(pv_tune(g_cpu, &options, results, 0, &count), PV_ERR_INVALID);
    options.op = "fft";
    assert_int_equal(pv_tune(g_cpu, &options, results, 2, &count), PV_ERR_INVALID);
    options.op = NULL;
    options.runs = 0;
    assert_int_equal(pv_tune(g_cpu, &options, results, 2, &count), PV_ERR_INVALID);
    options.runs = 3;
    options.width = -2;
    assert_int_equal(pv_tune(g_cpu, &options, results, 2, &count), PV_ERR_INVALID);
    options.width = 0;
    /* the CPU backend has no launch parameters */
    assert_int_equal(pv_tune(g_cpu, &options, results, 2, &count), PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_tune_set(g_cpu, "bp", "BP_WG_X", 8), PV_OK);
    int value;
    assert_int_equal(pv_tune_get(g_cpu, "bp", "BP_WG_X", &value), PV_ERR_UNSUPPORTED);
    int applied = -1;
    assert_int_equal(pv_tune_load(g_cpu, &applied), PV_OK);
    assert_int_equal(applied, 0);
    assert_int_equal(pv_tune_load(NULL, &applied), PV_ERR_INVALID);
    assert_int_equal(pv_tune_use_defaults(NULL), PV_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_gain_margin),
        cmocka_unit_test(test_relative_score),
        cmocka_unit_test(test_workload_table),
        cmocka_unit_test(test_families_match_searches),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_parameter_slots),
#ifdef PV_HAVE_OPENCL
        cmocka_unit_test(test_misspelled_lookup_fails_the_call),
#endif
        cmocka_unit_test(test_device_description),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_search_bp),
        cmocka_unit_test(test_search_sad),
        cmocka_unit_test(test_two_workload_search),
        cmocka_unit_test(test_unknown_family),
        cmocka_unit_test(test_budget_stops_search),
        cmocka_unit_test(test_oracle_rejects_wrong_candidate),
        cmocka_unit_test(test_search_every_family),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
