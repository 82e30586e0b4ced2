/* Front end of masked normxcorr2 (pv_normxcorr2_masked): argument and
 * mask checks, each input centred and scaled over its mask and zeroed
 * outside it (dense f32, with the masks as 0 / 1, so both backends sum
 * identical numbers), the backend's map, its peak, and the CPU
 * cross-check.  Where every pixel of both masks is valid the call is the
 * unmasked one (pv_ncc_run), so it gives pv_normxcorr2's map. */
#include "ncc_internal.h"
#include "../core/tolerance.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define OP "normxcorr2_masked"

/* An overlap whose centred square sum is at most this fraction of its
 * plain square sum counts as flat (backends/common/ncc_masked.h): the
 * deviations then hold fewer than about 5 significant bits in float. */
#define NCC_MASKED_FLOOR_RATIO 1e-5f

/* Map points times valid template pixels a call may sum directly (about
 * 2.7e11 pixel pairs: a 512x512 template fully valid over a 512x512
 * image); larger calls are refused, so hostile sizes cannot run for hours. */
#define NCC_MASKED_MAX_WORK (1ull << 38)

static pv_status check_mask(pv_context *ctx, const char *name, const pv_image *mask,
                            const char *owner, const pv_image *image)
{
    pv_status status = pv_reg_check_image(ctx, OP, name, mask);
    if (status != PV_OK)
        return status;
    if (mask->type != PV_PIXEL_U8)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": %s must be a u8 image (non-zero = valid)",
                       name);
    if (mask->width != image->width || mask->height != image->height)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": %s is %dx%d but %s is %dx%d", name,
                       mask->width, mask->height, owner, image->width, image->height);
    return PV_OK;
}

static int mask_at(const pv_image *mask, int x, int y)
{
    return !mask || ((const uint8_t *)mask->data)[(ptrdiff_t)y * mask->stride + x] != 0;
}

static size_t valid_pixels(const pv_image *image, const pv_image *mask)
{
    size_t valid = 0;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            valid += (size_t)mask_at(mask, x, y);
    return valid;
}

/* The masks' pixel counts: an empty mask and too much work refused. */
static pv_status check_masks_content(pv_context *ctx, int map_w, int map_h,
                                     const size_t valid[2])
{
    if (valid[0] == 0)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": templ_mask has no valid (non-zero) pixel");
    if (valid[1] == 0)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": image_mask has no valid (non-zero) pixel");
    size_t work;
    if (!pv_size_mul((size_t)map_w * (size_t)map_h, valid[0], &work) ||
        (unsigned long long)work > NCC_MASKED_MAX_WORK)
        return pv_fail(ctx, PV_ERR_INVALID,
                       OP ": a %dx%d map over %zu valid template pixels exceeds the direct "
                       "sums' limit of 2^38 pixel pairs",
                       map_w, map_h, valid[0]);
    return PV_OK;
}

/* A device-buffer call's finiteness check and mask counts, on the device
 * (register_device.c). */
static pv_status check_device_content(pv_context *ctx, const pv_image *templ,
                                      const pv_image *image, const pv_image *templ_mask,
                                      const pv_image *image_mask, int map_w, int map_h,
                                      size_t valid[2])
{
    int finite[2] = {1, 1}, mask_finite = 1;
    size_t all = 0;
    double sum = 0.0;
    pv_status status = pv_reg_device_mask_count(ctx, templ, NULL, &finite[0], &all, &sum);
    if (status == PV_OK)
        status = pv_reg_device_mask_count(ctx, image, NULL, &finite[1], &all, &sum);
    if (status == PV_OK && (!finite[0] || !finite[1]))
        return pv_fail(ctx, PV_ERR_INVALID, OP ": templ or image contains NaN or Inf");
    if (status == PV_OK)
        status = pv_reg_device_mask_count(ctx, templ_mask, templ_mask, &mask_finite, &valid[0],
                                          &sum);
    valid[1] = (size_t)image->width * (size_t)image->height;
    if (status == PV_OK && image_mask)
        status = pv_reg_device_mask_count(ctx, image_mask, image_mask, &mask_finite, &valid[1],
                                          &sum);
    return status == PV_OK ? check_masks_content(ctx, map_w, map_h, valid) : status;
}

static pv_status check_masked(pv_context *ctx, const pv_image *templ, const pv_image *image,
                              const pv_image *templ_mask, const pv_image *image_mask,
                              int min_overlap, const pv_image *out, const pv_ncc_result *result,
                              size_t valid[2])
{
    int map_w, map_h;
    pv_status status = pv_ncc_check_inputs(ctx, OP, templ, image, min_overlap, &map_w, &map_h);
    if (status != PV_OK)
        return status;
    if ((size_t)templ->width * templ->height > INT_MAX ||
        (size_t)image->width * image->height > INT_MAX)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": templ or image has more than 2^31 pixels");
    status = check_mask(ctx, "templ_mask", templ_mask, "templ", templ);
    if (status == PV_OK && image_mask)
        status = check_mask(ctx, "image_mask", image_mask, "image", image);
    if (status != PV_OK)
        return status;
    if (!out && !result)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": out and result are both NULL");
    if (out && (status = pv_ncc_check_output(ctx, OP, templ, image, out, map_w, map_h)) != PV_OK)
        return status;
    if (out && (pv_images_overlap(out, templ_mask) ||
                (image_mask && pv_images_overlap(out, image_mask))))
        return pv_fail(ctx, PV_ERR_INVALID, OP ": out shares memory with a mask");
    if (ctx->device_call) /* the inputs are on the device: scanned there */
        return check_device_content(ctx, templ, image, templ_mask, image_mask, map_w, map_h,
                                    valid);
    if (!pv_ncc_is_finite(ctx, templ) || !pv_ncc_is_finite(ctx, image))
        return pv_fail(ctx, PV_ERR_INVALID, OP ": templ or image contains NaN or Inf");
    valid[0] = valid_pixels(templ, templ_mask);
    valid[1] = valid_pixels(image, image_mask);
    return check_masks_content(ctx, map_w, map_h, valid);
}

/* Mean and deviation over the mask's pixels, two passes in double, each
 * row summed on its own and the rows' sums added in order: the order of a
 * device-buffer call's per-row passes (register_device.c), so both give
 * the same numbers to the last bit. */
static pv_ncc_stats masked_stats(const pv_image *image, const pv_image *mask, size_t valid)
{
    double sum = 0.0, squares = 0.0;
    for (int y = 0; y < image->height; y++) {
        double row = 0.0;
        for (int x = 0; x < image->width; x++)
            if (mask_at(mask, x, y))
                row += pv_ncc_pixel(image, x, y);
        sum += row;
    }
    pv_ncc_stats stats = {sum / (double)valid, 0.0};
    for (int y = 0; y < image->height; y++) {
        double row = 0.0;
        for (int x = 0; x < image->width; x++)
            if (mask_at(mask, x, y)) {
                double d = pv_ncc_pixel(image, x, y) - stats.mean;
                row += d * d;
            }
        squares += row;
    }
    stats.deviation = sqrt(squares / (double)valid);
    return stats;
}

/* The side's dense values (centred, scaled, 0 outside the mask) and mask
 * (0 / 1; a NULL mask is all 1). */
static pv_status masked_copy(pv_context *ctx, const pv_image *image, const pv_image *mask,
                             pv_ncc_stats stats, pv_image *values, pv_image *ones)
{
    if (pv_image_alloc(values, image->width, image->height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(ones, image->width, image->height, PV_PIXEL_F32) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, OP ": no memory for a %dx%d masked copy",
                       image->width, image->height);
    const double scale = 1.0 / stats.deviation;
    float *v = values->data, *m = ones->data;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++) {
            const size_t i = (size_t)y * image->width + x;
            const int valid = mask_at(mask, x, y);
            m[i] = valid ? 1.0f : 0.0f;
            v[i] = valid ? (float)((pv_ncc_pixel(image, x, y) - stats.mean) * scale) : 0.0f;
        }
    return PV_OK;
}

static void free_job(pv_ncc_masked_job *job)
{
    pv_image_free(&job->templ);
    pv_image_free(&job->templ_mask);
    pv_image_free(&job->image);
    pv_image_free(&job->image_mask);
}

static pv_status crosscheck(pv_context *ctx, const pv_ncc_masked_job *job, const pv_image *map)
{
    pv_oracle oracle;
    pv_image *ref;
    pv_oracle_begin(ctx, OP, &oracle);
    pv_status status = pv_oracle_add_image(ctx, &oracle, map, &ref);
    if (status == PV_OK)
        status = pv_cpu_backend.reg->normxcorr2_masked(ctx, job, ref);
    double error = status == PV_OK ? pv_ncc_map_abs_diff(map, ref) : 0.0;
    if (status == PV_OK && !(error <= PV_TOL_NCC_MAP))
        status = pv_fail(ctx, PV_ERR_MISMATCH, OP " cross-check: max |difference| %g > %g",
                         error, PV_TOL_NCC_MAP);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

/* The masked map of checked inputs into map, the peak into result. */
static pv_status run_masked(pv_context *ctx, const pv_image *templ, const pv_image *image,
                            const pv_image *templ_mask, const pv_image *image_mask,
                            int min_overlap, const size_t valid[2], pv_image *map,
                            pv_ncc_result *result)
{
    const size_t t_pixels = (size_t)templ->width * templ->height;
    const size_t i_pixels = (size_t)image->width * image->height;
    if (valid[0] == t_pixels && valid[1] == i_pixels)
        return pv_ncc_run(ctx, OP, templ, image, min_overlap, map, result);
    pv_ncc_stats t_stats = masked_stats(templ, templ_mask, valid[0]);
    pv_ncc_stats i_stats = masked_stats(image, image_mask, valid[1]);
    if (!(t_stats.deviation > 0.0) || !(i_stats.deviation > 0.0)) {
        pv_ncc_no_texture(map, result);
        return PV_OK;
    }
    pv_ncc_masked_job job;
    memset(&job, 0, sizeof job);
    job.min_overlap = min_overlap;
    job.floor_ratio = NCC_MASKED_FLOOR_RATIO;
    pv_status status = masked_copy(ctx, templ, templ_mask, t_stats, &job.templ, &job.templ_mask);
    if (status == PV_OK)
        status = masked_copy(ctx, image, image_mask, i_stats, &job.image, &job.image_mask);
    if (status == PV_OK)
        status = ctx->ops->reg->normxcorr2_masked(ctx, &job, map);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck(ctx, &job, map);
    free_job(&job);
    if (status == PV_OK && result) {
        pv_ncc_result found;
        pv_ncc_peak(map, templ->width, templ->height, &found);
        *result = found;
    }
    return status;
}

/* ------------------------------------------- in a device-buffer call */

/* One side's masked copies on the device and its statistics. */
typedef struct device_side {
    pv_reg_copy values, mask01;
    pv_ncc_stats stats;
} device_side;

/* The mean, the deviation (a first pass of the copy kernel, unscaled) and,
 * when textured, the centred and scaled copy (a second pass). */
static pv_status device_side_read(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                  size_t valid, device_side *side)
{
    int finite = 1;
    size_t counted = 0;
    double sum = 0.0, squares = 0.0;
    pv_status status = pv_reg_device_mask_count(ctx, image, mask, &finite, &counted, &sum);
    side->stats.mean = sum / (double)valid;
    if (status == PV_OK)
        status = pv_reg_device_mask_copy(ctx, image, mask, side->stats.mean, 1.0, &side->values,
                                         &side->mask01, &squares);
    side->stats.deviation = sqrt(squares / (double)valid);
    return status;
}

static pv_status device_side_scale(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                   device_side *side)
{
    double squares = 0.0;
    return pv_reg_device_mask_copy(ctx, image, mask, side->stats.mean,
                                   1.0 / side->stats.deviation, &side->values, &side->mask01,
                                   &squares);
}

typedef struct device_job {
    const pv_image *templ, *image;
    const device_side *sides;
    int min_overlap;
} device_job;

static pv_status make_masked_map(pv_context *ctx, const void *arg, pv_image *map)
{
    const device_job *d = arg;
    const pv_image *inputs[2] = {d->templ, d->image};
    pv_image dense[4];
    for (int i = 0; i < 2; i++) {
        const int w = inputs[i]->width, h = inputs[i]->height;
        dense[2 * i] = (pv_image){w, h, w, PV_PIXEL_F32, d->sides[i].values.data};
        dense[2 * i + 1] = (pv_image){w, h, w, PV_PIXEL_F32, d->sides[i].mask01.data};
    }
    pv_ncc_masked_job job = {dense[0], dense[1], dense[2], dense[3], d->min_overlap,
                             NCC_MASKED_FLOOR_RATIO};
    return ctx->ops->reg->normxcorr2_masked(ctx, &job, map);
}

static pv_status run_masked_device(pv_context *ctx, const pv_image *templ,
                                   const pv_image *image, const pv_image *templ_mask,
                                   const pv_image *image_mask, int min_overlap,
                                   const size_t valid[2], pv_image *map, int map_bound,
                                   pv_ncc_result *result)
{
    if (valid[0] == (size_t)templ->width * templ->height &&
        valid[1] == (size_t)image->width * image->height)
        return pv_ncc_run_device(ctx, OP, templ, image, min_overlap, map, map_bound, result);
    device_side sides[2] = {{{NULL, 0, ctx}, {NULL, 0, ctx}, {0.0, 0.0}},
                            {{NULL, 0, ctx}, {NULL, 0, ctx}, {0.0, 0.0}}};
    pv_status status = device_side_read(ctx, templ, templ_mask, valid[0], &sides[0]);
    if (status == PV_OK)
        status = device_side_read(ctx, image, image_mask, valid[1], &sides[1]);
    const int textured = sides[0].stats.deviation > 0.0 && sides[1].stats.deviation > 0.0;
    if (status == PV_OK && textured)
        status = device_side_scale(ctx, templ, templ_mask, &sides[0]);
    if (status == PV_OK && textured)
        status = device_side_scale(ctx, image, image_mask, &sides[1]);
    const device_job job = {templ, image, sides, min_overlap};
    if (status == PV_OK)
        status = pv_ncc_device_map(ctx, textured, make_masked_map, &job, templ->width,
                                   templ->height, map, map_bound, result);
    for (int i = 0; i < 2; i++) {
        pv_reg_copy_free(&sides[i].values);
        pv_reg_copy_free(&sides[i].mask01);
    }
    return status;
}

pv_status pv_normxcorr2_masked(pv_context *ctx, const pv_image *templ, const pv_image *image,
                               const pv_image *templ_mask, const pv_image *image_mask,
                               int min_overlap, pv_image *out, pv_ncc_result *result)
{
    size_t valid[2];
    pv_status status = check_masked(ctx, templ, image, templ_mask, image_mask, min_overlap, out,
                                    result, valid);
    if (status != PV_OK)
        return status;
    pv_image scratch = {0, 0, 0, PV_PIXEL_F32, NULL};
    pv_image *map = out;
    if (!map) {
        status = pv_image_alloc(&scratch, image->width + templ->width - 1,
                                image->height + templ->height - 1, PV_PIXEL_F32);
        if (status != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, OP ": no memory for the map");
        map = &scratch;
    }
    status = pv_call_begin(ctx);
    if (status == PV_OK && ctx->device_call)
        status = run_masked_device(ctx, templ, image, templ_mask, image_mask, min_overlap, valid,
                                   map, out != NULL, result);
    else if (status == PV_OK)
        status = run_masked(ctx, templ, image, templ_mask, image_mask, min_overlap, valid, map,
                            result);
    pv_call_end(ctx);
    pv_image_free(&scratch);
    return status;
}
