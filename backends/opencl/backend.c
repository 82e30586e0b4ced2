/* The OpenCL backend: a composition of its module sub-tables, each
 * defined by its own module file. */
#include "opencl.h"

const pv_backend_ops pv_opencl_backend = {
    .name = "opencl",
    .device = &pv_cl_device_ops,
    .filter = &pv_cl_filter_ops,
    .stereo = &pv_cl_stereo_ops,
    .bp = &pv_cl_bp_ops,
    .reg = &pv_cl_register_ops,
    .features = &pv_cl_features_ops,
    .flow = &pv_cl_flow_ops,
    .octreg = &pv_cl_octreg_ops,
    .geometry = &pv_cl_geometry_ops,
    .colour = &pv_cl_colour_ops,
};
