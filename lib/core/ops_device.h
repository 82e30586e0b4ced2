/* Internal: the device sub-table of a backend (lib/core/backend.h): the
 * device's set-up and description, its launch parameters and the
 * copy-bandwidth probe.  Not installed. */
#ifndef PV_OPS_DEVICE_H
#define PV_OPS_DEVICE_H

#include "parvis.h"
#include "ops_slots.h"

/* The slots come in three groups, so that a backend fills whole groups
 * and leaves out (NULL) those it has no use for.
 *
 * Set-up (left out by a backend with no devices to choose; the front end
 * describes the host then): list, the backend's devices into list (up to
 * capacity), *count their number (pv_device_list); init, set up
 * ctx->backend_state for device_index and describe the device in
 * ctx->device; release, undo init. */
#define PV_DEVICE_SETUP_SLOTS(X, P)                                                               \
    X(P, pv_status, list, (pv_device_info *list, int capacity, int *count))                       \
    X(P, pv_status, init, (pv_context *ctx, int device_index))                                    \
    X(P, void, release, (pv_context *ctx))

/* Probes (every backend): copy_bandwidth, device-to-device copy bandwidth
 * (pv_context_copy_bandwidth), bytes read plus written per second / 1e9,
 * bytes > 0; compute_peak, arithmetic peak (pv_context_compute_peak),
 * operations per second / 1e9 of the probe of `kind`. */
#define PV_DEVICE_PROBE_SLOTS(X, P)                                                               \
    X(P, pv_status, copy_bandwidth, (pv_context *ctx, size_t bytes, double *gb_per_s))            \
    X(P, pv_status, compute_peak, (pv_context *ctx, pv_compute_kind kind, double *gops))

/* Launch parameters (left out by a backend without any): per kernel
 * family, the -D values its kernels are built with.  An unknown family or
 * name is an error (PV_ERR_INVALID recorded on ctx), never a fallback.
 * param_family_name: the name of the index-th family (0, 1, ...), NULL past the
 * last; param_list: the family's parameters with their current values, in
 * the family's order, up to capacity, *count the number filled;
 * param_reset: every parameter of the family back to its default. */
#define PV_DEVICE_PARAM_SLOTS(X, P)                                                               \
    X(P, const char *, param_family_name, (int index))                                            \
    X(P, pv_status, param_get,                                                                    \
      (pv_context *ctx, const char *family, const char *name, int *value))                        \
    X(P, pv_status, param_set,                                                                    \
      (pv_context *ctx, const char *family, const char *name, int value))                         \
    X(P, pv_status, param_list,                                                                   \
      (pv_context *ctx, const char *family, pv_tune_param *params, int capacity, int *count))     \
    X(P, pv_status, param_reset, (pv_context *ctx, const char *family))

#define PV_DEVICE_SLOTS(X, P)                                                                     \
    PV_DEVICE_SETUP_SLOTS(X, P) PV_DEVICE_PROBE_SLOTS(X, P) PV_DEVICE_PARAM_SLOTS(X, P)

#endif
