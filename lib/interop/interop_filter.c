/* Device-buffer forms of the gradients (2D and 3D) and of the flow's warp
 * (include/parvis/interop.h): each names its images and runs its host
 * call through pv_interop_device_call (lib/interop/interop.c).  The OpenCL
 * backends of these calls move their images through the runtime's
 * whole-image transfers (pv_cl_write_image, pv_cl_write_volume and the
 * downloads), which copy on the device for a bound proxy, so nothing more
 * is needed here than the list of items. */
#include "interop_internal.h"

static pv_status host_gradient(pv_context *ctx, void *const *images, const void *args)
{
    return pv_gradient(ctx, images[0], images[1], images[2], *(const pv_gradient_scheme *)args);
}

pv_status pv_gradient_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *gx,
                         const pv_buffer *gy, pv_gradient_scheme scheme, cl_uint wait_count,
                         const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"src", "gx", "gy"};
    /* Either output may be absent; the host call refuses both absent. */
    call_images c = {.buffers = {src, gx, gy}, .count = 3, .first_output = 1, .optional = 6u};
    return pv_interop_device_call(ctx, "gradient_cl", &c, names, host_gradient, &scheme,
                                  wait_count, wait_list, done);
}

static pv_status host_gradient3d(pv_context *ctx, void *const *items, const void *args)
{
    return pv_gradient3d(ctx, items[0], items[1], items[2], items[3],
                         *(const pv_gradient_scheme *)args);
}

pv_status pv_gradient3d_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *gx,
                           const pv_buffer *gy, const pv_buffer *gz, pv_gradient_scheme scheme,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"src", "gx", "gy", "gz"};
    call_images c = {.buffers = {src, gx, gy, gz}, .count = 4, .first_output = 1,
                     .volumes = 15u, .optional = 14u};
    return pv_interop_device_call(ctx, "gradient3d_cl", &c, names, host_gradient3d, &scheme,
                                  wait_count, wait_list, done);
}

static pv_status host_flow_warp(pv_context *ctx, void *const *items, const void *args)
{
    (void)args;
    pv_flow_field flow;
    flow.u = *(const pv_volume *)items[1];
    flow.v = *(const pv_volume *)items[2];
    flow.w = *(const pv_volume *)items[3];
    return pv_flow_warp(ctx, items[0], &flow, items[4]);
}

pv_status pv_flow_warp_cl(pv_context *ctx, const pv_buffer *moving, const pv_buffer *u,
                          const pv_buffer *v, const pv_buffer *w, const pv_buffer *warped,
                          cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"moving", "u", "v", "w", "warped"};
    call_images c = {.buffers = {moving, u, v, w, warped}, .count = 5, .first_output = 4,
                     .volumes = 31u};
    return pv_interop_device_call(ctx, "flow_warp_cl", &c, names, host_flow_warp, NULL,
                                  wait_count, wait_list, done);
}
