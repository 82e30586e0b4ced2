/* Internal: the register sub-table of a backend (lib/core/backend.h):
 * phase correlation and normalised cross-correlation, and the geometry
 * the front end prepares for them.  Not installed. */
#ifndef PV_OPS_REGISTER_H
#define PV_OPS_REGISTER_H

#include "parvis.h"
#include "ops_slots.h"

/* register: phase correlation runs on a backend plan of fixed geometry.
 * The front end owns padding sizes, window weights and the sub-pixel
 * search (it builds the DFT tables in double), so both backends compute
 * on identical numbers. */
typedef struct pv_pc_geometry {
    int size[3];            /* input extent nx, ny, nz (nz = 1 for images) */
    int fft[3];             /* transform extent, >= size (zero padded) */
    int batch;              /* movers per pc_correlate call, >= 1 */
    int keep_spectra;       /* keep each mover's cross-power spectrum for pc_upsample */
    int transient;          /* one-shot plan: may use the context's scratch buffers */
    int centered;           /* subtract each input's mean before padding / windowing */
    const float *window[3]; /* per-axis weights (size[a] values each), or all NULL */
} pv_pc_geometry;

/* The correlation c = IDFT(R) with R = (M / |M|) conj(F / |F|) / n, where
 * reference bins of power |F|^2 <= floor count as empty (R = 0 there) and
 * n is the number of the full spectrum's non-empty reference bins, so two
 * identical inputs give c = 1 at 0. */
typedef struct pv_pc_peak {
    float value;            /* the largest c (first in memory order on ties) */
    int index[3];           /* its position in the transform grid */
    float neighbors[3][2];  /* c at index - 1 and index + 1 per axis (wrapped) */
} pv_pc_peak;

/* An upsampled-DFT window: count[a] points per axis; table[a] holds
 * count[a] rows of K_a interleaved complex weights, K = fft[0] / 2 + 1,
 * fft[1], fft[2].  values[(wz * count[1] + wy) * count[0] + wx] =
 * Re(sum_k Tz[wz][kz] Ty[wy][ky] Tx[wx][kx] R[kz][ky][kx]). */
typedef struct pv_dft_window {
    int count[3];
    const float *table[3];
} pv_dft_window;

/* normxcorr2 inputs, prepared by the front end: dense f32 template and
 * image (each centred on its mean and scaled to unit variance), the
 * transform extent (>= the map size), and the variance floors below which
 * an overlap counts as textureless. */
typedef struct pv_ncc_job {
    pv_image templ;
    pv_image image;
    int fft[2];
    int min_overlap;
    float templ_floor;
    float image_floor;
} pv_ncc_job;

/* normxcorr2 of one template against count images of one size, prepared
 * by the front end as count single jobs would be: templ, fft, min_overlap
 * and the floors as in pv_ncc_job, images[i] the i-th image centred and
 * scaled (dense f32).  maps[i] receives image i's map (dense f32). */
typedef struct pv_ncc_batch_job {
    pv_image templ;
    const pv_image *images;
    int count;
    int fft[2];
    int min_overlap;
    float templ_floor;
    float image_floor;
} pv_ncc_batch_job;

/* Masked normxcorr2, prepared by the front end: dense f32 template and
 * image, each less its masked mean and scaled to unit masked variance and
 * 0 outside its mask, and the masks as dense f32 0 / 1 of their image's
 * size.  A map point sums, over the template pixels p inside the image
 * whose both masks are 1, the count n and t, t^2, i, i^2, t * i
 * (backends/common/ncc_masked.h, the same text on both backends); it is 0
 * where n < min_overlap or where either side's variance sum over the
 * overlap is not above floor_ratio times its sum of squares, else the
 * coefficient clipped to [-1, 1]. */
typedef struct pv_ncc_masked_job {
    pv_image templ, templ_mask;
    pv_image image, image_mask;
    int min_overlap;
    float floor_ratio;
} pv_ncc_masked_job;

/* Masked phase correlation, prepared by the front end: four dense f32
 * volumes of extent size (x fastest): the reference and the moving input,
 * each less its masked mean and 0 outside its mask, and the two masks as
 * 0 / 1.  fft >= 2 size - 1 per axis (1 where size is 1), so the six
 * correlations are linear.  A shift s scores the NCC over the overlap of
 * the moving mask with the reference mask displaced by s: count = the
 * overlap's pixels (rounded), 0 where count < overlap_ratio * the largest
 * count or where either side's variance sum over the overlap is <= its
 * floor, else the coefficient clipped to [-1, 1]. */
typedef struct pv_pcm_job {
    int size[3];
    int fft[3];
    const float *reference, *reference_mask, *moving, *moving_mask;
    float overlap_ratio;
    float reference_floor, moving_floor;
} pv_pcm_job;

/* The best score of the map over the transform grid (its index, the first
 * in memory order on ties; index c along an axis is the shift c, or
 * c - fft past size - 1) and the largest overlap count. */
typedef struct pv_pcm_peak {
    float value;
    int index[3];
    float max_count;
} pv_pcm_peak;

/* register: movers[] and reference are volumes of geometry.size, f32 or
 * u16 (converted as they are loaded: on the host by the CPU backend, on the
 * device by the OpenCL one).
 * pc_correlate: means[i] is subtracted from movers[i] when
 * geometry.centered.  normxcorr2: map is f32, (image + templ - 1) per
 * axis.  pc_time_fft: the plan's forward and inverse transforms once over
 * its whole batch (nothing else), finished, so the call's timing is the
 * bare pair.  The FFT engine choice: fft_engine_built, whether this build
 * of the backend can run `engine` (no context needed); fft_engine_of, the
 * engine the context's transforms use; fft_set_engine, choose it
 * (PV_FFT_AUTO: PARVIS_FFT, else the build's default).  A backend with a
 * single engine reports it and ignores the choice. */
#define PV_REGISTER_SLOTS(X, P)                                                                   \
    PV_OPS_PLAN_SLOTS(X, P, pc_create, pc_destroy, pv_pc_geometry)                                \
    X(P, pv_status, pc_reference,                                                                 \
      (pv_context *ctx, void *plan, const pv_volume *reference, float mean, float floor))         \
    X(P, pv_status, pc_correlate,                                                                 \
      (pv_context *ctx, void *plan, const pv_volume *movers, const float *means, int count,        \
       pv_pc_peak *peaks))                                                                        \
    X(P, pv_status, pc_upsample,                                                                  \
      (pv_context *ctx, void *plan, int mover, const pv_dft_window *window, float *values))       \
    X(P, pv_status, normxcorr2, (pv_context *ctx, const pv_ncc_job *job, pv_image *map))          \
    X(P, pv_status, normxcorr2_batch,                                                             \
      (pv_context *ctx, const pv_ncc_batch_job *job, pv_image *maps))                             \
    X(P, pv_status, normxcorr2_masked,                                                            \
      (pv_context *ctx, const pv_ncc_masked_job *job, pv_image *map))                             \
    X(P, pv_status, pc_masked, (pv_context *ctx, const pv_pcm_job *job, pv_pcm_peak *peak))       \
    X(P, pv_status, pc_time_fft, (pv_context *ctx, void *plan))                                   \
    X(P, int, fft_engine_built, (pv_fft_engine engine))                                           \
    X(P, pv_status, fft_engine_of, (pv_context *ctx, pv_fft_engine *engine))                      \
    X(P, pv_status, fft_set_engine, (pv_context *ctx, pv_fft_engine engine))

#endif
