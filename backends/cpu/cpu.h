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

/* stereo_bp.c */
pv_status pv_cpu_stereo_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_bp_job *job, pv_image *disparity);

/* register.c */
pv_status pv_cpu_pc_create(pv_context *ctx, const pv_pc_geometry *geometry, void **plan);
void pv_cpu_pc_destroy(pv_context *ctx, void *plan);
pv_status pv_cpu_pc_reference(pv_context *ctx, void *plan, const pv_volume *reference,
                              float mean, float floor);
pv_status pv_cpu_pc_correlate(pv_context *ctx, void *plan, const pv_volume *movers,
                              const float *means, int count, pv_pc_peak *peaks);
pv_status pv_cpu_pc_upsample(pv_context *ctx, void *plan, int mover, const pv_dft_window *window,
                             float *values);
pv_status pv_cpu_normxcorr2(pv_context *ctx, const pv_ncc_job *job, pv_image *map);

#endif
