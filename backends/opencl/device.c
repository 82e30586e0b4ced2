/* The OpenCL backend's device sub-table: set-up and release, the
 * copy-bandwidth probe and the compute-peak probe (kernels/device.cl). */
/* The OpenCL backend's device sub-table: enumeration, set-up and release
 * (the runtime), the launch-parameter slots (params.c), and the
 * copy-bandwidth probe. */
#include "opencl.h"

#include <string.h>

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
 * src to dst, or (kernel set) a launch of the compute probe, with its
 * arguments, over `items` work items. */
typedef struct probe_run {
    cl_mem src, dst;
    size_t bytes;
    cl_kernel kernel;
    pv_cl_kernel_arg args[4];
    size_t items;
} probe_run;

/* One run, waited for; *ms is its event time. */
static pv_status timed_run(pv_context *ctx, const probe_run *run, double *ms)
{
    if (run->kernel) {
        const size_t group = PEAK_GROUP;
        return pv_cl_launch_waited(ctx, run->kernel, run->args, PV_CL_ARG_COUNT(run->args), 1,
                                   &run->items, &group, ms);
    }
    cl_event event = NULL;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueCopyBuffer(pv_cl_queue(ctx), run->src, run->dst, 0, 0, run->bytes, 0, NULL,
                                  &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueCopyBuffer");
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

/* The operands of the probe kernels: float chains multiply and add, int
 * chains add and exclusive-or (kernels/device.cl). */
static const cl_float peak_float_operands[2] = {0.999f, 1e-3f};
static const cl_uint peak_int_operands[2] = {0x9e3779b9u, 0x7f4a7c15u};
static const cl_int peak_steps = PEAK_STEPS;

/* The probe kernel of `kind` into run, with its arguments (out, the two
 * operands, the steps). */
static pv_status probe_kernel(pv_context *ctx, pv_compute_kind kind, const cl_mem *out,
                              probe_run *run)
{
    const int is_float = kind == PV_COMPUTE_FLOAT;
    const void *a = is_float ? (const void *)&peak_float_operands[0]
                             : (const void *)&peak_int_operands[0];
    const void *b = is_float ? (const void *)&peak_float_operands[1]
                             : (const void *)&peak_int_operands[1];
    const pv_cl_kernel_arg args[4] = {PV_CL_ARG(*out), {4, a}, {4, b}, PV_CL_ARG(peak_steps)};
    memcpy(run->args, args, sizeof args);
    return pv_cl_kernel(ctx, "device", NULL, is_float ? "peak_float" : "peak_int", &run->kernel);
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
        status = probe_kernel(ctx, kind, &out, &run);
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
