/* Tests of the octreg module: stripe-wise AO-OCT registration on synthetic
 * volumes with a known eye-motion trace (pv_octreg_synthesize: layered,
 * speckled, cone-mosaic scene; drift, tremor and two micro-saccades; noise),
 * spike rejection of injected outliers, reconstruction, averaging, OpenCL
 * against CPU, and bad input.
 *
 * Volumes are 64 (depth) x 48 (A-lines) x 40 (B-scans): big enough for the
 * default 32-B-scan sub-volumes, small enough for PoCL.  Every test uses this
 * one geometry, because each new transform size costs seconds of kernel
 * compilation on PoCL.
 *
 * OpenCL parts are skipped when no OpenCL device can be had, when
 * PARVIS_BACKEND forces the CPU, or when PARVIS_TEST_SKIP_OPENCL=1.  Under
 * valgrind also run one OpenMP thread:
 *   PARVIS_BACKEND=cpu PARVIS_TEST_SKIP_OPENCL=1 OMP_NUM_THREADS=1 \
 *     libtool --mode=execute valgrind --leak-check=full --error-exitcode=1 \
 *     tests/test_octreg */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ND 64   /* depth */
#define NA 48   /* A-lines */
#define NB 40   /* B-scans */

typedef struct fixture {
    pv_context *cpu;
    pv_context *cl;              /* NULL when no OpenCL device is usable */
    pv_volume reference;
    pv_volume target;            /* integer trace */
    pv_volume fractional;        /* fractional trace */
    pv_octreg_shift trace[NB];
    pv_octreg_shift fraction_trace[NB];
} fixture;

static fixture fx;

/* Integer trace: starts 3 B-scans late (B-scans 0..2 lie before the
 * reference: out of bounds), drifts, trembles and jumps twice. */
static void integer_params(pv_octreg_synth_params *p)
{
    tu_octreg_synth_params(p, ND, NA, NB, 7);
    p->start[1] = 3.0;
    p->integer_shifts = 1;
}

/* The same scene and reference (same seed), other motion: fractional,
 * starting inside the reference. */
static void fractional_params(pv_octreg_synth_params *p)
{
    integer_params(p);
    p->start[0] = -1.3;
    p->start[1] = 0.4;
    p->integer_shifts = 0;
}

static int make_data(void)
{
    pv_octreg_synth_params p;
    integer_params(&p);
    if (pv_volume_alloc(&fx.reference, ND, NA, NB) != PV_OK ||
        pv_volume_alloc(&fx.target, ND, NA, NB) != PV_OK ||
        pv_volume_alloc(&fx.fractional, ND, NA, NB) != PV_OK)
        return -1;
    if (pv_octreg_synthesize(&p, &fx.reference, &fx.target, fx.trace) != PV_OK)
        return -1;
    pv_volume scratch;   /* the same reference again */
    if (pv_volume_alloc(&scratch, ND, NA, NB) != PV_OK)
        return -1;
    fractional_params(&p);
    p.tremor = 0.45;
    p.saccade_size = 5.5;
    pv_status status = pv_octreg_synthesize(&p, &scratch, &fx.fractional, fx.fraction_trace);
    pv_volume_free(&scratch);
    return status == PV_OK ? 0 : -1;
}

static int group_setup(void **state)
{
    (void)state;
    const char *skip = getenv("PARVIS_TEST_SKIP_OPENCL");
    fx.cpu = tu_context(PV_BACKEND_CPU);
    fx.cl = skip && strcmp(skip, "1") == 0 ? NULL : tu_context(PV_BACKEND_OPENCL);
    if (fx.cl && pv_context_backend(fx.cl) != PV_BACKEND_OPENCL) {
        pv_context_destroy(fx.cl);
        fx.cl = NULL;
    }
    return fx.cpu && make_data() == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    pv_context_destroy(fx.cpu);
    pv_context_destroy(fx.cl);
    pv_volume_free(&fx.reference);
    pv_volume_free(&fx.target);
    pv_volume_free(&fx.fractional);
    return 0;
}

static int contexts(pv_context *out[2])
{
    out[0] = fx.cpu;
    out[1] = fx.cl;
    return fx.cl ? 2 : 1;
}

static const char *name_of(pv_context *ctx)
{
    return pv_backend_name(pv_context_backend(ctx));
}

/* ============================================================== helpers */

static pv_octreg_plan *make_plan(pv_context *ctx, const pv_octreg_options *options)
{
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(ctx, &fx.reference, options, &plan);
    if (status != PV_OK)
        print_error("plan: %s\n", pv_context_last_error(ctx));
    assert_int_equal(status, PV_OK);
    return plan;
}

static void register_target(pv_context *ctx, const pv_octreg_options *options,
                            const pv_volume *target, pv_octreg_shift *shifts,
                            pv_octreg_info *info)
{
    pv_octreg_plan *plan = make_plan(ctx, options);
    pv_status status = pv_octreg_register(plan, target, shifts, info);
    if (status != PV_OK)
        print_error("register: %s\n", pv_context_last_error(ctx));
    assert_int_equal(status, PV_OK);
    pv_octreg_plan_destroy(plan);
}

static double axis_error(const pv_octreg_shift *a, const pv_octreg_shift *b)
{
    return fmax(fabs(a->dx - b->dx), fmax(fabs(a->dy - b->dy), fabs(a->dz - b->dz)));
}

typedef struct accuracy {
    int valid, within1, exact, truly_in, truly_in_valid, out_flagged, truly_out;
    double mean_error[3];
} accuracy;

static accuracy measure(const pv_octreg_shift *found, const pv_octreg_shift *truth)
{
    accuracy a;
    memset(&a, 0, sizeof a);
    for (int k = 0; k < NB; k++) {
        a.truly_in += truth[k].valid;
        a.truly_out += !truth[k].valid;
        a.out_flagged += !truth[k].valid && !found[k].valid;
        a.truly_in_valid += truth[k].valid && found[k].valid;
        if (!found[k].valid)
            continue;
        a.valid++;
        a.within1 += axis_error(&found[k], &truth[k]) <= 1.0;
        a.exact += axis_error(&found[k], &truth[k]) < 1e-9;
        a.mean_error[0] += fabs(found[k].dx - truth[k].dx);
        a.mean_error[1] += fabs(found[k].dy - truth[k].dy);
        a.mean_error[2] += fabs(found[k].dz - truth[k].dz);
    }
    for (int i = 0; a.valid && i < 3; i++)
        a.mean_error[i] /= a.valid;
    return a;
}

static void print_accuracy(const char *what, pv_context *ctx, const accuracy *a)
{
    print_message("  %s on %s: %d valid, %d within 1 voxel, %d exact; in-bound %d (%d valid), "
                  "out-of-bound %d (%d flagged); mean |error| dx %.3f dy %.3f dz %.3f\n",
                  what, name_of(ctx), a->valid, a->within1, a->exact, a->truly_in,
                  a->truly_in_valid, a->truly_out, a->out_flagged, a->mean_error[0],
                  a->mean_error[1], a->mean_error[2]);
}

/* =================================================================== tests */

static void test_synthetic_trace_has_what_the_tests_need(void **state)
{
    (void)state;
    int out = 0, jumps = 0;
    for (int k = 0; k < NB; k++) {
        out += !fx.trace[k].valid;
        if (k > 0 && axis_error(&fx.trace[k], &fx.trace[k - 1]) >= 3.0)
            jumps++;
    }
    assert_true(out >= 3);           /* B-scans 0..2 lie before the reference */
    assert_true(jumps >= 2);         /* the two micro-saccades */
    assert_true(fx.trace[0].dy == 3.0 || fx.trace[0].dy == 4.0 || fx.trace[0].dy == 2.0);
}

/* Integer motion: the valid B-scans carry the true shifts exactly (>= 95%;
 * all within 1 voxel), the micro-saccades are followed, and the B-scans
 * that lie outside the reference are flagged invalid. */
static void test_integer_motion_recovered(void **state)
{
    (void)state;
    pv_context *ctxs[2];
    for (int c = 0; c < contexts(ctxs); c++) {
        pv_octreg_shift found[NB];
        pv_octreg_info info;
        register_target(ctxs[c], NULL, &fx.target, found, &info);
        accuracy a = measure(found, fx.trace);
        print_accuracy("integer trace", ctxs[c], &a);
        assert_int_equal(info.stripes, 10);
        assert_true(info.good_stripes >= 8);
        assert_int_equal(info.subvolumes, 2);
        assert_int_equal(info.valid_bscans, a.valid);
        assert_true(a.exact >= 0.95 * a.valid);
        assert_true(a.within1 >= 0.95 * a.valid);
        assert_true(a.truly_in_valid >= 0.9 * a.truly_in);
        assert_int_equal(a.out_flagged, a.truly_out);
        /* The B-scans right after each jump are found and right. */
        for (int k = 1; k < NB; k++)
            if (axis_error(&fx.trace[k], &fx.trace[k - 1]) >= 3.0 && fx.trace[k].valid) {
                assert_true(found[k].valid || found[k + 1 < NB ? k + 1 : k].valid);
                int after = found[k].valid ? k : k + 1;
                assert_true(axis_error(&found[after], &fx.trace[after]) < 1e-9);
            }
    }
}

/* Fractional motion: without refinement every valid B-scan is within one
 * voxel; with it, the mean error per axis is <= 0.2 voxel. */
static void test_subpixel_motion_recovered(void **state)
{
    (void)state;
    pv_context *ctxs[2];
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    for (int c = 0; c < contexts(ctxs); c++) {
        pv_octreg_shift found[NB];
        register_target(ctxs[c], &options, &fx.fractional, found, NULL);
        accuracy whole = measure(found, fx.fraction_trace);
        print_accuracy("fractional trace, integer shifts", ctxs[c], &whole);
        assert_true(whole.within1 >= 0.95 * whole.valid);
        options.subpixel = 1;
        register_target(ctxs[c], &options, &fx.fractional, found, NULL);
        options.subpixel = 0;
        accuracy fine = measure(found, fx.fraction_trace);
        print_accuracy("fractional trace, sub-pixel", ctxs[c], &fine);
        assert_true(fine.valid >= 0.8 * fine.truly_in);
        for (int i = 0; i < 3; i++)
            assert_true(fine.mean_error[i] <= 0.2);
        assert_true(fine.within1 >= 0.95 * fine.valid);
    }
}

/* Outliers: one B-scan replaced by a distant part of the scene (a true
 * match, far from its neighbours' positions), one by noise.  Both must be
 * flagged invalid and given interpolated shifts. */
static void test_injected_outliers_rejected(void **state)
{
    (void)state;
    const int far_bscan = 17, noise_bscan = 26;
    pv_volume corrupted;
    assert_int_equal(pv_volume_alloc(&corrupted, ND, NA, NB), PV_OK);
    memcpy(corrupted.data, fx.target.data, sizeof(float) * ND * NA * NB);
    /* The far B-scan: the reference's B-scan 36 (same scene, 19+ away). */
    memcpy(corrupted.data + (size_t)far_bscan * ND * NA, fx.reference.data + (size_t)36 * ND * NA,
           sizeof(float) * ND * NA);
    uint32_t seed = 99;
    for (int i = 0; i < ND * NA; i++)
        corrupted.data[(size_t)noise_bscan * ND * NA + i] = tu_rand01(&seed);
    pv_context *ctxs[2];
    for (int c = 0; c < contexts(ctxs); c++) {
        pv_octreg_shift found[NB];
        register_target(ctxs[c], NULL, &corrupted, found, NULL);
        assert_false(found[far_bscan].valid);
        assert_false(found[noise_bscan].valid);
        for (int k = 0; k < NB; k++)
            if (k != far_bscan && k != noise_bscan && found[k].valid)
                assert_true(axis_error(&found[k], &fx.trace[k]) <= 1.0);
        /* Interpolated between the neighbours: close to the truth again. */
        assert_true(axis_error(&found[far_bscan], &fx.trace[far_bscan]) <= 2.0);
        assert_true(axis_error(&found[noise_bscan], &fx.trace[noise_bscan]) <= 2.0);
    }
    pv_volume_free(&corrupted);
}

/* A constant B-scan inside a textured target is only marked invalid. */
static void test_constant_bscan_marked_invalid(void **state)
{
    (void)state;
    pv_volume blank;
    assert_int_equal(pv_volume_alloc(&blank, ND, NA, NB), PV_OK);
    memcpy(blank.data, fx.target.data, sizeof(float) * ND * NA * NB);
    memset(blank.data + (size_t)20 * ND * NA, 0, sizeof(float) * ND * NA);
    pv_octreg_shift found[NB];
    register_target(fx.cpu, NULL, &blank, found, NULL);
    assert_false(found[20].valid);
    assert_true(found[19].valid || found[21].valid);
    pv_volume_free(&blank);
}

static float at(const pv_volume *v, int d, int a, int k)
{
    return v->data[k * v->stride_z + a * v->stride_y + d];
}

/* Reconstruction with the true integer trace: every voxel a single B-scan
 * reaches is that B-scan's voxel moved by the shift, exactly; averaged
 * overlaps and gaps follow the coverage; projections are the means of the
 * covered voxels. */
static void check_placement(const pv_volume *registered, const float *coverage, float gap)
{
    int hits[NB] = {0}, source[NB];
    for (int k = 0; k < NB; k++)
        if (fx.trace[k].valid) {
            int j = k - (int)fx.trace[k].dy;
            if (j >= 0 && j < NB) {
                hits[j]++;
                source[j] = k;
            }
        }
    for (int j = 0; j < NB; j++) {
        assert_float_equal(coverage[j], (float)hits[j], 1e-6);
        if (hits[j] != 1) {
            if (hits[j] == 0)
                assert_true(at(registered, ND / 2, NA / 2, j) == gap);
            continue;
        }
        int k = source[j], dx = (int)fx.trace[k].dx, dz = (int)fx.trace[k].dz;
        for (int a = 0; a < NA; a++)
            for (int d = 0; d < ND; d++) {
                int sa = a + dx, sd = d + dz;
                float expect = sa >= 0 && sa < NA && sd >= 0 && sd < ND ? at(&fx.target, sd, sa, k)
                                                                         : gap;
                assert_true(at(registered, d, a, j) == expect);
            }
    }
}

/* The mean of B-scan j's samples along depth (along_depth: at A-line i)
 * or along the A-lines (at depth i), gaps left out; gap when all are. */
static double mean_without_gaps(const pv_volume *v, int along_depth, int i, int j, float gap)
{
    double total = 0.0;
    int n = 0;
    for (int k = 0; k < (along_depth ? ND : NA); k++) {
        float value = along_depth ? at(v, k, i, j) : at(v, i, k, j);
        if (value != gap) {
            total += value;
            n++;
        }
    }
    return n ? total / n : gap;
}

static void check_projections(const pv_volume *v, const pv_image *enface, const pv_image *slow,
                              float gap)
{
    for (int j = 0; j < NB; j++)
        for (int a = 0; a < NA; a++) {
            float got = ((const float *)enface->data)[j * enface->stride + a];
            assert_float_equal(got, mean_without_gaps(v, 1, a, j, gap), 1e-4);
        }
    for (int d = 0; d < ND; d++)
        for (int j = 0; j < NB; j++) {
            float got = ((const float *)slow->data)[d * slow->stride + j];
            assert_float_equal(got, mean_without_gaps(v, 0, d, j, gap), 1e-4);
        }
}

static void test_reconstruction_places_bscans(void **state)
{
    (void)state;
    const float gap = -1000.0f;   /* no scene value comes near it */
    pv_context *ctxs[2];
    for (int c = 0; c < contexts(ctxs); c++) {
        pv_octreg_plan *plan = make_plan(ctxs[c], NULL);
        pv_volume registered;
        pv_image enface, slow;
        float coverage[NB];
        assert_int_equal(pv_volume_alloc(&registered, ND, NA, NB), PV_OK);
        assert_int_equal(pv_image_alloc(&enface, NA, NB, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_image_alloc(&slow, NB, ND, PV_PIXEL_F32), PV_OK);
        pv_status status = pv_octreg_reconstruct(plan, &fx.target, fx.trace, gap, &registered,
                                                 &enface, &slow, coverage);
        assert_int_equal(status, PV_OK);
        check_placement(&registered, coverage, gap);
        check_projections(&registered, &enface, &slow, gap);
        pv_volume_free(&registered);
        image_list_free(&enface, &slow, NULL);
        pv_octreg_plan_destroy(plan);
    }
}

/* Registration brings the target onto the reference: the registered
 * volume's covered voxels differ from the reference by about the noise,
 * far less than the unregistered target does. */
static double mean_abs_difference(const pv_volume *a, const pv_volume *b, float gap)
{
    double total = 0.0;
    long n = 0;
    for (size_t i = 0; i < (size_t)ND * NA * NB; i++)
        if (a->data[i] != gap) {
            total += fabs(a->data[i] - b->data[i]);
            n++;
        }
    return n ? total / n : INFINITY;
}

static void test_average_of_registered_targets(void **state)
{
    (void)state;
    const float gap = -1000.0f;
    pv_context *ctxs[2];
    for (int c = 0; c < contexts(ctxs); c++) {
        pv_octreg_plan *plan = make_plan(ctxs[c], NULL);
        pv_volume averaged, targets[2] = {fx.target, fx.fractional};
        pv_octreg_shift shifts[2 * NB], single[NB];
        float coverage[NB];
        assert_int_equal(pv_volume_alloc(&averaged, ND, NA, NB), PV_OK);
        assert_int_equal(pv_octreg_average(plan, targets, 2, shifts, gap, &averaged, NULL, NULL,
                                           coverage),
                         PV_OK);
        assert_int_equal(pv_octreg_register(plan, &fx.fractional, single, NULL), PV_OK);
        for (int k = 0; k < NB; k++) {
            assert_true(axis_error(&single[k], &shifts[NB + k]) == 0.0);
            assert_int_equal(single[k].valid, shifts[NB + k].valid);
        }
        double before = mean_abs_difference(&fx.target, &fx.reference, gap);
        double after = mean_abs_difference(&averaged, &fx.reference, gap);
        print_message("  average on %s: mean |target - reference| %.4f, |average - reference| "
                      "%.4f\n",
                      name_of(ctxs[c]), before, after);
        assert_true(after < 0.5 * before);
        float total = 0.0f;
        for (int j = 0; j < NB; j++)
            total += coverage[j];
        assert_true(total > 1.5f * NB);
        pv_volume_free(&averaged);
        pv_octreg_plan_destroy(plan);
    }
}

/* OpenCL and CPU: the same integer shifts on >= 99% of the B-scans, the
 * same valid flags, and the same reconstruction. */
static void test_opencl_matches_cpu(void **state)
{
    (void)state;
    if (!fx.cl)
        skip();
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    options.subpixel = 1;
    pv_octreg_shift cpu[NB], cl[NB];
    register_target(fx.cpu, &options, &fx.fractional, cpu, NULL);
    register_target(fx.cl, &options, &fx.fractional, cl, NULL);
    int same = 0;
    for (int k = 0; k < NB; k++)
        same += cpu[k].valid == cl[k].valid && axis_error(&cpu[k], &cl[k]) <= 0.05;
    print_message("  OpenCL vs CPU: %d of %d B-scans agree\n", same, NB);
    assert_true(same >= 0.99 * NB);
    pv_volume a, b;
    pv_image ea, eb;
    assert_int_equal(pv_volume_alloc(&a, ND, NA, NB), PV_OK);
    assert_int_equal(pv_volume_alloc(&b, ND, NA, NB), PV_OK);
    assert_int_equal(pv_image_alloc(&ea, NA, NB, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&eb, NA, NB, PV_PIXEL_F32), PV_OK);
    pv_octreg_plan *pc = make_plan(fx.cpu, &options), *pl = make_plan(fx.cl, &options);
    assert_int_equal(pv_octreg_reconstruct(pc, &fx.fractional, cpu, 0.0f, &a, &ea, NULL, NULL),
                     PV_OK);
    assert_int_equal(pv_octreg_reconstruct(pl, &fx.fractional, cpu, 0.0f, &b, &eb, NULL, NULL),
                     PV_OK);
    double worst = 0.0;
    for (size_t i = 0; i < (size_t)ND * NA * NB; i++)
        worst = fmax(worst, fabs(a.data[i] - b.data[i]));
    assert_true(worst <= 1e-4);
    assert_true(tu_rel_linf(&ea, &eb) <= 1e-5);
    pv_octreg_plan_destroy(pc);
    pv_octreg_plan_destroy(pl);
    pv_volume_free(&a);
    pv_volume_free(&b);
    image_list_free(&ea, &eb, NULL);
}

/* The device peak search and batching against the CPU: fine batches of 3
 * B-scans with sub-volumes every 8 (so the sub-volume changes inside a
 * batch and the last batch is partial), 3 arg-max groups per launch (an
 * uneven split of each map), and the fine maps by 3D inverse transforms
 * (OCT_FINE_2D=0; the other tests run the default 2D path).  Same shifts and valid flags on >= 99% of
 * the B-scans (all 40 here), peaks within 1e-4 (the FFT libraries'
 * rounding). */
static void test_opencl_batches_match_cpu(void **state)
{
    (void)state;
    if (!fx.cl)
        skip();
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    options.batch = 3;
    options.subvolume_step = 8;
    assert_int_equal(pv_tune_set(fx.cl, "octreg", "OCT_REDUCE_GROUPS", 3), PV_OK);
    assert_int_equal(pv_tune_set(fx.cl, "octreg", "OCT_FINE_2D", 0), PV_OK);
    pv_octreg_shift cpu[NB], cl[NB];
    register_target(fx.cpu, &options, &fx.target, cpu, NULL);
    register_target(fx.cl, &options, &fx.target, cl, NULL);
    assert_int_equal(pv_tune_set(fx.cl, "octreg", "OCT_REDUCE_GROUPS", 2048), PV_OK);
    assert_int_equal(pv_tune_set(fx.cl, "octreg", "OCT_FINE_2D", 1), PV_OK);
    int same = 0;
    double worst_peak = 0.0;
    for (int k = 0; k < NB; k++) {
        same += cpu[k].valid == cl[k].valid && axis_error(&cpu[k], &cl[k]) < 1e-9;
        worst_peak = fmax(worst_peak, fabs(cpu[k].peak - cl[k].peak));
    }
    print_message("  OpenCL vs CPU, batches of 3: %d of %d B-scans agree, peaks within %.2g\n",
                  same, NB, worst_peak);
    assert_true(same >= 0.99 * NB);
    assert_true(worst_peak <= 1e-4);
}

/* Cross-check mode runs the CPU beside OpenCL and accepts agreeing results. */
static void test_crosscheck_mode(void **state)
{
    (void)state;
    if (!fx.cl)
        skip();
    assert_int_equal(pv_context_set_crosscheck(fx.cl, 1), PV_OK);
    pv_octreg_shift found[NB];
    register_target(fx.cl, NULL, &fx.target, found, NULL);
    assert_int_equal(pv_context_set_crosscheck(fx.cl, 0), PV_OK);
    accuracy a = measure(found, fx.trace);
    assert_true(a.exact >= 0.95 * a.valid);
}

/* ============================================================ bad input */

static void expect_invalid(pv_context *ctx, pv_status status)
{
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(strlen(pv_last_error()) > 0);
    (void)ctx;
}

static void test_plan_bad_input(void **state)
{
    (void)state;
    pv_context *ctx = fx.cpu;
    pv_octreg_plan *plan = (pv_octreg_plan *)&fx;   /* must stay untouched */
    pv_octreg_options o;
    expect_invalid(ctx, pv_octreg_plan_create(NULL, &fx.reference, NULL, &plan));
    expect_invalid(ctx, pv_octreg_plan_create(ctx, NULL, NULL, &plan));
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, NULL, NULL));
    pv_octreg_options_default(&o);
    o.stripes = 1;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, &o, &plan));
    pv_octreg_options_default(&o);
    o.subvolume_width = 17;   /* a prime: no fast transform */
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, &o, &plan));
    pv_octreg_options_default(&o);
    o.tolerance = NAN;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, &o, &plan));
    pv_octreg_options_default(&o);
    o.subvolume_step = 0;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, &o, &plan));
    /* Too thin: fewer B-scans than a sub-volume, or than the stripes need. */
    pv_volume thin = fx.reference;
    thin.nz = 24;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &thin, NULL, &plan));
    pv_octreg_options_default(&o);
    o.stripes = 39;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &fx.reference, &o, &plan));
    assert_ptr_equal(plan, (pv_octreg_plan *)&fx);
}

static void test_constant_and_nan_volumes(void **state)
{
    (void)state;
    pv_context *ctx = fx.cpu;
    pv_volume zero;
    assert_int_equal(pv_volume_alloc(&zero, ND, NA, NB), PV_OK);
    pv_octreg_plan *plan = NULL;
    expect_invalid(ctx, pv_octreg_plan_create(ctx, &zero, NULL, &plan));
    assert_null(plan);
    plan = make_plan(ctx, NULL);
    pv_octreg_shift shifts[NB], untouched[NB];
    memset(shifts, 0, sizeof shifts);   /* padding bytes too: compared below */
    for (int k = 0; k < NB; k++) {
        shifts[k].dx = 123.0;
        shifts[k].dy = 456.0;
        shifts[k].valid = 7;
    }
    memcpy(untouched, shifts, sizeof shifts);
    expect_invalid(ctx, pv_octreg_register(plan, &zero, shifts, NULL));
    zero.data[5] = NAN;
    expect_invalid(ctx, pv_octreg_register(plan, &zero, shifts, NULL));
    assert_memory_equal(shifts, untouched, sizeof shifts);
    pv_octreg_plan_destroy(plan);
    pv_volume_free(&zero);
}

static void test_register_bad_input(void **state)
{
    (void)state;
    pv_context *ctx = fx.cpu;
    pv_octreg_plan *plan = make_plan(ctx, NULL);
    pv_octreg_shift shifts[NB], untouched[NB];
    memset(shifts, 0x5A, sizeof shifts);
    memcpy(untouched, shifts, sizeof shifts);
    expect_invalid(ctx, pv_octreg_register(NULL, &fx.target, shifts, NULL));
    expect_invalid(ctx, pv_octreg_register(plan, NULL, shifts, NULL));
    expect_invalid(ctx, pv_octreg_register(plan, &fx.target, NULL, NULL));
    /* Other B-scan geometry: A-lines and depth swapped. */
    pv_volume other = fx.target;
    other.nx = NA;
    other.ny = ND;
    other.stride_y = NA;
    expect_invalid(ctx, pv_octreg_register(plan, &other, shifts, NULL));
    other = fx.target;
    other.nz = NB - 1;
    expect_invalid(ctx, pv_octreg_register(plan, &other, shifts, NULL));
    assert_memory_equal(shifts, untouched, sizeof shifts);
    /* Reconstruction: outputs of the wrong size, none at all, bad shifts. */
    pv_image small;
    assert_int_equal(pv_image_alloc(&small, NA - 1, NB, PV_PIXEL_F32), PV_OK);
    expect_invalid(ctx, pv_octreg_reconstruct(plan, &fx.target, fx.trace, 0.0f, NULL, &small,
                                              NULL, NULL));
    expect_invalid(ctx, pv_octreg_reconstruct(plan, &fx.target, fx.trace, 0.0f, NULL, NULL, NULL,
                                              NULL));
    pv_octreg_shift bad[NB];
    memcpy(bad, fx.trace, sizeof bad);
    bad[3].dx = INFINITY;
    float coverage[NB];
    expect_invalid(ctx, pv_octreg_reconstruct(plan, &fx.target, bad, 0.0f, NULL, NULL, NULL,
                                              coverage));
    expect_invalid(ctx, pv_octreg_average(plan, &fx.target, 0, NULL, 0.0f, NULL, NULL, NULL,
                                          coverage));
    pv_image_free(&small);
    pv_octreg_plan_destroy(plan);
}

static void test_synthesize_bad_input(void **state)
{
    (void)state;
    pv_octreg_synth_params p;
    pv_octreg_synth_params_default(&p);
    pv_volume small;
    assert_int_equal(pv_volume_alloc(&small, 8, 8, 8), PV_OK);
    assert_int_equal(pv_octreg_synthesize(&p, &small, &small, NULL), PV_ERR_INVALID);
    p.size[0] = p.size[1] = p.size[2] = 8;
    p.noise = -1.0;
    assert_int_equal(pv_octreg_synthesize(&p, &small, &small, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_octreg_synthesize(NULL, &small, &small, NULL), PV_ERR_INVALID);
    pv_volume_free(&small);
}

int main(void)
{
    /* Measured FFTW plans of these sizes take longer to make than the tests
     * take to run; the user's choice wins when set. */
    setenv("PARVIS_FFTW_PLANNER", "estimate", 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synthetic_trace_has_what_the_tests_need),
        cmocka_unit_test(test_integer_motion_recovered),
        cmocka_unit_test(test_subpixel_motion_recovered),
        cmocka_unit_test(test_injected_outliers_rejected),
        cmocka_unit_test(test_constant_bscan_marked_invalid),
        cmocka_unit_test(test_reconstruction_places_bscans),
        cmocka_unit_test(test_average_of_registered_targets),
        cmocka_unit_test(test_opencl_matches_cpu),
        cmocka_unit_test(test_opencl_batches_match_cpu),
        cmocka_unit_test(test_crosscheck_mode),
        cmocka_unit_test(test_plan_bad_input),
        cmocka_unit_test(test_constant_and_nan_volumes),
        cmocka_unit_test(test_register_bad_input),
        cmocka_unit_test(test_synthesize_bad_input),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
