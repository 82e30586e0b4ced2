/* Internal: the CPU backend's grey value of one pixel of any pixel type
 * (parvis/colour.h), shared by its colour module and the SIFT input, so
 * both convert with the same arithmetic as kernels/colour.cl. */
#ifndef PV_CPU_COLOUR_H
#define PV_CPU_COLOUR_H

#include "../cpu.h"
#include "../../common/colour_math.h"

#include <stdint.h>

/* The grey value (0..255 scale for integer types) of pixel i = y * stride
 * + x of a valid image. */
static inline float pv_cpu_grey_at(const pv_image *image, ptrdiff_t i)
{
    const uint8_t *u8 = image->data;
    const uint16_t *u16 = image->data;
    switch (image->type) {
    case PV_PIXEL_U8: return (float)u8[i];
    case PV_PIXEL_U16: return pv_cm_grey16((float)u16[i]);
    case PV_PIXEL_RGB8: return pv_cm_luma((float)u8[3 * i], (float)u8[3 * i + 1], (float)u8[3 * i + 2]);
    case PV_PIXEL_RGB16:
        return pv_cm_rgb16((float)u16[3 * i], (float)u16[3 * i + 1], (float)u16[3 * i + 2]);
    case PV_PIXEL_F32: break;
    }
    return ((const float *)image->data)[i];
}

#endif
