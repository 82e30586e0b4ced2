/* Tests of the geometry module: RANSAC homography and fundamental matrix.
 *
 *   - known answers on every backend: matches made by a known homography
 *     (0.3 px Gaussian noise, 50% uniformly random outliers) give a model
 *     within 1 px of the truth over the whole image (a 9 x 9 grid), flag
 *     >= 95% of the true inliers and no more than 1% of the outliers;
 *     two synthetic camera views (30% outliers) give an F whose Sampson
 *     distance to every noise-free correspondence is below 0.5 px and
 *     whose smallest singular value is below 1e-6 of the largest;
 *   - OpenCL against the CPU backend: the same winning hypothesis, the same
 *     hypothesis count, the same model bit for bit and the same inlier
 *     mask, for H and for F (the backends do the same float operations in
 *     the same order); the cross-check mode accepts the device's run;
 *   - the host's refinement spreads its passes over OpenMP threads in fixed
 *     chunks: CPU contexts of 1 and 3 threads give the same model bit for
 *     bit and the same mask, for H and F, on sets large enough (10 000
 *     matches) to take the parallel path;
 *   - the early stop: a clean set stops well before `iterations`, and
 *     confidence 1 runs them all;
 *   - the SIFT convenience gives the point call's answer;
 *   - bad input: too few matches, collinear and repeated points, NaN/Inf,
 *     NULL, bad params, out-of-range pairs: PV_ERR_INVALID, outputs untouched.
 *
 * OpenCL parts are skipped without a device, under PARVIS_BACKEND=cpu or
 * with PARVIS_TEST_SKIP_OPENCL=1. */
#include "match_set.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 640.0
#define HEIGHT 480.0
#define NOISE_PX 0.3
#define TRUTH_TOLERANCE_PX 1.0

static void alloc_matches(match_set *m, int count)
{
    assert_int_equal(match_set_alloc(m, count), 0);
}

static double gaussian(uint32_t *state)
{
    double u = (tu_rand01(state) + 1e-7) / (1.0 + 2e-7), v = tu_rand01(state);
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979 * v);
}

/* A rotation by 0.2 rad, scale 1.1, a shift and a mild perspective. */
static const double truth_h[9] = {1.078, -0.2185, 40.0, 0.2185, 1.078, -25.0, 1.2e-4, -0.8e-4, 1.0};

static void make_homography_matches(match_set *m, int count, double outlier_share, uint32_t seed)
{
    uint32_t state = seed;
    alloc_matches(m, count);
    for (int i = 0; i < count; i++) {
        double x = WIDTH * tu_rand01(&state), y = HEIGHT * tu_rand01(&state), q[2], seen[2];
        match_apply_h(truth_h, x, y, q);
        int inlier = tu_rand01(&state) >= outlier_share;
        for (int axis = 0; axis < 2; axis++)
            seen[axis] = inlier ? q[axis] + NOISE_PX * gaussian(&state)
                                : (axis ? HEIGHT : WIDTH) * tu_rand01(&state);
        match_set_put(m, i, x, y, q, inlier, seen[0], seen[1]);
    }
}

/* Largest distance between the estimate's and the truth's images of a
 * 9 x 9 grid over image 1. */
static double homography_error(const double *estimate)
{
    return match_homography_error(estimate, truth_h, WIDTH, HEIGHT);
}

/* Share of the true inliers flagged, and of the outliers flagged. */
static void mask_quality(const match_set *m, const uint8_t *mask, double *found, double *false_share)
{
    int inliers = 0, hit = 0, outliers = 0, wrong = 0;
    for (int i = 0; i < m->count; i++) {
        if (m->truth[i]) {
            inliers++;
            hit += mask[i];
        } else {
            outliers++;
            wrong += mask[i];
        }
    }
    *found = (double)hit / inliers;
    *false_share = outliers ? (double)wrong / outliers : 0.0;
}

static int mask_sum(const uint8_t *mask, int count)
{
    int sum = 0;
    for (int i = 0; i < count; i++)
        sum += mask[i];
    return sum;
}

/* Two synthetic camera views (below). */
static void make_two_views(match_set *m, int count, double outlier_share, uint32_t seed);

typedef pv_status (*find_fn)(pv_context *, const float *, const float *, int,
                             const pv_ransac_params *, pv_geometry_result *, uint8_t *);

static find_fn finder(pv_geometry_model model)
{
    return model == PV_GEOMETRY_HOMOGRAPHY ? pv_find_homography : pv_find_fundamental;
}

/* A match set of either model, and how it is made. */
typedef struct match_case {
    pv_geometry_model model;
    int count;
    double outliers;
    uint32_t seed;
} match_case;

static void make_case_matches(const match_case *c, match_set *m)
{
    if (c->model == PV_GEOMETRY_HOMOGRAPHY)
        make_homography_matches(m, c->count, c->outliers, c->seed);
    else
        make_two_views(m, c->count, c->outliers, c->seed);
}

/* The case's matches, and the model's search on them with the defaults;
 * returns the inlier mask (to free). */
static uint8_t *find_on_case(pv_context *ctx, const match_case *c, match_set *m,
                             pv_geometry_result *r)
{
    make_case_matches(c, m);
    uint8_t *mask = malloc((size_t)m->count);
    assert_non_null(mask);
    assert_int_equal(finder(c->model)(ctx, m->p1, m->p2, m->count, NULL, r, mask), PV_OK);
    return mask;
}

static void test_homography_known(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    static const match_case known = {PV_GEOMETRY_HOMOGRAPHY, 2000, 0.5, 11};
    match_set m;
    pv_geometry_result r;
    uint8_t *mask = find_on_case(ctx, &known, &m, &r);
    double error = homography_error(r.model), found, false_share;
    mask_quality(&m, mask, &found, &false_share);
    print_message("homography: %.4f px from the truth, %d inliers, %.1f%% found, %.2f%% false, "
                  "%d hypotheses\n", error, r.inlier_count, 100 * found, 100 * false_share,
                  r.hypotheses);
    assert_true(error < TRUTH_TOLERANCE_PX);
    assert_true(found >= 0.95);
    assert_true(false_share <= 0.01);
    assert_int_equal(r.inlier_count, mask_sum(mask, m.count));
    assert_true(r.model[8] == 1.0); /* the OpenCV / Oxford convention */
    /* Without refinement the minimal model is still close. */
    pv_ransac_params p;
    pv_ransac_params_default(&p);
    p.refine = 0;
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, &p, &r, NULL), PV_OK);
    print_message("minimal model: %.4f px from the truth\n", homography_error(r.model));
    assert_true(homography_error(r.model) < 5.0);
    free(mask);
    match_set_free(&m);
}

/* ---------------------------------------------------------- two views */

typedef struct camera {
    double k[9];             /* intrinsics */
    double r[9];             /* world to camera rotation */
    double t[3];
} camera;

static void rotation(double ax, double ay, double *r)
{
    double cx = cos(ax), sx = sin(ax), cy = cos(ay), sy = sin(ay);
    const double m[9] = {cy, sx * sy, cx * sy, 0, cx, -sx, -sy, sx * cy, cx * cy};
    memcpy(r, m, sizeof m);
}

static void project(const camera *c, const double *x, double *out)
{
    double p[3];
    for (int i = 0; i < 3; i++)
        p[i] = c->r[3 * i] * x[0] + c->r[3 * i + 1] * x[1] + c->r[3 * i + 2] * x[2] + c->t[i];
    out[0] = c->k[0] * p[0] / p[2] + c->k[2];
    out[1] = c->k[4] * p[1] / p[2] + c->k[5];
}

static void make_two_views(match_set *m, int count, double outlier_share, uint32_t seed)
{
    uint32_t state = seed;
    camera c1 = {{500, 0, 320, 0, 500, 240, 0, 0, 1}, {0}, {0, 0, 0}};
    camera c2 = c1;
    rotation(0.0, 0.0, c1.r);
    rotation(0.05, -0.15, c2.r);
    c2.t[0] = -1.0;
    c2.t[1] = 0.2;
    c2.t[2] = 0.1;
    alloc_matches(m, count);
    for (int i = 0; i < count; i++) {
        double z = 4.0 + 6.0 * tu_rand01(&state);
        double x[3] = {(tu_rand01(&state) - 0.5) * z * 0.9, (tu_rand01(&state) - 0.5) * z * 0.7, z};
        double a[2], b[2], seen[2];
        project(&c1, x, a);
        project(&c2, x, b);
        int inlier = tu_rand01(&state) >= outlier_share;
        for (int axis = 0; axis < 2; axis++)
            seen[axis] = inlier ? b[axis] + NOISE_PX * gaussian(&state)
                                : (axis ? HEIGHT : WIDTH) * tu_rand01(&state);
        /* The true matches are noisy in image 1 too (drawn after image 2's). */
        for (int axis = 0; inlier && axis < 2; axis++)
            a[axis] = (float)a[axis] + (float)(NOISE_PX * gaussian(&state));
        match_set_put(m, i, a[0], a[1], b, inlier, seen[0], seen[1]);
    }
}

static double sampson(const double *f, double x1, double y1, double x2, double y2)
{
    double a = f[0] * x1 + f[1] * y1 + f[2], b = f[3] * x1 + f[4] * y1 + f[5];
    double c = f[6] * x1 + f[7] * y1 + f[8];
    double ta = f[0] * x2 + f[3] * y2 + f[6], tb = f[1] * x2 + f[4] * y2 + f[7];
    double e = x2 * a + y2 * b + c;
    return fabs(e) / sqrt(a * a + b * b + ta * ta + tb * tb);
}

static double det3(const double *m)
{
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
}

static void test_fundamental_known(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    static const match_case known = {PV_GEOMETRY_FUNDAMENTAL, 1500, 0.3, 5};
    match_set m;
    pv_geometry_result r;
    uint8_t *mask = find_on_case(ctx, &known, &m, &r);
    /* The noise-free correspondences (both images' clean points: image 1's
     * clean point is p1 less its noise, so use the epipolar residual of
     * the noisy p1 against the clean image-2 point as an upper bound). */
    double worst = 0.0, mean = 0.0;
    int inliers = 0;
    for (int i = 0; i < m.count; i++) {
        if (!m.truth[i])
            continue;
        double d = sampson(r.model, m.p1[2 * i], m.p1[2 * i + 1], m.clean2[2 * i],
                           m.clean2[2 * i + 1]);
        worst = fmax(worst, d);
        mean += d;
        inliers++;
    }
    mean /= inliers;
    double found, false_share;
    mask_quality(&m, mask, &found, &false_share);
    print_message("fundamental: Sampson distance to the true matches mean %.4f, max %.4f px; "
                  "%d inliers, %.1f%% found, %.2f%% false, det %.3g, %d hypotheses\n", mean, worst,
                  r.inlier_count, 100 * found, 100 * false_share, det3(r.model), r.hypotheses);
    assert_true(mean < 0.5);
    assert_true(worst < 2.0);
    assert_true(found >= 0.95);
    /* A Sampson band of 2 px admits random points near their epipolar line. */
    assert_true(false_share <= 0.05);
    assert_true(fabs(det3(r.model)) < 1e-9);
    assert_int_equal(r.inlier_count, mask_sum(mask, m.count));
    free(mask);
    match_set_free(&m);
}

/* ------------------------------------------------------ backend agreement */

/* The model's search with params p (NULL: defaults) on contexts ctx[0]
 * and ctx[1] (named in names for the log): the same winning hypothesis,
 * inlier count, model bit for bit and mask.  Their results in r. */
static void same_answer(pv_geometry_model model, const match_set *m, const pv_ransac_params *p,
                        pv_context *const ctx[2], const char *const names[2],
                        pv_geometry_result r[2])
{
    find_fn find = finder(model);
    uint8_t *masks = malloc(2 * (size_t)m->count);
    assert_non_null(masks);
    for (int i = 0; i < 2; i++)
        assert_int_equal(find(ctx[i], m->p1, m->p2, m->count, p, &r[i], masks + i * m->count),
                         PV_OK);
    print_message("%s, %d matches: %s hypothesis %d (%d inliers), %s %d (%d)\n",
                  model == PV_GEOMETRY_HOMOGRAPHY ? "H" : "F", m->count, names[0],
                  r[0].best_hypothesis, r[0].inlier_count, names[1], r[1].best_hypothesis,
                  r[1].inlier_count);
    assert_int_equal(r[0].best_hypothesis, r[1].best_hypothesis);
    assert_int_equal(r[0].inlier_count, r[1].inlier_count);
    assert_memory_equal(r[0].model, r[1].model, sizeof r[0].model);
    assert_memory_equal(masks, masks + m->count, (size_t)m->count);
    free(masks);
}

/* OpenCL against the CPU backend, every hypothesis scored; then the
 * cross-check mode, which scores every batch on both and accepts. */
static void agree_on(pv_geometry_model model, const match_set *m)
{
    pv_context *cl = tu_opencl_or_skip();
    if (!cl)
        return;
    pv_ransac_params p;
    pv_ransac_params_default(&p);
    p.confidence = 1.0;      /* all hypotheses: every batch is compared */
    p.iterations = 1000;
    pv_context *const ctx[2] = {tu_cpu, cl};
    static const char *const names[2] = {"CPU", "OpenCL"};
    pv_geometry_result r[2];
    same_answer(model, m, &p, ctx, names, r);
    assert_int_equal(r[0].best_sample_inliers, r[1].best_sample_inliers);
    assert_int_equal(r[0].hypotheses, r[1].hypotheses);
    find_fn find = finder(model);
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    p.iterations = 600;
    assert_int_equal(find(cl, m->p1, m->p2, m->count, &p, &r[1], NULL), PV_OK);
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
}

static void test_backends_agree(void **state)
{
    (void)state;
    static const match_case cases[] = {
        {PV_GEOMETRY_HOMOGRAPHY, 3000, 0.5, 23},
        {PV_GEOMETRY_FUNDAMENTAL, 2000, 0.4, 29},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        match_set m;
        make_case_matches(&cases[i], &m);
        agree_on(cases[i].model, &m);
        match_set_free(&m);
    }
}

/* ---------------------------------------------------------- thread count */

static pv_context *cpu_context_with_threads(int threads)
{
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_CPU;
    options.cpu_threads = threads;
    pv_context *ctx = NULL;
    assert_int_equal(pv_context_create(&ctx, &options), PV_OK);
    assert_int_equal(pv_context_cpu_threads(ctx), threads);
    return ctx;
}

static void test_thread_count_independent(void **state)
{
    (void)state;
    static const match_case cases[] = {
        {PV_GEOMETRY_HOMOGRAPHY, 10000, 0.5, 31},
        {PV_GEOMETRY_FUNDAMENTAL, 10000, 0.3, 37},
    };
    pv_context *const ctx[2] = {cpu_context_with_threads(1), cpu_context_with_threads(3)};
    static const char *const names[2] = {"1 thread", "3 threads"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        match_set m;
        make_case_matches(&cases[i], &m);
        pv_geometry_result r[2];
        same_answer(cases[i].model, &m, NULL, ctx, names, r);
        if (cases[i].model == PV_GEOMETRY_HOMOGRAPHY)
            assert_true(homography_error(r[0].model) < TRUTH_TOLERANCE_PX);
        match_set_free(&m);
    }
    pv_context_destroy(ctx[0]);
    pv_context_destroy(ctx[1]);
}

/* ------------------------------------------------------------ early stop */

static void test_early_stop(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    match_set m;
    make_homography_matches(&m, 500, 0.1, 31);
    pv_ransac_params p;
    pv_ransac_params_default(&p);
    p.iterations = 3 * PV_RANSAC_BATCH;
    pv_geometry_result r;
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, &p, &r, NULL), PV_OK);
    /* 90% inliers: a handful of hypotheses suffice; one batch of them. */
    assert_true(r.hypotheses < p.iterations);
    assert_true(homography_error(r.model) < TRUTH_TOLERANCE_PX);
    p.confidence = 1.0;
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, &p, &r, NULL), PV_OK);
    assert_int_equal(r.hypotheses, p.iterations);
    /* The same seed gives the same run; the winner is among those scored. */
    pv_geometry_result again;
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, &p, &again, NULL), PV_OK);
    assert_memory_equal(&r, &again, sizeof r);
    assert_true(r.best_hypothesis >= 0 && r.best_hypothesis < r.hypotheses);
    match_set_free(&m);
}

/* ----------------------------------------------------------------- SIFT */

static void test_sift_convenience(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    match_set m;
    make_homography_matches(&m, 400, 0.3, 37);
    /* Keypoints stored in reverse order in image 2, so the pairs matter. */
    pv_sift_keypoint *k1 = calloc((size_t)m.count, sizeof *k1), *k2 = calloc((size_t)m.count, sizeof *k2);
    pv_sift_pair *pairs = calloc((size_t)m.count, sizeof *pairs);
    assert_non_null(k1);
    assert_non_null(k2);
    assert_non_null(pairs);
    for (int i = 0; i < m.count; i++) {
        int j = m.count - 1 - i;
        k1[i].x = m.p1[2 * i];
        k1[i].y = m.p1[2 * i + 1];
        k2[j].x = m.p2[2 * i];
        k2[j].y = m.p2[2 * i + 1];
        pairs[i] = (pv_sift_pair){i, j, 0.1f, 0.5f};
    }
    pv_sift_features f1 = {m.count, k1, NULL, NULL, m.count}, f2 = {m.count, k2, NULL, NULL, m.count};
    pv_sift_matches sm = {m.count, pairs};
    pv_geometry_result a, b;
    assert_int_equal(pv_find_geometry_sift(ctx, PV_GEOMETRY_HOMOGRAPHY, &f1, &f2, &sm, NULL, &a,
                                           NULL), PV_OK);
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, NULL, &b, NULL), PV_OK);
    assert_memory_equal(&a, &b, sizeof a);
    /* A pair pointing past the keypoints is refused. */
    pairs[5].train = m.count;
    pv_geometry_result untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    a = untouched;
    assert_int_equal(pv_find_geometry_sift(ctx, PV_GEOMETRY_HOMOGRAPHY, &f1, &f2, &sm, NULL, &a,
                                           NULL), PV_ERR_INVALID);
    assert_memory_equal(&a, &untouched, sizeof a);
    assert_int_equal(pv_find_geometry_sift(ctx, (pv_geometry_model)7, &f1, &f2, &sm, NULL, &a,
                                           NULL), PV_ERR_INVALID);
    assert_int_equal(pv_find_geometry_sift(ctx, PV_GEOMETRY_FUNDAMENTAL, &f1, NULL, &sm, NULL,
                                           &a, NULL), PV_ERR_INVALID);
    free(k1);
    free(k2);
    free(pairs);
    match_set_free(&m);
}

/* ------------------------------------------------------------ bad input */

/* The call fails with PV_ERR_INVALID and leaves result and mask alone. */
static void expect_invalid(pv_context *ctx, pv_geometry_model model, const float *p1,
                           const float *p2, int count, const pv_ransac_params *params)
{
    pv_geometry_result result, sentinel;
    memset(&sentinel, 0x5a, sizeof sentinel);
    result = sentinel;
    uint8_t mask[64];
    memset(mask, 0xa5, sizeof mask);
    pv_status status = model == PV_GEOMETRY_HOMOGRAPHY
                           ? pv_find_homography(ctx, p1, p2, count, params, &result, mask)
                           : pv_find_fundamental(ctx, p1, p2, count, params, &result, mask);
    assert_int_equal(status, PV_ERR_INVALID);
    assert_memory_equal(&result, &sentinel, sizeof result);
    for (size_t i = 0; i < sizeof mask; i++)
        assert_int_equal(mask[i], 0xa5);
    if (ctx)
        assert_true(strlen(pv_last_error()) > 0);
}

static void test_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    match_set m;
    make_homography_matches(&m, 40, 0.0, 41);
    /* Too few matches: 3 for H, 7 for F. */
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, 3, NULL);
    assert_non_null(strstr(pv_last_error(), "at least 4"));
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, m.p2, 7, NULL);
    assert_non_null(strstr(pv_last_error(), "at least 8"));
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, 0, NULL);
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, -5, NULL);
    /* NULL arguments. */
    expect_invalid(NULL, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, m.count, NULL);
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, NULL, m.p2, m.count, NULL);
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, NULL, m.count, NULL);
    assert_int_equal(pv_find_homography(ctx, m.p1, m.p2, m.count, NULL, NULL, NULL),
                     PV_ERR_INVALID);
    /* Bad parameters. */
    pv_ransac_params p;
    const float bad_thresholds[] = {0.0f, -1.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_thresholds / sizeof bad_thresholds[0]; i++) {
        pv_ransac_params_default(&p);
        p.threshold = bad_thresholds[i];
        expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, m.count, &p);
    }
    pv_ransac_params_default(&p);
    p.iterations = 0;
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, m.count, &p);
    pv_ransac_params_default(&p);
    p.confidence = 1.5;
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, m.p2, m.count, &p);
    pv_ransac_params_default(&p);
    p.confidence = NAN;
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, m.p2, m.count, &p);
    pv_ransac_params_default(&p);
    p.refine = 2;
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, m.count, &p);
    /* NaN and Inf coordinates. */
    float saved = m.p1[7];
    m.p1[7] = NAN;
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, m.p1, m.p2, m.count, NULL);
    assert_non_null(strstr(pv_last_error(), "NaN"));
    m.p1[7] = saved;
    saved = m.p2[10];
    m.p2[10] = -INFINITY;
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, m.p2, m.count, NULL);
    m.p2[10] = saved;
    /* Collinear image-1 points (image 2 fine), and image-2 points all on one line. */
    float line[2 * 40], same[2 * 40];
    for (int i = 0; i < 40; i++) {
        line[2 * i] = 10.0f + 7.0f * (float)i;
        line[2 * i + 1] = 20.0f + 3.0f * (float)i;
        same[2 * i] = 100.0f;
        same[2 * i + 1] = 50.0f;
    }
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, line, m.p2, 40, NULL);
    assert_non_null(strstr(pv_last_error(), "one line"));
    expect_invalid(ctx, PV_GEOMETRY_FUNDAMENTAL, m.p1, line, 40, NULL);
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, same, m.p2, 40, NULL);
    assert_non_null(strstr(pv_last_error(), "same point"));
    /* Four distinct points of which three are collinear: no sample works. */
    const float bent[8] = {0, 0, 10, 0, 20, 0, 5, 8};
    const float bent2[8] = {1, 1, 11, 2, 21, 3, 6, 9};
    expect_invalid(ctx, PV_GEOMETRY_HOMOGRAPHY, bent, bent2, 4, NULL);
    assert_non_null(strstr(pv_last_error(), "degenerate"));
    match_set_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_homography_known, (void *)&tu_cpu_kind),
        cmocka_unit_test_prestate(test_homography_known, (void *)&tu_opencl_kind),
        cmocka_unit_test_prestate(test_fundamental_known, (void *)&tu_cpu_kind),
        cmocka_unit_test_prestate(test_fundamental_known, (void *)&tu_opencl_kind),
        cmocka_unit_test(test_backends_agree),
        cmocka_unit_test(test_thread_count_independent),
        cmocka_unit_test_prestate(test_early_stop, (void *)&tu_cpu_kind),
        cmocka_unit_test_prestate(test_early_stop, (void *)&tu_opencl_kind),
        cmocka_unit_test_prestate(test_sift_convenience, (void *)&tu_cpu_kind),
        cmocka_unit_test_prestate(test_bad_input, (void *)&tu_cpu_kind),
        cmocka_unit_test_prestate(test_bad_input, (void *)&tu_opencl_kind),
    };
    return cmocka_run_group_tests_name("geometry", tests, tu_group_setup, tu_group_teardown);
}
