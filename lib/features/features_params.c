/* The features module's parameters, declared once (lib/core/params_decl.h).
 * The declared defaults are the reference preset's (pv_sift_params_default);
 * the fast preset changes two of them (features.c). */
#include "features_internal.h"

#include <limits.h>

static const pv_param_decl sift_params[] = {
    PV_DECL_INT(pv_sift_params, first_octave, -1, -1, 0, "",
                "-1: start from the image upsampled 2x; 0: at its own size"),
    PV_DECL_INT(pv_sift_params, octaves, 0, 0, PV_SIFT_MAX_OCTAVES, "",
                "octaves, 0 = as many as the size allows"),
    PV_DECL_INT(pv_sift_params, levels, 3, 1, PV_SIFT_MAX_LEVELS, "", "scales per octave"),
    PV_DECL_FLOAT(pv_sift_params, sigma0, 1.6, 0, 32, PV_PARAM_MIN_EXCLUSIVE, "px",
                  "blur of each octave's base level"),
    PV_DECL_FLOAT(pv_sift_params, sigma_input, 0.5, 0, 32, 0, "px",
                  "blur assumed in the input"),
    PV_DECL_FLOAT(pv_sift_params, peak_thresh, PV_SIFT_REFERENCE_PEAK_THRESH, 0, PV_DECL_NO_MAX,
                  0, "", "minimum |D(x)| of a keypoint, for values in [0, 1] (fast preset 0.01)"),
    PV_DECL_FLOAT(pv_sift_params, edge_thresh, 10, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "",
                  "largest principal curvature ratio"),
    PV_DECL_FLOAT(pv_sift_params, orientation_window, 1.5, 0, 8, PV_PARAM_MIN_EXCLUSIVE, "",
                  "orientation window sigma / keypoint sigma"),
    PV_DECL_FLOAT(pv_sift_params, orientation_peak, 0.8, 0, 1, 0, "",
                  "secondary orientations at least this share of the maximum"),
    PV_DECL_FLOAT(pv_sift_params, magnif, 3, 0, 16, PV_PARAM_MIN_EXCLUSIVE, "",
                  "descriptor bin width / keypoint sigma"),
    PV_DECL_INT(pv_sift_params, max_keypoints, 0, 0, INT_MAX, "",
                "0: every keypoint; else the strongest this many"),
};
const pv_op_decl pv_sift_decl = PV_DECL_OP(pv_sift_params, "sift", "features",
                                           "SIFT keypoints and descriptors", sift_params);

static const pv_param_decl sift_match_params[] = {
    PV_DECL_FLOAT(pv_sift_match_params, ratio, 0.8, 0, 1, PV_PARAM_MIN_EXCLUSIVE, "",
                  "Lowe's ratio test d1 < ratio * d2; 1 = off"),
    PV_DECL_BOOL(pv_sift_match_params, mutual, 0, "keep only mutual nearest neighbours"),
};
const pv_op_decl pv_sift_match_decl = PV_DECL_OP(pv_sift_match_params, "match", "features",
                                                 "nearest-neighbour descriptor matching",
                                                 sift_match_params);
