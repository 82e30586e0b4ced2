/* Internal: the features half of the SIFT chain (lib/features/features_chain.c),
 * used by the geometry module's front end (lib/geometry/geometry_chain.c),
 * which adds RANSAC and owns the public calls pv_sift_match_images and
 * pv_sift_track_next. */
#ifndef PV_FEATURES_CHAIN_H
#define PV_FEATURES_CHAIN_H

#include "../core/internal.h"

/* One frame through the chain: its keypoint count, the kept frame's, and
 * the matches of the kept frame (query) to this one (train) exactly as
 * pv_sift_match returns them, with both positions of match i at
 * points1[2 i ..], points2[2 i ..]. */
typedef struct pv_sift_chain_frame {
    int keypoints;
    int kept_keypoints;
    int matched;             /* 1: there was a kept frame to match */
    pv_sift_matches matches;
    float *points1, *points2;
    pv_timing timing;        /* the sum of the frame's calls' timings */
} pv_sift_chain_frame;

/* sum += t, field by field. */
void pv_sift_chain_add_timing(pv_timing *sum, const pv_timing *t);

void pv_sift_chain_frame_free(pv_sift_chain_frame *frame);

/* The plan's context (plan not NULL). */
pv_context *pv_sift_plan_context(const pv_sift_plan *plan);

/* Checks image (`name` in messages) for a chain call `op` on the plan:
 * valid, the plan's size, finite. */
pv_status pv_sift_chain_check_image(pv_sift_plan *plan, const char *op, const char *name,
                                    const pv_image *image);

/* Checks the matching parameters (p already defaulted). */
pv_status pv_sift_chain_check_match(pv_sift_plan *plan, const char *op,
                                    const pv_sift_match_params *p);

/* Whether the plan keeps a frame to match the next one to. */
int pv_sift_chain_has_kept(const pv_sift_plan *plan);

/* Drop the kept frame. */
void pv_sift_chain_forget(pv_sift_plan *plan);

/* Detect image and make it the kept frame; with match (and a kept frame)
 * first match the kept frame to it.  The device-resident path where the
 * backend has one (OpenCL: only the candidates come back), else (the CPU
 * backend, a top-K cap, the cross-check) the public calls composed.  On
 * failure *frame is untouched and the plan keeps no frame. */
pv_status pv_sift_chain_advance(pv_sift_plan *plan, const pv_image *image, int match,
                                const pv_sift_match_params *p, pv_sift_chain_frame *frame);

/* A pair: first detected and kept, then image detected and first matched
 * to it (on the device path in one backend step, which may detect both
 * side by side); as two pv_sift_chain_advance calls otherwise.  The plan
 * keeps image afterwards; on failure *frame is untouched and the plan
 * keeps no frame. */
pv_status pv_sift_chain_pair(pv_sift_plan *plan, const pv_image *first, const pv_image *image,
                             const pv_sift_match_params *p, pv_sift_chain_frame *frame);

#endif
