/* Tests of the normxcorr2 batch (pv_normxcorr2_batch): maps and results
 * identical (bit for bit) to one single call per image, with u8 and f32
 * images, a textureless image, a strided output and no outputs at all;
 * OpenCL against the CPU (maps within 1e-4, the single call's
 * cross-check tolerance) and in cross-check mode; a device fault leaving
 * the results untouched and the maps 0; and bad input. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IW 40
#define IH 32
#define TW 9
#define TH 9
#define COUNT 5
#define MW (IW + TW - 1)
#define MH (IH + TH - 1)

typedef struct batch {
    pv_image templ;
    pv_image images[COUNT];
    pv_image maps[COUNT];
    pv_ncc_result results[COUNT];
} batch;

/* Five images: random f32, one of them the template's source, one u8,
 * one constant (textureless); maps: dense except map 3, strided. */
static void batch_make(batch *b)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < COUNT; i++) {
        pv_pixel_type type = i == 2 ? PV_PIXEL_U8 : PV_PIXEL_F32;
        assert_int_equal(pv_image_alloc(&b->images[i], IW, IH, type), PV_OK);
        tu_fill_random(&b->images[i], 300u + (uint32_t)i);
        if (i == 3)
            tu_guarded_alloc(&b->maps[i], MW, MH, PV_PIXEL_F32, 2);
        else
            assert_int_equal(pv_image_alloc(&b->maps[i], MW, MH, PV_PIXEL_F32), PV_OK);
        tu_fill_image(&b->maps[i], 7.0f);
    }
    tu_fill_image(&b->images[4], 0.5f);
    assert_int_equal(pv_image_alloc(&b->templ, TW, TH, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < TH; y++)
        for (int x = 0; x < TW; x++)
            tu_set_pixel(&b->templ, x, y, *tu_fpixel(&b->images[1], 11 + x, 6 + y));
    for (int i = 0; i < COUNT; i++)
        b->results[i] = (pv_ncc_result){7, 7, 7.0f, 7, 7, 7};
}

static void batch_free(batch *b)
{
    for (int i = 0; i < COUNT; i++) {
        pv_image_free(&b->images[i]);
        if (i == 3)
            tu_guarded_free(&b->maps[i], 2);
        else
            pv_image_free(&b->maps[i]);
    }
    pv_image_free(&b->templ);
}

/* Field by field: the struct has padding. */
static int same_result(const pv_ncc_result *a, const pv_ncc_result *b)
{
    return a->x == b->x && a->y == b->y && a->coefficient == b->coefficient &&
           a->sub_x == b->sub_x && a->sub_y == b->sub_y && a->flags == b->flags;
}

static int same_map(const pv_image *a, const pv_image *b)
{
    for (int y = 0; y < a->height; y++)
        if (memcmp((const float *)a->data + (ptrdiff_t)y * a->stride,
                   (const float *)b->data + (ptrdiff_t)y * b->stride,
                   (size_t)a->width * sizeof(float)) != 0)
            return 0;
    return 1;
}

static void test_batch_equals_single_calls(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    batch b;
    batch_make(&b);
    tu_expect_ok(ctx, pv_normxcorr2_batch(ctx, &b.templ, b.images, COUNT, 10, b.maps, b.results),
                 "pv_normxcorr2_batch");
    assert_true(tu_guard_intact(&b.maps[3], 2));
    pv_image single;
    assert_int_equal(pv_image_alloc(&single, MW, MH, PV_PIXEL_F32), PV_OK);
    for (int i = 0; i < COUNT; i++) {
        pv_ncc_result r;
        tu_expect_ok(ctx, pv_normxcorr2(ctx, &b.templ, &b.images[i], 10, &single, &r),
                     "pv_normxcorr2");
        if (!same_map(&single, &b.maps[i]))
            fail_msg("%s: image %d's map differs from the single call's",
                     pv_context_device_name(ctx), i);
        assert_true(same_result(&r, &b.results[i]));
    }
    assert_true(b.results[1].x == 11 && b.results[1].y == 6);
    assert_true(b.results[1].coefficient > 0.9999f);
    assert_int_equal(b.results[4].flags, PV_REGISTER_NO_TEXTURE);
    /* Results only. */
    pv_ncc_result only[COUNT];
    tu_expect_ok(ctx, pv_normxcorr2_batch(ctx, &b.templ, b.images, COUNT, 10, NULL, only),
                 "pv_normxcorr2_batch (results only)");
    for (int i = 0; i < COUNT; i++)
        assert_true(same_result(&only[i], &b.results[i]));
    pv_image_free(&single);
    batch_free(&b);
}

static void test_batch_opencl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    batch a, b;
    batch_make(&a);
    batch_make(&b);
    tu_expect_ok(tu_cpu, pv_normxcorr2_batch(tu_cpu, &a.templ, a.images, COUNT, 10, a.maps,
                                             a.results),
                 "pv_normxcorr2_batch (CPU)");
    tu_expect_ok(cl, pv_normxcorr2_batch(cl, &b.templ, b.images, COUNT, 10, b.maps, b.results),
                 "pv_normxcorr2_batch (OpenCL)");
    for (int i = 0; i < COUNT; i++) {
        assert_true(tu_rel_linf(&b.maps[i], &a.maps[i]) <= 1e-4);
        assert_true(a.results[i].x == b.results[i].x && a.results[i].y == b.results[i].y);
    }
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    tu_expect_ok(cl, pv_normxcorr2_batch(cl, &b.templ, b.images, COUNT, 10, b.maps, NULL),
                 "pv_normxcorr2_batch (cross-checked)");
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
    batch_free(&a);
    batch_free(&b);
}

/* A device failure during the work: no map may pass for a result (all
 * 0), the results are not written. */
static void test_batch_fault(void **state)
{
    (void)state;
    const char *specs[2] = {"enqueue:9", "alloc:1"};
    for (int k = 0; k < 2; k++) {
        pv_context *ctx = tu_fault_context(specs[k]);
        if (!ctx)
            skip();
        batch b;
        batch_make(&b);
        if (pv_normxcorr2_batch(ctx, &b.templ, b.images, COUNT, 10, b.maps, b.results) == PV_OK)
            fail_msg("%s: the call succeeded", specs[k]);
        for (int i = 0; i < COUNT; i++) {
            assert_true(tu_image_all_equal(&b.maps[i], 0.0f));
            assert_true(b.results[i].x == 7 && b.results[i].flags == 7);
        }
        batch_free(&b);
        pv_context_destroy(ctx);
    }
}

static void expect_refused(pv_status status, const batch *b, const char *needle)
{
    assert_int_equal(status, PV_ERR_INVALID);
    for (int i = 0; i < COUNT; i++) {
        assert_true(tu_image_all_equal(&b->maps[i], 7.0f));
        assert_true(b->results[i].x == 7 && b->results[i].coefficient == 7.0f);
    }
    if (needle && !strstr(pv_last_error(), needle))
        fail_msg("message \"%s\" lacks \"%s\"", pv_last_error(), needle);
}

static void test_batch_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    batch b;
    batch_make(&b);
    pv_image *t = &b.templ, *im = b.images, *m = b.maps;
    pv_ncc_result *r = b.results;
    expect_refused(pv_normxcorr2_batch(NULL, t, im, COUNT, 0, m, r), &b, NULL);
    expect_refused(pv_normxcorr2_batch(ctx, NULL, im, COUNT, 0, m, r), &b, "templ");
    expect_refused(pv_normxcorr2_batch(ctx, t, NULL, COUNT, 0, m, r), &b, "images is NULL");
    expect_refused(pv_normxcorr2_batch(ctx, t, im, 0, 0, m, r), &b, "count 0 is not positive");
    expect_refused(pv_normxcorr2_batch(ctx, t, im, -3, 0, m, r), &b, "count -3");
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, 0, NULL, NULL), &b, "both NULL");
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, -1, m, r), &b, "min_overlap");
    pv_image saved = im[2];
    assert_int_equal(pv_image_alloc(&im[2], IW - 1, IH, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&im[2], 9u);
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, 0, m, r), &b,
                   "images[2] is 39x32 but images[0] is 40x32");
    pv_image_free(&im[2]);
    im[2] = saved;
    pv_image map_saved = m[4];
    m[4] = m[1]; /* two outputs on one map */
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, 0, m, r), &b, "shares memory");
    m[4] = map_saved;
    m[0].width -= 1;
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, 0, m, r), &b, "outs[0]");
    m[0].width += 1;
    *tu_fpixel(&im[3], 2, 2) = NAN;
    expect_refused(pv_normxcorr2_batch(ctx, t, im, COUNT, 0, m, r), &b,
                   "images[3] contains NaN");
    batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_batch_equals_single_calls),
        TU_ON_BOTH(test_batch_bad_input),
        cmocka_unit_test(test_batch_opencl_matches_cpu),
        cmocka_unit_test(test_batch_fault),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
