/* CPU reference of the flow module: CLG-3D optical flow with a divergence
 * term, stage by stage as lib/flow/flow.c drives it.  OpenMP over z-slices.
 *
 * Notation: U = (u, v, w) the total flow, U0 the flow when the warp began,
 * J the smoothed 4x4 tensor (J14 = K * (Ix It), ...), a = alpha / h^2,
 * d = beta / h^2.  Setting the derivative of the discrete energy to zero:
 *
 *   data        J[1:3,1:3] (U - U0) + J[1:3,4]  =  J[1:3,1:3] U - b,
 *               b = J[1:3,1:3] U0 - J[1:3,4]   (computed once per warp, so
 *               the solver needs neither U0 nor J[1:3,4])
 *   smoothness  -alpha Lap u = a (|N| u_i - sum_{j in N(i)} u_j), N(i) the
 *               in-volume 6-neighbours (Neumann borders)
 *   divergence  -beta d/dx (div U) = -beta (u_xx + v_xy + w_xz), with
 *               u_xx = (sum_{j in Nx(i)} u_j - |Nx| u_i) / h^2 (the x part
 *               of the Laplacian stencil) and v_xy = Dx Dy v / h^2 (central
 *               differences, one-sided at the faces, 0 on a flat axis)
 *
 * so the u row reads
 *   (J11 + a|N| + d|Nx|) u_i + J12 v_i + J13 w_i
 *        = a sum_N u_j + d sum_Nx u_j + d (Dx Dy v + Dx Dz w) + b_u
 * and likewise v (J22, y, Dx Dy u + Dy Dz w, b_v) and w (J33, z,
 * Dx Dz u + Dy Dz v, b_w).
 *
 * Jacobi: every neighbour value (and every mixed derivative) comes from the
 * previous iteration, so all voxels update in parallel.  The three unknowns
 * of one voxel are solved together (a 3x3 system per voxel, "point-coupled"
 * Jacobi) instead of taking J12 v_i, J13 w_i from the previous iteration
 * as the paper's equation (9) does: with that pointwise form the iteration
 * matrix has the eigenvalue 1 - sum_k Jkk / (a|N| + Jkk) of the (nearly
 * rank-1) tensor, which reaches -2 where the data term dominates the
 * smoothness (a|N| << |grad I|^2) and the iteration diverges there.  The
 * coupled form is a contraction for every alpha > 0 (beta <= 2 alpha, see
 * lib/flow/flow.c) and has the same fixed point.
 *
 * Float operations follow kernels/flow.cl in the same order (see the
 * comments there), so the backends differ only by the device's division and
 * rounding of the Gaussian, far below the 1e-3 voxel tolerance. */
#include "../cpu.h"
#include "flow_jacobi.h"

#include <stdlib.h>
#include <string.h>


typedef struct cpu_level {
    int n[3];
    size_t count;
    float *fixed, *moving; /* dense pyramid levels */
} cpu_level;

typedef struct cpu_flow_plan {
    pv_flow_setup setup;
    float *weights;
    cpu_level level[PV_FLOW_MAX_LEVELS];
    float *grad[3];
    float *it;
    float *tmp;
    float *tensor[TENSOR_COMPONENTS];
    float *flow[2][3];
    int current; /* flow[current] holds the flow */
    int spatial_valid; /* 1: tensor[0..5] hold the smoothed products of the
                          current gradients (they change only with them) */
} cpu_flow_plan;

/* A strided read-only view of a volume, for the sampler. */
typedef struct grid_view {
    const float *data;
    int nx, ny, nz;
    ptrdiff_t sy, sz;
} grid_view;

static grid_view dense_view(const float *data, const int n[3])
{
    grid_view g = {data, n[0], n[1], n[2], n[0], (ptrdiff_t)n[0] * n[1]};
    return g;
}

static grid_view volume_view(const pv_volume *v)
{
    grid_view g = {v->data, v->nx, v->ny, v->nz, v->stride_y, v->stride_z};
    return g;
}

static float *alloc_floats(size_t count)
{
    size_t bytes;
    if (!pv_size_mul(count, sizeof(float), &bytes))
        return NULL;
    return malloc(bytes ? bytes : 1);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static size_t level_count(const int n[3])
{
    return (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
}

/* ------------------------------------------------------------------- plan */

static void pv_cpu_flow_destroy(pv_context *ctx, void *plan)
{
    cpu_flow_plan *p = plan;
    (void)ctx;
    for (int l = 0; l < PV_FLOW_MAX_LEVELS; l++) {
        free(p->level[l].fixed);
        free(p->level[l].moving);
    }
    for (int c = 0; c < 3; c++) {
        free(p->grad[c]);
        free(p->flow[0][c]);
        free(p->flow[1][c]);
    }
    for (int c = 0; c < TENSOR_COMPONENTS; c++)
        free(p->tensor[c]);
    free(p->it);
    free(p->tmp);
    free(p->weights);
    free(p);
}

/* The plan's set-up: its copy of setup, of the smoothing taps, and every
 * level's volumes. */
static pv_status set_up_plan(pv_context *ctx, cpu_flow_plan *p, const pv_flow_setup *setup)
{
    p->setup = *setup;
    const size_t n = level_count(setup->size[0]), taps = 2 * (size_t)setup->radius + 1;
    int ok = (p->weights = alloc_floats(taps)) != NULL;
    for (int l = 0; l < setup->levels; l++) {
        memcpy(p->level[l].n, setup->size[l], sizeof p->level[l].n);
        p->level[l].count = level_count(setup->size[l]);
        ok &= (p->level[l].fixed = alloc_floats(p->level[l].count)) != NULL;
        ok &= (p->level[l].moving = alloc_floats(p->level[l].count)) != NULL;
    }
    for (int c = 0; c < 3; c++) {
        ok &= (p->grad[c] = alloc_floats(n)) != NULL;
        ok &= (p->flow[0][c] = alloc_floats(n)) != NULL;
        ok &= (p->flow[1][c] = alloc_floats(n)) != NULL;
    }
    for (int c = 0; c < TENSOR_COMPONENTS; c++)
        ok &= (p->tensor[c] = alloc_floats(n)) != NULL;
    ok &= (p->it = alloc_floats(n)) != NULL;
    ok &= (p->tmp = alloc_floats(n)) != NULL;
    if (!ok)
        return pv_fail(ctx, PV_ERR_NOMEM, "flow: no memory for the %dx%dx%d CPU buffers",
                       setup->size[0][0], setup->size[0][1], setup->size[0][2]);
    memcpy(p->weights, setup->weights, taps * sizeof(float));
    p->setup.weights = p->weights;
    return PV_OK;
}

static pv_status pv_cpu_flow_create(pv_context *ctx, const pv_flow_setup *setup, void **plan)
{
    cpu_flow_plan *p = pv_plan_new(ctx, sizeof *p, "the CPU flow plan");
    if (!p)
        return PV_ERR_NOMEM;
    return pv_plan_hand_over(ctx, set_up_plan(ctx, p, setup), p, pv_cpu_flow_destroy, plan);
}

/* ---------------------------------------------------------------- pyramid */

/* src's samples, densely, as floats: a u16 input is converted here, on
 * the host (the oracle of the OpenCL backend's conversion on the device). */
static void copy_volume_dense(const pv_volume *src, float *dst, int threads)
{
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < src->nz; z++)
        for (int y = 0; y < src->ny; y++) {
            float *out = dst + ((size_t)z * src->ny + y) * src->nx;
            const ptrdiff_t in = (ptrdiff_t)y * src->stride_y + (ptrdiff_t)z * src->stride_z;
            if (src->type == PV_VOLUME_F32)
                memcpy(out, src->data + in, (size_t)src->nx * sizeof(float));
            else
                for (int x = 0; x < src->nx; x++)
                    out[x] = pv_volume_value(src, in + x);
        }
}

/* coarse = mean of the 2x2x2 (2x2 on a flat z axis) block of fine voxels at
 * 2X .. 2X+1, clamped at the far face; summed z, y, x in that order. */
static void downsample(const float *fine, const int fn[3], float *coarse, const int cn[3],
                       int threads)
{
    int f[3];
    for (int a = 0; a < 3; a++)
        f[a] = fn[a] > 1 ? 2 : 1;
    const float inv = 1.0f / (float)(f[0] * f[1] * f[2]);
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < cn[2]; z++)
        for (int y = 0; y < cn[1]; y++)
            for (int x = 0; x < cn[0]; x++) {
                float s = 0.0f;
                for (int dz = 0; dz < f[2]; dz++)
                    for (int dy = 0; dy < f[1]; dy++)
                        for (int dx = 0; dx < f[0]; dx++) {
                            int fx = min_int(f[0] * x + dx, fn[0] - 1);
                            int fy = min_int(f[1] * y + dy, fn[1] - 1);
                            int fz = min_int(f[2] * z + dz, fn[2] - 1);
                            s += fine[((size_t)fz * fn[1] + fy) * fn[0] + fx];
                        }
                coarse[((size_t)z * cn[1] + y) * cn[0] + x] = s * inv;
            }
}

static pv_status pv_cpu_flow_load(pv_context *ctx, void *plan, const pv_volume *fixed,
                           const pv_volume *moving)
{
    cpu_flow_plan *p = plan;
    const int threads = ctx->cpu_threads;
    copy_volume_dense(fixed, p->level[0].fixed, threads);
    copy_volume_dense(moving, p->level[0].moving, threads);
    for (int l = 1; l < p->setup.levels; l++) {
        downsample(p->level[l - 1].fixed, p->level[l - 1].n, p->level[l].fixed, p->level[l].n,
                   threads);
        downsample(p->level[l - 1].moving, p->level[l - 1].n, p->level[l].moving,
                   p->level[l].n, threads);
    }
    return PV_OK;
}

/* ---------------------------------------------------------------- sampler */

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static float lerp(float a, float b, float t)
{
    return a + t * (b - a);
}

/* Trilinear sample at (x, y, z), coordinates clamped to the volume; the
 * same lerp order as the kernel's sample(). */
static float sample(const grid_view *g, float x, float y, float z)
{
    x = clampf(x, 0.0f, (float)(g->nx - 1));
    y = clampf(y, 0.0f, (float)(g->ny - 1));
    z = clampf(z, 0.0f, (float)(g->nz - 1));
    const int x0 = (int)x, y0 = (int)y, z0 = (int)z;
    const int x1 = min_int(x0 + 1, g->nx - 1), y1 = min_int(y0 + 1, g->ny - 1),
              z1 = min_int(z0 + 1, g->nz - 1);
    const float fx = x - (float)x0, fy = y - (float)y0, fz = z - (float)z0;
    const float *p00 = g->data + (ptrdiff_t)y0 * g->sy + (ptrdiff_t)z0 * g->sz;
    const float *p10 = g->data + (ptrdiff_t)y1 * g->sy + (ptrdiff_t)z0 * g->sz;
    const float *p01 = g->data + (ptrdiff_t)y0 * g->sy + (ptrdiff_t)z1 * g->sz;
    const float *p11 = g->data + (ptrdiff_t)y1 * g->sy + (ptrdiff_t)z1 * g->sz;
    const float c00 = lerp(p00[x0], p00[x1], fx), c10 = lerp(p10[x0], p10[x1], fx);
    const float c01 = lerp(p01[x0], p01[x1], fx), c11 = lerp(p11[x0], p11[x1], fx);
    return lerp(lerp(c00, c10, fy), lerp(c01, c11, fy), fz);
}

/* ------------------------------------------------------------- begin level */

static void zero_flow(float *const flow[3], size_t count)
{
    for (int c = 0; c < 3; c++)
        memset(flow[c], 0, count * sizeof(float));
}

/* Fine voxel x sits at coarse coordinate (x + 0.5) / 2 - 0.5 on a halved
 * axis; the flow doubles along halved axes. */
static void upsample_flow(float *const coarse[3], const int cn[3], float *const fine[3],
                          const int fn[3], int threads)
{
    float scale[3];
    for (int a = 0; a < 3; a++)
        scale[a] = fn[a] > 1 ? 2.0f : 1.0f;
    #pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int z = 0; z < fn[2]; z++)
        for (int y = 0; y < fn[1]; y++)
            for (int x = 0; x < fn[0]; x++) {
                const float cx = scale[0] > 1.0f ? (float)x * 0.5f - 0.25f : (float)x;
                const float cy = scale[1] > 1.0f ? (float)y * 0.5f - 0.25f : (float)y;
                const float cz = scale[2] > 1.0f ? (float)z * 0.5f - 0.25f : (float)z;
                const size_t i = ((size_t)z * fn[1] + y) * fn[0] + x;
                for (int c = 0; c < 3; c++) {
                    grid_view g = dense_view(coarse[c], cn);
                    fine[c][i] = sample(&g, cx, cy, cz) * scale[c];
                }
            }
}

static pv_status pv_cpu_flow_begin_level(pv_context *ctx, void *plan, int level)
{
    cpu_flow_plan *p = plan;
    if (level == p->setup.levels - 1) {
        p->current = 0;
        zero_flow(p->flow[0], p->level[level].count);
        return PV_OK;
    }
    upsample_flow(p->flow[p->current], p->level[level + 1].n, p->flow[1 - p->current],
                  p->level[level].n, ctx->cpu_threads);
    p->current = 1 - p->current;
    return PV_OK;
}

/* --------------------------------------------------------------- gradients */

static pv_volume dense_volume(float *data, const int n[3])
{
    return pv_volume_wrap(data, n[0], n[1], n[2]);
}

static pv_status pv_cpu_flow_gradients(pv_context *ctx, void *plan, int level)
{
    cpu_flow_plan *p = plan;
    const int *n = p->level[level].n;
    pv_volume src = dense_volume(p->level[level].fixed, n);
    pv_volume gx = dense_volume(p->grad[0], n), gy = dense_volume(p->grad[1], n),
              gz = dense_volume(p->grad[2], n);
    p->spatial_valid = 0;
    return pv_cpu_filter_ops.gradient3d(ctx, &src, &gx, &gy, &gz, p->setup.scheme);
}

/* ---------------------------------------------------------------- resample */

static pv_status pv_cpu_flow_resample(pv_context *ctx, void *plan, int level)
{
    cpu_flow_plan *p = plan;
    const int *n = p->level[level].n;
    const grid_view moving = dense_view(p->level[level].moving, n);
    const float *fixed = p->level[level].fixed;
    float *const *flow = p->flow[p->current];
    #pragma omp parallel for collapse(2) num_threads(ctx->cpu_threads) schedule(static)
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                const size_t i = ((size_t)z * n[1] + y) * n[0] + x;
                const float warped = sample(&moving, (float)x + flow[0][i],
                                            (float)y + flow[1][i], (float)z + flow[2][i]);
                p->it[i] = warped - fixed[i];
            }
    return PV_OK;
}

/* ------------------------------------------------------------------ tensor */

/* Component c of grad4 grad4^T in the storage order J11 J12 J13 J22 J23
 * J33 J14 J24 J34 (index 3 of grad4 is It). */
static void tensor_product(const cpu_flow_plan *p, int c, size_t count, float *out, int threads)
{
    static const int rows[TENSOR_COMPONENTS] = {0, 0, 0, 1, 1, 2, 0, 1, 2};
    static const int cols[TENSOR_COMPONENTS] = {0, 1, 2, 1, 2, 2, 3, 3, 3};
    const float *a = p->grad[rows[c]];
    const float *b = cols[c] == 3 ? p->it : p->grad[cols[c]];
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < count; i++)
        out[i] = a[i] * b[i];
}

/* K_rho along x, y and (on a volume) z, as the kernels' passes. */
static pv_status smooth(pv_context *ctx, const cpu_flow_plan *p, const int n[3], float *src,
                        float *dst)
{
    if (n[2] == 1) {
        pv_image in = pv_image_wrap(src, n[0], n[1], PV_PIXEL_F32);
        pv_image out = pv_image_wrap(dst, n[0], n[1], PV_PIXEL_F32);
        return pv_cpu_filter_ops.gaussian2d(ctx, &in, &out, p->weights, p->setup.radius);
    }
    pv_volume in = dense_volume(src, n), out = dense_volume(dst, n);
    return pv_cpu_filter_ops.gaussian3d(ctx, &in, &out, p->weights, p->setup.radius);
}

/* b = J[1:3,1:3] U0 - J[1:3,4], written over J14 J24 J34. */
static void finalize_rhs(cpu_flow_plan *p, size_t count, int threads)
{
    float *const *t = p->tensor;
    float *const *f = p->flow[p->current];
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < count; i++) {
        const float u = f[0][i], v = f[1][i], w = f[2][i];
        const float j11 = t[0][i], j12 = t[1][i], j13 = t[2][i];
        const float j22 = t[3][i], j23 = t[4][i], j33 = t[5][i];
        t[6][i] = ((j11 * u + j12 * v) + j13 * w) - t[6][i];
        t[7][i] = ((j12 * u + j22 * v) + j23 * w) - t[7][i];
        t[8][i] = ((j13 * u + j23 * v) + j33 * w) - t[8][i];
    }
}

static pv_status pv_cpu_flow_tensor(pv_context *ctx, void *plan, int level)
{
    cpu_flow_plan *p = plan;
    const int *n = p->level[level].n;
    const size_t count = p->level[level].count;
    /* J11 .. J33 depend on the level's gradients only, not on the warp:
     * after the level's first warp only the It products are redone. */
    for (int c = p->spatial_valid ? 6 : 0; c < TENSOR_COMPONENTS; c++) {
        if (n[2] == 1 && (c == 2 || c == 4 || c == 5 || c == 8)) {
            /* a flat z axis: Iz = 0, so J13 = J23 = J33 = J34 = 0 */
            memset(p->tensor[c], 0, count * sizeof(float));
            continue;
        }
        tensor_product(p, c, count, p->tmp, ctx->cpu_threads);
        pv_status status = smooth(ctx, p, n, p->tmp, p->tensor[c]);
        if (status != PV_OK)
            return status;
    }
    p->spatial_valid = 1;
    finalize_rhs(p, count, ctx->cpu_threads);
    return PV_OK;
}

static pv_status pv_cpu_flow_jacobi(pv_context *ctx, void *plan, int level, int count, double *change)
{
    cpu_flow_plan *p = plan;
    const int *n = p->level[level].n;
    const jacobi_grid g = {n[0], n[1], n[2], n[0], (ptrdiff_t)n[0] * n[1], p->setup.smooth,
                           p->setup.divergence};
    jacobi_fields f;
    for (int c = 0; c < TENSOR_COMPONENTS; c++)
        f.t[c] = p->tensor[c];
    for (int k = 0; k < count; k++) {
        for (int c = 0; c < 3; c++) {
            f.in[c] = p->flow[p->current][c];
            f.out[c] = p->flow[1 - p->current][c];
        }
        if (n[2] == 1 && g.d == 0.0f)
            pv_cpu_jacobi_sweep_2d(&g, &f, ctx->cpu_threads);
        else
            pv_cpu_jacobi_sweep(&g, &f, ctx->cpu_threads);
        p->current = 1 - p->current;
    }
    if (change)
        *change = pv_cpu_flow_relative_change(p->flow[1 - p->current], p->flow[p->current], n,
                                  ctx->cpu_threads);
    return PV_OK;
}

/* ------------------------------------------------------------------- read */

static pv_volume *field_part(pv_flow_field *field, int c)
{
    return c == 0 ? &field->u : c == 1 ? &field->v : &field->w;
}

static pv_status pv_cpu_flow_read(pv_context *ctx, void *plan, pv_flow_field *flow)
{
    cpu_flow_plan *p = plan;
    const int *n = p->level[0].n;
    for (int c = 0; c < 3; c++) {
        pv_volume *dst = field_part(flow, c);
        const float *src = p->flow[p->current][c];
        #pragma omp parallel for collapse(2) num_threads(ctx->cpu_threads) schedule(static)
        for (int z = 0; z < n[2]; z++)
            for (int y = 0; y < n[1]; y++)
                memcpy(dst->data + (ptrdiff_t)y * dst->stride_y + (ptrdiff_t)z * dst->stride_z,
                       src + ((size_t)z * n[1] + y) * n[0], (size_t)n[0] * sizeof(float));
    }
    return PV_OK;
}

/* ------------------------------------------------------------------- warp */

static pv_status pv_cpu_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                           pv_volume *warped)
{
    const grid_view g = volume_view(moving);
    #pragma omp parallel for collapse(2) num_threads(ctx->cpu_threads) schedule(static)
    for (int z = 0; z < moving->nz; z++)
        for (int y = 0; y < moving->ny; y++) {
            const ptrdiff_t fu = (ptrdiff_t)y * flow->u.stride_y + (ptrdiff_t)z * flow->u.stride_z;
            const ptrdiff_t fv = (ptrdiff_t)y * flow->v.stride_y + (ptrdiff_t)z * flow->v.stride_z;
            const ptrdiff_t fw = (ptrdiff_t)y * flow->w.stride_y + (ptrdiff_t)z * flow->w.stride_z;
            float *out = warped->data + (ptrdiff_t)y * warped->stride_y +
                         (ptrdiff_t)z * warped->stride_z;
            for (int x = 0; x < moving->nx; x++)
                out[x] = sample(&g, (float)x + flow->u.data[fu + x], (float)y + flow->v.data[fv + x],
                                (float)z + flow->w.data[fw + x]);
        }
    return PV_OK;
}

const pv_flow_ops pv_cpu_flow_ops = {PV_FLOW_SLOTS(PV_OPS_BIND, pv_cpu_flow_)};
