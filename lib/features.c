/* Front end of the features module (SIFT): parameter and image checks,
 * the octave geometry and Gaussian taps (computed here once so both
 * backends blur with identical weights), the deterministic output order,
 * the top-K cap, descriptor matching decisions and the cross-check. */
#include "core/internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pv_sift_plan {
    pv_context *ctx;
    pv_sift_geometry geometry;
    float *base_weights;
    float *level_weights;
    void *backend_plan;
    void *cpu_plan;          /* cross-check oracle, created on first use */
};

/* ------------------------------------------------------------ parameters */

void pv_sift_params_default(pv_sift_params *params)
{
    if (!params)
        return;
    params->first_octave = 0;
    params->octaves = 0;
    params->levels = 3;
    params->sigma0 = 1.6f;
    params->sigma_input = 0.5f;
    params->peak_thresh = 0.01f;
    params->edge_thresh = 10.0f;
    params->orientation_window = 1.5f;
    params->orientation_peak = 0.8f;
    params->magnif = 3.0f;
    params->max_keypoints = 0;
}

void pv_sift_match_params_default(pv_sift_match_params *params)
{
    if (!params)
        return;
    params->ratio = 0.8f;
    params->mutual = 0;
}

static int positive_finite(float v)
{
    return isfinite(v) && v > 0.0f;
}

/* Upper bounds keep every derived size (windows, taps) far from overflow. */
static pv_status check_sift_floats(pv_context *ctx, const pv_sift_params *p)
{
    if (!positive_finite(p->sigma0) || p->sigma0 > 32.0f)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.sigma0 %g is not in (0, 32]",
                       (double)p->sigma0);
    if (!isfinite(p->sigma_input) || p->sigma_input < 0.0f || p->sigma_input > 32.0f)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.sigma_input %g is not in [0, 32]",
                       (double)p->sigma_input);
    if (!isfinite(p->peak_thresh) || p->peak_thresh < 0.0f)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.peak_thresh %g is not finite and >= 0",
                       (double)p->peak_thresh);
    if (!positive_finite(p->edge_thresh))
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.edge_thresh %g is not finite and > 0",
                       (double)p->edge_thresh);
    if (!positive_finite(p->orientation_window) || p->orientation_window > 8.0f)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "sift: params.orientation_window %g is not in (0, 8]",
                       (double)p->orientation_window);
    if (!isfinite(p->orientation_peak) || p->orientation_peak < 0.0f || p->orientation_peak > 1.0f)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.orientation_peak %g is not in [0, 1]",
                       (double)p->orientation_peak);
    if (!positive_finite(p->magnif) || p->magnif > 16.0f)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.magnif %g is not in (0, 16]",
                       (double)p->magnif);
    return PV_OK;
}

static pv_status check_sift_params(pv_context *ctx, const pv_sift_params *p)
{
    if (p->first_octave != -1 && p->first_octave != 0)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.first_octave %d is not -1 or 0",
                       p->first_octave);
    if (p->octaves < 0 || p->octaves > PV_SIFT_MAX_OCTAVES)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.octaves %d is not in 0..%d",
                       p->octaves, PV_SIFT_MAX_OCTAVES);
    if (p->levels < 1 || p->levels > PV_SIFT_MAX_LEVELS)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.levels %d is not in 1..%d", p->levels,
                       PV_SIFT_MAX_LEVELS);
    if (p->max_keypoints < 0)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: params.max_keypoints %d is negative",
                       p->max_keypoints);
    return check_sift_floats(ctx, p);
}

/* -------------------------------------------------------------- geometry */

static int floor_log2(int v)
{
    int l = 0;
    while (v > 1) {
        v >>= 1;
        l++;
    }
    return l;
}

/* Octaves whose smaller side stays >= 8 pixels (VLFeat's default keeps one
 * octave fewer, >= 16). */
static int max_octaves(int width, int height, int first_octave)
{
    int side = width < height ? width : height;
    int n = floor_log2(side) - first_octave - 2;
    if (n < 1)
        n = 1;
    return n > PV_SIFT_MAX_OCTAVES ? PV_SIFT_MAX_OCTAVES : n;
}

static int resolve_octaves(pv_context *ctx, int width, int height, const pv_sift_params *p)
{
    int most = max_octaves(width, height, p->first_octave);
    if (p->octaves == 0) {
        int side = width < height ? width : height;
        int n = floor_log2(side) - p->first_octave - 3;
        return n < 1 ? 1 : n > most ? most : n;
    }
    if (p->octaves > most) {
        pv_log(ctx, "sift: %d octaves requested, a %dx%d image allows %d: clamped", p->octaves,
               width, height, most);
        return most;
    }
    return p->octaves;
}

/* VLFeat's filter width: ceil(4 sigma), at least 1. */
static int radius_for_sigma(double sigma)
{
    int r = (int)ceil(4.0 * sigma);
    return r < 1 ? 1 : r;
}

static pv_status fill_level_taps(pv_context *ctx, pv_sift_plan *plan)
{
    pv_sift_geometry *g = &plan->geometry;
    const int levels = g->params.levels;
    double sigma[PV_SIFT_MAX_LEVELS + 3];
    int total = 0;
    for (int l = 1; l <= levels + 2; l++) {
        double k2 = pow(2.0, 2.0 * l / levels);
        sigma[l] = (double)g->params.sigma0 * sqrt(k2 - 1.0);
        g->level_radius[l] = radius_for_sigma(sigma[l]);
        g->level_offset[l] = total;
        total += 2 * g->level_radius[l] + 1;
    }
    g->level_taps = total;
    plan->level_weights = malloc((size_t)total * sizeof(float));
    if (!plan->level_weights)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift: no memory for %d Gaussian taps", total);
    for (int l = 1; l <= levels + 2; l++) {
        pv_status status = pv_gaussian_weights((float)sigma[l], 2 * g->level_radius[l] + 1,
                                               plan->level_weights + g->level_offset[l]);
        if (status != PV_OK)
            return pv_fail(ctx, status, "sift: level %d blur (sigma %g) has no valid taps", l,
                           sigma[l]);
    }
    g->level_weights = plan->level_weights;
    return PV_OK;
}

/* The first octave's base: sigma0 in octave pixels from the assumed input
 * blur (scaled by the upsampling). */
static pv_status fill_base_taps(pv_context *ctx, pv_sift_plan *plan)
{
    pv_sift_geometry *g = &plan->geometry;
    double sa = g->params.sigma0;
    double sb = g->params.sigma_input * pow(2.0, -g->params.first_octave);
    g->base_radius = 0;
    g->base_weights = NULL;
    if (!(sa > sb))
        return PV_OK;
    double sd = sqrt(sa * sa - sb * sb);
    g->base_radius = radius_for_sigma(sd);
    plan->base_weights = malloc((size_t)(2 * g->base_radius + 1) * sizeof(float));
    if (!plan->base_weights)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift: no memory for the base blur taps");
    pv_status status = pv_gaussian_weights((float)sd, 2 * g->base_radius + 1, plan->base_weights);
    if (status != PV_OK)
        return pv_fail(ctx, status, "sift: base blur (sigma %g) has no valid taps", sd);
    g->base_weights = plan->base_weights;
    return PV_OK;
}

static void fill_octave_sizes(pv_sift_geometry *g)
{
    int w = g->params.first_octave < 0 ? 2 * g->width : g->width;
    int h = g->params.first_octave < 0 ? 2 * g->height : g->height;
    for (int o = 0; o < g->octaves; o++) {
        g->octave_width[o] = w >> o;
        g->octave_height[o] = h >> o;
    }
}

static pv_status check_plan_args(pv_context *ctx, int width, int height, pv_sift_plan **plan)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_plan_create: ctx is NULL");
    if (!plan)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_plan_create: plan is NULL");
    if (width < PV_SIFT_MIN_SIZE || height < PV_SIFT_MIN_SIZE)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "sift_plan_create: %dx%d is smaller than the %dx%d minimum", width, height,
                       PV_SIFT_MIN_SIZE, PV_SIFT_MIN_SIZE);
    /* Keys hold 16-bit coordinates of the (possibly upsampled) octave. */
    if (width > 32767 || height > 32767)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_plan_create: %dx%d exceeds 32767 pixels a side",
                       width, height);
    return PV_OK;
}

static void free_plan(pv_sift_plan *plan)
{
    free(plan->base_weights);
    free(plan->level_weights);
    free(plan);
}

pv_status pv_sift_plan_create(pv_context *ctx, int width, int height,
                              const pv_sift_params *params, pv_sift_plan **plan)
{
    pv_status status = check_plan_args(ctx, width, height, plan);
    pv_sift_params p;
    pv_sift_params_default(&p);
    if (status == PV_OK && params)
        p = *params;
    if (status == PV_OK)
        status = check_sift_params(ctx, &p);
    if (status != PV_OK)
        return status;
    pv_sift_plan *made = calloc(1, sizeof *made);
    if (!made)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: no memory for the plan");
    made->ctx = ctx;
    pv_sift_geometry *g = &made->geometry;
    g->width = width;
    g->height = height;
    g->params = p;
    g->octaves = g->params.octaves = resolve_octaves(ctx, width, height, &p);
    fill_octave_sizes(g);
    status = fill_base_taps(ctx, made);
    if (status == PV_OK)
        status = fill_level_taps(ctx, made);
    pv_context_lock(ctx); /* a shared context's device state */
    if (status == PV_OK)
        status = ctx->ops->features->create(ctx, g, &made->backend_plan);
    if (status != PV_OK)
        free_plan(made);
    pv_context_unlock(ctx);
    if (status != PV_OK)
        return status;
    *plan = made;
    return PV_OK;
}

void pv_sift_plan_destroy(pv_sift_plan *plan)
{
    if (!plan)
        return;
    pv_context *ctx = plan->ctx;
    pv_context_lock(ctx); /* a shared context's device state */
    ctx->ops->features->destroy(ctx, plan->backend_plan);
    if (plan->cpu_plan)
        pv_cpu_backend.features->destroy(ctx, plan->cpu_plan);
    free_plan(plan);
    pv_context_unlock(ctx);
}

int pv_sift_plan_octaves(const pv_sift_plan *plan)
{
    return plan ? plan->geometry.octaves : 0;
}

/* --------------------------------------------------------------- results */

void pv_sift_features_free(pv_sift_features *features)
{
    if (!features)
        return;
    free(features->keypoints);
    free(features->descriptors);
    free(features->descriptors_u8);
    memset(features, 0, sizeof *features);
}

void pv_sift_matches_free(pv_sift_matches *matches)
{
    if (!matches)
        return;
    free(matches->pairs);
    matches->pairs = NULL;
    matches->count = 0;
}

static void free_raw(pv_sift_raw *raw)
{
    free(raw->keypoints);
    free(raw->keys);
    free(raw->descriptors);
    free(raw->descriptors_u8);
    free(raw->spare_keypoints);
    free(raw->spare_descriptors);
    free(raw->spare_u8);
    memset(raw, 0, sizeof *raw);
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

/* The caller's result.  When the backend's list is already in key order
 * and within the cap (the OpenCL backend's always is, apart from the cap),
 * its arrays are handed over as they are: no sort and no copy; the u8
 * descriptors are made unless the backend made them.  raw gives up what it
 * hands over. */
static pv_status build_features(pv_context *ctx, pv_sift_raw *raw, int cap,
                                pv_sift_features *out)
{
    if ((cap == 0 || raw->count <= cap) && keys_sorted(raw)) {
        int capacity = raw->capacity > raw->count ? raw->capacity : raw->count;
        if (!raw->descriptors_u8) {
            size_t n = (size_t)raw->count * PV_SIFT_DESCRIPTOR_SIZE;
            raw->descriptors_u8 = malloc(n > 0 ? n : 1);
            if (!raw->descriptors_u8)
                return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %d keypoints",
                               raw->count);
            fill_u8(raw->descriptors, raw->descriptors_u8, n);
            capacity = raw->count;
        }
        *out = (pv_sift_features){raw->count, raw->keypoints, raw->descriptors,
                                  raw->descriptors_u8, capacity};
        raw->keypoints = NULL;
        raw->descriptors = NULL;
        raw->descriptors_u8 = NULL;
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

static int features_valid(const pv_sift_features *f)
{
    return f && f->count >= 0 && (f->count == 0 || (f->keypoints && f->descriptors));
}

pv_status pv_sift_compare(const pv_sift_features *a, const pv_sift_features *ref, float radius,
                          float scale_tol, float angle_tol, pv_sift_agreement *agreement)
{
    if (!features_valid(a) || !features_valid(ref) || !agreement)
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

/* -------------------------------------------------------------- detection */

static pv_status check_image_nan(pv_context *ctx, const pv_image *image)
{
    if (image->type != PV_PIXEL_F32)
        return PV_OK;
    for (int y = 0; y < image->height; y++) {
        const float *row = (const float *)image->data + (ptrdiff_t)y * image->stride;
        for (int x = 0; x < image->width; x++)
            if (!isfinite(row[x]))
                return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: image pixel (%d, %d) is %s", x,
                               y, isnan(row[x]) ? "NaN" : "infinite");
    }
    return PV_OK;
}

static pv_status check_detect(pv_sift_plan *plan, const pv_image *image,
                              const pv_sift_features *features)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_detect: plan is NULL");
    pv_context *ctx = plan->ctx;
    if (!pv_image_is_valid(image))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: image is NULL or not a valid image");
    if (image->width != plan->geometry.width || image->height != plan->geometry.height)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: image is %dx%d but the plan is for %dx%d",
                       image->width, image->height, plan->geometry.width, plan->geometry.height);
    if (!features)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: features is NULL");
    return check_image_nan(ctx, image);
}

static pv_status compare_backends(pv_context *ctx, const pv_sift_features *device,
                                  const pv_sift_features *cpu)
{
    pv_sift_agreement fwd, back;
    pv_status status = pv_sift_compare(device, cpu, PV_SIFT_POSITION_TOLERANCE, 1e-3f, 1e-2f, &fwd);
    if (status == PV_OK)
        status = pv_sift_compare(cpu, device, PV_SIFT_POSITION_TOLERANCE, 1e-3f, 1e-2f, &back);
    if (status != PV_OK)
        return pv_fail(ctx, status, "sift_detect cross-check: comparison failed");
    if (fwd.paired_fraction < PV_SIFT_MATCHED_FRACTION ||
        back.paired_fraction < PV_SIFT_MATCHED_FRACTION ||
        fwd.max_descriptor_diff > PV_SIFT_DESCRIPTOR_TOLERANCE)
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "sift_detect cross-check: %d vs %d keypoints, %.2f%% / %.2f%% paired "
                       "within %g px, descriptor difference %g > %g?",
                       device->count, cpu->count, 100.0 * fwd.paired_fraction,
                       100.0 * back.paired_fraction, (double)PV_SIFT_POSITION_TOLERANCE,
                       fwd.max_descriptor_diff, (double)PV_SIFT_DESCRIPTOR_TOLERANCE);
    return PV_OK;
}

static pv_status crosscheck_detect(pv_sift_plan *plan, const pv_image *image,
                                   const pv_sift_features *device)
{
    pv_context *ctx = plan->ctx;
    pv_timing saved = ctx->timing;
    pv_status status = PV_OK;
    if (!plan->cpu_plan)
        status = pv_cpu_backend.features->create(ctx, &plan->geometry, &plan->cpu_plan);
    pv_sift_raw raw = {0};
    pv_sift_features cpu = {0};
    if (status == PV_OK)
        status = pv_cpu_backend.features->detect(ctx, plan->cpu_plan, image, &raw);
    if (status == PV_OK)
        status = build_features(ctx, &raw, plan->geometry.params.max_keypoints, &cpu);
    if (status == PV_OK)
        status = compare_backends(ctx, device, &cpu);
    free_raw(&raw);
    pv_sift_features_free(&cpu);
    ctx->timing = saved;
    return status;
}

/* Detection with an earlier result's arrays offered to the backend (raw's
 * spares, freed here whatever happens). */
static pv_status detect(pv_sift_plan *plan, const pv_image *image, pv_sift_raw raw,
                        pv_sift_features *features)
{
    pv_context *ctx = plan->ctx;
    pv_status status;
    pv_sift_features out = {0};
    pv_call_begin(ctx);
    status = ctx->ops->features->detect(ctx, plan->backend_plan, image, &raw);
    if (status == PV_OK)
        status = build_features(ctx, &raw, plan->geometry.params.max_keypoints, &out);
    free_raw(&raw);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_detect(plan, image, &out);
    pv_call_end(ctx);
    if (status != PV_OK) {
        pv_sift_features_free(&out);
        return status;
    }
    *features = out;
    return PV_OK;
}

pv_status pv_sift_detect(pv_sift_plan *plan, const pv_image *image, pv_sift_features *features)
{
    pv_status status = check_detect(plan, image, features);
    return status == PV_OK ? detect(plan, image, (pv_sift_raw){0}, features) : status;
}

pv_status pv_sift_detect_into(pv_sift_plan *plan, const pv_image *image,
                              pv_sift_features *features)
{
    pv_status status = check_detect(plan, image, features);
    if (status != PV_OK)
        return status;
    pv_sift_raw raw = {0};
    if (features->capacity > 0 && features->keypoints && features->descriptors &&
        features->descriptors_u8) {
        raw.spare_keypoints = features->keypoints;
        raw.spare_descriptors = features->descriptors;
        raw.spare_u8 = features->descriptors_u8;
        raw.spare_capacity = features->capacity;
    } else {
        pv_sift_features_free(features);
    }
    memset(features, 0, sizeof *features);
    return detect(plan, image, raw, features);
}

/* --------------------------------------------------------------- matching */

typedef struct nearest_result {
    int *best;
    float *d1, *d2;
} nearest_result;

static void free_nearest(nearest_result *r)
{
    free(r->best);
    free(r->d1);
    free(r->d2);
}

static pv_status run_nearest(pv_context *ctx, const pv_backend_ops *ops,
                             const pv_sift_features *query, const pv_sift_features *train,
                             nearest_result *r)
{
    size_t n = query->count > 0 ? (size_t)query->count : 1;
    r->best = malloc(n * sizeof *r->best);
    r->d1 = malloc(n * sizeof *r->d1);
    r->d2 = malloc(n * sizeof *r->d2);
    if (!r->best || !r->d1 || !r->d2)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d queries", query->count);
    if (query->count == 0)
        return PV_OK;
    return ops->features->nearest(ctx, query->descriptors, query->count, train->descriptors,
                             train->count, r->best, r->d1, r->d2);
}

static int passes_ratio(float d1, float d2, float ratio)
{
    if (ratio >= 1.0f)
        return 1;
    return (double)d1 < (double)ratio * (double)ratio * (double)d2;
}

/* Decisions on the nearest-neighbour tables (squared distances). */
static pv_status collect_matches(pv_context *ctx, int count, const nearest_result *fwd,
                                 const nearest_result *back, float ratio, pv_sift_matches *out)
{
    pv_sift_pair *list = malloc((count > 0 ? (size_t)count : 1) * sizeof *list);
    if (!list)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d matches", count);
    int kept = 0;
    for (int i = 0; i < count; i++) {
        int j = fwd->best[i];
        if (j < 0 || !passes_ratio(fwd->d1[i], fwd->d2[i], ratio))
            continue;
        if (back && back->best[j] != i)
            continue;
        list[kept++] = (pv_sift_pair){i, j, sqrtf(fwd->d1[i]),
                                       isinf(fwd->d2[i]) ? INFINITY : sqrtf(fwd->d2[i])};
    }
    out->count = kept;
    out->pairs = list;
    return PV_OK;
}

static pv_status check_match(pv_context *ctx, const pv_sift_features *query,
                             const pv_sift_features *train, const pv_sift_match_params *p,
                             const pv_sift_matches *matches)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_match: ctx is NULL");
    if (!features_valid(query))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: query is NULL or has no descriptors");
    if (!features_valid(train))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: train is NULL or has no descriptors");
    if (!matches)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: matches is NULL");
    if (!(p->ratio > 0.0f && p->ratio <= 1.0f))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: params.ratio %g is not in (0, 1]",
                       (double)p->ratio);
    if (p->mutual != 0 && p->mutual != 1)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: params.mutual %d is not 0 or 1",
                       p->mutual);
    return PV_OK;
}

static pv_status crosscheck_nearest(pv_context *ctx, const pv_sift_features *query,
                                    const pv_sift_features *train, const nearest_result *device)
{
    nearest_result cpu = {NULL, NULL, NULL};
    pv_timing saved = ctx->timing;
    pv_status status = run_nearest(ctx, &pv_cpu_backend, query, train, &cpu);
    int differ = 0;
    for (int i = 0; status == PV_OK && i < query->count; i++)
        differ += cpu.best[i] != device->best[i] ||
                  fabsf(cpu.d1[i] - device->d1[i]) > 1e-4f * (1.0f + cpu.d1[i]);
    ctx->timing = saved;
    free_nearest(&cpu);
    if (status == PV_OK && differ)
        status = pv_fail(ctx, PV_ERR_MISMATCH, "sift_match cross-check: %d of %d nearest "
                         "neighbours differ", differ, query->count);
    return status;
}

static pv_status match_on_backend(pv_context *ctx, const pv_sift_features *query,
                                  const pv_sift_features *train, const pv_sift_match_params *p,
                                  pv_sift_matches *out)
{
    nearest_result fwd = {NULL, NULL, NULL}, back = {NULL, NULL, NULL};
    pv_status status = run_nearest(ctx, ctx->ops, query, train, &fwd);
    if (status == PV_OK && p->mutual)
        status = run_nearest(ctx, ctx->ops, train, query, &back);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_nearest(ctx, query, train, &fwd);
    if (status == PV_OK)
        status = collect_matches(ctx, query->count, &fwd, p->mutual ? &back : NULL, p->ratio, out);
    free_nearest(&fwd);
    free_nearest(&back);
    return status;
}

pv_status pv_sift_match(pv_context *ctx, const pv_sift_features *query,
                        const pv_sift_features *train, const pv_sift_match_params *params,
                        pv_sift_matches *matches)
{
    pv_sift_match_params p;
    pv_sift_match_params_default(&p);
    if (params)
        p = *params;
    pv_status status = check_match(ctx, query, train, &p, matches);
    if (status != PV_OK)
        return status;
    pv_sift_matches out = {0, NULL};
    pv_call_begin(ctx);
    status = match_on_backend(ctx, query, train, &p, &out);
    pv_call_end(ctx);
    if (status != PV_OK)
        return status;
    *matches = out;
    return PV_OK;
}
