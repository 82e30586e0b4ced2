/* Asynchronous calls (include/parvis/async.h): every queued operation gives
 * exactly the synchronous call's result (the worker runs that very call, so
 * the comparison is bit for bit), calls run in the order they were queued,
 * a failure reaches pv_job_wait or pv_wait with the synchronous call's
 * status and leaves the outputs as that call does, pv_context_destroy
 * waits for what is queued, two contexts work side by side, and misuse is
 * refused.  On both backends. */
#define _DEFAULT_SOURCE /* usleep */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 64
#define H 48
#define SENTINEL 7.0f

static pv_image random_image(pv_pixel_type type, uint32_t seed)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, W, H, type), PV_OK);
    tu_fill_random(&image, seed);
    return image;
}

static pv_image output_image(void)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, W, H, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&image, SENTINEL);
    return image;
}

static void assert_same_pixels(const pv_image *a, const pv_image *b)
{
    for (int y = 0; y < a->height; y++)
        assert_memory_equal(tu_fpixel(a, 0, y), tu_fpixel(b, 0, y),
                            (size_t)a->width * sizeof(float));
}

/* --------------------------------------------------------------- stereo */

#define QUEUED 4

static void test_sad_matches_sync(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 16;
    pv_image left[QUEUED], right[QUEUED], sync[QUEUED], queued[QUEUED];
    pv_job *jobs[QUEUED];
    for (int i = 0; i < QUEUED; i++) {
        left[i] = random_image(PV_PIXEL_U8, 10u + (uint32_t)i);
        right[i] = random_image(PV_PIXEL_U8, 20u + (uint32_t)i);
        sync[i] = output_image();
        queued[i] = output_image();
        tu_expect_ok(ctx, pv_stereo_sad(ctx, &left[i], &right[i], &params, &sync[i]), "sad");
    }
    for (int i = 0; i < QUEUED; i++)
        tu_expect_ok(ctx, pv_stereo_sad_async(ctx, &left[i], &right[i], &params, &queued[i],
                                              &jobs[i]), "sad_async");
    params.ndisp = 0; /* the call copied the parameters: changing them now is harmless */
    for (int i = 0; i < QUEUED; i++) {
        tu_expect_ok(ctx, pv_job_wait(jobs[i]), "job_wait");
        assert_same_pixels(&sync[i], &queued[i]);
        pv_image_free(&left[i]);
        pv_image_free(&right[i]);
        pv_image_free(&sync[i]);
        pv_image_free(&queued[i]);
    }
}

static void test_sgm_and_bp_match_sync(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image left = random_image(PV_PIXEL_U8, 3), right = random_image(PV_PIXEL_U8, 4);
    pv_image disp_sync = output_image(), conf_sync = output_image();
    pv_image disp = output_image(), conf = output_image();
    pv_image bp_sync = output_image(), bp = output_image();
    pv_sgm_params sgm;
    pv_sgm_params_default(&sgm);
    sgm.ndisp = 16;
    pv_bp_params bpp;
    pv_bp_params_default(&bpp);
    tu_expect_ok(ctx, pv_stereo_sgm_confidence(ctx, &left, &right, &sgm, &disp_sync, &conf_sync),
                 "sgm");
    tu_expect_ok(ctx, pv_stereo_bp(ctx, &left, &right, &bpp, &bp_sync), "bp");
    pv_job *sgm_job, *bp_job;
    tu_expect_ok(ctx, pv_stereo_sgm_async(ctx, &left, &right, &sgm, &disp, &conf, &sgm_job),
                 "sgm_async");
    tu_expect_ok(ctx, pv_stereo_bp_async(ctx, &left, &right, &bpp, &bp, &bp_job), "bp_async");
    tu_expect_ok(ctx, pv_job_wait(bp_job), "bp job"); /* waiting out of order is fine */
    tu_expect_ok(ctx, pv_job_wait(sgm_job), "sgm job");
    assert_same_pixels(&disp_sync, &disp);
    assert_same_pixels(&conf_sync, &conf);
    assert_same_pixels(&bp_sync, &bp);
    pv_image *all[] = {&left, &right, &disp_sync, &conf_sync, &disp, &conf, &bp_sync, &bp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        pv_image_free(all[i]);
}

/* ------------------------------------------------------- volumes, shifts */

static void test_phasecorr_and_flow_match_sync(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image ref = random_image(PV_PIXEL_F32, 5), mov = random_image(PV_PIXEL_F32, 6);
    pv_shift shift_sync, shift = {0};
    tu_expect_ok(ctx, pv_phase_correlate(ctx, &ref, &mov, NULL, &shift_sync), "phasecorr");
    pv_job *job;
    tu_expect_ok(ctx, pv_phase_correlate_async(ctx, &ref, &mov, NULL, &shift, &job), "pc async");
    tu_expect_ok(ctx, pv_job_wait(job), "pc job");
    assert_memory_equal(&shift_sync, &shift, sizeof shift);

    pv_volume a = tu_random_volume(16, 16, 16, 7), b = tu_random_volume(16, 16, 16, 8);
    pv_shift shift3_sync, shift3 = {0};
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &a, &b, NULL, &shift3_sync), "phasecorr3d");
    tu_expect_ok(ctx, pv_phase_correlate3d_async(ctx, &a, &b, NULL, &shift3, NULL), "pc3 async");
    pv_flow_params fp;
    pv_flow_params_default(&fp);
    fp.warps = 2;
    fp.iterations = 5;
    pv_flow_field flow_sync, flow;
    assert_int_equal(pv_flow_field_alloc(&flow_sync, 16, 16, 16), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&flow, 16, 16, 16), PV_OK);
    tu_expect_ok(ctx, pv_flow3d(ctx, &a, &b, &fp, &flow_sync), "flow3d");
    tu_expect_ok(ctx, pv_flow3d_async(ctx, &a, &b, &fp, &flow, NULL), "flow3d async");
    tu_expect_ok(ctx, pv_wait(ctx), "wait");
    assert_memory_equal(&shift3_sync, &shift3, sizeof shift3);
    const size_t bytes = 16u * 16u * 16u * sizeof(float);
    assert_memory_equal(flow_sync.u.data, flow.u.data, bytes);
    assert_memory_equal(flow_sync.v.data, flow.v.data, bytes);
    assert_memory_equal(flow_sync.w.data, flow.w.data, bytes);
    pv_flow_field_free(&flow_sync);
    pv_flow_field_free(&flow);
    pv_volume_free(&a);
    pv_volume_free(&b);
    pv_image_free(&ref);
    pv_image_free(&mov);
}

/* ---------------------------------------------------------------- failures */

static void test_failures_are_reported(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image left = random_image(PV_PIXEL_U8, 1), right = random_image(PV_PIXEL_U8, 2);
    pv_image out = output_image();
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.window = 4; /* even: refused by the operation, when the call runs */
    const pv_status expected = pv_stereo_sad(ctx, &left, &right, &params, &out);
    assert_int_not_equal(expected, PV_OK);

    pv_job *job;
    assert_int_equal(pv_stereo_sad_async(ctx, &left, &right, &params, &out, &job), PV_OK);
    assert_int_equal(pv_job_wait(job), expected);
    assert_non_null(strstr(pv_last_error(), "window"));
    assert_true(tu_image_all_equal(&out, SENTINEL));

    /* Without a job the failure waits for pv_wait, once. */
    assert_int_equal(pv_stereo_sad_async(ctx, &left, &right, &params, &out, NULL), PV_OK);
    assert_int_equal(pv_wait(ctx), expected);
    assert_true(tu_image_all_equal(&out, SENTINEL));
    assert_int_equal(pv_wait(ctx), PV_OK);
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&out);
}

/* ------------------------------------------------------------ the worker */

typedef struct order_log {
    int seen[32];
    int count;
} order_log;

typedef struct order_task {
    order_log *log;
    int index;
} order_task;

static pv_status record(pv_context *ctx, void *user)
{
    (void)ctx;
    order_task *t = user;
    usleep(200); /* long enough for the caller to queue the next ones */
    t->log->seen[t->log->count++] = t->index;
    return PV_OK;
}

static void test_calls_run_in_order(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    order_log log = {{0}, 0};
    order_task tasks[32];
    pv_job *last = NULL;
    for (int i = 0; i < 32; i++) {
        tasks[i] = (order_task){&log, i};
        assert_int_equal(pv_submit(ctx, record, &tasks[i], i == 31 ? &last : NULL), PV_OK);
    }
    assert_int_equal(pv_job_wait(last), PV_OK);
    assert_int_equal(log.count, 32);
    for (int i = 0; i < 32; i++)
        assert_int_equal(log.seen[i], i);
}

static pv_status slow_count(pv_context *ctx, void *user)
{
    (void)ctx;
    usleep(5000);
    (*(int *)user)++;
    return PV_OK;
}

static void test_destroy_waits_for_queued_calls(void **state)
{
    (void)state;
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    assert_non_null(ctx);
    int count = 0;
    for (int i = 0; i < 5; i++)
        assert_int_equal(pv_submit(ctx, slow_count, &count, NULL), PV_OK);
    pv_job *job;
    assert_int_equal(pv_submit(ctx, slow_count, &count, &job), PV_OK);
    pv_context_destroy(ctx);
    assert_int_equal(count, 6);
    assert_int_equal(pv_job_done(job), 1); /* the job outlives its context */
    assert_int_equal(pv_job_wait(job), PV_OK);
}

static void test_job_done(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    int count = 0;
    pv_job *job;
    assert_int_equal(pv_submit(ctx, slow_count, &count, &job), PV_OK);
    tu_expect_ok(ctx, pv_wait(ctx), "wait");
    assert_int_equal(pv_job_done(job), 1); /* pv_wait waited for it too */
    assert_int_equal(pv_job_wait(job), PV_OK);
    assert_int_equal(count, 1);
}

/* Two contexts on one device, each with its own worker, fed alternately:
 * each result is still the synchronous call's. */
static void test_two_contexts_side_by_side(void **state)
{
    pv_context *first = tu_backend_ctx(state);
    pv_context *second = pv_context_backend(first) == PV_BACKEND_CPU
                             ? tu_context(PV_BACKEND_CPU)
                             : tu_new_opencl_or_skip();
    pv_sgm_params params;
    pv_sgm_params_default(&params);
    params.ndisp = 16;
    pv_image left[QUEUED], right[QUEUED], sync[QUEUED], queued[QUEUED];
    for (int i = 0; i < QUEUED; i++) {
        left[i] = random_image(PV_PIXEL_U8, 40u + (uint32_t)i);
        right[i] = random_image(PV_PIXEL_U8, 50u + (uint32_t)i);
        sync[i] = output_image();
        queued[i] = output_image();
        tu_expect_ok(first, pv_stereo_sgm(first, &left[i], &right[i], &params, &sync[i]), "sgm");
    }
    for (int i = 0; i < QUEUED; i++)
        tu_expect_ok(first, pv_stereo_sgm_async(i % 2 ? second : first, &left[i], &right[i],
                                                &params, &queued[i], NULL, NULL), "sgm_async");
    tu_expect_ok(first, pv_wait(first), "wait first");
    tu_expect_ok(second, pv_wait(second), "wait second");
    for (int i = 0; i < QUEUED; i++) {
        assert_same_pixels(&sync[i], &queued[i]);
        pv_image_free(&left[i]);
        pv_image_free(&right[i]);
        pv_image_free(&sync[i]);
        pv_image_free(&queued[i]);
    }
    pv_context_destroy(second);
}

static void test_misuse_is_refused(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = random_image(PV_PIXEL_U8, 1), out = output_image();
    pv_shift shift;
    pv_volume v = tu_random_volume(8, 8, 8, 1);
    pv_flow_field flow;
    pv_job *job = (pv_job *)&a; /* must stay as it is on a refusal */
    pv_job *const untouched = job;
    assert_int_equal(pv_submit(NULL, slow_count, &a, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_submit(ctx, NULL, &a, &job), PV_ERR_INVALID);
    assert_int_equal(pv_stereo_sad_async(NULL, &a, &a, NULL, &out, &job), PV_ERR_INVALID);
    assert_int_equal(pv_stereo_sad_async(ctx, NULL, &a, NULL, &out, &job), PV_ERR_INVALID);
    assert_int_equal(pv_stereo_sgm_async(ctx, &a, &a, NULL, NULL, NULL, &job), PV_ERR_INVALID);
    assert_int_equal(pv_stereo_bp_async(ctx, &a, NULL, NULL, &out, &job), PV_ERR_INVALID);
    assert_int_equal(pv_phase_correlate_async(ctx, &a, &a, NULL, NULL, &job), PV_ERR_INVALID);
    assert_int_equal(pv_phase_correlate3d_async(ctx, NULL, &v, NULL, &shift, &job),
                     PV_ERR_INVALID);
    assert_int_equal(pv_flow3d_async(ctx, &v, &v, NULL, NULL, &job), PV_ERR_INVALID);
    assert_ptr_equal(job, untouched);
    assert_int_equal(pv_job_wait(NULL), PV_ERR_INVALID);
    assert_int_equal(pv_job_done(NULL), 0);
    assert_int_equal(pv_wait(NULL), PV_ERR_INVALID);
    (void)flow;
    pv_volume_free(&v);
    pv_image_free(&a);
    pv_image_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_sad_matches_sync),
        TU_ON_BOTH(test_sgm_and_bp_match_sync),
        TU_ON_BOTH(test_phasecorr_and_flow_match_sync),
        TU_ON_BOTH(test_failures_are_reported),
        TU_ON_BOTH(test_calls_run_in_order),
        TU_ON_BOTH(test_job_done),
        TU_ON_BOTH(test_two_contexts_side_by_side),
        TU_ON_BOTH(test_misuse_is_refused),
        cmocka_unit_test(test_destroy_waits_for_queued_calls),
    };
    return cmocka_run_group_tests_name("async", tests, tu_group_setup, tu_group_teardown);
}
