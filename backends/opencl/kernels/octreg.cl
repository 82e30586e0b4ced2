/* parvis octreg kernels: AO-OCT stripe-wise registration (per-plane
 * statistics, padding, unit-phase spectra, the coarse stripes' and the fine
 * planes' cross-power spectra, a two-stage arg-max per correlation map, and
 * the reconstruction: bilinear gather, normalisation, projections).
 *
 * Built with the "octreg" launch-parameter family as -D defines:
 *   OCT_WG                     1D element-wise kernels
 *   OCT_PAD_WG_X, OCT_PAD_WG_Y padding / gather work-group shape
 *   OCT_STATS_WG               per-plane statistics (power of two)
 *   OCT_REDUCE_WG              arg-max work-group size (power of two)
 *   (OCT_REDUCE_GROUPS, the first-stage groups per launch, is a host-side
 *   choice passed as an argument)
 *
 * Volumes are dense: `depth` values per A-line fastest, then A-lines, then
 * planes (B-scans).  A plane's transform grid is pd x pa; complex values are
 * float2; a half spectrum holds pd / 2 + 1 values per row.
 *
 * The CPU backend (backends/cpu/octreg/octreg.c) evaluates the same formulas with
 * the same operand order; contraction into fma is off so that the two agree
 * to the rounding of the FFT libraries. */
#pragma OPENCL FP_CONTRACT OFF

#define STATS_RECORD 5  /* mean, energy, lo, hi, finite */

/* ------------------------------------------------------------ statistics
 * One work-group per plane: mean, sum of squared deviations, extremes and
 * a finiteness flag.  Global (OCT_STATS_WG, planes). */
static float local_sum(__local float *values, float mine)
{
    const int lid = get_local_id(0);
    values[lid] = mine;
    for (int step = OCT_STATS_WG / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step)
            values[lid] = values[lid] + values[lid + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float total = values[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

static float local_extreme(__local float *values, float mine, int largest)
{
    const int lid = get_local_id(0);
    values[lid] = mine;
    for (int step = OCT_STATS_WG / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step)
            values[lid] = largest ? fmax(values[lid], values[lid + step])
                                  : fmin(values[lid], values[lid + step]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float total = values[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

__kernel __attribute__((reqd_work_group_size(OCT_STATS_WG, 1, 1)))
void oct_stats(__global const float *volume, uint plane_points, __global float *stats)
{
    __local float values[OCT_STATS_WG];
    const int lid = get_local_id(0);
    const uint plane = get_global_id(1);
    __global const float *data = volume + (size_t)plane * plane_points;
    float sum = 0.0f, lo = INFINITY, hi = -INFINITY, bad = 0.0f;
    for (uint i = lid; i < plane_points; i += OCT_STATS_WG) {
        float v = data[i];
        if (!isfinite(v))
            bad = 1.0f;
        sum = sum + v;
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    const float mean = local_sum(values, sum) / (float)plane_points;
    bad = local_extreme(values, bad, 1);
    lo = local_extreme(values, lo, 0);
    hi = local_extreme(values, hi, 1);
    float squares = 0.0f;
    for (uint i = lid; i < plane_points; i += OCT_STATS_WG) {
        float d = data[i] - mean;
        squares = squares + d * d;
    }
    squares = local_sum(values, squares);
    if (lid == 0) {
        __global float *record = stats + (size_t)plane * STATS_RECORD;
        record[0] = bad > 0.0f ? 0.0f : mean;
        record[1] = squares;
        record[2] = lo;
        record[3] = hi;
        record[4] = bad > 0.0f ? 0.0f : 1.0f;
    }
}

/* --------------------------------------------------------------- padding
 * Planes first .. first + count - 1 of the volume, each less its mean, into
 * a zero-padded grid of pd x pa x planes_out (planes past count are zero).
 * Global (pd, pa, planes_out). */
__kernel __attribute__((reqd_work_group_size(OCT_PAD_WG_X, OCT_PAD_WG_Y, 1)))
void oct_pad(__global const float *volume, __global const float *stats, int depth, int alines,
             int first, int count, int pd, int pa, int planes_out, __global float *dst,
             ulong dst_offset)
{
    const int d = get_global_id(0), a = get_global_id(1), p = get_global_id(2);
    if (d >= pd || a >= pa || p >= planes_out)
        return;
    float v = 0.0f;
    if (d < depth && a < alines && p < count) {
        const size_t plane = (size_t)(first + p);
        v = volume[(plane * alines + a) * depth + d] - stats[plane * STATS_RECORD];
    }
    dst[dst_offset + ((size_t)p * pa + a) * pd + d] = v;
}

/* ----------------------------------------------------------------- spectra */

/* out[out_offset + i] = F / |F|, 0 where |F|^2 <= limit.  Global (count). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_unit_phase(__global const float2 *spectrum, ulong in_offset, __global float2 *out,
                    ulong out_offset, uint count, float limit)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    float2 f = spectrum[in_offset + i];
    float m2 = f.x * f.x + f.y * f.y;
    float s = m2 > limit ? 1.0f / sqrt(m2) : 0.0f;
    out[out_offset + i] = (float2)(f.x * s, f.y * s);
}

/* scale * (m / |m|) * conj(f), f a unit phase: the same steps as the CPU. */
static float2 cross_power(float mr, float mi, float2 f, float scale)
{
    float m2 = mr * mr + mi * mi;
    float s = m2 > FLT_MIN ? scale / sqrt(m2) : 0.0f;
    mr = mr * s;
    mi = mi * s;
    return (float2)(mr * f.x + mi * f.y, mi * f.x - mr * f.y);
}

/* Coarse: stripe `slot` starts at plane starts[first + slot]; its 3D
 * spectrum at (plane bin i, ky) is the sum over its planes q of the plane
 * spectrum times twiddle[q][ky].  Global (plane_bins rounded up to the
 * work-group, coarse_depth, stripes in batch): the second axis is ky, so
 * no item divides its bin index and a group's twiddles are one value. */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_stripe_power(__global const float2 *planes, uint plane_bins, int plane_count,
                      __global const int *starts, int first, int width,
                      __global const float2 *twiddle, int coarse_depth,
                      __global const float2 *reference, uint bins, float scale,
                      __global float2 *out)
{
    const uint i = get_global_id(0), ky = get_global_id(1), slot = get_global_id(2);
    if (i >= plane_bins)
        return;
    const uint bin = ky * plane_bins + i;
    const int start = starts[first + slot];
    float mr = 0.0f, mi = 0.0f;
    for (int q = 0; q < width && start + q < plane_count; q++) {
        float2 m = planes[(size_t)(start + q) * plane_bins + i];
        float2 t = twiddle[(size_t)q * coarse_depth + ky];
        mr = mr + (m.x * t.x - m.y * t.y);
        mi = mi + (m.x * t.y + m.y * t.x);
    }
    out[(size_t)slot * bins + bin] = cross_power(mr, mi, reference[bin], scale);
}

/* The fine reference with its ky axis inverted, made once per sub-volume
 * when the plan is made: out[y][i] = sum over ky of conj(u[ky][i]) *
 * exp(+2 pi i ky y / width), u the sub-volume's unit-phase spectrum (width
 * planes of plane_bins bins).  A B-scan's spectrum is constant along ky, so
 * its cross-power spectrum's inverse along ky is the B-scan's unit phase
 * times this, and each fine batch needs only 2D inverse transforms.
 * Global (plane_bins rounded up to the work-group, width). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_sub_ky_inverse(__global const float2 *unit, ulong in_offset, uint plane_bins, int width,
                        __global float2 *out, ulong out_offset)
{
    const uint i = get_global_id(0);
    const int y = get_global_id(1);
    if (i >= plane_bins)
        return;
    float hr = 0.0f, hi = 0.0f;
    for (int ky = 0; ky < width; ky++) {
        float2 u = unit[in_offset + (size_t)ky * plane_bins + i];
        float turn = (float)(2u * ((uint)ky * (uint)y % (uint)width)) / (float)width;
        float c = cospi(turn), sn = sinpi(turn);
        hr = hr + (u.x * c + u.y * sn);
        hi = hi + (u.x * sn - u.y * c);
    }
    out[out_offset + (size_t)y * plane_bins + i] = (float2)(hr, hi);
}

/* scale * (m / |m|) * h, h a reference made by oct_sub_ky_inverse. */
static float2 scaled_product(float mr, float mi, float2 h, float scale)
{
    float m2 = mr * mr + mi * mi;
    float s = m2 > FLT_MIN ? scale / sqrt(m2) : 0.0f;
    mr = mr * s;
    mi = mi * s;
    return (float2)(mr * h.x - mi * h.y, mr * h.y + mi * h.x);
}

/* Fine: planes first .. first + slots - 1 (each constant along ky) against
 * their sub-volumes, one item per bin looping over the batch's planes.
 * ky_inverted: the references come from oct_sub_ky_inverse (the output is
 * then for 2D inverse transforms per ky slice), else they are unit-phase
 * spectra (the output is a 3D cross-power spectrum).
 * Neighbouring planes mostly share a sub-volume, so the reference value is
 * read again only when the sub-volume changes: the launch reads about one
 * reference spectrum instead of one per plane, the traffic that bounds it.
 * Global (bins). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_plane_power(__global const float2 *planes, uint plane_bins, __global const int *sub,
                     int first, int slots, __global const float2 *reference, uint bins,
                     float scale, int ky_inverted, __global float2 *out)
{
    const uint bin = get_global_id(0);
    if (bin >= bins)
        return;
    const uint i = bin % plane_bins;
    int loaded = -1;
    float2 f = (float2)(0.0f, 0.0f);
    for (int slot = 0; slot < slots; slot++) {
        const int plane = first + slot, s = sub[plane];
        if (s != loaded) {
            f = reference[(size_t)s * bins + bin];
            loaded = s;
        }
        float2 m = planes[(size_t)plane * plane_bins + i];
        out[(size_t)slot * bins + bin] = ky_inverted ? scaled_product(m.x, m.y, f, scale)
                                                     : cross_power(m.x, m.y, f, scale);
    }
}

/* ------------------------------------------------------------- arg-max */
#define ARGMAX_WG OCT_REDUCE_WG
#include "argmax.cl"

/* Keeps the first of equal maxima: items come in increasing index. */
static void take_first(float v, uint at, float *best, uint *best_index)
{
    if (v > *best) {
        *best = v;
        *best_index = at;
    }
}

/* Stage 1: `groups` groups per map, each item striding over the map by
 * groups * OCT_REDUCE_WG quads (float4), so a warp reads 512 contiguous
 * bytes per load and every item has two loads in flight.  A map whose
 * length is not a multiple of 4 (its start then not 16-byte aligned) is
 * read as floats.  Each item visits its elements in increasing index and
 * keeps the first of equal values; the merge (take_better: larger value,
 * then smaller index) therefore picks the first maximum in memory order,
 * the element argmax_partial and the CPU's peak search pick.  Global
 * (groups * OCT_REDUCE_WG, maps). */
__kernel __attribute__((reqd_work_group_size(OCT_REDUCE_WG, 1, 1)))
void oct_max_partial(__global const float *maps, uint count, uint groups,
                     __global float *part_values, __global uint *part_indices)
{
    __local float values[OCT_REDUCE_WG];
    __local uint indices[OCT_REDUCE_WG];
    const uint lid = get_local_id(0), group = get_group_id(0), map = get_global_id(1);
    const uint step = groups * OCT_REDUCE_WG, first = group * OCT_REDUCE_WG + lid;
    __global const float *data = maps + (size_t)map * count;
    float best = -INFINITY;
    uint best_index = UINT_MAX;
    if (count % 4 == 0) {
        __global const float4 *quads = (__global const float4 *)data;
        const uint n = count / 4;
        uint q = first;
        for (; q + step < n; q += 2 * step) {
            const float4 a = quads[q], b = quads[q + step];
            take_first(a.x, 4 * q, &best, &best_index);
            take_first(a.y, 4 * q + 1, &best, &best_index);
            take_first(a.z, 4 * q + 2, &best, &best_index);
            take_first(a.w, 4 * q + 3, &best, &best_index);
            const uint r = q + step;
            take_first(b.x, 4 * r, &best, &best_index);
            take_first(b.y, 4 * r + 1, &best, &best_index);
            take_first(b.z, 4 * r + 2, &best, &best_index);
            take_first(b.w, 4 * r + 3, &best, &best_index);
        }
        if (q < n) {
            const float4 a = quads[q];
            take_first(a.x, 4 * q, &best, &best_index);
            take_first(a.y, 4 * q + 1, &best, &best_index);
            take_first(a.z, 4 * q + 2, &best, &best_index);
            take_first(a.w, 4 * q + 3, &best, &best_index);
        }
    } else {
        for (uint i = first; i < count; i += step)
            take_first(data[i], i, &best, &best_index);
    }
    values[lid] = best;
    indices[lid] = best_index;
    reduce_local(values, indices);
    if (lid == 0) {
        part_values[(size_t)map * groups + group] = values[0];
        part_indices[(size_t)map * groups + group] = indices[0];
    }
}

/* Stage 2: one group per map reduces the partials, then records the peak
 * and its six wrapped neighbours at records[(first + map) * 7]: value, then
 * axis a's neighbour at index - 1 and + 1.  Global (OCT_REDUCE_WG, maps). */
__kernel __attribute__((reqd_work_group_size(OCT_REDUCE_WG, 1, 1)))
void oct_max_final(__global const float *part_values, __global const uint *part_indices,
                   uint groups, __global const float *maps, uint count, int nx, int ny, int nz,
                   int first, __global float *records, __global uint *peak_indices)
{
    __local float values[OCT_REDUCE_WG];
    __local uint indices[OCT_REDUCE_WG];
    const uint map = get_global_id(1);
    reduce_partials(part_values, part_indices, groups, map, values, indices);
    if (get_local_id(0) != 0)
        return;
    __global const float *data = maps + (size_t)map * count;
    const uint at = indices[0];
    const int x = at % nx, y = at / nx % ny, z = at / ((uint)nx * ny);
    __global float *record = records + (size_t)(first + map) * 7;
    record[0] = values[0];
    record[1] = data[grid_index(wrap(x - 1, nx), y, z, nx, ny)];
    record[2] = data[grid_index(wrap(x + 1, nx), y, z, nx, ny)];
    record[3] = data[grid_index(x, wrap(y - 1, ny), z, nx, ny)];
    record[4] = data[grid_index(x, wrap(y + 1, ny), z, nx, ny)];
    record[5] = data[grid_index(x, y, wrap(z - 1, nz), nx, ny)];
    record[6] = data[grid_index(x, y, wrap(z + 1, nz), nx, ny)];
    peak_indices[first + map] = at;
}

/* --------------------------------------------------------- reconstruction */

/* Bilinear sample of a plane at (depth pd, A-line pa); 0 outside. */
static int sample_plane(__global const float *plane, int depth, int alines, float pd, float pa,
                        float *value)
{
    if (!(pd >= 0.0f) || !(pa >= 0.0f) || pd > (float)(depth - 1) || pa > (float)(alines - 1))
        return 0;
    int d0 = (int)pd, a0 = (int)pa;
    int d1 = d0 + 1 < depth ? d0 + 1 : d0, a1 = a0 + 1 < alines ? a0 + 1 : a0;
    float fd = pd - (float)d0, fa = pa - (float)a0;
    __global const float *l0 = plane + (size_t)a0 * depth, *l1 = plane + (size_t)a1 * depth;
    float near = (1.0f - fd) * l0[d0] + fd * l0[d1];
    float far = (1.0f - fd) * l1[d0] + fd * l1[d1];
    *value = (1.0f - fa) * near + fa * far;
    return 1;
}

/* Output voxel (d, a, j) gathers the entries of reference plane j.
 * Global (depth, alines, planes). */
__kernel __attribute__((reqd_work_group_size(OCT_PAD_WG_X, OCT_PAD_WG_Y, 1)))
void oct_place(__global const float *volume, int depth, int alines, int planes,
               __global const int *plane_start, __global const int *plane_of,
               __global const float *weight_of, __global const float *offset, int reset,
               __global float *sum, __global float *weight)
{
    const int d = get_global_id(0), a = get_global_id(1), j = get_global_id(2);
    if (d >= depth || a >= alines || j >= planes)
        return;
    const size_t out = ((size_t)j * alines + a) * depth + d;
    float s = reset ? 0.0f : sum[out], w = reset ? 0.0f : weight[out];
    for (int e = plane_start[j]; e < plane_start[j + 1]; e++) {
        float v;
        __global const float *plane = volume + (size_t)plane_of[e] * alines * depth;
        if (!sample_plane(plane, depth, alines, (float)d + offset[2 * e],
                          (float)a + offset[2 * e + 1], &v))
            continue;
        s = s + weight_of[e] * v;
        w = w + weight_of[e];
    }
    sum[out] = s;
    weight[out] = w;
}

/* Registered voxel: sum / weight, or gap where nothing landed.
 * Global (count). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_normalize(__global const float *sum, __global const float *weight, uint count,
                   float gap, __global float *out)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    out[i] = weight[i] > 0.0f ? sum[i] / weight[i] : gap;
}

/* en face (a, j): mean over depth of the covered voxels.  Global
 * (alines * planes). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_enface(__global const float *sum, __global const float *weight, int depth, uint lines,
                float gap, __global float *out)
{
    const uint line = get_global_id(0);
    if (line >= lines)
        return;
    float total = 0.0f, covered = 0.0f;
    for (int d = 0; d < depth; d++) {
        size_t i = (size_t)line * depth + d;
        if (weight[i] > 0.0f) {
            total = total + sum[i] / weight[i];
            covered = covered + 1.0f;
        }
    }
    out[line] = covered > 0.0f ? total / covered : gap;
}

/* slow B-scan (j, d) at out[d * planes + j]: mean over A-lines of the
 * covered voxels.  Global (planes * depth). */
__kernel __attribute__((reqd_work_group_size(OCT_WG, 1, 1)))
void oct_slow(__global const float *sum, __global const float *weight, int depth, int alines,
              int planes, float gap, __global float *out)
{
    const uint cell = get_global_id(0);
    if (cell >= (uint)planes * depth)
        return;
    const int j = cell / depth, d = cell % depth;
    float total = 0.0f, covered = 0.0f;
    for (int a = 0; a < alines; a++) {
        size_t i = ((size_t)j * alines + a) * depth + d;
        if (weight[i] > 0.0f) {
            total = total + sum[i] / weight[i];
            covered = covered + 1.0f;
        }
    }
    out[(size_t)d * planes + j] = covered > 0.0f ? total / covered : gap;
}
