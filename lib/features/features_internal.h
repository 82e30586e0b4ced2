/* Internal to the features front end (lib/features*.c). */
#ifndef PV_FEATURES_INTERNAL_H
#define PV_FEATURES_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"

/* Where a plan's kept frame (the chain's previous frame) is. */
typedef enum pv_sift_kept {
    PV_SIFT_KEPT_NONE = 0,
    PV_SIFT_KEPT_HOST = 1,   /* `kept`, from the composed public calls */
    PV_SIFT_KEPT_DEVICE = 2  /* in the backend plan (the chain_step slot) */
} pv_sift_kept;

struct pv_sift_plan {
    pv_context *ctx;
    pv_sift_geometry geometry;
    float *base_weights;
    float *level_weights;
    void *backend_plan;
    void *cpu_plan;          /* cross-check oracle, created on first use */
    pv_sift_kept kept_at;    /* the chain's kept frame (features_chain.c) */
    pv_sift_features kept;   /* its features when kept on the host */
};

/* Lowe's ratio test on squared distances, decided in double (ratio >= 1:
 * every pair passes). */
static inline int pv_sift_passes_ratio(float d1, float d2, float ratio)
{
    if (ratio >= 1.0f)
        return 1;
    return (double)d1 < (double)ratio * (double)ratio * (double)d2;
}

/* The caller's result out of a backend's raw result: in key order, the
 * top `cap` by |response| when cap > 0, u8 descriptors filled.  When the
 * raw list is already in order and within the cap its arrays are handed
 * over as they are (no sort, no copy) and raw gives them up; otherwise the
 * result gets fresh arrays and raw keeps its own.  The caller frees raw. */
pv_status pv_sift_result_build(pv_context *ctx, pv_sift_raw *raw, int cap, pv_sift_features *out);

/* A set with a non-negative count and its arrays when non-empty. */
int pv_sift_features_valid(const pv_sift_features *features);

/* Declared parameters (features_params.c). */
extern const pv_op_decl pv_sift_decl, pv_sift_match_decl;

#endif
