/* Internal to the image I/O module: the helpers of io_common.c that the
 * format files (io_pnm.c: PGM/PPM/PFM, io_png.c, io_jpeg.c, io_tiff.c) share, and the
 * format readers that io_image.c (the dispatch of pv_image_read /
 * pv_image_write) calls.  No format file calls another.
 *
 * Readers decode one row at a time into float samples and store them into
 * the output image with the conversion that parvis/io.h documents (colour
 * folded into Rec. 601 luma for grey pixel types).  They work on a local pv_image
 * and hand it to the caller only on success, so a failed read leaves the
 * caller's struct untouched.  Not installed. */
#ifndef PV_LIB_IO_H
#define PV_LIB_IO_H

#include "../core/internal.h"

#include <stdint.h>
#include <stdio.h>

/* Deflate cannot expand data by more than about 1032:1, so a PNG whose
 * pixels need more than this multiple of the file's size lies about its
 * size; rejecting it up front keeps a tiny file from causing a huge
 * allocation. */
#define PV_IO_MAX_DEFLATE_RATIO 1032u

/* A Huffman-coded JPEG spends at least one bit on each 8x8 block of the
 * first scan's component, whose samples cover at most 4x4 pixels when it
 * is subsampled: 8 * 64 * 16 pixels a byte at the very most (see
 * io_jpeg.c). */
#define PV_IO_MAX_JPEG_PIXELS_PER_BYTE 8192u

/* Decoded bytes a TIFF may hold per byte of file, all pages together:
 * room for JPEG's 8192 pixels a byte and any lossless coding of real
 * data, while a tiny file cannot claim gigabytes (see io_tiff.c). */
#define PV_IO_MAX_TIFF_RATIO 8192u

/* Pages of a multi-page TIFF read as a volume, at most. */
#define PV_IO_MAX_TIFF_PAGES 65536

/* ---- input files -------------------------------------------------------- */

typedef struct pv_io_file {
    const char *path;       /* for error messages */
    FILE *stream;
    uint64_t size;          /* bytes, from fstat when the file was opened */
} pv_io_file;

/* Open a regular file for reading (PV_ERR_IO if it cannot be opened or is
 * not a regular file, whose size could not be trusted); op names the
 * public function in the message. */
pv_status pv_io_open_input(const char *op, const char *path, pv_io_file *file);

/* Bytes between the read position and the end of the file. */
size_t pv_io_bytes_left(const pv_io_file *file);

/* The status for a short read: PV_ERR_IO when the stream reports an error,
 * else PV_ERR_FORMAT (the file ended early).  `what` names the part read. */
pv_status pv_io_read_failure(const pv_io_file *file, const char *what);

/* Allocate the output image after the caller has checked the file can
 * hold its pixels; the message names the file. */
pv_status pv_io_alloc_output(const pv_io_file *file, pv_image *image, int width, int height,
                             pv_pixel_type type);

/* ---- samples and rows --------------------------------------------------- */

typedef enum pv_io_sample_kind {
    PV_IO_SAMPLE_U8,
    PV_IO_SAMPLE_U16_BE,    /* Netpbm and PNG store 16-bit samples big-endian */
    PV_IO_SAMPLE_F32_LE,
    PV_IO_SAMPLE_F32_BE
} pv_io_sample_kind;

size_t pv_io_sample_bytes(pv_io_sample_kind kind);

/* Decode `count` packed samples into floats. */
void pv_io_unpack_samples(const uint8_t *raw, size_t count, pv_io_sample_kind kind, float *out);

/* Store a decoded row of `width` pixels of 1 (grey) or 3 (RGB) interleaved
 * samples into row y of the image, as parvis/io.h documents for its pixel
 * type: grey types fold colour to Rec. 601 luma (in place: the samples are
 * changed), colour types replicate grey; U8 and RGB8 take the values
 * rounded and clamped, rescaled by 255 / maxval when maxval exceeds 255;
 * U16 and RGB16 take them times 257 when maxval is at most 255, else
 * rescaled by 65535 / maxval; F32 takes them as they are.  Float sources
 * pass 255. */
void pv_io_store_samples(pv_image *image, int y, float *samples, int channels, unsigned maxval);

/* Rec. 601 luma, in double so that equal channels give their value back
 * exactly after rounding to float. */
static inline float pv_io_luma(float r, float g, float b)
{
    return (float)(0.299 * r + 0.587 * g + 0.114 * b);
}

/* Round half up and clamp to 0..255; NaN gives 0. */
static inline uint8_t pv_io_to_u8(float value)
{
    if (!(value > 0.0f))
        return 0;
    if (value >= 255.0f)
        return 255;
    return (uint8_t)(value + 0.5f);
}

/* Row y of any image as 8-bit grey (f32 clamped and rounded). */
void pv_io_row_to_u8(const pv_image *image, int y, uint8_t *out);

/* ---- output files ------------------------------------------------------- */

typedef struct pv_io_output {
    const char *function;   /* the public function, for error messages */
    const char *path;
    FILE *stream;
    int regular;            /* a regular file, which a failed write removes */
} pv_io_output;

/* PV_ERR_INVALID unless path is non-NULL and image is a valid grey (U8 or
 * F32) image. */
pv_status pv_io_check_write_args(const char *function, const char *path, const pv_image *image);
/* The same, accepting the 16-bit and colour pixel types too. */
pv_status pv_io_check_write_args_any_type(const char *function, const char *path,
                                          const pv_image *image);

pv_status pv_io_open_output(pv_io_output *out, const char *function, const char *path);

/* fwrite that records PV_ERR_IO on a short write. */
pv_status pv_io_write_bytes(pv_io_output *out, const void *bytes, size_t count);

/* Close the file.  When status (of the writing so far) or the close fails,
 * the partial file is removed and the failure returned. */
pv_status pv_io_finish_output(pv_io_output *out, pv_status status);

/* ---- format readers (the file positioned at its start) ------------------- */

pv_status pv_io_read_pnm(pv_io_file *file, pv_pixel_type type, pv_image *out);
pv_status pv_io_read_pfm(pv_io_file *file, pv_pixel_type type, pv_image *out);
pv_status pv_io_read_png(pv_io_file *file, pv_pixel_type type, pv_image *out);
pv_status pv_io_read_jpeg(pv_io_file *file, pv_pixel_type type, pv_image *out);
pv_status pv_io_read_tiff(pv_io_file *file, pv_pixel_type type, pv_image *out);

/* The same files' headers alone, checked as the readers check them. */
pv_status pv_io_info_pnm(pv_io_file *file, pv_image_info *info);
pv_status pv_io_info_pfm(pv_io_file *file, pv_image_info *info);
pv_status pv_io_info_png(pv_io_file *file, pv_image_info *info);
pv_status pv_io_info_jpeg(pv_io_file *file, pv_image_info *info);
pv_status pv_io_info_tiff(pv_io_file *file, pv_image_info *info);

/* 1 when JPEG support was built in. */
int pv_io_have_jpeg(void);
/* 1 when TIFF support was built in. */
int pv_io_have_tiff(void);

/* The 8 bytes every PNG file starts with. */
extern const uint8_t pv_io_png_signature[8];

#endif
