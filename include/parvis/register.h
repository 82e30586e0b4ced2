/** @file
 * parvis register: phase correlation (2D/3D, sub-pixel), masked phase
 * correlation (Padfield's masked NCC, 2D/3D) and normalized
 * cross-correlation (one image, a batch of images, or masked).
 *
 * Shift convention: a shift s means moving(p) ~ reference(p - s), i.e. the
 * moving image is the reference displaced by +s.  In 2D dz is 0.
 *
 * Phase correlation: R = (M / |M|) conj(F / |F|) over the spectra M of the
 * moving and F of the reference input, and c = IDFT(R).  Bins where either
 * spectrum vanishes give 0, never NaN; reference bins more than 100 dB
 * below the spectrum's mean power hold only rounding and count as empty.
 * The integer shift is the position of the largest value of c, wrapped to
 * signed shifts (an index past half the transform length is a negative
 * shift; exactly half is positive).  The peak is c there, divided by the
 * number of non-empty reference bins, so two identical textured inputs
 * give 1.  With padding or a window, each input's mean is subtracted
 * first, so that the zeros of the padding and the window's taper do not
 * form an edge that correlates with itself at shift 0.
 *
 * Inputs with no texture (all values equal) have no defined shift: the
 * result is shift 0, peak 0 and the flag PV_REGISTER_NO_TEXTURE.
 * Data containing NaN or Inf are rejected with PV_ERR_INVALID. */
#ifndef PARVIS_REGISTER_H
#define PARVIS_REGISTER_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Result flags. */
#define PV_REGISTER_NO_TEXTURE 0x1u  /**< an input is constant: no shift can be measured */
#define PV_REGISTER_AT_EDGE 0x2u     /**< sub-pixel fit impossible (peak on the map's edge) */

/** How inputs are padded before the transform. */
typedef enum pv_pad_mode {
    /** Transform at the input size: circular correlation.  With clFFT (see
     * pv_fft_engine) the OpenCL backend then needs sizes with factors 2, 3,
     * 5, 7, 11, 13 only and returns PV_ERR_UNSUPPORTED for others; VkFFT
     * and FFTW take any size. */
    PV_PAD_NONE = 0,
    /** Zero-pad each axis up to the next size with factors 2, 3, 5, 7. */
    PV_PAD_FFT = 1,
    /** Zero-pad each axis to at least 2n - 1 (then FFT-friendly): linear
     * correlation, no wrap-around (the thesis's padding). */
    PV_PAD_LINEAR = 2
} pv_pad_mode;

/** The window applied to both inputs. */
typedef enum pv_window_kind {
    PV_WINDOW_NONE = 0,  /**< no window */
    /** Separable Hann window 0.5 - 0.5 cos(2 pi i / (n - 1)) on both inputs,
     * against the edges' wrap-around. */
    PV_WINDOW_HANN = 1
} pv_window_kind;

/** How the peak is refined below a pixel. */
typedef enum pv_subpixel_method {
    PV_SUBPIXEL_NONE = 0,  /**< the integer peak */
    /** Guizar-Sicairos et al. 2008: the correlation evaluated by
     * matrix-multiply DFTs on a grid of step 1/upsample around the peak:
     * first a 1.5-pixel window, then finer windows (at most 10x finer each
     * step) around the best point, until the step is 1/upsample. */
    PV_SUBPIXEL_UPSAMPLE = 1,
    /** A parabola through the peak and its two neighbours, per axis. */
    PV_SUBPIXEL_PARABOLIC = 2
} pv_subpixel_method;

/** Phase-correlation options (defaults at each field). */
typedef struct pv_phasecorr_options {
    pv_pad_mode pad;              /**< default PV_PAD_NONE */
    pv_window_kind window;        /**< default PV_WINDOW_NONE */
    pv_subpixel_method subpixel;  /**< default PV_SUBPIXEL_NONE */
    int upsample;                 /**< PV_SUBPIXEL_UPSAMPLE factor, 2..10000; default 100 */
} pv_phasecorr_options;

/** Fill options with the defaults given at each field.
 * @param options receives the defaults */
PV_API void pv_phasecorr_options_default(pv_phasecorr_options *options);

/** A measured shift. */
typedef struct pv_shift {
    /** @{ */
    /** moving(p) ~ reference(p - shift) */
    double dx, dy, dz;
    /** @} */
    double peak;        /**< normalized correlation peak (1 for identical inputs) */
    unsigned flags;     /**< PV_REGISTER_* */
} pv_shift;

/* ------------------------------------------------------------ FFT engine */
/** The CPU backend transforms with FFTW.  The OpenCL backend transforms
 * with clFFT or, when the library was built with VkFFT (configure
 * --with-vkfft, on by default where vkFFT.h is installed), with VkFFT.
 * Per OpenCL context the engine is the one set with
 * pv_context_set_fft_engine, else the environment's PARVIS_FFT=clfft|vkfft,
 * else VkFFT when built in (several times faster than clFFT on NVIDIA),
 * else clFFT.  The choice applies to plans made and NCC calls run after
 * it; a plan keeps the engine it was made with.  Both engines give the
 * same peaks (cross-check tolerances below). */
typedef enum pv_fft_engine {
    PV_FFT_AUTO = 0,    /**< the default described above */
    PV_FFT_CLFFT = 1,
    PV_FFT_VKFFT = 2,
    PV_FFT_FFTW = 3     /**< the CPU backend's (reported, not selectable) */
} pv_fft_engine;

/** "auto", "clFFT", "VkFFT", "FFTW"; "unknown" otherwise.
 * @param engine the FFT engine
 * @return a constant string, never NULL */
PV_API const char *pv_fft_engine_name(pv_fft_engine engine);
/** 1 when this build has the engine (PV_FFT_AUTO and PV_FFT_FFTW: always).
 * @param engine the FFT engine
 * @return 1 or 0 */
PV_API int pv_fft_engine_available(pv_fft_engine engine);
/** Pick the OpenCL FFT engine of ctx (PV_FFT_AUTO: back to the default).
 * PV_ERR_INVALID for PV_FFT_FFTW or an unknown value; PV_ERR_UNSUPPORTED
 * when the engine is not built in (on any context).  On a CPU context an
 * engine that is built in is accepted and has no effect.
 * @param ctx the context
 * @param engine the engine wanted
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_context_set_fft_engine(pv_context *ctx, pv_fft_engine engine);
/** The engine ctx's next plan will use: PV_FFT_FFTW on the CPU backend,
 * else PV_FFT_CLFFT or PV_FFT_VKFFT (PV_ERR_INVALID / PV_ERR_UNSUPPORTED
 * when PARVIS_FFT names an unknown or unbuilt engine).
 * @param ctx the context
 * @param engine receives the engine in use
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_context_fft_engine(pv_context *ctx, pv_fft_engine *engine);

/* Cross-check tolerances (the OpenCL result against the CPU backend):
 * the same integer peak; sub-pixel shifts within 1e-3 px (upsampled DFT:
 * within one grid step 1/upsample when two grid points tie); peak values
 * within 1e-3; NCC maps within 1e-4. */

/* ------------------------------------------------------- one-shot calls */

/** reference and moving: same size, u8, u16 or f32 grey (types may
 * differ; u16 goes to the device as 16 bits, with the result of the same
 * values as f32).  options may be NULL (defaults).
 * @param ctx the context
 * @param reference the reference image
 * @param moving the moving image
 * @param options the options, or NULL (defaults)
 * @param shift receives the shift
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate(pv_context *ctx, const pv_image *reference, const pv_image *moving,
                                    const pv_phasecorr_options *options, pv_shift *shift);
/** The same in 3D.  The volumes, and those of the 3D plans below, may be
 * PV_VOLUME_F32 or PV_VOLUME_U16 (uploaded as 16 bits, converted on the
 * device; results equal to the f32 call's on the same values).
 * @param ctx the context
 * @param reference the reference volume
 * @param moving the moving volume
 * @param options the options, or NULL (defaults)
 * @param shift receives the shift
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate3d(pv_context *ctx, const pv_volume *reference,
                                      const pv_volume *moving, const pv_phasecorr_options *options,
                                      pv_shift *shift);

/* ----------------------------------------------- plans (cached reference) */
/** A plan keeps the reference's spectrum (on the device for OpenCL), the
 * FFT plans and the buffers for up to max_batch movers, so correlating a
 * mover costs one upload, one R2C, one C2R and a reduction.  Movers are
 * any images / volumes (or views of sub-volumes) of the reference's size.
 * A plan belongs to its context: destroy it before the context.  Calls
 * on plans of one context are serialised with the context's calls (see
 * parvis/core.h).  Phase correlation needs at least 2 samples along x
 * (PV_ERR_INVALID otherwise, on every backend). */
typedef struct pv_phasecorr_plan pv_phasecorr_plan;

/** Create a plan for one reference image (see pv_phasecorr_plan).
 * @param ctx the context
 * @param reference the reference image
 * @param options the options, or NULL (defaults)
 * @param max_batch most movers one call may take
 * @param plan receives the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_create(pv_context *ctx, const pv_image *reference,
                                          const pv_phasecorr_options *options, int max_batch,
                                          pv_phasecorr_plan **plan);
/** The same in 3D.  The volumes, and those of the 3D plans below, may be
 * PV_VOLUME_F32 or PV_VOLUME_U16 (uploaded as 16 bits, converted on the
 * device; results equal to the f32 call's on the same values).
 * @param ctx the context
 * @param reference the reference volume
 * @param options the options, or NULL (defaults)
 * @param max_batch most movers one call may take
 * @param plan receives the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_create3d(pv_context *ctx, const pv_volume *reference,
                                            const pv_phasecorr_options *options, int max_batch,
                                            pv_phasecorr_plan **plan);
/** Destroy a plan.
 * @param plan the plan, or NULL */
PV_API void pv_phasecorr_plan_destroy(pv_phasecorr_plan *plan);

/** Replace the reference (same size as the plan's).
 * @param plan the plan
 * @param reference the new reference image
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_set_reference(pv_phasecorr_plan *plan, const pv_image *reference);
/** The same in 3D.
 * @param plan the plan
 * @param reference the new reference volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_set_reference3d(pv_phasecorr_plan *plan,
                                                   const pv_volume *reference);

/** Correlate count movers with the reference: shifts[i] for movers[i].
 * Movers go through the device max_batch at a time.
 * @param plan the plan
 * @param movers count moving images
 * @param count the number of movers
 * @param shifts receives count shifts
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_correlate(pv_phasecorr_plan *plan, const pv_image *movers, int count,
                                             pv_shift *shifts);
/** The same in 3D.
 * @param plan the plan
 * @param movers count moving volumes
 * @param count the number of movers
 * @param shifts receives count shifts
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_correlate3d(pv_phasecorr_plan *plan, const pv_volume *movers,
                                               int count, pv_shift *shifts);

/** Transform size the plan uses per axis (after padding).
 * @param plan the plan
 * @param size receives the size along x, y and z
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_fft_size(const pv_phasecorr_plan *plan, int size[3]);

/** Benchmark aid: run only the plan's forward and inverse transforms, once,
 * over all of its max_batch buffers, and report their time as the call's
 * (pv_context_last_timing): the bare R2C + C2R pair of the plan's engine
 * and size, to set beside a correlation.  The reference and the results
 * of earlier correlations are left alone.
 * @param plan the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_time_fft(pv_phasecorr_plan *plan);

/* --------------------------------------------- masked phase correlation */
/** Masked registration (Padfield, "Masked object registration in the
 * Fourier domain", IEEE TIP 2012; scikit-image's phase_cross_correlation
 * with reference_mask / moving_mask): for every integer shift s, the
 * normalised cross-correlation of moving(p) and reference(p - s) over the
 * pixels p valid in both masks (means and variances over that overlap
 * only), computed with linear (zero-padded, never wrapped) FFT
 * correlations.  Shifts whose overlap counts fewer than
 * overlap_ratio * (the largest overlap of any shift) pixels score 0, as
 * do overlaps where either side has no variance (below 1e-4 of that
 * side's whole masked energy about its masked mean: float rounding).
 * Coefficients are clipped to [-1, 1].  The shift is the integer shift of
 * the largest coefficient (the first in memory order on ties), with the
 * convention of pv_phase_correlate (moving(p) ~ reference(p - shift));
 * scikit-image reports its negation.  peak is that coefficient.
 *
 * Masks: u8 or f32, the size of their image; non-zero = valid.  A mask
 * with no valid pixel is refused (PV_ERR_INVALID), as are inputs less
 * than 2 samples wide (as for pv_phase_correlate).  When the masked
 * reference or the masked moving input is constant the result is shift 0,
 * peak 0 and PV_REGISTER_NO_TEXTURE.  Cross-check tolerance: the same
 * integer shift, peaks within 1e-4. */
typedef struct pv_phasecorr_masked_params {
    /** the least overlap, as a fraction of the largest overlap of any
     * shift, a shift needs to score; (0, 1], default 0.3 */
    double overlap_ratio;
} pv_phasecorr_masked_params;

/** Fill params with the declared defaults.
 * @param params receives the defaults */
PV_API void pv_phasecorr_masked_params_default(pv_phasecorr_masked_params *params);

/** Masked phase correlation of two images (see pv_phasecorr_masked_params).
 * @param ctx the context
 * @param reference the reference image (u8 or f32)
 * @param moving the moving image, the reference's size
 * @param reference_mask the reference's mask (u8 or f32, its size)
 * @param moving_mask the moving image's mask, or NULL: reference_mask
 * @param params the parameters, or NULL (defaults)
 * @param shift receives the integer shift and the peak coefficient
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate_masked(pv_context *ctx, const pv_image *reference,
                                           const pv_image *moving, const pv_image *reference_mask,
                                           const pv_image *moving_mask,
                                           const pv_phasecorr_masked_params *params,
                                           pv_shift *shift);
/** The same in 3D (masks are f32 or u16 volumes, non-zero = valid; the
 * volumes may be u16 too).
 * @param ctx the context
 * @param reference the reference volume
 * @param moving the moving volume, the reference's size
 * @param reference_mask the reference's mask
 * @param moving_mask the moving volume's mask, or NULL: reference_mask
 * @param params the parameters, or NULL (defaults)
 * @param shift receives the integer shift and the peak coefficient
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate_masked3d(pv_context *ctx, const pv_volume *reference,
                                             const pv_volume *moving,
                                             const pv_volume *reference_mask,
                                             const pv_volume *moving_mask,
                                             const pv_phasecorr_masked_params *params,
                                             pv_shift *shift);

/* -------------------------------------------- normalized cross-correlation */
/** The full coefficient map of the template sliding over the image, of size
 * (image.width + templ.width - 1) x (image.height + templ.height - 1), as
 * MATLAB's normxcorr2: map element (u, v) puts the template's top-left
 * corner at image position (u - templ.width + 1, v - templ.height + 1).
 *
 * Every coefficient is normalized over the pixels where template and image
 * actually overlap (Padfield's generalized NCC, thesis eq. 6.1): means and
 * variances of both over the overlap only.  Where the template lies wholly
 * inside the image this is exactly normxcorr2's value.  Coefficients are 0
 * where the overlap has fewer than min_overlap pixels, or where either side
 * has no variance over the overlap (a textureless patch); values lie in
 * [-1, 1] and are never NaN. */
/** The peak of a normalised cross-correlation. */
typedef struct pv_ncc_result {
    /** @{ */
    /** best offset: template top-left in image coordinates */
    int x, y;
    /** @} */
    float coefficient;  /**< its coefficient */
    /** @{ */
    /** refined by a quadratic fit through the neighbours */
    double sub_x, sub_y;
    /** @} */
    unsigned flags;     /**< PV_REGISTER_NO_TEXTURE: template or image is constant
                           (the map is all 0); PV_REGISTER_AT_EDGE: no fit */
} pv_ncc_result;

/** templ, image: u8 or f32, any sizes (the template may be as large as the
 * image or larger).  out: f32 image of the map's size, caller-allocated, or
 * NULL when only the result is wanted; result may be NULL (not both).
 * min_overlap >= 0 pixels.
 * @param ctx the context
 * @param templ the template
 * @param image the image searched
 * @param min_overlap the least overlap, in pixels, a position needs
 * @param out receives the correlation map, or NULL
 * @param result receives the peak
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_normxcorr2(pv_context *ctx, const pv_image *templ, const pv_image *image,
                               int min_overlap, pv_image *out, pv_ncc_result *result);

/** One template against count images of one size (tiles of a mosaic,
 * frames of a video, a stack of cells against one reference) in one call:
 * outs[i] and results[i] are exactly those of
 * pv_normxcorr2(templ, images[i], min_overlap, ...).  The context's lock
 * and the template's preparation are taken once; on OpenCL the template
 * is uploaded and transformed once, every image's work is queued and the
 * call waits once (per 256 MiB of working copies; ordinary batches are one
 * chunk).  Images: u8 or f32 (types may differ), all of images[0]'s size.
 * outs: count f32 maps of the map's size, or NULL when only the results
 * are wanted; results: count results, or NULL (not both NULL).  count >=
 * 1.  Every image and output is checked before any work: on a bad
 * argument nothing is touched; on a failure during the work every map of
 * outs is set to 0 and results are not written, so that no half-finished
 * batch can pass for a result.
 * @param ctx the context
 * @param templ the template (u8 or f32)
 * @param images count images searched, of one size
 * @param count the number of images
 * @param min_overlap the least overlap, in pixels, a position needs
 * @param outs receives count correlation maps, or NULL
 * @param results receives count peaks, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_normxcorr2_batch(pv_context *ctx, const pv_image *templ,
                                     const pv_image *images, int count, int min_overlap,
                                     pv_image *outs, pv_ncc_result *results);

/** Masked normalized cross-correlation (OpenCV's matchTemplate with a
 * mask and TM_CCOEFF_NORMED; Padfield's masked NCC): the map and result
 * of pv_normxcorr2, each coefficient normalised over the pixels of the
 * overlap where both masks are valid (means and variances over those
 * pixels only), so that masked-out pixels (a blob, a border, a saturated
 * region) neither count nor move the means.
 *
 * templ_mask: a u8 image of templ's size; image_mask: a u8 image of
 * image's size, or NULL (every image pixel valid); non-zero = valid.  A
 * mask of another size or type, or one without a valid pixel, is refused
 * (PV_ERR_INVALID).  Coefficients are 0 where fewer than min_overlap
 * pixels (or none) are valid in both, or where either side is flat over
 * them (its variance sum at most 1e-5 of its square sum, float rounding);
 * they lie in [-1, 1] and are never NaN.  The peak, sub-pixel fit and
 * flags are pv_normxcorr2's; PV_REGISTER_NO_TEXTURE when the template's
 * or the image's valid pixels are all equal.
 *
 * The sums run directly over each overlap (exact to float rounding, even
 * for small overlaps; an FFT would round them to the whole image's
 * energy), so the cost grows as map points times the template's valid
 * pixels: calls above 2^38 such pairs are refused (PV_ERR_INVALID).
 * Where every pixel of both masks is valid the call computes
 * pv_normxcorr2's map, bit for bit.  Cross-check tolerance: maps within
 * 1e-4.
 * @param ctx the context
 * @param templ the template (u8 or f32)
 * @param image the image searched (u8 or f32)
 * @param templ_mask the template's mask (u8, templ's size)
 * @param image_mask the image's mask (u8, image's size), or NULL
 * @param min_overlap the least number of pixels valid in both a position
 *        needs
 * @param out receives the correlation map, or NULL
 * @param result receives the peak, or NULL (not both NULL)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_normxcorr2_masked(pv_context *ctx, const pv_image *templ,
                                      const pv_image *image, const pv_image *templ_mask,
                                      const pv_image *image_mask, int min_overlap,
                                      pv_image *out, pv_ncc_result *result);

#ifdef __cplusplus
}
#endif

#endif
