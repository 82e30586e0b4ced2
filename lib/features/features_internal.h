/* Internal to the features front end (lib/features*.c). */
#ifndef PV_FEATURES_INTERNAL_H
#define PV_FEATURES_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"

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
