/* The configuration table (pv_config_*), the log callback and the
 * progress callback with its cancellation, on both backends. */
#include "test_util.h"
#include "../lib/core/configuration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------- configuration */

static void test_config_table(void **state)
{
    (void)state;
    const int count = pv_config_count();
    assert_int_equal(count, PV_CONFIG_COUNT);
    for (int i = 0; i < count; i++) {
        pv_config_entry_info entry;
        assert_int_equal(pv_config_entry(i, &entry), PV_OK);
        assert_int_equal(strncmp(entry.name, "PARVIS_", 7), 0);
        assert_true(entry.kind[0] && entry.default_value[0] && entry.meaning[0]);
        for (int j = 0; j < i; j++) {
            pv_config_entry_info other;
            assert_int_equal(pv_config_entry(j, &other), PV_OK);
            assert_string_not_equal(entry.name, other.name);
        }
    }
}

static int index_of(const char *name)
{
    for (int i = 0; i < pv_config_count(); i++) {
        pv_config_entry_info entry;
        if (pv_config_entry(i, &entry) == PV_OK && strcmp(entry.name, name) == 0)
            return i;
    }
    return -1;
}

/* A value set before a context is made is the one listed; unset, nothing
 * is listed as set. */
static void test_config_read_at_context_creation(void **state)
{
    (void)state;
    const int index = index_of("PARVIS_MEMORY_LIMIT");
    assert_true(index >= 0);
    setenv("PARVIS_MEMORY_LIMIT", "64G", 1);
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    assert_non_null(ctx);
    pv_config_entry_info entry;
    assert_int_equal(pv_config_entry(index, &entry), PV_OK);
    assert_int_equal(entry.is_set, 1);
    assert_string_equal(entry.value, "64G");
    /* Changed under the living context, nothing changes until the next
     * context is made (or the test's re-read). */
    unsetenv("PARVIS_MEMORY_LIMIT");
    assert_int_equal(pv_config_entry(index, &entry), PV_OK);
    assert_string_equal(entry.value, "64G");
    pv_context_destroy(ctx);
    ctx = tu_context(PV_BACKEND_CPU);
    assert_non_null(ctx);
    assert_int_equal(pv_config_entry(index, &entry), PV_OK);
    assert_int_equal(entry.is_set, 0);
    assert_string_equal(entry.value, "");
    pv_context_destroy(ctx);
}

static void test_config_bad_arguments(void **state)
{
    (void)state;
    pv_config_entry_info entry;
    memset(&entry, 0x5A, sizeof entry);
    pv_config_entry_info before = entry;
    assert_int_equal(pv_config_entry(-1, &entry), PV_ERR_INVALID);
    assert_int_equal(pv_config_entry(pv_config_count(), &entry), PV_ERR_INVALID);
    assert_int_equal(memcmp(&entry, &before, sizeof entry), 0);
    assert_int_equal(pv_config_entry(0, NULL), PV_ERR_INVALID);
    /* A value longer than the library keeps is refused by context
     * creation, naming the variable. */
    char *long_value = malloc(PV_CONFIG_VALUE_MAX + 2);
    assert_non_null(long_value);
    memset(long_value, 'x', PV_CONFIG_VALUE_MAX + 1);
    long_value[PV_CONFIG_VALUE_MAX + 1] = '\0';
    setenv("PARVIS_TUNE_DIR", long_value, 1);
    pv_context *ctx = NULL;
    assert_int_equal(pv_context_create(&ctx, NULL), PV_ERR_INVALID);
    assert_null(ctx);
    assert_non_null(strstr(pv_last_error(), "PARVIS_TUNE_DIR"));
    tu_set_env("PARVIS_TUNE_DIR", NULL);
    free(long_value);
}

/* --------------------------------------------------------------------- log */

typedef struct captured_log {
    int lines;
    int errors;
    char last[1024];
} captured_log;

static void capture_line(void *user, pv_log_level level, const char *line)
{
    captured_log *log = user;
    log->lines++;
    log->errors += level == PV_LOG_ERROR;
    snprintf(log->last, sizeof log->last, "%s", line);
}

/* Runs fail() with stderr sent to a file; returns what reached it. */
static long stderr_bytes_during(void (*action)(void))
{
    const char *path = tu_tmp_path("config-stderr.txt");
    FILE *file = fopen(path, "w+");
    assert_non_null(file);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(file), STDERR_FILENO) >= 0);
    action();
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    fseek(file, 0, SEEK_END);
    long bytes = ftell(file);
    fclose(file);
    remove(path);
    return bytes;
}

static void fail_an_allocation(void)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, -3, 4, PV_PIXEL_F32), PV_ERR_INVALID);
}

static void test_log_callback(void **state)
{
    (void)state;
    tu_set_env("PARVIS_LOG", "1");
    /* the default: PARVIS_LOG=1 writes the line to stderr */
    assert_true(stderr_bytes_during(fail_an_allocation) > 0);
    captured_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_set_log_callback(capture_line, &log), PV_OK);
    assert_int_equal(stderr_bytes_during(fail_an_allocation), 0);
    assert_int_equal(log.lines, 1);
    assert_int_equal(log.errors, 1);
    assert_null(strstr(log.last, "parvis: "));
    assert_non_null(strstr(log.last, pv_last_error()));
    assert_null(strchr(log.last, '\n'));
    /* back to the default */
    assert_int_equal(pv_set_log_callback(NULL, NULL), PV_OK);
    assert_true(stderr_bytes_during(fail_an_allocation) > 0);
    assert_int_equal(log.lines, 1);
    /* with a callback, lines come whatever PARVIS_LOG says */
    tu_set_env("PARVIS_LOG", NULL);
    assert_int_equal(pv_set_log_callback(capture_line, &log), PV_OK);
    fail_an_allocation();
    assert_int_equal(log.lines, 2);
    assert_int_equal(pv_set_log_callback(NULL, NULL), PV_OK);
    assert_int_equal(stderr_bytes_during(fail_an_allocation), 0);
}

/* ---------------------------------------------------------------- progress */

#define MAX_REPORTS 256

typedef struct progress_log {
    int calls;
    int cancel_at;            /* the call (1-based) that asks to stop; 0: never */
    char op[64];
    double done[MAX_REPORTS];
    double total[MAX_REPORTS];
} progress_log;

static int record_progress(void *user, const char *op, double done, double total)
{
    progress_log *log = user;
    if (log->calls < MAX_REPORTS) {
        log->done[log->calls] = done;
        log->total[log->calls] = total;
    }
    snprintf(log->op, sizeof log->op, "%s", op);
    log->calls++;
    return log->cancel_at > 0 && log->calls >= log->cancel_at;
}

/* From 0, never back, ending at a constant total. */
static void assert_complete(const progress_log *log, const char *op)
{
    assert_true(log->calls >= 2 && log->calls <= MAX_REPORTS);
    assert_string_equal(log->op, op);
    assert_true(log->done[0] == 0.0);
    for (int i = 1; i < log->calls; i++) {
        assert_true(log->done[i] >= log->done[i - 1]);
        assert_true(log->total[i] == log->total[0]);
    }
    assert_true(log->done[log->calls - 1] == log->total[0]);
}

static void stereo_pair(pv_image *left, pv_image *right, int width, int height)
{
    assert_int_equal(pv_image_alloc(left, width, height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(right, width, height, PV_PIXEL_F32), PV_OK);
    tu_fill_random(left, 7);
    const float *from = left->data;
    float *to = right->data;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            to[y * right->stride + x] = from[y * left->stride + (x + 3 < width ? x + 3 : x)];
}

static void small_bp(pv_bp_params *p)
{
    pv_bp_params_default(p);
    p->ndisp = 8;
    p->levels = 3;
    p->iterations = 4;
}

static void test_progress_bp(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image left, right, disparity;
    stereo_pair(&left, &right, 48, 32);
    assert_int_equal(pv_image_alloc(&disparity, 48, 32, PV_PIXEL_F32), PV_OK);
    pv_bp_params p;
    small_bp(&p);
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_stereo_bp(ctx, &left, &right, &p, &disparity), "stereo_bp");
    assert_complete(&log, "stereo_bp");
    assert_true(log.total[0] == (double)p.levels * p.iterations); /* one tile */
    /* cancelled at the second report: the status, the message, and the
     * context still works */
    memset(&log, 0, sizeof log);
    log.cancel_at = 2;
    assert_int_equal(pv_stereo_bp(ctx, &left, &right, &p, &disparity), PV_ERR_CANCELLED);
    assert_non_null(strstr(pv_context_last_error(ctx), "cancelled"));
    assert_int_equal(log.calls, 2);
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    tu_expect_ok(ctx, pv_stereo_bp(ctx, &left, &right, &p, &disparity), "stereo_bp after cancel");
    assert_int_equal(log.calls, 2); /* no callback any more */
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
}

static void test_progress_sgm_batch(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    enum { PAIRS = 3 };
    pv_image lefts[PAIRS], rights[PAIRS], disparities[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        stereo_pair(&lefts[i], &rights[i], 40, 24);
        assert_int_equal(pv_image_alloc(&disparities[i], 40, 24, PV_PIXEL_F32), PV_OK);
    }
    pv_sgm_params p;
    pv_sgm_params_default(&p);
    p.ndisp = 16;
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_stereo_sgm_batch(ctx, lefts, rights, PAIRS, &p, disparities, NULL),
                 "stereo_sgm_batch");
    assert_complete(&log, "stereo_sgm_batch");
    assert_int_equal(log.calls, PAIRS + 1);
    assert_true(log.total[0] == PAIRS);
    /* cancelled after the first pair: every output reset, as on any failure */
    memset(&log, 0, sizeof log);
    log.cancel_at = 2;
    assert_int_equal(pv_stereo_sgm_batch(ctx, lefts, rights, PAIRS, &p, disparities, NULL),
                     PV_ERR_CANCELLED);
    for (int i = 0; i < PAIRS; i++)
        assert_true(isinf(pv_image_get(&disparities[i], 5, 5)));
    log.cancel_at = 0;
    tu_expect_ok(ctx, pv_stereo_sgm_batch(ctx, lefts, rights, PAIRS, &p, disparities, NULL),
                 "stereo_sgm_batch after cancel");
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    for (int i = 0; i < PAIRS; i++) {
        pv_image_free(&lefts[i]);
        pv_image_free(&rights[i]);
        pv_image_free(&disparities[i]);
    }
}

static void test_progress_flow(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_flow_params p;
    pv_flow_params_default(&p);
    p.warps = 2;
    p.iterations = 5;
    p.levels = 2;
    pv_flow_plan *plan = NULL;
    tu_expect_ok(ctx, pv_flow_plan_create(ctx, 32, 32, 1, &p, &plan), "flow plan");
    pv_volume fixed = tu_random_volume(32, 32, 1, 3), moving = tu_random_volume(32, 32, 1, 4);
    pv_flow_field flow;
    assert_int_equal(pv_flow_field_alloc(&flow, 32, 32, 1), PV_OK);
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_flow_plan_run(plan, &fixed, &moving, &flow), "flow");
    assert_complete(&log, "flow");
    assert_true(log.total[0] == 2.0 * 2 * 5);
    assert_int_equal(log.calls, 1 + 2 * 2);
    /* cancelled: the field is untouched */
    memset(flow.u.data, 0, sizeof(float) * 32 * 32);
    flow.u.data[0] = 42.0f;
    memset(&log, 0, sizeof log);
    log.cancel_at = 3;
    assert_int_equal(pv_flow_plan_run(plan, &fixed, &moving, &flow), PV_ERR_CANCELLED);
    assert_true(flow.u.data[0] == 42.0f);
    log.cancel_at = 0;
    tu_expect_ok(ctx, pv_flow_plan_run(plan, &fixed, &moving, &flow), "flow after cancel");
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    pv_flow_field_free(&flow);
    pv_volume_free(&fixed);
    pv_volume_free(&moving);
    pv_flow_plan_destroy(plan);
}

static void test_progress_sift_batch(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    enum { IMAGES = 4 };
    pv_image images[IMAGES];
    pv_sift_features results[IMAGES];
    memset(results, 0, sizeof results);
    for (int i = 0; i < IMAGES; i++) {
        assert_int_equal(pv_image_alloc(&images[i], 64, 64, PV_PIXEL_F32), PV_OK);
        tu_fill_random(&images[i], 11 + (uint32_t)i);
    }
    pv_sift_plan *plan = NULL;
    tu_expect_ok(ctx, pv_sift_plan_create(ctx, 64, 64, NULL, &plan), "sift plan");
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_sift_detect_batch(plan, images, IMAGES, results), "sift batch");
    assert_complete(&log, "sift_detect_batch");
    assert_true(log.total[0] == IMAGES);
    for (int i = 0; i < IMAGES; i++)
        pv_sift_features_free(&results[i]);
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    assert_int_equal(pv_sift_detect_batch(plan, images, IMAGES, results), PV_ERR_CANCELLED);
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    tu_expect_ok(ctx, pv_sift_detect_batch(plan, images, IMAGES, results), "sift after cancel");
    for (int i = 0; i < IMAGES; i++) {
        pv_sift_features_free(&results[i]);
        pv_image_free(&images[i]);
    }
    pv_sift_plan_destroy(plan);
}

static void test_progress_phasecorr_batches(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    enum { MOVERS = 5, SIDE = 32 };
    pv_image reference, movers[MOVERS];
    assert_int_equal(pv_image_alloc(&reference, SIDE, SIDE, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&reference, 21);
    for (int i = 0; i < MOVERS; i++) {
        assert_int_equal(pv_image_alloc(&movers[i], SIDE, SIDE, PV_PIXEL_F32), PV_OK);
        tu_fill_random(&movers[i], 22 + (uint32_t)i);
    }
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    pv_phasecorr_plan *plan = NULL;
    tu_expect_ok(ctx, pv_phasecorr_plan_create(ctx, &reference, &options, 2, &plan), "plan");
    pv_shift shifts[MOVERS];
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_phasecorr_plan_correlate(plan, movers, MOVERS, shifts), "correlate");
    assert_complete(&log, "phasecorr_plan_correlate");
    /* batches of 2: 0, 2, 4, 5 movers */
    assert_int_equal(log.calls, 4);
    assert_true(log.done[1] == 2.0 && log.done[2] == 4.0 && log.total[0] == MOVERS);
    memset(&log, 0, sizeof log);
    log.cancel_at = 2;
    assert_int_equal(pv_phasecorr_plan_correlate(plan, movers, MOVERS, shifts), PV_ERR_CANCELLED);
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    tu_expect_ok(ctx, pv_phasecorr_plan_correlate(plan, movers, MOVERS, shifts),
                 "correlate after cancel");
    pv_phasecorr_plan_destroy(plan);
    for (int i = 0; i < MOVERS; i++)
        pv_image_free(&movers[i]);
    pv_image_free(&reference);
}

/* The tuner reports families searched; the searches' own calls report
 * nothing of their own. */
static void test_progress_tune(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    pv_tune_options options;
    pv_tune_options_default(&options);
    options.op = "sad";
    options.max_candidates = 1;
    options.runs = 1;
    options.width = 64;
    options.height = 32;
    options.ndisp = 8;
    options.write_cache = 0;
    pv_tune_result results[2];
    int count = 0;
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_tune(ctx, &options, results, 2, &count), "tune");
    assert_complete(&log, "tune");
    assert_int_equal(log.calls, 2);
    assert_true(log.total[0] == 1.0);
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    assert_int_equal(pv_tune(ctx, &options, results, 2, &count), PV_ERR_CANCELLED);
    assert_int_equal(count, 0);
    assert_int_equal(pv_context_set_progress(ctx, NULL, NULL), PV_OK);
    tu_expect_ok(ctx, pv_tune(ctx, &options, results, 2, &count), "tune after cancel");
    pv_context_destroy(ctx);
}

/* A device group's call reports items done by all members on its first
 * context; the members' own calls report nothing. */
static pv_device_group *group_of(pv_backend_kind kind)
{
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = kind;
    pv_device_group *group = NULL;
    const int twice[2] = {0, 0};
    if (kind == PV_BACKEND_OPENCL && !tu_opencl)
        return NULL;
    int made = kind == PV_BACKEND_CPU ? pv_device_group_create(&group, &options, NULL, 0)
                                      : pv_device_group_create(&group, &options, twice, 2);
    assert_int_equal(made, PV_OK);
    return group;
}

static void test_progress_group_sequence(void **state)
{
    const pv_backend_kind kind = *(const pv_backend_kind *)*state;
    pv_device_group *group = group_of(kind);
    if (!group)
        skip();
    enum { FRAMES = 4 };
    pv_volume frames[FRAMES];
    pv_flow_field flows[FRAMES - 1];
    for (int i = 0; i < FRAMES; i++)
        frames[i] = tu_random_volume(32, 32, 1, 40 + (uint32_t)i);
    for (int i = 0; i < FRAMES - 1; i++)
        assert_int_equal(pv_flow_field_alloc(&flows[i], 32, 32, 1), PV_OK);
    pv_flow_params p;
    pv_flow_params_default(&p);
    p.warps = 1;
    p.iterations = 5;
    pv_context *first = pv_device_group_context(group, 0);
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(first, record_progress, &log), PV_OK);
    tu_expect_ok(first, pv_flow3d_sequence(group, frames, FRAMES, &p, flows), "sequence");
    assert_complete(&log, "pv_flow3d_sequence");
    assert_true(log.total[0] == FRAMES - 1);
    memset(&log, 0, sizeof log);
    log.cancel_at = 1;
    assert_int_equal(pv_flow3d_sequence(group, frames, FRAMES, &p, flows), PV_ERR_CANCELLED);
    assert_int_equal(pv_context_set_progress(first, NULL, NULL), PV_OK);
    tu_expect_ok(first, pv_flow3d_sequence(group, frames, FRAMES, &p, flows), "after cancel");
    for (int i = 0; i < FRAMES - 1; i++)
        pv_flow_field_free(&flows[i]);
    for (int i = 0; i < FRAMES; i++)
        pv_volume_free(&frames[i]);
    pv_device_group_destroy(group);
}

/* The cross-check's CPU run reports nothing of its own: still one
 * monotone sequence. */
static void test_progress_with_crosscheck(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    assert_int_equal(pv_context_set_crosscheck(ctx, 1), PV_OK);
    pv_image left, right, disparity;
    stereo_pair(&left, &right, 48, 32);
    assert_int_equal(pv_image_alloc(&disparity, 48, 32, PV_PIXEL_F32), PV_OK);
    pv_bp_params p;
    small_bp(&p);
    progress_log log;
    memset(&log, 0, sizeof log);
    assert_int_equal(pv_context_set_progress(ctx, record_progress, &log), PV_OK);
    tu_expect_ok(ctx, pv_stereo_bp(ctx, &left, &right, &p, &disparity), "stereo_bp checked");
    assert_complete(&log, "stereo_bp");
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
    pv_context_destroy(ctx);
}

static void test_progress_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(pv_context_set_progress(NULL, record_progress, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_context_set_progress(NULL, NULL, NULL), PV_ERR_INVALID);
    assert_string_equal(pv_status_string(PV_ERR_CANCELLED), "cancelled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_table),
        cmocka_unit_test(test_config_read_at_context_creation),
        cmocka_unit_test(test_config_bad_arguments),
        cmocka_unit_test(test_log_callback),
        TU_ON_BOTH(test_progress_bp),
        TU_ON_BOTH(test_progress_sgm_batch),
        TU_ON_BOTH(test_progress_flow),
        TU_ON_BOTH(test_progress_sift_batch),
        TU_ON_BOTH(test_progress_phasecorr_batches),
        cmocka_unit_test(test_progress_tune),
        TU_ON_BOTH(test_progress_group_sequence),
        cmocka_unit_test(test_progress_with_crosscheck),
        cmocka_unit_test(test_progress_bad_arguments),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
