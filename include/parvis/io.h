/* parvis image I/O: PGM/PPM (8/16-bit), PFM and PNG.
 *
 * Colour images are converted to grey with the Rec. 601 luma weights
 * (0.299 R + 0.587 G + 0.114 B).  Malformed, truncated or absurdly large
 * files return PV_ERR_FORMAT, never crash or allocate beyond the file's
 * actual size.  Errors are reported through pv_last_error(). */
#ifndef PARVIS_IO_H
#define PARVIS_IO_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read any supported file (format from its magic bytes) into a newly
 * allocated image of pixel type `type`:
 *  - PV_PIXEL_U8: 8-bit data as is; 16-bit PGM scaled by 255/maxval;
 *    PFM values rounded and clamped to 0..255.
 *  - PV_PIXEL_F32: integer formats keep their values (0..maxval);
 *    PFM values as stored (INFINITY kept).
 * Free the result with pv_image_free. */
PV_API pv_status pv_image_read(const char *path, pv_pixel_type type, pv_image *out);

/* 8-bit binary PGM of a u8 image, or of an f32 image clamped and rounded
 * to 0..255. */
PV_API pv_status pv_image_write_pgm(const char *path, const pv_image *image);

/* Greyscale PFM ("Pf", little-endian, rows bottom to top) of an f32 image. */
PV_API pv_status pv_image_write_pfm(const char *path, const pv_image *image);

/* 8-bit grey PNG; f32 images are clamped and rounded to 0..255. */
PV_API pv_status pv_image_write_png(const char *path, const pv_image *image);

/* Write by file extension: .pgm, .pfm or .png. */
PV_API pv_status pv_image_write(const char *path, const pv_image *image);

#ifdef __cplusplus
}
#endif

#endif
