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
 * The CPU backend (backends/cpu/filter/filter.c) does the same float operations
 * in the same order: acc = 0, then acc += w[k] * v for k = 0 .. 2r.
 * Contraction into fma is switched off so the two agree to the last bit
 * on devices that honour the pragma. */
#pragma OPENCL FP_CONTRACT OFF

static float load_u8(__global const uchar *p, size_t i) { return convert_float(p[i]); }
static float load_f32(__global const float *p, size_t i) { return p[i]; }

static size_t dense_index(int x, int y, int z, int nx, int ny)
{
    return (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
}

/* ---------------------------------------------------------- tiled passes
 * The x pass of 2D and 3D blurs (u8 or f32 input) and their y pass, in
 * the shape separable.cl describes, with this family's parameters. */
#define SEPARABLE_WG_X FILTER_WG_X
#define SEPARABLE_WG_Y FILTER_WG_Y
#define SEPARABLE_ROW_STEPS FILTER_ROW_STEPS
#define SEPARABLE_COL_STEPS FILTER_COL_STEPS
#include "separable.cl"

DEFINE_SEPARABLE_ROWS(rows_u8, uchar, load_u8)
DEFINE_SEPARABLE_ROWS(rows_f32, float, load_f32)

#define DEFINE_GAUSS_ROWS(SUFFIX, TYPE)                                                  \
__kernel __attribute__((reqd_work_group_size(FILTER_WG_X, FILTER_WG_Y, 1)))             \
void gauss_rows_##SUFFIX(__global const TYPE *src, __global float *dst,                 \
                         __constant float *weights, int radius, int nx, int ny,         \
                         __local float *tile)                                            \
{                                                                                        \
    rows_##SUFFIX(src, dst, weights, radius, nx, ny, get_global_id(2), tile);            \
}

DEFINE_GAUSS_ROWS(u8, uchar)
DEFINE_GAUSS_ROWS(f32, float)

__kernel __attribute__((reqd_work_group_size(FILTER_WG_X, FILTER_WG_Y, 1)))
void gauss_cols(__global const float *src, __global float *dst, __constant float *weights,
                int radius, int nx, int ny, __local float *tile)
{
    separable_cols(src, dst, weights, radius, nx, ny, get_global_id(2), tile);
}

/* --------------------------------------------------------- untiled passes
 * One output per work item, inputs read straight from global memory along
 * `axis` (0 = x, 1 = y, 2 = z).  Used for the z pass, where neighbouring
 * work items (along x) already read neighbouring addresses and a z tile
 * would need z-blocked work groups, and as the fallback when a row or
 * column tile does not fit in local memory (very wide kernels).
 * Global size: (nx, ny, nz). */
typedef struct axis_walk {
    int coord, length;   /* this item's place on the line, and the line's length */
    size_t step, here;   /* elements between neighbours on the line; this item's element */
} axis_walk;

/* This work item's element and the line along `axis` through it; 0 when
 * the item lies past the data. */
static int walk_axis(int axis, int nx, int ny, int nz, axis_walk *walk)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return 0;
    walk->coord = axis == 0 ? x : axis == 1 ? y : z;
    walk->length = axis == 0 ? nx : axis == 1 ? ny : nz;
    walk->step = axis == 0 ? 1 : axis == 1 ? (size_t)nx : (size_t)nx * (size_t)ny;
    walk->here = dense_index(x, y, z, nx, ny);
    return 1;
}

#define DEFINE_GAUSS_AXIS(SUFFIX, TYPE)                                                  \
__kernel void gauss_axis_##SUFFIX(__global const TYPE *src, __global float *dst,        \
                                  __constant float *weights, int radius,                \
                                  int nx, int ny, int nz, int axis)                      \
{                                                                                        \
    axis_walk walk;                                                                      \
    if (!walk_axis(axis, nx, ny, nz, &walk))                                             \
        return;                                                                          \
    const size_t line = walk.here - (size_t)walk.coord * walk.step;                      \
    float acc = 0.0f;                                                                    \
    for (int k = 0; k <= 2 * radius; k++) {                                              \
        const int c = clamp(walk.coord - radius + k, 0, walk.length - 1);                \
        acc += weights[k] * load_##SUFFIX(src, line + (size_t)c * walk.step);            \
    }                                                                                    \
    dst[walk.here] = acc;                                                                \
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
    axis_walk walk;                                                                      \
    if (!walk_axis(axis, nx, ny, nz, &walk))                                             \
        return;                                                                          \
    const int lo = scheme == 0 ? max(walk.coord - 1, 0) : walk.coord;                   \
    const int hi = min(walk.coord + 1, walk.length - 1);                                 \
    if (hi == lo) {                                                                      \
        dst[walk.here] = 0.0f;                                                           \
        return;                                                                          \
    }                                                                                    \
    const float scale = hi - lo == 2 ? 0.5f : 1.0f;                                      \
    const size_t up = walk.here + (size_t)(hi - walk.coord) * walk.step;                 \
    const size_t down = walk.here - (size_t)(walk.coord - lo) * walk.step;               \
    dst[walk.here] = (load_##SUFFIX(src, up) - load_##SUFFIX(src, down)) * scale;        \
}

DEFINE_GRADIENT(u8, uchar)
DEFINE_GRADIENT(f32, float)
