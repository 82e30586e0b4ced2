/* Tests of the stereo module: SAD block matching and the disparity error.
 *
 *   - known answers on every backend: random texture shifted by a known
 *     piecewise-constant disparity gives that disparity exactly wherever the
 *     window sees one band only (u8 and f32, negative disparities too);
 *     Middlebury tsukuba and venus stay under the error rates that SAD 9x9
 *     reaches (tests/data/stereo/README.md's metric);
 *   - option semantics: the left-right check removes an occluded band, the
 *     sub-pixel parabola recovers a fractional shift, uniqueness rejects a
 *     periodic texture and keeps a random one;
 *   - OpenCL against the CPU oracle: identical disparities on >= 99.9% of
 *     the pixels (sub-pixel values within 1e-3), on random and Middlebury
 *     pairs, strided guarded buffers, every option, the tiled kernel with
 *     one and several disparity chunks and the one-pixel-per-item kernel;
 *     and the cross-check mode returns PV_OK;
 *   - bad input: every invalid argument gives PV_ERR_INVALID and leaves the
 *     output untouched.
 *
 * OpenCL parts are skipped when no OpenCL device can be had, when
 * PARVIS_BACKEND forces the CPU, or when PARVIS_TEST_SKIP_OPENCL=1.  For
 * valgrind, from the build directory:
 *   PARVIS_BACKEND=cpu PARVIS_TEST_SKIP_OPENCL=1 OMP_NUM_THREADS=1 \
 *     libtool --mode=execute valgrind --leak-check=full --error-exitcode=1 \
 *     tests/test_stereo */
#include "test_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7.0f     /* fill of outputs that must stay untouched */
#define GUARD 3           /* sentinel border of guarded images */
#define MAX_DIFFERING 0.001
#define SUBPIXEL_TOLERANCE 1e-3f



/* ------------------------------------------------------------------ setup */

/* ---------------------------------------------------------------- helpers */

static pv_image new_image(int width, int height, pv_pixel_type type)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, width, height, type), PV_OK);
    return image;
}

static pv_image new_guarded(int width, int height, pv_pixel_type type)
{
    pv_image image;
    tu_guarded_alloc(&image, width, height, type, GUARD);
    return image;
}

static pv_sad_params sad_params(int min_disp, int ndisp, int window)
{
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.min_disp = min_disp;
    params.ndisp = ndisp;
    params.window = window;
    return params;
}

static void run_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                    const pv_sad_params *params, pv_image *disparity)
{
    tu_expect_ok(ctx, pv_stereo_sad(ctx, left, right, params, disparity), "pv_stereo_sad");
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int same_disparity(float a, float b)
{
    if (a == b)
        return 1;
    return isfinite(a) && isfinite(b) && fabsf(a - b) <= SUBPIXEL_TOLERANCE;
}

/* ------------------------------------------------------ synthetic pairs */

/* Piecewise-constant disparity over the right image's columns: band b
 * covers right columns [b * width / bands, (b + 1) * width / bands). */
typedef struct bands {
    int count;
    int disp[4];
} bands;

static int band_of(int xr, int width, int count)
{
    return (int)((long long)xr * count / width);
}

/* Left: random texture.  Right: right(xr) = left(xr + d(xr)), so every
 * right pixel is seen in the left image and left pixels between bands of
 * different disparity are occluded. */
static void make_band_pair(pv_image *left, pv_image *right, const bands *b, uint32_t seed)
{
    tu_fill_random(left, seed);
    const int width = left->width;
    for (int y = 0; y < left->height; y++)
        for (int xr = 0; xr < width; xr++) {
            int xs = clamp_int(xr + b->disp[band_of(xr, width, b->count)], 0, width - 1);
            tu_set_pixel(right, xr, y, pv_image_get(left, xs, y));
        }
}

/* The disparity of left column x when its window and its match's window
 * lie inside the image and inside one band (no occlusion, no border):
 * there the true disparity costs 0 and every other candidate more. */
static int clean_disparity(int x, int width, int radius, const bands *b, int *d)
{
    int found = 0;
    for (int i = 0; i < b->count; i++) {
        int xr = x - b->disp[i];
        if (x - radius < 0 || x + radius >= width || xr - radius < 0 || xr + radius >= width)
            continue;
        if (band_of(xr - radius, width, b->count) == i &&
            band_of(xr + radius, width, b->count) == i) {
            *d = b->disp[i];
            found++;
        }
    }
    return found == 1;
}

/* Every clean pixel has its exact disparity; returns how many there were. */
static int check_clean_pixels(const pv_image *disparity, int radius, const bands *b)
{
    int clean = 0;
    for (int y = 0; y < disparity->height; y++)
        for (int x = 0; x < disparity->width; x++) {
            int d;
            if (!clean_disparity(x, disparity->width, radius, b, &d))
                continue;
            clean++;
            float got = *tu_fpixel(disparity, x, y);
            if (got != (float)d)
                fail_msg("pixel (%d, %d): disparity %g, expected %d", x, y, (double)got, d);
        }
    return clean;
}

static void check_bands(pv_context *ctx, pv_pixel_type type, int width, int height,
                        const bands *b, int min_disp, int ndisp, int window)
{
    pv_image left = new_image(width, height, type), right = new_image(width, height, type);
    pv_image disparity = new_image(width, height, PV_PIXEL_F32);
    make_band_pair(&left, &right, b, 1234u + (uint32_t)width);
    pv_sad_params params = sad_params(min_disp, ndisp, window);
    run_sad(ctx, &left, &right, &params, &disparity);
    int clean = check_clean_pixels(&disparity, window / 2, b);
    assert_true(clean >= width * height / 2);
    image_list_free(&left, &right, &disparity, NULL);
}

/* A smooth texture that can be sampled between pixels. */
static float smooth_texture(double x, double y)
{
    return (float)(0.5 + 0.2 * sin(0.61 * x + 0.37 * y) + 0.15 * sin(0.29 * x - 0.53 * y + 1.3) +
                   0.1 * sin(1.13 * x + 0.17 * y + 0.4));
}

/* ------------------------------------------------- the definition, directly */

/* stereo.h's matching cost, summed window by window (exact for u8 and for
 * integer-valued f32).  right_ref: the right-reference cost of right pixel
 * x, whose match is left pixel x + d. */
static double direct_cost(const pv_image *left, const pv_image *right, int x, int y, int d,
                          int radius, int right_ref)
{
    const int w = left->width, h = left->height;
    double sum = 0.0;
    for (int j = -radius; j <= radius; j++)
        for (int i = -radius; i <= radius; i++) {
            int row = clamp_int(y + j, 0, h - 1);
            int xl = right_ref ? x + d + i : x + i, xr = right_ref ? x + i : x + i - d;
            sum += fabs((double)pv_image_get(left, clamp_int(xl, 0, w - 1), row) -
                        (double)pv_image_get(right, clamp_int(xr, 0, w - 1), row));
        }
    return sum;
}

static float direct_disparity(const pv_image *left, const pv_image *right,
                              const pv_sad_params *p, int x, int y, int right_ref)
{
    const int w = left->width, radius = p->window / 2;
    double costs[64];
    int best = -1;
    assert_true(p->ndisp <= 64);
    for (int k = 0; k < p->ndisp; k++) {
        int d = p->min_disp + k, match = right_ref ? x + d : x - d;
        costs[k] = match >= 0 && match < w ? direct_cost(left, right, x, y, d, radius, right_ref)
                                           : INFINITY;
        if (costs[k] < INFINITY && (best < 0 || costs[k] < costs[best]))
            best = k;
    }
    if (best < 0)
        return INFINITY;
    if (!right_ref && p->uniqueness > 0.0f) {
        double second = INFINITY;
        for (int k = 0; k < p->ndisp; k++)
            if (abs(k - best) > 1 && costs[k] < second)
                second = costs[k];
        if ((float)second < (float)costs[best] * (1.0f + p->uniqueness))
            return INFINITY;
    }
    float d = (float)(p->min_disp + best);
    if (p->subpixel && best > 0 && best + 1 < p->ndisp && costs[best - 1] < INFINITY &&
        costs[best + 1] < INFINITY) {
        float a = (float)(costs[best - 1] - costs[best]);
        float b = (float)(costs[best + 1] - costs[best]);
        d += (a - b) / (2.0f * (a + b));
    }
    return d;
}

static float direct_result(const pv_image *left, const pv_image *right, const pv_sad_params *p,
                           int x, int y)
{
    float d = direct_disparity(left, right, p, x, y, 0);
    if (!p->lr_check || isinf(d))
        return d;
    int xr = x - (int)roundf(d);
    if (xr < 0 || xr >= left->width)
        return INFINITY;
    float back = direct_disparity(left, right, p, xr, y, 1);
    return fabsf(d - back) <= p->lr_max_diff ? d : INFINITY;
}

/* The backend against the definition on a pair with many exact cost ties
 * (pixels 0..3), every option: all pixels on the CPU (same arithmetic), the
 * cross-check tolerance on OpenCL. */
static void check_definition(pv_context *ctx, pv_pixel_type type, const pv_sad_params *params)
{
    const int width = 37, height = 23;
    pv_image left = new_image(width, height, type), right = new_image(width, height, type);
    pv_image disparity = new_image(width, height, PV_PIXEL_F32);
    uint32_t seed = 4242u;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            tu_set_pixel(&left, x, y, (float)(tu_rand(&seed) >> 30));
            tu_set_pixel(&right, x, y, (float)(tu_rand(&seed) >> 30));
        }
    run_sad(ctx, &left, &right, params, &disparity);
    int differing = 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            differing += !same_disparity(*tu_fpixel(&disparity, x, y),
                                         direct_result(&left, &right, params, x, y));
    const int on_cpu = pv_context_backend(ctx) == PV_BACKEND_CPU;
    const int allowed = on_cpu ? 0 : (int)(MAX_DIFFERING * width * height);
    if (differing > allowed)
        fail_msg("%d pixels differ from the definition (window %d, min %d, ndisp %d, sub %d, "
                 "lr %d, uniq %g)", differing, params->window, params->min_disp, params->ndisp,
                 params->subpixel, params->lr_check, (double)params->uniqueness);
    image_list_free(&left, &right, &disparity, NULL);
}

static void test_definition(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_pixel_type types[2] = {PV_PIXEL_U8, PV_PIXEL_F32};
    for (int t = 0; t < 2; t++) {
        pv_sad_params params = sad_params(-3, 12, 5);
        check_definition(ctx, types[t], &params);
        params.subpixel = 1;
        params.uniqueness = 0.2f;
        check_definition(ctx, types[t], &params);
        params.lr_check = 1;
        params.lr_max_diff = 0.5f;
        check_definition(ctx, types[t], &params);
        params = sad_params(2, 30, 9);
        params.lr_check = 1;
        check_definition(ctx, types[t], &params);
        params.subpixel = 1;
        params.lr_max_diff = 0.0f;
        check_definition(ctx, types[t], &params);
    }
}

/* --------------------------------------------------- known answers: bands */

static void test_bands_u8(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const bands b = {3, {4, 9, 15}};
    check_bands(ctx, PV_PIXEL_U8, 97, 41, &b, 0, 20, 5);
    check_bands(ctx, PV_PIXEL_U8, 203, 37, &b, 0, 24, 9);
    check_bands(ctx, PV_PIXEL_U8, 300, 130, &b, 0, 18, 5);
}

static void test_bands_f32(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const bands b = {3, {4, 9, 15}};
    check_bands(ctx, PV_PIXEL_F32, 97, 41, &b, 0, 20, 5);
    check_bands(ctx, PV_PIXEL_F32, 151, 29, &b, 2, 16, 9);
}

static void test_negative_disparities(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const bands b = {3, {-6, 1, 5}};
    check_bands(ctx, PV_PIXEL_U8, 120, 33, &b, -8, 16, 5);
    check_bands(ctx, PV_PIXEL_F32, 120, 33, &b, -8, 16, 5);
    const bands all_negative = {1, {-3}};
    check_bands(ctx, PV_PIXEL_U8, 64, 20, &all_negative, -10, 8, 5);
}

/* ------------------------------------------------------------ Middlebury */

typedef struct stereo_set {
    const char *name;
    int ndisp;
    float gt_scale;
    int border;
    double max_bad; /* SAD 9x9 share of known pixels off by more than 1 px */
} stereo_set;

static const stereo_set tsukuba = {"tsukuba", 16, 16.0f, 18, 0.115};
static const stereo_set venus = {"venus", 21, 8.0f, 10, 0.13};

static void read_image(const char *set, const char *file, pv_image *image)
{
    char relative[256];
    snprintf(relative, sizeof relative, "stereo/%s/%s", set, file);
    pv_status status = pv_image_read(tu_data_path(relative), PV_PIXEL_U8, image);
    if (status != PV_OK)
        fail_msg("pv_image_read(%s): %s", relative, pv_last_error());
}

static void read_pair(const char *set, pv_image *left, pv_image *right)
{
    read_image(set, "left.pgm", left);
    read_image(set, "right.pgm", right);
}

static double middlebury_error(pv_context *ctx, const stereo_set *set)
{
    pv_image left, right, gt;
    read_pair(set->name, &left, &right);
    read_image(set->name, "gt.pgm", &gt);
    pv_image disparity = new_image(left.width, left.height, PV_PIXEL_F32);
    pv_sad_params params = sad_params(0, set->ndisp, 9);
    run_sad(ctx, &left, &right, &params, &disparity);
    double bad = 1.0;
    assert_int_equal(pv_disparity_error(&disparity, &gt, set->gt_scale, 1.0f, set->border, &bad),
                     PV_OK);
    image_list_free(&left, &right, &gt, &disparity, NULL);
    return bad;
}

static void test_middlebury(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const stereo_set *sets[] = {&tsukuba, &venus};
    for (int i = 0; i < 2; i++) {
        double bad = middlebury_error(ctx, sets[i]);
        if (!(bad <= sets[i]->max_bad))
            fail_msg("%s: %.2f%% bad pixels > %.2f%%", sets[i]->name, 100.0 * bad,
                     100.0 * sets[i]->max_bad);
    }
}

/* ------------------------------------------------------ option semantics */

/* Bands 2 and 12 meet in the middle of the right image: left columns
 * a + 2 .. a + 11 are seen by no right pixel. */
static void test_lr_check_occlusion(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int width = 120, height = 40, window = 5, radius = window / 2;
    const bands b = {2, {2, 12}};
    const int a = width / 2;
    pv_image left = new_image(width, height, PV_PIXEL_U8);
    pv_image right = new_image(width, height, PV_PIXEL_U8);
    pv_image plain = new_image(width, height, PV_PIXEL_F32);
    pv_image checked = new_image(width, height, PV_PIXEL_F32);
    make_band_pair(&left, &right, &b, 77u);
    pv_sad_params params = sad_params(0, 16, window);
    run_sad(ctx, &left, &right, &params, &plain);
    params.lr_check = 1;
    run_sad(ctx, &left, &right, &params, &checked);

    int occluded = 0, removed = 0, removed_before = 0, clean = 0, kept = 0;
    for (int y = 0; y < height; y++) {
        for (int x = a + 2 + radius; x < a + 12 - radius; x++) {
            occluded++;
            removed += isinf(*tu_fpixel(&checked, x, y));
            removed_before += isinf(*tu_fpixel(&plain, x, y));
        }
        for (int x = 0; x < width; x++) {
            int d;
            if (!clean_disparity(x, width, radius, &b, &d))
                continue;
            clean++;
            kept += *tu_fpixel(&checked, x, y) == (float)d;
        }
    }
    assert_int_equal(removed_before, 0);
    assert_true(removed >= occluded * 9 / 10);
    assert_true(kept >= clean * 99 / 100);
    image_list_free(&left, &right, &plain, &checked, NULL);
}

static void make_fractional_pair(pv_image *left, pv_image *right, double shift)
{
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < left->width; x++) {
            *tu_fpixel(left, x, y) = smooth_texture(x, y);
            *tu_fpixel(right, x, y) = smooth_texture(x + shift, y);
        }
}

/* A shift of 5.3 px: the integer winner is 5, the parabola lands near 5.3. */
static void test_subpixel(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int width = 90, height = 30, window = 9, radius = window / 2;
    const double shift = 5.3;
    pv_image left = new_image(width, height, PV_PIXEL_F32);
    pv_image right = new_image(width, height, PV_PIXEL_F32);
    pv_image integer = new_image(width, height, PV_PIXEL_F32);
    pv_image refined = new_image(width, height, PV_PIXEL_F32);
    make_fractional_pair(&left, &right, shift);
    pv_sad_params params = sad_params(0, 12, window);
    run_sad(ctx, &left, &right, &params, &integer);
    params.subpixel = 1;
    run_sad(ctx, &left, &right, &params, &refined);

    int pixels = 0, close = 0, integral = 0;
    double total_error = 0.0;
    for (int y = 0; y < height; y++)
        for (int x = radius + 6; x < width - radius; x++) {
            float d = *tu_fpixel(&refined, x, y);
            pixels++;
            integral += *tu_fpixel(&integer, x, y) == 5.0f;
            total_error += fabs(d - shift);
            close += fabs(d - shift) <= 0.25;
        }
    assert_int_equal(integral, pixels);
    assert_true(close >= pixels * 95 / 100);
    assert_true(total_error / pixels <= 0.15);
    image_list_free(&left, &right, &integer, &refined, NULL);
}

/* Period 6 along x: every candidate 6 px from the true one costs as
 * little (and more than 0: a winner of cost 0 is never rejected, as no cost
 * is below 0), so uniqueness leaves no pixel; on random texture it keeps
 * the exact matches. */
static void test_uniqueness(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int width = 80, height = 24, window = 5, radius = window / 2, shift = 3;
    pv_image left = new_image(width, height, PV_PIXEL_U8);
    pv_image right = new_image(width, height, PV_PIXEL_U8);
    pv_image disparity = new_image(width, height, PV_PIXEL_F32);
    pv_image tile = new_image(6, height, PV_PIXEL_U8);
    tu_fill_random(&tile, 99u);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            /* right one grey level brighter: the best cost is window^2, not 0 */
            float v = fminf(pv_image_get(&tile, x % 6, y), 254.0f);
            float w = fminf(pv_image_get(&tile, (x + shift) % 6, y), 254.0f);
            tu_set_pixel(&left, x, y, v);
            tu_set_pixel(&right, x, y, w + 1.0f);
        }
    pv_sad_params params = sad_params(0, 16, window);
    params.uniqueness = 0.05f;
    run_sad(ctx, &left, &right, &params, &disparity);
    for (int y = 0; y < height; y++)
        for (int x = 16 + radius; x < width - radius; x++)
            if (!isinf(*tu_fpixel(&disparity, x, y)))
                fail_msg("periodic pixel (%d, %d) kept disparity %g", x, y,
                         (double)*tu_fpixel(&disparity, x, y));

    const bands b = {3, {4, 9, 15}};
    make_band_pair(&left, &right, &b, 5u);
    params.ndisp = 20;
    run_sad(ctx, &left, &right, &params, &disparity);
    assert_true(check_clean_pixels(&disparity, radius, &b) > 0);
    image_list_free(&left, &right, &disparity, &tile, NULL);
}

/* ------------------------------------------------------- OpenCL vs CPU */

/* Both backends on strided, guarded buffers: identical disparities on
 * >= 99.9% of the pixels, nothing written outside the images. */
static void compare_backends(const pv_image *left, const pv_image *right,
                             const pv_sad_params *params)
{
    pv_context *cl = tu_opencl_or_skip();
    const int width = left->width, height = left->height;
    pv_image expected = new_guarded(width, height, PV_PIXEL_F32);
    pv_image got = new_guarded(width, height, PV_PIXEL_F32);
    run_sad(tu_cpu, left, right, params, &expected);
    run_sad(cl, left, right, params, &got);
    assert_true(tu_guard_intact(&expected, GUARD));
    assert_true(tu_guard_intact(&got, GUARD));
    int differing = 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            differing += !same_disparity(*tu_fpixel(&got, x, y), *tu_fpixel(&expected, x, y));
    if (differing > MAX_DIFFERING * width * height)
        fail_msg("%d of %d pixels differ (window %d, ndisp %d, subpixel %d, lr %d, uniq %g)",
                 differing, width * height, params->window, params->ndisp, params->subpixel,
                 params->lr_check, (double)params->uniqueness);
    tu_guarded_free(&expected, GUARD);
    tu_guarded_free(&got, GUARD);
}

static void random_pair(pv_image *left, pv_image *right, int width, int height,
                        pv_pixel_type type, uint32_t seed)
{
    *left = new_guarded(width, height, type);
    *right = new_guarded(width, height, type);
    tu_fill_random(left, seed);
    tu_fill_random(right, seed * 7u + 1u);
}

static void free_pair(pv_image *left, pv_image *right)
{
    tu_guarded_free(left, GUARD);
    tu_guarded_free(right, GUARD);
}

static void test_cross_random_u8(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    pv_image left, right;
    random_pair(&left, &right, 131, 57, PV_PIXEL_U8, 11u);
    pv_sad_params params = sad_params(0, 24, 5);
    compare_backends(&left, &right, &params);
    params.subpixel = 1;
    compare_backends(&left, &right, &params);
    params = sad_params(-10, 30, 5);
    params.lr_check = 1;
    params.uniqueness = 0.02f;
    compare_backends(&left, &right, &params);
    params = sad_params(0, 12, 1);
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
}

static void test_cross_random_f32(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    pv_image left, right;
    random_pair(&left, &right, 113, 45, PV_PIXEL_F32, 21u);
    pv_sad_params params = sad_params(0, 20, 9);
    compare_backends(&left, &right, &params);
    params.subpixel = 1;
    params.lr_check = 1;
    params.uniqueness = 0.01f;
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
}

/* Shifted texture with options: real matches, so the sub-pixel values and
 * the left-right test are exercised, not only the winners. */
static void test_cross_bands(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    const bands b = {3, {4, 9, 15}};
    pv_pixel_type types[2] = {PV_PIXEL_U8, PV_PIXEL_F32};
    for (int t = 0; t < 2; t++) {
        pv_image left = new_guarded(140, 50, types[t]), right = new_guarded(140, 50, types[t]);
        make_band_pair(&left, &right, &b, 3u);
        pv_sad_params params = sad_params(0, 20, 5);
        params.subpixel = 1;
        params.lr_check = 1;
        compare_backends(&left, &right, &params);
        params.uniqueness = 0.1f;
        params.lr_max_diff = 0.5f;
        compare_backends(&left, &right, &params);
        free_pair(&left, &right);
    }
}

/* Disparity ranges wider than one staged chunk of the tiled kernel. */
static void test_cross_wide_range(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    pv_image left, right;
    random_pair(&left, &right, 640, 20, PV_PIXEL_U8, 31u);
    pv_sad_params params = sad_params(-20, 600, 5);
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
    random_pair(&left, &right, 220, 24, PV_PIXEL_F32, 41u);
    params = sad_params(0, 200, 5);
    params.subpixel = 1;
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
}

/* Windows whose tiles do not fit local memory: the per-pixel kernel. */
static void test_cross_large_window(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    pv_image left, right;
    random_pair(&left, &right, 90, 70, PV_PIXEL_U8, 51u);
    pv_sad_params params = sad_params(0, 8, 67);
    params.subpixel = 1;
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
    random_pair(&left, &right, 70, 40, PV_PIXEL_F32, 61u);
    params = sad_params(-2, 6, 31);
    params.lr_check = 1;
    compare_backends(&left, &right, &params);
    free_pair(&left, &right);
}

static void test_cross_middlebury(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    pv_image left, right;
    read_pair("tsukuba", &left, &right);
    pv_sad_params params = sad_params(0, 16, 9);
    compare_backends(&left, &right, &params);
    params.subpixel = 1;
    params.lr_check = 1;
    params.uniqueness = 0.05f;
    compare_backends(&left, &right, &params);
    image_list_free(&left, &right, NULL);
    read_pair("cones-quarter", &left, &right);
    params = sad_params(0, 64, 9);
    params.lr_check = 1;
    compare_backends(&left, &right, &params);
    image_list_free(&left, &right, NULL);
}

/* The context flag runs the CPU oracle too and compares. */
static void test_crosscheck_mode(void **state)
{
    pv_context *cl = tu_backend_ctx(state);
    pv_image left, right;
    read_pair("venus", &left, &right);
    pv_image disparity = new_image(left.width, left.height, PV_PIXEL_F32);
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    pv_sad_params params = sad_params(0, 21, 9);
    pv_status plain = pv_stereo_sad(cl, &left, &right, &params, &disparity);
    params.subpixel = 1;
    params.lr_check = 1;
    params.uniqueness = 0.05f;
    pv_status options = pv_stereo_sad(cl, &left, &right, &params, &disparity);
    const char *message = pv_context_last_error(cl);
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
    if (plain != PV_OK || options != PV_OK)
        fail_msg("cross-check mode: %s / %s: %s", pv_status_string(plain),
                 pv_status_string(options), message);
    image_list_free(&left, &right, &disparity, NULL);
}

/* --------------------------------------------------------------- bad input */

typedef struct bad_case {
    pv_image left, right, disparity; /* disparity is guarded, filled with SENTINEL */
    pv_sad_params params;
} bad_case;

static void bad_case_init(bad_case *c)
{
    c->left = new_image(40, 30, PV_PIXEL_U8);
    c->right = new_image(40, 30, PV_PIXEL_U8);
    tu_fill_random(&c->left, 1u);
    tu_fill_random(&c->right, 2u);
    c->disparity = new_guarded(40, 30, PV_PIXEL_F32);
    tu_fill_image(&c->disparity, SENTINEL);
    c->params = sad_params(0, 16, 5);
}

static void bad_case_free(bad_case *c)
{
    image_list_free(&c->left, &c->right, NULL);
    tu_guarded_free(&c->disparity, GUARD);
}

static void expect_invalid_with(pv_context *ctx, const pv_image *left, const pv_image *right,
                                const pv_sad_params *params, pv_image *disparity,
                                const bad_case *c, const char *what)
{
    pv_status status = pv_stereo_sad(ctx, left, right, params, disparity);
    if (status != PV_ERR_INVALID)
        fail_msg("%s: %s instead of PV_ERR_INVALID", what, pv_status_string(status));
    if (!tu_image_all_equal(&c->disparity, SENTINEL) || !tu_guard_intact(&c->disparity, GUARD))
        fail_msg("%s: the output was written", what);
    assert_true(strlen(pv_last_error()) > 0);
}

static void expect_invalid_params(pv_context *ctx, const pv_sad_params *params, const char *what)
{
    bad_case c;
    bad_case_init(&c);
    expect_invalid_with(ctx, &c.left, &c.right, params, &c.disparity, &c, what);
    bad_case_free(&c);
}

static void check_bad_pointers(pv_context *ctx)
{
    bad_case c;
    bad_case_init(&c);
    expect_invalid_with(NULL, &c.left, &c.right, &c.params, &c.disparity, &c, "NULL ctx");
    expect_invalid_with(ctx, NULL, &c.right, &c.params, &c.disparity, &c, "NULL left");
    expect_invalid_with(ctx, &c.left, NULL, &c.params, &c.disparity, &c, "NULL right");
    expect_invalid_with(ctx, &c.left, &c.right, NULL, &c.disparity, &c, "NULL params");
    expect_invalid_with(ctx, &c.left, &c.right, &c.params, NULL, &c, "NULL disparity");
    bad_case_free(&c);
}

static void check_bad_images(pv_context *ctx)
{
    bad_case c;
    bad_case_init(&c);
    pv_image broken = c.left;
    broken.data = NULL;
    expect_invalid_with(ctx, &broken, &c.right, &c.params, &c.disparity, &c, "left data NULL");
    broken = c.right;
    broken.stride = broken.width - 1;
    expect_invalid_with(ctx, &c.left, &broken, &c.params, &c.disparity, &c, "right stride < width");
    broken = c.left;
    broken.width = 0;
    expect_invalid_with(ctx, &broken, &c.right, &c.params, &c.disparity, &c, "left width 0");
    broken = c.right;
    broken.height = 29;
    expect_invalid_with(ctx, &c.left, &broken, &c.params, &c.disparity, &c, "right size differs");
    pv_image small = c.disparity;
    small.width = 39;
    expect_invalid_with(ctx, &c.left, &c.right, &c.params, &small, &c, "disparity size differs");
    pv_image as_u8 = c.disparity;
    as_u8.type = PV_PIXEL_U8;
    expect_invalid_with(ctx, &c.left, &c.right, &c.params, &as_u8, &c, "disparity u8");
    pv_image right_f32 = new_image(40, 30, PV_PIXEL_F32);
    expect_invalid_with(ctx, &c.left, &right_f32, &c.params, &c.disparity, &c, "types differ");
    /* disparity written over an f32 input */
    pv_image alias = c.disparity;
    expect_invalid_with(ctx, &alias, &right_f32, &c.params, &c.disparity, &c,
                        "disparity aliases left");
    pv_image_free(&right_f32);
    bad_case_free(&c);
}

static void check_bad_params(pv_context *ctx)
{
    const int cases[][3] = {
        /* min_disp, ndisp, window on a 40x30 image */
        {0, 16, 4},  {0, 16, 0},  {0, 16, -3}, {0, 16, 41},      {0, 16, 31},
        {0, 0, 5},   {0, -1, 5},  {0, 41, 5},  {40, 1, 5},       {-55, 16, 5},
        {-40, 1, 5}, {INT_MAX, 1, 5},          {INT_MIN, 40, 5}, {INT_MAX - 3, 30, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pv_sad_params params = sad_params(cases[i][0], cases[i][1], cases[i][2]);
        char what[96];
        snprintf(what, sizeof what, "min_disp %d ndisp %d window %d", cases[i][0], cases[i][1],
                 cases[i][2]);
        expect_invalid_params(ctx, &params, what);
    }
    const float floats[] = {NAN, INFINITY, -INFINITY, -0.5f};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        pv_sad_params params = sad_params(0, 16, 5);
        params.uniqueness = floats[i];
        expect_invalid_params(ctx, &params, "bad uniqueness");
        params = sad_params(0, 16, 5);
        params.lr_max_diff = floats[i];
        expect_invalid_params(ctx, &params, "bad lr_max_diff");
    }
}

/* The extremes that still leave a candidate are accepted (the widest
 * windows on the CPU only: each window size is one more OpenCL program). */
static void check_edge_params(pv_context *ctx)
{
    const int cases[][3] = {{39, 1, 5}, {-39, 1, 5}, {-39, 40, 5}, {0, 16, 29}, {-39, 40, 1}};
    const size_t count = pv_context_backend(ctx) == PV_BACKEND_CPU ? 5 : 3;
    for (size_t i = 0; i < count; i++) {
        bad_case c;
        bad_case_init(&c);
        pv_sad_params params = sad_params(cases[i][0], cases[i][1], cases[i][2]);
        assert_int_equal(pv_stereo_sad(ctx, &c.left, &c.right, &params, &c.disparity), PV_OK);
        assert_true(tu_guard_intact(&c.disparity, GUARD));
        bad_case_free(&c);
    }
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    check_bad_pointers(ctx);
    check_bad_images(ctx);
    check_bad_params(ctx);
    check_edge_params(ctx);
}

/* The finite-input policy: NaN or an infinity in an f32 left or right is
 * refused on either backend, naming the argument; disparity untouched. */
static void test_non_finite_refused(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int width = 32, height = 12;
    pv_image left = new_image(width, height, PV_PIXEL_F32);
    pv_image right = new_image(width, height, PV_PIXEL_F32);
    pv_image disparity = new_image(width, height, PV_PIXEL_F32);
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 8;
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++)
        for (int side = 0; side < 2; side++) {
            tu_fill_random(&left, 3u);
            tu_fill_random(&right, 4u);
            tu_set_pixel(side ? &right : &left, width - 1, height - 1, bad_values[i]);
            tu_fill_image(&disparity, -7.0f);
            assert_int_equal(pv_stereo_sad(ctx, &left, &right, &params, &disparity), PV_ERR_INVALID);
            assert_non_null(strstr(pv_context_last_error(ctx), side ? "right pixel" : "left pixel"));
            assert_true(tu_image_all_equal(&disparity, -7.0f));
        }
    tu_fill_random(&left, 3u);
    tu_fill_random(&right, 4u);
    assert_int_equal(pv_stereo_sad(ctx, &left, &right, &params, &disparity), PV_OK);
    image_list_free(&left, &right, &disparity, NULL);
}

/* ------------------------------------------------ defaults and error rate */

static void test_params_default(void **state)
{
    (void)state;
    pv_sad_params params;
    memset(&params, 0x5a, sizeof params);
    pv_sad_params_default(&params);
    assert_int_equal(params.min_disp, 0);
    assert_int_equal(params.ndisp, 64);
    assert_int_equal(params.window, 5);
    assert_int_equal(params.subpixel, 0);
    assert_int_equal(params.lr_check, 0);
    assert_true(params.lr_max_diff == 1.0f);
    assert_true(params.uniqueness == 0.0f);
    pv_sad_params_default(NULL); /* harmless */
}

static void test_disparity_error(void **state)
{
    (void)state;
    pv_image disparity = new_image(5, 4, PV_PIXEL_F32);
    pv_image gt = new_image(5, 4, PV_PIXEL_U8);
    tu_fill_image(&disparity, 3.0f);
    tu_fill_image(&gt, 12.0f);               /* 3 px at scale 4 */
    tu_set_pixel(&gt, 0, 0, 0.0f);           /* unknown: ignored */
    tu_set_pixel(&disparity, 1, 0, 4.5f);    /* off by 1.5: bad */
    tu_set_pixel(&disparity, 2, 0, 4.0f);    /* off by exactly 1: good */
    tu_set_pixel(&disparity, 3, 0, INFINITY); /* invalid: bad */
    tu_set_pixel(&disparity, 4, 3, 1.0f);    /* bad, but on the border */
    double bad = -1.0;
    assert_int_equal(pv_disparity_error(&disparity, &gt, 4.0f, 1.0f, 0, &bad), PV_OK);
    assert_true(fabs(bad - 3.0 / 19.0) < 1e-12);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 4.0f, 1.0f, 1, &bad), PV_OK);
    assert_true(bad == 0.0); /* inner 3x2: all good */
    assert_int_equal(pv_disparity_error(&disparity, &gt, 4.0f, 0.4f, 0, &bad), PV_OK);
    assert_true(fabs(bad - 4.0 / 19.0) < 1e-12);

    pv_image gt_f32 = new_image(5, 4, PV_PIXEL_F32);
    tu_fill_image(&gt_f32, 3.0f);
    assert_int_equal(pv_disparity_error(&disparity, &gt_f32, 1.0f, 1.0f, 0, &bad), PV_OK);
    assert_true(fabs(bad - 3.0 / 20.0) < 1e-12);

    pv_image other = new_image(4, 4, PV_PIXEL_F32);
    assert_int_equal(pv_disparity_error(&disparity, &other, 1.0f, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&gt, &gt, 1.0f, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(NULL, &gt, 1.0f, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, NULL, 1.0f, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 0.0f, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, NAN, 1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 1.0f, -1.0f, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 1.0f, INFINITY, 0, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 1.0f, 1.0f, -1, &bad), PV_ERR_INVALID);
    assert_int_equal(pv_disparity_error(&disparity, &gt, 1.0f, 1.0f, 0, NULL), PV_ERR_INVALID);
    image_list_free(&disparity, &gt, &gt_f32, &other, NULL);
}

/* ------------------------------------------------------------------- main */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_default),
        cmocka_unit_test(test_disparity_error),
        TU_ON_BOTH(test_definition),
        TU_ON_BOTH(test_bands_u8),
        TU_ON_BOTH(test_bands_f32),
        TU_ON_BOTH(test_negative_disparities),
        TU_ON_BOTH(test_middlebury),
        TU_ON_BOTH(test_lr_check_occlusion),
        TU_ON_BOTH(test_subpixel),
        TU_ON_BOTH(test_uniqueness),
        TU_ON_BOTH(test_bad_input),
        TU_ON_BOTH(test_non_finite_refused),
        cmocka_unit_test(test_cross_random_u8),
        cmocka_unit_test(test_cross_random_f32),
        cmocka_unit_test(test_cross_bands),
        cmocka_unit_test(test_cross_wide_range),
        cmocka_unit_test(test_cross_large_window),
        cmocka_unit_test(test_cross_middlebury),
        TU_ON_OPENCL(test_crosscheck_mode),
    };
    return cmocka_run_group_tests_name("stereo", tests, tu_group_setup, tu_group_teardown);
}
