/* CPU reference filters: separable Gaussian blur and gradients.
 *
 * The arithmetic mirrors backends/opencl/kernels/filter.cl step for step
 * (same pass order, acc = 0 then acc += w[k] * v for k = 0 .. 2r, the same
 * difference formulas), so the backends agree to rounding and usually to
 * the last bit.  Everything that can fail (allocation) happens before any
 * output is written. */
#include "../cpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* count floats, or NULL when count overflows or malloc fails. */
static float *alloc_floats(size_t a, size_t b)
{
    size_t count, bytes;
    if (!pv_size_mul(a, b, &count) || !pv_size_mul(count, sizeof(float), &bytes))
        return NULL;
    return malloc(bytes ? bytes : 1);
}

/* ---------------------------------------------------------- 1D building blocks */

/* Copy n source values into padded[radius .. radius + n) as float and
 * replicate the end values radius times on each side, so the row filter
 * needs no clamping. */
static void pad_row_f32(const float *src, int n, int radius, float *padded)
{
    for (int i = 0; i < radius; i++)
        padded[i] = src[0];
    memcpy(padded + radius, src, (size_t)n * sizeof(float));
    for (int i = 0; i < radius; i++)
        padded[radius + n + i] = src[n - 1];
}

static void pad_row_u8(const uint8_t *src, int n, int radius, float *padded)
{
    for (int i = 0; i < radius; i++)
        padded[i] = (float)src[0];
    for (int i = 0; i < n; i++)
        padded[radius + i] = (float)src[i];
    for (int i = 0; i < radius; i++)
        padded[radius + n + i] = (float)src[n - 1];
}

/* k is the outer loop so the inner loop vectorises along x; per element the
 * sum is still taken in k order, as in the kernels. */
static void filter_padded_row(const float *restrict padded, int n, const float *weights,
                              int radius, float *restrict dst)
{
    for (int x = 0; x < n; x++)
        dst[x] = 0.0f;
    for (int k = 0; k <= 2 * radius; k++) {
        const float w = weights[k];
        for (int x = 0; x < n; x++)
            dst[x] += w * padded[x + k];
    }
}

/* dst[x] = sum_k weights[k] * line(k)[x], where line(k) is the input row at
 * clamped offset k - radius along the filtered axis (k outer, as above). */
static void filter_across_rows(const float *restrict centre, ptrdiff_t step, int coord,
                               int length, int n, const float *weights, int radius,
                               float *restrict dst)
{
    for (int x = 0; x < n; x++)
        dst[x] = 0.0f;
    for (int k = 0; k <= 2 * radius; k++) {
        const float *line = centre + (ptrdiff_t)(clamp_int(coord - radius + k, 0, length - 1) - coord) * step;
        const float w = weights[k];
        for (int x = 0; x < n; x++)
            dst[x] += w * line[x];
    }
}

/* ------------------------------------------------------------------- Gaussian 2D */

static void gaussian_rows_2d(const pv_image *src, float *tmp, const float *weights, int radius,
                             float *pad_buffers, int threads)
{
    const int w = src->width;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < src->height; y++) {
        float *padded = pad_buffers + (size_t)pv_cpu_thread_index() * ((size_t)w + 2 * (size_t)radius);
        ptrdiff_t offset = (ptrdiff_t)y * src->stride;
        if (src->type == PV_PIXEL_U8)
            pad_row_u8((const uint8_t *)src->data + offset, w, radius, padded);
        else
            pad_row_f32((const float *)src->data + offset, w, radius, padded);
        filter_padded_row(padded, w, weights, radius, tmp + (size_t)y * (size_t)w);
    }
}

static void gaussian_cols_2d(const float *tmp, pv_image *dst, const float *weights, int radius,
                             int threads)
{
    const int w = dst->width;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < dst->height; y++)
        filter_across_rows(tmp + (size_t)y * (size_t)w, w, y, dst->height, w, weights, radius,
                           (float *)dst->data + (ptrdiff_t)y * dst->stride);
}

static pv_status pv_cpu_gaussian2d(pv_context *ctx, const pv_image *src, pv_image *dst,
                            const float *weights, int radius)
{
    const int threads = ctx->cpu_threads;
    float *tmp = alloc_floats((size_t)src->width, (size_t)src->height);
    float *pads = alloc_floats((size_t)threads, (size_t)src->width + 2 * (size_t)radius);
    if (!tmp || !pads) {
        free(tmp);
        free(pads);
        return pv_fail(ctx, PV_ERR_NOMEM, "gaussian_blur: no memory for a %dx%d temporary",
                       src->width, src->height);
    }
    gaussian_rows_2d(src, tmp, weights, radius, pads, threads);
    gaussian_cols_2d(tmp, dst, weights, radius, threads);
    free(tmp);
    free(pads);
    return PV_OK;
}

/* ------------------------------------------------------------------- Gaussian 3D */

static float *voxel_row(const pv_volume *v, int y, int z)
{
    return v->data + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z;
}

static void gaussian_x_3d(const pv_volume *src, pv_volume *dst, const float *weights, int radius,
                          float *pad_buffers, int threads)
{
    const int nx = src->nx;
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < src->nz; z++)
        for (int y = 0; y < src->ny; y++) {
            float *padded = pad_buffers + (size_t)pv_cpu_thread_index() * ((size_t)nx + 2 * (size_t)radius);
            pad_row_f32(voxel_row(src, y, z), nx, radius, padded);
            filter_padded_row(padded, nx, weights, radius, voxel_row(dst, y, z));
        }
}

/* Filter along y (axis 1) or z (axis 2). */
static void gaussian_yz_3d(const pv_volume *src, pv_volume *dst, int axis, const float *weights,
                           int radius, int threads)
{
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < src->nz; z++)
        for (int y = 0; y < src->ny; y++) {
            if (axis == 1)
                filter_across_rows(voxel_row(src, y, z), src->stride_y, y, src->ny, src->nx,
                                   weights, radius, voxel_row(dst, y, z));
            else
                filter_across_rows(voxel_row(src, y, z), src->stride_z, z, src->nz, src->nx,
                                   weights, radius, voxel_row(dst, y, z));
        }
}

/* Passes x, y, z as on the device; dst holds the x and z results, one dense
 * temporary the y result. */
static pv_status pv_cpu_gaussian3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                            const float *weights, int radius)
{
    const int threads = ctx->cpu_threads;
    size_t plane = (size_t)src->nx * (size_t)src->ny;
    float *tmp_data = alloc_floats(plane, (size_t)src->nz);
    float *pads = alloc_floats((size_t)threads, (size_t)src->nx + 2 * (size_t)radius);
    if (!tmp_data || !pads) {
        free(tmp_data);
        free(pads);
        return pv_fail(ctx, PV_ERR_NOMEM, "gaussian_blur3d: no memory for a %dx%dx%d temporary",
                       src->nx, src->ny, src->nz);
    }
    pv_volume tmp = pv_volume_wrap(tmp_data, src->nx, src->ny, src->nz);
    gaussian_x_3d(src, dst, weights, radius, pads, threads);
    gaussian_yz_3d(dst, &tmp, 1, weights, radius, threads);
    gaussian_yz_3d(&tmp, dst, 2, weights, radius, threads);
    free(tmp_data);
    free(pads);
    return PV_OK;
}

/* ------------------------------------------------------------------- gradients */

/* The difference stencil at coordinate c of an axis of `length` samples:
 * out = (f(hi) - f(lo)) * scale, or 0 when hi == lo.  Shared by every axis
 * so x, y and z follow exactly the kernel's formula. */
typedef struct stencil {
    int lo, hi;
    float scale;
} stencil;

static stencil stencil_at(int c, int length, pv_gradient_scheme scheme)
{
    stencil s;
    s.lo = scheme == PV_GRADIENT_CENTRAL ? (c > 0 ? c - 1 : 0) : c;
    s.hi = c + 1 < length ? c + 1 : length - 1;
    s.scale = s.hi - s.lo == 2 ? 0.5f : 1.0f;
    return s;
}

static void gradient_x_row(const float *row, int n, pv_gradient_scheme scheme, float *out)
{
    for (int x = 0; x < n; x++) {
        stencil s = stencil_at(x, n, scheme);
        out[x] = s.hi == s.lo ? 0.0f : (row[s.hi] - row[s.lo]) * s.scale;
    }
}

/* Derivative across rows: `centre` is the row at coordinate c of an axis
 * whose rows are `step` elements apart. */
static void gradient_across_rows(const float *centre, ptrdiff_t step, int c, int length, int n,
                                 pv_gradient_scheme scheme, float *out)
{
    stencil s = stencil_at(c, length, scheme);
    if (s.hi == s.lo) {
        for (int x = 0; x < n; x++)
            out[x] = 0.0f;
        return;
    }
    const float *hi = centre + (ptrdiff_t)(s.hi - c) * step;
    const float *lo = centre - (ptrdiff_t)(c - s.lo) * step;
    for (int x = 0; x < n; x++)
        out[x] = (hi[x] - lo[x]) * s.scale;
}

/* A float view of src: src itself when it is f32, else a dense converted
 * copy in *owned (freed by the caller). */
static pv_status float_view(pv_context *ctx, const pv_image *src, pv_image *view, float **owned)
{
    *owned = NULL;
    if (src->type == PV_PIXEL_F32) {
        *view = *src;
        return PV_OK;
    }
    *owned = alloc_floats((size_t)src->width, (size_t)src->height);
    if (!*owned)
        return pv_fail(ctx, PV_ERR_NOMEM, "gradient: no memory for a %dx%d float copy",
                       src->width, src->height);
    *view = pv_image_wrap(*owned, src->width, src->height, PV_PIXEL_F32);
    #pragma omp parallel for num_threads(ctx->cpu_threads) schedule(static)
    for (int y = 0; y < src->height; y++) {
        const uint8_t *in = (const uint8_t *)src->data + (ptrdiff_t)y * src->stride;
        float *out = *owned + (size_t)y * (size_t)src->width;
        for (int x = 0; x < src->width; x++)
            out[x] = (float)in[x];
    }
    return PV_OK;
}

static float *image_row(const pv_image *image, int y)
{
    return (float *)image->data + (ptrdiff_t)y * image->stride;
}

static pv_status pv_cpu_gradient2d(pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,
                            pv_gradient_scheme scheme)
{
    pv_image f;
    float *owned;
    pv_status status = float_view(ctx, src, &f, &owned);
    if (status != PV_OK)
        return status;
    #pragma omp parallel for num_threads(ctx->cpu_threads) schedule(static)
    for (int y = 0; y < f.height; y++) {
        if (gx)
            gradient_x_row(image_row(&f, y), f.width, scheme, image_row(gx, y));
        if (gy)
            gradient_across_rows(image_row(&f, y), f.stride, y, f.height, f.width, scheme,
                                 image_row(gy, y));
    }
    free(owned);
    return PV_OK;
}

static pv_status pv_cpu_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx, pv_volume *gy,
                            pv_volume *gz, pv_gradient_scheme scheme)
{
    #pragma omp parallel for collapse(2) num_threads(ctx->cpu_threads) schedule(static)
    for (int z = 0; z < src->nz; z++)
        for (int y = 0; y < src->ny; y++) {
            const float *row = voxel_row(src, y, z);
            if (gx)
                gradient_x_row(row, src->nx, scheme, voxel_row(gx, y, z));
            if (gy)
                gradient_across_rows(row, src->stride_y, y, src->ny, src->nx, scheme,
                                     voxel_row(gy, y, z));
            if (gz)
                gradient_across_rows(row, src->stride_z, z, src->nz, src->nx, scheme,
                                     voxel_row(gz, y, z));
        }
    return PV_OK;
}

const pv_filter_ops pv_cpu_filter_ops = {PV_FILTER_SLOTS(PV_OPS_BIND, pv_cpu_)};
