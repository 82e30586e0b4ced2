/** @file
 * parvis features: SIFT detection, description and descriptor matching.
 *
 * Lowe (2004) with VLFeat's conventions (vl_sift): octaves from
 * first_octave (-1: the input upsampled 2x, bilinear), `levels` scales per
 * octave, sigma0 = 1.6, assumed input blur 0.5, DoG extrema over 26
 * neighbours, quadratic refinement (up to 5 moves), |D(x^)| > peak_thresh,
 * edge ratio r, 36-bin orientation histograms (1.5 sigma window, peaks >= 80%
 * of the maximum, up to 4 per point), 4x4x8 descriptors with trilinear
 * weighting, normalise, clamp 0.2, renormalise.
 *
 * Image values: u8 images are scaled to [0, 1] (v / 255); f32 images are
 * taken as they are (use [0, 1] for the default thresholds).  Each blurred
 * level of an octave is computed from the octave's base level in one
 * separable pass (Gaussian semigroup), so all levels of an octave come out
 * of one merged row pass and one merged column pass.
 *
 * Coordinates: x, y in pixels of the input image, origin at the centre of
 * the top-left pixel, y down; angle = atan2(dy, dx) in that frame, in
 * [0, 2 pi).  Descriptor bin (ty, tx, o) is element 32 ty + 8 tx + o, with
 * the spatial bins in the keypoint's rotated frame (VLFeat's layout).
 *
 * Output order is deterministic and the same on both backends: keypoints
 * sorted by (octave, level, y, x of the DoG extremum, orientation index).
 * OpenCL agrees with the CPU backend to PV_SIFT_POSITION_TOLERANCE px on
 * >= 99% of keypoints, descriptors to PV_SIFT_DESCRIPTOR_TOLERANCE. */
#ifndef PARVIS_FEATURES_H
#define PARVIS_FEATURES_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Elements of one descriptor. */
#define PV_SIFT_DESCRIPTOR_SIZE 128
/** Most octaves a plan uses. */
#define PV_SIFT_MAX_OCTAVES 16
/** Most scales per octave (pv_sift_params.levels). */
#define PV_SIFT_MAX_LEVELS 8
/** Smallest accepted input side: the first octave's base blur (radius 7)
 * must fit and at least one octave must have a 3x3x3 neighbourhood. */
#define PV_SIFT_MIN_SIZE 16

/** Documented cross-backend agreement (used by the cross-check mode). */
#define PV_SIFT_POSITION_TOLERANCE 0.05f
/** Documented cross-backend agreement: descriptor elements. */
#define PV_SIFT_DESCRIPTOR_TOLERANCE 1e-3f
/** Documented cross-backend agreement: the share of keypoints paired. */
#define PV_SIFT_MATCHED_FRACTION 0.99

/** SIFT detection parameters (defaults at each field). */
typedef struct pv_sift_params {
    int first_octave;        /**< -1 (2x upsampled) or 0; default -1 (fast preset 0) */
    int octaves;             /**< 0: max(floor(log2(min(w, h))) - first_octave - 3, 1);
                                more than the size allows is clamped (logged) */
    int levels;              /**< scales per octave, 1 .. PV_SIFT_MAX_LEVELS; default 3 */
    float sigma0;            /**< blur of each octave's base level, 1.6 */
    float sigma_input;       /**< blur assumed in the input, 0.5 */
    float peak_thresh;       /**< minimum |D(x^)| (for values in [0, 1]); default
                                PV_SIFT_REFERENCE_PEAK_THRESH (fast preset 0.01) */
    float edge_thresh;       /**< principal curvature ratio r, 10 */
    float orientation_window; /**< orientation window sigma / keypoint sigma, 1.5 */
    float orientation_peak;  /**< secondary peaks >= this share of the maximum, 0.8 */
    float magnif;            /**< descriptor bin width / keypoint sigma, 3 */
    int max_keypoints;       /**< 0: all; else the top-K by |response| */
} pv_sift_params;

/** Defaults: the reference preset.
 * @param params receives the defaults */
PV_API void pv_sift_params_default(pv_sift_params *params);

/** The reference preset's peak threshold. */
#define PV_SIFT_REFERENCE_PEAK_THRESH 0.0f

/** Named settings.  REFERENCE (the defaults): first octave -1 and a peak
 * threshold of PV_SIFT_REFERENCE_PEAK_THRESH (0, VLFeat's), chosen by the
 * correct matches on warped real photos: more than OpenCV's defaults on
 * every pair measured, level with VLFeat's (docs/sift.md).  FAST: the real-time paper's settings (first
 * octave 0, peak threshold 0.01), about 4x less work on the first octave. */
typedef enum pv_sift_preset {
    PV_SIFT_PRESET_REFERENCE = 0, /**< the defaults */
    PV_SIFT_PRESET_FAST = 1       /**< the real-time paper's settings */
} pv_sift_preset;

/** Fills all of *params with the preset's values.
 * @param params receives every field of the preset
 * @param preset the preset
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_params_preset(pv_sift_params *params, pv_sift_preset preset);

/** One keypoint. */
typedef struct pv_sift_keypoint {
    /** @{ */
    /** input pixels, origin at the top-left pixel's centre */
    float x, y;
    /** @} */
    float sigma;             /**< input pixels */
    float angle;             /**< radians, [0, 2 pi) */
    float response;          /**< D(x^), the interpolated DoG value (signed) */
    int octave;              /**< `first_octave ..` */
    float scale;             /**< level within the octave: sigma = sigma0 2^(octave + scale/levels) */
} pv_sift_keypoint;

/** A result owned by the library: free with pv_sift_features_free.  The
 * descriptors of keypoint i are descriptors[128 i ..] (unit L2 norm) and
 * descriptors_u8[128 i ..] = min(512 v, 255), truncated.  capacity: the
 * keypoints the three arrays have room for (>= count), which
 * pv_sift_detect_into reuses. */
typedef struct pv_sift_features {
    int count;                  /**< keypoints found */
    pv_sift_keypoint *keypoints; /**< count keypoints */
    float *descriptors;         /**< count * 128 floats */
    uint8_t *descriptors_u8;    /**< count * 128 bytes */
    int capacity;               /**< room in the arrays (>= count) */
} pv_sift_features;

/** Free the keypoints and descriptors of a detection result and zero it.
 * @param features the result, or NULL */
PV_API void pv_sift_features_free(pv_sift_features *features);

/** A plan for one image size: the scale space (on the device for OpenCL)
 * and its buffers, kept between calls.  A plan belongs to its context:
 * destroy it before the context.  params may be NULL (defaults). */
typedef struct pv_sift_plan pv_sift_plan;

/** Create a plan for images of width x height (see pv_sift_plan).
 * @param ctx the context
 * @param width width in pixels
 * @param height height in pixels
 * @param params the parameters, or NULL (defaults)
 * @param plan receives the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_plan_create(pv_context *ctx, int width, int height,
                                     const pv_sift_params *params, pv_sift_plan **plan);
/** Destroy a plan (before its context).
 * @param plan the plan, or NULL */
PV_API void pv_sift_plan_destroy(pv_sift_plan *plan);
/** The octave count the plan uses (after defaults and clamping).
 * @param plan the plan
 * @return the octave count */
PV_API int pv_sift_plan_octaves(const pv_sift_plan *plan);

/** Detect and describe.  image: u8 or f32 of the plan's size, no NaN/Inf.
 * On success *features holds the result (count may be 0); on failure it is
 * untouched.
 * @param plan the plan
 * @param image the image, of the plan's size
 * @param features receives the keypoints and descriptors
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_detect(pv_sift_plan *plan, const pv_image *image, pv_sift_features *features);

/** pv_sift_detect for a stream of images: *features is zeroed or holds an
 * earlier result (of either call), whose arrays are reused when they have
 * room (the OpenCL backend writes into them; they are replaced when too
 * small).  A fresh multi-megabyte result costs the system a page fault per
 * page on its first use; at 7680x4320 (about 70000 keypoints, 45 MB) that
 * is about 1 ms, more than the copy itself.  On success *features holds the
 * new result; on failure it is freed and zeroed.
 * @param plan the plan
 * @param image the image, of the plan's size
 * @param features the result to refill
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_detect_into(pv_sift_plan *plan, const pv_image *image,
                                     pv_sift_features *features);

/** Many images of the plan's size (frames of a video, a photo collection)
 * in one call: results[i] is image i's, with the rules of
 * pv_sift_detect_into (each results[i] zeroed or an earlier result whose
 * arrays are reused).  The plan's device state, the context's lock and the
 * result storage are taken once for the whole batch.  count >= 1 (an empty
 * batch is refused).  Every image is checked before any work; on a bad
 * argument nothing is touched; on a failure during the work every result
 * is freed and zeroed.
 * @param plan the plan
 * @param images the images, each of the plan's size
 * @param count the number of images
 * @param results receives count results
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_detect_batch(pv_sift_plan *plan, const pv_image *images, int count,
                                      pv_sift_features *results);

/* ----------------------------------------------------------------- matching */

/** Matching parameters (defaults at each field). */
typedef struct pv_sift_match_params {
    float ratio;             /**< Lowe's ratio test: d1 < ratio * d2; 0.8. 1 disables it */
    int mutual;              /**< keep only pairs that are each other's nearest; 0 */
} pv_sift_match_params;

/** Fill params with the defaults listed at each field.
 * @param params receives the defaults */
PV_API void pv_sift_match_params_default(pv_sift_match_params *params);

/** One match. */
typedef struct pv_sift_pair {
    int query;               /**< index into the query set */
    int train;               /**< index of its nearest neighbour in the train set */
    float distance;          /**< L2 distance of the float descriptors */
    float second;            /**< distance of the second nearest (INFINITY if none) */
} pv_sift_pair;

/** Library-owned list, in increasing query order; free with pv_sift_matches_free. */
typedef struct pv_sift_matches {
    int count;           /**< matches */
    pv_sift_pair *pairs; /**< count matches */
} pv_sift_matches;

/** Free a match result; it is left empty (no pairs, count 0).
 * @param matches the matches, or NULL */
PV_API void pv_sift_matches_free(pv_sift_matches *matches);

/** Brute-force L2 nearest and second nearest of every query descriptor
 * among the train descriptors (ties go to the lower index), then the ratio
 * test and the optional mutual check.  params may be NULL (defaults).
 * @param ctx the context
 * @param query the query features
 * @param train the train features
 * @param params the parameters, or NULL (defaults)
 * @param matches receives the matches
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_match(pv_context *ctx, const pv_sift_features *query,
                               const pv_sift_features *train, const pv_sift_match_params *params,
                               pv_sift_matches *matches);

/* ------------------------------------------------------------- comparison */

/** How well set a reproduces set ref: every keypoint of ref is paired with
 * the nearest keypoint of a (in position) that lies within `radius` px and
 * whose sigma is within `scale_tol` (relative); among the paired ones,
 * orientation and descriptor differences are measured. */
typedef struct pv_sift_agreement {
    int ref_count;           /**< keypoints in ref */
    int paired;              /**< ref keypoints that found a partner */
    double paired_fraction;  /**< paired / ref_count (1 when ref is empty) */
    double angle_ok_fraction; /**< paired with |angle difference| <= angle_tol */
    double max_descriptor_diff; /**< max |a - b| over elements of paired descriptors */
    double mean_descriptor_dist; /**< mean L2 distance of paired descriptors */
} pv_sift_agreement;

/** Compare detected features a with reference features ref (see pv_sift_agreement).
 * @param a the features compared
 * @param ref the reference features
 * @param radius largest position distance of a pair, in pixels
 * @param scale_tol largest relative scale difference of a pair
 * @param angle_tol largest orientation difference of a pair
 * @param agreement receives the comparison
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_compare(const pv_sift_features *a, const pv_sift_features *ref, float radius,
                                 float scale_tol, float angle_tol, pv_sift_agreement *agreement);

#ifdef __cplusplus
}
#endif

#endif
