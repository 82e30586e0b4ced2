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
 * orders its work with (its own when the context was made on one).
 *
 * The reductions and the conversion below serve front ends that would
 * otherwise read a bound input's samples on the host (phase correlation's
 * and normxcorr2's scans, means and scaling; lib/register/register_device.c).
 * `rows` names a bound placeholder (its first sample); each row of nx
 * samples is one work item's sequential pass in double, rows in the order
 * y fastest, then z, so that a front end adding the rows' results in that
 * order gets the host pass's numbers exactly.  A backend whose device has
 * no double precision refuses them with PV_ERR_UNSUPPORTED.
 * row_stats: per row, the sum of the samples, their least and largest
 * value, the first x of the largest and whether all are finite.  row_energy: per row, the sum of
 * ((v - mean) w)^2 with w = window[0][x] window[1][y] window[2][z] (1
 * without a window; window is NULL or three arrays of nx, ny, nz weights).
 * to_f32: a dense f32 copy (float)((v - mean) * scale), on the device, to
 * which the placeholder `proxy` (`bytes` long, never read) is bound until
 * unbind, so that the call's transfers of proxy copy from it.
 * bound_rect: a blocking copy between `host` (its width, height, type and
 * stride) and the bound buffer of `proxy`, `offset` bytes past the
 * placeholder's first byte, rows `stride` pixels apart (to_device: into
 * the buffer); for the few values or the fill a front end needs (a
 * peak's neighbours, a textureless input's zero map).  forget: the
 * placeholder `proxy` bound by to_f32 is about to be unmapped: its binding
 * no longer matches (memory mapped later at its address is not taken for
 * it).  stage: the placeholder `proxy` bound, as by to_f32, to a scratch
 * buffer of `bytes` (dense; an output is made there before it is final);
 * unstage: the staged buffer of `proxy` copied, on the device, into `out`
 * (a bound image of the staged size, type and dense layout's pixels).
 * masked_stats: per row of `rows`, over the samples whose `mask` sample
 * (the same row and pixel counts, its own type and pitches; NULL: every
 * sample valid) is not 0: their sum, count, least and largest value; and
 * whether every sample of the row and of its mask is finite (the first
 * pass of masked phase correlation and masked normxcorr2).
 * masked_centre: into the staged placeholders `values` and `mask01`
 * (dense f32 of the input's size) the centred input where the mask is not
 * 0 (0 elsewhere) and the mask as 0 / 1; per row, the sum in double of
 * the squared deviations.  exact 0: v - (float)mean in float, summed as
 * squares of those floats (lib/register/phasecorr_masked.c); exact 1:
 * d = v - mean in double, summed as d * d, stored as (float)(d * scale)
 * (lib/register/ncc_masked.c). */

#ifndef PV_OPS_INTEROP_H
#define PV_OPS_INTEROP_H

#include "parvis.h"
#include "ops_slots.h"

typedef struct pv_device_rows {
    const void *proxy;          /* a bound placeholder's first byte */
    pv_pixel_type type;         /* PV_PIXEL_U8, PV_PIXEL_U16 or PV_PIXEL_F32 */
    int nx, ny, nz;
    ptrdiff_t stride_y, stride_z; /* in samples */
} pv_device_rows;

typedef struct pv_row_stats {
    double sum;
    float lo, hi;
    int hi_at;
    int finite;
} pv_row_stats;

typedef struct pv_masked_row {
    double sum;
    size_t valid;
    float lo, hi;
    int finite;
} pv_masked_row;

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
    X(P, pv_status, objects, (pv_context *ctx, void **context, void **queue))                     \
    X(P, pv_status, row_stats, (pv_context *ctx, const pv_device_rows *rows, pv_row_stats *out))  \
    X(P, pv_status, row_energy,                                                                    \
      (pv_context *ctx, const pv_device_rows *rows, const float *const *window, double mean,     \
       double *out))                                                                              \
    X(P, pv_status, to_f32,                                                                        \
      (pv_context *ctx, const pv_device_rows *rows, double mean, double scale, const void *proxy, \
       size_t bytes))                                                                             \
    X(P, pv_status, bound_rect,                                                                    \
      (pv_context *ctx, const void *proxy, size_t offset, ptrdiff_t stride, pv_image *host,       \
       int to_device))                                                                            \
    X(P, void, forget, (pv_context *ctx, const void *proxy))                                      \
    X(P, pv_status, stage, (pv_context *ctx, const void *proxy, size_t bytes))                     \
    X(P, pv_status, unstage, (pv_context *ctx, const void *proxy, pv_image *out))                 \
    X(P, pv_status, masked_stats,                                                                  \
      (pv_context *ctx, const pv_device_rows *rows, const pv_device_rows *mask,                  \
       pv_masked_row *out))                                                                       \
    X(P, pv_status, masked_centre,                                                                 \
      (pv_context *ctx, const pv_device_rows *rows, const pv_device_rows *mask, double mean,     \
       double scale, int exact, const void *values, const void *mask01, double *energy))

#endif
