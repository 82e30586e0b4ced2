/* Internal: the CPU reference backend's operations, one module per file. */
#ifndef PV_CPU_H
#define PV_CPU_H

#include "../../lib/core/internal.h"

/* The module sub-tables this backend's backend.c composes. */
extern const pv_device_ops pv_cpu_device_ops;
extern const pv_filter_ops pv_cpu_filter_ops;
extern const pv_stereo_ops pv_cpu_stereo_ops;
extern const pv_bp_ops pv_cpu_bp_ops;
extern const pv_register_ops pv_cpu_register_ops;
extern const pv_features_ops pv_cpu_features_ops;
extern const pv_flow_ops pv_cpu_flow_ops;
extern const pv_octreg_ops pv_cpu_octreg_ops;
extern const pv_geometry_ops pv_cpu_geometry_ops;
extern const pv_colour_ops pv_cpu_colour_ops;

/* peak_search.c: the first largest value of a dense n[0] x n[1] x n[2]
 * correlation map (x fastest), its grid index and its six neighbours
 * (wrapped), in pv_pc_peak form. */
pv_pc_peak pv_cpu_map_peak(pv_context *ctx, const float *map, const int n[3]);

#endif
