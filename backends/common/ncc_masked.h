/* The coefficient of one point of the masked normxcorr2 map, shared by the
 * CPU backend (backends/cpu/register/register.c, compiled as C11) and the
 * OpenCL program (kernels/register.cl, which includes this file), so that
 * both backends sum the same pixels in the same order.
 *
 * Inputs (lib/core/ops_register.h, pv_ncc_masked_job): the dense template
 * t (tw x th) and image i (iw x ih), each 0 outside its mask, and the
 * masks tm and im as 0 / 1.  Map point (u, v) puts the template's top-left
 * corner at image position (u - tw + 1, v - th + 1); its overlap is the
 * template pixels inside the image where both masks are 1.
 *
 * The sums run directly over the overlap, in two passes: the count and
 * the two sums give the overlap's means, then the centred squares and the
 * centred cross products are summed.  Summing deviations from the
 * overlap's own means keeps the variances accurate to float rounding of
 * the deviations themselves, where the one-pass form (sum of squares less
 * the squared sum over n) or a sum computed by FFT (rounding of the order
 * of the whole image's energy) would lose the small variances of small
 * or flat overlaps; the cost is two reads of each overlap.
 *
 * The includer defines first:
 *   NCC_GLOBAL        the address space of the arrays (OpenCL __global)
 *   NCC_SQRT(x)       the square root of a float
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls. */
#ifndef PV_BACKENDS_NCC_MASKED_H
#define PV_BACKENDS_NCC_MASKED_H

/* The two arrays of one side and its extent. */
typedef struct ncc_masked_side {
    NCC_GLOBAL const float *values;
    NCC_GLOBAL const float *mask;
    int width, height;
} ncc_masked_side;

static inline int ncc_masked_max(int a, int b) { return a > b ? a : b; }
static inline int ncc_masked_min(int a, int b) { return a < b ? a : b; }

/* The overlap of map point (u, v) in template coordinates: columns
 * [x0, x1), rows [y0, y1); (ox, oy) the template's corner in the image. */
typedef struct ncc_masked_overlap {
    int ox, oy, x0, x1, y0, y1;
} ncc_masked_overlap;

static inline ncc_masked_overlap ncc_masked_overlap_at(ncc_masked_side templ,
                                                       ncc_masked_side image, int u, int v)
{
    ncc_masked_overlap o;
    o.ox = u - (templ.width - 1);
    o.oy = v - (templ.height - 1);
    o.x0 = ncc_masked_max(0, -o.ox);
    o.x1 = ncc_masked_min(templ.width, image.width - o.ox);
    o.y0 = ncc_masked_max(0, -o.oy);
    o.y1 = ncc_masked_min(templ.height, image.height - o.oy);
    return o;
}

/* The coefficient from the second pass's centred sums: 0 where either
 * side's centred square sum is not above floor_ratio times its plain
 * square sum (no variance: the overlap is flat to float rounding), else
 * clipped to [-1, 1]. */
static inline float ncc_masked_finish(float var_t, float var_i, float cross, float mean_t,
                                      float sum_t, float mean_i, float sum_i, float floor_ratio)
{
    /* The plain square sums over the overlap, from the centred ones. */
    const float square_t = var_t + mean_t * sum_t, square_i = var_i + mean_i * sum_i;
    if (!(var_t > floor_ratio * square_t) || !(var_i > floor_ratio * square_i))
        return 0.0f;
    const float c = cross / NCC_SQRT(var_t * var_i);
    return c > 1.0f ? 1.0f : c < -1.0f ? -1.0f : c;
}

/* The coefficient at map point (u, v): 0 where the overlap has fewer than
 * min_overlap pixels (or none), else ncc_masked_finish's.  A caller that
 * evaluates several points at once (the CPU backend's lanes) repeats these
 * operations in this order per point, so that it gives the same bits. */
static inline float ncc_masked_coefficient(ncc_masked_side templ, ncc_masked_side image, int u,
                                           int v, int min_overlap, float floor_ratio)
{
    const ncc_masked_overlap o = ncc_masked_overlap_at(templ, image, u, v);
    const int tw = templ.width;
    int count = 0;
    float sum_t = 0.0f, sum_i = 0.0f;
    for (int y = o.y0; y < o.y1; y++) {
        const int t_row = y * tw, i_row = (y + o.oy) * image.width + o.ox;
        for (int x = o.x0; x < o.x1; x++) {
            const float both = templ.mask[t_row + x] * image.mask[i_row + x];
            count += both != 0.0f;
            sum_t = sum_t + both * templ.values[t_row + x];
            sum_i = sum_i + both * image.values[i_row + x];
        }
    }
    if (count < 1 || count < min_overlap)
        return 0.0f;
    const float mean_t = sum_t / (float)count, mean_i = sum_i / (float)count;
    float var_t = 0.0f, var_i = 0.0f, cross = 0.0f;
    for (int y = o.y0; y < o.y1; y++) {
        const int t_row = y * tw, i_row = (y + o.oy) * image.width + o.ox;
        for (int x = o.x0; x < o.x1; x++) {
            const float both = templ.mask[t_row + x] * image.mask[i_row + x];
            const float dt = both * (templ.values[t_row + x] - mean_t);
            const float di = both * (image.values[i_row + x] - mean_i);
            var_t = var_t + dt * dt;
            var_i = var_i + di * di;
            cross = cross + dt * di;
        }
    }
    return ncc_masked_finish(var_t, var_i, cross, mean_t, sum_t, mean_i, sum_i, floor_ratio);
}

#endif
