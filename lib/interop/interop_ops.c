/* Device-buffer forms of the stereo, filter, colour and flow operations
 * (include/parvis/interop.h): each names its images and runs its host
 * call through pv_interop_device_call (lib/interop/interop.c). */
#include "interop_internal.h"

static pv_status host_sgm(pv_context *ctx, void *const *images, const void *args)
{
    return pv_stereo_sgm_confidence(ctx, images[0], images[1], args, images[2], images[3]);
}

pv_status pv_stereo_sgm_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                           const pv_sgm_params *params, const pv_buffer *disparity,
                           const pv_buffer *confidence, cl_uint wait_count,
                           const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"left", "right", "disparity", "confidence"};
    call_images c = {.buffers = {left, right, disparity, confidence}, .count = 4, .first_output = 2,
                     .optional = 8u};
    if (!params)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm_cl: params is NULL");
    return pv_interop_device_call(ctx, "stereo_sgm_cl", &c, names, host_sgm, params, wait_count,
                                  wait_list, done);
}

static pv_status host_sad(pv_context *ctx, void *const *images, const void *args)
{
    return pv_stereo_sad(ctx, images[0], images[1], args, images[2]);
}

pv_status pv_stereo_sad_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                           const pv_sad_params *params, const pv_buffer *disparity,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"left", "right", "disparity"};
    call_images c = {.buffers = {left, right, disparity}, .count = 3, .first_output = 2};
    if (!params)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sad_cl: params is NULL");
    return pv_interop_device_call(ctx, "stereo_sad_cl", &c, names, host_sad, params, wait_count,
                                  wait_list, done);
}

static pv_status host_bp(pv_context *ctx, void *const *images, const void *args)
{
    return pv_stereo_bp(ctx, images[0], images[1], args, images[2]);
}

pv_status pv_stereo_bp_cl(pv_context *ctx, const pv_buffer *left, const pv_buffer *right,
                          const pv_bp_params *params, const pv_buffer *disparity,
                          cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"left", "right", "disparity"};
    call_images c = {.buffers = {left, right, disparity}, .count = 3, .first_output = 2};
    if (!params)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp_cl: params is NULL");
    return pv_interop_device_call(ctx, "stereo_bp_cl", &c, names, host_bp, params, wait_count,
                                  wait_list, done);
}

static pv_status host_grey(pv_context *ctx, void *const *images, const void *args)
{
    (void)args;
    return pv_to_grey(ctx, images[0], images[1]);
}

pv_status pv_to_grey_cl(pv_context *ctx, const pv_buffer *in, const pv_buffer *out,
                        cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"in", "out"};
    call_images c = {.buffers = {in, out}, .count = 2, .first_output = 1};
    return pv_interop_device_call(ctx, "to_grey_cl", &c, names, host_grey, NULL, wait_count,
                                  wait_list, done);
}

typedef struct blur_args {
    float sigma;
    int taps;
} blur_args;

static pv_status host_blur(pv_context *ctx, void *const *images, const void *args)
{
    const blur_args *a = args;
    return pv_gaussian_blur(ctx, images[0], images[1], a->sigma, a->taps);
}

pv_status pv_gaussian_blur_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *dst,
                              float sigma, int taps, cl_uint wait_count,
                              const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"src", "dst"};
    call_images c = {.buffers = {src, dst}, .count = 2, .first_output = 1};
    const blur_args args = {sigma, taps};
    return pv_interop_device_call(ctx, "gaussian_blur_cl", &c, names, host_blur, &args,
                                  wait_count, wait_list, done);
}

typedef struct blur3d_args {
    float sigma;
    int taps;
} blur3d_args;

static pv_status host_blur3d(pv_context *ctx, void *const *items, const void *args)
{
    const blur3d_args *a = args;
    return pv_gaussian_blur3d(ctx, items[0], items[1], a->sigma, a->taps);
}

pv_status pv_gaussian_blur3d_cl(pv_context *ctx, const pv_buffer *src, const pv_buffer *dst,
                                float sigma, int taps, cl_uint wait_count,
                                const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"src", "dst"};
    call_images c = {.buffers = {src, dst}, .count = 2, .first_output = 1, .volumes = 3u};
    const blur3d_args args = {sigma, taps};
    return pv_interop_device_call(ctx, "gaussian_blur3d_cl", &c, names, host_blur3d, &args,
                                  wait_count, wait_list, done);
}

static pv_status host_flow3d(pv_context *ctx, void *const *items, const void *args)
{
    pv_flow_field field;
    field.u = *(pv_volume *)items[2];
    field.v = *(pv_volume *)items[3];
    field.w = *(pv_volume *)items[4];
    return pv_flow3d(ctx, items[0], items[1], args, &field);
}

pv_status pv_flow3d_cl(pv_context *ctx, const pv_buffer *fixed, const pv_buffer *moving,
                       const pv_flow_params *params, const pv_buffer *u, const pv_buffer *v,
                       const pv_buffer *w, cl_uint wait_count, const cl_event *wait_list,
                       cl_event *done)
{
    static const char *const names[] = {"fixed", "moving", "u", "v", "w"};
    call_images c = {.buffers = {fixed, moving, u, v, w}, .count = 5, .first_output = 2,
                     .volumes = 31u};
    for (int i = 2; i < 5; i++)
        if (c.buffers[i] && c.buffers[i]->type != PV_PIXEL_F32)
            return pv_fail(ctx, PV_ERR_INVALID, "flow3d_cl: %s must hold F32 samples", names[i]);
    return pv_interop_device_call(ctx, "flow3d_cl", &c, names, host_flow3d, params, wait_count,
                                  wait_list, done);
}

