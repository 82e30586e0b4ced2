/* Internal: the backend dispatch table.  The front end (lib/) validates
 * arguments once and calls through this table; backends trust their input.
 * Each backend fills one table, one entry per operation. */
#ifndef PV_BACKEND_H
#define PV_BACKEND_H

#include "parvis.h"

typedef struct pv_backend_ops {
    const char *name;

    /* Set up ctx->backend_state for device_index (-1: choose); fills
     * ctx->device_name.  NULL when the backend needs no state. */
    pv_status (*init)(pv_context *ctx, int device_index);
    void (*release)(pv_context *ctx);

    /* filter: weights has 2 * radius + 1 taps; dst is f32. */
    pv_status (*gaussian2d)(pv_context *ctx, const pv_image *src, pv_image *dst,
                            const float *weights, int radius);
    pv_status (*gaussian3d)(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                            const float *weights, int radius);
    pv_status (*gradient2d)(pv_context *ctx, const pv_image *src, pv_image *gx,
                            pv_image *gy, pv_gradient_scheme scheme);
    pv_status (*gradient3d)(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                            pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

    /* stereo */
    pv_status (*stereo_sad)(pv_context *ctx, const pv_image *left, const pv_image *right,
                            const pv_sad_params *params, pv_image *disparity);
} pv_backend_ops;

extern const pv_backend_ops pv_cpu_backend;
#ifdef PV_HAVE_OPENCL
extern const pv_backend_ops pv_opencl_backend;
/* Device enumeration lives with the OpenCL runtime. */
pv_status pv_opencl_list_devices(pv_device_info *devices, int capacity, int *count);
#endif

#endif
