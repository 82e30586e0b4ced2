/* Front end of the filter module: argument checks, the Gaussian taps
 * (computed here once so both backends apply identical weights), dispatch,
 * and the CPU cross-check. */
#include "../core/internal.h"
#include "../core/tolerance.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* Widest kernel accepted: far beyond any useful sigma (radius 2047 covers
 * sigma ~ 680), small enough that the weights fit any device's constant
 * memory and an absurd value is reported instead of attempted. */
#define PV_FILTER_MAX_TAPS 4095

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
    pv_status status = pv_check_volume(ctx, op, name, out, PV_ACCEPT_F32);
    if (status != PV_OK)
        return status;
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

/* The CPU blur of src (images when dims is 2, else volumes) against dst. */
static pv_status crosscheck_blur(pv_context *ctx, const char *op, int dims, const void *src,
                                 const void *dst, const float *weights, int radius)
{
    pv_oracle oracle;
    pv_image *ref_image = NULL;
    pv_volume *ref_volume = NULL;
    pv_oracle_begin(ctx, op, &oracle);
    pv_status status = dims == 2 ? pv_oracle_add_image(ctx, &oracle, dst, &ref_image)
                                 : pv_oracle_add_volume(ctx, &oracle, dst, &ref_volume);
    if (status == PV_OK)
        status = dims == 2
                     ? pv_cpu_backend.filter->gaussian2d(ctx, src, ref_image, weights, radius)
                     : pv_cpu_backend.filter->gaussian3d(ctx, src, ref_volume, weights, radius);
    return pv_oracle_end(ctx, &oracle, status, PV_TOL_FILTER_REL);
}

/* The CPU gradient of src (images when dims is 2, else volumes) against the
 * non-NULL outputs (gz unused in 2D). */
static pv_status crosscheck_gradient(pv_context *ctx, const char *op, int dims, const void *src,
                                     void *const outs[3], pv_gradient_scheme scheme)
{
    pv_image *ref_images[3] = {NULL, NULL, NULL};
    pv_volume *ref_volumes[3] = {NULL, NULL, NULL};
    pv_oracle oracle;
    pv_oracle_begin(ctx, op, &oracle);
    pv_status status = PV_OK;
    for (int a = 0; status == PV_OK && a < dims; a++)
        status = dims == 2 ? pv_oracle_add_image(ctx, &oracle, outs[a], &ref_images[a])
                           : pv_oracle_add_volume(ctx, &oracle, outs[a], &ref_volumes[a]);
    const pv_filter_ops *cpu = pv_cpu_backend.filter;
    if (status == PV_OK)
        status = dims == 2 ? cpu->gradient2d(ctx, src, ref_images[0], ref_images[1], scheme)
                           : cpu->gradient3d(ctx, src, ref_volumes[0], ref_volumes[1],
                                             ref_volumes[2], scheme);
    return pv_oracle_end(ctx, &oracle, status, PV_TOL_FILTER_REL);
}

/* --------------------------------------------------------------- operations */

/* ctx set and src a valid image (dims 2) or volume (dims 3). */
static pv_status check_source(pv_context *ctx, const char *op, int dims, const void *src)
{
    pv_status status = pv_check_required(ctx, op, NULL, 0);
    if (status != PV_OK)
        return status;
    if (dims == 3)
        status = pv_check_volume(ctx, op, "src", src, PV_ACCEPT_F32);
    else if (!pv_image_is_valid(src))
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: src is NULL or not a valid image", op);
    if (status != PV_OK)
        return status;
    return dims == 2 ? pv_check_finite_image(ctx, op, "src", src)
                     : pv_check_finite_volume(ctx, op, "src", src);
}

/* The arguments of both blurs; taps = 0 is resolved from sigma. */
static pv_status check_blur(pv_context *ctx, const char *op, int dims, const void *src,
                            const void *dst, float sigma, int *taps)
{
    pv_status status = check_source(ctx, op, dims, src);
    if (status == PV_OK)
        status = dims == 2 ? check_image_output(ctx, op, "dst", src, dst)
                           : check_volume_output(ctx, op, "dst", src, dst);
    if (status == PV_OK)
        status = check_blur_params(ctx, op, sigma, taps);
    return status;
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

/* Both blurs once checked: the taps, then the run and its cross-check in
 * one call.  dims says whether src and dst are images (2) or volumes (3). */
static pv_status blur(pv_context *ctx, const char *op, int dims, const void *src, void *dst,
                      float sigma, int taps)
{
    float *weights = make_weights(ctx, op, sigma, taps);
    if (!weights)
        return PV_ERR_NOMEM;
    const pv_filter_ops *ops = ctx->ops->filter;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = dims == 2 ? ops->gaussian2d(ctx, src, dst, weights, taps / 2)
                             : ops->gaussian3d(ctx, src, dst, weights, taps / 2);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_blur(ctx, op, dims, src, dst, weights, taps / 2);
    pv_call_end(ctx);
    free(weights);
    return status;
}

pv_status pv_gaussian_blur(pv_context *ctx, const pv_image *src, pv_image *dst, float sigma,
                           int taps)
{
    pv_status status = check_blur(ctx, "gaussian_blur", 2, src, dst, sigma, &taps);
    return status == PV_OK ? blur(ctx, "gaussian_blur", 2, src, dst, sigma, taps) : status;
}

pv_status pv_gaussian_blur3d(pv_context *ctx, const pv_volume *src, pv_volume *dst, float sigma,
                             int taps)
{
    pv_status status = check_blur(ctx, "gaussian_blur3d", 3, src, dst, sigma, &taps);
    return status == PV_OK ? blur(ctx, "gaussian_blur3d", 3, src, dst, sigma, taps) : status;
}

static pv_status check_gradient2d(pv_context *ctx, const pv_image *src, const pv_image *gx,
                                  const pv_image *gy, pv_gradient_scheme scheme)
{
    pv_status status = check_source(ctx, "gradient", 2, src);
    if (status != PV_OK)
        return status;
    if (!gx && !gy)
        return pv_fail(ctx, PV_ERR_INVALID, "gradient: gx and gy are both NULL");
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

/* Both gradients once checked: the run and its cross-check in one call.
 * dims says whether src and outs are images (2) or volumes (3). */
static pv_status gradient(pv_context *ctx, const char *op, int dims, const void *src,
                          void *const outs[3], pv_gradient_scheme scheme)
{
    const pv_filter_ops *ops = ctx->ops->filter;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = dims == 2 ? ops->gradient2d(ctx, src, outs[0], outs[1], scheme)
                             : ops->gradient3d(ctx, src, outs[0], outs[1], outs[2], scheme);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_gradient(ctx, op, dims, src, outs, scheme);
    pv_call_end(ctx);
    return status;
}

pv_status pv_gradient(pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,
                      pv_gradient_scheme scheme)
{
    void *const outs[3] = {gx, gy, NULL};
    pv_status status = check_gradient2d(ctx, src, gx, gy, scheme);
    return status == PV_OK ? gradient(ctx, "gradient", 2, src, outs, scheme) : status;
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
    pv_status status = check_source(ctx, "gradient3d", 3, src);
    if (status != PV_OK)
        return status;
    if (!gx && !gy && !gz)
        return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: gx, gy and gz are all NULL");
    pv_volume *const outs[3] = {gx, gy, gz};
    status = check_gradient3d_outputs(ctx, src, outs);
    if (status != PV_OK)
        return status;
    if (!scheme_is_valid(scheme))
        return pv_fail(ctx, PV_ERR_INVALID, "gradient3d: unknown scheme %d", (int)scheme);
    return PV_OK;
}

pv_status pv_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx, pv_volume *gy,
                        pv_volume *gz, pv_gradient_scheme scheme)
{
    void *const outs[3] = {gx, gy, gz};
    pv_status status = check_gradient3d(ctx, src, gx, gy, gz, scheme);
    return status == PV_OK ? gradient(ctx, "gradient3d", 3, src, outs, scheme) : status;
}
