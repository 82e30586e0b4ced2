/* Internal: the optical-flow sub-table of a backend (lib/core/backend.h)
 * and the pyramid set-up the front end prepares for it.  Not installed. */
#ifndef PV_OPS_FLOW_H
#define PV_OPS_FLOW_H

#include "parvis.h"
#include "ops_slots.h"

/* flow: a plan of fixed pyramid geometry (level 0 finest).  The front end
 * computes the level sizes, the Gaussian taps and the coefficients in
 * float, so both backends compute on identical numbers. */
typedef struct pv_flow_setup {
    int levels;
    int size[PV_FLOW_MAX_LEVELS][3]; /* nx, ny, nz per level */
    const float *weights;            /* 2 * radius + 1 taps of K_rho */
    int radius;
    float smooth;                    /* alpha / h^2 */
    float divergence;                /* beta / h^2 (0: plain CLG) */
    pv_gradient_scheme scheme;
} pv_flow_setup;

/* flow: stages on plan-owned buffers, driven by lib/flow/flow.c.  load: upload
 * both volumes (f32 or u16, converted as they are loaded) and build the pyramids; begin_level: the flow of `level`
 * (zero at the coarsest, else up-sampled from level + 1); jacobi: `count`
 * iterations, and when change is not NULL the relative change
 * ||w_k - w_k-1|| / ||w_k|| of the last one; read: the level-0 flow. */
#define PV_FLOW_SLOTS(X, P)                                                                       \
    PV_OPS_PLAN_SLOTS(X, P, create, destroy, pv_flow_setup)                                       \
    X(P, pv_status, load,                                                                         \
      (pv_context *ctx, void *plan, const pv_volume *fixed, const pv_volume *moving))             \
    X(P, pv_status, begin_level, (pv_context *ctx, void *plan, int level))                        \
    X(P, pv_status, gradients, (pv_context *ctx, void *plan, int level))                          \
    X(P, pv_status, resample, (pv_context *ctx, void *plan, int level))                           \
    X(P, pv_status, tensor, (pv_context *ctx, void *plan, int level))                             \
    X(P, pv_status, jacobi, (pv_context *ctx, void *plan, int level, int count, double *change))  \
    X(P, pv_status, read, (pv_context *ctx, void *plan, pv_flow_field *flow))                     \
    X(P, pv_status, warp,                                                                         \
      (pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow, pv_volume *warped))

#endif
