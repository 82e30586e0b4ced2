/* CPU reference SIFT and descriptor matching.
 *
 * The arithmetic mirrors backends/opencl/kernels/features.cl: float32
 * throughout, the same formulas in the same order (blur sums in tap order,
 * VLFeat's refinement, histogram and descriptor rules), so the backends
 * agree to rounding; only the transcendental functions (exp, atan2, sqrt
 * on some devices) and the order of the descriptor sums differ.  Every
 * stage is deterministic for any thread count: candidates are gathered in
 * raster order through per-row counts, keypoints in candidate order. */
#include "../colour/colour.h"
#include "../cpu.h"
#include "sift_describe.h"
#include "../../common/sift_math.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_ORIENTATIONS PV_CPU_SIFT_MAX_ORIENTATIONS
#define REFINE_STEPS 5

typedef struct cpu_sift_plan {
    pv_sift_geometry g;       /* weights point into the copies below */
    float *weights;           /* base taps, then level taps */
    float *base;              /* current octave's base level g_0 (octave 0 size) */
    float *rows;              /* row-pass results of levels 1 .. S + 2 */
    float *gauss[PV_SIFT_MAX_OCTAVES];   /* levels 1 .. S */
    float *dog[PV_SIFT_MAX_OCTAVES];     /* D_0 .. D_{S+1}, D_i = g_{i+1} - g_i */
    /* Batches: scale spaces of their own for the images that run beside
     * this plan's, made by the first batch that needs them. */
    struct cpu_sift_plan **workers;
    int worker_count;
} cpu_sift_plan;

/* A DoG extremum: octave index, level (1 .. S), position. */
typedef struct candidate {
    int octave, level, x, y;
} candidate;

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static size_t plane_size(const pv_sift_geometry *g, int o)
{
    return (size_t)g->octave_width[o] * (size_t)g->octave_height[o];
}

static float *alloc_planes(size_t plane, int count)
{
    size_t n, bytes;
    if (!pv_size_mul(plane, (size_t)count, &n) || !pv_size_mul(n, sizeof(float), &bytes))
        return NULL;
    return malloc(bytes);
}

/* ------------------------------------------------------------------ plan */

static void pv_cpu_sift_destroy(pv_context *ctx, void *opaque)
{
    (void)ctx;
    cpu_sift_plan *plan = opaque;
    if (!plan)
        return;
    for (int i = 0; i < plan->worker_count; i++)
        pv_cpu_sift_destroy(ctx, plan->workers[i]);
    free(plan->workers);
    for (int o = 0; o < PV_SIFT_MAX_OCTAVES; o++) {
        free(plan->gauss[o]);
        free(plan->dog[o]);
    }
    free(plan->weights);
    free(plan->base);
    free(plan->rows);
    free(plan);
}

static int copy_weights(cpu_sift_plan *plan, const pv_sift_geometry *geometry)
{
    int base_taps = geometry->base_radius > 0 ? 2 * geometry->base_radius + 1 : 0;
    plan->weights = malloc((size_t)(base_taps + geometry->level_taps) * sizeof(float));
    if (!plan->weights)
        return 0;
    if (base_taps)
        memcpy(plan->weights, geometry->base_weights, (size_t)base_taps * sizeof(float));
    memcpy(plan->weights + base_taps, geometry->level_weights,
           (size_t)geometry->level_taps * sizeof(float));
    plan->g.base_weights = base_taps ? plan->weights : NULL;
    plan->g.level_weights = plan->weights + base_taps;
    return 1;
}

static int alloc_pyramid(cpu_sift_plan *plan)
{
    const pv_sift_geometry *g = &plan->g;
    const int levels = g->params.levels;
    plan->base = alloc_planes(plane_size(g, 0), 1);
    plan->rows = alloc_planes(plane_size(g, 0), levels + 2);
    if (!plan->base || !plan->rows)
        return 0;
    for (int o = 0; o < g->octaves; o++) {
        plan->gauss[o] = alloc_planes(plane_size(g, o), levels);
        plan->dog[o] = alloc_planes(plane_size(g, o), levels + 2);
        if (!plan->gauss[o] || !plan->dog[o])
            return 0;
    }
    return 1;
}

static pv_status pv_cpu_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out)
{
    cpu_sift_plan *plan = pv_plan_new(ctx, sizeof *plan, "the CPU SIFT plan");
    if (!plan)
        return PV_ERR_NOMEM;
    plan->g = *geometry;
    if (!copy_weights(plan, geometry) || !alloc_pyramid(plan)) {
        pv_cpu_sift_destroy(ctx, plan);
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: no memory for the %dx%d scale space",
                       geometry->octave_width[0], geometry->octave_height[0]);
    }
    *out = plan;
    return PV_OK;
}

/* ----------------------------------------------------------- scale space */

static float input_value(const pv_image *image, int x, int y, float scale)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    if (image->type == PV_PIXEL_F32)
        return ((const float *)image->data)[i];
    return pv_cpu_grey_at(image, i) * scale;
}

/* VLFeat's 2x upsampling: even samples copy, odd ones average their two
 * neighbours (the last repeats), along x and then along y. */
static float upsampled_row_value(const pv_image *image, int X, int y, float scale)
{
    int x0 = X >> 1, x1 = clampi(x0 + 1, 0, image->width - 1);
    float a = input_value(image, x0, y, scale);
    if (!(X & 1))
        return a;
    return 0.5f * (a + input_value(image, x1, y, scale));
}

static float prepared_value(const pv_image *image, int upsample, int X, int Y, float scale)
{
    if (!upsample)
        return input_value(image, X, Y, scale);
    int y0 = Y >> 1, y1 = clampi(y0 + 1, 0, image->height - 1);
    float a = upsampled_row_value(image, X, y0, scale);
    if (!(Y & 1))
        return a;
    return 0.5f * (a + upsampled_row_value(image, X, y1, scale));
}

/* One row of a blur along x with clamped borders: acc = 0, then
 * acc += w[k] * v in tap order, as in the kernels. */
static float blur_x_at(const float *row, int w, int x, const float *weights, int radius)
{
    float acc = 0.0f;
    for (int k = 0; k <= 2 * radius; k++)
        acc += weights[k] * row[clampi(x - radius + k, 0, w - 1)];
    return acc;
}

static float blur_y_at(const float *plane, int w, int h, int x, int y, const float *weights,
                       int radius)
{
    float acc = 0.0f;
    for (int k = 0; k <= 2 * radius; k++)
        acc += weights[k] * plane[(size_t)clampi(y - radius + k, 0, h - 1) * (size_t)w + (size_t)x];
    return acc;
}

/* The first octave's base: converted (and upsampled) input, blurred. */
static void build_first_base(cpu_sift_plan *plan, const pv_image *image, int threads)
{
    const pv_sift_geometry *g = &plan->g;
    const int w = g->octave_width[0], h = g->octave_height[0];
    const int upsample = g->params.first_octave < 0, r = g->base_radius;
    const float scale = 1.0f / 255.0f;
    float *target = r > 0 ? plan->rows : plan->base;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            target[(size_t)y * w + x] = prepared_value(image, upsample, x, y, scale);
    if (r == 0)
        return;
    float *tmp = plan->rows + (size_t)w * (size_t)h;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            tmp[(size_t)y * w + x] = blur_x_at(plan->rows + (size_t)y * w, w, x, g->base_weights, r);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            plan->base[(size_t)y * w + x] = blur_y_at(tmp, w, h, x, y, g->base_weights, r);
}

/* Octave o's base: every second sample of octave o - 1's level S. */
static void build_next_base(cpu_sift_plan *plan, int o, int threads)
{
    const pv_sift_geometry *g = &plan->g;
    const int w = g->octave_width[o], h = g->octave_height[o], pw = g->octave_width[o - 1];
    const float *top = plan->gauss[o - 1] + (size_t)(g->params.levels - 1) * plane_size(g, o - 1);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            plan->base[(size_t)y * w + x] = top[(size_t)(2 * y) * pw + (size_t)(2 * x)];
}

/* Levels 1 .. S + 2 from the base (rows, then columns), and the DoG. */
static void build_octave(cpu_sift_plan *plan, int o, int threads)
{
    const pv_sift_geometry *g = &plan->g;
    const int w = g->octave_width[o], h = g->octave_height[o], S = g->params.levels;
    const size_t plane = plane_size(g, o);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int l = 1; l <= S + 2; l++)
            for (int x = 0; x < w; x++)
                plan->rows[(size_t)(l - 1) * plane + (size_t)y * w + x] =
                    blur_x_at(plan->base + (size_t)y * w, w, x,
                              g->level_weights + g->level_offset[l], g->level_radius[l]);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const size_t at = (size_t)y * w + x;
            float prev = plan->base[at];
            for (int l = 1; l <= S + 2; l++) {
                float v = blur_y_at(plan->rows + (size_t)(l - 1) * plane, w, h, x, y,
                                    g->level_weights + g->level_offset[l], g->level_radius[l]);
                plan->dog[o][(size_t)(l - 1) * plane + at] = v - prev;
                if (l <= S)
                    plan->gauss[o][(size_t)(l - 1) * plane + at] = v;
                prev = v;
            }
        }
}

/* --------------------------------------------------------------- extrema */

static int is_extremum(const float *d, size_t plane, int w, float v, float threshold)
{
    const ptrdiff_t steps[3] = {-(ptrdiff_t)plane, 0, (ptrdiff_t)plane};
    const int sign = v >= threshold ? 1 : v <= -threshold ? -1 : 0;
    if (!sign)
        return 0;
    for (int s = 0; s < 3; s++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (s == 1 && dy == 0 && dx == 0)
                    continue;
                float n = d[steps[s] + (ptrdiff_t)dy * w + dx];
                if (sign > 0 ? !(v > n) : !(v < n))
                    return 0;
            }
    return 1;
}

/* Scan one row (level l, row y) of octave o; count only when out is NULL. */
static int scan_row(const cpu_sift_plan *plan, int o, int l, int y, candidate *out)
{
    const pv_sift_geometry *g = &plan->g;
    const int w = g->octave_width[o];
    const size_t plane = plane_size(g, o);
    const float threshold = 0.8f * g->params.peak_thresh;
    const float *row = plan->dog[o] + (size_t)l * plane + (size_t)y * w;
    int n = 0;
    for (int x = 1; x < w - 1; x++)
        if (is_extremum(row + x, plane, w, row[x], threshold)) {
            if (out)
                out[n] = (candidate){o, l, x, y};
            n++;
        }
    return n;
}

/* All candidates of octave o appended to *list in (level, y, x) order. */
static pv_status find_extrema(pv_context *ctx, const cpu_sift_plan *plan, int o, int threads,
                              candidate **list, int *count)
{
    const int h = plan->g.octave_height[o], S = plan->g.params.levels, rows = S * (h - 2);
    int *offsets = malloc((size_t)(rows + 1) * sizeof *offsets);
    if (!offsets)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for the extremum scan");
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int r = 0; r < rows; r++)
        offsets[r + 1] = scan_row(plan, o, 1 + r / (h - 2), 1 + r % (h - 2), NULL);
    offsets[0] = *count;
    for (int r = 0; r < rows; r++)
        offsets[r + 1] += offsets[r];
    const int total = offsets[rows];
    candidate *grown = realloc(*list, (size_t)(total > 0 ? total : 1) * sizeof **list);
    if (!grown) {
        free(offsets);
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %d extrema", total);
    }
    *list = grown;
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int r = 0; r < rows; r++)
        scan_row(plan, o, 1 + r / (h - 2), 1 + r % (h - 2), grown + offsets[r]);
    *count = total;
    free(offsets);
    return PV_OK;
}

/* ------------------------------------------------------------ refinement */

/* The DoG fit at a position and its sub-pixel offset: pv_sm_fit_at and
 * pv_sm_solve_offset of backends/common/sift_math.h, one text with the
 * OpenCL program's. */


static int refine(const cpu_sift_plan *plan, const candidate *c, pv_cpu_sift_refined *out)
{
    const pv_sift_geometry *g = &plan->g;
    const int w = g->octave_width[c->octave], h = g->octave_height[c->octave];
    const size_t plane = plane_size(g, c->octave);
    int x = c->x, y = c->y, dx = 0, dy = 0;
    pv_sm_dog_fit f;
    float b[3];
    for (int step = 0; step < REFINE_STEPS; step++) {
        x += dx;
        y += dy;
        const float *at = plan->dog[c->octave] + (size_t)c->level * plane + (size_t)y * w + x;
        f = pv_sm_fit_at(at, plane, w);
        pv_sm_solve_offset(&f, b);
        dx = (b[0] > 0.6f && x < w - 2) - (b[0] < -0.6f && x > 1);
        dy = (b[1] > 0.6f && y < h - 2) - (b[1] < -0.6f && y > 1);
        if (dx == 0 && dy == 0)
            break;
    }
    const float te = g->params.edge_thresh;
    const float val = f.v + 0.5f * (f.dx * b[0] + f.dy * b[1] + f.ds * b[2]);
    const float tr = f.dxx + f.dyy, det = f.dxx * f.dyy - f.dxy * f.dxy;
    const float score = tr * tr / det;
    const float xn = (float)x + b[0], yn = (float)y + b[1], sn = (float)c->level + b[2];
    const int good = fabsf(val) > g->params.peak_thresh && score < (te + 1.0f) * (te + 1.0f) / te &&
                     score >= 0.0f && fabsf(b[0]) < 1.5f && fabsf(b[1]) < 1.5f &&
                     fabsf(b[2]) < 1.5f && xn >= 0.0f && xn <= (float)(w - 1) && yn >= 0.0f &&
                     yn <= (float)(h - 1) && sn >= 0.0f && sn <= (float)(g->params.levels + 2);
    if (!good)
        return 0;
    out->x = xn;
    out->y = yn;
    out->s = sn;
    out->sigma = g->params.sigma0 * exp2f(sn / (float)g->params.levels);
    out->response = val;
    out->level = c->level;
    return 1;
}

/* --------------------------------------------------------------- detect */

/* Up to MAX_ORIENTATIONS keypoints of candidate c into slot arrays. */
static int process_candidate(const cpu_sift_plan *plan, const candidate *c,
                             pv_sift_keypoint *kps, uint64_t *keys, float *descs)
{
    const pv_sift_params *p = &plan->g.params;
    pv_cpu_sift_refined k;
    if (!refine(plan, c, &k))
        return 0;
    const pv_sift_geometry *g = &plan->g;
    const int o = c->octave;
    const pv_cpu_sift_level level = {plan->gauss[o] + (size_t)(k.level - 1) * plane_size(g, o),
                                     g->octave_width[o], g->octave_height[o]};
    float angles[MAX_ORIENTATIONS];
    int n = pv_cpu_sift_orientations(&level, p, &k, angles);
    const float xper = exp2f((float)(c->octave + p->first_octave));
    const uint64_t key = ((((uint64_t)c->octave * 16u + (uint64_t)c->level) * 65536u +
                           (uint64_t)c->y) * 65536u + (uint64_t)c->x) * 4u;
    for (int i = 0; i < n; i++) {
        kps[i] = (pv_sift_keypoint){k.x * xper, k.y * xper, k.sigma * xper, angles[i],
                                    k.response, c->octave + p->first_octave, k.s};
        keys[i] = key + (uint64_t)i;
        pv_cpu_sift_describe(&level, p, &k, angles[i], descs + (size_t)i * PV_SIFT_DESCRIPTOR_SIZE);
    }
    return n;
}

/* Keep the filled slots, in candidate order. */
static void compact_slots(pv_sift_raw *raw, const int *filled, int candidates)
{
    int n = 0;
    for (int c = 0; c < candidates; c++)
        for (int i = 0; i < filled[c]; i++) {
            size_t from = (size_t)c * MAX_ORIENTATIONS + (size_t)i;
            raw->keypoints[n] = raw->keypoints[from];
            raw->keys[n] = raw->keys[from];
            memmove(raw->descriptors + (size_t)n * PV_SIFT_DESCRIPTOR_SIZE,
                    raw->descriptors + from * PV_SIFT_DESCRIPTOR_SIZE,
                    PV_SIFT_DESCRIPTOR_SIZE * sizeof(float));
            n++;
        }
    raw->count = n;
}

static pv_status describe_candidates(pv_context *ctx, const cpu_sift_plan *plan, int threads,
                                     const candidate *list, int count, pv_sift_raw *raw)
{
    if (count > INT32_MAX / MAX_ORIENTATIONS)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %d extrema are too many", count);
    int *filled = malloc((count > 0 ? (size_t)count : 1) * sizeof *filled);
    pv_status status = filled ? pv_sift_raw_reserve(ctx, raw, count * MAX_ORIENTATIONS, 0)
                              : pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %d extrema", count);
    if (status != PV_OK) {
        free(filled);
        return status;
    }
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
    for (int c = 0; c < count; c++) {
        size_t slot = (size_t)c * MAX_ORIENTATIONS;
        filled[c] = process_candidate(plan, &list[c], raw->keypoints + slot, raw->keys + slot,
                                      raw->descriptors + slot * PV_SIFT_DESCRIPTOR_SIZE);
    }
    compact_slots(raw, filled, count);
    raw->u8_filled = 0;
    free(filled);
    return PV_OK;
}

/* One detection on `threads` threads.  ctx may be NULL (a batch's images
 * beside each other: their failures are recorded on the calling thread
 * only, as the context is held by the thread that runs the batch). */
static pv_status detect_with(pv_context *ctx, cpu_sift_plan *plan, const pv_image *image,
                             pv_sift_raw *raw, int threads)
{
    candidate *list = NULL;
    int count = 0;
    pv_status status = PV_OK;
    build_first_base(plan, image, threads);
    for (int o = 0; o < plan->g.octaves && status == PV_OK; o++) {
        if (o > 0)
            build_next_base(plan, o, threads);
        build_octave(plan, o, threads);
        status = find_extrema(ctx, plan, o, threads, &list, &count);
    }
    if (status == PV_OK)
        status = describe_candidates(ctx, plan, threads, list, count, raw);
    free(list);
    return status;
}

static pv_status pv_cpu_sift_detect(pv_context *ctx, void *opaque, const pv_image *image,
                                    pv_sift_raw *raw)
{
    return detect_with(ctx, opaque, image, raw, ctx->cpu_threads);
}

/* Batches: images side by side, one thread each, when the images are
 * small: a small image's row passes are short, and their starts, ends and
 * serial parts cost a larger share, more so when the threads are shared
 * (on 2 busy cores, 8 VGA frames ran at 2.4-2.7 images/s side by side
 * against 1.9-2.0 with each image's rows over both threads; on 2 idle
 * ones at about the same rate, 7-9 images/s, within the noise).  Only
 * when there are at least as many images as threads, though: with fewer,
 * threads would idle (on a 16-thread host, 8 VGA frames ran at 14 images/s
 * side by side on 8 threads against 24 with each image over all 16).
 * Large images keep every thread on one image (their rows fill the
 * threads), and the extra scale spaces stay under WORKERS_MAX_BYTES in
 * all. */
#define PARALLEL_IMAGES_MAX_AREA ((size_t)2 << 20)
#define WORKERS_MAX_BYTES ((size_t)512 << 20)

/* The bytes of one plan's scale space (alloc_pyramid's). */
static size_t scale_space_bytes(const pv_sift_geometry *g)
{
    const size_t levels = (size_t)g->params.levels;
    size_t floats = plane_size(g, 0) * (levels + 3);
    for (int o = 0; o < g->octaves; o++)
        floats += plane_size(g, o) * (2 * levels + 2);
    return floats * sizeof(float);
}

static pv_status ensure_workers(pv_context *ctx, cpu_sift_plan *plan, int workers)
{
    if (plan->worker_count >= workers)
        return PV_OK;
    cpu_sift_plan **grown = realloc(plan->workers, (size_t)workers * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: no memory for %d workers", workers);
    plan->workers = grown;
    pv_status status = PV_OK;
    while (plan->worker_count < workers && status == PV_OK) {
        void *made = NULL;
        status = pv_cpu_sift_create(ctx, &plan->g, &made);
        if (status == PV_OK)
            plan->workers[plan->worker_count++] = made;
    }
    return status;
}

static int workers_for(const pv_context *ctx, const cpu_sift_plan *plan, int count)
{
    const int workers = ctx->cpu_threads;
    if (count < workers || plane_size(&plan->g, 0) > PARALLEL_IMAGES_MAX_AREA)
        return 1;
    const size_t affordable = 1 + WORKERS_MAX_BYTES / scale_space_bytes(&plan->g);
    return (size_t)workers > affordable ? (int)affordable : workers;
}

typedef struct image_outcome {
    pv_status status;
    char message[256];
} image_outcome;

/* Image i on the scale space of the thread that takes it; failures are
 * kept per image and the first one is recorded on the context after.
 * Progress is reported by thread 0, the caller's own thread, as it
 * finishes an image (with the count finished by all); a cancellation
 * makes every thread skip the images not yet begun. */
static pv_status detect_side_by_side(pv_context *ctx, cpu_sift_plan *plan, const pv_image *images,
                                     int count, pv_sift_raw *raws, int workers)
{
    image_outcome *outcomes = calloc((size_t)count, sizeof *outcomes);
    if (!outcomes)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: no memory for %d images", count);
    atomic_int finished = 0, cancelled = 0;
    #pragma omp parallel for num_threads(workers) schedule(dynamic, 1)
    for (int i = 0; i < count; i++) {
        if (atomic_load(&cancelled))
            continue;
        const int thread = pv_cpu_thread_index();
        cpu_sift_plan *own = thread == 0 ? plan : plan->workers[thread - 1];
        outcomes[i].status = detect_with(NULL, own, &images[i], &raws[i], 1);
        if (outcomes[i].status != PV_OK)
            snprintf(outcomes[i].message, sizeof outcomes[i].message, "%s", pv_last_error());
        const int done = atomic_fetch_add(&finished, 1) + 1;
        if (thread == 0 && done < count &&
            pv_progress_report(ctx, "sift_detect_batch", done, count) != PV_OK)
            atomic_store(&cancelled, 1);
    }
    pv_status status = atomic_load(&cancelled) ? PV_ERR_CANCELLED : PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++)
        if (outcomes[i].status != PV_OK)
            status = pv_fail(ctx, outcomes[i].status, "sift_detect_batch: image %d: %s", i,
                             outcomes[i].message);
    free(outcomes);
    if (status == PV_OK)
        status = pv_progress_report(ctx, "sift_detect_batch", count, count);
    return status;
}

static pv_status pv_cpu_sift_detect_batch(pv_context *ctx, void *opaque, const pv_image *images,
                                          int count, pv_sift_raw *raws)
{
    cpu_sift_plan *plan = opaque;
    const int workers = workers_for(ctx, plan, count);
    pv_status status = pv_progress_report(ctx, "sift_detect_batch", 0.0, count);
    if (status == PV_OK && workers > 1)
        status = ensure_workers(ctx, plan, workers - 1);
    if (status == PV_OK && workers > 1)
        return detect_side_by_side(ctx, plan, images, count, raws, workers);
    for (int i = 0; i < count && status == PV_OK; i++) {
        status = pv_cpu_sift_detect(ctx, plan, &images[i], &raws[i]);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "sift_detect_batch", i + 1.0, count);
    }
    return status;
}

/* -------------------------------------------------------------- matching */

/* Squared L2 distance, summed in element order as in the kernel. */
static float distance2(const float *a, const float *b)
{
    float acc = 0.0f;
    for (int k = 0; k < PV_SIFT_DESCRIPTOR_SIZE; k++) {
        float d = a[k] - b[k];
        acc += d * d;
    }
    return acc;
}

static pv_status pv_cpu_sift_nearest(pv_context *ctx, const float *query, int query_count,
                              const float *train, int train_count, int *best, float *best_d2,
                              float *second_d2)
{
    #pragma omp parallel for num_threads(ctx->cpu_threads) schedule(static)
    for (int q = 0; q < query_count; q++) {
        const float *a = query + (size_t)q * PV_SIFT_DESCRIPTOR_SIZE;
        float d1 = INFINITY, d2 = INFINITY;
        int b1 = -1;
        for (int t = 0; t < train_count; t++) {
            float d = distance2(a, train + (size_t)t * PV_SIFT_DESCRIPTOR_SIZE);
            if (d < d1) {
                d2 = d1;
                d1 = d;
                b1 = t;
            } else if (d < d2) {
                d2 = d;
            }
        }
        best[q] = b1;
        best_d2[q] = d1;
        second_d2[q] = d2;
    }
    return PV_OK;
}

/* The chain's slots stay NULL: the front end composes the calls above. */
const pv_features_ops pv_cpu_features_ops = {PV_FEATURES_BASE_SLOTS(PV_OPS_BIND, pv_cpu_sift_)};
