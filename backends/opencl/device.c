/* The OpenCL backend's device sub-table: set-up and release, the
 * copy-bandwidth probe and the compute-peak probe (kernels/device.cl). */
/* The OpenCL backend's device sub-table: enumeration, set-up and release
 * (the runtime), the launch-parameter slots (params.c), and the
 * copy-bandwidth probe. */
#include "opencl.h"

/* Timed runs of a probe, after one untimed run. */
#define PROBE_REPEATS 5

/* The compute probe's size: PEAK_STEPS steps of 8 chains in each of
 * PEAK_ITEMS_PER_UNIT work items per compute unit on a GPU (enough
 * resident work to hide latency), fewer on other devices, whose units
 * run one work item at a time per lane. */
#define PEAK_STEPS 2048
#define PEAK_CHAINS 8
#define PEAK_ITEMS_PER_UNIT_GPU 8192
#define PEAK_ITEMS_PER_UNIT_OTHER 256
/* Work items a group: a multiple of every GPU's SIMD width, and a group
 * that PoCL vectorises across. */
#define PEAK_GROUP 64

/* What one timed run enqueues: a device-to-device copy of `bytes` from
 * src to dst, or (kernel set) a launch of the compute probe over `items`
 * work items. */
typedef struct probe_run {
    cl_mem src, dst;
    size_t bytes;
    cl_kernel kernel;
    size_t items;
} probe_run;

/* One run, waited for; *ms is its event time. */
static pv_status timed_run(pv_context *ctx, const probe_run *run, double *ms)
{
    const size_t group = PEAK_GROUP;
    cl_event event = NULL;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && run->kernel)
        err = clEnqueueNDRangeKernel(pv_cl_queue(ctx), run->kernel, 1, NULL, &run->items, &group,
                                     0, NULL, &event);
    else if (err == CL_SUCCESS)
        err = clEnqueueCopyBuffer(pv_cl_queue(ctx), run->src, run->dst, 0, 0, run->bytes, 0, NULL,
                                  &event);
    pv_status status = pv_cl_check(ctx, err, run->kernel ? "clEnqueueNDRangeKernel(compute probe)"
                                                         : "clEnqueueCopyBuffer");
    if (status != PV_OK)
        return status;
    status = pv_cl_check(ctx, clWaitForEvents(1, &event), "clWaitForEvents");
    *ms = pv_cl_event_ms(event);
    clReleaseEvent(event);
    return status;
}

/* Best of PROBE_REPEATS event-timed runs after an untimed one (the first
 * use of a buffer may pay for its allocation on the device, the first
 * launch for the program's build). */
static pv_status best_time(pv_context *ctx, const probe_run *run, const char *what,
                           double *best_ms)
{
    double ms = 0.0, best = INFINITY;
    pv_status status = timed_run(ctx, run, &ms);
    for (int i = 0; i < PROBE_REPEATS && status == PV_OK; i++) {
        status = timed_run(ctx, run, &ms);
        if (ms > 0.0 && ms < best)
            best = ms;
    }
    if (status == PV_OK && !(best < INFINITY))
        status = pv_fail(ctx, PV_ERR_OPENCL, "%s: the device reported no time", what);
    *best_ms = best;
    return status;
}

static pv_status cl_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s)
{
    probe_run run = {.bytes = bytes};
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &run.src);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &run.dst);
    double best_ms = 0.0;
    if (status == PV_OK)
        status = best_time(ctx, &run, "copy bandwidth", &best_ms);
    pv_cl_release(&run.src);
    pv_cl_release(&run.dst);
    if (status == PV_OK)
        *gb_per_s = 2.0 * (double)bytes / (best_ms * 1e-3) * 1e-9;
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

static pv_status cl_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops)
{
    const pv_device_info *device = pv_cl_device_info(ctx);
    size_t units = device->compute_units > 0 ? (size_t)device->compute_units : 1;
    probe_run run = {.items = units * (device->type == PV_DEVICE_GPU ? PEAK_ITEMS_PER_UNIT_GPU
                                                                     : PEAK_ITEMS_PER_UNIT_OTHER)};
    cl_mem out = NULL;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_WRITE_ONLY, run.items * 4, &out);
    if (status == PV_OK)
        status = probe_kernel(ctx, kind, &out, &run.kernel);
    double best_ms = 0.0;
    if (status == PV_OK)
        status = best_time(ctx, &run, "compute peak", &best_ms);
    pv_cl_release(&out);
    /* Two operations a step: multiply and add, or add and exclusive or. */
    double ops = 2.0 * PEAK_CHAINS * (double)PEAK_STEPS * (double)run.items;
    if (status == PV_OK)
        *gops = ops / (best_ms * 1e-3) * 1e-9;
    return status;
}

const pv_device_ops pv_cl_device_ops = {
    PV_DEVICE_SETUP_SLOTS(PV_OPS_BIND, pv_cl_runtime_)
    PV_DEVICE_PROBE_SLOTS(PV_OPS_BIND, cl_)
    PV_DEVICE_PARAM_SLOTS(PV_OPS_BIND, pv_cl_)
};
