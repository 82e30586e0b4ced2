/* Internal: the OpenCL backend's operations, one module per file. */
#ifndef PV_OPENCL_H
#define PV_OPENCL_H

#include "runtime.h"

/* Launch-parameter families (see runtime.h), defined by each module. */
extern const pv_cl_param_family pv_cl_params_filter;
extern const pv_cl_param_family pv_cl_params_sad;
extern const pv_cl_param_family pv_cl_params_bp;   /* stereo_bp.c */
extern const pv_cl_param_family pv_cl_params_tune; /* tune.c: cache-read marker */
extern const pv_cl_param_family pv_cl_params_register;
extern const pv_cl_param_family pv_cl_params_fft;  /* fft.c: FFT engine choice */
extern const pv_cl_param_family pv_cl_params_flow;

/* filter.c */
pv_status pv_cl_gaussian2d(pv_context *ctx, const pv_image *src, pv_image *dst,
                           const float *weights, int radius);
pv_status pv_cl_gaussian3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                           const float *weights, int radius);
pv_status pv_cl_gradient2d(pv_context *ctx, const pv_image *src, pv_image *gx,
                           pv_image *gy, pv_gradient_scheme scheme);
pv_status pv_cl_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                           pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

/* stereo.c */
pv_status pv_cl_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_sad_params *params, pv_image *disparity);

/* stereo_bp.c */
pv_status pv_cl_stereo_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_bp_job *job, pv_image *disparity);

/* register.c */
pv_status pv_cl_pc_create(pv_context *ctx, const pv_pc_geometry *geometry, void **plan);
void pv_cl_pc_destroy(pv_context *ctx, void *plan);
pv_status pv_cl_pc_reference(pv_context *ctx, void *plan, const pv_volume *reference,
                             float mean, float floor);
pv_status pv_cl_pc_correlate(pv_context *ctx, void *plan, const pv_volume *movers,
                             const float *means, int count, pv_pc_peak *peaks);
pv_status pv_cl_pc_upsample(pv_context *ctx, void *plan, int mover, const pv_dft_window *window,
                            float *values);
pv_status pv_cl_normxcorr2(pv_context *ctx, const pv_ncc_job *job, pv_image *map);

/* flow.c */
pv_status pv_cl_flow_create(pv_context *ctx, const pv_flow_setup *setup, void **plan);
void pv_cl_flow_destroy(pv_context *ctx, void *plan);
pv_status pv_cl_flow_load(pv_context *ctx, void *plan, const pv_volume *fixed,
                          const pv_volume *moving);
pv_status pv_cl_flow_begin_level(pv_context *ctx, void *plan, int level);
pv_status pv_cl_flow_gradients(pv_context *ctx, void *plan, int level);
pv_status pv_cl_flow_resample(pv_context *ctx, void *plan, int level);
pv_status pv_cl_flow_tensor(pv_context *ctx, void *plan, int level);
pv_status pv_cl_flow_jacobi(pv_context *ctx, void *plan, int level, int count, double *change);
pv_status pv_cl_flow_read(pv_context *ctx, void *plan, pv_flow_field *flow);
pv_status pv_cl_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                          pv_volume *warped);

/* features.c */
extern const pv_cl_param_family pv_cl_params_features;
pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **plan);
void pv_cl_sift_destroy(pv_context *ctx, void *plan);
pv_status pv_cl_sift_detect(pv_context *ctx, void *plan, const pv_image *image, pv_sift_raw *raw);
pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2);

/* octreg.c */
extern const pv_cl_param_family pv_cl_params_octreg;
pv_status pv_cl_oct_create(pv_context *ctx, const pv_oct_geometry *geometry, void **plan);
void pv_cl_oct_destroy(pv_context *ctx, void *plan);
pv_status pv_cl_oct_load(pv_context *ctx, void *plan, const pv_volume *volume,
                         pv_oct_plane_stats *stats);
pv_status pv_cl_oct_reference(pv_context *ctx, void *plan, const float *floors);
pv_status pv_cl_oct_spectra(pv_context *ctx, void *plan);
pv_status pv_cl_oct_coarse(pv_context *ctx, void *plan, const int *start, int count,
                           pv_pc_peak *peaks);
pv_status pv_cl_oct_fine(pv_context *ctx, void *plan, const int *sub, pv_pc_peak *peaks);
pv_status pv_cl_oct_place(pv_context *ctx, void *plan, const pv_oct_placement *placement,
                          int reset);
pv_status pv_cl_oct_read(pv_context *ctx, void *plan, float gap, pv_volume *registered,
                         pv_image *enface, pv_image *slow);

#endif
