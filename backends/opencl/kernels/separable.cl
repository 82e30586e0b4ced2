/* The tiled row and column passes of a separable filter, shared by the
 * programs that blur (build-aux/embed-kernels.sh inlines this file where a
 * program says #include "separable.cl").  The including program defines,
 * from its own launch parameters:
 *   SEPARABLE_WG_X, SEPARABLE_WG_Y    the passes' work-group shape
 *   SEPARABLE_ROW_STEPS               outputs per work item along x
 *   SEPARABLE_COL_STEPS               outputs per work item along y
 * Data are dense: element (x, y, z) lives at x + nx * (y + ny * z), z
 * being any index of an x-y slice.  Borders are replicated by clamping.
 * Each output is acc = 0, then acc += w[k] * v for k = 0 .. 2r, the order
 * of the CPU backend. */

#define SEPARABLE_ROW_TILE (SEPARABLE_WG_X * SEPARABLE_ROW_STEPS)
#define SEPARABLE_COL_TILE (SEPARABLE_WG_Y * SEPARABLE_COL_STEPS)

static size_t separable_index(int x, int y, int z, int nx, int ny)
{
    return (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
}

/* Row pass: a work group filters SEPARABLE_WG_Y rows of SEPARABLE_ROW_TILE
 * outputs of slice z.  The rows' input span (tile + 2r values) is staged
 * once in local memory, since every input is read by 2r + 1 outputs;
 * `tile` holds SEPARABLE_WG_Y * (SEPARABLE_ROW_TILE + 2r) floats.
 * Global size: (ceil(nx / SEPARABLE_ROW_TILE) * SEPARABLE_WG_X, ny, slices).
 * LOAD(src, i) reads element i of src as a float. */
#define DEFINE_SEPARABLE_ROWS(NAME, TYPE, LOAD)                                          \
static void NAME(__global const TYPE *src, __global float *dst, __constant float *weights, \
                 int radius, int nx, int ny, int z, __local float *tile)                 \
{                                                                                        \
    const int lx = get_local_id(0);                                                      \
    const int x0 = get_group_id(0) * SEPARABLE_ROW_TILE;                                 \
    const int y = get_global_id(1);                                                      \
    const int span = SEPARABLE_ROW_TILE + 2 * radius;                                    \
    __local float *line = tile + get_local_id(1) * span;                                 \
    /* Rows past the data still load (a clamped row) so every item hits the barrier. */  \
    const size_t row = separable_index(0, min(y, ny - 1), z, nx, ny);                    \
    for (int i = lx; i < span; i += SEPARABLE_WG_X)                                      \
        line[i] = LOAD(src, row + clamp(x0 - radius + i, 0, nx - 1));                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    if (y >= ny)                                                                         \
        return;                                                                          \
    for (int s = 0; s < SEPARABLE_ROW_STEPS; s++) {                                      \
        const int offset = lx + s * SEPARABLE_WG_X;                                      \
        if (x0 + offset >= nx)                                                           \
            break;                                                                       \
        float acc = 0.0f;                                                                \
        for (int k = 0; k <= 2 * radius; k++)                                            \
            acc += weights[k] * line[offset + k];                                        \
        dst[row + x0 + offset] = acc;                                                    \
    }                                                                                    \
}

/* Column pass: a work group filters SEPARABLE_COL_TILE rows of
 * SEPARABLE_WG_X columns of slice z, staging (tile + 2r) x SEPARABLE_WG_X
 * inputs in local memory.
 * Global size: (nx, ceil(ny / SEPARABLE_COL_TILE) * SEPARABLE_WG_Y, slices). */
static void separable_cols(__global const float *src, __global float *dst,
                           __constant float *weights, int radius, int nx, int ny, int z,
                           __local float *tile)
{
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int x = get_global_id(0);
    const int y0 = get_group_id(1) * SEPARABLE_COL_TILE;
    const int span = SEPARABLE_COL_TILE + 2 * radius;
    /* Columns past the data load a clamped column so every item hits the barrier. */
    const int xc = min(x, nx - 1);
    for (int i = ly; i < span; i += SEPARABLE_WG_Y)
        tile[i * SEPARABLE_WG_X + lx] =
            src[separable_index(xc, clamp(y0 - radius + i, 0, ny - 1), z, nx, ny)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= nx)
        return;
    for (int s = 0; s < SEPARABLE_COL_STEPS; s++) {
        const int offset = ly + s * SEPARABLE_WG_Y;
        if (y0 + offset >= ny)
            break;
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; k++)
            acc += weights[k] * tile[(offset + k) * SEPARABLE_WG_X + lx];
        dst[separable_index(x, y0 + offset, z, nx, ny)] = acc;
    }
}
