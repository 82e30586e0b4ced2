/* Semi-global matching (backends/opencl/stereo/stereo_sgm.c is the host side; the
 * CPU oracle is backends/cpu/stereo/stereo_sgm.c, whose integer rules these
 * kernels share through common/sgm_math.h).
 *
 * Defines from the host:
 *   SGM_DPI                disparities per work-item of the aggregation and of
 *                          the winner: 1, 2, 4, 8 or 16 (launch parameter)
 *   SGM_ITEMS              work-items sharing one scan line: ndisp / SGM_DPI up
 *   SGM_GROUP_LINES        scan lines per aggregation work-group (the SGM_LINES
 *                          parameter, raised to fill whole warps when shuffling)
 *   SGM_STRIDE             SGM_ITEMS * SGM_DPI: cells stored per pixel and
 *                          path (ndisp rounded up; the cells past ndisp are
 *                          never read as candidates)
 *   SGM_WIN_GROUP          work-items of a winner work-group (one image row):
 *                          SGM_WIN_ITEMS in whole teams of SGM_ITEMS
 *   SGM_WIDTH, SGM_LR_LOCAL the image width; 1 when the winner keeps a row's
 *                          left-right minima in local memory (else in global
 *                          scratch)
 *   SGM_NDISP              the number of disparities
 *   SGM_PIXEL              0 u8, 1 u16, 2 f32
 *   SGM_CENSUS_W, _H, _SYM the census window and its kind
 *   SGM_PATH8              1: path costs stored as uchar, 0: ushort
 *   SGM_SUM                1: one ushort volume of the sums S: each launch of
 *                          sgm_paths covers one direction and adds its path
 *                          costs (direction 0 writes them), and the winner
 *                          reads S; 0: a volume per path */
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

#define SGM_CAT_(a, b) a##b
#define SGM_CAT(a, b) SGM_CAT_(a, b)

/* An array of SGM_DPI path values as one vector, and a vector of sums back
 * into an array. */
#if SGM_DPI == 16
#define SGM_VEC_OF(n) ((path_slice)(n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], \
                                    n[10], n[11], n[12], n[13], n[14], n[15]))
#define SGM_UNPACK(t, s) do { s[0] = t.s0; s[1] = t.s1; s[2] = t.s2; s[3] = t.s3; s[4] = t.s4; \
    s[5] = t.s5; s[6] = t.s6; s[7] = t.s7; s[8] = t.s8; s[9] = t.s9; s[10] = t.sa;          \
    s[11] = t.sb; s[12] = t.sc; s[13] = t.sd; s[14] = t.se; s[15] = t.sf; } while (0)
#elif SGM_DPI == 8
#define SGM_VEC_OF(n) ((path_slice)(n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]))
#define SGM_UNPACK(t, s) do { s[0] = t.s0; s[1] = t.s1; s[2] = t.s2; s[3] = t.s3; s[4] = t.s4; \
    s[5] = t.s5; s[6] = t.s6; s[7] = t.s7; } while (0)
#elif SGM_DPI == 4
#define SGM_VEC_OF(n) ((path_slice)(n[0], n[1], n[2], n[3]))
#define SGM_UNPACK(t, s) do { s[0] = t.s0; s[1] = t.s1; s[2] = t.s2; s[3] = t.s3; } while (0)
#elif SGM_DPI == 2
#define SGM_VEC_OF(n) ((path_slice)(n[0], n[1]))
#define SGM_UNPACK(t, s) do { s[0] = t.s0; s[1] = t.s1; } while (0)
#else
#define SGM_UNPACK(t, s) do { s[0] = t; } while (0)
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
    int active; /* the steps inside the image (0 for a line past the last) */
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
    const int along_x = dx > 0 ? width - s.x0 : dx < 0 ? s.x0 + 1 : 0x7fffffff;
    const int along_y = dy > 0 ? height - s.y0 : dy < 0 ? s.y0 + 1 : 0x7fffffff;
    s.active = s.valid ? min(s.steps, min(along_x, along_y)) : 0;
    return s;
}

/* The eight directions in the host's order (the first four: 4 paths). */
constant int dir_x[8] = {1, -1, 0, 0, 1, -1, 1, -1};
constant int dir_y[8] = {0, 0, 1, -1, 1, 1, -1, -1};

int lines_of_direction(int dir, int width, int height)
{
    return dir < 2 ? height : dir < 4 ? width : width + height - 1;
}

#if SGM_DPI == 16
#define STORE_SLICE(v, dst) vstore16((v), 0, (dst))
#elif SGM_DPI == 8
#define STORE_SLICE(v, dst) vstore8((v), 0, (dst))
#elif SGM_DPI == 4
#define STORE_SLICE(v, dst) vstore4((v), 0, (dst))
#elif SGM_DPI == 2
#define STORE_SLICE(v, dst) vstore2((v), 0, (dst))
#else
#define STORE_SLICE(v, dst) (*(dst) = (v))
#endif

#if SGM_DPI == 1
typedef path_t path_slice;
#elif SGM_PATH8
typedef SGM_CAT(uchar, SGM_DPI) path_slice;
#else
typedef SGM_CAT(ushort, SGM_DPI) path_slice;
#endif

/* The matching cost volume, once: C(p, k) for every pixel and every cell
 * k < SGM_STRIDE of it (cells past ndisp hold the largest cost), one item
 * per cell, so that neighbouring items read neighbouring right census
 * strings and write neighbouring bytes.  The path kernels then read a
 * slice of costs as one vector instead of SGM_DPI scattered census
 * strings per step. */
kernel void sgm_costs(global const ulong *census_l, global const ulong *census_r,
                      global uchar *cost, int width, int height, int min_disp, int cbits)
{
    const int q = get_global_id(0), x = get_global_id(1), y = get_global_id(2);
    if (4 * q >= SGM_STRIDE || x >= width || y >= height)
        return;
    const int pixel = y * width + x;
    const ulong left = census_l[pixel];
    global const ulong *right_row = census_r + y * width;
    uchar4 c;
    #pragma unroll
    for (int j = 0; j < 4; j++) {
        const int k = 4 * q + j, xr = x - min_disp - k;
        uint v = (uint)cbits;
        if (k < SGM_NDISP && xr >= 0 && xr < width)
            v = popcount(left ^ right_row[xr]);
        ((uchar *)&c)[j] = (uchar)v;
    }
    vstore4(c, 0, cost + (size_t)pixel * SGM_STRIDE + 4 * q);
}

#if SGM_DPI == 1
#define LOAD_COSTS(src) ((uint)*(src))
typedef uint cost_slice;
#else
#define LOAD_COSTS(src) SGM_CAT(convert_uint, SGM_DPI)(SGM_CAT(vload, SGM_DPI)(0, (src)))
typedef SGM_CAT(uint, SGM_DPI) cost_slice;
#endif

#if SGM_SHFL
/* Warp shuffles of NVIDIA devices (inline PTX; the host sets SGM_SHFL only
 * there, when a line's items are whole lanes of one warp and every warp is
 * full).  Every lane of the warp takes part in each. */
uint shfl_up1(uint v)
{
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, 1, 0, 0xffffffff;" : "=r"(r) : "r"(v));
    return r;
}

uint shfl_down1(uint v)
{
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, 1, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v));
    return r;
}

uint shfl_xor(uint v, int offset)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(offset));
    return r;
}
#endif

#if SGM_SHFL
/* The minimum over the SGM_ITEMS lanes of an aligned team. */
uint team_min(uint v)
{
    #pragma unroll
    for (int offset = 1; offset < SGM_ITEMS; offset <<= 1)
        v = min(v, shfl_xor(v, offset));
    return v;
}
#endif

/* Every direction of the call in one launch: the work-groups of direction
 * 0 first, then those of direction 1, and so on, so that the paths, each a
 * chain of dependent steps along its lines, run side by side and fill the
 * device.  SGM_ITEMS items own a scan line, each holding SGM_DPI
 * consecutive disparities of the running L_r in registers; the neighbours
 * at the slice edges and the minimum over all disparities are exchanged
 * through local memory, double-buffered so that one barrier a step
 * suffices.  Costs come from the census strings on the fly; each slice of
 * L_r(p, .) is written once, as one vector. */
__attribute__((reqd_work_group_size(SGM_ITEMS, SGM_GROUP_LINES, 1)))
kernel void sgm_paths(global const uchar *cost, global const int *intensity, global path_t *out0, global path_t *out1,
                      global path_t *out2, global path_t *out3, global path_t *out4,
                      global path_t *out5, global path_t *out6, global path_t *out7,
                      int dir_first, int dir_last, int width, int height, int p1, int p2,
                      int adaptive)
{
#if !SGM_SHFL
    local uint first[2][SGM_GROUP_LINES][SGM_ITEMS];
    local uint last[2][SGM_GROUP_LINES][SGM_ITEMS];
    local uint part_min[2][SGM_GROUP_LINES][SGM_ITEMS];
#endif
    int group = get_group_id(1), dir = dir_first;
    for (; dir < dir_last; dir++) {
        int groups = (lines_of_direction(dir, width, height) + SGM_GROUP_LINES - 1) / SGM_GROUP_LINES;
        if (group < groups)
            break;
        group -= groups;
    }
    if (dir >= dir_last)
        return; /* the whole work-group: no barrier is skipped by half of it */
    global path_t *out = dir == 0 ? out0 : dir == 1 ? out1 : dir == 2 ? out2 : dir == 3 ? out3
                         : dir == 4 ? out4 : dir == 5 ? out5 : dir == 6 ? out6 : out7;
    const int dx = dir_x[dir], dy = dir_y[dir];
    const int lane = get_local_id(0), row = get_local_id(1);
    const scan_line s = line_of(group * SGM_GROUP_LINES + row, width, height, dx, dy);
    /* The steps every line exchanging with this one takes: the longest of
     * their in-image runs (a diagonal line near a corner stops early, and
     * so does its work when its neighbours do too). */
#if SGM_SHFL
    uint trip = (uint)s.active;
    #pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1)
        trip = max(trip, shfl_xor(trip, offset));
#else
    local int group_trip;
    if (lane == 0 && row == 0)
        group_trip = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0)
        atomic_max(&group_trip, s.active);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint trip = (uint)group_trip;
#endif
    const int k0 = lane * SGM_DPI;
    uint l[SGM_DPI];
    #pragma unroll
    for (int j = 0; j < SGM_DPI; j++)
        l[j] = k0 + j < SGM_NDISP ? 0 : SGM_SENTINEL;
    uint below = lane == 0 ? SGM_SENTINEL : 0;
    uint above = k0 + SGM_DPI >= SGM_NDISP ? SGM_SENTINEL : 0;
    uint prev_min = 0;
    int prev_i = 0;
    /* The costs of the next step are loaded one step ahead: they do not
     * depend on the running path costs, so their latency overlaps this
     * step's arithmetic and barrier instead of stalling the chain. */
    cost_slice c_next = (cost_slice)(0);
    if (s.valid && s.x0 >= 0 && s.x0 < width && s.y0 >= 0 && s.y0 < height)
        c_next = LOAD_COSTS(cost + (size_t)(s.y0 * width + s.x0) * SGM_STRIDE + k0);
    for (int step = 0; step < (int)trip; step++) {
        const int x = s.x0 + step * dx, y = s.y0 + step * dy;
        const int active = s.valid && x >= 0 && x < width && y >= 0 && y < height;
        uint c[SGM_DPI];
        SGM_UNPACK(c_next, c);
        const int nx = x + dx, ny = y + dy;
        if (step + 1 < s.active)
            c_next = LOAD_COSTS(cost + (size_t)(ny * width + nx) * SGM_STRIDE + k0);
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
            const uint jump = prev_min + (uint)p2s;
            path_t n[SGM_DPI];
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++) {
                uint lower = j == 0 ? below : l[j - 1];
                uint upper = j == SGM_DPI - 1 ? above : l[j + 1];
                uint v = min(min(l[j], lower + (uint)p1), min(upper + (uint)p1, jump));
                uint w = k0 + j < SGM_NDISP ? v - prev_min + c[j] : SGM_SENTINEL;
                next_min = min(next_min, w);
                n[j] = (path_t)w;
            }
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++)
                l[j] = k0 + j < SGM_NDISP ? (uint)n[j] : SGM_SENTINEL;
#if SGM_SUM
            /* The sums: direction 0 writes its path costs, the later
             * directions (later launches) add theirs. */
            global path_t *sums = out + (size_t)pixel * SGM_STRIDE + k0;
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++)
                sums[j] = dir == 0 ? n[j] : (path_t)(sums[j] + n[j]);
#elif SGM_DPI == 1
            out[(size_t)pixel * SGM_STRIDE + k0] = n[0];
#else
            path_slice v = SGM_VEC_OF(n);
            STORE_SLICE(v, out + (size_t)pixel * SGM_STRIDE + k0);
#endif
        }
#if SGM_SHFL
        /* A line's items are SGM_ITEMS neighbouring lanes of one warp:
         * exchange in registers, no barrier. */
        const uint up = shfl_up1(l[SGM_DPI - 1]), down = shfl_down1(l[0]);
        below = lane > 0 ? up : SGM_SENTINEL;
        above = lane < SGM_ITEMS - 1 ? down : SGM_SENTINEL;
        uint m = next_min;
        #pragma unroll
        for (int offset = 1; offset < SGM_ITEMS; offset <<= 1)
            m = min(m, shfl_xor(m, offset));
        prev_min = m;
#else
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
#endif
    }
}

/* ------------------------------------------------------------------ winner */

#if SGM_DPI == 1
#define LOAD_SLICE(src) ((uint)*(src))
typedef uint sum_slice;
#else
#define LOAD_SLICE(src) SGM_CAT(convert_uint, SGM_DPI)(SGM_CAT(vload, SGM_DPI)(0, (src)))
typedef SGM_CAT(uint, SGM_DPI) sum_slice;
#endif

/* Right-image candidates are packed as S << 11 | k, so that one atomic
 * minimum keeps the smallest sum and, among equal sums, the smaller k
 * (k < 2048; S < 2^21 since S <= 8 (Cmax + P2) < 2^18). */
#define RIGHT_SHIFT 11
#define RIGHT_MASK 0x7ffu

/* One work-group per image row.  SGM_ITEMS items (a team) own a pixel, each
 * summing SGM_DPI disparities of the path costs (vector loads, so a team
 * reads its pixel's cells in one sweep); the team's minimum, second minimum
 * outside best-1..best+1 and the parabola's neighbours go through local
 * memory.  Every valid candidate (x, k) also offers S to the right image's
 * column x - min_disp - k by an atomic minimum, so the right disparities of
 * the row, and with them the left-right check, come from the same sums
 * without storing S. */
__attribute__((reqd_work_group_size(SGM_WIN_GROUP, 1, 1)))
kernel void sgm_winner_rows(global const path_t *l0, global const path_t *l1,
                            global const path_t *l2, global const path_t *l3,
                            global const path_t *l4, global const path_t *l5,
                            global const path_t *l6, global const path_t *l7, int paths,
                            global float *disp, global float *conf, global uint *right_scratch,
                            global short *winner_scratch, int width, int min_disp,
                            uint uniqueness, int subpixel, int lr_check, int max_diff)
{
    const int team_pixels = SGM_WIN_GROUP / SGM_ITEMS;
    local uint best_v[SGM_WIN_GROUP];
    local int best_k[SGM_WIN_GROUP];
    local uint second_v[SGM_WIN_GROUP];
    local uint neighbour[SGM_WIN_GROUP / SGM_ITEMS][2];
#if SGM_LR_LOCAL
    local uint right_min[SGM_WIDTH];
    local short winner[SGM_WIDTH];
#else
    global uint *right_min = right_scratch + (size_t)get_group_id(0) * width;
    global short *winner = winner_scratch + (size_t)get_group_id(0) * width;
#endif
    const int y = get_group_id(0), tid = get_local_id(0);
    const int team = tid / SGM_ITEMS, lane = tid % SGM_ITEMS, k0 = lane * SGM_DPI;
    for (int x = tid; x < width; x += SGM_WIN_GROUP)
        right_min[x] = 0xffffffffu;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int xs = 0; xs < width; xs += team_pixels) {
        const int x = xs + team, active = x < width;
        const int lo = sgm_first_valid(x, width, min_disp);
        const int hi = sgm_last_valid(x, min_disp, SGM_NDISP);
        uint s[SGM_DPI];
        uint mine = 0xffffffffu;
        int mine_k = -1;
        if (active) {
            const size_t cell = ((size_t)y * width + x) * SGM_STRIDE + k0;
#if SGM_SUM
            sum_slice t = LOAD_SLICE(l0 + cell);
#else
            sum_slice t = LOAD_SLICE(l0 + cell) + LOAD_SLICE(l1 + cell) + LOAD_SLICE(l2 + cell) +
                          LOAD_SLICE(l3 + cell);
            if (paths == 8)
                t += LOAD_SLICE(l4 + cell) + LOAD_SLICE(l5 + cell) + LOAD_SLICE(l6 + cell) +
                     LOAD_SLICE(l7 + cell);
#endif
            SGM_UNPACK(t, s);
            #pragma unroll
            for (int j = 0; j < SGM_DPI; j++) {
                const int k = k0 + j;
                if (k >= lo && k <= hi) {
                    if (s[j] < mine) {
                        mine = s[j];
                        mine_k = k;
                    }
                    /* The minima only fall, so a candidate no smaller than a
                     * value read now cannot lower it: most cells skip the
                     * atomic (a stale read is only ever too large). */
                    const uint offer = s[j] << RIGHT_SHIFT | (uint)k;
                    if (lr_check && offer < right_min[x - min_disp - k])
                        atomic_min(&right_min[x - min_disp - k], offer);
                }
            }
        }
#if SGM_SHFL
        /* A team is SGM_ITEMS lanes of one warp: its reductions run in
         * registers.  (S << 11 | k) orders by sum, then by k. */
        uint key = 0xffffffffu;
        #pragma unroll
        for (int j = 0; j < SGM_DPI; j++)
            if (active && k0 + j >= lo && k0 + j <= hi)
                key = min(key, s[j] << RIGHT_SHIFT | (uint)(k0 + j));
        key = team_min(key);
        int best = key == 0xffffffffu ? -1 : (int)(key & RIGHT_MASK);
        const uint best_sum = key >> RIGHT_SHIFT;
        uint second = 0xffffffffu, below_sum = 0xffffffffu, above_sum = 0xffffffffu;
        #pragma unroll
        for (int j = 0; j < SGM_DPI; j++) {
            const int k = k0 + j;
            if (active && k >= lo && k <= hi && (k < best - 1 || k > best + 1))
                second = min(second, s[j]);
            if (active && best >= 0 && k == best - 1)
                below_sum = s[j];
            if (active && best >= 0 && k == best + 1)
                above_sum = s[j];
        }
        const uint second_all = team_min(second);
        below_sum = team_min(below_sum);
        above_sum = team_min(above_sum);
        if (lane == 0 && active) {
#else
        best_v[tid] = mine;
        best_k[tid] = mine_k;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* The team's winner: the lanes hold ascending k, so the first
         * strict minimum is the smallest k among equal sums. */
        int best = -1;
        uint best_sum = 0xffffffffu;
        for (int i = 0; i < SGM_ITEMS; i++) {
            const int t = team * SGM_ITEMS + i;
            if (best_k[t] >= 0 && (best < 0 || best_v[t] < best_sum)) {
                best = best_k[t];
                best_sum = best_v[t];
            }
        }
        uint second = 0xffffffffu;
        #pragma unroll
        for (int j = 0; j < SGM_DPI; j++) {
            const int k = k0 + j;
            if (active && k >= lo && k <= hi && (k < best - 1 || k > best + 1))
                second = min(second, s[j]);
            if (active && best >= 0 && k == best - 1)
                neighbour[team][0] = s[j];
            if (active && best >= 0 && k == best + 1)
                neighbour[team][1] = s[j];
        }
        second_v[tid] = second;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane == 0 && active) {
            uint second_all = 0xffffffffu;
            for (int i = 0; i < SGM_ITEMS; i++)
                second_all = min(second_all, second_v[team * SGM_ITEMS + i]);
            const uint below_sum = neighbour[team][0], above_sum = neighbour[team][1];
#endif
            float d = INFINITY, c = 0.0f;
            const int has_second = second_all != 0xffffffffu;
            if (best >= 0 && has_second && !sgm_is_unique(best_sum, second_all, uniqueness))
                best = -1;
            if (best >= 0) {
                d = (float)(min_disp + best);
                c = sgm_confidence(best_sum, second_all, has_second);
                if (subpixel && best > lo && best < hi)
                    d += sgm_parabola((int)below_sum, (int)best_sum, (int)above_sum);
            }
            disp[(size_t)y * width + x] = d;
            conf[(size_t)y * width + x] = c;
            winner[x] = (short)best;
        }
#if !SGM_SHFL
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
    if (!lr_check)
        return;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int x = tid; x < width; x += SGM_WIN_GROUP) {
        const int best = winner[x];
        if (best < 0)
            continue;
        const int right = (int)(right_min[x - min_disp - best] & RIGHT_MASK);
        if (abs(right - best) > max_diff) {
            disp[(size_t)y * width + x] = INFINITY;
            conf[(size_t)y * width + x] = 0.0f;
        }
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
