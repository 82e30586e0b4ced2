/* The OpenCL backend's device sub-table: enumeration, set-up and release
 * (the runtime), the launch-parameter slots (params.c), and the
 * copy-bandwidth probe. */
#include "opencl.h"

#define COPY_REPEATS 5

/* One device-to-device copy, waited for; *ms is its event time. */
static pv_status timed_copy(pv_context *ctx, cl_mem src, cl_mem dst, size_t bytes, double *ms)
{
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueCopyBuffer(pv_cl_queue(ctx), src, dst, 0, 0, bytes, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueCopyBuffer");
    if (status != PV_OK)
        return status;
    status = pv_cl_check(ctx, clWaitForEvents(1, &event), "clWaitForEvents");
    *ms = pv_cl_event_ms(event);
    clReleaseEvent(event);
    return status;
}

/* Best of COPY_REPEATS event-timed copies after an untimed one (the
 * first use of a buffer may pay for its allocation on the device). */
static pv_status cl_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s)
{
    cl_mem src = NULL, dst = NULL;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &src);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &dst);
    double ms = 0.0, best_ms = INFINITY;
    if (status == PV_OK)
        status = timed_copy(ctx, src, dst, bytes, &ms);
    for (int i = 0; i < COPY_REPEATS && status == PV_OK; i++) {
        status = timed_copy(ctx, src, dst, bytes, &ms);
        if (ms > 0.0 && ms < best_ms)
            best_ms = ms;
    }
    pv_cl_release(&src);
    pv_cl_release(&dst);
    if (status != PV_OK)
        return status;
    if (!(best_ms < INFINITY))
        return pv_fail(ctx, PV_ERR_OPENCL, "copy bandwidth: the device reported no copy time");
    *gb_per_s = 2.0 * (double)bytes / (best_ms * 1e-3) * 1e-9;
    return PV_OK;
}

const pv_device_ops pv_cl_device_ops = {
    .list = pv_cl_list_devices,
    .init = pv_cl_runtime_init,
    .release = pv_cl_runtime_release,
    .copy_bandwidth = cl_copy_bandwidth,
    .param_family = pv_cl_param_family_name,
    .param_get = pv_cl_param_get,
    .param_set = pv_cl_param_set,
    .param_list = pv_cl_param_list,
    .param_reset = pv_cl_param_reset,
};
