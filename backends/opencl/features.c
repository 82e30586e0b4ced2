/* OpenCL SIFT: host side of kernels/features.cl.
 *
 * The plan keeps the whole scale space on the device (DoG, Gaussian and
 * gradient pyramids as buffers with per-octave offsets), the candidate and
 * keypoint lists, the descriptor buffer and a pinned host staging buffer,
 * all sized geometrically and kept between calls.  A detection is enqueued
 * in one go: the input (packed into the stage, DMA'd without a wait), the
 * first base, per octave one merged row pass and one merged column pass
 * (the downsampling of the previous octave fused into both; the blur radii
 * are constants of the plan's program), then extrema counted per row (the
 * gradient pyramid filled on the way) / scanned / written in key order,
 * refinement and orientations by one work group per candidate, keypoints
 * counted / scanned / scattered in key order in the caller's record
 * layout, and descriptors.  Launches are sized by the capacities and exit
 * past the device-side counts, so the host waits once, for the two totals,
 * and then reads the sorted result back in one go (through the stage when
 * small) into the arrays it returns.  When a list was too short the plan
 * grows and the detection runs again (only on a plan's first calls). */
#define _DEFAULT_SOURCE /* madvise */
#include "opencl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static const pv_cl_param_default features_defaults[] = {
    {"SIFT_WG_X", 32},         /* image passes: work-group width ...           */
    {"SIFT_WG_Y", 8},          /* ... and height                               */
    {"SIFT_ROW_STEPS", 4},     /* merged row pass: outputs per item along x     */
    {"SIFT_COL_STEPS", 4},     /* merged column pass: outputs per item along y  */
    {"SIFT_EXT_WG", 64},       /* extrema: items per row group                  */
    {"SIFT_EXT_RUN", 16},      /* extrema: consecutive pixels per item (<= 32)  */
    {"SIFT_SCAN_WG", 256},     /* scan: items of the one scan group             */
    {"SIFT_KP_WG", 64},        /* keypoint counts + scatter: items per group    */
    {"SIFT_ORI_WG", 32},       /* orientation: items per candidate             */
    {"SIFT_ORI_GROUPS", 64},   /* orientation: groups per compute unit         */
    {"SIFT_DESC_SPLIT", 8},    /* descriptor: items per cell (x 16 cells)       */
    {"SIFT_MATCH_WG", 64},     /* matching: queries per group                   */
    {"SIFT_MATCH_TILE", 32},   /* matching: train descriptors per local tile    */
};

const pv_cl_param_family pv_cl_params_features = {
    "features", features_defaults, sizeof features_defaults / sizeof features_defaults[0]};

#define MAX_ORIENTATIONS 4
#define DESC_SIZE PV_SIFT_DESCRIPTOR_SIZE
#define MAX_ATTEMPTS 4

/* The scatter kernel writes pv_sift_keypoint records word by word. */
_Static_assert(sizeof(pv_sift_keypoint) == 7 * sizeof(float), "pv_sift_keypoint is 7 words");

/* Mirrors of the kernels' structs (same member order and alignment). */
typedef struct octave_info {
    cl_int w, h;
    cl_ulong dog_offset, gauss_offset;
} octave_info;

typedef struct sift_settings {
    cl_float peak_thresh, edge_thresh, sigma0, ori_window, ori_peak, magnif;
    cl_int levels;
} sift_settings;

/* The plan's kernels, looked up once (with the plan's launch parameters). */
enum {
    K_PREPARE_U8, K_PREPARE_F32, K_ROWS, K_COLS, K_EXTREMA, K_SCAN, K_ORIENT, K_BLOCK_COUNTS,
    K_SCATTER, K_DESCRIPTORS, K_COUNT
};

static const char *const kernel_names[K_COUNT] = {
    "sift_prepare_u8", "sift_prepare_f32", "sift_blur_rows", "sift_blur_cols", "sift_extrema",
    "sift_scan", "sift_orient", "sift_block_counts", "sift_scatter", "sift_descriptors",
};

/* Launch parameters, read once when the plan is made, so the shapes always
 * match the kernels built with them. */
typedef struct launch_shape {
    int wg_x, wg_y, row_steps, col_steps, ext_wg, ext_run, scan_wg, kp_wg, desc_split;
    int ori_wg, ori_groups;
} launch_shape;

typedef struct cl_sift_plan {
    pv_sift_geometry g;
    launch_shape shape;
    cl_kernel kernels[K_COUNT];
    int max_radius;            /* over the levels */
    cl_mem weights;            /* level taps, then base taps */
    cl_mem octave_table;       /* octave_info per octave */
    octave_info octaves[PV_SIFT_MAX_OCTAVES];
    cl_uint row_start[PV_SIFT_MAX_OCTAVES + 1]; /* first row group of each octave */
    cl_mem row_table;          /* row_start on the device */
    cl_mem row_counts;         /* per row group: extrema, then their offsets */
    cl_mem ext_masks;          /* per row group: the extrema bit masks of pass 0 */
    cl_uint mask_pitch;        /* masks per row group */
    cl_mem input;              /* the caller's image, dense */
    cl_mem base;               /* the first octave's base level */
    cl_mem rows;               /* row-pass results, levels + 2 planes */
    cl_mem gauss, dog;         /* pyramids */
    cl_mem grad;               /* gradient (modulus, angle) of every gauss sample */
    cl_mem counters;           /* [0] candidates, [1] keypoints (totals of the scans) */
    /* Candidates, in key order, and per candidate its keypoints. */
    cl_mem candidates, cand_geom, cand_scale, cand_angles, cand_count, block_sums;
    cl_uint candidate_capacity;
    /* Keypoints, in key order: records (pv_sift_keypoint), keys, geometry
     * in octave pixels for the descriptors, descriptors. */
    cl_mem records, kp_key, kp_geom, descriptors;
    cl_uint keypoint_capacity;
    cl_uint last_count;        /* keypoints of the previous call */
    /* Pinned, mapped host memory that small inputs and results pass
     * through (see "pinned stage"). */
    cl_mem stage;
    void *stage_host;
    size_t stage_bytes;
} cl_sift_plan;

typedef struct kernel_arg {
    size_t size;
    const void *value; /* NULL with a size: a __local buffer */
} kernel_arg;

static int param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "features", name, 1);
}

static size_t round_up_div(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

/* The blur radii and tap offsets as constants of the plan's program (the
 * kernels unroll their tap loops with them); unused levels get 0. */
static pv_status blur_defines(pv_context *ctx, const pv_sift_geometry *g, char *buf, size_t size)
{
    const int nlevels = g->params.levels + 2;
    size_t used = strlen(buf);
    int n = snprintf(buf + used, size - used, " -DSIFT_NLEVELS=%d -DSIFT_RB=%d -DSIFT_OB=%d",
                     nlevels, g->base_radius, g->level_taps);
    for (int l = 1; l <= PV_SIFT_MAX_LEVELS + 2 && n >= 0 && (size_t)n < size - used; l++) {
        used += (size_t)n;
        n = snprintf(buf + used, size - used, " -DSIFT_R%d=%d -DSIFT_O%d=%d", l,
                     l <= nlevels ? g->level_radius[l] : 0, l,
                     l <= nlevels ? g->level_offset[l] : 0);
    }
    if (n < 0 || (size_t)n >= size - used)
        return pv_fail(ctx, PV_ERR_INVALID, "sift: the blur defines overflow");
    return PV_OK;
}

/* The program for the context's launch parameters, and for a plan's blur
 * constants when g is given (matching has no plan: g NULL). */
static pv_status features_kernel(pv_context *ctx, const pv_sift_geometry *g, const char *name,
                                 cl_kernel *kernel)
{
    char options[1024] = "";
    pv_status status = pv_cl_param_defines(ctx, "features", options, sizeof options);
    if (status == PV_OK && g)
        status = blur_defines(ctx, g, options, sizeof options);
    return status == PV_OK ? pv_cl_kernel(ctx, "features", options, name, kernel) : status;
}

static pv_status plan_kernel(pv_context *ctx, const cl_sift_plan *plan, const char *name,
                             cl_kernel *kernel)
{
    return features_kernel(ctx, &plan->g, name, kernel);
}

static pv_status set_args(pv_context *ctx, cl_kernel kernel, const kernel_arg *args, int count)
{
    pv_status status = PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++)
        status = pv_cl_arg(ctx, kernel, (cl_uint)i, args[i].size, args[i].value);
    return status;
}

/* Matching (no plan): the kernel for the context's current parameters. */
static pv_status launch(pv_context *ctx, const char *name, const kernel_arg *args, int count,
                        cl_uint dims, const size_t *global, const size_t *local)
{
    cl_kernel kernel;
    pv_status status = features_kernel(ctx, NULL, name, &kernel);
    if (status == PV_OK)
        status = set_args(ctx, kernel, args, count);
    return status == PV_OK ? pv_cl_launch(ctx, kernel, dims, global, local) : status;
}

/* Detection: the plan's kernel `which`. */
static pv_status plan_launch(pv_context *ctx, const cl_sift_plan *plan, int which,
                             const kernel_arg *args, int count, cl_uint dims,
                             const size_t *global, const size_t *local)
{
    pv_status status = set_args(ctx, plan->kernels[which], args, count);
    return status == PV_OK ? pv_cl_launch(ctx, plan->kernels[which], dims, global, local) : status;
}

static pv_status finish(pv_context *ctx, pv_status status)
{
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}

/* ------------------------------------------------------------------ plan */

static void release_candidate_buffers(cl_sift_plan *plan)
{
    cl_mem *buffers[] = {&plan->candidates, &plan->cand_geom, &plan->cand_scale,
                         &plan->cand_angles, &plan->cand_count, &plan->block_sums};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        pv_cl_release(buffers[i]);
    plan->candidate_capacity = 0;
}

static void release_keypoint_buffers(cl_sift_plan *plan)
{
    pv_cl_release(&plan->records);
    pv_cl_release(&plan->kp_key);
    pv_cl_release(&plan->kp_geom);
    pv_cl_release(&plan->descriptors);
    plan->keypoint_capacity = 0;
}

static void release_stage(pv_context *ctx, cl_sift_plan *plan)
{
    if (plan->stage_host)
        clEnqueueUnmapMemObject(pv_cl_queue(ctx), plan->stage, plan->stage_host, 0, NULL, NULL);
    pv_cl_release(&plan->stage);
    plan->stage_host = NULL;
    plan->stage_bytes = 0;
}

static void pv_cl_sift_destroy(pv_context *ctx, void *opaque)
{
    cl_sift_plan *plan = opaque;
    if (!plan)
        return;
    release_stage(ctx, plan);
    cl_mem *buffers[] = {&plan->weights,
                         &plan->octave_table, &plan->row_table, &plan->row_counts,
                         &plan->ext_masks,
                         &plan->input, &plan->base, &plan->rows, &plan->gauss, &plan->dog,
                         &plan->grad,
                         &plan->counters};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        pv_cl_release(buffers[i]);
    release_candidate_buffers(plan);
    release_keypoint_buffers(plan);
    free(plan);
}

static size_t plane_of(const pv_sift_geometry *g, int o)
{
    return (size_t)g->octave_width[o] * (size_t)g->octave_height[o];
}

/* Offsets of every octave in the pyramids (totals in floats) and the first
 * extrema row group of each octave. */
static void layout_octaves(cl_sift_plan *plan, size_t *dog_total, size_t *gauss_total)
{
    const pv_sift_geometry *g = &plan->g;
    const int levels = g->params.levels;
    size_t dog = 0, gauss = 0;
    cl_uint rows = 0;
    for (int o = 0; o < g->octaves; o++) {
        plan->octaves[o] = (octave_info){g->octave_width[o], g->octave_height[o], dog, gauss};
        plan->row_start[o] = rows;
        dog += plane_of(g, o) * (size_t)(levels + 2);
        gauss += plane_of(g, o) * (size_t)levels;
        rows += (cl_uint)(levels * g->octave_height[o]);
    }
    plan->row_start[g->octaves] = rows;
    *dog_total = dog;
    *gauss_total = gauss;
}

/* Weights come from the caller's geometry: the plan keeps none on the host. */
static pv_status upload_tables(pv_context *ctx, cl_sift_plan *plan, const pv_sift_geometry *g)
{
    const int nlevels = g->params.levels + 2, base_taps = 2 * g->base_radius + 1;
    for (int l = 1; l <= nlevels; l++)
        if (g->level_radius[l] > plan->max_radius)
            plan->max_radius = g->level_radius[l];
    size_t weight_bytes = (size_t)(g->level_taps + base_taps) * sizeof(float);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, weight_bytes, &plan->weights);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->weights, 0, (size_t)g->level_taps * sizeof(float),
                             g->level_weights);
    if (status == PV_OK && g->base_radius > 0)
        status = pv_cl_write(ctx, plan->weights, (size_t)g->level_taps * sizeof(float),
                             (size_t)base_taps * sizeof(float), g->base_weights);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, sizeof plan->octaves, &plan->octave_table);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->octave_table, 0, sizeof plan->octaves, plan->octaves);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, sizeof plan->row_start, &plan->row_table);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->row_table, 0, sizeof plan->row_start, plan->row_start);
    return status;
}

static pv_status bytes_of(pv_context *ctx, size_t floats, size_t *bytes)
{
    if (!pv_size_mul(floats, sizeof(float), bytes))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: the scale space size overflows");
    return PV_OK;
}

/* One bit per pixel of every DoG row tested for extrema (as one mask per
 * item and span of the widest octave). */
static pv_status alloc_masks(pv_context *ctx, cl_sift_plan *plan)
{
    const launch_shape *s = &plan->shape;
    const size_t span = (size_t)s->ext_wg * (size_t)s->ext_run;
    if (s->ext_wg < 1 || s->ext_run < 1 || s->ext_run > 32)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "sift: SIFT_EXT_WG %d / SIFT_EXT_RUN %d out of range", s->ext_wg,
                       s->ext_run);
    plan->mask_pitch = (cl_uint)(round_up_div((size_t)plan->g.octave_width[0], span) *
                                 (size_t)s->ext_wg);
    size_t masks, bytes;
    if (!pv_size_mul(plan->mask_pitch, plan->row_start[plan->g.octaves], &masks) ||
        !pv_size_mul(masks, sizeof(cl_uint), &bytes))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: the extrema masks overflow");
    return pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &plan->ext_masks);
}

static pv_status alloc_pyramids(pv_context *ctx, cl_sift_plan *plan)
{
    const pv_sift_geometry *g = &plan->g;
    size_t dog_floats, gauss_floats, plane0 = plane_of(g, 0), bytes;
    layout_octaves(plan, &dog_floats, &gauss_floats);
    pv_status status = bytes_of(ctx, plane0 * (size_t)(g->params.levels + 2), &bytes);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &plan->rows);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, plane0 * sizeof(float), &plan->base);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY,
                              (size_t)g->width * (size_t)g->height * sizeof(float), &plan->input);
    if (status == PV_OK)
        status = bytes_of(ctx, dog_floats, &bytes);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &plan->dog);
    if (status == PV_OK)
        status = bytes_of(ctx, gauss_floats, &bytes);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &plan->gauss);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, 2 * bytes, &plan->grad);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), &plan->counters);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE,
                              (size_t)plan->row_start[g->octaves] * sizeof(cl_uint),
                              &plan->row_counts);
    if (status == PV_OK)
        status = alloc_masks(ctx, plan);
    return status;
}

/* Local memory of the merged passes must fit the device. */
static pv_status check_local_memory(pv_context *ctx, const cl_sift_plan *plan)
{
    const launch_shape *s = &plan->shape;
    const size_t wg_x = (size_t)s->wg_x, wg_y = (size_t)s->wg_y;
    const size_t r = (size_t)(plan->max_radius > plan->g.base_radius ? plan->max_radius
                                                                     : plan->g.base_radius);
    size_t rows = wg_y * (wg_x * (size_t)s->row_steps + 2 * r) * sizeof(float);
    size_t cols = wg_x * (wg_y * (size_t)s->col_steps + 2 * r) * sizeof(float);
    size_t need = rows > cols ? rows : cols;
    if (need > pv_cl_device_info(ctx)->local_memory)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "sift: blur radius %zu needs %zu bytes of local memory, the device has %llu",
                       r, need, (unsigned long long)pv_cl_device_info(ctx)->local_memory);
    if (s->ext_run < 1 || s->ext_run > 32)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "sift: SIFT_EXT_RUN %d is not in 1..32",
                       s->ext_run);
    return PV_OK;
}

static pv_status load_shape_and_kernels(pv_context *ctx, cl_sift_plan *plan)
{
    static const char *const names[] = {"SIFT_WG_X", "SIFT_WG_Y", "SIFT_ROW_STEPS",
                                        "SIFT_COL_STEPS", "SIFT_EXT_WG", "SIFT_EXT_RUN",
                                        "SIFT_SCAN_WG", "SIFT_KP_WG", "SIFT_DESC_SPLIT",
                                        "SIFT_ORI_WG", "SIFT_ORI_GROUPS"};
    int *fields[] = {&plan->shape.wg_x, &plan->shape.wg_y, &plan->shape.row_steps,
                     &plan->shape.col_steps, &plan->shape.ext_wg, &plan->shape.ext_run,
                     &plan->shape.scan_wg, &plan->shape.kp_wg, &plan->shape.desc_split,
                     &plan->shape.ori_wg, &plan->shape.ori_groups};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        *fields[i] = pv_cl_param(ctx, "features", names[i], 1);
    pv_status status = PV_OK;
    for (int k = 0; k < K_COUNT && status == PV_OK; k++)
        status = plan_kernel(ctx, plan, kernel_names[k], &plan->kernels[k]);
    return status;
}

static pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out)
{
    cl_sift_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: no memory for the OpenCL plan");
    plan->g = *geometry;
    plan->g.base_weights = plan->g.level_weights = NULL; /* only on the device */
    pv_status status = load_shape_and_kernels(ctx, plan);
    if (status == PV_OK)
        status = alloc_pyramids(ctx, plan);
    if (status == PV_OK)
        status = upload_tables(ctx, plan, geometry);
    if (status == PV_OK)
        status = check_local_memory(ctx, plan);
    status = finish(ctx, status);
    if (status != PV_OK) {
        pv_cl_sift_destroy(ctx, plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

/* --------------------------------------------------------- pinned stage
 * Pinned, mapped host memory of the plan: small inputs are packed into it
 * and DMA'd without a wait, small results are DMA'd into it in one go.
 * Up to STAGE_MAX bytes; larger transfers go through pv_cl_write/read,
 * whose pinned chunks overlap the DMA with the host copies. */
#define STAGE_MAX ((size_t)16 << 20)
#define RESULT_BYTES (sizeof(pv_sift_keypoint) + sizeof(uint64_t) + DESC_SIZE * sizeof(float))

static pv_status ensure_stage(pv_context *ctx, cl_sift_plan *plan, size_t bytes)
{
    if (bytes <= plan->stage_bytes)
        return PV_OK;
    release_stage(ctx, plan);
    size_t want = (size_t)plan->keypoint_capacity * RESULT_BYTES;
    want = want < STAGE_MAX ? want : STAGE_MAX;
    want = want > bytes ? want : bytes;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, want,
                                    &plan->stage);
    if (status != PV_OK)
        return status;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        plan->stage_host = clEnqueueMapBuffer(pv_cl_queue(ctx), plan->stage, CL_TRUE,
                                              CL_MAP_READ | CL_MAP_WRITE, 0, want, 0, NULL, NULL,
                                              &err);
    status = pv_cl_check(ctx, err, "clEnqueueMapBuffer(sift stage)");
    if (status == PV_OK)
        plan->stage_bytes = want;
    else
        release_stage(ctx, plan);
    return status;
}

/* ------------------------------------------------------------ scale space */

/* The caller's image into plan->input: through the stage (a packed copy
 * on the host, then a DMA the host does not wait for) when it fits. */
static pv_status upload_image(pv_context *ctx, cl_sift_plan *plan, const pv_image *image)
{
    const size_t pixel = pv_pixel_size(image->type), row = (size_t)image->width * pixel;
    const size_t bytes = row * (size_t)image->height;
    if (bytes > STAGE_MAX)
        return pv_cl_write_image(ctx, plan->input, image);
    pv_status status = ensure_stage(ctx, plan, bytes);
    if (status != PV_OK)
        return status;
    const size_t pitch = (size_t)image->stride * pixel;
    if (pitch == row)
        pv_cl_copy_parallel(plan->stage_host, image->data, bytes);
    else
        for (int y = 0; y < image->height; y++)
            memcpy((char *)plan->stage_host + (size_t)y * row,
                   (const char *)image->data + (size_t)y * pitch, row);
    return pv_cl_write_async(ctx, plan->input, 0, bytes, plan->stage_host);
}

static pv_status prepare_input(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                               cl_mem target)
{
    const pv_sift_geometry *g = &plan->g;
    pv_status status = upload_image(ctx, plan, image);
    if (status != PV_OK)
        return status;
    cl_int in_w = g->width, in_h = g->height, upsample = g->params.first_octave < 0;
    cl_float scale = 1.0f / 255.0f;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->input}, {sizeof(cl_mem), &target}, {sizeof in_w, &in_w},
        {sizeof in_h, &in_h}, {sizeof upsample, &upsample}, {sizeof scale, &scale},
    };
    size_t local[2] = {(size_t)plan->shape.wg_x, (size_t)plan->shape.wg_y};
    size_t global[2] = {(size_t)g->octave_width[0], (size_t)g->octave_height[0]};
    return plan_launch(ctx, plan, image->type == PV_PIXEL_U8 ? K_PREPARE_U8 : K_PREPARE_F32,
                       args, 6, 2, global, local);
}

/* Where an octave's base samples come from: (x, y) is
 * buffer[offset + step y pitch + step x]. */
typedef struct base_source {
    cl_mem buffer;
    cl_ulong offset;
    cl_int pitch, step;
} base_source;

/* The base of octave o: the first octave's blurred base, else every second
 * sample of octave o-1's level S (read in place, no copy). */
static base_source base_of(const cl_sift_plan *plan, int o)
{
    if (o == 0)
        return (base_source){plan->base, 0, plan->g.octave_width[0], 1};
    const pv_sift_geometry *g = &plan->g;
    cl_ulong offset = plan->octaves[o - 1].gauss_offset +
                      (cl_ulong)(g->params.levels - 1) * plane_of(g, o - 1);
    return (base_source){plan->gauss, offset, g->octave_width[o - 1], 2};
}

/* Row pass of src into plan->rows: every level's blur, or with `base` the
 * first octave's base blur. */
static pv_status blur_rows(pv_context *ctx, cl_sift_plan *plan, const base_source *src,
                           cl_int base, cl_int max_radius, int o)
{
    const int wg_x = plan->shape.wg_x, wg_y = plan->shape.wg_y;
    const int tile = wg_x * plan->shape.row_steps;
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    cl_ulong dst_offset = 0;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &src->buffer}, {sizeof src->offset, &src->offset},
        {sizeof src->pitch, &src->pitch}, {sizeof src->step, &src->step},
        {sizeof(cl_mem), &plan->rows}, {sizeof dst_offset, &dst_offset},
        {sizeof(cl_mem), &plan->weights}, {sizeof base, &base},
        {sizeof max_radius, &max_radius}, {sizeof w, &w}, {sizeof h, &h},
        {(size_t)wg_y * ((size_t)tile + 2 * (size_t)max_radius) * sizeof(float), NULL},
    };
    size_t local[2] = {(size_t)wg_x, (size_t)wg_y};
    size_t global[2] = {round_up_div((size_t)w, (size_t)tile) * (size_t)wg_x, (size_t)h};
    return plan_launch(ctx, plan, K_ROWS, args, 12, 2, global, local);
}

typedef struct cols_job {
    cl_mem gauss;
    cl_ulong gauss_offset;
    cl_mem dog;
    cl_ulong dog_offset;
    cl_int with_dog;
    cl_int stored, max_radius;
} cols_job;

static pv_status blur_cols(pv_context *ctx, cl_sift_plan *plan, const cols_job *job, int o,
                           const base_source *base)
{
    const int wg_x = plan->shape.wg_x, wg_y = plan->shape.wg_y;
    const int tile = wg_y * plan->shape.col_steps;
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->rows}, {sizeof(cl_mem), &base->buffer},
        {sizeof base->offset, &base->offset}, {sizeof base->pitch, &base->pitch},
        {sizeof base->step, &base->step},
        {sizeof(cl_mem), &job->gauss}, {sizeof job->gauss_offset, &job->gauss_offset},
        {sizeof(cl_mem), &job->dog},   {sizeof job->dog_offset, &job->dog_offset},
        {sizeof job->with_dog, &job->with_dog}, {sizeof(cl_mem), &plan->weights},
        {sizeof job->stored, &job->stored}, {sizeof job->max_radius, &job->max_radius},
        {sizeof w, &w}, {sizeof h, &h},
        {(size_t)wg_x * ((size_t)tile + 2 * (size_t)job->max_radius) * sizeof(float), NULL},
    };
    size_t local[2] = {(size_t)wg_x, (size_t)wg_y};
    size_t global[2] = {(size_t)w, round_up_div((size_t)h, (size_t)tile) * (size_t)wg_y};
    return plan_launch(ctx, plan, K_COLS, args, 16, 2, global, local);
}

/* The first octave's base: the prepared input in `base`, its row pass in
 * `rows`, the column pass back into `base` (no DoG; the kernel's base
 * argument is then unused and bound to `rows`). */
static pv_status build_first_base(pv_context *ctx, cl_sift_plan *plan, const pv_image *image)
{
    const pv_sift_geometry *g = &plan->g;
    pv_status status = prepare_input(ctx, plan, image, plan->base);
    if (status != PV_OK || g->base_radius == 0)
        return status;
    const base_source src = base_of(plan, 0), unused = {plan->rows, 0, 1, 1};
    status = blur_rows(ctx, plan, &src, 1, g->base_radius, 0);
    cols_job job = {plan->base, 0, plan->rows, 0, 0, 1, g->base_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, 0, &unused) : status;
}

static pv_status build_octave(pv_context *ctx, cl_sift_plan *plan, int o)
{
    const base_source base = base_of(plan, o);
    pv_status status = blur_rows(ctx, plan, &base, 0, plan->max_radius, o);
    cols_job job = {plan->gauss, plan->octaves[o].gauss_offset, plan->dog,
                    plan->octaves[o].dog_offset, 1, plan->g.params.levels, plan->max_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, o, &base) : status;
}

/* ------------------------------------------------- extrema and keypoints */

static pv_status extrema(pv_context *ctx, cl_sift_plan *plan, cl_int pass)
{
    cl_int octaves = plan->g.octaves, levels = plan->g.params.levels;
    cl_float threshold = 0.8f * plan->g.params.peak_thresh;
    cl_uint capacity = plan->candidate_capacity;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog}, {sizeof(cl_mem), &plan->octave_table},
        {sizeof octaves, &octaves}, {sizeof(cl_mem), &plan->row_table},
        {sizeof levels, &levels}, {sizeof threshold, &threshold}, {sizeof pass, &pass},
        {sizeof(cl_mem), &plan->row_counts}, {sizeof(cl_mem), &plan->counters},
        {sizeof(cl_mem), &plan->candidates}, {sizeof capacity, &capacity},
        {sizeof(cl_mem), &plan->ext_masks}, {sizeof plan->mask_pitch, &plan->mask_pitch},
        {sizeof(cl_mem), &plan->gauss}, {sizeof(cl_mem), &plan->grad},
    };
    size_t local = (size_t)plan->shape.ext_wg;
    size_t global = (size_t)plan->row_start[plan->g.octaves] * local;
    return plan_launch(ctx, plan, K_EXTREMA, args, 15, 1, &global, &local);
}

/* Exclusive scan of n counts in place; the sum into counters[which]. */
static pv_status scan(pv_context *ctx, cl_sift_plan *plan, cl_mem values, cl_uint n, int which)
{
    cl_uint offset = (cl_uint)which;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &values}, {sizeof n, &n}, {sizeof(cl_mem), &plan->counters},
        {sizeof offset, &offset},
    };
    size_t local = (size_t)plan->shape.scan_wg, global = local;
    return plan_launch(ctx, plan, K_SCAN, args, 4, 1, &global, &local);
}

static sift_settings settings_of(const pv_sift_params *p)
{
    sift_settings s = {p->peak_thresh, p->edge_thresh, p->sigma0, p->orientation_window,
                       p->orientation_peak, p->magnif, p->levels};
    return s;
}

static size_t keypoint_groups(const cl_sift_plan *plan)
{
    return round_up_div(plan->candidate_capacity, (size_t)plan->shape.kp_wg);
}

/* Refinement and orientations: a fixed number of groups (enough to fill
 * the device) walk the candidate list, whose length only the device knows. */
static pv_status orientations(pv_context *ctx, cl_sift_plan *plan)
{
    sift_settings set = settings_of(&plan->g.params);
    cl_uint capacity = plan->candidate_capacity;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog},         {sizeof(cl_mem), &plan->grad},
        {sizeof(cl_mem), &plan->octave_table}, {sizeof(cl_mem), &plan->candidates},
        {sizeof(cl_mem), &plan->counters},    {sizeof capacity, &capacity},
        {sizeof set, &set},                   {sizeof(cl_mem), &plan->cand_geom},
        {sizeof(cl_mem), &plan->cand_scale},  {sizeof(cl_mem), &plan->cand_angles},
        {sizeof(cl_mem), &plan->cand_count},
    };
    int units = pv_cl_device_info(ctx)->compute_units;
    size_t groups = (size_t)(units > 0 ? units : 16) * (size_t)plan->shape.ori_groups;
    if (groups > capacity)
        groups = capacity;
    size_t local = (size_t)plan->shape.ori_wg, global = groups * local;
    return plan_launch(ctx, plan, K_ORIENT, args, 11, 1, &global, &local);
}

static pv_status block_counts(pv_context *ctx, cl_sift_plan *plan)
{
    cl_uint capacity = plan->candidate_capacity;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->counters}, {sizeof capacity, &capacity},
        {sizeof(cl_mem), &plan->cand_count}, {sizeof(cl_mem), &plan->block_sums},
    };
    size_t local = (size_t)plan->shape.kp_wg, global = keypoint_groups(plan) * local;
    return plan_launch(ctx, plan, K_BLOCK_COUNTS, args, 4, 1, &global, &local);
}

static pv_status scatter(pv_context *ctx, cl_sift_plan *plan)
{
    cl_uint capacity = plan->candidate_capacity, kp_capacity = plan->keypoint_capacity;
    cl_int first = plan->g.params.first_octave;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->candidates}, {sizeof(cl_mem), &plan->counters},
        {sizeof capacity, &capacity},        {sizeof(cl_mem), &plan->cand_geom},
        {sizeof(cl_mem), &plan->cand_scale}, {sizeof(cl_mem), &plan->cand_angles},
        {sizeof(cl_mem), &plan->cand_count}, {sizeof(cl_mem), &plan->block_sums},
        {sizeof kp_capacity, &kp_capacity},  {sizeof first, &first},
        {sizeof(cl_mem), &plan->records},    {sizeof(cl_mem), &plan->kp_key},
        {sizeof(cl_mem), &plan->kp_geom},
    };
    size_t local = (size_t)plan->shape.kp_wg, global = keypoint_groups(plan) * local;
    return plan_launch(ctx, plan, K_SCATTER, args, 13, 1, &global, &local);
}

static pv_status describe(pv_context *ctx, cl_sift_plan *plan)
{
    cl_float magnif = plan->g.params.magnif;
    cl_uint kp_capacity = plan->keypoint_capacity;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->grad},     {sizeof(cl_mem), &plan->octave_table},
        {sizeof(cl_mem), &plan->kp_geom},  {sizeof(cl_mem), &plan->kp_key},
        {sizeof magnif, &magnif},          {sizeof(cl_mem), &plan->counters},
        {sizeof kp_capacity, &kp_capacity}, {sizeof(cl_mem), &plan->descriptors},
    };
    size_t local = 16 * (size_t)plan->shape.desc_split;
    size_t global = (size_t)plan->keypoint_capacity * local;
    return plan_launch(ctx, plan, K_DESCRIPTORS, args, 8, 1, &global, &local);
}

/* ------------------------------------------------------------- capacities */

static pv_status grow_candidates(pv_context *ctx, cl_sift_plan *plan, size_t needed)
{
    if (needed > (size_t)UINT32_MAX / 8)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %zu candidates are too many", needed);
    release_candidate_buffers(plan);
    size_t kp_wg = (size_t)plan->shape.kp_wg;
    size_t capacity = round_up_div(needed, kp_wg) * kp_wg;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_int4),
                                    &plan->candidates);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_float4),
                              &plan->cand_geom);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_float),
                              &plan->cand_scale);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_float4),
                              &plan->cand_angles);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_uint),
                              &plan->cand_count);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity / kp_wg * sizeof(cl_uint),
                              &plan->block_sums);
    if (status == PV_OK)
        plan->candidate_capacity = (cl_uint)capacity;
    return status;
}

static pv_status grow_keypoints(pv_context *ctx, cl_sift_plan *plan, size_t needed)
{
    if (needed > (size_t)UINT32_MAX / 8)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %zu keypoint slots are too many", needed);
    release_keypoint_buffers(plan);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, needed * sizeof(pv_sift_keypoint),
                                    &plan->records);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, needed * sizeof(cl_ulong), &plan->kp_key);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, needed * sizeof(cl_float4), &plan->kp_geom);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, needed * DESC_SIZE * sizeof(float),
                              &plan->descriptors);
    if (status == PV_OK)
        plan->keypoint_capacity = (cl_uint)needed;
    return status;
}

/* First sizes from the first octave's area (natural images give about one
 * candidate per 250 pixels and one keypoint per 500); a detection that
 * finds more grows them (by a quarter more than it found) and runs again,
 * so a plan settles after its first call. */
static pv_status initial_capacities(pv_context *ctx, cl_sift_plan *plan)
{
    const size_t area = plane_of(&plan->g, 0);
    pv_status status = PV_OK;
    if (!plan->candidate_capacity)
        status = grow_candidates(ctx, plan, area / 128 > 1024 ? area / 128 : 1024);
    if (status == PV_OK && !plan->keypoint_capacity)
        status = grow_keypoints(ctx, plan, area / 256 > 1024 ? area / 256 : 1024);
    return status;
}

/* ---------------------------------------------------------------- detect */

/* Every stage, enqueued back to back (no host wait): scale space, ordered
 * extrema, keypoints, their ordered placement, descriptors. */
static pv_status enqueue_detection(pv_context *ctx, cl_sift_plan *plan, const pv_image *image)
{
    pv_status status = build_first_base(ctx, plan, image);
    for (int o = 0; o < plan->g.octaves && status == PV_OK; o++)
        status = build_octave(ctx, plan, o);
    if (status == PV_OK)
        status = extrema(ctx, plan, 0);
    if (status == PV_OK)
        status = scan(ctx, plan, plan->row_counts, plan->row_start[plan->g.octaves], 0);
    if (status == PV_OK)
        status = extrema(ctx, plan, 1);
    if (status == PV_OK)
        status = orientations(ctx, plan);
    if (status == PV_OK)
        status = block_counts(ctx, plan);
    if (status == PV_OK)
        status = scan(ctx, plan, plan->block_sums, (cl_uint)keypoint_groups(plan), 1);
    if (status == PV_OK)
        status = scatter(ctx, plan);
    if (status == PV_OK)
        status = describe(ctx, plan);
    return status;
}

/* Frees the result arrays (not the spares: the front end owns those). */
static void free_result(pv_sift_raw *raw)
{
    free(raw->keypoints);
    free(raw->keys);
    free(raw->descriptors);
    free(raw->descriptors_u8);
    raw->keypoints = NULL;
    raw->keys = NULL;
    raw->descriptors = NULL;
    raw->descriptors_u8 = NULL;
    raw->count = raw->capacity = 0;
}

/* A large result array is a fresh mapping on every call (beyond malloc's
 * mmap threshold): filling it page by page costs a fault per 4 KiB, which
 * at 8K is a good part of the download.  Transparent huge pages, where the
 * system offers them on request, take one fault per 2 MiB. */
static void advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > start)
        madvise((void *)start, end - start, MADV_HUGEPAGE); /* a hint: failure is harmless */
#else
    (void)p;
    (void)bytes;
#endif
}

/* Fresh keypoint, descriptor and u8 arrays for n keypoints (huge pages
 * asked for the large ones); on failure none is kept. */
static int new_result_arrays(size_t n, pv_sift_keypoint **keypoints, float **descriptors,
                             uint8_t **descriptors_u8)
{
    const size_t desc_bytes = n * DESC_SIZE * sizeof(float);
    *keypoints = malloc(n * sizeof **keypoints);
    *descriptors = malloc(desc_bytes);
    *descriptors_u8 = malloc(n * DESC_SIZE);
    if (*keypoints && *descriptors && *descriptors_u8) {
        advise_huge_pages(*descriptors, desc_bytes);
        advise_huge_pages(*descriptors_u8, n * DESC_SIZE);
        return 1;
    }
    free(*keypoints);
    free(*descriptors);
    free(*descriptors_u8);
    *keypoints = NULL;
    *descriptors = NULL;
    *descriptors_u8 = NULL;
    return 0;
}

/* The result arrays: an earlier result's (raw's spares) when they have
 * room, else fresh ones. */
static pv_status alloc_raw(pv_context *ctx, cl_uint count, pv_sift_raw *raw)
{
    size_t n = count > 0 ? count : 1;
    raw->count = (int)count;
    raw->keys = malloc(n * sizeof *raw->keys);
    if (raw->spare_capacity > 0 && (size_t)raw->spare_capacity >= n) {
        raw->keypoints = raw->spare_keypoints;
        raw->descriptors = raw->spare_descriptors;
        raw->descriptors_u8 = raw->spare_u8;
        raw->capacity = raw->spare_capacity;
        raw->spare_keypoints = NULL;
        raw->spare_descriptors = NULL;
        raw->spare_u8 = NULL;
        raw->spare_capacity = 0;
    } else {
        new_result_arrays(n, &raw->keypoints, &raw->descriptors, &raw->descriptors_u8);
        raw->capacity = (int)n;
    }
    if (raw->keypoints && raw->keys)
        return PV_OK;
    free_result(raw);
    return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %u keypoints", count);
}

/* Descriptors out of pinned memory: the float copy and the u8 form in one
 * pass (the u8 form made later would read all the floats a second time). */
typedef struct descriptor_sink {
    float *floats;
    uint8_t *bytes;
} descriptor_sink;

/* One descriptor (restrict and simd: the loop vectorises). */
static void store_descriptor(float *restrict dst, uint8_t *restrict dst_u8,
                             const float *restrict src)
{
#pragma omp simd
    for (int i = 0; i < DESC_SIZE; i++) {
        dst[i] = src[i];
        dst_u8[i] = pv_sift_descriptor_u8(src[i]);
    }
}

/* Chunks hold whole descriptors (4 MiB chunks, 512-byte descriptors). */
static void store_descriptors(void *user, size_t offset, const void *chunk, size_t bytes)
{
    const descriptor_sink *sink = user;
    const size_t first = offset / (DESC_SIZE * sizeof(float));
    const long count = (long)(bytes / (DESC_SIZE * sizeof(float)));
    const float *src = chunk;
    const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long k = 0; k < count; k++)
        store_descriptor(sink->floats + (first + (size_t)k) * DESC_SIZE,
                         sink->bytes + (first + (size_t)k) * DESC_SIZE,
                         src + (size_t)k * DESC_SIZE);
}

/* The three arrays DMA'd into the stage back to back, one wait, then
 * copied out: one synchronisation instead of three blocking reads through
 * the driver's pageable path. */
static pv_status read_staged(pv_context *ctx, cl_sift_plan *plan, cl_uint count, pv_sift_raw *raw)
{
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const size_t desc = (size_t)count * DESC_SIZE * sizeof(float);
    pv_status status = ensure_stage(ctx, plan, kp + keys + desc);
    char *at = plan->stage_host;
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->records, 0, kp, at);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->kp_key, 0, keys, at + kp);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->descriptors, 0, desc, at + kp + keys);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status != PV_OK)
        return status;
    memcpy(raw->keypoints, at, kp);
    memcpy(raw->keys, at + kp, keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    store_descriptors(&sink, 0, at + kp + keys, desc);
    return PV_OK;
}

/* Beyond the plan's stage: the keypoints and keys DMA'd into it without a
 * wait, then the descriptors through the runtime's pinned ring chunk by
 * chunk while the next chunks' DMA runs (the in-order queue has finished
 * the first two when the first chunk arrives). */
static pv_status read_chunked(pv_context *ctx, cl_sift_plan *plan, cl_uint count,
                              pv_sift_raw *raw)
{
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const int via_stage = kp + keys <= STAGE_MAX;
    pv_status status = via_stage ? ensure_stage(ctx, plan, kp + keys) : PV_OK;
    char *at = plan->stage_host;
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->records, 0, kp, at)
                           : pv_cl_read_staged(ctx, plan->records, 0, kp, raw->keypoints);
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->kp_key, 0, keys, at + kp)
                           : pv_cl_read_staged(ctx, plan->kp_key, 0, keys, raw->keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    if (status == PV_OK)
        status = pv_cl_read_chunked(ctx, plan->descriptors, 0,
                                    (size_t)count * DESC_SIZE * sizeof(float), store_descriptors,
                                    &sink);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status == PV_OK && via_stage) {
        pv_cl_copy_parallel(raw->keypoints, at, kp);
        pv_cl_copy_parallel(raw->keys, at + kp, keys);
    }
    return status;
}

/* The result, already in key order and in the caller's layout, into the
 * arrays handed to the front end. */
static pv_status download(pv_context *ctx, cl_sift_plan *plan, cl_uint count, pv_sift_raw *raw)
{
    pv_status status = alloc_raw(ctx, count, raw);
    if (status != PV_OK || count == 0)
        return status;
    if ((size_t)count * RESULT_BYTES <= STAGE_MAX)
        status = read_staged(ctx, plan, count, raw);
    else
        status = read_chunked(ctx, plan, count, raw);
    if (status != PV_OK)
        free_result(raw);
    return status;
}

/* Large result arrays with no earlier result to reuse: allocated and
 * touched page by page while the device runs the detection (sized for the
 * previous call's count and an eighth more), so that the download does not
 * take a page fault per page of fresh memory.  They are offered as spares;
 * if too small they are simply freed. */
#define PREPARE_RESULT_MIN ((size_t)4 << 20)

static void touch_pages(void *p, size_t bytes)
{
    const size_t page = 4096;
    const long pages = (long)((bytes + page - 1) / page);
    const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long i = 0; i < pages; i++)
        ((volatile char *)p)[(size_t)i * page] = 0;
}

static void prepare_result(const cl_sift_plan *plan, pv_sift_raw *raw)
{
    const size_t want = (size_t)plan->last_count + plan->last_count / 8;
    if (raw->spare_capacity > 0 || want * RESULT_BYTES < PREPARE_RESULT_MIN)
        return;
    if (!new_result_arrays(want, &raw->spare_keypoints, &raw->spare_descriptors, &raw->spare_u8))
        return; /* the download allocates what it needs */
    touch_pages(raw->spare_keypoints, want * sizeof *raw->spare_keypoints);
    touch_pages(raw->spare_descriptors, want * DESC_SIZE * sizeof(float));
    touch_pages(raw->spare_u8, want * DESC_SIZE);
    raw->spare_capacity = (int)want;
}

static pv_status detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                  pv_sift_raw *raw)
{
    pv_status status = initial_capacities(ctx, plan);
    cl_uint counts[2] = {0, 0};
    for (int attempt = 0; status == PV_OK; attempt++) {
        status = enqueue_detection(ctx, plan, image);
        if (status == PV_OK && attempt == 0)
            prepare_result(plan, raw);
        /* The one wait of the call: the two totals. */
        if (status == PV_OK)
            status = pv_cl_read(ctx, plan->counters, 0, sizeof counts, counts);
        if (status != PV_OK)
            break;
        const int short_c = counts[0] > plan->candidate_capacity;
        const int short_k = counts[1] > plan->keypoint_capacity;
        if (!short_c && !short_k) {
            plan->last_count = counts[1];
            return download(ctx, plan, counts[1], raw);
        }
        if (attempt + 1 == MAX_ATTEMPTS)
            return pv_fail(ctx, PV_ERR_OPENCL, "sift_detect: the keypoint lists did not settle");
        /* Keypoints of the candidates that did not fit were not counted:
         * scale the estimate by the share that was seen. */
        double keypoints = counts[1];
        if (short_c)
            keypoints *= (double)counts[0] / plan->candidate_capacity;
        if (short_c)
            status = grow_candidates(ctx, plan, (size_t)counts[0] + counts[0] / 4);
        if (status == PV_OK && keypoints > plan->keypoint_capacity)
            status = grow_keypoints(ctx, plan, (size_t)(keypoints * 1.25) + 1);
    }
    return status;
}

static pv_status pv_cl_sift_detect(pv_context *ctx, void *opaque, const pv_image *image, pv_sift_raw *raw)
{
    return finish(ctx, detect_on_device(ctx, opaque, image, raw));
}

/* --------------------------------------------------------------- matching */

static pv_status upload_descriptors(pv_context *ctx, const char *slot, const float *host, int count,
                                    cl_mem *buffer)
{
    size_t bytes = (size_t)(count > 0 ? count : 1) * DESC_SIZE * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    if (status == PV_OK && count > 0)
        status = pv_cl_write(ctx, *buffer, 0, (size_t)count * DESC_SIZE * sizeof(float), host);
    return status;
}

/* Train chunks per query group: enough work groups for about four per
 * compute unit, each chunk at least two local tiles long. */
static int match_chunks(pv_context *ctx, int nq, int nt)
{
    const int wg = param(ctx, "SIFT_MATCH_WG"), tile = param(ctx, "SIFT_MATCH_TILE");
    int units = pv_cl_device_info(ctx)->compute_units;
    int groups = (nq + wg - 1) / wg;
    int want = (4 * (units > 0 ? units : 16) + groups - 1) / groups;
    int most = (nt + 2 * tile - 1) / (2 * tile);
    int chunks = want < most ? want : most;
    return chunks < 1 ? 1 : chunks;
}

static pv_status nearest_on_device(pv_context *ctx, const float *query, cl_int nq,
                                   const float *train, cl_int nt, int *best, float *d1, float *d2)
{
    const cl_int chunks = match_chunks(ctx, nq, nt);
    const cl_int per_chunk = (nt + chunks - 1) / chunks;
    const size_t partial = (size_t)chunks * (size_t)nq;
    cl_mem q, t, b, e1, e2, out;
    pv_status status = upload_descriptors(ctx, "sift.query", query, nq, &q);
    if (status == PV_OK)
        status = upload_descriptors(ctx, "sift.train", train, nt, &t);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.best", partial * sizeof(cl_int), &b);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d1", partial * sizeof(float), &e1);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d2", partial * sizeof(float), &e2);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.nearest", 3 * (size_t)nq * sizeof(cl_int), &out);
    int *host = status == PV_OK ? malloc(3 * (size_t)nq * sizeof *host) : NULL;
    if (status == PV_OK && !host)
        status = pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d queries", nq);
    if (status != PV_OK)
        return status;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &q}, {sizeof nq, &nq}, {sizeof(cl_mem), &t}, {sizeof nt, &nt},
        {sizeof per_chunk, &per_chunk},
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
    };
    const kernel_arg merge_args[] = {
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
        {sizeof nq, &nq}, {sizeof chunks, &chunks}, {sizeof(cl_mem), &out},
    };
    size_t local[2] = {(size_t)param(ctx, "SIFT_MATCH_WG"), 1};
    size_t global[2] = {(size_t)nq, (size_t)chunks};
    status = launch(ctx, "sift_nearest", args, 8, 2, global, local);
    if (status == PV_OK)
        status = launch(ctx, "sift_nearest_merge", merge_args, 6, 1, global, local);
    /* One copy back: best, d1, d2. */
    if (status == PV_OK)
        status = pv_cl_read(ctx, out, 0, 3 * (size_t)nq * sizeof *host, host);
    if (status == PV_OK) {
        memcpy(best, host, (size_t)nq * sizeof *best);
        memcpy(d1, host + nq, (size_t)nq * sizeof *d1);
        memcpy(d2, host + 2 * (size_t)nq, (size_t)nq * sizeof *d2);
    }
    free(host);
    return status;
}

static pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2)
{
    return finish(ctx, nearest_on_device(ctx, query, query_count, train, train_count, best,
                                         best_d2, second_d2));
}

const pv_features_ops pv_cl_features_ops = {
    .create = pv_cl_sift_create,
    .destroy = pv_cl_sift_destroy,
    .detect = pv_cl_sift_detect,
    .nearest = pv_cl_sift_nearest,
};
