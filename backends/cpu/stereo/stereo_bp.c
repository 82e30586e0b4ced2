/* CPU reference hierarchical belief propagation: the oracle for
 * kernels/stereo_bp.cl.
 *
 * Every float operation is the kernel's, in the kernel's order: the
 * smoothing (rows, then columns, acc += w[k] * v from k = 0), the data cost,
 * the 2x2 sums (children in raster order), each message (data + three
 * incoming, left to right; forward pass, backward pass, truncation with the
 * running sum, mean = sum * inv_ndisp) and the final sum (data + from
 * above, below, left, right).  So both backends give the same bits.  With
 * half messages (pv_bp_params.message_precision) each stored message is
 * rounded to half here as the kernels' vstore_half_rte rounds it, and kept
 * in a float, which holds that value exactly: the same bits again.
 *
 * Messages are stored at the sender: msg[dir] of pixel p is what p sends
 * to its neighbour in direction dir.  Arrays carry a one-pixel border of
 * zeros, which stands for the messages from outside the image.  Layout is
 * pixel-major (ndisp values of a pixel together), the CPU's friendly order;
 * the kernels use colour-split disparity planes instead, which changes no
 * arithmetic.  A checkerboard round reads only the other colour, so rows
 * run in parallel and the result does not depend on the thread count.
 * Everything that can fail (allocation) happens before the output is
 * written.
 *
 * Two border conventions differ from Felzenszwalb & Huttenlocher's code,
 * on purpose (measurements in stereo.h): a candidate x - d outside the
 * right image compares with its border column (their code zeroes the
 * whole cost of the first ndisp - 1 columns, which ruins wide ranges),
 * and the pixels on the image border send messages too (theirs keep the
 * handed-down ones).
 *
 * The cooperative update (pv_bp_job.cooperative, PV_BP_UPDATE_COOPERATIVE)
 * normalises by the minimum instead of the mean (send_min).  Here it runs
 * the plain serial passes, the readable oracle; the kernel runs them as
 * scans across work-items, which give the same bits
 * (backends/common/bp_scan_math.h, whose step and output functions both
 * use). */
#include "../cpu.h"
#include "../../common/bp_scan_math.h"

#include <stdlib.h>
#include <string.h>

enum { DIR_UP, DIR_DOWN, DIR_LEFT, DIR_RIGHT, DIR_COUNT };

typedef struct bp_grid {
    int width, height;
    size_t pitch;   /* width + 2 */
} bp_grid;

typedef struct bp_messages {
    bp_grid grid;
    float *dir[DIR_COUNT]; /* (height + 2) * pitch * ndisp each */
} bp_messages;

typedef struct bp_work {
    int ndisp;
    int levels;            /* most levels of any tile */
    float *left, *right;   /* smoothed f32 copies of the whole images */
    float *tmp;            /* the row pass of the smoothing, or NULL */
    float *data[16];       /* data costs per level, width * height * ndisp */
    size_t data_cap[16];   /* elements allocated per level */
    float *msg_store[2][DIR_COUNT]; /* even levels use [0], odd levels [1] */
    size_t msg_cap[2];     /* elements per direction */
} bp_work;

static int thread_count(const pv_context *ctx)
{
    return ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void *alloc_floats(size_t count)
{
    size_t bytes;
    if (!pv_size_mul(count, sizeof(float), &bytes))
        return NULL;
    return malloc(bytes ? bytes : 1);
}

static bp_grid level_grid(const pv_bp_tile *tile, int level)
{
    bp_grid g = {tile->width, tile->height, 0};
    for (int l = 0; l < level; l++) {
        g.width = (g.width + 1) / 2;
        g.height = (g.height + 1) / 2;
    }
    g.pitch = (size_t)g.width + 2;
    return g;
}

static size_t padded_elements(const bp_grid *g, int ndisp)
{
    return (size_t)(g->height + 2) * g->pitch * (size_t)ndisp;
}

/* --------------------------------------------------------------- allocation */

static void free_work(bp_work *w)
{
    free(w->left);
    free(w->right);
    free(w->tmp);
    for (int l = 0; l < 16; l++)
        free(w->data[l]);
    for (int b = 0; b < 2; b++)
        for (int d = 0; d < DIR_COUNT; d++)
            free(w->msg_store[b][d]);
}

/* Capacities for the largest tile at each level. */
static void size_work(bp_work *w, const pv_bp_job *job)
{
    for (int t = 0; t < job->tile_count; t++) {
        const pv_bp_tile *tile = &job->tiles[t];
        if (tile->levels > w->levels)
            w->levels = tile->levels;
        for (int l = 0; l < tile->levels; l++) {
            bp_grid g = level_grid(tile, l);
            size_t data = (size_t)g.width * (size_t)g.height * (size_t)job->ndisp;
            size_t msgs = padded_elements(&g, job->ndisp);
            if (data > w->data_cap[l])
                w->data_cap[l] = data;
            if (l < 2 && msgs > w->msg_cap[l])
                w->msg_cap[l] = msgs;
        }
    }
}

static pv_status alloc_work(pv_context *ctx, bp_work *w, const pv_image *left,
                            const pv_bp_job *job)
{
    memset(w, 0, sizeof *w);
    w->ndisp = job->ndisp;
    size_work(w, job);
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    w->left = alloc_floats(pixels);
    w->right = alloc_floats(pixels);
    if (job->weights)
        w->tmp = alloc_floats(pixels);
    int ok = w->left && w->right && (w->tmp || !job->weights);
    for (int l = 0; ok && l < w->levels; l++)
        ok = (w->data[l] = alloc_floats(w->data_cap[l])) != NULL;
    for (int b = 0; ok && b < 2; b++)
        for (int d = 0; ok && d < DIR_COUNT && w->msg_cap[b]; d++)
            ok = (w->msg_store[b][d] = alloc_floats(w->msg_cap[b])) != NULL;
    if (ok)
        return PV_OK;
    free_work(w);
    return pv_fail(ctx, PV_ERR_NOMEM, "stereo_bp: no memory for the data-cost pyramid and messages");
}

/* ---------------------------------------------------------------- smoothing */

static float pixel_at(const pv_image *image, int x, int y)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    if (image->type == PV_PIXEL_U8)
        return (float)((const uint8_t *)image->data)[i];
    return ((const float *)image->data)[i];
}

static void copy_plain(const pv_image *src, float *dst, int threads)
{
    const int width = src->width;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < width; x++)
            dst[(size_t)y * (size_t)width + (size_t)x] = pixel_at(src, x, y);
}

/* Rows first into tmp, then columns into dst; borders replicated. */
static void smooth(const pv_image *src, float *tmp, float *dst, const pv_bp_job *job, int threads)
{
    const int width = src->width, height = src->height, r = job->radius;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            float acc = 0.0f;
            for (int k = 0; k <= 2 * r; k++)
                acc += job->weights[k] * pixel_at(src, clamp_int(x + k - r, 0, width - 1), y);
            tmp[(size_t)y * (size_t)width + (size_t)x] = acc;
        }
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            float acc = 0.0f;
            for (int k = 0; k <= 2 * r; k++)
                acc += job->weights[k] *
                       tmp[(size_t)clamp_int(y + k - r, 0, height - 1) * (size_t)width + (size_t)x];
            dst[(size_t)y * (size_t)width + (size_t)x] = acc;
        }
}

static void prepare_images(bp_work *w, const pv_image *left, const pv_image *right,
                           const pv_bp_job *job, int threads)
{
    if (!job->weights) {
        copy_plain(left, w->left, threads);
        copy_plain(right, w->right, threads);
        return;
    }
    smooth(left, w->tmp, w->left, job, threads);
    smooth(right, w->tmp, w->right, job, threads);
}

/* --------------------------------------------------------------- data costs */

static void finest_costs(const bp_work *w, const pv_image *image, const pv_bp_tile *tile,
                         const pv_bp_job *job, int threads)
{
    const int width = image->width, n = job->ndisp;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < tile->height; y++) {
        const float *lrow = w->left + (size_t)(tile->y + y) * (size_t)width;
        const float *rrow = w->right + (size_t)(tile->y + y) * (size_t)width;
        for (int x = 0; x < tile->width; x++) {
            const int xa = tile->x + x;
            float *cost = w->data[0] + ((size_t)y * (size_t)tile->width + (size_t)x) * (size_t)n;
            for (int k = 0; k < n; k++) {
                const int xr = clamp_int(xa - (job->min_disp + k), 0, width - 1);
                float diff = fabsf(lrow[xa] - rrow[xr]);
                diff = diff < job->data_max ? diff : job->data_max;
                cost[k] = job->lambda * diff;
            }
        }
    }
}

/* Level l from level l - 1: the sum of the 2x2 children inside the image. */
static void coarser_costs(const bp_work *w, const pv_bp_tile *tile, int level, int threads)
{
    const bp_grid fine = level_grid(tile, level - 1), coarse = level_grid(tile, level);
    const int n = w->ndisp;
    const float *src = w->data[level - 1];
    float *dst = w->data[level];
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < coarse.height; y++)
        for (int x = 0; x < coarse.width; x++) {
            float *out = dst + ((size_t)y * (size_t)coarse.width + (size_t)x) * (size_t)n;
            for (int k = 0; k < n; k++)
                out[k] = 0.0f;
            for (int c = 0; c < 4; c++) {
                const int fx = 2 * x + (c & 1), fy = 2 * y + (c >> 1);
                if (fx >= fine.width || fy >= fine.height)
                    continue;
                const float *in = src + ((size_t)fy * (size_t)fine.width + (size_t)fx) * (size_t)n;
                for (int k = 0; k < n; k++)
                    out[k] += in[k];
            }
        }
}

/* ------------------------------------------------------------------ messages */

static float *slot(const bp_messages *m, int dir, int x, int y, int n)
{
    return m->dir[dir] + ((size_t)(y + 1) * m->grid.pitch + (size_t)(x + 1)) * (size_t)n;
}

static bp_messages level_messages(const bp_work *w, const pv_bp_tile *tile, int level)
{
    bp_messages m;
    m.grid = level_grid(tile, level);
    for (int d = 0; d < DIR_COUNT; d++)
        m.dir[d] = w->msg_store[level & 1][d];
    return m;
}

static void clear_messages(const bp_messages *m, int n)
{
    const size_t count = padded_elements(&m->grid, n);
    for (int d = 0; d < DIR_COUNT; d++)
        memset(m->dir[d], 0, count * sizeof(float));
}

/* Each fine pixel starts from its coarse parent's messages. */
static void inherit_messages(const bp_messages *fine, const bp_messages *coarse, int n, int threads)
{
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < fine->grid.height; y++)
        for (int x = 0; x < fine->grid.width; x++)
            for (int d = 0; d < DIR_COUNT; d++)
                memcpy(slot(fine, d, x, y, n), slot(coarse, d, x >> 1, y >> 1, n),
                       (size_t)n * sizeof(float));
}

typedef struct bp_consts {
    int n;
    float disc_max, inv_n;
    int half_messages;  /* store messages rounded to half */
    int cooperative;    /* normalise by the minimum (send_min) */
} bp_consts;

/* f rounded to the nearest IEEE binary16 value, ties to even (what the
 * kernels' vstore_half_rte stores), as a float, which holds it exactly:
 * 11 significant bits, the ulp never below 2^-24 (half's subnormals),
 * infinity from 65520 up.  Zero, infinities and NaN pass unchanged. */
static float round_to_half(float f)
{
    if (!isfinite(f) || f == 0.0f)
        return f;
    int exponent;
    frexpf(f, &exponent); /* |f| = m 2^exponent, 0.5 <= m < 1 */
    const int ulp = exponent - 11 > -24 ? exponent - 11 : -24;
    const float rounded = ldexpf(rintf(ldexpf(f, -ulp)), ulp);
    return fabsf(rounded) >= 65520.0f ? copysignf(INFINITY, f) : rounded;
}

/* The paper's eight steps: out = normalised truncated-linear distance
 * transform of data + a + b + c. */
static void send(const float *data, const float *a, const float *b, const float *c, float *out,
                 const bp_consts *k)
{
    const int n = k->n;
    float minimum = INFINITY;
    for (int d = 0; d < n; d++) {
        float v = data[d] + a[d] + b[d] + c[d];
        out[d] = v;
        if (v < minimum)
            minimum = v;
    }
    for (int d = 1; d < n; d++) {
        float v = out[d - 1] + 1.0f;
        if (v < out[d])
            out[d] = v;
    }
    for (int d = n - 2; d >= 0; d--) {
        float v = out[d + 1] + 1.0f;
        if (v < out[d])
            out[d] = v;
    }
    const float cap = minimum + k->disc_max;
    float sum = 0.0f;
    for (int d = 0; d < n; d++) {
        if (cap < out[d])
            out[d] = cap;
        sum += out[d];
    }
    const float mean = sum * k->inv_n;
    for (int d = 0; d < n; d++)
        out[d] -= mean;
    if (k->half_messages)
        for (int d = 0; d < n; d++)
            out[d] = round_to_half(out[d]);
}

/* The cooperative update's message: the same h and passes as send(),
 * serially, then out = min(m, min_h + disc_max) - min_h (no mean). */
static void send_min(const float *data, const float *a, const float *b, const float *c,
                     float *out, const bp_consts *k)
{
    const int n = k->n;
    float minimum = INFINITY;
    for (int d = 0; d < n; d++) {
        const float v = data[d] + a[d] + b[d] + c[d];
        out[d] = v;
        if (v < minimum)
            minimum = v;
    }
    pv_bp_forward_chain(out, n, INFINITY);
    pv_bp_backward_chain(out, n, INFINITY);
    for (int d = 0; d < n; d++)
        out[d] = pv_bp_min_normalised(out[d], minimum, k->disc_max);
    if (k->half_messages)
        for (int d = 0; d < n; d++)
            out[d] = round_to_half(out[d]);
}

static void update_pixel(const bp_messages *m, const float *data, int x, int y,
                         const bp_consts *k)
{
    const int n = k->n;
    const float *from_up = slot(m, DIR_DOWN, x, y - 1, n);
    const float *from_down = slot(m, DIR_UP, x, y + 1, n);
    const float *from_left = slot(m, DIR_RIGHT, x - 1, y, n);
    const float *from_right = slot(m, DIR_LEFT, x + 1, y, n);
    void (*const message)(const float *, const float *, const float *, const float *, float *,
                          const bp_consts *) = k->cooperative ? send_min : send;
    if (y > 0)
        message(data, from_down, from_left, from_right, slot(m, DIR_UP, x, y, n), k);
    if (y < m->grid.height - 1)
        message(data, from_up, from_left, from_right, slot(m, DIR_DOWN, x, y, n), k);
    if (x > 0)
        message(data, from_up, from_down, from_right, slot(m, DIR_LEFT, x, y, n), k);
    if (x < m->grid.width - 1)
        message(data, from_up, from_down, from_left, slot(m, DIR_RIGHT, x, y, n), k);
}

/* Round t updates the pixels with (x + y + t) odd, as F&H do. */
static void checkerboard_round(const bp_messages *m, const float *data, int t, const bp_consts *k,
                               int threads)
{
    const int width = m->grid.width;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < m->grid.height; y++)
        for (int x = (y + t + 1) & 1; x < width; x += 2)
            update_pixel(m, data + ((size_t)y * (size_t)width + (size_t)x) * (size_t)k->n, x, y, k);
}

/* --------------------------------------------------------------- disparities */

static void write_disparities(const bp_messages *m, const float *data, const pv_bp_tile *tile,
                              const pv_bp_job *job, pv_image *disparity, int threads)
{
    const int n = job->ndisp, width = tile->width;
    const int x0 = tile->out_x - tile->x, y0 = tile->out_y - tile->y;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = y0; y < y0 + tile->out_height; y++) {
        float *out = (float *)disparity->data + (ptrdiff_t)(tile->y + y) * disparity->stride;
        for (int x = x0; x < x0 + tile->out_width; x++) {
            const float *cost = data + ((size_t)y * (size_t)width + (size_t)x) * (size_t)n;
            const float *from_up = slot(m, DIR_DOWN, x, y - 1, n);
            const float *from_down = slot(m, DIR_UP, x, y + 1, n);
            const float *from_left = slot(m, DIR_RIGHT, x - 1, y, n);
            const float *from_right = slot(m, DIR_LEFT, x + 1, y, n);
            int best = 0;
            float best_value = INFINITY;
            for (int d = 0; d < n; d++) {
                float v = cost[d] + from_up[d] + from_down[d] + from_left[d] + from_right[d];
                if (v < best_value) {
                    best_value = v;
                    best = d;
                }
            }
            out[tile->x + x] = (float)(job->min_disp + best);
        }
    }
}

/* ---------------------------------------------------------------------- tiles */

/* Progress is counted in message rounds: iterations per level of each
 * tile, reported after each round (between parallel regions). */
typedef struct bp_progress {
    pv_context *ctx;
    double done, total;
} bp_progress;

static pv_status run_tile(bp_work *w, const pv_image *left, const pv_bp_tile *tile,
                          const pv_bp_job *job, pv_image *disparity, int threads,
                          bp_progress *progress)
{
    const bp_consts k = {job->ndisp, job->disc_max, job->inv_ndisp, job->half_messages,
                         job->cooperative};
    finest_costs(w, left, tile, job, threads);
    for (int level = 1; level < tile->levels; level++)
        coarser_costs(w, tile, level, threads);
    for (int level = tile->levels - 1; level >= 0; level--) {
        bp_messages m = level_messages(w, tile, level);
        clear_messages(&m, job->ndisp);
        if (level < tile->levels - 1) {
            bp_messages coarse = level_messages(w, tile, level + 1);
            inherit_messages(&m, &coarse, job->ndisp, threads);
        }
        for (int t = 0; t < job->iterations; t++) {
            checkerboard_round(&m, w->data[level], t, &k, threads);
            pv_status status = pv_progress_report(progress->ctx, "stereo_bp", ++progress->done,
                                                  progress->total);
            if (status != PV_OK)
                return status;
        }
        if (level == 0)
            write_disparities(&m, w->data[0], tile, job, disparity, threads);
    }
    return PV_OK;
}

/* Everything is allocated up front (alloc_work), so nothing below fails
 * but a cancellation by the progress callback. */
static pv_status pv_cpu_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                               const pv_bp_job *job, pv_image *disparity)
{
    bp_work w;
    pv_status status = alloc_work(ctx, &w, left, job);
    if (status == PV_OK) {
        bp_progress progress = {ctx, 0.0, 0.0};
        for (int t = 0; t < job->tile_count; t++)
            progress.total += (double)job->tiles[t].levels * job->iterations;
        status = pv_progress_report(ctx, "stereo_bp", 0.0, progress.total);
        if (status == PV_OK)
            prepare_images(&w, left, right, job, thread_count(ctx));
        for (int t = 0; status == PV_OK && t < job->tile_count; t++)
            status = run_tile(&w, left, &job->tiles[t], job, disparity, thread_count(ctx),
                              &progress);
        free_work(&w);
    }
    return status;
}

const pv_bp_ops pv_cpu_bp_ops = {PV_BP_SLOTS(PV_OPS_BIND, pv_cpu_bp_)};
