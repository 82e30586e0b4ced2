/* Front end of the filter module: argument checks, the Gaussian taps
 * (computed here once so both backends apply identical weights), dispatch,
 * and the CPU cross-check. */
#include "core/internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* Widest kernel accepted: far beyond any useful sigma (radius 2047 covers
 * sigma ~ 680), small enough that the weights fit any device's constant
 * memory and an absurd value is reported instead of attempted. */
#define PV_FILTER_MAX_TAPS 4095

/* Documented cross-check tolerance (relative L-infinity). */
#define PV_FILTER_TOLERANCE 1e-5

/* ------------------------------------------------------------------ weights */

static int sigma_is_valid(float sigma)
{
    return isfinite(sigma) && sigma > 0.0f;
}

int pv_gaussian_taps_for_sigma(float sigma)
{
    if (!sigma_is_valid(sigma))
        return 0;
    double radius = ceil(3.0 * (double)sigma);
    if (radius > (double)((INT_MAX - 1) / 2))
        return 0; /* no count fits an int; the blur functions reject it too */
    int taps = 2 * (int)radius + 1;
    return taps < 3 ? 3 : taps;
}

static int taps_is_valid(int taps)
{
    return taps >= 1 && taps % 2 == 1 && taps <= PV_FILTER_MAX_TAPS;
}

/* Weights by distance from the centre, so the result is exactly symmetric;
 * accumulated in double and rounded once. */
static void fill_gaussian(float sigma, int taps, float *weights)
{
    const int radius = taps / 2;
    const double inv_two_var = 1.0 / (2.0 * (double)sigma * (double)sigma);
    double sum = 0.0;
    for (int i = 0; i < taps; i++) {
        double d = (double)(i - radius);
        sum += exp(-d * d * inv_two_var);
    }
    for (int i = 0; i < taps; i++) {
        double d = (double)abs(i - radius);
        weights[i] = (float)(exp(-d * d * inv_two_var) / sum);
    }
}

pv_status pv_gaussian_weights(float sigma, int taps, float *weights)
{
    if (!sigma_is_valid(sigma))
        return pv_fail(NULL, PV_ERR_INVALID, "pv_gaussian_weights: sigma %g is not finite and > 0",
                       (double)sigma);
    if (!taps_is_valid(taps))
        return pv_fail(NULL, PV_ERR_INVALID, "pv_gaussian_weights: taps %d is not odd in 1..%d",
                       taps, PV_FILTER_MAX_TAPS);
    if (!weights)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_gaussian_weights: weights is NULL");
    fill_gaussian(sigma, taps, weights);
    return PV_OK;
}

/* ------------------------------------------------------------------- checks */

/* A valid f32 output of src's size that shares no memory with src. */
static pv_status check_image_output(pv_context *ctx, const char *op, const char *name,
                                    const pv_image *src, const pv_image *out)
{
    if (!pv_image_is_valid(out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid image", op, name);
    if (out->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s must be an f32 image", op, name);
    if (!pv_images_same_size(src, out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%d but src is %dx%d", op, name,
                       out->width, out->height, src->width, src->height);
    if (pv_images_overlap(src, out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s shares memory with src", op, name);
    return PV_OK;
}

static pv_status check_volume_output(pv_context *ctx, const char *op, const char *name,
                                     const pv_volume *src, const pv_volume *out)
{
    if (!pv_volume_is_valid(out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid volume", op, name);
    if (!pv_volumes_same_size(src, out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%dx%d but src is %dx%dx%d", op, name,
                       out->nx, out->ny, out->nz, src->nx, src->ny, src->nz);
    if (pv_volumes_overlap(src, out))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s shares memory with src", op, name);
    return PV_OK;
}

/* Resolve taps = 0 from sigma and check both. */
static pv_status check_blur_params(pv_context *ctx, const char *op, float sigma, int *taps)
{
    if (!sigma_is_valid(sigma))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: sigma %g is not finite and > 0", op,
                       (double)sigma);
    if (*taps == 0) {
        *taps = pv_gaussian_taps_for_sigma(sigma);
        if (!taps_is_valid(*taps))
            return pv_fail(ctx, PV_ERR_INVALID, "%s: sigma %g needs more than %d taps", op,
                           (double)sigma, PV_FILTER_MAX_TAPS);
        return PV_OK;
    }
    if (!taps_is_valid(*taps))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: taps %d is not 0 or odd in 1..%d", op, *taps,
                       PV_FILTER_MAX_TAPS);
    return PV_OK;
}

static int scheme_is_valid(pv_gradient_scheme scheme)
{
    return scheme == PV_GRADIENT_CENTRAL || scheme == PV_GRADIENT_FORWARD;
}

/* --------------------------------------------------------------- cross-check */

static pv_status mismatch(pv_context *ctx, const char *op, double error)
{
    return pv_fail(ctx, PV_ERR_MISMATCH, "%s cross-check: relative error %g > %g", op, error,
                   PV_FILTER_TOLERANCE);
}

static pv_status crosscheck_nomem(pv_context *ctx, const char *op)
{
    return pv_fail(ctx, PV_ERR_NOMEM, "%s cross-check: no memory for the CPU result", op);
}

/* The CPU result of the blur on a scratch image, compared with dst. */
static pv_status crosscheck_blur2d(pv_context *ctx, const pv_image *src, const pv_image *dst,
                                   const float *weights, int radius)
{
    pv_image ref;
    if (pv_image_alloc_like(&ref, dst, PV_PIXEL_F32) != PV_OK)
        return crosscheck_nomem(ctx, "gaussian_blur");
    pv_timing saved = ctx->timing;
    pv_status status = pv_cpu_backend.filter->gaussian2d(ctx, src, &ref, weights, radius);
    ctx->timing = saved;
    if (status == PV_OK) {
        double error = pv_image_rel_linf(dst, &ref);
        if (!(error <= PV_FILTER_TOLERANCE))
            status = mismatch(ctx, "gaussian_blur", error);
    }
    pv_image_free(&ref);
    return status;
}

static pv_status crosscheck_blur3d(pv_context *ctx, const pv_volume *src, const pv_volume *dst,
                                   const float *weights, int radius)
{
    pv_volume ref;
    if (pv_volume_alloc_like(&ref, dst) != PV_OK)
        return crosscheck_nomem(ctx, "gaussian_blur3d");
    pv_timing saved = ctx->timing;
    pv_status status = pv_cpu_backend.filter->gaussian3d(ctx, src, &ref, weights, radius);
    ctx->timing = saved;
    if (status == PV_OK) {
        double error = pv_volume_rel_linf(dst, &ref);
        if (!(error <= PV_FILTER_TOLERANCE))
            status = mismatch(ctx, "gaussian_blur3d", error);
    }
    pv_volume_free(&ref);
    return status;
}

/* Scratch CPU outputs mirroring which of the caller's outputs are wanted. */
static pv_status alloc_image_refs(pv_image *const outs[], pv_image refs[], int count)
{
    for (int i = 0; i < count; i++)
        refs[i].data = NULL;
    for (int i = 0; i < count; i++) {
        if (outs[i] && pv_image_alloc_like(&refs[i], outs[i], PV_PIXEL_F32) != PV_OK)
            return PV_ERR_NOMEM;
    }
    return PV_OK;
}

static void free_image_refs(pv_image refs[], int count)
{
    for (int i = 0; i < count; i++)
        if (refs[i].data)
            pv_image_free(&refs[i]);
}

static double max_image_error(pv_image *const outs[], const pv_image refs[], int count)
{
    double worst = 0.0;
    for (int i = 0; i < count; i++) {
        double error = outs[i] ? pv_image_rel_linf(outs[i], &refs[i]) : 0.0;
        if (!(error <= worst))
            worst = error;
    }
    return worst;
}

static pv_status crosscheck_gradient2d(pv_context *ctx, const pv_image *src, pv_image *gx,
                                       pv_image *gy, pv_gradient_scheme scheme)
{
    pv_image *const outs[2] = {gx, gy};
    pv_image refs[2];
    pv_status status = alloc_image_refs(outs, refs, 2);
    if (status != PV_OK) {
        free_image_refs(refs, 2);
        return crosscheck_nomem(ctx, "gradient");
    }
    pv_timing saved = ctx->timing;
    status = pv_cpu_backend.filter->gradient2d(ctx, src, gx ? &refs[0] : NULL, gy ? &refs[1] : NULL,
                                       scheme);
    ctx->timing = saved;
    if (status == PV_OK) {
        double error = max_image_error(outs, refs, 2);
        if (!(error <= PV_FILTER_TOLERANCE))
            status = mismatch(ctx, "gradient", error);
    }
    free_image_refs(refs, 2);
    return status;
}

static pv_status alloc_volume_refs(pv_volume *const outs[], pv_volume refs[], int count)
{
    for (int i = 0; i < count; i++)
        refs[i].data = NULL;
    for (int i = 0; i < count; i++) {
        if (outs[i] && pv_volume_alloc_like(&refs[i], outs[i]) != PV_OK)
            return PV_ERR_NOMEM;
    }
    return PV_OK;
}

static void free_volume_refs(pv_volume refs[], int count)
{
    for (int i = 0; i < count; i++)
        if (refs[i].data)
            pv_volume_free(&refs[i]);
}

static double max_volume_error(pv_volume *const outs[], const pv_volume refs[], int count)
{
    double worst = 0.0;
    for (int i = 0; i < count; i++) {
        double error = outs[i] ? pv_volume_rel_linf(outs[i], &refs[i]) : 0.0;
        if (!(error <= worst))
            worst = error;
    }
    return worst;
}

static pv_status crosscheck_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                                       pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme)
{
    pv_volume *const outs[3] = {gx, gy, gz};
    pv_volume refs[3];
    pv_status status = alloc_volume_refs(outs, refs, 3);
    if (status != PV_OK) {
        free_volume_refs(refs, 3);
        return crosscheck_nomem(ctx, "gradient3d");
    }
    pv_timing saved = ctx->timing;
    status = pv_cpu_backend.filter->gradient3d(ctx, src, gx ? &refs[0] : NULL, gy ? &refs[1] : NULL,
                                       gz ? &refs[2] : NULL, scheme);
    ctx->timing = saved;
    if (status == PV_OK) {
        double error = max_volume_error(outs, refs, 3);
        if (!(error <= PV_FILTER_TOLERANCE))
            status = mismatch(ctx, "gradient3d", error);
    }
    free_volume_refs(refs, 3);
    return status;
}

/* --------------------------------------------------------------- operations */

static pv_status check_blur2d(pv_context *ctx, const pv_image *src, const pv_image *dst,
                              float sigma, int *taps)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "gaussian_blur: ctx is NULL");
    if (!pv_image_is_valid(src))
        return pv_fail(ctx, PV_ERR_INVALID, "gaussian_blur: src is NULL or not a valid image");
    pv_status status = check_image_output(ctx, "gaussian_blur", "dst", src, dst);
    if (status != PV_OK)
        return status;
    return check_blur_params(ctx, "gaussian_blur", sigma, taps);
}

static float *make_weights(pv_context *ctx, const char *op, float sigma, int taps)
{
    float *weights = malloc((size_t)taps * sizeof *weights);
    if (!weights) {
        pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for %d weights", op, taps);
        return NULL;
    }
    fill_gaussian(sigma, taps, weights);
    return weights;
}

pv_status pv_gaussian_blur(pv_context *ctx, const pv_image *src, pv_image *dst, float sigma,
                           int taps)
{
    pv_status status = check_blur2d(ctx, src, dst, sigma, &taps);
    if (status != PV_OK)
        return status;
    float *weights = make_weights(ctx, "gaussian_blur", sigma, taps);
    if (!weights)
        return PV_ERR_NOMEM;
    pv_call_begin(ctx);
    status = ctx->ops->filter->gaussian2d(ctx, src, dst, weights, taps / 2);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_blur2d(ctx, src, dst, weights, taps / 2);
    pv_call_end(ctx);
    free(weights);
    return status;
}

static pv_status check_blur3d(pv_context *ctx, const pv_volume *src, const pv_volume *dst,
                              float sigma, int *taps)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "gaussian_blur3d: ctx is NULL");
    if (!pv_volume_is_valid(src))
        return pv_fail(ctx, PV_ERR_INVALID, "gaussian_blur3d: src is NULL or not a valid volume");
    pv_status status = check_volume_output(ctx, "gaussian_blur3d", "dst", src, dst);
    if (status != PV_OK)
        return status;
    return check_blur_params(ctx, "gaussian_blur3d", sigma, taps);
}

pv_status pv_gaussian_blur3d(pv_context *ctx, const pv_volume *src, pv_volume *dst, float sigma,
                             int taps)
{
    pv_status status = check_blur3d(ctx, src, dst, sigma, &taps);
    if (status != PV_OK)
        return status;
    float *weights = make_weights(ctx, "gaussian_blur3d", sigma, taps);
    if (!weights)
        return PV_ERR_NOMEM;
    pv_call_begin(ctx);
    status = ctx->ops->filter->gaussian3d(ctx, src, dst, weights, taps / 2);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_blur3d(ctx, src, dst, weights, taps / 2);
    pv_call_end(ctx);
    free(weights);
    return status;
}

static pv_status check_gradient2d(pv_context *ctx, const pv_image *src, const pv_image *gx,
                                  const pv_image *gy, pv_gradient_scheme scheme)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "gradient: ctx is NULL");
    if (!pv_image_is_valid(src))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient: src is NULL or not a valid image");
    if (!gx && !gy)
        return pv_fail(ctx, PV_ERR_INVALID, "gradient: gx and gy are both NULL");
    pv_status status = PV_OK;
    if (gx)
        status = check_image_output(ctx, "gradient", "gx", src, gx);
    if (status == PV_OK && gy)
        status = check_image_output(ctx, "gradient", "gy", src, gy);
    if (status != PV_OK)
        return status;
    if (gx && gy && pv_images_overlap(gx, gy))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient: gx and gy share memory");
    if (!scheme_is_valid(scheme))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient: unknown scheme %d", (int)scheme);
    return PV_OK;
}

pv_status pv_gradient(pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,
                      pv_gradient_scheme scheme)
{
    pv_status status = check_gradient2d(ctx, src, gx, gy, scheme);
    if (status != PV_OK)
        return status;
    pv_call_begin(ctx);
    status = ctx->ops->filter->gradient2d(ctx, src, gx, gy, scheme);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_gradient2d(ctx, src, gx, gy, scheme);
    pv_call_end(ctx);
    return status;
}

/* Each non-NULL output valid, of src's size, apart from src and the others. */
static pv_status check_gradient3d_outputs(pv_context *ctx, const pv_volume *src,
                                          pv_volume *const outs[3])
{
    static const char *const names[3] = {"gx", "gy", "gz"};
    for (int i = 0; i < 3; i++) {
        if (!outs[i])
            continue;
        pv_status status = check_volume_output(ctx, "gradient3d", names[i], src, outs[i]);
        if (status != PV_OK)
            return status;
        for (int j = 0; j < i; j++)
            if (outs[j] && pv_volumes_overlap(outs[i], outs[j]))
                return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: %s and %s share memory",
                               names[j], names[i]);
    }
    return PV_OK;
}

static pv_status check_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                                  pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "gradient3d: ctx is NULL");
    if (!pv_volume_is_valid(src))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: src is NULL or not a valid volume");
    if (!gx && !gy && !gz)
        return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: gx, gy and gz are all NULL");
    pv_volume *const outs[3] = {gx, gy, gz};
    pv_status status = check_gradient3d_outputs(ctx, src, outs);
    if (status != PV_OK)
        return status;
    if (!scheme_is_valid(scheme))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: unknown scheme %d", (int)scheme);
    return PV_OK;
}

pv_status pv_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx, pv_volume *gy,
                        pv_volume *gz, pv_gradient_scheme scheme)
{
    pv_status status = check_gradient3d(ctx, src, gx, gy, gz, scheme);
    if (status != PV_OK)
        return status;
    pv_call_begin(ctx);
    status = ctx->ops->filter->gradient3d(ctx, src, gx, gy, gz, scheme);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_gradient3d(ctx, src, gx, gy, gz, scheme);
    pv_call_end(ctx);
    return status;
}
