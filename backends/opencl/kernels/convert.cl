/* parvis sample conversions of uploads (backends/opencl/runtime/
 * runtime_convert.c).
 *
 * u16_to_f32: count unsigned 16-bit samples, uploaded as stored, into
 * floats at dst + offset.  The conversion is exact (every value up to
 * 65535 is a float), so the device's floats equal the host's. */

__kernel void u16_to_f32(__global const ushort *src, __global float *dst, ulong offset,
                         ulong count)
{
    size_t i = get_global_id(0);
    if (i < count)
        dst[offset + i] = (float)src[i];
}
