/* Front end of hierarchical belief-propagation stereo: parameter defaults,
 * argument checks (once, here; the backends trust them), the smoothing
 * taps (computed once so both backends use identical weights), the
 * partition of the image into padded tiles, and the CPU cross-check. */
#include "stereo_internal.h"
#include "../core/tolerance.h"
#include "../tune/tune_lookup.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deepest pyramid accepted; 2^15 pixels per coarsest pixel is far past use. */
#define PV_BP_MAX_LEVELS 16
#define PV_BP_MAX_TAPS 4095

/* Tiles are never cut below this size (padding excluded) to fit a budget. */
#define PV_BP_MIN_TILE 16

void pv_bp_params_default(pv_bp_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_bp_decl, params); /* declared in stereo_params.c */
}

float pv_bp_recommended_disc_max(int ndisp)
{
    return (float)ndisp / 7.5f;
}

/* ---------------------------------------------------------- memory model */

/* Elements of one colour plane of a level as the OpenCL backend lays it
 * out (half the columns plus a zero border); the CPU's layout is smaller. */
static int plane_elements(size_t width, size_t height, size_t *out)
{
    return pv_size_mul((width + 1) / 2 + 2, height + 2, out);
}

/* Bytes of the largest single buffer: the finest level's messages
 * (4 directions x 2 colours x ndisp planes). */
static size_t largest_buffer(int width, int height, int ndisp)
{
    size_t plane, bytes;
    if (!plane_elements((size_t)width, (size_t)height, &plane) ||
        !pv_size_mul(plane, 8 * sizeof(float), &bytes) || !pv_size_mul(bytes, (size_t)ndisp, &bytes))
        return 0;
    return bytes;
}

size_t pv_bp_memory_estimate(int width, int height, int ndisp, int levels)
{
    if (width < 1 || height < 1 || ndisp < 1 || levels < 1 || levels > PV_BP_MAX_LEVELS)
        return 0;
    size_t planes = 0, w = (size_t)width, h = (size_t)height;
    for (int level = 0; level < levels; level++) {
        size_t plane;
        if (!plane_elements(w, h, &plane))
            return 0;
        size_t messages = level < 2 ? 8 : 0; /* two message levels live at once */
        size_t count;
        if (!pv_size_mul(plane, 2 + messages, &count) || planes > SIZE_MAX - count)
            return 0;
        planes += count;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    size_t bytes;
    if (!pv_size_mul(planes, (size_t)ndisp, &bytes) || !pv_size_mul(bytes, sizeof(float), &bytes))
        return 0;
    return bytes;
}

/* ------------------------------------------------------------------- checks */


/* Some pixel x in [0, width) has a candidate d with 0 <= x - d < width. */
static int range_reaches_image(long long min_disp, long long ndisp, int width)
{
    long long max_disp = min_disp + ndisp - 1;
    return min_disp < width && max_disp > -(long long)width;
}

static int smaller_side(int width, int height)
{
    return width < height ? width : height;
}

/* Levels that a width x height region can hold: 2^(levels-1) <= smaller side. */
static int levels_that_fit(int width, int height)
{
    int levels = 1;
    while (levels < PV_BP_MAX_LEVELS && (1 << levels) <= smaller_side(width, height))
        levels++;
    return levels;
}

static pv_status check_range(pv_context *ctx, const pv_bp_params *params, int width)
{
    if (params->ndisp < 2 || params->ndisp > width)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp: params.ndisp %d is not in 2..%d (image width)",
                       params->ndisp, width);
    if (!range_reaches_image(params->min_disp, params->ndisp, width))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: params.min_disp %d leaves no valid disparity in a %d-pixel-wide image",
                       params->min_disp, width);
    return PV_OK;
}

/* The declared ranges (stereo_params.c) are checked first; what remains is
 * the smoothing's taps, which depend on sigma. */
static pv_status check_costs(pv_context *ctx, const pv_bp_params *params)
{
    if (params->sigma > 0.0f) {
        int taps = pv_gaussian_taps_for_sigma(params->sigma);
        if (taps < 1 || taps > PV_BP_MAX_TAPS)
            return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp: params.sigma %g needs more than %d taps",
                           (double)params->sigma, PV_BP_MAX_TAPS);
    }
    return PV_OK;
}

static pv_status check_schedule(pv_context *ctx, const pv_bp_params *params, int width, int height)
{
    if (params->levels < 1 || params->levels > levels_that_fit(width, height))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: params.levels %d is not in 1..%d (a %dx%d image halves at most %d times)",
                       params->levels, levels_that_fit(width, height), width, height,
                       levels_that_fit(width, height) - 1);
    /* Smaller tiles than the automatic tiling makes cost far more in
     * padding and launches than they save (1x1 tiles on 64x64: minutes). */
    if ((params->tile_width > 0 && params->tile_width < PV_BP_MIN_TILE) ||
        (params->tile_height > 0 && params->tile_height < PV_BP_MIN_TILE))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: params.tile_width/tile_height %dx%d: each is 0 (automatic) or "
                       "at least %d px", params->tile_width, params->tile_height, PV_BP_MIN_TILE);
    if (pv_bp_memory_estimate(width, height, params->ndisp, 1) == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp: a %dx%d image with %d disparities overflows sizes",
                       width, height, params->ndisp);
    return PV_OK;
}

static pv_status check_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_bp_params *params, const pv_image *disparity)
{
    if (!ctx || !params)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp: %s is NULL", ctx ? "params" : "ctx");
    pv_status status = pv_decl_check(ctx, "stereo_bp", &pv_bp_decl, params);
    if (status == PV_OK)
        status = pv_stereo_check_images(ctx, "stereo_bp", left, right, disparity);
    if (status == PV_OK)
        status = check_range(ctx, params, left->width);
    if (status == PV_OK)
        status = check_costs(ctx, params);
    if (status == PV_OK)
        status = check_schedule(ctx, params, left->width, left->height);
    return status;
}

/* ---------------------------------------------------------------- partitions */

typedef struct memory_limits {
    size_t budget;      /* bytes one tile may use */
    size_t max_buffer;  /* bytes of the largest single buffer */
    size_t available;   /* bytes the context's memory holds (for messages) */
} memory_limits;

/* What the context's memory holds: the device's global memory on OpenCL,
 * the host's memory on the CPU and on an OpenCL device of CPU type (whose
 * buffers are host memory: its global memory as PoCL reports it ignores
 * `ulimit -v`, and PoCL aborts when such a buffer cannot be had); the
 * largest single buffer (OpenCL's CL_DEVICE_MAX_MEM_ALLOC_SIZE, within
 * int indexing). */
static void device_memory(pv_context *ctx, size_t *available, size_t *max_buffer)
{
    uint64_t host = pv_host_memory_available();
    *available = host > SIZE_MAX ? SIZE_MAX : (size_t)host;
    *max_buffer = SIZE_MAX;
#ifdef PV_HAVE_OPENCL
    if (ctx->backend == PV_BACKEND_OPENCL && ctx->device_index >= 0 && ctx->backend_state) {
        const pv_device_info *info = &ctx->device; /* described at creation */
        if (info->global_memory &&
            (info->type != PV_DEVICE_CPU || info->global_memory < (uint64_t)*available))
            *available = (size_t)info->global_memory;
        if (info->max_alloc)
            *max_buffer = (size_t)info->max_alloc;
        /* the kernels index buffers with int */
        if (*max_buffer > (size_t)INT_MAX * sizeof(float))
            *max_buffer = (size_t)INT_MAX * sizeof(float);
    }
#else
    (void)ctx;
#endif
    if (*available == 0)
        *available = 1; /* nothing left: every tile is refused */
}

/* Available memory (capped by PARVIS_MEMORY_LIMIT); one tile may use half
 * of it, leaving room for the images, the outputs and everything else. */
static pv_status default_limits(pv_context *ctx, memory_limits *limits)
{
    size_t *available = &limits->available;
    size_t cap;
    if (pv_config_memory_limit(&cap) != 0)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: PARVIS_MEMORY_LIMIT '%s' is not a byte count (e.g. 512M, 8G)",
                       pv_config_text(PV_CONFIG_MEMORY_LIMIT).text);
    device_memory(ctx, available, &limits->max_buffer);
    if (cap < *available)
        *available = cap;
    if (limits->max_buffer > *available)
        limits->max_buffer = *available;
    limits->budget = *available == SIZE_MAX ? SIZE_MAX : *available / 2;
    return PV_OK;
}

typedef struct tile_grid {
    int width, height;   /* image */
    int nx, ny;          /* tiles per row / column */
    int padding;
    int levels;
    int ndisp;
} tile_grid;

static int split_start(int count, int total, int i)
{
    return (int)((long long)total * i / count);
}

/* Region edges are moved outwards to multiples of the coarsest level's
 * block, so that every level's 2x2 blocks and the checkerboard colours
 * coincide with the whole image's: the tile then sees the same coarse
 * data costs as a whole-image run, and agrees with it far more often. */
static int region_start(int start, int padding, int block)
{
    int x = start - padding;
    return x <= 0 ? 0 : x / block * block;
}

static int region_end(int end, int padding, int block, int total)
{
    long long x = (long long)end + padding;
    x = (x + block - 1) / block * block;
    return x >= total ? total : (int)x;
}

static void tile_at(const tile_grid *g, int ix, int iy, pv_bp_tile *tile)
{
    int x0 = split_start(g->nx, g->width, ix), x1 = split_start(g->nx, g->width, ix + 1);
    int y0 = split_start(g->ny, g->height, iy), y1 = split_start(g->ny, g->height, iy + 1);
    const int block = 1 << (g->levels - 1);
    int rx0 = region_start(x0, g->padding, block), rx1 = region_end(x1, g->padding, block, g->width);
    int ry0 = region_start(y0, g->padding, block), ry1 = region_end(y1, g->padding, block, g->height);
    tile->x = rx0;
    tile->y = ry0;
    tile->width = rx1 - rx0;
    tile->height = ry1 - ry0;
    tile->out_x = x0;
    tile->out_y = y0;
    tile->out_width = x1 - x0;
    tile->out_height = y1 - y0;
    int fit = levels_that_fit(tile->width, tile->height);
    tile->levels = g->levels < fit ? g->levels : fit;
}

static int tile_fits(const pv_bp_tile *tile, int ndisp, const memory_limits *limits)
{
    size_t bytes = pv_bp_memory_estimate(tile->width, tile->height, ndisp, tile->levels);
    size_t largest = largest_buffer(tile->width, tile->height, ndisp);
    return bytes && largest && bytes <= limits->budget && largest <= limits->max_buffer;
}

static int grid_fits(const tile_grid *g, const memory_limits *limits)
{
    for (int iy = 0; iy < g->ny; iy++)
        for (int ix = 0; ix < g->nx; ix++) {
            pv_bp_tile tile;
            tile_at(g, ix, iy, &tile);
            if (!tile_fits(&tile, g->ndisp, limits))
                return 0;
        }
    return 1;
}

static int tile_side(int total, int count)
{
    return (total + count - 1) / count;
}

/* The smallest tiles do not fit: name what the smallest tile needs, the
 * budget it was held to and where that budget came from. */
static pv_status refuse_memory(pv_context *ctx, const tile_grid *g, const memory_limits *limits,
                               size_t requested_budget)
{
    pv_bp_tile tile;
    tile_at(g, 0, 0, &tile);
    size_t need = pv_bp_memory_estimate(tile.width, tile.height, g->ndisp, tile.levels);
    size_t whole = pv_bp_memory_estimate(g->width, g->height, g->ndisp, g->levels);
    char source[160];
    if (requested_budget > 0)
        snprintf(source, sizeof source, "params.memory_budget %zu bytes%s", requested_budget,
                 requested_budget > limits->available ? ", capped at the memory available" : "");
    else
        snprintf(source, sizeof source, "half of the %zu bytes available%s", limits->available,
                 pv_config_get(PV_CONFIG_MEMORY_LIMIT, NULL, 0) ? " under PARVIS_MEMORY_LIMIT" : "");
    return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                   "stereo_bp: not enough memory: the call needs %zu bytes for even the smallest "
                   "%dx%d tile (%d px padding, %d disparities; %zu bytes for the whole %dx%d image), "
                   "but the budget per tile is %zu bytes (%s) and the largest buffer %zu bytes; "
                   "lower ndisp or tile_padding, or raise the budget",
                   need, tile.width, tile.height, g->padding, g->ndisp, whole, g->width, g->height,
                   limits->budget, source, limits->max_buffer);
}

/* Split the longer tile side until a tile fits the limits. */
static pv_status fit_grid(pv_context *ctx, tile_grid *g, const memory_limits *limits,
                          size_t requested_budget)
{
    while (!grid_fits(g, limits)) {
        int tw = tile_side(g->width, g->nx), th = tile_side(g->height, g->ny);
        if (tw >= th && tw / 2 >= PV_BP_MIN_TILE)
            g->nx++;
        else if (th / 2 >= PV_BP_MIN_TILE)
            g->ny++;
        else if (tw / 2 >= PV_BP_MIN_TILE)
            g->nx++;
        else
            return refuse_memory(ctx, g, limits, requested_budget);
    }
    return PV_OK;
}

static pv_status plan_tiles(pv_context *ctx, const pv_image *left, const pv_bp_params *params,
                            const memory_limits *device_limits, pv_bp_tile **tiles, int *count)
{
    tile_grid g = {left->width, left->height, 1, 1, params->tile_padding, params->levels,
                   params->ndisp};
    if (params->tile_width > 0 && params->tile_width < left->width)
        g.nx = tile_side(left->width, params->tile_width);
    if (params->tile_height > 0 && params->tile_height < left->height)
        g.ny = tile_side(left->height, params->tile_height);
    memory_limits limits = *device_limits;
    if (params->memory_budget > 0)
        limits.budget = params->memory_budget < limits.available ? params->memory_budget
                                                                 : limits.available;
    pv_status status = fit_grid(ctx, &g, &limits, params->memory_budget);
    if (status != PV_OK)
        return status;
    *tiles = calloc((size_t)g.nx * (size_t)g.ny, sizeof **tiles);
    if (!*tiles)
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_bp: no memory for %dx%d tiles", g.nx, g.ny);
    for (int iy = 0; iy < g.ny; iy++)
        for (int ix = 0; ix < g.nx; ix++)
            tile_at(&g, ix, iy, &(*tiles)[iy * g.nx + ix]);
    *count = g.nx * g.ny;
    if (*count > 1)
        pv_log(ctx, "stereo_bp: %dx%d tiles of about %dx%d px, %d px padding", g.nx, g.ny,
               tile_side(g.width, g.nx), tile_side(g.height, g.ny), g.padding);
    return PV_OK;
}

pv_status pv_bp_memory_plan(pv_context *ctx, int width, int height, const pv_bp_params *params,
                            pv_bp_memory_info *info)
{
    if (!ctx || !params || !info)
        return pv_fail(ctx, PV_ERR_INVALID, "bp_memory_plan: NULL argument");
    if (width < 1 || height < 1)
        return pv_fail(ctx, PV_ERR_INVALID, "bp_memory_plan: size %dx%d", width, height);
    pv_status status = check_range(ctx, params, width);
    if (status == PV_OK)
        status = check_schedule(ctx, params, width, height);
    memory_limits limits;
    if (status == PV_OK)
        status = default_limits(ctx, &limits);
    if (status != PV_OK)
        return status;
    pv_image shape = {.width = width, .height = height, .stride = width, .type = PV_PIXEL_U8};
    pv_bp_tile *tiles = NULL;
    int count = 0;
    pv_bp_memory_info out;
    memset(&out, 0, sizeof out);
    out.whole_bytes = pv_bp_memory_estimate(width, height, params->ndisp, params->levels);
    out.available_bytes = limits.available;
    out.budget_bytes = params->memory_budget > 0 && params->memory_budget < limits.available
                           ? params->memory_budget : limits.budget;
    status = plan_tiles(ctx, &shape, params, &limits, &tiles, &count);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < count; i++) {
        size_t bytes = pv_bp_memory_estimate(tiles[i].width, tiles[i].height, params->ndisp,
                                             tiles[i].levels);
        if (bytes > out.tile_bytes)
            out.tile_bytes = bytes;
        out.tiles_x += tiles[i].y == tiles[0].y;
    }
    out.tiles_y = count / out.tiles_x;
    free(tiles);
    *info = out;
    return PV_OK;
}

/* -------------------------------------------------------------- cross-check */

static pv_status cpu_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const void *job, pv_image *ref)
{
    return pv_cpu_backend.bp->run(ctx, left, right, job, ref);
}

static pv_status crosscheck_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                               const pv_bp_job *job, const pv_image *disparity)
{
    return pv_disparity_crosscheck(ctx, "stereo_bp", left, right, cpu_bp, job, disparity,
                                   PV_TOL_BP_DIFFERING_SHARE);
}

/* ------------------------------------------------------------------ running */

static pv_status make_weights(pv_context *ctx, float sigma, float **weights, int *radius)
{
    *weights = NULL;
    *radius = 0;
    if (sigma == 0.0f)
        return PV_OK;
    int taps = pv_gaussian_taps_for_sigma(sigma);
    *weights = malloc((size_t)taps * sizeof **weights);
    if (!*weights)
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_bp: no memory for %d smoothing taps", taps);
    pv_gaussian_weights(sigma, taps, *weights);
    *radius = taps / 2;
    return PV_OK;
}

static pv_bp_job make_job(const pv_bp_params *params, const float *weights, int radius,
                          const pv_bp_tile *tiles, int count)
{
    return (pv_bp_job){.min_disp = params->min_disp, .ndisp = params->ndisp,
                       .iterations = params->iterations, .lambda = params->lambda,
                       .data_max = params->data_max, .disc_max = params->disc_max,
                       .inv_ndisp = 1.0f / (float)params->ndisp,
                       .half_messages = params->message_precision == PV_BP_MESSAGES_F16,
                       .cooperative = params->message_update == PV_BP_UPDATE_COOPERATIVE,
                       .weights = weights, .radius = radius, .tiles = tiles,
                       .tile_count = count};
}

/* Tiles and smoothing taps for params, within limits. */
static pv_status make_tiling(pv_context *ctx, const memory_limits *limits, const pv_image *left,
                             const pv_bp_params *params, pv_bp_tiling *tiling)
{
    memset(tiling, 0, sizeof *tiling);
    tiling->params = *params;
    pv_status status = plan_tiles(ctx, left, params, limits, &tiling->tiles, &tiling->tile_count);
    if (status == PV_OK)
        status = make_weights(ctx, params->sigma, &tiling->weights, &tiling->radius);
    if (status != PV_OK)
        pv_bp_tiling_free(tiling);
    return status;
}

void pv_bp_tiling_free(pv_bp_tiling *tiling)
{
    if (!tiling)
        return;
    free(tiling->weights);
    free(tiling->tiles);
    memset(tiling, 0, sizeof *tiling);
}

static pv_bp_job tiling_job(const pv_bp_tiling *tiling, int first, int count)
{
    return make_job(&tiling->params, tiling->weights, tiling->radius, tiling->tiles + first, count);
}

static pv_status check_backend(pv_context *ctx)
{
    if (!ctx->ops->bp->run)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "stereo_bp: the %s backend lacks belief propagation",
                       ctx->ops->name);
    return PV_OK;
}

static pv_status run_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_bp_params *params, pv_image *disparity)
{
    pv_status status = check_backend(ctx);
    if (status != PV_OK)
        return status;
    memory_limits limits;
    status = default_limits(ctx, &limits);
    if (status != PV_OK)
        return status;
    pv_bp_tiling tiling;
    status = make_tiling(ctx, &limits, left, params, &tiling);
    if (status != PV_OK)
        return status;
    pv_bp_job job = tiling_job(&tiling, 0, tiling.tile_count);
    status = ctx->ops->bp->run(ctx, left, right, &job, disparity);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_bp(ctx, left, right, &job, disparity);
    pv_bp_tiling_free(&tiling);
    return status;
}

pv_status pv_stereo_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                       const pv_bp_params *params, pv_image *disparity)
{
    pv_status status = check_bp(ctx, left, right, params, disparity);
    if (status != PV_OK)
        return status;
    pv_tune_autoload(ctx);
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = run_bp(ctx, left, right, params, disparity);
    pv_call_end(ctx);
    return status;
}

/* ------------------------------------------------------------ device groups */

/* The tightest limits of the contexts: a tile must fit every device. */
static pv_status group_limits(pv_context *const *contexts, int count, memory_limits *limits)
{
    limits->budget = limits->max_buffer = limits->available = SIZE_MAX;
    for (int i = 0; i < count; i++) {
        memory_limits own;
        pv_status status = default_limits(contexts[i], &own);
        if (status != PV_OK)
            return status;
        if (own.budget < limits->budget)
            limits->budget = own.budget;
        if (own.max_buffer < limits->max_buffer)
            limits->max_buffer = own.max_buffer;
        if (own.available < limits->available)
            limits->available = own.available;
    }
    return PV_OK;
}

pv_status pv_bp_tiling_plan(pv_context *const *contexts, int count, const pv_image *left,
                            const pv_image *right, const pv_bp_params *params,
                            const pv_image *disparity, int min_tiles, pv_bp_tiling *tiling)
{
    pv_status status = check_bp(contexts[0], left, right, params, disparity);
    for (int i = 0; status == PV_OK && i < count; i++)
        status = check_backend(contexts[i]);
    if (status != PV_OK)
        return status;
    pv_bp_params split = *params;
    /* Bands of rows keep each tile's memory contiguous in the images. */
    if (split.tile_width == 0 && split.tile_height == 0 && min_tiles > 1)
        split.tile_height = tile_side(left->height, min_tiles);
    memory_limits limits;
    status = group_limits(contexts, count, &limits);
    if (status != PV_OK)
        return status;
    return make_tiling(contexts[0], &limits, left, &split, tiling);
}

pv_status pv_bp_run_tiles(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_bp_tiling *tiling, int first, int count, pv_image *disparity)
{
    pv_tune_autoload(ctx);
    pv_status status = pv_call_begin(ctx);
    pv_bp_job job = tiling_job(tiling, first, count);
    if (status == PV_OK)
        status = ctx->ops->bp->run(ctx, left, right, &job, disparity);
    pv_call_end(ctx);
    return status;
}

pv_status pv_bp_crosscheck_tiling(pv_context *ctx, const pv_image *left, const pv_image *right,
                                  const pv_bp_tiling *tiling, const pv_image *disparity)
{
    if (!pv_crosscheck_wanted(ctx))
        return PV_OK;
    pv_bp_job job = tiling_job(tiling, 0, tiling->tile_count);
    return crosscheck_bp(ctx, left, right, &job, disparity);
}
