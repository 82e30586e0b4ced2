/* CPU colour: the grey conversion of parvis/colour.h, the oracle of
 * kernels/colour.cl (the same float operations, from
 * backends/common/colour_math.h). */
#include "colour.h"

static pv_status pv_cpu_colour_to_grey(pv_context *ctx, const pv_image *in, pv_image *out, float scale)
{
    const int threads = ctx->cpu_threads;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < in->height; y++) {
        float *row = (float *)out->data + (ptrdiff_t)y * out->stride;
        for (int x = 0; x < in->width; x++)
            row[x] = pv_cpu_grey_at(in, (ptrdiff_t)y * in->stride + x) * scale;
    }
    return PV_OK;
}

const pv_colour_ops pv_cpu_colour_ops = {PV_COLOUR_SLOTS(PV_OPS_BIND, pv_cpu_colour_)};
