/* Tests of the SIFT chain: pv_sift_match_images and pv_sift_track_next.
 *
 *   - known answer on both backends: a crop of the Venus image and a
 *     rotated (0.12 rad), scaled (0.92), shifted copy of it; the chain's
 *     homography maps a 9 x 9 grid over frame 1 (corners included) within
 *     1 px of the truth;
 *   - the chain equals the composed public calls (pv_sift_detect twice,
 *     pv_sift_match, pv_find_homography) on both backends: the same
 *     keypoint and match counts, the same inlier pairs and positions, the
 *     same model to 1e-12 relative (the same float inputs and seeded
 *     samples: equal in practice), with and without the mutual check;
 *   - the same with more keypoints than a fresh plan's lists hold (on
 *     OpenCL the pair's side-by-side detection then falls back to one by
 *     one and grows the lists, and a tracking step that matches without
 *     waiting for the count runs again, waiting) and with a top-K cap
 *     (composed calls);
 *   - OpenCL against the CPU backend: both models within 0.5 px of each
 *     other over the grid, inlier counts within 10%;
 *   - tracking over four synthetic frames: the first has no model, each
 *     later one the step's homography within 1 px and exactly
 *     pv_sift_match_images(previous, frame)'s answer; pv_sift_track_reset
 *     starts a new track;
 *   - bad input: NULLs, a frame of another size, NaN pixels, bad match or
 *     RANSAC parameters, a featureless frame (too few matches): each a
 *     PV_ERR_INVALID naming it, the result untouched.
 *
 * Images are 192 x 160 so that PoCL runs the file in seconds. */
#include "match_set.h"
#include "test_util.h"

#include <parvis/geometry.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 192
#define H 160
#define TRUTH_TOLERANCE_PX 1.0
#define BACKEND_TOLERANCE_PX 0.5
#define MODEL_RELATIVE_TOLERANCE 1e-12

static pv_image g_venus;

static int group_setup(void **state)
{
    if (tu_group_setup(state) != 0)
        return -1;
    return pv_image_read(tu_data_path("stereo/venus/left.pgm"), PV_PIXEL_U8, &g_venus) == PV_OK
               ? 0 : -1;
}

static int group_teardown(void **state)
{
    pv_image_free(&g_venus);
    return tu_group_teardown(state);
}

/* ---------------------------------------------------------------- frames */

/* A similarity about the frame's centre, then a shift: frame = A(T^-1 p). */
typedef struct motion {
    double scale, angle, dx, dy;
} motion;

/* The homography of the motion (frame-1 pixels to frame-2 pixels). */
static void motion_h(const motion *m, double h[9])
{
    const double c = m->scale * cos(m->angle), s = m->scale * sin(m->angle);
    const double cx = 0.5 * (W - 1), cy = 0.5 * (H - 1);
    h[0] = c;
    h[1] = -s;
    h[2] = cx + m->dx - c * cx + s * cy;
    h[3] = s;
    h[4] = c;
    h[5] = cy + m->dy - s * cx - c * cy;
    h[6] = h[7] = 0.0;
    h[8] = 1.0;
}

static float venus_at(double x, double y)
{
    /* The source window: Venus from (100, 90), so that frames warped off
     * the crop still see texture (bilinear, zero outside the image). */
    x += 100.0;
    y += 90.0;
    if (x < 0.0 || y < 0.0 || x > g_venus.width - 1 || y > g_venus.height - 1)
        return 0.0f;
    int x0 = (int)x, y0 = (int)y;
    int x1 = x0 + 1 < g_venus.width ? x0 + 1 : x0, y1 = y0 + 1 < g_venus.height ? y0 + 1 : y0;
    double fx = x - x0, fy = y - y0;
    double a = pv_image_get(&g_venus, x0, y0), b = pv_image_get(&g_venus, x1, y0);
    double c = pv_image_get(&g_venus, x0, y1), d = pv_image_get(&g_venus, x1, y1);
    return (float)((a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy);
}

/* The base frame moved by m (identity: the crop itself). */
static pv_image make_frame(const motion *m)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, W, H, PV_PIXEL_U8), PV_OK);
    double h[9];
    motion_h(m, h);
    /* The inverse of the similarity part, for the source of each pixel. */
    const double det = h[0] * h[4] - h[1] * h[3];
    for (int v = 0; v < H; v++)
        for (int u = 0; u < W; u++) {
            double px = u - h[2], py = v - h[5];
            double x = (h[4] * px - h[1] * py) / det, y = (-h[3] * px + h[0] * py) / det;
            float value = venus_at(x, y) + 0.5f;
            ((uint8_t *)out.data)[(size_t)v * W + u] = (uint8_t)(value > 255.0f ? 255.0f : value);
        }
    return out;
}

static const motion identity = {1.0, 0.0, 0.0, 0.0};
static const motion pair_motion = {0.92, 0.12, 6.0, -4.0};

static pv_sift_plan *make_plan(pv_context *ctx)
{
    pv_sift_plan *plan = NULL;
    tu_expect_ok(ctx, pv_sift_plan_create(ctx, W, H, NULL, &plan), "pv_sift_plan_create");
    return plan;
}

static double grid_error(const double *estimate, const double *truth)
{
    return match_homography_error(estimate, truth, W, H);
}

/* Largest distance between the images under estimate and truth of the
 * frame's four corners. */
static double corner_error(const double *estimate, const double *truth)
{
    static const double corners[4][2] = {{0, 0}, {W - 1, 0}, {0, H - 1}, {W - 1, H - 1}};
    double worst = 0.0;
    for (int c = 0; c < 4; c++) {
        double e[2], t[2];
        match_apply_h(estimate, corners[c][0], corners[c][1], e);
        match_apply_h(truth, corners[c][0], corners[c][1], t);
        double d = hypot(e[0] - t[0], e[1] - t[1]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* ---------------------------------------------------------- known answer */

static void test_known_answer(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = make_frame(&identity), b = make_frame(&pair_motion);
    pv_sift_plan *plan = make_plan(ctx);
    pv_sift_chain_result r;
    tu_expect_ok(ctx, pv_sift_match_images(plan, &a, &b, NULL, NULL, &r), "pv_sift_match_images");
    double truth[9];
    motion_h(&pair_motion, truth);
    double error = grid_error(r.geometry.model, truth);
    print_message("  %d and %d keypoints, %d matches, %d inliers, error %.3f px\n", r.keypoints1,
                  r.keypoints2, r.matches, r.inlier_count, error);
    assert_true(r.has_model);
    assert_true(error < TRUTH_TOLERANCE_PX);
    assert_true(fabs(r.geometry.model[8] - 1.0) < 1e-12);
    assert_true(r.inlier_count >= 20 && r.inlier_count <= r.matches);
    assert_int_equal(r.inlier_count, r.geometry.inlier_count);
    for (int i = 0; i < r.inlier_count; i++) {
        double q[2];
        match_apply_h(truth, r.inliers[i].x1, r.inliers[i].y1, q);
        assert_true(hypot(q[0] - r.inliers[i].x2, q[1] - r.inliers[i].y2) < 3.0);
        assert_true(i == 0 || r.inliers[i].query > r.inliers[i - 1].query);
    }
    pv_sift_chain_result_free(&r);
    assert_null(r.inliers);
    pv_sift_plan_destroy(plan);
    pv_image_free(&a);
    pv_image_free(&b);
}

/* --------------------------------------------------- the composed calls */

static void compose(pv_context *ctx, const pv_image *a, const pv_image *b,
                    const pv_sift_match_params *mp, pv_sift_features *fa, pv_sift_features *fb,
                    pv_sift_matches *m, pv_geometry_result *g, uint8_t **mask)
{
    pv_sift_plan *plan = make_plan(ctx);
    tu_expect_ok(ctx, pv_sift_detect(plan, a, fa), "pv_sift_detect 1");
    tu_expect_ok(ctx, pv_sift_detect(plan, b, fb), "pv_sift_detect 2");
    pv_sift_plan_destroy(plan);
    tu_expect_ok(ctx, pv_sift_match(ctx, fa, fb, mp, m), "pv_sift_match");
    *mask = malloc((size_t)m->count + 1);
    assert_non_null(*mask);
    tu_expect_ok(ctx, pv_find_geometry_sift(ctx, PV_GEOMETRY_HOMOGRAPHY, fa, fb, m, NULL, g, *mask),
                 "pv_find_geometry_sift");
}

static void assert_models_equal(const double *x, const double *y)
{
    for (int i = 0; i < 9; i++)
        assert_true(fabs(x[i] - y[i]) <= MODEL_RELATIVE_TOLERANCE * (1.0 + fabs(y[i])));
}

static void check_equals_composed(pv_context *ctx, int mutual)
{
    pv_image a = make_frame(&identity), b = make_frame(&pair_motion);
    pv_sift_match_params mp;
    pv_sift_match_params_default(&mp);
    mp.mutual = mutual;
    pv_sift_features fa = {0}, fb = {0};
    pv_sift_matches m = {0, NULL};
    pv_geometry_result g;
    uint8_t *mask = NULL;
    compose(ctx, &a, &b, &mp, &fa, &fb, &m, &g, &mask);

    pv_sift_plan *plan = make_plan(ctx);
    pv_sift_chain_result r;
    tu_expect_ok(ctx, pv_sift_match_images(plan, &a, &b, &mp, NULL, &r), "pv_sift_match_images");
    assert_int_equal(r.keypoints1, fa.count);
    assert_int_equal(r.keypoints2, fb.count);
    assert_int_equal(r.matches, m.count);
    assert_int_equal(r.inlier_count, g.inlier_count);
    assert_int_equal(r.geometry.hypotheses, g.hypotheses);
    assert_int_equal(r.geometry.best_hypothesis, g.best_hypothesis);
    assert_models_equal(r.geometry.model, g.model);
    int k = 0;
    for (int i = 0; i < m.count; i++) {
        if (!mask[i])
            continue;
        const pv_sift_pair *p = &m.pairs[i];
        const pv_sift_point_match *c = &r.inliers[k++];
        assert_int_equal(c->query, p->query);
        assert_int_equal(c->train, p->train);
        assert_true(c->x1 == fa.keypoints[p->query].x && c->y1 == fa.keypoints[p->query].y);
        assert_true(c->x2 == fb.keypoints[p->train].x && c->y2 == fb.keypoints[p->train].y);
        assert_true(c->distance == p->distance);
    }
    assert_int_equal(k, r.inlier_count);
    pv_sift_chain_result_free(&r);
    pv_sift_plan_destroy(plan);
    free(mask);
    pv_sift_matches_free(&m);
    pv_sift_features_free(&fa);
    pv_sift_features_free(&fb);
    pv_image_free(&a);
    pv_image_free(&b);
}

static void test_equals_composed(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    check_equals_composed(ctx, 0);
    check_equals_composed(ctx, 1);
}

/* Frames with more keypoints than a fresh plan's lists hold (1024 for
 * these sizes): random texture, the second a crop shifted by (5, 3).  On
 * OpenCL the pair's side-by-side detection finds its lists short and the
 * frames are detected one by one, growing the lists; the answer is still
 * the composed calls'.  A plan with a top-K cap composes the calls. */
static void test_long_lists_and_cap(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    /* Random values every 3 px, bilinear between them: blobs of about
     * SIFT's finest scales, many keypoints; a is b's texture moved by (5, 3). */
    pv_image a, b;
    tu_blob_frames(&b, &a, W, H, 3, 11, 5, 3);
    const double shift[9] = {1, 0, 5, 0, 1, 3, 0, 0, 1};
    for (int cap = 0; cap <= 200; cap += 200) {
        pv_sift_params params;
        pv_sift_params_default(&params);
        params.max_keypoints = cap;
        pv_sift_plan *plan = NULL, *single = NULL;
        tu_expect_ok(ctx, pv_sift_plan_create(ctx, W, H, &params, &plan), "plan");
        tu_expect_ok(ctx, pv_sift_plan_create(ctx, W, H, &params, &single), "plan");
        pv_sift_chain_result r;
        tu_expect_ok(ctx, pv_sift_match_images(plan, &a, &b, NULL, NULL, &r), "chain");
        pv_sift_features fa = {0}, fb = {0};
        pv_sift_matches m = {0, NULL};
        pv_geometry_result g;
        tu_expect_ok(ctx, pv_sift_detect(single, &a, &fa), "detect a");
        tu_expect_ok(ctx, pv_sift_detect(single, &b, &fb), "detect b");
        tu_expect_ok(ctx, pv_sift_match(ctx, &fa, &fb, NULL, &m), "match");
        tu_expect_ok(ctx, pv_find_geometry_sift(ctx, PV_GEOMETRY_HOMOGRAPHY, &fa, &fb, &m, NULL,
                                                &g, NULL), "homography");
        print_message("  cap %d: %d and %d keypoints, %d matches, %d inliers\n", cap,
                      r.keypoints1, r.keypoints2, r.matches, r.inlier_count);
        assert_true(cap > 0 || r.keypoints1 > 1024);
        assert_int_equal(r.keypoints1, fa.count);
        assert_int_equal(r.keypoints2, fb.count);
        assert_int_equal(r.matches, m.count);
        assert_int_equal(r.inlier_count, g.inlier_count);
        assert_models_equal(r.geometry.model, g.model);
        assert_true(grid_error(r.geometry.model, shift) < TRUTH_TOLERANCE_PX);
        pv_sift_chain_result_free(&r);
        /* The next pair on the grown lists goes side by side. */
        tu_expect_ok(ctx, pv_sift_match_images(plan, &a, &b, NULL, NULL, &r), "chain again");
        assert_models_equal(r.geometry.model, g.model);
        pv_sift_chain_result_free(&r);
        /* Tracking onto a frame with more keypoints than a fresh plan's
         * lists (on OpenCL the step that matches without waiting for the
         * count finds them short and runs again, waiting): a (from the
         * Venus frame: a failure of too few matches, or a model) then b,
         * whose step is the pair's. */
        pv_sift_plan *track = NULL;
        tu_expect_ok(ctx, pv_sift_plan_create(ctx, W, H, &params, &track), "plan");
        pv_image venus = make_frame(&identity);
        tu_expect_ok(ctx, pv_sift_track_next(track, &venus, NULL, NULL, &r), "track venus");
        pv_status status = pv_sift_track_next(track, &a, NULL, NULL, &r);
        assert_true(status == PV_OK || status == PV_ERR_INVALID);
        if (status == PV_OK)
            pv_sift_chain_result_free(&r);
        tu_expect_ok(ctx, pv_sift_track_next(track, &b, NULL, NULL, &r), "track b");
        assert_int_equal(r.keypoints1, fa.count);
        assert_int_equal(r.matches, m.count);
        assert_models_equal(r.geometry.model, g.model);
        pv_sift_chain_result_free(&r);
        pv_sift_plan_destroy(track);
        pv_image_free(&venus);
        pv_sift_matches_free(&m);
        pv_sift_features_free(&fa);
        pv_sift_features_free(&fb);
        pv_sift_plan_destroy(plan);
        pv_sift_plan_destroy(single);
    }
    pv_image_free(&a);
    pv_image_free(&b);
}

/* ------------------------------------------------------- across backends */

static void test_backends_agree(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image a = make_frame(&identity), b = make_frame(&pair_motion);
    pv_sift_plan *cpu_plan = make_plan(tu_cpu), *cl_plan = make_plan(cl);
    pv_sift_chain_result rc, ro;
    tu_expect_ok(tu_cpu, pv_sift_match_images(cpu_plan, &a, &b, NULL, NULL, &rc), "cpu chain");
    tu_expect_ok(cl, pv_sift_match_images(cl_plan, &a, &b, NULL, NULL, &ro), "opencl chain");
    double diff = grid_error(ro.geometry.model, rc.geometry.model);
    print_message("  cpu %d inliers, opencl %d, models %.4f px apart\n", rc.inlier_count,
                  ro.inlier_count, diff);
    assert_true(diff < BACKEND_TOLERANCE_PX);
    assert_true(abs(ro.inlier_count - rc.inlier_count) <= rc.inlier_count / 10);
    pv_sift_chain_result_free(&rc);
    pv_sift_chain_result_free(&ro);
    pv_sift_plan_destroy(cpu_plan);
    pv_sift_plan_destroy(cl_plan);
    pv_image_free(&a);
    pv_image_free(&b);
}

/* --------------------------------------------------------------- tracking */

#define TRACK_FRAMES 4
#define TRACK_SEED 5

static void test_tracking(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    motion path[TRACK_FRAMES];
    pv_image frames[TRACK_FRAMES];
    for (int f = 0; f < TRACK_FRAMES; f++) {
        path[f] = (motion){1.0 - 0.02 * f, 0.04 * f, 3.0 * f, -2.0 * f};
        frames[f] = make_frame(&path[f]);
    }
    pv_sift_plan *plan = make_plan(ctx), *pair_plan = make_plan(ctx);
    /* RANSAC parameters other than the defaults reach both calls alike. */
    pv_ransac_params rp;
    pv_ransac_params_default(&rp);
    rp.seed = TRACK_SEED;
    for (int round = 0; round < 2; round++) {
        for (int f = 0; f < (round ? 2 : TRACK_FRAMES); f++) {
            pv_sift_chain_result r, pair;
            tu_expect_ok(ctx, pv_sift_track_next(plan, &frames[f], NULL, &rp, &r),
                         "pv_sift_track_next");
            if (f == 0) {
                assert_false(r.has_model);
                assert_true(r.keypoints2 > 0);
                assert_null(r.inliers);
                continue;
            }
            assert_true(r.has_model);
            /* The step's truth: frame f-1 back to the crop, then to frame f. */
            double from[9], to[9], inv[9], step[9];
            motion_h(&path[f - 1], from);
            motion_h(&path[f], to);
            const double det = from[0] * from[4] - from[1] * from[3];
            inv[0] = from[4] / det;
            inv[1] = -from[1] / det;
            inv[3] = -from[3] / det;
            inv[4] = from[0] / det;
            inv[2] = -(inv[0] * from[2] + inv[1] * from[5]);
            inv[5] = -(inv[3] * from[2] + inv[4] * from[5]);
            inv[6] = inv[7] = 0.0;
            inv[8] = 1.0;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    step[3 * i + j] = to[3 * i] * inv[j] + to[3 * i + 1] * inv[3 + j] +
                                      to[3 * i + 2] * inv[6 + j];
            const double error = corner_error(r.geometry.model, step);
            print_message("  frame %d: %d matches, %d inliers, error %.3f px\n", f, r.matches,
                          r.inlier_count, error);

            assert_true(error < TRUTH_TOLERANCE_PX);
            tu_expect_ok(ctx, pv_sift_match_images(pair_plan, &frames[f - 1], &frames[f], NULL,
                                                   &rp, &pair), "pv_sift_match_images");
            assert_models_equal(r.geometry.model, pair.geometry.model);
            assert_int_equal(r.inlier_count, pair.inlier_count);
            assert_int_equal(r.keypoints1, pair.keypoints1);
            pv_sift_chain_result_free(&r);
            pv_sift_chain_result_free(&pair);
        }
        pv_sift_track_reset(plan); /* the second round (two frames) starts a new track */
    }
    pv_sift_plan_destroy(plan);
    pv_sift_plan_destroy(pair_plan);
    for (int f = 0; f < TRACK_FRAMES; f++)
        pv_image_free(&frames[f]);
}

/* -------------------------------------------------------------- bad input */

static void assert_untouched(const pv_sift_chain_result *r)
{
    assert_int_equal(r->keypoints1, -7);
    assert_int_equal(r->inlier_count, -7);
    assert_true(r->inliers == (pv_sift_point_match *)r);
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = make_frame(&identity), b = make_frame(&pair_motion), small, flat, nan_image;
    assert_int_equal(pv_image_alloc(&small, W - 8, H, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&small, 3);
    assert_int_equal(pv_image_alloc(&flat, W, H, PV_PIXEL_U8), PV_OK);
    tu_fill_image(&flat, 90.0f);
    assert_int_equal(pv_image_alloc(&nan_image, W, H, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&nan_image, 0.5f);
    tu_set_pixel(&nan_image, 5, 7, NAN);
    pv_sift_plan *plan = make_plan(ctx);
    pv_sift_chain_result r;
    memset(&r, 0, sizeof r);
    r.keypoints1 = r.inlier_count = -7;
    r.inliers = (pv_sift_point_match *)&r; /* a sentinel, never freed */

    assert_int_equal(pv_sift_match_images(NULL, &a, &b, NULL, NULL, &r), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images(plan, NULL, &b, NULL, NULL, &r), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images(plan, &a, NULL, NULL, NULL, &r), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images(plan, &a, &b, NULL, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images(plan, &a, &small, NULL, NULL, &r), PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(ctx), "image2 is"));
    assert_int_equal(pv_sift_match_images(plan, &nan_image, &b, NULL, NULL, &r), PV_ERR_INVALID);
    pv_sift_match_params mp;
    pv_sift_match_params_default(&mp);
    mp.ratio = -1.0f;
    assert_int_equal(pv_sift_match_images(plan, &a, &b, &mp, NULL, &r), PV_ERR_INVALID);
    pv_ransac_params rp;
    pv_ransac_params_default(&rp);
    rp.threshold = 0.0f;
    assert_int_equal(pv_sift_match_images(plan, &a, &b, NULL, &rp, &r), PV_ERR_INVALID);
    /* A featureless frame: no matches, a clear status. */
    assert_int_equal(pv_sift_match_images(plan, &a, &flat, NULL, NULL, &r), PV_ERR_INVALID);
    assert_non_null(strstr(pv_context_last_error(ctx), "needs at least 4"));
    assert_untouched(&r);

    assert_int_equal(pv_sift_track_next(NULL, &a, NULL, NULL, &r), PV_ERR_INVALID);
    assert_int_equal(pv_sift_track_next(plan, &small, NULL, NULL, &r), PV_ERR_INVALID);
    assert_int_equal(pv_sift_track_next(plan, &a, NULL, NULL, NULL), PV_ERR_INVALID);
    assert_untouched(&r);
    /* Tracking onto a featureless frame fails, and the plan keeps that
     * frame, so the next frame (matched to no keypoints) fails too. */
    pv_sift_chain_result first;
    tu_expect_ok(ctx, pv_sift_track_next(plan, &a, NULL, NULL, &first), "track a");
    assert_false(first.has_model);
    assert_int_equal(pv_sift_track_next(plan, &flat, NULL, NULL, &r), PV_ERR_INVALID);
    assert_untouched(&r);
    assert_int_equal(pv_sift_track_next(plan, &b, NULL, NULL, &r), PV_ERR_INVALID);
    assert_untouched(&r);
    pv_sift_track_reset(NULL);
    pv_sift_chain_result_free(NULL);
    pv_sift_plan_destroy(plan);
    pv_image_free(&a);
    pv_image_free(&b);
    pv_image_free(&small);
    pv_image_free(&flat);
    pv_image_free(&nan_image);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_known_answer),
        TU_ON_BOTH(test_equals_composed),
        TU_ON_BOTH(test_long_lists_and_cap),
        cmocka_unit_test(test_backends_agree),
        TU_ON_BOTH(test_tracking),
        TU_ON_BOTH(test_bad_input),
    };
    return cmocka_run_group_tests_name("sift_chain", tests, group_setup, group_teardown);
}
