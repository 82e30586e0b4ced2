/** @file
 * parvis image I/O: PGM/PPM (8/16-bit, binary or ASCII), PFM, PNG (1 to
 * 16 bits), when built with libjpeg, JPEG (baseline and progressive), and
 * when built with libtiff (>= 4.5), TIFF and BigTIFF: grey or RGB, 8/16-bit
 * unsigned or 32-bit float samples, strips or tiles, interleaved samples
 * only (PlanarConfiguration 2 is refused), either byte order, any
 * compression that libtiff decodes.  Only a TIFF's first page is the image;
 * pv_volume_read_tiff (parvis/volume_io.h) reads all pages as a volume.
 *
 * Read as a grey pixel type, colour images are converted to grey with the
 * Rec. 601 luma weights (0.299 R + 0.587 G + 0.114 B), computed in
 * floating point from the decoded samples; read as PV_PIXEL_RGB8 or
 * PV_PIXEL_RGB16 they keep their colour.  Alpha is dropped.  Malformed, truncated or absurdly
 * large files return PV_ERR_FORMAT, never crash, never print, and never
 * allocate more than a documented multiple of the file's size (see
 * docs/hardening.md).  Errors are reported through pv_last_error(). */
#ifndef PARVIS_IO_H
#define PARVIS_IO_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read any supported file (format from its magic bytes) into a newly
 * allocated image of pixel type `type`:
 *  - PV_PIXEL_U8: 8-bit data as is; deeper integer data (16-bit PGM/PPM/
 *    PNG, any maxval > 255) scaled by 255/maxval and rounded half up
 *    (65535 -> 255, 32768 -> 128, 128 -> 0.498 -> 0); PFM values rounded
 *    and clamped to 0..255.
 *  - PV_PIXEL_F32: integer formats keep their values, 0..maxval (so an
 *    8-bit file reads 0..255 and a 16-bit one 0..65535, exactly); PFM
 *    values as stored (INFINITY kept); TIFF float samples like PFM's and
 *    its 8/16-bit samples like PGM's of maxval 255/65535.  Colour folds to fractional luma.
 *  - PV_PIXEL_U16: 16-bit data as is; data of up to 8 bits (and PFM)
 *    as PV_PIXEL_U8 would read it, times 257 (255 -> 65535); other deeper
 *    data scaled by 65535/maxval and rounded half up.  Colour folds to
 *    luma before the rounding.
 *  - PV_PIXEL_RGB8, PV_PIXEL_RGB16: colour kept, each channel converted
 *    as PV_PIXEL_U8 / PV_PIXEL_U16 convert grey; a grey file gives three
 *    equal channels.
 * Alpha is dropped for every type.  The 16-bit and colour types keep a
 * file's depth and channels for SIFT (parvis/features.h) and pv_to_grey
 * (parvis/colour.h), which convert to grey on the device.
 * PV_ERR_UNSUPPORTED for a JPEG when the library was built without
 * libjpeg (pv_image_io_has_jpeg()), and for a TIFF when built without
 * libtiff (pv_image_io_has_tiff()).  Free the result with pv_image_free.
 * @param path the file's path
 * @param type the pixel type to read as
 * @param out receives the image
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_read(const char *path, pv_pixel_type type, pv_image *out);

/** File formats. */
typedef enum pv_image_format {
    PV_IMAGE_FORMAT_PGM = 1,    /**< P2, P5 */
    PV_IMAGE_FORMAT_PPM,        /**< P3, P6 */
    PV_IMAGE_FORMAT_PFM,        /**< Pf, PF */
    PV_IMAGE_FORMAT_PNG,        /**< PNG */
    PV_IMAGE_FORMAT_JPEG,       /**< JPEG */
    PV_IMAGE_FORMAT_TIFF        /**< TIFF, BigTIFF (the first page) */
} pv_image_format;

/** What a file holds before pv_image_read folds it to grey. */
typedef struct pv_image_info {
    pv_image_format format;  /**< the file's format */
    /** @{ */
    /** size in pixels */
    int width, height;
    /** @} */
    int channels;   /**< samples a pixel in the file: 1 grey, 2 grey + alpha,
                       3 colour, 4 colour + alpha (a PNG palette counts as
                       colour) */
    int bits;       /**< bits a sample: 1 to 16 for integer data (16 for a
                       maxval > 255), 32 for PFM and TIFF floats */
} pv_image_info;

/** Read only the header of a supported file and check it as pv_image_read
 * would (a header claiming more pixels than the file can hold is
 * PV_ERR_FORMAT); *info is written on success only.
 * @param path the file's path
 * @param info receives the header's description
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_read_info(const char *path, pv_image_info *info);

/** 1 when JPEG reading was built in.
 * @return 1 or 0 */
PV_API int pv_image_io_has_jpeg(void);

/** 1 when TIFF reading was built in (libtiff >= 4.5).
 * @return 1 or 0 */
PV_API int pv_image_io_has_tiff(void);

/** 8-bit binary PGM of a u8 image, or of an f32 image clamped and rounded
 * to 0..255.
 * @param path the file's path
 * @param image the image (u8 or f32)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_write_pgm(const char *path, const pv_image *image);

/** Greyscale PFM ("Pf", little-endian, rows bottom to top) of an f32 image.
 * @param path the file's path
 * @param image the image (f32)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_write_pfm(const char *path, const pv_image *image);

/** PNG in the image's own layout: 8-bit grey for u8, 16-bit grey for u16,
 * 8- or 16-bit RGB for the colour types; f32 images become 8-bit grey,
 * clamped and rounded to 0..255.
 * @param path the file's path
 * @param image the image
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_write_png(const char *path, const pv_image *image);

/** Write by file extension: .pgm, .pfm or .png.
 * @param path the file's path
 * @param image the image
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_image_write(const char *path, const pv_image *image);

#ifdef __cplusplus
}
#endif

#endif
