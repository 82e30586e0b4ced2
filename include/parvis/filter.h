/** @file
 * parvis filters: separable Gaussian blur (2D/3D) and image gradients.
 *
 * Borders are replicated (clamp to edge).  The Gaussian taps are computed
 * once by the front end, so both backends apply exactly the same kernel;
 * the OpenCL result is within 1e-5 relative (of the image's value range) of
 * the CPU result.
 *
 * Finite input: an f32 source (image or volume) holding NaN or an infinity
 * is refused with PV_ERR_INVALID naming the argument and the first such
 * pixel, before any work, as every parvis operation on float input does. */
#ifndef PARVIS_FILTER_H
#define PARVIS_FILTER_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Number of taps used for sigma when the caller passes taps = 0:
 * 2 * ceil(3 sigma) + 1, at least 3.
 * @param sigma the Gaussian's standard deviation
 * @return the tap count */
PV_API int pv_gaussian_taps_for_sigma(float sigma);

/** Fill `weights` (taps entries, odd taps >= 1) with the normalised Gaussian
 * of standard deviation sigma centred on the middle tap.
 * @param sigma the Gaussian's standard deviation
 * @param taps the number of taps (odd), or 0 to derive it from sigma
 * @param weights receives taps weights
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_gaussian_weights(float sigma, int taps, float *weights);

/** dst = src blurred by a separable Gaussian.  src is u8 or f32, dst must be
 * f32 of the same size (and may not alias src).  taps = 0 picks the count
 * from sigma; otherwise taps must be odd.  sigma > 0 and finite.
 * @param ctx the context
 * @param src the input (u8 or f32)
 * @param dst receives the blurred image (f32, src's size)
 * @param sigma the Gaussian's standard deviation
 * @param taps the number of taps (odd), or 0 to derive it from sigma
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_gaussian_blur(pv_context *ctx, const pv_image *src, pv_image *dst,
                                  float sigma, int taps);

/** The same in 3D; src and dst are volumes of equal size, not aliased.
 * @param ctx the context
 * @param src the input volume
 * @param dst receives the blurred volume (src's size)
 * @param sigma the Gaussian's standard deviation
 * @param taps the number of taps (odd), or 0 to derive it from sigma
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_gaussian_blur3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                                    float sigma, int taps);

/** Finite differences of pv_gradient and pv_gradient3d. */
typedef enum pv_gradient_scheme {
    /** (f(x+1) - f(x-1)) / 2 inside, one-sided differences at the borders. */
    PV_GRADIENT_CENTRAL = 0,
    /** f(x+1) - f(x), and 0 at the far border (as in the 3D motion
     * estimation paper). */
    PV_GRADIENT_FORWARD = 1
} pv_gradient_scheme;

/** gx, gy: f32 images of src's size; src is u8 or f32.  Either output may be
 * NULL to skip it (not both).
 * @param ctx the context
 * @param src the input (u8 or f32)
 * @param gx receives the x derivative, or NULL
 * @param gy receives the y derivative, or NULL
 * @param scheme the difference scheme
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_gradient(pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,
                             pv_gradient_scheme scheme);

/** 3D gradients; any of gx, gy, gz may be NULL (not all three).
 * @param ctx the context
 * @param src the input volume
 * @param gx receives the x derivative, or NULL
 * @param gy receives the y derivative, or NULL
 * @param gz receives the z derivative, or NULL
 * @param scheme the difference scheme
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                               pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

#ifdef __cplusplus
}
#endif

#endif
