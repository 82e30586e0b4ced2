/* Tests of the flow module: CLG-3D optical flow with a divergence term.
 *
 * Synthetic data: a band-limited volume f (a sum of plane waves with
 * wavelengths of 7 .. 25 voxels) and a smooth known flow w; the moving
 * volume samples f at x, the fixed volume at x + w(x), so
 * moving(x + w(x)) = fixed(x) holds exactly.  Errors are measured away
 * from the faces (BORDER voxels), where motion leaves the volume.
 *
 *   - known answers on both backends: small motion (max 1 voxel) mean
 *     endpoint error <= 0.1 voxel; large motion (max 4 voxels) with warps
 *     and a pyramid <= 0.3; a 2D image (nz = 1); the convergence stop;
 *     trilinear warping of ramps and integer shifts;
 *   - the divergence term: on a divergence-free field beta > 0 lowers the
 *     mean |div w| and raises the endpoint error by at most 10 %;
 *   - OpenCL against CPU: max abs flow difference <= 1e-3 voxel
 *     (PV_FLOW_TOLERANCE) after the full run, on odd, non-cubic, strided
 *     and guarded volumes, with and without beta and a pyramid;
 *   - bad input: mismatched sizes, volumes smaller than the kernel,
 *     alpha <= 0, NaN voxels, ... give PV_ERR_INVALID and leave the flow
 *     untouched.
 *
 * OpenCL parts are skipped when no OpenCL device can be had, when
 * PARVIS_BACKEND forces the CPU, or when PARVIS_TEST_SKIP_OPENCL=1 (for
 * valgrind).  Sizes are small (<= 32^3) so PoCL runs them in seconds. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BORDER 3
#define SENTINEL 7.0f
#define TWO_PI 6.28318530717958647692
#define WAVES 12



/* ------------------------------------------------------------------ setup */

/* ------------------------------------------------------------- synthetic */

typedef struct wave {
    double k[3];
    double phase, amplitude;
} wave;

typedef struct scene {
    wave waves[WAVES];
    double motion;  /* amplitude of each flow component */
    int div_free;   /* 1: each component independent of its own axis */
    int flat;       /* nz = 1 */
} scene;

/* Plane waves with |k| in [k_lo, k_hi] rad/voxel, random directions
 * (in the xy plane for a flat scene). */
static void make_waves(scene *s, uint32_t seed, double k_lo, double k_hi)
{
    uint32_t state = seed;
    for (int i = 0; i < WAVES; i++) {
        double dir[3], len = 0.0;
        for (int a = 0; a < 3; a++) {
            dir[a] = a == 2 && s->flat ? 0.0 : 2.0 * tu_rand01(&state) - 1.0;
            len += dir[a] * dir[a];
        }
        len = sqrt(len) + 1e-12;
        double k = k_lo + (k_hi - k_lo) * tu_rand01(&state);
        for (int a = 0; a < 3; a++)
            s->waves[i].k[a] = k * dir[a] / len;
        s->waves[i].phase = TWO_PI * tu_rand01(&state);
        s->waves[i].amplitude = 0.5 / WAVES * (0.5 + tu_rand01(&state));
    }
}

/* A scene of that motion and kind, its waves drawn from seed with |k| in
 * [k_lo, k_hi]. */
static scene make_scene(double motion, int div_free, int flat, uint32_t seed, double k_lo,
                        double k_hi)
{
    scene s = {.motion = motion, .div_free = div_free, .flat = flat};
    make_waves(&s, seed, k_lo, k_hi);
    return s;
}

static double intensity(const scene *s, double x, double y, double z)
{
    double v = 0.5;
    for (int i = 0; i < WAVES; i++) {
        const wave *w = &s->waves[i];
        v += w->amplitude * cos(w->k[0] * x + w->k[1] * y + w->k[2] * z + w->phase);
    }
    return v;
}

/* The true flow at (x, y, z) of an n-voxel volume. */
static void true_flow(const scene *s, const int n[3], double x, double y, double z, double f[3])
{
    const double L = 2.0 * n[0]; /* one period over twice the volume */
    const double A = s->motion;
    if (s->div_free) {
        f[0] = A * sin(TWO_PI * (y + z) / L);
        f[1] = A * sin(TWO_PI * (x + z) / L + 1.0);
        f[2] = s->flat ? 0.0 : A * cos(TWO_PI * (x + y) / L);
        return;
    }
    f[0] = A * sin(TWO_PI * x / L + 0.3) * cos(TWO_PI * y / L);
    f[1] = A * cos(TWO_PI * (y + z) / (1.5 * L));
    f[2] = s->flat ? 0.0 : A * sin(TWO_PI * (x + z) / L + 1.0);
}

static float *vox(const pv_volume *v, int x, int y, int z)
{
    return v->data + x + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z;
}

/* fixed(x) = f(x + w(x)), moving(x) = f(x), truth = w. */
static void render(const scene *s, pv_volume *fixed, pv_volume *moving, pv_flow_field *truth)
{
    const int n[3] = {fixed->nx, fixed->ny, fixed->nz};
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                double f[3];
                true_flow(s, n, x, y, z, f);
                *vox(fixed, x, y, z) = (float)intensity(s, x + f[0], y + f[1], z + f[2]);
                *vox(moving, x, y, z) = (float)intensity(s, x, y, z);
                *vox(&truth->u, x, y, z) = (float)f[0];
                *vox(&truth->v, x, y, z) = (float)f[1];
                *vox(&truth->w, x, y, z) = (float)f[2];
            }
}

typedef struct problem {
    pv_volume fixed, moving;
    pv_flow_field truth, flow;
} problem;

static void problem_make(problem *p, const scene *s, int nx, int ny, int nz)
{
    assert_int_equal(pv_volume_alloc(&p->fixed, nx, ny, nz), PV_OK);
    assert_int_equal(pv_volume_alloc(&p->moving, nx, ny, nz), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&p->truth, nx, ny, nz), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&p->flow, nx, ny, nz), PV_OK);
    render(s, &p->fixed, &p->moving, &p->truth);
}

static void problem_free(problem *p)
{
    pv_volume_free(&p->fixed);
    pv_volume_free(&p->moving);
    pv_flow_field_free(&p->truth);
    pv_flow_field_free(&p->flow);
}

static double run_and_score(pv_context *ctx, problem *p, const pv_flow_params *params,
                            const char *what)
{
    tu_expect_ok(ctx, pv_flow3d(ctx, &p->fixed, &p->moving, params, &p->flow), what);
    double mean = 0.0, max = 0.0;
    assert_int_equal(pv_flow_endpoint_error(&p->flow, &p->truth, BORDER, &mean, &max), PV_OK);
    printf("    %s on %s: mean endpoint error %.4f voxel (max %.3f)\n", what,
           pv_backend_name(pv_context_backend(ctx)), mean, max);
    return mean;
}

/* Test parameters: volumes in [0, 1] with gradients ~0.05 per voxel; the
 * smoothing taps derived from rho, more iterations than the default. */
static pv_flow_params test_params(void)
{
    pv_flow_params p;
    pv_flow_params_default(&p);
    p.alpha = 1e-3f;
    p.kernel_size = 0;
    p.iterations = 100;
    return p;
}

static void assert_at_most(double value, double limit, const char *what)
{
    if (!(value <= limit))
        fail_msg("%s: %g > %g", what, value, limit);
}

/* ------------------------------------------------------------ known answers */

static void test_defaults(void **state)
{
    (void)state;
    pv_flow_params p;
    pv_flow_params_default(&p);
    assert_int_equal(p.warps, 5);
    assert_int_equal(p.iterations, 50);
    assert_int_equal(p.kernel_size, 15);
    assert_int_equal(p.levels, 1);
    assert_true(p.alpha > 0.0f && p.beta == 0.0f && p.spacing == 1.0f);
    assert_true(p.tolerance == 0.0f && p.check_every >= 1);
}

static void test_small_motion(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.55, 0, 0, 11u, 0.3, 1.0);
    problem p;
    problem_make(&p, &s, 24, 24, 24);
    pv_flow_params params = test_params();
    double epe = run_and_score(ctx, &p, &params, "small motion");
    assert_at_most(epe, 0.1, "small motion mean endpoint error");
    problem_free(&p);
}

static void test_large_motion_pyramid(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(2.3, 0, 0, 23u, 0.25, 0.7);
    problem p;
    problem_make(&p, &s, 32, 32, 32);
    pv_flow_params params = test_params();
    params.alpha = 5e-4f;
    params.levels = 2;
    params.warps = 5;
    params.iterations = 60;
    double epe = run_and_score(ctx, &p, &params, "large motion, 2 levels");
    assert_at_most(epe, 0.3, "large motion mean endpoint error");
    problem_free(&p);
}

static void test_image_2d(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.7, 0, 1, 5u, 0.25, 0.9);
    problem p;
    problem_make(&p, &s, 48, 40, 1);
    pv_flow_params params = test_params();
    double epe = run_and_score(ctx, &p, &params, "2D image");
    assert_at_most(epe, 0.1, "2D mean endpoint error");
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 48; x++)
            assert_true(*vox(&p.flow.w, x, y, 0) == 0.0f);
    problem_free(&p);
}

/* With a tolerance the iterations stop early and the answer stays good. */
static void test_convergence_stop(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.55, 0, 0, 11u, 0.3, 1.0);
    problem p;
    problem_make(&p, &s, 24, 24, 24);
    pv_flow_params params = test_params();
    params.iterations = 400;
    params.tolerance = 1e-3f;
    params.check_every = 10;
    pv_flow_plan *plan = NULL;
    assert_int_equal(pv_flow_plan_create(ctx, 24, 24, 24, &params, &plan), PV_OK);
    assert_int_equal(pv_flow_plan_run(plan, &p.fixed, &p.moving, &p.flow), PV_OK);
    pv_flow_stats stats;
    assert_int_equal(pv_flow_plan_stats(plan, &stats), PV_OK);
    printf("    convergence stop: %d of at most %d iterations\n", stats.iterations,
           params.iterations * params.warps);
    assert_true(stats.iterations > 0 && stats.iterations < params.iterations * params.warps);
    assert_true(stats.iterations % params.check_every == 0);
    assert_true(stats.jacobi_ms >= 0.0 && stats.tensor_ms >= 0.0 && stats.resample_ms >= 0.0);
    double mean;
    assert_int_equal(pv_flow_endpoint_error(&p.flow, &p.truth, BORDER, &mean, NULL), PV_OK);
    assert_at_most(mean, 0.1, "converged mean endpoint error");
    pv_flow_plan_destroy(plan);
    problem_free(&p);
}

/* A plan runs repeatedly with identical results. */
static void test_plan_reuse(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.5, 0, 0, 3u, 0.25, 0.9);
    problem p;
    problem_make(&p, &s, 20, 18, 17);
    pv_flow_params params = test_params();
    params.iterations = 20;
    params.warps = 2;
    pv_flow_plan *plan = NULL;
    assert_int_equal(pv_flow_plan_create(ctx, 20, 18, 17, &params, &plan), PV_OK);
    pv_flow_field again;
    assert_int_equal(pv_flow_field_alloc(&again, 20, 18, 17), PV_OK);
    assert_int_equal(pv_flow_plan_run(plan, &p.fixed, &p.moving, &p.flow), PV_OK);
    assert_int_equal(pv_flow_plan_run(plan, &p.fixed, &p.moving, &again), PV_OK);
    double diff = 1.0;
    assert_int_equal(pv_flow_max_difference(&p.flow, &again, &diff), PV_OK);
    assert_true(diff == 0.0);
    pv_flow_field_free(&again);
    pv_flow_plan_destroy(plan);
    problem_free(&p);
}

/* ------------------------------------------------------- divergence term */

static void test_divergence_term(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.55, 1, 0, 41u, 0.3, 1.0);
    problem p;
    problem_make(&p, &s, 24, 24, 24);
    pv_flow_params params = test_params();
    double epe_plain = run_and_score(ctx, &p, &params, "beta = 0");
    double div_plain;
    assert_int_equal(pv_flow_divergence(&p.flow, BORDER, &div_plain), PV_OK);
    params.beta = 2.0f * params.alpha;
    double epe_div = run_and_score(ctx, &p, &params, "beta = 2 alpha");
    double div_beta;
    assert_int_equal(pv_flow_divergence(&p.flow, BORDER, &div_beta), PV_OK);
    printf("    mean |div w|: %.5f (beta = 0) -> %.5f (beta = 2 alpha)\n", div_plain, div_beta);
    assert_true(div_beta < div_plain);
    assert_at_most(epe_div, 1.1 * epe_plain, "endpoint error with beta");
    problem_free(&p);
}

/* At the largest beta accepted the iteration stays bounded. */
static void test_divergence_stable_at_limit(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.5, 1, 0, 43u, 0.3, 1.0);
    problem p;
    problem_make(&p, &s, 20, 20, 20);
    pv_flow_params params = test_params();
    params.beta = 2.0f * params.alpha;
    params.iterations = 300;
    params.warps = 2;
    double epe = run_and_score(ctx, &p, &params, "beta = 2 alpha, 2 x 300 iterations");
    assert_at_most(epe, 0.2, "endpoint error at beta = 2 alpha");
    problem_free(&p);
}

/* ------------------------------------------------------------------ warp */

static void test_warp_known(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int nx = 9, ny = 7, nz = 6;
    pv_volume moving, warped;
    pv_flow_field flow;
    assert_int_equal(pv_volume_alloc(&moving, nx, ny, nz), PV_OK);
    assert_int_equal(pv_volume_alloc(&warped, nx, ny, nz), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&flow, nx, ny, nz), PV_OK);
    /* A linear ramp is reproduced exactly by trilinear sampling inside. */
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                *vox(&moving, x, y, z) = (float)(x + 2 * y + 4 * z);
                *vox(&flow.u, x, y, z) = 0.25f;
                *vox(&flow.v, x, y, z) = -0.5f;
                *vox(&flow.w, x, y, z) = 1.0f;
            }
    assert_int_equal(pv_flow_warp(ctx, &moving, &flow, &warped), PV_OK);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float cx = fminf(fmaxf(x + 0.25f, 0.0f), nx - 1.0f);
                float cy = fminf(fmaxf(y - 0.5f, 0.0f), ny - 1.0f);
                float cz = fminf(fmaxf(z + 1.0f, 0.0f), nz - 1.0f);
                assert_float_equal(*vox(&warped, x, y, z), cx + 2 * cy + 4 * cz, 1e-5);
            }
    pv_volume_free(&moving);
    pv_volume_free(&warped);
    pv_flow_field_free(&flow);
}

/* -------------------------------------------------------- OpenCL vs CPU */

/* A volume in a larger buffer (strided rows and slices) surrounded by
 * sentinels. */
typedef struct guarded_volume {
    float *block;
    size_t count;
    pv_volume v;
} guarded_volume;

#define GUARD 3
#define GUARD_VALUE (-4321.5f)

static void guarded_alloc(guarded_volume *g, int nx, int ny, int nz)
{
    const int sy = nx + 2 * GUARD, py = ny + 2 * GUARD;
    g->count = (size_t)sy * py * (nz + 2 * GUARD);
    g->block = malloc(g->count * sizeof(float));
    assert_non_null(g->block);
    for (size_t i = 0; i < g->count; i++)
        g->block[i] = GUARD_VALUE;
    g->v.nx = nx;
    g->v.ny = ny;
    g->v.nz = nz;
    g->v.stride_y = sy;
    g->v.stride_z = (ptrdiff_t)sy * py;
    g->v.type = PV_VOLUME_F32;   /* filled member by member: the type too */
    g->v.data = g->block + GUARD + (ptrdiff_t)GUARD * sy + (ptrdiff_t)GUARD * g->v.stride_z;
}

static int guarded_intact(const guarded_volume *g)
{
    for (size_t i = 0; i < g->count; i++) {
        ptrdiff_t off = (ptrdiff_t)i - (g->v.data - g->block);
        ptrdiff_t z = off >= 0 ? off / g->v.stride_z : -1;
        ptrdiff_t rest = off - z * g->v.stride_z;
        ptrdiff_t y = rest / g->v.stride_y, x = rest % g->v.stride_y;
        int inside = off >= 0 && z < g->v.nz && y < g->v.ny && x < g->v.nx;
        if (!inside && g->block[i] != GUARD_VALUE)
            return 0;
    }
    return 1;
}

static void copy_volume(const pv_volume *src, pv_volume *dst)
{
    for (int z = 0; z < src->nz; z++)
        for (int y = 0; y < src->ny; y++)
            for (int x = 0; x < src->nx; x++)
                *vox(dst, x, y, z) = *vox(src, x, y, z);
}

static void compare_backends(pv_context *cl, const scene *s, const int n[3],
                             const pv_flow_params *params, const char *what)
{
    problem p;
    problem_make(&p, s, n[0], n[1], n[2]);
    guarded_volume gfixed, gmoving, gflow[3];
    guarded_alloc(&gfixed, n[0], n[1], n[2]);
    guarded_alloc(&gmoving, n[0], n[1], n[2]);
    copy_volume(&p.fixed, &gfixed.v);
    copy_volume(&p.moving, &gmoving.v);
    for (int c = 0; c < 3; c++)
        guarded_alloc(&gflow[c], n[0], n[1], n[2]);
    pv_flow_field cl_flow = {gflow[0].v, gflow[1].v, gflow[2].v};
    assert_int_equal(pv_flow3d(tu_cpu, &p.fixed, &p.moving, params, &p.flow), PV_OK);
    tu_expect_ok(cl, pv_flow3d(cl, &gfixed.v, &gmoving.v, params, &cl_flow), what);
    double diff = 1.0;
    assert_int_equal(pv_flow_max_difference(&cl_flow, &p.flow, &diff), PV_OK);
    printf("    %s: OpenCL vs CPU max |diff| %.3g voxel\n", what, diff);
    assert_at_most(diff, PV_FLOW_TOLERANCE, what);
    for (int c = 0; c < 3; c++) {
        assert_true(guarded_intact(&gflow[c]));
        free(gflow[c].block);
    }
    free(gfixed.block);
    free(gmoving.block);
    problem_free(&p);
}

static void test_cl_agreement(void **state)
{
    pv_context *cl = tu_backend_ctx(state);
    scene s = make_scene(1.5, 0, 0, 77u, 0.25, 0.8);
    pv_flow_params params = test_params();
    params.warps = 5;
    params.iterations = 50;
    const int odd[3] = {27, 22, 19};
    compare_backends(cl, &s, odd, &params, "27x22x19, 5 warps x 50");
    params.beta = 2.0f * params.alpha;
    params.gradient = PV_GRADIENT_FORWARD;
    params.kernel_size = 7;
    compare_backends(cl, &s, odd, &params, "beta = 2 alpha, forward, 7 taps");
    params.beta = 0.0f;
    params.gradient = PV_GRADIENT_CENTRAL;
    params.levels = 2;
    const int cube[3] = {30, 30, 30};
    compare_backends(cl, &s, cube, &params, "30^3, 2 levels");
    scene flat = make_scene(1.0, 0, 1, 78u, 0.25, 0.8);
    const int image[3] = {41, 37, 1};
    compare_backends(cl, &flat, image, &params, "41x37 image, 2 levels");
}

static void test_cl_warp_agreement(void **state)
{
    pv_context *cl = tu_backend_ctx(state);
    scene s = make_scene(2.0, 0, 0, 9u, 0.25, 0.9);
    problem p;
    problem_make(&p, &s, 21, 19, 17);
    pv_volume a, b;
    assert_int_equal(pv_volume_alloc(&a, 21, 19, 17), PV_OK);
    assert_int_equal(pv_volume_alloc(&b, 21, 19, 17), PV_OK);
    assert_int_equal(pv_flow_warp(tu_cpu, &p.moving, &p.truth, &a), PV_OK);
    assert_int_equal(pv_flow_warp(cl, &p.moving, &p.truth, &b), PV_OK);
    double worst = 0.0;
    for (int z = 0; z < 17; z++)
        for (int y = 0; y < 19; y++)
            for (int x = 0; x < 21; x++)
                worst = fmax(worst, fabs((double)*vox(&a, x, y, z) - *vox(&b, x, y, z)));
    assert_at_most(worst, 1e-5, "warp OpenCL vs CPU");
    /* Inside, warping moving by the true flow gives back fixed. */
    for (int z = BORDER; z < 17 - BORDER; z++)
        for (int y = BORDER; y < 19 - BORDER; y++)
            for (int x = BORDER; x < 21 - BORDER; x++)
                assert_float_equal(*vox(&a, x, y, z), *vox(&p.fixed, x, y, z), 0.02);
    pv_volume_free(&a);
    pv_volume_free(&b);
    problem_free(&p);
}

static void test_crosscheck_mode(void **state)
{
    pv_context *cl = tu_backend_ctx(state);
    scene s = make_scene(0.5, 0, 0, 4u, 0.25, 0.9);
    problem p;
    problem_make(&p, &s, 18, 18, 18);
    pv_flow_params params = test_params();
    params.iterations = 30;
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    pv_status status = pv_flow3d(cl, &p.fixed, &p.moving, &params, &p.flow);
    pv_context_set_crosscheck(cl, 0);
    tu_expect_ok(cl, status, "cross-checked run");
    problem_free(&p);
}

/* ---------------------------------------------------------------- bad input */

static void fill_field(pv_flow_field *f, float value)
{
    const pv_volume *parts[3] = {&f->u, &f->v, &f->w};
    for (int c = 0; c < 3; c++)
        for (int z = 0; z < parts[c]->nz; z++)
            for (int y = 0; y < parts[c]->ny; y++)
                for (int x = 0; x < parts[c]->nx; x++)
                    *vox(parts[c], x, y, z) = value;
}

static int field_all(const pv_flow_field *f, float value)
{
    const pv_volume *parts[3] = {&f->u, &f->v, &f->w};
    for (int c = 0; c < 3; c++)
        for (int z = 0; z < parts[c]->nz; z++)
            for (int y = 0; y < parts[c]->ny; y++)
                for (int x = 0; x < parts[c]->nx; x++)
                    if (*vox(parts[c], x, y, z) != value)
                        return 0;
    return 1;
}

static void expect_invalid(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                           const pv_flow_params *params, pv_flow_field *flow, const char *what)
{
    fill_field(flow, SENTINEL);
    pv_status status = pv_flow3d(ctx, fixed, moving, params, flow);
    if (status != PV_ERR_INVALID)
        fail_msg("%s: got %s, expected invalid argument", what, pv_status_string(status));
    assert_true(strlen(pv_context_last_error(ctx)) > 0);
    if (!field_all(flow, SENTINEL))
        fail_msg("%s: the flow was written", what);
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    scene s = make_scene(0.5, 0, 0, 2u, 0.25, 0.9);
    problem p;
    problem_make(&p, &s, 16, 16, 16);
    pv_flow_params good = test_params(), bad;
    good.kernel_size = 5;

    pv_volume other;
    assert_int_equal(pv_volume_alloc(&other, 16, 16, 15), PV_OK);
    expect_invalid(ctx, &p.fixed, &other, &good, &p.flow, "mismatched moving");
    pv_flow_field small;
    assert_int_equal(pv_flow_field_alloc(&small, 16, 15, 16), PV_OK);
    fill_field(&small, SENTINEL);
    assert_int_equal(pv_flow3d(ctx, &p.fixed, &p.moving, &good, &small), PV_ERR_INVALID);
    assert_true(field_all(&small, SENTINEL));
    pv_flow_field_free(&small);

    bad = good;
    bad.kernel_size = 17;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "volume smaller than the kernel");
    bad = good;
    bad.levels = 3; /* 16 -> 8 -> 4 < 5 taps */
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "coarse level smaller than the kernel");
    bad = good;
    bad.alpha = 0.0f;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "alpha = 0");
    bad.alpha = -1.0f;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "alpha < 0");
    bad.alpha = NAN;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "alpha NaN");
    bad = good;
    bad.beta = -1e-3f;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "beta < 0");
    bad.beta = 2.5f * good.alpha;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "beta > 2 alpha");
    bad = good;
    bad.rho = 0.0f;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "rho = 0");
    bad = good;
    bad.kernel_size = 4;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "even kernel");
    bad = good;
    bad.warps = 0;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "warps = 0");
    bad = good;
    bad.iterations = 0;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "iterations = 0");
    bad = good;
    bad.spacing = INFINITY;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "spacing inf");
    bad = good;
    bad.tolerance = -1.0f;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "tolerance < 0");
    bad = good;
    bad.check_every = 0;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "check_every = 0");
    bad = good;
    bad.gradient = (pv_gradient_scheme)7;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "unknown gradient scheme");
    bad = good;
    bad.levels = PV_FLOW_MAX_LEVELS + 1;
    expect_invalid(ctx, &p.fixed, &p.moving, &bad, &p.flow, "too many levels");
    expect_invalid(ctx, &p.fixed, &p.moving, NULL, &p.flow, "params NULL");

    float saved = *vox(&p.moving, 5, 6, 7);
    *vox(&p.moving, 5, 6, 7) = NAN;
    expect_invalid(ctx, &p.fixed, &p.moving, &good, &p.flow, "NaN voxel in moving");
    *vox(&p.moving, 5, 6, 7) = saved;
    saved = *vox(&p.fixed, 0, 0, 15);
    *vox(&p.fixed, 0, 0, 15) = INFINITY;
    expect_invalid(ctx, &p.fixed, &p.moving, &good, &p.flow, "infinite voxel in fixed");
    *vox(&p.fixed, 0, 0, 15) = saved;

    pv_flow_field alias = p.flow;
    alias.v = p.flow.u;
    fill_field(&p.flow, SENTINEL);
    assert_int_equal(pv_flow3d(ctx, &p.fixed, &p.moving, &good, &alias), PV_ERR_INVALID);
    assert_true(field_all(&p.flow, SENTINEL));
    alias = p.flow;
    alias.w = p.moving;
    assert_int_equal(pv_flow3d(ctx, &p.fixed, &p.moving, &good, &alias), PV_ERR_INVALID);
    assert_int_equal(pv_flow3d(ctx, &p.fixed, NULL, &good, &p.flow), PV_ERR_INVALID);
    assert_int_equal(pv_flow3d(ctx, &p.fixed, &p.moving, &good, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_flow3d(NULL, &p.fixed, &p.moving, &good, &p.flow), PV_ERR_INVALID);
    assert_true(field_all(&p.flow, SENTINEL));

    pv_flow_plan *plan = (pv_flow_plan *)&good; /* must stay untouched on failure */
    assert_int_equal(pv_flow_plan_create(ctx, 16, 16, 0, &good, &plan), PV_ERR_INVALID);
    assert_true(plan == (pv_flow_plan *)&good);
    assert_int_equal(pv_flow_plan_create(ctx, 4, 16, 16, &good, &plan), PV_ERR_INVALID);
    assert_int_equal(pv_flow_plan_run(NULL, &p.fixed, &p.moving, &p.flow), PV_ERR_INVALID);

    pv_volume warped;
    assert_int_equal(pv_volume_alloc(&warped, 16, 16, 16), PV_OK);
    assert_int_equal(pv_flow_warp(ctx, &p.moving, &p.flow, &p.moving), PV_ERR_INVALID);
    assert_int_equal(pv_flow_warp(ctx, &other, &p.flow, &warped), PV_ERR_INVALID);
    *vox(&p.flow.u, 1, 1, 1) = NAN;
    assert_int_equal(pv_flow_warp(ctx, &p.moving, &p.flow, &warped), PV_ERR_INVALID);
    pv_volume_free(&warped);
    pv_volume_free(&other);
    problem_free(&p);
}

static void test_evaluation_helpers(void **state)
{
    (void)state;
    pv_flow_field a, b;
    assert_int_equal(pv_flow_field_alloc(&a, 8, 8, 8), PV_OK);
    assert_int_equal(pv_flow_field_alloc(&b, 8, 8, 8), PV_OK);
    /* u = 0.5 x, v = w = 0: div = 0.5 everywhere (one-sided at the faces). */
    for (int z = 0; z < 8; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                *vox(&a.u, x, y, z) = 0.5f * x;
                *vox(&b.u, x, y, z) = 0.5f * x + 0.3f;
                *vox(&b.v, x, y, z) = 0.4f;
            }
    double mean, max, div, diff;
    assert_int_equal(pv_flow_endpoint_error(&a, &b, 1, &mean, &max), PV_OK);
    assert_float_equal(mean, 0.5, 1e-6);
    assert_float_equal(max, 0.5, 1e-6);
    assert_int_equal(pv_flow_divergence(&a, 0, &div), PV_OK);
    assert_float_equal(div, 0.5, 1e-6);
    assert_int_equal(pv_flow_max_difference(&a, &b, &diff), PV_OK);
    assert_float_equal(diff, 0.4, 1e-6);
    assert_int_equal(pv_flow_endpoint_error(&a, &b, 4, &mean, &max), PV_ERR_INVALID);
    pv_flow_field_free(&a);
    pv_flow_field_free(&b);
}

/* ------------------------------------------------------------ .flo files */

/* Known values survive a write and a read bit for bit, unknown markers
 * (1e10) included; the error helper skips those. */
static void test_flo_round_trip(void **state)
{
    (void)state;
    pv_flow_field a, b;
    assert_int_equal(pv_flow_field_alloc(&a, 7, 5, 1), PV_OK);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++) {
            *vox(&a.u, x, y, 0) = 0.25f * (float)x - 1.5f;
            *vox(&a.v, x, y, 0) = -0.125f * (float)(x * y) + 3.0f;
        }
    *vox(&a.u, 6, 4, 0) = 1e10f;
    const char *path = tu_tmp_path("round_trip.flo");
    assert_int_equal(pv_flow_write_flo(path, &a), PV_OK);
    assert_int_equal(pv_flow_read_flo(path, &b), PV_OK);
    assert_int_equal(b.u.nx, 7);
    assert_int_equal(b.u.ny, 5);
    assert_int_equal(b.u.nz, 1);
    double diff = -1.0;
    assert_int_equal(pv_flow_max_difference(&a, &b, &diff), PV_OK);
    assert_true(diff == 0.0);
    /* estimate = truth + (0.3, 0.4): EPE 0.5 on every known pixel */
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++) {
            *vox(&b.u, x, y, 0) += 0.3f;
            *vox(&b.v, x, y, 0) += 0.4f;
        }
    pv_flow_error e;
    assert_int_equal(pv_flow_error_2d(&b, &a, 0, &e), PV_OK);
    assert_int_equal(e.known, 34);
    assert_float_equal(e.mean_endpoint, 0.5, 1e-5);
    assert_true(e.mean_angular_deg > 0.0);
    assert_int_equal(pv_flow_write_color_png(tu_tmp_path("round_trip.png"), &a, 0.0f), PV_OK);
    pv_flow_field_free(&a);
    pv_flow_field_free(&b);
}

/* Hostile files: wrong magic, sizes beyond the file, a size that
 * overflows, a truncated body and trailing bytes are all PV_ERR_FORMAT,
 * and the output stays untouched. */
static void test_flo_hostile(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("hostile.flo");
    unsigned char file[12 + 2 * 2 * 8 + 1];
    const float magic = 202021.25f;
    memset(file, 0, sizeof file);
    memcpy(file, &magic, 4); /* the hosts this builds on are little-endian */
    struct { int32_t w, h; size_t bytes; } cases[] = {
        {2, 2, 12 + 32 - 1}, /* truncated */
        {2, 2, 12 + 32 + 1}, /* trailing byte */
        {0x7fffffff, 0x7fffffff, 12 + 32}, /* claims far more than the file */
        {-2, 2, 12 + 32},    /* negative */
        {0, 2, 12},          /* empty */
    };
    pv_flow_field out;
    memset(&out, 0x5a, sizeof out);
    const pv_flow_field before = out;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(file + 4, &cases[k].w, 4);
        memcpy(file + 8, &cases[k].h, 4);
        tu_write_file(path, file, cases[k].bytes);
        assert_int_equal(pv_flow_read_flo(path, &out), PV_ERR_FORMAT);
        assert_memory_equal(&out, &before, sizeof out);
    }
    const int32_t two = 2;
    memcpy(file + 4, &two, 4);
    memcpy(file + 8, &two, 4);
    file[0] ^= 1; /* wrong magic */
    tu_write_file(path, file, 12 + 32);
    assert_int_equal(pv_flow_read_flo(path, &out), PV_ERR_FORMAT);
    tu_write_file(path, file, 5); /* shorter than the header */
    assert_int_equal(pv_flow_read_flo(path, &out), PV_ERR_FORMAT);
    assert_int_equal(pv_flow_read_flo(tu_tmp_path("missing.flo"), &out), PV_ERR_IO);
    assert_memory_equal(&out, &before, sizeof out);
    assert_int_equal(pv_flow_read_flo(NULL, &out), PV_ERR_INVALID);
    pv_flow_field volume;
    assert_int_equal(pv_flow_field_alloc(&volume, 4, 4, 4), PV_OK);
    assert_int_equal(pv_flow_write_flo(path, &volume), PV_ERR_INVALID); /* 3D */
    pv_flow_field_free(&volume);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_evaluation_helpers),
        cmocka_unit_test(test_flo_round_trip),
        cmocka_unit_test(test_flo_hostile),
        TU_ON_BOTH(test_warp_known),
        TU_ON_BOTH(test_small_motion),
        TU_ON_BOTH(test_large_motion_pyramid),
        TU_ON_BOTH(test_image_2d),
        TU_ON_BOTH(test_convergence_stop),
        TU_ON_BOTH(test_plan_reuse),
        TU_ON_BOTH(test_divergence_term),
        TU_ON_BOTH(test_divergence_stable_at_limit),
        TU_ON_OPENCL(test_cl_agreement),
        TU_ON_OPENCL(test_cl_warp_agreement),
        TU_ON_OPENCL(test_crosscheck_mode),
        TU_ON_BOTH(test_bad_input),
    };
    return cmocka_run_group_tests_name("flow", tests, tu_group_setup, tu_group_teardown);
}
