/* The stereo operations' parameters, declared once (lib/core/params_decl.h):
 * the defaults of pv_sad_params_default, pv_bp_params_default and
 * pv_sgm_params_default, the ranges the front ends check first, the
 * command line's options and the Python keywords all come from here. */
#include "stereo_internal.h"

/* Disparity offsets and counts: far beyond any image, near enough to keep
 * min_disp + ndisp inside an int. */
#define DISP_LIMIT 1048576

static const pv_param_decl sad_params[] = {
    PV_DECL_INT(pv_sad_params, min_disp, 0, -DISP_LIMIT, DISP_LIMIT, "px",
                "smallest disparity (may be negative)"),
    PV_DECL_INT(pv_sad_params, ndisp, 64, 1, DISP_LIMIT, "",
                "number of disparities (at most the image width)"),
    PV_DECL_INT(pv_sad_params, window, 5, 1, 1001, "px", "odd block size"),
    PV_DECL_BOOL(pv_sad_params, subpixel, 0, "parabola through the costs around the winner"),
    PV_DECL_BOOL(pv_sad_params, lr_check, 0,
                 "invalidate pixels failing the left-right check"),
    PV_DECL_FLOAT(pv_sad_params, lr_max_diff, 1, 0, 1e6, 0, "px",
                  "largest |d_LR - d_RL| that passes the left-right check"),
    PV_DECL_FLOAT(pv_sad_params, uniqueness, 0, 0, 1e6, 0, "",
                  "reject a winner another candidate beats within a factor (1 + uniqueness); "
                  "0 = off"),
};
const pv_op_decl pv_sad_decl = PV_DECL_OP(pv_sad_params, "sad", "stereo",
                                          "block matching (sum of absolute differences), "
                                          "winner-take-all", sad_params);

static const pv_param_decl bp_params[] = {
    PV_DECL_INT(pv_bp_params, min_disp, 0, -DISP_LIMIT, DISP_LIMIT, "px",
                "smallest disparity (may be negative)"),
    PV_DECL_INT(pv_bp_params, ndisp, 16, 2, DISP_LIMIT, "",
                "number of disparities (at most the image width)"),
    PV_DECL_INT(pv_bp_params, levels, 5, 1, 16, "",
                "pyramid levels (2^(levels-1) at most the smaller image side)"),
    PV_DECL_INT(pv_bp_params, iterations, 10, 1, 1 << 20, "", "message rounds per level"),
    PV_DECL_FLOAT(pv_bp_params, lambda, 0.07, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "",
                  "data-cost weight"),
    PV_DECL_FLOAT(pv_bp_params, data_max, 15, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE,
                  "grey levels", "data-cost truncation"),
    PV_DECL_FLOAT(pv_bp_params, disc_max, 1.7, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE, "px",
                  "smoothness truncation (ndisp / 7.5 suits wide ranges)"),
    PV_DECL_FLOAT(pv_bp_params, sigma, 1, 0, PV_DECL_NO_MAX, 0, "px",
                  "Gaussian pre-smoothing, 0 = none"),
    PV_DECL_INT(pv_bp_params, tile_width, 0, 0, DISP_LIMIT, "px",
                "tile width without padding, 0 = automatic, else at least 16"),
    PV_DECL_INT(pv_bp_params, tile_height, 0, 0, DISP_LIMIT, "px",
                "tile height without padding, 0 = automatic, else at least 16"),
    PV_DECL_INT(pv_bp_params, tile_padding, 20, 0, DISP_LIMIT, "px",
                "pixels added around each tile"),
    PV_DECL_SIZE(pv_bp_params, memory_budget, 0, "bytes",
                 "bytes one tile may use, 0 = half the available memory"),
    PV_DECL_CHOICE(pv_bp_params, message_precision, PV_BP_MESSAGES_F32, 0, 1, "f32=0|f16=1",
                   "messages stored as float32, or as IEEE half (f16: half the message memory "
                   "and traffic; identical disparities on >= 99.5% of pixels)"),
    PV_DECL_CHOICE(pv_bp_params, message_update, PV_BP_UPDATE_SERIAL, 0, 1,
                   "serial=0|cooperative=1",
                   "messages normalised by their mean (serial), or by their minimum, which "
                   "OpenCL computes with a work-group per pixel (cooperative; faster for wide "
                   "ranges)"),
};
const pv_op_decl pv_bp_decl = PV_DECL_OP(pv_bp_params, "bp", "stereo",
                                         "hierarchical belief propagation", bp_params);

static const pv_param_decl sgm_params[] = {
    PV_DECL_INT(pv_sgm_params, min_disp, 0, -DISP_LIMIT, DISP_LIMIT, "px",
                "smallest disparity (may be negative)"),
    PV_DECL_INT(pv_sgm_params, ndisp, 64, 1, PV_SGM_MAX_NDISP, "",
                "number of disparities (at most the image width)"),
    PV_DECL_CHOICE(pv_sgm_params, census_width, 9, 5, 9, "5=5|7=7|9=9",
                   "census window width (5x5, 7x7 or 9x7 with census_height)"),
    PV_DECL_CHOICE(pv_sgm_params, census_height, 7, 5, 7, "5=5|7=7", "census window height"),
    PV_DECL_BOOL(pv_sgm_params, census_symmetric, 1,
                 "centre-symmetric census pairs (0: every pixel against the centre)"),
    PV_DECL_INT(pv_sgm_params, p1, 10, 0, 65535, "", "penalty of a one-disparity step"),
    PV_DECL_INT(pv_sgm_params, p2, 120, 0, 65535, "",
                "penalty of a larger step (at least p1)"),
    PV_DECL_BOOL(pv_sgm_params, p2_adaptive, 0,
                 "P2 divided by the intensity step along the path, at least P1"),
    PV_DECL_CHOICE(pv_sgm_params, paths, 8, 4, 8, "4=4|8=8",
                   "aggregation directions: 4 (rows and columns) or 8 (also diagonals)"),
    PV_DECL_FLOAT(pv_sgm_params, uniqueness, 0.95, 0, 1, PV_PARAM_MIN_EXCLUSIVE, "",
                  "keep a winner at most this share of every other sum; 1 = off"),
    PV_DECL_BOOL(pv_sgm_params, lr_check, 1, "left-right consistency check"),
    PV_DECL_INT(pv_sgm_params, lr_max_diff, 1, 0, DISP_LIMIT, "px",
                "largest |d_LR - d_RL| that passes the left-right check"),
    PV_DECL_BOOL(pv_sgm_params, subpixel, 1, "parabola refinement of the winner"),
    PV_DECL_BOOL(pv_sgm_params, median, 0, "3x3 median of the result"),
    PV_DECL_CHOICE(pv_sgm_params, aggregation, PV_SGM_AGGREGATE_AUTO, 0, 2,
                   "auto=0|paths=1|sum=2",
                   "OpenCL path-cost storage: one volume a path (fastest), one summed "
                   "16-bit volume (least memory), or auto (paths when they fit the budget)"),
    PV_DECL_SIZE(pv_sgm_params, memory_budget, 0, "bytes",
                 "bytes the call may use on its device, 0 = the available memory"),
};
const pv_op_decl pv_sgm_decl = PV_DECL_OP(pv_sgm_params, "sgm", "stereo",
                                          "semi-global matching of census costs", sgm_params);
