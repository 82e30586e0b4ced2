/** @file
 * parvis on a caller's OpenCL objects: contexts made on a caller's
 * cl_context and cl_command_queue, operations that take and return device
 * buffers (pv_buffer) without a host round trip, asynchronously, ordered by
 * OpenCL events.  Needs the OpenCL headers; not included by parvis.h.
 *
 * A device-buffer call (pv_*_cl) checks its arguments, queues its work and
 * returns: the work runs after every event of the wait list and, on a
 * context made with pv_context_create_cl, after every command the caller
 * queued on its queue before the call; the caller's later commands on that
 * queue run after the work, and `done` (when not NULL) receives an event
 * (the caller's to release) that completes with it.  pv_wait
 * (parvis/async.h) waits for every call queued on the context.  The inputs must not be written, nor
 * the outputs read, before that.  A call that fails leaves its outputs
 * untouched (nothing was queued, or what was has finished) and gives no
 * event.  The results are the same as the host calls': the same kernels
 * run, and the host calls' copies between host and device become copies
 * between the caller's buffers and parvis's on the device.  With the
 * context's cross-check on, the inputs are read to the host, the host call
 * runs (with its cross-check) and the outputs are written back: slower,
 * same results, and the call has returned only when they are written.
 *
 * Device-buffer forms exist for SGM, SAD, BP, the grey conversion, the
 * Gaussian blur (2D and 3D), the 3D flow, phase correlation (2D and 3D,
 * one-shot, plans and masked), normxcorr2 (one-shot, masked and batch), SIFT
 * (detection, batches, the chain and tracking), the AO-OCT registration (and
 * average), the gradients (2D and 3D), the flow's warp and the SAD and SGM
 * batches (docs/interop.md); on a CPU context they fail with
 * PV_ERR_UNSUPPORTED. */
#ifndef PARVIS_INTEROP_H
#define PARVIS_INTEROP_H

#include "async.h"
#include "colour.h"
#include "core.h"
#include "features.h"
#include "filter.h"
#include "flow.h"
#include "geometry.h"
#include "octreg.h"
#include "register.h"
#include "stereo.h"

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API level parvis is written against (1.2), unless the
 * program chose one before including this header. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A 2D image or a 3D volume in a caller's OpenCL buffer.  parvis neither
 * retains nor releases mem; it must belong to the context's cl_context and
 * hold every row: offset + ((depth - 1) * slice_stride + (height - 1) *
 * stride + width) * pixel size bytes.  An image has depth 1 (or 0, which
 * means 1: the members added for volumes may be left zero); a volume has
 * depth > 1, PV_PIXEL_F32 or PV_PIXEL_U16 samples, and slices
 * slice_stride pixels apart. */
typedef struct pv_buffer {
    cl_mem mem;           /**< the caller's buffer */
    size_t offset;        /**< bytes from the buffer's start to pixel (0, 0) */
    int width;            /**< pixels a row */
    int height;           /**< rows */
    ptrdiff_t stride;     /**< pixels from one row's start to the next's (>= width) */
    pv_pixel_type type;   /**< the pixel type */
    int depth;            /**< slices (volumes; 0 or 1 for an image) */
    ptrdiff_t slice_stride; /**< pixels from one slice's start to the next's
                               (>= stride * height; volumes only) */
} pv_buffer;

/** A dense width x height image of `type` at the start of mem (offset 0,
 * stride width).
 * @param mem the caller's buffer
 * @param width pixels a row
 * @param height rows
 * @param type the pixel type
 * @return the description (nothing is checked here) */
PV_API pv_buffer pv_buffer_wrap(cl_mem mem, int width, int height, pv_pixel_type type);

/** A dense nx x ny x nz volume of `type` (PV_PIXEL_F32 or PV_PIXEL_U16) at
 * the start of mem (offset 0, stride nx, slice_stride nx * ny).
 * @param mem the caller's buffer
 * @param nx samples a row
 * @param ny rows a slice
 * @param nz slices
 * @param type the sample type
 * @return the description (nothing is checked here) */
PV_API pv_buffer pv_buffer_wrap3d(cl_mem mem, int nx, int ny, int nz, pv_pixel_type type);

/** A context on the caller's cl_context and (optionally) cl_command_queue.
 * parvis retains both for the context's life and releases only those
 * references; it makes its own profiling queue on the same device and
 * orders its work with the caller's queue through events, so the
 * caller's queue may be in order or not, with profiling or without.
 * queue NULL: the first device of the context, no queue to follow.
 * @param out receives the context (NULL on failure)
 * @param context the caller's OpenCL context
 * @param queue the caller's queue on one of its devices, or NULL
 * @return PV_OK; PV_ERR_INVALID for a NULL context or a queue of another
 *         context; PV_ERR_NO_DEVICE for a device the platforms do not list;
 *         PV_ERR_UNSUPPORTED without the OpenCL backend */
PV_API pv_status pv_context_create_cl(pv_context **out, cl_context context,
                                      cl_command_queue queue);

/** The context's cl_context and the queue a caller should order its own
 * work with: its own queue on a context made by pv_context_create_cl,
 * else parvis's queue.  Neither is retained for the caller.
 * @param ctx an OpenCL context
 * @param context receives the cl_context
 * @param queue receives the queue
 * @return PV_OK, or PV_ERR_UNSUPPORTED on a CPU context */
PV_API pv_status pv_context_cl_objects(pv_context *ctx, cl_context *context,
                                       cl_command_queue *queue);

/* pv_wait, which also waits for the device-buffer calls, is declared in
 * parvis/async.h. */

/** pv_stereo_sgm_confidence on device buffers (confidence may be NULL).
 * @param ctx an OpenCL context
 * @param left the left image (U8, U16 or F32; F32 values are not checked for
 *        finiteness, as they are not read on the host)
 * @param right the right image, same size and type
 * @param params the parameters
 * @param disparity receives the F32 disparities
 * @param confidence receives the F32 confidence, or NULL
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_stereo_sgm_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                                  const pv_sgm_params *params, const pv_buffer *disparity,
                                  const pv_buffer *confidence, cl_uint wait_count,
                                  const cl_event *wait_list, cl_event *done);

/** pv_stereo_bp on device buffers.
 * @param ctx an OpenCL context
 * @param left the left image (U8 or F32)
 * @param right the right image, same size and type
 * @param params the parameters
 * @param disparity receives the F32 disparities
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_stereo_bp_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                                 const pv_bp_params *params, const pv_buffer *disparity,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/** pv_to_grey on device buffers: any pixel type in, F32 grey out.
 * @param ctx an OpenCL context
 * @param in the input image
 * @param out receives the F32 grey values, in's size
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_to_grey_cl(pv_context *ctx, const pv_buffer *in, const pv_buffer *out,
                               cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/** pv_gaussian_blur3d on device buffers: src a volume (F32), dst an F32
 * volume of its size.
 * @param ctx an OpenCL context
 * @param src the volume blurred
 * @param dst receives the blur
 * @param sigma the Gaussian's standard deviation, in voxels
 * @param taps the kernel's taps (0: from sigma)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_gaussian_blur3d_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *dst,
                                       float sigma, int taps, cl_uint wait_count,
                                       const cl_event *wait_list, cl_event *done);

/** pv_flow3d on device buffers: fixed and moving volumes (F32 or U16) of one
 * size, the field's three F32 components u, v, w of that size.
 * @param ctx an OpenCL context
 * @param fixed the fixed volume
 * @param moving the moving volume
 * @param params the parameters, or NULL (defaults)
 * @param u receives the flow along x
 * @param v receives the flow along y
 * @param w receives the flow along z
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_flow3d_cl(pv_context *ctx, const pv_buffer *fixed, const pv_buffer *moving,
                              const pv_flow_params *params, const pv_buffer *u,
                              const pv_buffer *v, const pv_buffer *w, cl_uint wait_count,
                              const cl_event *wait_list, cl_event *done);

/** pv_stereo_sad on device buffers.
 * @param ctx an OpenCL context
 * @param left the left image (U8 or F32)
 * @param right the right image, same size and type
 * @param params the parameters
 * @param disparity receives the F32 disparities
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_stereo_sad_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                                  const pv_sad_params *params, const pv_buffer *disparity,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/** pv_gaussian_blur on device buffers.
 * @param ctx an OpenCL context
 * @param src the image (U8 or F32)
 * @param dst receives the F32 result, src's size, not overlapping it
 * @param sigma the Gaussian's standard deviation
 * @param taps the number of taps (odd), or 0 to derive it from sigma
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_gaussian_blur_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *dst,
                                     float sigma, int taps, cl_uint wait_count,
                                     const cl_event *wait_list, cl_event *done);

/** pv_phase_correlate on device buffers.  The shift is a host structure:
 * the call waits for its work before it returns (after the wait list's
 * events: one that never completes blocks it), and `done`, when asked
 * for, marks work that has already run.  The scans and means the
 * host call makes on the host run on the device (sums in double, exactly
 * the host's numbers), so the shift is the host call's bit for bit; the
 * device needs double precision (cl_khr_fp64), else PV_ERR_UNSUPPORTED.
 * Buffer offsets must be multiples of the sample size.
 * @param ctx an OpenCL context
 * @param reference the reference image (U8, U16 or F32, grey)
 * @param moving the moving image, the reference's size (any of the three types)
 * @param options the options, or NULL (defaults)
 * @param shift receives the shift (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (PV_ERR_INVALID for a non-finite
 *         input, as the host call) */
PV_API pv_status pv_phase_correlate_cl(pv_context *ctx, const pv_buffer *reference,
                                       const pv_buffer *moving,
                                       const pv_phasecorr_options *options, pv_shift *shift,
                                       cl_uint wait_count, const cl_event *wait_list,
                                       cl_event *done);

/** pv_phase_correlate3d on device buffers: volumes (F32 or U16), the rest
 * as pv_phase_correlate_cl.
 * @param ctx an OpenCL context
 * @param reference the reference volume
 * @param moving the moving volume, the reference's size
 * @param options the options, or NULL (defaults)
 * @param shift receives the shift (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate3d_cl(pv_context *ctx, const pv_buffer *reference,
                                         const pv_buffer *moving,
                                         const pv_phasecorr_options *options, pv_shift *shift,
                                         cl_uint wait_count, const cl_event *wait_list,
                                         cl_event *done);

/** pv_normxcorr2 on device buffers.  The host call's preparation (the
 * finiteness check, each input's mean and deviation, the centred and
 * scaled f32 copies) and, on a map buffer, the peak search run on the
 * device, with the host call's numbers (sums in double, added in its
 * order): map and result equal the host call's bit for bit.  Without a
 * map buffer the map is made in host memory for the peak search (the
 * inputs stay on the device).  The call waits for the inputs' statistics
 * and, with result, for the peak; the final device copy of the map into
 * `map` may still be queued when it returns: `done` marks the end of it
 * all.  The device needs double precision
 * (cl_khr_fp64), else PV_ERR_UNSUPPORTED; buffer offsets must be
 * multiples of the sample size.
 * @param ctx an OpenCL context
 * @param templ the template (U8 or F32)
 * @param image the image searched (U8 or F32)
 * @param min_overlap the least overlap, in pixels, a position needs
 * @param map receives the F32 correlation map (image + templ - 1 per
 *        axis), or NULL when only the result is wanted
 * @param result receives the peak, or NULL (not both NULL; untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (PV_ERR_INVALID for a non-finite
 *         input, as the host call) */
PV_API pv_status pv_normxcorr2_cl(pv_context *ctx, const pv_buffer *templ, const pv_buffer *image,
                                  int min_overlap, const pv_buffer *map, pv_ncc_result *result,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/* ---- phase-correlation plans on device buffers --------------------------
 * A plan made or fed from device buffers is an ordinary pv_phasecorr_plan
 * (parvis/register.h): the host plan calls take it too, and
 * pv_phasecorr_plan_destroy frees it.  As in pv_phase_correlate_cl, the
 * inputs' scans, means and u8 conversions run on the device with the host
 * calls' numbers (the shifts equal the host plan calls' bit for bit), the
 * device needs double precision (cl_khr_fp64, else PV_ERR_UNSUPPORTED),
 * buffer offsets must be multiples of the sample size, and each call waits
 * for its work before it returns: `done` marks work that has already run. */

/** pv_phasecorr_plan_create with the reference in a device buffer.
 * @param ctx an OpenCL context
 * @param reference the reference image (U8, U16 or F32, grey)
 * @param options the options, or NULL (defaults)
 * @param max_batch most movers one batch on the device takes
 * @param plan receives the plan (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_create_cl(pv_context *ctx, const pv_buffer *reference,
                                             const pv_phasecorr_options *options, int max_batch,
                                             pv_phasecorr_plan **plan, cl_uint wait_count,
                                             const cl_event *wait_list, cl_event *done);

/** pv_phasecorr_plan_create3d with the reference volume in a device buffer.
 * @param ctx an OpenCL context
 * @param reference the reference volume (F32 or U16)
 * @param options the options, or NULL (defaults)
 * @param max_batch most movers one batch on the device takes
 * @param plan receives the plan (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_create3d_cl(pv_context *ctx, const pv_buffer *reference,
                                               const pv_phasecorr_options *options, int max_batch,
                                               pv_phasecorr_plan **plan, cl_uint wait_count,
                                               const cl_event *wait_list, cl_event *done);

/** pv_phasecorr_plan_set_reference from a device buffer (the plan's size;
 * a 2D plan on an OpenCL context).
 * @param plan the plan
 * @param reference the new reference image (U8, U16 or F32, grey)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (the plan unchanged on a refusal
 *         of the arguments) */
PV_API pv_status pv_phasecorr_plan_set_reference_cl(pv_phasecorr_plan *plan,
                                                    const pv_buffer *reference,
                                                    cl_uint wait_count,
                                                    const cl_event *wait_list, cl_event *done);

/** pv_phasecorr_plan_set_reference3d from a device buffer (a 3D plan).
 * @param plan the plan
 * @param reference the new reference volume (F32 or U16)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_set_reference3d_cl(pv_phasecorr_plan *plan,
                                                      const pv_buffer *reference,
                                                      cl_uint wait_count,
                                                      const cl_event *wait_list, cl_event *done);

/** pv_phasecorr_plan_correlate on device buffers: shifts[i] for movers[i],
 * in host memory.  The movers go through four at a time (one device call
 * a group, for the bound buffers and working copies a call holds), each
 * group in batches of the plan's max_batch; the first group waits for the
 * wait list, and the shifts are written only when every group has
 * succeeded.
 * @param plan a 2D plan of an OpenCL context
 * @param movers count moving images (U8, U16 or F32, the plan's size)
 * @param count the number of movers (at least 1)
 * @param shifts receives count shifts (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_correlate_cl(pv_phasecorr_plan *plan, const pv_buffer *movers,
                                                int count, pv_shift *shifts, cl_uint wait_count,
                                                const cl_event *wait_list, cl_event *done);

/** pv_phasecorr_plan_correlate3d on device buffers (volumes, F32 or U16),
 * as pv_phasecorr_plan_correlate_cl.
 * @param plan a 3D plan of an OpenCL context
 * @param movers count moving volumes (the plan's size)
 * @param count the number of movers (at least 1)
 * @param shifts receives count shifts (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phasecorr_plan_correlate3d_cl(pv_phasecorr_plan *plan,
                                                  const pv_buffer *movers, int count,
                                                  pv_shift *shifts, cl_uint wait_count,
                                                  const cl_event *wait_list, cl_event *done);

/* ---- masked phase correlation and normxcorr2 on device buffers ----------- */

/** pv_phase_correlate_masked on device buffers.  The host call's read of
 * each side (the masked mean, range and energy, the centred copy and the
 * 0 / 1 mask) runs on the device with the host's numbers (sums in double,
 * rows added in order), so the shift equals the host call's bit for bit.
 * The call waits for its work (the shift is a host structure): `done`
 * marks work that has already run.  The device needs double precision
 * (cl_khr_fp64), else PV_ERR_UNSUPPORTED; buffer offsets must be multiples
 * of the sample size.
 * @param ctx an OpenCL context
 * @param reference the reference image (U8 or F32)
 * @param moving the moving image, the reference's size (U8 or F32)
 * @param reference_mask the reference's mask (U8 or F32, non-zero: valid)
 * @param moving_mask the moving image's mask, or NULL (reference_mask's)
 * @param params the parameters, or NULL (defaults)
 * @param shift receives the shift (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (PV_ERR_INVALID for a non-finite
 *         input or a mask with no valid pixel, as the host call) */
PV_API pv_status pv_phase_correlate_masked_cl(pv_context *ctx, const pv_buffer *reference,
                                              const pv_buffer *moving,
                                              const pv_buffer *reference_mask,
                                              const pv_buffer *moving_mask,
                                              const pv_phasecorr_masked_params *params,
                                              pv_shift *shift, cl_uint wait_count,
                                              const cl_event *wait_list, cl_event *done);

/** pv_phase_correlate_masked3d on device buffers: volumes (F32 or U16)
 * and masks (F32 or U16), the rest as pv_phase_correlate_masked_cl.
 * @param ctx an OpenCL context
 * @param reference the reference volume
 * @param moving the moving volume, the reference's size
 * @param reference_mask the reference's mask (non-zero: valid)
 * @param moving_mask the moving volume's mask, or NULL (reference_mask's)
 * @param params the parameters, or NULL (defaults)
 * @param shift receives the shift (untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_phase_correlate_masked3d_cl(pv_context *ctx, const pv_buffer *reference,
                                                const pv_buffer *moving,
                                                const pv_buffer *reference_mask,
                                                const pv_buffer *moving_mask,
                                                const pv_phasecorr_masked_params *params,
                                                pv_shift *shift, cl_uint wait_count,
                                                const cl_event *wait_list, cl_event *done);

/** pv_normxcorr2_masked on device buffers.  The host call's preparation
 * (the finiteness check, the masks' counts, each side's masked mean and
 * deviation, the centred, scaled and masked f32 copies and 0 / 1 masks)
 * and, on a map buffer, the peak search run on the device with the host
 * call's numbers (sums in double, rows added in order): map and result
 * equal the host call's bit for bit.  Where every pixel of both masks is
 * valid the call is pv_normxcorr2_cl.  The call waits for the statistics
 * and the peak; the map is made in a working buffer and copied into `map`
 * last, so a failure leaves it untouched; `done` marks the end of it all.
 * The device needs double precision (cl_khr_fp64), else
 * PV_ERR_UNSUPPORTED; the images' offsets must be multiples of the sample
 * size.
 * @param ctx an OpenCL context
 * @param templ the template (U8 or F32)
 * @param image the image searched (U8 or F32)
 * @param templ_mask the template's mask (U8, templ's size, non-zero: valid)
 * @param image_mask the image's mask (U8, image's size), or NULL (all valid)
 * @param min_overlap the least overlap, in valid pixel pairs, a position needs
 * @param map receives the F32 correlation map (image + templ - 1 per
 *        axis), or NULL when only the result is wanted
 * @param result receives the peak, or NULL (not both NULL; untouched on error)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (PV_ERR_INVALID for a non-finite
 *         input or a mask without a valid pixel, as the host call) */
PV_API pv_status pv_normxcorr2_masked_cl(pv_context *ctx, const pv_buffer *templ,
                                         const pv_buffer *image, const pv_buffer *templ_mask,
                                         const pv_buffer *image_mask, int min_overlap,
                                         const pv_buffer *map, pv_ncc_result *result,
                                         cl_uint wait_count, const cl_event *wait_list,
                                         cl_event *done);

/* ---- the normxcorr2 batch on device buffers ------------------------------ */

/** pv_normxcorr2_batch on device buffers: one template against count
 * images, maps[i] and results[i] exactly pv_normxcorr2's (and the host
 * batch's), bit for bit.  The images go through one at a time, each as
 * pv_normxcorr2_cl (the template's statistics are computed again for
 * each); the first waits for the wait list, each waits for its peak, and
 * `done` marks the end of the last one's work.  The arrays, the images'
 * sizes and the maps' type and size are checked before any work; a buffer
 * refused later, or a failure, leaves the results untouched, but the maps
 * of the images before it may hold their maps.  The device needs double
 * precision (cl_khr_fp64), else PV_ERR_UNSUPPORTED.
 * @param ctx an OpenCL context
 * @param templ the template (U8 or F32)
 * @param images count images searched (U8 or F32), all of images[0]'s size
 * @param count the number of images (at least 1)
 * @param min_overlap the least overlap, in pixels, a position needs
 * @param maps count F32 map buffers (image + templ - 1 per axis), or NULL
 * @param results receives count peaks, or NULL (not both NULL)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_normxcorr2_batch_cl(pv_context *ctx, const pv_buffer *templ,
                                        const pv_buffer *images, int count, int min_overlap,
                                        const pv_buffer *maps, pv_ncc_result *results,
                                        cl_uint wait_count, const cl_event *wait_list,
                                        cl_event *done);

/* ---- the AO-OCT average on device buffers -------------------------------- */

/** pv_octreg_average from and to device buffers: count target volumes
 * (F32 or U16, at most 17: every target is bound in one call), the F32
 * averaged volume and the F32 en-face and slow images (each may be NULL,
 * not all outputs); shifts and coverage in host memory.  Equal to the host
 * call's outputs bit for bit.
 * @param plan a plan of an OpenCL context
 * @param targets count target volumes
 * @param count the number of targets (1 to 17)
 * @param shifts receives count * B-scans shifts (target-major), or NULL
 * @param gap_value the value of voxels no B-scan covers
 * @param averaged receives the averaged volume, or NULL
 * @param enface receives the en-face image (A-lines x B-scans), or NULL
 * @param slow receives the slow-axis image (B-scans x depth), or NULL
 * @param coverage receives one float a reference B-scan, or NULL
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_octreg_average_cl(pv_octreg_plan *plan, const pv_buffer *targets, int count,
                                      pv_octreg_shift *shifts, float gap_value,
                                      const pv_buffer *averaged, const pv_buffer *enface,
                                      const pv_buffer *slow, float *coverage,
                                      cl_uint wait_count, const cl_event *wait_list,
                                      cl_event *done);

/* ---- the gradients, the flow's warp, SIFT tracking and batches, the
 * stereo batches on device buffers ----------------------------------------
 * As the calls above: the images come from and go to the caller's buffers
 * without a host round trip (docs/interop.md, "More device forms"). */

/** pv_gradient on device buffers: src U8 or F32, gx and gy F32 images of
 * its size (either may be NULL, not both).
 * @param ctx an OpenCL context
 * @param src the input image (U8 or F32)
 * @param gx receives the x derivative, or NULL
 * @param gy receives the y derivative, or NULL
 * @param scheme the difference scheme
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_gradient_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *gx,
                                const pv_buffer *gy, pv_gradient_scheme scheme,
                                cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/** pv_gradient3d on device buffers: src a volume (F32 or U16), gx, gy and
 * gz F32 volumes of its size (any may be NULL, not all three).
 * @param ctx an OpenCL context
 * @param src the input volume
 * @param gx receives the x derivative, or NULL
 * @param gy receives the y derivative, or NULL
 * @param gz receives the z derivative, or NULL
 * @param scheme the difference scheme
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_gradient3d_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *gx,
                                  const pv_buffer *gy, const pv_buffer *gz,
                                  pv_gradient_scheme scheme, cl_uint wait_count,
                                  const cl_event *wait_list, cl_event *done);

/** pv_flow_warp on device buffers: warped(x) = moving(x + flow(x)), every
 * volume F32 and of moving's size.
 * @param ctx an OpenCL context
 * @param moving the moving volume
 * @param u the flow along x
 * @param v the flow along y
 * @param w the flow along z
 * @param warped receives the warped volume (sharing no bytes with the inputs)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_flow_warp_cl(pv_context *ctx, const pv_buffer *moving, const pv_buffer *u,
                                 const pv_buffer *v, const pv_buffer *w, const pv_buffer *warped,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/** pv_sift_track_next on a device buffer: the frame (of the plan's size,
 * U8, U16, F32, RGB8 or RGB16) is read on the device, matched to the
 * plan's kept frame (whose keypoints and descriptors stay on the device)
 * and becomes the kept frame, as in the host call; the model and its
 * inlier matches come back to host memory, so the call has finished when
 * it returns.
 * @param plan a SIFT plan of an OpenCL context
 * @param frame the new frame
 * @param match_params the matching parameters, or NULL (defaults)
 * @param ransac_params the RANSAC parameters, or NULL (defaults)
 * @param result receives the result as pv_sift_track_next gives it (free
 *        with pv_sift_chain_result_free; untouched on failure)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_sift_track_next_cl(pv_sift_plan *plan, const pv_buffer *frame,
                                       const pv_sift_match_params *match_params,
                                       const pv_ransac_params *ransac_params,
                                       pv_sift_chain_result *result, cl_uint wait_count,
                                       const cl_event *wait_list, cl_event *done);

/** pv_sift_detect_batch on device buffers: count images of the plan's
 * size read on the device, results[i] image i's keypoints and descriptors
 * in host memory, as pv_sift_detect_batch gives them.  Each results[i] is
 * zeroed or an earlier result: on success it is freed and replaced; on
 * any failure every results[i] is left as it was.
 * @param plan a SIFT plan of an OpenCL context
 * @param images count images (U8, U16, F32, RGB8 or RGB16)
 * @param count the number of images (>= 1)
 * @param results receives count results (free each with
 *        pv_sift_features_free)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_sift_detect_batch_cl(pv_sift_plan *plan, const pv_buffer *images, int count,
                                         pv_sift_features *results, cl_uint wait_count,
                                         const cl_event *wait_list, cl_event *done);

/** pv_stereo_sad_batch on device buffers: count pairs of one size and
 * pixel type (U8 or F32), disparities[i] exactly pv_stereo_sad's on pair
 * i.  The pairs run one after another between one wait list and one
 * completion event.  Every buffer is checked before any work (a refusal
 * leaves every output untouched); on a failure during the work every
 * disparity is reset to INFINITY, as the host batch does.
 * @param ctx an OpenCL context
 * @param lefts count left (reference) images
 * @param rights count right images
 * @param count the number of pairs (>= 1)
 * @param params the parameters, shared by every pair
 * @param disparities receives count F32 disparity maps
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sad_batch_cl(pv_context *ctx, const pv_buffer *lefts,
                                        const pv_buffer *rights, int count,
                                        const pv_sad_params *params,
                                        const pv_buffer *disparities, cl_uint wait_count,
                                        const cl_event *wait_list, cl_event *done);

/** pv_stereo_sgm_batch on device buffers: count pairs of one size and
 * pixel type (U8, U16 or F32), disparities[i] (and confidences[i])
 * exactly pv_stereo_sgm_confidence's on pair i.  The pairs run one after
 * another between one wait list and one completion event.  Every buffer
 * is checked before any work (a refusal leaves every output untouched);
 * on a failure during the work every disparity is reset to INFINITY and
 * every confidence to 0, as the host batch does.
 * @param ctx an OpenCL context
 * @param lefts count left (reference) images
 * @param rights count right images
 * @param count the number of pairs (>= 1)
 * @param params the parameters, shared by every pair
 * @param disparities receives count F32 disparity maps
 * @param confidences receives count F32 confidence maps, or NULL
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sgm_batch_cl(pv_context *ctx, const pv_buffer *lefts,
                                        const pv_buffer *rights, int count,
                                        const pv_sgm_params *params,
                                        const pv_buffer *disparities,
                                        const pv_buffer *confidences, cl_uint wait_count,
                                        const cl_event *wait_list, cl_event *done);

/* ---- SIFT and the AO-OCT registration on device buffers ----------------
 * The images and volumes come from the caller's buffers without a host
 * round trip; the results that are small host structures (keypoints and
 * descriptors, a homography and its inliers, B-scan shifts, coverage) come
 * back to host memory, so these calls have completed when they return;
 * *done still marks the end of their queued work (docs/interop.md). */

/** pv_sift_detect on a device buffer: the image (U8, U16, F32, RGB8 or
 * RGB16, of the plan's size) is read on the device, the keypoints and
 * descriptors come back to host memory as pv_sift_detect returns them.
 * @param plan a SIFT plan of an OpenCL context
 * @param image the image
 * @param features receives the keypoints and descriptors (free with
 *        pv_sift_features_free; untouched on failure)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_sift_detect_cl(pv_sift_plan *plan, const pv_buffer *image,
                                   pv_sift_features *features, cl_uint wait_count,
                                   const cl_event *wait_list, cl_event *done);

/** pv_sift_match_images on two device buffers: detection, matching and
 * the ratio test on the device, the homography and its inlier matches
 * back in host memory; image2 becomes the plan's kept frame.
 * @param plan a SIFT plan of an OpenCL context
 * @param image1 the first frame, of the plan's size
 * @param image2 the second frame, of the plan's size
 * @param match_params the matching parameters, or NULL (defaults)
 * @param ransac_params the RANSAC parameters, or NULL (defaults)
 * @param result receives the model and the inlier matches (free with
 *        pv_sift_chain_result_free; untouched on failure)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_sift_match_images_cl(pv_sift_plan *plan, const pv_buffer *image1,
                                         const pv_buffer *image2,
                                         const pv_sift_match_params *match_params,
                                         const pv_ransac_params *ransac_params,
                                         pv_sift_chain_result *result, cl_uint wait_count,
                                         const cl_event *wait_list, cl_event *done);

/** pv_octreg_plan_create with the reference volume (F32 or U16) in a
 * device buffer; its statistics are computed on the device.
 * @param ctx an OpenCL context
 * @param reference the reference volume (depth x A-lines x B-scans)
 * @param options the options, or NULL (defaults)
 * @param plan receives the plan (destroy with pv_octreg_plan_destroy)
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_octreg_plan_create_cl(pv_context *ctx, const pv_buffer *reference,
                                          const pv_octreg_options *options,
                                          pv_octreg_plan **plan, cl_uint wait_count,
                                          const cl_event *wait_list, cl_event *done);

/** pv_octreg_register on a target volume (F32 or U16, the reference's
 * size) in a device buffer; the shifts come back to host memory.
 * @param plan a plan of an OpenCL context
 * @param target the target volume
 * @param shifts receives one shift a B-scan (the target's depth entries)
 * @param info receives the summary, or NULL
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_octreg_register_cl(pv_octreg_plan *plan, const pv_buffer *target,
                                       pv_octreg_shift *shifts, pv_octreg_info *info,
                                       cl_uint wait_count, const cl_event *wait_list,
                                       cl_event *done);

/** pv_octreg_reconstruct from and to device buffers: the target volume
 * (F32 or U16), the F32 registered volume and the F32 en-face and slow
 * images (each may be NULL, not all outputs); coverage in host memory.
 * @param plan a plan of an OpenCL context
 * @param target the target volume
 * @param shifts the shifts (one a B-scan)
 * @param gap_value the value of voxels no B-scan covers
 * @param registered receives the registered volume, or NULL
 * @param enface receives the en-face image (A-lines x B-scans), or NULL
 * @param slow receives the slow-axis image (B-scans x depth), or NULL
 * @param coverage receives one float a reference B-scan, or NULL
 * @param wait_count events in wait_list
 * @param wait_list the events the work waits for, or NULL
 * @param done receives the completion event, or NULL
 * @return PV_OK, or the failure's status (outputs untouched) */
PV_API pv_status pv_octreg_reconstruct_cl(pv_octreg_plan *plan, const pv_buffer *target,
                                          const pv_octreg_shift *shifts, float gap_value,
                                          const pv_buffer *registered, const pv_buffer *enface,
                                          const pv_buffer *slow, float *coverage,
                                          cl_uint wait_count, const cl_event *wait_list,
                                          cl_event *done);

#ifdef __cplusplus
}
#endif

#endif
