/* Internal: the interop sub-table of a backend (lib/core/backend.h): a
 * caller's device buffers standing in for the host images of a call
 * (lib/interop/interop.c).  The CPU backend leaves every slot out (NULL):
 * device buffers need an OpenCL context.  `mem` is a cl_mem and `event`
 * lists hold cl_events, kept as void pointers because lib/core knows no
 * OpenCL types.  Not installed.
 *
 * bind: until unbind, the backend's transfers of the host image or volume
 * whose data pointer is `proxy` (a placeholder, never read; `bytes` its
 * span) copy to or from the caller's buffer `mem` on the device, `offset`
 * bytes in, with the image's or volume's own row and slice pitches; it
 * checks first that mem belongs to the context and holds `bytes`.  unbind: every binding forgotten.
 * begin: the call's commands are ordered after the wait list's events (and
 * after the caller's queue, when the context was made on one); an event
 * that failed is refused before anything is queued; with defer, the
 * call's final wait becomes a flush.  end: after a successful call, a marker of its last
 * command into *done (when done is not NULL) and the caller's queue
 * ordered after it; after a failed one, the queue drained; either way the
 * deferral off.  read / write: a blocking copy between a caller's buffer
 * (rows `stride` pixels apart from `offset`) and host memory (the
 * cross-check).  wait: every command of the context
 * complete.  objects: the context's cl_context and the queue a caller
 * orders its work with (its own when the context was made on one). */
#ifndef PV_OPS_INTEROP_H
#define PV_OPS_INTEROP_H

#include "parvis.h"
#include "ops_slots.h"

#define PV_INTEROP_SLOTS(X, P)                                                                    \
    X(P, pv_status, bind,                                                                          \
      (pv_context *ctx, const void *proxy, size_t bytes, void *mem, size_t offset))              \
    X(P, void, unbind, (pv_context *ctx))                                                         \
    X(P, pv_status, begin,                                                                         \
      (pv_context *ctx, unsigned wait_count, void *const *wait_list, int defer))                 \
    X(P, pv_status, end, (pv_context *ctx, pv_status status, void **done))                        \
    X(P, pv_status, read,                                                                          \
      (pv_context *ctx, void *mem, size_t offset, ptrdiff_t stride, pv_image *dst))               \
    X(P, pv_status, write,                                                                         \
      (pv_context *ctx, const pv_image *src, void *mem, size_t offset, ptrdiff_t stride))         \
    X(P, pv_status, wait, (pv_context *ctx))                                                      \
    X(P, pv_status, objects, (pv_context *ctx, void **context, void **queue))

#endif
