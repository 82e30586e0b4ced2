/** @file
 * parvis asynchronous calls: operations queued on a context and waited for
 * later, so that the calling thread goes on (reading the next frame,
 * driving another context) while parvis works.
 *
 * Each context has one worker thread, made on the first asynchronous call,
 * that runs the context's queued calls one after another in the order they
 * were queued; a call queued on another context runs beside them.  Two
 * contexts on one device (two pv_context_create calls naming the same
 * device) therefore overlap one call's upload, kernels and download with
 * the other's: that is how a stream of independent frames keeps an OpenCL
 * device busy (docs/async.md).
 *
 * The rules:
 * - A pv_*_async call checks its pointers, copies its parameter structure
 *   (a NULL one is passed on, as the synchronous call takes it) and
 *   returns.  The images, volumes and result structures it names are
 *   borrowed: they must stay valid, inputs unchanged and outputs unread,
 *   until the call completes (pv_job_wait, or pv_wait on the context).
 * - The operation's own checks run when the call runs: a bad size or
 *   parameter is reported by pv_job_wait (or pv_wait), with the message
 *   the synchronous call would give, and the outputs are left as that call
 *   leaves them.
 * - `job` may be NULL: the call's failure, if any, is then reported by the
 *   next pv_wait on the context.  A pv_job must be waited for exactly once.
 * - pv_context_destroy waits for the context's queued calls first; their
 *   jobs may still be waited for (and must be, to be freed) afterwards.
 * - On the CPU backend the calls run on the worker too, so the caller's
 *   thread is free there as well.
 * - The progress callback (parvis/progress.h) of a queued call runs on the
 *   worker thread.  pv_context_last_timing reads the last completed call's
 *   times once it is waited for. */
#ifndef PARVIS_ASYNC_H
#define PARVIS_ASYNC_H

#include "parvis/core.h"
#include "parvis/flow.h"
#include "parvis/register.h"
#include "parvis/stereo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A queued call, to be waited for once with pv_job_wait. */
typedef struct pv_job pv_job;

/** Work that a caller queues on a context: called on the context's worker
 * thread with the context and the pointer given to pv_submit. */
typedef pv_status (*pv_task_fn)(pv_context *ctx, void *user);

/** Queue any work on the context's worker: fn(ctx, user) runs after the
 * calls queued before it.  user is borrowed until it completes.
 * @param ctx the context
 * @param fn the work
 * @param user passed to fn unchanged
 * @param job receives the job to wait for, or NULL (see the file's rules)
 * @return PV_OK once queued; PV_ERR_INVALID for a NULL ctx or fn;
 *         PV_ERR_NOMEM when no thread or memory could be had */
PV_API pv_status pv_submit(pv_context *ctx, pv_task_fn fn, void *user, pv_job **job);

/** Wait for a queued call and free the job.
 * @param job a job from a pv_*_async call (NULL gives PV_ERR_INVALID)
 * @return the call's status; on failure pv_last_error() holds its message */
PV_API pv_status pv_job_wait(pv_job *job);

/** Whether a queued call has completed (pv_job_wait then returns at once).
 * @param job the job, or NULL (0)
 * @return 1 when complete, else 0 */
PV_API int pv_job_done(const pv_job *job);

/** Wait until every call queued on ctx has completed: the asynchronous
 * calls, and on OpenCL the device-buffer calls (parvis/interop.h).  Then
 * pv_context_last_timing describes the last call.
 * @param ctx the context
 * @return PV_OK, or the first failure among the calls queued without a
 *         job since the last pv_wait (and, on OpenCL, a failed command) */
PV_API pv_status pv_wait(pv_context *ctx);

/** pv_stereo_sad, queued.
 * @param ctx the context
 * @param left the left image (borrowed)
 * @param right the right image (borrowed)
 * @param params the parameters (copied)
 * @param disparity receives the disparity map (borrowed)
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_stereo_sad_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                                     const pv_sad_params *params, pv_image *disparity,
                                     pv_job **job);

/** pv_stereo_sgm_confidence, queued.
 * @param ctx the context
 * @param left the left image (borrowed)
 * @param right the right image (borrowed)
 * @param params the parameters (copied)
 * @param disparity receives the disparity map (borrowed)
 * @param confidence receives the confidence map (borrowed), or NULL
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_stereo_sgm_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                                     const pv_sgm_params *params, pv_image *disparity,
                                     pv_image *confidence, pv_job **job);

/** pv_stereo_bp, queued.
 * @param ctx the context
 * @param left the left image (borrowed)
 * @param right the right image (borrowed)
 * @param params the parameters (copied)
 * @param disparity receives the disparity map (borrowed)
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_stereo_bp_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                                    const pv_bp_params *params, pv_image *disparity,
                                    pv_job **job);

/** pv_phase_correlate, queued.
 * @param ctx the context
 * @param reference the reference image (borrowed)
 * @param moving the moving image (borrowed)
 * @param options the options (copied), or NULL for the defaults
 * @param shift receives the shift (borrowed)
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_phase_correlate_async(pv_context *ctx, const pv_image *reference,
                                          const pv_image *moving,
                                          const pv_phasecorr_options *options, pv_shift *shift,
                                          pv_job **job);

/** pv_phase_correlate3d, queued.
 * @param ctx the context
 * @param reference the reference volume (borrowed)
 * @param moving the moving volume (borrowed)
 * @param options the options (copied), or NULL for the defaults
 * @param shift receives the shift (borrowed)
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_phase_correlate3d_async(pv_context *ctx, const pv_volume *reference,
                                            const pv_volume *moving,
                                            const pv_phasecorr_options *options,
                                            pv_shift *shift, pv_job **job);

/** pv_flow3d, queued.
 * @param ctx the context
 * @param fixed the fixed volume (borrowed)
 * @param moving the moving volume (borrowed)
 * @param params the parameters (copied)
 * @param flow receives the field (borrowed; allocated as pv_flow3d does)
 * @param job receives the job, or NULL
 * @return PV_OK once queued, or PV_ERR_INVALID for a NULL ctx or output */
PV_API pv_status pv_flow3d_async(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                                 const pv_flow_params *params, pv_flow_field *flow, pv_job **job);

#ifdef __cplusplus
}
#endif

#endif
