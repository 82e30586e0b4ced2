/* The OpenCL runtime's context and queues: the OpenCL context and its
 * profiling queue made at set-up, more queues for work that overlaps, the
 * queue that commands go to, and the handles the modules ask for. */
#include "runtime_state.h"

cl_context pv_cl_context(pv_context *ctx) { return pv_cl_state_of(ctx)->context; }
cl_command_queue pv_cl_queue(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    return state->current ? state->current : state->queue;
}
cl_device_id pv_cl_device(pv_context *ctx) { return pv_cl_state_of(ctx)->device; }
const pv_device_info *pv_cl_device_info(pv_context *ctx) { return &ctx->device; }

/* An in-order, profiling queue on the state's device: the context's own
 * and the extra ones of pipelined batches are made alike. */
static pv_status profiling_queue(pv_context *ctx, const pv_cl_state *state, const char *call,
                                 cl_command_queue *queue)
{
    cl_int err;
    cl_command_queue made = clCreateCommandQueue(state->context, state->device,
                                                 CL_QUEUE_PROFILING_ENABLE, &err);
    pv_status status = pv_cl_check(ctx, err, call);
    if (status == PV_OK)
        *queue = made;
    return status;
}

/* Set-up: the OpenCL context on the state's device, and its own queue. */
pv_status pv_cl_context_create(pv_context *ctx, pv_cl_state *state)
{
    cl_int err;
    state->context = clCreateContext(NULL, 1, &state->device, NULL, NULL, &err);
    pv_status status = pv_cl_check(ctx, err, "clCreateContext");
    return status == PV_OK ? profiling_queue(ctx, state, "clCreateCommandQueue", &state->queue)
                           : status;
}

/* The caller's context (and queue) are retained, so that they outlive
 * this context whatever the caller does; runtime_setup.c releases them. */
pv_status pv_cl_context_adopt(pv_context *ctx, pv_cl_state *state, cl_context context,
                              cl_command_queue queue)
{
    pv_status status = pv_cl_check(ctx, clRetainContext(context), "clRetainContext(caller's)");
    if (status != PV_OK)
        return status;
    state->context = context;
    if (queue) {
        status = pv_cl_check(ctx, clRetainCommandQueue(queue), "clRetainCommandQueue(caller's)");
        if (status != PV_OK)
            return status;
        state->caller_queue = queue;
    }
    return profiling_queue(ctx, state, "clCreateCommandQueue(on the caller's context)",
                           &state->queue);
}

pv_status pv_cl_queue_create(pv_context *ctx, cl_command_queue *queue)
{
    return profiling_queue(ctx, pv_cl_state_of(ctx), "clCreateCommandQueue(extra)", queue);
}

void pv_cl_queue_release(cl_command_queue *queue)
{
    if (!*queue)
        return;
    clFinish(*queue);
    clReleaseCommandQueue(*queue);
    *queue = NULL;
}

cl_command_queue pv_cl_use_queue(pv_context *ctx, cl_command_queue queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    cl_command_queue previous = state->current;
    state->current = queue;
    return previous;
}
