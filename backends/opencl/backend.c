/* The OpenCL backend's dispatch table. */
#include "opencl.h"

const pv_backend_ops pv_opencl_backend = {
    .name = "opencl",
    .init = pv_cl_runtime_init,
    .release = pv_cl_runtime_release,
    .gaussian2d = pv_cl_gaussian2d,
    .gaussian3d = pv_cl_gaussian3d,
    .gradient2d = pv_cl_gradient2d,
    .gradient3d = pv_cl_gradient3d,
    .stereo_sad = pv_cl_stereo_sad,
    .pc_create = pv_cl_pc_create,
    .pc_destroy = pv_cl_pc_destroy,
    .pc_reference = pv_cl_pc_reference,
    .pc_correlate = pv_cl_pc_correlate,
    .pc_upsample = pv_cl_pc_upsample,
    .normxcorr2 = pv_cl_normxcorr2,
};
