/** @file
 * parvis stereo: SAD block matching, belief propagation, semi-global matching.
 *
 * Convention: the left image is the reference.  A left pixel at column x
 * matches right column x - d, for d in [min_disp, min_disp + ndisp).  The
 * output is an f32 disparity per left pixel; a pixel with no valid match
 * (no candidate column inside the right image, or rejected by the
 * left-right or uniqueness checks) is INFINITY, as in Middlebury's PFM files.
 *
 * Matching cost: the sum over a window x window block of |L - R|, with
 * image borders replicated.  A candidate d is valid when 0 <= x - d < width.
 * The winner is the smallest cost; on equal costs the smaller d wins, on
 * both backends. */
#ifndef PARVIS_STEREO_H
#define PARVIS_STEREO_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** SAD block-matching parameters (defaults at each field). */
typedef struct pv_sad_params {
    int min_disp;       /**< smallest disparity (may be negative); default 0 */
    int ndisp;          /**< number of disparities, >= 1, <= image width; default 64 */
    int window;         /**< odd block size >= 1; default 5 */
    int subpixel;       /**< 1: parabola through the costs at d-1, d, d+1 */
    int lr_check;       /**< 1: invalidate where |d_LR - d_RL| > lr_max_diff */
    float lr_max_diff;  /**< default 1 */
    /** Uniqueness: a winner with cost c is rejected when another candidate
     * outside d-1..d+1 costs less than c * (1 + uniqueness).  0 disables. */
    float uniqueness;
} pv_sad_params;

/** Fill params with the defaults listed at each field.
 * @param params receives the defaults */
PV_API void pv_sad_params_default(pv_sad_params *params);

/** left, right: same size, same pixel type (u8 or f32); f32 pixels must be
 * finite (NaN or an infinity: PV_ERR_INVALID naming left or right and the
 * pixel, the policy of every operation on float input; pv_stereo_bp too).
 * disparity: f32 image of the same size, caller-allocated.  Cross-check tolerance: the
 * backends must give identical disparities on >= 99.9% of pixels (exact
 * cost ties on f32 input aside), and sub-pixel values within 1e-3.
 * @param ctx the context
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map (f32)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                               const pv_sad_params *params, pv_image *disparity);

/** Many pairs of one size and pixel type in one call (small images: a
 * camera's crops, a dataset of patches): disparities[i] is exactly
 * pv_stereo_sad(lefts[i], rights[i])'s.  Every pair is held to
 * pv_stereo_sad's rules and checked before any work; on a bad argument
 * nothing is touched.  On OpenCL the plan is made once, every pair's
 * copies and kernels are queued without a wait and its map copied into a
 * batch buffer on the device, so the device runs the pairs back to back
 * and the call waits once a group (256 MiB of maps), reading the group's
 * maps back together; on the CPU the pairs run one after another.  On a failure during the work every disparity is
 * reset to INFINITY.  Progress (parvis/progress.h) counts pairs.
 * @param ctx the context
 * @param lefts count left (reference) images
 * @param rights count right images
 * @param count the number of pairs (>= 1)
 * @param params the parameters, shared by every pair
 * @param disparities receives count disparity maps
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sad_batch(pv_context *ctx, const pv_image *lefts,
                                     const pv_image *rights, int count,
                                     const pv_sad_params *params, pv_image *disparities);

/** Middlebury-style error: share (0..1) of pixels with known ground truth
 * (gt > 0 after dividing by gt_scale; gt == 0 means unknown) whose disparity
 * differs by more than `threshold`, leaving out `border` pixels on each side.
 * Invalid (INFINITY) disparities count as bad.  gt is u8 or f32.  A border
 * that leaves no pixel (2 border >= width or height) is PV_ERR_INVALID.
 * @param disparity the disparity map
 * @param ground_truth the true disparities, scaled
 * @param gt_scale the ground truth's scale
 * @param threshold the largest error of a good pixel
 * @param border pixels left out at each side
 * @param bad_fraction receives the share of bad pixels
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_disparity_error(const pv_image *disparity, const pv_image *ground_truth,
                                    float gt_scale, float threshold, int border, double *bad_fraction);


/* ------------------------------------------------ belief propagation (BP) */
/** Hierarchical belief propagation (Felzenszwalb & Huttenlocher, as in the
 * auto-tuning paper's section 3).  Same disparity convention as SAD: left
 * is the reference, left column x matches right column x - d for d in
 * [min_disp, min_disp + ndisp); the output is an f32 disparity per left
 * pixel (always finite: BP assigns every pixel a label).
 *
 * Steps: optional Gaussian smoothing of both images (sigma), in f32 on
 * the 0..255 grey values; data cost lambda * min(|L(x,y) - R(x-d,y)|,
 * data_max) (the right image's border column replicated where x - d falls
 * outside it); coarser levels sum (not average) 2x2 blocks; per level,
 * from the coarsest (messages zero), `iterations` checkerboard rounds of
 * truncated-linear O(n) message updates (smoothness min(|d1 - d2|,
 * disc_max), messages normalised by their mean; round t updates the
 * pixels with x + y + t odd); messages copied to the 2x2 children of the
 * next finer level; disparity = argmin of data cost plus the four incoming
 * messages after the last round (ties: the smaller d).
 *
 * Where this differs from Felzenszwalb & Huttenlocher's reference code,
 * on purpose: the data cost of the first ndisp - 1 columns replicates the
 * right image's border column (that code leaves it at zero); every pixel,
 * the image border included, sends messages (the outside counting as zero
 * messages); the Gaussian keeps ceil(3 sigma) taps per side.  The
 * measurements behind these choices, and the accuracy of the paper's
 * defaults: docs/RESULTS.md, "Belief-propagation stereo".
 *
 * Partitions (paper section 9): when the estimated memory of one run
 * (pv_bp_memory_estimate) exceeds memory_budget, or when tile_width /
 * tile_height are set, the image is cut into a grid of nearly equal tiles;
 * BP runs on each tile widened by tile_padding pixels on every side (data
 * costs still come from the whole images) and only the tile's own pixels
 * are kept.  Tiles whose size cannot hold `levels` levels use fewer.
 *
 * Message precision (message_precision): messages are stored as float32
 * (PV_BP_MESSAGES_F32, the default) or rounded to IEEE half
 * (PV_BP_MESSAGES_F16: half the message memory traffic; every sum and pass
 * still runs in float32).  A normalised message lies within
 * min(disc_max, ndisp - 1) of zero, so half never overflows; its 11
 * significant bits move some disparities against float32 messages
 * (docs/bp-at-scale.md has the measured shares), so it is an opt-in.
 *
 * Message update (message_update): PV_BP_UPDATE_SERIAL (the default)
 * normalises each message by subtracting its mean, as above.
 * PV_BP_UPDATE_COOPERATIVE subtracts its minimum instead: out[d] =
 * min(m[d], min_h + disc_max) - min_h, with m the forward and backward
 * passes over h = data + three incoming messages and min_h the minimum of
 * h.  For min-sum BP this is the same algorithm (a constant per message
 * shifts every disparity's belief alike; the passes and the truncation
 * commute with it), so disparities change only where float rounding moves
 * a tie (docs/bp-at-scale.md has the measured error rates); every message
 * is then >= 0 and within disc_max of 0.  It lets the OpenCL backend spread
 * one message over a group of work-items and still give the CPU's bits: a
 * minimum is exact in any order, and the passes run as exact scans
 * (backends/common/bp_scan_math.h).  Either precision applies.
 *
 * Cross-check tolerance: both backends do the same float32 operations in
 * the same order (or, cooperatively, operations proven to give the same
 * bits), and round half messages the same way; identical disparities on
 * >= 99.5% of pixels, in either precision and update (measured: 100%). */
typedef enum pv_bp_message_precision {
    PV_BP_MESSAGES_F32 = 0,  /**< 32-bit float messages */
    PV_BP_MESSAGES_F16 = 1   /**< 16-bit float messages */
} pv_bp_message_precision;

/** How a message is updated and normalised. */
typedef enum pv_bp_message_update {
    PV_BP_UPDATE_SERIAL = 0,      /**< mean normalisation, one work-item per message */
    PV_BP_UPDATE_COOPERATIVE = 1  /**< minimum normalisation, scans across work-items */
} pv_bp_message_update;

/** Belief-propagation parameters (defaults at each field). */
typedef struct pv_bp_params {
    int min_disp;       /**< smallest disparity (may be negative); default 0 */
    int ndisp;          /**< number of disparities, 2 .. image width; default 16 */
    int levels;         /**< pyramid levels >= 1; default 5.  2^(levels-1) must not
                           exceed the smaller image side (else PV_ERR_INVALID) */
    int iterations;     /**< message rounds per level (alternating colours) >= 1; default 10 */
    float lambda;       /**< data-cost weight > 0; default 0.07 */
    float data_max;     /**< data-cost truncation > 0; default 15 */
    float disc_max;     /**< smoothness truncation > 0; default 1.7.  For wide ranges
                           pv_bp_recommended_disc_max(ndisp) = ndisp / 7.5 works well */
    float sigma;        /**< Gaussian pre-smoothing, 0 = none; default 1.0 */
    int tile_width;     /**< tile size without padding; 0 = automatic (budget);
                           else at least 16 px (the smallest tile the automatic
                           tiling makes; smaller is refused with PV_ERR_INVALID) */
    int tile_height;    /**< tile size without padding; 0 = automatic (budget);
                           else at least 16 px */
    int tile_padding;   /**< pixels added around each tile; default 20 */
    size_t memory_budget; /**< bytes one tile may use; 0 = half the available
                             memory (at most the available memory either way).
                             Available: the device's global memory on OpenCL
                             (buffers within CL_DEVICE_MAX_MEM_ALLOC_SIZE); on
                             the CPU and on an OpenCL device of CPU type (whose
                             buffers are host memory) the host's physical RAM,
                             less where RLIMIT_AS / RLIMIT_DATA leave less
                             beside what the process maps; the environment
                             variable PARVIS_MEMORY_LIMIT (bytes, suffix K/M/G)
                             lowers it.  A run that needs more is tiled; when
                             even the smallest tiles (16 px plus padding) need
                             more, the call fails with PV_ERR_DEVICE_MEMORY
                             naming the bytes needed and available, before
                             allocating anything.  The estimate counts
                             float32 messages whatever the precision. */
    pv_bp_message_precision message_precision; /**< default PV_BP_MESSAGES_F32 */
    pv_bp_message_update message_update;       /**< default PV_BP_UPDATE_SERIAL */
} pv_bp_params;

/** The paper's defaults (levels 5, iterations 10, lambda 0.07, data_max 15,
 * disc_max 1.7, sigma 1.0), ndisp 16, min_disp 0, padding 20, no tiles,
 * float32 messages, serial (mean-normalised) message update.
 * @param params receives the defaults */
PV_API void pv_bp_params_default(pv_bp_params *params);

/** ndisp / 7.5: a smoothness truncation that scales with the range.
 * @param ndisp the number of disparities
 * @return the truncation */
PV_API float pv_bp_recommended_disc_max(int ndisp);

/** Bytes a BP run on a width x height region needs for its data-cost
 * pyramid and messages (0 when the size overflows or an argument is bad).
 * @param width width in pixels
 * @param height height in pixels
 * @param ndisp the number of disparities
 * @param levels pyramid levels
 * @return bytes, or 0 */
PV_API size_t pv_bp_memory_estimate(int width, int height, int ndisp, int levels);

/** What a pv_stereo_bp call on a width x height pair would use, in bytes,
 * without running it. */
typedef struct pv_bp_memory_info {
    size_t whole_bytes;     /**< one run over the whole image */
    size_t available_bytes; /**< the context's memory (see memory_budget) */
    size_t budget_bytes;    /**< what one tile may use */
    size_t tile_bytes;      /**< the largest tile's need (= whole_bytes untiled) */
    /** @{ */
    /** the partition the call would use */
    int tiles_x, tiles_y;
    /** @} */
} pv_bp_memory_info;

/** Fails as pv_stereo_bp would (PV_ERR_DEVICE_MEMORY when nothing fits,
 * PV_ERR_INVALID for a bad range or schedule); info untouched on error.
 * @param ctx the context
 * @param width width in pixels
 * @param height height in pixels
 * @param params the parameters (see the type)
 * @param info receives the memory figures and the partition
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_bp_memory_plan(pv_context *ctx, int width, int height, const pv_bp_params *params,
                            pv_bp_memory_info *info);

/** left, right: same size, same pixel type (u8 or f32); f32 pixels finite
 * (else PV_ERR_INVALID naming the argument).  disparity: f32 of the same
 * size, caller-allocated, not aliasing an input.
 * @param ctx the context
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                              const pv_bp_params *params, pv_image *disparity);

/* ------------------------------------------------ semi-global matching (SGM)
 *
 * Semi-global matching (Hirschmueller 2008) over a census cost.  Same
 * disparity convention as SAD: left is the reference, left column x
 * matches right column x - d for d in [min_disp, min_disp + ndisp); the
 * output is an f32 disparity per left pixel, INFINITY where invalid.
 *
 * Steps, all in integers so that both backends give the same bits:
 * 1. Census transform of both images over a census_width x census_height
 *    window (5x5, 7x7 or 9x7), image borders replicated.  Plain: one bit
 *    per window pixel other than the centre, set when that pixel is
 *    greater than the centre.  Centre-symmetric (census_symmetric, as
 *    libSGM): one bit per pair of pixels mirrored through the centre, set
 *    when the first (in row-major order) is greater than its mirror; half
 *    the bits.
 * 2. Matching cost C(p, d): the Hamming distance between the census of
 *    left (x, y) and right (x - d, y).  A candidate whose right column is
 *    outside the image costs the number of census bits (the largest cost).
 * 3. Aggregation along `paths` directions r (4: left-right both ways and
 *    top-bottom both ways; 8: also the four diagonals):
 *      L_r(p, d) = C(p, d) + min(L_r(p-r, d), L_r(p-r, d-1) + P1,
 *                                L_r(p-r, d+1) + P1, m + P2') - m,
 *    m = min_k L_r(p-r, k), starting with L_r = C at the image edge where
 *    the path enters.  P2' = P2, or with p2_adaptive
 *    max(P1, P2 / |I(p) - I(p-r)|) in integer division (P2 where the
 *    intensities are equal).  S(p, d) = sum over the paths of L_r(p, d).
 * 4. Winner: the d of the smallest S among the valid candidates
 *    (0 <= x - d < width); on equal sums the smaller d.  No valid candidate
 *    gives INFINITY.
 * 5. Uniqueness (uniqueness < 1): the winner is kept when
 *    S(best) <= uniqueness * S(d) for every valid d outside best-1..best+1,
 *    compared exactly (uniqueness is rounded to a multiple of 2^-16).
 * 6. Left-right check (lr_check): the right image's disparity at column
 *    x' is the argmin over d of S(x' + d, d) (same ties), taken from the
 *    same sums; a left winner d is kept when the right disparity at x - d
 *    differs from d by at most lr_max_diff.
 * 7. Sub-pixel refinement (subpixel): a parabola through S(d-1), S(d),
 *    S(d+1) when both neighbours are valid candidates, in float32.
 * 8. Median (median): a 3x3 median of the result, image border
 *    replicated, INFINITY sorting above every number.
 *
 * Input: left and right of the same size and the same pixel type, U8, U16
 * or F32 (F32 must be finite).  16-bit images are matched on their full
 * 16 bits.
 *
 * Cross-check tolerance: integer disparities (subpixel off) identical on
 * every pixel; sub-pixel values within PV_TOL_SGM_SUBPIXEL px; the
 * confidence within 1e-5. */

/** The largest ndisp accepted. */
#define PV_SGM_MAX_NDISP 1024

/** Semi-global matching parameters (defaults at each field). */
typedef struct pv_sgm_params {
    int min_disp;          /**< smallest disparity (may be negative); default 0 */
    int ndisp;             /**< number of disparities, 1 .. min(width, PV_SGM_MAX_NDISP); default 64 */
    int census_width;      /**< 5, 7 or 9; default 9 */
    int census_height;     /**< 5 or 7 (5x5, 7x7, 9x7); default 7 */
    int census_symmetric;  /**< 1: centre-symmetric pairs; 0: every pixel against the centre; default 1 */
    int p1;                /**< penalty of a one-disparity step, >= 0; default 10 */
    int p2;                /**< penalty of a larger step, >= p1; default 120 */
    int p2_adaptive;       /**< 1: P2 / |I(p) - I(p-r)|, at least p1; default 0 */
    int paths;             /**< 4 or 8; default 8 */
    float uniqueness;      /**< in (0, 1]; 1 disables; default 0.95 */
    int lr_check;          /**< 1: left-right consistency check; default 1 */
    int lr_max_diff;       /**< >= 0; default 1 */
    int subpixel;          /**< 1: parabola refinement; default 1 */
    int median;            /**< 1: 3x3 median of the result; default 0 */
    int aggregation;       /**< how the OpenCL backend keeps the path costs
                              (pv_sgm_aggregation); the CPU backend always sums
                              them into one volume; default PV_SGM_AGGREGATE_AUTO */
    size_t memory_budget;  /**< bytes the call may use on its device; 0 = the
                              device's (or host's) available memory, lowered by
                              PARVIS_MEMORY_LIMIT.  Under PV_SGM_AGGREGATE_AUTO
                              a call whose per-path volumes exceed it runs with
                              one summed volume; a call that needs more than even
                              that is refused with PV_ERR_DEVICE_MEMORY before
                              allocating. */
} pv_sgm_params;

/** How the OpenCL backend stores the aggregated path costs.  The results
 * are identical in every mode (the sums are exact integers); the modes
 * differ in memory and speed. */
typedef enum pv_sgm_aggregation {
    /** PV_SGM_AGGREGATE_PATHS when its volumes fit the memory budget, else
     * PV_SGM_AGGREGATE_SUM. */
    PV_SGM_AGGREGATE_AUTO = 0,
    /** One volume per path (1 byte a cell, 2 when bits + P2 > 255), all
     * directions aggregated in one launch: the fastest. */
    PV_SGM_AGGREGATE_PATHS = 1,
    /** One 16-bit volume of the sums S, the directions aggregated one after
     * another, each adding its path costs: 3 bytes a cell with the costs
     * whatever the number of paths (about a third of the per-path volumes'
     * memory at 8 paths), slower. */
    PV_SGM_AGGREGATE_SUM = 2
} pv_sgm_aggregation;

/** The defaults above (libSGM's: 9x7 symmetric census, P1 10, P2 120, 8
 * paths, uniqueness 0.95, LR check 1, sub-pixel), ndisp 64, min_disp 0.
 * @param params receives the defaults */
PV_API void pv_sgm_params_default(pv_sgm_params *params);

/** Bytes a pv_stereo_sgm call on a width x height pair needs at most in one
 * run (0 when an argument is bad or the size overflows): the larger of the
 * two backends' needs, with OpenCL's per-path volumes under
 * PV_SGM_AGGREGATE_AUTO and PATHS, its summed volume under
 * PV_SGM_AGGREGATE_SUM (the least a call can run with).
 * @param width width in pixels
 * @param height height in pixels
 * @param params the parameters
 * @return bytes, or 0 */
PV_API size_t pv_sgm_memory_estimate(int width, int height, const pv_sgm_params *params);

/** left, right: same size, same pixel type (U8, U16 or F32).  disparity:
 * f32 of the same size, caller-allocated, not aliasing an input.
 * @param ctx the context
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                               const pv_sgm_params *params, pv_image *disparity);

/** As pv_stereo_sgm, with a per-pixel confidence (f32, same size, not
 * aliasing anything): the uniqueness margin 1 - S(best) / S(second), with
 * S(second) the smallest sum outside best-1..best+1 (1 when there is no
 * such candidate), in 0..1; 0 where the pixel's winner was rejected (no
 * valid candidate, uniqueness, left-right check).  The median does not
 * filter the confidence.  confidence may be NULL.  P2 is refused above
 * 65535 / paths - census bits (the sums are kept in 16 bits).
 * @param ctx the context
 * @param left the left (reference) image
 * @param right the right image
 * @param params the parameters (see the type)
 * @param disparity receives the disparity map
 * @param confidence receives the confidence map, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sgm_confidence(pv_context *ctx, const pv_image *left,
                                          const pv_image *right, const pv_sgm_params *params,
                                          pv_image *disparity, pv_image *confidence);

/** A stream of pairs through one plan (frames of a stereo camera, a
 * dataset): disparities[i] (and confidences[i]) are pair i's, exactly
 * those of pv_stereo_sgm_confidence(lefts[i], rights[i]).  Every pair is
 * held to pv_stereo_sgm_confidence's rules, and all have one size and one
 * pixel type.  The context's lock, the launch plan and the device buffers
 * are taken once for the batch; on OpenCL, the upload of pair i+1 and the
 * download of pair i overlap the kernels of pair i (docs/sgm.md, "A
 * stream of pairs"); on the CPU the pairs run one after another.  count >=
 * 1 (an empty batch is refused).  Every pair is checked before any work;
 * on a bad argument nothing is touched; on a failure during the work every
 * output is reset, each disparity to INFINITY and each confidence to 0, so
 * that no half-finished batch can pass for a result.
 * @param ctx the context
 * @param lefts count left (reference) images
 * @param rights count right images
 * @param count the number of pairs
 * @param params the parameters (see the type), shared by every pair
 * @param disparities receives count disparity maps
 * @param confidences receives count confidence maps, or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_stereo_sgm_batch(pv_context *ctx, const pv_image *lefts,
                                     const pv_image *rights, int count,
                                     const pv_sgm_params *params, pv_image *disparities,
                                     pv_image *confidences);

#ifdef __cplusplus
}
#endif

#endif
