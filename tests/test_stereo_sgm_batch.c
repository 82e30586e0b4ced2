/* A stream of pairs through one plan (pv_stereo_sgm_batch): every pair's
 * maps byte-identical to a single pv_stereo_sgm_confidence call's on the
 * same backend, the CPU backend's batch against OpenCL's (integer
 * disparities identical, confidence within PV_TOL_SGM_CONFIDENCE), bad
 * input refused with every output untouched, and a device failure in the
 * middle of a batch leaving every output reset.  Small pairs, so that the
 * suite takes seconds on PoCL. */
#include "test_util.h"
#include "../lib/core/tolerance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIRS 3
#define WIDTH 53
#define HEIGHT 29
#define SHIFT 4        /* right = left moved SHIFT pixels, plus noise */
#define SENTINEL 7.0f  /* fill of outputs that must stay untouched */

typedef struct batch {
    int count;
    pv_image left[PAIRS], right[PAIRS], disp[PAIRS], conf[PAIRS];
} batch;

static pv_image new_image(int width, int height, pv_pixel_type type)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, width, height, type), PV_OK);
    return image;
}

/* Pair i: a random left image and its copy moved by SHIFT + i % 2 pixels
 * with a little noise, so that the matcher finds real disparities. */
static void make_pair(pv_image *left, pv_image *right, int i, uint32_t seed)
{
    tu_fill_random(left, seed + (uint32_t)i);
    const int shift = SHIFT + i % 2;
    uint32_t noise = seed * 7u + (uint32_t)i;
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < left->width; x++) {
            const uint8_t *l = (const uint8_t *)left->data + (ptrdiff_t)y * left->stride;
            uint8_t *r = (uint8_t *)right->data + (ptrdiff_t)y * right->stride;
            const int from = x + shift < left->width ? x + shift : left->width - 1;
            const int value = l[from] + (int)(tu_rand(&noise) % 5) - 2;
            r[x] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
        }
}

static void batch_make(batch *b, int count, uint32_t seed)
{
    b->count = count;
    for (int i = 0; i < count; i++) {
        b->left[i] = new_image(WIDTH, HEIGHT, PV_PIXEL_U8);
        b->right[i] = new_image(WIDTH, HEIGHT, PV_PIXEL_U8);
        b->disp[i] = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
        b->conf[i] = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
        make_pair(&b->left[i], &b->right[i], i, seed);
        tu_fill_image(&b->disp[i], SENTINEL);
        tu_fill_image(&b->conf[i], SENTINEL);
    }
}

static void batch_free(batch *b)
{
    for (int i = 0; i < b->count; i++)
        image_list_free(&b->left[i], &b->right[i], &b->disp[i], &b->conf[i], NULL);
}

static int rows_equal(const pv_image *a, const pv_image *b)
{
    for (int y = 0; y < a->height; y++)
        if (memcmp(tu_fpixel(a, 0, y), tu_fpixel(b, 0, y), (size_t)a->width * sizeof(float)))
            return 0;
    return 1;
}

/* Every pixel of image equals value (INFINITY included). */
static int all_equal(const pv_image *image, float value)
{
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            if (*tu_fpixel(image, x, y) != value)
                return 0;
    return 1;
}

static void expect_untouched(const batch *b, const char *what)
{
    for (int i = 0; i < b->count; i++)
        if (!all_equal(&b->disp[i], SENTINEL) || !all_equal(&b->conf[i], SENTINEL))
            fail_msg("%s: pair %d's outputs were written", what, i);
}

static pv_sgm_params params_of(int variant)
{
    pv_sgm_params p;
    pv_sgm_params_default(&p);
    p.ndisp = 16;
    if (variant == 1) { /* median, 4 paths, adaptive P2, integer disparities */
        p.median = 1;
        p.paths = 4;
        p.p2_adaptive = 1;
        p.subpixel = 0;
    }
    if (variant == 2) /* 16-bit path costs on the device, a negative range */
        p.p2 = 900, p.min_disp = -2, p.census_width = p.census_height = 5;
    return p;
}

/* ------------------------------------------------------------------ tests */

/* Batches of 1, 2 and 3 pairs (each slot of the stream, and a slot
 * reused), with and without confidences: each pair's maps are the single
 * call's, bit for bit. */
static void test_batch_equals_single(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    for (int variant = 0; variant < 3; variant++)
        for (int count = 1; count <= PAIRS; count++) {
            const pv_sgm_params p = params_of(variant);
            batch b;
            batch_make(&b, count, 11u + (uint32_t)variant);
            const int with_conf = count != 2;
            tu_expect_ok(ctx, pv_stereo_sgm_batch(ctx, b.left, b.right, count, &p, b.disp,
                                                  with_conf ? b.conf : NULL),
                         "pv_stereo_sgm_batch");
            pv_image d = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
            pv_image c = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
            int valid = 0;
            for (int i = 0; i < count; i++) {
                tu_expect_ok(ctx, pv_stereo_sgm_confidence(ctx, &b.left[i], &b.right[i], &p, &d,
                                                           &c),
                             "pv_stereo_sgm_confidence");
                if (!rows_equal(&d, &b.disp[i]))
                    fail_msg("variant %d, batch of %d: pair %d's disparities differ from a "
                             "single call's", variant, count, i);
                if (with_conf ? !rows_equal(&c, &b.conf[i]) : !all_equal(&b.conf[i], SENTINEL))
                    fail_msg("variant %d, batch of %d: pair %d's confidence is wrong", variant,
                             count, i);
                for (int x = 0; x < WIDTH; x++)
                    valid += isfinite(*tu_fpixel(&d, x, HEIGHT / 2));
            }
            assert_true(valid > 0);
            image_list_free(&d, &c, NULL);
            batch_free(&b);
        }
}

/* The CPU backend's batch against OpenCL's: integer disparities identical
 * (INFINITY at the same pixels), confidence within PV_TOL_SGM_CONFIDENCE. */
static void test_batch_backends_agree(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const pv_sgm_params p = params_of(1);
    batch a, b;
    batch_make(&a, PAIRS, 5);
    batch_make(&b, PAIRS, 5);
    tu_expect_ok(tu_cpu, pv_stereo_sgm_batch(tu_cpu, a.left, a.right, PAIRS, &p, a.disp, a.conf),
                 "CPU batch");
    tu_expect_ok(cl, pv_stereo_sgm_batch(cl, b.left, b.right, PAIRS, &p, b.disp, b.conf),
                 "OpenCL batch");
    for (int i = 0; i < PAIRS; i++)
        for (int y = 0; y < HEIGHT; y++)
            for (int x = 0; x < WIDTH; x++) {
                const float da = *tu_fpixel(&a.disp[i], x, y), db = *tu_fpixel(&b.disp[i], x, y);
                const float ca = *tu_fpixel(&a.conf[i], x, y), cb = *tu_fpixel(&b.conf[i], x, y);
                if (da != db)
                    fail_msg("pair %d (%d, %d): CPU %g, OpenCL %g", i, x, y, (double)da,
                             (double)db);
                if (!(fabsf(ca - cb) <= PV_TOL_SGM_CONFIDENCE))
                    fail_msg("pair %d (%d, %d): confidence CPU %g, OpenCL %g", i, x, y,
                             (double)ca, (double)cb);
            }
    batch_free(&a);
    batch_free(&b);
}

/* Each refusal names the problem, returns PV_ERR_INVALID and writes
 * nothing. */
static void expect_refused(pv_context *ctx, batch *b, const pv_image *lefts, int count,
                           const pv_image *disps, const char *what)
{
    const pv_sgm_params p = params_of(0);
    pv_status status = pv_stereo_sgm_batch(ctx, lefts, b->right, count, &p,
                                           (pv_image *)disps, b->conf);
    if (status != PV_ERR_INVALID)
        fail_msg("%s: status %d, wanted PV_ERR_INVALID", what, (int)status);
    expect_untouched(b, what);
}

static void test_batch_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    batch b;
    batch_make(&b, PAIRS, 3);
    const pv_sgm_params p = params_of(0);
    expect_refused(ctx, &b, b.left, 0, b.disp, "count 0");
    expect_refused(ctx, &b, b.left, -2, b.disp, "count -2");
    expect_refused(ctx, &b, NULL, PAIRS, b.disp, "NULL lefts");
    expect_refused(ctx, &b, b.left, PAIRS, NULL, "NULL disparities");
    assert_int_equal(pv_stereo_sgm_batch(ctx, b.left, NULL, PAIRS, &p, b.disp, b.conf),
                     PV_ERR_INVALID);
    assert_int_equal(pv_stereo_sgm_batch(ctx, b.left, b.right, PAIRS, NULL, b.disp, b.conf),
                     PV_ERR_INVALID);
    assert_int_equal(pv_stereo_sgm_batch(NULL, b.left, b.right, PAIRS, &p, b.disp, b.conf),
                     PV_ERR_INVALID);
    expect_untouched(&b, "NULL rights, params or context");

    /* Pair 1 of another size (its own pair consistent), then of another
     * type: refused though pairs 0 and 2 are good. */
    pv_image lefts[PAIRS] = {b.left[0], b.left[1], b.left[2]};
    pv_image rights[PAIRS] = {b.right[0], b.right[1], b.right[2]};
    pv_image disps[PAIRS] = {b.disp[0], b.disp[1], b.disp[2]};
    pv_image small_l = new_image(WIDTH - 1, HEIGHT, PV_PIXEL_U8);
    pv_image small_r = new_image(WIDTH - 1, HEIGHT, PV_PIXEL_U8);
    pv_image small_d = new_image(WIDTH - 1, HEIGHT, PV_PIXEL_F32);
    tu_fill_image(&small_d, SENTINEL);
    lefts[1] = small_l, rights[1] = small_r, disps[1] = small_d;
    assert_int_equal(pv_stereo_sgm_batch(ctx, lefts, rights, PAIRS, &p, disps, NULL),
                     PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(ctx), "pair 1"));
    assert_true(all_equal(&small_d, SENTINEL));
    expect_untouched(&b, "a pair of another size");
    pv_image f_l = new_image(WIDTH, HEIGHT, PV_PIXEL_F32), f_r = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
    tu_fill_image(&f_l, 1.0f);
    tu_fill_image(&f_r, 1.0f);
    lefts[1] = f_l, rights[1] = f_r, disps[1] = b.disp[1];
    assert_int_equal(pv_stereo_sgm_batch(ctx, lefts, rights, PAIRS, &p, disps, b.conf),
                     PV_ERR_INVALID);
    expect_untouched(&b, "a pair of another type");

    /* A bad pair last (its right of another size), and two pairs writing
     * one disparity map, and an output over another pair's input. */
    rights[0] = b.right[0], lefts[1] = b.left[1], rights[1] = b.right[1];
    rights[2] = small_r;
    assert_int_equal(pv_stereo_sgm_batch(ctx, b.left, rights, PAIRS, &p, b.disp, b.conf),
                     PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(ctx), "pair 2"));
    expect_untouched(&b, "a bad last pair");
    disps[0] = b.disp[0], disps[1] = b.disp[0], disps[2] = b.disp[2];
    expect_refused(ctx, &b, b.left, PAIRS, disps, "one map for two pairs");
    pv_image conf_over_input[PAIRS] = {b.conf[0], b.conf[1], b.conf[2]};
    pv_image float_left = new_image(WIDTH, HEIGHT, PV_PIXEL_F32);
    tu_fill_image(&float_left, SENTINEL);
    conf_over_input[2] = float_left;
    pv_image f_lefts[PAIRS] = {float_left, f_l, f_l};
    pv_image f_rights[PAIRS] = {f_r, f_r, f_r};
    pv_image f_disps[PAIRS] = {b.disp[0], b.disp[1], b.disp[2]};
    assert_int_equal(pv_stereo_sgm_batch(ctx, f_lefts, f_rights, PAIRS, &p, f_disps,
                                         conf_over_input),
                     PV_ERR_INVALID);
    expect_untouched(&b, "a confidence over another pair's input");
    assert_true(all_equal(&float_left, SENTINEL));
    image_list_free(&small_l, &small_r, &small_d, &f_l, &f_r, &float_left, NULL);
    batch_free(&b);
}

/* A device failure in the middle of the stream: the error is returned and
 * every output reset (disparities INFINITY, confidences 0), the pairs
 * finished before it included. */
static void test_batch_fault_resets(void **state)
{
    (void)state;
    const pv_sgm_params p = params_of(0);
    int failed = 0;
    for (int n = 12; n <= 36; n += 12) {
        char spec[32];
        snprintf(spec, sizeof spec, "enqueue:%d", n);
        pv_context *ctx = tu_fault_context(spec);
        if (!ctx)
            skip();
        batch b;
        batch_make(&b, PAIRS, 9);
        pv_status status = pv_stereo_sgm_batch(ctx, b.left, b.right, PAIRS, &p, b.disp, b.conf);
        if (status != PV_OK) {
            failed++;
            for (int i = 0; i < PAIRS; i++)
                if (!all_equal(&b.disp[i], INFINITY) || !all_equal(&b.conf[i], 0.0f))
                    fail_msg("%s: pair %d's outputs were not reset", spec, i);
        }
        batch_free(&b);
        pv_context_destroy(ctx);
    }
    assert_true(failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_batch_equals_single),
        cmocka_unit_test(test_batch_backends_agree),
        TU_ON_BOTH(test_batch_bad_input),
        cmocka_unit_test(test_batch_fault_resets),
    };
    return cmocka_run_group_tests_name("stereo_sgm_batch", tests, tu_group_setup,
                                       tu_group_teardown);
}
