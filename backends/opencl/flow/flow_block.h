/* Internal to the OpenCL flow module: several Jacobi iterations per launch
 * (flow_block.c, kernels/flow_block.cl), called by flow.c. */
#ifndef PV_CL_FLOW_BLOCK_H
#define PV_CL_FLOW_BLOCK_H

#include "../opencl.h"

/* One launch's iterations: from the flow set `in` (u, v, w) into `out`,
 * with the level's tensor (9 n floats) and coefficients. */
typedef struct pv_cl_flow_sweep {
    cl_mem in[3], out[3];
    cl_mem tensor;
    int n[3];
    float smooth, divergence;
} pv_cl_flow_sweep;

/* The iterations one launch can do: FLOW_JACOBI_BLOCK when it is 2 or more
 * and its block (the tile and its halo) fits the device's work-group and
 * local-memory limits for the kernel variant (with or without the
 * divergence term), else 1 (single steps: a shape that does not fit is no
 * error).  Builds the blocked program when the depth is above 1; fails
 * only when that build does. */
pv_status pv_cl_flow_block_depth(pv_context *ctx, int divergence, int *depth);

/* Enqueue one launch of pv_cl_flow_block_depth's depth (above 1)
 * iterations: out becomes the iterate `depth` steps after in,
 * bit-identical to that many single steps. */
pv_status pv_cl_flow_block(pv_context *ctx, const pv_cl_flow_sweep *sweep);

#endif
