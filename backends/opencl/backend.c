/* The OpenCL backend's dispatch table, and its copy-bandwidth probe. */
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

const pv_backend_ops pv_opencl_backend = {
    .name = "opencl",
    .init = pv_cl_runtime_init,
    .release = pv_cl_runtime_release,
    .gaussian2d = pv_cl_gaussian2d,
    .gaussian3d = pv_cl_gaussian3d,
    .gradient2d = pv_cl_gradient2d,
    .gradient3d = pv_cl_gradient3d,
    .stereo_sad = pv_cl_stereo_sad,
    .stereo_bp = pv_cl_stereo_bp,
    .pc_create = pv_cl_pc_create,
    .pc_destroy = pv_cl_pc_destroy,
    .pc_reference = pv_cl_pc_reference,
    .pc_correlate = pv_cl_pc_correlate,
    .pc_upsample = pv_cl_pc_upsample,
    .normxcorr2 = pv_cl_normxcorr2,
    .flow_create = pv_cl_flow_create,
    .flow_destroy = pv_cl_flow_destroy,
    .flow_load = pv_cl_flow_load,
    .flow_begin_level = pv_cl_flow_begin_level,
    .flow_gradients = pv_cl_flow_gradients,
    .flow_resample = pv_cl_flow_resample,
    .flow_tensor = pv_cl_flow_tensor,
    .flow_jacobi = pv_cl_flow_jacobi,
    .flow_read = pv_cl_flow_read,
    .flow_warp = pv_cl_flow_warp,
    .sift_create = pv_cl_sift_create,
    .sift_destroy = pv_cl_sift_destroy,
    .sift_detect = pv_cl_sift_detect,
    .sift_nearest = pv_cl_sift_nearest,
    .oct_create = pv_cl_oct_create,
    .oct_destroy = pv_cl_oct_destroy,
    .oct_load = pv_cl_oct_load,
    .oct_reference = pv_cl_oct_reference,
    .oct_spectra = pv_cl_oct_spectra,
    .oct_coarse = pv_cl_oct_coarse,
    .oct_fine = pv_cl_oct_fine,
    .oct_place = pv_cl_oct_place,
    .oct_read = pv_cl_oct_read,
    .copy_bandwidth = cl_copy_bandwidth,
};
