/* Front end of the geometry module: RANSAC homography and fundamental
 * matrix (include/parvis/geometry.h).
 *
 * The front end owns everything that decides the answer except the heavy
 * part: it checks the input once, normalises the points, draws every
 * hypothesis' sample from a counter-based random stream, keeps the best
 * count (ties to the lowest hypothesis), decides the early stop, and
 * refines and denormalises the winner in double.  The backend only solves
 * the minimal models and counts inliers, batch by batch.  Numerical helpers
 * (eigenvectors, linear solves, refinement) live in lib/geometry/geometry_refine.c. */
#include "../core/internal.h"
#include "geometry_internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A point set whose scatter's smaller eigenvalue is below this share of
 * the larger one lies on a line. */
#define COLLINEAR_RATIO 1e-10
/* Twice the area of a sample's triangle (normalised units, where points
 * lie about sqrt(2) from their centroid) below which three points of a
 * homography sample count as collinear. */
#define SAMPLE_AREA_FLOOR 1e-3
/* Redraws of a degenerate sample, and index draws per attempt. */
#define SAMPLE_ATTEMPTS 64
#define SAMPLE_DRAWS 256

void pv_ransac_params_default(pv_ransac_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_ransac_decl, params); /* declared in geometry_params.c */
}

/* ------------------------------------------------------------------ checks */

static pv_status check_params(pv_context *ctx, const char *op, const pv_ransac_params *p)
{
    return pv_decl_check(ctx, op, &pv_ransac_decl, p); /* geometry_params.c */
}

static pv_status check_finite(pv_context *ctx, const char *op, const float *points, int count,
                              int image)
{
    for (int i = 0; i < 2 * count; i++)
        if (!isfinite(points[i]))
            return pv_fail(ctx, PV_ERR_INVALID, "%s: points%d[%d] (%s of match %d) is %s", op,
                           image, i, i % 2 ? "y" : "x", i / 2, isnan(points[i]) ? "NaN" : "infinite");
    return PV_OK;
}

static pv_status check_points(pv_context *ctx, const char *op, int sample, const float *points1,
                              const float *points2, int count, const pv_geometry_result *result)
{
    pv_status status = PV_CHECK_REQUIRED(ctx, op, {"points1", points1}, {"points2", points2},
                                         {"result", result});
    if (status != PV_OK)
        return status;
    if (count < sample)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %d matches, at least %d are needed", op, count,
                       sample);
    if ((size_t)count > SIZE_MAX / (4 * sizeof(double)))
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: %d matches overflow a buffer size", op, count);
    status = check_finite(ctx, op, points1, count, 1);
    return status == PV_OK ? check_finite(ctx, op, points2, count, 2) : status;
}

/* ----------------------------------------------------------- normalisation */

/* Hartley: centroid to the origin, mean distance sqrt(2); fails on a set
 * whose points coincide or lie on one line. */
static pv_status normalise_set(pv_context *ctx, const char *op, const float *pts, int count,
                               int image, pv_normaliser *n)
{
    double cx = 0.0, cy = 0.0;
    for (int i = 0; i < count; i++) {
        cx += pts[2 * i];
        cy += pts[2 * i + 1];
    }
    cx /= count;
    cy /= count;
    double mean = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0;
    for (int i = 0; i < count; i++) {
        double dx = pts[2 * i] - cx, dy = pts[2 * i + 1] - cy;
        mean += sqrt(dx * dx + dy * dy);
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
    }
    mean /= count;
    double half_trace = 0.5 * (sxx + syy);
    double spread = sqrt(0.25 * (sxx - syy) * (sxx - syy) + sxy * sxy);
    double larger = half_trace + spread, smaller = half_trace - spread;
    if (!(mean > 0.0) || !(smaller > COLLINEAR_RATIO * larger))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: the points of image %d %s (degenerate set)", op,
                       image, mean > 0.0 ? "lie on one line" : "are all the same point");
    *n = (pv_normaliser){cx, cy, sqrt(2.0) / mean};
    return PV_OK;
}

/* ----------------------------------------------------------------- samples */

/* The counter-based stream: a SplitMix64-style finaliser of seed and
 * counter, so any draw can be made without the ones before it. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int stream_index(uint64_t seed, uint64_t counter, int n)
{
    uint64_t r = mix64(seed ^ mix64(counter * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
    return (int)(((r >> 32) * (uint64_t)n) >> 32);
}

static double twice_area(const double *a, const double *b, const double *c)
{
    return fabs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

/* A homography sample with three collinear points in either image. */
static int sample_degenerate(const pv_estimation *est, const int *sample)
{
    if (est->kind != PV_GEOMETRY_HOMOGRAPHY)
        return 0;
    static const int triples[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
    for (int image = 0; image < 2; image++)
        for (int t = 0; t < 4; t++) {
            double p[3][2];
            for (int v = 0; v < 3; v++)
                pv_normalised_point(est, sample[triples[t][v]], image, p[v]);
            if (twice_area(p[0], p[1], p[2]) < SAMPLE_AREA_FLOOR)
                return 1;
        }
    return 0;
}

/* Distinct indices from the stream of (hypothesis, attempt); when the
 * draws run out (a tiny set), the lowest unused indices fill the rest. */
static void draw_indices(const pv_estimation *est, int hypothesis, int attempt, int *sample)
{
    uint64_t base = ((uint64_t)hypothesis << 24) | ((uint64_t)attempt << 8);
    int k = 0;
    for (int draw = 0; draw < SAMPLE_DRAWS && k < est->sample; draw++) {
        int index = stream_index(est->params.seed, base | (uint64_t)draw, est->count);
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= sample[j] == index;
        if (!seen)
            sample[k++] = index;
    }
    for (int index = 0; k < est->sample; index++) {
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= sample[j] == index;
        if (!seen)
            sample[k++] = index;
    }
}

/* Hypothesis h's sample: the first non-degenerate attempt, else the last
 * one (whose model then scores poorly or is rejected by the solver).
 * Returns 1 when the sample is non-degenerate. */
static int draw_sample(const pv_estimation *est, int hypothesis, int *sample)
{
    for (int attempt = 0; attempt < SAMPLE_ATTEMPTS; attempt++) {
        draw_indices(est, hypothesis, attempt, sample);
        if (!sample_degenerate(est, sample))
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ RANSAC */

/* Hypotheses enough to draw an all-inlier sample with the given
 * confidence, for the best inlier count so far. */
static int hypotheses_needed(const pv_estimation *est, int best)
{
    const double confidence = est->params.confidence;
    if (confidence >= 1.0 || best <= 0)
        return est->params.iterations;
    double all_inliers = pow((double)best / est->count, est->sample);
    if (confidence <= 0.0 || all_inliers >= 1.0)
        return 1;
    double needed = ceil(log(1.0 - confidence) / log1p(-all_inliers));
    if (!(needed < (double)est->params.iterations))
        return est->params.iterations;
    return needed < 1.0 ? 1 : (int)needed;
}

/* The best of a batch: highest count, ties to the lowest index. */
static int batch_best(const int *counts, int hypotheses)
{
    int best = 0;
    for (int i = 1; i < hypotheses; i++)
        if (counts[i] > counts[best])
            best = i;
    return best;
}

typedef struct batch_buffers {
    size_t sample;           /* indices a hypothesis draws */
    int crosscheck;
    pv_scratch scratch;      /* holds the arrays below */
    int *samples;
    float *models;
    int *counts;
    float *cpu_models;       /* cross-check only */
    int *cpu_counts;
} batch_buffers;

static void lay_out_batch(pv_scratch *scratch, void *arrays)
{
    batch_buffers *b = arrays;
    const size_t n = PV_RANSAC_BATCH;
    b->samples = pv_scratch_take(scratch, n * b->sample, sizeof *b->samples);
    b->models = pv_scratch_take(scratch, n * 9, sizeof *b->models);
    b->counts = pv_scratch_take(scratch, n, sizeof *b->counts);
    b->cpu_models = b->crosscheck ? pv_scratch_take(scratch, n * 9, sizeof *b->cpu_models) : NULL;
    b->cpu_counts = b->crosscheck ? pv_scratch_take(scratch, n, sizeof *b->cpu_counts) : NULL;
}

static pv_status alloc_batch(pv_estimation *est, int crosscheck, batch_buffers *b)
{
    *b = (batch_buffers){.sample = (size_t)est->sample, .crosscheck = crosscheck};
    if (pv_scratch_carve(&b->scratch, lay_out_batch, b, 0) != PV_OK)
        return pv_fail(est->ctx, PV_ERR_NOMEM, "%s: no memory for a batch of hypotheses", est->op);
    return PV_OK;
}

/* The CPU backend scores the same batch; its winner must be the device's. */
static pv_status crosscheck_batch(pv_estimation *est, void *cpu_plan, int first, int hypotheses,
                                  const batch_buffers *b)
{
    pv_context *ctx = est->ctx;
    pv_timing saved = ctx->timing;
    pv_status status = pv_cpu_backend.geometry->ransac_score(ctx, cpu_plan, b->samples, hypotheses,
                                                            b->cpu_models, b->cpu_counts);
    ctx->timing = saved;
    if (status != PV_OK)
        return status;
    int device = batch_best(b->counts, hypotheses), cpu = batch_best(b->cpu_counts, hypotheses);
    int differ = 0;
    for (int i = 0; i < hypotheses; i++)
        differ += b->counts[i] != b->cpu_counts[i];
    if (device != cpu || b->counts[device] != b->cpu_counts[cpu])
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "%s cross-check: best hypothesis %d (%d inliers) on the device but %d "
                       "(%d inliers) on the CPU; %d of %d counts differ", est->op, first + device,
                       b->counts[device], first + cpu, b->cpu_counts[cpu], differ, hypotheses);
    return PV_OK;
}

/* Score batches until the stop; the winner into est->best_*. */
static pv_status run_batches(pv_estimation *est, void *plan, void *cpu_plan, batch_buffers *b)
{
    const pv_geometry_ops *ops = est->ctx->ops->geometry;
    int needed = est->params.iterations, usable = 0;
    est->best_count = -1;
    est->hypotheses = 0;
    while (est->hypotheses < needed) {
        const int first = est->hypotheses;
        const int batch = needed - first < PV_RANSAC_BATCH ? needed - first : PV_RANSAC_BATCH;
        for (int i = 0; i < batch; i++)
            usable += draw_sample(est, first + i, b->samples + (size_t)i * (size_t)est->sample);
        pv_status status = ops->ransac_score(est->ctx, plan, b->samples, batch, b->models, b->counts);
        if (status == PV_OK && cpu_plan)
            status = crosscheck_batch(est, cpu_plan, first, batch, b);
        if (status != PV_OK)
            return status;
        int best = batch_best(b->counts, batch);
        if (b->counts[best] > est->best_count) {
            est->best_count = b->counts[best];
            est->best_index = first + best;
            memcpy(est->best_model, b->models + 9 * (size_t)best, sizeof est->best_model);
        }
        est->hypotheses = first + batch;
        int wanted = hypotheses_needed(est, est->best_count);
        needed = wanted < needed ? wanted : needed;
    }
    if (usable == 0 || est->best_count <= 0)
        return pv_fail(est->ctx, PV_ERR_INVALID, "%s: no sample of %d matches gave a model: the "
                       "matches are degenerate (collinear or repeated points)", est->op, est->sample);
    return PV_OK;
}

static pv_status run_ransac(pv_estimation *est)
{
    pv_context *ctx = est->ctx;
    const int crosscheck = pv_crosscheck_wanted(ctx);
    pv_ransac_job job = {est->kind, est->points, est->count,
                         est->params.threshold * est->params.threshold,
                         (float)(est->n[0].scale * est->n[0].scale),
                         (float)(est->n[1].scale * est->n[1].scale)};
    batch_buffers b;
    void *plan = NULL, *cpu_plan = NULL;
    pv_status status = alloc_batch(est, crosscheck, &b);
    if (status == PV_OK)
        status = ctx->ops->geometry->ransac_create(ctx, &job, &plan);
    if (status == PV_OK && crosscheck)
        status = pv_cpu_backend.geometry->ransac_create(ctx, &job, &cpu_plan);
    if (status == PV_OK)
        status = run_batches(est, plan, cpu_plan, &b);
    PV_DESTROY_PLAN_PAIR(ctx, geometry, ransac_destroy, plan, cpu_plan);
    pv_scratch_free(&b.scratch);
    return status;
}

/* ------------------------------------------------------------- estimation */

static pv_status prepare(pv_estimation *est)
{
    pv_status status = normalise_set(est->ctx, est->op, est->points1, est->count, 1, &est->n[0]);
    if (status == PV_OK)
        status = normalise_set(est->ctx, est->op, est->points2, est->count, 2, &est->n[1]);
    if (status != PV_OK)
        return status;
    est->points = malloc(4 * (size_t)est->count * sizeof *est->points);
    est->mask = malloc((size_t)est->count * sizeof *est->mask);
    est->scratch = malloc((size_t)est->count * sizeof *est->scratch);
    est->index = malloc((size_t)est->count * sizeof *est->index);
    if (!est->points || !est->mask || !est->scratch || !est->index)
        return pv_fail(est->ctx, PV_ERR_NOMEM, "%s: no memory for %d matches", est->op, est->count);
    const int n = est->count;
    const int threads = n >= PV_GEOMETRY_PARALLEL_MIN && est->ctx->cpu_threads > 1
                            ? est->ctx->cpu_threads : 1;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < n; i++)
        for (int image = 0; image < 2; image++) {
            double p[2];
            pv_normalised_point(est, i, image, p);
            est->points[4 * (size_t)i + 2 * (size_t)image] = (float)p[0];
            est->points[4 * (size_t)i + 2 * (size_t)image + 1] = (float)p[1];
        }
    return PV_OK;
}

static void free_estimation(pv_estimation *est)
{
    free(est->points);
    free(est->mask);
    free(est->scratch);
    free(est->index);
}

/* RANSAC, then refinement; the final model in pixels into result.  The
 * stages' times go to the log (PARVIS_LOG=1), to see where a call's host
 * time goes. */
static pv_status estimate(pv_estimation *est, pv_geometry_result *result)
{
    const double start = pv_now_ms();
    pv_status status = prepare(est);
    const double prepared = pv_now_ms();
    if (status == PV_OK)
        status = run_ransac(est);
    const double scored = pv_now_ms();
    if (status != PV_OK)
        return status;
    double model[9];
    for (int i = 0; i < 9; i++)
        model[i] = est->best_model[i];
    pv_finish_model(est, model, result);
    pv_log(est->ctx, "%s: %d matches: prepare %.3f ms, ransac %.3f ms (%d hypotheses), "
           "finish %.3f ms", est->op, est->count, prepared - start, scored - prepared,
           est->hypotheses, pv_now_ms() - scored);
    result->hypotheses = est->hypotheses;
    result->best_hypothesis = est->best_index;
    result->best_sample_inliers = est->best_count;
    return PV_OK;
}

static pv_status find_model(pv_context *ctx, pv_geometry_model kind, const char *op,
                            const float *points1, const float *points2, int count,
                            const pv_ransac_params *params, pv_geometry_result *result,
                            uint8_t *inliers)
{
    const int sample = kind == PV_GEOMETRY_HOMOGRAPHY ? PV_HOMOGRAPHY_SAMPLE : PV_FUNDAMENTAL_SAMPLE;
    pv_ransac_params p;
    pv_ransac_params_default(&p);
    if (params)
        p = *params;
    pv_status status = check_points(ctx, op, sample, points1, points2, count, result);
    if (status == PV_OK)
        status = check_params(ctx, op, &p);
    if (status != PV_OK)
        return status;
    pv_estimation est = {.ctx = ctx, .kind = kind, .op = op, .count = count, .sample = sample,
                         .points1 = points1, .points2 = points2, .params = p};
    pv_geometry_result out;
    memset(&out, 0, sizeof out);
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = estimate(&est, &out);
    pv_call_end(ctx);
    if (status == PV_OK) {
        *result = out;
        if (inliers)
            memcpy(inliers, est.mask, (size_t)count);
    }
    free_estimation(&est);
    return status;
}

pv_status pv_find_homography(pv_context *ctx, const float *points1, const float *points2,
                             int count, const pv_ransac_params *params, pv_geometry_result *result,
                             uint8_t *inliers)
{
    return find_model(ctx, PV_GEOMETRY_HOMOGRAPHY, "find_homography", points1, points2, count,
                      params, result, inliers);
}

pv_status pv_find_fundamental(pv_context *ctx, const float *points1, const float *points2,
                              int count, const pv_ransac_params *params,
                              pv_geometry_result *result, uint8_t *inliers)
{
    return find_model(ctx, PV_GEOMETRY_FUNDAMENTAL, "find_fundamental", points1, points2, count,
                      params, result, inliers);
}

/* -------------------------------------------------------------- from SIFT */

static int keypoints_valid(const pv_sift_features *f)
{
    return f && f->count >= 0 && (f->count == 0 || f->keypoints);
}

static pv_status check_sift(pv_context *ctx, pv_geometry_model model, const pv_sift_features *f1,
                            const pv_sift_features *f2, const pv_sift_matches *matches)
{
    const char *op = "find_geometry_sift";
    pv_status status = pv_check_required(ctx, op, NULL, 0);
    if (status != PV_OK)
        return status;
    if (model != PV_GEOMETRY_HOMOGRAPHY && model != PV_GEOMETRY_FUNDAMENTAL)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: model %d is not a pv_geometry_model", op,
                       (int)model);
    if (!keypoints_valid(f1) || !keypoints_valid(f2))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: features%d is NULL or has no keypoints", op,
                       keypoints_valid(f1) ? 2 : 1);
    if (!matches || matches->count < 0 || (matches->count > 0 && !matches->pairs))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: matches is NULL or has no pairs", op);
    for (int i = 0; i < matches->count; i++) {
        const pv_sift_pair *pair = &matches->pairs[i];
        if (pair->query < 0 || pair->query >= f1->count || pair->train < 0 ||
            pair->train >= f2->count)
            return pv_fail(ctx, PV_ERR_INVALID, "%s: match %d pairs keypoints %d and %d, outside "
                           "the %d and %d keypoints given", op, i, pair->query, pair->train,
                           f1->count, f2->count);
    }
    return PV_OK;
}

pv_status pv_find_geometry_sift(pv_context *ctx, pv_geometry_model model,
                                const pv_sift_features *features1,
                                const pv_sift_features *features2, const pv_sift_matches *matches,
                                const pv_ransac_params *params, pv_geometry_result *result,
                                uint8_t *inliers)
{
    pv_status status = check_sift(ctx, model, features1, features2, matches);
    if (status != PV_OK)
        return status;
    const size_t n = matches->count > 0 ? (size_t)matches->count : 1;
    float *points1 = malloc(2 * n * sizeof *points1), *points2 = malloc(2 * n * sizeof *points2);
    if (!points1 || !points2)
        status = pv_fail(ctx, PV_ERR_NOMEM, "find_geometry_sift: no memory for %d matches",
                         matches->count);
    for (int i = 0; status == PV_OK && i < matches->count; i++) {
        const pv_sift_keypoint *a = &features1->keypoints[matches->pairs[i].query];
        const pv_sift_keypoint *b = &features2->keypoints[matches->pairs[i].train];
        points1[2 * i] = a->x;
        points1[2 * i + 1] = a->y;
        points2[2 * i] = b->x;
        points2[2 * i + 1] = b->y;
    }
    if (status == PV_OK)
        status = model == PV_GEOMETRY_HOMOGRAPHY
                     ? pv_find_homography(ctx, points1, points2, matches->count, params, result,
                                          inliers)
                     : pv_find_fundamental(ctx, points1, points2, matches->count, params, result,
                                           inliers);
    free(points1);
    free(points2);
    return status;
}
