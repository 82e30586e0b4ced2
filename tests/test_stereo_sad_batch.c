/* SAD batches (pv_stereo_sad_batch): every pair's disparity is exactly the
 * single call's (u8 and f32 pairs, the left-right check, sub-pixel, a u8
 * window wide enough to be matched on f32 copies), the backends agree as
 * single calls do, the cross-check runs, a device failure resets every
 * output, and bad input is refused with nothing touched. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 48
#define H 32
#define PAIRS 5
#define SENTINEL 7.0f

typedef struct batch {
    pv_image lefts[PAIRS], rights[PAIRS], out[PAIRS], single[PAIRS];
} batch;

static void batch_new(batch *b, pv_pixel_type type, uint32_t seed)
{
    for (int i = 0; i < PAIRS; i++) {
        assert_int_equal(pv_image_alloc(&b->lefts[i], W, H, type), PV_OK);
        assert_int_equal(pv_image_alloc(&b->rights[i], W, H, type), PV_OK);
        tu_fill_random(&b->lefts[i], seed + (uint32_t)i);
        for (int y = 0; y < H; y++) /* the right view: the left one shifted by 1 + i % 4 */
            for (int x = 0; x < W; x++) {
                const int from = x + 1 + i % 4 < W ? x + 1 + i % 4 : x;
                tu_set_pixel(&b->rights[i], x, y, pv_image_get(&b->lefts[i], from, y));
            }
        assert_int_equal(pv_image_alloc(&b->out[i], W, H, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_image_alloc(&b->single[i], W, H, PV_PIXEL_F32), PV_OK);
        tu_fill_image(&b->out[i], SENTINEL);
    }
}

static void batch_free(batch *b)
{
    for (int i = 0; i < PAIRS; i++)
        image_list_free(&b->lefts[i], &b->rights[i], &b->out[i], &b->single[i], NULL);
}

static void expect_equal_maps(const pv_image *a, const pv_image *b, int pair)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const float u = *tu_fpixel(a, x, y), v = *tu_fpixel(b, x, y);
            if (!(u == v))
                fail_msg("pair %d (%d, %d): batch %g, single call %g", pair, x, y, (double)u,
                         (double)v);
        }
}

/* The batch against single calls on the same context. */
static void expect_batch_equals_singles(pv_context *ctx, pv_pixel_type type,
                                        const pv_sad_params *p)
{
    batch b;
    batch_new(&b, type, 11u);
    for (int i = 0; i < PAIRS; i++)
        tu_expect_ok(ctx, pv_stereo_sad(ctx, &b.lefts[i], &b.rights[i], p, &b.single[i]), "sad");
    tu_expect_ok(ctx, pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, p, b.out), "batch");
    for (int i = 0; i < PAIRS; i++)
        expect_equal_maps(&b.out[i], &b.single[i], i);
    batch_free(&b);
}

static void test_batch_equals_single_calls(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 8;
    expect_batch_equals_singles(ctx, PV_PIXEL_U8, &p);
    expect_batch_equals_singles(ctx, PV_PIXEL_F32, &p);
    p.lr_check = 1;
    p.subpixel = 1;
    p.uniqueness = 0.1f;
    expect_batch_equals_singles(ctx, PV_PIXEL_U8, &p);
    pv_sad_params_default(&p);
    p.ndisp = 8;
    p.window = 31; /* wider than u8 costs hold: matched on f32 copies */
    expect_batch_equals_singles(ctx, PV_PIXEL_U8, &p);
}

/* Each pair agrees between the backends as single calls do (the
 * cross-check's tolerance, PV_TOL_SAD_DIFFERING_SHARE), and the
 * cross-check of a batch passes. */
static void test_backends_agree_and_crosscheck(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    batch b;
    batch_new(&b, PV_PIXEL_U8, 21u);
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 8;
    tu_expect_ok(tu_cpu, pv_stereo_sad_batch(tu_cpu, b.lefts, b.rights, PAIRS, &p, b.single),
                 "cpu batch");
    tu_expect_ok(cl, pv_stereo_sad_batch(cl, b.lefts, b.rights, PAIRS, &p, b.out), "cl batch");
    for (int i = 0; i < PAIRS; i++)
        expect_equal_maps(&b.out[i], &b.single[i], i); /* integer disparities: identical */
    tu_expect_ok(cl, pv_context_set_crosscheck(cl, 1), "crosscheck on");
    pv_status status = pv_stereo_sad_batch(cl, b.lefts, b.rights, PAIRS, &p, b.out);
    pv_context_set_crosscheck(cl, 0);
    tu_expect_ok(cl, status, "cross-checked batch");
    batch_free(&b);
}

/* A device failure in the middle of the batch resets every output. */
static void test_failure_resets_outputs(void **state)
{
    (void)state;
    pv_context *faulty = tu_fault_context("enqueue:6");
    if (!faulty)
        skip();
    batch b;
    batch_new(&b, PV_PIXEL_U8, 31u);
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 8;
    assert_int_not_equal(pv_stereo_sad_batch(faulty, b.lefts, b.rights, PAIRS, &p, b.out), PV_OK);
    for (int i = 0; i < PAIRS; i++)
        assert_true(tu_image_all_equal(&b.out[i], INFINITY));
    pv_context_destroy(faulty);
    batch_free(&b);
}

static void expect_refused(pv_status status, batch *b, const char *needle)
{
    assert_int_equal(status, PV_ERR_INVALID);
    for (int i = 0; i < PAIRS; i++)
        assert_true(tu_image_all_equal(&b->out[i], SENTINEL));
    if (needle && !strstr(pv_last_error(), needle))
        fail_msg("message \"%s\" lacks \"%s\"", pv_last_error(), needle);
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    batch b;
    batch_new(&b, PV_PIXEL_U8, 41u);
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 8;
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, 0, &p, b.out), &b, "count 0");
    expect_refused(pv_stereo_sad_batch(ctx, NULL, b.rights, PAIRS, &p, b.out), &b, "lefts");
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, NULL, b.out), &b, "params");
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, &p, NULL), &b,
                   "disparities");
    p.window = 4;
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, &p, b.out), &b, "pair 0");
    p.window = 5;
    pv_image small = b.lefts[3];
    b.lefts[3].width = W - 2;
    b.rights[3].width = W - 2;
    pv_image small_out = b.out[3];
    b.out[3].width = W - 2;
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, &p, b.out), &b, "pair 3");
    b.lefts[3] = small;
    b.rights[3].width = W;
    b.out[3] = small_out;
    /* pair 2's output over pair 4's left image (one block holds both) */
    pv_image block;
    assert_int_equal(pv_image_alloc(&block, W, H, PV_PIXEL_F32), PV_OK);
    pv_image left4 = b.lefts[4], out2 = b.out[2];
    b.lefts[4] = pv_image_wrap(block.data, W, H, PV_PIXEL_U8);
    memcpy(b.lefts[4].data, left4.data, (size_t)W * H);
    b.out[2] = block;
    tu_fill_image(&b.out[2], SENTINEL);
    expect_refused(pv_stereo_sad_batch(ctx, b.lefts, b.rights, PAIRS, &p, b.out), &b,
                   "shares memory with an image of the batch");
    b.lefts[4] = left4;
    b.out[2] = out2;
    pv_image_free(&block);
    assert_int_equal(pv_stereo_sad_batch(NULL, b.lefts, b.rights, PAIRS, &p, b.out),
                     PV_ERR_INVALID);
    batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_batch_equals_single_calls),
        cmocka_unit_test(test_backends_agree_and_crosscheck),
        cmocka_unit_test(test_failure_resets_outputs),
        TU_ON_BOTH(test_bad_input),
    };
    return cmocka_run_group_tests_name("stereo_sad_batch", tests, tu_group_setup,
                                       tu_group_teardown);
}
