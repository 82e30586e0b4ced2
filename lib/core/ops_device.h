/* Internal: the device sub-table of a backend (lib/core/backend.h).  Not
 * installed. */
#ifndef PV_OPS_DEVICE_H
#define PV_OPS_DEVICE_H

#include "parvis.h"

typedef struct pv_device_ops {
    /* Set up ctx->backend_state for device_index (-1: choose); fills
     * ctx->device_name.  NULL when the backend needs no state. */
    pv_status (*init)(pv_context *ctx, int device_index);
    void (*release)(pv_context *ctx);
    /* Device-to-device copy bandwidth (pv_context_copy_bandwidth): bytes
     * read plus written per second / 1e9, bytes > 0. */
    pv_status (*copy_bandwidth)(pv_context *ctx, size_t bytes, double *gb_per_s);
    /* Arithmetic peak (pv_context_compute_peak): operations per second /
     * 1e9 of the probe of `kind`. */
    pv_status (*compute_peak)(pv_context *ctx, pv_compute_kind kind, double *gops);
} pv_device_ops;

#endif
