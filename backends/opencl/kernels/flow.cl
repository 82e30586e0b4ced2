/* parvis flow kernels: CLG-3D optical flow with a divergence term.
 *
 * Built with the "flow" launch-parameter family as -D defines:
 *   FLOW_WG_X, FLOW_WG_Y          work-group shape of the per-voxel kernels
 *                                 (gradients, resampling, z pass, Jacobi)
 *   FLOW_SMOOTH_WG_X, _WG_Y       work-group shape of the tiled x / y passes
 *   FLOW_ROW_STEPS, FLOW_COL_STEPS outputs per work item of those passes
 *   FLOW_REDUCE_WG                work-group size of the change reduction
 *                                 (a power of two)
 *   FLOW_REDUCE_GROUPS            work groups of the change reduction
 *
 * Volumes are dense: voxel (x, y, z) of a level is x + nx (y + ny z).
 * Multi-component buffers (gradients: 3, tensor: 9) hold component c at
 * offset c * n.  Tensor order: J11 J12 J13 J22 J23 J33 J14 J24 J34; after
 * the z pass the last three hold b = J[1:3,1:3] U0 - J[1:3,4].
 *
 * The float operations match backends/cpu/flow/flow.c (and the CPU filter for
 * the Gaussian passes) in order, with contraction into fma off; the
 * derivation of the Jacobi update is written there. */
#pragma OPENCL FP_CONTRACT OFF

#define TENSOR_COMPONENTS 9

static size_t voxel(int x, int y, int z, int nx, int ny)
{
    return (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
}

/* ----------------------------------------------------------------- pyramid
 * coarse = mean of the fine 2x2x2 block (2x2 when fnz == 1) at 2X .. 2X+1,
 * clamped at the far face, summed z, y, x.  Global: coarse size. */
__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_downsample(__global const float *fine, __global float *coarse, int fnx, int fny,
                     int fnz, int cnx, int cny, int cnz)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= cnx || y >= cny || z >= cnz)
        return;
    const int f0 = fnx > 1 ? 2 : 1, f1 = fny > 1 ? 2 : 1, f2 = fnz > 1 ? 2 : 1;
    const float inv = 1.0f / (float)(f0 * f1 * f2);
    float s = 0.0f;
    for (int dz = 0; dz < f2; dz++)
        for (int dy = 0; dy < f1; dy++)
            for (int dx = 0; dx < f0; dx++) {
                const int fx = min(f0 * x + dx, fnx - 1);
                const int fy = min(f1 * y + dy, fny - 1);
                const int fz = min(f2 * z + dz, fnz - 1);
                s += fine[voxel(fx, fy, fz, fnx, fny)];
            }
    coarse[voxel(x, y, z, cnx, cny)] = s * inv;
}

/* ----------------------------------------------------------------- sampler
 * Trilinear, coordinates clamped to the volume; lerp order as the CPU's. */
static float lerp1(float a, float b, float t)
{
    return a + t * (b - a);
}

static float sample(__global const float *f, int nx, int ny, int nz, float x, float y, float z)
{
    x = clamp(x, 0.0f, (float)(nx - 1));
    y = clamp(y, 0.0f, (float)(ny - 1));
    z = clamp(z, 0.0f, (float)(nz - 1));
    const int x0 = (int)x, y0 = (int)y, z0 = (int)z;
    const int x1 = min(x0 + 1, nx - 1), y1 = min(y0 + 1, ny - 1), z1 = min(z0 + 1, nz - 1);
    const float fx = x - (float)x0, fy = y - (float)y0, fz = z - (float)z0;
    __global const float *p00 = f + voxel(0, y0, z0, nx, ny);
    __global const float *p10 = f + voxel(0, y1, z0, nx, ny);
    __global const float *p01 = f + voxel(0, y0, z1, nx, ny);
    __global const float *p11 = f + voxel(0, y1, z1, nx, ny);
    const float c00 = lerp1(p00[x0], p00[x1], fx), c10 = lerp1(p10[x0], p10[x1], fx);
    const float c01 = lerp1(p01[x0], p01[x1], fx), c11 = lerp1(p11[x0], p11[x1], fx);
    return lerp1(lerp1(c00, c10, fy), lerp1(c01, c11, fy), fz);
}

/* Fine voxel x sits at coarse coordinate (x + 0.5) / 2 - 0.5 on a halved
 * axis; the flow doubles along halved axes.  Global: fine size. */
__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_upsample(__global const float *cu, __global const float *cv, __global const float *cw,
                   __global float *fu, __global float *fv, __global float *fw, int cnx, int cny,
                   int cnz, int fnx, int fny, int fnz)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= fnx || y >= fny || z >= fnz)
        return;
    const float sx = fnx > 1 ? 2.0f : 1.0f, sy = fny > 1 ? 2.0f : 1.0f, sz = fnz > 1 ? 2.0f : 1.0f;
    const float cx = sx > 1.0f ? (float)x * 0.5f - 0.25f : (float)x;
    const float cy = sy > 1.0f ? (float)y * 0.5f - 0.25f : (float)y;
    const float cz = sz > 1.0f ? (float)z * 0.5f - 0.25f : (float)z;
    const size_t i = voxel(x, y, z, fnx, fny);
    fu[i] = sample(cu, cnx, cny, cnz, cx, cy, cz) * sx;
    fv[i] = sample(cv, cnx, cny, cnz, cx, cy, cz) * sy;
    fw[i] = sample(cw, cnx, cny, cnz, cx, cy, cz) * sz;
}

/* Global: n (1D). */
__kernel void flow_zero3(__global float *u, __global float *v, __global float *w, int n)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    u[i] = 0.0f;
    v[i] = 0.0f;
    w[i] = 0.0f;
}

/* --------------------------------------------------------------- gradients
 * All three derivatives of I1 in one pass (the CPU filter's formulas):
 * scheme 0 central, one-sided at the faces; scheme 1 forward, 0 at the far
 * face; 0 on an axis of one sample.  Global: level size. */
static float derivative(__global const float *f, size_t here, int c, int len, size_t step,
                        int scheme)
{
    const int lo = scheme == 0 ? max(c - 1, 0) : c;
    const int hi = min(c + 1, len - 1);
    if (hi == lo)
        return 0.0f;
    const float scale = hi - lo == 2 ? 0.5f : 1.0f;
    return (f[here + (size_t)(hi - c) * step] - f[here - (size_t)(c - lo) * step]) * scale;
}

__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_gradients(__global const float *src, __global float *grad, int nx, int ny, int nz,
                    int scheme)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    const size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
    const size_t i = voxel(x, y, z, nx, ny);
    grad[i] = derivative(src, i, x, nx, 1, scheme);
    grad[n + i] = derivative(src, i, y, ny, (size_t)nx, scheme);
    grad[2 * n + i] = derivative(src, i, z, nz, (size_t)nx * (size_t)ny, scheme);
}

/* -------------------------------------------------------------- resampling
 * out = moving(x + U) - (subtract ? fixed : 0).  Global: level size. */
__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_resample(__global const float *fixed, __global const float *moving,
                   __global const float *u, __global const float *v, __global const float *w,
                   __global float *out, int nx, int ny, int nz, int subtract)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    const size_t i = voxel(x, y, z, nx, ny);
    const float warped = sample(moving, nx, ny, nz, (float)x + u[i], (float)y + v[i],
                                (float)z + w[i]);
    out[i] = subtract ? warped - fixed[i] : warped;
}

/* ------------------------------------------------------------------ tensor
 * The nine products of grad4 I (It as the fourth entry).  Global: n (1D). */
__kernel void flow_products(__global const float *grad, __global const float *it,
                            __global float *t, int n)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    const size_t m = (size_t)n;
    const float gx = grad[i], gy = grad[m + i], gz = grad[2 * m + i], gt = it[i];
    t[i] = gx * gx;
    t[m + i] = gx * gy;
    t[2 * m + i] = gx * gz;
    t[3 * m + i] = gy * gy;
    t[4 * m + i] = gy * gz;
    t[5 * m + i] = gz * gz;
    t[6 * m + i] = gx * gt;
    t[7 * m + i] = gy * gt;
    t[8 * m + i] = gz * gt;
}

/* x and y passes over all nine components in one launch each: global
 * dimension 2 runs over z + nz * component, a slice index to the shared
 * tiled passes of separable.cl, with this family's tile parameters.
 * x: (ceil(nx / ROW_TILE) * FLOW_SMOOTH_WG_X, ny, 9 nz);
 * y: (nx, ceil(ny / COL_TILE) * FLOW_SMOOTH_WG_Y, 9 nz), where ROW_TILE
 * and COL_TILE are the wgs times the steps. */
#define SEPARABLE_WG_X FLOW_SMOOTH_WG_X
#define SEPARABLE_WG_Y FLOW_SMOOTH_WG_Y
#define SEPARABLE_ROW_STEPS FLOW_ROW_STEPS
#define SEPARABLE_COL_STEPS FLOW_COL_STEPS
#include "separable.cl"

static float load_component(__global const float *p, size_t i) { return p[i]; }
DEFINE_SEPARABLE_ROWS(smooth_rows, float, load_component)

__kernel __attribute__((reqd_work_group_size(FLOW_SMOOTH_WG_X, FLOW_SMOOTH_WG_Y, 1)))
void flow_smooth_rows(__global const float *src, __global float *dst, __constant float *weights,
                      int radius, int nx, int ny, __local float *tile)
{
    smooth_rows(src, dst, weights, radius, nx, ny, get_global_id(2), tile);
}

__kernel __attribute__((reqd_work_group_size(FLOW_SMOOTH_WG_X, FLOW_SMOOTH_WG_Y, 1)))
void flow_smooth_cols(__global const float *src, __global float *dst, __constant float *weights,
                      int radius, int nx, int ny, __local float *tile)
{
    separable_cols(src, dst, weights, radius, nx, ny, get_global_id(2), tile);
}

/* z pass of all nine components fused with the right-hand side: each work
 * item filters its voxel's nine values along z (neighbouring items read
 * neighbouring addresses, so no tile is needed), then turns J14 J24 J34
 * into b with the warp's flow U0.  A flat volume (nz = 1) is not filtered
 * along z.  Global: level size. */
__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_smooth_z_rhs(__global const float *src, __global float *dst, __constant float *weights,
                       int radius, int nx, int ny, int nz, __global const float *u,
                       __global const float *v, __global const float *w)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    const size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
    const size_t plane = (size_t)nx * (size_t)ny;
    const size_t i = voxel(x, y, z, nx, ny);
    float j[TENSOR_COMPONENTS];
    for (int c = 0; c < TENSOR_COMPONENTS; c++) {
        __global const float *line = src + c * n + voxel(x, y, 0, nx, ny);
        if (nz == 1) {
            j[c] = line[0];
            continue;
        }
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; k++)
            acc += weights[k] * line[(size_t)clamp(z - radius + k, 0, nz - 1) * plane];
        j[c] = acc;
    }
    const float u0 = u[i], v0 = v[i], w0 = w[i];
    for (int c = 0; c < 6; c++)
        dst[c * n + i] = j[c];
    dst[6 * n + i] = ((j[0] * u0 + j[1] * v0) + j[2] * w0) - j[6];
    dst[7 * n + i] = ((j[1] * u0 + j[3] * v0) + j[4] * w0) - j[7];
    dst[8 * n + i] = ((j[2] * u0 + j[4] * v0) + j[5] * w0) - j[8];
}

/* ------------------------------------------------------------------ Jacobi
 * One voxel per work item, all three components; neighbours come through
 * the cache (the 3D paper found the cache-only variant faster than local
 * tiles on Fermi).  Point-coupled Jacobi, derived in backends/cpu/flow/flow.c:
 * per voxel the 3x3 system with diagonal Jkk + a |N| + d |N_k| and
 * right-hand side a s + d s_k + d (mixed derivatives) + b_k, s the sum of
 * the in-volume 6-neighbours and s_k of those along axis k, all from the
 * previous iteration. */
typedef struct sums {
    float s[3];
    int n[3];
} sums;

static sums neighbour_sums(__global const float *f, size_t i, int x, int y, int z, int nx,
                           int ny, int nz)
{
    const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
    sums r;
    r.s[0] = 0.0f; r.n[0] = 0;
    if (x > 0) { r.s[0] += f[i - 1]; r.n[0]++; }
    if (x < nx - 1) { r.s[0] += f[i + 1]; r.n[0]++; }
    r.s[1] = 0.0f; r.n[1] = 0;
    if (y > 0) { r.s[1] += f[i - sy]; r.n[1]++; }
    if (y < ny - 1) { r.s[1] += f[i + sy]; r.n[1]++; }
    r.s[2] = 0.0f; r.n[2] = 0;
    if (z > 0) { r.s[2] += f[i - sz]; r.n[2]++; }
    if (z < nz - 1) { r.s[2] += f[i + sz]; r.n[2]++; }
    return r;
}

/* Da Db f (axes a < b) with central differences, one-sided at the faces,
 * 0 on a flat axis. */
static float mixed(__global const float *f, const int c[3], const int len[3], int a, int b)
{
    const size_t step[3] = {1, (size_t)len[0], (size_t)len[0] * (size_t)len[1]};
    const int alo = max(c[a] - 1, 0), ahi = min(c[a] + 1, len[a] - 1);
    const int blo = max(c[b] - 1, 0), bhi = min(c[b] + 1, len[b] - 1);
    const float sa = ahi - alo == 2 ? 0.5f : ahi == alo ? 0.0f : 1.0f;
    const float sb = bhi - blo == 2 ? 0.5f : bhi == blo ? 0.0f : 1.0f;
    const size_t base = voxel(c[0], c[1], c[2], len[0], len[1]) - (size_t)c[a] * step[a] -
                        (size_t)c[b] * step[b];
    const float hh = f[base + (size_t)ahi * step[a] + (size_t)bhi * step[b]];
    const float hl = f[base + (size_t)ahi * step[a] + (size_t)blo * step[b]];
    const float lh = f[base + (size_t)alo * step[a] + (size_t)bhi * step[b]];
    const float ll = f[base + (size_t)alo * step[a] + (size_t)blo * step[b]];
    return ((hh - hl) - (lh - ll)) * (sa * sb);
}

static float diagonal(float a, float d, sums ns, int axis)
{
    const int count = ns.n[0] + ns.n[1] + ns.n[2];
    float diag = a * (float)count;
    if (d != 0.0f)
        diag = diag + d * (float)ns.n[axis];
    return diag;
}

static float neighbour_rhs(float a, float d, sums ns, int axis, float rhs, float divergence)
{
    const float s = (ns.s[0] + ns.s[1]) + ns.s[2];
    float r = a * s + rhs;
    if (d != 0.0f)
        r = (r + d * ns.s[axis]) + d * divergence;
    return r;
}

/* The voxel's symmetric 3x3 system, solved with the adjugate. */
static void solve3(float m11, float m12, float m13, float m22, float m23, float m33,
                   float r0, float r1, float r2, __global float *u, __global float *v,
                   __global float *w)
{
    const float c11 = m22 * m33 - m23 * m23;
    const float c12 = m13 * m23 - m12 * m33;
    const float c13 = m12 * m23 - m13 * m22;
    const float c22 = m11 * m33 - m13 * m13;
    const float c23 = m12 * m13 - m11 * m23;
    const float c33 = m11 * m22 - m12 * m12;
    const float det = (m11 * c11 + m12 * c12) + m13 * c13;
    *u = ((c11 * r0 + c12 * r1) + c13 * r2) / det;
    *v = ((c12 * r0 + c22 * r1) + c23 * r2) / det;
    *w = ((c13 * r0 + c23 * r1) + c33 * r2) / det;
}

static void jacobi_voxel(__global const float *u, __global const float *v,
                         __global const float *w, __global float *ou, __global float *ov,
                         __global float *ow, __global const float *t, int nx, int ny, int nz,
                         float a, float d, int with_divergence)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x >= nx || y >= ny || z >= nz)
        return;
    const size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
    const size_t i = voxel(x, y, z, nx, ny);
    float div_u = 0.0f, div_v = 0.0f, div_w = 0.0f;
    if (with_divergence) {
        const int c[3] = {x, y, z}, len[3] = {nx, ny, nz};
        div_u = mixed(v, c, len, 0, 1) + mixed(w, c, len, 0, 2);
        div_v = mixed(u, c, len, 0, 1) + mixed(w, c, len, 1, 2);
        div_w = mixed(u, c, len, 0, 2) + mixed(v, c, len, 1, 2);
    }
    const float dd = with_divergence ? d : 0.0f;
    const sums su = neighbour_sums(u, i, x, y, z, nx, ny, nz);
    const sums sv = neighbour_sums(v, i, x, y, z, nx, ny, nz);
    const sums sw = neighbour_sums(w, i, x, y, z, nx, ny, nz);
    solve3(t[i] + diagonal(a, dd, su, 0), t[n + i], t[2 * n + i],
           t[3 * n + i] + diagonal(a, dd, sv, 1), t[4 * n + i],
           t[5 * n + i] + diagonal(a, dd, sw, 2),
           neighbour_rhs(a, dd, su, 0, t[6 * n + i], div_u),
           neighbour_rhs(a, dd, sv, 1, t[7 * n + i], div_v),
           neighbour_rhs(a, dd, sw, 2, t[8 * n + i], div_w), &ou[i], &ov[i], &ow[i]);
}

/* Global: level size. */
__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_jacobi(__global const float *u, __global const float *v, __global const float *w,
                 __global float *ou, __global float *ov, __global float *ow,
                 __global const float *t, int nx, int ny, int nz, float a, float d)
{
    jacobi_voxel(u, v, w, ou, ov, ow, t, nx, ny, nz, a, d, 0);
}

__kernel __attribute__((reqd_work_group_size(FLOW_WG_X, FLOW_WG_Y, 1)))
void flow_jacobi_div(__global const float *u, __global const float *v, __global const float *w,
                     __global float *ou, __global float *ov, __global float *ow,
                     __global const float *t, int nx, int ny, int nz, float a, float d)
{
    jacobi_voxel(u, v, w, ou, ov, ow, t, nx, ny, nz, a, d, 1);
}

/* ------------------------------------------------------------ convergence
 * Per-group sums of |new - old|^2 and |new|^2 over the three components
 * (grid-stride loop, then a tree in local memory); partial[2g], [2g + 1].
 * Global: FLOW_REDUCE_GROUPS * FLOW_REDUCE_WG (1D). */
__kernel __attribute__((reqd_work_group_size(FLOW_REDUCE_WG, 1, 1)))
void flow_change(__global const float *ou, __global const float *ov, __global const float *ow,
                 __global const float *nu, __global const float *nv, __global const float *nw,
                 __global float *partial, int n)
{
    __local float diff[FLOW_REDUCE_WG], norm[FLOW_REDUCE_WG];
    const int lid = get_local_id(0);
    float sd = 0.0f, sn = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        const float du = nu[i] - ou[i], dv = nv[i] - ov[i], dw = nw[i] - ow[i];
        sd += du * du + dv * dv + dw * dw;
        sn += nu[i] * nu[i] + nv[i] * nv[i] + nw[i] * nw[i];
    }
    diff[lid] = sd;
    norm[lid] = sn;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int width = FLOW_REDUCE_WG / 2; width > 0; width /= 2) {
        if (lid < width) {
            diff[lid] += diff[lid + width];
            norm[lid] += norm[lid + width];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        partial[2 * get_group_id(0)] = diff[0];
        partial[2 * get_group_id(0) + 1] = norm[0];
    }
}
