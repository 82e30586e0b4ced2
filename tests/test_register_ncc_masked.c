/* Tests of masked normxcorr2 (pv_normxcorr2_masked): a template found
 * through a masked-out distractor blob (the unmasked peak is the blob's,
 * the masked one the template's origin), through an occluder masked out
 * of the image, all-valid masks giving pv_normxcorr2's map bit for bit, a
 * brute-force double evaluation on small random inputs with random masks,
 * u8 inputs and a strided output, a template flat over its mask, OpenCL
 * against the CPU (and in cross-check mode), a device fault leaving the
 * outputs untouched, and bad input.
 *
 * Tolerances: against the double brute force 2e-5 (the direct float sums'
 * rounding over at most 42 pixels is about 1e-6); OpenCL against the CPU
 * 1e-5 (the same sums in the same order, FP_CONTRACT off: only the
 * division's and sqrt's last-bit differences remain). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IW 48
#define IH 40
#define TW 12
#define TH 10

/* A smooth random texture in [0, 1]: uniform noise box-blurred 3 wide. */
static pv_image texture(int w, int h, uint32_t seed)
{
    pv_image noise, out;
    assert_int_equal(pv_image_alloc(&noise, w, h, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&out, w, h, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&noise, seed);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
                    int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
                    s += *tu_fpixel(&noise, xx, yy);
                }
            tu_set_pixel(&out, x, y, s / 9.0f);
        }
    pv_image_free(&noise);
    return out;
}

static pv_image crop(const pv_image *src, int x0, int y0, int w, int h)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, w, h, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            tu_set_pixel(&out, x, y, *tu_fpixel(src, x0 + x, y0 + y));
    return out;
}

static pv_image u8_image(int w, int h, int value)
{
    pv_image im;
    assert_int_equal(pv_image_alloc(&im, w, h, PV_PIXEL_U8), PV_OK);
    tu_fill_image(&im, (float)value);
    return im;
}

/* A bright checkerboard over [x0, x0 + s) x [y0, y0 + s), its phase tied
 * to its corner, so that two blobs match wherever they are. */
static void add_blob(pv_image *im, int x0, int y0, int s)
{
    for (int y = y0; y < y0 + s; y++)
        for (int x = x0; x < x0 + s; x++)
            *tu_fpixel(im, x, y) += ((x - x0 + y - y0) & 1) ? 20.0f : -20.0f;
}

static void clear_square(pv_image *mask, int x0, int y0, int s)
{
    for (int y = y0; y < y0 + s; y++)
        for (int x = x0; x < x0 + s; x++)
            tu_set_pixel(mask, x, y, 0.0f);
}

static pv_image map_for(int tw, int th, int iw, int ih)
{
    pv_image map;
    assert_int_equal(pv_image_alloc(&map, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
    return map;
}

/* The template carries a blob the scene does not have at its origin; the
 * same blob sits in the scene elsewhere.  Unmasked, the blob wins; with
 * the blob masked out of the template, the origin wins with 1. */
static void test_masked_distractor(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int x0 = 30, y0 = 22, bx = 4, by = 3, bs = 5, x1 = 6, y1 = 5;
    pv_image image = texture(IW, IH, 11u);
    pv_image templ = crop(&image, x0, y0, TW, TH);
    add_blob(&templ, bx, by, bs);
    add_blob(&image, x1 + bx, y1 + by, bs);
    pv_image mask = u8_image(TW, TH, 1);
    clear_square(&mask, bx, by, bs);
    pv_ncc_result plain, masked;
    tu_expect_ok(ctx, pv_normxcorr2(ctx, &templ, &image, 40, NULL, &plain), "pv_normxcorr2");
    if (!(plain.x == x1 && plain.y == y1))
        fail_msg("unmasked peak (%d, %d) %g", plain.x, plain.y, plain.coefficient);
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &mask, NULL, 40, NULL, &masked),
                 "pv_normxcorr2_masked");
    assert_int_equal(masked.x, x0);
    assert_int_equal(masked.y, y0);
    assert_true(masked.coefficient > 0.9999f && masked.coefficient <= 1.0f);
    assert_int_equal(masked.flags, 0);
    assert_true(fabs(masked.sub_x - x0) < 0.1 && fabs(masked.sub_y - y0) < 0.1);
    pv_image_free(&image);
    pv_image_free(&templ);
    pv_image_free(&mask);
}

/* An occluder over the template's true place in the image, masked out of
 * the image: the template is found there with 1. */
static void test_masked_image_occluder(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int x0 = 17, y0 = 9;
    pv_image image = texture(IW, IH, 21u);
    pv_image templ = crop(&image, x0, y0, TW, TH);
    add_blob(&image, x0 + 3, y0 + 2, 6);
    pv_image tmask = u8_image(TW, TH, 255), imask = u8_image(IW, IH, 1);
    clear_square(&imask, x0 + 3, y0 + 2, 6);
    pv_ncc_result r;
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &imask, 40, NULL, &r),
                 "pv_normxcorr2_masked");
    assert_true(r.x == x0 && r.y == y0 && r.coefficient > 0.9999f);
    image_list_free(&image, &templ, &tmask, &imask, NULL);
}

/* Every pixel valid: pv_normxcorr2's map and result, bit for bit, with
 * and without the image's mask. */
static void test_masked_all_valid_is_normxcorr2(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image image = texture(IW, IH, 31u), templ = texture(TW, TH, 32u);
    pv_image tmask = u8_image(TW, TH, 1), imask = u8_image(IW, IH, 9);
    pv_image a = map_for(TW, TH, IW, IH), b = map_for(TW, TH, IW, IH);
    pv_ncc_result ra, rb;
    tu_expect_ok(ctx, pv_normxcorr2(ctx, &templ, &image, 5, &a, &ra), "pv_normxcorr2");
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 5, &b, &rb),
                 "pv_normxcorr2_masked");
    assert_memory_equal(a.data, b.data, (size_t)a.width * a.height * sizeof(float));
    assert_true(ra.x == rb.x && ra.y == rb.y && ra.coefficient == rb.coefficient &&
                ra.sub_x == rb.sub_x && ra.sub_y == rb.sub_y && ra.flags == rb.flags);
    tu_fill_image(&b, 7.0f);
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &imask, 5, &b, &rb),
                 "pv_normxcorr2_masked with an image mask");
    assert_memory_equal(a.data, b.data, (size_t)a.width * a.height * sizeof(float));
    image_list_free(&image, &templ, &tmask, &imask, &a, &b, NULL);
}

/* ------------------------------------------------------------ brute force */

/* Dense doubles of an image centred and scaled over its mask (as the
 * library does, so that the flatness floor applies to the same numbers),
 * 0 outside it. */
static double *normalised(const pv_image *im, const pv_image *mask)
{
    const int n = im->width * im->height;
    double *out = calloc((size_t)n, sizeof *out), sum = 0, squares = 0, count = 0;
    assert_non_null(out);
    for (int i = 0; i < n; i++)
        if (((const uint8_t *)mask->data)[i]) {
            sum += ((const float *)im->data)[i];
            count += 1;
        }
    const double mean = sum / count;
    for (int i = 0; i < n; i++)
        if (((const uint8_t *)mask->data)[i]) {
            double d = ((const float *)im->data)[i] - mean;
            squares += d * d;
        }
    const double scale = 1.0 / sqrt(squares / count);
    for (int i = 0; i < n; i++)
        if (((const uint8_t *)mask->data)[i])
            out[i] = (((const float *)im->data)[i] - mean) * scale;
    return out;
}

/* The masked NCC at map point (u, v), in double, by the documented rule. */
static double brute_masked(const double *t, const pv_image *tm, const double *im,
                           const pv_image *imk, int u, int v, int min_overlap)
{
    const int tw = tm->width, th = tm->height, iw = imk->width, ih = imk->height;
    const int ox = u - (tw - 1), oy = v - (th - 1);
    double n = 0, st = 0, si = 0, stt = 0, sii = 0, sti = 0;
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            int ix = x + ox, iy = y + oy;
            if (ix < 0 || iy < 0 || ix >= iw || iy >= ih ||
                !((const uint8_t *)tm->data)[y * tw + x] ||
                !((const uint8_t *)imk->data)[iy * iw + ix])
                continue;
            double a = t[y * tw + x], b = im[iy * iw + ix];
            n += 1;
            st += a;
            si += b;
            stt += a * a;
            sii += b * b;
            sti += a * b;
        }
    if (n < 1 || n < min_overlap)
        return 0.0;
    double vt = stt - st * st / n, vi = sii - si * si / n;
    if (!(vt > 1e-5 * stt) || !(vi > 1e-5 * sii))
        return 0.0;
    return fmax(-1.0, fmin(1.0, (sti - st * si / n) / sqrt(vt * vi)));
}

static pv_image random_mask(int w, int h, float valid, uint32_t seed)
{
    pv_image mask = u8_image(w, h, 0);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            tu_set_pixel(&mask, x, y, tu_rand01(&seed) < valid ? 1.0f : 0.0f);
    return mask;
}

static void test_masked_brute_force(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int tw = 7, th = 6, iw = 20, ih = 16;
    pv_image templ = texture(tw, th, 41u), image = texture(iw, ih, 42u);
    pv_image tmask = random_mask(tw, th, 0.7f, 43u), imask = random_mask(iw, ih, 0.8f, 44u);
    double *t = normalised(&templ, &tmask), *im = normalised(&image, &imask);
    pv_image map = map_for(tw, th, iw, ih);
    const int overlaps[2] = {0, 12};
    for (int k = 0; k < 2; k++) {
        tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &imask, overlaps[k],
                                               &map, NULL),
                     "pv_normxcorr2_masked");
        double worst = 0.0;
        for (int v = 0; v < map.height; v++)
            for (int u = 0; u < map.width; u++) {
                float got = *tu_fpixel(&map, u, v);
                assert_true(isfinite(got) && got >= -1.0f && got <= 1.0f);
                double want = brute_masked(t, &tmask, im, &imask, u, v, overlaps[k]);
                worst = fmax(worst, fabs(got - want));
            }
        if (!(worst <= 2e-5))
            fail_msg("%s, min_overlap %d: max |diff| %g", pv_context_device_name(ctx),
                     overlaps[k], worst);
    }
    free(t);
    free(im);
    image_list_free(&templ, &image, &tmask, &imask, &map, NULL);
}

/* u8 inputs and a strided output: the dense output's values. */
static void test_masked_u8_strided(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image templ = u8_image(TW, TH, 0), image = u8_image(IW, IH, 0);
    tu_fill_random(&templ, 51u);
    tu_fill_random(&image, 52u);
    pv_image tmask = random_mask(TW, TH, 0.6f, 53u), imask = random_mask(IW, IH, 0.9f, 54u);
    pv_image dense = map_for(TW, TH, IW, IH), strided;
    tu_guarded_alloc(&strided, dense.width, dense.height, PV_PIXEL_F32, 2);
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &imask, 8, &dense, NULL),
                 "pv_normxcorr2_masked (dense)");
    tu_expect_ok(ctx,
                 pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &imask, 8, &strided, NULL),
                 "pv_normxcorr2_masked (strided)");
    assert_true(tu_guard_intact(&strided, 2));
    for (int y = 0; y < dense.height; y++)
        for (int x = 0; x < dense.width; x++)
            assert_true(*tu_fpixel(&dense, x, y) == *tu_fpixel(&strided, x, y));
    tu_guarded_free(&strided, 2);
    image_list_free(&templ, &image, &tmask, &imask, &dense, NULL);
}

/* A template flat over its mask (texture only where masked out). */
static void test_masked_no_texture(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image image = texture(IW, IH, 61u), templ = texture(TW, TH, 62u);
    pv_image tmask = u8_image(TW, TH, 0);
    for (int x = 0; x < TW; x++) {
        tu_set_pixel(&tmask, x, 2, 1.0f);
        tu_set_pixel(&templ, x, 2, 0.25f);
    }
    pv_image map = map_for(TW, TH, IW, IH);
    tu_fill_image(&map, 7.0f);
    pv_ncc_result r;
    tu_expect_ok(ctx, pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 0, &map, &r),
                 "pv_normxcorr2_masked");
    assert_int_equal(r.flags, PV_REGISTER_NO_TEXTURE);
    assert_true(r.coefficient == 0.0f && tu_image_all_equal(&map, 0.0f));
    image_list_free(&image, &templ, &tmask, &map, NULL);
}

/* ---------------------------------------------------- backends agree */

static void test_masked_opencl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int tw = 16, th = 12, iw = 64, ih = 48;
    pv_image templ = texture(tw, th, 71u), image = texture(iw, ih, 72u);
    pv_image tmask = random_mask(tw, th, 0.7f, 73u), imask = random_mask(iw, ih, 0.85f, 74u);
    pv_image a = map_for(tw, th, iw, ih), b = map_for(tw, th, iw, ih);
    pv_ncc_result ra, rb;
    tu_expect_ok(tu_cpu, pv_normxcorr2_masked(tu_cpu, &templ, &image, &tmask, &imask, 20, &a, &ra),
                 "pv_normxcorr2_masked (CPU)");
    tu_expect_ok(cl, pv_normxcorr2_masked(cl, &templ, &image, &tmask, &imask, 20, &b, &rb),
                 "pv_normxcorr2_masked (OpenCL)");
    double worst = 0.0;
    for (int y = 0; y < a.height; y++)
        for (int x = 0; x < a.width; x++)
            worst = fmax(worst, fabs(*tu_fpixel(&a, x, y) - *tu_fpixel(&b, x, y)));
    if (!(worst <= 1e-5))
        fail_msg("OpenCL against CPU: max |diff| %g", worst);
    assert_true(ra.x == rb.x && ra.y == rb.y);
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    tu_expect_ok(cl, pv_normxcorr2_masked(cl, &templ, &image, &tmask, &imask, 20, &b, NULL),
                 "pv_normxcorr2_masked (cross-checked)");
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
    image_list_free(&templ, &image, &tmask, &imask, &a, &b, NULL);
}

/* A device failure leaves the map and the result untouched. */
static void test_masked_fault_leaves_outputs(void **state)
{
    (void)state;
    pv_image templ = texture(TW, TH, 81u), image = texture(IW, IH, 82u);
    pv_image tmask = random_mask(TW, TH, 0.7f, 83u), map = map_for(TW, TH, IW, IH);
    const char *specs[2] = {"enqueue:1", "alloc:1"};
    for (int k = 0; k < 2; k++) {
        pv_context *ctx = tu_fault_context(specs[k]);
        if (!ctx) {
            image_list_free(&templ, &image, &tmask, &map, NULL);
            skip();
        }
        tu_fill_image(&map, 7.0f);
        pv_ncc_result r = {7, 7, 7.0f, 7, 7, 7};
        if (pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 0, &map, &r) == PV_OK)
            fail_msg("%s: the call succeeded", specs[k]);
        assert_true(tu_image_all_equal(&map, 7.0f));
        assert_true(r.x == 7 && r.coefficient == 7.0f && r.flags == 7);
        pv_context_destroy(ctx);
    }
    image_list_free(&templ, &image, &tmask, &map, NULL);
}

/* ----------------------------------------------------------- bad input */

static void expect_refused(pv_status status, const pv_image *map, const pv_ncc_result *r,
                           const char *needle)
{
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(tu_image_all_equal(map, 7.0f));
    assert_true(r->x == 7 && r->y == 7 && r->coefficient == 7.0f && r->flags == 7);
    if (needle && !strstr(pv_last_error(), needle))
        fail_msg("message \"%s\" lacks \"%s\"", pv_last_error(), needle);
}

static void test_masked_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image templ = texture(TW, TH, 91u), image = texture(IW, IH, 92u);
    pv_image tmask = u8_image(TW, TH, 1), imask = u8_image(IW, IH, 1);
    pv_image small = u8_image(TW - 1, TH, 1), zero_t = u8_image(TW, TH, 0);
    pv_image zero_i = u8_image(IW, IH, 0), f32_mask;
    assert_int_equal(pv_image_alloc(&f32_mask, TW, TH, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&f32_mask, 1.0f);
    pv_image map = map_for(TW, TH, IW, IH), wrong = map_for(TW, TH, IW - 1, IH);
    tu_fill_image(&map, 7.0f);
    pv_ncc_result r = {7, 7, 7.0f, 7, 7, 7};
    expect_refused(pv_normxcorr2_masked(NULL, &templ, &image, &tmask, NULL, 0, &map, &r), &map,
                   &r, NULL);
    expect_refused(pv_normxcorr2_masked(ctx, NULL, &image, &tmask, NULL, 0, &map, &r), &map, &r,
                   "templ");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, NULL, &tmask, NULL, 0, &map, &r), &map, &r,
                   "image");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, NULL, NULL, 0, &map, &r), &map, &r,
                   "templ_mask");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &small, NULL, 0, &map, &r), &map,
                   &r, "templ_mask is 11x10 but templ is 12x10");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &tmask, 0, &map, &r), &map,
                   &r, "image_mask is 12x10 but image is 48x40");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &f32_mask, NULL, 0, &map, &r), &map,
                   &r, "templ_mask must be a u8 image");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &zero_t, NULL, 0, &map, &r), &map,
                   &r, "templ_mask has no valid (non-zero) pixel");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &zero_i, 0, &map, &r), &map,
                   &r, "image_mask has no valid (non-zero) pixel");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 0, NULL, NULL), &map,
                   &r, "both NULL");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, -1, &map, &r), &map,
                   &r, "min_overlap");
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 0, &wrong, &r), &map,
                   &r, "but the map is 59x49");
    /* An output whose block holds the image mask and nothing else of the
     * call (so the mask is the overlap found, whatever the heap's layout);
     * compared, never written. */
    pv_image alias;
    assert_int_equal(pv_image_alloc(&alias, 59, 49, PV_PIXEL_F32), PV_OK);
    pv_image inside = pv_image_wrap(alias.data, IW, IH, PV_PIXEL_U8);
    memset(inside.data, 1, (size_t)IW * IH);
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, &inside, 0, &alias, &r),
                   &map, &r, "shares memory with a mask");
    pv_image_free(&alias);
    *tu_fpixel(&templ, 3, 3) = NAN;
    expect_refused(pv_normxcorr2_masked(ctx, &templ, &image, &tmask, NULL, 0, &map, &r), &map,
                   &r, "NaN");
    image_list_free(&templ, &image, &tmask, &imask, &small, &zero_t, &zero_i, &f32_mask, &map,
                    &wrong, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_masked_distractor),
        TU_ON_BOTH(test_masked_image_occluder),
        TU_ON_BOTH(test_masked_all_valid_is_normxcorr2),
        TU_ON_BOTH(test_masked_brute_force),
        TU_ON_BOTH(test_masked_u8_strided),
        TU_ON_BOTH(test_masked_no_texture),
        TU_ON_BOTH(test_masked_bad_input),
        cmocka_unit_test(test_masked_opencl_matches_cpu),
        cmocka_unit_test(test_masked_fault_leaves_outputs),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
