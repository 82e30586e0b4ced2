/* parvis: passes over a caller's buffer in a device-buffer call
 * (backends/opencl/interop/interop_rows.c; what each computes is in
 * lib/core/ops_interop.h).
 *
 * One work item a row, its samples taken in order and added in double:
 * the same additions, in the same order, as the front end's passes on the
 * host (lib/register/register_input.c, lib/register/ncc.c), so the sums
 * agree bit for bit once the host adds the rows in order.  Contraction
 * into fused multiply-adds is off for the same reason: the host rounds
 * each product.
 *
 * src is the buffer, first the element index of the input's first sample
 * (its byte offset over the sample size), type 0: u8, 1: u16, 2: f32;
 * rows are ny * nz, row r starting at first + (r / ny) stride_z +
 * (r % ny) stride_y. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

inline float sample_at(__global const uchar *src, int type, long at)
{
    if (type == 0)
        return (float)src[at];
    if (type == 1)
        return (float)((__global const ushort *)src)[at];
    return ((__global const float *)src)[at];
}

inline long row_start(ulong first, int row, int ny, long stride_y, long stride_z)
{
    return (long)first + (long)(row / ny) * stride_z + (long)(row % ny) * stride_y;
}

/* Per row: the sum, the range, the first x of the largest value and
 * whether every sample is finite. */
__kernel void row_stats(__global const uchar *src, ulong first, int type, int nx, int ny,
                        int rows, long stride_y, long stride_z, __global double *sums,
                        __global float *lo, __global float *hi, __global int *hi_at,
                        __global int *finite)
{
    const int r = (int)get_global_id(0);
    if (r >= rows)
        return;
    const long start = row_start(first, r, ny, stride_y, stride_z);
    double sum = 0.0;
    float least = INFINITY, most = -INFINITY;
    int all_finite = 1, most_at = 0;
    for (int x = 0; x < nx; x++) {
        const float v = sample_at(src, type, start + x);
        all_finite &= isfinite(v) != 0;
        least = v < least ? v : least;
        most_at = v > most ? x : most_at;
        most = v > most ? v : most;
        sum += (double)v;
    }
    sums[r] = sum;
    lo[r] = least;
    hi[r] = most;
    hi_at[r] = most_at;
    finite[r] = all_finite;
}

/* Per row: the sum of ((v - mean) w)^2, w the product of the three axes'
 * weights (windows: nx, then ny, then nz floats) when windowed, else 1. */
__kernel void row_energy(__global const uchar *src, ulong first, int type, int nx, int ny,
                         int rows, long stride_y, long stride_z, double mean,
                         __global const float *windows, int windowed, __global double *out)
{
    const int r = (int)get_global_id(0);
    if (r >= rows)
        return;
    const long start = row_start(first, r, ny, stride_y, stride_z);
    const int y = r % ny, z = r / ny;
    double sum = 0.0;
    for (int x = 0; x < nx; x++) {
        double d = (double)sample_at(src, type, start + x) - mean;
        if (windowed)
            d *= (double)windows[x] * (double)windows[nx + y] * (double)windows[nx + ny + z];
        sum += d * d;
    }
    out[r] = sum;
}

/* dst (dense, x fastest) = (float)((v - mean) * scale); global: nx, rows. */
__kernel void to_f32(__global const uchar *src, ulong first, int type, int nx, int ny, int rows,
                     long stride_y, long stride_z, double mean, double scale,
                     __global float *dst)
{
    const int x = (int)get_global_id(0), r = (int)get_global_id(1);
    if (x >= nx || r >= rows)
        return;
    const long at = row_start(first, r, ny, stride_y, stride_z) + x;
    const double centred = (double)sample_at(src, type, at) - mean;
    dst[(size_t)r * (size_t)nx + (size_t)x] = (float)(centred * scale);
}

/* Masked passes (masked phase correlation, masked normxcorr2): the mask is
 * its own buffer (mfirst, mtype, its pitches); without one (has_mask 0)
 * every sample counts as valid.  The first pass, per row: over the
 * samples whose mask sample is not 0, their sum, count and range; and
 * whether every sample of the row and of its mask is finite. */
inline float mask_at(__global const uchar *msk, int mtype, long at, int has_mask)
{
    return has_mask ? sample_at(msk, mtype, at) : 1.0f;
}

__kernel void masked_stats(__global const uchar *src, ulong first, int type, int nx, int ny,
                           int rows, long stride_y, long stride_z, __global const uchar *msk,
                           ulong mfirst, int mtype, long mstride_y, long mstride_z,
                           int has_mask, __global double *sums, __global ulong *valid,
                           __global float *lo, __global float *hi, __global int *finite)
{
    const int r = (int)get_global_id(0);
    if (r >= rows)
        return;
    const long start = row_start(first, r, ny, stride_y, stride_z);
    const long mstart = row_start(mfirst, r, ny, mstride_y, mstride_z);
    double sum = 0.0;
    ulong count = 0;
    float least = INFINITY, most = -INFINITY;
    int all_finite = 1;
    for (int x = 0; x < nx; x++) {
        const float v = sample_at(src, type, start + x);
        const float m = mask_at(msk, mtype, mstart + x, has_mask);
        all_finite &= isfinite(v) != 0 && isfinite(m) != 0;
        if (m == 0.0f)
            continue;
        count++;
        sum += (double)v;
        least = v < least ? v : least;
        most = v > most ? v : most;
    }
    sums[r] = sum;
    valid[r] = count;
    lo[r] = least;
    hi[r] = most;
    finite[r] = all_finite;
}

/* The second pass: values (dense) centred inside the mask, 0 outside, and
 * mask01 = 0 / 1; per row, the sum in double of the squared deviations.
 * exact 0 (masked phase correlation): c = v - (float)mean in float, the
 * sum of c * c.  exact 1 (masked normxcorr2): d = v - mean in double, the
 * sum of d * d, c = (float)(d * scale). */
__kernel void masked_centre(__global const uchar *src, ulong first, int type, int nx, int ny,
                            int rows, long stride_y, long stride_z, __global const uchar *msk,
                            ulong mfirst, int mtype, long mstride_y, long mstride_z,
                            int has_mask, double mean, double scale, int exact,
                            __global float *values, __global float *mask01,
                            __global double *energy)
{
    const int r = (int)get_global_id(0);
    if (r >= rows)
        return;
    const long start = row_start(first, r, ny, stride_y, stride_z);
    const long mstart = row_start(mfirst, r, ny, mstride_y, mstride_z);
    const size_t out = (size_t)r * (size_t)nx;
    const float centre = (float)mean;
    double sum = 0.0;
    for (int x = 0; x < nx; x++) {
        const float v = sample_at(src, type, start + x);
        const int in = mask_at(msk, mtype, mstart + x, has_mask) != 0.0f;
        float c = 0.0f;
        if (in && exact) {
            const double d = (double)v - mean;
            sum += d * d;
            c = (float)(d * scale);
        } else if (in) {
            c = v - centre;
            sum += (double)c * (double)c;
        }
        values[out + x] = c;
        mask01[out + x] = in ? 1.0f : 0.0f;
    }
    energy[r] = sum;
}
