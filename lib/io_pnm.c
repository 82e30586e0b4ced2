/* Image I/O: the format dispatch of pv_image_read / pv_image_write, the
 * Netpbm formats (PGM/PPM binary and ASCII, PFM), and the file, sample and
 * row helpers that io_png.c shares (see io.h). */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ======================================================== input files */

pv_status pv_io_open_input(const char *path, pv_io_file *file)
{
    struct stat info;
    FILE *stream = fopen(path, "rb");
    if (!stream)
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: cannot open '%s': %s", path,
                       strerror(errno));
    if (fstat(fileno(stream), &info) != 0) {
        int error = errno;
        fclose(stream);
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: cannot stat '%s': %s", path,
                       strerror(error));
    }
    if (!S_ISREG(info.st_mode)) {
        fclose(stream);
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s' is not a regular file", path);
    }
    file->path = path;
    file->stream = stream;
    file->size = (uint64_t)info.st_size;
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

void pv_io_samples_to_grey(float *samples, int width, int channels)
{
    if (channels != 3)
        return;
    for (int x = 0; x < width; x++) {
        const float *rgb = samples + 3 * (size_t)x;
        samples[x] = pv_io_luma(rgb[0], rgb[1], rgb[2]);
    }
}

void pv_io_store_row(pv_image *image, int y, const float *grey, unsigned maxval)
{
    if (image->type == PV_PIXEL_F32) {
        float *row = (float *)image->data + (ptrdiff_t)y * image->stride;
        memcpy(row, grey, (size_t)image->width * sizeof(float));
        return;
    }
    uint8_t *row = (uint8_t *)image->data + (ptrdiff_t)y * image->stride;
    if (maxval <= 255) {
        for (int x = 0; x < image->width; x++)
            row[x] = pv_io_to_u8(grey[x]);
        return;
    }
    for (int x = 0; x < image->width; x++)
        row[x] = pv_io_to_u8(grey[x] * 255.0f / (float)maxval);
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

pv_status pv_io_check_write_args(const char *function, const char *path, const pv_image *image)
{
    if (!path)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL", function);
    if (!pv_image_is_valid(image))
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: '%s': the image is NULL or malformed (data, size, stride or type)",
                       function, path);
    return PV_OK;
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
        pv_io_samples_to_grey(samples, r->width, r->channels);
        pv_io_store_row(image, r->bottom_up ? r->height - 1 - i : i, samples, maxval);
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

static pv_status read_pnm_header(pv_io_file *file, raster *r)
{
    char magic[2];
    unsigned long width, height, maxval;
    pv_status status = read_magic(file, magic);
    if (status == PV_OK)
        status = read_header_number(file, "width", 1, INT_MAX, &width);
    if (status == PV_OK)
        status = read_header_number(file, "height", 1, INT_MAX, &height);
    if (status == PV_OK)
        status = read_header_number(file, "maxval", 1, 65535, &maxval);
    if (status == PV_OK)
        status = read_header_end(file);
    if (status != PV_OK)
        return status;
    r->width = (int)width;
    r->height = (int)height;
    r->channels = magic[1] == '3' || magic[1] == '6' ? 3 : 1;
    r->ascii = magic[1] == '2' || magic[1] == '3';
    r->kind = maxval > 255 ? PV_IO_SAMPLE_U16_BE : PV_IO_SAMPLE_U8;
    r->maxval = (unsigned)maxval;
    r->bottom_up = 0;
    return PV_OK;
}

pv_status pv_io_read_pnm(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    raster r;
    pv_status status = read_pnm_header(file, &r);
    if (status != PV_OK)
        return status;
    return read_raster(file, &r, type, out);
}

/* The header's facts, after the same size check the reader makes. */
static pv_status raster_info(pv_io_file *file, const raster *r, pv_image_format format,
                             pv_image_info *info)
{
    size_t row_bytes;
    pv_status status = check_raster_fits(file, r, &row_bytes);
    if (status != PV_OK)
        return status;
    info->format = format;
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

pv_status pv_io_info_pnm(pv_io_file *file, pv_image_info *info)
{
    raster r;
    pv_status status = read_pnm_header(file, &r);
    if (status != PV_OK)
        return status;
    return raster_info(file, &r, r.channels == 3 ? PV_IMAGE_FORMAT_PPM : PV_IMAGE_FORMAT_PGM,
                       info);
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
    unsigned long width, height;
    int little_endian = 0;
    pv_status status = read_magic(file, magic);
    if (status == PV_OK)
        status = read_header_number(file, "width", 1, INT_MAX, &width);
    if (status == PV_OK)
        status = read_header_number(file, "height", 1, INT_MAX, &height);
    if (status == PV_OK)
        status = read_pfm_scale(file, &little_endian);
    if (status != PV_OK)
        return status;
    r->width = (int)width;
    r->height = (int)height;
    r->channels = magic[1] == 'F' ? 3 : 1;
    r->ascii = 0;
    r->kind = little_endian ? PV_IO_SAMPLE_F32_LE : PV_IO_SAMPLE_F32_BE;
    r->maxval = 0;
    r->bottom_up = 1;
    return PV_OK;
}

pv_status pv_io_read_pfm(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    raster r;
    pv_status status = read_pfm_header(file, &r);
    if (status != PV_OK)
        return status;
    return read_raster(file, &r, type, out);
}

pv_status pv_io_info_pfm(pv_io_file *file, pv_image_info *info)
{
    raster r;
    pv_status status = read_pfm_header(file, &r);
    if (status != PV_OK)
        return status;
    return raster_info(file, &r, PV_IMAGE_FORMAT_PFM, info);
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

pv_status pv_image_write_pgm(const char *path, const pv_image *image)
{
    static const char function[] = "pv_image_write_pgm";
    pv_status status = pv_io_check_write_args(function, path, image);
    if (status != PV_OK)
        return status;
    uint8_t *row = malloc((size_t)image->width);
    if (!row)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot allocate a row buffer", function,
                       path);
    pv_io_output out;
    status = pv_io_open_output(&out, function, path);
    if (status == PV_OK)
        status = pv_io_finish_output(&out, write_pgm_data(&out, image, row));
    free(row);
    return status;
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
    static const char function[] = "pv_image_write_pfm";
    size_t row_bytes = 0;
    pv_status status = pv_io_check_write_args(function, path, image);
    if (status != PV_OK)
        return status;
    uint8_t *row = pv_size_mul((size_t)image->width, 4, &row_bytes) ? malloc(row_bytes) : NULL;
    if (!row)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot allocate a row buffer", function,
                       path);
    pv_io_output out;
    status = pv_io_open_output(&out, function, path);
    if (status == PV_OK)
        status = pv_io_finish_output(&out, write_pfm_data(&out, image, row));
    free(row);
    return status;
}

/* ======================================================== format dispatch */

/* A format's reader and header reader. */
typedef struct image_format {
    pv_status (*read)(pv_io_file *file, pv_pixel_type type, pv_image *out);
    pv_status (*info)(pv_io_file *file, pv_image_info *info);
} image_format;

static const image_format pnm_format = {pv_io_read_pnm, pv_io_info_pnm};
static const image_format pfm_format = {pv_io_read_pfm, pv_io_info_pfm};
static const image_format png_format = {pv_io_read_png, pv_io_info_png};
static const image_format jpeg_format = {pv_io_read_jpeg, pv_io_info_jpeg};

static pv_status format_for_magic(const pv_io_file *file, const uint8_t *magic, size_t length,
                                  const image_format **format)
{
    if (length == 0)
        return pv_fail(NULL, PV_ERR_FORMAT, "pv_image_read: '%s' is empty", file->path);
    if (length >= sizeof pv_io_png_signature &&
        memcmp(magic, pv_io_png_signature, sizeof pv_io_png_signature) == 0) {
        *format = &png_format;
        return PV_OK;
    }
    /* SOI followed by the first marker. */
    if (length >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) {
        *format = &jpeg_format;
        return PV_OK;
    }
    if (length >= 2 && magic[0] == 'P') {
        if (magic[1] == '2' || magic[1] == '3' || magic[1] == '5' || magic[1] == '6') {
            *format = &pnm_format;
            return PV_OK;
        }
        if (magic[1] == 'f' || magic[1] == 'F') {
            *format = &pfm_format;
            return PV_OK;
        }
        if (magic[1] == '1' || magic[1] == '4' || magic[1] == '7')
            return pv_fail(NULL, PV_ERR_FORMAT,
                           "pv_image_read: '%s': P%c files (bitmaps, PAM) are not supported",
                           file->path, magic[1]);
    }
    return pv_fail(NULL, PV_ERR_FORMAT,
                   "pv_image_read: '%s' is not a PGM, PPM, PFM, PNG or JPEG file (unknown magic "
                   "bytes)", file->path);
}

static pv_status choose_format(pv_io_file *file, const image_format **format)
{
    uint8_t magic[sizeof pv_io_png_signature];
    size_t length = fread(magic, 1, sizeof magic, file->stream);
    if (ferror(file->stream))
        return pv_io_read_failure(file, "the magic number");
    if (fseek(file->stream, 0, SEEK_SET) != 0)
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s': cannot seek: %s", file->path,
                       strerror(errno));
    return format_for_magic(file, magic, length, format);
}

pv_status pv_image_read(const char *path, pv_pixel_type type, pv_image *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_image_read: path or output image is NULL");
    if (pv_pixel_size(type) == 0)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_image_read: '%s': unknown pixel type %d", path,
                       (int)type);
    pv_io_file file;
    pv_status status = pv_io_open_input(path, &file);
    if (status != PV_OK)
        return status;
    const image_format *format = NULL;
    status = choose_format(&file, &format);
    if (status == PV_OK)
        status = format->read(&file, type, out);
    fclose(file.stream);
    return status;
}

pv_status pv_image_read_info(const char *path, pv_image_info *info)
{
    if (!path || !info)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_image_read_info: path or info is NULL");
    pv_io_file file;
    pv_status status = pv_io_open_input(path, &file);
    if (status != PV_OK)
        return status;
    const image_format *format = NULL;
    pv_image_info found;
    status = choose_format(&file, &format);
    if (status == PV_OK)
        status = format->info(&file, &found);
    fclose(file.stream);
    if (status == PV_OK)
        *info = found;
    return status;
}

int pv_image_io_has_jpeg(void)
{
    return pv_io_have_jpeg();
}

static int equal_ignoring_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int ca = *a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a;
        int cb = *b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b;
        if (ca != cb)
            return 0;
    }
    return *a == *b;
}

/* The text after the last dot of the file name ("" when it has none). */
static const char *file_extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : "";
}

pv_status pv_image_write(const char *path, const pv_image *image)
{
    if (!path)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_image_write: path is NULL");
    const char *extension = file_extension(path);
    if (equal_ignoring_case(extension, "pgm"))
        return pv_image_write_pgm(path, image);
    if (equal_ignoring_case(extension, "pfm"))
        return pv_image_write_pfm(path, image);
    if (equal_ignoring_case(extension, "png"))
        return pv_image_write_png(path, image);
    return pv_fail(NULL, PV_ERR_INVALID,
                   "pv_image_write: '%s': unknown file extension (use .pgm, .pfm or .png)", path);
}
