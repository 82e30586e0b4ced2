/* Phase correlation's options, declared once (lib/core/params_decl.h). */
#include "register_internal.h"

static const pv_param_decl phasecorr_params[] = {
    PV_DECL_CHOICE(pv_phasecorr_options, pad, PV_PAD_NONE, 0, 2, "none=0|fft=1|linear=2",
                   "padding: none, to fast transform sizes, or against wrap-around"),
    PV_DECL_CHOICE(pv_phasecorr_options, window, PV_WINDOW_NONE, 0, 1, "none=0|hann=1",
                   "window applied before the transform"),
    PV_DECL_CHOICE(pv_phasecorr_options, subpixel, PV_SUBPIXEL_NONE, 0, 2,
                   "none=0|upsample=1|parabolic=2", "sub-pixel refinement of the peak"),
    PV_DECL_INT(pv_phasecorr_options, upsample, 100, 2, 10000, "",
                "upsampling factor of the upsample refinement"),
};
const pv_op_decl pv_phasecorr_decl = PV_DECL_OP(pv_phasecorr_options, "phasecorr", "register",
                                                "FFT phase correlation", phasecorr_params);

static const pv_param_decl phasecorr_masked_params[] = {
    PV_DECL_DOUBLE(pv_phasecorr_masked_params, overlap_ratio, 0.3, 0, 1, PV_PARAM_MIN_EXCLUSIVE,
                   "", "least overlap a shift needs, as a fraction of the largest overlap"),
};
const pv_op_decl pv_phasecorr_masked_decl =
    PV_DECL_OP(pv_phasecorr_masked_params, "phasecorr_masked", "register",
               "masked FFT normalised cross-correlation (Padfield)", phasecorr_masked_params);
