/* Internal: the colour sub-table of a backend (lib/core/backend.h).  Not
 * installed. */
#ifndef PV_OPS_COLOUR_H
#define PV_OPS_COLOUR_H

#include "parvis.h"
#include "ops_slots.h"

/* to_grey: in is a valid image of any pixel type, out a valid f32 image
 * of its size not overlapping it; out = grey(in) * scale, with grey as
 * parvis/colour.h defines it (pv_to_grey passes scale 1). */
#define PV_COLOUR_SLOTS(X, P)                                                                     \
    X(P, pv_status, to_grey, (pv_context *ctx, const pv_image *in, pv_image *out, float scale))

#endif
