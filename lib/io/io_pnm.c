/* Image I/O: the Netpbm formats (PGM/PPM binary and ASCII, PFM), on the
 * shared file, sample and row helpers of io_common.c (see io.h). */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ================================================= Netpbm header tokens */

enum token_result { TOKEN_OK, TOKEN_END, TOKEN_BAD };

static int is_pnm_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int skip_comment(FILE *stream)
{
    int c;
    do
        c = getc(stream);
    while (c != EOF && c != '\n' && c != '\r');
    return c;
}

/* The next character after whitespace and '#' comments, left unread. */
static int peek_after_blanks(FILE *stream)
{
    for (;;) {
        int c = getc(stream);
        if (c == '#')
            c = skip_comment(stream);
        if (c == EOF)
            return EOF;
        if (!is_pnm_space(c))
            return ungetc(c, stream);
    }
}

/* A decimal token of at most `limit` (>= 9), ended by whitespace, a
 * comment or the end of the file; the terminator is left unread. */
static enum token_result read_uint_token(FILE *stream, unsigned long limit, unsigned long *value)
{
    int c = peek_after_blanks(stream);
    if (c == EOF)
        return TOKEN_END;
    if (!is_digit(c))
        return TOKEN_BAD;
    unsigned long v = 0;
    while ((c = getc(stream)) != EOF && is_digit(c)) {
        unsigned long digit = (unsigned long)(c - '0');
        if (v > (limit - digit) / 10)
            return TOKEN_BAD;
        v = v * 10 + digit;
    }
    if (c != EOF) {
        if (!is_pnm_space(c) && c != '#')
            return TOKEN_BAD;
        ungetc(c, stream);
    }
    *value = v;
    return TOKEN_OK;
}

static pv_status read_header_number(pv_io_file *file, const char *field, unsigned long min,
                                    unsigned long limit, unsigned long *value)
{
    enum token_result result = read_uint_token(file->stream, limit, value);
    if (result == TOKEN_END)
        return pv_io_read_failure(file, "the header");
    if (result == TOKEN_BAD || *value < min)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the header's %s is not a number from %lu to %lu",
                       file->path, field, min, limit);
    return PV_OK;
}

/* Binary data starts after exactly one whitespace character. */
static pv_status read_header_end(pv_io_file *file)
{
    int c = getc(file->stream);
    if (c == EOF)
        return pv_io_read_failure(file, "the header");
    if (!is_pnm_space(c))
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the header does not end with a whitespace character",
                       file->path);
    return PV_OK;
}

/* -1 or +1 for a non-zero decimal number, 0 for anything else.  Parsed by
 * hand because strtod would depend on the locale's decimal point. */
static int decimal_sign(const char *text)
{
    int sign = 1, digits = 0, nonzero = 0;
    if (*text == '+' || *text == '-')
        sign = *text++ == '-' ? -1 : 1;
    for (; is_digit(*text); text++, digits++)
        nonzero |= *text != '0';
    if (*text == '.')
        for (text++; is_digit(*text); text++, digits++)
            nonzero |= *text != '0';
    if (digits && (*text == 'e' || *text == 'E')) {
        text++;
        if (*text == '+' || *text == '-')
            text++;
        if (!is_digit(*text))
            return 0;
        while (is_digit(*text))
            text++;
    }
    return digits && nonzero && *text == '\0' ? sign : 0;
}

/* ================================================================ rasters */

/* The pixel data a Netpbm header announces. */
typedef struct raster {
    int width, height, channels;
    int ascii;                  /* P2/P3: decimal samples */
    pv_io_sample_kind kind;     /* binary sample encoding */
    unsigned maxval;            /* integer samples; 0 for PFM floats */
    int bottom_up;              /* PFM stores the last image row first */
} raster;

static size_t raster_row_samples(const raster *r)
{
    return (size_t)r->width * (size_t)r->channels;
}

/* The smallest number of bytes the announced pixels can take (an ASCII
 * sample needs a digit and a separator, except the last) must be there
 * before anything is allocated. */
static pv_status check_raster_fits(const pv_io_file *file, const raster *r, size_t *row_bytes)
{
    size_t sample_bytes = r->ascii ? 2 : pv_io_sample_bytes(r->kind);
    size_t samples, bytes, total;
    if (!pv_size_mul((size_t)r->width, (size_t)r->channels, &samples) ||
        !pv_size_mul(samples, sample_bytes, &bytes) ||
        !pv_size_mul(bytes, (size_t)r->height, &total) ||
        total - (size_t)r->ascii > pv_io_bytes_left(file))
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the header claims %dx%d pixels but the file is "
                       "too short for them", file->path, r->width, r->height);
    *row_bytes = bytes;
    return PV_OK;
}

static pv_status check_sample_range(const pv_io_file *file, const raster *r,
                                    const float *samples, size_t count)
{
    if (r->maxval == 0)
        return PV_OK;
    for (size_t i = 0; i < count; i++)
        if (samples[i] > (float)r->maxval)
            return pv_fail(NULL, PV_ERR_FORMAT,
                           "pv_image_read: '%s': a sample value %.0f exceeds maxval %u",
                           file->path, (double)samples[i], r->maxval);
    return PV_OK;
}

static pv_status read_binary_row(pv_io_file *file, const raster *r, uint8_t *raw,
                                 size_t row_bytes, float *samples)
{
    if (fread(raw, 1, row_bytes, file->stream) != row_bytes)
        return pv_io_read_failure(file, "the pixel data");
    pv_io_unpack_samples(raw, raster_row_samples(r), r->kind, samples);
    return check_sample_range(file, r, samples, raster_row_samples(r));
}

static pv_status read_ascii_row(pv_io_file *file, const raster *r, float *samples)
{
    size_t count = raster_row_samples(r);
    for (size_t i = 0; i < count; i++) {
        unsigned long value;
        enum token_result result = read_uint_token(file->stream, 65535, &value);
        if (result == TOKEN_END)
            return pv_io_read_failure(file, "the pixel data");
        if (result == TOKEN_BAD)
            return pv_fail(NULL, PV_ERR_FORMAT,
                           "pv_image_read: '%s': the pixel data holds something other than "
                           "numbers from 0 to 65535", file->path);
        samples[i] = (float)value;
    }
    return check_sample_range(file, r, samples, count);
}

static pv_status read_raster_rows(pv_io_file *file, const raster *r, uint8_t *raw,
                                  size_t row_bytes, float *samples, pv_image *image)
{
    unsigned maxval = r->maxval ? r->maxval : 255;
    for (int i = 0; i < r->height; i++) {
        pv_status status = r->ascii ? read_ascii_row(file, r, samples)
                                    : read_binary_row(file, r, raw, row_bytes, samples);
        if (status != PV_OK)
            return status;
        pv_io_store_samples(image, r->bottom_up ? r->height - 1 - i : i, samples, r->channels,
                            maxval);
    }
    return PV_OK;
}

static pv_status read_raster(pv_io_file *file, const raster *r, pv_pixel_type type,
                             pv_image *out)
{
    size_t row_bytes = 0;
    pv_status status = check_raster_fits(file, r, &row_bytes);
    if (status != PV_OK)
        return status;
    uint8_t *raw = r->ascii ? NULL : malloc(row_bytes);
    float *samples = malloc(raster_row_samples(r) * sizeof(float));
    pv_image image;
    if (!samples || (!r->ascii && !raw))
        status = pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': cannot allocate row buffers",
                         file->path);
    else
        status = pv_io_alloc_output(file, &image, r->width, r->height, type);
    if (status == PV_OK) {
        status = read_raster_rows(file, r, raw, row_bytes, samples, &image);
        if (status == PV_OK)
            *out = image;
        else
            pv_image_free(&image);
    }
    free(raw);
    free(samples);
    return status;
}

/* ========================================================== PGM and PPM */

static pv_status read_magic(pv_io_file *file, char magic[2])
{
    if (fread(magic, 1, 2, file->stream) != 2)
        return pv_io_read_failure(file, "the magic number");
    return PV_OK;
}

/* The magic number and the image size, which PGM, PPM and PFM headers all
 * start with, into magic and r. */
static pv_status read_magic_and_size(pv_io_file *file, char magic[2], raster *r)
{
    unsigned long width, height;
    pv_status status = read_magic(file, magic);
    if (status == PV_OK)
        status = read_header_number(file, "width", 1, INT_MAX, &width);
    if (status == PV_OK)
        status = read_header_number(file, "height", 1, INT_MAX, &height);
    if (status == PV_OK) {
        r->width = (int)width;
        r->height = (int)height;
    }
    return status;
}

static pv_status read_pnm_header(pv_io_file *file, raster *r)
{
    char magic[2];
    unsigned long maxval;
    pv_status status = read_magic_and_size(file, magic, r);
    if (status == PV_OK)
        status = read_header_number(file, "maxval", 1, 65535, &maxval);
    if (status == PV_OK)
        status = read_header_end(file);
    if (status != PV_OK)
        return status;
    r->channels = magic[1] == '3' || magic[1] == '6' ? 3 : 1;
    r->ascii = magic[1] == '2' || magic[1] == '3';
    r->kind = maxval > 255 ? PV_IO_SAMPLE_U16_BE : PV_IO_SAMPLE_U8;
    r->maxval = (unsigned)maxval;
    r->bottom_up = 0;
    return PV_OK;
}

/* The header's facts, after the same size check the reader makes. */
static pv_status raster_info(pv_io_file *file, const raster *r, pv_image_info *info)
{
    size_t row_bytes;
    pv_status status = check_raster_fits(file, r, &row_bytes);
    if (status != PV_OK)
        return status;
    info->format = r->kind == PV_IO_SAMPLE_F32_LE || r->kind == PV_IO_SAMPLE_F32_BE
                       ? PV_IMAGE_FORMAT_PFM
                       : r->channels == 3 ? PV_IMAGE_FORMAT_PPM : PV_IMAGE_FORMAT_PGM;
    info->width = r->width;
    info->height = r->height;
    info->channels = r->channels;
    info->bits = r->maxval == 0 ? 32 : r->maxval > 255 ? 16 : 8;
    if (r->maxval != 0 && r->maxval < 255) {
        int bits = 1;
        while ((1u << bits) - 1 < r->maxval)
            bits++;
        info->bits = bits;
    }
    return PV_OK;
}

/* ===================================================================== PFM */

/* The scale's sign gives the byte order (negative: little-endian); its
 * magnitude means nothing for our purposes, so only its syntax is checked. */
static pv_status read_pfm_scale(pv_io_file *file, int *little_endian)
{
    char token[64];
    size_t length = 0;
    int c;
    peek_after_blanks(file->stream);
    while ((c = getc(file->stream)) != EOF && !is_pnm_space(c) && length + 1 < sizeof token)
        token[length++] = (char)c;
    token[length] = '\0';
    if (c == EOF)
        return pv_io_read_failure(file, "the header");
    int sign = is_pnm_space(c) ? decimal_sign(token) : 0;
    if (sign == 0)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the PFM scale '%s' is not a non-zero number",
                       file->path, token);
    *little_endian = sign < 0;
    return PV_OK;
}

static pv_status read_pfm_header(pv_io_file *file, raster *r)
{
    char magic[2];
    int little_endian = 0;
    pv_status status = read_magic_and_size(file, magic, r);
    if (status == PV_OK)
        status = read_pfm_scale(file, &little_endian);
    if (status != PV_OK)
        return status;
    r->channels = magic[1] == 'F' ? 3 : 1;
    r->ascii = 0;
    r->kind = little_endian ? PV_IO_SAMPLE_F32_LE : PV_IO_SAMPLE_F32_BE;
    r->maxval = 0;
    r->bottom_up = 1;
    return PV_OK;
}

/* The four entry points: a header by read_header, then the header's facts
 * into info when one is given, else the image (as type) into out. */
typedef pv_status (*header_reader)(pv_io_file *file, raster *r);

static pv_status read_netpbm(pv_io_file *file, header_reader read_header, pv_pixel_type type,
                             pv_image *out, pv_image_info *info)
{
    raster r;
    pv_status status = read_header(file, &r);
    if (status != PV_OK)
        return status;
    return info ? raster_info(file, &r, info) : read_raster(file, &r, type, out);
}

pv_status pv_io_read_pnm(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    return read_netpbm(file, read_pnm_header, type, out, NULL);
}

pv_status pv_io_info_pnm(pv_io_file *file, pv_image_info *info)
{
    return read_netpbm(file, read_pnm_header, PV_PIXEL_U8, NULL, info);
}

pv_status pv_io_read_pfm(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    return read_netpbm(file, read_pfm_header, type, out, NULL);
}

pv_status pv_io_info_pfm(pv_io_file *file, pv_image_info *info)
{
    return read_netpbm(file, read_pfm_header, PV_PIXEL_U8, NULL, info);
}

/* ================================================================ writers */

static pv_status write_header(pv_io_output *out, const char *magic, const pv_image *image,
                              const char *last_line)
{
    char header[96];
    int length = snprintf(header, sizeof header, "%s\n%d %d\n%s\n", magic, image->width,
                          image->height, last_line);
    return pv_io_write_bytes(out, header, (size_t)length);
}

static pv_status write_pgm_data(pv_io_output *out, const pv_image *image, uint8_t *row)
{
    pv_status status = write_header(out, "P5", image, "255");
    for (int y = 0; y < image->height && status == PV_OK; y++) {
        pv_io_row_to_u8(image, y, row);
        status = pv_io_write_bytes(out, row, (size_t)image->width);
    }
    return status;
}

/* Writes image to path as function: a row buffer of bytes_per_sample per
 * pixel, then write_data's header and rows into a new file that replaces
 * path only when complete. */
typedef pv_status (*data_writer)(pv_io_output *out, const pv_image *image, uint8_t *row);

static pv_status write_netpbm(const char *function, const char *path, const pv_image *image,
                              size_t bytes_per_sample, data_writer write_data)
{
    size_t row_bytes = 0;
    pv_status status = pv_io_check_write_args(function, path, image);
    if (status != PV_OK)
        return status;
    uint8_t *row = pv_size_mul((size_t)image->width, bytes_per_sample, &row_bytes)
                       ? malloc(row_bytes)
                       : NULL;
    if (!row)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot allocate a row buffer", function,
                       path);
    pv_io_output out;
    status = pv_io_open_output(&out, function, path);
    if (status == PV_OK)
        status = pv_io_finish_output(&out, write_data(&out, image, row));
    free(row);
    return status;
}

pv_status pv_image_write_pgm(const char *path, const pv_image *image)
{
    return write_netpbm("pv_image_write_pgm", path, image, 1, write_pgm_data);
}

static void store_le32(uint8_t *p, uint32_t value)
{
    p[0] = (uint8_t)value;
    p[1] = (uint8_t)(value >> 8);
    p[2] = (uint8_t)(value >> 16);
    p[3] = (uint8_t)(value >> 24);
}

static float pixel_as_float(const pv_image *image, const void *row, int x)
{
    if (image->type == PV_PIXEL_U8)
        return ((const uint8_t *)row)[x];
    return ((const float *)row)[x];
}

static void pack_row_f32_le(const pv_image *image, int y, uint8_t *out)
{
    const char *row = (const char *)image->data +
                      (ptrdiff_t)y * image->stride * (ptrdiff_t)pv_pixel_size(image->type);
    for (int x = 0; x < image->width; x++) {
        float value = pixel_as_float(image, row, x);
        uint32_t bits;
        memcpy(&bits, &value, sizeof bits);
        store_le32(out + 4 * (size_t)x, bits);
    }
}

static pv_status write_pfm_data(pv_io_output *out, const pv_image *image, uint8_t *row)
{
    pv_status status = write_header(out, "Pf", image, "-1");
    for (int y = image->height - 1; y >= 0 && status == PV_OK; y--) {
        pack_row_f32_le(image, y, row);
        status = pv_io_write_bytes(out, row, 4 * (size_t)image->width);
    }
    return status;
}

/* u8 images are accepted too: their values are written as floats. */
pv_status pv_image_write_pfm(const char *path, const pv_image *image)
{
    return write_netpbm("pv_image_write_pfm", path, image, 4, write_pfm_data);
}
