/* Internal: the backend dispatch table.  The front end (lib/) validates
 * arguments once and calls through this table; backends trust their input.
 *
 * A backend is a composition of sub-tables, one per module.  Each
 * backends/<kind>/<module>.c defines its module's sub-table (its slots listed in
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
#include "ops_interop.h"

/* The modules of a backend: X(P, member, module, slot list) per sub-table,
 * whose type pv_<module>_ops is declared here from the slot list of
 * lib/core/ops_<module>.h, and which is reached as ops-><member>.
 * A backend names its sub-tables P<module>_ops; it declares them with
 * PV_BACKEND_DECLARE and composes them with PV_BACKEND_COMPOSE, so a new
 * module is one line here (and its sub-table in each backend). */
#define PV_BACKEND_MODULES(X, P)                                                                  \
    X(P, device, device, PV_DEVICE_SLOTS)                                                         \
    X(P, filter, filter, PV_FILTER_SLOTS)                                                         \
    X(P, stereo, stereo, PV_STEREO_SLOTS)                                                         \
    X(P, bp, bp, PV_BP_SLOTS)                                                                     \
    X(P, reg, register, PV_REGISTER_SLOTS)                                                        \
    X(P, features, features, PV_FEATURES_SLOTS)                                                   \
    X(P, flow, flow, PV_FLOW_SLOTS)                                                               \
    X(P, octreg, octreg, PV_OCTREG_SLOTS)                                                         \
    X(P, geometry, geometry, PV_GEOMETRY_SLOTS)                                                   \
    X(P, colour, colour, PV_COLOUR_SLOTS)                                                         \
    X(P, interop, interop, PV_INTEROP_SLOTS)

#define PV_BACKEND_TYPE(P, member, module, slots) PV_OPS_STRUCT(pv_##module##_ops, slots);
#define PV_BACKEND_MEMBER(P, member, module, slots) const pv_##module##_ops *member;
#define PV_BACKEND_DECLARE(P, member, module, slots) extern const pv_##module##_ops P##module##_ops;
#define PV_BACKEND_COMPOSE(P, member, module, slots) .member = &P##module##_ops,

PV_BACKEND_MODULES(PV_BACKEND_TYPE, )

typedef struct pv_backend_ops {
    const char *name;
    PV_BACKEND_MODULES(PV_BACKEND_MEMBER, )
} pv_backend_ops;

extern const pv_backend_ops pv_cpu_backend;
#ifdef PV_HAVE_OPENCL
extern const pv_backend_ops pv_opencl_backend;
#endif

#endif
