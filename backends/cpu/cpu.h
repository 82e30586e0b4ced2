/* Internal: the CPU reference backend's operations, one module per file. */
#ifndef PV_CPU_H
#define PV_CPU_H

#include "../../lib/internal.h"

/* filter.c */
pv_status pv_cpu_gaussian2d(pv_context *ctx, const pv_image *src, pv_image *dst,
                            const float *weights, int radius);
pv_status pv_cpu_gaussian3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                            const float *weights, int radius);
pv_status pv_cpu_gradient2d(pv_context *ctx, const pv_image *src, pv_image *gx,
                            pv_image *gy, pv_gradient_scheme scheme);
pv_status pv_cpu_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                            pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

/* stereo.c */
pv_status pv_cpu_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                            const pv_sad_params *params, pv_image *disparity);

#endif
