/* CPU reference of the flow module: the point-coupled Jacobi solver of
 * the CLG-3D system with the divergence term (derived at the top of
 * backends/cpu/flow/flow.c), and the relative change of an iteration. */
#include "../cpu.h"
#include "flow_jacobi.h"

#include <stdlib.h>

/* Neighbour sums of f along each axis (in-volume neighbours only, lower
 * first) and their counts. */
typedef struct neighbour_sums {
    float s[3];
    int n[3];
} neighbour_sums;

static neighbour_sums sums_at(const jacobi_grid *g, const float *f, size_t i, int x, int y,
                              int z)
{
    const int c[3] = {x, y, z}, len[3] = {g->nx, g->ny, g->nz};
    const ptrdiff_t step[3] = {1, g->sy, g->sz};
    neighbour_sums r;
    for (int a = 0; a < 3; a++) {
        r.s[a] = 0.0f;
        r.n[a] = 0;
        if (c[a] > 0) {
            r.s[a] += f[i - step[a]];
            r.n[a]++;
        }
        if (c[a] < len[a] - 1) {
            r.s[a] += f[i + step[a]];
            r.n[a]++;
        }
    }
    return r;
}

/* Central-difference stencil of coordinate c on an axis of len samples. */
typedef struct stencil {
    int lo, hi;
    float scale;
} stencil;

static stencil stencil_at(int c, int len)
{
    stencil s;
    s.lo = c > 0 ? c - 1 : 0;
    s.hi = c + 1 < len ? c + 1 : len - 1;
    s.scale = s.hi - s.lo == 2 ? 0.5f : s.hi == s.lo ? 0.0f : 1.0f;
    return s;
}

/* Da Db f at the voxel (axes a < b), central differences. */
static float mixed(const jacobi_grid *g, const float *f, const int c[3], int a, int b)
{
    const int len[3] = {g->nx, g->ny, g->nz};
    const ptrdiff_t step[3] = {1, g->sy, g->sz};
    const stencil sa = stencil_at(c[a], len[a]), sb = stencil_at(c[b], len[b]);
    ptrdiff_t base = c[0] + c[1] * g->sy + c[2] * g->sz - c[a] * step[a] - c[b] * step[b];
    const float hh = f[base + sa.hi * step[a] + sb.hi * step[b]];
    const float hl = f[base + sa.hi * step[a] + sb.lo * step[b]];
    const float lh = f[base + sa.lo * step[a] + sb.hi * step[b]];
    const float ll = f[base + sa.lo * step[a] + sb.lo * step[b]];
    return ((hh - hl) - (lh - ll)) * (sa.scale * sb.scale);
}


/* The voxel's 3x3 system M U = r (see the top of the file), solved with
 * the adjugate; the same operation order as the kernel's solve3(). */
typedef struct system3 {
    float m11, m12, m13, m22, m23, m33;
    float r[3];
} system3;

static void solve3(const system3 *s, float out[3])
{
    const float c11 = s->m22 * s->m33 - s->m23 * s->m23;
    const float c12 = s->m13 * s->m23 - s->m12 * s->m33;
    const float c13 = s->m12 * s->m23 - s->m13 * s->m22;
    const float c22 = s->m11 * s->m33 - s->m13 * s->m13;
    const float c23 = s->m12 * s->m13 - s->m11 * s->m23;
    const float c33 = s->m11 * s->m22 - s->m12 * s->m12;
    const float det = (s->m11 * c11 + s->m12 * c12) + s->m13 * c13;
    out[0] = ((c11 * s->r[0] + c12 * s->r[1]) + c13 * s->r[2]) / det;
    out[1] = ((c12 * s->r[0] + c22 * s->r[1]) + c23 * s->r[2]) / det;
    out[2] = ((c13 * s->r[0] + c23 * s->r[1]) + c33 * s->r[2]) / det;
}

/* Diagonal smoothness / divergence weight of component `axis` and its
 * right-hand side from the neighbours. */
static float diagonal(const jacobi_grid *g, const neighbour_sums *ns, int axis)
{
    const int cnt = ns->n[0] + ns->n[1] + ns->n[2];
    float diag = g->a * (float)cnt;
    if (g->d != 0.0f)
        diag = diag + g->d * (float)ns->n[axis];
    return diag;
}

static float neighbour_rhs(const jacobi_grid *g, const neighbour_sums *ns, int axis, float rhs,
                           float divergence)
{
    const float s = (ns->s[0] + ns->s[1]) + ns->s[2];
    float r = g->a * s + rhs;
    if (g->d != 0.0f)
        r = (r + g->d * ns->s[axis]) + g->d * divergence;
    return r;
}

static void jacobi_voxel(const jacobi_grid *g, const jacobi_fields *f, int x, int y, int z)
{
    const size_t i = (size_t)x + (size_t)y * (size_t)g->sy + (size_t)z * (size_t)g->sz;
    const int c[3] = {x, y, z};
    float div_u = 0.0f, div_v = 0.0f, div_w = 0.0f;
    if (g->d != 0.0f) {
        div_u = mixed(g, f->in[1], c, 0, 1) + mixed(g, f->in[2], c, 0, 2);
        div_v = mixed(g, f->in[0], c, 0, 1) + mixed(g, f->in[2], c, 1, 2);
        div_w = mixed(g, f->in[0], c, 0, 2) + mixed(g, f->in[1], c, 1, 2);
    }
    const neighbour_sums su = sums_at(g, f->in[0], i, x, y, z);
    const neighbour_sums sv = sums_at(g, f->in[1], i, x, y, z);
    const neighbour_sums sw = sums_at(g, f->in[2], i, x, y, z);
    system3 s;
    s.m11 = f->t[0][i] + diagonal(g, &su, 0);
    s.m12 = f->t[1][i];
    s.m13 = f->t[2][i];
    s.m22 = f->t[3][i] + diagonal(g, &sv, 1);
    s.m23 = f->t[4][i];
    s.m33 = f->t[5][i] + diagonal(g, &sw, 2);
    s.r[0] = neighbour_rhs(g, &su, 0, f->t[6][i], div_u);
    s.r[1] = neighbour_rhs(g, &sv, 1, f->t[7][i], div_v);
    s.r[2] = neighbour_rhs(g, &sw, 2, f->t[8][i], div_w);
    float out[3];
    solve3(&s, out);
    f->out[0][i] = out[0];
    f->out[1][i] = out[1];
    f->out[2][i] = out[2];
}

void pv_cpu_jacobi_sweep(const jacobi_grid *g, const jacobi_fields *f, int threads)
{
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < g->nz; z++)
        for (int y = 0; y < g->ny; y++)
            for (int x = 0; x < g->nx; x++)
                jacobi_voxel(g, f, x, y, z);
}

/* 2D (nz = 1) without the divergence term: w stays 0 and J13 = J23 = 0,
 * so the voxel's 3x3 system reduces to the 2x2 of u and v (the adjugate
 * solution with m13 = m23 = 0, divided through by m33).  One pass per row
 * with the neighbour counts of the row; absent neighbours weigh 0 (their
 * pointer is a valid row, so the loop has no branches and vectorises).
 * The result equals the 3D path's within float rounding. */
typedef struct row_2d {
    const float *u, *v, *j11, *j12, *j22, *bu, *bv;
    float *ou, *ov, *ow;
    ptrdiff_t up, down;      /* offsets of the rows above / below (0: absent) */
    float above, below, a;   /* 1 or 0: whether those rows exist */
} row_2d;

/* Pixel x given its left / right weights (1 or 0) and neighbour columns. */
static inline __attribute__((always_inline)) void jacobi_pixel_2d(const row_2d *r, int x,
                                                                 float left, float right, int xl,
                                   int xr)
{
    const float su = ((left * r->u[xl] + right * r->u[xr]) + r->above * r->u[x + r->up]) +
                     r->below * r->u[x + r->down];
    const float sv = ((left * r->v[xl] + right * r->v[xr]) + r->above * r->v[x + r->up]) +
                     r->below * r->v[x + r->down];
    const float diag = r->a * (((left + right) + r->above) + r->below);
    const float m11 = r->j11[x] + diag, m22 = r->j22[x] + diag, m12 = r->j12[x];
    const float r0 = r->a * su + r->bu[x], r1 = r->a * sv + r->bv[x];
    const float det = m11 * m22 - m12 * m12;
    r->ou[x] = (m22 * r0 - m12 * r1) / det;
    r->ov[x] = (m11 * r1 - m12 * r0) / det;
    r->ow[x] = 0.0f;
}

static void jacobi_row_2d(const jacobi_grid *g, const jacobi_fields *f, int y)
{
    const int nx = g->nx;
    const size_t at = (size_t)y * (size_t)nx;
    row_2d r = {f->in[0] + at, f->in[1] + at, f->t[0] + at, f->t[1] + at, f->t[3] + at,
                f->t[6] + at, f->t[7] + at, f->out[0] + at, f->out[1] + at, f->out[2] + at,
                y > 0 ? -(ptrdiff_t)nx : 0, y < g->ny - 1 ? nx : 0,
                y > 0 ? 1.0f : 0.0f, y < g->ny - 1 ? 1.0f : 0.0f, g->a};
    if (nx == 1) {
        jacobi_pixel_2d(&r, 0, 0.0f, 0.0f, 0, 0);
        return;
    }
    jacobi_pixel_2d(&r, 0, 0.0f, 1.0f, 0, 1);
    #pragma omp simd
    for (int x = 1; x < nx - 1; x++)
        jacobi_pixel_2d(&r, x, 1.0f, 1.0f, x - 1, x + 1);
    jacobi_pixel_2d(&r, nx - 1, 1.0f, 0.0f, nx - 2, nx - 1);
}

void pv_cpu_jacobi_sweep_2d(const jacobi_grid *g, const jacobi_fields *f, int threads)
{
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < g->ny; y++)
        jacobi_row_2d(g, f, y);
}

/* ||new - old|| / ||new|| over all three components; per-slice sums added
 * in slice order so the result does not depend on the thread count. */
double pv_cpu_flow_relative_change(float *const old[3], float *const new_[3], const int n[3],
                                   int threads)
{
    const size_t plane = (size_t)n[0] * (size_t)n[1];
    double diff = 0.0, norm = 0.0;
    double *slices = calloc(2 * (size_t)n[2], sizeof *slices);
    if (!slices)
        return INFINITY; /* not converged: the caller simply keeps iterating */
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int z = 0; z < n[2]; z++)
        for (size_t k = 0; k < plane; k++) {
            const size_t i = (size_t)z * plane + k;
            for (int c = 0; c < 3; c++) {
                const float d = new_[c][i] - old[c][i];
                slices[2 * z] += (double)(d * d);
                slices[2 * z + 1] += (double)(new_[c][i] * new_[c][i]);
            }
        }
    for (int z = 0; z < n[2]; z++) {
        diff += slices[2 * z];
        norm += slices[2 * z + 1];
    }
    free(slices);
    if (diff == 0.0)
        return 0.0;
    return norm > 0.0 ? sqrt(diff / norm) : INFINITY;
}
