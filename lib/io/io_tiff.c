/* TIFF reading through libtiff (>= 4.5), when configured with it: 2D
 * images for pv_image_read and multi-page files as volumes for
 * pv_volume_read_tiff.
 *
 * libtiff prints its errors and warnings through process-wide handlers
 * unless told otherwise; every handle here is opened with per-handle
 * handlers (TIFFOpenOptions) that stay silent: errors are recorded into
 * the reader's message, warnings (unknown tags and the like) dropped.
 *
 * Hostile files: every page's header is checked (type, layout, size)
 * before anything is allocated, the decoded bytes of all pages together
 * may not exceed PV_IO_MAX_TIFF_RATIO times the file's size, the page
 * count is capped, and libtiff's own allocations are capped at that
 * decoded size too.  A strip or tile that decodes short is an error,
 * never zeros.
 *
 * Accepted: grey (MinIsBlack) or RGB (alpha dropped) pages of 8- or
 * 16-bit unsigned or 32-bit float samples, interleaved (PLANARCONFIG
 * contig; separate planes are refused), in strips or tiles, any byte
 * order, any compression this libtiff decodes. */
#include "io.h"

#include "parvis/volume_io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef PV_HAVE_TIFF

#include <stdarg.h>
#include <unistd.h>
#include <tiffio.h>

typedef struct tiff_page {
    uint32_t width, height;
    uint16_t samples;       /* per pixel in the file: 1, 3 or 4 */
    uint16_t bits;          /* 8, 16 or 32 */
    uint16_t format;        /* SAMPLEFORMAT_UINT or SAMPLEFORMAT_IEEEFP */
    uint16_t compression;
    int tiled;
    uint32_t band_rows;     /* rows a strip or a row of tiles covers */
    uint32_t tile_width;
} tiff_page;

typedef struct tiff_reader {
    const char *function;   /* the public function, for messages */
    pv_io_file *file;
    TIFF *tiff;
    char message[256];      /* libtiff's first error */
    tiff_page page;
    uint8_t *band;          /* one strip, or one row of tiles, decoded */
    uint8_t *tile;
    float *samples;         /* one row as floats */
} tiff_reader;

/* Records the first error: the later ones are usually its consequences. */
static int record_error(TIFF *tiff, void *user, const char *module, const char *format,
                        va_list arguments)
{
    (void)tiff;
    (void)module;
    tiff_reader *r = user;
    if (r->message[0] == '\0')
        vsnprintf(r->message, sizeof r->message, format, arguments);
    return 1;               /* handled: the global handler is not called */
}

static int drop_warning(TIFF *tiff, void *user, const char *module, const char *format,
                        va_list arguments)
{
    (void)tiff;
    (void)user;
    (void)module;
    (void)format;
    (void)arguments;
    return 1;
}

static pv_status tiff_error(const tiff_reader *r, const char *what)
{
    return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': bad or truncated TIFF: %s%s%s", r->function,
                   r->file->path, what, r->message[0] ? ": " : "", r->message);
}

/* The most bytes all pages may decode to. */
static uint64_t decoded_limit(const pv_io_file *file)
{
    return file->size > UINT64_MAX / PV_IO_MAX_TIFF_RATIO ? UINT64_MAX
                                                          : file->size * PV_IO_MAX_TIFF_RATIO;
}

/* libtiff closes the descriptor it is given, and the caller closes the
 * stream: hence the duplicate. */
static pv_status open_tiff(tiff_reader *r)
{
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': no memory", r->function, r->file->path);
    TIFFOpenOptionsSetErrorHandlerExtR(options, record_error, r);
    TIFFOpenOptionsSetWarningHandlerExtR(options, drop_warning, r);
    uint64_t limit = decoded_limit(r->file);
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, limit > (uint64_t)PTRDIFF_MAX
                                                     ? PTRDIFF_MAX : (tmsize_t)limit);
    int fd = dup(fileno(r->file->stream));
    if (fd >= 0) {
        r->tiff = TIFFFdOpenExt(fd, r->file->path, "rm", options);
        if (!r->tiff)
            close(fd);
    }
    TIFFOpenOptionsFree(options);
    if (fd < 0)
        return pv_fail(NULL, PV_ERR_IO, "%s: '%s': cannot duplicate its descriptor", r->function,
                       r->file->path);
    return r->tiff ? PV_OK : tiff_error(r, "cannot read the header");
}

/* A page that libtiff reads but parvis does not take: `what` ends the
 * sentence "TIFF with ... is not supported". */
static pv_status refuse(const tiff_reader *r, const char *what)
{
    return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': TIFF with %s is not supported", r->function,
                   r->file->path, what);
}

/* The sample type, from the current directory. */
static pv_status read_sample_type(tiff_reader *r, tiff_page *p)
{
    uint16_t format = SAMPLEFORMAT_UINT;
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_BITSPERSAMPLE, &p->bits);
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_SAMPLEFORMAT, &format);
    p->format = format;
    if (format == SAMPLEFORMAT_UINT && (p->bits == 8 || p->bits == 16))
        return PV_OK;
    if (format == SAMPLEFORMAT_IEEEFP && p->bits == 32)
        return PV_OK;
    return refuse(r, "this sample type (only 8/16-bit unsigned and 32-bit float are)");
}

/* Grey, or RGB with perhaps an alpha sample; interleaved only. */
static pv_status read_colour_layout(tiff_reader *r, tiff_page *p)
{
    uint16_t photometric = PHOTOMETRIC_MINISBLACK, planar = PLANARCONFIG_CONTIG;
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_SAMPLESPERPIXEL, &p->samples);
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_PLANARCONFIG, &planar);
    if (!TIFFGetField(r->tiff, TIFFTAG_PHOTOMETRIC, &photometric))
        photometric = p->samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    if (planar != PLANARCONFIG_CONTIG && p->samples > 1)
        return refuse(r, "separate sample planes (PlanarConfiguration 2)");
    if (photometric == PHOTOMETRIC_MINISBLACK && p->samples == 1)
        return PV_OK;
    if (photometric == PHOTOMETRIC_RGB && (p->samples == 3 || p->samples == 4))
        return PV_OK;
    return refuse(r, "this colour layout (only grey and RGB are)");
}

/* Strip or tile geometry: the rows that one decoding step fills. */
static pv_status read_band_layout(tiff_reader *r, tiff_page *p)
{
    p->tiled = TIFFIsTiled(r->tiff);
    if (p->tiled) {
        uint32_t tile_length = 0;
        if (!TIFFGetField(r->tiff, TIFFTAG_TILEWIDTH, &p->tile_width) ||
            !TIFFGetField(r->tiff, TIFFTAG_TILELENGTH, &tile_length) || p->tile_width == 0 ||
            tile_length == 0)
            return tiff_error(r, "no tile size");
        p->band_rows = tile_length;
        return PV_OK;
    }
    uint32_t rows = UINT32_MAX;
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_ROWSPERSTRIP, &rows);
    p->band_rows = rows == 0 || rows > p->height ? p->height : rows;
    return PV_OK;
}

/* The current directory's page, checked.  Dimensions past INT_MAX are
 * refused as every reader refuses them. */
static pv_status read_page(tiff_reader *r, tiff_page *p)
{
    memset(p, 0, sizeof *p);
    if (!TIFFGetField(r->tiff, TIFFTAG_IMAGEWIDTH, &p->width) ||
        !TIFFGetField(r->tiff, TIFFTAG_IMAGELENGTH, &p->height))
        return tiff_error(r, "no image size");
    if (p->width == 0 || p->height == 0 || p->width > INT_MAX || p->height > INT_MAX)
        return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': TIFF page of %ux%u pixels", r->function,
                       r->file->path, (unsigned)p->width, (unsigned)p->height);
    TIFFGetFieldDefaulted(r->tiff, TIFFTAG_COMPRESSION, &p->compression);
    pv_status status = read_sample_type(r, p);
    if (status == PV_OK)
        status = read_colour_layout(r, p);
    if (status == PV_OK)
        status = read_band_layout(r, p);
    return status;
}

/* Bytes the page decodes to, added to *total; PV_ERR_FORMAT past the
 * file's decoded limit (which overflow counts as being past), or, for an
 * uncompressed page, past the file's size, which must hold its samples. */
static pv_status add_page_bytes(const tiff_reader *r, const tiff_page *p, uint64_t *total)
{
    size_t bytes = 0;
    int fits = pv_size_mul((size_t)p->width, (size_t)p->height, &bytes) &&
               pv_size_mul(bytes, (size_t)p->samples * (p->bits / 8), &bytes) &&
               (uint64_t)bytes <= UINT64_MAX - *total &&
               (p->compression != COMPRESSION_NONE || (uint64_t)bytes <= r->file->size);
    if (fits)
        *total += bytes;
    if (!fits || *total > decoded_limit(r->file))
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "%s: '%s': the TIFF claims more pixels than the %llu-byte file can hold "
                       "(at most %u bytes decoded a byte)", r->function, r->file->path,
                       (unsigned long long)r->file->size, PV_IO_MAX_TIFF_RATIO);
    return PV_OK;
}

/* ---- decoding ------------------------------------------------------------ */

static size_t row_bytes(const tiff_page *p)
{
    return (size_t)p->width * p->samples * (p->bits / 8);
}

/* The band holds the rows of one strip or one row of tiles that lie in
 * the image; a tile may reach past it (a tiny image in one big tile), so
 * its own buffer is bounded like the pages' decoded bytes. */
static pv_status allocate_band(tiff_reader *r)
{
    const tiff_page *p = &r->page;
    uint32_t rows = p->band_rows < p->height ? p->band_rows : p->height;
    size_t bytes = 0, tile = 0;
    if (!pv_size_mul(row_bytes(p), rows, &bytes))
        return tiff_error(r, "strip or tile too large");
    free(r->band);
    free(r->tile);
    free(r->samples);
    r->band = r->tile = NULL;
    r->samples = NULL;
    if (p->tiled) {
        int fits = pv_size_mul((size_t)p->tile_width, (size_t)p->samples * (p->bits / 8), &tile) &&
                   pv_size_mul(tile, p->band_rows, &tile);
        if (!fits || (uint64_t)tile > decoded_limit(r->file) ||
            (uint64_t)TIFFTileSize64(r->tiff) != (uint64_t)tile)
            return tiff_error(r, "the tile size disagrees with its geometry or the file's size");
    }
    r->band = malloc(bytes);
    r->tile = p->tiled ? malloc(tile) : NULL;
    r->samples = malloc((size_t)p->width * p->samples * sizeof(float));
    if (!r->band || (p->tiled && !r->tile) || !r->samples)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot allocate strip buffers",
                       r->function, r->file->path);
    return PV_OK;
}

/* One strip holding rows first .. first + rows - 1. */
static pv_status read_strip_band(tiff_reader *r, uint32_t first, uint32_t rows)
{
    size_t want = row_bytes(&r->page) * rows;
    tmsize_t got = TIFFReadEncodedStrip(r->tiff, TIFFComputeStrip(r->tiff, first, 0), r->band,
                                        (tmsize_t)want);
    return got == (tmsize_t)want ? PV_OK : tiff_error(r, "a strip does not decode");
}

/* The row of tiles from row `first`, clipped to the image's width and
 * its `rows` remaining rows. */
static pv_status read_tile_band(tiff_reader *r, uint32_t first, uint32_t rows)
{
    const tiff_page *p = &r->page;
    size_t pixel = (size_t)p->samples * (p->bits / 8), full = row_bytes(p);
    size_t tile_row = (size_t)p->tile_width * pixel;
    tmsize_t tile = (tmsize_t)(tile_row * p->band_rows);    /* checked by allocate_band */
    for (uint32_t x = 0; x < p->width; x += p->tile_width) {
        tmsize_t got = TIFFReadEncodedTile(r->tiff, TIFFComputeTile(r->tiff, x, first, 0, 0),
                                           r->tile, tile);
        if (got != tile)
            return tiff_error(r, "a tile does not decode");
        size_t width = p->width - x < p->tile_width ? p->width - x : p->tile_width;
        for (uint32_t y = 0; y < rows; y++)
            memcpy(r->band + y * full + x * pixel, r->tile + y * tile_row, width * pixel);
    }
    return PV_OK;
}

/* A decoded row (host byte order: libtiff swaps) to floats, alpha
 * dropped: 3 values a pixel for colour, 1 for grey. */
static void row_to_floats(const tiff_page *p, const uint8_t *raw, float *out)
{
    size_t count = (size_t)p->width * p->samples;
    int keep = p->samples == 4 ? 3 : p->samples;
    for (size_t i = 0, o = 0; i < count; i++) {
        if ((int)(i % p->samples) >= keep)
            continue;
        if (p->bits == 8) {
            out[o++] = raw[i];
        } else if (p->bits == 16) {
            uint16_t v;
            memcpy(&v, raw + 2 * i, 2);
            out[o++] = v;
        } else {
            memcpy(&out[o++], raw + 4 * i, 4);
        }
    }
}

typedef void (*row_sink)(void *target, const tiff_page *p, uint32_t y, float *samples);

/* Decode the current page band by band, handing each row to `sink`. */
static pv_status decode_page(tiff_reader *r, row_sink sink, void *target)
{
    const tiff_page *p = &r->page;
    pv_status status = allocate_band(r);
    for (uint32_t first = 0; status == PV_OK && first < p->height; first += p->band_rows) {
        uint32_t rows = p->height - first < p->band_rows ? p->height - first : p->band_rows;
        status = p->tiled ? read_tile_band(r, first, rows) : read_strip_band(r, first, rows);
        for (uint32_t y = 0; status == PV_OK && y < rows; y++) {
            row_to_floats(p, r->band + y * row_bytes(p), r->samples);
            sink(target, p, first + y, r->samples);
        }
    }
    return status;
}

static pv_status start_reader(tiff_reader *r, const char *function, pv_io_file *file)
{
    memset(r, 0, sizeof *r);
    r->function = function;
    r->file = file;
    return open_tiff(r);
}

static void end_reader(tiff_reader *r)
{
    if (r->tiff)
        TIFFClose(r->tiff);
    free(r->band);
    free(r->tile);
    free(r->samples);
}

/* ---- images -------------------------------------------------------------- */

/* Integer data keep their values 0..maxval; floats pass 255 as PFM does. */
static unsigned page_maxval(const tiff_page *p)
{
    return p->format == SAMPLEFORMAT_IEEEFP ? 255u : p->bits == 16 ? 65535u : 255u;
}

static void store_image_row(void *target, const tiff_page *p, uint32_t y, float *samples)
{
    pv_io_store_samples(target, (int)y, samples, p->samples == 1 ? 1 : 3, page_maxval(p));
}

/* The first page is the image; later pages are ignored. */
static pv_status read_first_page(tiff_reader *r, pv_pixel_type type, pv_image *image)
{
    uint64_t total = 0;
    pv_status status = read_page(r, &r->page);
    if (status == PV_OK)
        status = add_page_bytes(r, &r->page, &total);
    if (status == PV_OK)
        status = pv_io_alloc_output(r->file, image, (int)r->page.width, (int)r->page.height,
                                    type);
    if (status == PV_OK)
        status = decode_page(r, store_image_row, image);
    return status;
}

pv_status pv_io_read_tiff(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    tiff_reader r;
    pv_image image = {0};
    pv_status status = start_reader(&r, "pv_image_read", file);
    if (status == PV_OK)
        status = read_first_page(&r, type, &image);
    end_reader(&r);
    if (status == PV_OK)
        *out = image;
    else
        pv_image_free(&image);
    return status;
}

pv_status pv_io_info_tiff(pv_io_file *file, pv_image_info *info)
{
    tiff_reader r;
    uint64_t total = 0;
    pv_status status = start_reader(&r, "pv_image_read_info", file);
    if (status == PV_OK)
        status = read_page(&r, &r.page);
    if (status == PV_OK)
        status = add_page_bytes(&r, &r.page, &total);
    if (status == PV_OK) {
        info->format = PV_IMAGE_FORMAT_TIFF;
        info->width = (int)r.page.width;
        info->height = (int)r.page.height;
        info->channels = r.page.samples;
        info->bits = r.page.bits;
    }
    end_reader(&r);
    return status;
}

/* ---- volumes ------------------------------------------------------------- */

/* Every page like the first (size and sample type), grey only; counts
 * them, capped, and checks their decoded size before anything is
 * allocated. */
static pv_status count_pages(tiff_reader *r, int *pages)
{
    tiff_page first, page;
    uint64_t total = 0;
    pv_status status = read_page(r, &first);
    if (status == PV_OK && first.samples != 1)
        status = refuse(r, "colour pages as a volume (grey only)");
    int count = 0;
    for (int more = 1; status == PV_OK && more; more = TIFFReadDirectory(r->tiff)) {
        if (++count > PV_IO_MAX_TIFF_PAGES)
            return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': more than %d TIFF pages",
                           r->function, r->file->path, PV_IO_MAX_TIFF_PAGES);
        status = count == 1 ? PV_OK : read_page(r, &page);
        if (status == PV_OK && count > 1 &&
            (page.width != first.width || page.height != first.height ||
             page.samples != first.samples || page.bits != first.bits ||
             page.format != first.format))
            return pv_fail(NULL, PV_ERR_FORMAT,
                           "%s: '%s': TIFF page %d differs from the first in size or sample "
                           "type", r->function, r->file->path, count);
        if (status == PV_OK)
            status = add_page_bytes(r, &first, &total);
    }
    /* TIFFReadDirectory returns 0 at the end and on errors alike. */
    if (status == PV_OK && r->message[0] != '\0')
        status = tiff_error(r, "a page directory does not read");
    *pages = count;
    return status;
}

typedef struct volume_target {
    pv_volume *volume;
    int z;
} volume_target;

/* A u16 volume takes 16-bit pages' samples back from the row's floats,
 * which hold them exactly. */
static void store_volume_row(void *target, const tiff_page *p, uint32_t y, float *samples)
{
    volume_target *t = target;
    const ptrdiff_t start = (ptrdiff_t)t->z * t->volume->stride_z +
                            (ptrdiff_t)y * t->volume->stride_y;
    if (t->volume->type == PV_VOLUME_U16) {
        for (uint32_t x = 0; x < p->width; x++)
            t->volume->data_u16[start + x] = (uint16_t)samples[x];
        return;
    }
    memcpy(t->volume->data + start, samples, (size_t)p->width * sizeof(float));
}

/* keep_u16: 16-bit pages give a U16 volume (else every type gives F32). */
static pv_status read_volume_pages(tiff_reader *r, int keep_u16, pv_volume *volume)
{
    int pages = 0;
    pv_status status = count_pages(r, &pages);
    size_t bytes = 0;
    if (status == PV_OK && !TIFFSetDirectory(r->tiff, 0))
        status = tiff_error(r, "cannot return to the first page");
    if (status == PV_OK)
        status = read_page(r, &r->page);
    if (status == PV_OK &&
        (!pv_size_mul((size_t)r->page.width, (size_t)r->page.height, &bytes) ||
         !pv_size_mul(bytes, (size_t)pages, &bytes) ||
         !pv_size_mul(bytes, sizeof(float), &bytes)))
        status = pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': the volume is too large",
                         r->function, r->file->path);
    const int u16 = keep_u16 && r->page.format == SAMPLEFORMAT_UINT && r->page.bits == 16;
    if (status == PV_OK && u16)
        status = pv_volume_alloc_u16(volume, (int)r->page.width, (int)r->page.height, pages);
    else if (status == PV_OK)
        status = pv_volume_alloc(volume, (int)r->page.width, (int)r->page.height, pages);
    volume_target target = {volume, 0};
    for (; status == PV_OK && target.z < pages; target.z++) {
        if (target.z > 0 && !TIFFReadDirectory(r->tiff))
            status = tiff_error(r, "a page directory does not read");
        if (status == PV_OK && target.z > 0)
            status = read_page(r, &r->page);
        if (status == PV_OK)
            status = decode_page(r, store_volume_row, &target);
    }
    return status;
}

static pv_status read_tiff_volume(const char *function, const char *path, int keep_u16,
                                  pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path or output is NULL", function);
    pv_io_file file;
    pv_status status = pv_io_open_input(function, path, &file);
    if (status != PV_OK)
        return status;
    tiff_reader r;
    pv_volume volume = {0};
    status = start_reader(&r, function, &file);
    if (status == PV_OK)
        status = read_volume_pages(&r, keep_u16, &volume);
    end_reader(&r);
    fclose(file.stream);
    if (status == PV_OK)
        *out = volume;
    else
        pv_volume_free(&volume);
    return status;
}

pv_status pv_volume_read_tiff(const char *path, pv_volume *out)
{
    return read_tiff_volume("pv_volume_read_tiff", path, 0, out);
}

pv_status pv_volume_read_tiff_native(const char *path, pv_volume *out)
{
    return read_tiff_volume("pv_volume_read_tiff_native", path, 1, out);
}

int pv_io_have_tiff(void)
{
    return 1;
}

int pv_volume_io_has_tiff(void)
{
    return 1;
}

#else /* !PV_HAVE_TIFF */

static pv_status no_tiff(const char *function, const char *path)
{
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "%s: '%s' is a TIFF file and this build has no TIFF support (configure with "
                   "libtiff >= 4.5, Debian package libtiff-dev)", function, path);
}

pv_status pv_io_read_tiff(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    (void)type;
    (void)out;
    return no_tiff("pv_image_read", file->path);
}

pv_status pv_io_info_tiff(pv_io_file *file, pv_image_info *info)
{
    (void)info;
    return no_tiff("pv_image_read_info", file->path);
}

pv_status pv_volume_read_tiff(const char *path, pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_read_tiff: path or output is NULL");
    return no_tiff("pv_volume_read_tiff", path);
}

pv_status pv_volume_read_tiff_native(const char *path, pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "pv_volume_read_tiff_native: path or output is NULL");
    return no_tiff("pv_volume_read_tiff_native", path);
}

int pv_io_have_tiff(void)
{
    return 0;
}

int pv_volume_io_has_tiff(void)
{
    return 0;
}

#endif
