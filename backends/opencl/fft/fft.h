/* Internal: the OpenCL backend's FFT layer.  Operations never call an FFT
 * library directly; they acquire a baked transform pair here, made by one
 * of two engines (fft_engine.h): clFFT, or VkFFT when the library was
 * configured with it (PV_HAVE_VKFFT).
 *
 * Sizes are {nx, ny, nz}, x fastest (trailing 1s make 2D and 1D
 * transforms).  Buffers are dense: `batch` real blocks of nx*ny*nz floats
 * back to back, and `batch` half spectra of (nx/2 + 1)*ny*nz interleaved
 * complex floats.  Transforms are unnormalized both ways, as FFTW's.  The
 * inverse may overwrite its spectrum.
 *
 * Engine choice, per acquire: the context's "fft" launch parameter
 * FFT_ENGINE when set (pv_context_set_fft_engine), else the environment's
 * PARVIS_FFT=clfft|vkfft, else VkFFT when built in (the faster on NVIDIA:
 * clFFT is unmaintained), else clFFT.  A pair keeps the engine it was
 * made with.
 *
 * clFFT only takes lengths whose prime factors are 2, 3, 5, 7, 11 and 13;
 * other lengths fail with PV_ERR_UNSUPPORTED (callers pad).  VkFFT takes
 * any length (Bluestein's algorithm past 13).
 *
 * Pairs are cached process-wide by their full key (context, queue, size,
 * batch, engine) and freed when their context goes away (a runtime release
 * hook); both engines compile their kernels when a pair is made, so baking
 * is timed apart (pv_cl_fft_bake_ms) and never counted as kernel time.
 * Set CLFFT_CACHE_PATH to let clFFT keep its compiled kernels on disk. */
#ifndef PV_CL_FFT_H
#define PV_CL_FFT_H

#include "../opencl.h"

typedef struct pv_cl_fft pv_cl_fft;

/* The engine the next acquire on ctx will use (never PV_FFT_AUTO);
 * PV_ERR_INVALID / PV_ERR_UNSUPPORTED when PARVIS_FFT names an unknown or
 * unbuilt engine. */
pv_status pv_cl_fft_engine_of(pv_context *ctx, pv_fft_engine *engine);
/* Record the context's choice (PV_FFT_AUTO: back to the default). */
pv_status pv_cl_fft_set_engine(pv_context *ctx, pv_fft_engine engine);
/* 1 when this build has the engine (PV_FFT_AUTO: always). */
int pv_cl_fft_engine_built(pv_fft_engine engine);

/* The baked R2C / C2R pair for size[3] and batch on ctx's queue. */
pv_status pv_cl_fft_acquire(pv_context *ctx, const int size[3], int batch, pv_cl_fft **fft);
void pv_cl_fft_release(pv_cl_fft *fft);

/* Per transform of the batch. */
size_t pv_cl_fft_real_count(const pv_cl_fft *fft);
size_t pv_cl_fft_complex_count(const pv_cl_fft *fft);
/* Milliseconds the engine took to make this pair (both directions). */
double pv_cl_fft_bake_ms(const pv_cl_fft *fft);
/* The engine that made the pair. */
pv_fft_engine pv_cl_fft_engine(const pv_cl_fft *fft);

/* Enqueue the whole batch: real -> spectrum, and spectrum -> real (the
 * spectrum may be overwritten). */
pv_status pv_cl_fft_forward(pv_context *ctx, pv_cl_fft *fft, cl_mem real, cl_mem spectrum);
pv_status pv_cl_fft_inverse(pv_context *ctx, pv_cl_fft *fft, cl_mem spectrum, cl_mem real);

/* After pv_cl_finish: add the device time of the transforms enqueued since
 * the last collect to the call's kernel_ms. */
void pv_cl_fft_collect(pv_context *ctx, pv_cl_fft *fft);

#endif
