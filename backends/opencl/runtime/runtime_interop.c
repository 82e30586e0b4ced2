/* The runtime's side of device-buffer calls (lib/interop/interop.c):
 * caller's buffers bound in place of a call's host images, the call's
 * commands ordered after the caller's events and queue, and the event
 * that marks them done.  It calls the transfers (runtime_transfer.c) and
 * the queues (runtime_queue.c); runtime_transfer.c only reads the
 * bindings (pv_cl_binding_of). */
#include "runtime_state.h"

/* Whether the caller's buffer belongs to this context and holds `bytes`
 * from `offset`. */
static pv_status check_buffer(pv_context *ctx, cl_mem mem, size_t offset, size_t bytes)
{
    cl_context owner = NULL;
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffer: not a valid cl_mem (%s)",
                       pv_cl_error_name(err));
    if (owner != pv_cl_state_of(ctx)->context)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "device buffer: it belongs to another cl_context than the context's");
    if (offset > size || bytes > size - offset)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "device buffer: %zu bytes from offset %zu do not fit its %zu bytes "
                       "(its size, stride or pixel type is wrong)", bytes, offset, size);
    return PV_OK;
}

pv_status pv_cl_bind_host(pv_context *ctx, const void *proxy, size_t bytes, cl_mem mem,
                         size_t offset)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    pv_status status = check_buffer(ctx, mem, offset, bytes);
    if (status != PV_OK)
        return status;
    if (state->binding_count == PV_CL_BINDINGS)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: more than %d in one call",
                       PV_CL_BINDINGS);
    device_binding *b = &state->bindings[state->binding_count++];
    b->host = proxy;
    b->mem = mem;
    b->offset = offset;
    b->bytes = bytes;
    return PV_OK;
}

void pv_cl_unbind_images(pv_context *ctx)
{
    pv_cl_state_of(ctx)->binding_count = 0;
}

int pv_cl_bound_buffer(pv_context *ctx, const void *proxy, cl_mem *mem, size_t *offset)
{
    const device_binding *b = pv_cl_binding_of(pv_cl_state_of(ctx), proxy);
    if (!b)
        return 0;
    *mem = b->mem;
    *offset = b->offset;
    return 1;
}

size_t pv_cl_binding_count(pv_context *ctx)
{
    return pv_cl_state_of(ctx)->binding_count;
}

void pv_cl_forget_host(pv_context *ctx, const void *proxy)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; i < state->binding_count; i++)
        if (state->bindings[i].host == proxy)
            state->bindings[i].host = NULL; /* matches no host pointer */
}

/* An event of the wait list that failed (or is not an event) refuses the
 * call before anything is queued. */
static pv_status check_events(pv_context *ctx, cl_uint count, const cl_event *events)
{
    for (cl_uint i = 0; i < count; i++) {
        cl_int state = 0;
        cl_int err = events[i] ? clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                sizeof state, &state, NULL)
                               : CL_INVALID_EVENT;
        if (err != CL_SUCCESS)
            return pv_fail(ctx, PV_ERR_INVALID, "wait list: event %u is not valid (%s)", i,
                           pv_cl_error_name(err));
        if (state < 0)
            return pv_fail(ctx, PV_ERR_INVALID, "wait list: event %u failed (%s)", i,
                           pv_cl_error_name(state));
    }
    return PV_OK;
}

pv_status pv_cl_defer_begin(pv_context *ctx, cl_uint count, const cl_event *events, int defer)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    pv_status status = check_events(ctx, count, events);
    if (status != PV_OK)
        return status;
    cl_event after_caller = NULL;
    if (state->caller_queue)
        status = pv_cl_check(ctx, clEnqueueMarkerWithWaitList(state->caller_queue, 0, NULL,
                                                              &after_caller),
                             "clEnqueueMarkerWithWaitList(caller's queue)");
    cl_event list[65];
    cl_uint n = 0;
    if (count > 64 && status == PV_OK)
        status = pv_fail(ctx, PV_ERR_INVALID, "wait list: %u events, at most 64", count);
    for (cl_uint i = 0; i < count && status == PV_OK; i++)
        list[n++] = events[i];
    if (after_caller)
        list[n++] = after_caller;
    if (status == PV_OK && n > 0)
        status = pv_cl_check(ctx, clEnqueueBarrierWithWaitList(state->queue, n, list, NULL),
                             "clEnqueueBarrierWithWaitList(wait list)");
    if (after_caller)
        clReleaseEvent(after_caller);
    if (status == PV_OK)
        state->deferred = defer;
    return status;
}

pv_status pv_cl_defer_end(pv_context *ctx, pv_status status, cl_event *done)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    state->deferred = 0;
    if (status != PV_OK) {
        clFinish(state->queue); /* nothing of a failed call is left running */
        return status;
    }
    cl_event marker = NULL;
    status = pv_cl_check(ctx, clEnqueueMarkerWithWaitList(state->queue, 0, NULL, &marker),
                         "clEnqueueMarkerWithWaitList(done)");
    if (status == PV_OK && state->caller_queue)
        status = pv_cl_check(ctx, clEnqueueBarrierWithWaitList(state->caller_queue, 1, &marker,
                                                               NULL),
                             "clEnqueueBarrierWithWaitList(caller's queue)");
    if (status == PV_OK)
        status = pv_cl_check(ctx, clFlush(state->queue), "clFlush");
    if (status == PV_OK && done) {
        *done = marker;
        return PV_OK;
    }
    if (marker)
        clReleaseEvent(marker);
    return status;
}

/* A blocking copy between the caller's buffer (rows `stride` pixels apart
 * from `offset`) and the host image. */
static pv_status caller_rect(pv_context *ctx, cl_mem mem, size_t offset, ptrdiff_t stride,
                             pv_image *image, int to_device)
{
    pv_image layout = *image;
    layout.stride = stride;
    pv_status status = check_buffer(ctx, mem, offset, pv_image_span(&layout));
    const size_t pixel = pv_pixel_size(image->type);
    const size_t origin[3] = {offset, 0, 0}, host[3] = {0, 0, 0};
    const size_t region[3] = {(size_t)image->width * pixel, (size_t)image->height, 1};
    const size_t pitch = (size_t)stride * pixel, host_pitch = (size_t)image->stride * pixel;
    cl_command_queue queue = pv_cl_state_of(ctx)->queue;
    if (status != PV_OK)
        return status;
    cl_int err = to_device ? clEnqueueWriteBufferRect(queue, mem, CL_TRUE, origin, host, region,
                                                      pitch, 0, host_pitch, 0, image->data, 0,
                                                      NULL, NULL)
                           : clEnqueueReadBufferRect(queue, mem, CL_TRUE, origin, host, region,
                                                     pitch, 0, host_pitch, 0, image->data, 0,
                                                     NULL, NULL);
    return pv_cl_check(ctx, err, to_device ? "clEnqueueWriteBufferRect(caller's buffer)"
                                           : "clEnqueueReadBufferRect(caller's buffer)");
}

pv_status pv_cl_read_caller_image(pv_context *ctx, cl_mem mem, size_t offset, ptrdiff_t stride,
                                  pv_image *dst)
{
    return caller_rect(ctx, mem, offset, stride, dst, 0);
}

pv_status pv_cl_write_caller_image(pv_context *ctx, const pv_image *src, cl_mem mem,
                                   size_t offset, ptrdiff_t stride)
{
    return caller_rect(ctx, mem, offset, stride, (pv_image *)src, 1);
}

pv_status pv_cl_caller_objects(pv_context *ctx, cl_context *context, cl_command_queue *queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    *context = state->context;
    *queue = state->caller_queue ? state->caller_queue : state->queue;
    return PV_OK;
}
