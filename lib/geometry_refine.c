/* The geometry front end's host numerics, all in double: least-squares
 * refinement of the RANSAC winner on its inliers, denormalisation, and the
 * inlier test in pixels.
 *
 * H: the linear DLT over all inliers (the eigenvector of the smallest
 * eigenvalue of A^T A), then Levenberg-Marquardt on the transfer error in
 * image 2 (H[2][2] fixed to 1).  F: the linear 8-point fit over all
 * inliers, then the nearest rank-2 matrix (Frobenius norm).  A refined
 * model replaces the current one only when it keeps at least as many
 * inliers. */
#include "geometry_internal.h"

#include <stdlib.h>
#include <string.h>

#define JACOBI_SWEEPS 60
#define LM_ITERATIONS 10
/* LM stops once a step lowers the cost by less than this share. */
#define LM_MIN_GAIN 1e-9
#define REFINE_ROUNDS 2

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

static int pixel_inliers(const pv_estimation *est, const double *m, uint8_t *mask)
{
    const double limit = (double)est->params.threshold * (double)est->params.threshold;
    int count = 0;
    for (int i = 0; i < est->count; i++) {
        mask[i] = pixel_distance2(est, m, i) < limit;
        count += mask[i];
    }
    return count;
}

/* -------------------------------------------------------------- refinement */

/* Sum of r r^T over the inliers' system rows (as the backends build them). */
static int normal_matrix(const pv_estimation *est, const uint8_t *mask, double *ata)
{
    int used = 0;
    memset(ata, 0, 81 * sizeof *ata);
    for (int i = 0; i < est->count; i++) {
        if (!mask[i])
            continue;
        double p[2], q[2];
        pv_normalised_point(est, i, 0, p);
        pv_normalised_point(est, i, 1, q);
        double rows[2][9];
        int nrows;
        if (est->kind == PV_GEOMETRY_HOMOGRAPHY) {
            const double r0[9] = {-p[0], -p[1], -1, 0, 0, 0, q[0] * p[0], q[0] * p[1], q[0]};
            const double r1[9] = {0, 0, 0, -p[0], -p[1], -1, q[1] * p[0], q[1] * p[1], q[1]};
            memcpy(rows[0], r0, sizeof r0);
            memcpy(rows[1], r1, sizeof r1);
            nrows = 2;
        } else {
            const double r[9] = {q[0] * p[0], q[0] * p[1], q[0], q[1] * p[0], q[1] * p[1], q[1],
                                 p[0], p[1], 1};
            memcpy(rows[0], r, sizeof r);
            nrows = 1;
        }
        for (int r = 0; r < nrows; r++)
            for (int j = 0; j < 9; j++)
                for (int k = j; k < 9; k++)
                    ata[9 * j + k] += rows[r][j] * rows[r][k];
        used++;
    }
    for (int j = 0; j < 9; j++)
        for (int k = 0; k < j; k++)
            ata[9 * j + k] = ata[9 * k + j];
    return used;
}

/* Transfer-error cost (normalised units) of h (h[8] = 1) over the inliers,
 * and, when jtj is given, the Gauss-Newton normal equations. */
static double transfer_cost(const pv_estimation *est, const uint8_t *mask, const double *h,
                            double *jtj, double *jtr)
{
    double cost = 0.0;
    if (jtj) {
        memset(jtj, 0, 64 * sizeof *jtj);
        memset(jtr, 0, 8 * sizeof *jtr);
    }
    for (int i = 0; i < est->count; i++) {
        if (!mask[i])
            continue;
        double p[2], q[2];
        pv_normalised_point(est, i, 0, p);
        pv_normalised_point(est, i, 1, q);
        double u = h[0] * p[0] + h[1] * p[1] + h[2];
        double v = h[3] * p[0] + h[4] * p[1] + h[5];
        double w = h[6] * p[0] + h[7] * p[1] + 1.0;
        if (fabs(w) < 1e-12)
            return INFINITY;
        double rx = u / w - q[0], ry = v / w - q[1];
        cost += rx * rx + ry * ry;
        if (!jtj)
            continue;
        const double jx[8] = {p[0] / w, p[1] / w, 1 / w, 0, 0, 0, -p[0] * u / (w * w),
                              -p[1] * u / (w * w)};
        const double jy[8] = {0, 0, 0, p[0] / w, p[1] / w, 1 / w, -p[0] * v / (w * w),
                              -p[1] * v / (w * w)};
        for (int j = 0; j < 8; j++) {
            jtr[j] += jx[j] * rx + jy[j] * ry;
            for (int k = j; k < 8; k++)
                jtj[8 * j + k] += jx[j] * jx[k] + jy[j] * jy[k];
        }
    }
    if (jtj)
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < j; k++)
                jtj[8 * j + k] = jtj[8 * k + j];
    return cost;
}

/* Levenberg-Marquardt on the transfer error, from h (normalised, any scale). */
static void refine_transfer(const pv_estimation *est, const uint8_t *mask, double *h)
{
    double norm = 0.0;
    for (int i = 0; i < 9; i++)
        norm += h[i] * h[i];
    if (!(fabs(h[8]) > 1e-8 * sqrt(norm)))
        return;
    double x[9];
    for (int i = 0; i < 9; i++)
        x[i] = h[i] / h[8];
    double jtj[64], jtr[8], lambda = 1e-3;
    double cost = transfer_cost(est, mask, x, jtj, jtr);
    for (int it = 0; it < LM_ITERATIONS && isfinite(cost); it++) {
        double a[64], b[8], step[8], trial[9];
        memcpy(a, jtj, sizeof a);
        for (int j = 0; j < 8; j++) {
            a[8 * j + j] += lambda * (jtj[8 * j + j] > 0.0 ? jtj[8 * j + j] : 1.0);
            b[j] = -jtr[j];
        }
        if (!solve_linear(8, a, b, step))
            break;
        for (int j = 0; j < 8; j++)
            trial[j] = x[j] + step[j];
        trial[8] = 1.0;
        double trial_cost = transfer_cost(est, mask, trial, NULL, NULL);
        if (trial_cost < cost) {
            double gain = cost - trial_cost;
            memcpy(x, trial, sizeof x);
            cost = transfer_cost(est, mask, x, jtj, jtr);
            lambda *= 0.1;
            if (gain <= LM_MIN_GAIN * (cost + gain))
                break;
        } else {
            lambda *= 10.0;
            if (lambda > 1e12)
                break;
        }
    }
    memcpy(h, x, sizeof x);
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
    double ata[81];
    if (normal_matrix(est, mask, ata) < est->sample)
        return 0;
    smallest_eigenvector(9, ata, model);
    if (est->kind == PV_GEOMETRY_HOMOGRAPHY)
        refine_transfer(est, mask, model);
    else
        nearest_rank2(model);
    return 1;
}

/* ------------------------------------------------------------------ finish */

/* Unit Frobenius norm; H signed so that H[2][2] >= 0, F so that its
 * largest |entry| is positive. */
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
    double sign_of = kind == PV_GEOMETRY_HOMOGRAPHY ? m[8] : m[largest];
    double factor = (sign_of < 0.0 ? -1.0 : 1.0) / norm;
    for (int i = 0; i < 9; i++)
        m[i] *= factor;
}

void pv_finish_model(pv_estimation *est, const double model[9], pv_geometry_result *result)
{
    double current[9], pixels[9];
    memcpy(current, model, sizeof current);
    denormalise(est, current, pixels);
    int count = pixel_inliers(est, pixels, est->mask);
    for (int round = 0; est->params.refine && round < REFINE_ROUNDS; round++) {
        double refined[9];
        memcpy(refined, current, sizeof refined);
        if (!refine_model(est, est->mask, refined))
            break;
        denormalise(est, refined, pixels);
        int refined_count = pixel_inliers(est, pixels, est->scratch);
        if (refined_count < count)
            break;
        int grew = refined_count > count;
        memcpy(current, refined, sizeof current);
        memcpy(est->mask, est->scratch, (size_t)est->count);
        count = refined_count;
        if (!grew)
            break;
    }
    denormalise(est, current, pixels);
    scale_model(est->kind, pixels);
    memcpy(result->model, pixels, sizeof pixels);
    result->inlier_count = pixel_inliers(est, pixels, est->mask);
}
