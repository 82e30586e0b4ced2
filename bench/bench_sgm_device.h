/* SGM from and to device buffers for the bench (bench_sgm.c's -d2d rows):
 * the pair uploaded once into buffers of the OpenCL context, each timed
 * run one pv_stereo_sgm_cl and pv_wait, as libSGM's device-to-device call
 * is timed.  Built with the OpenCL backend only (BENCH_DEVICE_BUFFERS). */
#ifndef BENCH_SGM_DEVICE_H
#define BENCH_SGM_DEVICE_H

#include <parvis.h>

typedef struct sgm_device_run sgm_device_run;

/* Buffers of ctx's cl_context holding left and right, and one for the
 * disparities; 0, or 1 with a message. */
int bench_sgm_device_open(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_sgm_params *params, sgm_device_run **out);
/* One run (a bench_run_fn: user is the sgm_device_run). */
pv_status bench_sgm_device_call(pv_context *ctx, void *user);
/* The last run's disparities into out (f32, the pair's size). */
int bench_sgm_device_read(sgm_device_run *run, pv_image *out);
void bench_sgm_device_close(sgm_device_run *run);

#endif
