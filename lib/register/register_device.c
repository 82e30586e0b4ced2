/* Front end of the register module's inputs in a device-buffer call
 * (lib/interop/interop_register.c): while ctx->device_call is set, an
 * input's data pointer is a placeholder bound to a caller's buffer and
 * must not be read, so the passes of register_input.c run on the device
 * instead (the interop sub-table's row_stats, row_energy and to_f32
 * slots).  Each gives the host pass's numbers: the device adds each row in
 * double in the host's order, and the rows are added here in row order as
 * register_input.c adds its per-row partial sums. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "register_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static pv_device_rows volume_rows(const pv_volume *v)
{
    pv_device_rows rows = {v->data, v->type == PV_VOLUME_U16 ? PV_PIXEL_U16 : PV_PIXEL_F32,
                           v->nx, v->ny, v->nz, v->stride_y, v->stride_z};
    return rows;
}

static pv_device_rows image_rows(const pv_image *image)
{
    pv_device_rows rows = {image->data, image->type, image->width, image->height, 1,
                           image->stride, image->stride * image->height};
    return rows;
}

static pv_status fail_no_memory(pv_context *ctx, size_t rows)
{
    return pv_fail(ctx, PV_ERR_NOMEM, "device buffers: no memory for %zu rows' results", rows);
}

/* Range, finiteness and sum over every row, the rows in order. */
static pv_status scan_rows(pv_context *ctx, const pv_device_rows *rows, pv_data_scan *scan,
                           double *sum)
{
    const size_t count = (size_t)rows->ny * (size_t)rows->nz;
    pv_row_stats *stats = malloc(count * sizeof *stats);
    if (!stats)
        return fail_no_memory(ctx, count);
    pv_status status = ctx->ops->interop->row_stats(ctx, rows, stats);
    float lo = INFINITY, hi = -INFINITY;
    int finite = 1;
    double total = 0.0;
    for (size_t r = 0; status == PV_OK && r < count; r++) {
        finite &= stats[r].finite;
        lo = stats[r].lo < lo ? stats[r].lo : lo;
        hi = stats[r].hi > hi ? stats[r].hi : hi;
        total += stats[r].sum;
    }
    free(stats);
    if (status == PV_OK) {
        scan->finite = finite;
        scan->textured = finite && hi > lo;
        *sum = total;
    }
    return status;
}

pv_status pv_reg_device_scan_image(pv_context *ctx, const pv_image *image, pv_data_scan *scan)
{
    const pv_device_rows rows = image_rows(image);
    double sum;
    return scan_rows(ctx, &rows, scan, &sum);
}

pv_status pv_reg_device_scan_volume(pv_context *ctx, const pv_volume *v, pv_data_scan *scan)
{
    const pv_device_rows rows = volume_rows(v);
    double sum;
    return scan_rows(ctx, &rows, scan, &sum);
}

pv_status pv_reg_device_volume_mean(pv_context *ctx, const pv_volume *v, double *mean)
{
    const pv_device_rows rows = volume_rows(v);
    pv_data_scan scan;
    double sum = 0.0;
    pv_status status = scan_rows(ctx, &rows, &scan, &sum);
    if (status == PV_OK)
        *mean = sum / ((double)v->nx * v->ny * v->nz);
    return status;
}

static pv_status energy_rows(pv_context *ctx, const pv_device_rows *rows,
                             const float *const window[3], double mean, double *energy)
{
    const size_t count = (size_t)rows->ny * (size_t)rows->nz;
    double *sums = malloc(count * sizeof *sums), total = 0.0;
    if (!sums)
        return fail_no_memory(ctx, count);
    pv_status status = ctx->ops->interop->row_energy(ctx, rows, window, mean, sums);
    for (size_t r = 0; status == PV_OK && r < count; r++)
        total += sums[r];
    free(sums);
    if (status == PV_OK)
        *energy = total;
    return status;
}

pv_status pv_reg_device_windowed_energy(pv_context *ctx, const pv_volume *v,
                                        const float *const window[3], float mean,
                                        double *energy)
{
    const pv_device_rows rows = volume_rows(v);
    return energy_rows(ctx, &rows, window[0] ? window : NULL, (double)mean, energy);
}

pv_status pv_reg_device_image_stats(pv_context *ctx, const pv_image *image, int *finite,
                                    double *mean, double *squares)
{
    const pv_device_rows rows = image_rows(image);
    pv_data_scan scan;
    double sum = 0.0, m = 0.0, energy = 0.0;
    pv_status status = scan_rows(ctx, &rows, &scan, &sum);
    if (status == PV_OK && scan.finite) {
        m = sum / ((double)image->width * image->height);
        status = energy_rows(ctx, &rows, NULL, m, &energy);
    }
    if (status == PV_OK) {
        *finite = scan.finite;
        *mean = m;
        *squares = energy;
    }
    return status;
}

pv_status pv_reg_device_argmax(pv_context *ctx, const pv_image *image, int *x, int *y,
                               float *value)
{
    const pv_device_rows rows = image_rows(image);
    const size_t count = (size_t)image->height;
    pv_row_stats *stats = malloc(count * sizeof *stats);
    if (!stats)
        return fail_no_memory(ctx, count);
    pv_status status = ctx->ops->interop->row_stats(ctx, &rows, stats);
    size_t best = 0;
    for (size_t r = 1; status == PV_OK && r < count; r++)
        if (stats[r].hi > stats[best].hi) /* strictly: the first in memory order on ties */
            best = r;
    if (status == PV_OK) {
        *x = stats[best].hi_at;
        *y = (int)best;
        *value = stats[best].hi;
    }
    free(stats);
    return status;
}

pv_status pv_reg_device_rect(pv_context *ctx, const pv_image *image, int x, int y,
                             pv_image *host, int to_device)
{
    const size_t offset = ((size_t)y * (size_t)image->stride + (size_t)x) *
                          pv_pixel_size(image->type);
    return ctx->ops->interop->bound_rect(ctx, image->data, offset, image->stride, host,
                                         to_device);
}

/* A placeholder for a dense f32 width x height image, bound by `bind`
 * (the to_f32 or stage slot) to a working buffer on the device. */
typedef pv_status (*bind_fn)(pv_context *ctx, const pv_device_rows *rows, double mean,
                             double scale, const void *proxy, size_t bytes);

static pv_status stage_bind(pv_context *ctx, const pv_device_rows *rows, double mean,
                            double scale, const void *proxy, size_t bytes)
{
    (void)rows, (void)mean, (void)scale;
    return ctx->ops->interop->stage(ctx, proxy, bytes);
}

static pv_status bound_placeholder(pv_context *ctx, int width, int height, bind_fn bind,
                                   const pv_device_rows *rows, double mean, double scale,
                                   pv_reg_copy *copy)
{
    const size_t bytes = (size_t)width * (size_t)height * sizeof(float);
    void *proxy = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (proxy == MAP_FAILED)
        return pv_fail(ctx, PV_ERR_NOMEM, "device buffers: no address space for a proxy");
    pv_status status = bind(ctx, rows, mean, scale, proxy, bytes);
    if (status != PV_OK) {
        munmap(proxy, bytes);
        return status;
    }
    copy->data = proxy;
    copy->mapped = bytes;
    copy->ctx = ctx;
    return PV_OK;
}

pv_status pv_reg_device_f32_copy(pv_context *ctx, const pv_image *image, double mean,
                                 double scale, pv_reg_copy *copy)
{
    const pv_device_rows rows = image_rows(image);
    return bound_placeholder(ctx, image->width, image->height, ctx->ops->interop->to_f32, &rows,
                             mean, scale, copy);
}

pv_status pv_reg_device_stage(pv_context *ctx, int width, int height, pv_reg_copy *copy)
{
    return bound_placeholder(ctx, width, height, stage_bind, NULL, 0.0, 1.0, copy);
}

pv_status pv_reg_device_unstage(pv_context *ctx, const pv_reg_copy *copy, pv_image *out)
{
    return ctx->ops->interop->unstage(ctx, copy->data, out);
}

void pv_reg_copy_free(pv_reg_copy *copy)
{
    if (copy->mapped) {
        copy->ctx->ops->interop->forget(copy->ctx, copy->data);
        munmap(copy->data, copy->mapped);
    } else
        free(copy->data);
    copy->data = NULL;
    copy->mapped = 0;
}

/* ----------------------------------------------- masked phase correlation */

static pv_device_rows either_rows(const pv_image *image, const pv_volume *volume)
{
    return image ? image_rows(image) : volume_rows(volume);
}

/* The rows' masked statistics added in row order, as the host pass adds
 * its rows' partial results. */
static pv_status masked_scan(pv_context *ctx, const pv_device_rows *rows,
                             const pv_device_rows *mask, pv_reg_masked *out, double *sum)
{
    const size_t count = (size_t)rows->ny * (size_t)rows->nz;
    pv_masked_row *stats = malloc(count * sizeof *stats);
    if (!stats)
        return fail_no_memory(ctx, count);
    pv_status status = ctx->ops->interop->masked_stats(ctx, rows, mask, stats);
    float lo = INFINITY, hi = -INFINITY;
    double total = 0.0;
    out->finite = 1;
    out->valid = 0;
    for (size_t r = 0; status == PV_OK && r < count; r++) {
        out->finite &= stats[r].finite;
        out->valid += stats[r].valid;
        total += stats[r].sum;
        lo = stats[r].lo < lo ? stats[r].lo : lo;
        hi = stats[r].hi > hi ? stats[r].hi : hi;
    }
    free(stats);
    out->textured = lo < hi;
    *sum = total;
    return status;
}

pv_status pv_reg_device_masked(pv_context *ctx, const pv_image *image, const pv_volume *volume,
                               const pv_image *mask_image, const pv_volume *mask_volume,
                               pv_reg_masked *out)
{
    const pv_device_rows rows = either_rows(image, volume);
    const pv_device_rows mask = either_rows(mask_image, mask_volume);
    const size_t count = (size_t)rows.ny * (size_t)rows.nz;
    double sum = 0.0;
    out->values = (pv_reg_copy){NULL, 0, ctx};
    out->mask = (pv_reg_copy){NULL, 0, ctx};
    out->energy = 0.0;
    pv_status status = masked_scan(ctx, &rows, &mask, out, &sum);
    if (status != PV_OK || !out->finite || out->valid == 0)
        return status; /* the front end refuses the side */
    const float mean = (float)(sum / (double)out->valid);
    double *energy = malloc(count * sizeof *energy);
    if (!energy)
        return fail_no_memory(ctx, count);
    status = pv_reg_device_stage(ctx, rows.nx, rows.ny * rows.nz, &out->values);
    if (status == PV_OK)
        status = pv_reg_device_stage(ctx, rows.nx, rows.ny * rows.nz, &out->mask);
    if (status == PV_OK)
        status = ctx->ops->interop->masked_centre(ctx, &rows, &mask, (double)mean, 1.0, 0,
                                                  out->values.data, out->mask.data, energy);
    for (size_t r = 0; status == PV_OK && r < count; r++)
        out->energy += energy[r];
    free(energy);
    return status;
}

/* --------------------------------------------------- masked normxcorr2 */

pv_status pv_reg_device_mask_count(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                   int *finite, size_t *valid, double *sum)
{
    const pv_device_rows rows = image_rows(image);
    const pv_device_rows mask_rows = mask ? image_rows(mask) : rows;
    pv_reg_masked scan;
    pv_status status = masked_scan(ctx, &rows, mask ? &mask_rows : NULL, &scan, sum);
    if (status == PV_OK) {
        *finite = scan.finite;
        *valid = scan.valid;
    }
    return status;
}

pv_status pv_reg_device_mask_copy(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                  double mean, double scale, pv_reg_copy *values,
                                  pv_reg_copy *mask01, double *squares)
{
    const pv_device_rows rows = image_rows(image);
    const pv_device_rows mask_rows = mask ? image_rows(mask) : rows;
    const size_t count = (size_t)image->height;
    pv_status status = PV_OK;
    if (!values->data)
        status = pv_reg_device_stage(ctx, image->width, image->height, values);
    if (status == PV_OK && !mask01->data)
        status = pv_reg_device_stage(ctx, image->width, image->height, mask01);
    double *energy = status == PV_OK ? malloc(count * sizeof *energy) : NULL;
    if (status == PV_OK && !energy)
        return fail_no_memory(ctx, count);
    if (status == PV_OK)
        status = ctx->ops->interop->masked_centre(ctx, &rows, mask ? &mask_rows : NULL, mean,
                                                  scale, 1, values->data, mask01->data, energy);
    double total = 0.0;
    for (size_t r = 0; status == PV_OK && r < count; r++)
        total += energy[r];
    free(energy);
    if (status == PV_OK)
        *squares = total;
    return status;
}
