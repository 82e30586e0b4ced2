/* CPU reference of the RANSAC scoring (geometry module): each hypothesis'
 * minimal model by Gaussian elimination with complete pivoting, then its
 * inlier count over all matches, hypotheses spread over OpenMP threads.
 * The model math is backends/common/geometry_math.h, the same text the
 * OpenCL program compiles, so both backends do the same float operations in
 * the same order (no contraction into fused multiply-adds) and give
 * bit-identical models and counts. */
#include "../cpu.h"
#include "../../common/geometry_math.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(PV_GM_PIVOT_FLOOR == PV_RANSAC_PIVOT_FLOOR,
               "the shared geometry math uses the public pivot floor");

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
            pv_gm_homography_rows(q[0], q[1], q[2], q[3], a[2 * m], a[2 * m + 1]);
        }
        return;
    }
    for (int m = 0; m < PV_FUNDAMENTAL_SAMPLE; m++) {
        const float *q = p + 4 * (size_t)sample[m];
        pv_gm_fundamental_row(q[0], q[1], q[2], q[3], a[m]);
    }
}

static int count_inliers(const cpu_ransac_plan *plan, const float *model)
{
    const pv_ransac_job *job = &plan->job;
    int count = 0;
    if (job->model == PV_GEOMETRY_HOMOGRAPHY) {
        float limit = job->threshold2 * job->scale2_sq;
        for (int i = 0; i < job->count; i++) {
            const float *q = plan->points + 4 * (size_t)i;
            count += pv_gm_homography_inlier(model, q[0], q[1], q[2], q[3], limit);
        }
    } else {
        for (int i = 0; i < job->count; i++) {
            const float *q = plan->points + 4 * (size_t)i;
            count += pv_gm_fundamental_inlier(model, q[0], q[1], q[2], q[3], job->threshold2,
                                              job->scale1_sq, job->scale2_sq);
        }
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
        pv_gm_solve_null_space(a, model);
        /* A degenerate sample's all-zero model counts no inlier. */
        counts[h] = count_inliers(plan, model);
    }
    return PV_OK;
}

const pv_geometry_ops pv_cpu_geometry_ops = {PV_GEOMETRY_SLOTS(PV_OPS_BIND, cpu_)};
