/* The CPU reference backend: a composition of its module sub-tables, each
 * defined by its own module file. */
#include "cpu.h"

const pv_backend_ops pv_cpu_backend = {
    .name = "cpu",
    .device = &pv_cpu_device_ops,
    .filter = &pv_cpu_filter_ops,
    .stereo = &pv_cpu_stereo_ops,
    .bp = &pv_cpu_bp_ops,
    .reg = &pv_cpu_register_ops,
    .features = &pv_cpu_features_ops,
    .flow = &pv_cpu_flow_ops,
    .octreg = &pv_cpu_octreg_ops,
    .geometry = &pv_cpu_geometry_ops,
    .colour = &pv_cpu_colour_ops,
};
