/* OpenCL colour: host side of kernels/colour.cl.  The input travels in its
 * own pixel type (a third of the bytes of floats for 8-bit colour, half
 * for 16-bit colour) and becomes grey on the device. */
#include "../opencl.h"

#include <stdint.h>

static const pv_cl_param_default colour_defaults[] = {
    {"COLOUR_WG", 256}, /* work items a group, one pixel each */
};

const pv_cl_param_family pv_cl_params_colour = {
    "colour", colour_defaults, sizeof colour_defaults / sizeof colour_defaults[0]};

static const char *kernel_for(pv_pixel_type type)
{
    switch (type) {
    case PV_PIXEL_U8: return "grey_u8";
    case PV_PIXEL_U16: return "grey_u16";
    case PV_PIXEL_RGB8: return "grey_rgb8";
    case PV_PIXEL_RGB16: return "grey_rgb16";
    case PV_PIXEL_F32: break;
    }
    return "grey_f32";
}

pv_status pv_cl_grey_into(pv_context *ctx, const pv_image *in, float scale, cl_mem dst)
{
    const size_t pixels = (size_t)in->width * (size_t)in->height;
    if (pixels > UINT32_MAX)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "to_grey: %dx%d pixels are too many", in->width,
                       in->height);
    const size_t pixel = pv_pixel_size(in->type);
    cl_mem raw;
    pv_status status = pv_cl_scratch(ctx, "colour.in", pixels * pixel, &raw);
    /* Through the pinned stages: an input sent on every call (runtime.h). */
    if (status == PV_OK)
        status = pv_cl_write_rows_staged(ctx, raw, (size_t)in->height, (size_t)in->width * pixel,
                                         (size_t)in->stride * pixel, in->data);
    if (status != PV_OK)
        return status;
    cl_uint count = (cl_uint)pixels;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(raw), PV_CL_ARG(dst), PV_CL_ARG(count),
                                     PV_CL_ARG(scale)};
    size_t local = (size_t)pv_cl_param(ctx, "colour", "COLOUR_WG", 1);
    return pv_cl_run(ctx, "colour", "colour", kernel_for(in->type), args, PV_CL_ARG_COUNT(args), 1,
                     &pixels, &local);
}

static pv_status pv_cl_colour_to_grey(pv_context *ctx, const pv_image *in, pv_image *out, float scale)
{
    cl_mem grey;
    const size_t bytes = (size_t)in->width * (size_t)in->height * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, "colour.out", bytes, &grey);
    if (status == PV_OK)
        status = pv_cl_grey_into(ctx, in, scale, grey);
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, grey, out);
    return pv_cl_finish_after(ctx, status);
}

const pv_colour_ops pv_cl_colour_ops = {PV_COLOUR_SLOTS(PV_OPS_BIND, pv_cl_colour_)};
