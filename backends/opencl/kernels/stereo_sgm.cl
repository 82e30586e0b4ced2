/* Semi-global matching (backends/opencl/stereo_sgm.c is the host side; the
 * CPU oracle is backends/cpu/stereo_sgm.c, whose integer rules these
 * kernels share through common/sgm_math.h).
 *
 * Defines from the host:
 *   SGM_ITEMS, SGM_LINES   aggregation group: SGM_ITEMS work-items share one
 *                          scan line, SGM_LINES lines per group (launch
 *                          parameters, family "sgm")
 *   SGM_DPI                disparities per work-item (ndisp / SGM_ITEMS up)
 *   SGM_NDISP              the number of disparities
 *   SGM_PIXEL              0 u8, 1 u16, 2 f32
 *   SGM_CENSUS_W, _H, _SYM the census window and its kind
 *   SGM_PATH8              1: path costs stored as uchar, 0: ushort */
#include "../../common/sgm_math.h"

#if SGM_PIXEL == 0
typedef uchar pixel_t;
#elif SGM_PIXEL == 1
typedef ushort pixel_t;
#else
typedef float pixel_t;
#endif

#if SGM_PATH8
typedef uchar path_t;
#else
typedef ushort path_t;
#endif

/* ------------------------------------------------------------------ census */

pixel_t window_value(global const pixel_t *img, int width, int height, int x, int y, int dx,
                     int dy)
{
    int xx = clamp(x + dx, 0, width - 1), yy = clamp(y + dy, 0, height - 1);
    return img[yy * width + xx];
}

/* The census string of (x, y) in the CPU's bit order: window positions in
 * row-major order, earlier positions in higher bits. */
ulong census_at(global const pixel_t *img, int width, int height, int x, int y)
{
    const int w = SGM_CENSUS_W, h = SGM_CENSUS_H, n = w * h;
    const pixel_t centre = img[y * width + x];
    ulong code = 0;
#if SGM_CENSUS_SYM
    for (int i = 0; i < n / 2; i++) {
        pixel_t a = window_value(img, width, height, x, y, i % w - w / 2, i / w - h / 2);
        int j = n - 1 - i;
        pixel_t b = window_value(img, width, height, x, y, j % w - w / 2, j / w - h / 2);
        code = (code << 1) | (ulong)(a > b);
    }
#else
    for (int i = 0; i < n; i++) {
        if (i == n / 2)
            continue;
        pixel_t a = window_value(img, width, height, x, y, i % w - w / 2, i / w - h / 2);
        code = (code << 1) | (ulong)(a > centre);
    }
#endif
    return code;
}

int intensity_of(pixel_t v)
{
#if SGM_PIXEL == 2
    return sgm_intensity_f32(v);
#else
    return (int)v;
#endif
}

/* One item per pixel: its census string, and its integer intensity when
 * with_intensity (the left image under the adaptive P2). */
kernel void sgm_census(global const pixel_t *img, int width, int height, global ulong *census,
                       global int *intensity, int with_intensity)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    census[y * width + x] = census_at(img, width, height, x, y);
    if (with_intensity)
        intensity[y * width + x] = intensity_of(img[y * width + x]);
}

/* ------------------------------------------------------------- aggregation */

typedef struct scan_line {
    int x0, y0, steps, valid;
} scan_line;

/* Line `line` of direction (dx, dy): where it enters the image and the
 * most steps any line of that direction takes.  Horizontal: one per row;
 * vertical: one per column; diagonal: one per pixel of the entry row
 * (top or bottom) and of the entry column (left or right) below it. */
scan_line line_of(int line, int width, int height, int dx, int dy)
{
    scan_line s;
    if (dy == 0) {
        s.x0 = dx > 0 ? 0 : width - 1;
        s.y0 = line;
        s.steps = width;
        s.valid = line < height;
    } else if (dx == 0) {
        s.x0 = line;
        s.y0 = dy > 0 ? 0 : height - 1;
        s.steps = height;
        s.valid = line < width;
    } else {
        if (line < width) {
            s.x0 = line;
            s.y0 = dy > 0 ? 0 : height - 1;
        } else {
            int j = line - width + 1;
            s.x0 = dx > 0 ? 0 : width - 1;
            s.y0 = dy > 0 ? j : height - 1 - j;
        }
        s.steps = min(width, height);
        s.valid = line < width + height - 1;
    }
    return s;
}

/* One path direction.  SGM_ITEMS items own a scan line, each holding
 * SGM_DPI consecutive disparities of the running L_r in registers; the
 * neighbours at the slice edges and the minimum over all disparities are
 * exchanged through local memory, double-buffered so that one barrier a
 * step suffices.  Costs come from the census strings on the fly; each
 * L_r(p, d) is written once. */
__attribute__((reqd_work_group_size(SGM_ITEMS, SGM_LINES, 1)))
kernel void sgm_path(global const ulong *census_l, global const ulong *census_r,
                     global const int *intensity, global path_t *out, int width, int height,
                     int min_disp, int p1, int p2, int adaptive, int dx, int dy, int cbits)
{
    local uint first[2][SGM_LINES][SGM_ITEMS];
    local uint last[2][SGM_LINES][SGM_ITEMS];
    local uint part_min[2][SGM_LINES][SGM_ITEMS];
    const int lane = get_local_id(0), row = get_local_id(1);
    const scan_line s = line_of(get_global_id(1), width, height, dx, dy);
    const int k0 = lane * SGM_DPI;
    uint l[SGM_DPI];
    #pragma unroll
    for (int j = 0; j < SGM_DPI; j++)
        l[j] = k0 + j < SGM_NDISP ? 0 : SGM_SENTINEL;
    uint below = lane == 0 ? SGM_SENTINEL : 0;
    uint above = k0 + SGM_DPI >= SGM_NDISP ? SGM_SENTINEL : 0;
    uint prev_min = 0;
    int prev_i = 0;
    for (int step = 0; step < s.steps; step++) {
        const int x = s.x0 + step * dx, y = s.y0 + step * dy;
        const int active = s.valid && x >= 0 && x < width && y >= 0 && y < height;
        uint next_min = SGM_SENTINEL;
        if (active) {
            const int pixel = y * width + x;
            int p2s = p2;
            if (adaptive) {
                int here = intensity[pixel];
                long di = (long)here - (long)prev_i;
                if (step > 0)
                    p2s = sgm_adaptive_p2(p1, p2, (int)clamp(di, -0x7fffffffL, 0x7fffffffL));
                prev_i = here;
            }
            const ulong cl = census_l[pixel];
            const uint jump = prev_min + (uint)p2s;
            uint n[SGM_DPI];
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++) {
                const int k = k0 + j, xr = x - min_disp - k;
                uint c = xr >= 0 && xr < width ? popcount(cl ^ census_r[y * width + xr])
                                               : (uint)cbits;
                uint lower = j == 0 ? below : l[j - 1];
                uint upper = j == SGM_DPI - 1 ? above : l[j + 1];
                uint v = min(min(l[j], lower + (uint)p1), min(upper + (uint)p1, jump));
                n[j] = k < SGM_NDISP ? v - prev_min + c : SGM_SENTINEL;
                next_min = min(next_min, n[j]);
            }
            global path_t *dst = out + (size_t)pixel * SGM_NDISP;
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++) {
                l[j] = n[j];
                if (k0 + j < SGM_NDISP)
                    dst[k0 + j] = (path_t)n[j];
            }
        }
        const int b = step & 1;
        first[b][row][lane] = l[0];
        last[b][row][lane] = l[SGM_DPI - 1];
        part_min[b][row][lane] = next_min;
        barrier(CLK_LOCAL_MEM_FENCE);
        below = lane > 0 ? last[b][row][lane - 1] : SGM_SENTINEL;
        above = lane < SGM_ITEMS - 1 ? first[b][row][lane + 1] : SGM_SENTINEL;
        uint m = part_min[b][row][0];
        for (int i = 1; i < SGM_ITEMS; i++)
            m = min(m, part_min[b][row][i]);
        prev_min = m;
    }
}

/* ------------------------------------------------------------------ winner */

#define PATH_ARGS                                                                                  \
    global const path_t *l0, global const path_t *l1, global const path_t *l2,                     \
        global const path_t *l3, global const path_t *l4, global const path_t *l5,                 \
        global const path_t *l6, global const path_t *l7

/* S(p, k): the sum over the paths (4 or 8) of L_r(p, k) at cell i. */
uint sum_at(PATH_ARGS, int paths, uint i)
{
    uint s = (uint)l0[i] + l1[i] + l2[i] + l3[i];
    if (paths == 8)
        s += (uint)l4[i] + l5[i] + l6[i] + l7[i];
    return s;
}

/* One item per pixel: S written once (the left-right check reads it), the
 * winner among the valid candidates (ties: smaller d), uniqueness,
 * confidence and the sub-pixel parabola.  winner: k, or -1 rejected. */
kernel void sgm_winner(PATH_ARGS, int paths, global ushort *sum, global float *disp,
                       global int *winner, global float *conf, int width, int height,
                       int min_disp, uint uniqueness, int subpixel)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int pixel = y * width + x;
    const uint base = (uint)pixel * SGM_NDISP;
    const int lo = sgm_first_valid(x, width, min_disp), hi = sgm_last_valid(x, min_disp, SGM_NDISP);
    int best = -1;
    uint best_sum = 0;
    for (int k = 0; k < SGM_NDISP; k++) {
        uint s = sum_at(l0, l1, l2, l3, l4, l5, l6, l7, paths, base + k);
        sum[base + k] = (ushort)s;
        if (k >= lo && k <= hi && (best < 0 || s < best_sum)) {
            best = k;
            best_sum = s;
        }
    }
    float d = INFINITY, c = 0.0f;
    if (best >= 0) {
        uint second = 0xffffffffu;
        for (int k = lo; k <= hi; k++)
            if (k < best - 1 || k > best + 1)
                second = min(second, (uint)sum[base + k]);
        const int has_second = second != 0xffffffffu;
        if (has_second && !sgm_is_unique(best_sum, second, uniqueness)) {
            best = -1;
        } else {
            d = (float)(min_disp + best);
            c = sgm_confidence(best_sum, second, has_second);
            if (subpixel && best > lo && best < hi)
                d += sgm_parabola(sum[base + best - 1], best_sum, sum[base + best + 1]);
        }
    }
    disp[pixel] = d;
    winner[pixel] = best;
    conf[pixel] = c;
}

/* Left-right check: the right image's disparity at x' = x - d is the
 * argmin over k of S(x' + min_disp + k, k) (ties: smaller k). */
kernel void sgm_lr_check(global const ushort *sum, global const int *winner, global float *disp,
                         global float *conf, int width, int height, int min_disp, int max_diff)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int pixel = y * width + x, best = winner[pixel];
    if (best < 0)
        return;
    const int xr = x - min_disp - best;
    const int lo = max(0, -xr - min_disp), hi = min(SGM_NDISP - 1, width - 1 - xr - min_disp);
    int right = -1;
    uint right_sum = 0;
    for (int k = lo; k <= hi; k++) {
        uint s = sum[(uint)(y * width + xr + min_disp + k) * SGM_NDISP + k];
        if (right < 0 || s < right_sum) {
            right = k;
            right_sum = s;
        }
    }
    if (abs(right - best) > max_diff) {
        disp[pixel] = INFINITY;
        conf[pixel] = 0.0f;
    }
}

/* 3x3 median, borders replicated; INFINITY sorts above every number. */
kernel void sgm_median(global const float *in, global float *out, int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    float a[9];
    for (int i = 0; i < 9; i++)
        a[i] = in[clamp(y + i / 3 - 1, 0, height - 1) * width + clamp(x + i % 3 - 1, 0, width - 1)];
    for (int i = 1; i < 9; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            float t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    out[y * width + x] = a[4];
}
