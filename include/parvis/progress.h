/** @file
 * parvis progress: a context's progress callback, which also cancels.
 *
 * The long operations report their progress on the context they run on:
 * belief propagation (levels x iterations), SAD, SGM and SIFT batches (items),
 * 3D optical flow (warps x iterations), OCT registration (targets), phase
 * correlation batches, device-group calls (on the group's first context,
 * in items) and the tuner's search.  A
 * call reports done = 0 first and done = total last when it succeeds;
 * done never decreases within a call.  The callback returning non-zero
 * stops the call at its next report with PV_ERR_CANCELLED: nothing leaks,
 * the context stays usable, and the outputs hold no result, as after any
 * other failure of the call (most are untouched; pv_stereo_sgm_batch
 * resets its outputs; on the CPU backend a BP map of several tiles may
 * have its first tiles written).  docs/c-api.md lists each operation's
 * units. */
#ifndef PARVIS_PROGRESS_H
#define PARVIS_PROGRESS_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Receives progress: op names the operation ("stereo_bp", ...), done of
 * total units of work (units differ between operations: only their ratio
 * is comparable).  Called on the thread that made the call, with the
 * context's lock held: it must not call parvis functions on the same
 * context.  Return 0 to go on, non-zero to cancel the call. */
typedef int (*pv_progress_fn)(void *user, const char *op, double done, double total);

/** Set (or with fn NULL, clear) the context's progress callback.  The
 * cross-check's CPU run (PARVIS_CROSSCHECK) reports nothing of its own.
 * @param ctx the context
 * @param fn the callback, or NULL for none
 * @param user passed to fn unchanged
 * @return PV_OK, or PV_ERR_INVALID when ctx is NULL */
PV_API pv_status pv_context_set_progress(pv_context *ctx, pv_progress_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif
