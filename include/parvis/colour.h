/** @file
 * parvis colour: colour and 16-bit images converted to grey.
 *
 * Most real pictures are colour, and scientific ones often 16-bit.  SIFT
 * (parvis/features.h) takes them directly and converts them on the
 * device; pv_to_grey offers the same conversion on its own. */
#ifndef PARVIS_COLOUR_H
#define PARVIS_COLOUR_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The grey value of each pixel of `in` into the f32 image `out` (same
 * size, its own memory), on the context's backend, computed in float:
 *  - PV_PIXEL_U8, PV_PIXEL_F32: the value as it is;
 *  - PV_PIXEL_RGB8: the Rec. 601 luma 0.299 R + 0.587 G + 0.114 B, summed
 *    in that order (the weights of pv_image_read's colour folding);
 *  - PV_PIXEL_U16: the value times 1/257, and PV_PIXEL_RGB16: the luma
 *    times 1/257, so that 16-bit data lands on the 0..255 range of 8-bit
 *    data (65535 -> 255, and an 8-bit picture widened by 257, as
 *    pv_image_read does, gives back its 8-bit grey values).  Thresholds
 *    tuned on 8-bit pictures, SIFT's among them, then behave the same on
 *    16-bit versions of them.
 * Cross-check (PARVIS_CROSSCHECK): both backends do the same float
 * operations in the same order; the tolerance is a relative L-infinity of
 * 1e-6.  PV_ERR_INVALID for a NULL or malformed image, an output that is
 * not f32, of another size or overlapping the input; outputs untouched on
 * error.
 * @param ctx the context
 * @param in the input image (any pixel type)
 * @param out receives the grey values (f32, in's size)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_to_grey(pv_context *ctx, const pv_image *in, pv_image *out);

#ifdef __cplusplus
}
#endif

#endif
