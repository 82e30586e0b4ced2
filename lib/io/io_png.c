/* PNG reading and writing through libpng.
 *
 * libpng reports errors by longjmp.  Every resource a read or write holds
 * lives in a struct that belongs to the caller of the function that calls
 * setjmp, so after a longjmp nothing is lost and no local variable of the
 * setjmp caller needs to survive: the caller frees what the struct holds
 * on every path. */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

const uint8_t pv_io_png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

#define PNG_MESSAGE_SIZE 200

/* libpng's error_ptr is the message buffer of the read or write. */
static void record_png_error(png_structp png, png_const_charp message)
{
    char *slot = png_get_error_ptr(png);
    snprintf(slot, PNG_MESSAGE_SIZE, "%s", message ? message : "unknown libpng error");
    png_longjmp(png, 1);
}

/* The library never prints, and libpng's warnings are about files it can
 * still decode. */
static void ignore_png_warning(png_structp png, png_const_charp message)
{
    (void)png;
    (void)message;
}

/* ================================================================ reading */

typedef struct png_reader {
    pv_io_file *file;
    pv_pixel_type type;
    png_structp png;
    png_infop info;
    pv_image image;             /* the output while it is decoded */
    int rows_allocated;         /* of image: it grows as rows arrive */
    uint64_t idat_bytes;
    uint8_t *rows;              /* one row, or every row of an interlaced image */
    size_t row_bytes;           /* after the transforms */
    float *samples;
    int channels;               /* after the transforms: 1 or 3 */
    pv_io_sample_kind kind;
    unsigned maxval;
    char message[PNG_MESSAGE_SIZE];
} png_reader;

static pv_status png_read_error(const png_reader *r)
{
    if (ferror(r->file->stream))
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s': read error (%s)", r->file->path,
                       r->message);
    return pv_fail(NULL, PV_ERR_FORMAT, "pv_image_read: '%s': bad or truncated PNG: %s",
                   r->file->path, r->message);
}

/* The bytes of image data the file really holds: the sum of its IDAT
 * chunks' lengths, found by walking the chunk list (junk after IEND, or
 * ancillary chunks, do not count).  The stream is left at the start. */
static pv_status count_idat_bytes(png_reader *r)
{
    pv_io_file *file = r->file;
    uint8_t head[8];
    uint64_t position = sizeof pv_io_png_signature;
    r->idat_bytes = 0;
    while (position + 12 <= file->size) {
        if (fseeko(file->stream, (off_t)position, SEEK_SET) != 0 ||
            fread(head, 1, sizeof head, file->stream) != sizeof head)
            break;
        uint64_t length = (uint64_t)head[0] << 24 | (uint64_t)head[1] << 16 |
                          (uint64_t)head[2] << 8 | head[3];
        if (memcmp(head + 4, "IDAT", 4) == 0)
            r->idat_bytes += length;
        if (memcmp(head + 4, "IEND", 4) == 0)
            break;
        position += 12 + length; /* length, type, data, CRC */
    }
    if (fseeko(file->stream, 0, SEEK_SET) != 0)
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s': cannot seek: %s", file->path,
                       strerror(errno));
    return PV_OK;
}

/* Deflate cannot expand data more than PV_IO_MAX_DEFLATE_RATIO times, so
 * the IDAT bytes present bound the pixels the file can really hold,
 * whatever the header says (bits counted before any expansion). */
static pv_status check_png_size(const png_reader *r)
{
    png_uint_32 width = png_get_image_width(r->png, r->info);
    png_uint_32 height = png_get_image_height(r->png, r->info);
    uint64_t bits_per_pixel =
        (uint64_t)png_get_bit_depth(r->png, r->info) * png_get_channels(r->png, r->info);
    uint64_t row_bits = (uint64_t)width * bits_per_pixel;
    uint64_t ratio_bits = 8 * (uint64_t)PV_IO_MAX_DEFLATE_RATIO;
    int fits = width > 0 && height > 0 && width <= INT_MAX && height <= INT_MAX;
    if (fits && r->idat_bytes <= UINT64_MAX / ratio_bits)
        fits = row_bits <= r->idat_bytes * ratio_bits / height;
    if (!fits)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the PNG header claims %lux%lu pixels, more than "
                       "its %llu bytes of image data (IDAT) can hold", r->file->path,
                       (unsigned long)width, (unsigned long)height,
                       (unsigned long long)r->idat_bytes);
    return PV_OK;
}

/* Ask libpng for 8- or 16-bit grey or RGB rows; returns the number of
 * interlace passes. */
static int set_grey_transforms(png_reader *r)
{
    int color = png_get_color_type(r->png, r->info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(r->png);
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(r->png, r->info) < 8)
        png_set_expand_gray_1_2_4_to_8(r->png);
    /* Unconditional: expanding a palette with a tRNS chunk adds alpha too. */
    png_set_strip_alpha(r->png);
    int passes = png_set_interlace_handling(r->png);
    png_read_update_info(r->png, r->info);
    return passes;
}

static pv_status allocate_png_buffers(png_reader *r, int passes)
{
    int width = (int)png_get_image_width(r->png, r->info);
    int height = (int)png_get_image_height(r->png, r->info);
    int depth = png_get_bit_depth(r->png, r->info);
    size_t row_count = passes > 1 ? (size_t)height : 1, total;
    r->channels = png_get_channels(r->png, r->info);
    if ((r->channels != 1 && r->channels != 3) || (depth != 8 && depth != 16))
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': unsupported PNG layout (%d channels of %d bits)",
                       r->file->path, r->channels, depth);
    r->kind = depth == 16 ? PV_IO_SAMPLE_U16_BE : PV_IO_SAMPLE_U8;
    r->maxval = depth == 16 ? 65535u : 255u;
    r->row_bytes = png_get_rowbytes(r->png, r->info);
    if (pv_size_mul(r->row_bytes, row_count, &total))
        r->rows = malloc(total);
    r->samples = malloc((size_t)width * (size_t)r->channels * sizeof(float));
    if (!r->rows || !r->samples)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': cannot allocate row buffers",
                       r->file->path);
    r->image = pv_image_wrap(NULL, width, height, r->type);
    r->rows_allocated = 0;
    return PV_OK;
}

/* Room in the output for row y, growing it geometrically: a file whose
 * data stops early (or is junk) costs memory only for the rows it really
 * delivered, not for what its header claims. */
static pv_status reserve_row(png_reader *r, int y)
{
    if (y < r->rows_allocated)
        return PV_OK;
    int height = r->image.height;
    int rows = r->rows_allocated > height / 2 ? height : 2 * r->rows_allocated;
    if (rows < 16)
        rows = height < 16 ? height : 16;
    if (rows <= y)
        rows = y + 1;
    size_t row_bytes = (size_t)r->image.width * pv_pixel_size(r->image.type), bytes;
    void *grown = pv_size_mul(row_bytes, (size_t)rows, &bytes) ? realloc(r->image.data, bytes)
                                                                : NULL;
    if (!grown)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': cannot allocate a %dx%d image",
                       r->file->path, r->image.width, height);
    r->image.data = grown;
    r->rows_allocated = rows;
    return PV_OK;
}

static pv_status store_png_row(png_reader *r, const uint8_t *row, int y)
{
    pv_status status = reserve_row(r, y);
    if (status != PV_OK)
        return status;
    int width = r->image.width;
    pv_io_unpack_samples(row, (size_t)width * (size_t)r->channels, r->kind, r->samples);
    pv_io_store_samples(&r->image, y, r->samples, r->channels, r->maxval);
    return PV_OK;
}

/* libpng merges the passes of an interlaced image into rows it is given
 * again in each pass, so those need the whole image; others stream. */
static pv_status read_png_rows(png_reader *r, int passes)
{
    int height = r->image.height;
    int interlaced = passes > 1;
    pv_status status = PV_OK;
    for (int pass = 0; pass < passes; pass++) {
        for (int y = 0; y < height && status == PV_OK; y++) {
            uint8_t *row = r->rows + (interlaced ? (size_t)y * r->row_bytes : 0);
            png_read_row(r->png, row, NULL);
            if (!interlaced)
                status = store_png_row(r, row, y);
        }
    }
    for (int y = 0; interlaced && y < height && status == PV_OK; y++)
        status = store_png_row(r, r->rows + (size_t)y * r->row_bytes, y);
    return status;
}

/* The header, read and checked against the size limits; libpng's errors
 * jump to the caller's setjmp, which must be set. */
static pv_status read_checked_info(png_reader *r)
{
    png_init_io(r->png, r->file->stream);
    png_read_info(r->png, r->info);
    return check_png_size(r);
}

static pv_status decode_png(png_reader *r)
{
    if (setjmp(png_jmpbuf(r->png)))
        return png_read_error(r);
    pv_status status = read_checked_info(r);
    if (status != PV_OK)
        return status;
    int passes = set_grey_transforms(r);
    status = allocate_png_buffers(r, passes);
    if (status != PV_OK)
        return status;
    status = read_png_rows(r, passes);
    if (status != PV_OK)
        return status;
    /* Reaching IEND proves the file is complete. */
    png_read_end(r->png, NULL);
    return PV_OK;
}

pv_status pv_io_read_png(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    png_reader r;
    pv_status status;
    memset(&r, 0, sizeof r);
    r.file = file;
    r.type = type;
    r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r.message, record_png_error,
                                   ignore_png_warning);
    r.info = r.png ? png_create_info_struct(r.png) : NULL;
    status = count_idat_bytes(&r);
    if (status == PV_OK && r.info)
        status = decode_png(&r);
    else if (status == PV_OK)
        status = pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': cannot create libpng state",
                         file->path);
    png_destroy_read_struct(&r.png, &r.info, NULL);
    free(r.rows);
    free(r.samples);
    if (status == PV_OK)
        *out = r.image;
    else
        pv_image_free(&r.image);
    return status;
}

/* The header alone, checked against the IDAT bytes as a read would be. */
static pv_status read_png_header_info(png_reader *r, pv_image_info *info)
{
    if (setjmp(png_jmpbuf(r->png)))
        return png_read_error(r);
    pv_status status = read_checked_info(r);
    if (status != PV_OK)
        return status;
    int color = png_get_color_type(r->png, r->info);
    int channels = png_get_channels(r->png, r->info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        channels = png_get_valid(r->png, r->info, PNG_INFO_tRNS) ? 4 : 3;
    info->format = PV_IMAGE_FORMAT_PNG;
    info->width = (int)png_get_image_width(r->png, r->info);
    info->height = (int)png_get_image_height(r->png, r->info);
    info->channels = channels;
    info->bits = png_get_bit_depth(r->png, r->info);
    return PV_OK;
}

pv_status pv_io_info_png(pv_io_file *file, pv_image_info *info)
{
    png_reader r;
    memset(&r, 0, sizeof r);
    r.file = file;
    r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r.message, record_png_error,
                                   ignore_png_warning);
    r.info = r.png ? png_create_info_struct(r.png) : NULL;
    pv_status status = count_idat_bytes(&r);
    if (status == PV_OK && r.info)
        status = read_png_header_info(&r, info);
    else if (status == PV_OK)
        status = pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read_info: '%s': cannot create libpng "
                         "state", file->path);
    png_destroy_read_struct(&r.png, &r.info, NULL);
    return status;
}

/* ================================================================ writing */

typedef struct png_writer {
    pv_io_output *out;
    const pv_image *image;
    png_structp png;
    png_infop info;
    uint8_t *row;
    char message[PNG_MESSAGE_SIZE];
} png_writer;

static pv_status png_write_error(const png_writer *w)
{
    if (ferror(w->out->stream))
        return pv_fail(NULL, PV_ERR_IO, "%s: writing '%s' failed: %s (%s)", w->out->function,
                       w->out->path, w->message, strerror(errno));
    return pv_fail(NULL, PV_ERR_IO, "%s: writing '%s' failed: %s", w->out->function,
                   w->out->path, w->message);
}

/* The PNG colour type and bit depth that keep an image's pixel type: 8-bit
 * grey for U8 and F32 (clamped and rounded), else the type's own. */
static void png_layout_of(pv_pixel_type type, int *colour_type, int *depth)
{
    *colour_type = type == PV_PIXEL_RGB8 || type == PV_PIXEL_RGB16 ? PNG_COLOR_TYPE_RGB
                                                                   : PNG_COLOR_TYPE_GRAY;
    *depth = type == PV_PIXEL_U16 || type == PV_PIXEL_RGB16 ? 16 : 8;
}

/* Row y as the bytes of a PNG row: 16-bit samples big-endian. */
static void pack_png_row(const pv_image *image, int y, uint8_t *out)
{
    const size_t samples = (size_t)image->width * (image->type == PV_PIXEL_RGB16 ? 3 : 1);
    const void *row = (const char *)image->data +
                      (ptrdiff_t)y * image->stride * (ptrdiff_t)pv_pixel_size(image->type);
    if (image->type == PV_PIXEL_U16 || image->type == PV_PIXEL_RGB16) {
        const uint16_t *deep = row;
        for (size_t i = 0; i < samples; i++) {
            out[2 * i] = (uint8_t)(deep[i] >> 8);
            out[2 * i + 1] = (uint8_t)deep[i];
        }
    } else if (image->type == PV_PIXEL_RGB8) {
        memcpy(out, row, 3 * (size_t)image->width);
    } else {
        pv_io_row_to_u8(image, y, out);
    }
}

static pv_status encode_png(png_writer *w)
{
    int colour_type, depth;
    if (setjmp(png_jmpbuf(w->png)))
        return png_write_error(w);
    png_init_io(w->png, w->out->stream);
    /* PNG allows 2^31 - 1 pixels a side; libpng's default limit is lower. */
    png_set_user_limits(w->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_layout_of(w->image->type, &colour_type, &depth);
    png_set_IHDR(w->png, w->info, (png_uint_32)w->image->width, (png_uint_32)w->image->height,
                 depth, colour_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(w->png, w->info);
    for (int y = 0; y < w->image->height; y++) {
        pack_png_row(w->image, y, w->row);
        png_write_row(w->png, w->row);
    }
    png_write_end(w->png, NULL);
    return PV_OK;
}

pv_status pv_image_write_png(const char *path, const pv_image *image)
{
    static const char function[] = "pv_image_write_png";
    pv_status status = pv_io_check_write_args_any_type(function, path, image);
    if (status != PV_OK)
        return status;
    png_writer w;
    pv_io_output out;
    memset(&w, 0, sizeof w);
    w.out = &out;
    w.image = image;
    /* A row's bytes: the pixel type's, one for F32 (written as 8-bit). */
    size_t pixel_bytes = image->type == PV_PIXEL_F32 ? 1 : pv_pixel_size(image->type);
    w.row = malloc((size_t)image->width * pixel_bytes);
    w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, w.message, record_png_error,
                                    ignore_png_warning);
    w.info = w.png ? png_create_info_struct(w.png) : NULL;
    if (!w.row || !w.info)
        status = pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot allocate libpng state", function,
                         path);
    else
        status = pv_io_open_output(&out, function, path);
    if (status == PV_OK)
        status = pv_io_finish_output(&out, encode_png(&w));
    png_destroy_write_struct(&w.png, &w.info);
    free(w.row);
    return status;
}
