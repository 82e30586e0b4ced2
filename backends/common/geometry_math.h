/* RANSAC model math shared by the CPU backend (backends/cpu/geometry/geometry.c,
 * compiled as C11) and the OpenCL program (kernels/geometry.cl, which
 * includes this file and is inlined into the embedded source by
 * build-aux/embed-kernels.sh).  One text for both keeps the two backends'
 * float operations the same, in the same order, so that their models and
 * inlier counts are bit-identical (the CPU build must not contract into
 * fused multiply-adds; the OpenCL program turns FP_CONTRACT off).
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls but
 * the absolute value, which is spelled through PV_GM_FABS.  Arrays passed
 * here live in private memory on the device. */
#ifndef PV_BACKENDS_GEOMETRY_MATH_H
#define PV_BACKENDS_GEOMETRY_MATH_H

#ifdef __OPENCL_C_VERSION__
#define PV_GM_FABS(x) fabs(x)
#else
#include <math.h>
#define PV_GM_FABS(x) fabsf(x)
#endif

/* Elimination stops when a pivot falls below this fraction of the first
 * (the public value is PV_RANSAC_PIVOT_FLOOR in lib/core/ops_geometry.h;
 * the CPU backend checks the two agree). */
#define PV_GM_PIVOT_FLOOR 1e-5f

/* The two DLT rows of one homography match (x1, y1) -> (x2, y2). */
static inline void pv_gm_homography_rows(float x1, float y1, float x2, float y2, float r0[9],
                                         float r1[9])
{
    r0[0] = -x1; r0[1] = -y1; r0[2] = -1.0f;
    r0[3] = 0.0f; r0[4] = 0.0f; r0[5] = 0.0f;
    r0[6] = x2 * x1; r0[7] = x2 * y1; r0[8] = x2;
    r1[0] = 0.0f; r1[1] = 0.0f; r1[2] = 0.0f;
    r1[3] = -x1; r1[4] = -y1; r1[5] = -1.0f;
    r1[6] = y2 * x1; r1[7] = y2 * y1; r1[8] = y2;
}

/* The epipolar-constraint row of one fundamental-matrix match. */
static inline void pv_gm_fundamental_row(float x1, float y1, float x2, float y2, float r[9])
{
    r[0] = x2 * x1; r[1] = x2 * y1; r[2] = x2;
    r[3] = y2 * x1; r[4] = y2 * y1; r[5] = y2;
    r[6] = x1; r[7] = y1; r[8] = 1.0f;
}

/* The null vector of the 8 x 9 system a (destroyed) into model, scaled so
 * its largest |entry| is 1, by Gaussian elimination with complete pivoting;
 * zeros when a pivot falls below PV_GM_PIVOT_FLOOR times the first. */
static inline void pv_gm_solve_null_space(float a[8][9], float model[9])
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
                float v = PV_GM_FABS(a[i][col[j]]);
                if (v > best) {
                    best = v;
                    pr = i;
                    pc = j;
                }
            }
        if (k == 0)
            first = best;
        if (!(best > PV_GM_PIVOT_FLOOR * first))
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
        largest = PV_GM_FABS(x[j]) > largest ? PV_GM_FABS(x[j]) : largest;
    for (int j = 0; j < 9; j++)
        model[j] = x[j] / largest;
}

/* Whether match (x1, y1) -> (x2, y2) is a homography h inlier: transfer
 * error squared below limit, compared without dividing by w. */
static inline int pv_gm_homography_inlier(const float h[9], float x1, float y1, float x2, float y2,
                                          float limit)
{
    float u = h[0] * x1 + h[1] * y1 + h[2];
    float v = h[3] * x1 + h[4] * y1 + h[5];
    float w = h[6] * x1 + h[7] * y1 + h[8];
    float ex = u - x2 * w, ey = v - y2 * w;
    return ex * ex + ey * ey < limit * (w * w);
}

/* Whether the match is a fundamental-matrix f inlier: Sampson error below
 * t2, with s1, s2 the squared scales of the two images' normalisations. */
static inline int pv_gm_fundamental_inlier(const float f[9], float x1, float y1, float x2,
                                           float y2, float t2, float s1, float s2)
{
    float a = f[0] * x1 + f[1] * y1 + f[2];
    float b = f[3] * x1 + f[4] * y1 + f[5];
    float c = f[6] * x1 + f[7] * y1 + f[8];
    float ta = f[0] * x2 + f[3] * y2 + f[6];
    float tb = f[1] * x2 + f[4] * y2 + f[7];
    float e = x2 * a + y2 * b + c;
    return e * e < t2 * (s2 * (a * a + b * b) + s1 * (ta * ta + tb * tb));
}

#endif
