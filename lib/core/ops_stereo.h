/* Internal: the stereo (SAD) sub-table of a backend (lib/core/backend.h).
 * Not installed. */
#ifndef PV_OPS_STEREO_H
#define PV_OPS_STEREO_H

#include "parvis.h"
#include "ops_slots.h"

#define PV_STEREO_SLOTS(X, P)                                                                     \
    X(P, pv_status, sad,                                                                          \
      (pv_context *ctx, const pv_image *left, const pv_image *right, const pv_sad_params *params, \
       pv_image *disparity))

#endif
