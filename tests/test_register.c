/* Tests of the register module: phase correlation (integer and sub-pixel,
 * 2D and 3D, padding, windows, plans and batches) and normxcorr2 against a
 * brute-force spatial computation, on every backend, plus OpenCL against
 * CPU and bad input.
 *
 * Textures are made here by an inverse DFT (in double) of a random,
 * smoothly decaying spectrum; multiplying that spectrum by a phase ramp
 * shifts them exactly, by integer or fractional amounts.
 *
 * Sizes are small and few (the 2D cases all transform on a 48x40 grid, the
 * 3D ones on 24x20x16) because every new transform size costs seconds of
 * kernel compilation on PoCL.
 *
 * OpenCL parts are skipped when no OpenCL device can be had, when
 * PARVIS_BACKEND forces the CPU, or when PARVIS_TEST_SKIP_OPENCL=1.  Under
 * valgrind also run one OpenMP thread (libgomp's parked workers show up as
 * "possibly lost" thread-local blocks).  From the build directory:
 *   PARVIS_BACKEND=cpu PARVIS_TEST_SKIP_OPENCL=1 OMP_NUM_THREADS=1 \
 *     libtool --mode=execute valgrind --leak-check=full --error-exitcode=1 \
 *     tests/test_register */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W2 48
#define H2 40
#define NX3 24
#define NY3 20
#define NZ3 16
#define TU_PI 3.14159265358979323846

typedef struct fixture {
    pv_context *cpu;
    pv_context *cl;   /* NULL when no OpenCL device is usable */
} fixture;

static int group_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    const char *skip = getenv("PARVIS_TEST_SKIP_OPENCL");
    f->cpu = tu_context(PV_BACKEND_CPU);
    f->cl = skip && strcmp(skip, "1") == 0 ? NULL : tu_context(PV_BACKEND_OPENCL);
    /* PARVIS_BACKEND=cpu turns the OpenCL request into a CPU context. */
    if (f->cl && pv_context_backend(f->cl) != PV_BACKEND_OPENCL) {
        pv_context_destroy(f->cl);
        f->cl = NULL;
    }
    *state = f;
    return f->cpu ? 0 : -1;
}

static int group_teardown(void **state)
{
    fixture *f = *state;
    pv_context_destroy(f->cpu);
    pv_context_destroy(f->cl);
    free(f);
    return 0;
}

/* The contexts to run a test on: CPU, then OpenCL when present. */
static int contexts_of(const fixture *f, pv_context *out[2])
{
    out[0] = f->cpu;
    out[1] = f->cl;
    return f->cl ? 2 : 1;
}

/* ============================================================== textures */

typedef struct cplx {
    double re, im;
} cplx;

static double signed_frequency(int k, int n)
{
    return k <= n / 2 ? (double)k / n : (double)(k - n) / n;
}

/* In-place naive inverse DFT along one axis of a dense n[0] x n[1] x n[2]
 * complex volume. */
static void inverse_dft_axis(cplx *data, const int n[3], int axis)
{
    int len = n[axis];
    size_t stride = axis == 0 ? 1 : axis == 1 ? (size_t)n[0] : (size_t)n[0] * n[1];
    size_t lines = (size_t)n[0] * n[1] * n[2] / len;
    cplx *line = malloc((size_t)len * sizeof *line);
    assert_non_null(line);
    for (size_t l = 0; l < lines; l++) {
        size_t inner = l % stride, outer = l / stride;
        cplx *base = data + outer * stride * len + inner;
        for (int j = 0; j < len; j++) {
            cplx sum = {0.0, 0.0};
            for (int k = 0; k < len; k++) {
                double angle = 2.0 * TU_PI * (double)((long)j * k % len) / len;
                cplx v = base[(size_t)k * stride];
                sum.re += v.re * cos(angle) - v.im * sin(angle);
                sum.im += v.re * sin(angle) + v.im * cos(angle);
            }
            line[j] = sum;
        }
        for (int j = 0; j < len; j++)
            base[(size_t)j * stride] = line[j];
    }
    free(line);
}

static int is_nyquist(int k, int n)
{
    return n > 1 && n % 2 == 0 && k == n / 2;
}

/* A smooth random texture (mean about 0.5, values of order 0.1) shifted by
 * `shift`: texture(p) = base(p - shift), exactly, for any real shift. */
static float *texture(const int n[3], const double shift[3], uint32_t seed)
{
    size_t count = (size_t)n[0] * n[1] * n[2];
    cplx *spectrum = calloc(count, sizeof *spectrum);
    float *out = malloc(count * sizeof *out);
    assert_non_null(spectrum);
    assert_non_null(out);
    uint32_t state = seed;
    for (size_t i = 0; i < count; i++) {
        int k[3] = {(int)(i % n[0]), (int)(i / n[0] % n[1]), (int)(i / ((size_t)n[0] * n[1]))};
        double f2 = 0.0, phase = 0.0;
        int nyquist = 0;
        for (int a = 0; a < 3; a++) {
            double f = signed_frequency(k[a], n[a]);
            f2 += f * f;
            phase += f * shift[a];
            nyquist |= is_nyquist(k[a], n[a]);
        }
        double re = tu_rand01(&state) - 0.5, im = tu_rand01(&state) - 0.5;
        double amplitude = nyquist ? 0.0 : exp(-f2 / (2.0 * 0.2 * 0.2)) * 0.2 / sqrt((double)count);
        double c = cos(-2.0 * TU_PI * phase), s = sin(-2.0 * TU_PI * phase);
        spectrum[i].re = amplitude * (re * c - im * s);
        spectrum[i].im = amplitude * (re * s + im * c);
    }
    for (int a = 0; a < 3; a++)
        if (n[a] > 1)
            inverse_dft_axis(spectrum, n, a);
    for (size_t i = 0; i < count; i++)
        out[i] = (float)(0.5 + spectrum[i].re);
    free(spectrum);
    return out;
}

static float *texture2d(int w, int h, double dx, double dy, uint32_t seed)
{
    int n[3] = {w, h, 1};
    double shift[3] = {dx, dy, 0.0};
    return texture(n, shift, seed);
}

static float *texture3d(double dx, double dy, double dz, uint32_t seed)
{
    int n[3] = {NX3, NY3, NZ3};
    double shift[3] = {dx, dy, dz};
    return texture(n, shift, seed);
}

/* ====================================================== phase correlation */

static pv_shift correlate2d(pv_context *ctx, const float *ref, const float *mov, int w, int h,
                            const pv_phasecorr_options *options)
{
    pv_image a = pv_image_wrap((void *)ref, w, h, PV_PIXEL_F32);
    pv_image b = pv_image_wrap((void *)mov, w, h, PV_PIXEL_F32);
    pv_shift shift;
    tu_expect_ok(ctx, pv_phase_correlate(ctx, &a, &b, options, &shift), "pv_phase_correlate");
    return shift;
}

static pv_shift correlate3d(pv_context *ctx, const float *ref, const float *mov,
                            const pv_phasecorr_options *options)
{
    pv_volume a = pv_volume_wrap((float *)ref, NX3, NY3, NZ3);
    pv_volume b = pv_volume_wrap((float *)mov, NX3, NY3, NZ3);
    pv_shift shift;
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &a, &b, options, &shift), "pv_phase_correlate3d");
    return shift;
}

static void test_identical_inputs_peak_at_one(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *tex = texture2d(W2, H2, 0.0, 0.0, 11u);
    for (int c = 0; c < n; c++) {
        pv_shift s = correlate2d(ctxs[c], tex, tex, W2, H2, NULL);
        assert_true(s.dx == 0.0 && s.dy == 0.0 && s.dz == 0.0);
        if (!(fabs(s.peak - 1.0) < 1e-4))
            fail_msg("peak %.7f at (%g,%g)", s.peak, s.dx, s.dy);
        assert_int_equal(s.flags, 0);
    }
    free(tex);
}

static void test_integer_shifts_2d(void **state)
{
    static const int shifts[][2] = {{0, 0}, {5, -3}, {-7, 11}, {23, -19}, {-23, 19}, {24, 20},
                                    {1, -1}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture2d(W2, H2, 0.0, 0.0, 21u);
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        float *mov = texture2d(W2, H2, shifts[i][0], shifts[i][1], 21u);
        for (int c = 0; c < n; c++) {
            pv_shift s = correlate2d(ctxs[c], ref, mov, W2, H2, NULL);
            if (s.dx != shifts[i][0] || s.dy != shifts[i][1])
                fail_msg("%s: shift (%d,%d) found as (%g,%g)", pv_context_device_name(ctxs[c]),
                         shifts[i][0], shifts[i][1], s.dx, s.dy);
            assert_true(s.peak > 0.99);
        }
        free(mov);
    }
    free(ref);
}

static void test_integer_shifts_3d(void **state)
{
    static const int shifts[][3] = {{-5, 9, 7}, {11, -9, -7}, {12, 10, 8}, {-11, 1, -1}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture3d(0, 0, 0, 31u);
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        float *mov = texture3d(shifts[i][0], shifts[i][1], shifts[i][2], 31u);
        for (int c = 0; c < n; c++) {
            pv_shift s = correlate3d(ctxs[c], ref, mov, NULL);
            if (s.dx != shifts[i][0] || s.dy != shifts[i][1] || s.dz != shifts[i][2])
                fail_msg("%s: shift (%d,%d,%d) found as (%g,%g,%g)",
                         pv_context_device_name(ctxs[c]), shifts[i][0], shifts[i][1],
                         shifts[i][2], s.dx, s.dy, s.dz);
            assert_true(s.peak > 0.99);
        }
        free(mov);
    }
    free(ref);
}

/* 47 is prime: FFTW and VkFFT (Bluestein) transform it, clFFT cannot, and
 * padding helps every engine. */
static void test_unfriendly_size(void **state)
{
    fixture *f = *state;
    float *ref = texture2d(47, 39, 0.0, 0.0, 41u), *mov = texture2d(47, 39, -6.0, 4.0, 41u);
    pv_shift s = correlate2d(f->cpu, ref, mov, 47, 39, NULL);
    if (s.dx != -6.0 || s.dy != 4.0)
        fail_msg("(-6,4) found as (%g,%g) peak %g", s.dx, s.dy, s.peak);
    if (f->cl) {
        pv_image a = pv_image_wrap(ref, 47, 39, PV_PIXEL_F32);
        pv_image b = pv_image_wrap(mov, 47, 39, PV_PIXEL_F32);
        pv_shift untouched = {7, 7, 7, 7, 7};
        assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_CLFFT), PV_OK);
        assert_int_equal(pv_phase_correlate(f->cl, &a, &b, NULL, &untouched), PV_ERR_UNSUPPORTED);
        assert_non_null(strstr(pv_context_last_error(f->cl), "47"));
        assert_true(untouched.dx == 7 && untouched.peak == 7);
        if (pv_fft_engine_available(PV_FFT_VKFFT)) {
            assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_VKFFT), PV_OK);
            s = correlate2d(f->cl, ref, mov, 47, 39, NULL);
            if (s.dx != -6.0 || s.dy != 4.0)
                fail_msg("VkFFT: (-6,4) found as (%g,%g) peak %g", s.dx, s.dy, s.peak);
        }
        assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_AUTO), PV_OK);
    }
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.pad = PV_PAD_FFT;
    pv_context *ctxs[2];
    int n = contexts_of(f, ctxs);
    for (int c = 0; c < n; c++) {
        s = correlate2d(ctxs[c], ref, mov, 47, 39, &options);
        assert_true(s.dx == -6.0 && s.dy == 4.0);
    }
    free(ref);
    free(mov);
}

/* Windows cut from a larger texture: content enters at the edges, so only
 * padding (or a window) keeps the peak clean. */
static void crop(const float *big, int big_w, int x0, int y0, int w, int h, float *out)
{
    for (int y = 0; y < h; y++)
        memcpy(out + (size_t)y * w, big + (size_t)(y0 + y) * big_w + x0, (size_t)w * sizeof *out);
}

/* Both sizes pad to the 48x40 grid: 24x20 to at least 47x39, 47x39 to the
 * next friendly size. */
static void test_linear_shift_with_padding(void **state)
{
    static const struct { pv_pad_mode pad; int w, h; } cases[] = {{PV_PAD_LINEAR, 24, 20},
                                                                   {PV_PAD_FFT, 47, 39}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *big = texture2d(64, 56, 0.0, 0.0, 51u);
    float *ref = malloc(47 * 39 * sizeof *ref), *mov = malloc(47 * 39 * sizeof *mov);
    assert_non_null(ref);
    assert_non_null(mov);
    for (int i = 0; i < 2; i++) {
        crop(big, 64, 8, 8, cases[i].w, cases[i].h, ref);
        crop(big, 64, 8 - 3, 8 + 2, cases[i].w, cases[i].h, mov); /* mov(p) = ref(p - (3, -2)) */
        for (int c = 0; c < n; c++) {
            pv_phasecorr_options options;
            pv_phasecorr_options_default(&options);
            options.pad = cases[i].pad;
            options.window = PV_WINDOW_HANN;
            pv_shift s = correlate2d(ctxs[c], ref, mov, cases[i].w, cases[i].h, &options);
            if (s.dx != 3.0 || s.dy != -2.0)
                fail_msg("pad %d: (3,-2) found as (%g,%g)", (int)cases[i].pad, s.dx, s.dy);
        }
    }
    free(big);
    free(ref);
    free(mov);
}

static void test_subpixel_2d(void **state)
{
    static const double shifts[][2] = {{3.37, -2.71}, {-10.52, 7.08}, {0.25, 0.0}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture2d(W2, H2, 0.0, 0.0, 61u);
    pv_phasecorr_options upsampled, parabolic;
    pv_phasecorr_options_default(&upsampled);
    upsampled.subpixel = PV_SUBPIXEL_UPSAMPLE;
    upsampled.upsample = 100;
    pv_phasecorr_options_default(&parabolic);
    parabolic.subpixel = PV_SUBPIXEL_PARABOLIC;
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        float *mov = texture2d(W2, H2, shifts[i][0], shifts[i][1], 61u);
        for (int c = 0; c < n; c++) {
            pv_shift s = correlate2d(ctxs[c], ref, mov, W2, H2, &upsampled);
            double error = fmax(fabs(s.dx - shifts[i][0]), fabs(s.dy - shifts[i][1]));
            if (!(error <= 0.02))
                fail_msg("%s: (%g,%g) found as (%g,%g)", pv_context_device_name(ctxs[c]),
                         shifts[i][0], shifts[i][1], s.dx, s.dy);
            assert_true(s.peak > 0.9 && s.peak < 1.01);
            s = correlate2d(ctxs[c], ref, mov, W2, H2, &parabolic);
            assert_true(fabs(s.dx - shifts[i][0]) <= 0.3 && fabs(s.dy - shifts[i][1]) <= 0.3);
        }
        free(mov);
    }
    free(ref);
}

static void test_subpixel_3d(void **state)
{
    static const double shifts[][3] = {{1.23, -2.58, 0.41}, {-4.71, 3.36, -2.87}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture3d(0, 0, 0, 71u);
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    options.upsample = 100;
    for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        float *mov = texture3d(shifts[i][0], shifts[i][1], shifts[i][2], 71u);
        for (int c = 0; c < n; c++) {
            pv_shift s = correlate3d(ctxs[c], ref, mov, &options);
            double error = fmax(fabs(s.dx - shifts[i][0]),
                                fmax(fabs(s.dy - shifts[i][1]), fabs(s.dz - shifts[i][2])));
            if (!(error <= 0.02))
                fail_msg("%s: (%g,%g,%g) found as (%g,%g,%g)", pv_context_device_name(ctxs[c]),
                         shifts[i][0], shifts[i][1], shifts[i][2], s.dx, s.dy, s.dz);
        }
        free(mov);
    }
    free(ref);
}

/* Five movers through a plan of batch 3 (a full and a partial batch) give
 * the one-shot answers. */
static void test_plan_batches_2d(void **state)
{
    static const int shifts[5][2] = {{2, 3}, {-4, 5}, {17, -13}, {0, 0}, {-20, -19}};
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture2d(W2, H2, 0.0, 0.0, 81u), *movs[5];
    pv_image movers[5];
    for (int i = 0; i < 5; i++) {
        movs[i] = texture2d(W2, H2, shifts[i][0], shifts[i][1], 81u);
        movers[i] = pv_image_wrap(movs[i], W2, H2, PV_PIXEL_F32);
    }
    pv_image reference = pv_image_wrap(ref, W2, H2, PV_PIXEL_F32);
    for (int c = 0; c < n; c++) {
        pv_phasecorr_plan *plan = NULL;
        assert_int_equal(pv_phasecorr_plan_create(ctxs[c], &reference, NULL, 3, &plan), PV_OK);
        int size[3];
        assert_int_equal(pv_phasecorr_plan_fft_size(plan, size), PV_OK);
        assert_true(size[0] == W2 && size[1] == H2 && size[2] == 1);
        pv_shift found[5];
        assert_int_equal(pv_phasecorr_plan_correlate(plan, movers, 5, found), PV_OK);
        for (int i = 0; i < 5; i++) {
            assert_true(found[i].dx == shifts[i][0] && found[i].dy == shifts[i][1]);
            pv_shift once = correlate2d(ctxs[c], ref, movs[i], W2, H2, NULL);
            assert_true(fabs(once.peak - found[i].peak) < 1e-5);
        }
        /* Swapping roles negates the shift. */
        assert_int_equal(pv_phasecorr_plan_set_reference(plan, &movers[1]), PV_OK);
        assert_int_equal(pv_phasecorr_plan_correlate(plan, &reference, 1, found), PV_OK);
        assert_true(found[0].dx == 4.0 && found[0].dy == -5.0);
        pv_phasecorr_plan_destroy(plan);
    }
    for (int i = 0; i < 5; i++)
        free(movs[i]);
    free(ref);
}

/* A 3D plan against sub-volume views of a larger volume (strided movers). */
static void test_plan_subvolumes_3d(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture3d(0, 0, 0, 91u), *mov = texture3d(3, -2, 5, 91u);
    pv_volume big;
    assert_int_equal(pv_volume_alloc(&big, NX3 + 3, NY3 + 2, NZ3 + 1), PV_OK);
    for (int z = 0; z < NZ3; z++)
        for (int y = 0; y < NY3; y++)
            memcpy(big.data + 1 + (y + 2) * big.stride_y + (z + 1) * big.stride_z,
                   mov + ((size_t)z * NY3 + y) * NX3, NX3 * sizeof(float));
    pv_volume view = big;
    view.nx = NX3;
    view.ny = NY3;
    view.nz = NZ3;
    view.data = big.data + 1 + 2 * big.stride_y + big.stride_z;
    pv_volume reference = pv_volume_wrap(ref, NX3, NY3, NZ3);
    pv_volume movers[2] = {view, pv_volume_wrap(mov, NX3, NY3, NZ3)};
    for (int c = 0; c < n; c++) {
        pv_phasecorr_plan *plan = NULL;
        assert_int_equal(pv_phasecorr_plan_create3d(ctxs[c], &reference, NULL, 1, &plan), PV_OK);
        pv_shift found[2];
        assert_int_equal(pv_phasecorr_plan_correlate3d(plan, movers, 2, found), PV_OK);
        for (int i = 0; i < 2; i++)
            assert_true(found[i].dx == 3 && found[i].dy == -2 && found[i].dz == 5);
        pv_phasecorr_plan_destroy(plan);
    }
    pv_volume_free(&big);
    free(ref);
    free(mov);
}

/* u8 pixels and strided rows give the f32 answer. */
static void test_u8_and_strided_images(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture2d(W2, H2, 0, 0, 101u), *mov = texture2d(W2, H2, -9, 6, 101u);
    pv_image ref8, mov8, strided;
    assert_int_equal(pv_image_alloc(&ref8, W2, H2, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&mov8, W2, H2, PV_PIXEL_U8), PV_OK);
    tu_guarded_alloc(&strided, W2, H2, PV_PIXEL_F32, 3);
    for (int i = 0; i < W2 * H2; i++) {
        ((uint8_t *)ref8.data)[i] = (uint8_t)fminf(255.0f, fmaxf(0.0f, ref[i] * 255.0f));
        ((uint8_t *)mov8.data)[i] = (uint8_t)fminf(255.0f, fmaxf(0.0f, mov[i] * 255.0f));
        ((float *)strided.data)[(i / W2) * strided.stride + i % W2] = mov[i];
    }
    pv_image reference = pv_image_wrap(ref, W2, H2, PV_PIXEL_F32);
    for (int c = 0; c < n; c++) {
        pv_shift s;
        assert_int_equal(pv_phase_correlate(ctxs[c], &ref8, &mov8, NULL, &s), PV_OK);
        assert_true(s.dx == -9 && s.dy == 6);
        assert_int_equal(pv_phase_correlate(ctxs[c], &reference, &strided, NULL, &s), PV_OK);
        assert_true(s.dx == -9 && s.dy == 6);
        assert_true(tu_guard_intact(&strided, 3));
    }
    tu_guarded_free(&strided, 3);
    image_list_free(&ref8, &mov8, NULL);
    free(ref);
    free(mov);
}

static void test_no_texture(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *tex = texture2d(W2, H2, 0, 0, 111u);
    float *flat = malloc(W2 * H2 * sizeof *flat);
    assert_non_null(flat);
    for (int i = 0; i < W2 * H2; i++)
        flat[i] = 0.25f;
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    for (int c = 0; c < n; c++) {
        pv_shift s = correlate2d(ctxs[c], tex, flat, W2, H2, &options);
        assert_int_equal(s.flags, PV_REGISTER_NO_TEXTURE);
        assert_true(s.dx == 0 && s.dy == 0 && s.dz == 0 && s.peak == 0);
        s = correlate2d(ctxs[c], flat, flat, W2, H2, NULL);
        assert_int_equal(s.flags, PV_REGISTER_NO_TEXTURE);
        assert_true(isfinite(s.peak));
    }
    free(tex);
    free(flat);
}

static void expect_invalid(pv_context *ctx, pv_status status, const pv_shift *untouched)
{
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(strlen(pv_last_error()) > 0);
    (void)ctx;
    assert_true(untouched->dx == 7 && untouched->dy == 7 && untouched->peak == 7 &&
                untouched->flags == 7);
}

static void test_phasecorr_bad_input(void **state)
{
    fixture *f = *state;
    pv_context *ctx = f->cpu;
    float *tex = texture2d(W2, H2, 0, 0, 121u);
    pv_image a = pv_image_wrap(tex, W2, H2, PV_PIXEL_F32), small = a, empty = a;
    small.width = W2 - 1;
    empty.width = 0;
    pv_volume va = pv_volume_wrap(tex, 8, 6, 4), vb = pv_volume_wrap(tex, 8, 6, 5);
    pv_shift s = {7, 7, 7, 7, 7};
    pv_phasecorr_options bad;
    expect_invalid(ctx, pv_phase_correlate(NULL, &a, &a, NULL, &s), &s);
    expect_invalid(ctx, pv_phase_correlate(ctx, NULL, &a, NULL, &s), &s);
    expect_invalid(ctx, pv_phase_correlate(ctx, &a, &small, NULL, &s), &s);
    expect_invalid(ctx, pv_phase_correlate(ctx, &empty, &empty, NULL, &s), &s);
    assert_int_equal(pv_phase_correlate(ctx, &a, &a, NULL, NULL), PV_ERR_INVALID);
    expect_invalid(ctx, pv_phase_correlate3d(ctx, &va, &vb, NULL, &s), &s);
    pv_phasecorr_options_default(&bad);
    bad.subpixel = PV_SUBPIXEL_UPSAMPLE;
    bad.upsample = 1;
    expect_invalid(ctx, pv_phase_correlate(ctx, &a, &a, &bad, &s), &s);
    pv_phasecorr_options_default(&bad);
    bad.pad = (pv_pad_mode)9;
    expect_invalid(ctx, pv_phase_correlate(ctx, &a, &a, &bad, &s), &s);
    pv_phasecorr_options_default(&bad);
    bad.window = (pv_window_kind)-1;
    expect_invalid(ctx, pv_phase_correlate(ctx, &a, &a, &bad, &s), &s);
    float saved = tex[17];
    tex[17] = NAN;
    expect_invalid(ctx, pv_phase_correlate(ctx, &a, &a, NULL, &s), &s);
    tex[17] = INFINITY;
    expect_invalid(ctx, pv_phase_correlate3d(ctx, &va, &va, NULL, &s), &s);
    tex[17] = saved;

    pv_phasecorr_plan *plan = NULL;
    assert_int_equal(pv_phasecorr_plan_create(ctx, &a, NULL, 0, &plan), PV_ERR_INVALID);
    assert_null(plan);
    assert_int_equal(pv_phasecorr_plan_create(ctx, &a, NULL, 2, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_phasecorr_plan_create(ctx, &a, NULL, 2, &plan), PV_OK);
    expect_invalid(ctx, pv_phasecorr_plan_correlate(plan, &small, 1, &s), &s);
    expect_invalid(ctx, pv_phasecorr_plan_correlate(plan, &a, 0, &s), &s);
    expect_invalid(ctx, pv_phasecorr_plan_correlate3d(plan, &va, 1, &s), &s);
    expect_invalid(ctx, pv_phasecorr_plan_correlate(NULL, &a, 1, &s), &s);
    assert_int_equal(pv_phasecorr_plan_set_reference(plan, &small), PV_ERR_INVALID);
    pv_phasecorr_plan_destroy(plan);
    pv_phasecorr_plan_destroy(NULL);
    free(tex);
}

static void test_opencl_matches_cpu(void **state)
{
    fixture *f = *state;
    if (!f->cl)
        skip();
    float *ref = texture2d(W2, H2, 0, 0, 131u), *mov = texture2d(W2, H2, 6.43, -3.19, 131u);
    float *ref3 = texture3d(0, 0, 0, 132u), *mov3 = texture3d(-2.62, 4.18, 1.77, 132u);
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    options.upsample = 100;
    options.window = PV_WINDOW_HANN;
    pv_shift a = correlate2d(f->cpu, ref, mov, W2, H2, &options);
    pv_shift b = correlate2d(f->cl, ref, mov, W2, H2, &options);
    assert_true(fabs(a.dx - b.dx) <= 1e-3 && fabs(a.dy - b.dy) <= 1e-3);
    assert_true(fabs(a.peak - b.peak) <= 1e-3);
    options.window = PV_WINDOW_NONE;
    a = correlate3d(f->cpu, ref3, mov3, &options);
    b = correlate3d(f->cl, ref3, mov3, &options);
    assert_true(fabs(a.dx - b.dx) <= 1e-3 && fabs(a.dy - b.dy) <= 1e-3 &&
                fabs(a.dz - b.dz) <= 1e-3);
    /* The context's own cross-check agrees too. */
    assert_int_equal(pv_context_set_crosscheck(f->cl, 1), PV_OK);
    b = correlate3d(f->cl, ref3, mov3, &options);
    options.subpixel = PV_SUBPIXEL_PARABOLIC;
    b = correlate2d(f->cl, ref, mov, W2, H2, &options);
    assert_int_equal(pv_context_set_crosscheck(f->cl, 0), PV_OK);
    free(ref);
    free(mov);
    free(ref3);
    free(mov3);
}

/* ============================================================ FFT engines */

static void test_fft_engine_api(void **state)
{
    fixture *f = *state;
    pv_fft_engine engine = PV_FFT_AUTO;
    assert_string_equal(pv_fft_engine_name(PV_FFT_VKFFT), "VkFFT");
    assert_true(pv_fft_engine_available(PV_FFT_CLFFT) || !f->cl);
    assert_int_equal(pv_context_fft_engine(f->cpu, &engine), PV_OK);
    assert_int_equal(engine, PV_FFT_FFTW);
    /* A GPU engine on a CPU context changes nothing (if it is built in). */
    assert_int_equal(pv_context_set_fft_engine(f->cpu, PV_FFT_CLFFT),
                     pv_fft_engine_available(PV_FFT_CLFFT) ? PV_OK : PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_context_fft_engine(f->cpu, &engine), PV_OK);
    assert_int_equal(engine, PV_FFT_FFTW);
    assert_int_equal(pv_context_set_fft_engine(f->cpu, (pv_fft_engine)99), PV_ERR_INVALID);
    assert_int_equal(pv_context_set_fft_engine(NULL, PV_FFT_AUTO), PV_ERR_INVALID);
    assert_int_equal(pv_context_fft_engine(f->cpu, NULL), PV_ERR_INVALID);
    if (!f->cl)
        return;
    assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_FFTW), PV_ERR_INVALID);
    assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_CLFFT), PV_OK);
    assert_int_equal(pv_context_fft_engine(f->cl, &engine), PV_OK);
    assert_int_equal(engine, PV_FFT_CLFFT);
    assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_AUTO), PV_OK);
    /* Unset, the environment decides; a bad name is an error, not a guess. */
    tu_set_env("PARVIS_FFT", "cufft");
    assert_int_equal(pv_context_fft_engine(f->cl, &engine), PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(f->cl), "PARVIS_FFT"));
    tu_set_env("PARVIS_FFT", "clfft");
    assert_int_equal(pv_context_fft_engine(f->cl, &engine), PV_OK);
    assert_int_equal(engine, PV_FFT_CLFFT);
    tu_set_env("PARVIS_FFT", NULL);
    assert_int_equal(pv_context_fft_engine(f->cl, &engine), PV_OK);
    assert_int_equal(engine, pv_fft_engine_available(PV_FFT_VKFFT) ? PV_FFT_VKFFT : PV_FFT_CLFFT);
    if (!pv_fft_engine_available(PV_FFT_VKFFT))
        assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_VKFFT), PV_ERR_UNSUPPORTED);
}

typedef struct engine_results {
    pv_shift one2d, one3d, planned[3];
    pv_image map;
} engine_results;

/* Sub-pixel 2D and 3D one-shots, a batched plan and an NCC map on f->cl
 * with the engine set. */
static void run_engine(fixture *f, pv_fft_engine engine, const float *ref, const float *mov,
                       const float *ref3, const float *mov3, engine_results *r)
{
    assert_int_equal(pv_context_set_fft_engine(f->cl, engine), PV_OK);
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    options.upsample = 100;
    r->one2d = correlate2d(f->cl, ref, mov, W2, H2, &options);
    r->one3d = correlate3d(f->cl, ref3, mov3, &options);
    pv_volume reference = pv_volume_wrap((float *)ref3, NX3, NY3, NZ3);
    pv_volume movers[3] = {pv_volume_wrap((float *)mov3, NX3, NY3, NZ3),
                           pv_volume_wrap((float *)ref3, NX3, NY3, NZ3),
                           pv_volume_wrap((float *)mov3, NX3, NY3, NZ3)};
    pv_phasecorr_plan *plan = NULL;
    assert_int_equal(pv_phasecorr_plan_create3d(f->cl, &reference, NULL, 2, &plan), PV_OK);
    assert_int_equal(pv_phasecorr_plan_correlate3d(plan, movers, 3, r->planned), PV_OK);
    pv_phasecorr_plan_destroy(plan);
    pv_image templ = pv_image_wrap((float *)ref, 16, 12, PV_PIXEL_F32);
    templ.stride = W2;
    pv_image image = pv_image_wrap((float *)mov, W2, H2, PV_PIXEL_F32);
    assert_int_equal(pv_image_alloc(&r->map, W2 + 15, H2 + 11, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_normxcorr2(f->cl, &templ, &image, 0, &r->map, NULL), PV_OK);
    assert_int_equal(pv_context_set_fft_engine(f->cl, PV_FFT_AUTO), PV_OK);
}

static double shift_difference(const pv_shift *a, const pv_shift *b)
{
    return fmax(fabs(a->dx - b->dx), fmax(fabs(a->dy - b->dy), fabs(a->dz - b->dz)));
}

static void test_fft_engines_agree(void **state)
{
    fixture *f = *state;
    if (!f->cl || !pv_fft_engine_available(PV_FFT_VKFFT))
        skip();
    float *ref = texture2d(W2, H2, 0, 0, 151u), *mov = texture2d(W2, H2, -7.38, 5.61, 151u);
    float *ref3 = texture3d(0, 0, 0, 152u), *mov3 = texture3d(4.27, -3.66, 2.08, 152u);
    engine_results cl, vk;
    run_engine(f, PV_FFT_CLFFT, ref, mov, ref3, mov3, &cl);
    run_engine(f, PV_FFT_VKFFT, ref, mov, ref3, mov3, &vk);
    assert_true(shift_difference(&cl.one2d, &vk.one2d) <= 1e-3);
    assert_true(shift_difference(&cl.one3d, &vk.one3d) <= 1e-3);
    assert_true(fabs(cl.one3d.dx - 4.27) <= 0.02 && fabs(vk.one3d.dz - 2.08) <= 0.02);
    for (int i = 0; i < 3; i++) {
        /* Integer peaks: exactly the same. */
        assert_true(shift_difference(&cl.planned[i], &vk.planned[i]) == 0.0);
        assert_true(fabs(cl.planned[i].peak - vk.planned[i].peak) <= 1e-3);
    }
    assert_true(vk.planned[0].dx == 4.0 && vk.planned[0].dy == -4.0 && vk.planned[0].dz == 2.0);
    assert_true(vk.planned[1].dx == 0.0 && fabs(vk.planned[1].peak - 1.0) < 1e-4);
    double worst = 0.0;
    for (int i = 0; i < cl.map.width * cl.map.height; i++)
        worst = fmax(worst, fabs(((float *)cl.map.data)[i] - ((float *)vk.map.data)[i]));
    if (!(worst <= 1e-4))
        fail_msg("NCC maps differ by %g between the engines", worst);
    image_list_free(&cl.map, &vk.map, NULL);
    free(ref);
    free(mov);
    free(ref3);
    free(mov3);
}

/* The bare transform pair of a plan leaves its reference alone. */
static void test_plan_time_fft(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    float *ref = texture3d(0, 0, 0, 161u), *mov = texture3d(-3, 6, 1, 161u);
    pv_volume reference = pv_volume_wrap(ref, NX3, NY3, NZ3);
    pv_volume moving = pv_volume_wrap(mov, NX3, NY3, NZ3);
    assert_int_equal(pv_phasecorr_plan_time_fft(NULL), PV_ERR_INVALID);
    for (int c = 0; c < n; c++) {
        pv_phasecorr_plan *plan = NULL;
        pv_shift s;
        pv_timing timing;
        assert_int_equal(pv_phasecorr_plan_create3d(ctxs[c], &reference, NULL, 1, &plan), PV_OK);
        assert_int_equal(pv_phasecorr_plan_time_fft(plan), PV_OK);
        pv_context_last_timing(ctxs[c], &timing);
        assert_true(timing.total_ms > 0.0 && timing.kernel_ms > 0.0);
        assert_int_equal(pv_phasecorr_plan_correlate3d(plan, &moving, 1, &s), PV_OK);
        assert_true(s.dx == -3.0 && s.dy == 6.0 && s.dz == 1.0 && s.peak > 0.99);
        /* Kernels timed by runs around the transforms' own spans: each
         * stretch of device time is counted once. */
        pv_context_last_timing(ctxs[c], &timing);
        assert_true(timing.kernel_ms > 0.0 && timing.kernel_ms <= timing.total_ms);
        pv_phasecorr_plan_destroy(plan);
    }
    free(ref);
    free(mov);
}

/* ================================================================== NCC */

/* Padfield's generalized NCC at map position (u, v), in double. */
static double brute_ncc(const float *t, int tw, int th, const float *im, int iw, int ih, int u,
                        int v, int *overlap)
{
    int ox = u - (tw - 1), oy = v - (th - 1);
    double n = 0, st = 0, si = 0, stt = 0, sii = 0, sti = 0;
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            int ix = x + ox, iy = y + oy;
            if (ix < 0 || iy < 0 || ix >= iw || iy >= ih)
                continue;
            double a = t[y * tw + x], b = im[iy * iw + ix];
            n += 1;
            st += a;
            si += b;
            stt += a * a;
            sii += b * b;
            sti += a * b;
        }
    *overlap = (int)n;
    double vt = stt - st * st / n, vi = sii - si * si / n;
    if (vt <= 0 || vi <= 0)
        return 0.0;
    return (sti - st * si / n) / sqrt(vt * vi);
}

static float *noise(int w, int h, uint32_t seed)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, w, h, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&image, seed);
    return image.data;
}

static void check_against_brute_force(pv_context *ctx, int tw, int th, int iw, int ih,
                                      int min_overlap)
{
    float *t = noise(tw, th, 141u + tw), *im = noise(iw, ih, 142u + iw);
    pv_image templ = pv_image_wrap(t, tw, th, PV_PIXEL_F32);
    pv_image image = pv_image_wrap(im, iw, ih, PV_PIXEL_F32);
    pv_image map;
    assert_int_equal(pv_image_alloc(&map, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
    pv_ncc_result result;
    tu_expect_ok(ctx, pv_normxcorr2(ctx, &templ, &image, min_overlap, &map, &result),
                 "pv_normxcorr2");
    double worst = 0.0;
    for (int v = 0; v < map.height; v++)
        for (int u = 0; u < map.width; u++) {
            int overlap;
            double expected = brute_ncc(t, tw, th, im, iw, ih, u, v, &overlap);
            float got = ((float *)map.data)[v * map.width + u];
            assert_true(isfinite(got) && got >= -1.0f && got <= 1.0f);
            if (overlap < min_overlap)
                expected = 0.0;
            /* Tiny overlaps are all rounding (coefficients of +-1 from two
             * pixels); they are what min_overlap is for. */
            if (min_overlap == 0 && overlap < 8)
                continue;
            worst = fmax(worst, fabs(got - expected));
        }
    if (!(worst <= 1e-4))
        fail_msg("%s: %dx%d in %dx%d, min_overlap %d: max |diff| %g",
                 pv_context_device_name(ctx), tw, th, iw, ih, min_overlap, worst);
    pv_image_free(&map);
    free(t);
    free(im);
}

static void test_ncc_brute_force(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    for (int c = 0; c < n; c++) {
        /* Both maps transform on the 48x40 grid of the phase-correlation tests. */
        check_against_brute_force(ctxs[c], 9, 9, 40, 32, 0);
        check_against_brute_force(ctxs[c], 9, 9, 40, 32, 30);
        check_against_brute_force(ctxs[c], 24, 20, 24, 20, 0);
        check_against_brute_force(ctxs[c], 24, 20, 24, 20, 50);
    }
}

/* Where the template lies wholly inside the image, the value is MATLAB's
 * normxcorr2: the textbook NCC with the whole template's mean. */
static void test_ncc_matches_matlab_inside(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    const int tw = 9, th = 9, iw = 40, ih = 32;
    float *t = noise(tw, th, 151u), *im = noise(iw, ih, 152u);
    pv_image templ = pv_image_wrap(t, tw, th, PV_PIXEL_F32);
    pv_image image = pv_image_wrap(im, iw, ih, PV_PIXEL_F32);
    double tmean = 0, tvar = 0;
    for (int i = 0; i < tw * th; i++)
        tmean += t[i] / (tw * th);
    for (int i = 0; i < tw * th; i++)
        tvar += (t[i] - tmean) * (t[i] - tmean);
    for (int c = 0; c < n; c++) {
        pv_image map;
        assert_int_equal(pv_image_alloc(&map, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_normxcorr2(ctxs[c], &templ, &image, 0, &map, NULL), PV_OK);
        for (int oy = 0; oy + th <= ih; oy++)
            for (int ox = 0; ox + tw <= iw; ox++) {
                double imean = 0, ivar = 0, cross = 0;
                for (int y = 0; y < th; y++)
                    for (int x = 0; x < tw; x++)
                        imean += im[(oy + y) * iw + ox + x] / (tw * th);
                for (int y = 0; y < th; y++)
                    for (int x = 0; x < tw; x++) {
                        double d = im[(oy + y) * iw + ox + x] - imean;
                        ivar += d * d;
                        cross += d * (t[y * tw + x] - tmean);
                    }
                double expected = cross / sqrt(ivar * tvar);
                float got = ((float *)map.data)[(oy + th - 1) * map.width + ox + tw - 1];
                assert_true(fabs(got - expected) <= 1e-4);
            }
        pv_image_free(&map);
    }
    free(t);
    free(im);
}

static void test_ncc_finds_known_offset(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    const int iw = 40, ih = 32, tw = 9, th = 9, x0 = 13, y0 = 7;
    float *im = texture2d(iw, ih, 0, 0, 161u);
    float t[9 * 9];
    crop(im, iw, x0, y0, tw, th, t);
    pv_image templ = pv_image_wrap(t, tw, th, PV_PIXEL_F32);
    pv_image image = pv_image_wrap(im, iw, ih, PV_PIXEL_F32);
    for (int c = 0; c < n; c++) {
        pv_ncc_result r;
        assert_int_equal(pv_normxcorr2(ctxs[c], &templ, &image, 20, NULL, &r), PV_OK);
        assert_int_equal(r.x, x0);
        assert_int_equal(r.y, y0);
        assert_true(r.coefficient > 0.9999f);
        /* The parabola is a model: neighbours are not symmetric on real data. */
        if (!(fabs(r.sub_x - x0) < 0.1 && fabs(r.sub_y - y0) < 0.1))
            fail_msg("sub-pixel (%g,%g)", r.sub_x, r.sub_y);
        assert_int_equal(r.flags, 0);
    }
    free(im);
}

static int map_is_zero(const pv_image *map)
{
    for (int i = 0; i < map->width * map->height; i++)
        if (((float *)map->data)[i] != 0.0f)
            return 0;
    return 1;
}

static void test_ncc_textureless(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    const int iw = 40, ih = 32, tw = 9, th = 9;
    float *im = noise(iw, ih, 171u), *t = noise(tw, th, 172u);
    float flat_t[9 * 9];
    for (int i = 0; i < tw * th; i++)
        flat_t[i] = 3.0f;
    /* A constant patch inside the image: no variance there. */
    for (int y = 4; y < 20; y++)
        for (int x = 5; x < 25; x++)
            im[y * iw + x] = 0.5f;
    pv_image image = pv_image_wrap(im, iw, ih, PV_PIXEL_F32);
    pv_image templ = pv_image_wrap(t, tw, th, PV_PIXEL_F32);
    pv_image flat = pv_image_wrap(flat_t, tw, th, PV_PIXEL_F32);
    for (int c = 0; c < n; c++) {
        pv_image map;
        pv_ncc_result r;
        assert_int_equal(pv_image_alloc(&map, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_normxcorr2(ctxs[c], &flat, &image, 0, &map, &r), PV_OK);
        assert_int_equal(r.flags, PV_REGISTER_NO_TEXTURE);
        assert_true(map_is_zero(&map) && r.coefficient == 0.0f);
        assert_int_equal(pv_normxcorr2(ctxs[c], &templ, &image, 0, &map, &r), PV_OK);
        for (int i = 0; i < map.width * map.height; i++)
            assert_true(isfinite(((float *)map.data)[i]));
        /* Template wholly inside the flat patch (top-left 5..16, 4..11). */
        for (int oy = 4; oy + th <= 20; oy++)
            for (int ox = 5; ox + tw <= 25; ox++)
                assert_true(((float *)map.data)[(oy + th - 1) * map.width + ox + tw - 1] == 0.0f);
        pv_image_free(&map);
    }
    free(im);
    free(t);
}

static void test_ncc_u8_and_strided_output(void **state)
{
    pv_context *ctxs[2];
    int n = contexts_of(*state, ctxs);
    const int iw = 40, ih = 32, tw = 9, th = 9;
    pv_image image8, templ8, dense, strided;
    assert_int_equal(pv_image_alloc(&image8, iw, ih, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&templ8, tw, th, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&image8, 181u);
    tu_fill_random(&templ8, 182u);
    assert_int_equal(pv_image_alloc(&dense, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
    tu_guarded_alloc(&strided, iw + tw - 1, ih + th - 1, PV_PIXEL_F32, 2);
    for (int c = 0; c < n; c++) {
        assert_int_equal(pv_normxcorr2(ctxs[c], &templ8, &image8, 10, &dense, NULL), PV_OK);
        assert_int_equal(pv_normxcorr2(ctxs[c], &templ8, &image8, 10, &strided, NULL), PV_OK);
        assert_true(tu_guard_intact(&strided, 2));
        for (int y = 0; y < dense.height; y++)
            for (int x = 0; x < dense.width; x++)
                assert_true(((float *)dense.data)[y * dense.width + x] ==
                            ((float *)strided.data)[y * strided.stride + x]);
    }
    tu_guarded_free(&strided, 2);
    image_list_free(&dense, &image8, &templ8, NULL);
}

static void test_ncc_bad_input(void **state)
{
    fixture *f = *state;
    pv_context *ctx = f->cpu;
    float *im = noise(40, 32, 191u), *t = noise(9, 9, 192u);
    pv_image image = pv_image_wrap(im, 40, 32, PV_PIXEL_F32);
    pv_image templ = pv_image_wrap(t, 9, 9, PV_PIXEL_F32);
    pv_image map, wrong;
    assert_int_equal(pv_image_alloc(&map, 48, 40, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&wrong, 47, 40, PV_PIXEL_F32), PV_OK);
    for (int i = 0; i < 48 * 40; i++)
        ((float *)map.data)[i] = 7.0f;
    pv_ncc_result r = {7, 7, 7.0f, 7, 7, 7};
    assert_int_equal(pv_normxcorr2(NULL, &templ, &image, 0, &map, &r), PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2(ctx, NULL, &image, 0, &map, &r), PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2(ctx, &templ, NULL, 0, &map, &r), PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2(ctx, &templ, &image, 0, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2(ctx, &templ, &image, -1, &map, &r), PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2(ctx, &templ, &image, 0, &wrong, &r), PV_ERR_INVALID);
    /* An output over the image's own pixels (never written: only compared). */
    pv_image alias = pv_image_wrap(im, 48, 40, PV_PIXEL_F32);
    assert_int_equal(pv_normxcorr2(ctx, &templ, &image, 0, &alias, &r), PV_ERR_INVALID);
    t[5] = NAN;
    assert_int_equal(pv_normxcorr2(ctx, &templ, &image, 0, &map, &r), PV_ERR_INVALID);
    for (int i = 0; i < 48 * 40; i++)
        assert_true(((float *)map.data)[i] == 7.0f);
    assert_true(r.x == 7 && r.coefficient == 7.0f && r.flags == 7);
    image_list_free(&map, &wrong, NULL);
    free(im);
    free(t);
}

static void test_ncc_opencl_matches_cpu(void **state)
{
    fixture *f = *state;
    if (!f->cl)
        skip();
    const int iw = 24, ih = 20, tw = 24, th = 20;
    float *im = texture2d(iw, ih, 0, 0, 201u), *t = texture2d(tw, th, 2.5, -1.5, 201u);
    pv_image image = pv_image_wrap(im, iw, ih, PV_PIXEL_F32);
    pv_image templ = pv_image_wrap(t, tw, th, PV_PIXEL_F32);
    pv_image a, b;
    assert_int_equal(pv_image_alloc(&a, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&b, iw + tw - 1, ih + th - 1, PV_PIXEL_F32), PV_OK);
    pv_ncc_result ra, rb;
    assert_int_equal(pv_normxcorr2(f->cpu, &templ, &image, 40, &a, &ra), PV_OK);
    assert_int_equal(pv_normxcorr2(f->cl, &templ, &image, 40, &b, &rb), PV_OK);
    assert_true(tu_rel_linf(&b, &a) <= 1e-4);
    assert_true(ra.x == rb.x && ra.y == rb.y);
    assert_true(fabs(ra.sub_x - rb.sub_x) <= 1e-3 && fabs(ra.sub_y - rb.sub_y) <= 1e-3);
    assert_int_equal(pv_context_set_crosscheck(f->cl, 1), PV_OK);
    assert_int_equal(pv_normxcorr2(f->cl, &templ, &image, 40, &b, NULL), PV_OK);
    assert_int_equal(pv_context_set_crosscheck(f->cl, 0), PV_OK);
    image_list_free(&a, &b, NULL);
    free(im);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_inputs_peak_at_one),
        cmocka_unit_test(test_integer_shifts_2d),
        cmocka_unit_test(test_integer_shifts_3d),
        cmocka_unit_test(test_unfriendly_size),
        cmocka_unit_test(test_linear_shift_with_padding),
        cmocka_unit_test(test_subpixel_2d),
        cmocka_unit_test(test_subpixel_3d),
        cmocka_unit_test(test_plan_batches_2d),
        cmocka_unit_test(test_plan_subvolumes_3d),
        cmocka_unit_test(test_u8_and_strided_images),
        cmocka_unit_test(test_no_texture),
        cmocka_unit_test(test_phasecorr_bad_input),
        cmocka_unit_test(test_opencl_matches_cpu),
        cmocka_unit_test(test_fft_engine_api),
        cmocka_unit_test(test_fft_engines_agree),
        cmocka_unit_test(test_plan_time_fft),
        cmocka_unit_test(test_ncc_brute_force),
        cmocka_unit_test(test_ncc_matches_matlab_inside),
        cmocka_unit_test(test_ncc_finds_known_offset),
        cmocka_unit_test(test_ncc_textureless),
        cmocka_unit_test(test_ncc_u8_and_strided_output),
        cmocka_unit_test(test_ncc_bad_input),
        cmocka_unit_test(test_ncc_opencl_matches_cpu),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
