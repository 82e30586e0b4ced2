/* Front end of normxcorr2: argument and data checks, the inputs centred
 * and scaled to unit variance (so both backends correlate identical
 * numbers), the map's peak with its parabolic sub-pixel position, and the
 * CPU cross-check.  The helpers here are shared with the batch
 * (ncc_batch.c) and the masked form (ncc_masked.c) through
 * ncc_internal.h. */
#include "ncc_internal.h"
#include "../core/tolerance.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

double pv_ncc_pixel(const pv_image *image, int x, int y)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    return image->type == PV_PIXEL_U8 ? (double)((const uint8_t *)image->data)[i]
                                      : (double)((const float *)image->data)[i];
}

/* Each row summed on its own, the rows' sums added in order: the order a
 * device-buffer call's per-row passes add in (ncc_device.c), so both give
 * the same mean and deviation to the last bit. */
pv_ncc_stats pv_ncc_image_stats(const pv_image *image)
{
    double sum = 0.0, squares = 0.0, n = (double)image->width * image->height;
    for (int y = 0; y < image->height; y++) {
        double row = 0.0;
        for (int x = 0; x < image->width; x++)
            row += pv_ncc_pixel(image, x, y);
        sum += row;
    }
    pv_ncc_stats stats = {sum / n, 0.0};
    for (int y = 0; y < image->height; y++) {
        double row = 0.0;
        for (int x = 0; x < image->width; x++) {
            double d = pv_ncc_pixel(image, x, y) - stats.mean;
            row += d * d;
        }
        squares += row;
    }
    stats.deviation = sqrt(squares / n);
    return stats;
}

/* Centred and scaled to unit variance: float integral images then stay
 * small enough for the local variances to keep their digits. */
pv_status pv_ncc_normalized_copy(pv_context *ctx, const char *op, const pv_image *image,
                                 pv_ncc_stats stats, pv_image *out)
{
    pv_status status = pv_image_alloc(out, image->width, image->height, PV_PIXEL_F32);
    if (status != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for a %dx%d copy", op, image->width,
                       image->height);
    float *data = out->data;
    double scale = 1.0 / stats.deviation;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            data[(size_t)y * image->width + x] =
                (float)((pv_ncc_pixel(image, x, y) - stats.mean) * scale);
    return PV_OK;
}

int pv_ncc_is_finite(const pv_context *ctx, const pv_image *image)
{
    return pv_reg_scan_image(image, pv_reg_threads(ctx)).finite;
}

pv_status pv_ncc_check_output(pv_context *ctx, const char *op, const pv_image *templ,
                              const pv_image *image, const pv_image *out, int map_w, int map_h)
{
    if (!pv_image_is_valid(out) || out->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: out is not a valid f32 image", op);
    if (out->width != map_w || out->height != map_h)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: out is %dx%d but the map is %dx%d", op,
                       out->width, out->height, map_w, map_h);
    if (pv_images_overlap(out, templ) || pv_images_overlap(out, image))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: out shares memory with an input", op);
    return PV_OK;
}

pv_status pv_ncc_check_inputs(pv_context *ctx, const char *op, const pv_image *templ,
                              const pv_image *image, int min_overlap, int *map_w, int *map_h)
{
    pv_status status = pv_reg_check_ctx(ctx, op);
    if (status == PV_OK)
        status = pv_reg_check_image(ctx, op, "templ", templ);
    if (status == PV_OK)
        status = pv_reg_check_image(ctx, op, "image", image);
    if (status != PV_OK)
        return status;
    if (min_overlap < 0)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: min_overlap %d < 0", op, min_overlap);
    long long w = (long long)image->width + templ->width - 1;
    long long h = (long long)image->height + templ->height - 1;
    size_t points;
    if (w > INT_MAX || h > INT_MAX || !pv_size_mul((size_t)w, (size_t)h, &points) ||
        points > PV_PC_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: a %lldx%lld map is too large", op, w, h);
    *map_w = (int)w;
    *map_h = (int)h;
    return PV_OK;
}

static pv_status check_ncc(pv_context *ctx, const pv_image *templ, const pv_image *image,
                           int min_overlap, const pv_image *out, const pv_ncc_result *result)
{
    const char *op = "normxcorr2";
    int map_w, map_h;
    pv_status status = pv_ncc_check_inputs(ctx, op, templ, image, min_overlap, &map_w, &map_h);
    if (status != PV_OK)
        return status;
    if (!out && !result)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: out and result are both NULL");
    if (out && (status = pv_ncc_check_output(ctx, op, templ, image, out, map_w, map_h)) != PV_OK)
        return status;
    /* a device-buffer call's inputs are scanned on the device (ncc_device.c) */
    if (!ctx->device_call && (!pv_ncc_is_finite(ctx, templ) || !pv_ncc_is_finite(ctx, image)))
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: templ or image contains NaN or Inf");
    return PV_OK;
}

/* The float rounding of an integral image over n unit-variance values is
 * about n * FLT_EPSILON; variances below a margin over it are noise. */
static float variance_floor(const pv_image *image)
{
    return (float)(64.0 * FLT_EPSILON * (double)image->width * image->height);
}

static float map_at(const pv_image *map, int x, int y)
{
    return ((const float *)map->data)[(ptrdiff_t)y * map->stride + x];
}

void pv_ncc_no_texture(pv_image *map, pv_ncc_result *result)
{
    for (int y = 0; map && y < map->height; y++)
        memset((float *)map->data + (ptrdiff_t)y * map->stride, 0,
               (size_t)map->width * sizeof(float));
    if (result) {
        memset(result, 0, sizeof *result);
        result->flags = PV_REGISTER_NO_TEXTURE;
    }
}

int pv_ncc_at_edge(const pv_image *map, int bx, int by)
{
    return bx == 0 || by == 0 || bx == map->width - 1 || by == map->height - 1;
}

void pv_ncc_result_at(int bx, int by, float best, const float around[4], int at_edge,
                      int templ_w, int templ_h, pv_ncc_result *result)
{
    result->x = bx - (templ_w - 1);
    result->y = by - (templ_h - 1);
    result->coefficient = best;
    result->sub_x = result->x;
    result->sub_y = result->y;
    result->flags = 0;
    if (at_edge) {
        result->flags |= PV_REGISTER_AT_EDGE;
        return;
    }
    result->sub_x += pv_peak_parabola_vertex(around[0], best, around[1]);
    result->sub_y += pv_peak_parabola_vertex(around[2], best, around[3]);
}

void pv_ncc_peak(const pv_image *map, int templ_w, int templ_h, pv_ncc_result *result)
{
    int bx = 0, by = 0;
    for (int y = 0; y < map->height; y++)
        for (int x = 0; x < map->width; x++)
            if (map_at(map, x, y) > map_at(map, bx, by)) {
                bx = x;
                by = y;
            }
    const int edge = pv_ncc_at_edge(map, bx, by);
    const float around[4] = {
        edge ? 0.0f : map_at(map, bx - 1, by), edge ? 0.0f : map_at(map, bx + 1, by),
        edge ? 0.0f : map_at(map, bx, by - 1), edge ? 0.0f : map_at(map, bx, by + 1)};
    pv_ncc_result_at(bx, by, map_at(map, bx, by), around, edge, templ_w, templ_h, result);
}

double pv_ncc_map_abs_diff(const pv_image *a, const pv_image *b)
{
    double worst = 0.0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++) {
            double d = fabs((double)map_at(a, x, y) - (double)map_at(b, x, y));
            if (!(d <= worst))
                worst = isnan(d) ? INFINITY : d;
        }
    return worst;
}

pv_status pv_ncc_crosscheck(pv_context *ctx, const char *op, const pv_ncc_job *job,
                           const pv_image *map)
{
    pv_oracle oracle;
    pv_image *ref;
    pv_oracle_begin(ctx, op, &oracle);
    pv_status status = pv_oracle_add_image(ctx, &oracle, map, &ref);
    if (status == PV_OK)
        status = pv_cpu_backend.reg->normxcorr2(ctx, job, ref);
    /* Absolute, not relative: coefficients lie in [-1, 1] by design. */
    double error = status == PV_OK ? pv_ncc_map_abs_diff(map, ref) : 0.0;
    if (status == PV_OK && !(error <= PV_TOL_NCC_MAP))
        status = pv_fail(ctx, PV_ERR_MISMATCH, "%s cross-check: max |difference| %g > %g", op,
                         error, PV_TOL_NCC_MAP);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

void pv_ncc_job_free(pv_ncc_job *job)
{
    pv_image_free(&job->templ);
    pv_image_free(&job->image);
}

pv_status pv_ncc_job_shape(pv_context *ctx, const char *op, const pv_image *templ,
                           const pv_image *image, int min_overlap, pv_ncc_job *job)
{
    memset(job, 0, sizeof *job);
    job->min_overlap = min_overlap;
    job->fft[0] = pv_fft_friendly_size(image->width + templ->width - 1);
    job->fft[1] = pv_fft_friendly_size(image->height + templ->height - 1);
    size_t points;
    if (!job->fft[0] || !job->fft[1] ||
        !pv_size_mul((size_t)job->fft[0], (size_t)job->fft[1], &points) ||
        points > PV_PC_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: the padded transform is too large", op);
    job->templ_floor = variance_floor(templ);
    job->image_floor = variance_floor(image);
    return PV_OK;
}

pv_status pv_ncc_prepare_job(pv_context *ctx, const char *op, const pv_image *templ,
                             const pv_image *image, pv_ncc_stats t_stats, pv_ncc_stats i_stats,
                             int min_overlap, pv_ncc_job *job)
{
    pv_status status = pv_ncc_job_shape(ctx, op, templ, image, min_overlap, job);
    if (status == PV_OK)
        status = pv_ncc_normalized_copy(ctx, op, templ, t_stats, &job->templ);
    if (status == PV_OK)
        status = pv_ncc_normalized_copy(ctx, op, image, i_stats, &job->image);
    return status;
}

pv_status pv_ncc_run(pv_context *ctx, const char *op, const pv_image *templ,
                     const pv_image *image, int min_overlap, pv_image *map,
                     pv_ncc_result *result)
{
    pv_ncc_stats t_stats = pv_ncc_image_stats(templ), i_stats = pv_ncc_image_stats(image);
    if (!(t_stats.deviation > 0.0) || !(i_stats.deviation > 0.0)) {
        pv_ncc_no_texture(map, result);
        return PV_OK;
    }
    pv_ncc_job job;
    pv_status status =
        pv_ncc_prepare_job(ctx, op, templ, image, t_stats, i_stats, min_overlap, &job);
    if (status == PV_OK)
        status = ctx->ops->reg->normxcorr2(ctx, &job, map);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = pv_ncc_crosscheck(ctx, op, &job, map);
    pv_ncc_job_free(&job);
    if (status == PV_OK && result) {
        pv_ncc_result found;
        pv_ncc_peak(map, templ->width, templ->height, &found);
        *result = found;
    }
    return status;
}

pv_status pv_normxcorr2(pv_context *ctx, const pv_image *templ, const pv_image *image,
                        int min_overlap, pv_image *out, pv_ncc_result *result)
{
    pv_status status = check_ncc(ctx, templ, image, min_overlap, out, result);
    if (status != PV_OK)
        return status;
    pv_image scratch = {0, 0, 0, PV_PIXEL_F32, NULL};
    pv_image *map = out;
    if (!map) {
        status = pv_image_alloc(&scratch, image->width + templ->width - 1,
                                image->height + templ->height - 1, PV_PIXEL_F32);
        if (status != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2: no memory for the map");
        map = &scratch;
    }
    status = pv_call_begin(ctx);
    if (status == PV_OK && ctx->device_call)
        status = pv_ncc_run_device(ctx, "normxcorr2", templ, image, min_overlap, map, out != NULL,
                                   result);
    else if (status == PV_OK)
        status = pv_ncc_run(ctx, "normxcorr2", templ, image, min_overlap, map, result);
    pv_call_end(ctx);
    pv_image_free(&scratch);
    return status;
}
