/* The CPU reference backend's dispatch table. */
#include "cpu.h"

const pv_backend_ops pv_cpu_backend = {
    .name = "cpu",
    .init = NULL,
    .release = NULL,
    .gaussian2d = pv_cpu_gaussian2d,
    .gaussian3d = pv_cpu_gaussian3d,
    .gradient2d = pv_cpu_gradient2d,
    .gradient3d = pv_cpu_gradient3d,
    .stereo_sad = pv_cpu_stereo_sad,
    .stereo_bp = pv_cpu_stereo_bp,
    .pc_create = pv_cpu_pc_create,
    .pc_destroy = pv_cpu_pc_destroy,
    .pc_reference = pv_cpu_pc_reference,
    .pc_correlate = pv_cpu_pc_correlate,
    .pc_upsample = pv_cpu_pc_upsample,
    .normxcorr2 = pv_cpu_normxcorr2,
};
