/* parvis register kernels: phase correlation (padding and windowing,
 * unit-phase spectra, the normalized cross-power spectrum, a single-pass
 * arg-max by 64-bit atomics (a two-stage one without them), matrix-multiply DFTs for sub-pixel refinement),
 * masked phase correlation (the six padded inputs, the six conjugate
 * products, the score of backends/common/masked_ncc.h) and
 * normxcorr2 (spectrum product, integral images by row scans and column
 * sums, the coefficient map) and masked normxcorr2 (direct sums,
 * backends/common/ncc_masked.h).
 *
 * Built with the "register" launch-parameter family as -D defines:
 *   PC_WG                       1D element-wise kernels
 *   PC_PAD_WG_X, PC_PAD_WG_Y    padding kernel work-group shape
 *   PC_REDUCE_WG                arg-max work-group size (power of two)
 *   PC_REDUCE_ATOMIC            (host only) 1: single-pass arg-max where the
 *                               device has cl_khr_int64_extended_atomics
 *   PC_DFT_WG                   DFT contraction work-group size
 *   NCC_SCAN_WG                 row-scan work-group size (power of two)
 *   NCC_COL_WG                  column-sum work-group size
 *   NCC_WG_X, NCC_WG_Y          coefficient kernels' work-group shape
 *
 * Volumes are dense, x fastest; a transform grid of extent (px, py, pz)
 * holds one mover; batches are such grids back to back.  Complex values are
 * float2 (re, im); half spectra hold px / 2 + 1 values per row.
 *
 * The CPU backend (backends/cpu/register/register.c) evaluates the same formulas
 * with the same operand order; contraction into fma is switched off so the
 * two agree to rounding of the library calls. */
#pragma OPENCL FP_CONTRACT OFF

/* ------------------------------------------------------------- padding
 * dst[(z * py + y) * px + x] = (src[x + nx * (y + ny * z)] - mean) * window
 * inside the input extent, 0 outside.  window: nx weights for x, then ny for y,
 * then nz for z (read only when windowed != 0).
 * Global (px, py, pz). */
__kernel __attribute__((reqd_work_group_size(PC_PAD_WG_X, PC_PAD_WG_Y, 1)))
void pc_pad(__global const float *src, ulong src_offset, __global float *dst, ulong dst_offset,
            int nx, int ny, int nz, int px, int py, int pz, float mean,
            __global const float *window, int windowed)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= px || y >= py || z >= pz)
        return;
    float v = 0.0f;
    if (x < nx && y < ny && z < nz) {
        v = src[src_offset + (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z)] - mean;
        if (windowed) {
            float w = window[x] * window[nx + y] * window[nx + ny + z];
            v = v * w;
        }
    }
    dst[dst_offset + (size_t)x + (size_t)px * ((size_t)y + (size_t)py * (size_t)z)] = v;
}

/* ----------------------------------------------------------- spectra */

/* out = F / |F|, 0 where |F|^2 <= limit; empty bins are counted into
 * *empty with the number of full-spectrum bins each stands for (2, except
 * in column 0 and the Nyquist column, which is kx - 1 for even px, else
 * -1).  Global (count). */
__kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
void pc_unit_phase(__global const float2 *spectrum, __global float2 *out, uint count, uint kx,
                   int nyquist_column, float limit, __global int *empty)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    float2 f = spectrum[i];
    float m2 = f.x * f.x + f.y * f.y;
    float s = 0.0f;
    if (m2 > limit) {
        s = 1.0f / sqrt(m2);
    } else {
        const int column = i % kx;
        atomic_add(empty, column == 0 || column == nyquist_column ? 1 : 2);
    }
    out[i] = (float2)(f.x * s, f.y * s);
}

/* spectra[b][i] <- scale * (M / |M|) * conj(reference[i]) for the first
 * `total` values (count per mover); copied into kept when keep != 0.
 * scale = 1 / (points - *empty), the non-empty reference bins, read here
 * so that no host round trip separates the reference from the movers.
 * The first `maps` work items also clear the arg-max keys of the
 * reduction that follows the inverse transform.  Global (total). */
__kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
void pc_cross_power(__global float2 *spectra, __global const float2 *reference,
                    __global float2 *kept, int keep, uint count, uint total,
                    __global const int *empty, uint points, __global ulong *peak_keys, uint maps)
{
    const uint i = get_global_id(0);
    if (i < maps)
        peak_keys[i] = 0;
    if (i >= total)
        return;
    const long filled = (long)points - (long)*empty;
    const float scale = filled > 0 ? 1.0f / (float)filled : 0.0f;
    float2 m = spectra[i];
    float m2 = m.x * m.x + m.y * m.y;
    float s = m2 > FLT_MIN ? scale / sqrt(m2) : 0.0f;
    float mr = m.x * s, mi = m.y * s;
    float2 f = reference[i % count];
    float re = mr * f.x + mi * f.y;
    float im = mi * f.x - mr * f.y;
    spectra[i] = (float2)(re, im);
    if (keep)
        kept[i] = (float2)(re, im);
}

/* ------------------------------------------------------------ arg-max */
#define ARGMAX_WG PC_REDUCE_WG
#include "argmax.cl"

/* The peak record of one map, 8 words: the peak value and its six
 * neighbours (wrapped) as float bits, then the peak's index:
 * record[0] = value, record[1 + 2a + side] = neighbour along axis a on
 * side -1 / +1, record[7] = index. */
static void write_record(__global const float *data, uint at, int px, int py, int pz,
                         __global uint *record)
{
    const int x = at % px, y = at / px % py, z = at / ((uint)px * py);
    record[0] = as_uint(data[at]);
    record[1] = as_uint(data[grid_index(wrap(x - 1, px), y, z, px, py)]);
    record[2] = as_uint(data[grid_index(wrap(x + 1, px), y, z, px, py)]);
    record[3] = as_uint(data[grid_index(x, wrap(y - 1, py), z, px, py)]);
    record[4] = as_uint(data[grid_index(x, wrap(y + 1, py), z, px, py)]);
    record[5] = as_uint(data[grid_index(x, y, wrap(z - 1, pz), px, py)]);
    record[6] = as_uint(data[grid_index(x, y, wrap(z + 1, pz), px, py)]);
    record[7] = at;
}

/* Stage 2 (devices without 64-bit atomics): one group per map reduces the
 * partials, then writes the map's peak record.  Global (PC_REDUCE_WG, batch). */
__kernel __attribute__((reqd_work_group_size(PC_REDUCE_WG, 1, 1)))
void pc_max_final(__global const float *part_values, __global const uint *part_indices,
                  uint groups, __global const float *maps, uint count, int px, int py, int pz,
                  __global uint *records)
{
    __local float values[PC_REDUCE_WG];
    __local uint indices[PC_REDUCE_WG];
    const uint map = get_global_id(1);
    reduce_partials(part_values, part_indices, groups, map, values, indices);
    if (get_local_id(0) == 0)
        write_record(maps + (size_t)map * count, indices[0], px, py, pz, records + map * 8);
}

#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

/* (value, index) as one 64-bit key whose unsigned order is the arg-max
 * order: the float's bits made monotonic in the high word, the complement
 * of the index in the low word, so equal values go to the smaller index.
 * -0 counts as +0, as in the CPU's comparison.  Key 0 is below them all. */
static ulong peak_key(float value, uint index)
{
    if (value == 0.0f)
        value = 0.0f;
    const uint bits = as_uint(value);
    const uint ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    return ((ulong)ordered << 32) | (ulong)(~index);
}

/* Single-pass arg-max: each group reduces its strided share of map b in
 * local memory, then folds its winner into keys[b] with one atom_max, so
 * no second pass over partial results is needed.  keys must be 0 before
 * (pc_cross_power clears them).  Global (groups * PC_REDUCE_WG, batch). */
__kernel __attribute__((reqd_work_group_size(PC_REDUCE_WG, 1, 1)))
void pc_max_atomic(__global const float *maps, uint count, uint groups,
                   __global ulong *keys)
{
    __local float values[PC_REDUCE_WG];
    __local uint indices[PC_REDUCE_WG];
    const uint group = get_group_id(0), map = get_global_id(1);
    reduce_strided(maps + (size_t)map * count, count, group, groups, values, indices);
    if (get_local_id(0) == 0 && indices[0] != UINT_MAX)
        atom_max(&keys[map], peak_key(values[0], indices[0]));
}

/* The peak record of each map from its key.  Global (batch). */
__kernel void pc_peak_record(__global const ulong *keys, __global const float *maps, uint count,
                             uint batch, int px, int py, int pz, __global uint *records)
{
    const uint map = get_global_id(0);
    if (map >= batch)
        return;
    const uint at = ~(uint)keys[map];
    write_record(maps + (size_t)map * count, at, px, py, pz, records + map * 8);
}
#endif

/* ------------------------------------------------------ upsampled DFT
 * out[w * outer + o] = sum_k table[w * stored + k] * in[in_offset + o * stored + k]:
 * contracting the fastest axis moves the next one to the front, so three
 * launches evaluate the separable 3D DFT on a small grid.
 * Global (outer, count). */
__kernel __attribute__((reqd_work_group_size(PC_DFT_WG, 1, 1)))
void pc_dft_contract(__global const float2 *in, ulong in_offset, uint outer, int stored,
                     __global const float2 *table, int count, __global float2 *out)
{
    const uint o = get_global_id(0), w = get_global_id(1);
    if (o >= outer || w >= (uint)count)
        return;
    __global const float2 *t = table + (size_t)w * stored;
    __global const float2 *x = in + in_offset + (size_t)o * stored;
    float re = 0.0f, im = 0.0f;
    for (int k = 0; k < stored; k++) {
        float2 a = t[k], b = x[k];
        re = re + (a.x * b.x - a.y * b.y);
        im = im + (a.x * b.y + a.y * b.x);
    }
    out[(size_t)w * outer + o] = (float2)(re, im);
}

/* ---------------------------------------------------------------- NCC */

/* a <- a * conj(t) * scale.  Global (count). */
__kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
void ncc_product(__global float2 *a, __global const float2 *t, uint count, float scale)
{
    const uint i = get_global_id(0);
    if (i >= count)
        return;
    float2 p = a[i], q = t[i];
    a[i] = (float2)((p.x * q.x + p.y * q.y) * scale, (p.y * q.x - p.x * q.y) * scale);
}

/* Row r > 0 of the (w+1) x (h+1) table gets the exclusive prefix sums of
 * source row r - 1 (of its squares when squared != 0); row 0 is zeros.
 * One group per table row scans NCC_SCAN_WG values at a time (Hillis and
 * Steele) and carries the running total.  Global (NCC_SCAN_WG, h + 1). */
__kernel __attribute__((reqd_work_group_size(NCC_SCAN_WG, 1, 1)))
void ncc_prefix_rows(__global const float *src, int w, int h, int squared,
                     __global float *table)
{
    __local float buf[NCC_SCAN_WG];
    const int lid = get_local_id(0), r = get_global_id(1);
    __global float *out = table + (size_t)r * (w + 1);
    if (r == 0) {
        for (int x = lid; x <= w; x += NCC_SCAN_WG)
            out[x] = 0.0f;
        return;
    }
    __global const float *row = src + (size_t)(r - 1) * w;
    if (lid == 0)
        out[0] = 0.0f;
    float carry = 0.0f;
    for (int x0 = 0; x0 < w; x0 += NCC_SCAN_WG) {
        float v = x0 + lid < w ? row[x0 + lid] : 0.0f;
        buf[lid] = squared ? v * v : v;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int offset = 1; offset < NCC_SCAN_WG; offset <<= 1) {
            float add = lid >= offset ? buf[lid - offset] : 0.0f;
            barrier(CLK_LOCAL_MEM_FENCE);
            buf[lid] = buf[lid] + add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (x0 + lid < w)
            out[x0 + lid + 1] = carry + buf[lid];
        carry = carry + buf[NCC_SCAN_WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Column sums in ascending row order, one work item per column.
 * Global (w + 1). */
__kernel __attribute__((reqd_work_group_size(NCC_COL_WG, 1, 1)))
void ncc_prefix_cols(__global float *table, int w, int h)
{
    const int x = get_global_id(0);
    if (x > w)
        return;
    const size_t pitch = (size_t)w + 1;
    for (int y = 1; y <= h; y++)
        table[y * pitch + x] = table[y * pitch + x] + table[(y - 1) * pitch + x];
}

static float box_sum(__global const float *table, int pitch, int x0, int y0, int x1, int y1)
{
    return ((table[(size_t)y1 * pitch + x1] - table[(size_t)y0 * pitch + x1]) -
            table[(size_t)y1 * pitch + x0]) +
           table[(size_t)y0 * pitch + x0];
}

/* Coefficient at map position (u, v): the template's top-left corner at
 * image position (u - tw + 1, v - th + 1), means and variances over the
 * overlap only.  cross: the circular cross-correlation on the (pw, ph)
 * grid.  Global (iw + tw - 1, ih + th - 1). */
__kernel __attribute__((reqd_work_group_size(NCC_WG_X, NCC_WG_Y, 1)))
void ncc_coefficients(__global const float *cross, __global const float *sum_i,
                      __global const float *sum_i2, __global const float *sum_t,
                      __global const float *sum_t2, int iw, int ih, int tw, int th, int pw,
                      int ph, int min_overlap, float image_floor, float templ_floor,
                      __global float *map)
{
    const int u = get_global_id(0), v = get_global_id(1);
    const int mw = iw + tw - 1, mh = ih + th - 1;
    if (u >= mw || v >= mh)
        return;
    const int ox = u - (tw - 1), oy = v - (th - 1);
    const int x0 = max(0, ox), x1 = min(iw, ox + tw);
    const int y0 = max(0, oy), y1 = min(ih, oy + th);
    const int n = (x1 - x0) * (y1 - y0);
    float coefficient = 0.0f;
    if (n >= min_overlap) {
        float si = box_sum(sum_i, iw + 1, x0, y0, x1, y1);
        float si2 = box_sum(sum_i2, iw + 1, x0, y0, x1, y1);
        float st = box_sum(sum_t, tw + 1, x0 - ox, y0 - oy, x1 - ox, y1 - oy);
        float st2 = box_sum(sum_t2, tw + 1, x0 - ox, y0 - oy, x1 - ox, y1 - oy);
        int cx = ox < 0 ? ox + pw : ox, cy = oy < 0 ? oy + ph : oy;
        float c = cross[(size_t)cy * pw + cx];
        float inv_n = 1.0f / (float)n;
        float var_i = si2 - si * si * inv_n;
        float var_t = st2 - st * st * inv_n;
        if (var_i > image_floor && var_t > templ_floor) {
            coefficient = (c - si * st * inv_n) / sqrt(var_i * var_t);
            coefficient = clamp(coefficient, -1.0f, 1.0f);
        }
    }
    map[(size_t)v * mw + u] = coefficient;
}

/* ------------------------------------------------------ masked NCC
 * Direct sums per map point (backends/common/ncc_masked.h, shared with the
 * CPU backend, says why not by FFT).  Dense template and image, 0 outside
 * their masks, and the masks as 0 / 1.  Global (iw + tw - 1, ih + th - 1). */
#define NCC_GLOBAL __global
#define NCC_SQRT(x) sqrt(x)
#include "../../common/ncc_masked.h"

__kernel __attribute__((reqd_work_group_size(NCC_WG_X, NCC_WG_Y, 1)))
void ncc_masked(__global const float *templ, __global const float *templ_mask, int tw, int th,
                __global const float *image, __global const float *image_mask, int iw, int ih,
                int min_overlap, float floor_ratio, __global float *map)
{
    const int u = get_global_id(0), v = get_global_id(1);
    const int mw = iw + tw - 1, mh = ih + th - 1;
    if (u >= mw || v >= mh)
        return;
    const ncc_masked_side t = {templ, templ_mask, tw, th};
    const ncc_masked_side i = {image, image_mask, iw, ih};
    map[(size_t)v * mw + u] = ncc_masked_coefficient(t, i, u, v, min_overlap, floor_ratio);
}

/* ------------------------------------------- masked phase correlation
 * Six maps of the transform grid back to back (lib/core/ops_register.h,
 * pv_pcm_job): the inputs f, f^2, A (reference side) and m, m^2, B
 * (moving side), then in the same slots the correlations count, sum_m,
 * sum_f, cross, sum_m2, sum_f2, then the score in slot 0. */
#define PCM_SQRT(x) sqrt(x)
#define PCM_RINT(x) rint(x)
#include "../../common/masked_ncc.h"

/* The six padded inputs from staging: f, A, m, B dense (n values each,
 * back to back).  Global (px, py, pz). */
__kernel __attribute__((reqd_work_group_size(PC_PAD_WG_X, PC_PAD_WG_Y, 1)))
void pcm_load(__global const float *staging, __global float *maps, int nx, int ny, int nz,
              int px, int py, int pz)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= px || y >= py || z >= pz)
        return;
    const size_t points = (size_t)px * py * pz;
    const size_t at = (size_t)x + (size_t)px * ((size_t)y + (size_t)py * (size_t)z);
    float f = 0.0f, a = 0.0f, m = 0.0f, b = 0.0f;
    if (x < nx && y < ny && z < nz) {
        const size_t n = (size_t)nx * ny * nz;
        const size_t in = (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
        f = staging[in];
        a = staging[n + in];
        m = staging[2 * n + in];
        b = staging[3 * n + in];
    }
    maps[at] = f;
    maps[points + at] = f * f;
    maps[2 * points + at] = a;
    maps[3 * points + at] = m;
    maps[4 * points + at] = m * m;
    maps[5 * points + at] = b;
}

/* In place per bin: count B.A*, sum_m M.A*, sum_f B.F*, cross M.F*,
 * sum_m2 M2.A*, sum_f2 B.F2*, times scale (the CPU's pcm_products).
 * spectra: six half spectra of `bins` values.  Global (bins). */
static float2 pcm_conj_product(float2 a, float2 b, float scale)
{
    return (float2)((a.x * b.x + a.y * b.y) * scale, (a.y * b.x - a.x * b.y) * scale);
}

__kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
void pcm_products(__global float2 *spectra, uint bins, float scale)
{
    const uint i = get_global_id(0);
    if (i >= bins)
        return;
    const float2 f = spectra[i], f2 = spectra[(size_t)bins + i];
    const float2 a = spectra[2 * (size_t)bins + i];
    const float2 m = spectra[3 * (size_t)bins + i], m2 = spectra[4 * (size_t)bins + i];
    const float2 b = spectra[5 * (size_t)bins + i];
    spectra[i] = pcm_conj_product(b, a, scale);
    spectra[(size_t)bins + i] = pcm_conj_product(m, a, scale);
    spectra[2 * (size_t)bins + i] = pcm_conj_product(b, f, scale);
    spectra[3 * (size_t)bins + i] = pcm_conj_product(m, f, scale);
    spectra[4 * (size_t)bins + i] = pcm_conj_product(m2, a, scale);
    spectra[5 * (size_t)bins + i] = pcm_conj_product(b, f2, scale);
}

/* One group: the best of the partials into record[slot] (value bits) and
 * record[slot + 1] (index).  Global (PC_REDUCE_WG). */
__kernel __attribute__((reqd_work_group_size(PC_REDUCE_WG, 1, 1)))
void pcm_max_final(__global const float *part_values, __global const uint *part_indices,
                   uint groups, __global uint *record, uint slot)
{
    __local float values[PC_REDUCE_WG];
    __local uint indices[PC_REDUCE_WG];
    reduce_partials(part_values, part_indices, groups, 0, values, indices);
    if (get_local_id(0) == 0) {
        record[slot] = as_uint(values[0]);
        record[slot + 1] = indices[0];
    }
}

/* The score of each point into slot 0; the largest count is
 * rint(record[0]) (pcm_max_final over slot 0's counts).  Global (points). */
__kernel __attribute__((reqd_work_group_size(PC_WG, 1, 1)))
void pcm_scores(__global float *maps, uint points, __global const uint *record, float ratio,
                float moving_floor, float reference_floor)
{
    const uint i = get_global_id(0);
    if (i >= points)
        return;
    const float threshold = ratio * rint(as_float(record[0]));
    const size_t n = points;
    maps[i] = pcm_score(maps[i], maps[n + i], maps[2 * n + i], maps[3 * n + i], maps[4 * n + i],
                        maps[5 * n + i], threshold, moving_floor, reference_floor);
}
