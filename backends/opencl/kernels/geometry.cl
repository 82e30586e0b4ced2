/* parvis geometry kernels: RANSAC hypotheses solved and scored in parallel.
 *
 * Built with the "geometry" launch-parameter family as -D defines:
 *   GEOM_WG    scoring: work items per hypothesis (a power of two)
 *
 * ransac_solve: one work item per hypothesis builds its sample's 8 x 9
 * system and solves the null space by Gaussian elimination with complete
 * pivoting; ransac_score_h / ransac_score_f: one work group per hypothesis
 * counts its inliers over all matches (each item a strided share, then a
 * tree sum in local memory), so integer counts come out exact.
 *
 * The model math is backends/common/geometry_math.h, which the CPU backend
 * (backends/cpu/geometry/geometry.c) compiles too, so both do the same float
 * operations in the same order; contraction into fused multiply-adds is off
 * so that both round alike, and the host asks for correctly rounded division
 * where the device offers it. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef GEOM_WG
#define GEOM_WG 256
#endif

#define MODEL_HOMOGRAPHY 0 /* the host passes 0 for H, 1 for F */
#define MODEL_FUNDAMENTAL 1

#include "../../common/geometry_math.h"

/* Rows of the sample's system: two per match for H (DLT), one for F. */
static void build_system(__global const float4 *points, __global const int *sample, int model,
                         float a[8][9])
{
    if (model == MODEL_HOMOGRAPHY) {
        for (int m = 0; m < 4; m++) {
            float4 q = points[sample[m]];
            pv_gm_homography_rows(q.x, q.y, q.z, q.w, a[2 * m], a[2 * m + 1]);
        }
        return;
    }
    for (int m = 0; m < 8; m++) {
        float4 q = points[sample[m]];
        pv_gm_fundamental_row(q.x, q.y, q.z, q.w, a[m]);
    }
}

__kernel void ransac_solve(__global const float4 *points, __global const int *samples,
                           int hypotheses, int model, __global float *models)
{
    int h = get_global_id(0);
    if (h >= hypotheses)
        return;
    int size = model == MODEL_HOMOGRAPHY ? 4 : 8;
    float a[8][9], m[9];
    build_system(points, samples + size * h, model, a);
    pv_gm_solve_null_space(a, m);
    for (int j = 0; j < 9; j++)
        models[9 * h + j] = m[j];
}

#include "group_sum.cl"
DEFINE_GROUP_SUM(group_count, int, GEOM_WG)

/* This item's share of the inliers of hypothesis h (the group's): matches
 * lid, lid + GEOM_WG, ...  The model is a constant at each call, so the
 * unused test drops out. */
static int inliers_of_share(__global const float4 *points, int count, __global const float *models,
                            int h, int model, float limit, float s1, float s2)
{
    float m[9];
    for (int j = 0; j < 9; j++)
        m[j] = models[9 * h + j];
    int mine = 0;
    for (int i = get_local_id(0); i < count; i += GEOM_WG) {
        float4 q = points[i];
        mine += model == MODEL_HOMOGRAPHY
                    ? pv_gm_homography_inlier(m, q.x, q.y, q.z, q.w, limit)
                    : pv_gm_fundamental_inlier(m, q.x, q.y, q.z, q.w, limit, s1, s2);
    }
    return mine;
}

/* counts[h]: inliers of homography h, reprojection error within limit. */
__kernel __attribute__((reqd_work_group_size(GEOM_WG, 1, 1)))
void ransac_score_h(__global const float4 *points, int count, __global const float *models,
                    float limit, __global int *counts)
{
    __local int partial[GEOM_WG];
    const int h = get_group_id(0);
    int total = group_count(partial, inliers_of_share(points, count, models, h, MODEL_HOMOGRAPHY,
                                                      limit, 0.0f, 0.0f));
    if (get_local_id(0) == 0)
        counts[h] = total;
}

/* counts[h]: inliers of fundamental matrix h (Sampson distance, t2, s1, s2
 * as pv_gm_fundamental_inlier takes them). */
__kernel __attribute__((reqd_work_group_size(GEOM_WG, 1, 1)))
void ransac_score_f(__global const float4 *points, int count, __global const float *models,
                    float t2, float s1, float s2, __global int *counts)
{
    __local int partial[GEOM_WG];
    const int h = get_group_id(0);
    int total = group_count(partial, inliers_of_share(points, count, models, h, MODEL_FUNDAMENTAL,
                                                      t2, s1, s2));
    if (get_local_id(0) == 0)
        counts[h] = total;
}
