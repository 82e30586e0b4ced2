/* Tests of unsigned 16-bit volumes (PV_VOLUME_U16): allocation and
 * wrapping; the operations that take them (OCT registration and
 * reconstruction, 3D phase correlation one-shot, planned and masked, the
 * 3D flow's inputs) give exactly the results of the same call on the
 * volume converted to float on the host, on each backend (u16 -> float is
 * exact, so equality, not a tolerance, is asserted); CPU and OpenCL agree
 * within the library's cross-check tolerances (lib/core/tolerance.h); and
 * the operations that take floats only refuse u16, as does every call
 * given NULL data or an unknown sample type.  The readers that keep 16
 * bits (raw typed, NIfTI native; TIFF's are in test_tiff.c) round-trip
 * with the writers and refuse hostile sizes.
 *
 * The OCT volumes are 64 x 48 x 40, test_octreg's geometry (its kernels are
 * then in the binary cache), quantised to u16 by a fixed linear map. */
#include "test_util.h"

#include "parvis/volume_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ND 64
#define NA 48
#define NB 40

typedef struct fixture {
    pv_volume ref16, target16;   /* u16 */
    pv_volume ref32, target32;   /* the same values as floats */
} fixture;

static fixture fx;

/* A float volume mapped linearly onto 0 .. 65535 (rounded) into a new u16
 * volume, and those u16 values back as floats into *as_float. */
static int quantise(const pv_volume *v, float lo, float hi, pv_volume *u16, pv_volume *as_float)
{
    if (pv_volume_alloc_u16(u16, v->nx, v->ny, v->nz) != PV_OK ||
        pv_volume_alloc(as_float, v->nx, v->ny, v->nz) != PV_OK)
        return -1;
    size_t n = (size_t)v->nx * v->ny * v->nz;
    for (size_t i = 0; i < n; i++) {
        float t = (v->data[i] - lo) / (hi - lo);
        t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
        u16->data_u16[i] = (uint16_t)lrintf(t * 65535.0f);
        as_float->data[i] = (float)u16->data_u16[i];
    }
    return 0;
}

static void range_of(const pv_volume *v, float *lo, float *hi)
{
    size_t n = (size_t)v->nx * v->ny * v->nz;
    *lo = *hi = v->data[0];
    for (size_t i = 1; i < n; i++) {
        *lo = fminf(*lo, v->data[i]);
        *hi = fmaxf(*hi, v->data[i]);
    }
}

static int group_setup(void **state)
{
    pv_octreg_synth_params p;
    pv_volume ref, target;
    pv_octreg_shift trace[NB];
    tu_octreg_synth_params(&p, ND, NA, NB, 7);
    p.start[1] = 3.0;
    if (pv_volume_alloc(&ref, ND, NA, NB) != PV_OK || pv_volume_alloc(&target, ND, NA, NB) != PV_OK ||
        pv_octreg_synthesize(&p, &ref, &target, trace) != PV_OK)
        return -1;
    float lo, hi;
    range_of(&ref, &lo, &hi);
    int failed = quantise(&ref, lo, hi, &fx.ref16, &fx.ref32) ||
                 quantise(&target, lo, hi, &fx.target16, &fx.target32);
    pv_volume_free(&ref);
    pv_volume_free(&target);
    return failed ? -1 : tu_group_setup(state);
}

static int group_teardown(void **state)
{
    pv_volume_free(&fx.ref16);
    pv_volume_free(&fx.target16);
    pv_volume_free(&fx.ref32);
    pv_volume_free(&fx.target32);
    return tu_group_teardown(state);
}

/* ================================================================ the type */

static void test_alloc_wrap_and_sizes(void **state)
{
    (void)state;
    pv_volume v;
    assert_int_equal(pv_volume_alloc_u16(&v, 3, 4, 5), PV_OK);
    assert_int_equal(v.type, PV_VOLUME_U16);
    assert_int_equal(v.stride_y, 3);
    assert_int_equal(v.stride_z, 12);
    assert_int_equal(v.data_u16[59], 0);   /* zeroed, 60 samples */
    pv_volume_free(&v);
    assert_null(v.data);
    uint16_t samples[24];
    pv_volume w = pv_volume_wrap_u16(samples, 2, 3, 4);
    assert_ptr_equal(w.data_u16, samples);
    assert_int_equal(w.type, PV_VOLUME_U16);
    float floats[2];
    pv_volume f = pv_volume_wrap(floats, 2, 1, 1);
    assert_int_equal(f.type, PV_VOLUME_F32);
    pv_volume zero = {0};
    assert_int_equal(zero.type, PV_VOLUME_F32);   /* zero-initialised: f32 */
    assert_int_equal(pv_volume_sample_size(PV_VOLUME_F32), 4);
    assert_int_equal(pv_volume_sample_size(PV_VOLUME_U16), 2);
    assert_int_equal(pv_volume_sample_size((pv_volume_type)7), 0);
    assert_int_equal(pv_volume_alloc_u16(&v, 0, 1, 1), PV_ERR_INVALID);
    assert_int_equal(pv_volume_alloc_u16(NULL, 1, 1, 1), PV_ERR_INVALID);
}

/* =========================================================== OCT, exactly */

static void register_with(pv_context *ctx, const pv_volume *reference, const pv_volume *target,
                          pv_octreg_shift *shifts)
{
    pv_octreg_plan *plan = NULL;
    tu_expect_ok(ctx, pv_octreg_plan_create(ctx, reference, NULL, &plan), "octreg plan");
    tu_expect_ok(ctx, pv_octreg_register(plan, target, shifts, NULL), "octreg register");
    pv_octreg_plan_destroy(plan);
}

static void assert_same_shifts(const pv_octreg_shift *a, const pv_octreg_shift *b)
{
    for (int k = 0; k < NB; k++) {
        assert_int_equal(a[k].valid, b[k].valid);
        assert_true(a[k].dx == b[k].dx && a[k].dy == b[k].dy && a[k].dz == b[k].dz);
    }
}

/* u16 reference and target, and a float reference with a u16 target, give
 * the float call's shifts bit for bit. */
static void test_octreg_u16_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_octreg_shift f32[NB], u16[NB], mixed[NB];
    register_with(ctx, &fx.ref32, &fx.target32, f32);
    register_with(ctx, &fx.ref16, &fx.target16, u16);
    register_with(ctx, &fx.ref32, &fx.target16, mixed);
    assert_same_shifts(f32, u16);
    assert_same_shifts(f32, mixed);
    int valid = 0;
    for (int k = 0; k < NB; k++)
        valid += f32[k].valid;
    assert_true(valid >= NB / 2);   /* the comparison is of real registrations */
}

static void test_octreg_reconstruct_u16_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_octreg_plan *plan = NULL;
    pv_octreg_shift shifts[NB];
    pv_volume from16, from32;
    assert_int_equal(pv_volume_alloc(&from16, ND, NA, NB), PV_OK);
    assert_int_equal(pv_volume_alloc(&from32, ND, NA, NB), PV_OK);
    tu_expect_ok(ctx, pv_octreg_plan_create(ctx, &fx.ref16, NULL, &plan), "plan");
    tu_expect_ok(ctx, pv_octreg_register(plan, &fx.target16, shifts, NULL), "register");
    tu_expect_ok(ctx, pv_octreg_reconstruct(plan, &fx.target16, shifts, 0.0f, &from16, NULL,
                                            NULL, NULL), "reconstruct u16");
    tu_expect_ok(ctx, pv_octreg_reconstruct(plan, &fx.target32, shifts, 0.0f, &from32, NULL,
                                            NULL, NULL), "reconstruct f32");
    assert_memory_equal(from16.data, from32.data, (size_t)ND * NA * NB * sizeof(float));
    /* Averaging registers and reconstructs each target: two u16 targets
     * against two float ones. */
    const pv_volume targets16[2] = {fx.target16, fx.ref16}, targets32[2] = {fx.target32, fx.ref32};
    pv_octreg_shift all16[2 * NB], all32[2 * NB];
    tu_expect_ok(ctx, pv_octreg_average(plan, targets16, 2, all16, 0.0f, &from16, NULL, NULL,
                                        NULL), "average u16");
    tu_expect_ok(ctx, pv_octreg_average(plan, targets32, 2, all32, 0.0f, &from32, NULL, NULL,
                                        NULL), "average f32");
    assert_same_shifts(all16, all32);
    assert_same_shifts(all16 + NB, all32 + NB);
    assert_memory_equal(from16.data, from32.data, (size_t)ND * NA * NB * sizeof(float));
    pv_octreg_plan_destroy(plan);
    pv_volume_free(&from16);
    pv_volume_free(&from32);
}

/* OpenCL (conversion on the device) against the CPU (on the host), at the
 * octreg cross-check's tolerances: >= PV_TOL_OCT_AGREEMENT (99%) of the
 * B-scans with the same integer shifts, their sub-voxel parts within
 * PV_TOL_OCT_SUBPIXEL (0.05 voxel). */
static void test_octreg_u16_cpu_and_opencl_agree(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_octreg_shift cpu[NB], dev[NB];
    register_with(tu_cpu, &fx.ref16, &fx.target16, cpu);
    register_with(cl, &fx.ref16, &fx.target16, dev);
    int agree = 0;
    for (int k = 0; k < NB; k++) {
        int same = cpu[k].valid == dev[k].valid && lround(cpu[k].dx) == lround(dev[k].dx) &&
                   lround(cpu[k].dy) == lround(dev[k].dy) && lround(cpu[k].dz) == lround(dev[k].dz);
        agree += same;
        if (same)
            assert_true(fabs(cpu[k].dx - dev[k].dx) <= 0.05 && fabs(cpu[k].dy - dev[k].dy) <= 0.05 &&
                        fabs(cpu[k].dz - dev[k].dz) <= 0.05);
    }
    assert_true(agree >= (int)ceil(0.99 * NB));
}

/* ====================================================== phase correlation */

#define PN 24

/* A textured u16 volume and a copy shifted by (3, -2, 1) (periodic). */
static void shifted_pair(pv_volume *ref16, pv_volume *mov16, pv_volume *ref32, pv_volume *mov32)
{
    assert_int_equal(pv_volume_alloc_u16(ref16, PN, PN, PN), PV_OK);
    assert_int_equal(pv_volume_alloc_u16(mov16, PN, PN, PN), PV_OK);
    assert_int_equal(pv_volume_alloc(ref32, PN, PN, PN), PV_OK);
    assert_int_equal(pv_volume_alloc(mov32, PN, PN, PN), PV_OK);
    uint32_t seed = 11;
    for (int i = 0; i < PN * PN * PN; i++)
        ref16->data_u16[i] = (uint16_t)(tu_rand(&seed) & 0xffff);
    for (int z = 0; z < PN; z++)
        for (int y = 0; y < PN; y++)
            for (int x = 0; x < PN; x++) {
                int sx = (x - 3 + PN) % PN, sy = (y + 2) % PN, sz = (z - 1 + PN) % PN;
                mov16->data_u16[(z * PN + y) * PN + x] = ref16->data_u16[(sz * PN + sy) * PN + sx];
            }
    for (int i = 0; i < PN * PN * PN; i++) {
        ref32->data[i] = ref16->data_u16[i];
        mov32->data[i] = mov16->data_u16[i];
    }
}

static void free_all(pv_volume *v, int count)
{
    for (int i = 0; i < count; i++)
        pv_volume_free(&v[i]);
}

static void assert_same_shift(const pv_shift *a, const pv_shift *b)
{
    assert_true(a->dx == b->dx && a->dy == b->dy && a->dz == b->dz && a->peak == b->peak);
    assert_int_equal(a->flags, b->flags);
}

static void test_phasecorr3d_u16_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume v[4];
    shifted_pair(&v[0], &v[1], &v[2], &v[3]);
    pv_shift s16, s32, mixed;
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[0], &v[1], NULL, &s16), "u16");
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[2], &v[3], NULL, &s32), "f32");
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[2], &v[1], NULL, &mixed), "mixed");
    assert_same_shift(&s16, &s32);
    assert_same_shift(&mixed, &s32);
    assert_true(fabs(s32.dx - 3) < 0.1 && fabs(s32.dy + 2) < 0.1 && fabs(s32.dz - 1) < 0.1);
    /* Padded and windowed: the u16 data go through the padding kernel. */
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.pad = PV_PAD_LINEAR;
    options.window = PV_WINDOW_HANN;
    options.subpixel = PV_SUBPIXEL_PARABOLIC;
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[0], &v[1], &options, &s16), "u16 padded");
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[2], &v[3], &options, &s32), "f32 padded");
    assert_same_shift(&s16, &s32);
    /* A strided u16 view (rows 3 samples apart, planes 5 rows apart) goes
     * up through the runtime's rectangular copy of 2-byte samples. */
    const int sy = PN + 3, sz = sy * (PN + 5);
    uint16_t *block = calloc((size_t)sz * PN, sizeof *block);
    assert_non_null(block);
    pv_volume strided = pv_volume_wrap_u16(block, PN, PN, PN);
    strided.stride_y = sy;
    strided.stride_z = sz;
    for (int z = 0; z < PN; z++)
        for (int y = 0; y < PN; y++)
            memcpy(block + (size_t)z * sz + (size_t)y * sy, v[1].data_u16 + (z * PN + y) * PN,
                   PN * sizeof *block);
    tu_expect_ok(ctx, pv_phase_correlate3d(ctx, &v[0], &strided, &options, &s16), "strided");
    assert_same_shift(&s16, &s32);
    free(block);
    free_all(v, 4);
}

static void test_phasecorr_plan3d_u16_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume v[4];
    shifted_pair(&v[0], &v[1], &v[2], &v[3]);
    pv_phasecorr_plan *p16 = NULL, *p32 = NULL;
    tu_expect_ok(ctx, pv_phasecorr_plan_create3d(ctx, &v[0], NULL, 2, &p16), "plan u16");
    tu_expect_ok(ctx, pv_phasecorr_plan_create3d(ctx, &v[2], NULL, 2, &p32), "plan f32");
    const pv_volume movers16[2] = {v[1], v[0]}, movers32[2] = {v[3], v[2]};
    pv_shift s16[2], s32[2];
    tu_expect_ok(ctx, pv_phasecorr_plan_correlate3d(p16, movers16, 2, s16), "correlate u16");
    tu_expect_ok(ctx, pv_phasecorr_plan_correlate3d(p32, movers32, 2, s32), "correlate f32");
    assert_same_shift(&s16[0], &s32[0]);
    assert_same_shift(&s16[1], &s32[1]);
    tu_expect_ok(ctx, pv_phasecorr_plan_set_reference3d(p32, &v[0]), "set u16 reference");
    tu_expect_ok(ctx, pv_phasecorr_plan_correlate3d(p32, movers32, 1, s32), "after set");
    assert_same_shift(&s16[0], &s32[0]);
    pv_phasecorr_plan_destroy(p16);
    pv_phasecorr_plan_destroy(p32);
    free_all(v, 4);
}

static void test_masked3d_u16_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume v[4], mask16, mask32;
    shifted_pair(&v[0], &v[1], &v[2], &v[3]);
    assert_int_equal(pv_volume_alloc_u16(&mask16, PN, PN, PN), PV_OK);
    assert_int_equal(pv_volume_alloc(&mask32, PN, PN, PN), PV_OK);
    for (int i = 0; i < PN * PN * PN; i++) {
        mask16.data_u16[i] = (uint16_t)(i % 7 != 0);
        mask32.data[i] = mask16.data_u16[i];
    }
    pv_shift s16, s32;
    tu_expect_ok(ctx, pv_phase_correlate_masked3d(ctx, &v[0], &v[1], &mask16, NULL, NULL, &s16),
                 "masked u16");
    tu_expect_ok(ctx, pv_phase_correlate_masked3d(ctx, &v[2], &v[3], &mask32, NULL, NULL, &s32),
                 "masked f32");
    assert_same_shift(&s16, &s32);
    free_all(v, 4);
    pv_volume_free(&mask16);
    pv_volume_free(&mask32);
}

/* Both backends find the shift; the peaks agree within the register
 * cross-check's 1e-3 (the FFT libraries round differently). */
static void test_phasecorr3d_u16_cpu_and_opencl_agree(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_volume v[4];
    shifted_pair(&v[0], &v[1], &v[2], &v[3]);
    pv_shift cpu, dev;
    tu_expect_ok(tu_cpu, pv_phase_correlate3d(tu_cpu, &v[0], &v[1], NULL, &cpu), "cpu");
    tu_expect_ok(cl, pv_phase_correlate3d(cl, &v[0], &v[1], NULL, &dev), "opencl");
    assert_true(cpu.dx == dev.dx && cpu.dy == dev.dy && cpu.dz == dev.dz);
    assert_true(fabs(cpu.peak - dev.peak) <= 1e-3);
    free_all(v, 4);
}

/* A u16 image goes to 2D phase correlation as a u16 view (no host copy):
 * the f32 call's result on the same values. */
static void test_phasecorr2d_u16_image_equals_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    enum { W = 40, H = 30 };
    pv_image a16, b16, a32, b32;
    assert_int_equal(pv_image_alloc(&a16, W, H, PV_PIXEL_U16), PV_OK);
    assert_int_equal(pv_image_alloc(&b16, W, H, PV_PIXEL_U16), PV_OK);
    assert_int_equal(pv_image_alloc(&a32, W, H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&b32, W, H, PV_PIXEL_F32), PV_OK);
    uint16_t *p = a16.data, *q = b16.data;
    float *fp = a32.data, *fq = b32.data;
    uint32_t seed = 5;
    for (int i = 0; i < W * H; i++)
        p[i] = (uint16_t)(tu_rand(&seed) & 0xffff);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            q[y * W + x] = p[((y + H - 2) % H) * W + (x + W - 5) % W];   /* shifted (5, 2) */
    for (int i = 0; i < W * H; i++) {
        fp[i] = p[i];
        fq[i] = q[i];
    }
    pv_shift s16, s32;
    tu_expect_ok(ctx, pv_phase_correlate(ctx, &a16, &b16, NULL, &s16), "2D u16");
    tu_expect_ok(ctx, pv_phase_correlate(ctx, &a32, &b32, NULL, &s32), "2D f32");
    assert_same_shift(&s16, &s32);
    assert_true(s32.dx == 5 && s32.dy == 2);
    pv_image_free(&a16);
    pv_image_free(&b16);
    pv_image_free(&a32);
    pv_image_free(&b32);
}

/* ================================================================== flow */

#define FN 16

static void test_flow3d_u16_inputs_equal_float(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume f16, m16, f32, m32;
    assert_int_equal(pv_volume_alloc_u16(&f16, FN, FN, FN), PV_OK);
    assert_int_equal(pv_volume_alloc_u16(&m16, FN, FN, FN), PV_OK);
    assert_int_equal(pv_volume_alloc(&f32, FN, FN, FN), PV_OK);
    assert_int_equal(pv_volume_alloc(&m32, FN, FN, FN), PV_OK);
    for (int z = 0; z < FN; z++)
        for (int y = 0; y < FN; y++)
            for (int x = 0; x < FN; x++) {
                int i = (z * FN + y) * FN + x;
                f16.data_u16[i] = (uint16_t)(1000 + 300 * sin(0.5 * x) * cos(0.4 * y) + 40 * z);
                m16.data_u16[i] = (uint16_t)(1000 + 300 * sin(0.5 * (x - 1)) * cos(0.4 * y) + 40 * z);
                f32.data[i] = f16.data_u16[i];
                m32.data[i] = m16.data_u16[i];
            }
    pv_flow_params params;
    pv_flow_params_default(&params);
    params.warps = 2;
    params.iterations = 10;
    pv_flow_field a, b;
    assert_int_equal(pv_flow_field_alloc(&a, FN, FN, FN), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&b, FN, FN, FN), PV_OK);
    tu_expect_ok(ctx, pv_flow3d(ctx, &f16, &m16, &params, &a), "flow u16");
    tu_expect_ok(ctx, pv_flow3d(ctx, &f32, &m32, &params, &b), "flow f32");
    const size_t bytes = (size_t)FN * FN * FN * sizeof(float);
    assert_memory_equal(a.u.data, b.u.data, bytes);
    assert_memory_equal(a.v.data, b.v.data, bytes);
    assert_memory_equal(a.w.data, b.w.data, bytes);
    pv_flow_field_free(&a);
    pv_flow_field_free(&b);
    pv_volume_free(&f16);
    pv_volume_free(&m16);
    pv_volume_free(&f32);
    pv_volume_free(&m32);
}

/* ============================================================= bad input */

static void expect_refused(pv_context *ctx, pv_status status, const char *words)
{
    assert_int_equal(status, PV_ERR_INVALID);
    const char *message = pv_context_last_error(ctx);
    if (!strstr(message, words))
        print_error("message \"%s\" lacks \"%s\"\n", message, words);
    assert_non_null(strstr(message, words));
}

static void test_float_only_operations_refuse_u16(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume src16, out;
    assert_int_equal(pv_volume_alloc_u16(&src16, 8, 8, 8), PV_OK);
    assert_int_equal(pv_volume_alloc(&out, 8, 8, 8), PV_OK);
    out.data[5] = 42.0f;
    expect_refused(ctx, pv_gaussian_blur3d(ctx, &src16, &out, 1.0f, 0), "u16");
    assert_true(out.data[5] == 42.0f);   /* output untouched */
    pv_volume gx, gy, gz;
    assert_int_equal(pv_volume_alloc(&gx, 8, 8, 8), PV_OK);
    gy = gz = gx;
    expect_refused(ctx, pv_gradient3d(ctx, &src16, &gx, NULL, NULL, PV_GRADIENT_CENTRAL), "u16");
    (void)gy;
    (void)gz;
    /* A u16 output is refused too: outputs are f32. */
    pv_volume src32;
    assert_int_equal(pv_volume_alloc(&src32, 8, 8, 8), PV_OK);
    pv_volume out16;
    assert_int_equal(pv_volume_alloc_u16(&out16, 8, 8, 8), PV_OK);
    expect_refused(ctx, pv_gaussian_blur3d(ctx, &src32, &out16, 1.0f, 0), "u16");
    /* The warp's moving volume is f32 only. */
    pv_flow_field flow;
    assert_int_equal(pv_flow_field_alloc(&flow, 8, 8, 8), PV_OK);
    expect_refused(ctx, pv_flow_warp(ctx, &src16, &flow, &out), "u16");
    pv_flow_field_free(&flow);
    pv_volume_free(&src16);
    pv_volume_free(&src32);
    pv_volume_free(&out16);
    pv_volume_free(&out);
    pv_volume_free(&gx);
}

static void test_null_data_and_unknown_type_refused(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume bad = pv_volume_wrap_u16(NULL, PN, PN, PN);
    pv_volume v[4];
    shifted_pair(&v[0], &v[1], &v[2], &v[3]);
    pv_shift shift, before;
    memset(&shift, 0, sizeof shift);   /* the padding too: compared below */
    shift.dx = 1;
    shift.peak = 4;
    shift.flags = 5;
    before = shift;
    expect_refused(ctx, pv_phase_correlate3d(ctx, &bad, &v[1], NULL, &shift), "NULL");
    pv_volume unknown = v[0];
    unknown.type = (pv_volume_type)7;
    expect_refused(ctx, pv_phase_correlate3d(ctx, &v[0], &unknown, NULL, &shift),
                   "unknown sample type");
    assert_memory_equal(&shift, &before, sizeof shift);
    pv_octreg_plan *plan = NULL;
    expect_refused(ctx, pv_octreg_plan_create(ctx, &unknown, NULL, &plan), "unknown sample type");
    assert_null(plan);
    expect_refused(ctx, pv_octreg_plan_create(ctx, &bad, NULL, &plan), "NULL");
    pv_volume strided = v[0];
    strided.stride_y = 1;   /* rows overlap */
    expect_refused(ctx, pv_phase_correlate3d(ctx, &strided, &v[1], NULL, &shift), "not a valid");
    free_all(v, 4);
}

/* =============================================================== readers */

/* An output volume with recognisable members and cleared padding, for
 * checks that a failed call leaves it as it was (compared byte by byte). */
static pv_volume marked_volume(pv_volume_type type)
{
    pv_volume v;
    memset(&v, 0, sizeof v);
    v.nx = 1;
    v.ny = 2;
    v.nz = 3;
    v.stride_y = 4;
    v.stride_z = 5;
    v.type = type;
    return v;
}

static pv_volume small_u16(void)
{
    pv_volume v;
    assert_int_equal(pv_volume_alloc_u16(&v, 5, 4, 3), PV_OK);
    for (int i = 0; i < 60; i++)
        v.data_u16[i] = (uint16_t)(i * 1103 + (i % 2 ? 40000 : 0));
    return v;
}

static void test_raw_u16_round_trip(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("u16.raw");
    pv_volume v = small_u16(), back, f32;
    assert_int_equal(pv_volume_write_raw(path, &v), PV_OK);
    assert_int_equal(pv_volume_read_raw_typed(path, 5, 4, 3, PV_VOLUME_U16, &back), PV_OK);
    assert_int_equal(back.type, PV_VOLUME_U16);
    assert_memory_equal(back.data_u16, v.data_u16, 60 * sizeof(uint16_t));
    /* Little-endian on disk whatever the host. */
    FILE *f = fopen(path, "rb");
    unsigned char first[2];
    assert_non_null(f);
    assert_int_equal(fread(first, 1, 2, f), 2);
    fclose(f);
    assert_int_equal(first[0] | first[1] << 8, v.data_u16[0]);
    /* 120 bytes: a 5x4x3 float32 volume would need 240, so the float
     * reader (and the typed one asked for floats) refuse the file. */
    pv_volume untouched = marked_volume(PV_VOLUME_F32), before = untouched;
    assert_int_equal(pv_volume_read_raw(path, 5, 4, 3, &untouched), PV_ERR_FORMAT);
    assert_int_equal(pv_volume_read_raw_typed(path, 5, 4, 3, PV_VOLUME_F32, &untouched),
                     PV_ERR_FORMAT);
    assert_int_equal(pv_volume_read_raw_typed(path, 5, 4, 4, PV_VOLUME_U16, &untouched),
                     PV_ERR_FORMAT);
    assert_int_equal(pv_volume_read_raw_typed(path, 5, 4, 3, (pv_volume_type)9, &untouched),
                     PV_ERR_INVALID);
    /* A size whose bytes overflow is refused before the file is opened. */
    assert_int_equal(pv_volume_read_raw_typed(path, 1 << 30, 1 << 30, 1 << 30, PV_VOLUME_U16,
                                              &untouched), PV_ERR_INVALID);
    assert_memory_equal(&untouched, &before, sizeof untouched);
    /* The float reader of a float file still works beside it. */
    assert_int_equal(pv_volume_alloc(&f32, 2, 2, 2), PV_OK);
    f32.data[3] = 1.5f;
    assert_int_equal(pv_volume_write_raw(path, &f32), PV_OK);
    pv_volume_free(&back);
    assert_int_equal(pv_volume_read_raw_typed(path, 2, 2, 2, PV_VOLUME_F32, &back), PV_OK);
    assert_true(back.data[3] == 1.5f && back.type == PV_VOLUME_F32);
    pv_volume_free(&back);
    pv_volume_free(&f32);
    pv_volume_free(&v);
}

static void test_nifti_u16_round_trip(void **state)
{
    (void)state;
    if (!pv_volume_io_has_nifti())
        skip();
    const char *names[2] = {"u16.nii", "u16.nii.gz"};
    pv_volume v = small_u16();
    for (int n = 0; n < 2; n++) {
        const char *path = tu_tmp_path(names[n]);
        pv_volume native, floats;
        assert_int_equal(pv_volume_write_nifti(path, &v), PV_OK);
        assert_int_equal(pv_volume_read_nifti_native(path, &native), PV_OK);
        assert_int_equal(native.type, PV_VOLUME_U16);
        assert_memory_equal(native.data_u16, v.data_u16, 60 * sizeof(uint16_t));
        assert_int_equal(pv_volume_read_nifti(path, &floats), PV_OK);   /* still floats */
        assert_int_equal(floats.type, PV_VOLUME_F32);
        for (int i = 0; i < 60; i++)
            assert_true(floats.data[i] == (float)v.data_u16[i]);
        pv_volume_free(&native);
        pv_volume_free(&floats);
    }
    /* A float file read natively stays float. */
    pv_volume f32, back;
    assert_int_equal(pv_volume_alloc(&f32, 2, 2, 2), PV_OK);
    f32.data[1] = 0.25f;
    const char *path = tu_tmp_path("f32.nii");
    assert_int_equal(pv_volume_write_nifti(path, &f32), PV_OK);
    assert_int_equal(pv_volume_read_nifti_native(path, &back), PV_OK);
    assert_true(back.type == PV_VOLUME_F32 && back.data[1] == 0.25f);
    pv_volume_free(&back);
    pv_volume_free(&f32);
    pv_volume_free(&v);
}

/* A u16 header that claims 30000^3 voxels over 120 bytes of data is
 * refused before anything is allocated, with *out untouched. */
static void test_nifti_u16_hostile_header(void **state)
{
    (void)state;
    if (!pv_volume_io_has_nifti())
        skip();
    const char *path = tu_tmp_path("hostile16.nii");
    pv_volume v = small_u16();
    assert_int_equal(pv_volume_write_nifti(path, &v), PV_OK);
    pv_volume_free(&v);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    const unsigned char big[6] = {0x30, 0x75, 0x30, 0x75, 0x30, 0x75};   /* 30000 each */
    assert_int_equal(fseek(f, 42, SEEK_SET), 0);
    assert_int_equal(fwrite(big, 1, sizeof big, f), sizeof big);
    fclose(f);
    pv_volume untouched = marked_volume(PV_VOLUME_U16), before = untouched;
    assert_int_equal(pv_volume_read_nifti_native(path, &untouched), PV_ERR_FORMAT);
    assert_memory_equal(&untouched, &before, sizeof untouched);
}

#define BOTH(test)                                                                 \
    {#test "/cpu", test, NULL, NULL, (void *)&tu_cpu_kind},                        \
        {#test "/opencl", test, NULL, NULL, (void *)&tu_opencl_kind}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_wrap_and_sizes),
        cmocka_unit_test(test_raw_u16_round_trip),
        cmocka_unit_test(test_nifti_u16_round_trip),
        cmocka_unit_test(test_nifti_u16_hostile_header),
        BOTH(test_octreg_u16_equals_float),
        BOTH(test_octreg_reconstruct_u16_equals_float),
        cmocka_unit_test(test_octreg_u16_cpu_and_opencl_agree),
        BOTH(test_phasecorr3d_u16_equals_float),
        BOTH(test_phasecorr_plan3d_u16_equals_float),
        BOTH(test_masked3d_u16_equals_float),
        cmocka_unit_test(test_phasecorr3d_u16_cpu_and_opencl_agree),
        BOTH(test_phasecorr2d_u16_image_equals_float),
        BOTH(test_flow3d_u16_inputs_equal_float),
        BOTH(test_float_only_operations_refuse_u16),
        BOTH(test_null_data_and_unknown_type_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
