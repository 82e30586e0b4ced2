/** @file
 * parvis octreg: stripe-wise registration of AO-OCT volumes (Do, Purdue
 * thesis 2016, chapters 7-8), coarse to fine by 3D phase correlation.
 *
 * Axes.  An AO-OCT volume is a sequence of fast B-scans, each a sequence of
 * A-lines.  With the thesis's names: z = depth along an A-line, x = A-line
 * within a B-scan, y = B-scan index (the slow axis).  Files and memory hold
 * depth fastest, so an AO-OCT volume is a pv_volume with
 *     pv_volume.nx = depth samples (z),
 *     pv_volume.ny = A-lines per B-scan (x),
 *     pv_volume.nz = B-scans (y);
 * B-scan k is the 2D slice data + k * stride_z.  Shifts below use the
 * thesis's axis names, not pv_volume's field names.
 *
 * Shift convention (as pv_phase_correlate3d): for target B-scan k,
 *     target(x, k, z) ~ reference(x - dx, k - dy, z - dz),
 * so the matching reference B-scan is k - dy.
 *
 * Pipeline.  A plan holds the reference and what is derived from it: the
 * spectrum of the whole reference (for the coarse step) and the spectra of
 * overlapping reference sub-volumes (for the fine step), on the device for
 * OpenCL.  Registering a target volume then
 *   1. transforms each of its B-scans once (zero-padded in x and z);
 *   2. coarse: correlates `stripes` stripes of `stripe_width` consecutive
 *      B-scans, at linearly spaced positions, with the whole reference;
 *   3. rejects spikes among the stripes' reference positions (thesis
 *      algorithm 13: a good position rises over each neighbour by a step in
 *      (0, coarse_tolerance)) and interpolates a predicted dy per B-scan;
 *   4. fine: correlates every B-scan with the reference sub-volume whose
 *      centre lies nearest its predicted reference position (algorithm 14),
 *      batched on the device;
 *   5. filters: the points (dx, k - dy, dz) of consecutive B-scans must lie
 *      at a distance in (0, tolerance) of their neighbours (algorithm 15);
 *      rejected B-scans are marked invalid and get shifts interpolated from
 *      their valid neighbours (held constant beyond the first / last one);
 *   6. optionally refines each valid B-scan's fine peak to sub-pixel
 *      precision (a parabola through the peak and its neighbours per axis).
 * Only small arrays travel between host and device after the upload. */
#ifndef PARVIS_OCTREG_H
#define PARVIS_OCTREG_H

#include "parvis/core.h"
#include "parvis/register.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Registration options (defaults at each field). */
typedef struct pv_octreg_options {
    int stripes;              /**< coarse stripes; default 10, >= 2 */
    int stripe_width;         /**< B-scans per coarse stripe; default 3 */
    int subvolume_width;      /**< reference B-scans per fine sub-volume; default 32;
                                 prime factors 2, 3, 5, 7 only; <= the B-scan count */
    int subvolume_step;       /**< B-scans between sub-volume starts; default 16 */
    double coarse_tolerance;  /**< algorithm 13 step limit in B-scans; 0 (default):
                                 twice the spacing of the stripes */
    double tolerance;         /**< algorithm 15 distance limit in voxels; default 8 */
    pv_pad_mode pad;          /**< padding of each B-scan in x and z: PV_PAD_FFT
                                 (default, the thesis's), PV_PAD_LINEAR (no wrap
                                 around), PV_PAD_NONE (sizes must have factors
                                 2, 3, 5, 7 only) */
    int subpixel;             /**< 1: refine each valid fine peak; default 0 */
    int batch;                /**< B-scans per device batch in the fine step;
                                 0 (default): sized to the device memory */
} pv_octreg_options;

/** Fill options with the defaults given at each field.
 * @param options receives the defaults */
PV_API void pv_octreg_options_default(pv_octreg_options *options);

/** One B-scan's result (or one B-scan of a true motion trace). */
typedef struct pv_octreg_shift {
    /** @{ */
    /** target(x, k, z) ~ reference(x - dx, k - dy, z - dz) */
    double dx, dy, dz;
    /** @} */
    double peak;        /**< fine correlation peak (0 for a constant B-scan) */
    int valid;          /**< 1: measured and accepted; 0: rejected, shifts interpolated */
} pv_octreg_shift;

/** Optional summary of a registration. */
typedef struct pv_octreg_info {
    int stripes;          /**< coarse stripes correlated */
    int good_stripes;     /**< stripes kept by the spike detection */
    int valid_bscans;     /**< B-scans marked valid */
    int subvolumes;       /**< reference sub-volumes in the plan */
} pv_octreg_info;

/** A registration plan for one reference volume (opaque). */
typedef struct pv_octreg_plan pv_octreg_plan;

/** Plan for a reference volume (f32 or u16, any strides; axes as above;
 * the reference and the targets of every call on the plan may be
 * PV_VOLUME_U16, uploaded as 16 bits and converted on the device, with
 * the results of the same values as f32: docs/volumes.md).  Fails
 * with PV_ERR_INVALID when the reference is constant or holds NaN / Inf,
 * or is too thin for the options (fewer B-scans than subvolume_width, or
 * than stripes + stripe_width - 1).  options may be NULL (defaults).
 * The context's timing after this call is the pre-computation's.
 * @param ctx the context
 * @param reference the reference volume
 * @param options the options, or NULL (defaults)
 * @param plan receives the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_plan_create(pv_context *ctx, const pv_volume *reference,
                                       const pv_octreg_options *options, pv_octreg_plan **plan);
/** Destroy a plan.
 * @param plan the plan, or NULL */
PV_API void pv_octreg_plan_destroy(pv_octreg_plan *plan);

/** Register one target volume of the reference's size.  shifts: caller
 * array of target->nz entries; info may be NULL.  A constant target or one
 * holding NaN / Inf is PV_ERR_INVALID; a constant B-scan inside a textured
 * target is only marked invalid.
 * @param plan the plan
 * @param target the target volume
 * @param shifts receives one shift a B-scan
 * @param info receives the run's information, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_register(pv_octreg_plan *plan, const pv_volume *target,
                                    pv_octreg_shift *shifts, pv_octreg_info *info);

/** Reconstruct a registered volume from a target and its shifts (those of
 * pv_octreg_register or any others): each valid B-scan k is resampled to
 * reference position k - dy and offsets (dx, dz) (bilinear in x and z, and
 * split linearly between the two nearest reference B-scans in y when dy is
 * fractional); overlaps are averaged.  Outputs (each may be NULL, not all):
 *   registered  f32 volume of the reference's size; voxels no B-scan
 *               reaches (gaps) are set to gap_value (e.g. 0 or NAN);
 *   enface      f32 image, width = A-lines, height = B-scans: the C-scan,
 *               mean over depth of the covered voxels (gap_value if none);
 *   slow        f32 image, width = B-scans, height = depth: the slow
 *               B-scan, mean over A-lines of the covered voxels;
 *   coverage    caller array of reference B-scan count floats: the summed
 *               y weights of the B-scans placed at each reference B-scan
 *               (0 marks a gap).
 * @param plan the plan
 * @param target the target volume
 * @param shifts the shifts pv_octreg_register found
 * @param gap_value the value of pixels no B-scan covers
 * @param registered receives the registered volume, or NULL
 * @param enface receives the en-face image, or NULL
 * @param slow receives the slow-axis image, or NULL
 * @param coverage receives the coverage, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                       const pv_octreg_shift *shifts, float gap_value,
                                       pv_volume *registered, pv_image *enface, pv_image *slow,
                                       float *coverage);

/** Register `count` target volumes and average their reconstructions (each
 * target uploaded once).  shifts: count * B-scans entries (volume-major),
 * may be NULL; outputs as for pv_octreg_reconstruct (coverage sums over
 * all targets).
 * @param plan the plan
 * @param targets the target volumes
 * @param count the number of targets
 * @param shifts their shifts, target-major
 * @param gap_value the value of pixels no B-scan covers
 * @param averaged receives the averaged volume, or NULL
 * @param enface receives the en-face image, or NULL
 * @param slow receives the slow-axis image, or NULL
 * @param coverage receives the coverage, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_average(pv_octreg_plan *plan, const pv_volume *targets, int count,
                                   pv_octreg_shift *shifts, float gap_value, pv_volume *averaged,
                                   pv_image *enface, pv_image *slow, float *coverage);

/* Cross-check (PARVIS_CROSSCHECK) tolerances against the CPU backend:
 * identical integer shifts and valid flags on >= 99% of the B-scans,
 * sub-pixel shifts of agreeing B-scans within 0.05 voxel; reconstructions
 * within 1e-4 relative. */

/* ------------------------------------------------------ synthetic data */
/** AO-OCT-like test volumes with a known eye-motion trace: bright retinal
 * layers along z that bend slowly across x and y, modulated by a jittered
 * hexagonal mosaic of cone-like spots and by smooth speckle, plus noise.
 * The target is the same continuous scene sampled B-scan by B-scan at the
 * trace's shifts (exact at fractional shifts too): slow drift, tremor and
 * micro-saccade jumps.  trace[k].valid is 1 when B-scan k's reference
 * position k - dy lies inside the reference (within half a B-scan). */
typedef struct pv_octreg_synth_params {
    int size[3];           /**< depth, A-lines, B-scans */
    uint32_t seed;         /**< the random generator's seed */
    double noise;          /**< std of the additive noise, relative to the
                              brightest layer; default 0.05 */
    double drift[3];       /**< drift over the whole volume (dx, dy, dz) in
                              voxels; default (4, 2, 1.5) */
    double tremor;         /**< tremor amplitude in voxels (per axis); default 0.4 */
    int saccades;          /**< micro-saccade jumps; default 2 */
    double saccade_size;   /**< jump length in voxels; default 6 */
    double start[3];       /**< trace offset at B-scan 0; default (0, 0, 0) */
    int integer_shifts;    /**< 1: round the trace to whole voxels (default 0) */
} pv_octreg_synth_params;

/** Fill params with the defaults given at each field.
 * @param params receives the defaults */
PV_API void pv_octreg_synth_params_default(pv_octreg_synth_params *params);

/** Fill caller-allocated reference and target volumes of params.size (f32,
 * any strides) and trace (size[2] entries; may be NULL).
 * @param params the parameters
 * @param reference receives the reference volume
 * @param target receives the target volume
 * @param trace receives the motion trace
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_octreg_synthesize(const pv_octreg_synth_params *params, pv_volume *reference,
                                      pv_volume *target, pv_octreg_shift *trace);

#ifdef __cplusplus
}
#endif

#endif
