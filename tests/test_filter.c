/* Tests of the filter module: Gaussian blur 2D/3D and gradients 2D/3D.
 *
 * Three kinds of test, as for every module:
 *   - known answers on synthetic data, on every backend available (a
 *     constant stays constant, a delta becomes the outer product of the
 *     weights, interior sums are preserved, ramps and parabolas have exact
 *     derivatives with the documented border rules);
 *   - OpenCL against the CPU backend within the documented 1e-5 relative
 *     tolerance, on odd sizes with strided, guarded buffers that catch
 *     writes outside the image;
 *   - bad input: every invalid argument gives PV_ERR_INVALID and leaves the
 *     outputs untouched.
 *
 * OpenCL parts are skipped when no OpenCL device can be had, when
 * PARVIS_BACKEND forces the CPU, or when PARVIS_TEST_SKIP_OPENCL=1 (for
 * valgrind runs, where the OpenCL driver's own reports would drown ours).
 * Under valgrind, also run one OpenMP thread: libgomp keeps its worker
 * threads parked at exit and valgrind reports their thread-local blocks as
 * "possibly lost".  From the build directory:
 *   PARVIS_BACKEND=cpu PARVIS_TEST_SKIP_OPENCL=1 OMP_NUM_THREADS=1 \
 *     libtool --mode=execute valgrind --leak-check=full --error-exitcode=1 \
 *     tests/test_filter */
#include "test_util.h"
#include "../lib/core/tolerance.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7.0f        /* fill of outputs that must stay untouched */
#define GUARD_VALUE (-4321.5f)



/* ------------------------------------------------------------------ setup */

/* ---------------------------------------------------------------- helpers */

static void assert_within(double error, double tolerance, const char *what)
{
    if (!(error <= tolerance))
        fail_msg("%s: error %g > %g", what, error, tolerance);
}

static pv_image new_image(int width, int height, pv_pixel_type type)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, width, height, type), PV_OK);
    return image;
}

static float *voxel(const pv_volume *v, int x, int y, int z)
{
    return v->data + x + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z;
}

static pv_volume new_volume(int nx, int ny, int nz)
{
    pv_volume volume;
    assert_int_equal(pv_volume_alloc(&volume, nx, ny, nz), PV_OK);
    return volume;
}

static void fill_volume(pv_volume *v, float value)
{
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++)
                *voxel(v, x, y, z) = value;
}

static int volume_all_equal(const pv_volume *v, float value)
{
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++)
                if (*voxel(v, x, y, z) != value)
                    return 0;
    return 1;
}

/* A strided volume with `guard` sentinel voxels on every side (rows,
 * planes and slices), the 3D counterpart of tu_guarded_alloc. */
typedef struct guarded_volume {
    pv_volume v;
    float *base;
    size_t count;
    int guard;
} guarded_volume;

static void guarded_volume_alloc(guarded_volume *g, int nx, int ny, int nz, int guard)
{
    size_t sy = (size_t)nx + 2 * (size_t)guard;
    size_t sz = sy * ((size_t)ny + 2 * (size_t)guard);
    g->count = sz * ((size_t)nz + 2 * (size_t)guard);
    g->base = malloc(g->count * sizeof(float));
    assert_non_null(g->base);
    for (size_t i = 0; i < g->count; i++)
        g->base[i] = GUARD_VALUE;
    g->guard = guard;
    g->v.nx = nx;
    g->v.ny = ny;
    g->v.nz = nz;
    g->v.stride_y = (ptrdiff_t)sy;
    g->v.stride_z = (ptrdiff_t)sz;
    g->v.type = PV_VOLUME_F32;   /* filled member by member: the type too */
    g->v.data = g->base + (size_t)guard * (sz + sy + 1);
}

static int guarded_volume_intact(const guarded_volume *g)
{
    size_t sy = (size_t)g->v.stride_y, sz = (size_t)g->v.stride_z, lo = (size_t)g->guard;
    for (size_t i = 0; i < g->count; i++) {
        size_t z = i / sz, y = i % sz / sy, x = i % sy;
        int inside = x >= lo && x < lo + (size_t)g->v.nx && y >= lo && y < lo + (size_t)g->v.ny &&
                     z >= lo && z < lo + (size_t)g->v.nz;
        if (!inside && g->base[i] != GUARD_VALUE)
            return 0;
    }
    return 1;
}

/* Every guarded buffer is checked for writes outside its data (inputs
 * and outputs alike) when it is let go. */
static void guarded_volume_release(guarded_volume *g)
{
    assert_true(guarded_volume_intact(g));
    free(g->base);
    g->base = NULL;
}

static void guarded_image_release(pv_image *image, int guard)
{
    assert_true(tu_guard_intact(image, guard));
    tu_guarded_free(image, guard);
}

static void weights_for(float sigma, int taps, float *weights)
{
    assert_int_equal(pv_gaussian_weights(sigma, taps, weights), PV_OK);
}

/* ============================================================ known answers */

static void test_weights(void **state)
{
    (void)state;
    static const float sigmas[] = {0.3f, 0.5f, 1.0f, 2.5f, 7.0f};
    float weights[64];
    for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
        int taps = pv_gaussian_taps_for_sigma(sigmas[s]);
        assert_true(taps >= 3 && taps % 2 == 1 && taps <= 64);
        weights_for(sigmas[s], taps, weights);
        double sum = 0.0;
        for (int i = 0; i < taps; i++) {
            sum += weights[i];
            assert_true(weights[i] == weights[taps - 1 - i]); /* exactly symmetric */
            if (i > 0 && i <= taps / 2)
                assert_true(weights[i] >= weights[i - 1]);  /* rises to the centre */
        }
        assert_within(fabs(sum - 1.0), 1e-6, "weights sum to 1");
    }
    weights_for(1.0f, 1, weights);
    assert_true(weights[0] == 1.0f);
}

static void test_taps_for_sigma(void **state)
{
    (void)state;
    assert_int_equal(pv_gaussian_taps_for_sigma(1.0f), 7);   /* 2 * 3 + 1 */
    assert_int_equal(pv_gaussian_taps_for_sigma(2.5f), 17);  /* 2 * ceil(7.5) + 1 */
    assert_int_equal(pv_gaussian_taps_for_sigma(0.1f), 3);   /* at least 3 */
    assert_int_equal(pv_gaussian_taps_for_sigma(0.0f), 0);   /* no valid count */
    assert_int_equal(pv_gaussian_taps_for_sigma(NAN), 0);
    assert_int_equal(pv_gaussian_taps_for_sigma(INFINITY), 0);
    assert_int_equal(pv_gaussian_taps_for_sigma(1e30f), 0);
}

static void test_weights_bad_input(void **state)
{
    (void)state;
    float weights[9];
    for (int i = 0; i < 9; i++)
        weights[i] = SENTINEL;
    assert_int_equal(pv_gaussian_weights(0.0f, 5, weights), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "sigma"));
    assert_int_equal(pv_gaussian_weights(-1.0f, 5, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(NAN, 5, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(INFINITY, 5, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(1.0f, 0, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(1.0f, 4, weights), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "taps"));
    assert_int_equal(pv_gaussian_weights(1.0f, -3, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(1.0f, 1 << 20 | 1, weights), PV_ERR_INVALID);
    assert_int_equal(pv_gaussian_weights(1.0f, 5, NULL), PV_ERR_INVALID);
    for (int i = 0; i < 9; i++)
        assert_true(weights[i] == SENTINEL);
}

static void test_blur_constant(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image src = new_image(37, 23, PV_PIXEL_U8), dst = new_image(37, 23, PV_PIXEL_F32);
    tu_fill_image(&src, 77.0f);
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst, 2.0f, 0), PV_OK);
    for (int y = 0; y < dst.height; y++)
        for (int x = 0; x < dst.width; x++)
            assert_within(fabs(*tu_fpixel(&dst, x, y) - 77.0) / 77.0, 1e-5, "constant stays");
    pv_image_free(&src);
    pv_image_free(&dst);
}

/* A unit impulse far from the borders blurs into w[i] * w[j]. */
static void test_blur_delta(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 31, h = 27, cx = 15, cy = 13;
    const float sigma = 1.5f;
    const int taps = pv_gaussian_taps_for_sigma(sigma), r = taps / 2;
    float weights[64];
    weights_for(sigma, taps, weights);
    pv_image src = new_image(w, h, PV_PIXEL_F32), dst = new_image(w, h, PV_PIXEL_F32);
    *tu_fpixel(&src, cx, cy) = 1.0f;
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst, sigma, 0), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int dx = x - cx, dy = y - cy;
            double expected = abs(dx) <= r && abs(dy) <= r
                                  ? (double)weights[dx + r] * (double)weights[dy + r]
                                  : 0.0;
            assert_within(fabs(*tu_fpixel(&dst, x, y) - expected), 1e-7, "delta response");
        }
    pv_image_free(&src);
    pv_image_free(&dst);
}

/* Content at least r from every border: the blur redistributes it, keeping
 * its sum (the weights sum to 1). */
static void test_blur_sum_preserved(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 48, h = 40, taps = 9, r = taps / 2;
    pv_image src = new_image(w, h, PV_PIXEL_F32), dst = new_image(w, h, PV_PIXEL_F32);
    uint32_t seed = 99;
    double sum_in = 0.0, sum_out = 0.0;
    for (int y = r; y < h - r; y++)
        for (int x = r; x < w - r; x++) {
            *tu_fpixel(&src, x, y) = tu_rand01(&seed);
            sum_in += *tu_fpixel(&src, x, y);
        }
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst, 1.7f, taps), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            sum_out += *tu_fpixel(&dst, x, y);
    assert_within(fabs(sum_out - sum_in) / sum_in, 1e-5, "sum preserved");
    pv_image_free(&src);
    pv_image_free(&dst);
}

static void test_blur3d_delta_and_constant(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int nx = 15, ny = 13, nz = 11, c[3] = {7, 6, 5}, taps = 5, r = 2;
    float weights[5];
    weights_for(1.0f, taps, weights);
    pv_volume src = new_volume(nx, ny, nz), dst = new_volume(nx, ny, nz);
    *voxel(&src, c[0], c[1], c[2]) = 1.0f;
    assert_int_equal(pv_gaussian_blur3d(ctx, &src, &dst, 1.0f, taps), PV_OK);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                int d[3] = {x - c[0], y - c[1], z - c[2]};
                double expected = 1.0;
                for (int a = 0; a < 3; a++)
                    expected *= abs(d[a]) <= r ? (double)weights[d[a] + r] : 0.0;
                assert_within(fabs(*voxel(&dst, x, y, z) - expected), 1e-7, "3D delta response");
            }
    fill_volume(&src, 0.25f);
    assert_int_equal(pv_gaussian_blur3d(ctx, &src, &dst, 3.0f, 0), PV_OK);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                assert_within(fabs(*voxel(&dst, x, y, z) - 0.25) / 0.25, 1e-5, "3D constant");
    pv_volume_free(&src);
    pv_volume_free(&dst);
}

/* An f32 source filled with f(x, y) and two gradient outputs of its size. */
typedef struct gradient_case {
    pv_image src, gx, gy;
} gradient_case;

static gradient_case new_gradient_case(int w, int h, float (*f)(int x, int y))
{
    gradient_case c = {new_image(w, h, PV_PIXEL_F32), new_image(w, h, PV_PIXEL_F32),
                       new_image(w, h, PV_PIXEL_F32)};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            *tu_fpixel(&c.src, x, y) = f(x, y);
    return c;
}

static void free_gradient_case(gradient_case *c)
{
    pv_image_free(&c->src);
    pv_image_free(&c->gx);
    pv_image_free(&c->gy);
}

static float ramp(int x, int y)
{
    return 0.5f * (float)x - 2.0f * (float)y + 3.0f;
}

/* f = 0.5 x - 2 y + 3: exact derivatives everywhere (central), and the
 * forward scheme's 0 at the far borders. */
static void test_gradient_ramp(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    gradient_case c = new_gradient_case(37, 23, ramp);
    const int w = c.src.width, h = c.src.height;
    assert_int_equal(pv_gradient(ctx, &c.src, &c.gx, &c.gy, PV_GRADIENT_CENTRAL), PV_OK);
    assert_true(tu_image_all_equal(&c.gx, 0.5f));
    assert_true(tu_image_all_equal(&c.gy, -2.0f));
    assert_int_equal(pv_gradient(ctx, &c.src, &c.gx, &c.gy, PV_GRADIENT_FORWARD), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            assert_true(*tu_fpixel(&c.gx, x, y) == (x == w - 1 ? 0.0f : 0.5f));
            assert_true(*tu_fpixel(&c.gy, x, y) == (y == h - 1 ? 0.0f : -2.0f));
        }
    free_gradient_case(&c);
}

/* f = x^2 + 3 y^2 (u8 would overflow: f32): central differences 2x and 6y
 * inside, one-sided f(1) - f(0) and f(n-1) - f(n-2) at the borders. */
static float squares(int x, int y)
{
    return (float)(x * x + 3 * y * y);
}

static float central_of_square(int c, int n, float scale)
{
    if (c == 0)
        return scale * 1.0f;
    if (c == n - 1)
        return scale * (float)(2 * n - 3);
    return scale * (float)(2 * c);
}

static void test_gradient_borders_one_sided(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    gradient_case c = new_gradient_case(19, 11, squares);
    const int w = c.src.width, h = c.src.height;
    assert_int_equal(pv_gradient(ctx, &c.src, &c.gx, &c.gy, PV_GRADIENT_CENTRAL), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            assert_true(*tu_fpixel(&c.gx, x, y) == central_of_square(x, w, 1.0f));
            assert_true(*tu_fpixel(&c.gy, x, y) == central_of_square(y, h, 3.0f));
        }
    free_gradient_case(&c);
}

/* u8 input, one output at a time (the other NULL), and axes of one sample. */
static void test_gradient_u8_single_outputs(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 37, h = 23;
    pv_image src = new_image(w, h, PV_PIXEL_U8), g = new_image(w, h, PV_PIXEL_F32);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            ((uint8_t *)src.data)[y * w + x] = (uint8_t)(3 * x + 2 * y);
    assert_int_equal(pv_gradient(ctx, &src, &g, NULL, PV_GRADIENT_CENTRAL), PV_OK);
    assert_true(tu_image_all_equal(&g, 3.0f));
    assert_int_equal(pv_gradient(ctx, &src, NULL, &g, PV_GRADIENT_CENTRAL), PV_OK);
    assert_true(tu_image_all_equal(&g, 2.0f));
    pv_image_free(&g);
    pv_image_free(&src);

    pv_image column = new_image(1, h, PV_PIXEL_F32), gx = new_image(1, h, PV_PIXEL_F32);
    tu_fill_image(&column, 5.0f);
    tu_fill_image(&gx, SENTINEL);
    assert_int_equal(pv_gradient(ctx, &column, &gx, NULL, PV_GRADIENT_CENTRAL), PV_OK);
    assert_true(tu_image_all_equal(&gx, 0.0f));
    pv_image_free(&column);
    pv_image_free(&gx);
}

/* f = x + 2 y + 0.5 z^2: gx = 1, gy = 2, central gz = z inside, 0.5 and
 * 0.5 (2 nz - 3) at the borders; forward gz = z + 0.5 and 0 at the end. */
static void test_gradient3d_known(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int nx = 17, ny = 13, nz = 9;
    pv_volume src = new_volume(nx, ny, nz);
    pv_volume gx = new_volume(nx, ny, nz), gy = new_volume(nx, ny, nz), gz = new_volume(nx, ny, nz);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                *voxel(&src, x, y, z) = (float)x + 2.0f * (float)y + 0.5f * (float)(z * z);
    assert_int_equal(pv_gradient3d(ctx, &src, &gx, &gy, &gz, PV_GRADIENT_CENTRAL), PV_OK);
    assert_true(volume_all_equal(&gx, 1.0f));
    assert_true(volume_all_equal(&gy, 2.0f));
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                assert_true(*voxel(&gz, x, y, z) == central_of_square(z, nz, 0.5f));
    fill_volume(&gx, SENTINEL);
    assert_int_equal(pv_gradient3d(ctx, &src, NULL, NULL, &gz, PV_GRADIENT_FORWARD), PV_OK);
    assert_true(volume_all_equal(&gx, SENTINEL));
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                assert_true(*voxel(&gz, x, y, z) == (z == nz - 1 ? 0.0f : (float)z + 0.5f));
    assert_int_equal(pv_gradient3d(ctx, &src, &gx, &gy, NULL, PV_GRADIENT_FORWARD), PV_OK);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                assert_true(*voxel(&gx, x, y, z) == (x == nx - 1 ? 0.0f : 1.0f));
                assert_true(*voxel(&gy, x, y, z) == (y == ny - 1 ? 0.0f : 2.0f));
            }
    pv_volume_free(&src);
    pv_volume_free(&gx);
    pv_volume_free(&gy);
    pv_volume_free(&gz);
}

/* ===================================================== OpenCL against CPU */

static void compare_blur2d(pv_context *cl, int w, int h, pv_pixel_type type, float sigma,
                           int taps, uint32_t seed)
{
    const int guard = 3;
    pv_image src, out;
    tu_guarded_alloc(&src, w, h, type, guard);
    tu_guarded_alloc(&out, w, h, PV_PIXEL_F32, guard);
    pv_image ref = new_image(w, h, PV_PIXEL_F32);
    tu_fill_random(&src, seed);
    assert_int_equal(pv_gaussian_blur(cl, &src, &out, sigma, taps), PV_OK);
    assert_int_equal(pv_gaussian_blur(tu_cpu, &src, &ref, sigma, taps), PV_OK);
    assert_within(tu_rel_linf(&out, &ref), PV_TOL_FILTER_REL, "OpenCL vs CPU blur");
    guarded_image_release(&src, guard);
    guarded_image_release(&out, guard);
    pv_image_free(&ref);
}

static void test_cl_blur2d(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    static const pv_pixel_type types[] = {PV_PIXEL_U8, PV_PIXEL_F32};
    static const float sigmas[] = {0.7f, 1.3f, 3.0f, 9.0f};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 4; s++)
            compare_blur2d(cl, 37, 23, types[t], sigmas[s], 0, (uint32_t)(10 * t + s + 1));
    /* Degenerate shapes, explicit taps, a kernel much wider than the image,
     * and a size change (scratch buffers grow and shrink). */
    compare_blur2d(cl, 1, 23, PV_PIXEL_F32, 1.0f, 0, 5);
    compare_blur2d(cl, 37, 1, PV_PIXEL_U8, 1.0f, 0, 6);
    compare_blur2d(cl, 37, 23, PV_PIXEL_F32, 2.0f, 3, 7);
    compare_blur2d(cl, 37, 23, PV_PIXEL_F32, 2.0f, 1, 8);
    compare_blur2d(cl, 37, 23, PV_PIXEL_U8, 60.0f, 0, 9);
    compare_blur2d(cl, 130, 70, PV_PIXEL_U8, 1.5f, 0, 10);
    compare_blur2d(cl, 37, 23, PV_PIXEL_U8, 1.5f, 0, 11);
}

static void compare_blur3d(pv_context *cl, int nx, int ny, int nz, float sigma, int taps,
                           uint32_t seed)
{
    guarded_volume src, out;
    guarded_volume_alloc(&src, nx, ny, nz, 2);
    guarded_volume_alloc(&out, nx, ny, nz, 2);
    pv_volume ref = new_volume(nx, ny, nz);
    tu_fill_random_volume(&src.v, seed);
    assert_int_equal(pv_gaussian_blur3d(cl, &src.v, &out.v, sigma, taps), PV_OK);
    assert_int_equal(pv_gaussian_blur3d(tu_cpu, &src.v, &ref, sigma, taps), PV_OK);
    for (int z = 0; z < nz; z++) {
        pv_image a = {nx, ny, out.v.stride_y, PV_PIXEL_F32, voxel(&out.v, 0, 0, z)};
        pv_image b = {nx, ny, ref.stride_y, PV_PIXEL_F32, voxel(&ref, 0, 0, z)};
        assert_within(tu_rel_linf(&a, &b), PV_TOL_FILTER_REL, "OpenCL vs CPU blur3d");
    }
    guarded_volume_release(&src);
    guarded_volume_release(&out);
    pv_volume_free(&ref);
}

static void test_cl_blur3d(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    compare_blur3d(cl, 17, 13, 9, 1.2f, 0, 21);
    compare_blur3d(cl, 17, 13, 9, 2.5f, 0, 22); /* radius 8: wider than nz */
    compare_blur3d(cl, 17, 13, 1, 1.0f, 0, 23);
    compare_blur3d(cl, 40, 3, 5, 0.8f, 5, 24);
}

static void compare_gradient2d(pv_context *cl, int w, int h, pv_pixel_type type,
                               pv_gradient_scheme scheme, uint32_t seed)
{
    const int guard = 2;
    pv_image src, gx, gy;
    tu_guarded_alloc(&src, w, h, type, guard);
    tu_guarded_alloc(&gx, w, h, PV_PIXEL_F32, guard);
    tu_guarded_alloc(&gy, w, h, PV_PIXEL_F32, guard);
    pv_image rx = new_image(w, h, PV_PIXEL_F32), ry = new_image(w, h, PV_PIXEL_F32);
    tu_fill_random(&src, seed);
    assert_int_equal(pv_gradient(cl, &src, &gx, &gy, scheme), PV_OK);
    assert_int_equal(pv_gradient(tu_cpu, &src, &rx, &ry, scheme), PV_OK);
    assert_within(tu_rel_linf(&gx, &rx), PV_TOL_FILTER_REL, "OpenCL vs CPU gx");
    assert_within(tu_rel_linf(&gy, &ry), PV_TOL_FILTER_REL, "OpenCL vs CPU gy");
    guarded_image_release(&src, guard);
    guarded_image_release(&gx, guard);
    guarded_image_release(&gy, guard);
    pv_image_free(&rx);
    pv_image_free(&ry);
}

static void test_cl_gradient2d(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    for (int scheme = 0; scheme < 2; scheme++) {
        compare_gradient2d(cl, 37, 23, PV_PIXEL_U8, (pv_gradient_scheme)scheme, 31);
        compare_gradient2d(cl, 37, 23, PV_PIXEL_F32, (pv_gradient_scheme)scheme, 32);
        compare_gradient2d(cl, 1, 5, PV_PIXEL_F32, (pv_gradient_scheme)scheme, 33);
        compare_gradient2d(cl, 5, 1, PV_PIXEL_U8, (pv_gradient_scheme)scheme, 34);
    }
}

static void compare_gradient3d(pv_context *cl, int nx, int ny, int nz, pv_gradient_scheme scheme,
                               uint32_t seed)
{
    guarded_volume src, g[3];
    guarded_volume_alloc(&src, nx, ny, nz, 1);
    tu_fill_random_volume(&src.v, seed);
    pv_volume ref[3];
    for (int a = 0; a < 3; a++) {
        guarded_volume_alloc(&g[a], nx, ny, nz, 1);
        ref[a] = new_volume(nx, ny, nz);
    }
    assert_int_equal(pv_gradient3d(cl, &src.v, &g[0].v, &g[1].v, &g[2].v, scheme), PV_OK);
    assert_int_equal(pv_gradient3d(tu_cpu, &src.v, &ref[0], &ref[1], &ref[2], scheme), PV_OK);
    for (int a = 0; a < 3; a++) {
        for (int z = 0; z < nz; z++) {
            pv_image x = {nx, ny, g[a].v.stride_y, PV_PIXEL_F32, voxel(&g[a].v, 0, 0, z)};
            pv_image y = {nx, ny, ref[a].stride_y, PV_PIXEL_F32, voxel(&ref[a], 0, 0, z)};
            assert_within(tu_rel_linf(&x, &y), PV_TOL_FILTER_REL, "OpenCL vs CPU gradient3d");
        }
        guarded_volume_release(&g[a]);
        pv_volume_free(&ref[a]);
    }
    guarded_volume_release(&src);
}

static void test_cl_gradient3d(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    for (int scheme = 0; scheme < 2; scheme++) {
        compare_gradient3d(cl, 17, 13, 9, (pv_gradient_scheme)scheme, 41);
        compare_gradient3d(cl, 3, 1, 2, (pv_gradient_scheme)scheme, 42);
    }
}

/* ============================================================= cross-check */

static void run_all_ops(pv_context *ctx)
{
    pv_image src = new_image(37, 23, PV_PIXEL_U8), dst = new_image(37, 23, PV_PIXEL_F32);
    pv_image gy = new_image(37, 23, PV_PIXEL_F32);
    pv_volume vsrc = new_volume(17, 13, 9), vdst = new_volume(17, 13, 9);
    pv_volume vgz = new_volume(17, 13, 9);
    tu_fill_random(&src, 51);
    tu_fill_random_volume(&vsrc, 52);
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst, 1.5f, 0), PV_OK);
    assert_int_equal(pv_gaussian_blur3d(ctx, &vsrc, &vdst, 1.5f, 0), PV_OK);
    assert_int_equal(pv_gradient(ctx, &src, &dst, &gy, PV_GRADIENT_CENTRAL), PV_OK);
    assert_int_equal(pv_gradient(ctx, &src, NULL, &gy, PV_GRADIENT_FORWARD), PV_OK);
    assert_int_equal(pv_gradient3d(ctx, &vsrc, &vdst, NULL, &vgz, PV_GRADIENT_CENTRAL), PV_OK);
    assert_int_equal(pv_gradient3d(ctx, &vsrc, NULL, &vdst, NULL, PV_GRADIENT_FORWARD), PV_OK);
    pv_timing timing;
    assert_int_equal(pv_context_last_timing(ctx, &timing), PV_OK);
    assert_true(timing.total_ms >= 0.0);
    pv_image_free(&src);
    pv_image_free(&dst);
    pv_image_free(&gy);
    pv_volume_free(&vsrc);
    pv_volume_free(&vdst);
    pv_volume_free(&vgz);
}

static void test_crosscheck(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    assert_int_equal(pv_context_set_crosscheck(ctx, 1), PV_OK);
    run_all_ops(ctx);
    assert_int_equal(pv_context_set_crosscheck(ctx, 0), PV_OK);
}

/* ================================================================ bad input */

/* A refused call: PV_ERR_INVALID, and the outputs still hold what they held
 * before, as each test's OUTPUTS_UNTOUCHED says. */
#define EXPECT_INVALID(call)                                                               \
    do {                                                                                   \
        assert_int_equal((call), PV_ERR_INVALID);                                          \
        assert_true(OUTPUTS_UNTOUCHED);                                                    \
    } while (0)

static void test_blur_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image src = new_image(16, 12, PV_PIXEL_F32), dst = new_image(16, 12, PV_PIXEL_F32);
    tu_fill_random(&src, 61);
    tu_fill_image(&dst, SENTINEL);
#define OUTPUTS_UNTOUCHED tu_image_all_equal(&dst, SENTINEL)
    EXPECT_INVALID(pv_gaussian_blur(NULL, &src, &dst, 1.0f, 0));
    assert_true(pv_last_error()[0] != '\0');
    EXPECT_INVALID(pv_gaussian_blur(ctx, NULL, &dst, 1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, NULL, 1.0f, 0));
    pv_image bad = src;
    bad.data = NULL;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.width = 0;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.height = -1;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.stride = 15;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.type = (pv_pixel_type)7;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.height = INT_MAX;
    bad.stride = (ptrdiff_t)INT_MAX * 4096; /* the byte count overflows */
    EXPECT_INVALID(pv_gaussian_blur(ctx, &bad, &dst, 1.0f, 0));
    /* dst: wrong size, wrong type, aliased or overlapping src. */
    bad = dst;
    bad.width = 15;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &bad, 1.0f, 0));
    assert_non_null(strstr(pv_context_last_error(ctx), "dst"));
    pv_image dst_u8 = new_image(16, 12, PV_PIXEL_U8);
    tu_fill_image(&dst_u8, 9.0f);
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst_u8, 1.0f, 0), PV_ERR_INVALID);
    assert_true(tu_image_all_equal(&dst_u8, 9.0f));
    pv_image_free(&dst_u8);
    EXPECT_INVALID(pv_gaussian_blur(ctx, &dst, &dst, 1.0f, 0));
    pv_image shifted = dst;
    shifted.data = (float *)dst.data + 5 * dst.stride;
    shifted.height = 7;
    pv_image shifted_dst = dst;
    shifted_dst.height = 7;
    EXPECT_INVALID(pv_gaussian_blur(ctx, &shifted, &shifted_dst, 1.0f, 0));
    /* sigma and taps */
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 0.0f, 0));
    assert_non_null(strstr(pv_context_last_error(ctx), "sigma"));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, -1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, NAN, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, INFINITY, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, -INFINITY, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1.0f, 4));
    assert_non_null(strstr(pv_context_last_error(ctx), "taps"));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1.0f, -3));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1.0f, 100001));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1e6f, 0));
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1e30f, 0));
#undef OUTPUTS_UNTOUCHED
    pv_image_free(&src);
    pv_image_free(&dst);
}

static void test_blur3d_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume src = new_volume(9, 7, 5), dst = new_volume(9, 7, 5);
    fill_volume(&dst, SENTINEL);
#define OUTPUTS_UNTOUCHED volume_all_equal(&dst, SENTINEL)
    EXPECT_INVALID(pv_gaussian_blur3d(NULL, &src, &dst, 1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, NULL, &dst, 1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, NULL, 1.0f, 0));
    pv_volume bad = src;
    bad.nz = 0;
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.stride_y = 8;
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &bad, &dst, 1.0f, 0));
    bad = src;
    bad.data = NULL;
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &bad, &dst, 1.0f, 0));
    bad = dst;
    bad.ny = 6;
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, &bad, 1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &dst, &dst, 1.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, &dst, NAN, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, &dst, 0.0f, 0));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, &dst, 1.0f, 6));
    EXPECT_INVALID(pv_gaussian_blur3d(ctx, &src, &dst, 1.0f, -1));
#undef OUTPUTS_UNTOUCHED
    pv_volume_free(&src);
    pv_volume_free(&dst);
}

static void test_gradient_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image src = new_image(16, 12, PV_PIXEL_U8);
    pv_image gx = new_image(16, 12, PV_PIXEL_F32), gy = new_image(16, 12, PV_PIXEL_F32);
    tu_fill_image(&gx, SENTINEL);
    tu_fill_image(&gy, SENTINEL);
#define OUTPUTS_UNTOUCHED (tu_image_all_equal(&gx, SENTINEL) && tu_image_all_equal(&gy, SENTINEL))
    EXPECT_INVALID(pv_gradient(NULL, &src, &gx, &gy, PV_GRADIENT_CENTRAL));
    EXPECT_INVALID(pv_gradient(ctx, NULL, &gx, &gy, PV_GRADIENT_CENTRAL));
    EXPECT_INVALID(pv_gradient(ctx, &src, NULL, NULL, PV_GRADIENT_CENTRAL));
    pv_image bad = src;
    bad.width = -4;
    EXPECT_INVALID(pv_gradient(ctx, &bad, &gx, &gy, PV_GRADIENT_CENTRAL));
    bad = gy;
    bad.height = 11;
    EXPECT_INVALID(pv_gradient(ctx, &src, &gx, &bad, PV_GRADIENT_CENTRAL));
    assert_non_null(strstr(pv_context_last_error(ctx), "gy"));
    pv_image gx_u8 = new_image(16, 12, PV_PIXEL_U8);
    EXPECT_INVALID(pv_gradient(ctx, &src, &gx_u8, &gy, PV_GRADIENT_CENTRAL));
    pv_image_free(&gx_u8);
    pv_image src_f32 = gx; /* src aliasing an output */
    EXPECT_INVALID(pv_gradient(ctx, &src_f32, &gx, &gy, PV_GRADIENT_CENTRAL));
    EXPECT_INVALID(pv_gradient(ctx, &src, &gx, &gx, PV_GRADIENT_CENTRAL));
    EXPECT_INVALID(pv_gradient(ctx, &src, &gx, &gy, (pv_gradient_scheme)7));
    assert_non_null(strstr(pv_context_last_error(ctx), "scheme"));
    EXPECT_INVALID(pv_gradient(ctx, &src, &gx, NULL, (pv_gradient_scheme)-1));
#undef OUTPUTS_UNTOUCHED
    pv_image_free(&src);
    pv_image_free(&gx);
    pv_image_free(&gy);
}

static void test_gradient3d_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_volume src = new_volume(9, 7, 5);
    pv_volume g[3] = {new_volume(9, 7, 5), new_volume(9, 7, 5), new_volume(9, 7, 5)};
    for (int a = 0; a < 3; a++)
        fill_volume(&g[a], SENTINEL);
#define OUTPUTS_UNTOUCHED                                                                  \
    (volume_all_equal(&g[0], SENTINEL) && volume_all_equal(&g[1], SENTINEL) &&             \
     volume_all_equal(&g[2], SENTINEL))
    const pv_gradient_scheme c = PV_GRADIENT_CENTRAL;
    EXPECT_INVALID(pv_gradient3d(NULL, &src, &g[0], &g[1], &g[2], c));
    EXPECT_INVALID(pv_gradient3d(ctx, NULL, &g[0], &g[1], &g[2], c));
    EXPECT_INVALID(pv_gradient3d(ctx, &src, NULL, NULL, NULL, c));
    pv_volume bad = src;
    bad.ny = 0;
    EXPECT_INVALID(pv_gradient3d(ctx, &bad, &g[0], &g[1], &g[2], c));
    bad = g[2];
    bad.nz = 4;
    EXPECT_INVALID(pv_gradient3d(ctx, &src, &g[0], &g[1], &bad, c));
    assert_non_null(strstr(pv_context_last_error(ctx), "gz"));
    EXPECT_INVALID(pv_gradient3d(ctx, &g[1], &g[0], &g[1], NULL, c));
    EXPECT_INVALID(pv_gradient3d(ctx, &src, &g[0], NULL, &g[0], c));
    EXPECT_INVALID(pv_gradient3d(ctx, &src, &g[0], &g[1], &g[2], (pv_gradient_scheme)5));
#undef OUTPUTS_UNTOUCHED
    pv_volume_free(&src);
    for (int a = 0; a < 3; a++)
        pv_volume_free(&g[a]);
}

/* The finite-input policy: NaN or an infinity anywhere in an f32 source is
 * refused on either backend, naming src and the pixel; outputs untouched. */
static void test_non_finite_refused(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    pv_image src = new_image(16, 12, PV_PIXEL_F32), dst = new_image(16, 12, PV_PIXEL_F32);
    pv_image gy = new_image(16, 12, PV_PIXEL_F32);
    pv_volume vsrc = new_volume(9, 7, 5), vdst = new_volume(9, 7, 5);
    tu_fill_image(&dst, SENTINEL);
    tu_fill_image(&gy, SENTINEL);
    fill_volume(&vdst, SENTINEL);
#define OUTPUTS_UNTOUCHED                                                                  \
    (tu_image_all_equal(&dst, SENTINEL) && tu_image_all_equal(&gy, SENTINEL) &&            \
     volume_all_equal(&vdst, SENTINEL))
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        tu_fill_image(&src, 1.0f);
        tu_set_pixel(&src, 15, 11, bad_values[i]); /* the last pixel: the scan reaches it */
        EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0));
        assert_non_null(strstr(pv_context_last_error(ctx), "src pixel (15, 11)"));
        EXPECT_INVALID(pv_gradient(ctx, &src, &dst, &gy, PV_GRADIENT_CENTRAL));
        fill_volume(&vsrc, 2.0f);
        *voxel(&vsrc, 3, 6, 4) = bad_values[i];
        EXPECT_INVALID(pv_gaussian_blur3d(ctx, &vsrc, &vdst, 1.0f, 0));
        assert_non_null(strstr(pv_context_last_error(ctx), "src voxel (3, 6, 4)"));
        EXPECT_INVALID(pv_gradient3d(ctx, &vsrc, &vdst, NULL, NULL, PV_GRADIENT_CENTRAL));
    }
    tu_fill_image(&src, NAN); /* all NaN, as a failed computation upstream leaves it */
    EXPECT_INVALID(pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0));
    assert_non_null(strstr(pv_context_last_error(ctx), "NaN"));
#undef OUTPUTS_UNTOUCHED
    tu_fill_image(&src, 1.0f); /* finite again: accepted */
    assert_int_equal(pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0), PV_OK);
    pv_image_free(&src);
    pv_image_free(&dst);
    pv_image_free(&gy);
    pv_volume_free(&vsrc);
    pv_volume_free(&vdst);
}

/* ===================================================================== main */

/* A known-answer test once per backend, named test/cpu and test/opencl. */
#define ON_BOTH(test)                                                       \
    {#test "/cpu", test, NULL, NULL, (void *)&tu_cpu_kind},                    \
    {#test "/opencl", test, NULL, NULL, (void *)&tu_opencl_kind}
/* A test of the front end's checks, which run before any backend. */
#define ON_CPU(test) {#test, test, NULL, NULL, (void *)&tu_cpu_kind}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_taps_for_sigma),
        cmocka_unit_test(test_weights_bad_input),
        ON_BOTH(test_blur_constant),
        ON_BOTH(test_blur_delta),
        ON_BOTH(test_blur_sum_preserved),
        ON_BOTH(test_blur3d_delta_and_constant),
        ON_BOTH(test_gradient_ramp),
        ON_BOTH(test_gradient_borders_one_sided),
        ON_BOTH(test_gradient_u8_single_outputs),
        ON_BOTH(test_gradient3d_known),
        cmocka_unit_test(test_cl_blur2d),
        cmocka_unit_test(test_cl_blur3d),
        cmocka_unit_test(test_cl_gradient2d),
        cmocka_unit_test(test_cl_gradient3d),
        ON_BOTH(test_crosscheck),
        ON_CPU(test_blur_bad_input),
        ON_BOTH(test_non_finite_refused),
        ON_CPU(test_blur3d_bad_input),
        ON_CPU(test_gradient_bad_input),
        ON_CPU(test_gradient3d_bad_input),
    };
    return cmocka_run_group_tests_name("filter", tests, tu_group_setup, tu_group_teardown);
}
