/* Device fault injection (PARVIS_FAULT=alloc:N|build:N|enqueue:N): for one
 * operation of each module, fail the N-th buffer allocation, program build
 * or enqueued command of a fresh OpenCL context, for N spread over every
 * such call the operation makes, and check that the call
 *   - fails with an error status and a message saying what failed (or,
 *     where the runtime can recover, as from a cached binary that fails to
 *     build, succeeds with the right answer),
 *   - leaves its outputs as they were,
 *   - leaves the context usable: the same call again gives the answer of
 *     a context that never saw a fault.
 * Leaks are caught by the AddressSanitizer run (tests/sanitize.sh). */
#include "test_util.h"
#include "workload.h"

#ifndef PV_HAVE_OPENCL
/* Built without the OpenCL backend: no device to fail (automake's skip). */
int main(void)
{
    return 77;
}
#else

#include "../backends/opencl/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Results of one context against another: the same device, same inputs. */
#define FAULT_TOLERANCE 1e-6
/* PARVIS_FAULT_POINTS=<P> tries P values of N per (operation, kind): 1,
 * the last call, and evenly spread ones between (the sanitizer run, where
 * every context costs more); 0, the default, tries every call (about 30 s
 * on PoCL with 2 cores). */
#define DEFAULT_POINTS 0

static const char *const kind_names[PV_CL_FAULT_KINDS] = {"alloc", "build", "enqueue"};

static long points_wanted(void)
{
    const char *value = getenv("PARVIS_FAULT_POINTS");
    return value && *value ? strtol(value, NULL, 10) : DEFAULT_POINTS;
}

/* The i-th of `points` call numbers spread over 1..calls. */
static long nth_call(long i, long points, long calls)
{
    if (points <= 1)
        return 1;
    return 1 + (i * (calls - 1)) / (points - 1);
}

/* One injected fault on op: checks as described at the top. */
static void inject_once(const wl_op *op, pv_cl_fault_kind kind, long at, const wl_result *expected,
                        wl_result *got)
{
    char spec[64];
    snprintf(spec, sizeof spec, "%s:%ld", kind_names[kind], at);
    pv_context *ctx = tu_fault_context(spec);
    assert_non_null(ctx);
    int untouched = 1;
    got->count = 0;
    pv_status status = op->run(ctx, got, &untouched);
    if (pv_cl_faults_fired(ctx) == 0)
        fail_msg("%s with %s: the fault did not fire", op->name, spec);
    if (status == PV_OK) {
        /* Recovered (a cached binary rebuilt from source, say). */
        if (wl_difference(got, expected) > FAULT_TOLERANCE)
            fail_msg("%s with %s: succeeded with a wrong result", op->name, spec);
    } else {
        const char *message = pv_context_last_error(ctx);
        if (strlen(message) == 0 || strlen(pv_last_error()) == 0)
            fail_msg("%s with %s: %s without a message", op->name, spec, pv_status_string(status));
        if (!untouched)
            fail_msg("%s with %s: failed (%s) but changed its outputs", op->name, spec, message);
    }
    untouched = 1;
    got->count = 0;
    status = op->run(ctx, got, &untouched);
    if (status != PV_OK)
        fail_msg("%s after %s: the context no longer works: %s", op->name, spec,
                 pv_context_last_error(ctx));
    if (wl_difference(got, expected) > FAULT_TOLERANCE)
        fail_msg("%s after %s: wrong result", op->name, spec);
    pv_context_destroy(ctx);
}

static void sweep(const wl_op *op)
{
    pv_context *ctx = tu_fault_context(NULL);
    if (!ctx)
        skip();
    wl_result *expected = calloc(2, sizeof *expected);
    assert_non_null(expected);
    wl_result *got = expected + 1;
    int untouched = 1;
    if (op->run(ctx, expected, &untouched) != PV_OK)
        fail_msg("%s without faults: %s", op->name, pv_context_last_error(ctx));
    long calls[PV_CL_FAULT_KINDS];
    for (int k = 0; k < PV_CL_FAULT_KINDS; k++)
        calls[k] = pv_cl_fault_calls(ctx, (pv_cl_fault_kind)k);
    pv_context_destroy(ctx);
    assert_true(calls[PV_CL_FAULT_ENQUEUE] > 0);
    const long wanted = points_wanted();
    for (int k = 0; k < PV_CL_FAULT_KINDS; k++) {
        long points = wanted <= 0 || calls[k] < wanted ? calls[k] : wanted;
        for (long i = 0; i < points; i++)
            inject_once(op, (pv_cl_fault_kind)k, wanted <= 0 ? i + 1 : nth_call(i, points, calls[k]),
                        expected, got);
    }
    free(expected);
}

/* With no binary cache, every program of a fresh context is built from
 * source: the build faults then hit real source builds. */
static void test_build_faults_without_binary_cache(void **state)
{
    (void)state;
    setenv("PARVIS_NO_BINARY_CACHE", "1", 1);
    pv_context *ctx = tu_fault_context("build:1");
    unsetenv("PARVIS_NO_BINARY_CACHE");
    if (!ctx)
        skip();
    tu_set_env("PARVIS_NO_BINARY_CACHE", "1");
    wl_result *got = calloc(1, sizeof *got);
    assert_non_null(got);
    int untouched = 1;
    pv_status status = wl_ops[0].run(ctx, got, &untouched);
    assert_int_equal(status, PV_ERR_BUILD);
    assert_non_null(strstr(pv_context_last_error(ctx), "PARVIS_FAULT"));
    assert_true(untouched);
    got->count = 0;
    assert_int_equal(wl_ops[0].run(ctx, got, &untouched), PV_OK);
    assert_true(got->count > 0);
    tu_set_env("PARVIS_NO_BINARY_CACHE", NULL);
    free(got);
    pv_context_destroy(ctx);
}

/* Phase correlation through one FFT engine: its transforms (one enqueue
 * each for PARVIS_FAULT), the timing markers around them and the engine's
 * plan creation (one allocation) are in the sweep. */
#define PHASECORR_OP 4

static pv_status phasecorr_on(pv_context *ctx, pv_fft_engine engine, wl_result *out,
                              int *untouched)
{
    pv_status status = pv_context_set_fft_engine(ctx, engine);
    return status == PV_OK ? wl_ops[PHASECORR_OP].run(ctx, out, untouched) : status;
}

static pv_status phasecorr_clfft(pv_context *ctx, wl_result *out, int *untouched)
{
    return phasecorr_on(ctx, PV_FFT_CLFFT, out, untouched);
}

static pv_status phasecorr_vkfft(pv_context *ctx, wl_result *out, int *untouched)
{
    return phasecorr_on(ctx, PV_FFT_VKFFT, out, untouched);
}

/* The sweep of op, or a skip when its FFT engine was not built in. */
static void sweep_with_engine(pv_fft_engine engine, const wl_op *op)
{
    if (!pv_fft_engine_available(engine))
        skip();
    sweep(op);
}

static void test_sweep_phasecorr_clfft(void **state)
{
    (void)state;
    const wl_op op = {"phasecorr (clFFT)", phasecorr_clfft};
    sweep_with_engine(PV_FFT_CLFFT, &op);
}

static void test_sweep_phasecorr_vkfft(void **state)
{
    (void)state;
    const wl_op op = {"phasecorr (VkFFT)", phasecorr_vkfft};
    sweep_with_engine(PV_FFT_VKFFT, &op);
}

/* Masked normxcorr2 and the normxcorr2 batch: small inputs of their own
 * (a 6x5 template, 20x16 images, deterministic noise). */
static void fill_noise(pv_image *im, uint32_t seed)
{
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++) {
            seed = seed * 1664525u + 1013904223u;
            ((float *)im->data)[(size_t)y * im->stride + x] = (float)(seed >> 8) / 16777216.0f;
        }
}

static int all_float(const pv_image *im, float value)
{
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            if (((const float *)im->data)[(size_t)y * im->stride + x] != value)
                return 0;
    return 1;
}

static pv_status ncc_masked_op(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_image templ, image, mask, map;
    assert_int_equal(pv_image_alloc(&templ, 6, 5, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&image, 20, 16, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&mask, 6, 5, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&map, 25, 20, PV_PIXEL_F32), PV_OK);
    fill_noise(&templ, 1u);
    fill_noise(&image, 2u);
    for (int i = 0; i < 30; i++)
        ((unsigned char *)mask.data)[i] = i % 4 != 0;
    tu_fill_image(&map, 7.0f);
    pv_ncc_result result = {7, 7, 7.0f, 7, 7, 7};
    pv_status status = pv_normxcorr2_masked(ctx, &templ, &image, &mask, NULL, 3, &map, &result);
    if (status != PV_OK) {
        *untouched = all_float(&map, 7.0f) && result.x == 7 && result.flags == 7;
    } else {
        for (int i = 0; i < 25 * 20; i++)
            out->values[out->count++] = ((float *)map.data)[i];
        out->values[out->count++] = (float)result.x;
        out->values[out->count++] = (float)result.y;
    }
    image_list_free(&templ, &image, &mask, &map, NULL);
    return status;
}

/* The batch's documented failure: every map 0, the results unwritten. */
static pv_status ncc_batch_op(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_image templ, images[3], maps[3];
    pv_ncc_result results[3];
    assert_int_equal(pv_image_alloc(&templ, 6, 5, PV_PIXEL_F32), PV_OK);
    fill_noise(&templ, 3u);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pv_image_alloc(&images[i], 20, 16, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_image_alloc(&maps[i], 25, 20, PV_PIXEL_F32), PV_OK);
        fill_noise(&images[i], 4u + (uint32_t)i);
        tu_fill_image(&maps[i], 7.0f);
        results[i] = (pv_ncc_result){7, 7, 7.0f, 7, 7, 7};
    }
    pv_status status = pv_normxcorr2_batch(ctx, &templ, images, 3, 3, maps, results);
    for (int i = 0; i < 3; i++) {
        if (status != PV_OK)
            *untouched = *untouched && all_float(&maps[i], 0.0f) && results[i].x == 7 &&
                         results[i].flags == 7;
        for (int k = 0; status == PV_OK && k < 25 * 20; k++)
            out->values[out->count++] = ((float *)maps[i].data)[k];
        image_list_free(&images[i], &maps[i], NULL);
    }
    pv_image_free(&templ);
    return status;
}

static void test_sweep_ncc_masked(void **state)
{
    (void)state;
    const wl_op op = {"normxcorr2_masked", ncc_masked_op};
    sweep(&op);
}

static void test_sweep_ncc_batch(void **state)
{
    (void)state;
    const wl_op op = {"normxcorr2_batch", ncc_batch_op};
    sweep(&op);
}

static void test_bad_fault_spec_is_refused(void **state)
{
    (void)state;
    if (!tu_have_opencl())
        skip();
    /* past LONG_MAX (strtol clamps it), signs and blanks strtol would skip */
    const char *bad[] = {"alloc", "alloc:0", "alloc:-2", "alloc:x", "memory:3", "alloc:1,",
                         "alloc:99999999999999999999", "enqueue:9223372036854775808",
                         "build:+3", "alloc: 3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("PARVIS_FAULT", bad[i], 1);
        pv_context_options options;
        pv_context_options_default(&options);
        options.backend = PV_BACKEND_OPENCL;
        pv_context *ctx = (pv_context *)&options; /* must come back NULL */
        assert_int_equal(pv_context_create(&ctx, &options), PV_ERR_INVALID);
        assert_null(ctx);
        assert_non_null(strstr(pv_last_error(), "PARVIS_FAULT"));
    }
    unsetenv("PARVIS_FAULT");
}

#define SWEEP_TEST(index)                                                                       \
    static void test_sweep_##index(void **state)                                                \
    {                                                                                           \
        (void)state;                                                                            \
        sweep(&wl_ops[index]);                                                                  \
    }
SWEEP_TEST(0)
SWEEP_TEST(1)
SWEEP_TEST(2)
SWEEP_TEST(3)
SWEEP_TEST(4)
SWEEP_TEST(5)
SWEEP_TEST(6)
SWEEP_TEST(7)

static int setup(void **state)
{
    (void)state;
    unsetenv("PARVIS_FAULT");
    return wl_init();
}

static int teardown(void **state)
{
    (void)state;
    wl_free();
    return 0;
}

int main(void)
{
    /* One test per module, in wl_ops order: filter, stereo SAD, BP, SIFT,
     * phase correlation, NCC, octreg (registration and reconstruction),
     * flow; then phase correlation through each FFT engine, masked NCC and
     * the NCC batch. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_fault_spec_is_refused),
        cmocka_unit_test(test_build_faults_without_binary_cache),
        cmocka_unit_test(test_sweep_0), cmocka_unit_test(test_sweep_1),
        cmocka_unit_test(test_sweep_2), cmocka_unit_test(test_sweep_3),
        cmocka_unit_test(test_sweep_4), cmocka_unit_test(test_sweep_5),
        cmocka_unit_test(test_sweep_6), cmocka_unit_test(test_sweep_7),
        cmocka_unit_test(test_sweep_phasecorr_clfft),
        cmocka_unit_test(test_sweep_phasecorr_vkfft),
        cmocka_unit_test(test_sweep_ncc_masked),
        cmocka_unit_test(test_sweep_ncc_batch),
    };
    /* PARVIS_TEST_FILTER=test_bad* runs only the matching tests */
    const char *filter = getenv("PARVIS_TEST_FILTER");
    if (filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, setup, teardown);
}

#endif /* PV_HAVE_OPENCL */
