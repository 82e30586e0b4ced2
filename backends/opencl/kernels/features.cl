/* parvis SIFT kernels: scale space, DoG extrema, keypoint refinement and
 * orientation, descriptors, and brute-force descriptor matching.
 *
 * Built with the "features" launch-parameter family as -D defines:
 *   SIFT_WG_X, SIFT_WG_Y      work-group shape of the image passes
 *   SIFT_ROW_STEPS            row pass: outputs per work item along x
 *   SIFT_COL_STEPS            column pass: outputs per work item along y
 *   SIFT_EXT_WG               extrema: work items per row group
 *   SIFT_EXT_RUN              extrema: consecutive pixels per item (<= 32)
 *   SIFT_SCAN_WG              scan: work items of the single scan group
 *   SIFT_KP_WG                keypoint counts / scatter: work items per group
 *   SIFT_ORI_WG               orientation: work items per candidate
 *   SIFT_DESC_SPLIT           descriptor: work items per spatial cell (16 cells)
 *   SIFT_MATCH_WG             matching: queries per group
 *   SIFT_MATCH_TILE           matching: train descriptors staged per step
 *   SIFT_ORI_GROUPS           (host only) orientation groups per compute unit
 *   SIFT_TILE_GROUPS          (host only) octaves of at most this many groups
 *                             per compute unit run the fused tile pass
 *   SIFT_WEIGHT_LITERALS      (host only) 1: the blur weights as SIFT_WEIGHTS
 * and, for a plan's program, the blur radii and tap offsets (see "blur
 * radii" below).
 *
 * Planes are dense (x fastest).  The scale space of every octave stays on
 * the device: the DoG and Gaussian pyramids are single buffers with
 * per-octave offsets, so the keypoint kernels see all octaves in one launch.
 *
 * The detection runs without atomics and without the host in the middle:
 * extrema are counted per row, scanned and written in key order; the
 * orientation kernel counts keypoints per candidate, a scan places them,
 * and the scatter writes the final records in key order, so no sort is
 * needed anywhere and launches past the (device-side) counts exit at once.
 *
 * Batches: every detection kernel runs over one image or over the B images
 * of a batch chunk side by side in one launch.  The image index is global
 * dimension 2 of the image passes and dimension 1 (one group row per
 * image) of the list kernels; each kernel moves its pointers by the
 * index times the per-image stride of each buffer (the scale space
 * strides come as arguments, the lists' from their capacities, the
 * counters two per image).  A single detection is a launch with one image
 * (index 0), so its launch shapes and results are the same either way.
 *
 * The CPU backend (backends/cpu/features/features.c) does the same float operations
 * in the same order; contraction into fma is off so the blur, the DoG and
 * the refinement agree to the last bit where the device honours it.  The
 * orientation histogram groups the same terms differently (see
 * sift_orient); it agrees to float rounding. */
#pragma OPENCL FP_CONTRACT OFF

#define ROW_TILE (SIFT_WG_X * SIFT_ROW_STEPS)
#define COL_TILE (SIFT_WG_Y * SIFT_COL_STEPS)
#define TWO_PI_F 6.2831853071795864769f
#define ORI_BINS 36
#define MAX_ORIENTATIONS 4
#define DESC_CELLS 16
#define DESC_SIZE 128

/* ------------------------------------------------------------ preparation
 * The input as float (u8 scaled by `scale`), upsampled 2x when asked as in
 * VLFeat: even samples copy, odd ones average two neighbours (the last
 * repeats), along x then y.  Image first_image + z reads src + image
 * src_stride and writes dst + image dst_stride (a launch of one image of
 * a batch: first_image its index).  Global size: the first octave's
 * (w, h, images). */
static float input_u8(__global const uchar *p, int x, int y, int w, float scale)
{
    return convert_float(p[(size_t)y * (size_t)w + (size_t)x]) * scale;
}

static float input_f32(__global const float *p, int x, int y, int w, float scale)
{
    return p[(size_t)y * (size_t)w + (size_t)x];
}

#define DEFINE_PREPARE(SUFFIX, TYPE)                                                     \
static float up_row_##SUFFIX(__global const TYPE *p, int X, int y, int w, float scale)  \
{                                                                                        \
    const int x0 = X >> 1, x1 = min(x0 + 1, w - 1);                                     \
    const float a = input_##SUFFIX(p, x0, y, w, scale);                                  \
    return (X & 1) ? 0.5f * (a + input_##SUFFIX(p, x1, y, w, scale)) : a;                \
}                                                                                        \
__kernel void sift_prepare_##SUFFIX(__global const TYPE *src, __global float *dst,      \
                                    int in_w, int in_h, int upsample, float scale,       \
                                    ulong src_stride, ulong dst_stride, int first_image) \
{                                                                                        \
    const int w = upsample ? 2 * in_w : in_w, h = upsample ? 2 * in_h : in_h;            \
    const int X = get_global_id(0), Y = get_global_id(1);                                \
    const ulong image = (ulong)first_image + get_global_id(2);                           \
    src += image * src_stride;                                                           \
    dst += image * dst_stride;                                                           \
    if (X >= w || Y >= h)                                                                \
        return;                                                                          \
    float v;                                                                             \
    if (!upsample) {                                                                     \
        v = input_##SUFFIX(src, X, Y, in_w, scale);                                      \
    } else {                                                                             \
        const int y0 = Y >> 1, y1 = min(y0 + 1, in_h - 1);                               \
        const float a = up_row_##SUFFIX(src, X, y0, in_w, scale);                        \
        v = (Y & 1) ? 0.5f * (a + up_row_##SUFFIX(src, X, y1, in_w, scale)) : a;         \
    }                                                                                    \
    dst[(size_t)Y * (size_t)w + (size_t)X] = v;                                          \
}

DEFINE_PREPARE(u8, uchar)
DEFINE_PREPARE(f32, float)

/* --------------------------------------------------------- blur radii
 * The plan builds its program with every level's radius and tap offset
 * as constants (SIFT_R<l>, SIFT_O<l> for l = 1 .. 10, SIFT_NLEVELS of
 * them used; SIFT_RB, SIFT_OB for the first octave's base blur), so the
 * tap loops unroll: each tap becomes a local load at a fixed offset and a
 * multiply by a weight at a fixed constant address, and the row pass's
 * levels share the loads of the samples they have in common.  The sums
 * run in the same order as before (tap 0 .. 2r), so the results do not
 * change.  Programs built without a plan (matching) get dummies. */
#ifndef SIFT_NLEVELS
#define SIFT_NLEVELS 1
#define SIFT_RB 1
#define SIFT_OB 0
#define SIFT_R1 1
#define SIFT_O1 0
#define SIFT_R2 0
#define SIFT_O2 0
#define SIFT_R3 0
#define SIFT_O3 0
#define SIFT_R4 0
#define SIFT_O4 0
#define SIFT_R5 0
#define SIFT_O5 0
#define SIFT_R6 0
#define SIFT_O6 0
#define SIFT_R7 0
#define SIFT_O7 0
#define SIFT_R8 0
#define SIFT_O8 0
#define SIFT_R9 0
#define SIFT_O9 0
#define SIFT_R10 0
#define SIFT_O10 0
#endif
/* With SIFT_WEIGHTS (the plan's level weights, then its base weights, as
 * float literals) the taps multiply by constants of the program: a tap is a
 * local load, a multiply and an add, with no load of its weight (an H100
 * runs the first octave's row pass in half the time).  Without it (the
 * weights do not fit the build options, or SIFT_WEIGHT_LITERALS is 0) they
 * come from the `weights` argument.  The same values either way, so the
 * same results. */
#ifdef SIFT_WEIGHTS
__constant float sift_weights[] = {SIFT_WEIGHTS};
#define TAP_WEIGHTS(argument) sift_weights
#else
#define TAP_WEIGHTS(argument) (argument)
#endif
#define FOR_LEVELS(DO) DO(1) DO(2) DO(3) DO(4) DO(5) DO(6) DO(7) DO(8) DO(9) DO(10)

/* sum_k w[k] c[(k - r) stride], k = 0 .. 2r, in that order. */
static float taps(__local const float *c, int stride, __constant const float *wl, const int r)
{
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= 2 * r; k++)
        acc += wl[k] * c[(k - r) * stride];
    return acc;
}

/* ------------------------------------------------------- merged row pass
 * All SIFT_NLEVELS blurs of one base plane in one launch (the paper's
 * merged computation of an octave's scales), or with `base` set the first
 * octave's base blur alone: the input span of a tile row is staged once in
 * local memory and every level's taps run over it.  max_radius bounds the
 * radii.  dst plane l starts at dst + l * w * h.  `tile` holds SIFT_WG_Y *
 * (ROW_TILE + 2 max_radius) floats.  The base sample (x, y) is
 * src[src_offset + step y pitch + step x]: step 2 reads the previous
 * octave's level S directly (the downsampling fused into this pass).
 * Global size: (ceil(w / ROW_TILE) * SIFT_WG_X, h, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_WG_X, SIFT_WG_Y, 1)))
void sift_blur_rows(__global const float *src, ulong src_offset, int pitch, int step,
                    __global float *dst, ulong dst_offset, __constant float *weights, int base,
                    int max_radius, int w, int h, __local float *tile, ulong src_stride,
                    ulong dst_stride)
{
    src += get_global_id(2) * src_stride;
    dst += get_global_id(2) * dst_stride;
    const int lx = get_local_id(0);
    const int x0 = get_group_id(0) * ROW_TILE;
    const int y = get_global_id(1);
    const int span = ROW_TILE + 2 * max_radius;
    __local float *line = tile + get_local_id(1) * span;
    const size_t row = src_offset + (size_t)(step * min(y, h - 1)) * (size_t)pitch;
    for (int i = lx; i < span; i += SIFT_WG_X)
        line[i] = src[row + (size_t)(step * clamp(x0 - max_radius + i, 0, w - 1))];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (y >= h)
        return;
    const size_t plane = (size_t)w * (size_t)h;
    for (int s = 0; s < SIFT_ROW_STEPS; s++) {
        const int offset = lx + s * SIFT_WG_X;
        if (x0 + offset >= w)
            break;
        __local const float *c = line + offset + max_radius;
        __global float *out = dst + dst_offset + (size_t)y * (size_t)w + x0 + offset;
        if (base) {
            *out = taps(c, 1, TAP_WEIGHTS(weights) + SIFT_OB, SIFT_RB);
            continue;
        }
#define ROW_LEVEL(L)                                                                     \
        if (L <= SIFT_NLEVELS)                                                           \
            out[(size_t)(L - 1) * plane] =                                               \
                taps(c, 1, TAP_WEIGHTS(weights) + SIFT_O##L, SIFT_R##L);
        FOR_LEVELS(ROW_LEVEL)
#undef ROW_LEVEL
    }
}

/* The outputs of one level in the column pass: its row-pass plane staged
 * in `tile`, the column taps, the DoG against the previous level (held in
 * prev), the stores. */
typedef struct col_job {
    __global float *gauss, *dog;
    ulong gauss_offset, dog_offset;
    size_t plane;
    int w, h, x, xc, y0, max_radius, with_dog, stored;
} col_job;

static void col_level(const col_job *j, __global const float *in, __local float *tile, int l,
                      __constant const float *wl, const int r, float *prev)
{
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int span = COL_TILE + 2 * j->max_radius;
    for (int i = ly; i < span; i += SIFT_WG_Y)
        tile[i * SIFT_WG_X + lx] =
            in[(size_t)clamp(j->y0 - j->max_radius + i, 0, j->h - 1) * (size_t)j->w + j->xc];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < SIFT_COL_STEPS; s++) {
        const int offset = ly + s * SIFT_WG_Y;
        const float acc = taps(tile + (offset + j->max_radius) * SIFT_WG_X + lx, SIFT_WG_X, wl, r);
        const int y = j->y0 + offset;
        if (j->x < j->w && y < j->h) {
            const size_t at = (size_t)y * (size_t)j->w + j->x;
            if (j->with_dog)
                j->dog[j->dog_offset + (size_t)l * j->plane + at] = acc - prev[s];
            if (l < j->stored)
                j->gauss[j->gauss_offset + (size_t)l * j->plane + at] = acc;
        }
        prev[s] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* ---------------------------------------------------- merged column pass
 * Column blur of every level staged through local memory one level at a
 * time; each work item keeps its previous level in registers so the DoG
 * (g_l - g_(l-1), with g_0 the base) costs no extra read.  Levels 1 .. S
 * are stored (gradients, next octave), levels S+1, S+2 only feed the DoG.
 * With with_dog == 0 (the base blur): one level, written to gauss.  The
 * base sample (x, y) is base[base_offset + step y pitch + step x] (as in
 * the row pass: step 2 reads the previous octave's level S).
 * Global size: (w, ceil(h / COL_TILE) * SIFT_WG_Y, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_WG_X, SIFT_WG_Y, 1)))
void sift_blur_cols(__global const float *rows, __global const float *base, ulong base_offset,
                    int base_pitch, int base_step, __global float *gauss, ulong gauss_offset,
                    __global float *dog, ulong dog_offset, int with_dog,
                    __constant float *weights, int stored, int max_radius, int w, int h,
                    __local float *tile, ulong rows_stride, ulong base_stride,
                    ulong gauss_stride, ulong dog_stride)
{
    const ulong image = get_global_id(2);
    rows += image * rows_stride;
    base += image * base_stride;
    gauss += image * gauss_stride;
    dog += image * dog_stride;
    const int x = get_global_id(0);
    col_job j = {gauss, dog, gauss_offset, dog_offset, (size_t)w * (size_t)h, w, h, x,
                 min(x, w - 1), get_group_id(1) * COL_TILE, max_radius, with_dog, stored};
    float prev[SIFT_COL_STEPS];
    for (int s = 0; s < SIFT_COL_STEPS; s++) {
        const int y = min(j.y0 + (int)get_local_id(1) + s * SIFT_WG_Y, h - 1);
        prev[s] = with_dog ? base[base_offset + (size_t)(base_step * y) * (size_t)base_pitch +
                                  (size_t)(base_step * j.xc)]
                           : 0.0f;
    }
    if (!with_dog) {
        col_level(&j, rows, tile, 0, TAP_WEIGHTS(weights) + SIFT_OB, SIFT_RB, prev);
        return;
    }
#define COL_LEVEL(L)                                                                     \
    if (L <= SIFT_NLEVELS)                                                               \
        col_level(&j, rows + (size_t)(L - 1) * j.plane, tile, L - 1,                     \
                  TAP_WEIGHTS(weights) + SIFT_O##L, SIFT_R##L, prev);
    FOR_LEVELS(COL_LEVEL)
#undef COL_LEVEL
}

/* ------------------------------------------------------ fused tile pass
 * Both passes of an octave in one launch, for the small octaves: there a
 * pass is a handful of work groups whose time is the latency of their
 * steps, not their work, so two launches cost about twice one.  A group
 * stages the base samples of its SIFT_WG_X x SIFT_WG_Y outputs and their
 * halo (clamped as the two passes clamp them) once; per level it runs the
 * row taps over every staged row into `rows_tile`, then the column taps
 * of its own outputs, with the same operations in the same order as the
 * row and column passes, so the levels and DoG are the same bits.
 * `base_tile` holds (SIFT_WG_Y + 2 r) (SIFT_WG_X + 2 r) floats,
 * `rows_tile` (SIFT_WG_Y + 2 r) SIFT_WG_X, r = max_radius.
 * Global size: (ceil(w / SIFT_WG_X) SIFT_WG_X, ceil(h / SIFT_WG_Y)
 * SIFT_WG_Y, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_WG_X, SIFT_WG_Y, 1)))
void sift_blur_tile(__global const float *base, ulong base_offset, int base_pitch,
                    int base_step, __global float *gauss, ulong gauss_offset,
                    __global float *dog, ulong dog_offset, __constant float *weights,
                    int stored, int max_radius, int w, int h, __local float *base_tile,
                    __local float *rows_tile, ulong base_stride, ulong gauss_stride,
                    ulong dog_stride)
{
    const ulong image = get_global_id(2);
    base += image * base_stride + base_offset;
    gauss += image * gauss_stride + gauss_offset;
    dog += image * dog_stride + dog_offset;
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int x = get_global_id(0), y = get_global_id(1);
    const int x0 = x - lx, y0 = y - ly, r = max_radius;
    const int span_x = SIFT_WG_X + 2 * r, span_y = SIFT_WG_Y + 2 * r;
    for (int i = ly; i < span_y; i += SIFT_WG_Y)
        for (int j = lx; j < span_x; j += SIFT_WG_X)
            base_tile[i * span_x + j] =
                base[(size_t)(base_step * clamp(y0 - r + i, 0, h - 1)) * (size_t)base_pitch +
                     (size_t)(base_step * clamp(x0 - r + j, 0, w - 1))];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* g_0, the base at the output's own (clamped) sample, as the column
     * pass takes it for the first DoG */
    float prev = base_tile[(min(y, h - 1) - y0 + r) * span_x + (min(x, w - 1) - x0 + r)];
    const size_t plane = (size_t)w * (size_t)h, at = (size_t)y * (size_t)w + (size_t)x;
    const int inside = x < w && y < h;
#define TILE_LEVEL(L)                                                                    \
    if (L <= SIFT_NLEVELS) {                                                             \
        for (int i = ly; i < span_y; i += SIFT_WG_Y)                                     \
            rows_tile[i * SIFT_WG_X + lx] =                                              \
                taps(base_tile + i * span_x + lx + r, 1,                                 \
                     TAP_WEIGHTS(weights) + SIFT_O##L, SIFT_R##L);                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        const float acc = taps(rows_tile + (ly + r) * SIFT_WG_X + lx, SIFT_WG_X,         \
                               TAP_WEIGHTS(weights) + SIFT_O##L, SIFT_R##L);             \
        if (inside) {                                                                    \
            dog[(size_t)(L - 1) * plane + at] = acc - prev;                              \
            if (L - 1 < stored)                                                          \
                gauss[(size_t)(L - 1) * plane + at] = acc;                               \
        }                                                                                \
        prev = acc;                                                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    }
    FOR_LEVELS(TILE_LEVEL)
#undef TILE_LEVEL
}

/* The structs shared with the host (pv_sift_octave_info per octave,
 * pv_sift_settings). */
#include "../../common/sift_structs.h"

/* ------------------------------------------------------------ gradients */

/* Central differences inside, one-sided at the borders (VLFeat). */
static void gradient_at(__global const float *level, int w, int h, int x, int y, float *mod,
                        float *ang)
{
    __global const float *p = level + (size_t)y * (size_t)w + x;
    const float gx = x == 0 ? p[1] - p[0] : x == w - 1 ? p[0] - p[-1] : 0.5f * (p[1] - p[-1]);
    const float gy = y == 0 ? p[w] - p[0] : y == h - 1 ? p[0] - p[-w] : 0.5f * (p[w] - p[-w]);
    const float a = atan2(gy, gx);
    *mod = sqrt(gx * gx + gy * gy);
    *ang = a < 0.0f ? a + TWO_PI_F : a;
}


/* --------------------------------------------------------------- extrema
 * Strict maxima (>= threshold) or minima (<= -threshold) over the 26
 * neighbours in DoG levels 1 .. S.  No atomics: the candidate list comes
 * out in key order (octave, level, y, x) by construction.  One work group
 * per row of one level of one octave ("row group" g; groups of octave o
 * start at row_start[o] and run level-major, then y), so the groups' order
 * is the key order.  Pass 0 counts each row's extrema into rows[g];
 * sift_scan turns the counts into offsets (the total into counters[0]);
 * pass 1 writes them in x order, skipping rows without any.
 * Within a row, item i owns SIFT_EXT_RUN consecutive pixels of each span
 * of SIFT_EXT_WG * SIFT_EXT_RUN as a bit mask of its extrema (the pixels
 * themselves are tested in a coalesced order, see span_mask), and a local
 * scan of the items' counts places them.
 * Global size: (groups * SIFT_EXT_WG, images). */
#define EXT_SPAN (SIFT_EXT_WG * SIFT_EXT_RUN)

/* The 26 neighbours are loaded unconditionally once the threshold is
 * passed and the comparisons are and-ed: with a test after every load,
 * each load waited for the one before it (a chain of up to 26 cache
 * latencies per pixel, on which the whole pass stalled); issued together
 * they cost about one.  The verdict is the same: every comparison must
 * hold, and a NaN neighbour fails it as before. */
static int is_extremum(__global const float *d, size_t plane, int w, float v, float threshold)
{
    const int sign = v >= threshold ? 1 : v <= -threshold ? -1 : 0;
    if (!sign)
        return 0;
    int above = 1, below = 1;
#pragma unroll
    for (int s = -1; s <= 1; s++)
#pragma unroll
        for (int dy = -1; dy <= 1; dy++)
#pragma unroll
            for (int dx = -1; dx <= 1; dx++) {
                if (s == 0 && dy == 0 && dx == 0)
                    continue;
                const float n = d[(long)s * (long)plane + (long)dy * w + dx];
                above &= v > n;
                below &= v < n;
            }
    return sign > 0 ? above : below;
}

/* Exclusive scan of v over the work group (Hillis-Steele in `buf`, which
 * holds 2 * size entries); *total receives the sum. */
static uint group_scan(__local uint *buf, uint v, int lid, int size, uint *total)
{
    int in = 0;
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int offset = 1; offset < size; offset <<= 1) {
        const int out = 1 - in;
        buf[out * size + lid] = buf[in * size + lid] + (lid >= offset ? buf[in * size + lid - offset] : 0u);
        barrier(CLK_LOCAL_MEM_FENCE);
        in = out;
    }
    const uint inclusive = buf[in * size + lid];
    *total = buf[in * size + size - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return inclusive - v;
}

/* The extremum bits of one span of a row: the items test consecutive
 * pixels (coalesced loads: x = x0 + i SIFT_EXT_WG + lid), the flags are
 * turned around in local memory, and item lid gets the bits of its run of
 * SIFT_EXT_RUN consecutive pixels x0 + lid SIFT_EXT_RUN + i (bit i). */
static uint span_mask(__global const float *d, size_t plane, int w, int x0, float threshold,
                      __local uchar *flags, int lid)
{
    for (int i = 0; i < SIFT_EXT_RUN; i++) {
        const int x = x0 + i * SIFT_EXT_WG + lid;
        flags[i * SIFT_EXT_WG + lid] =
            x >= 1 && x < w - 1 && is_extremum(d + x, plane, w, d[x], threshold);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mask = 0;
    for (int i = 0; i < SIFT_EXT_RUN; i++)
        mask |= (uint)flags[lid * SIFT_EXT_RUN + i] << i;
    barrier(CLK_LOCAL_MEM_FENCE);
    return mask;
}

/* Pass 0 also keeps every item's run mask of every span in
 * masks[g * mask_pitch + span * SIFT_EXT_WG + lid], so pass 1 only reads
 * the masks of the rows that have extrema instead of testing again; and,
 * since its row groups cover every row of every stored Gaussian level
 * (DoG level l <-> Gaussian level l - 1), it fills the gradient pyramid
 * on the way: grad has the Gaussian pyramid's layout, (modulus, angle)
 * per sample, so the orientation and descriptor kernels read every
 * pixel's gradient instead of computing it once per window and descriptor
 * cell that covers it. */
__kernel __attribute__((reqd_work_group_size(SIFT_EXT_WG, 1, 1)))
void sift_extrema(__global const float *dog, __constant pv_sift_octave_info *octaves,
                  int octave_count, __constant uint *row_start, int levels, float threshold,
                  int pass, __global uint *rows, __global const uint *counters,
                  __global int4 *candidates, uint capacity, __global uint *masks,
                  uint mask_pitch, __global const float *gauss, __global float2 *grad,
                  ulong dog_stride, ulong gauss_stride)
{
    __local uint buf[2 * SIFT_EXT_WG];
    __local uchar flags[EXT_SPAN];
    const ulong image = get_group_id(1), groups = row_start[octave_count];
    dog += image * dog_stride;
    gauss += image * gauss_stride;
    grad += image * gauss_stride;
    rows += image * groups;
    counters += 2 * image;
    candidates += image * capacity;
    masks += image * groups * mask_pitch;
    const uint g = get_group_id(0);
    const int lid = get_local_id(0);
    int o = 0;
    while (o + 1 < octave_count && row_start[o + 1] <= g)
        o++;
    const int w = octaves[o].w, h = octaves[o].h;
    const int r = (int)(g - row_start[o]), level = r / h + 1, y = r % h;
    const size_t plane = (size_t)w * (size_t)h;
    __global uint *row_masks = masks + (size_t)g * mask_pitch + lid;
    if (pass == 0) {
        const size_t at = octaves[o].gauss_offset + (size_t)(level - 1) * plane;
        for (int x = lid; x < w; x += SIFT_EXT_WG) {
            float mod, ang;
            gradient_at(gauss + at, w, h, x, y, &mod, &ang);
            grad[at + (size_t)y * (size_t)w + x] = (float2)(mod, ang);
        }
        uint found = 0;
        __global const float *d =
            dog + octaves[o].dog_offset + (size_t)level * plane + (size_t)y * (size_t)w;
        if (y >= 1 && y < h - 1)
            for (int x0 = 0, span = 0; x0 < w; x0 += EXT_SPAN, span++) {
                const uint mask = span_mask(d, plane, w, x0, threshold, flags, lid);
                row_masks[span * SIFT_EXT_WG] = mask;
                found += popcount(mask);
            }
        uint total;
        group_scan(buf, found, lid, SIFT_EXT_WG, &total);
        if (lid == 0)
            rows[g] = total;
        return;
    }
    uint next = rows[g];
    const uint end = g + 1 < row_start[octave_count] ? rows[g + 1] : counters[0];
    if (end == next)
        return;
    for (int x0 = 0, span = 0; x0 < w; x0 += EXT_SPAN, span++) {
        const int xs = x0 + lid * SIFT_EXT_RUN;
        const uint mask = row_masks[span * SIFT_EXT_WG];
        uint total;
        uint at = next + group_scan(buf, popcount(mask), lid, SIFT_EXT_WG, &total);
        for (int i = 0; i < SIFT_EXT_RUN; i++)
            if (mask & (1u << i)) {
                if (at < capacity)
                    candidates[at] = (int4)(xs + i, y, level, o);
                at++;
            }
        next += total;
    }
}

/* ------------------------------------------------------------------ scan
 * In-place exclusive scan of n counts by one work group of SIFT_SCAN_WG
 * items (each sums a contiguous chunk, a local scan of the chunk sums,
 * then each rewrites its chunk); the sum goes to counters[which].  Integer sums:
 * exact and deterministic.  Global size: (SIFT_SCAN_WG, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_SCAN_WG, 1, 1)))
void sift_scan(__global uint *values, uint n, __global uint *counters, uint which,
               uint values_stride)
{
    values += get_group_id(1) * (ulong)values_stride;
    counters += 2 * get_group_id(1);
    __local uint buf[2 * SIFT_SCAN_WG];
    const int lid = get_local_id(0);
    const uint chunk = (n + SIFT_SCAN_WG - 1) / SIFT_SCAN_WG;
    const uint lo = min(n, (uint)lid * chunk), hi = min(n, lo + chunk);
    uint sum = 0;
    for (uint i = lo; i < hi; i++)
        sum += values[i];
    uint all;
    uint run = group_scan(buf, sum, lid, SIFT_SCAN_WG, &all);
    for (uint i = lo; i < hi; i++) {
        const uint v = values[i];
        values[i] = run;
        run += v;
    }
    if (lid == 0)
        counters[which] = all;
}

/* -------------------------------------------------------------- keypoints */

#include "../../common/sift_math.h"



/* ------------------------------------------------------ orientation
 * One group of SIFT_ORI_WG items per candidate.  Every item refines the
 * candidate (same loads, same arithmetic: the result is uniform over the
 * group, so no barrier is needed to share it).  The window's samples are
 * dealt to the items in turn (sample i to item i mod SIFT_ORI_WG, so
 * neighbouring items read neighbouring pixels); each item adds its
 * samples, in raster order, to its own histogram column in local memory,
 * and bin b is then the sum of the columns in item order.  A fixed
 * grouping of the serial loop's terms: deterministic, and within float
 * rounding of the CPU's histogram, while the window's work is spread over
 * the group instead of one work item. */
#define ORI_LANES SIFT_ORI_WG
#define ORI_PITCH (ORI_LANES + 1) /* a row per bin, padded: the column sums hit all banks */

typedef struct refined_point {
    float4 geom;   /* x, y, sigma (octave pixels), response */
    float scale;   /* level + offset */
} refined_point;

/* Refinement (up to 5 moves), contrast and edge tests; 0 if rejected. */
static int refine(__global const float *dog, __constant pv_sift_octave_info *octaves, int4 cand,
                  pv_sift_settings set, refined_point *out)
{
    const int o = cand.w, level = cand.z;
    const int w = octaves[o].w, h = octaves[o].h;
    const long plane = (long)w * (long)h;
    __global const float *d = dog + octaves[o].dog_offset + (long)level * plane;
    int x = cand.x, y = cand.y, dx = 0, dy = 0;
    pv_sm_dog_fit f;
    float b[3];
    for (int step = 0; step < 5; step++) {
        x += dx;
        y += dy;
        f = pv_sm_fit_at(d + (long)y * w + x, plane, w);
        pv_sm_solve_offset(&f, b);
        dx = (b[0] > 0.6f && x < w - 2) - (b[0] < -0.6f && x > 1);
        dy = (b[1] > 0.6f && y < h - 2) - (b[1] < -0.6f && y > 1);
        if (dx == 0 && dy == 0)
            break;
    }
    const float te = set.edge_thresh;
    const float val = f.v + 0.5f * (f.dx * b[0] + f.dy * b[1] + f.ds * b[2]);
    const float tr = f.dxx + f.dyy, det = f.dxx * f.dyy - f.dxy * f.dxy;
    const float score = tr * tr / det;
    const float xn = (float)x + b[0], yn = (float)y + b[1], sn = (float)level + b[2];
    const int good = fabs(val) > set.peak_thresh && score < (te + 1.0f) * (te + 1.0f) / te &&
                     score >= 0.0f && fabs(b[0]) < 1.5f && fabs(b[1]) < 1.5f &&
                     fabs(b[2]) < 1.5f && xn >= 0.0f && xn <= (float)(w - 1) && yn >= 0.0f &&
                     yn <= (float)(h - 1) && sn >= 0.0f && sn <= (float)(set.levels + 2);
    out->geom = (float4)(xn, yn, set.sigma0 * exp2(sn / (float)set.levels), val);
    out->scale = sn;
    return good;
}

/* The raw 36-bin histogram of the window around p into hist. */
static void orientation_bins(__global const float2 *grad, int w, int h, float4 p,
                             float window, __local float *columns, __local float *hist)
{
    const int lid = get_local_id(0);
    const float x = p.x, y = p.y;
    const int xi = (int)(x + 0.5f), yi = (int)(y + 0.5f);
    const float sigmaw = window * p.z;
    const int W = (int)fmax(floor(3.0f * sigmaw), 1.0f);
    const float limit = (float)(W * W) + 0.6f, denom = 2.0f * sigmaw * sigmaw;
    const int ys0 = max(-W, -yi), ys1 = min(W, h - 1 - yi);
    const int xs0 = max(-W, -xi), xs1 = min(W, w - 1 - xi);
    const int cols = xs1 - xs0 + 1, count = cols * (ys1 - ys0 + 1);
    __local float *mine = columns + lid;
    for (int b = 0; b < ORI_BINS; b++)
        mine[b * ORI_PITCH] = 0.0f;
    for (int i = lid; i < count; i += ORI_LANES) {
        const int xs = xs0 + i % cols, ys = ys0 + i / cols;
        const float dx = (float)(xi + xs) - x, dy = (float)(yi + ys) - y;
        const float r2 = dx * dx + dy * dy;
        if (r2 >= limit)
            continue;
        const float2 grd = grad[(size_t)(yi + ys) * (size_t)w + (size_t)(xi + xs)];
        const float wgt = exp(-r2 / denom) * grd.x;
        const float fbin = (float)ORI_BINS * grd.y / TWO_PI_F;
        const int bin = (int)floor(fbin - 0.5f);
        const float rbin = fbin - (float)bin - 0.5f;
        mine[((bin + ORI_BINS) % ORI_BINS) * ORI_PITCH] += (1.0f - rbin) * wgt;
        mine[((bin + 1) % ORI_BINS) * ORI_PITCH] += rbin * wgt;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < ORI_BINS; b += ORI_LANES) {
        __local const float *row = columns + b * ORI_PITCH;
        float sum = row[0];
        for (int l = 1; l < ORI_LANES; l++)
            sum += row[l];
        hist[b] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Six passes of the circular 3-tap box filter over hist (in place), each
 * bin from the previous pass's values as the serial loop computes it:
 * ((h[i-1] + h[i]) + h[i+1]) / 3. */
static void smooth_bins(__local float *hist, __local float *spare)
{
    const int lid = get_local_id(0);
    __local float *from = hist, *to = spare;
    for (int iter = 0; iter < 6; iter++) {
        for (int i = lid; i < ORI_BINS; i += ORI_LANES)
            to[i] = (from[(i + ORI_BINS - 1) % ORI_BINS] + from[i] + from[(i + 1) % ORI_BINS]) /
                    3.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local float *t = from;
        from = to;
        to = t;
    }
    /* six passes: the result is back in hist */
}

/* Up to 4 orientations from the smoothed histogram (peaks >= ori_peak of
 * the maximum, parabolic interpolation). */
static int histogram_peaks(__local const float *hist, float ori_peak, float4 *angles)
{
    float maxh = 0.0f;
    for (int i = 0; i < ORI_BINS; i++)
        maxh = fmax(maxh, hist[i]);
    const float floor_h = ori_peak * maxh;
    float found[MAX_ORIENTATIONS] = {0.0f, 0.0f, 0.0f, 0.0f};
    int n = 0;
    for (int i = 0; i < ORI_BINS && n < MAX_ORIENTATIONS; i++) {
        const float h0 = hist[i], hm = hist[(i + ORI_BINS - 1) % ORI_BINS];
        const float hp = hist[(i + 1) % ORI_BINS];
        if (h0 > floor_h && h0 > hm && h0 > hp) {
            const float di = -0.5f * (hp - hm) / (hp + hm - 2.0f * h0);
            found[n++] = TWO_PI_F * ((float)i + di + 0.5f) / (float)ORI_BINS;
        }
    }
    *angles = (float4)(found[0], found[1], found[2], found[3]);
    return n;
}

/* Moves a kernel's candidate lists and counters to those of image `image`
 * of a batch (each image's lists `capacity` entries apart, its two
 * counters side by side): one text for the kernels that take them all,
 * whatever their constness. */
#define CANDIDATES_OF_IMAGE(image, capacity)                                   \
    do {                                                                       \
        candidates += (image) * (capacity);                                    \
        counters += 2 * (image);                                               \
        cand_geom += (image) * (capacity);                                     \
        cand_scale += (image) * (capacity);                                    \
        cand_angles += (image) * (capacity);                                   \
        cand_count += (image) * (capacity);                                    \
    } while (0)

/* Candidates c = group, group + groups, ... of the ordered list (length
 * min(counters[0], capacity)): refinement, then up to 4 orientations.
 * Writes cand_count[c] (0 .. 4) for every candidate and the keypoint data
 * for those with any.  Walking the list with a fixed number of groups
 * avoids launching one (mostly idle) group per slot of the capacity.
 * Global size: (groups * SIFT_ORI_WG, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_ORI_WG, 1, 1)))
void sift_orient(__global const float *dog, __global const float2 *grad,
                 __constant pv_sift_octave_info *octaves, __global const int4 *candidates,
                 __global const uint *counters, uint capacity, pv_sift_settings set,
                 __global float4 *cand_geom, __global float *cand_scale,
                 __global float4 *cand_angles, __global uint *cand_count, ulong dog_stride,
                 ulong gauss_stride)
{
    const ulong image = get_group_id(1);
    dog += image * dog_stride;
    grad += image * gauss_stride;
    CANDIDATES_OF_IMAGE(image, capacity);
    __local float columns[ORI_BINS * ORI_PITCH];
    __local float hist[ORI_BINS], spare[ORI_BINS];
    const uint count = min(counters[0], capacity);
    const int lid = get_local_id(0);
    for (uint c = get_group_id(0); c < count; c += get_num_groups(0)) {
        const int4 cand = candidates[c];
        refined_point p;
        int n = 0;
        if (refine(dog, octaves, cand, set, &p)) {
            const int o = cand.w, w = octaves[o].w, h = octaves[o].h;
            const size_t plane =
                octaves[o].gauss_offset + (size_t)(cand.z - 1) * (size_t)w * (size_t)h;
            float4 angles;
            orientation_bins(grad + plane, w, h, p.geom, set.ori_window, columns, hist);
            smooth_bins(hist, spare);
            n = histogram_peaks(hist, set.ori_peak, &angles);
            if (lid == 0 && n > 0) {
                cand_geom[c] = p.geom;
                cand_scale[c] = p.scale;
                cand_angles[c] = angles;
            }
            barrier(CLK_LOCAL_MEM_FENCE); /* hist is reused by the next candidate */
        }
        if (lid == 0)
            cand_count[c] = (uint)n;
    }
}

/* Per group of SIFT_KP_WG candidates: the sum of their keypoint counts
 * (block_sums), which sift_scan turns into the groups' first output slots.
 * Global size: (a multiple of SIFT_KP_WG covering the capacity, images);
 * the capacity is a multiple of SIFT_KP_WG. */
__kernel __attribute__((reqd_work_group_size(SIFT_KP_WG, 1, 1)))
void sift_block_counts(__global const uint *counters, uint capacity,
                       __global const uint *cand_count, __global uint *block_sums)
{
    const ulong image = get_group_id(1);
    counters += 2 * image;
    cand_count += image * capacity;
    block_sums += image * (capacity / SIFT_KP_WG);
    __local uint buf[2 * SIFT_KP_WG];
    const uint c = get_global_id(0), count = min(counters[0], capacity);
    uint total;
    group_scan(buf, c < count ? cand_count[c] : 0u, get_local_id(0), SIFT_KP_WG, &total);
    if (get_local_id(0) == 0)
        block_sums[get_group_id(0)] = total;
}

/* The keypoints in key order: candidate c's keypoints go to its group's
 * offset (block_offsets, scanned) plus the counts of the group's earlier
 * candidates.  Writes the caller's record layout (pv_sift_keypoint: x, y,
 * sigma in input pixels, angle, response, octave, scale; 7 words), the
 * sort key, and the descriptor kernel's geometry (octave pixels, angle).
 * xper = 2^(o + first_octave) exactly (ldexp), as the CPU backend scales.
 * Same launch shape as sift_block_counts. */
__kernel __attribute__((reqd_work_group_size(SIFT_KP_WG, 1, 1)))
void sift_scatter(__global const int4 *candidates, __global const uint *counters, uint capacity,
                  __global const float4 *cand_geom, __global const float *cand_scale,
                  __global const float4 *cand_angles, __global const uint *cand_count,
                  __global const uint *block_offsets, uint kp_capacity, int first_octave,
                  __global float *records, __global ulong *kp_key, __global float4 *kp_geom)
{
    const ulong image = get_group_id(1);
    CANDIDATES_OF_IMAGE(image, capacity);
    block_offsets += image * (capacity / SIFT_KP_WG);
    records += image * kp_capacity * 7;
    kp_key += image * kp_capacity;
    kp_geom += image * kp_capacity;
    __local uint buf[2 * SIFT_KP_WG];
    const uint c = get_global_id(0), count = min(counters[0], capacity);
    const uint n = c < count ? cand_count[c] : 0u;
    uint total;
    uint k = block_offsets[get_group_id(0)] + group_scan(buf, n, get_local_id(0), SIFT_KP_WG, &total);
    if (n == 0)
        return;
    const int4 cand = candidates[c];
    const float4 geom = cand_geom[c];
    const float scale = cand_scale[c];
    const float angles[MAX_ORIENTATIONS] = {cand_angles[c].x, cand_angles[c].y, cand_angles[c].z,
                                            cand_angles[c].w};
    const float xper = ldexp(1.0f, cand.w + first_octave);
    const ulong key = ((((ulong)cand.w * 16u + (ulong)cand.z) * 65536u + (ulong)cand.y) * 65536u +
                       (ulong)cand.x) * 4u;
    for (uint i = 0; i < n; i++, k++) {
        if (k >= kp_capacity)
            return;
        __global float *r = records + (size_t)k * 7;
        r[0] = geom.x * xper;
        r[1] = geom.y * xper;
        r[2] = geom.z * xper;
        r[3] = angles[i];
        r[4] = geom.w;
        r[5] = as_float(cand.w + first_octave);
        r[6] = scale;
        kp_key[k] = key + i;
        kp_geom[k] = (float4)(geom.x, geom.y, geom.z, angles[i]);
    }
}

/* ------------------------------------------------------------ descriptors
 * One work group per keypoint: 16 spatial cells x SIFT_DESC_SPLIT items.
 * Each item gathers, for its cell, the samples of every SIFT_DESC_SPLIT-th
 * row of the cell's support (a rotated 2x2-bin square, scanned through its
 * bounding box), with VLFeat's trilinear weights, into 8 private bins; the
 * partial histograms are summed in a fixed order, so the result does not
 * depend on scheduling.  No atomics: deterministic.  Global size:
 * (kp_capacity * DESC_WG, images). */
#define DESC_WG (DESC_CELLS * SIFT_DESC_SPLIT)

#include "group_sum.cl"
/* The descriptor's squared norm, summed over the group in a fixed order. */
DEFINE_GROUP_SUM(descriptor_sum, float, DESC_WG)

static float cell_weight(float n, int cell)
{
    const int bin = (int)floor(n - 0.5f);
    const float r = n - ((float)bin + 0.5f);
    return cell == bin ? 1.0f - r : cell == bin + 1 ? r : 0.0f;
}

/* The part of range (integer offsets t) where lo < a t + b < hi can hold:
 * a row's crossing of one cell's support, widened by a pixel against
 * rounding (the loop still applies the exact weight test).  For a near 0
 * the value hardly changes along the row: the whole range. */
static int2 crossing(float a, float b, float lo, float hi, int2 range)
{
    if (fabs(a) < 1e-4f)
        return range;
    const float t0 = (lo - b) / a, t1 = (hi - b) / a;
    return (int2)(max(range.x, (int)floor(fmin(t0, t1)) - 1),
                  min(range.y, (int)ceil(fmax(t0, t1)) + 1));
}

__kernel __attribute__((reqd_work_group_size(DESC_WG, 1, 1)))
void sift_descriptors(__global const float2 *grad, __constant pv_sift_octave_info *octaves,
                      __global const float4 *kp_geom, __global const ulong *kp_key, float magnif,
                      __global const uint *counters, uint kp_capacity, __global float *descriptors,
                      ulong gauss_stride)
{
    /* keypoint k of image `image`: its slot in the image's lists */
    const ulong image = get_group_id(1);
    descriptors += image * kp_capacity * DESC_SIZE;
    __local float partial[SIFT_DESC_SPLIT][DESC_SIZE];
    __local float desc[DESC_SIZE];
    __local float norm_parts[DESC_WG];
    const int lid = get_local_id(0), cell = lid % DESC_CELLS, part = lid / DESC_CELLS;
    const size_t k = get_group_id(0), slot = image * kp_capacity + k;
    if (k >= min(counters[2 * image + 1], kp_capacity))
        return;
    const float4 geom = kp_geom[slot];
    const ulong key = kp_key[slot];
    const int level = (int)((key >> 34) & 15u), o = (int)(key >> 38);
    const int w = octaves[o].w, h = octaves[o].h;
    const size_t plane = octaves[o].gauss_offset + (size_t)(level - 1) * (size_t)w * (size_t)h;
    __global const float2 *gr = grad + image * gauss_stride + plane;
    const float x = geom.x, y = geom.y, angle = geom.w;
    const int xi = (int)(x + 0.5f), yi = (int)(y + 0.5f);
    const float st = sin(angle), ct = cos(angle), sbp = magnif * geom.z;
    const int W = (int)floor(1.41421356f * sbp * 5.0f / 2.0f + 0.5f);
    /* The cell's support: |n - centre| < 1 bin on both axes, i.e. a square
     * of side 2 sbp around the cell centre, rotated by angle. */
    const int cx = cell % 4 - 2, cy = cell / 4 - 2;
    const float ccx = ((float)cx + 0.5f) * sbp, ccy = ((float)cy + 0.5f) * sbp;
    const float px = ct * ccx - st * ccy + x, py = st * ccx + ct * ccy + y;
    const int reach = (int)ceil(1.41421356f * sbp) + 1;
    const int y_lo = max(max(-W, 1 - yi), (int)floor(py) - reach - yi);
    const int y_hi = min(min(W, h - yi - 2), (int)ceil(py) + reach - yi);
    const int x_lo = max(max(-W, 1 - xi), (int)floor(px) - reach - xi);
    const int x_hi = min(min(W, w - xi - 2), (int)ceil(px) + reach - xi);
    float bins[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    /* A cell's weight is non-zero for n in (cell - 0.5, cell + 1.5) on both
     * axes: each row is walked only where it crosses that rotated square
     * (about half of the bounding box), in the same order as before. */
    const float ox = (float)xi - x;
    for (int dyi = y_lo + part; dyi <= y_hi; dyi += SIFT_DESC_SPLIT) {
        const float dyr = (float)(yi + dyi) - y;
        int2 span = crossing(ct, ct * ox + st * dyr, sbp * ((float)cx - 0.5f),
                             sbp * ((float)cx + 1.5f), (int2)(x_lo, x_hi));
        span = crossing(-st, ct * dyr - st * ox, sbp * ((float)cy - 0.5f),
                        sbp * ((float)cy + 1.5f), span);
        for (int dxi = span.x; dxi <= span.y; dxi++) {
            const float dx = (float)(xi + dxi) - x, dy = (float)(yi + dyi) - y;
            const float nx = (ct * dx + st * dy) / sbp, ny = (-st * dx + ct * dy) / sbp;
            const float wx = cell_weight(nx, cx), wy = cell_weight(ny, cy);
            if (wx == 0.0f || wy == 0.0f)
                continue;
            const float2 grd = gr[(size_t)(yi + dyi) * (size_t)w + (size_t)(xi + dxi)];
            const float mod = grd.x;
            float theta = grd.y - angle;
            theta = theta < 0.0f ? theta + TWO_PI_F : theta;
            const float nt = 8.0f * theta / TWO_PI_F;
            const float win = exp(-(nx * nx + ny * ny) / 8.0f);
            const int bint = (int)floor(nt);
            const float rt = nt - (float)bint;
            const float wxy = win * mod * fabs(wx) * fabs(wy);
            /* Fixed indices keep the bins in registers; adding 0 to the
             * other six leaves them exactly as they were. */
            const int b0 = (bint + 8) % 8, b1 = (bint + 1) % 8;
            const float v0 = wxy * (1.0f - rt), v1 = wxy * rt;
#pragma unroll
            for (int t = 0; t < 8; t++)
                bins[t] += t == b0 ? v0 : t == b1 ? v1 : 0.0f;
        }
    }
    for (int t = 0; t < 8; t++)
        partial[part][((cy + 2) * 4 + (cx + 2)) * 8 + t] = bins[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < DESC_SIZE; i += DESC_WG) {
        float sum = 0.0f;
        for (int p = 0; p < SIFT_DESC_SPLIT; p++)
            sum += partial[p][i];
        desc[i] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Normalise, clamp at 0.2, normalise again; norms by a fixed-order
     * reduction. */
    for (int round = 0; round < 2; round++) {
        float sq = 0.0f;
        for (int i = lid; i < DESC_SIZE; i += DESC_WG)
            sq += desc[i] * desc[i];
        const float norm = sqrt(descriptor_sum(norm_parts, sq)) + 1.1920929e-7f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = lid; i < DESC_SIZE; i += DESC_WG) {
            const float v = desc[i] / norm;
            desc[i] = round == 0 ? fmin(v, 0.2f) : v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = lid; i < DESC_SIZE; i += DESC_WG)
        descriptors[k * DESC_SIZE + i] = desc[i];
}

/* --------------------------------------------------------------- matching
 * Nearest and second nearest train descriptor of each query (squared L2,
 * summed in element order as on the CPU; ties keep the lower index).
 * Work group (qx, chunk): SIFT_MATCH_WG queries (one per item, held in
 * registers as float4) against the train rows [chunk * per_chunk, ...);
 * the train rows are staged SIFT_MATCH_TILE at a time in local memory and
 * read as float4 by all items at the same address (broadcast).  Splitting
 * the train set over chunks keeps the whole device busy on small sets;
 * partial[chunk * nq + q] = (best, d1, d2) and sift_nearest_merge folds
 * the chunks in order, which gives exactly the serial scan's answer.
 * Global size: (ceil(nq / SIFT_MATCH_WG) * SIFT_MATCH_WG, chunks). */
#define DESC_VEC (DESC_SIZE / 4)

__kernel __attribute__((reqd_work_group_size(SIFT_MATCH_WG, 1, 1)))
void sift_nearest(__global const float4 *query, int nq, __global const float4 *train, int nt,
                  int per_chunk, __global int *best, __global float *best_d2,
                  __global float *second_d2)
{
    __local float4 tile[SIFT_MATCH_TILE * DESC_VEC];
    const int q = get_global_id(0), lid = get_local_id(0), chunk = get_group_id(1);
    const int t_lo = chunk * per_chunk, t_hi = min(nt, t_lo + per_chunk);
    float4 a[DESC_VEC];
    for (int k = 0; k < DESC_VEC; k++)
        a[k] = q < nq ? query[(size_t)q * DESC_VEC + k] : (float4)(0.0f);
    float d1 = INFINITY, d2 = INFINITY;
    int b1 = -1;
    for (int t0 = t_lo; t0 < t_hi; t0 += SIFT_MATCH_TILE) {
        const int n = min(SIFT_MATCH_TILE, t_hi - t0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = lid; i < n * DESC_VEC; i += SIFT_MATCH_WG)
            tile[i] = train[(size_t)t0 * DESC_VEC + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = 0; t < n; t++) {
            __local const float4 *b = tile + t * DESC_VEC;
            float acc = 0.0f;
            for (int k = 0; k < DESC_VEC; k++) {
                const float4 diff = a[k] - b[k];
                acc += diff.x * diff.x;
                acc += diff.y * diff.y;
                acc += diff.z * diff.z;
                acc += diff.w * diff.w;
            }
            if (acc < d1) {
                d2 = d1;
                d1 = acc;
                b1 = t0 + t;
            } else if (acc < d2) {
                d2 = acc;
            }
        }
    }
    if (q < nq) {
        const size_t at = (size_t)chunk * (size_t)nq + (size_t)q;
        best[at] = b1;
        best_d2[at] = d1;
        second_d2[at] = d2;
    }
}

/* Fold the chunks' (best, d1, d2) in chunk order into one record per query:
 * out = [best (nq ints) | d1 (nq) | d2 (nq)], read back in one copy.
 * Global size: nq rounded up to SIFT_MATCH_WG. */
__kernel __attribute__((reqd_work_group_size(SIFT_MATCH_WG, 1, 1)))
void sift_nearest_merge(__global const int *best, __global const float *best_d2,
                        __global const float *second_d2, int nq, int chunks, __global int *out)
{
    const int q = get_global_id(0);
    if (q >= nq)
        return;
    int b1 = best[q];
    float d1 = best_d2[q], d2 = second_d2[q];
    for (int c = 1; c < chunks; c++) {
        const size_t at = (size_t)c * (size_t)nq + (size_t)q;
        const float e1 = best_d2[at];
        if (e1 < d1) {
            d2 = fmin(d1, second_d2[at]);
            d1 = e1;
            b1 = best[at];
        } else if (e1 < d2) {
            d2 = e1;
        }
    }
    out[q] = b1;
    out[nq + q] = as_int(d1);
    out[2 * nq + q] = as_int(d2);
}
