/* Front end of the stereo module: SAD block matching.  Arguments are
 * checked once here; the backends trust them.  Also the CPU cross-check
 * and the Middlebury error measure, which need no backend. */
#include "stereo_internal.h"
#include "../core/tolerance.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Widest window whose u8 costs (255 * window^2) stay below UINT32_MAX, which
 * both backends use as "no candidate".  Wider windows run on f32 copies. */
#define PV_SAD_U8_MAX_WINDOW 4095

void pv_sad_params_default(pv_sad_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_sad_decl, params); /* declared in stereo_params.c */
}

/* ------------------------------------------------------------------- checks */

pv_status pv_stereo_check_images(pv_context *ctx, const char *op, const pv_image *left,
                                 const pv_image *right, const pv_image *disparity)
{
    if (!pv_image_is_valid(left))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: left is NULL or not a valid image", op);
    if (!pv_image_is_valid(right))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: right is NULL or not a valid image", op);
    if (!pv_image_is_valid(disparity))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: disparity is NULL or not a valid image", op);
    if (!pv_images_same_size(left, right))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: right is %dx%d but left is %dx%d", op,
                       right->width, right->height, left->width, left->height);
    if (left->type != right->type)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: left and right pixel types differ", op);
    if (disparity->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: disparity must be an f32 image", op);
    if (!pv_images_same_size(left, disparity))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: disparity is %dx%d but left is %dx%d", op,
                       disparity->width, disparity->height, left->width, left->height);
    if (pv_images_overlap(disparity, left) || pv_images_overlap(disparity, right))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: disparity shares memory with an input", op);
    pv_status status = pv_check_finite_image(ctx, op, "left", left);
    return status == PV_OK ? pv_check_finite_image(ctx, op, "right", right) : status;
}

static int is_finite_nonnegative(float value)
{
    return isfinite(value) && value >= 0.0f;
}

/* Some pixel x in [0, width) has a candidate d in the range with
 * 0 <= x - d < width exactly when the range meets (-width, width). */
static int range_reaches_image(long long min_disp, long long ndisp, int width)
{
    long long max_disp = min_disp + ndisp - 1;
    return min_disp < width && max_disp > -(long long)width;
}

static pv_status check_params(pv_context *ctx, const pv_sad_params *params, int width,
                              int height)
{
    if (params->window % 2 == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sad: params.window %d is not odd",
                       params->window);
    if (params->window > width || params->window > height)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sad: params.window %d is larger than the %dx%d image",
                       params->window, width, height);
    if (params->ndisp < 1 || params->ndisp > width)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sad: params.ndisp %d is not in 1..%d (the image width)",
                       params->ndisp, width);
    if (!range_reaches_image(params->min_disp, params->ndisp, width))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sad: params.min_disp %d with ndisp %d leaves no candidate inside "
                       "a %d-pixel-wide image",
                       params->min_disp, params->ndisp, width);
    return PV_OK;
}

static pv_status check_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_sad_params *params, const pv_image *disparity)
{
    pv_status status = PV_CHECK_REQUIRED(ctx, "stereo_sad", {"params", params});
    if (status == PV_OK) /* every field in its declared range (stereo_params.c) */
        status = pv_decl_check(ctx, "stereo_sad", &pv_sad_decl, params);
    if (status == PV_OK)
        status = pv_stereo_check_images(ctx, "stereo_sad", left, right, disparity);
    if (status != PV_OK)
        return status;
    return check_params(ctx, params, left->width, left->height);
}

/* -------------------------------------------------------------- cross-check */

static int same_disparity(float a, float b)
{
    if (a == b)
        return 1;
    return isfinite(a) && isfinite(b) && fabsf(a - b) <= PV_TOL_SAD_SUBPIXEL;
}

/* Share of pixels whose disparities differ beyond sub-pixel rounding. */
static double share_of_differing_disparities(const pv_image *a, const pv_image *b)
{
    size_t differing = 0;
    for (int y = 0; y < a->height; y++) {
        const float *row_a = (const float *)a->data + (ptrdiff_t)y * a->stride;
        const float *row_b = (const float *)b->data + (ptrdiff_t)y * b->stride;
        for (int x = 0; x < a->width; x++)
            differing += !same_disparity(row_a[x], row_b[x]);
    }
    return (double)differing / ((double)a->width * (double)a->height);
}

pv_status pv_compare_disparities(pv_context *ctx, const char *op, const pv_image *device,
                                 const pv_image *cpu, double max_share)
{
    double share = share_of_differing_disparities(device, cpu);
    if (share <= max_share)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_MISMATCH, "%s cross-check: %.3f%% of pixels differ (> %.1f%%)", op,
                   100.0 * share, 100.0 * max_share);
}

pv_status pv_disparity_crosscheck(pv_context *ctx, const char *op, const pv_image *left,
                                  const pv_image *right, pv_disparity_reference reference,
                                  const void *settings, const pv_image *device, double max_share)
{
    pv_oracle oracle;
    pv_image *ref;
    pv_oracle_begin(ctx, op, &oracle);
    pv_status status = pv_oracle_add_image(ctx, &oracle, device, &ref);
    if (status == PV_OK)
        status = reference(ctx, left, right, settings, ref);
    if (status == PV_OK)
        status = pv_compare_disparities(ctx, op, device, ref, max_share);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

/* The CPU reference for the SAD cross-check. */
static pv_status cpu_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                         const void *params, pv_image *ref)
{
    return pv_cpu_backend.stereo->sad(ctx, left, right, params, ref);
}

/* ------------------------------------------------------------------ matching */

static void copy_u8_to_f32(const pv_image *src, pv_image *dst)
{
    for (int y = 0; y < src->height; y++) {
        const uint8_t *in = (const uint8_t *)src->data + (ptrdiff_t)y * src->stride;
        float *out = (float *)dst->data + (ptrdiff_t)y * dst->stride;
        for (int x = 0; x < src->width; x++)
            out[x] = (float)in[x];
    }
}

static pv_status run_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                         const pv_sad_params *params, pv_image *disparity)
{
    pv_status status = ctx->ops->stereo->sad(ctx, left, right, params, disparity);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = pv_disparity_crosscheck(ctx, "stereo_sad", left, right, cpu_sad, params,
                                         disparity, PV_TOL_SAD_DIFFERING_SHARE);
    return status;
}

/* An f32 copy of the u8 image `src` (called `name` in the message). */
static pv_status f32_copy(pv_context *ctx, const pv_image *src, const char *name, pv_image *copy)
{
    if (pv_image_alloc_like(copy, src, PV_PIXEL_F32) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_sad: no memory for an f32 copy of %s", name);
    copy_u8_to_f32(src, copy);
    return PV_OK;
}

/* u8 costs of windows wider than PV_SAD_U8_MAX_WINDOW could reach the
 * backends' "no candidate" marker: match exact f32 copies instead. */
static pv_status run_sad_on_f32_copies(pv_context *ctx, const pv_image *left,
                                       const pv_image *right, const pv_sad_params *params,
                                       pv_image *disparity)
{
    pv_image copies[2] = {{0}, {0}};
    pv_status status = f32_copy(ctx, left, "left", &copies[0]);
    if (status == PV_OK)
        status = f32_copy(ctx, right, "right", &copies[1]);
    if (status == PV_OK)
        status = run_sad(ctx, &copies[0], &copies[1], params, disparity);
    for (int i = 0; i < 2; i++)
        pv_image_free(&copies[i]);
    return status;
}

/* One call (timed, under the context's lock) of a checked match. */
static pv_status sad_call(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_sad_params *params, pv_image *disparity)
{
    const int wide_u8 = left->type == PV_PIXEL_U8 && params->window > PV_SAD_U8_MAX_WINDOW;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = wide_u8 ? run_sad_on_f32_copies(ctx, left, right, params, disparity)
                         : run_sad(ctx, left, right, params, disparity);
    pv_call_end(ctx);
    return status;
}

pv_status pv_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_sad_params *params, pv_image *disparity)
{
    pv_status status = check_sad(ctx, left, right, params, disparity);
    return status == PV_OK ? sad_call(ctx, left, right, params, disparity) : status;
}

/* ------------------------------------------------------------------- batch */

static pv_status check_sad_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                                 int count, const pv_sad_params *params,
                                 const pv_image *disparities)
{
    pv_status status = PV_CHECK_REQUIRED(ctx, "stereo_sad_batch", {"lefts", lefts},
                                         {"rights", rights}, {"params", params},
                                         {"disparities", disparities});
    if (status == PV_OK && count < 1)
        status = pv_fail(ctx, PV_ERR_INVALID, "stereo_sad_batch: count %d is not positive",
                         count);
    for (int i = 0; status == PV_OK && i < count; i++) {
        status = check_sad(ctx, &lefts[i], &rights[i], params, &disparities[i]);
        status = status == PV_OK ? pv_stereo_batch_same_kind(ctx, "stereo_sad_batch", lefts, i)
                                 : pv_stereo_batch_pair_failed(ctx, "stereo_sad_batch",
                                                               "stereo_sad", status, i);
    }
    if (status == PV_OK)
        status = pv_stereo_batch_overlaps(ctx, "stereo_sad_batch", lefts, rights, count,
                                          disparities, NULL);
    return status;
}

/* The backend's batch, or single calls when the pairs must be matched on
 * f32 copies (wide u8 windows); each pair cross-checked as a single call. */
static pv_status run_sad_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                               int count, const pv_sad_params *params, pv_image *disparities)
{
    if (lefts[0].type == PV_PIXEL_U8 && params->window > PV_SAD_U8_MAX_WINDOW) {
        pv_status status = PV_OK;
        for (int i = 0; i < count && status == PV_OK; i++)
            status = run_sad_on_f32_copies(ctx, &lefts[i], &rights[i], params, &disparities[i]);
        return status;
    }
    pv_status status = ctx->ops->stereo->sad_batch(ctx, lefts, rights, count, params, disparities);
    for (int i = 0; status == PV_OK && i < count && pv_crosscheck_wanted(ctx); i++)
        status = pv_disparity_crosscheck(ctx, "stereo_sad_batch", &lefts[i], &rights[i], cpu_sad,
                                         params, &disparities[i], PV_TOL_SAD_DIFFERING_SHARE);
    return status;
}

pv_status pv_stereo_sad_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                              int count, const pv_sad_params *params, pv_image *disparities)
{
    pv_status status = check_sad_batch(ctx, lefts, rights, count, params, disparities);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(ctx);
    if (status == PV_OK) {
        status = run_sad_batch(ctx, lefts, rights, count, params, disparities);
        if (status != PV_OK) /* no output may pass for a result */
            pv_stereo_batch_reset(count, disparities, NULL);
    }
    pv_call_end(ctx);
    return status;
}

/* ------------------------------------------------------------- error measure */

static pv_status check_error_args(const pv_image *disparity, const pv_image *ground_truth,
                                  float gt_scale, float threshold, int border,
                                  const double *bad_fraction)
{
    if (!pv_image_is_valid(disparity) || disparity->type != PV_PIXEL_F32)
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: disparity is not a valid f32 image");
    if (!pv_image_is_valid(ground_truth))
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: ground_truth is not a valid image");
    if (!pv_images_same_size(disparity, ground_truth))
        return pv_fail(NULL, PV_ERR_INVALID,
                       "disparity_error: ground_truth is %dx%d but disparity is %dx%d",
                       ground_truth->width, ground_truth->height, disparity->width,
                       disparity->height);
    if (!(isfinite(gt_scale) && gt_scale > 0.0f))
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: gt_scale %g is not finite and > 0",
                       (double)gt_scale);
    if (!is_finite_nonnegative(threshold))
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: threshold %g is not finite and >= 0",
                       (double)threshold);
    if (border < 0)
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: border %d is negative", border);
    /* A border that leaves no pixel would report a perfect score. */
    if (border >= (disparity->width + 1) / 2 || border >= (disparity->height + 1) / 2)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "disparity_error: border %d leaves no pixel of the %dx%d image", border,
                       disparity->width, disparity->height);
    if (!bad_fraction)
        return pv_fail(NULL, PV_ERR_INVALID, "disparity_error: bad_fraction is NULL");
    return PV_OK;
}

pv_status pv_disparity_error(const pv_image *disparity, const pv_image *ground_truth,
                             float gt_scale, float threshold, int border, double *bad_fraction)
{
    pv_status status = check_error_args(disparity, ground_truth, gt_scale, threshold, border,
                                        bad_fraction);
    if (status != PV_OK)
        return status;
    size_t known = 0, bad = 0;
    for (int y = border; y < disparity->height - border; y++) {
        const float *row = (const float *)disparity->data + (ptrdiff_t)y * disparity->stride;
        for (int x = border; x < disparity->width - border; x++) {
            float truth = pv_image_get(ground_truth, x, y) / gt_scale;
            if (!(isfinite(truth) && truth > 0.0f))
                continue; /* unknown */
            known++;
            bad += !(isfinite(row[x]) && fabsf(row[x] - truth) <= threshold);
        }
    }
    *bad_fraction = known ? (double)bad / (double)known : 0.0;
    return PV_OK;
}
