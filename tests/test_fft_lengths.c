/* FFT lengths at and past the engines' limits: phase correlation of an
 * image with its circularly shifted copy on the OpenCL backend through
 * each engine (VkFFT, clFFT), against the CPU backend (FFTW).  Lengths
 * 2, powers of two up to 2^20 and primes, along x and along y (phase
 * correlation takes at least 2 points along x; one is NCC's case), the
 * other side kept at 2 or 1 so that the sweep stays quick on PoCL.  VkFFT
 * killed the process past 65536 points along x and refused one point
 * along x (VKFFT_ERROR_UNSUPPORTED_RADIX); such shapes now go to clFFT.
 * A shape no engine takes (a prime clFFT cannot factor, past VkFFT's
 * limit) must be refused with PV_ERR_UNSUPPORTED, never crash.
 * Tolerance: the integer shifts equal the CPU's, sub-pixel parts and
 * peaks within 1e-3 (include/parvis/register.h). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-3

/* width x height; the image is random, the moving one shifted by a few
 * pixels along each side longer than 1. */
static const int shapes[][2] = {
    {2, 1},      {2, 2},      {4096, 1},   {65536, 1}, {65537, 1}, {100000, 1}, {131072, 1},
    {1 << 20, 1}, {100003, 1}, {17, 2},    {100000, 2}, {2, 131072}, {2, 65521},
};

/* Whether clFFT takes length n (factors 2, 3, 5, 7, 11, 13 only). */
static int clfft_takes(int n)
{
    static const int radices[] = {2, 3, 5, 7, 11, 13};
    for (size_t i = 0; i < sizeof radices / sizeof radices[0]; i++)
        while (n % radices[i] == 0)
            n /= radices[i];
    return n == 1;
}

static void shifted_pair(int width, int height, pv_image *reference, pv_image *moving)
{
    assert_int_equal(pv_image_alloc(reference, width, height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(moving, width, height, PV_PIXEL_F32), PV_OK);
    tu_fill_random(reference, (uint32_t)(width * 31 + height));
    int dx = width > 8 ? 5 : 0, dy = height > 8 ? 3 : 0;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            tu_set_pixel(moving, x, y,
                         *tu_fpixel(reference, (x - dx + width) % width, (y - dy + height) % height));
}

/* One shape through ctx's engine against the CPU with the same options. */
static void compare_shape(pv_context *gpu, pv_fft_engine engine, int width, int height,
                          const pv_phasecorr_options *options)
{
    pv_image reference, moving;
    shifted_pair(width, height, &reference, &moving);
    pv_shift want, got;
    tu_expect_ok(tu_cpu, pv_phase_correlate(tu_cpu, &reference, &moving, options, &want),
                 "phase_correlate on the CPU");
    pv_status status = pv_phase_correlate(gpu, &reference, &moving, options, &got);
    if (status == PV_ERR_UNSUPPORTED && !(clfft_takes(width) && clfft_takes(height))) {
        print_message("%s %dx%d: refused (%s)\n", pv_fft_engine_name(engine), width, height,
                      pv_context_last_error(gpu));
    } else {
        tu_expect_ok(gpu, status, "phase_correlate on OpenCL");
        if (fabs(got.dx - want.dx) > TOLERANCE || fabs(got.dy - want.dy) > TOLERANCE ||
            fabs(got.peak - want.peak) > TOLERANCE)
            fail_msg("%s %dx%d: shift (%g, %g) peak %g, the CPU's (%g, %g) peak %g",
                     pv_fft_engine_name(engine), width, height, got.dx, got.dy, got.peak,
                     want.dx, want.dy, want.peak);
    }
    pv_image_free(&reference);
    pv_image_free(&moving);
}

static void sweep(pv_fft_engine engine)
{
    if (!pv_fft_engine_available(engine))
        skip();
    pv_context *gpu = tu_new_opencl_or_skip();
    assert_int_equal(pv_context_set_fft_engine(gpu, engine), PV_OK);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        compare_shape(gpu, engine, shapes[i][0], shapes[i][1], NULL);
    /* linear padding of 65537 points crashed VkFFT on its padded length */
    pv_phasecorr_options linear;
    pv_phasecorr_options_default(&linear);
    linear.pad = PV_PAD_LINEAR;
    compare_shape(gpu, engine, 65537, 1, &linear);
    pv_context_destroy(gpu);
}

/* NCC: templ cut from the image at (x0, y0); over full overlaps only, the
 * OpenCL result must be the CPU's (same best offset, coefficient within
 * 1e-4 as include/parvis/register.h gives for NCC maps). */
static void ncc_case(pv_context *gpu, int width, int height, int tw, int th, int x0, int y0)
{
    pv_image image, templ;
    assert_int_equal(pv_image_alloc(&image, width, height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&templ, tw, th, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&image, (uint32_t)(width + 7 * height));
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++)
            tu_set_pixel(&templ, x, y, *tu_fpixel(&image, x0 + x, y0 + y));
    pv_ncc_result want, got;
    const int full = tw * th; /* smaller overlaps of a few pixels correlate perfectly */
    tu_expect_ok(tu_cpu, pv_normxcorr2(tu_cpu, &templ, &image, full, NULL, &want),
                 "NCC on the CPU");
    tu_expect_ok(gpu, pv_normxcorr2(gpu, &templ, &image, full, NULL, &got), "NCC on OpenCL");
    if (got.x != want.x || got.y != want.y || fabsf(got.coefficient - want.coefficient) > 1e-4f)
        fail_msg("NCC %dx%d: (%d, %d) %g, the CPU's (%d, %d) %g", width, height, got.x, got.y,
                 (double)got.coefficient, want.x, want.y, (double)want.coefficient);
    assert_int_equal(got.x, x0);
    assert_int_equal(got.y, y0);
    pv_image_free(&image);
    pv_image_free(&templ);
}

/* One pixel wide (VkFFT refused it, VKFFT_ERROR_UNSUPPORTED_RADIX) and one
 * row 40000 wide (VkFFT crashed on its padded transform). */
static void ncc_sweep(pv_fft_engine engine)
{
    if (!pv_fft_engine_available(engine))
        skip();
    pv_context *gpu = tu_new_opencl_or_skip();
    assert_int_equal(pv_context_set_fft_engine(gpu, engine), PV_OK);
    ncc_case(gpu, 1, 300, 1, 40, 0, 123);
    ncc_case(gpu, 40000, 1, 64, 1, 31000, 0);
    pv_context_destroy(gpu);
}

static void test_vkfft_ncc(void **state)
{
    (void)state;
    ncc_sweep(PV_FFT_VKFFT);
}

static void test_clfft_ncc(void **state)
{
    (void)state;
    ncc_sweep(PV_FFT_CLFFT);
}

static void test_vkfft_lengths(void **state)
{
    (void)state;
    sweep(PV_FFT_VKFFT);
}

static void test_clfft_lengths(void **state)
{
    (void)state;
    sweep(PV_FFT_CLFFT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vkfft_lengths),
        cmocka_unit_test(test_clfft_lengths),
        cmocka_unit_test(test_vkfft_ncc),
        cmocka_unit_test(test_clfft_ncc),
    };
    /* PARVIS_TEST_FILTER=*ncc runs only the matching tests */
    const char *filter = getenv("PARVIS_TEST_FILTER");
    if (filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
