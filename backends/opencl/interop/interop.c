/* The interop sub-table of the OpenCL backend (lib/core/ops_interop.h):
 * the slots' untyped handles become the runtime's OpenCL types
 * (backends/opencl/runtime/runtime_interop.c does the work; interop_rows.c
 * the passes over a bound input). */
#include "interop_rows.h"

static pv_status pv_cl_interop_bind(pv_context *ctx, const void *proxy, size_t bytes, void *mem,
                                    size_t offset)
{
    return pv_cl_bind_host(ctx, proxy, bytes, (cl_mem)mem, offset);
}

static void pv_cl_interop_unbind(pv_context *ctx)
{
    pv_cl_unbind_images(ctx);
}

static pv_status pv_cl_interop_begin(pv_context *ctx, unsigned wait_count, void *const *wait_list,
                                     int defer)
{
    return pv_cl_defer_begin(ctx, (cl_uint)wait_count, (const cl_event *)wait_list, defer);
}

static pv_status pv_cl_interop_end(pv_context *ctx, pv_status status, void **done)
{
    return pv_cl_defer_end(ctx, status, (cl_event *)done);
}

static pv_status pv_cl_interop_read(pv_context *ctx, void *mem, size_t offset, ptrdiff_t stride,
                                    pv_image *dst)
{
    return pv_cl_read_caller_image(ctx, (cl_mem)mem, offset, stride, dst);
}

static pv_status pv_cl_interop_write(pv_context *ctx, const pv_image *src, void *mem,
                                     size_t offset, ptrdiff_t stride)
{
    return pv_cl_write_caller_image(ctx, src, (cl_mem)mem, offset, stride);
}

static pv_status pv_cl_interop_wait(pv_context *ctx)
{
    return pv_cl_finish(ctx);
}

static pv_status pv_cl_interop_objects(pv_context *ctx, void **context, void **queue)
{
    cl_context c;
    cl_command_queue q;
    pv_status status = pv_cl_caller_objects(ctx, &c, &q);
    if (status == PV_OK) {
        *context = c;
        *queue = q;
    }
    return status;
}

static pv_status pv_cl_interop_row_stats(pv_context *ctx, const pv_device_rows *rows,
                                         pv_row_stats *out)
{
    return pv_cl_rows_stats(ctx, rows, out);
}

static pv_status pv_cl_interop_row_energy(pv_context *ctx, const pv_device_rows *rows,
                                          const float *const *window, double mean, double *out)
{
    return pv_cl_rows_energy(ctx, rows, window, mean, out);
}

static pv_status pv_cl_interop_to_f32(pv_context *ctx, const pv_device_rows *rows, double mean,
                                      double scale, const void *proxy, size_t bytes)
{
    return pv_cl_rows_to_f32(ctx, rows, mean, scale, proxy, bytes);
}

static pv_status pv_cl_interop_bound_rect(pv_context *ctx, const void *proxy, size_t offset,
                                          ptrdiff_t stride, pv_image *host, int to_device)
{
    return pv_cl_rows_rect(ctx, proxy, offset, stride, host, to_device);
}

static void pv_cl_interop_forget(pv_context *ctx, const void *proxy)
{
    pv_cl_forget_host(ctx, proxy);
}

static pv_status pv_cl_interop_stage(pv_context *ctx, const void *proxy, size_t bytes)
{
    return pv_cl_rows_stage(ctx, proxy, bytes);
}

static pv_status pv_cl_interop_unstage(pv_context *ctx, const void *proxy, pv_image *out)
{
    return pv_cl_rows_unstage(ctx, proxy, out);
}

static pv_status pv_cl_interop_masked_stats(pv_context *ctx, const pv_device_rows *rows,
                                            const pv_device_rows *mask, pv_masked_row *out)
{
    return pv_cl_rows_masked_stats(ctx, rows, mask, out);
}

static pv_status pv_cl_interop_masked_centre(pv_context *ctx, const pv_device_rows *rows,
                                             const pv_device_rows *mask, double mean,
                                             double scale, int exact, const void *values,
                                             const void *mask01, double *energy)
{
    return pv_cl_rows_masked_centre(ctx, rows, mask, mean, scale, exact, values, mask01,
                                    energy);
}

const pv_interop_ops pv_cl_interop_ops = {PV_INTEROP_SLOTS(PV_OPS_BIND, pv_cl_interop_)};
