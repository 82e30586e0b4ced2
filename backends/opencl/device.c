/* The OpenCL backend's device sub-table: set-up and release, the
 * copy-bandwidth probe and the compute-peak probe (kernels/device.cl). */
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

/* The compute probe's size: PEAK_STEPS steps of 8 chains in each of
 * PEAK_ITEMS_PER_UNIT work items per compute unit on a GPU (enough
 * resident work to hide latency), fewer on other devices, whose units
 * run one work item at a time per lane. */
#define PEAK_STEPS 2048
#define PEAK_CHAINS 8
#define PEAK_ITEMS_PER_UNIT_GPU 8192
#define PEAK_ITEMS_PER_UNIT_OTHER 256
#define PEAK_REPEATS 5
/* Work items a group: a multiple of every GPU's SIMD width, and a group
 * that PoCL vectorises across. */
#define PEAK_GROUP 64

/* One launch of the probe, waited for; *ms is its event time. */
static pv_status timed_probe(pv_context *ctx, cl_kernel kernel, size_t items, double *ms)
{
    const size_t group = PEAK_GROUP;
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(pv_cl_queue(ctx), kernel, 1, NULL, &items, &group, 0, NULL,
                                     &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueNDRangeKernel(compute probe)");
    if (status != PV_OK)
        return status;
    status = pv_cl_check(ctx, clWaitForEvents(1, &event), "clWaitForEvents");
    *ms = pv_cl_event_ms(event);
    clReleaseEvent(event);
    return status;
}

/* The probe kernel of `kind` with its arguments set on out. */
static pv_status probe_kernel(pv_context *ctx, pv_compute_kind kind, cl_mem *out, cl_kernel *kernel)
{
    pv_status status = pv_cl_kernel(ctx, "device", NULL,
                                    kind == PV_COMPUTE_FLOAT ? "peak_float" : "peak_int", kernel);
    const float fa = 0.999f, fb = 1e-3f;
    const cl_uint ia = 0x9e3779b9u, ib = 0x7f4a7c15u;
    const cl_int steps = PEAK_STEPS;
    int is_float = kind == PV_COMPUTE_FLOAT;
    if (status == PV_OK)
        status = pv_cl_arg(ctx, *kernel, 0, sizeof *out, out);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, *kernel, 1, 4, is_float ? (const void *)&fa : (const void *)&ia);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, *kernel, 2, 4, is_float ? (const void *)&fb : (const void *)&ib);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, *kernel, 3, sizeof steps, &steps);
    return status;
}

/* Best of PEAK_REPEATS event-timed launches after an untimed one (which
 * also builds the program). */
static pv_status cl_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops)
{
    const pv_device_info *device = pv_cl_device_info(ctx);
    size_t units = device->compute_units > 0 ? (size_t)device->compute_units : 1;
    size_t items = units * (device->type == PV_DEVICE_GPU ? PEAK_ITEMS_PER_UNIT_GPU
                                                          : PEAK_ITEMS_PER_UNIT_OTHER);
    cl_mem out = NULL;
    cl_kernel kernel = NULL;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_WRITE_ONLY, items * 4, &out);
    if (status == PV_OK)
        status = probe_kernel(ctx, kind, &out, &kernel);
    double ms = 0.0, best_ms = INFINITY;
    if (status == PV_OK)
        status = timed_probe(ctx, kernel, items, &ms);
    for (int i = 0; i < PEAK_REPEATS && status == PV_OK; i++) {
        status = timed_probe(ctx, kernel, items, &ms);
        if (ms > 0.0 && ms < best_ms)
            best_ms = ms;
    }
    pv_cl_release(&out);
    if (status != PV_OK)
        return status;
    if (!(best_ms < INFINITY))
        return pv_fail(ctx, PV_ERR_OPENCL, "compute peak: the device reported no kernel time");
    /* Two operations a step: multiply and add, or add and exclusive or. */
    double ops = 2.0 * PEAK_CHAINS * (double)PEAK_STEPS * (double)items;
    *gops = ops / (best_ms * 1e-3) * 1e-9;
    return PV_OK;
}

const pv_device_ops pv_cl_device_ops = {
    .init = pv_cl_runtime_init,
    .release = pv_cl_runtime_release,
    .copy_bandwidth = cl_copy_bandwidth,
    .compute_peak = cl_compute_peak,
};
