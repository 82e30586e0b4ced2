/* Internal: the stereo sub-table of a backend (lib/core/backend.h): SAD
 * block matching and semi-global matching.  Not installed. */
#ifndef PV_OPS_STEREO_H
#define PV_OPS_STEREO_H

#include "parvis.h"
#include "ops_slots.h"

/* sgm: arguments checked by lib/stereo/stereo_sgm.c (sizes, types, parameter
 * ranges, P2 small enough for 16-bit sums, memory); confidence may be
 * NULL.  sgm_batch: count >= 1 pairs, each checked as sgm's, all of one
 * size and pixel type; confidences NULL or count images; each pair's
 * result exactly sgm's.  sad_batch: the same for SAD (u8 pairs with a
 * window wider than PV_SAD_U8_MAX_WINDOW never reach it). */
#define PV_STEREO_SLOTS(X, P)                                                                     \
    X(P, pv_status, sad,                                                                          \
      (pv_context *ctx, const pv_image *left, const pv_image *right, const pv_sad_params *params, \
       pv_image *disparity))                                                                      \
    X(P, pv_status, sgm,                                                                          \
      (pv_context *ctx, const pv_image *left, const pv_image *right, const pv_sgm_params *params, \
       pv_image *disparity, pv_image *confidence))                                               \
    X(P, pv_status, sad_batch,                                                                    \
      (pv_context *ctx, const pv_image *lefts, const pv_image *rights, int count,                 \
       const pv_sad_params *params, pv_image *disparities))                                       \
    X(P, pv_status, sgm_batch,                                                                    \
      (pv_context *ctx, const pv_image *lefts, const pv_image *rights, int count,                 \
       const pv_sgm_params *params, pv_image *disparities, pv_image *confidences))

#endif
