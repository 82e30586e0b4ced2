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
#include "features_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {"SIFT_BATCH_LANES", 1},   /* batches: images in flight (queues), 1..8; 1: a
                                * loop in one call, faster on the H100 (docs/sift.md) */
};

const pv_cl_param_family pv_cl_params_features = {
    "features", features_defaults, sizeof features_defaults / sizeof features_defaults[0]};

int pv_cl_sift_param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "features", name, 1);
}

pv_status pv_cl_sift_set_args(pv_context *ctx, cl_kernel kernel, const kernel_arg *args, int count)
{
    pv_status status = PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++)
        status = pv_cl_arg(ctx, kernel, (cl_uint)i, args[i].size, args[i].value);
    return status;
}

/* Detection: the plan's kernel `which`. */
static pv_status plan_launch(pv_context *ctx, const cl_sift_plan *plan, int which,
                             const kernel_arg *args, int count, cl_uint dims,
                             const size_t *global, const size_t *local)
{
    pv_status status = pv_cl_sift_set_args(ctx, plan->kernels[which], args, count);
    return status == PV_OK ? pv_cl_launch(ctx, plan->kernels[which], dims, global, local) : status;
}

pv_status pv_cl_sift_finish(pv_context *ctx, pv_status status)
{
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
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
    pv_status status = pv_cl_sift_ensure_stage(ctx, plan, plan->input_at + bytes);
    if (status != PV_OK)
        return status;
    char *at = (char *)plan->stage_host + plan->input_at;
    const size_t pitch = (size_t)image->stride * pixel;
    if (pitch == row)
        pv_cl_copy_parallel(at, image->data, bytes);
    else
        for (int y = 0; y < image->height; y++)
            memcpy(at + (size_t)y * row, (const char *)image->data + (size_t)y * pitch, row);
    return pv_cl_write_async(ctx, plan->input, 0, bytes, at);
}

static pv_status prepare_input(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                               cl_mem target)
{
    const pv_sift_geometry *g = &plan->g;
    cl_float scale = 1.0f / 255.0f;
    /* 16-bit and colour input: its raw pixels go up, its scaled grey
     * values come into plan->input as the f32 input's would. */
    const int grey = pv_pixel_is_grey(image->type);
    pv_status status = grey ? upload_image(ctx, plan, image)
                            : pv_cl_grey_into(ctx, image, scale, plan->input);
    if (status != PV_OK)
        return status;
    cl_int in_w = g->width, in_h = g->height, upsample = g->params.first_octave < 0;
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

/* ---------------------------------------------------------------- detect */

/* Every stage, enqueued back to back (no host wait): scale space, ordered
 * extrema, keypoints, their ordered placement, descriptors. */
pv_status pv_cl_sift_enqueue_detection(pv_context *ctx, cl_sift_plan *plan,
                                       const pv_image *image)
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

pv_status pv_cl_sift_detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                      pv_sift_raw *raw)
{
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    cl_uint counts[2] = {0, 0};
    for (int attempt = 0; status == PV_OK; attempt++) {
        status = pv_cl_sift_enqueue_detection(ctx, plan, image);
        if (status == PV_OK && attempt == 0)
            pv_cl_sift_prepare_result(ctx, plan, raw);
        /* The one wait of the call: the two totals. */
        if (status == PV_OK)
            status = pv_cl_read(ctx, plan->counters, 0, sizeof counts, counts);
        if (status != PV_OK)
            break;
        const int short_c = counts[0] > plan->candidate_capacity;
        const int short_k = counts[1] > plan->keypoint_capacity;
        if (!short_c && !short_k) {
            plan->last_count = counts[1];
            return pv_cl_sift_download(ctx, plan, counts[1], raw);
        }
        if (attempt + 1 == MAX_ATTEMPTS)
            return pv_fail(ctx, PV_ERR_OPENCL, "sift_detect: the keypoint lists did not settle");
        /* Keypoints of the candidates that did not fit were not counted:
         * scale the estimate by the share that was seen. */
        double keypoints = counts[1];
        if (short_c)
            keypoints *= (double)counts[0] / plan->candidate_capacity;
        if (short_c)
            status = pv_cl_sift_grow_candidates(ctx, plan, (size_t)counts[0] + counts[0] / 4);
        if (status == PV_OK && keypoints > plan->keypoint_capacity)
            status = pv_cl_sift_grow_keypoints(ctx, plan, (size_t)(keypoints * 1.25) + 1);
    }
    return status;
}

static pv_status pv_cl_sift_detect(pv_context *ctx, void *opaque, const pv_image *image, pv_sift_raw *raw)
{
    return pv_cl_sift_finish(ctx, pv_cl_sift_detect_on_device(ctx, opaque, image, raw));
}

const pv_features_ops pv_cl_features_ops = {PV_FEATURES_SLOTS(PV_OPS_BIND, pv_cl_sift_)};
