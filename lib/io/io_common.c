/* Image I/O helpers that every format's reader and writer shares (see
 * io.h): opening input files and trusting their size, decoding samples,
 * folding colour to grey, storing rows, and writing output files that a
 * failure removes. */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ======================================================== input files */

pv_status pv_io_open_input(const char *op, const char *path, pv_io_file *file)
{
    FILE *stream = NULL;
    uint64_t size = 0;
    int opened = pv_open_regular(path, &stream, &size);
    if (opened == PV_NOT_REGULAR)
        return pv_fail(NULL, PV_ERR_IO, "%s: '%s' is not a regular file", op, path);
    if (opened != 0)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot open '%s': %s", op, path,
                       pv_open_regular_reason(opened));
    file->path = path;
    file->stream = stream;
    file->size = size;
    return PV_OK;
}

size_t pv_io_bytes_left(const pv_io_file *file)
{
    off_t position = ftello(file->stream);
    if (position < 0 || (uint64_t)position >= file->size)
        return 0;
    uint64_t left = file->size - (uint64_t)position;
#if SIZE_MAX < UINT64_MAX
    if (left > SIZE_MAX)
        return SIZE_MAX;
#endif
    return (size_t)left;
}

pv_status pv_io_read_failure(const pv_io_file *file, const char *what)
{
    if (ferror(file->stream))
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s': read error in %s", file->path, what);
    return pv_fail(NULL, PV_ERR_FORMAT, "pv_image_read: '%s': truncated: the file ends in %s",
                   file->path, what);
}

pv_status pv_io_alloc_output(const pv_io_file *file, pv_image *image, int width, int height,
                             pv_pixel_type type)
{
    pv_status status = pv_image_alloc(image, width, height, type);
    if (status != PV_OK)
        return pv_fail(NULL, status, "pv_image_read: '%s': cannot allocate a %dx%d image",
                       file->path, width, height);
    return PV_OK;
}

/* =================================================== samples and rows */

size_t pv_io_sample_bytes(pv_io_sample_kind kind)
{
    switch (kind) {
    case PV_IO_SAMPLE_U8: return 1;
    case PV_IO_SAMPLE_U16_BE: return 2;
    case PV_IO_SAMPLE_F32_LE:
    case PV_IO_SAMPLE_F32_BE: return 4;
    }
    return 0;
}

static float float_from_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | (uint32_t)p[0];
}

void pv_io_unpack_samples(const uint8_t *raw, size_t count, pv_io_sample_kind kind, float *out)
{
    size_t i;
    switch (kind) {
    case PV_IO_SAMPLE_U8:
        for (i = 0; i < count; i++)
            out[i] = raw[i];
        break;
    case PV_IO_SAMPLE_U16_BE:
        for (i = 0; i < count; i++)
            out[i] = (float)((unsigned)raw[2 * i] << 8 | raw[2 * i + 1]);
        break;
    case PV_IO_SAMPLE_F32_LE:
        for (i = 0; i < count; i++)
            out[i] = float_from_bits(load_le32(raw + 4 * i));
        break;
    case PV_IO_SAMPLE_F32_BE:
        for (i = 0; i < count; i++)
            out[i] = float_from_bits(load_be32(raw + 4 * i));
        break;
    }
}

static void samples_to_grey(float *samples, int width, int channels)
{
    if (channels != 3)
        return;
    for (int x = 0; x < width; x++) {
        const float *rgb = samples + 3 * (size_t)x;
        samples[x] = pv_io_luma(rgb[0], rgb[1], rgb[2]);
    }
}

/* Round half up and clamp to 0..65535; NaN gives 0. */
static uint16_t to_u16(float value)
{
    if (!(value > 0.0f))
        return 0;
    if (value >= 65535.0f)
        return 65535;
    return (uint16_t)(value + 0.5f);
}

/* 8-bit output: deep integer data rescaled by 255 / maxval. */
static uint8_t sample_to_u8(float value, unsigned maxval)
{
    return pv_io_to_u8(maxval <= 255 ? value : value * 255.0f / (float)maxval);
}

/* 16-bit output: what 8-bit output would hold times 257 for data of up to
 * 8 bits (and floats), deep integer data rescaled by 65535 / maxval. */
static uint16_t sample_to_u16(float value, unsigned maxval)
{
    return to_u16(maxval <= 255 ? value * 257.0f : value * 65535.0f / (float)maxval);
}

/* Channel c of pixel x of a row of 1 (grey, replicated) or 3 channels. */
static float channel_of(const float *samples, int channels, int x, int c)
{
    return channels == 3 ? samples[3 * (size_t)x + (size_t)c] : samples[x];
}

static void store_rgb_row(pv_image *image, int y, const float *samples, int channels,
                          unsigned maxval)
{
    const ptrdiff_t start = 3 * (ptrdiff_t)y * image->stride;
    uint8_t *rgb8 = (uint8_t *)image->data + start;
    uint16_t *rgb16 = (uint16_t *)image->data + start;
    for (int x = 0; x < image->width; x++)
        for (int c = 0; c < 3; c++) {
            float v = channel_of(samples, channels, x, c);
            if (image->type == PV_PIXEL_RGB8)
                rgb8[3 * x + c] = sample_to_u8(v, maxval);
            else
                rgb16[3 * x + c] = sample_to_u16(v, maxval);
        }
}

static void store_grey_row(pv_image *image, int y, const float *grey, unsigned maxval)
{
    const ptrdiff_t start = (ptrdiff_t)y * image->stride;
    if (image->type == PV_PIXEL_F32) {
        memcpy((float *)image->data + start, grey, (size_t)image->width * sizeof(float));
        return;
    }
    uint8_t *u8 = (uint8_t *)image->data + start;
    uint16_t *u16 = (uint16_t *)image->data + start;
    for (int x = 0; x < image->width; x++) {
        if (image->type == PV_PIXEL_U16)
            u16[x] = sample_to_u16(grey[x], maxval);
        else
            u8[x] = sample_to_u8(grey[x], maxval);
    }
}

void pv_io_store_samples(pv_image *image, int y, float *samples, int channels, unsigned maxval)
{
    if (image->type == PV_PIXEL_RGB8 || image->type == PV_PIXEL_RGB16) {
        store_rgb_row(image, y, samples, channels, maxval);
        return;
    }
    samples_to_grey(samples, image->width, channels);
    store_grey_row(image, y, samples, maxval);
}

void pv_io_row_to_u8(const pv_image *image, int y, uint8_t *out)
{
    if (image->type == PV_PIXEL_U8) {
        memcpy(out, (const uint8_t *)image->data + (ptrdiff_t)y * image->stride,
               (size_t)image->width);
        return;
    }
    const float *row = (const float *)image->data + (ptrdiff_t)y * image->stride;
    for (int x = 0; x < image->width; x++)
        out[x] = pv_io_to_u8(row[x]);
}

/* ======================================================= output files */

static pv_status check_write_args(const char *function, const char *path, const pv_image *image,
                                  int (*is_valid)(const pv_image *))
{
    if (!path)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL", function);
    if (!is_valid(image))
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: '%s': the image is NULL or malformed (data, size, stride or type)",
                       function, path);
    return PV_OK;
}

pv_status pv_io_check_write_args(const char *function, const char *path, const pv_image *image)
{
    return check_write_args(function, path, image, pv_image_is_valid);
}

pv_status pv_io_check_write_args_any_type(const char *function, const char *path,
                                          const pv_image *image)
{
    return check_write_args(function, path, image, pv_image_is_valid_any_type);
}

pv_status pv_io_open_output(pv_io_output *out, const char *function, const char *path)
{
    struct stat info;
    FILE *stream = fopen(path, "wb");
    if (!stream)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot create '%s': %s", function, path,
                       strerror(errno));
    out->function = function;
    out->path = path;
    out->stream = stream;
    /* Only a regular file may be removed after a failure: the path could
     * name a device such as /dev/full. */
    out->regular = fstat(fileno(stream), &info) == 0 && S_ISREG(info.st_mode);
    return PV_OK;
}

pv_status pv_io_write_bytes(pv_io_output *out, const void *bytes, size_t count)
{
    if (fwrite(bytes, 1, count, out->stream) == count)
        return PV_OK;
    return pv_fail(NULL, PV_ERR_IO, "%s: writing '%s' failed: %s", out->function, out->path,
                   strerror(errno));
}

pv_status pv_io_finish_output(pv_io_output *out, pv_status status)
{
    int close_failed = fclose(out->stream) != 0;
    int error = errno;
    out->stream = NULL;
    if (status == PV_OK && close_failed)
        status = pv_fail(NULL, PV_ERR_IO, "%s: writing '%s' failed: %s", out->function,
                         out->path, strerror(error));
    if (status != PV_OK && out->regular)
        remove(out->path);
    return status;
}
