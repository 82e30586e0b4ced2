/** @file
 * parvis geometry: robust two-view models from point matches.
 *
 * RANSAC estimation of a homography H (x2 ~ H x1) or of a fundamental
 * matrix F (x2^T F x1 = 0) from matched points x1 <-> x2.
 *
 * - Points are Hartley-normalised per image (centroid to the origin, mean
 *   distance sqrt(2)).
 * - Hypothesis h draws its minimal sample (4 matches for H, 8 for F) from a
 *   counter-based random stream keyed by (seed, h, attempt), so the sample
 *   of every hypothesis is fixed by the seed alone and both backends score
 *   the very same samples.  Samples whose points are degenerate (three of
 *   the four collinear in either image, for H) are redrawn.
 * - The backend solves each sample's minimal model (a 9-unknown null space
 *   by Gaussian elimination with complete pivoting: 4-point DLT for H,
 *   8-point for F) and counts its inliers over all matches, in batches of
 *   PV_RANSAC_BATCH hypotheses.  The best count wins, ties to the lowest
 *   hypothesis index.
 * - After each batch the run stops when `iterations` hypotheses were drawn
 *   or when N = log(1 - confidence) / log(1 - w^s) hypotheses suffice for
 *   the best inlier share w so far (s: sample size).
 * - With refine on, the winner is refined by least squares on its inliers
 *   in double precision (H: linear DLT then Gauss-Newton on the transfer
 *   error; F: linear 8-point then the nearest rank-2 matrix), and the
 *   inliers are those of the refined model.
 *
 * Distances, both in pixels: for H the transfer error |H x1 - x2| in image
 * 2; for F the Sampson distance (first-order geometric distance to the
 * epipolar constraint).  A match is an inlier when its distance is below
 * `threshold`.
 *
 * Both backends compute in float with the same operations in the same
 * order, so they pick the same hypothesis; the final model, mask and count
 * are computed on the host from the winner and so are then the same too. */
#ifndef PARVIS_GEOMETRY_H
#define PARVIS_GEOMETRY_H

#include "parvis/core.h"
#include "parvis/features.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PV_HOMOGRAPHY_SAMPLE 4     /**< matches in a homography's minimal sample */
#define PV_FUNDAMENTAL_SAMPLE 8    /**< matches in a fundamental matrix's sample */
#define PV_RANSAC_BATCH 256        /**< hypotheses per backend call */
/** Most hypotheses a run may draw. */
#define PV_RANSAC_MAX_ITERATIONS (1 << 20)

/** The model estimated. */
typedef enum pv_geometry_model {
    PV_GEOMETRY_HOMOGRAPHY = 0,  /**< H: x2 ~ H x1 */
    PV_GEOMETRY_FUNDAMENTAL = 1  /**< F: x2^T F x1 = 0 */
} pv_geometry_model;

/** RANSAC parameters (defaults after each field's range). */
typedef struct pv_ransac_params {
    int iterations;          /**< most hypotheses drawn, 1 .. PV_RANSAC_MAX_ITERATIONS; 2048 */
    float threshold;         /**< inlier distance in pixels, > 0; 2 */
    double confidence;       /**< early stop, in [0, 1]; 0.999.  1 disables the early stop */
    uint64_t seed;           /**< the random stream's key; 1 */
    int refine;              /**< 1: least-squares refinement on the inliers; 0: the minimal model */
} pv_ransac_params;

/** Fill params with the defaults listed at each field.
 * @param params receives the defaults */
PV_API void pv_ransac_params_default(pv_ransac_params *params);

/** A model and its support. */
typedef struct pv_geometry_result {
    double model[9];         /**< the 3x3 model, row-major.  H: scaled so that
                                H[2][2] = 1 (as OpenCV and the Oxford sets write
                                it), or, where |H[2][2]| <= 1e-9 of the norm, to
                                unit Frobenius norm with H[2][2] >= 0.  F: unit
                                Frobenius norm, its largest entry positive */
    int inlier_count;        /**< matches within threshold of the model */
    int hypotheses;          /**< hypotheses scored before the stop */
    int best_hypothesis;     /**< index of the winning sample */
    int best_sample_inliers; /**< inliers of the winning minimal model (backend count) */
} pv_geometry_result;

/** Estimate H (image 1 to image 2) or F from count matches: points1[2 i],
 * points1[2 i + 1] is x, y of match i in image 1, points2 likewise in
 * image 2.  count >= the sample size; finite values; neither point set may
 * lie on one line.  params may be NULL (defaults).  inliers may be NULL;
 * else it receives count flags (1: inlier).  On failure *result and
 * inliers are untouched.
 * @param ctx the context
 * @param points1 x, y pairs of the matches in image 1
 * @param points2 x, y pairs of the matches in image 2
 * @param count the number of matches
 * @param params the parameters, or NULL (defaults)
 * @param result receives the result
 * @param inliers receives count flags (1: inlier), or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_find_homography(pv_context *ctx, const float *points1, const float *points2,
                                    int count, const pv_ransac_params *params,
                                    pv_geometry_result *result, uint8_t *inliers);
/** Estimate F from count matches, as pv_find_homography estimates H.
 * @param ctx the context
 * @param points1 x, y pairs of the matches in image 1
 * @param points2 x, y pairs of the matches in image 2
 * @param count the number of matches
 * @param params the parameters, or NULL (defaults)
 * @param result receives the result
 * @param inliers receives count flags (1: inlier), or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_find_fundamental(pv_context *ctx, const float *points1, const float *points2,
                                     int count, const pv_ransac_params *params,
                                     pv_geometry_result *result, uint8_t *inliers);

/** The same on SIFT matches: match i pairs features1's keypoint
 * matches->pairs[i].query with features2's keypoint pairs[i].train, as
 * pv_sift_match(ctx, features1, features2, ...) returns them; inliers has
 * matches->count flags.
 * @param ctx the context
 * @param model the model (homography or fundamental)
 * @param features1 the keypoints of image 1
 * @param features2 the keypoints of image 2
 * @param matches the matches of features1 to features2
 * @param params the parameters, or NULL (defaults)
 * @param result receives the result
 * @param inliers receives matches->count flags (1: inlier), or NULL
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_find_geometry_sift(pv_context *ctx, pv_geometry_model model,
                                       const pv_sift_features *features1,
                                       const pv_sift_features *features2,
                                       const pv_sift_matches *matches,
                                       const pv_ransac_params *params,
                                       pv_geometry_result *result, uint8_t *inliers);

/* ------------------------------------------------------------ SIFT chain */

/** One inlier match of the SIFT chain: keypoint `query` of the first (or
 * previous) frame at (x1, y1) and keypoint `train` of the second (or new)
 * frame at (x2, y2), numbered as pv_sift_detect numbers them. */
typedef struct pv_sift_point_match {
    int query;               /**< keypoint index in the first frame */
    int train;               /**< keypoint index in the second frame */
    /** @{ */
    /** position in the first frame, pixels */
    float x1, y1;
    /** @} */
    /** @{ */
    /** position in the second frame, pixels */
    float x2, y2;
    /** @} */
    float distance;          /**< L2 distance of the descriptors */
} pv_sift_point_match;

/** The chain's answer: a homography from the first frame to the second
 * and its inlier matches.  Free with pv_sift_chain_result_free. */
typedef struct pv_sift_chain_result {
    int has_model;           /**< 1: geometry holds a model; 0: a tracking
                                plan's first frame (nothing to match yet) */
    pv_geometry_result geometry; /**< H (x2 ~ H x1, H[2][2] = 1), its inlier
                                    count and the RANSAC's hypotheses */
    int keypoints1;          /**< keypoints of the first (previous) frame */
    int keypoints2;          /**< keypoints of the second (new) frame */
    int matches;             /**< matches that passed the ratio (and mutual)
                                test: RANSAC's input */
    int inlier_count;        /**< entries of inliers (geometry.inlier_count) */
    pv_sift_point_match *inliers; /**< the inlier matches in increasing query
                                     order, library-owned */
} pv_sift_chain_result;

/** Free a chain result's inlier list and zero the result.
 * @param result the result, or NULL */
PV_API void pv_sift_chain_result_free(pv_sift_chain_result *result);

/** Two frames to a homography: SIFT on both, matching, the ratio test and
 * RANSAC, with only the model and the inlier matches coming back.  The
 * answer is that of the composed calls pv_sift_detect (image1, image2),
 * pv_sift_match (image1's features as the query), pv_find_homography on
 * the matches' positions: the same keypoints and matches, the same seeded
 * samples, the same model.  On OpenCL the keypoints and descriptors stay
 * on the device (detection, matching and the ratio test run there; only
 * the surviving matches' positions come back for the RANSAC, whose points
 * go up once); the CPU backend, a plan with a top-K cap
 * (max_keypoints > 0) and the cross-check compose the public calls.
 * image2 becomes the plan's kept frame, so pv_sift_track_next continues
 * from it.  Fewer than 4 matches fail with PV_ERR_INVALID naming the
 * count.  On failure *result is untouched and the plan keeps no frame.
 * @param plan the SIFT plan (both images of its size)
 * @param image1 the first frame (u8 or f32, finite)
 * @param image2 the second frame
 * @param match_params the matching parameters, or NULL (defaults)
 * @param ransac_params the RANSAC parameters, or NULL (defaults)
 * @param result receives the model and the inlier matches
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_match_images(pv_sift_plan *plan, const pv_image *image1,
                                      const pv_image *image2,
                                      const pv_sift_match_params *match_params,
                                      const pv_ransac_params *ransac_params,
                                      pv_sift_chain_result *result);

/** Tracking through a video: detect frame once, match the plan's kept
 * (previous) frame to it and estimate the homography from the previous
 * frame to this one, as pv_sift_match_images(previous, frame) would; then
 * frame becomes the kept frame.  On OpenCL the kept frame's keypoints and
 * descriptors stay on the device between calls.  The first frame (or the
 * first after pv_sift_track_reset or a failure) has nothing to match:
 * PV_OK with has_model 0 and only keypoints2 set.  On failure (fewer than
 * 4 matches: PV_ERR_INVALID) *result is untouched; the plan then keeps
 * frame when it was detected, so the next call matches to it.
 * @param plan the SIFT plan
 * @param frame the new frame, of the plan's size
 * @param match_params the matching parameters, or NULL (defaults)
 * @param ransac_params the RANSAC parameters, or NULL (defaults)
 * @param result receives the model and the inlier matches
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_sift_track_next(pv_sift_plan *plan, const pv_image *frame,
                                    const pv_sift_match_params *match_params,
                                    const pv_ransac_params *ransac_params,
                                    pv_sift_chain_result *result);

/** Forget the plan's kept frame: the next pv_sift_track_next starts a new
 * track.
 * @param plan the plan, or NULL */
PV_API void pv_sift_track_reset(pv_sift_plan *plan);

#ifdef __cplusplus
}
#endif

#endif
