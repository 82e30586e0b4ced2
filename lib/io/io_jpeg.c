/* JPEG reading through libjpeg(-turbo), when configured with it.
 *
 * libjpeg ends the process on errors and prints warnings unless told
 * otherwise: its error manager here records the message and longjmps
 * back, and treats every warning (a premature end of data, extraneous
 * bytes, a bogus progression) as an error too, so a damaged file is
 * refused rather than decoded into grey blocks.  Like io_png.c, all that
 * a read holds lives in a struct owned by the caller of the function that
 * calls setjmp, which frees it on every path.
 *
 * Colour is decoded to RGB and folded to grey with the Rec. 601 weights,
 * as for PPM and PNG. */
#include "io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef PV_HAVE_JPEG

#include <setjmp.h>
#include <jpeglib.h>

typedef struct jpeg_failure {
    struct jpeg_error_mgr manager;      /* first: libjpeg's pointer is ours */
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} jpeg_failure;

static void record_and_jump(j_common_ptr cinfo)
{
    jpeg_failure *failure = (jpeg_failure *)cinfo->err;
    cinfo->err->format_message(cinfo, failure->message);
    longjmp(failure->jump, 1);
}

/* msg_level < 0 is a warning about damaged data: fatal here.  Trace
 * messages (>= 0) are dropped. */
static void emit_or_fail(j_common_ptr cinfo, int msg_level)
{
    if (msg_level < 0)
        record_and_jump(cinfo);
}

static void print_nothing(j_common_ptr cinfo)
{
    (void)cinfo;
}

typedef struct jpeg_reader {
    pv_io_file *file;
    pv_pixel_type type;
    struct jpeg_decompress_struct cinfo;
    jpeg_failure failure;
    int created;
    pv_image image;
    uint8_t *row;
    float *samples;
} jpeg_reader;

static pv_status jpeg_read_error(const jpeg_reader *r)
{
    if (ferror(r->file->stream))
        return pv_fail(NULL, PV_ERR_IO, "pv_image_read: '%s': read error (%s)", r->file->path,
                       r->failure.message);
    return pv_fail(NULL, PV_ERR_FORMAT, "pv_image_read: '%s': bad or truncated JPEG: %s",
                   r->file->path, r->failure.message);
}

/* Every block of the most finely sampled component takes at least one
 * bit of Huffman code in the first scan, and a block covers at most
 * 8x8 of that component's samples, which themselves cover up to 4x4
 * pixels when the scan codes a subsampled component alone: so a real
 * JPEG holds at most 8 * 64 * 16 pixels per byte.  Arithmetic coding has
 * no such floor and is refused. */
static pv_status check_jpeg_size(const jpeg_reader *r)
{
    const struct jpeg_decompress_struct *c = &r->cinfo;
    uint64_t pixels = (uint64_t)c->image_width * c->image_height;
    uint64_t limit = r->file->size * PV_IO_MAX_JPEG_PIXELS_PER_BYTE;
    if (c->arith_code)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': arithmetic-coded JPEG is not supported",
                       r->file->path);
    if (c->num_components != 1 && c->num_components != 3)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': JPEG with %d components is not supported (grey or "
                       "colour only)", r->file->path, c->num_components);
    if (c->image_width == 0 || c->image_height == 0 || c->image_width > INT_MAX ||
        c->image_height > INT_MAX || pixels > limit)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "pv_image_read: '%s': the JPEG header claims %ux%u pixels, more than the "
                       "%llu-byte file can hold", r->file->path, (unsigned)c->image_width,
                       (unsigned)c->image_height, (unsigned long long)r->file->size);
    return PV_OK;
}

static void start_jpeg(jpeg_reader *r)
{
    r->cinfo.err = jpeg_std_error(&r->failure.manager);
    r->failure.manager.error_exit = record_and_jump;
    r->failure.manager.emit_message = emit_or_fail;
    r->failure.manager.output_message = print_nothing;
    jpeg_create_decompress(&r->cinfo);
    r->created = 1;
    jpeg_stdio_src(&r->cinfo, r->file->stream);
}

static pv_status allocate_jpeg_buffers(jpeg_reader *r)
{
    int width = (int)r->cinfo.output_width;
    int channels = r->cinfo.output_components;
    r->row = malloc((size_t)width * (size_t)channels);
    r->samples = malloc((size_t)width * (size_t)channels * sizeof(float));
    if (!r->row || !r->samples)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': cannot allocate row buffers",
                       r->file->path);
    return pv_io_alloc_output(r->file, &r->image, width, (int)r->cinfo.output_height, r->type);
}

/* The header, read and checked against the size limits; libjpeg's errors
 * jump to the caller's setjmp, which must be set. */
static pv_status read_checked_header(jpeg_reader *r)
{
    start_jpeg(r);
    jpeg_read_header(&r->cinfo, TRUE);
    return check_jpeg_size(r);
}

static pv_status decode_jpeg(jpeg_reader *r)
{
    if (setjmp(r->failure.jump))
        return jpeg_read_error(r);
    pv_status status = read_checked_header(r);
    if (status != PV_OK)
        return status;
    r->cinfo.out_color_space = r->cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&r->cinfo);
    status = allocate_jpeg_buffers(r);
    if (status != PV_OK)
        return status;
    int channels = r->cinfo.output_components, width = (int)r->cinfo.output_width;
    while (r->cinfo.output_scanline < r->cinfo.output_height) {
        int y = (int)r->cinfo.output_scanline;
        JSAMPROW rows[1] = {r->row};
        if (jpeg_read_scanlines(&r->cinfo, rows, 1) != 1)
            return pv_fail(NULL, PV_ERR_FORMAT, "pv_image_read: '%s': JPEG data ended early",
                           r->file->path);
        pv_io_unpack_samples(r->row, (size_t)width * (size_t)channels, PV_IO_SAMPLE_U8,
                             r->samples);
        pv_io_store_samples(&r->image, y, r->samples, channels, 255);
    }
    /* Reading to EOI catches data damaged after the last row. */
    jpeg_finish_decompress(&r->cinfo);
    return PV_OK;
}

static void end_jpeg(jpeg_reader *r)
{
    if (r->created)
        jpeg_destroy_decompress(&r->cinfo);
    free(r->row);
    free(r->samples);
}

pv_status pv_io_read_jpeg(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    jpeg_reader *r = calloc(1, sizeof *r);
    if (!r)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read: '%s': no memory", file->path);
    r->file = file;
    r->type = type;
    pv_status status = decode_jpeg(r);
    end_jpeg(r);
    if (status == PV_OK)
        *out = r->image;
    else
        pv_image_free(&r->image);
    free(r);
    return status;
}

static pv_status info_jpeg(jpeg_reader *r, pv_image_info *info)
{
    if (setjmp(r->failure.jump))
        return jpeg_read_error(r);
    pv_status status = read_checked_header(r);
    if (status != PV_OK)
        return status;
    info->width = (int)r->cinfo.image_width;
    info->height = (int)r->cinfo.image_height;
    info->channels = r->cinfo.num_components;
    info->bits = r->cinfo.data_precision;
    info->format = PV_IMAGE_FORMAT_JPEG;
    return PV_OK;
}

pv_status pv_io_info_jpeg(pv_io_file *file, pv_image_info *info)
{
    jpeg_reader *r = calloc(1, sizeof *r);
    if (!r)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_image_read_info: '%s': no memory", file->path);
    r->file = file;
    pv_status status = info_jpeg(r, info);
    end_jpeg(r);
    free(r);
    return status;
}

int pv_io_have_jpeg(void)
{
    return 1;
}

#else /* !PV_HAVE_JPEG */

static pv_status no_jpeg(const pv_io_file *file)
{
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "pv_image_read: '%s' is a JPEG file and this build has no JPEG support "
                   "(configure with libjpeg, Debian package libjpeg-dev)", file->path);
}

pv_status pv_io_read_jpeg(pv_io_file *file, pv_pixel_type type, pv_image *out)
{
    (void)type;
    (void)out;
    return no_jpeg(file);
}

pv_status pv_io_info_jpeg(pv_io_file *file, pv_image_info *info)
{
    (void)info;
    return no_jpeg(file);
}

int pv_io_have_jpeg(void)
{
    return 0;
}

#endif
