/* parvis colour kernels: the grey value of each pixel of a densely packed
 * image (parvis/colour.h), times `scale`, into a dense float image.  The
 * arithmetic is backends/common/colour_math.h, shared with the CPU
 * backend; FP_CONTRACT is off so both give the same bits.
 *
 * Built with the "colour" launch-parameter family as -D defines:
 *   COLOUR_WG   work items a group (one pixel each, 1D over the image). */
#pragma OPENCL FP_CONTRACT OFF

#include "../../common/colour_math.h"

__kernel void grey_u8(__global const uchar *src, __global float *dst, uint count, float scale)
{
    const size_t i = get_global_id(0);
    if (i < count)
        dst[i] = convert_float(src[i]) * scale;
}

__kernel void grey_f32(__global const float *src, __global float *dst, uint count, float scale)
{
    const size_t i = get_global_id(0);
    if (i < count)
        dst[i] = src[i] * scale;
}

__kernel void grey_u16(__global const ushort *src, __global float *dst, uint count, float scale)
{
    const size_t i = get_global_id(0);
    if (i < count)
        dst[i] = pv_cm_grey16(convert_float(src[i])) * scale;
}

__kernel void grey_rgb8(__global const uchar *src, __global float *dst, uint count, float scale)
{
    const size_t i = get_global_id(0);
    if (i < count)
        dst[i] = pv_cm_luma(convert_float(src[3 * i]), convert_float(src[3 * i + 1]),
                            convert_float(src[3 * i + 2])) * scale;
}

__kernel void grey_rgb16(__global const ushort *src, __global float *dst, uint count, float scale)
{
    const size_t i = get_global_id(0);
    if (i < count)
        dst[i] = pv_cm_rgb16(convert_float(src[3 * i]), convert_float(src[3 * i + 1]),
                             convert_float(src[3 * i + 2])) * scale;
}
