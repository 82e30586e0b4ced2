/* Internal: the CPU backend's FFT layer.  Operations never call FFTW
 * directly; they acquire a transform pair for one real size here.
 *
 * Sizes are {nx, ny, nz}, x fastest (trailing 1s make 2D and 1D
 * transforms).  The spectrum is FFTW's half spectrum: (nx / 2 + 1) x ny x nz
 * interleaved complex floats, x fastest.  Transforms are unnormalized.
 *
 * Plans are made once per (size, threads) and shared process-wide: FFTW's
 * planner is not thread-safe, so planning and destruction happen under one
 * mutex, while executing a made plan is safe from any thread.  Planner
 * effort: by default measured plans come only from stored wisdom, other
 * sizes are estimated (no call spends seconds planning);
 * PARVIS_FFTW_PLANNER=measure (up to 2^24 points) or patient measures and
 * saves the wisdom, =estimate ignores it.  The wisdom file is
 * PARVIS_FFTW_WISDOM (a path, or "off"), by default
 * $XDG_CACHE_HOME/parvis/fftw3f.wisdom (~/.cache/parvis/...). */
#ifndef PV_CPU_FFT_H
#define PV_CPU_FFT_H

#include "cpu.h"

typedef struct pv_cpu_fft pv_cpu_fft;

/* The R2C / C2R pair for size[3] with ctx->cpu_threads threads. */
pv_status pv_cpu_fft_acquire(pv_context *ctx, const int size[3], pv_cpu_fft **fft);
void pv_cpu_fft_release(pv_cpu_fft *fft);

size_t pv_cpu_fft_real_count(const pv_cpu_fft *fft);
size_t pv_cpu_fft_complex_count(const pv_cpu_fft *fft);

/* Buffers with FFTW's alignment (the plans require it).  count floats;
 * NULL when count overflows or memory is short. */
float *pv_cpu_fft_alloc(size_t count);
void pv_cpu_fft_free(float *buffer);

/* One array of a block carved by pv_cpu_fft_alloc_slices: *array receives
 * count floats. */
typedef struct pv_cpu_slice {
    float **array;
    size_t count;
} pv_cpu_slice;

/* The arrays of slices[0 .. n - 1] carved out of one pv_cpu_fft_alloc block
 * (so one allocation, one check and one free serve a plan's buffers), each
 * at FFTW's alignment.  Returns the block, which the caller frees with
 * pv_cpu_fft_free, or NULL with the arrays untouched when the sizes
 * overflow or memory is short. */
float *pv_cpu_fft_alloc_slices(const pv_cpu_slice *slices, size_t n);

/* 1 when the transforms may read real input straight from data: FFTW
 * executes a plan on other arrays only at the alignment it planned for. */
int pv_cpu_fft_can_read(const pv_cpu_fft *fft, const float *data);

/* real -> spectrum (real is preserved). */
void pv_cpu_fft_forward(const pv_cpu_fft *fft, float *real, float *spectrum);
/* spectrum -> real; FFTW destroys the spectrum of a multi-dimensional C2R. */
void pv_cpu_fft_inverse(const pv_cpu_fft *fft, float *spectrum, float *real);

#endif
