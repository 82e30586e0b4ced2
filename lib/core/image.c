/* Image and volume structs: allocation, wrapping and validity checks. */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t pv_pixel_size(pv_pixel_type type)
{
    switch (type) {
    case PV_PIXEL_U8: return 1;
    case PV_PIXEL_F32: return sizeof(float);
    case PV_PIXEL_U16: return sizeof(uint16_t);
    case PV_PIXEL_RGB8: return 3;
    case PV_PIXEL_RGB16: return 3 * sizeof(uint16_t);
    }
    return 0;
}

int pv_pixel_is_grey(pv_pixel_type type)
{
    return type == PV_PIXEL_U8 || type == PV_PIXEL_F32;
}

int pv_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

/* Elements spanned by rows of `stride` elements, the last `width` long. */
static int span_elements(size_t rows, size_t stride, size_t width, size_t *out)
{
    size_t full;
    if (!pv_size_mul(rows - 1, stride, &full) || full > SIZE_MAX - width)
        return 0;
    *out = full + width;
    return 1;
}

int pv_image_is_valid_any_type(const pv_image *image)
{
    size_t elements, bytes;
    if (!image || !image->data || image->width <= 0 || image->height <= 0)
        return 0;
    if (image->stride < image->width || pv_pixel_size(image->type) == 0)
        return 0;
    if (!span_elements((size_t)image->height, (size_t)image->stride, (size_t)image->width,
                       &elements))
        return 0;
    return pv_size_mul(elements, pv_pixel_size(image->type), &bytes) && bytes <= PTRDIFF_MAX;
}

int pv_image_is_valid(const pv_image *image)
{
    return pv_image_is_valid_any_type(image) && pv_pixel_is_grey(image->type);
}

size_t pv_volume_sample_size(pv_volume_type type)
{
    switch (type) {
    case PV_VOLUME_F32: return sizeof(float);
    case PV_VOLUME_U16: return sizeof(uint16_t);
    }
    return 0;
}

int pv_volume_is_valid_any_type(const pv_volume *volume)
{
    size_t plane, elements, bytes;
    if (!volume || !volume->data || volume->nx <= 0 || volume->ny <= 0 || volume->nz <= 0)
        return 0;
    if (pv_volume_sample_size(volume->type) == 0 || volume->stride_y < volume->nx)
        return 0;
    if (!span_elements((size_t)volume->ny, (size_t)volume->stride_y, (size_t)volume->nx, &plane))
        return 0;
    if (volume->stride_z < (ptrdiff_t)plane && volume->nz > 1)
        return 0;
    if (!span_elements((size_t)volume->nz, (size_t)volume->stride_z, plane, &elements))
        return 0;
    return pv_size_mul(elements, pv_volume_sample_size(volume->type), &bytes) &&
           bytes <= PTRDIFF_MAX;
}

int pv_volume_is_valid(const pv_volume *volume)
{
    return pv_volume_is_valid_any_type(volume) && volume->type == PV_VOLUME_F32;
}

static const char *volume_type_name(pv_volume_type type)
{
    return type == PV_VOLUME_U16 ? "u16" : "f32";
}

/* The one check of a volume argument: each refusal names what is wrong,
 * so that a u16 volume handed to an operation that takes floats only says
 * so rather than "not a valid volume". */
pv_status pv_check_volume(pv_context *ctx, const char *op, const char *name,
                          const pv_volume *volume, unsigned accepted)
{
    if (!volume || !volume->data)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or has no data", op, name);
    if (pv_volume_sample_size(volume->type) == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s has an unknown sample type (%d)", op, name,
                       (int)volume->type);
    const unsigned mask = volume->type == PV_VOLUME_U16 ? PV_ACCEPT_U16 : PV_ACCEPT_F32;
    if (!(accepted & mask))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is a %s volume; this operation takes f32 volumes only "
                       "(convert it first)",
                       op, name, volume_type_name(volume->type));
    if (!pv_volume_is_valid_any_type(volume))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is not a valid volume (size %dx%dx%d, strides %td, %td)", op,
                       name, volume->nx, volume->ny, volume->nz, volume->stride_y,
                       volume->stride_z);
    return PV_OK;
}

int pv_images_same_size(const pv_image *a, const pv_image *b)
{
    return a->width == b->width && a->height == b->height;
}

int pv_volumes_same_size(const pv_volume *a, const pv_volume *b)
{
    return a->nx == b->nx && a->ny == b->ny && a->nz == b->nz;
}

size_t pv_image_span(const pv_image *image)
{
    size_t elements = (size_t)(image->height - 1) * (size_t)image->stride + (size_t)image->width;
    return elements * pv_pixel_size(image->type);
}

static uintptr_t volume_span(const pv_volume *volume)
{
    size_t elements = (size_t)(volume->ny - 1) * (size_t)volume->stride_y + (size_t)volume->nx;
    if (volume->nz > 1)
        elements += (size_t)(volume->nz - 1) * (size_t)volume->stride_z;
    return (uintptr_t)(elements * pv_volume_sample_size(volume->type));
}

static int ranges_overlap(const void *a, uintptr_t a_bytes, const void *b, uintptr_t b_bytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

int pv_images_overlap(const pv_image *a, const pv_image *b)
{
    return ranges_overlap(a->data, pv_image_span(a), b->data, pv_image_span(b));
}

int pv_volumes_overlap(const pv_volume *a, const pv_volume *b)
{
    return ranges_overlap(a->data, volume_span(a), b->data, volume_span(b));
}

/* A zeroed block of dims[0] x ... x dims[count - 1] elements of `element`
 * bytes for `function`, refusing a size that overflows or exceeds
 * PTRDIFF_MAX bytes. */
static pv_status alloc_zeroed(const char *function, const size_t *dims, int count,
                              size_t element, void **data)
{
    size_t elements = 1, bytes;
    for (int i = 0; i < count; i++)
        if (!pv_size_mul(elements, dims[i], &elements))
            return pv_fail(NULL, PV_ERR_NOMEM, "%s: the size overflows", function);
    if (!pv_size_mul(elements, element, &bytes) || bytes > PTRDIFF_MAX)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: %zu elements of %zu bytes overflow", function,
                       elements, element);
    *data = calloc(elements, element);
    if (!*data)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: cannot allocate %zu bytes", function, bytes);
    return PV_OK;
}

pv_status pv_image_alloc(pv_image *image, int width, int height, pv_pixel_type type)
{
    void *data = NULL;
    if (!image || width <= 0 || height <= 0 || pv_pixel_size(type) == 0)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_image_alloc: bad image pointer, size %dx%d or type",
                       width, height);
    const size_t dims[2] = {(size_t)width, (size_t)height};
    pv_status status = alloc_zeroed("pv_image_alloc", dims, 2, pv_pixel_size(type), &data);
    if (status == PV_OK)
        *image = pv_image_wrap(data, width, height, type);
    return status;
}

static pv_status volume_alloc(const char *function, pv_volume *volume, int nx, int ny, int nz,
                              pv_volume_type type)
{
    void *data = NULL;
    if (!volume || nx <= 0 || ny <= 0 || nz <= 0)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: bad volume pointer or size %dx%dx%d", function,
                       nx, ny, nz);
    const size_t dims[3] = {(size_t)nx, (size_t)ny, (size_t)nz};
    pv_status status = alloc_zeroed(function, dims, 3, pv_volume_sample_size(type), &data);
    if (status == PV_OK)
        *volume = type == PV_VOLUME_U16 ? pv_volume_wrap_u16(data, nx, ny, nz)
                                        : pv_volume_wrap(data, nx, ny, nz);
    return status;
}

pv_status pv_volume_alloc(pv_volume *volume, int nx, int ny, int nz)
{
    return volume_alloc("pv_volume_alloc", volume, nx, ny, nz, PV_VOLUME_F32);
}

pv_status pv_volume_alloc_u16(pv_volume *volume, int nx, int ny, int nz)
{
    return volume_alloc("pv_volume_alloc_u16", volume, nx, ny, nz, PV_VOLUME_U16);
}

/* The free functions take NULL, and leave data NULL so that a second call
 * is harmless. */
void pv_image_free(pv_image *image)
{
    if (!image)
        return;
    free(image->data);
    image->data = NULL;
}

void pv_volume_free(pv_volume *volume)
{
    if (!volume)
        return;
    free(volume->data);
    volume->data = NULL;
}

pv_image pv_image_wrap(void *data, int width, int height, pv_pixel_type type)
{
    pv_image image = {width, height, width, type, data};
    return image;
}

pv_volume pv_volume_wrap(float *data, int nx, int ny, int nz)
{
    pv_volume volume = {nx, ny, nz, nx, (ptrdiff_t)nx * ny, {data}, PV_VOLUME_F32};
    return volume;
}

pv_volume pv_volume_wrap_u16(uint16_t *data, int nx, int ny, int nz)
{
    pv_volume volume = {nx, ny, nz, nx, (ptrdiff_t)nx * ny, {.data_u16 = data}, PV_VOLUME_U16};
    return volume;
}

/* Rec. 601 luma of an interleaved RGB pixel, in float (as pv_to_grey). */
static float luma_of(float r, float g, float b)
{
    return 0.299f * r + 0.587f * g + 0.114f * b;
}

float pv_image_get(const pv_image *image, int x, int y)
{
    if (!pv_image_is_valid_any_type(image) || x < 0 || y < 0 || x >= image->width ||
        y >= image->height)
        return NAN;
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    const uint8_t *u8 = image->data;
    const uint16_t *u16 = image->data;
    switch (image->type) {
    case PV_PIXEL_U8: return u8[i];
    case PV_PIXEL_U16: return u16[i];
    case PV_PIXEL_RGB8: return luma_of(u8[3 * i], u8[3 * i + 1], u8[3 * i + 2]);
    case PV_PIXEL_RGB16: return luma_of(u16[3 * i], u16[3 * i + 1], u16[3 * i + 2]);
    case PV_PIXEL_F32: break;
    }
    return ((const float *)image->data)[i];
}

pv_status pv_image_alloc_like(pv_image *out, const pv_image *like, pv_pixel_type type)
{
    return pv_image_alloc(out, like->width, like->height, type);
}

pv_status pv_volume_alloc_like(pv_volume *out, const pv_volume *like)
{
    return pv_volume_alloc(out, like->nx, like->ny, like->nz);
}

/* ---- the finite-input policy ------------------------------------------- */

/* Index of the first non-finite value of a row, or -1.  The row is first
 * folded branch-free (the common case: all finite, one pass at memory
 * speed), then searched only when something was found. */
static ptrdiff_t first_non_finite(const float *row, int count)
{
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad |= !isfinite(row[i]);
    if (!bad)
        return -1;
    for (int i = 0; i < count; i++)
        if (!isfinite(row[i]))
            return i;
    return -1;
}

pv_status pv_check_finite_image(pv_context *ctx, const char *op, const char *name,
                                const pv_image *image)
{
    /* A device-buffer call's pixels are on the device: not read here. */
    if (image->type != PV_PIXEL_F32 || (ctx && ctx->device_call))
        return PV_OK;
    for (int y = 0; y < image->height; y++) {
        const float *row = (const float *)image->data + (ptrdiff_t)y * image->stride;
        ptrdiff_t x = first_non_finite(row, image->width);
        if (x >= 0)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: %s pixel (%d, %d) is %s; inputs must be finite", op, name,
                           (int)x, y, isnan(row[x]) ? "NaN" : "infinite");
    }
    return PV_OK;
}

pv_status pv_check_finite_volume(pv_context *ctx, const char *op, const char *name,
                                 const pv_volume *volume)
{
    /* integers are finite; a device-buffer call's samples are not in host
     * memory (interop.h says they are not scanned) */
    if (volume->type != PV_VOLUME_F32 || (ctx && ctx->device_call))
        return PV_OK;
    for (int z = 0; z < volume->nz; z++)
        for (int y = 0; y < volume->ny; y++) {
            const float *row = volume->data + (ptrdiff_t)z * volume->stride_z +
                               (ptrdiff_t)y * volume->stride_y;
            ptrdiff_t x = first_non_finite(row, volume->nx);
            if (x >= 0)
                return pv_fail(ctx, PV_ERR_INVALID,
                               "%s: %s voxel (%d, %d, %d) is %s; inputs must be finite", op, name,
                               (int)x, y, z, isnan(row[x]) ? "NaN" : "infinite");
        }
    return PV_OK;
}

/* ---- u16 volumes as floats on the host ----------------------------------- */

pv_status pv_volume_as_f32(pv_context *ctx, const pv_volume *volume, pv_volume *view,
                           float **copy)
{
    *copy = NULL;
    if (volume->type == PV_VOLUME_F32) {
        *view = *volume;
        return PV_OK;
    }
    const int nx = volume->nx, ny = volume->ny, nz = volume->nz;
    const size_t dims[3] = {(size_t)nx, (size_t)ny, (size_t)nz};
    void *data = NULL;
    pv_status status = alloc_zeroed("u16 volume to float", dims, 3, sizeof(float), &data);
    if (status != PV_OK)
        return pv_fail(ctx, status, "no host memory to convert a %dx%dx%d u16 volume to float",
                       nx, ny, nz);
    float *out = data;
    const long rows = (long)ny * nz;
    const int threads = ctx && ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (rows * (double)nx > 65536)
    for (long r = 0; r < rows; r++) {
        const uint16_t *in = volume->data_u16 + (r / ny) * volume->stride_z +
                             (r % ny) * volume->stride_y;
        float *dst = out + (size_t)r * (size_t)nx;
        for (int x = 0; x < nx; x++)
            dst[x] = (float)in[x];
    }
    *copy = out;
    *view = pv_volume_wrap(out, nx, ny, nz);
    return PV_OK;
}

/* ---------------------------------------------------------- batch overlaps */

typedef struct item_span {
    uintptr_t start, end;
    int output;
} item_span;

static int span_order(const void *a, const void *b)
{
    const item_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The spans sorted by start, each compared with the furthest end reached
 * so far by an output and by any item, so that the check takes n log n
 * time however many items a batch has. */
pv_status pv_batch_outputs_overlap(const pv_image *const *items, const unsigned char *is_output,
                                   size_t count, int *shared)
{
    item_span *spans = malloc(count * sizeof *spans);
    if (!spans)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < count; i++)
        spans[i] = (item_span){(uintptr_t)items[i]->data,
                               (uintptr_t)items[i]->data + pv_image_span(items[i]),
                               is_output[i]};
    qsort(spans, count, sizeof *spans, span_order);
    uintptr_t any_end = 0, output_end = 0;
    *shared = 0;
    for (size_t i = 0; i < count && !*shared; i++) {
        *shared = spans[i].start < output_end || (spans[i].output && spans[i].start < any_end);
        any_end = spans[i].end > any_end ? spans[i].end : any_end;
        if (spans[i].output && spans[i].end > output_end)
            output_end = spans[i].end;
    }
    free(spans);
    return PV_OK;
}
