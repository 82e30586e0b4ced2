/* parvis flow: K Jacobi iterations per launch (temporal blocking, 2.5D).
 *
 * Built with the "flow" launch-parameter family as -D defines; read here:
 *   FLOW_JACOBI_BLOCK   K >= 2, the iterations of one launch
 *   FLOW_BLOCK_TILE_X   outputs of a work group along x ...
 *   FLOW_BLOCK_TILE_Y   ... and along y
 *   FLOW_BLOCK_TILE_Z   planes of a work group's z chunk
 *   FLOW_BLOCK_DIVERGENCE  (set by the host, not a parameter) 1: the program
 *                       holds the kernel with the divergence term, 0 the
 *                       one without: each variant is its own program, so
 *                       that one's local memory never fails the other's
 *                       build (a compiler may refuse a program holding a
 *                       kernel whose static local memory exceeds the
 *                       device's, as the divergence kernel's 92 KB at
 *                       K = 4 would NVIDIA's 48 KB)
 *   FLOW_BLOCK_TENSOR_QUEUE  1: without the divergence term, each work item
 *                       keeps its column's tensor for the K planes in
 *                       flight in registers (read once, not once per
 *                       stage); 0: every stage reads it (from the caches)
 *
 * A work group holds a 2D tile of TX x TY outputs and its halo of K voxels
 * in x and y, one work item per column of the (TX + 2K) x (TY + 2K) block,
 * and marches along z through its chunk and K planes beyond it on either
 * side.  Stage 0 loads a plane of the iterate t; stage s computes iterate
 * t + s of the plane whose three planes of iterate t + s - 1 are in hand.
 * Stage s is valid on the columns at least s from the block's edge and on
 * the planes at most K - s beyond the chunk, which is what stage s + 1
 * reads; stage K's valid region is the tile and the chunk, which it
 * writes.  Halo columns and planes are computed again by the neighbouring
 * groups: the price of reading the tensor and the flow once per K steps.
 *
 * Every value is the one the single step (flow.cl) computes: the same
 * arithmetic (flow_jacobi_math.cl), the same neighbours in the same order,
 * the same tests of the volume's faces.  Values outside the volume or
 * outside a stage's valid region are never read.
 *
 * The work group, (TX + 2K) x (TY + 2K) items, need not be a multiple of
 * the warp; the host checks that it and the local memory fit the device
 * before it builds this program (backends/opencl/flow/flow_block.c). */
#pragma OPENCL FP_CONTRACT OFF

#include "flow_jacobi_math.cl"

#define TENSOR_COMPONENTS 9
#define K FLOW_JACOBI_BLOCK
#define BX (FLOW_BLOCK_TILE_X + 2 * K)
#define BY (FLOW_BLOCK_TILE_Y + 2 * K)

/* Where a work item stands: its column (x, y) of the volume, its place
 * (lx, ly) in the block, its distance to the block's edge, and its
 * chunk's planes [z0, z1). */
typedef struct column {
    int x, y, lx, ly, reach, inside, z0, z1;
    size_t base; /* voxel (x, y, 0) when inside */
} column;

static column column_here(int nx, int ny, int nz)
{
    column c;
    c.lx = get_local_id(0);
    c.ly = get_local_id(1);
    c.x = (int)get_group_id(0) * FLOW_BLOCK_TILE_X - K + c.lx;
    c.y = (int)get_group_id(1) * FLOW_BLOCK_TILE_Y - K + c.ly;
    c.reach = min(min(c.lx, BX - 1 - c.lx), min(c.ly, BY - 1 - c.ly));
    c.inside = c.x >= 0 && c.x < nx && c.y >= 0 && c.y < ny;
    c.z0 = (int)get_group_id(2) * FLOW_BLOCK_TILE_Z;
    c.z1 = min(c.z0 + FLOW_BLOCK_TILE_Z, nz);
    c.base = c.inside ? (size_t)c.x + (size_t)nx * (size_t)c.y : 0;
    return c;
}

/* Whether stage s computes plane z here: a valid column and plane. */
static int stage_computes(const column *c, int s, int z, int nz)
{
    return c->inside && c->reach >= s && z >= max(c->z0 - K + s, 0) && z < min(c->z1 + K - s, nz);
}

static void load_tensor(__global const float *t, size_t n, size_t i, float tv[TENSOR_COMPONENTS])
{
    for (int k = 0; k < TENSOR_COMPONENTS; k++)
        tv[k] = t[k * n + i];
}

/* u, v, w of one plane at a column. */
typedef struct plane_set {
    float c[3];
} plane_set;

#if !FLOW_BLOCK_DIVERGENCE
/* ------------------------------------------------------- without divergence
 * The update reads the 6-neighbours only: those in x and y from the centre
 * plane of the previous stage, in local memory (one plane per stage), and
 * those in z from the work item's own registers.  Stage s computes plane
 * m - s at step m (lag 1): the plane above it was made by stage s - 1 in
 * this step, by this work item, and the centre plane in the step before,
 * by its neighbours.  A step is therefore: every stage from registers and
 * the previous step's planes, a barrier, the new planes into local memory,
 * a barrier.  Local memory: K x 3 x BX x BY floats.
 * The tensor of the plane stage s computes is the one stage s - 1 used in
 * the step before (lag 1), so with FLOW_BLOCK_TENSOR_QUEUE a queue of K
 * planes of it passes down the stages: loaded by stage 1, which computes
 * on every plane and column that a later stage does. */
static sums plane_sums(__local const float (*plane)[BY][BX], int comp, const column *c, int z,
                       int nx, int ny, int nz, float below, float above)
{
    sums r;
    FLOW_AXIS_SUM(r, 0, c->x, nx, plane[comp][c->ly][c->lx - 1], plane[comp][c->ly][c->lx + 1]);
    FLOW_AXIS_SUM(r, 1, c->y, ny, plane[comp][c->ly - 1][c->lx], plane[comp][c->ly + 1][c->lx]);
    FLOW_AXIS_SUM(r, 2, z, nz, below, above);
    return r;
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void flow_jacobi_block(__global const float *u, __global const float *v, __global const float *w,
                       __global float *ou, __global float *ov, __global float *ow,
                       __global const float *t, int nx, int ny, int nz, float a, float d)
{
    (void)d;
    __local float plane[K][3][BY][BX];
    const column c = column_here(nx, ny, nz);
    const size_t slice = (size_t)nx * (size_t)ny, n = slice * (size_t)nz;
    __global const float *in[3] = {u, v, w};
    const flow3 no_div = {0.0f, 0.0f, 0.0f};
    /* Stage j's planes at this column: made two steps ago, and in this
     * step (the one between is in local memory). */
    plane_set older[K], made[K + 1];
#if FLOW_BLOCK_TENSOR_QUEUE
    float queue[K][TENSOR_COMPONENTS]; /* queue[j]: the tensor of plane m - 1 - j */
#endif
    for (int j = 0; j <= K; j++)
        for (int k = 0; k < 3; k++)
            made[j].c[k] = 0.0f;
    for (int m = c.z0 - K; m < c.z1 + K; m++) {
        if (stage_computes(&c, 0, m, nz))
            for (int k = 0; k < 3; k++)
                made[0].c[k] = in[k][c.base + slice * (size_t)m];
#if FLOW_BLOCK_TENSOR_QUEUE
#pragma unroll
        for (int j = K - 1; j > 0; j--)
            for (int k = 0; k < TENSOR_COMPONENTS; k++)
                queue[j][k] = queue[j - 1][k];
        if (stage_computes(&c, 1, m - 1, nz))
            load_tensor(t, n, c.base + slice * (size_t)(m - 1), queue[0]);
#endif
#pragma unroll
        for (int s = 1; s <= K; s++) {
            const int z = m - s;
            if (!stage_computes(&c, s, z, nz))
                continue;
#if FLOW_BLOCK_TENSOR_QUEUE
            __private const float *tv = queue[s - 1]; /* private: a generic pointer would not convert */
#else
            float tv[TENSOR_COMPONENTS];
            load_tensor(t, n, c.base + slice * (size_t)z, tv);
#endif
            sums ns[3];
            for (int k = 0; k < 3; k++)
                ns[k] = plane_sums(plane[s - 1], k, &c, z, nx, ny, nz, older[s - 1].c[k],
                                   made[s - 1].c[k]);
            const flow3 r = jacobi_update(tv, a, 0.0f, ns[0], ns[1], ns[2], no_div);
            made[s].c[0] = r.u;
            made[s].c[1] = r.v;
            made[s].c[2] = r.w;
        }
        const int z = m - K;
        if (stage_computes(&c, K, z, nz)) { /* the tile and the chunk */
            const size_t i = c.base + slice * (size_t)z;
            ou[i] = made[K].c[0];
            ov[i] = made[K].c[1];
            ow[i] = made[K].c[2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int j = 0; j < K; j++)
            for (int k = 0; k < 3; k++) { /* this item's own cell: no other writes it */
                older[j].c[k] = plane[j][k][c.ly][c.lx];
                plane[j][k][c.ly][c.lx] = made[j].c[k];
            }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#else
/* ---------------------------------------------------------- with divergence
 * The mixed derivatives read the neighbours across planes too ((x +- 1,
 * z +- 1), (y +- 1, z +- 1)), so every stage keeps its last three planes in
 * local memory, a ring indexed by the plane modulo 3.  Stage s computes
 * plane m - 2 s at step m (lag 2): the three planes it reads were made by
 * stage s - 1 in the three steps before, so again a step is every stage
 * from local memory, a barrier, the new planes into their rings, a
 * barrier.  Local memory: K x 3 x 3 x BX x BY floats. */
#define RING(p) (((p) + 3 * K + 3) % 3) /* p >= -3 K - 3 */

typedef __local const float (*ring_planes)[3][BY][BX]; /* [slot][component] */

/* Stage s - 1's component comp at offsets (dx, dy, dz) from the voxel. */
#define AT(comp, dx, dy, dz) (ring[RING(z + (dz))][comp][c->ly + (dy)][c->lx + (dx)])

static sums ring_sums(ring_planes ring, int comp, const column *c, int z, int nx, int ny, int nz)
{
    sums r;
    FLOW_AXIS_SUM(r, 0, c->x, nx, AT(comp, -1, 0, 0), AT(comp, 1, 0, 0));
    FLOW_AXIS_SUM(r, 1, c->y, ny, AT(comp, 0, -1, 0), AT(comp, 0, 1, 0));
    FLOW_AXIS_SUM(r, 2, z, nz, AT(comp, 0, 0, -1), AT(comp, 0, 0, 1));
    return r;
}

/* Da Db of component comp, the axes' reaches given (a < b). */
static float ring_mixed(ring_planes ring, int comp, const column *c, int z, const reach rc[3],
                        int a, int b)
{
    int hh[3] = {0, 0, 0}, hl[3] = {0, 0, 0}, lh[3] = {0, 0, 0}, ll[3] = {0, 0, 0};
    hh[a] = rc[a].hi;
    hh[b] = rc[b].hi;
    hl[a] = rc[a].hi;
    hl[b] = rc[b].lo;
    lh[a] = rc[a].lo;
    lh[b] = rc[b].hi;
    ll[a] = rc[a].lo;
    ll[b] = rc[b].lo;
    return mixed_of(AT(comp, hh[0], hh[1], hh[2]), AT(comp, hl[0], hl[1], hl[2]),
                    AT(comp, lh[0], lh[1], lh[2]), AT(comp, ll[0], ll[1], ll[2]), rc[a], rc[b]);
}

static flow3 ring_update(ring_planes ring, __global const float *t, size_t n, size_t i,
                         const column *c, int z, int nx, int ny, int nz, float a, float d)
{
    const reach rc[3] = {reach_of(c->x, nx), reach_of(c->y, ny), reach_of(z, nz)};
    const flow3 div = divergence_terms(
        ring_mixed(ring, 0, c, z, rc, 0, 1), ring_mixed(ring, 0, c, z, rc, 0, 2),
        ring_mixed(ring, 1, c, z, rc, 0, 1), ring_mixed(ring, 1, c, z, rc, 1, 2),
        ring_mixed(ring, 2, c, z, rc, 0, 2), ring_mixed(ring, 2, c, z, rc, 1, 2));
    float tv[TENSOR_COMPONENTS];
    load_tensor(t, n, i, tv);
    return jacobi_update(tv, a, d, ring_sums(ring, 0, c, z, nx, ny, nz),
                         ring_sums(ring, 1, c, z, nx, ny, nz),
                         ring_sums(ring, 2, c, z, nx, ny, nz), div);
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void flow_jacobi_div_block(__global const float *u, __global const float *v,
                           __global const float *w, __global float *ou, __global float *ov,
                           __global float *ow, __global const float *t, int nx, int ny, int nz,
                           float a, float d)
{
    __local float rings[K][3][3][BY][BX];
    const column c = column_here(nx, ny, nz);
    const size_t slice = (size_t)nx * (size_t)ny, n = slice * (size_t)nz;
    __global const float *in[3] = {u, v, w};
    plane_set made[K + 1];
    for (int j = 0; j <= K; j++)
        for (int k = 0; k < 3; k++)
            made[j].c[k] = 0.0f;
    for (int m = c.z0 - K; m < c.z1 + 2 * K; m++) {
        if (stage_computes(&c, 0, m, nz))
            for (int k = 0; k < 3; k++)
                made[0].c[k] = in[k][c.base + slice * (size_t)m];
#pragma unroll
        for (int s = 1; s <= K; s++) {
            const int z = m - 2 * s;
            if (!stage_computes(&c, s, z, nz))
                continue;
            const flow3 r = ring_update(rings[s - 1], t, n, c.base + slice * (size_t)z, &c, z,
                                        nx, ny, nz, a, d);
            made[s].c[0] = r.u;
            made[s].c[1] = r.v;
            made[s].c[2] = r.w;
        }
        const int z = m - 2 * K;
        if (stage_computes(&c, K, z, nz)) { /* the tile and the chunk */
            const size_t i = c.base + slice * (size_t)z;
            ou[i] = made[K].c[0];
            ov[i] = made[K].c[1];
            ow[i] = made[K].c[2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int j = 0; j < K; j++)
            for (int k = 0; k < 3; k++)
                rings[j][RING(m - 2 * j)][k][c.ly][c.lx] = made[j].c[k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
