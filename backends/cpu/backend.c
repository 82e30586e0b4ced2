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
};
