/* The 3D flow's parameters, declared once (lib/core/params_decl.h).  The
 * declared defaults are the 3D paper's; pv_flow_params_default_2d changes
 * four of them for images (flow.c). */
#include "../core/internal.h"
#include "../core/params_decl.h"

static const pv_param_decl flow_params[] = {
    PV_DECL_FLOAT(pv_flow_params, alpha, 0.05, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "",
                  "smoothness weight"),
    PV_DECL_FLOAT(pv_flow_params, beta, 0, 0, PV_DECL_NO_MAX, 0, "",
                  "divergence weight, at most 2 alpha (0: plain CLG)"),
    PV_DECL_FLOAT(pv_flow_params, rho, 2, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "voxels",
                  "standard deviation of the structure tensor's Gaussian"),
    PV_DECL_INT(pv_flow_params, kernel_size, 15, 0, 4095, "taps",
                "taps of that Gaussian: odd, or 0 to derive them from rho"),
    PV_DECL_INT(pv_flow_params, warps, 5, 1, 1 << 20, "", "re-samplings per level"),
    PV_DECL_INT(pv_flow_params, iterations, 50, 1, 1 << 20, "",
                "Jacobi iterations per warp (the cap when tolerance > 0)"),
    PV_DECL_INT(pv_flow_params, levels, 1, 1, PV_FLOW_MAX_LEVELS, "",
                "pyramid levels (factor 2 per level)"),
    PV_DECL_FLOAT(pv_flow_params, spacing, 1, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "voxels",
                  "grid spacing of the Laplacian"),
    PV_DECL_CHOICE(pv_flow_params, gradient, PV_GRADIENT_CENTRAL, 0, 1, "central=0|forward=1",
                   "derivatives of the moving volume"),
    PV_DECL_FLOAT(pv_flow_params, tolerance, 0, 0, PV_DECL_NO_MAX, 0, "",
                  "stop a warp's iterations below this relative change; 0 = fixed count"),
    PV_DECL_INT(pv_flow_params, check_every, 10, 1, 1 << 20, "",
                "iterations between tests of the change"),
};
const pv_op_decl pv_flow_decl = PV_DECL_OP(pv_flow_params, "flow", "flow",
                                           "variational optical flow (CLG with divergence)",
                                           flow_params);
