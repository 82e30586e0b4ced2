/* Internal: the features (SIFT) sub-table of a backend
 * (lib/core/backend.h), and the geometry and raw result it exchanges with
 * the front end.  Not installed. */
#ifndef PV_OPS_FEATURES_H
#define PV_OPS_FEATURES_H

#include "parvis.h"
#include "ops_slots.h"

/* features (SIFT): the front end fixes the octave geometry and the
 * Gaussian taps, so both backends blur with identical weights.  Level l
 * (1 .. levels + 2) of an octave is its base level blurred by
 * level_weights + level_offset[l], radius level_radius[l]. */
typedef struct pv_sift_geometry {
    int width, height;                       /* input image */
    int octaves;                             /* >= 1 */
    int octave_width[PV_SIFT_MAX_OCTAVES];   /* first octave: input (x2 when upsampled) */
    int octave_height[PV_SIFT_MAX_OCTAVES];
    int base_radius;                         /* blur of the first base; 0: none */
    const float *base_weights;               /* 2 base_radius + 1 taps */
    int level_radius[PV_SIFT_MAX_LEVELS + 3];
    int level_offset[PV_SIFT_MAX_LEVELS + 3];
    int level_taps;                          /* total taps of all levels */
    const float *level_weights;
    pv_sift_params params;                   /* resolved (octaves filled in) */
} pv_sift_geometry;

/* A detection result and its storage.  Ownership rule: the front end owns
 * a pv_sift_raw and everything in it, always; for one detect call it lends
 * it to the backend, with whatever storage it holds (the arrays of the
 * caller's earlier result, or none).  The backend writes the result into
 * that storage and, when it needs more room, calls pv_sift_raw_reserve,
 * the only way the arrays grow.  After the call (success or failure) the
 * front end hands the arrays to the caller's result or frees them with
 * pv_sift_raw_free.
 *
 * key of a keypoint = ((((octave index * 16 + level) * 65536 + extremum y)
 * * 65536 + extremum x) * 4 + orientation index), unique per keypoint.
 * u8_filled: the backend wrote descriptors_u8 (else the front end derives
 * it from the float descriptors). */
typedef struct pv_sift_raw {
    int count;
    int capacity;                            /* room in each array, >= count */
    pv_sift_keypoint *keypoints;
    uint64_t *keys;
    float *descriptors;                      /* 128 per keypoint */
    uint8_t *descriptors_u8;                 /* 128 per keypoint */
    int u8_filled;
} pv_sift_raw;

/* Room for at least `count` keypoints in all four arrays; arrays that are
 * too small are replaced by fresh ones (their contents are dropped).
 * prefault: touch the pages of fresh arrays now (worth it while a device
 * works, so that filling them later takes no page faults).  On failure raw
 * holds no arrays (count and capacity 0). */
pv_status pv_sift_raw_reserve(pv_context *ctx, pv_sift_raw *raw, int count, int prefault);
void pv_sift_raw_free(pv_sift_raw *raw);

/* The conventional u8 form of a descriptor value: min(512 v, 255),
 * truncated (VLFeat's and Lowe's); two selects, so that loops over it
 * vectorise. */
static inline uint8_t pv_sift_descriptor_u8(float v)
{
    float scaled = 512.0f * v;
    scaled = scaled < 255.0f ? scaled : 255.0f;
    return (uint8_t)(scaled > 0.0f ? scaled : 0.0f);
}

/* features: image is of the geometry's size; detect_batch detects
 * images[0 .. count) (count >= 1) into raws[i], each lent as detect's raw,
 * with each result exactly detect's (a backend may work on several
 * images at once: the OpenCL one runs chunks side by side); nearest fills,
 * for each query row, the index of the nearest train row and the squared
 * distances to the nearest and second nearest (INFINITY when missing);
 * ties go to the lower index. */
#define PV_FEATURES_BASE_SLOTS(X, P)                                                              \
    PV_OPS_PLAN_SLOTS(X, P, create, destroy, pv_sift_geometry)                                    \
    X(P, pv_status, detect,                                                                       \
      (pv_context *ctx, void *plan, const pv_image *image, pv_sift_raw *raw))                     \
    X(P, pv_status, detect_batch,                                                                 \
      (pv_context *ctx, void *plan, const pv_image *images, int count, pv_sift_raw *raws))        \
    X(P, pv_status, nearest,                                                                      \
      (pv_context *ctx, const float *query, int query_count, const float *train,                  \
       int train_count, int *best, float *best_d2, float *second_d2))

/* The device-resident chain (pv_sift_match_images, pv_sift_track_next).
 * One candidate match: keypoint `query` of the kept (previous) frame and
 * its nearest `train` of the new frame, the squared distances to the
 * nearest and second nearest (INFINITY when missing) and both positions.
 * The OpenCL kernel writes the same eight 4-byte words. */
typedef struct pv_sift_chain_candidate {
    int query, train;
    float d1, d2;
    float x1, y1, x2, y2;
} pv_sift_chain_candidate;

/* What a chain step asks: match the kept frame to the new one (else only
 * detect and keep), with the ratio test's ratio and the mutual check.
 * first: NULL, or a frame (of the plan's size) to detect and keep before
 * the step's image, so that a pair is one step (the backend may detect
 * both side by side); match then matches first to the image. */
typedef struct pv_sift_chain_step {
    int match;
    float ratio;
    int mutual;
    const pv_image *first;
} pv_sift_chain_step;

/* A step's outcome: the new frame's keypoint count, the kept frame's, and
 * the candidates (malloc'd by the backend, freed by the front end), in
 * increasing query order.  The backend's ratio test is looser than the
 * front end's exact one (PV_SIFT_CHAIN_RATIO_SLACK): it keeps every pair
 * the exact test keeps and the front end drops the rest, so the decisions
 * are those of pv_sift_match to the last bit. */
typedef struct pv_sift_chain_raw {
    int keypoints;
    int kept_keypoints;
    int count;
    pv_sift_chain_candidate *candidates;
} pv_sift_chain_raw;

#define PV_SIFT_CHAIN_RATIO_SLACK 1e-5f

/* chain_step (NULL on the CPU backend, where the front end composes the
 * public calls): detect image on the plan, keep its keypoints and
 * descriptors on the device as the plan's frame (replacing the kept one),
 * and with step->match and a kept frame, match the kept frame (query) to
 * the new one (train) on the device; only the candidates come back.
 * chain_forget drops the kept frame. */
#define PV_FEATURES_CHAIN_SLOTS(X, P)                                                             \
    X(P, pv_status, chain_step,                                                                   \
      (pv_context *ctx, void *plan, const pv_image *image, const pv_sift_chain_step *step,        \
       pv_sift_chain_raw *out))                                                                   \
    X(P, void, chain_forget, (pv_context *ctx, void *plan))

#define PV_FEATURES_SLOTS(X, P) PV_FEATURES_BASE_SLOTS(X, P) PV_FEATURES_CHAIN_SLOTS(X, P)

#endif
