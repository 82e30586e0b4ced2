/* Front end of the features module (SIFT): the caller's result made out of
 * a backend's raw result (deterministic order, top-K cap, u8 descriptors),
 * and the comparison of two keypoint sets used by the cross-check and the
 * tests. */
#include "features_internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void pv_sift_features_free(pv_sift_features *features)
{
    if (!features)
        return;
    free(features->keypoints);
    free(features->descriptors);
    free(features->descriptors_u8);
    memset(features, 0, sizeof *features);
}

/* Sorting an index array: qsort has no user pointer, so the arrays being
 * compared travel through a thread-local. */
typedef struct order_data {
    const uint64_t *keys;
    const pv_sift_keypoint *keypoints;
} order_data;

static _Thread_local order_data order_by;

static int compare_keys(const void *pa, const void *pb)
{
    uint64_t a = order_by.keys[*(const int *)pa], b = order_by.keys[*(const int *)pb];
    return a < b ? -1 : a > b;
}

/* Larger |response| first, then the key (unique), so the cap is a
 * deterministic top-K. */
static int compare_strength(const void *pa, const void *pb)
{
    int ia = *(const int *)pa, ib = *(const int *)pb;
    float ra = fabsf(order_by.keypoints[ia].response), rb = fabsf(order_by.keypoints[ib].response);
    if (ra != rb)
        return ra > rb ? -1 : 1;
    return compare_keys(pa, pb);
}

/* The indices of the keypoints to report, in key order. */
static int select_order(const pv_sift_raw *raw, int cap, int *order)
{
    for (int i = 0; i < raw->count; i++)
        order[i] = i;
    order_by.keys = raw->keys;
    order_by.keypoints = raw->keypoints;
    int count = raw->count;
    if (cap > 0 && count > cap) {
        qsort(order, (size_t)count, sizeof *order, compare_strength);
        count = cap;
    }
    qsort(order, (size_t)count, sizeof *order, compare_keys);
    return count;
}

static pv_status alloc_features(pv_context *ctx, int count, pv_sift_features *out)
{
    size_t n = count > 0 ? (size_t)count : 1;
    out->count = count;
    out->capacity = count;
    out->keypoints = malloc(n * sizeof *out->keypoints);
    out->descriptors = malloc(n * PV_SIFT_DESCRIPTOR_SIZE * sizeof(float));
    out->descriptors_u8 = malloc(n * PV_SIFT_DESCRIPTOR_SIZE);
    if (out->keypoints && out->descriptors && out->descriptors_u8)
        return PV_OK;
    pv_sift_features_free(out);
    return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %d keypoints", count);
}

static int keys_sorted(const pv_sift_raw *raw)
{
    for (int i = 1; i < raw->count; i++)
        if (raw->keys[i - 1] >= raw->keys[i])
            return 0;
    return 1;
}

static void fill_u8(const float *src, uint8_t *dst, size_t n)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n > ((size_t)1 << 18))
#endif
    for (size_t i = 0; i < n; i++)
        dst[i] = pv_sift_descriptor_u8(src[i]);
}

/* See features_internal.h. */
pv_status pv_sift_result_build(pv_context *ctx, pv_sift_raw *raw, int cap, pv_sift_features *out)
{
    if ((cap == 0 || raw->count <= cap) && keys_sorted(raw)) {
        if (!raw->u8_filled)
            fill_u8(raw->descriptors, raw->descriptors_u8,
                    (size_t)raw->count * PV_SIFT_DESCRIPTOR_SIZE);
        *out = (pv_sift_features){raw->count, raw->keypoints, raw->descriptors,
                                  raw->descriptors_u8, raw->capacity};
        raw->keypoints = NULL;
        raw->descriptors = NULL;
        raw->descriptors_u8 = NULL;
        raw->capacity = 0;
        return PV_OK;
    }
    int *order = malloc((raw->count > 0 ? (size_t)raw->count : 1) * sizeof *order);
    if (!order)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory to sort %d keypoints",
                       raw->count);
    int count = select_order(raw, cap, order);
    pv_status status = alloc_features(ctx, count, out);
    for (int i = 0; status == PV_OK && i < count; i++) {
        const float *src = raw->descriptors + (size_t)order[i] * PV_SIFT_DESCRIPTOR_SIZE;
        float *dst = out->descriptors + (size_t)i * PV_SIFT_DESCRIPTOR_SIZE;
        out->keypoints[i] = raw->keypoints[order[i]];
        memcpy(dst, src, PV_SIFT_DESCRIPTOR_SIZE * sizeof(float));
    }
    if (status == PV_OK)
        fill_u8(out->descriptors, out->descriptors_u8, (size_t)count * PV_SIFT_DESCRIPTOR_SIZE);
    free(order);
    return status;
}

/* ------------------------------------------------------------- comparison */

typedef struct y_order {
    float y;
    int index;
} y_order;

static int compare_y(const void *pa, const void *pb)
{
    const y_order *a = pa, *b = pb;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return a->index - b->index;
}

static double angle_difference(float a, float b)
{
    double d = fabs(fmod((double)a - (double)b, 2.0 * PV_PI));
    return d > PV_PI ? 2.0 * PV_PI - d : d;
}

/* First entry of sorted with y >= value. */
static int lower_bound_y(const y_order *sorted, int count, float value)
{
    int lo = 0, hi = count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sorted[mid].y < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The partner of ref keypoint r in a: within radius and scale_tol, the
 * smallest angle difference, then the smallest distance; -1 if none. */
static int find_partner(const pv_sift_features *a, const y_order *sorted, const pv_sift_keypoint *r,
                        float radius, float scale_tol)
{
    int best = -1;
    double best_angle = INFINITY, best_d2 = INFINITY;
    for (int j = lower_bound_y(sorted, a->count, r->y - radius);
         j < a->count && sorted[j].y <= r->y + radius; j++) {
        const pv_sift_keypoint *k = &a->keypoints[sorted[j].index];
        double dx = (double)k->x - r->x, dy = (double)k->y - r->y, d2 = dx * dx + dy * dy;
        if (d2 > (double)radius * radius ||
            fabs((double)k->sigma - r->sigma) > (double)scale_tol * r->sigma)
            continue;
        double da = angle_difference(k->angle, r->angle);
        if (da < best_angle || (da == best_angle && d2 < best_d2)) {
            best = sorted[j].index;
            best_angle = da;
            best_d2 = d2;
        }
    }
    return best;
}

static void descriptor_difference(const float *a, const float *b, double *max_diff, double *dist)
{
    double sum = 0.0;
    for (int k = 0; k < PV_SIFT_DESCRIPTOR_SIZE; k++) {
        double d = fabs((double)a[k] - (double)b[k]);
        if (d > *max_diff)
            *max_diff = d;
        sum += d * d;
    }
    *dist = sqrt(sum);
}

int pv_sift_features_valid(const pv_sift_features *f)
{
    return f && f->count >= 0 && (f->count == 0 || (f->keypoints && f->descriptors));
}

pv_status pv_sift_compare(const pv_sift_features *a, const pv_sift_features *ref, float radius,
                          float scale_tol, float angle_tol, pv_sift_agreement *agreement)
{
    if (!pv_sift_features_valid(a) || !pv_sift_features_valid(ref) || !agreement)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_compare: a, ref or agreement is NULL or empty");
    if (!(radius >= 0.0f) || !isfinite(radius) || !(scale_tol >= 0.0f) || !isfinite(scale_tol) ||
        !(angle_tol >= 0.0f) || !isfinite(angle_tol))
        return pv_fail(NULL, PV_ERR_INVALID,
                       "sift_compare: radius, scale_tol and angle_tol must be finite and >= 0");
    y_order *sorted = malloc((a->count > 0 ? (size_t)a->count : 1) * sizeof *sorted);
    if (!sorted)
        return pv_fail(NULL, PV_ERR_NOMEM, "sift_compare: no memory for %d keypoints", a->count);
    for (int i = 0; i < a->count; i++)
        sorted[i] = (y_order){a->keypoints[i].y, i};
    qsort(sorted, (size_t)a->count, sizeof *sorted, compare_y);
    pv_sift_agreement out = {ref->count, 0, 1.0, 1.0, 0.0, 0.0};
    int angle_ok = 0;
    double dist_sum = 0.0;
    for (int i = 0; i < ref->count; i++) {
        int j = find_partner(a, sorted, &ref->keypoints[i], radius, scale_tol);
        if (j < 0)
            continue;
        double dist;
        out.paired++;
        angle_ok += angle_difference(a->keypoints[j].angle, ref->keypoints[i].angle) <= angle_tol;
        descriptor_difference(a->descriptors + (size_t)j * PV_SIFT_DESCRIPTOR_SIZE,
                              ref->descriptors + (size_t)i * PV_SIFT_DESCRIPTOR_SIZE,
                              &out.max_descriptor_diff, &dist);
        dist_sum += dist;
    }
    free(sorted);
    if (ref->count > 0)
        out.paired_fraction = (double)out.paired / ref->count;
    if (out.paired > 0) {
        out.angle_ok_fraction = (double)angle_ok / out.paired;
        out.mean_descriptor_dist = dist_sum / out.paired;
    }
    *agreement = out;
    return PV_OK;
}

