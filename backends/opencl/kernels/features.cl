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

/* The keypoint stages (orientation, descriptors, matching) live in
 * features_keypoints.cl; the headers they use are included here, since the
 * embedding expands one level of includes. */
#include "../../common/sift_math.h"
#include "group_sum.cl"
#include "features_keypoints.cl"
#include "features_chain.cl"
