/* SAD block matching (include/parvis/stereo.h), host side in ../stereo.c,
 * CPU oracle in ../../cpu/stereo.c.
 *
 * Defines from the host:
 *   launch parameters (family "sad"): SAD_WG_X, SAD_WG_Y, SAD_COLS_PER_ITEM,
 *     SAD_ROWS_PER_ITEM, SAD_DISP_PER_PASS (and budget values the kernel
 *     ignores);
 *   per program: SAD_RADIUS, SAD_PIXEL_U8, SAD_FULL_STATE (sub-pixel or
 *     uniqueness wanted), SAD_PACKED (plain u8 fold in one word), SAD_TILED,
 *     SAD_XCH_BUFFERS (1 or 2, what fits local memory), SAD_XCH_USHORT.
 * Strip height and disparity chunk are arguments, and the local arrays that
 * depend on them are sized by the host, so one program serves every
 * disparity range.
 *
 * sad_tiled: a work-group owns a tile of COLS = SAD_WG_X * SAD_COLS_PER_ITEM
 * columns (the outer SAD_RADIUS on each side are halo) and SAD_WG_Y strips
 * of rows_per_item rows.  All of its work-items copy the reference tile
 * (tile rows plus the vertical halo) into local memory once, and the other
 * image's tile widened by a chunk of disparities once per chunk: every
 * pixel is read from global memory once per chunk (the paper's distributed
 * loading).  Then each work-item, for SAD_DISP_PER_PASS disparities at a
 * time, keeps the column sums of its SAD_COLS_PER_ITEM columns in
 * registers, slides them down its strip (u8: one row in, one row out;
 * f32: summed afresh, for bit-equality with the CPU), swaps them with its
 * neighbours through local memory (one barrier per row and pass when the
 * exchange area is double-buffered, two otherwise), forms the window costs
 * and folds them into its pixels' match state.  The fold state of each
 * pixel lives in local memory between passes, touched only by its owner.
 *
 * sad_simple: one work-item per pixel from global memory, for windows whose
 * tile does not fit local memory.  sad_lr_check: the left-right test.
 *
 * With mirror = 1 the kernels match the horizontally mirrored images (pass
 * ref = right, oth = left) and write the result mirrored back: that is the
 * right-reference disparity map of the left-right check. */
#pragma OPENCL FP_CONTRACT OFF

#if SAD_PIXEL_U8
typedef uchar pixel_t;
typedef uint cost_t;
#define COST_NONE UINT_MAX
#define ABSDIFF(a, b) ((cost_t)abs_diff((a), (b)))
#else
typedef float pixel_t;
typedef float cost_t;
#define COST_NONE INFINITY
#define ABSDIFF(a, b) fabs((a) - (b))
#endif

/* ------------------------------------------------------------------ fold */

/* One pixel's candidates, folded in increasing d: the CPU's rules, one
 * text with it (sad_state, state_reset and state_add). */
#include "../../common/sad_fold.h"

#define STATE_COSTS (SAD_FULL_STATE ? 7 : 1) /* cost fields of sad_state */

float state_result(const sad_state *s, int min_disp, int subpixel, float uniqueness)
{
    if (s->index < 0)
        return INFINITY;
    float d = (float)(min_disp + s->index);
#if !SAD_FULL_STATE
    (void)subpixel;
    (void)uniqueness;
#else
    if (uniqueness > 0.0f) {
        float second = convert_float(cost_min(s->below, s->above));
        if (second < convert_float(s->best) * (1.0f + uniqueness))
            return INFINITY;
    }
    if (subpixel && s->minus < COST_NONE && s->plus < COST_NONE) {
        /* minus > best <= plus, so a > 0 and the denominator is positive */
        float a = convert_float(s->minus - s->best);
        float b = convert_float(s->plus - s->best);
        d += (a - b) / (2.0f * (a + b));
    }
#endif
    return d;
}

int clamp_index(int v, int hi)
{
    return clamp(v, 0, hi);
}

/* Column x of the (possibly mirrored) image in its dense buffer. */
int source_column(int x, int width, int mirror)
{
    return mirror ? width - 1 - x : x;
}

/* ------------------------------------------------------------ simple path */

/* u8: any order gives the exact sum.  f32: column sums (rows top to bottom)
 * added left to right, each from 0, as the CPU does. */
cost_t window_cost(__global const pixel_t *ref, __global const pixel_t *oth, int x, int y, int d,
                   int width, int height, int mirror)
{
    cost_t sum = 0;
    for (int i = -SAD_RADIUS; i <= SAD_RADIUS; i++) {
        int cr = source_column(clamp_index(x + i, width - 1), width, mirror);
        int co = source_column(clamp_index(x + i - d, width - 1), width, mirror);
        cost_t column = 0;
        for (int j = -SAD_RADIUS; j <= SAD_RADIUS; j++) {
            size_t row = (size_t)clamp_index(y + j, height - 1) * (size_t)width;
            column += ABSDIFF(ref[row + cr], oth[row + co]);
        }
        sum += column;
    }
    return sum;
}

__kernel void sad_simple(__global const pixel_t *ref, __global const pixel_t *oth,
                         __global float *out, int width, int height, int min_disp, int ndisp,
                         int mirror, int subpixel, float uniqueness)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    sad_state st;
    state_reset(&st);
    for (int k = 0; k < ndisp; k++) {
        int d = min_disp + k;
        int valid = x - d >= 0 && x - d < width;
        cost_t cost = valid ? window_cost(ref, oth, x, y, d, width, height, mirror) : COST_NONE;
        state_add(&st, cost, k);
    }
    out[(size_t)y * width + source_column(x, width, mirror)] =
        state_result(&st, min_disp, subpixel, uniqueness);
}

/* ----------------------------------------------------------- left-right */

__kernel void sad_lr_check(__global float *disp, __global const float *right_map, int width,
                           int height, float max_diff)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    size_t i = (size_t)y * width + x;
    float d = disp[i];
    if (!isfinite(d))
        return;
    int xr = x - (int)round(d);
    if (xr < 0 || xr >= width || !(fabs(d - right_map[(size_t)y * width + xr]) <= max_diff))
        disp[i] = INFINITY;
}

/* ------------------------------------------------------------- tiled path */
#if SAD_TILED

#define NX SAD_WG_X
#define NY SAD_WG_Y
#define P SAD_COLS_PER_ITEM
#define DP SAD_DISP_PER_PASS
#define R SAD_RADIUS
#define COLS (NX * P)
#define OUT_COLS (COLS - 2 * R)

#if SAD_XCH_USHORT
typedef ushort xch_t;
#else
typedef cost_t xch_t;
#endif

/* Local layouts put a work-item's column p at p * NX + item, so that the
 * work-items of a group touch consecutive words (no bank conflicts).  The
 * other image's rows are laid out the same way for f32 (planes of
 * oth_plane columns); u8 rows stay linear (four work-items share a word). */
#define REF_AT(t, c) (((t) * COLS) + ((c) % P) * NX + (c) / P)
#if SAD_PIXEL_U8
#define OTH_AT(g, t, j) ((t) * (g)->oth_stride + (j))
#else
#define OTH_AT(g, t, j) ((t) * (g)->oth_stride + ((j) % P) * (g)->oth_plane + (j) / P)
#endif
#define XCH_AT(buf, ly, k) ((((buf) * NY + (ly)) * DP + (k)) * COLS)

/* Sizes of this launch's local arrays (the host sizes them the same way). */
typedef struct tile_geometry {
    int rows;        /* strip height of each row slot */
    int tile_rows;   /* NY * rows + 2R staged rows */
    int chunk;       /* candidates whose other tile is staged at once */
    int oth_cols;    /* COLS + chunk - 1 */
    int oth_plane;   /* f32: columns per plane */
    int oth_stride;  /* elements per staged row of the other image */
    int slots;       /* pixels of the tile */
} tile_geometry;

tile_geometry make_geometry(int rows, int chunk)
{
    tile_geometry g;
    g.rows = rows;
    g.tile_rows = NY * rows + 2 * R;
    g.chunk = chunk;
    g.oth_cols = COLS + chunk - 1;
    g.oth_plane = (g.oth_cols + P - 1) / P;
#if SAD_PIXEL_U8
    g.oth_stride = g.oth_cols;
#else
    g.oth_stride = P * g.oth_plane;
#endif
    g.slots = NY * rows * P * NX;
    return g;
}

/* Fold state of tile pixel (row slot ly, strip row s, column p of item lx):
 * field f of sad_state at st_cost[f * slots + slot]. */
int state_slot(const tile_geometry *g, int ly, int s, int p, int lx)
{
    return (((ly * g->rows + s) * P + p) * NX) + lx;
}

sad_state state_load(__local const cost_t *st_cost, __local const int *st_index,
                     const tile_geometry *g, int i)
{
    sad_state s;
    s.best = st_cost[i];
    s.index = st_index[i];
    (void)g;
#if SAD_FULL_STATE
    const int n = g->slots;
    s.prev = st_cost[n + i];
    s.minus = st_cost[2 * n + i];
    s.plus = st_cost[3 * n + i];
    s.below = st_cost[4 * n + i];
    s.above = st_cost[5 * n + i];
    s.older = st_cost[6 * n + i];
#endif
    return s;
}

void state_store(__local cost_t *st_cost, __local int *st_index, const tile_geometry *g, int i,
                 const sad_state *s)
{
    st_cost[i] = s->best;
    st_index[i] = s->index;
    (void)g;
#if SAD_FULL_STATE
    const int n = g->slots;
    st_cost[n + i] = s->prev;
    st_cost[2 * n + i] = s->minus;
    st_cost[3 * n + i] = s->plus;
    st_cost[4 * n + i] = s->below;
    st_cost[5 * n + i] = s->above;
    st_cost[6 * n + i] = s->older;
#endif
}

/* A tile pixel's fold between passes (tile_state), loaded into registers
 * for one pass. */
#if SAD_PACKED
/* Plain u8 matching keeps one word per pixel, cost << 16 | candidate: min()
 * then picks the smallest cost and, on equal costs, the smaller candidate.
 * (The host packs only windows whose costs stay below 0xffff.) */
typedef uint tile_state;

tile_state tile_fresh(void)
{
    return UINT_MAX;
}

tile_state tile_load(__local const cost_t *st_cost, __local const int *st_index,
                     const tile_geometry *g, int i)
{
    (void)st_index;
    (void)g;
    return st_cost[i];
}

void tile_store(__local cost_t *st_cost, __local int *st_index, const tile_geometry *g, int i,
                tile_state s)
{
    (void)st_index;
    (void)g;
    st_cost[i] = s;
}

tile_state tile_add(tile_state s, cost_t cost, int index)
{
    return min(s, (cost << 16) | (uint)index);
}

float tile_result(tile_state s, int min_disp, int subpixel, float uniqueness)
{
    (void)subpixel;
    (void)uniqueness;
    return (s >> 16) == 0xffffu ? INFINITY : (float)(min_disp + (int)(s & 0xffffu));
}
#else
typedef sad_state tile_state;

tile_state tile_fresh(void)
{
    sad_state s;
    state_reset(&s);
    return s;
}

tile_state tile_load(__local const cost_t *st_cost, __local const int *st_index,
                     const tile_geometry *g, int i)
{
    return state_load(st_cost, st_index, g, i);
}

void tile_store(__local cost_t *st_cost, __local int *st_index, const tile_geometry *g, int i,
                tile_state s)
{
    state_store(st_cost, st_index, g, i, &s);
}

tile_state tile_add(tile_state s, cost_t cost, int index)
{
    state_add(&s, cost, index);
    return s;
}

float tile_result(tile_state s, int min_disp, int subpixel, float uniqueness)
{
    return state_result(&s, min_disp, subpixel, uniqueness);
}
#endif

/* Every candidate d0 .. d0 + DP - 1 of the pass is in range and has its
 * match inside the image for all the item's columns x0 .. x0 + P - 1: the
 * usual case, which needs no per-candidate test. */
int pass_all_valid(int x0, int d0, int k0, int ndisp, int width)
{
    return k0 + DP <= ndisp && x0 - (d0 + DP - 1) >= 0 && x0 + P - 1 - d0 < width;
}

/* Near the borders and at the end of the range: no candidate. */
int candidate_valid(int x, int d, int k, int ndisp, int width)
{
    return k < ndisp && x - d >= 0 && x - d < width;
}

/* Reference tile: rows row0 .. row0 + tile_rows, columns col0 .. col0 +
 * COLS, clamped to the image (replicated borders). */
void stage_ref(__local pixel_t *lref, __global const pixel_t *ref, const tile_geometry *g,
               int col0, int row0, int width, int height, int mirror)
{
    for (int t = get_local_id(1); t < g->tile_rows; t += NY) {
        const size_t row = (size_t)clamp_index(row0 + t, height - 1) * (size_t)width;
        for (int c = get_local_id(0); c < COLS; c += NX) {
            int gx = source_column(clamp_index(col0 + c, width - 1), width, mirror);
            lref[REF_AT(t, c)] = ref[row + gx];
        }
    }
}

/* Other tile of one chunk of candidates: columns ocol0 .. ocol0 + oth_cols. */
void stage_oth(__local pixel_t *loth, __global const pixel_t *oth, const tile_geometry *g,
               int ocol0, int row0, int width, int height, int mirror)
{
    for (int t = get_local_id(1); t < g->tile_rows; t += NY) {
        const size_t row = (size_t)clamp_index(row0 + t, height - 1) * (size_t)width;
        for (int j = get_local_id(0); j < g->oth_cols; j += NX) {
            int gx = source_column(clamp_index(ocol0 + j, width - 1), width, mirror);
            loth[OTH_AT(g, t, j)] = oth[row + gx];
        }
    }
}

/* The item's view of the tile during one pass: its columns lx * P .. lx *
 * P + P - 1 and, for candidate k of the pass, the other image's pixel of
 * column p at staged column jbase + p + DP - 1 - k. */
typedef struct item_view {
    __local const pixel_t *lref;
    __local const pixel_t *loth;
    const tile_geometry *geo;
    int lx;
    int jbase;
} item_view;

/* cs[p][k] += |ref - oth| of tile row t (or -= when remove). */
void add_row(cost_t cs[P][DP], const item_view *v, int t, int remove)
{
    pixel_t rv[P], ov[P + DP - 1];
    _Pragma("unroll") for (int p = 0; p < P; p++)
        rv[p] = v->lref[t * COLS + p * NX + v->lx]; /* REF_AT(t, lx * P + p) */
    _Pragma("unroll") for (int q = 0; q < P + DP - 1; q++)
        ov[q] = v->loth[OTH_AT(v->geo, t, v->jbase + q)];
    _Pragma("unroll") for (int p = 0; p < P; p++)
        _Pragma("unroll") for (int k = 0; k < DP; k++) {
            cost_t diff = ABSDIFF(rv[p], ov[p + DP - 1 - k]);
            if (remove)
                cs[p][k] -= diff;
            else
                cs[p][k] += diff;
        }
}

/* Column sums over tile rows t0 .. t0 + 2R, top to bottom from 0. */
void column_sums(cost_t cs[P][DP], const item_view *v, int t0)
{
    _Pragma("unroll") for (int p = 0; p < P; p++)
        _Pragma("unroll") for (int k = 0; k < DP; k++)
            cs[p][k] = 0;
    for (int t = t0; t <= t0 + 2 * R; t++)
        add_row(cs, v, t, 0);
}

/* Column sums of strip row s: u8 slides them from row s - 1 (exact integer
 * sums), f32 sums afresh (the CPU's rounding). */
void update_column_sums(cost_t cs[P][DP], const item_view *v, int strip, int s)
{
#if SAD_PIXEL_U8
    if (s > 0) {
        add_row(cs, v, strip + s + 2 * R, 0);
        add_row(cs, v, strip + s - 1, 1);
        return;
    }
#endif
    column_sums(cs, v, strip + s);
}

void publish_column_sums(__local xch_t *xrow, cost_t cs[P][DP], int lx)
{
    _Pragma("unroll") for (int p = 0; p < P; p++)
        _Pragma("unroll") for (int k = 0; k < DP; k++)
            xrow[k * COLS + p * NX + lx] = (xch_t)cs[p][k];
}

/* Column sum of tile column lx * P + e (e may reach into the neighbours'
 * columns) for candidate k: own columns from registers, others from the
 * exchange area.  Columns beyond the tile (halo items only) read a clamped
 * neighbour: those outputs are discarded. */
#define COLUMN_SUM(e, k)                                                        \
    (((e) >= 0 && (e) < P) ? cs[clamp((e), 0, P - 1)][k]                        \
                           : (cost_t)xrow[(k) * COLS + (((e) % P + P) % P) * NX + \
                                          clamp(lx + ((e) - (((e) % P + P) % P)) / P, 0, NX - 1)])

/* Window costs of the item's P columns for candidate k. */
void window_costs(cost_t c[P], cost_t cs[P][DP], __local const xch_t *xrow, int lx, int k)
{
#if SAD_PIXEL_U8
    /* integer sums: slide along the item's columns */
    cost_t sum = 0;
    _Pragma("unroll") for (int i = 0; i <= 2 * R; i++)
        sum += COLUMN_SUM(i - R, k);
    c[0] = sum;
    _Pragma("unroll") for (int p = 1; p < P; p++) {
        sum += COLUMN_SUM(p + R, k) - COLUMN_SUM(p - 1 - R, k);
        c[p] = sum;
    }
#else
    /* f32: each window summed left to right from 0 */
    _Pragma("unroll") for (int p = 0; p < P; p++) {
        cost_t sum = 0.0f;
        _Pragma("unroll") for (int i = 0; i <= 2 * R; i++)
            sum += COLUMN_SUM(p + i - R, k);
        c[p] = sum;
    }
#endif
}

/* lref: tile_rows * COLS pixels; loth: tile_rows * oth_stride pixels;
 * st_cost: STATE_COSTS * slots costs; st_index: slots ints (tile_geometry;
 * the packed fold uses st_cost only). */
__kernel __attribute__((reqd_work_group_size(SAD_WG_X, SAD_WG_Y, 1)))
void sad_tiled(__global const pixel_t *ref, __global const pixel_t *oth, __global float *out,
               int width, int height, int min_disp, int ndisp, int rows_per_item, int chunk,
               int mirror, int subpixel, float uniqueness, __local pixel_t *lref,
               __local pixel_t *loth, __local cost_t *st_cost, __local int *st_index)
{
    __local xch_t xch[SAD_XCH_BUFFERS * NY * DP * COLS];

    const tile_geometry geo = make_geometry(rows_per_item, chunk);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int sh = geo.rows;
    const int col0 = get_group_id(0) * OUT_COLS - R; /* image column of tile column 0 */
    const int x0 = col0 + lx * P;                    /* image column of the item's first column */
    const int y0 = get_group_id(1) * NY * sh;        /* first output row */
    const int row0 = y0 - R;                         /* image row of tile row 0 */
    const int strip = ly * sh;                       /* this slot's first output row, in the tile */

    stage_ref(lref, ref, &geo, col0, row0, width, height, mirror);
    for (int s = 0; s < sh; s++)
        for (int p = 0; p < P; p++)
            tile_store(st_cost, st_index, &geo, state_slot(&geo, ly, s, p, lx), tile_fresh());

    int buf = 0;
    for (int first = 0; first < ndisp; first += chunk) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous chunk's reads of loth are done */
        stage_oth(loth, oth, &geo, col0 - (min_disp + first) - (chunk - 1), row0, width, height,
                  mirror);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int pass = 0; pass < chunk && first + pass < ndisp; pass += DP) {
            const int k0 = first + pass, d0 = min_disp + k0; /* candidate k = 0 of the pass */
            const int all_valid = pass_all_valid(x0, d0, k0, ndisp, width);
            const item_view view = {lref, loth, &geo, lx, lx * P + chunk - pass - DP};
            cost_t cs[P][DP];
            for (int s = 0; s < sh; s++) {
                update_column_sums(cs, &view, strip, s);
                __local xch_t *xrow = xch + XCH_AT(buf, ly, 0);
                publish_column_sums(xrow, cs, lx);
                barrier(CLK_LOCAL_MEM_FENCE);

                tile_state st[P];
                _Pragma("unroll") for (int p = 0; p < P; p++)
                    st[p] = tile_load(st_cost, st_index, &geo, state_slot(&geo, ly, s, p, lx));
                _Pragma("unroll") for (int k = 0; k < DP; k++) {
                    cost_t c[P];
                    window_costs(c, cs, xrow, lx, k);
                    if (!all_valid)
                        _Pragma("unroll") for (int p = 0; p < P; p++)
                            if (!candidate_valid(x0 + p, d0 + k, k0 + k, ndisp, width))
                                c[p] = COST_NONE;
                    _Pragma("unroll") for (int p = 0; p < P; p++)
                        st[p] = tile_add(st[p], c[p], k0 + k);
                }
                _Pragma("unroll") for (int p = 0; p < P; p++)
                    tile_store(st_cost, st_index, &geo, state_slot(&geo, ly, s, p, lx), st[p]);
#if SAD_XCH_BUFFERS == 2
                buf ^= 1;
#else
                barrier(CLK_LOCAL_MEM_FENCE); /* all reads done before the next row's writes */
#endif
            }
        }
    }

    for (int s = 0; s < sh; s++)
        for (int p = 0; p < P; p++) {
            const int c = lx * P + p, y = y0 + strip + s;
            if (c < R || c >= COLS - R || x0 + p >= width || y >= height)
                continue;
            tile_state st = tile_load(st_cost, st_index, &geo, state_slot(&geo, ly, s, p, lx));
            out[(size_t)y * width + source_column(x0 + p, width, mirror)] =
                tile_result(st, min_disp, subpixel, uniqueness);
        }
}

#endif /* SAD_TILED */
