/* The AO-OCT registration's options, declared once (lib/core/params_decl.h). */
#include "octreg_internal.h"

static const pv_param_decl octreg_params[] = {
    PV_DECL_INT(pv_octreg_options, stripes, 10, 2, 100000, "", "coarse stripes"),
    PV_DECL_INT(pv_octreg_options, stripe_width, 3, 1, 64, "B-scans", "B-scans per coarse stripe"),
    PV_DECL_INT(pv_octreg_options, subvolume_width, 32, 3, 1 << 20, "B-scans",
                "reference B-scans per fine sub-volume (factors 2, 3, 5, 7 only)"),
    PV_DECL_INT(pv_octreg_options, subvolume_step, 16, 1, 1 << 20, "B-scans",
                "B-scans between sub-volume starts (at most subvolume_width)"),
    PV_DECL_DOUBLE(pv_octreg_options, coarse_tolerance, 0, 0, PV_DECL_NO_MAX, 0, "B-scans",
                   "coarse step limit; 0 = twice the spacing of the stripes"),
    PV_DECL_DOUBLE(pv_octreg_options, tolerance, 8, 0, PV_DECL_NO_MAX, PV_PARAM_MIN_EXCLUSIVE,
                   "voxels", "fine outlier distance"),
    PV_DECL_CHOICE(pv_octreg_options, pad, PV_PAD_FFT, 0, 2, "none=0|fft=1|linear=2",
                   "padding of each B-scan"),
    PV_DECL_BOOL(pv_octreg_options, subpixel, 0, "refine each valid fine peak"),
    PV_DECL_INT(pv_octreg_options, batch, 0, 0, 4096, "B-scans",
                "B-scans per device batch in the fine step; 0 = sized to the device"),
};
const pv_op_decl pv_octreg_decl = PV_DECL_OP(pv_octreg_options, "octreg", "octreg",
                                             "AO-OCT volume registration", octreg_params);
