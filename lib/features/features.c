/* Front end of the features module (SIFT): parameter and image checks,
 * the octave geometry and Gaussian taps (computed here once so both
 * backends blur with identical weights), the deterministic output order,
 * the top-K cap, descriptor matching decisions and the cross-check. */
#include "features_internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------ parameters */

/* The paper's settings (real-time): the input at its own resolution and
 * Lowe's contrast threshold for three levels. */
static void fast_params(pv_sift_params *p)
{
    pv_decl_defaults(&pv_sift_decl, p); /* declared in features_params.c */
    p->first_octave = 0;
    p->peak_thresh = 0.01f;
}

/* Reference quality: the 2x upsampled first octave (small-scale features,
 * as OpenCV, VLFeat's sift program and Lowe's demo) and no contrast
 * threshold (VLFeat's default): on warped real photos every threshold
 * tried above 0 lost correct matches, the low-contrast keypoints match
 * well (docs/sift.md gives the counts behind the choice). */
static void reference_params(pv_sift_params *p)
{
    fast_params(p);
    p->first_octave = -1;
    p->peak_thresh = PV_SIFT_REFERENCE_PEAK_THRESH;
}

void pv_sift_params_default(pv_sift_params *params)
{
    if (params)
        reference_params(params);
}

pv_status pv_sift_params_preset(pv_sift_params *params, pv_sift_preset preset)
{
    if (!params)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_params_preset: params is NULL");
    switch (preset) {
    case PV_SIFT_PRESET_FAST:
        fast_params(params);
        return PV_OK;
    case PV_SIFT_PRESET_REFERENCE:
        reference_params(params);
        return PV_OK;
    }
    return pv_fail(NULL, PV_ERR_INVALID, "sift_params_preset: preset %d is unknown", (int)preset);
}

void pv_sift_match_params_default(pv_sift_match_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_sift_match_decl, params); /* declared in features_params.c */
}

/* Every field in its declared range (features_params.c); the upper bounds
 * there keep every derived size (windows, taps) far from overflow. */
static pv_status check_sift_params(pv_context *ctx, const pv_sift_params *p)
{
    return pv_decl_check(ctx, "sift", &pv_sift_decl, p);
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
    pv_sift_features_free(&plan->kept);
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
    if (status == PV_OK)
        status = pv_fork_check_context(ctx);
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
    if (!pv_context_is_inherited(ctx)) /* the parent's device state: left alone */
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

/* -------------------------------------------------------------- detection */

static pv_status check_detect(pv_sift_plan *plan, const pv_image *image,
                              const pv_sift_features *features)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_detect: plan is NULL");
    pv_context *ctx = plan->ctx;
    if (!pv_image_is_valid_any_type(image))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: image is NULL or not a valid image");
    if (image->width != plan->geometry.width || image->height != plan->geometry.height)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: image is %dx%d but the plan is for %dx%d",
                       image->width, image->height, plan->geometry.width, plan->geometry.height);
    if (!features)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect: features is NULL");
    return pv_check_finite_image(ctx, "sift_detect", "image", image);
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
        status = pv_sift_result_build(ctx, &raw, plan->geometry.params.max_keypoints, &cpu);
    if (status == PV_OK)
        status = compare_backends(ctx, device, &cpu);
    pv_sift_raw_free(&raw);
    pv_sift_features_free(&cpu);
    ctx->timing = saved;
    return status;
}

/* Detection into the storage in raw (lent to the backend, freed here
 * whatever happens), with the context's call already begun.  On failure
 * *features is untouched. */
static pv_status detect_begun(pv_sift_plan *plan, const pv_image *image, pv_sift_raw raw,
                              pv_sift_features *features)
{
    pv_context *ctx = plan->ctx;
    pv_sift_features out = {0};
    pv_status status = ctx->ops->features->detect(ctx, plan->backend_plan, image, &raw);
    if (status == PV_OK)
        status = pv_sift_result_build(ctx, &raw, plan->geometry.params.max_keypoints, &out);
    pv_sift_raw_free(&raw);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_detect(plan, image, &out);
    if (status != PV_OK) {
        pv_sift_features_free(&out);
        return status;
    }
    *features = out;
    return PV_OK;
}

static pv_status detect(pv_sift_plan *plan, const pv_image *image, pv_sift_raw raw,
                        pv_sift_features *features)
{
    pv_status status = pv_call_begin(plan->ctx);
    if (status == PV_OK)
        status = detect_begun(plan, image, raw, features);
    pv_call_end(plan->ctx);
    return status;
}

pv_status pv_sift_detect(pv_sift_plan *plan, const pv_image *image, pv_sift_features *features)
{
    pv_status status = check_detect(plan, image, features);
    return status == PV_OK ? detect(plan, image, (pv_sift_raw){0}, features) : status;
}

/* The storage lent for a detection into *features: its arrays when it has
 * any (they become raw's, with a keys array of the same room; without
 * memory for that they are dropped and the backend allocates).  *features
 * is left zeroed either way. */
static pv_sift_raw lend_storage(pv_sift_features *features)
{
    pv_sift_raw raw = {0};
    if (features->capacity > 0 && features->keypoints && features->descriptors &&
        features->descriptors_u8) {
        raw.keys = malloc((size_t)features->capacity * sizeof *raw.keys);
        if (raw.keys) {
            raw.capacity = features->capacity;
            raw.keypoints = features->keypoints;
            raw.descriptors = features->descriptors;
            raw.descriptors_u8 = features->descriptors_u8;
            memset(features, 0, sizeof *features);
        }
    }
    pv_sift_features_free(features);
    return raw;
}

pv_status pv_sift_detect_into(pv_sift_plan *plan, const pv_image *image,
                              pv_sift_features *features)
{
    pv_status status = check_detect(plan, image, features);
    return status == PV_OK ? detect(plan, image, lend_storage(features), features) : status;
}

/* ------------------------------------------------------------------ batch */

static pv_status check_batch(pv_sift_plan *plan, const pv_image *images, int count,
                             const pv_sift_features *results)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_detect_batch: plan is NULL");
    if (count <= 0)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "sift_detect_batch: the batch is empty (%d)",
                       count);
    if (!images || !results)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "sift_detect_batch: images or results is NULL");
    for (int i = 0; i < count; i++) {
        pv_status status = check_detect(plan, &images[i], &results[i]);
        if (status != PV_OK) {
            char reason[256];
            snprintf(reason, sizeof reason, "%s", pv_context_last_error(plan->ctx));
            return pv_fail(plan->ctx, status, "sift_detect_batch: image %d: %s", i, reason);
        }
    }
    return PV_OK;
}

/* The batch's results from the backend's raw ones, each as a single
 * detection's (the top-K cap, the optional cross-check). */
static pv_status build_batch_results(pv_sift_plan *plan, const pv_image *images, int count,
                                     pv_sift_raw *raws, pv_sift_features *results)
{
    pv_context *ctx = plan->ctx;
    pv_status status = PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++) {
        status = pv_sift_result_build(ctx, &raws[i], plan->geometry.params.max_keypoints,
                                      &results[i]);
        if (status == PV_OK && pv_crosscheck_wanted(ctx))
            status = crosscheck_detect(plan, &images[i], &results[i]);
    }
    return status;
}

/* With the context's call begun: every result's storage lent to the
 * backend at once, so that it may overlap the images' work. */
static pv_status detect_batch_begun(pv_sift_plan *plan, const pv_image *images, int count,
                                    pv_sift_features *results)
{
    pv_context *ctx = plan->ctx;
    pv_sift_raw *raws = calloc((size_t)count, sizeof *raws);
    if (!raws)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: no memory for %d results", count);
    for (int i = 0; i < count; i++)
        raws[i] = lend_storage(&results[i]);
    pv_status status = ctx->ops->features->detect_batch(ctx, plan->backend_plan, images, count,
                                                        raws);
    if (status == PV_OK)
        status = build_batch_results(plan, images, count, raws, results);
    for (int i = 0; i < count; i++)
        pv_sift_raw_free(&raws[i]);
    free(raws);
    return status;
}

pv_status pv_sift_detect_batch(pv_sift_plan *plan, const pv_image *images, int count,
                               pv_sift_features *results)
{
    pv_status status = check_batch(plan, images, count, results);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(plan->ctx);
    if (status == PV_OK)
        status = detect_batch_begun(plan, images, count, results);
    pv_call_end(plan->ctx);
    if (status != PV_OK)
        for (int i = 0; i < count; i++)
            pv_sift_features_free(&results[i]);
    return status;
}
