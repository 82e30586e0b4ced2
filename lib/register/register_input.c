/* Front end of the register module: the passes over inputs that phase
 * correlation and normxcorr2 share (finiteness, texture, means and
 * energies, computed so the result does not depend on the number of
 * threads), the f32 view of an image, and the common argument checks. */
#include "register_internal.h"

#include <stdint.h>
#include <stdlib.h>

/* ============================================================ data checks */

/* Threads for the front end's passes over inputs; small inputs stay on
 * one thread, where starting a team costs more than the pass. */
#define PV_PARALLEL_MIN_POINTS 65536

int pv_reg_threads(const pv_context *ctx)
{
    return ctx && ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

static long volume_rows(const pv_volume *v)
{
    return (long)v->ny * v->nz;
}

/* Element offset of row `row` (y fastest, then z). */
static ptrdiff_t volume_row_start(const pv_volume *v, long row)
{
    return (row / v->ny) * v->stride_z + (row % v->ny) * v->stride_y;
}

/* Finite values and their range, one pass, split over rows (minimum,
 * maximum and a flag do not depend on the split).  A U16 volume is finite;
 * its range is read as the floats it stands for. */
/* One row's range and finiteness; a loop per sample type (a test of the
 * type per sample would keep the float loop from being vectorised, which
 * costs a 512^3 one-shot correlation several milliseconds). */
typedef struct row_range {
    float lo, hi;
    int finite;
} row_range;

static row_range scan_row_f32(const float *row, int nx)
{
    row_range r = {INFINITY, -INFINITY, 1};
    for (int x = 0; x < nx; x++) {
        const float value = row[x];
        r.finite &= isfinite(value) != 0;
        r.lo = value < r.lo ? value : r.lo;
        r.hi = value > r.hi ? value : r.hi;
    }
    return r;
}

static row_range scan_row_u16(const uint16_t *row, int nx)
{
    uint16_t lo = UINT16_MAX, hi = 0;
    for (int x = 0; x < nx; x++) {
        lo = row[x] < lo ? row[x] : lo;
        hi = row[x] > hi ? row[x] : hi;
    }
    row_range r = {(float)lo, (float)hi, 1};
    return r;
}

pv_data_scan pv_reg_scan_volume(const pv_volume *v, int threads)
{
    float lo = INFINITY, hi = -INFINITY;
    int finite = 1;
    const long rows = volume_rows(v);
    const int nx = v->nx, u16 = v->type == PV_VOLUME_U16;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(min : lo) reduction(max : hi) reduction(& : finite) \
    if ((double)rows * nx > PV_PARALLEL_MIN_POINTS)
    for (long r = 0; r < rows; r++) {
        const ptrdiff_t start = volume_row_start(v, r);
        const row_range range = u16 ? scan_row_u16(v->data_u16 + start, nx)
                                    : scan_row_f32(v->data + start, nx);
        finite &= range.finite;
        lo = range.lo < lo ? range.lo : lo;
        hi = range.hi > hi ? range.hi : hi;
    }
    pv_data_scan scan = {finite, finite && hi > lo};
    return scan;
}

pv_data_scan pv_reg_scan_image(const pv_image *image, int threads)
{
    pv_data_scan scan = {1, 0};
    if (image->type == PV_PIXEL_F32 || image->type == PV_PIXEL_U16) {
        pv_volume view = image->type == PV_PIXEL_U16
                             ? pv_volume_wrap_u16(image->data, image->width, image->height, 1)
                             : pv_volume_wrap(image->data, image->width, image->height, 1);
        view.stride_y = image->stride;
        return pv_reg_scan_volume(&view, threads);
    }
    const uint8_t *data = image->data, first = data[0];
    for (int y = 0; y < image->height && !scan.textured; y++)
        for (int x = 0; x < image->width; x++)
            if (data[(ptrdiff_t)y * image->stride + x] != first) {
                scan.textured = 1;
                break;
            }
    return scan;
}

pv_status pv_reg_check_finite(pv_context *ctx, const char *op, const char *name,
                              pv_data_scan scan)
{
    if (!scan.finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s contains NaN or Inf", op, name);
    return PV_OK;
}

pv_status pv_reg_image_as_volume(pv_context *ctx, const pv_image *image, pv_reg_copy *copy,
                                 pv_volume *view)
{
    copy->data = NULL;
    copy->mapped = 0;
    copy->ctx = ctx;
    if (image->type == PV_PIXEL_F32 || image->type == PV_PIXEL_U16) {
        *view = image->type == PV_PIXEL_U16
                    ? pv_volume_wrap_u16(image->data, image->width, image->height, 1)
                    : pv_volume_wrap(image->data, image->width, image->height, 1);
        view->stride_y = image->stride;
        view->stride_z = image->stride * image->height;
        return PV_OK;
    }
    if (ctx->device_call) { /* the u8 pixels are on the device: converted there */
        pv_status status = pv_reg_device_f32_copy(ctx, image, 0.0, 1.0, copy);
        if (status == PV_OK)
            *view = pv_volume_wrap(copy->data, image->width, image->height, 1);
        return status;
    }
    size_t count = (size_t)image->width * (size_t)image->height;
    float *data = malloc(count * sizeof *data);
    if (!data)
        return pv_fail(ctx, PV_ERR_NOMEM, "no memory to convert a %dx%d image to float",
                       image->width, image->height);
    const uint8_t *src = image->data;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            data[(size_t)y * image->width + x] = (float)src[(ptrdiff_t)y * image->stride + x];
    copy->data = data;
    *view = pv_volume_wrap(data, image->width, image->height, 1);
    return PV_OK;
}

/* ============================================================ input levels */

/* A sum over a volume's rows of fn(row), in double: per-row sums in
 * parallel, then added in row order, so the result does not depend on the
 * number of threads.  fn reads its row's samples (either type) from
 * `start`, the row's first element. */
typedef double (*row_sum_fn)(const pv_volume *v, ptrdiff_t start, long index, const void *arg);

static double sum_over_rows(const pv_volume *v, int threads, row_sum_fn fn, const void *arg)
{
    const long rows = volume_rows(v);
    double *partial = malloc((size_t)rows * sizeof *partial), sum = 0.0;
    if (!partial) {
        for (long r = 0; r < rows; r++)
            sum += fn(v, volume_row_start(v, r), r, arg);
        return sum;
    }
#pragma omp parallel for num_threads(threads) schedule(static) \
    if ((double)rows * v->nx > PV_PARALLEL_MIN_POINTS)
    for (long r = 0; r < rows; r++)
        partial[r] = fn(v, volume_row_start(v, r), r, arg);
    for (long r = 0; r < rows; r++)
        sum += partial[r];
    free(partial);
    return sum;
}

static double row_sum(const pv_volume *v, ptrdiff_t start, long index, const void *arg)
{
    (void)index;
    (void)arg;
    double sum = 0.0;
    if (v->type == PV_VOLUME_U16)
        for (int x = 0; x < v->nx; x++)
            sum += v->data_u16[start + x];
    else
        for (int x = 0; x < v->nx; x++)
            sum += v->data[start + x];
    return sum;
}

double pv_reg_volume_mean(const pv_volume *v, int threads)
{
    return sum_over_rows(v, threads, row_sum, NULL) / ((double)v->nx * v->ny * v->nz);
}

typedef struct energy_args {
    const float *const *window;
    float mean;
} energy_args;

/* The row's energy about the mean, weighted by the separable window when
 * there is one; a loop per sample type and per case (tests per sample
 * would keep the loops from being vectorised). */
static double row_energy(const pv_volume *v, ptrdiff_t start, long index, const void *arg)
{
    const energy_args *e = arg;
    const double mean = e->mean;
    double sum = 0.0;
    if (e->window[0]) {
        const int y = (int)(index % v->ny), z = (int)(index / v->ny);
        for (int x = 0; x < v->nx; x++) {
            double d = (double)pv_volume_value(v, start + x) - mean;
            d *= (double)e->window[0][x] * e->window[1][y] * e->window[2][z];
            sum += d * d;
        }
    } else if (v->type == PV_VOLUME_U16) {
        for (int x = 0; x < v->nx; x++) {
            const double d = (double)v->data_u16[start + x] - mean;
            sum += d * d;
        }
    } else {
        for (int x = 0; x < v->nx; x++) {
            const double d = (double)v->data[start + x] - mean;
            sum += d * d;
        }
    }
    return sum;
}

double pv_reg_windowed_energy(const pv_volume *v, const float *const window[3], float mean,
                              int threads)
{
    energy_args args = {window, mean};
    return sum_over_rows(v, threads, row_energy, &args);
}

/* ======================================================== argument checks */

pv_status pv_reg_check_ctx(pv_context *ctx, const char *op)
{
    return pv_check_required(ctx, op, NULL, 0);
}

pv_status pv_reg_check_image(pv_context *ctx, const char *op, const char *name,
                             const pv_image *image)
{
    if (!pv_image_is_valid(image))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid image", op, name);
    return PV_OK;
}

pv_status pv_reg_check_pc_image(pv_context *ctx, const char *op, const char *name,
                                const pv_image *image)
{
    if (!pv_image_is_valid_any_type(image) ||
        (!pv_pixel_is_grey(image->type) && image->type != PV_PIXEL_U16))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is NULL or not a valid u8, u16 or f32 grey image", op, name);
    return PV_OK;
}

pv_status pv_reg_check_volume(pv_context *ctx, const char *op, const char *name,
                              const pv_volume *volume)
{
    return pv_check_volume(ctx, op, name, volume, PV_ACCEPT_F32_U16);
}
