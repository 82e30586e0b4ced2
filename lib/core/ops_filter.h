/* Internal: the filter sub-table of a backend (lib/core/backend.h).  Not
 * installed. */
#ifndef PV_OPS_FILTER_H
#define PV_OPS_FILTER_H

#include "parvis.h"
#include "ops_slots.h"

/* filter: weights has 2 * radius + 1 taps; dst is f32. */
#define PV_FILTER_SLOTS(X, P)                                                                     \
    X(P, pv_status, gaussian2d,                                                                   \
      (pv_context *ctx, const pv_image *src, pv_image *dst, const float *weights, int radius))    \
    X(P, pv_status, gaussian3d,                                                                   \
      (pv_context *ctx, const pv_volume *src, pv_volume *dst, const float *weights, int radius))  \
    X(P, pv_status, gradient2d,                                                                   \
      (pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,                          \
       pv_gradient_scheme scheme))                                                                \
    X(P, pv_status, gradient3d,                                                                   \
      (pv_context *ctx, const pv_volume *src, pv_volume *gx, pv_volume *gy, pv_volume *gz,        \
       pv_gradient_scheme scheme))

#endif
