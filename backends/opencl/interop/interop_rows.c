/* Passes over a caller's buffer bound to a placeholder (a device-buffer
 * call's input), so that front ends whose host call would read the input's
 * samples on the host (phase correlation's and normxcorr2's scans, means
 * and scaling) get the same numbers from the device: one work item a row,
 * sums in double (kernels/interop.cl), the rows' results read back and
 * combined by the front end in row order.  The conversion's copy lives in
 * a scratch slot of the context, one slot per binding in place. */
#include "interop_rows.h"

#include <stdlib.h>

/* Work items a group for the per-row passes; the grid is rounded up and
 * the kernels skip the items past the end. */
#define ROWS_GROUP 64

/* Where a bound input lies and how its rows are walked. */
typedef struct rows_source {
    cl_mem mem;
    cl_ulong first;  /* element index of the first sample */
    cl_int type;     /* 0: u8, 1: u16, 2: f32 */
    cl_int nx, ny, rows;
    cl_long stride_y, stride_z;
} rows_source;

static int has_double(pv_context *ctx)
{
    cl_device_fp_config config = 0;
    return clGetDeviceInfo(pv_cl_device(ctx), CL_DEVICE_DOUBLE_FP_CONFIG, sizeof config, &config,
                           NULL) == CL_SUCCESS && config != 0;
}

static pv_status source_of(pv_context *ctx, const pv_device_rows *rows, rows_source *s)
{
    size_t offset = 0;
    const size_t sample = pv_pixel_size(rows->type);
    const size_t count = (size_t)rows->ny * (size_t)rows->nz;
    if (!has_double(ctx))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "device buffers: this operation's device form needs a device with double "
                       "precision (cl_khr_fp64) for its exact sums");
    if (!pv_cl_bound_buffer(ctx, rows->proxy, &s->mem, &offset))
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: an input is not bound to a buffer");
    if (offset % sample != 0)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "device buffers: offset %zu is not a multiple of the %zu-byte sample",
                       offset, sample);
    if (count > (size_t)INT32_MAX)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: %zu rows exceed 2^31", count);
    s->first = offset / sample;
    s->type = rows->type == PV_PIXEL_U8 ? 0 : rows->type == PV_PIXEL_U16 ? 1 : 2;
    s->nx = rows->nx;
    s->ny = rows->ny;
    s->rows = (cl_int)count;
    s->stride_y = rows->stride_y;
    s->stride_z = rows->stride_z;
    return PV_OK;
}

static pv_status launch_rows(pv_context *ctx, const char *name, const pv_cl_kernel_arg *args,
                             int count, int dims, const size_t *global)
{
    cl_kernel kernel;
    const size_t local[2] = {dims == 1 ? ROWS_GROUP : 16, dims == 1 ? 1 : 4};
    pv_status status = pv_cl_kernel(ctx, "interop", NULL, name, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, count, dims, global, local)
                           : status;
}

/* row_stats' per-row arrays on the device (each a scratch slot) and on
 * the host. */
#define STATS_ARRAYS 5
static const char *const stats_slots[STATS_ARRAYS] = {
    "interop.row_sums", "interop.row_lo", "interop.row_hi", "interop.row_hi_at",
    "interop.row_finite"};
static const size_t stats_sizes[STATS_ARRAYS] = {sizeof(cl_double), sizeof(cl_float),
                                                 sizeof(cl_float), sizeof(cl_int),
                                                 sizeof(cl_int)};

static void free_row_arrays(void **host, int count)
{
    for (int k = 0; k < count; k++) {
        free(host[k]);
        host[k] = NULL;
    }
}

/* The per-row arrays device[0 .. count) (rows elements of sizes[k]
 * bytes each) read into fresh host arrays host[k]; on failure every
 * host[k] is freed and NULL. */
static pv_status read_row_arrays(pv_context *ctx, size_t rows, const cl_mem *device,
                                 const size_t *sizes, int count, void **host)
{
    pv_status status = PV_OK;
    for (int k = 0; k < count; k++)
        host[k] = NULL;
    for (int k = 0; status == PV_OK && k < count; k++) {
        host[k] = malloc(rows * sizes[k]);
        status = host[k] ? pv_cl_read(ctx, device[k], 0, rows * sizes[k], host[k])
                         : pv_fail(ctx, PV_ERR_NOMEM, "device buffers: no memory for %zu rows",
                                   rows);
    }
    if (status != PV_OK)
        free_row_arrays(host, count);
    return status;
}

static pv_status read_stats(pv_context *ctx, size_t rows, const cl_mem *device,
                            pv_row_stats *out)
{
    void *host[STATS_ARRAYS];
    pv_status status = read_row_arrays(ctx, rows, device, stats_sizes, STATS_ARRAYS, host);
    for (size_t r = 0; status == PV_OK && r < rows; r++)
        out[r] = (pv_row_stats){((double *)host[0])[r], ((float *)host[1])[r],
                                ((float *)host[2])[r], ((int *)host[3])[r],
                                ((int *)host[4])[r]};
    free_row_arrays(host, STATS_ARRAYS);
    return status;
}

pv_status pv_cl_rows_stats(pv_context *ctx, const pv_device_rows *rows, pv_row_stats *out)
{
    rows_source s;
    cl_mem d[STATS_ARRAYS];
    pv_status status = source_of(ctx, rows, &s);
    for (int k = 0; status == PV_OK && k < STATS_ARRAYS; k++)
        status = pv_cl_scratch(ctx, stats_slots[k], (size_t)s.rows * stats_sizes[k], &d[k]);
    if (status != PV_OK)
        return status;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(s.mem),      PV_CL_ARG(s.first), PV_CL_ARG(s.type), PV_CL_ARG(s.nx),
        PV_CL_ARG(s.ny),       PV_CL_ARG(s.rows),  PV_CL_ARG(s.stride_y),
        PV_CL_ARG(s.stride_z), PV_CL_ARG(d[0]),    PV_CL_ARG(d[1]),   PV_CL_ARG(d[2]),
        PV_CL_ARG(d[3]),       PV_CL_ARG(d[4])};
    const size_t global[1] = {(size_t)s.rows};
    status = launch_rows(ctx, "row_stats", args, PV_CL_ARG_COUNT(args), 1, global);
    return status == PV_OK ? read_stats(ctx, (size_t)s.rows, d, out) : status;
}

/* The three axes' weights in one scratch buffer (a float when there are
 * none, as a buffer argument cannot be NULL everywhere). */
static pv_status upload_windows(pv_context *ctx, const pv_device_rows *rows,
                                const float *const *window, cl_mem *windows)
{
    const int n[3] = {rows->nx, rows->ny, rows->nz};
    const size_t count = window ? (size_t)n[0] + (size_t)n[1] + (size_t)n[2] : 1;
    pv_status status = pv_cl_scratch(ctx, "interop.windows", count * sizeof(float), windows);
    for (int a = 0, at = 0; window && status == PV_OK && a < 3; at += n[a], a++)
        status = pv_cl_write(ctx, *windows, (size_t)at * sizeof(float),
                             (size_t)n[a] * sizeof(float), window[a]);
    return status;
}

pv_status pv_cl_rows_energy(pv_context *ctx, const pv_device_rows *rows,
                            const float *const *window, double mean, double *out)
{
    rows_source s;
    cl_mem sums, windows;
    cl_double centre = mean;
    cl_int windowed = window != NULL;
    pv_status status = source_of(ctx, rows, &s);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, stats_slots[0], (size_t)s.rows * sizeof(cl_double), &sums);
    if (status == PV_OK)
        status = upload_windows(ctx, rows, window, &windows);
    if (status != PV_OK)
        return status;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(s.mem),      PV_CL_ARG(s.first),  PV_CL_ARG(s.type),    PV_CL_ARG(s.nx),
        PV_CL_ARG(s.ny),       PV_CL_ARG(s.rows),   PV_CL_ARG(s.stride_y),
        PV_CL_ARG(s.stride_z), PV_CL_ARG(centre),   PV_CL_ARG(windows),   PV_CL_ARG(windowed),
        PV_CL_ARG(sums)};
    const size_t global[1] = {(size_t)s.rows};
    status = launch_rows(ctx, "row_energy", args, PV_CL_ARG_COUNT(args), 1, global);
    return status == PV_OK ? pv_cl_read(ctx, sums, 0, (size_t)s.rows * sizeof(double), out)
                           : status;
}

/* One scratch slot per binding in place, so that two converted inputs of
 * one call never share a buffer. */
static const char *const f32_slots[] = {
    "interop.f32.0",  "interop.f32.1",  "interop.f32.2",  "interop.f32.3",
    "interop.f32.4",  "interop.f32.5",  "interop.f32.6",  "interop.f32.7",
    "interop.f32.8",  "interop.f32.9",  "interop.f32.10", "interop.f32.11",
    "interop.f32.12", "interop.f32.13", "interop.f32.14", "interop.f32.15"};

/* The scratch buffer of the next binding's slot. */
static pv_status slot_buffer(pv_context *ctx, size_t bytes, cl_mem *buffer)
{
    const size_t slot = pv_cl_binding_count(ctx);
    if (slot >= sizeof f32_slots / sizeof f32_slots[0])
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: too many working copies");
    return pv_cl_scratch(ctx, f32_slots[slot], bytes, buffer);
}

pv_status pv_cl_rows_stage(pv_context *ctx, const void *proxy, size_t bytes)
{
    cl_mem buffer;
    pv_status status = slot_buffer(ctx, bytes, &buffer);
    return status == PV_OK ? pv_cl_bind_host(ctx, proxy, bytes, buffer, 0) : status;
}

pv_status pv_cl_rows_unstage(pv_context *ctx, const void *proxy, pv_image *out)
{
    cl_mem staged;
    size_t at = 0;
    if (!pv_cl_bound_buffer(ctx, proxy, &staged, &at))
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: nothing staged");
    return pv_cl_download_image(ctx, staged, out); /* out bound: a copy on the device */
}

pv_status pv_cl_rows_to_f32(pv_context *ctx, const pv_device_rows *rows, double mean,
                            double scale, const void *proxy, size_t bytes)
{
    rows_source s;
    cl_mem dst;
    cl_double centre = mean, factor = scale;
    pv_status status = source_of(ctx, rows, &s);
    if (status == PV_OK)
        status = slot_buffer(ctx, bytes, &dst);
    if (status != PV_OK)
        return status;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(s.mem),      PV_CL_ARG(s.first),  PV_CL_ARG(s.type),  PV_CL_ARG(s.nx),
        PV_CL_ARG(s.ny),       PV_CL_ARG(s.rows),   PV_CL_ARG(s.stride_y),
        PV_CL_ARG(s.stride_z), PV_CL_ARG(centre),   PV_CL_ARG(factor),  PV_CL_ARG(dst)};
    const size_t global[2] = {(size_t)s.nx, (size_t)s.rows};
    status = launch_rows(ctx, "to_f32", args, PV_CL_ARG_COUNT(args), 2, global);
    return status == PV_OK ? pv_cl_bind_host(ctx, proxy, bytes, dst, 0) : status;
}

pv_status pv_cl_rows_rect(pv_context *ctx, const void *proxy, size_t offset, ptrdiff_t stride,
                          pv_image *host, int to_device)
{
    cl_mem mem;
    size_t at = 0;
    if (!pv_cl_bound_buffer(ctx, proxy, &mem, &at))
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: an image is not bound to a buffer");
    return to_device ? pv_cl_write_caller_image(ctx, host, mem, at + offset, stride)
                     : pv_cl_read_caller_image(ctx, mem, at + offset, stride, host);
}

/* ------------------------------------------------ masked phase correlation */

/* The input's and its mask's sources, the mask of the input's shape;
 * without a mask the input stands in for it (has_mask 0: never read). */
static pv_status masked_sources(pv_context *ctx, const pv_device_rows *rows,
                                const pv_device_rows *mask, rows_source *s, rows_source *m,
                                cl_int *has_mask)
{
    pv_status status = source_of(ctx, rows, s);
    *has_mask = mask != NULL;
    if (status == PV_OK && !mask)
        *m = *s;
    else if (status == PV_OK)
        status = source_of(ctx, mask, m);
    if (status == PV_OK && (m->nx != s->nx || m->ny != s->ny || m->rows != s->rows))
        status = pv_fail(ctx, PV_ERR_INVALID, "device buffers: a mask of another size");
    return status;
}

#define MASKED_ARRAYS 5
static const char *const masked_slots[MASKED_ARRAYS] = {
    "interop.row_sums", "interop.row_valid", "interop.row_lo", "interop.row_hi",
    "interop.row_finite"};
static const size_t masked_sizes[MASKED_ARRAYS] = {sizeof(cl_double), sizeof(cl_ulong),
                                                   sizeof(cl_float), sizeof(cl_float),
                                                   sizeof(cl_int)};

static pv_status read_masked(pv_context *ctx, size_t rows, const cl_mem *device,
                             pv_masked_row *out)
{
    void *host[MASKED_ARRAYS];
    pv_status status = read_row_arrays(ctx, rows, device, masked_sizes, MASKED_ARRAYS, host);
    for (size_t r = 0; status == PV_OK && r < rows; r++)
        out[r] = (pv_masked_row){((double *)host[0])[r], (size_t)((cl_ulong *)host[1])[r],
                                 ((float *)host[2])[r], ((float *)host[3])[r],
                                 ((int *)host[4])[r]};
    free_row_arrays(host, MASKED_ARRAYS);
    return status;
}

pv_status pv_cl_rows_masked_stats(pv_context *ctx, const pv_device_rows *rows,
                                  const pv_device_rows *mask, pv_masked_row *out)
{
    rows_source s, m;
    cl_mem d[MASKED_ARRAYS];
    cl_int has_mask;
    pv_status status = masked_sources(ctx, rows, mask, &s, &m, &has_mask);
    for (int k = 0; status == PV_OK && k < MASKED_ARRAYS; k++)
        status = pv_cl_scratch(ctx, masked_slots[k], (size_t)s.rows * masked_sizes[k], &d[k]);
    if (status != PV_OK)
        return status;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(s.mem),      PV_CL_ARG(s.first),      PV_CL_ARG(s.type),
        PV_CL_ARG(s.nx),       PV_CL_ARG(s.ny),         PV_CL_ARG(s.rows),
        PV_CL_ARG(s.stride_y), PV_CL_ARG(s.stride_z),   PV_CL_ARG(m.mem),
        PV_CL_ARG(m.first),    PV_CL_ARG(m.type),       PV_CL_ARG(m.stride_y),
        PV_CL_ARG(m.stride_z), PV_CL_ARG(has_mask),     PV_CL_ARG(d[0]),
        PV_CL_ARG(d[1]),       PV_CL_ARG(d[2]),         PV_CL_ARG(d[3]),
        PV_CL_ARG(d[4])};
    const size_t global[1] = {(size_t)s.rows};
    status = launch_rows(ctx, "masked_stats", args, PV_CL_ARG_COUNT(args), 1, global);
    return status == PV_OK ? read_masked(ctx, (size_t)s.rows, d, out) : status;
}

/* The staged buffer of a placeholder (pv_cl_rows_stage), dense from 0. */
static pv_status staged_of(pv_context *ctx, const void *proxy, cl_mem *mem)
{
    size_t at = 0;
    if (!pv_cl_bound_buffer(ctx, proxy, mem, &at) || at != 0)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: nothing staged");
    return PV_OK;
}

pv_status pv_cl_rows_masked_centre(pv_context *ctx, const pv_device_rows *rows,
                                   const pv_device_rows *mask, double mean, double scale,
                                   int exact, const void *values, const void *mask01,
                                   double *energy)
{
    rows_source s, m;
    cl_mem v, b, sums;
    cl_double centre = mean, factor = scale;
    cl_int has_mask, in_double = exact != 0;
    pv_status status = masked_sources(ctx, rows, mask, &s, &m, &has_mask);
    if (status == PV_OK)
        status = staged_of(ctx, values, &v);
    if (status == PV_OK)
        status = staged_of(ctx, mask01, &b);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, masked_slots[0], (size_t)s.rows * sizeof(cl_double), &sums);
    if (status != PV_OK)
        return status;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(s.mem),      PV_CL_ARG(s.first),    PV_CL_ARG(s.type),
        PV_CL_ARG(s.nx),       PV_CL_ARG(s.ny),       PV_CL_ARG(s.rows),
        PV_CL_ARG(s.stride_y), PV_CL_ARG(s.stride_z), PV_CL_ARG(m.mem),
        PV_CL_ARG(m.first),    PV_CL_ARG(m.type),     PV_CL_ARG(m.stride_y),
        PV_CL_ARG(m.stride_z), PV_CL_ARG(has_mask),   PV_CL_ARG(centre),
        PV_CL_ARG(factor),     PV_CL_ARG(in_double),  PV_CL_ARG(v),
        PV_CL_ARG(b),          PV_CL_ARG(sums)};
    const size_t global[1] = {(size_t)s.rows};
    status = launch_rows(ctx, "masked_centre", args, PV_CL_ARG_COUNT(args), 1, global);
    return status == PV_OK
               ? pv_cl_read(ctx, sums, 0, (size_t)s.rows * sizeof(double), energy)
               : status;
}
