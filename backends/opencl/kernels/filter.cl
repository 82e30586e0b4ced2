/* parvis filter kernels: separable Gaussian passes and image gradients.
 *
 * Built with the "filter" launch-parameter family as -D defines:
 *   FILTER_WG_X, FILTER_WG_Y      work-group shape of the Gaussian passes
 *   FILTER_ROW_STEPS              outputs per work item along x (row pass)
 *   FILTER_COL_STEPS              outputs per work item along y (column pass)
 *   FILTER_GRAD_WG_X, _WG_Y       work-group shape of the gradient kernel
 *
 * Images and volumes are dense on the device: element (x, y, z) lives at
 * x + nx * (y + ny * z).  A 2D image is a volume with nz = 1.  Borders are
 * replicated by clamping coordinates.
 *
 * The CPU backend (backends/cpu/filter.c) does the same float operations
 * in the same order: acc = 0, then acc += w[k] * v for k = 0 .. 2r.
 * Contraction into fma is switched off so the two agree to the last bit
 * on devices that honour the pragma. */
#pragma OPENCL FP_CONTRACT OFF

#define ROW_TILE (FILTER_WG_X * FILTER_ROW_STEPS)
#define COL_TILE (FILTER_WG_Y * FILTER_COL_STEPS)

static float load_u8(__global const uchar *p, size_t i) { return convert_float(p[i]); }
static float load_f32(__global const float *p, size_t i) { return p[i]; }

static size_t dense_index(int x, int y, int z, int nx, int ny)
{
    return (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
}

/* ---------------------------------------------------------------- row pass
 * Each work group filters FILTER_WG_Y rows of ROW_TILE outputs.  The rows'
 * input span (ROW_TILE + 2r values) is staged once in local memory because
 * every input value is read by 2r + 1 outputs.  `tile` holds
 * FILTER_WG_Y * (ROW_TILE + 2r) floats (sized by the host).
 * Global size: (ceil(nx / ROW_TILE) * FILTER_WG_X, ny, nz). */
#define DEFINE_GAUSS_ROWS(SUFFIX, TYPE)                                                  \
__kernel __attribute__((reqd_work_group_size(FILTER_WG_X, FILTER_WG_Y, 1)))             \
void gauss_rows_##SUFFIX(__global const TYPE *src, __global float *dst,                 \
                         __constant float *weights, int radius, int nx, int ny,         \
                         __local float *tile)                                            \
{                                                                                        \
    const int lx = get_local_id(0);                                                      \
    const int x0 = get_group_id(0) * ROW_TILE;                                           \
    const int y = get_global_id(1);                                                      \
    const int z = get_global_id(2);                                                      \
    const int span = ROW_TILE + 2 * radius;                                              \
    __local float *line = tile + get_local_id(1) * span;                                 \
    /* Rows past the image still load (a clamped row) so every item hits the barrier. */ \
    const size_t row = dense_index(0, min(y, ny - 1), z, nx, ny);                        \
    for (int i = lx; i < span; i += FILTER_WG_X)                                         \
        line[i] = load_##SUFFIX(src, row + clamp(x0 - radius + i, 0, nx - 1));           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    if (y >= ny)                                                                         \
        return;                                                                          \
    for (int s = 0; s < FILTER_ROW_STEPS; s++) {                                         \
        const int offset = lx + s * FILTER_WG_X;                                         \
        if (x0 + offset >= nx)                                                           \
            break;                                                                       \
        float acc = 0.0f;                                                                \
        for (int k = 0; k <= 2 * radius; k++)                                            \
            acc += weights[k] * line[offset + k];                                        \
        dst[row + x0 + offset] = acc;                                                    \
    }                                                                                    \
}

DEFINE_GAUSS_ROWS(u8, uchar)
DEFINE_GAUSS_ROWS(f32, float)

/* ------------------------------------------------------------- column pass
 * Each work group filters COL_TILE rows of FILTER_WG_X columns of one
 * slice, staging (COL_TILE + 2r) x FILTER_WG_X inputs in local memory.
 * Used for the y pass of 2D and 3D blurs.
 * Global size: (nx, ceil(ny / COL_TILE) * FILTER_WG_Y, nz). */
__kernel __attribute__((reqd_work_group_size(FILTER_WG_X, FILTER_WG_Y, 1)))
void gauss_cols(__global const float *src, __global float *dst, __constant float *weights,
                int radius, int nx, int ny, __local float *tile)
{
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int x = get_global_id(0);
    const int y0 = get_group_id(1) * COL_TILE;
    const int z = get_global_id(2);
    const int span = COL_TILE + 2 * radius;
    /* Columns past the image load a clamped column so every item hits the barrier. */
    const int xc = min(x, nx - 1);
    for (int i = ly; i < span; i += FILTER_WG_Y)
        tile[i * FILTER_WG_X + lx] = src[dense_index(xc, clamp(y0 - radius + i, 0, ny - 1), z, nx, ny)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= nx)
        return;
    for (int s = 0; s < FILTER_COL_STEPS; s++) {
        const int offset = ly + s * FILTER_WG_Y;
        if (y0 + offset >= ny)
            break;
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; k++)
            acc += weights[k] * tile[(offset + k) * FILTER_WG_X + lx];
        dst[dense_index(x, y0 + offset, z, nx, ny)] = acc;
    }
}

/* --------------------------------------------------------- untiled passes
 * One output per work item, inputs read straight from global memory along
 * `axis` (0 = x, 1 = y, 2 = z).  Used for the z pass, where neighbouring
 * work items (along x) already read neighbouring addresses and a z tile
 * would need z-blocked work groups, and as the fallback when a row or
 * column tile does not fit in local memory (very wide kernels).
 * Global size: (nx, ny, nz). */
static void axis_geometry(int axis, int x, int y, int z, int nx, int ny, int nz,
                          int *coord, int *length, size_t *step)
{
    *coord = axis == 0 ? x : axis == 1 ? y : z;
    *length = axis == 0 ? nx : axis == 1 ? ny : nz;
    *step = axis == 0 ? 1 : axis == 1 ? (size_t)nx : (size_t)nx * (size_t)ny;
}

#define DEFINE_GAUSS_AXIS(SUFFIX, TYPE)                                                  \
__kernel void gauss_axis_##SUFFIX(__global const TYPE *src, __global float *dst,        \
                                  __constant float *weights, int radius,                \
                                  int nx, int ny, int nz, int axis)                      \
{                                                                                        \
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);          \
    if (x >= nx || y >= ny || z >= nz)                                                   \
        return;                                                                          \
    int coord, length;                                                                   \
    size_t step;                                                                         \
    axis_geometry(axis, x, y, z, nx, ny, nz, &coord, &length, &step);                    \
    const size_t here = dense_index(x, y, z, nx, ny);                                    \
    const size_t line = here - (size_t)coord * step;                                     \
    float acc = 0.0f;                                                                    \
    for (int k = 0; k <= 2 * radius; k++) {                                              \
        const int c = clamp(coord - radius + k, 0, length - 1);                          \
        acc += weights[k] * load_##SUFFIX(src, line + (size_t)c * step);                 \
    }                                                                                    \
    dst[here] = acc;                                                                     \
}

DEFINE_GAUSS_AXIS(u8, uchar)
DEFINE_GAUSS_AXIS(f32, float)

/* ---------------------------------------------------------------- gradient
 * Derivative along `axis` of a dense image / volume.  scheme 0 (central):
 * (f(c+1) - f(c-1)) / 2 inside, one-sided differences at the borders, 0
 * when the axis has one sample.  scheme 1 (forward): f(c+1) - f(c), 0 at
 * the far border.  Memory-bound: one launch per requested output, each
 * reading only the two samples it needs.
 * Global size: (nx, ny, nz) in FILTER_GRAD_WG_X x FILTER_GRAD_WG_Y x 1. */
#define DEFINE_GRADIENT(SUFFIX, TYPE)                                                    \
__kernel __attribute__((reqd_work_group_size(FILTER_GRAD_WG_X, FILTER_GRAD_WG_Y, 1)))   \
void gradient_##SUFFIX(__global const TYPE *src, __global float *dst,                   \
                       int nx, int ny, int nz, int axis, int scheme)                     \
{                                                                                        \
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);          \
    if (x >= nx || y >= ny || z >= nz)                                                   \
        return;                                                                          \
    int coord, length;                                                                   \
    size_t step;                                                                         \
    axis_geometry(axis, x, y, z, nx, ny, nz, &coord, &length, &step);                    \
    const size_t here = dense_index(x, y, z, nx, ny);                                    \
    const int lo = scheme == 0 ? max(coord - 1, 0) : coord;                              \
    const int hi = min(coord + 1, length - 1);                                           \
    if (hi == lo) {                                                                      \
        dst[here] = 0.0f;                                                                \
        return;                                                                          \
    }                                                                                    \
    const float scale = hi - lo == 2 ? 0.5f : 1.0f;                                      \
    const float f_hi = load_##SUFFIX(src, here + (size_t)(hi - coord) * step);           \
    const float f_lo = load_##SUFFIX(src, here - (size_t)(coord - lo) * step);           \
    dst[here] = (f_hi - f_lo) * scale;                                                   \
}

DEFINE_GRADIENT(u8, uchar)
DEFINE_GRADIENT(f32, float)
