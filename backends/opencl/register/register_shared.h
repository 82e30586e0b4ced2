/* Internal: what the OpenCL register module's two files share: register.c
 * (phase correlation, the launch parameters of the "register" family and
 * the helpers below) and ncc.c (normxcorr2, its batch and its masked
 * form).  Not installed. */
#ifndef PV_CL_REGISTER_SHARED_H
#define PV_CL_REGISTER_SHARED_H

#include "../opencl.h"
#include "../fft/fft.h"

/* The runtime's kernel argument (runtime.h), under the module's short name. */
typedef pv_cl_kernel_arg kernel_arg;

/* Where a padded copy goes and how it is weighted. */
typedef struct pad_job {
    cl_mem src, dst;
    cl_ulong src_offset, dst_offset;
    const int *size, *fft;
    cl_float mean;
    cl_mem windows;
    cl_int windowed;
} pad_job;

/* Launch parameter `name` of the "register" family. */
int pv_cl_register_param(pv_context *ctx, const char *name);
/* Drain the queue (keeping the first error) and count the FFTs' time
 * (fft may be NULL). */
pv_status pv_cl_register_finish(pv_context *ctx, pv_cl_fft *fft, pv_status status);
/* Kernel `name` of the register program over `items` work items. */
pv_status pv_cl_register_launch_1d(pv_context *ctx, const char *name, const kernel_arg *args,
                                   int count, size_t items);
/* dst[dst_offset ..] <- src[src_offset ..] less mean, padded to the grid
 * fft and weighted by the windows when windowed. */
pv_status pv_cl_register_pad(pv_context *ctx, const pad_job *job);

/* ncc.c's entry points, bound to the register table by register.c. */
pv_status pv_cl_ncc(pv_context *ctx, const pv_ncc_job *job, pv_image *map);
pv_status pv_cl_ncc_batch(pv_context *ctx, const pv_ncc_batch_job *job, pv_image *maps);
pv_status pv_cl_ncc_masked(pv_context *ctx, const pv_ncc_masked_job *job, pv_image *map);

#endif
