/* The geometry front end's host numerics, all in double: least-squares
 * refinement of the RANSAC winner on its inliers, denormalisation, and the
 * inlier test in pixels.
 *
 * H: the linear DLT over all inliers (the eigenvector of the smallest
 * eigenvalue of A^T A), then Gauss-Newton on the transfer error in image 2
 * (H[2][2] fixed to 1).  F: the linear 8-point fit over all inliers, then
 * the nearest rank-2 matrix (Frobenius norm).  A refined model replaces the
 * current one when its truncated quadratic cost over all matches (MSAC:
 * each match's squared distance, at most the threshold's square) is no
 * higher.  (The rule before, at least as many inliers, kept the minimal
 * model whenever the least-squares fit lost one borderline match of a
 * thousand, and with it errors of 1 to 1.6 px at a 720p frame's corners
 * where the fit on the same inliers was within 0.07 px.)
 *
 * Every pass over the matches is spread over the context's OpenMP threads.
 * Sums are taken in a fixed number of chunks, each summed in order and the
 * chunks then added in order, so the result does not depend on the number
 * of threads: both backends' contexts refine to the same bits. */
#include "geometry_internal.h"

#include <stdlib.h>
#include <string.h>

#define JACOBI_SWEEPS 60
/* Gauss-Newton passes at most; it starts from the linear fit, which is
 * already close, and usually settles in two or three. */
#define GAUSS_NEWTON_PASSES 6
/* A step smaller than this (relative to the parameters) ends Gauss-Newton. */
#define GAUSS_NEWTON_TINY_STEP 1e-10
#define REFINE_ROUNDS 2
/* Chunks of a reduction (fixed, so sums do not depend on the thread count). */
#define REDUCE_CHUNKS 64
/* The widest sum of one pass (F's A^T A terms). */
#define SUM_WIDTH 36

/* ----------------------------------------------------------- linear algebra */

/* Row-major n x n symmetric a (n <= 9) is diagonalised in place by cyclic
 * Jacobi rotations; v receives the eigenvectors as columns. */
static void jacobi_eigen(int n, double *a, double *v)
{
    for (int i = 0; i < n * n; i++)
        v[i] = i / n == i % n ? 1.0 : 0.0;
    for (int sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
        double off = 0.0, diag = 0.0;
        for (int p = 0; p < n; p++) {
            diag += a[p * n + p] * a[p * n + p];
            for (int q = p + 1; q < n; q++)
                off += a[p * n + q] * a[p * n + q];
        }
        if (off <= 1e-30 * diag || off == 0.0)
            return;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (apq == 0.0)
                    continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; k++) {
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = v[k * n + p], vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
    }
}

/* The unit eigenvector of the smallest eigenvalue of symmetric a (n x n). */
static void smallest_eigenvector(int n, const double *a, double *out)
{
    double work[81], v[81];
    memcpy(work, a, (size_t)(n * n) * sizeof *work);
    jacobi_eigen(n, work, v);
    int smallest = 0;
    for (int i = 1; i < n; i++)
        if (work[i * n + i] < work[smallest * n + smallest])
            smallest = i;
    for (int i = 0; i < n; i++)
        out[i] = v[i * n + smallest];
}

/* Solve a x = b (n <= 8) by Gaussian elimination with partial pivoting;
 * 0 when a is singular.  a and b are overwritten. */
static int solve_linear(int n, double *a, double *b, double *x)
{
    for (int k = 0; k < n; k++) {
        int pivot = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(a[i * n + k]) > fabs(a[pivot * n + k]))
                pivot = i;
        if (!(fabs(a[pivot * n + k]) > 1e-300))
            return 0;
        for (int j = 0; j < n; j++) {
            double t = a[k * n + j];
            a[k * n + j] = a[pivot * n + j];
            a[pivot * n + j] = t;
        }
        double t = b[k];
        b[k] = b[pivot];
        b[pivot] = t;
        for (int i = k + 1; i < n; i++) {
            double f = a[i * n + k] / a[k * n + k];
            for (int j = k; j < n; j++)
                a[i * n + j] -= f * a[k * n + j];
            b[i] -= f * b[k];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        double s = b[k];
        for (int j = k + 1; j < n; j++)
            s -= a[k * n + j] * x[j];
        x[k] = s / a[k * n + k];
    }
    return 1;
}

static void mat3_mul(const double *a, const double *b, double *out)
{
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    memcpy(out, r, sizeof r);
}

/* ------------------------------------------------------------------ pixels */

/* The model in pixels: H = T2^-1 Hn T1, F = T2^T Fn T1. */
static void denormalise(const pv_estimation *est, const double *normalised, double *pixels)
{
    const pv_normaliser *n1 = &est->n[0], *n2 = &est->n[1];
    const double t1[9] = {n1->scale, 0, -n1->scale * n1->cx, 0, n1->scale, -n1->scale * n1->cy,
                          0, 0, 1};
    double left[9];
    if (est->kind == PV_GEOMETRY_HOMOGRAPHY) {
        const double t2_inverse[9] = {1.0 / n2->scale, 0, n2->cx, 0, 1.0 / n2->scale, n2->cy,
                                      0, 0, 1};
        memcpy(left, t2_inverse, sizeof left);
    } else {
        const double t2_transposed[9] = {n2->scale, 0, 0, 0, n2->scale, 0,
                                         -n2->scale * n2->cx, -n2->scale * n2->cy, 1};
        memcpy(left, t2_transposed, sizeof left);
    }
    double m[9];
    mat3_mul(normalised, t1, m);
    mat3_mul(left, m, pixels);
}

/* Unit Frobenius norm; H signed so that H[2][2] >= 0, F so that its
 * largest |entry| is positive. */
/* The scale of a homography: H[2][2] = 1, as OpenCV and the Oxford sets
 * write it, unless H[2][2] is this small against the norm (a homography
 * that sends the origin nearly to infinity): then unit norm, H[2][2] >= 0. */
#define PV_H22_SMALLEST 1e-9

static void scale_model(pv_geometry_model kind, double *m)
{
    double norm = 0.0;
    int largest = 0;
    for (int i = 0; i < 9; i++) {
        norm += m[i] * m[i];
        if (fabs(m[i]) > fabs(m[largest]))
            largest = i;
    }
    norm = sqrt(norm);
    if (kind == PV_GEOMETRY_HOMOGRAPHY && fabs(m[8]) > PV_H22_SMALLEST * norm) {
        const double h22 = m[8];
        for (int i = 0; i < 8; i++)
            m[i] /= h22;
        m[8] = 1.0;
        return;
    }
    double sign_of = kind == PV_GEOMETRY_HOMOGRAPHY ? m[8] : m[largest];
    double factor = (sign_of < 0.0 ? -1.0 : 1.0) / norm;
    for (int i = 0; i < 9; i++)
        m[i] *= factor;
}

/* The model as the caller receives it: in pixels, scaled and signed. */
static void output_model(const pv_estimation *est, const double *normalised, double *pixels)
{
    denormalise(est, normalised, pixels);
    scale_model(est->kind, pixels);
}

/* Squared pixel distance of match i to model m (transfer error for H,
 * Sampson distance for F); INFINITY where it is undefined. */
static double pixel_distance2(const pv_estimation *est, const double *m, int i)
{
    double x1 = est->points1[2 * i], y1 = est->points1[2 * i + 1];
    double x2 = est->points2[2 * i], y2 = est->points2[2 * i + 1];
    double a = m[0] * x1 + m[1] * y1 + m[2];
    double b = m[3] * x1 + m[4] * y1 + m[5];
    double c = m[6] * x1 + m[7] * y1 + m[8];
    if (est->kind == PV_GEOMETRY_HOMOGRAPHY) {
        if (c == 0.0)
            return INFINITY;
        double dx = a / c - x2, dy = b / c - y2;
        return dx * dx + dy * dy;
    }
    double ta = m[0] * x2 + m[3] * y2 + m[6];
    double tb = m[1] * x2 + m[4] * y2 + m[7];
    double e = x2 * a + y2 * b + c;
    double gradient2 = a * a + b * b + ta * ta + tb * tb;
    return gradient2 > 0.0 ? e * e / gradient2 : INFINITY;
}

static int pass_threads(const pv_estimation *est, int n)
{
    int threads = est->ctx->cpu_threads > 0 ? est->ctx->cpu_threads : 1;
    return n >= PV_GEOMETRY_PARALLEL_MIN ? threads : 1;
}

/* The inlier flags of model m (pixels) into mask; returns their count. */
static int pixel_inliers(const pv_estimation *est, const double *m, uint8_t *mask)
{
    const double limit = (double)est->params.threshold * (double)est->params.threshold;
    const int n = est->count;
    int count = 0;
    #pragma omp parallel for num_threads(pass_threads(est, n)) schedule(static) reduction(+ : count)
    for (int i = 0; i < n; i++) {
        mask[i] = pixel_distance2(est, m, i) < limit;
        count += mask[i];
    }
    return count;
}

/* ------------------------------------------------------------- reductions */

/* Adds one chunk's terms (matches index[begin .. end)) into sums. */
typedef void chunk_summer(const pv_estimation *est, const int *index, int begin, int end,
                          const double *model, double *sums);
static void reduce(const pv_estimation *est, const int *index, int n, const double *model,
                   chunk_summer *summer, int width, double *totals);

/* MSAC's terms of matches begin .. end (every match: index unused):
 * min(d^2, threshold^2) of model (pixels). */
static void truncated_terms(const pv_estimation *est, const int *index, int begin, int end,
                            const double *model, double *sums)
{
    (void)index;
    const double limit = (double)est->params.threshold * (double)est->params.threshold;
    double cost = 0.0;
    for (int i = begin; i < end; i++) {
        const double d2 = pixel_distance2(est, model, i);
        cost += d2 < limit ? d2 : limit;
    }
    sums[0] += cost;
}

/* The truncated quadratic cost of model m (pixels) over all matches, in
 * fixed chunks (the same bits for any thread count). */
static double truncated_cost(const pv_estimation *est, const double *m)
{
    double cost = 0.0;
    reduce(est, NULL, est->count, m, truncated_terms, 1, &cost);
    return cost;
}


/* totals[0 .. width) = the sum of summer's terms over index[0 .. n), in
 * REDUCE_CHUNKS fixed chunks (the same bits for any thread count). */
static void reduce(const pv_estimation *est, const int *index, int n, const double *model,
                   chunk_summer *summer, int width, double *totals)
{
    double partial[REDUCE_CHUNKS][SUM_WIDTH];
    #pragma omp parallel for num_threads(pass_threads(est, n)) schedule(static)
    for (int c = 0; c < REDUCE_CHUNKS; c++) {
        int begin = (int)((int64_t)n * c / REDUCE_CHUNKS);
        int end = (int)((int64_t)n * (c + 1) / REDUCE_CHUNKS);
        memset(partial[c], 0, (size_t)width * sizeof partial[c][0]);
        summer(est, index, begin, end, model, partial[c]);
    }
    memset(totals, 0, (size_t)width * sizeof *totals);
    for (int c = 0; c < REDUCE_CHUNKS; c++)
        for (int k = 0; k < width; k++)
            totals[k] += partial[c][k];
}

/* The indices of mask's inliers into index; returns their count. */
static int inlier_list(const pv_estimation *est, const uint8_t *mask, int *index)
{
    int n = 0;
    for (int i = 0; i < est->count; i++)
        if (mask[i])
            index[n++] = i;
    return n;
}

/* -------------------------------------------------------------- linear fit */

/* The system rows (as the backends build them) are, with P = (p0, p1, 1)
 * and Q = (q0, q1, 1) a match's normalised points,
 *   H: (-P, 0, q0 P) and (0, -P, q1 P);   F: (q0 P, q1 P, Q2 P) with Q2 = 1,
 * so A^T A is made of 3 x 3 blocks, each a weighted sum of P P^T: for H
 * the weights 1, q0, q1 and q0^2 + q1^2, for F the six entries of Q Q^T.
 * A pass sums P P^T's upper triangle (6 entries) once per weight. */
static const int symmetric3[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};

static int normal_weights(pv_geometry_model kind)
{
    return kind == PV_GEOMETRY_HOMOGRAPHY ? 4 : 6;
}

static void normal_terms(const pv_estimation *est, const int *index, int begin, int end,
                         const double *model, double *sums)
{
    (void)model;
    const int weights = normal_weights(est->kind);
    double acc[36] = {0};
    for (int t = begin; t < end; t++) {
        double p[2], q[2];
        pv_normalised_point(est, index[t], 0, p);
        pv_normalised_point(est, index[t], 1, q);
        const double pp[6] = {p[0] * p[0], p[0] * p[1], p[0], p[1] * p[1], p[1], 1.0};
        double w[6];
        if (est->kind == PV_GEOMETRY_HOMOGRAPHY) {
            w[0] = 1.0;
            w[1] = q[0];
            w[2] = q[1];
            w[3] = q[0] * q[0] + q[1] * q[1];
        } else {
            w[0] = q[0] * q[0];
            w[1] = q[0] * q[1];
            w[2] = q[0];
            w[3] = q[1] * q[1];
            w[4] = q[1];
            w[5] = 1.0;
        }
        for (int k = 0; k < weights; k++)
            for (int e = 0; e < 6; e++)
                acc[6 * k + e] += w[k] * pp[e];
    }
    for (int k = 0; k < 6 * weights; k++)
        sums[k] += acc[k];
}

/* The weighted P P^T sum that block (a, b) of A^T A is, with its sign. */
static double normal_block(pv_geometry_model kind, const double *sums, int a, int b, int e)
{
    if (kind != PV_GEOMETRY_HOMOGRAPHY)
        return sums[6 * symmetric3[a][b] + e];
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    if (a == b)
        return sums[6 * (a == 2 ? 3 : 0) + e];
    if (b != 2)
        return 0.0;
    return -sums[6 * (a == 0 ? 1 : 2) + e];
}

/* The linear least-squares model of the listed matches (normalised). */
static void linear_fit(const pv_estimation *est, const int *index, int n, double *model)
{
    double sums[SUM_WIDTH], ata[81];
    reduce(est, index, n, NULL, normal_terms, 6 * normal_weights(est->kind), sums);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    ata[9 * (3 * a + i) + 3 * b + j] =
                        normal_block(est->kind, sums, a, b, symmetric3[i][j]);
    smallest_eigenvector(9, ata, model);
}

/* ------------------------------------------------------------ Gauss-Newton */

/* The transfer error's terms at h (h[8] = 1).  With g = (p0, p1, 1) / w and
 * (ex, ey) = (u, v) / w the mapped point, the Jacobian rows of (rx, ry) are
 *   jx = (g, 0, 0, 0, -g0 ex, -g1 ex),  jy = (0, 0, 0, g, -g0 ey, -g1 ey),
 * so J^T J and J^T r are made of the few sums below (the layout of
 * GN_* indices); sums[GN_BAD] counts matches with w = 0. */
enum {
    GN_GG = 0,               /* 6: g g^T upper triangle (00 01 02 11 12 22) */
    GN_GGX = 6,              /* 6: g g^T ex (only the first two columns are used) */
    GN_GGY = 12,             /* 6: g g^T ey */
    GN_GG2 = 18,             /* 3: g0g0, g0g1, g1g1 times ex^2 + ey^2 */
    GN_GRX = 21,             /* 3: g rx */
    GN_GRY = 24,             /* 3: g ry */
    GN_GE = 27,              /* 2: g0, g1 times ex rx + ey ry */
    GN_COST = 29,
    GN_BAD = 30,
    GN_WIDTH = 31
};

static void transfer_terms(const pv_estimation *est, const int *index, int begin, int end,
                           const double *h, double *out)
{
    double sums[GN_WIDTH] = {0};
    for (int t = begin; t < end; t++) {
        double p[2], q[2];
        pv_normalised_point(est, index[t], 0, p);
        pv_normalised_point(est, index[t], 1, q);
        double u = h[0] * p[0] + h[1] * p[1] + h[2];
        double v = h[3] * p[0] + h[4] * p[1] + h[5];
        double w = h[6] * p[0] + h[7] * p[1] + 1.0;
        if (fabs(w) < 1e-12) {
            sums[GN_BAD] += 1.0;
            continue;
        }
        double inv = 1.0 / w, ex = u * inv, ey = v * inv;
        double rx = ex - q[0], ry = ey - q[1];
        const double g[3] = {p[0] * inv, p[1] * inv, inv};
        const double gg[6] = {g[0] * g[0], g[0] * g[1], g[0] * g[2],
                              g[1] * g[1], g[1] * g[2], g[2] * g[2]};
        for (int k = 0; k < 6; k++) {
            sums[GN_GG + k] += gg[k];
            sums[GN_GGX + k] += gg[k] * ex;
            sums[GN_GGY + k] += gg[k] * ey;
        }
        double e2 = ex * ex + ey * ey, er = ex * rx + ey * ry;
        sums[GN_GG2] += gg[0] * e2;
        sums[GN_GG2 + 1] += gg[1] * e2;
        sums[GN_GG2 + 2] += gg[3] * e2;
        for (int k = 0; k < 3; k++) {
            sums[GN_GRX + k] += g[k] * rx;
            sums[GN_GRY + k] += g[k] * ry;
        }
        sums[GN_GE] += g[0] * er;
        sums[GN_GE + 1] += g[1] * er;
        sums[GN_COST] += rx * rx + ry * ry;
    }
    for (int k = 0; k < GN_WIDTH; k++)
        out[k] += sums[k];
}

/* J^T J (8 x 8) and J^T r from the sums. */
static void transfer_system(const double *s, double *jtj, double *jtr)
{
    /* g g^T as a full 3 x 3 from its upper triangle, for each weighting. */
    static const int full[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    memset(jtj, 0, 64 * sizeof *jtj);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            jtj[8 * i + j] = jtj[8 * (3 + i) + 3 + j] = s[GN_GG + full[i][j]];
            if (j < 2) {
                jtj[8 * i + 6 + j] = jtj[8 * (6 + j) + i] = -s[GN_GGX + full[i][j]];
                jtj[8 * (3 + i) + 6 + j] = jtj[8 * (6 + j) + 3 + i] = -s[GN_GGY + full[i][j]];
            }
        }
    jtj[8 * 6 + 6] = s[GN_GG2];
    jtj[8 * 6 + 7] = jtj[8 * 7 + 6] = s[GN_GG2 + 1];
    jtj[8 * 7 + 7] = s[GN_GG2 + 2];
    for (int k = 0; k < 3; k++) {
        jtr[k] = s[GN_GRX + k];
        jtr[3 + k] = s[GN_GRY + k];
    }
    jtr[6] = -s[GN_GE];
    jtr[7] = -s[GN_GE + 1];
}

/* Gauss-Newton on the transfer error, from h (normalised, any scale): one
 * pass over the inliers per step gives the cost at the current point and
 * the normal equations; a step that raised the cost is taken back. */
static void refine_transfer(const pv_estimation *est, const int *index, int n, double *h)
{
    double norm = 0.0;
    for (int i = 0; i < 9; i++)
        norm += h[i] * h[i];
    if (!(fabs(h[8]) > 1e-8 * sqrt(norm)))
        return;
    double x[9], best[9], best_cost = INFINITY;
    for (int i = 0; i < 9; i++)
        x[i] = h[i] / h[8];
    memcpy(best, x, sizeof best);
    for (int pass = 0; pass < GAUSS_NEWTON_PASSES; pass++) {
        double sums[GN_WIDTH], jtj[64], jtr[8], step[8];
        reduce(est, index, n, x, transfer_terms, GN_WIDTH, sums);
        if (sums[GN_BAD] > 0.0 || !(sums[GN_COST] < best_cost))
            break;
        memcpy(best, x, sizeof best);
        best_cost = sums[GN_COST];
        if (pass + 1 == GAUSS_NEWTON_PASSES)
            break;
        transfer_system(sums, jtj, jtr);
        for (int j = 0; j < 8; j++)
            jtr[j] = -jtr[j];
        if (!solve_linear(8, jtj, jtr, step))
            break;
        double step2 = 0.0, x2 = 0.0;
        for (int j = 0; j < 8; j++) {
            step2 += step[j] * step[j];
            x2 += x[j] * x[j];
            x[j] += step[j];
        }
        if (step2 <= GAUSS_NEWTON_TINY_STEP * GAUSS_NEWTON_TINY_STEP * (1.0 + x2))
            break;
    }
    memcpy(h, best, sizeof best);
}

/* Fn (I - v v^T), v the null direction of Fn^T Fn: the nearest rank-2 matrix. */
static void nearest_rank2(double *f)
{
    double ftf[9], v[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            ftf[3 * i + j] = f[i] * f[j] + f[3 + i] * f[3 + j] + f[6 + i] * f[6 + j];
    smallest_eigenvector(3, ftf, v);
    double projector[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            projector[3 * i + j] = (i == j ? 1.0 : 0.0) - v[i] * v[j];
    mat3_mul(f, projector, f);
}

/* The least-squares model of the inliers in mask (normalised); 0 when
 * there are too few. */
static int refine_model(const pv_estimation *est, const uint8_t *mask, double *model)
{
    int n = inlier_list(est, mask, est->index);
    if (n < est->sample)
        return 0;
    linear_fit(est, est->index, n, model);
    if (est->kind == PV_GEOMETRY_HOMOGRAPHY)
        refine_transfer(est, est->index, n, model);
    else
        nearest_rank2(model);
    return 1;
}

/* ------------------------------------------------------------------ finish */

void pv_finish_model(pv_estimation *est, const double model[9], pv_geometry_result *result)
{
    double current[9], pixels[9];
    memcpy(current, model, sizeof current);
    output_model(est, current, pixels);
    int count = pixel_inliers(est, pixels, est->mask);
    double cost = est->params.refine ? truncated_cost(est, pixels) : 0.0;
    for (int round = 0; est->params.refine && round < REFINE_ROUNDS; round++) {
        double refined[9], refined_pixels[9];
        memcpy(refined, current, sizeof refined);
        if (!refine_model(est, est->mask, refined))
            break;
        output_model(est, refined, refined_pixels);
        const double refined_cost = truncated_cost(est, refined_pixels);
        if (!(refined_cost <= cost))
            break;
        int refined_count = pixel_inliers(est, refined_pixels, est->scratch);
        int grew = refined_count > count;
        memcpy(current, refined, sizeof current);
        memcpy(pixels, refined_pixels, sizeof pixels);
        memcpy(est->mask, est->scratch, (size_t)est->count);
        count = refined_count;
        cost = refined_cost;
        if (!grew)
            break;
    }
    /* The mask was counted with exactly this model, so it stands as is. */
    memcpy(result->model, pixels, sizeof pixels);
    result->inlier_count = count;
}
