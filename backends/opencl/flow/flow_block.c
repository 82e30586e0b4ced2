/* OpenCL flow: several Jacobi iterations per launch, host side of
 * kernels/flow_block.cl (temporal blocking: a 2D tile and its halo marching
 * along z; docs/flow3d.md).  The launch parameters are the flow family's
 * (flow.c): FLOW_JACOBI_BLOCK, the iterations per launch (1: none, the
 * single step of flow.cl), FLOW_BLOCK_TILE_X / _Y / _Z, a work group's
 * outputs along x and y and its planes along z, and FLOW_BLOCK_TENSOR_QUEUE
 * (the kernel's build option only: where the tensor is read from). */
#include "flow_block.h"


/* Bounds on the parameters before any arithmetic on them: a block deeper
 * than this would recompute more halo than it saves; no device has a work
 * group of more than 1024 x 1024 items. */
#define DEPTH_MAX 16
#define TILE_MAX 1024

typedef struct block_shape {
    int depth, tile[3];
    size_t local[2]; /* the work group: the tile and its halo */
} block_shape;

static block_shape shape_of(pv_context *ctx)
{
    block_shape s;
    s.depth = pv_cl_param(ctx, "flow", "FLOW_JACOBI_BLOCK", 1);
    s.tile[0] = pv_cl_param(ctx, "flow", "FLOW_BLOCK_TILE_X", 1);
    s.tile[1] = pv_cl_param(ctx, "flow", "FLOW_BLOCK_TILE_Y", 1);
    s.tile[2] = pv_cl_param(ctx, "flow", "FLOW_BLOCK_TILE_Z", 1);
    s.local[0] = s.local[1] = 0;
    if (s.depth >= 2 && s.depth <= DEPTH_MAX)
        for (int a = 0; a < 2; a++)
            if (s.tile[a] >= 1 && s.tile[a] <= TILE_MAX)
                s.local[a] = (size_t)s.tile[a] + 2 * (size_t)s.depth;
    return s;
}

/* The kernel of the variant, each in a program of its own
 * (FLOW_BLOCK_DIVERGENCE in kernels/flow_block.cl). */
static pv_status block_kernel(pv_context *ctx, int divergence, cl_kernel *kernel)
{
    const char *define = divergence ? " -DFLOW_BLOCK_DIVERGENCE=1" : " -DFLOW_BLOCK_DIVERGENCE=0";
    const char *name = divergence ? "flow_jacobi_div_block" : "flow_jacobi_block";
    return pv_cl_family_kernel(ctx, "flow_block", "flow", define, name, kernel);
}

/* Local memory of the kernel variant: per stage but the last, one plane
 * of u, v, w without the divergence term, a ring of three with it. */
static size_t local_bytes(const block_shape *s, int divergence)
{
    const size_t planes = divergence ? 9 : 3;
    return (size_t)(s->depth) * planes * s->local[0] * s->local[1] * sizeof(float);
}

/* 1 when the built kernel runs a group of `items`; the compiler may allow
 * fewer than the device's largest group (registers). */
static int kernel_fits(pv_context *ctx, cl_kernel kernel, size_t items)
{
    size_t fits = 0;
    if (clGetKernelWorkGroupInfo(kernel, pv_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof fits, &fits, NULL) != CL_SUCCESS)
        return 0;
    return items <= fits;
}

pv_status pv_cl_flow_block_depth(pv_context *ctx, int divergence, int *depth)
{
    *depth = 1;
    const block_shape s = shape_of(ctx);
    if (s.depth < 2)
        return PV_OK;
    const pv_device_info *device = pv_cl_device_info(ctx);
    const size_t items = s.local[0] * s.local[1];
    if (!items || s.tile[2] < 1 || items > (size_t)device->max_work_group_size ||
        local_bytes(&s, divergence) > device->local_memory) {
        pv_log(ctx, "flow: a Jacobi block of depth %d on a %dx%dx%d tile does not fit %s; "
                    "single steps",
               s.depth, s.tile[0], s.tile[1], s.tile[2], device->name);
        return PV_OK;
    }
    cl_kernel kernel;
    pv_status status = block_kernel(ctx, divergence, &kernel);
    if (status != PV_OK)
        return status;
    if (!kernel_fits(ctx, kernel, items)) {
        pv_log(ctx, "flow: the Jacobi block kernel cannot run %zu items a group on %s; "
                    "single steps",
               items, device->name);
        return PV_OK;
    }
    *depth = s.depth;
    return PV_OK;
}

static size_t groups(int length, int tile)
{
    return ((size_t)length + (size_t)tile - 1) / (size_t)tile;
}

pv_status pv_cl_flow_block(pv_context *ctx, const pv_cl_flow_sweep *sweep)
{
    const block_shape s = shape_of(ctx);
    const int divergence = sweep->divergence != 0.0f;
    cl_int nx = sweep->n[0], ny = sweep->n[1], nz = sweep->n[2];
    cl_float a = sweep->smooth, d = sweep->divergence;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(sweep->in[0]),  PV_CL_ARG(sweep->in[1]),  PV_CL_ARG(sweep->in[2]),
        PV_CL_ARG(sweep->out[0]), PV_CL_ARG(sweep->out[1]), PV_CL_ARG(sweep->out[2]),
        PV_CL_ARG(sweep->tensor), PV_CL_ARG(nx),            PV_CL_ARG(ny),
        PV_CL_ARG(nz),            PV_CL_ARG(a),             PV_CL_ARG(d)};
    const size_t local[3] = {s.local[0], s.local[1], 1};
    const size_t global[3] = {groups(nx, s.tile[0]) * local[0], groups(ny, s.tile[1]) * local[1],
                              groups(nz, s.tile[2])};
    cl_kernel kernel;
    pv_status status = block_kernel(ctx, divergence, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, PV_CL_ARG_COUNT(args), 3, global,
                                               local)
                           : status;
}
