/* Internal: the device sub-table of a backend (lib/core/backend.h): the
 * device's set-up and description, its launch parameters and the
 * copy-bandwidth probe.  Not installed. */
#ifndef PV_OPS_DEVICE_H
#define PV_OPS_DEVICE_H

#include "parvis.h"

typedef struct pv_device_ops {
    /* The backend's devices into list (up to capacity), *count their number
     * (pv_device_list).  NULL on a backend with no devices to choose. */
    pv_status (*list)(pv_device_info *list, int capacity, int *count);
    /* Set up ctx->backend_state for device_index and describe the device
     * in ctx->device.  NULL when the backend needs no state (the front end
     * describes it then). */
    pv_status (*init)(pv_context *ctx, int device_index);
    void (*release)(pv_context *ctx);
    /* Device-to-device copy bandwidth (pv_context_copy_bandwidth): bytes
     * read plus written per second / 1e9, bytes > 0. */
    pv_status (*copy_bandwidth)(pv_context *ctx, size_t bytes, double *gb_per_s);
    /* Arithmetic peak (pv_context_compute_peak): operations per second /
     * 1e9 of the probe of `kind`. */
    pv_status (*compute_peak)(pv_context *ctx, pv_compute_kind kind, double *gops);

    /* ---- launch parameters: per kernel family, the -D values its kernels
     * are built with.  NULL on a backend without any.  An unknown family or
     * name is an error (PV_ERR_INVALID recorded on ctx), never a fallback. */
    /* The name of the index-th family (0, 1, ...), NULL past the last. */
    const char *(*param_family)(int index);
    pv_status (*param_get)(pv_context *ctx, const char *family, const char *name, int *value);
    pv_status (*param_set)(pv_context *ctx, const char *family, const char *name, int value);
    /* The family's parameters with their current values, in the family's
     * order: up to capacity, *count the number filled. */
    pv_status (*param_list)(pv_context *ctx, const char *family, pv_tune_param *params,
                            int capacity, int *count);
    /* Every parameter of the family back to its default. */
    pv_status (*param_reset)(pv_context *ctx, const char *family);
} pv_device_ops;

#endif
