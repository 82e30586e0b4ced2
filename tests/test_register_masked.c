/* Tests of masked phase correlation (pv_phase_correlate_masked and its 3D
 * form): a known shift found through a masked-out distracting pattern, a
 * brute-force spatial evaluation of the masked NCC over every shift,
 * normxcorr2 where every pixel is valid, u8
 * inputs with one shared mask, OpenCL against CPU (and in cross-check
 * mode), device faults leaving the result untouched, and bad input.
 *
 * Sizes are small (PoCL compiles a kernel per transform size): 2D inputs
 * of 48x40 (transform 96x80), 3D inputs of 12x10x8 (transform 24x20x15),
 * brute force on 20x16. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 48
#define H 40

/* A smooth random texture of w x h x d: uniform noise, box-blurred 3 wide
 * along each axis of more than one sample. */
static float *texture(int w, int h, int d, uint32_t seed)
{
    size_t n = (size_t)w * h * d;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        a[i] = tu_rand01(&seed);
    const int dims[3] = {w, h, d};
    const size_t step[3] = {1, (size_t)w, (size_t)w * h};
    for (int axis = 0; axis < 3; axis++) {
        if (dims[axis] == 1)
            continue;
        for (size_t i = 0; i < n; i++) {
            int c = (int)(i / step[axis] % (size_t)dims[axis]);
            float s = a[i];
            s += c > 0 ? a[i - step[axis]] : a[i];
            s += c + 1 < dims[axis] ? a[i + step[axis]] : a[i];
            b[i] = s / 3.0f;
        }
        memcpy(a, b, n * sizeof *a);
    }
    free(b);
    return a;
}

/* out(p) = big(p + margin - shift), a window of the (w + 2m) x (h + 2m)
 * texture big: so out(p) = ref(p - shift) for ref = the window at shift 0. */
static void window2d(const float *big, int bw, int m, int dx, int dy, pv_image *out)
{
    for (int y = 0; y < out->height; y++)
        for (int x = 0; x < out->width; x++)
            tu_set_pixel(out, x, y, big[(size_t)(y + m - dy) * bw + (x + m - dx)]);
}

static pv_image f32_image(int w, int h)
{
    pv_image im;
    assert_int_equal(pv_image_alloc(&im, w, h, PV_PIXEL_F32), PV_OK);
    return im;
}

/* A bright static checkerboard over [x0, x0 + s) x [y0, y0 + s): a fixed
 * pattern (dust on a sensor) that does not move with the scene. */
static void add_distractor(pv_image *im, int x0, int y0, int s)
{
    for (int y = y0; y < y0 + s; y++)
        for (int x = x0; x < x0 + s; x++)
            *tu_fpixel(im, x, y) += ((x + y) & 1) ? 20.0f : -20.0f;
}

static void mask_out(pv_image *mask, int x0, int y0, int s)
{
    tu_fill_image(mask, 1.0f);
    for (int y = y0; y < y0 + s; y++)
        for (int x = x0; x < x0 + s; x++)
            tu_set_pixel(mask, x, y, 0.0f);
}

/* ============================================================ known shift */

static void test_masked_known_shift(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int m = 8, bw = W + 2 * m, bh = H + 2 * m;
    float *big = texture(bw, bh, 1, 7u);
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), mask = f32_image(W, H);
    const int shifts[3][2] = {{5, -3}, {-7, 4}, {0, 6}};
    for (int k = 0; k < 3; k++) {
        window2d(big, bw, m, 0, 0, &ref);
        window2d(big, bw, m, shifts[k][0], shifts[k][1], &mov);
        add_distractor(&ref, 20, 14, 12);
        add_distractor(&mov, 20, 14, 12);
        /* Unmasked (all-valid masks): the static pattern wins at 0. */
        pv_shift s;
        tu_fill_image(&mask, 1.0f);
        tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, &s),
                     "phase_correlate_masked (all valid)");
        assert_true(s.dx == 0.0 && s.dy == 0.0);
        /* Masked: the scene's shift, exactly. */
        mask_out(&mask, 20, 14, 12);
        tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, &mask, NULL, &s),
                     "phase_correlate_masked");
        assert_true(s.dx == shifts[k][0]);
        assert_true(s.dy == shifts[k][1]);
        assert_true(s.dz == 0.0);
        assert_true(s.peak > 0.99 && s.peak <= 1.0);
        assert_int_equal(s.flags, 0);
    }
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
    free(big);
}

static void test_masked_known_shift_3d(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int nx = 12, ny = 10, nz = 8, m = 3;
    const int bx = nx + 2 * m, by = ny + 2 * m, bz = nz + 2 * m;
    float *big = texture(bx, by, bz, 11u);
    pv_volume ref, mov, mask;
    assert_int_equal(pv_volume_alloc(&ref, nx, ny, nz), PV_OK);
    assert_int_equal(pv_volume_alloc(&mov, nx, ny, nz), PV_OK);
    assert_int_equal(pv_volume_alloc(&mask, nx, ny, nz), PV_OK);
    const int d[3] = {2, -3, 1};
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                size_t at = ((size_t)z * ny + y) * nx + x;
                float r = big[((size_t)(z + m) * by + (y + m)) * bx + (x + m)];
                float v = big[((size_t)(z + m - d[2]) * by + (y + m - d[1])) * bx + (x + m - d[0])];
                int hidden = x >= 6 && x < 10 && y >= 5 && y < 9 && z < 4;
                float junk = hidden ? (((x + y + z) & 1) ? 20.0f : -20.0f) : 0.0f;
                ref.data[at] = r + junk;
                mov.data[at] = v + junk;
                mask.data[at] = hidden ? 0.0f : 1.0f;
            }
    pv_shift s;
    tu_expect_ok(ctx, pv_phase_correlate_masked3d(ctx, &ref, &mov, &mask, NULL, NULL, &s),
                 "phase_correlate_masked3d");
    assert_true(s.dx == d[0] && s.dy == d[1] && s.dz == d[2]);
    assert_true(s.peak > 0.99 && s.peak <= 1.0);
    pv_volume_free(&ref);
    pv_volume_free(&mov);
    pv_volume_free(&mask);
    free(big);
}

/* ============================================================ brute force */

/* The masked NCC of moving(p) and ref(p - (dx, dy)) over the overlap of
 * the masks, in double, with the library's thresholds. */
static double brute_ncc(const pv_image *ref, const pv_image *mov, const pv_image *rm,
                        const pv_image *mm, int dx, int dy, long *count)
{
    double n = 0, sm = 0, sf = 0, smm = 0, sff = 0, smf = 0;
    for (int y = 0; y < mov->height; y++)
        for (int x = 0; x < mov->width; x++) {
            int u = x - dx, v = y - dy;
            if (u < 0 || v < 0 || u >= ref->width || v >= ref->height)
                continue;
            if (*tu_fpixel(mm, x, y) == 0.0f || *tu_fpixel(rm, u, v) == 0.0f)
                continue;
            double a = *tu_fpixel(mov, x, y), b = *tu_fpixel(ref, u, v);
            n += 1;
            sm += a;
            sf += b;
            smm += a * a;
            sff += b * b;
            smf += a * b;
        }
    *count = (long)n;
    if (n == 0)
        return 0.0;
    double vm = smm - sm * sm / n, vf = sff - sf * sf / n;
    if (vm <= 1e-3 || vf <= 1e-3)
        return 0.0;
    return (smf - sm * sf / n) / sqrt(vm * vf);
}

static void test_masked_brute_force(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 20, h = 16;
    float *a = texture(w, h, 1, 3u), *b = texture(w, h, 1, 5u);
    pv_image ref = f32_image(w, h), mov = f32_image(w, h), rm = f32_image(w, h),
             mm = f32_image(w, h);
    uint32_t seed = 99u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            tu_set_pixel(&ref, x, y, a[y * w + x]);
            /* The moving image: the reference shifted by (3, -2) plus noise. */
            int u = x - 3, v = y + 2;
            float base = u >= 0 && v < h ? a[v * w + u] : b[y * w + x];
            tu_set_pixel(&mov, x, y, base + 0.05f * b[y * w + x]);
            tu_set_pixel(&rm, x, y, tu_rand01(&seed) < 0.8f ? 1.0f : 0.0f);
            tu_set_pixel(&mm, x, y, tu_rand01(&seed) < 0.8f ? 1.0f : 0.0f);
        }
    const double ratio = 0.3;
    long most = 0, count;
    for (int dy = -(h - 1); dy <= h - 1; dy++)
        for (int dx = -(w - 1); dx <= w - 1; dx++) {
            brute_ncc(&ref, &mov, &rm, &mm, dx, dy, &count);
            most = count > most ? count : most;
        }
    double best = -2.0;
    int bx = 0, by = 0;
    for (int dy = -(h - 1); dy <= h - 1; dy++)
        for (int dx = -(w - 1); dx <= w - 1; dx++) {
            double c = brute_ncc(&ref, &mov, &rm, &mm, dx, dy, &count);
            if (count < ratio * most)
                c = 0.0;
            if (c > best) {
                best = c;
                bx = dx;
                by = dy;
            }
        }
    pv_phasecorr_masked_params p;
    pv_phasecorr_masked_params_default(&p);
    assert_true(p.overlap_ratio == 0.3);
    pv_shift s;
    tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &rm, &mm, &p, &s),
                 "phase_correlate_masked");
    assert_int_equal(bx, 3);
    assert_int_equal(by, -2);
    assert_true(s.dx == bx && s.dy == by);
    assert_true(fabs(s.peak - best) < 1e-4);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&rm);
    pv_image_free(&mm);
    free(a);
    free(b);
}

/* With all-valid masks the masked NCC is normxcorr2's overlap-normalised
 * coefficient of the reference as a template over the moving image: map
 * element (u, v) is the shift (u - w + 1, v - h + 1), and overlap_ratio r
 * is min_overlap = ceil(r w h). */
static void test_masked_matches_normxcorr2(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 24, h = 20;
    pv_image ref = f32_image(w, h), mov = f32_image(w, h), mask = f32_image(w, h);
    pv_image map = f32_image(2 * w - 1, 2 * h - 1);
    float *a = texture(w, h, 1, 71u), *b = texture(w, h, 1, 72u);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            tu_set_pixel(&ref, x, y, a[y * w + x]);
            tu_set_pixel(&mov, x, y, x >= 4 && y < h - 2 ? a[(y + 2) * w + x - 4] : b[y * w + x]);
        }
    tu_fill_image(&mask, 1.0f);
    pv_phasecorr_masked_params p = {0.5};
    pv_shift s;
    pv_ncc_result n;
    tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, &p, &s),
                 "phase_correlate_masked");
    tu_expect_ok(ctx, pv_normxcorr2(ctx, &ref, &mov, (w * h + 1) / 2, &map, &n), "normxcorr2");
    assert_true(s.dx == 4 && s.dy == -2);
    assert_true(s.dx == n.x && s.dy == n.y);
    assert_true(fabs(s.peak - n.coefficient) < 1e-4);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
    pv_image_free(&map);
    free(a);
    free(b);
}

/* u8 inputs and a u8 mask shared by both (moving_mask NULL). */
static void test_masked_u8(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int m = 8, bw = W + 2 * m, bh = H + 2 * m;
    float *big = texture(bw, bh, 1, 21u);
    pv_image ref, mov, mask;
    assert_int_equal(pv_image_alloc(&ref, W, H, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&mov, W, H, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&mask, W, H, PV_PIXEL_U8), PV_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *r = (uint8_t *)ref.data + (size_t)y * ref.stride;
            uint8_t *v = (uint8_t *)mov.data + (size_t)y * mov.stride;
            uint8_t *k = (uint8_t *)mask.data + (size_t)y * mask.stride;
            r[x] = (uint8_t)(255.0f * big[(size_t)(y + m) * bw + x + m]);
            v[x] = (uint8_t)(255.0f * big[(size_t)(y + m + 2) * bw + x + m - 4]);
            k[x] = (uint8_t)(x < 5 ? 0 : 255);
        }
    pv_shift s;
    tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, &s),
                 "phase_correlate_masked (u8)");
    assert_true(s.dx == 4 && s.dy == -2);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
    free(big);
}

/* A masked input that is constant: no texture, shift 0, peak 0. */
static void test_masked_no_texture(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), mask = f32_image(W, H);
    tu_fill_random(&ref, 1u);
    tu_fill_random(&mov, 2u);
    tu_fill_image(&mask, 0.0f);
    for (int y = 0; y < H; y++) {
        tu_set_pixel(&mask, 3, y, 1.0f);
        tu_set_pixel(&ref, 3, y, 5.0f);
    }
    pv_shift s = {9, 9, 9, 9, 0};
    tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, &s),
                 "phase_correlate_masked (constant)");
    assert_true(s.dx == 0 && s.dy == 0 && s.dz == 0 && s.peak == 0);
    assert_int_equal(s.flags, PV_REGISTER_NO_TEXTURE);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
}

/* ================================================================ OpenCL */

static void test_masked_opencl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), rm = f32_image(W, H),
             mm = f32_image(W, H);
    tu_fill_random(&ref, 31u);
    tu_fill_random(&mov, 32u);
    uint32_t seed = 5u;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            tu_set_pixel(&rm, x, y, tu_rand01(&seed) < 0.7f);
            tu_set_pixel(&mm, x, y, tu_rand01(&seed) < 0.7f);
        }
    const double ratios[2] = {0.3, 0.9};
    for (int k = 0; k < 2; k++) {
        pv_phasecorr_masked_params p = {ratios[k]};
        pv_shift a, b;
        tu_expect_ok(tu_cpu, pv_phase_correlate_masked(tu_cpu, &ref, &mov, &rm, &mm, &p, &a),
                     "cpu");
        tu_expect_ok(cl, pv_phase_correlate_masked(cl, &ref, &mov, &rm, &mm, &p, &b), "opencl");
        assert_true(a.dx == b.dx && a.dy == b.dy && a.dz == b.dz);
        assert_true(fabs(a.peak - b.peak) <= 1e-4);
    }
    pv_volume r3 = tu_random_volume(12, 10, 8, 41u), m3 = tu_random_volume(12, 10, 8, 42u);
    pv_volume k3 = tu_random_volume(12, 10, 8, 43u);
    for (size_t i = 0; i < 12 * 10 * 8; i++)
        k3.data[i] = k3.data[i] < 0.25f ? 0.0f : 1.0f;
    pv_shift a, b;
    tu_expect_ok(tu_cpu, pv_phase_correlate_masked3d(tu_cpu, &r3, &m3, &k3, NULL, NULL, &a),
                 "cpu 3d");
    tu_expect_ok(cl, pv_phase_correlate_masked3d(cl, &r3, &m3, &k3, NULL, NULL, &b), "opencl 3d");
    assert_true(a.dx == b.dx && a.dy == b.dy && a.dz == b.dz);
    assert_true(fabs(a.peak - b.peak) <= 1e-4);
    pv_volume_free(&r3);
    pv_volume_free(&m3);
    pv_volume_free(&k3);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&rm);
    pv_image_free(&mm);
}

/* Cross-check mode: the OpenCL result compared with the CPU's inside the
 * call (the same shift, peaks within PV_TOL_PCM_PEAK). */
static void test_masked_crosscheck(void **state)
{
    (void)state;
    pv_context *cl = tu_new_opencl_or_skip();
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), mask = f32_image(W, H);
    tu_fill_random(&ref, 51u);
    tu_fill_random(&mov, 52u);
    uint32_t seed = 9u;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            tu_set_pixel(&mask, x, y, tu_rand01(&seed) < 0.6f);
    pv_shift s;
    tu_expect_ok(cl, pv_phase_correlate_masked(cl, &ref, &mov, &mask, NULL, NULL, &s),
                 "phase_correlate_masked (cross-checked)");
    pv_context_destroy(cl);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
}

/* A device failure (an enqueue refused) leaves the result untouched. */
static void test_masked_fault_leaves_result(void **state)
{
    (void)state;
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), mask = f32_image(W, H);
    tu_fill_random(&ref, 61u);
    tu_fill_random(&mov, 62u);
    tu_fill_image(&mask, 1.0f);
    const char *specs[3] = {"enqueue:1", "enqueue:3", "alloc:2"};
    for (int k = 0; k < 3; k++) {
        pv_context *ctx = tu_fault_context(specs[k]);
        if (!ctx) {
            pv_image_free(&ref);
            pv_image_free(&mov);
            pv_image_free(&mask);
            skip();
        }
        pv_shift s = {7, 7, 7, 7, 0};
        pv_status status = pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, &s);
        if (status == PV_OK)
            fail_msg("%s: the call succeeded", specs[k]);
        assert_true(s.dx == 7 && s.dy == 7 && s.dz == 7 && s.peak == 7);
        pv_context_destroy(ctx);
    }
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
}

/* ============================================================= bad input */

static void expect_refused(pv_context *ctx, pv_status status, const pv_shift *s,
                           const char *needle)
{
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(s->dx == 7 && s->dy == 7 && s->peak == 7);
    if (needle && !strstr(pv_last_error(), needle))
        fail_msg("message \"%s\" lacks \"%s\"", pv_last_error(), needle);
    (void)ctx;
}

static void test_masked_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image ref = f32_image(W, H), mov = f32_image(W, H), mask = f32_image(W, H),
             small = f32_image(W - 1, H), zero = f32_image(W, H);
    tu_fill_random(&ref, 1u);
    tu_fill_random(&mov, 2u);
    tu_fill_image(&mask, 1.0f);
    tu_fill_image(&small, 1.0f);
    tu_fill_image(&zero, 0.0f);
    pv_shift s = {7, 7, 7, 7, 0};
    pv_phasecorr_masked_params p;
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &small, NULL, NULL, &s), &s,
                   "reference_mask is 47x40");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, &small, NULL, &s), &s,
                   "moving_mask");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &small, &mask, NULL, NULL, &s), &s,
                   "moving");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &zero, NULL, NULL, &s), &s,
                   "no valid");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, &zero, NULL, &s), &s,
                   "no valid");
    expect_refused(ctx, pv_phase_correlate_masked(NULL, &ref, &mov, &mask, NULL, NULL, &s), &s,
                   NULL);
    expect_refused(ctx, pv_phase_correlate_masked(ctx, NULL, &mov, &mask, NULL, NULL, &s), &s,
                   "reference");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, NULL, &mask, NULL, NULL, &s), &s,
                   "moving");
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, NULL, NULL, NULL, &s), &s,
                   "reference_mask");
    assert_int_equal(pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, NULL),
                     PV_ERR_INVALID);
    const double bad[4] = {NAN, 0.0, -0.5, 1.5};
    for (int k = 0; k < 4; k++) {
        p.overlap_ratio = bad[k];
        expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, &p, &s), &s,
                       "overlap_ratio");
    }
    p.overlap_ratio = 1.0; /* the upper end is allowed */
    tu_expect_ok(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, &p, &s), "ratio 1");
    s = (pv_shift){7, 7, 7, 7, 0};
    *tu_fpixel(&ref, 3, 3) = NAN;
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &ref, &mov, &mask, NULL, NULL, &s), &s,
                   "NaN");
    pv_image thin = f32_image(1, H);
    tu_fill_image(&thin, 1.0f);
    expect_refused(ctx, pv_phase_correlate_masked(ctx, &thin, &thin, &thin, NULL, NULL, &s), &s,
                   "at least 2 along x");
    pv_image_free(&thin);
    pv_volume v = tu_random_volume(6, 5, 4, 1u), w = tu_random_volume(6, 5, 3, 2u);
    expect_refused(ctx, pv_phase_correlate_masked3d(ctx, &v, &v, &w, NULL, NULL, &s), &s,
                   "reference_mask is 6x5x3");
    pv_volume_free(&v);
    pv_volume_free(&w);
    pv_image_free(&ref);
    pv_image_free(&mov);
    pv_image_free(&mask);
    pv_image_free(&small);
    pv_image_free(&zero);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_masked_known_shift),
        TU_ON_BOTH(test_masked_known_shift_3d),
        TU_ON_BOTH(test_masked_brute_force),
        TU_ON_BOTH(test_masked_matches_normxcorr2),
        TU_ON_BOTH(test_masked_u8),
        TU_ON_BOTH(test_masked_no_texture),
        TU_ON_BOTH(test_masked_bad_input),
        cmocka_unit_test(test_masked_opencl_matches_cpu),
        cmocka_unit_test(test_masked_crosscheck),
        cmocka_unit_test(test_masked_fault_leaves_result),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
