/* Internal: how a sub-table of the backend table (lib/core/backend.h) is
 * written once and filled by every backend.  Not installed.
 *
 * Each lib/core/ops_<module>.h lists its slots in one macro,
 *
 *     #define PV_FLOW_SLOTS(X, P) \
 *         X(P, pv_status, create, (pv_context *ctx, ...)) \
 *         X(P, void, destroy, (pv_context *ctx, void *plan)) ...
 *
 * one X(P, return type, slot, (parameters)) per entry point;
 * lib/core/backend.h declares every table type from its list with
 * PV_OPS_STRUCT.  A backend fills its table by
 * expanding the same list with PV_OPS_BIND and its own prefix:
 *
 *     const pv_flow_ops pv_cpu_flow_ops = {PV_FLOW_SLOTS(PV_OPS_BIND, pv_cpu_flow_)};
 *
 * binds slot `create` to the backend's entry point pv_cpu_flow_create.  So
 * a new slot is one line in its module's list, and a backend that lacks
 * the entry point (or gives it another signature) does not compile. */
#ifndef PV_OPS_SLOTS_H
#define PV_OPS_SLOTS_H

/* One slot as a member of the table type (P unused). */
#define PV_OPS_MEMBER(P, ret, slot, params) ret(*slot) params;

/* One slot of a backend's table, bound to the entry point P ## slot. */
#define PV_OPS_BIND(P, ret, slot, params) .slot = P##slot,

/* The pair of slots of a module whose work runs on a backend plan:
 * `create` builds one from the front end's set-up (of type `setup`) and
 * `destroy` frees it: a plan that `create` made (the front end never
 * passes NULL), or one whose set-up stopped part way (lib/core/plan.h). */
#define PV_OPS_PLAN_SLOTS(X, P, create, destroy, setup)                                           \
    X(P, pv_status, create, (pv_context *ctx, const setup *setup_in, void **plan))                \
    X(P, void, destroy, (pv_context *ctx, void *plan))

/* The table type `name` with one member per slot of SLOTS (lib/core/backend.h
 * declares every module's from PV_BACKEND_MODULES). */
#define PV_OPS_STRUCT(name, SLOTS)                                                                \
    typedef struct name {                                                                         \
        SLOTS(PV_OPS_MEMBER, )                                                                    \
    } name

#endif
