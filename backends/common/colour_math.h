/* The grey value of a pixel, shared by the CPU backend (compiled as C11)
 * and the OpenCL program kernels/colour.cl (which includes this file,
 * inlined by build-aux/embed-kernels.sh).  One text for both keeps the
 * float operations the same and in the same order, so the two backends'
 * grey images are bit-identical (the CPU build must not contract into
 * fused multiply-adds; the OpenCL program turns FP_CONTRACT off).
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls. */
#ifndef PV_BACKENDS_COLOUR_MATH_H
#define PV_BACKENDS_COLOUR_MATH_H

/* 16-bit samples times this land on the 0..255 range of 8-bit ones
 * (65535 / 257 = 255; an 8-bit value widened by 257 comes back). */
#define PV_CM_DEEP_SCALE (1.0f / 257.0f)

/* Rec. 601 luma, summed in this order. */
static inline float pv_cm_luma(float r, float g, float b)
{
    return 0.299f * r + 0.587f * g + 0.114f * b;
}

/* Grey value, on the 0..255 scale, of one grey 16-bit sample. */
static inline float pv_cm_grey16(float v)
{
    return v * PV_CM_DEEP_SCALE;
}

/* Grey value, on the 0..255 scale, of one 16-bit RGB pixel. */
static inline float pv_cm_rgb16(float r, float g, float b)
{
    return pv_cm_luma(r, g, b) * PV_CM_DEEP_SCALE;
}

#endif
