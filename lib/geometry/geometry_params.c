/* RANSAC's parameters, declared once (lib/core/params_decl.h). */
#include "geometry_internal.h"

static const pv_param_decl ransac_params[] = {
    PV_DECL_INT(pv_ransac_params, iterations, 2048, 1, PV_RANSAC_MAX_ITERATIONS, "",
                "most hypotheses drawn"),
    PV_DECL_FLOAT(pv_ransac_params, threshold, 2, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "px",
                  "inlier distance"),
    PV_DECL_DOUBLE(pv_ransac_params, confidence, 0.999, 0, 1, 0, "",
                   "early stop at this confidence; 1 = no early stop"),
    PV_DECL_U64(pv_ransac_params, seed, 1, "the random stream's key"),
    PV_DECL_BOOL(pv_ransac_params, refine, 1, "least-squares refinement on the inliers"),
};
const pv_op_decl pv_ransac_decl = PV_DECL_OP(pv_ransac_params, "ransac", "geometry",
                                             "robust homography or fundamental matrix",
                                             ransac_params);
