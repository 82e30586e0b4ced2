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
 * The CPU backend (backends/cpu/geometry.c) does the same float operations
 * in the same order; contraction into fused multiply-adds is off so that
 * both round alike, and the host asks for correctly rounded division where
 * the device offers it. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef GEOM_WG
#define GEOM_WG 256
#endif

#define PIVOT_FLOOR 1e-5f
#define MODEL_HOMOGRAPHY 0

/* Rows of the sample's system: two per match for H (DLT), one for F. */
static void build_system(__global const float4 *points, __global const int *sample, int model,
                         float a[8][9])
{
    if (model == MODEL_HOMOGRAPHY) {
        for (int m = 0; m < 4; m++) {
            float4 q = points[sample[m]];
            float x1 = q.x, y1 = q.y, x2 = q.z, y2 = q.w;
            a[2 * m][0] = -x1; a[2 * m][1] = -y1; a[2 * m][2] = -1.0f;
            a[2 * m][3] = 0.0f; a[2 * m][4] = 0.0f; a[2 * m][5] = 0.0f;
            a[2 * m][6] = x2 * x1; a[2 * m][7] = x2 * y1; a[2 * m][8] = x2;
            a[2 * m + 1][0] = 0.0f; a[2 * m + 1][1] = 0.0f; a[2 * m + 1][2] = 0.0f;
            a[2 * m + 1][3] = -x1; a[2 * m + 1][4] = -y1; a[2 * m + 1][5] = -1.0f;
            a[2 * m + 1][6] = y2 * x1; a[2 * m + 1][7] = y2 * y1; a[2 * m + 1][8] = y2;
        }
        return;
    }
    for (int m = 0; m < 8; m++) {
        float4 q = points[sample[m]];
        float x1 = q.x, y1 = q.y, x2 = q.z, y2 = q.w;
        a[m][0] = x2 * x1; a[m][1] = x2 * y1; a[m][2] = x2;
        a[m][3] = y2 * x1; a[m][4] = y2 * y1; a[m][5] = y2;
        a[m][6] = x1; a[m][7] = y1; a[m][8] = 1.0f;
    }
}

/* The null vector, largest |entry| 1, or zeros for a degenerate sample. */
static void solve_null_space(float a[8][9], float model[9])
{
    int col[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    float first = 0.0f;
    for (int j = 0; j < 9; j++)
        model[j] = 0.0f;
    for (int k = 0; k < 8; k++) {
        int pr = k, pc = k;
        float best = -1.0f;
        for (int i = k; i < 8; i++)
            for (int j = k; j < 9; j++) {
                float v = fabs(a[i][col[j]]);
                if (v > best) {
                    best = v;
                    pr = i;
                    pc = j;
                }
            }
        if (k == 0)
            first = best;
        if (!(best > PIVOT_FLOOR * first))
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
        largest = fabs(x[j]) > largest ? fabs(x[j]) : largest;
    for (int j = 0; j < 9; j++)
        model[j] = x[j] / largest;
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
    solve_null_space(a, m);
    for (int j = 0; j < 9; j++)
        models[9 * h + j] = m[j];
}

/* Sum of every item's count over the group; item 0 writes it. */
static void write_group_sum(__local int *partial, int mine, __global int *out)
{
    int lid = get_local_id(0);
    partial[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = GEOM_WG / 2; step > 0; step >>= 1) {
        if (lid < step)
            partial[lid] += partial[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        *out = partial[0];
}

__kernel __attribute__((reqd_work_group_size(GEOM_WG, 1, 1)))
void ransac_score_h(__global const float4 *points, int count, __global const float *models,
                    float limit, __global int *counts)
{
    __local int partial[GEOM_WG];
    int h = get_group_id(0);
    __global const float *hm = models + 9 * h;
    float h0 = hm[0], h1 = hm[1], h2 = hm[2], h3 = hm[3], h4 = hm[4], h5 = hm[5];
    float h6 = hm[6], h7 = hm[7], h8 = hm[8];
    int mine = 0;
    for (int i = get_local_id(0); i < count; i += GEOM_WG) {
        float4 q = points[i];
        float u = h0 * q.x + h1 * q.y + h2;
        float v = h3 * q.x + h4 * q.y + h5;
        float w = h6 * q.x + h7 * q.y + h8;
        float ex = u - q.z * w, ey = v - q.w * w;
        mine += ex * ex + ey * ey < limit * (w * w);
    }
    write_group_sum(partial, mine, counts + h);
}

__kernel __attribute__((reqd_work_group_size(GEOM_WG, 1, 1)))
void ransac_score_f(__global const float4 *points, int count, __global const float *models,
                    float t2, float s1, float s2, __global int *counts)
{
    __local int partial[GEOM_WG];
    int h = get_group_id(0);
    __global const float *fm = models + 9 * h;
    float f0 = fm[0], f1 = fm[1], f2 = fm[2], f3 = fm[3], f4 = fm[4], f5 = fm[5];
    float f6 = fm[6], f7 = fm[7], f8 = fm[8];
    int mine = 0;
    for (int i = get_local_id(0); i < count; i += GEOM_WG) {
        float4 q = points[i];
        float a = f0 * q.x + f1 * q.y + f2;
        float b = f3 * q.x + f4 * q.y + f5;
        float c = f6 * q.x + f7 * q.y + f8;
        float ta = f0 * q.z + f3 * q.w + f6;
        float tb = f1 * q.z + f4 * q.w + f7;
        float e = q.z * a + q.w * b + c;
        mine += e * e < t2 * (s2 * (a * a + b * b) + s1 * (ta * ta + tb * tb));
    }
    write_group_sum(partial, mine, counts + h);
}
