/* The OpenCL runtime's state on a context: its set-up and release, and the
 * hooks run at the release.  The top of the runtime: it calls the other
 * files (runtime_state.h's list), none of them calls it. */
#include "runtime_state.h"

#include <stdlib.h>

/* ------------------------------------------------------------ init/release */

/* The device of a caller's queue (or, without one, the first of the
 * caller's context), which must belong to that context. */
static pv_status caller_device(pv_context *ctx, cl_device_id *device)
{
    cl_context context = (cl_context)ctx->adopt_context;
    cl_command_queue queue = (cl_command_queue)ctx->adopt_queue;
    cl_int err;
    if (queue) {
        cl_context owner = NULL;
        err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof owner, &owner, NULL);
        if (err == CL_SUCCESS && owner != context)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "pv_context_create_cl: the queue belongs to another cl_context");
        if (err == CL_SUCCESS)
            err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof *device, device, NULL);
        return pv_cl_check(ctx, err, "clGetCommandQueueInfo(caller's queue)");
    }
    cl_device_id list[16];
    size_t bytes = 0;
    err = clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &bytes);
    if (err == CL_SUCCESS && (bytes < sizeof list[0] || bytes > sizeof list))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "pv_context_create_cl: the cl_context has no device, or more than 16");
    if (err == CL_SUCCESS)
        err = clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, list, NULL);
    if (err == CL_SUCCESS)
        *device = list[0];
    return pv_cl_check(ctx, err, "clGetContextInfo(caller's context)");
}

pv_status pv_cl_runtime_init(pv_context *ctx, int device_index)
{
    pv_cl_state *state = calloc(1, sizeof *state);
    if (!state)
        return pv_fail(ctx, PV_ERR_NOMEM, "OpenCL runtime: out of memory");
    cl_device_id adopted = NULL;
    pv_status status = ctx->adopt_context ? caller_device(ctx, &adopted) : PV_OK;
    if (status == PV_OK)
        status = adopted ? pv_cl_device_pick_id(ctx, state, adopted)
                         : pv_cl_device_pick(ctx, state, device_index);
    if (status != PV_OK) {
        free(state);
        return status;
    }
    ctx->backend_state = state;
    pv_cl_profile_init(state);
    char faults[PV_CONFIG_VALUE_MAX + 1];
    pv_config_get(PV_CONFIG_FAULT, faults, sizeof faults);
    status = pv_cl_faults_parse(ctx, faults, &state->faults);
    if (status == PV_OK)
        status = adopted ? pv_cl_context_adopt(ctx, state, (cl_context)ctx->adopt_context,
                                                (cl_command_queue)ctx->adopt_queue)
                         : pv_cl_context_create(ctx, state);
    if (status != PV_OK)
        pv_cl_runtime_release(ctx);
    return status;
}

void pv_cl_runtime_release(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (!state)
        return;
    if (state->queue)
        clFinish(state->queue);
    for (size_t i = 0; i < state->hook_count; i++)
        state->hooks[i].fn(ctx, state->hooks[i].arg);
    free(state->hooks);
    pv_cl_release_stages(state);
    pv_cl_release_profile(ctx, state);
    pv_cl_release_programs(state);
    pv_cl_release_scratch(state);
    free(state->overrides);
    if (state->queue)
        clReleaseCommandQueue(state->queue);
    if (state->caller_queue)
        clReleaseCommandQueue(state->caller_queue);
    if (state->context)
        clReleaseContext(state->context);
    free(state);
    ctx->backend_state = NULL;
}

pv_status pv_cl_on_release(pv_context *ctx, pv_cl_release_fn fn, void *arg)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; i < state->hook_count; i++)
        if (state->hooks[i].fn == fn && state->hooks[i].arg == arg)
            return PV_OK;
    release_hook *grown = realloc(state->hooks, (state->hook_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "release hooks: out of memory");
    state->hooks = grown;
    state->hooks[state->hook_count].fn = fn;
    state->hooks[state->hook_count++].arg = arg;
    return PV_OK;
}

