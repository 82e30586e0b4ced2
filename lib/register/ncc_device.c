/* normxcorr2 in a device-buffer call (lib/interop/interop_register.c):
 * the template and the image are placeholders bound to a caller's buffers
 * and must not be read on the host, so pv_ncc_run's host passes run on the
 * device through register_device.c: the finiteness check and the
 * statistics (per-row sums in double, added in row order as
 * pv_ncc_image_stats adds them, so the mean and deviation are the host's
 * to the last bit), the centred and scaled f32 copies (the host's formula
 * in double, rounded once to float) and, on the caller's map, the peak
 * search (per-row maxima) with its four neighbours read back.  That map
 * is made in a working buffer and copied to the caller's last, so that a
 * failure of the search leaves the caller's map untouched. */
#include "ncc_internal.h"

#include <stdlib.h>

static pv_status device_stats(pv_context *ctx, const char *op, const pv_image *image,
                              pv_ncc_stats *stats)
{
    int finite = 0;
    double mean = 0.0, squares = 0.0;
    pv_status status = pv_reg_device_image_stats(ctx, image, &finite, &mean, &squares);
    if (status == PV_OK && !finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: templ or image contains NaN or Inf", op);
    stats->mean = mean;
    stats->deviation = sqrt(squares / ((double)image->width * image->height));
    return status;
}

/* A textureless input's zero map, written to the caller's buffer. */
static pv_status device_zero_map(pv_context *ctx, pv_image *map)
{
    pv_image zeros = {map->width, map->height, map->width, PV_PIXEL_F32,
                      calloc((size_t)map->width * (size_t)map->height, sizeof(float))};
    if (!zeros.data)
        return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2: no memory for a %dx%d zero map",
                       map->width, map->height);
    pv_status status = pv_reg_device_rect(ctx, map, 0, 0, &zeros, 1);
    free(zeros.data);
    return status;
}

/* pv_ncc_peak on the caller's map: the largest coefficient from the rows'
 * maxima, its neighbours read back as a 3x3 block. */
static pv_status device_peak(pv_context *ctx, const pv_image *map, int templ_w, int templ_h,
                             pv_ncc_result *result)
{
    int bx = 0, by = 0;
    float best = 0.0f, block[9] = {0}, around[4] = {0};
    pv_status status = pv_reg_device_argmax(ctx, map, &bx, &by, &best);
    const int edge = pv_ncc_at_edge(map, bx, by);
    if (status == PV_OK && !edge) {
        pv_image near = {3, 3, 3, PV_PIXEL_F32, block};
        status = pv_reg_device_rect(ctx, map, bx - 1, by - 1, &near, 0);
        around[0] = block[3], around[1] = block[5], around[2] = block[1], around[3] = block[7];
    }
    if (status == PV_OK)
        pv_ncc_result_at(bx, by, best, around, edge, templ_w, templ_h, result);
    return status;
}

/* pv_ncc_run_device's map maker: the unmasked job on centred, scaled
 * copies made on the device. */
typedef struct plain_job {
    const char *op;
    const pv_image *templ, *image;
    const pv_ncc_stats *stats;
    int min_overlap;
} plain_job;

static pv_status correlate(pv_context *ctx, const char *op, const pv_image *templ,
                           const pv_image *image, const pv_ncc_stats stats[2], int min_overlap,
                           pv_image *map)
{
    pv_reg_copy copies[2] = {{NULL, 0, ctx}, {NULL, 0, ctx}};
    pv_ncc_job job;
    pv_status status = pv_ncc_job_shape(ctx, op, templ, image, min_overlap, &job);
    const pv_image *inputs[2] = {templ, image};
    for (int i = 0; status == PV_OK && i < 2; i++)
        status = pv_reg_device_f32_copy(ctx, inputs[i], stats[i].mean, 1.0 / stats[i].deviation,
                                        &copies[i]);
    if (status == PV_OK) {
        job.templ = (pv_image){templ->width, templ->height, templ->width, PV_PIXEL_F32,
                               copies[0].data};
        job.image = (pv_image){image->width, image->height, image->width, PV_PIXEL_F32,
                               copies[1].data};
        status = ctx->ops->reg->normxcorr2(ctx, &job, map);
    }
    pv_reg_copy_free(&copies[0]);
    pv_reg_copy_free(&copies[1]);
    return status;
}

static pv_status make_plain(pv_context *ctx, const void *arg, pv_image *map)
{
    const plain_job *j = arg;
    return correlate(ctx, j->op, j->templ, j->image, j->stats, j->min_overlap, map);
}

/* The map made in a working buffer and searched there (when found is not
 * NULL), then copied into the caller's map: a failure before the copy
 * leaves that untouched. */
static pv_status correlate_staged(pv_context *ctx, pv_ncc_make_map make, const void *arg,
                                  int templ_w, int templ_h, pv_image *map, pv_ncc_result *found)
{
    pv_reg_copy staged = {NULL, 0, ctx};
    pv_status status = pv_reg_device_stage(ctx, map->width, map->height, &staged);
    pv_image work = {map->width, map->height, map->width, PV_PIXEL_F32, staged.data};
    if (status == PV_OK)
        status = make(ctx, arg, &work);
    if (status == PV_OK && found)
        status = device_peak(ctx, &work, templ_w, templ_h, found);
    if (status == PV_OK)
        status = pv_reg_device_unstage(ctx, &staged, map);
    if (staged.data)
        pv_reg_copy_free(&staged);
    return status;
}

pv_status pv_ncc_device_map(pv_context *ctx, int textured, pv_ncc_make_map make,
                            const void *arg, int templ_w, int templ_h, pv_image *map,
                            int map_bound, pv_ncc_result *result)
{
    pv_ncc_result found;
    pv_status status;
    if (!textured) {
        pv_ncc_no_texture(map_bound ? NULL : map, &found);
        status = map_bound ? device_zero_map(ctx, map) : PV_OK;
    } else if (map_bound) {
        status = correlate_staged(ctx, make, arg, templ_w, templ_h, map, result ? &found : NULL);
    } else {
        status = make(ctx, arg, map);
        if (status == PV_OK)
            pv_ncc_peak(map, templ_w, templ_h, &found);
    }
    if (status == PV_OK && result)
        *result = found;
    return status;
}

pv_status pv_ncc_run_device(pv_context *ctx, const char *op, const pv_image *templ,
                            const pv_image *image, int min_overlap, pv_image *map, int map_bound,
                            pv_ncc_result *result)
{
    pv_ncc_stats stats[2];
    pv_status status = device_stats(ctx, op, templ, &stats[0]);
    if (status == PV_OK)
        status = device_stats(ctx, op, image, &stats[1]);
    if (status != PV_OK)
        return status;
    const plain_job job = {op, templ, image, stats, min_overlap};
    const int textured = stats[0].deviation > 0.0 && stats[1].deviation > 0.0;
    return pv_ncc_device_map(ctx, textured, make_plain, &job, templ->width, templ->height, map,
                             map_bound, result);
}
