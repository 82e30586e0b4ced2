/* OpenCL flow: host side of kernels/flow.cl.
 *
 * The plan owns every device buffer (pyramids, gradients, tensor, two flow
 * sets), so after the upload of the two volumes all levels, warps and
 * iterations run on the device; only the final flow (and, with a
 * convergence tolerance, a few hundred partial sums per check) comes back.
 * Each stage ends with pv_cl_finish so its event times are accounted. */
#include "../opencl.h"
#include "flow_block.h"

#include <stdlib.h>
#include <string.h>

#define TENSOR_COMPONENTS 9

static const pv_cl_param_default flow_defaults[] = {
    {"FLOW_WG_X", 32},          /* per-voxel kernels: work-group width ...  */
    {"FLOW_WG_Y", 4},           /* ... and height                           */
    {"FLOW_SMOOTH_WG_X", 32},   /* tiled x / y Gaussian passes              */
    {"FLOW_SMOOTH_WG_Y", 8},
    {"FLOW_ROW_STEPS", 4},      /* x pass: outputs per work item            */
    {"FLOW_COL_STEPS", 4},      /* y pass: outputs per work item            */
    {"FLOW_REDUCE_WG", 256},    /* change reduction: group size (2^k)       */
    {"FLOW_REDUCE_GROUPS", 256},/* change reduction: number of groups       */
    {"FLOW_JACOBI_BLOCK", 1},   /* Jacobi iterations per launch (flow_block.c) */
    {"FLOW_BLOCK_TILE_X", 32},  /* blocked Jacobi: outputs of a group in x, */
    {"FLOW_BLOCK_TILE_Y", 8},   /* ... in y                                 */
    {"FLOW_BLOCK_TILE_Z", 32},  /* ... and its planes along z               */
    {"FLOW_BLOCK_TENSOR_QUEUE", 0}, /* 1: the tensor in registers down the stages */
};

const pv_cl_param_family pv_cl_params_flow = {
    "flow", flow_defaults, sizeof flow_defaults / sizeof flow_defaults[0]};

typedef struct cl_flow_plan {
    pv_flow_setup setup;
    float *weights;
    cl_mem fixed[PV_FLOW_MAX_LEVELS], moving[PV_FLOW_MAX_LEVELS];
    cl_mem grad;             /* 3 n */
    cl_mem it;               /* n */
    cl_mem tensor, tmp;      /* 9 n each */
    cl_mem flow[2][3];       /* two sets of u, v, w */
    cl_mem weights_buf;
    cl_mem partial;          /* 2 FLOW_REDUCE_GROUPS */
    int current;             /* flow[current] holds the flow */
} cl_flow_plan;

/* The runtime's kernel argument (runtime.h), under this file's short name. */
typedef pv_cl_kernel_arg kernel_arg;

#define ARG(x) {sizeof(x), &(x)}

static int param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "flow", name, 1);
}

static size_t round_up_div(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

static size_t level_count(const int n[3])
{
    return (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
}

/* A per-voxel launch over a level of size n[3]. */
static pv_status launch_voxels(pv_context *ctx, const char *name, const kernel_arg *args,
                               int count, const int n[3])
{
    size_t local[3] = {(size_t)param(ctx, "FLOW_WG_X"), (size_t)param(ctx, "FLOW_WG_Y"), 1};
    size_t global[3] = {(size_t)n[0], (size_t)n[1], (size_t)n[2]};
    return pv_cl_run(ctx, "flow", "flow", name, args, count, 3, global, local);
}

static pv_status launch_linear(pv_context *ctx, const char *name, const kernel_arg *args,
                               int count, size_t items)
{
    size_t local = (size_t)param(ctx, "FLOW_WG_X") * (size_t)param(ctx, "FLOW_WG_Y");
    return pv_cl_run(ctx, "flow", "flow", name, args, count, 1, &items, &local);
}

/* ------------------------------------------------------------------- plan */

static void pv_cl_flow_destroy(pv_context *ctx, void *plan)
{
    cl_flow_plan *p = plan;
    (void)ctx;
    for (int l = 0; l < PV_FLOW_MAX_LEVELS; l++) {
        pv_cl_release(&p->fixed[l]);
        pv_cl_release(&p->moving[l]);
    }
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 3; c++)
            pv_cl_release(&p->flow[s][c]);
    cl_mem *owned[] = {&p->grad, &p->it, &p->tensor, &p->tmp, &p->weights_buf, &p->partial};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        pv_cl_release(owned[i]);
    free(p->weights);
    free(p);
}

static pv_status floats_buffer(pv_context *ctx, size_t count, cl_mem *buffer)
{
    size_t bytes;
    if (!pv_size_mul(count, sizeof(float), &bytes))
        return pv_fail(ctx, PV_ERR_NOMEM, "flow: a buffer of %zu floats overflows", count);
    return pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, buffer);
}

static pv_status alloc_buffers(pv_context *ctx, cl_flow_plan *p)
{
    const size_t n = level_count(p->setup.size[0]);
    pv_status status = PV_OK;
    for (int l = 0; l < p->setup.levels && status == PV_OK; l++) {
        status = floats_buffer(ctx, level_count(p->setup.size[l]), &p->fixed[l]);
        if (status == PV_OK)
            status = floats_buffer(ctx, level_count(p->setup.size[l]), &p->moving[l]);
    }
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < 3 && status == PV_OK; c++)
            status = floats_buffer(ctx, n, &p->flow[s][c]);
    if (status == PV_OK)
        status = floats_buffer(ctx, 3 * n, &p->grad);
    if (status == PV_OK)
        status = floats_buffer(ctx, n, &p->it);
    if (status == PV_OK)
        status = floats_buffer(ctx, TENSOR_COMPONENTS * n, &p->tensor);
    if (status == PV_OK)
        status = floats_buffer(ctx, TENSOR_COMPONENTS * n, &p->tmp);
    if (status == PV_OK)
        status = floats_buffer(ctx, 2 * (size_t)param(ctx, "FLOW_REDUCE_GROUPS"), &p->partial);
    if (status == PV_OK)
        status = floats_buffer(ctx, 2 * (size_t)p->setup.radius + 1, &p->weights_buf);
    return status;
}

static pv_status upload_weights(pv_context *ctx, cl_flow_plan *p)
{
    size_t bytes = (2 * (size_t)p->setup.radius + 1) * sizeof(float);
    return pv_cl_finish_after(ctx, pv_cl_write(ctx, p->weights_buf, 0, bytes, p->weights));
}

static pv_status pv_cl_flow_create(pv_context *ctx, const pv_flow_setup *setup, void **plan)
{
    cl_flow_plan *p = calloc(1, sizeof *p);
    size_t taps = 2 * (size_t)setup->radius + 1;
    if (p)
        p->weights = malloc(taps * sizeof(float));
    if (!p || !p->weights) {
        free(p);
        return pv_fail(ctx, PV_ERR_NOMEM, "flow: no memory for the OpenCL plan");
    }
    p->setup = *setup;
    memcpy(p->weights, setup->weights, taps * sizeof(float));
    p->setup.weights = p->weights;
    pv_status status = alloc_buffers(ctx, p);
    if (status == PV_OK)
        status = upload_weights(ctx, p);
    return pv_plan_hand_over(ctx, status, p, pv_cl_flow_destroy, plan);
}

/* ---------------------------------------------------------------- pyramid */

static pv_status downsample(pv_context *ctx, cl_mem fine, const int fn[3], cl_mem coarse,
                            const int cn[3])
{
    cl_int dims[6] = {fn[0], fn[1], fn[2], cn[0], cn[1], cn[2]};
    const kernel_arg args[] = {ARG(fine),    ARG(coarse),  ARG(dims[0]), ARG(dims[1]),
                               ARG(dims[2]), ARG(dims[3]), ARG(dims[4]), ARG(dims[5])};
    return launch_voxels(ctx, "flow_downsample", args, PV_CL_ARG_COUNT(args), cn);
}

static pv_status load_on_device(pv_context *ctx, cl_flow_plan *p, const pv_volume *fixed,
                                const pv_volume *moving)
{
    pv_status status = pv_cl_write_volume(ctx, p->fixed[0], fixed);
    if (status == PV_OK)
        status = pv_cl_write_volume(ctx, p->moving[0], moving);
    for (int l = 1; l < p->setup.levels && status == PV_OK; l++) {
        status = downsample(ctx, p->fixed[l - 1], p->setup.size[l - 1], p->fixed[l],
                            p->setup.size[l]);
        if (status == PV_OK)
            status = downsample(ctx, p->moving[l - 1], p->setup.size[l - 1], p->moving[l],
                                p->setup.size[l]);
    }
    return status;
}

static pv_status pv_cl_flow_load(pv_context *ctx, void *plan, const pv_volume *fixed,
                          const pv_volume *moving)
{
    return pv_cl_finish_after(ctx, load_on_device(ctx, plan, fixed, moving));
}

/* ------------------------------------------------------------ begin level */

static pv_status zero_flow(pv_context *ctx, cl_mem *const flow, const int n[3])
{
    cl_int count = (cl_int)level_count(n);
    const kernel_arg args[] = {ARG(flow[0]), ARG(flow[1]), ARG(flow[2]), ARG(count)};
    return launch_linear(ctx, "flow_zero3", args, PV_CL_ARG_COUNT(args), (size_t)count);
}

static pv_status upsample_flow(pv_context *ctx, cl_mem *const coarse, const int cn[3],
                               cl_mem *const fine, const int fn[3])
{
    cl_int dims[6] = {cn[0], cn[1], cn[2], fn[0], fn[1], fn[2]};
    const kernel_arg args[] = {ARG(coarse[0]), ARG(coarse[1]), ARG(coarse[2]), ARG(fine[0]),
                               ARG(fine[1]),   ARG(fine[2]),   ARG(dims[0]),   ARG(dims[1]),
                               ARG(dims[2]),   ARG(dims[3]),   ARG(dims[4]),   ARG(dims[5])};
    return launch_voxels(ctx, "flow_upsample", args, PV_CL_ARG_COUNT(args), fn);
}

static pv_status pv_cl_flow_begin_level(pv_context *ctx, void *plan, int level)
{
    cl_flow_plan *p = plan;
    if (level == p->setup.levels - 1) {
        p->current = 0;
        return pv_cl_finish_after(ctx, zero_flow(ctx, p->flow[0], p->setup.size[level]));
    }
    pv_status status = upsample_flow(ctx, p->flow[p->current], p->setup.size[level + 1],
                                     p->flow[1 - p->current], p->setup.size[level]);
    if (status == PV_OK)
        p->current = 1 - p->current;
    return pv_cl_finish_after(ctx, status);
}

/* --------------------------------------------------------------- stages */

static pv_status pv_cl_flow_gradients(pv_context *ctx, void *plan, int level)
{
    cl_flow_plan *p = plan;
    const int *n = p->setup.size[level];
    cl_int nx = n[0], ny = n[1], nz = n[2], scheme = (cl_int)p->setup.scheme;
    const kernel_arg args[] = {ARG(p->fixed[level]), ARG(p->grad), ARG(nx), ARG(ny), ARG(nz),
                               ARG(scheme)};
    return pv_cl_finish_after(ctx,
                              launch_voxels(ctx, "flow_gradients", args, PV_CL_ARG_COUNT(args), n));
}

static pv_status resample(pv_context *ctx, cl_mem fixed, cl_mem moving, cl_mem *const flow,
                          cl_mem out, const int n[3], cl_int subtract)
{
    cl_int nx = n[0], ny = n[1], nz = n[2];
    const kernel_arg args[] = {ARG(fixed),   ARG(moving), ARG(flow[0]), ARG(flow[1]),
                               ARG(flow[2]), ARG(out),    ARG(nx),      ARG(ny),
                               ARG(nz),      ARG(subtract)};
    return launch_voxels(ctx, "flow_resample", args, PV_CL_ARG_COUNT(args), n);
}

static pv_status pv_cl_flow_resample(pv_context *ctx, void *plan, int level)
{
    cl_flow_plan *p = plan;
    return pv_cl_finish_after(ctx, resample(ctx, p->fixed[level], p->moving[level],
                                            p->flow[p->current], p->it, p->setup.size[level], 1));
}

/* Local memory of a tiled pass: `lines` lines of `length` outputs plus the
 * 2r apron; 0 when the device has not that much. */
static size_t tile_bytes(pv_context *ctx, int lines, int length, int radius)
{
    size_t bytes = (size_t)lines * ((size_t)length + 2 * (size_t)radius) * sizeof(float);
    return bytes <= pv_cl_device_info(ctx)->local_memory ? bytes : 0;
}

/* x pass (axis 0) or y pass (axis 1) of all nine components. */
static pv_status smooth_pass(pv_context *ctx, cl_flow_plan *p, cl_mem src, cl_mem dst,
                             const int n[3], int axis)
{
    const int wg_x = param(ctx, "FLOW_SMOOTH_WG_X"), wg_y = param(ctx, "FLOW_SMOOTH_WG_Y");
    const int tile = axis == 0 ? wg_x * param(ctx, "FLOW_ROW_STEPS")
                               : wg_y * param(ctx, "FLOW_COL_STEPS");
    size_t local_bytes = tile_bytes(ctx, axis == 0 ? wg_y : wg_x, tile, p->setup.radius);
    if (!local_bytes)
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                       "flow: a %d-tap smoothing tile does not fit in %s's local memory",
                       2 * p->setup.radius + 1, pv_cl_device_info(ctx)->name);
    cl_int radius = p->setup.radius, nx = n[0], ny = n[1];
    const kernel_arg args[] = {ARG(src), ARG(dst), ARG(p->weights_buf), ARG(radius),
                               ARG(nx),  ARG(ny),  {local_bytes, NULL}};
    size_t local[3] = {(size_t)wg_x, (size_t)wg_y, 1};
    size_t global[3] = {(size_t)n[0], (size_t)n[1], (size_t)n[2] * TENSOR_COMPONENTS};
    if (axis == 0)
        global[0] = round_up_div((size_t)n[0], (size_t)tile) * (size_t)wg_x;
    else
        global[1] = round_up_div((size_t)n[1], (size_t)tile) * (size_t)wg_y;
    return pv_cl_run(ctx, "flow", "flow", axis == 0 ? "flow_smooth_rows" : "flow_smooth_cols",
                     args, PV_CL_ARG_COUNT(args), 3, global, local);
}

static pv_status smooth_z_rhs(pv_context *ctx, cl_flow_plan *p, cl_mem src, cl_mem dst,
                              const int n[3])
{
    cl_int radius = p->setup.radius, nx = n[0], ny = n[1], nz = n[2];
    cl_mem *flow = p->flow[p->current];
    const kernel_arg args[] = {ARG(src), ARG(dst),     ARG(p->weights_buf), ARG(radius),
                               ARG(nx),  ARG(ny),      ARG(nz),             ARG(flow[0]),
                               ARG(flow[1]), ARG(flow[2])};
    return launch_voxels(ctx, "flow_smooth_z_rhs", args, PV_CL_ARG_COUNT(args), n);
}

/* products -> tmp, x: tmp -> tensor, y: tensor -> tmp, z + b: tmp -> tensor. */
static pv_status tensor_on_device(pv_context *ctx, cl_flow_plan *p, int level)
{
    const int *n = p->setup.size[level];
    cl_int count = (cl_int)level_count(n);
    const kernel_arg args[] = {ARG(p->grad), ARG(p->it), ARG(p->tmp), ARG(count)};
    pv_status status = launch_linear(ctx, "flow_products", args, PV_CL_ARG_COUNT(args),
                                     (size_t)count);
    if (status == PV_OK)
        status = smooth_pass(ctx, p, p->tmp, p->tensor, n, 0);
    if (status == PV_OK)
        status = smooth_pass(ctx, p, p->tensor, p->tmp, n, 1);
    if (status == PV_OK)
        status = smooth_z_rhs(ctx, p, p->tmp, p->tensor, n);
    return status;
}

static pv_status pv_cl_flow_tensor(pv_context *ctx, void *plan, int level)
{
    return pv_cl_finish_after(ctx, tensor_on_device(ctx, plan, level));
}

/* ------------------------------------------------------------------ Jacobi */

static pv_status jacobi_step(pv_context *ctx, cl_flow_plan *p, const int n[3])
{
    cl_mem *in = p->flow[p->current], *out = p->flow[1 - p->current];
    cl_int nx = n[0], ny = n[1], nz = n[2];
    cl_float a = p->setup.smooth, d = p->setup.divergence;
    const kernel_arg args[] = {ARG(in[0]),  ARG(in[1]),  ARG(in[2]),     ARG(out[0]),
                               ARG(out[1]), ARG(out[2]), ARG(p->tensor), ARG(nx),
                               ARG(ny),     ARG(nz),     ARG(a),         ARG(d)};
    pv_status status = launch_voxels(ctx, d != 0.0f ? "flow_jacobi_div" : "flow_jacobi", args,
                                     PV_CL_ARG_COUNT(args), n);
    if (status == PV_OK)
        p->current = 1 - p->current;
    return status;
}

/* ||new - old|| / ||new|| of the last step, from per-group partial sums
 * added on the host in double. */
static pv_status measure_change(pv_context *ctx, cl_flow_plan *p, const int n[3],
                                double *change)
{
    const int groups = param(ctx, "FLOW_REDUCE_GROUPS");
    cl_mem *old = p->flow[1 - p->current], *new_ = p->flow[p->current];
    cl_int count = (cl_int)level_count(n);
    const kernel_arg args[] = {ARG(old[0]),  ARG(old[1]),  ARG(old[2]),     ARG(new_[0]),
                               ARG(new_[1]), ARG(new_[2]), ARG(p->partial), ARG(count)};
    size_t local = (size_t)param(ctx, "FLOW_REDUCE_WG");
    size_t global = (size_t)groups * local;
    float *partial = malloc(2 * (size_t)groups * sizeof *partial);
    if (!partial)
        return pv_fail(ctx, PV_ERR_NOMEM, "flow: no memory for %d partial sums", groups);
    pv_status status = pv_cl_run(ctx, "flow", "flow", "flow_change", args, PV_CL_ARG_COUNT(args),
                                 1, &global, &local);
    if (status == PV_OK)
        status = pv_cl_read(ctx, p->partial, 0, 2 * (size_t)groups * sizeof *partial, partial);
    double diff = 0.0, norm = 0.0;
    for (int g = 0; g < groups && status == PV_OK; g++) {
        diff += partial[2 * g];
        norm += partial[2 * g + 1];
    }
    free(partial);
    if (status == PV_OK)
        *change = diff == 0.0 ? 0.0 : norm > 0.0 ? sqrt(diff / norm) : INFINITY;
    return status;
}

/* FLOW_JACOBI_BLOCK iterations in one launch (flow_block.c). */
static pv_status jacobi_block(pv_context *ctx, cl_flow_plan *p, const int n[3])
{
    pv_cl_flow_sweep sweep = {.tensor = p->tensor, .smooth = p->setup.smooth,
                              .divergence = p->setup.divergence};
    memcpy(sweep.in, p->flow[p->current], sizeof sweep.in);
    memcpy(sweep.out, p->flow[1 - p->current], sizeof sweep.out);
    memcpy(sweep.n, n, sizeof sweep.n);
    pv_status status = pv_cl_flow_block(ctx, &sweep);
    if (status == PV_OK)
        p->current = 1 - p->current;
    return status;
}

/* Blocks of FLOW_JACOBI_BLOCK iterations while they fit in count, the rest
 * single steps.  The change compares the last two iterates, so with a
 * check the last step runs alone: a block never spans a check. */
static pv_status jacobi_on_device(pv_context *ctx, cl_flow_plan *p, int level, int count,
                                  double *change)
{
    const int *n = p->setup.size[level];
    const int blocked = change ? count - 1 : count;
    int depth = 1, k = 0;
    pv_status status = blocked >= 2 ? pv_cl_flow_block_depth(ctx, p->setup.divergence != 0.0f,
                                                             &depth)
                                    : PV_OK;
    for (; depth > 1 && k + depth <= blocked && status == PV_OK; k += depth)
        status = jacobi_block(ctx, p, n);
    for (; k < count && status == PV_OK; k++)
        status = jacobi_step(ctx, p, n);
    if (status == PV_OK && change)
        status = measure_change(ctx, p, n, change);
    return status;
}

static pv_status pv_cl_flow_jacobi(pv_context *ctx, void *plan, int level, int count, double *change)
{
    return pv_cl_finish_after(ctx, jacobi_on_device(ctx, plan, level, count, change));
}

/* -------------------------------------------------------------------- read */

static pv_status read_on_device(pv_context *ctx, cl_flow_plan *p, pv_flow_field *flow)
{
    pv_volume *const parts[3] = {&flow->u, &flow->v, &flow->w};
    return pv_cl_download_volumes(ctx, p->flow[p->current], parts, 3);
}

static pv_status pv_cl_flow_read(pv_context *ctx, void *plan, pv_flow_field *flow)
{
    return pv_cl_finish_after(ctx, read_on_device(ctx, plan, flow));
}

/* -------------------------------------------------------------------- warp */

static pv_status upload_to_slot(pv_context *ctx, const char *slot, const pv_volume *volume,
                                cl_mem *buffer)
{
    size_t bytes = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    return status == PV_OK ? pv_cl_write_volume(ctx, *buffer, volume) : status;
}

static pv_status warp_on_device(pv_context *ctx, const pv_volume *moving,
                                const pv_flow_field *flow, pv_volume *warped)
{
    static const char *const slots[3] = {"flow.warp.u", "flow.warp.v", "flow.warp.w"};
    const pv_volume *parts[3] = {&flow->u, &flow->v, &flow->w};
    const int n[3] = {moving->nx, moving->ny, moving->nz};
    cl_mem src, out, f[3];
    pv_status status = upload_to_slot(ctx, "flow.warp.moving", moving, &src);
    for (int c = 0; c < 3 && status == PV_OK; c++)
        status = upload_to_slot(ctx, slots[c], parts[c], &f[c]);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "flow.warp.out", level_count(n) * sizeof(float), &out);
    if (status == PV_OK)
        status = resample(ctx, src, src, f, out, n, 0);
    if (status == PV_OK)
        status = pv_cl_download_volume(ctx, out, warped);
    return status;
}

static pv_status pv_cl_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                          pv_volume *warped)
{
    return pv_cl_finish_after(ctx, warp_on_device(ctx, moving, flow, warped));
}

const pv_flow_ops pv_cl_flow_ops = {PV_FLOW_SLOTS(PV_OPS_BIND, pv_cl_flow_)};
