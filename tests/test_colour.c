/* Tests of the colour module: the 16-bit and colour pixel types and
 * pv_to_grey.
 *
 *   - known answers: hand-computed grey values of single pixels of every
 *     pixel type (Rec. 601 luma, 16-bit data times 1/257), and an 8-bit
 *     picture widened to 16 bits (x 257) giving back its 8-bit grey values
 *     to within float rounding (1e-4 on the 0..255 scale);
 *   - OpenCL against the CPU backend: both do the same float operations in
 *     the same order, so the grey images must agree to PV_TOL_COLOUR_REL
 *     (1e-6 relative L-infinity; in practice they are bit-identical), on
 *     odd sizes with strided input and a guarded, strided output that
 *     catches writes outside the image; and in cross-check mode;
 *   - bad input: each invalid argument gives PV_ERR_INVALID and leaves the
 *     output untouched;
 *   - the pixel types in the core helpers (pv_image_alloc, pv_image_get),
 *     and the grey-only operations still refusing colour images.
 *
 * OpenCL parts are skipped when no OpenCL device can be had (see
 * tests/test_filter.c for the environment variables). */
#include "test_util.h"
#include "../lib/core/tolerance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 3

static const pv_pixel_type all_types[] = {PV_PIXEL_U8, PV_PIXEL_U16, PV_PIXEL_RGB8,
                                          PV_PIXEL_RGB16, PV_PIXEL_F32};
#define TYPE_COUNT (sizeof all_types / sizeof all_types[0])

static int channels_of(pv_pixel_type type)
{
    return type == PV_PIXEL_RGB8 || type == PV_PIXEL_RGB16 ? 3 : 1;
}

static size_t pixel_bytes(pv_pixel_type type)
{
    size_t sample = type == PV_PIXEL_U16 || type == PV_PIXEL_RGB16 ? 2
                    : type == PV_PIXEL_F32                         ? 4
                                                                   : 1;
    return sample * (size_t)channels_of(type);
}

/* Sets sample c of pixel (x, y), whatever the pixel type. */
static void set_sample(pv_image *image, int x, int y, int c, double value)
{
    size_t i = ((size_t)y * (size_t)image->stride + (size_t)x) * (size_t)channels_of(image->type) +
               (size_t)c;
    switch (image->type) {
    case PV_PIXEL_U8:
    case PV_PIXEL_RGB8: ((uint8_t *)image->data)[i] = (uint8_t)value; break;
    case PV_PIXEL_U16:
    case PV_PIXEL_RGB16: ((uint16_t *)image->data)[i] = (uint16_t)value; break;
    case PV_PIXEL_F32: ((float *)image->data)[i] = (float)value; break;
    }
}

/* Every sample random over the type's range (floats over 0..255). */
static void fill_random_samples(pv_image *image, uint32_t seed)
{
    const double top = image->type == PV_PIXEL_U16 || image->type == PV_PIXEL_RGB16 ? 65535.0
                                                                                    : 255.0;
    uint32_t state = seed;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            for (int c = 0; c < channels_of(image->type); c++) {
                double unit = tu_rand01(&state);
                set_sample(image, x, y, c, image->type == PV_PIXEL_F32 ? unit * top
                                                                        : floor(unit * (top + 1)));
            }
}

static float grey_at(const pv_image *grey, int x, int y)
{
    return ((const float *)grey->data)[(ptrdiff_t)y * grey->stride + x];
}

/* The grey value pv_to_grey gives for one pixel with these samples. */
static float grey_of_pixel(pv_context *ctx, pv_pixel_type type, const double *samples)
{
    pv_image in, out;
    assert_int_equal(pv_image_alloc(&in, 1, 1, type), PV_OK);
    assert_int_equal(pv_image_alloc(&out, 1, 1, PV_PIXEL_F32), PV_OK);
    for (int c = 0; c < channels_of(type); c++)
        set_sample(&in, 0, 0, c, samples[c]);
    assert_int_equal(pv_to_grey(ctx, &in, &out), PV_OK);
    float value = grey_at(&out, 0, 0);
    pv_image_free(&in);
    pv_image_free(&out);
    return value;
}

/* ----------------------------------------------------------- known answers */

typedef struct known_pixel {
    pv_pixel_type type;
    double samples[3];
    double grey;        /* by hand: 0.299 R + 0.587 G + 0.114 B, 16-bit / 257 */
} known_pixel;

static void test_known_pixels(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    static const known_pixel cases[] = {
        {PV_PIXEL_U8, {0}, 0.0},
        {PV_PIXEL_U8, {200}, 200.0},
        {PV_PIXEL_F32, {12.25}, 12.25},
        {PV_PIXEL_U16, {65535}, 255.0},
        {PV_PIXEL_U16, {257}, 1.0},
        {PV_PIXEL_U16, {32896}, 128.0},          /* 128 * 257 */
        {PV_PIXEL_RGB8, {255, 0, 0}, 76.245},
        {PV_PIXEL_RGB8, {0, 255, 0}, 149.685},
        {PV_PIXEL_RGB8, {0, 0, 255}, 29.07},
        {PV_PIXEL_RGB8, {10, 20, 30}, 18.15},    /* 2.99 + 11.74 + 3.42 */
        {PV_PIXEL_RGB8, {255, 255, 255}, 255.0},
        {PV_PIXEL_RGB16, {65535, 65535, 65535}, 255.0},
        {PV_PIXEL_RGB16, {2570, 5140, 7710}, 18.15},  /* (10, 20, 30) x 257 */
        {PV_PIXEL_RGB16, {65535, 0, 0}, 76.245},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = grey_of_pixel(ctx, cases[i].type, cases[i].samples);
        /* float rounding of three products and two sums (and 1/257) */
        double tolerance = 1e-5 * (cases[i].grey > 1.0 ? cases[i].grey : 1.0);
        if (fabs((double)got - cases[i].grey) > tolerance)
            fail_msg("case %zu (type %d): grey %.7g, expected %.7g", i, (int)cases[i].type,
                     (double)got, cases[i].grey);
    }
}

/* An 8-bit colour picture and the same picture widened to 16 bits (x 257)
 * give the same grey values, so that SIFT's thresholds mean the same on
 * both. */
static void test_16_bit_matches_8_bit(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 37, h = 23;
    pv_image rgb8, rgb16, grey8, grey16;
    assert_int_equal(pv_image_alloc(&rgb8, w, h, PV_PIXEL_RGB8), PV_OK);
    assert_int_equal(pv_image_alloc(&rgb16, w, h, PV_PIXEL_RGB16), PV_OK);
    assert_int_equal(pv_image_alloc(&grey8, w, h, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&grey16, w, h, PV_PIXEL_F32), PV_OK);
    fill_random_samples(&rgb8, 7u);
    for (size_t i = 0; i < 3 * (size_t)w * (size_t)h; i++)
        ((uint16_t *)rgb16.data)[i] = (uint16_t)(((uint8_t *)rgb8.data)[i] * 257);
    assert_int_equal(pv_to_grey(ctx, &rgb8, &grey8), PV_OK);
    assert_int_equal(pv_to_grey(ctx, &rgb16, &grey16), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            assert_true(fabsf(grey_at(&grey8, x, y) - grey_at(&grey16, x, y)) <= 1e-4f);
            assert_true(fabsf(grey_at(&grey8, x, y) - pv_image_get(&rgb8, x, y)) <= 1e-4f);
        }
    pv_image_free(&rgb8);
    pv_image_free(&rgb16);
    pv_image_free(&grey8);
    pv_image_free(&grey16);
}

/* ------------------------------------------------------ OpenCL against CPU */

/* A w x h window, 5 pixels in from the left, of a wider image. */
static pv_image strided_input(pv_pixel_type type, int w, int h, uint32_t seed, pv_image *whole)
{
    assert_int_equal(pv_image_alloc(whole, w + 9, h, type), PV_OK);
    fill_random_samples(whole, seed);
    pv_image window = *whole;
    window.width = w;
    window.data = (char *)whole->data + 5 * pixel_bytes(type);
    return window;
}

static void test_cl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int w = 61, h = 29;
    for (size_t t = 0; t < TYPE_COUNT; t++) {
        pv_image whole, cpu, gpu;
        pv_image in = strided_input(all_types[t], w, h, 100u + (uint32_t)t, &whole);
        assert_int_equal(pv_image_alloc(&cpu, w, h, PV_PIXEL_F32), PV_OK);
        tu_guarded_alloc(&gpu, w, h, PV_PIXEL_F32, GUARD);
        assert_int_equal(pv_to_grey(tu_cpu, &in, &cpu), PV_OK);
        assert_int_equal(pv_to_grey(cl, &in, &gpu), PV_OK);
        double diff = tu_rel_linf(&gpu, &cpu);
        printf("    type %d: OpenCL against CPU, relative L-inf %.3g\n", (int)all_types[t], diff);
        assert_true(diff <= PV_TOL_COLOUR_REL);
        assert_true(tu_guard_intact(&gpu, GUARD));
        pv_image_free(&whole);
        pv_image_free(&cpu);
        tu_guarded_free(&gpu, GUARD);
    }
}

static void test_crosscheck_mode(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image in, out;
    assert_int_equal(pv_image_alloc(&in, 33, 17, PV_PIXEL_RGB16), PV_OK);
    assert_int_equal(pv_image_alloc(&out, 33, 17, PV_PIXEL_F32), PV_OK);
    fill_random_samples(&in, 5u);
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    pv_status status = pv_to_grey(cl, &in, &out);
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
    assert_int_equal(status, PV_OK);
    pv_image_free(&in);
    pv_image_free(&out);
}

/* --------------------------------------------------------------- bad input */

static void expect_refused(pv_context *ctx, const pv_image *in, pv_image *out, const char *what)
{
    pv_status status = pv_to_grey(ctx, in, out);
    if (status != PV_ERR_INVALID)
        fail_msg("%s: status %d, expected PV_ERR_INVALID", what, (int)status);
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image in, out, u8_out, small;
    assert_int_equal(pv_image_alloc(&in, 8, 6, PV_PIXEL_RGB8), PV_OK);
    assert_int_equal(pv_image_alloc(&u8_out, 8, 6, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&small, 7, 6, PV_PIXEL_F32), PV_OK);
    tu_guarded_alloc(&out, 8, 6, PV_PIXEL_F32, GUARD);
    tu_fill_image(&out, -3.0f);
    fill_random_samples(&in, 3u);

    assert_int_equal(pv_to_grey(NULL, &in, &out), PV_ERR_INVALID);
    expect_refused(ctx, NULL, &out, "NULL input");
    expect_refused(ctx, &in, NULL, "NULL output");
    expect_refused(ctx, &in, &u8_out, "u8 output");
    expect_refused(ctx, &in, &small, "output of another size");
    pv_image odd = in;
    odd.stride = in.width - 1;
    expect_refused(ctx, &odd, &out, "stride below the width");
    odd = in;
    odd.type = (pv_pixel_type)99;
    expect_refused(ctx, &odd, &out, "unknown pixel type");
    odd = in;
    odd.data = NULL;
    expect_refused(ctx, &odd, &out, "no data");
    pv_image rgb_out = out;
    rgb_out.type = PV_PIXEL_RGB8;
    expect_refused(ctx, &in, &rgb_out, "colour output");
    pv_image alias = pv_image_wrap(in.data, 2, 2, PV_PIXEL_F32);
    pv_image tiny_in = pv_image_wrap(in.data, 2, 2, PV_PIXEL_RGB8);
    expect_refused(ctx, &tiny_in, &alias, "output overlapping the input");

    assert_true(tu_image_all_equal(&out, -3.0f));
    assert_true(tu_guard_intact(&out, GUARD));
    pv_image_free(&in);
    pv_image_free(&u8_out);
    pv_image_free(&small);
    tu_guarded_free(&out, GUARD);
}

/* ------------------------------------------------------ core pixel helpers */

static void test_core_pixel_types(void **state)
{
    (void)state;
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, 4, 3, (pv_pixel_type)0), PV_ERR_INVALID);
    assert_int_equal(pv_image_alloc(&image, 4, 3, (pv_pixel_type)6), PV_ERR_INVALID);

    assert_int_equal(pv_image_alloc(&image, 4, 3, PV_PIXEL_RGB16), PV_OK);
    assert_int_equal(image.stride, 4);
    uint16_t *rgb = image.data;
    rgb[3 * 5] = 1000, rgb[3 * 5 + 1] = 2000, rgb[3 * 5 + 2] = 3000; /* pixel (1, 1) */
    /* luma on the type's own scale: 299 + 1174 + 342 */
    assert_true(fabsf(pv_image_get(&image, 1, 1) - 1815.0f) < 1e-3f);
    assert_true(pv_image_get(&image, 0, 0) == 0.0f);
    assert_true(isnan(pv_image_get(&image, 4, 0)));
    pv_image_free(&image);

    assert_int_equal(pv_image_alloc(&image, 2, 2, PV_PIXEL_U16), PV_OK);
    ((uint16_t *)image.data)[3] = 65535;
    assert_true(pv_image_get(&image, 1, 1) == 65535.0f);
    pv_image_free(&image);

    assert_int_equal(pv_image_alloc(&image, 2, 2, PV_PIXEL_RGB8), PV_OK);
    uint8_t *rgb8 = image.data;
    rgb8[0] = 255;
    assert_true(fabsf(pv_image_get(&image, 0, 0) - 76.245f) < 1e-4f);
    pv_image_free(&image);
}

/* Operations that take grey images only refuse colour ones instead of
 * reading their bytes as grey. */
static void test_grey_operations_refuse_colour(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image rgb, out;
    assert_int_equal(pv_image_alloc(&rgb, 16, 16, PV_PIXEL_RGB8), PV_OK);
    assert_int_equal(pv_image_alloc(&out, 16, 16, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_gaussian_blur(ctx, &rgb, &out, 1.0f, 0), PV_ERR_INVALID);
    pv_image_free(&rgb);
    pv_image_free(&out);
}

/* ===================================================================== main */

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_known_pixels),
        TU_ON_BOTH(test_16_bit_matches_8_bit),
        cmocka_unit_test(test_cl_matches_cpu),
        cmocka_unit_test(test_crosscheck_mode),
        TU_ON_BOTH(test_bad_input),
        cmocka_unit_test(test_core_pixel_types),
        TU_ON_BOTH(test_grey_operations_refuse_colour),
    };
    return cmocka_run_group_tests_name("colour", tests, tu_group_setup, tu_group_teardown);
}
