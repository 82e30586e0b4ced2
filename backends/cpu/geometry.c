/* CPU reference of the RANSAC scoring (geometry module): each hypothesis'
 * minimal model by Gaussian elimination with complete pivoting, then its
 * inlier count over all matches, hypotheses spread over OpenMP threads.
 * Every float operation here is the one kernels/geometry.cl does, in the
 * same order (no contraction into fused multiply-adds), so both backends
 * give bit-identical models and counts. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

typedef struct cpu_ransac_plan {
    pv_ransac_job job;
    float *points;           /* count x 4, owned copy */
} cpu_ransac_plan;

static int sample_size(pv_geometry_model model)
{
    return model == PV_GEOMETRY_HOMOGRAPHY ? PV_HOMOGRAPHY_SAMPLE : PV_FUNDAMENTAL_SAMPLE;
}

/* The 8 x 9 system of a sample: two rows per match for H (DLT), one per
 * match for F (the epipolar constraint). */
static void build_system(const cpu_ransac_plan *plan, const int *sample, float a[8][9])
{
    const float *p = plan->points;
    if (plan->job.model == PV_GEOMETRY_HOMOGRAPHY) {
        for (int m = 0; m < PV_HOMOGRAPHY_SAMPLE; m++) {
            const float *q = p + 4 * (size_t)sample[m];
            float x1 = q[0], y1 = q[1], x2 = q[2], y2 = q[3];
            float *r0 = a[2 * m], *r1 = a[2 * m + 1];
            r0[0] = -x1; r0[1] = -y1; r0[2] = -1.0f;
            r0[3] = 0.0f; r0[4] = 0.0f; r0[5] = 0.0f;
            r0[6] = x2 * x1; r0[7] = x2 * y1; r0[8] = x2;
            r1[0] = 0.0f; r1[1] = 0.0f; r1[2] = 0.0f;
            r1[3] = -x1; r1[4] = -y1; r1[5] = -1.0f;
            r1[6] = y2 * x1; r1[7] = y2 * y1; r1[8] = y2;
        }
        return;
    }
    for (int m = 0; m < PV_FUNDAMENTAL_SAMPLE; m++) {
        const float *q = p + 4 * (size_t)sample[m];
        float x1 = q[0], y1 = q[1], x2 = q[2], y2 = q[3];
        float *r = a[m];
        r[0] = x2 * x1; r[1] = x2 * y1; r[2] = x2;
        r[3] = y2 * x1; r[4] = y2 * y1; r[5] = y2;
        r[6] = x1; r[7] = y1; r[8] = 1.0f;
    }
}

/* The null vector of the 8 x 9 system into model (largest |entry| 1), or
 * zeros when a pivot falls below PV_RANSAC_PIVOT_FLOOR times the first. */
static void solve_null_space(float a[8][9], float model[9])
{
    int col[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    float first = 0.0f;
    memset(model, 0, 9 * sizeof *model);
    for (int k = 0; k < 8; k++) {
        int pr = k, pc = k;
        float best = -1.0f;
        for (int i = k; i < 8; i++)
            for (int j = k; j < 9; j++) {
                float v = fabsf(a[i][col[j]]);
                if (v > best) {
                    best = v;
                    pr = i;
                    pc = j;
                }
            }
        if (k == 0)
            first = best;
        if (!(best > PV_RANSAC_PIVOT_FLOOR * first))
            return;
        for (int j = 0; j < 9; j++) {
            float t = a[k][j];
            a[k][j] = a[pr][j];
            a[pr][j] = t;
        }
        int tc = col[k];
        col[k] = col[pc];
        col[pc] = tc;
        float pivot = a[k][col[k]];
        for (int i = k + 1; i < 8; i++) {
            float f = a[i][col[k]] / pivot;
            for (int j = k + 1; j < 9; j++)
                a[i][col[j]] = a[i][col[j]] - f * a[k][col[j]];
        }
    }
    float x[9];
    x[col[8]] = 1.0f;
    for (int k = 7; k >= 0; k--) {
        float s = 0.0f;
        for (int j = k + 1; j < 9; j++)
            s = s + a[k][col[j]] * x[col[j]];
        x[col[k]] = -s / a[k][col[k]];
    }
    float largest = 0.0f;
    for (int j = 0; j < 9; j++)
        largest = fabsf(x[j]) > largest ? fabsf(x[j]) : largest;
    for (int j = 0; j < 9; j++)
        model[j] = x[j] / largest;
}

static int homography_inlier(const float *h, const float *q, float limit)
{
    float x1 = q[0], y1 = q[1], x2 = q[2], y2 = q[3];
    float u = h[0] * x1 + h[1] * y1 + h[2];
    float v = h[3] * x1 + h[4] * y1 + h[5];
    float w = h[6] * x1 + h[7] * y1 + h[8];
    float ex = u - x2 * w, ey = v - y2 * w;
    return ex * ex + ey * ey < limit * (w * w);
}

static int fundamental_inlier(const float *f, const float *q, float t2, float s1, float s2)
{
    float x1 = q[0], y1 = q[1], x2 = q[2], y2 = q[3];
    float a = f[0] * x1 + f[1] * y1 + f[2];
    float b = f[3] * x1 + f[4] * y1 + f[5];
    float c = f[6] * x1 + f[7] * y1 + f[8];
    float ta = f[0] * x2 + f[3] * y2 + f[6];
    float tb = f[1] * x2 + f[4] * y2 + f[7];
    float e = x2 * a + y2 * b + c;
    return e * e < t2 * (s2 * (a * a + b * b) + s1 * (ta * ta + tb * tb));
}

static int count_inliers(const cpu_ransac_plan *plan, const float *model)
{
    const pv_ransac_job *job = &plan->job;
    int count = 0;
    if (job->model == PV_GEOMETRY_HOMOGRAPHY) {
        float limit = job->threshold2 * job->scale2_sq;
        for (int i = 0; i < job->count; i++)
            count += homography_inlier(model, plan->points + 4 * (size_t)i, limit);
    } else {
        for (int i = 0; i < job->count; i++)
            count += fundamental_inlier(model, plan->points + 4 * (size_t)i, job->threshold2,
                                        job->scale1_sq, job->scale2_sq);
    }
    return count;
}

static pv_status cpu_ransac_create(pv_context *ctx, const pv_ransac_job *job, void **plan)
{
    cpu_ransac_plan *p = malloc(sizeof *p);
    float *points = malloc(4 * (size_t)job->count * sizeof *points);
    if (!p || !points) {
        free(p);
        free(points);
        return pv_fail(ctx, PV_ERR_NOMEM, "ransac: no memory for %d matches", job->count);
    }
    memcpy(points, job->points, 4 * (size_t)job->count * sizeof *points);
    p->job = *job;
    p->job.points = points;
    p->points = points;
    *plan = p;
    return PV_OK;
}

static void cpu_ransac_destroy(pv_context *ctx, void *opaque)
{
    (void)ctx;
    cpu_ransac_plan *plan = opaque;
    if (!plan)
        return;
    free(plan->points);
    free(plan);
}

static pv_status cpu_ransac_score(pv_context *ctx, void *opaque, const int *samples,
                                  int hypotheses, float *models, int *counts)
{
    const cpu_ransac_plan *plan = opaque;
    const int s = sample_size(plan->job.model);
    int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (int h = 0; h < hypotheses; h++) {
        float a[8][9];
        float *model = models + 9 * (size_t)h;
        build_system(plan, samples + (size_t)s * (size_t)h, a);
        solve_null_space(a, model);
        /* A degenerate sample's all-zero model counts no inlier. */
        counts[h] = count_inliers(plan, model);
    }
    return PV_OK;
}

const pv_geometry_ops pv_cpu_geometry_ops = {
    .ransac_create = cpu_ransac_create,
    .ransac_destroy = cpu_ransac_destroy,
    .ransac_score = cpu_ransac_score,
};
