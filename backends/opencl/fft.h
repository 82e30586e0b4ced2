/* Internal: the OpenCL backend's FFT layer over clFFT.  Operations never
 * call clFFT directly; they acquire a baked transform pair here.
 *
 * Sizes are {nx, ny, nz}, x fastest (trailing 1s make 2D and 1D
 * transforms).  Buffers are dense: `batch` real blocks of nx*ny*nz floats
 * back to back, and `batch` half spectra of (nx/2 + 1)*ny*nz interleaved
 * complex floats.  Transforms are unnormalized both ways, as FFTW's.
 *
 * clFFT only takes lengths whose prime factors are 2, 3, 5, 7, 11 and 13;
 * other lengths fail with PV_ERR_UNSUPPORTED (callers pad; see
 * pv_cl_fft_length_ok).  clfftSetup runs once for the process while any
 * plan exists.  Plans are cached by their full key (context, queue, size,
 * batch) and freed when their context goes away; baking is timed apart
 * (pv_cl_fft_bake_ms) and never counted as kernel time.  Set
 * CLFFT_CACHE_PATH to let clFFT keep its compiled kernels on disk. */
#ifndef PV_CL_FFT_H
#define PV_CL_FFT_H

#include "opencl.h"

typedef struct pv_cl_fft pv_cl_fft;

/* 1 when clFFT can transform length n (n >= 1, factors 2..13 only). */
int pv_cl_fft_length_ok(int n);

/* The baked R2C / C2R pair for size[3] and batch on ctx's queue. */
pv_status pv_cl_fft_acquire(pv_context *ctx, const int size[3], int batch, pv_cl_fft **fft);
void pv_cl_fft_release(pv_cl_fft *fft);

/* Per transform of the batch. */
size_t pv_cl_fft_real_count(const pv_cl_fft *fft);
size_t pv_cl_fft_complex_count(const pv_cl_fft *fft);
/* Milliseconds clfftBakePlan took for this pair (both directions). */
double pv_cl_fft_bake_ms(const pv_cl_fft *fft);

/* Enqueue the whole batch: real -> spectrum, and spectrum -> real (the
 * spectrum may be overwritten). */
pv_status pv_cl_fft_forward(pv_context *ctx, pv_cl_fft *fft, cl_mem real, cl_mem spectrum);
pv_status pv_cl_fft_inverse(pv_context *ctx, pv_cl_fft *fft, cl_mem spectrum, cl_mem real);

/* After pv_cl_finish: add the device time of the transforms enqueued since
 * the last collect to the call's kernel_ms. */
void pv_cl_fft_collect(pv_context *ctx, pv_cl_fft *fft);

#endif
