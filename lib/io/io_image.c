/* Image I/O: the format dispatch of pv_image_read, pv_image_read_info and
 * pv_image_write: the format from the file's first bytes when reading,
 * from the path's extension when writing. */
#include "io.h"

#include <errno.h>
#include <string.h>

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
static const image_format tiff_format = {pv_io_read_tiff, pv_io_info_tiff};

/* Classic TIFF ("II*\0", "MM\0*") and BigTIFF ("II+\0", "MM\0+"). */
static int is_tiff(const uint8_t *magic, size_t length)
{
    if (length < 4)
        return 0;
    if (magic[0] == 'I' && magic[1] == 'I' && magic[3] == 0)
        return magic[2] == 42 || magic[2] == 43;
    if (magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0)
        return magic[3] == 42 || magic[3] == 43;
    return 0;
}

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
    if (is_tiff(magic, length)) {
        *format = &tiff_format;
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
                   "pv_image_read: '%s' is not a PGM, PPM, PFM, PNG, JPEG or TIFF file (unknown magic "
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
    pv_status status = pv_io_open_input("pv_image_read", path, &file);
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
    pv_status status = pv_io_open_input("pv_image_read", path, &file);
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

int pv_image_io_has_tiff(void)
{
    return pv_io_have_tiff();
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
