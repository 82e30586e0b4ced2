/* SIFT from a device buffer for the bench (bench_features.c's -d2d rows):
 * the image uploaded once into a buffer of the OpenCL context, each timed
 * run one pv_sift_detect_cl (keypoints and descriptors back in host
 * memory), as CudaSift's ExtractSift on an image already on the device is
 * timed by bench/peers/cudasift_peer.  Built with the OpenCL backend only
 * (BENCH_DEVICE_BUFFERS). */
#ifndef BENCH_SIFT_DEVICE_H
#define BENCH_SIFT_DEVICE_H

#include <parvis.h>

typedef struct sift_device_run sift_device_run;

/* A buffer of the plan's context holding image; 0, or 1 with a message. */
int bench_sift_device_open(pv_context *ctx, pv_sift_plan *plan, const pv_image *image,
                           sift_device_run **out);
/* One run (a bench_run_fn: user is the sift_device_run); the previous
 * run's features are freed first. */
pv_status bench_sift_device_call(pv_context *ctx, void *user);
/* Moves the last run's features into *out (the caller frees them): 1, or
 * 0 when no run succeeded. */
int bench_sift_device_take(sift_device_run *run, pv_sift_features *out);
void bench_sift_device_close(sift_device_run *run);

#endif
