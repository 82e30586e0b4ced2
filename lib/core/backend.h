/* Internal: the backend dispatch table.  The front end (lib/) validates
 * arguments once and calls through this table; backends trust their input.
 *
 * A backend is a composition of sub-tables, one per module.  Each
 * backends/<kind>/<module>.c defines its module's sub-table (declared in
 * lib/core/ops_<module>.h) with static entry points, and
 * backends/<kind>/backend.c only composes them.  Front ends reach a backend
 * only through ctx->ops (or pv_cpu_backend, the oracle of cross-checks),
 * and backends reach the front end not at all: both stand on lib/core/. */
#ifndef PV_BACKEND_H
#define PV_BACKEND_H

#include "parvis.h"

#include "ops_device.h"
#include "ops_filter.h"
#include "ops_stereo.h"
#include "ops_bp.h"
#include "ops_register.h"
#include "ops_features.h"
#include "ops_flow.h"
#include "ops_octreg.h"
#include "ops_geometry.h"
#include "ops_colour.h"

typedef struct pv_backend_ops {
    const char *name;
    const pv_device_ops *device;
    const pv_filter_ops *filter;
    const pv_stereo_ops *stereo;
    const pv_bp_ops *bp;
    const pv_register_ops *reg;
    const pv_features_ops *features;
    const pv_flow_ops *flow;
    const pv_octreg_ops *octreg;
    const pv_geometry_ops *geometry;
    const pv_colour_ops *colour;
} pv_backend_ops;

extern const pv_backend_ops pv_cpu_backend;
#ifdef PV_HAVE_OPENCL
extern const pv_backend_ops pv_opencl_backend;
#endif

#endif
