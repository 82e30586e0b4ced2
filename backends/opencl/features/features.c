/* OpenCL SIFT: host side of kernels/features.cl.
 *
 * The plan keeps the whole scale space on the device (DoG, Gaussian and
 * gradient pyramids as buffers with per-octave offsets), the candidate and
 * keypoint lists, the descriptor buffer and a pinned host staging buffer,
 * all sized geometrically and kept between calls.  A detection is enqueued
 * in one go: the input (packed into the stage, DMA'd without a wait), the
 * first base, per octave one merged row pass and one merged column pass
 * (the downsampling of the previous octave fused into both; the blur radii
 * are constants of the plan's program) or, for the small octaves, one fused
 * tile pass that does both, then extrema counted per row (the
 * gradient pyramid filled on the way) / scanned / written in key order,
 * refinement and orientations by one work group per candidate, keypoints
 * counted / scanned / scattered in key order in the caller's record
 * layout, and descriptors.  Launches are sized by the capacities and exit
 * past the device-side counts, so the host waits once, for the two totals,
 * and then reads the sorted result back in one go (through the stage when
 * small) into the arrays it returns.  When a list was too short the plan
 * grows and the detection runs again (only on a plan's first calls).
 *
 * Every launch covers the plan's images side by side (one for a plan, a
 * chunk of a batch for its batch buffers, features_batch.c): the image
 * passes take the image index as their third dimension, the list kernels
 * as their second, so a chunk costs the launches of one image. */
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
    {"SIFT_TILE_GROUPS", 2},   /* small octaves in one fused pass: groups per unit */
    {"SIFT_WEIGHT_LITERALS", 1}, /* blur weights as constants of the program (0: a buffer) */
    {"SIFT_DESC_SPLIT", 8},    /* descriptor: items per cell (x 16 cells)       */
    {"SIFT_MATCH_WG", 64},     /* matching: queries per group                   */
    {"SIFT_MATCH_TILE", 32},   /* matching: train descriptors per local tile    */
    {"SIFT_BATCH_CHUNK", 8},   /* batches: most images side by side per launch, 1..64 */
};

const pv_cl_param_family pv_cl_params_features = {
    "features", features_defaults, sizeof features_defaults / sizeof features_defaults[0]};

int pv_cl_sift_param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "features", name, 1);
}

/* Detection: the plan's kernel `which`. */
static pv_status plan_launch(pv_context *ctx, const cl_sift_plan *plan, int which,
                             const pv_cl_kernel_arg *args, int count, cl_uint dims,
                             const size_t *global, const size_t *local)
{
    return pv_cl_launch_args(ctx, plan->kernels[which], args, count, dims, global, local);
}

/* An image pass over `images` images: (x, y) as given, the images as the
 * third dimension (left out for one image: a single detection's shape). */
static pv_status image_pass(pv_context *ctx, const cl_sift_plan *plan, int which,
                            const pv_cl_kernel_arg *args, int count, size_t width, size_t height,
                            int images)
{
    const size_t local[3] = {(size_t)plan->shape.wg_x, (size_t)plan->shape.wg_y, 1};
    const size_t global[3] = {width, height, (size_t)images};
    return plan_launch(ctx, plan, which, args, count, images > 1 ? 3 : 2, global, local);
}

/* A list kernel: `width` items in groups of `local` per image, the images
 * as the second dimension (left out for one image). */
static pv_status list_pass(pv_context *ctx, const cl_sift_plan *plan, int which,
                           const pv_cl_kernel_arg *args, int count, size_t width, size_t local,
                           int images)
{
    const size_t local2[2] = {local, 1}, global[2] = {width, (size_t)images};
    return plan_launch(ctx, plan, which, args, count, images > 1 ? 2 : 1, global, local2);
}

/* Per-image strides (in elements) of the scale space buffers. */
static cl_ulong rows_stride(const cl_sift_plan *plan)
{
    return (cl_ulong)plane_of(&plan->g, 0) * (cl_ulong)(plan->g.params.levels + 2);
}

pv_status pv_cl_sift_finish(pv_context *ctx, pv_status status)
{
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}

/* ------------------------------------------------------------ scale space */

/* A host image too large for the stage into plan->input at `offset` as
 * dense rows: for a plan, as a single detection always sent it (the
 * runtime's pinned path); for batch buffers, in a rectangular write
 * without a wait (the caller's pixels stay valid until the call's end;
 * a blocking write would wait for the chunk queued before). */
static pv_status write_image_at(pv_context *ctx, const cl_sift_plan *plan, size_t offset,
                                const pv_image *image)
{
    const size_t pixel = pv_pixel_size(image->type);
    const size_t row = (size_t)image->width * pixel;
    const cl_mem buffer = plan->input;
    if (plan->images == 1)
        return pv_cl_write_image(ctx, buffer, image);
    const pv_cl_rows rows = {.offset = offset,
                             .device_pitch = row,
                             .host_pitch = (size_t)image->stride * pixel,
                             .rows = (size_t)image->height,
                             .row_bytes = row};
    return pv_cl_write_rows_async(ctx, buffer, &rows, image->data);
}

/* The pixel type shared by every image of the chunk when it is one that
 * goes up as it is (u8 or f32), else -1: one preparation launch then
 * covers the chunk. */
static int shared_grey_type(const pv_image *images, int count)
{
    for (int i = 1; i < count; i++)
        if (images[i].type != images[0].type)
            return -1;
    return pv_pixel_is_grey(images[0].type) ? (int)images[0].type : -1;
}

/* The u8 and f32 images of the chunk into plan->input, image i at
 * i * slot bytes: packed into the stage and sent in one DMA the host does
 * not wait for when they fit, else one write each. */
static pv_status upload_images(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                               int count, size_t slot)
{
    const size_t total = slot * (size_t)count;
    /* A device-buffer call's images are placeholders bound to the caller's
     * buffers (lib/interop/interop.c): their pixels are never read here but
     * copied on the device by the runtime's transfers, one image each. */
    if (total > plan->input_room || ctx->device_call) {
        pv_status status = PV_OK;
        for (int i = 0; i < count && status == PV_OK; i++)
            if (pv_pixel_is_grey(images[i].type))
                status = write_image_at(ctx, plan, (size_t)i * slot, &images[i]);
        return status;
    }
    int any = 0;
    for (int i = 0; i < count; i++)
        any |= pv_pixel_is_grey(images[i].type);
    pv_status status = any ? pv_cl_sift_ensure_stage(ctx, plan, plan->input_at + total) : PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++) {
        const pv_image *image = &images[i];
        if (!pv_pixel_is_grey(image->type))
            continue;
        const size_t pixel = pv_pixel_size(image->type), row = (size_t)image->width * pixel;
        const size_t pitch = (size_t)image->stride * pixel;
        char *at = (char *)plan->stage_host + plan->input_at + (size_t)i * slot;
        if (pitch == row)
            pv_cl_copy_parallel(at, image->data, row * (size_t)image->height);
        else
            for (int y = 0; y < image->height; y++)
                memcpy(at + (size_t)y * row, (const char *)image->data + (size_t)y * pitch, row);
    }
    return status == PV_OK && any ? pv_cl_write_async(ctx, plan->input, 0, total,
                                                      (char *)plan->stage_host + plan->input_at)
                                  : status;
}

/* The preparation kernel from `src` (image i at src + i src_stride,
 * elements) into target, for `images` images from first_image on. */
static pv_status launch_prepare(pv_context *ctx, cl_sift_plan *plan, pv_pixel_type type,
                                cl_mem src, cl_ulong src_stride, cl_mem target, int first_image,
                                int images)
{
    const pv_sift_geometry *g = &plan->g;
    cl_float scale = 1.0f / 255.0f;
    cl_int in_w = g->width, in_h = g->height, upsample = g->params.first_octave < 0;
    cl_int first = first_image;
    cl_ulong dst_stride = plane_of(g, 0);
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &src}, {sizeof(cl_mem), &target}, {sizeof in_w, &in_w},
        {sizeof in_h, &in_h}, {sizeof upsample, &upsample}, {sizeof scale, &scale},
        {sizeof src_stride, &src_stride}, {sizeof dst_stride, &dst_stride},
        {sizeof first, &first},
    };
    return image_pass(ctx, plan, type == PV_PIXEL_U8 ? K_PREPARE_U8 : K_PREPARE_F32, args,
                      PV_CL_ARG_COUNT(args),
                      (size_t)g->octave_width[0], (size_t)g->octave_height[0], images);
}

/* The chunk's images as float into target (the first octave's input).
 * u8 and f32 images go up as they are; 16-bit and colour ones go up raw
 * and are converted to their scaled grey values on the device first.  A
 * chunk of one grey type is one preparation launch; any other chunk one
 * launch per image. */
static pv_status prepare_input(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                               int count, cl_mem target)
{
    const size_t pixels = (size_t)plan->g.width * (size_t)plan->g.height;
    const int shared = shared_grey_type(images, count);
    const size_t slot = pixels * (shared >= 0 ? pv_pixel_size((pv_pixel_type)shared)
                                              : sizeof(float));
    pv_status status = upload_images(ctx, plan, images, count, slot);
    if (status != PV_OK || shared >= 0)
        return status == PV_OK ? launch_prepare(ctx, plan, (pv_pixel_type)shared, plan->input,
                                                pixels, target, 0, count)
                               : status;
    /* Converted images pass through a scratch buffer (plan->input itself
     * for a chunk of one, as a single detection does). */
    cl_mem grey = plan->input;
    if (count > 1)
        status = pv_cl_scratch(ctx, "sift.grey", pixels * sizeof(float), &grey);
    for (int i = 0; i < count && status == PV_OK; i++) {
        const pv_pixel_type type = images[i].type;
        if (pv_pixel_is_grey(type)) {
            status = launch_prepare(ctx, plan, type, plan->input, slot / pv_pixel_size(type),
                                    target, i, 1);
            continue;
        }
        status = pv_cl_grey_into(ctx, &images[i], 1.0f / 255.0f, grey);
        if (status == PV_OK)
            status = launch_prepare(ctx, plan, PV_PIXEL_F32, grey, 0, target, i, 1);
    }
    return status;
}

/* Where an octave's base samples come from: (x, y) of image i is
 * buffer[i stride + offset + step y pitch + step x]. */
typedef struct base_source {
    cl_mem buffer;
    cl_ulong offset;
    cl_int pitch, step;
    cl_ulong stride;
} base_source;

/* The base of octave o: the first octave's blurred base, else every second
 * sample of octave o-1's level S (read in place, no copy). */
static base_source base_of(const cl_sift_plan *plan, int o)
{
    if (o == 0)
        return (base_source){plan->base, 0, plan->g.octave_width[0], 1, plane_of(&plan->g, 0)};
    const pv_sift_geometry *g = &plan->g;
    cl_ulong offset = plan->octaves[o - 1].gauss_offset +
                      (cl_ulong)(g->params.levels - 1) * plane_of(g, o - 1);
    return (base_source){plan->gauss, offset, g->octave_width[o - 1], 2, plan->gauss_floats};
}

/* Row pass of src into plan->rows: every level's blur, or with `base` the
 * first octave's base blur. */
static pv_status blur_rows(pv_context *ctx, cl_sift_plan *plan, const base_source *src,
                           cl_int base, cl_int max_radius, int o, int images)
{
    const int wg_x = plan->shape.wg_x, wg_y = plan->shape.wg_y;
    const int tile = wg_x * plan->shape.row_steps;
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    cl_ulong dst_offset = 0, dst_stride = rows_stride(plan);
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &src->buffer}, {sizeof src->offset, &src->offset},
        {sizeof src->pitch, &src->pitch}, {sizeof src->step, &src->step},
        {sizeof(cl_mem), &plan->rows}, {sizeof dst_offset, &dst_offset},
        {sizeof(cl_mem), &plan->weights}, {sizeof base, &base},
        {sizeof max_radius, &max_radius}, {sizeof w, &w}, {sizeof h, &h},
        {(size_t)wg_y * ((size_t)tile + 2 * (size_t)max_radius) * sizeof(float), NULL},
        {sizeof src->stride, &src->stride}, {sizeof dst_stride, &dst_stride},
    };
    return image_pass(ctx, plan, K_ROWS, args, PV_CL_ARG_COUNT(args),
                      round_up_div((size_t)w, (size_t)tile) * (size_t)wg_x, (size_t)h, images);
}

typedef struct cols_job {
    cl_mem gauss;
    cl_ulong gauss_offset, gauss_stride;
    cl_mem dog;
    cl_ulong dog_offset;
    cl_int with_dog;
    cl_int stored, max_radius;
} cols_job;

static pv_status blur_cols(pv_context *ctx, cl_sift_plan *plan, const cols_job *job, int o,
                           const base_source *base, int images)
{
    const int wg_x = plan->shape.wg_x, wg_y = plan->shape.wg_y;
    const int tile = wg_y * plan->shape.col_steps;
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    cl_ulong src_stride = rows_stride(plan), dog_stride = plan->dog_floats;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->rows}, {sizeof(cl_mem), &base->buffer},
        {sizeof base->offset, &base->offset}, {sizeof base->pitch, &base->pitch},
        {sizeof base->step, &base->step},
        {sizeof(cl_mem), &job->gauss}, {sizeof job->gauss_offset, &job->gauss_offset},
        {sizeof(cl_mem), &job->dog},   {sizeof job->dog_offset, &job->dog_offset},
        {sizeof job->with_dog, &job->with_dog}, {sizeof(cl_mem), &plan->weights},
        {sizeof job->stored, &job->stored}, {sizeof job->max_radius, &job->max_radius},
        {sizeof w, &w}, {sizeof h, &h},
        {(size_t)wg_x * ((size_t)tile + 2 * (size_t)job->max_radius) * sizeof(float), NULL},
        {sizeof src_stride, &src_stride}, {sizeof base->stride, &base->stride},
        {sizeof job->gauss_stride, &job->gauss_stride}, {sizeof dog_stride, &dog_stride},
    };
    return image_pass(ctx, plan, K_COLS, args, PV_CL_ARG_COUNT(args), (size_t)w,
                      round_up_div((size_t)h, (size_t)tile) * (size_t)wg_y, images);
}

/* The first octave's base: the prepared input in `base`, its row pass in
 * `rows`, the column pass back into `base` (no DoG; the kernel's base
 * argument is then unused and bound to `rows`). */
static pv_status build_first_base(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                                  int count)
{
    const pv_sift_geometry *g = &plan->g;
    pv_status status = prepare_input(ctx, plan, images, count, plan->base);
    if (status != PV_OK || g->base_radius == 0)
        return status;
    const base_source src = base_of(plan, 0), unused = {plan->rows, 0, 1, 1, 0};
    status = blur_rows(ctx, plan, &src, 1, g->base_radius, 0, count);
    cols_job job = {plan->base, 0, plane_of(g, 0), plan->rows, 0, 0, 1, g->base_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, 0, &unused, count) : status;
}

/* Local memory of the fused tile pass, in floats: the staged base samples
 * of a tile with its halo, and the row taps of the staged rows. */
static size_t tile_span_y(const cl_sift_plan *plan)
{
    return (size_t)plan->shape.wg_y + 2 * (size_t)plan->max_radius;
}

static size_t base_tile_floats(const cl_sift_plan *plan)
{
    return tile_span_y(plan) * ((size_t)plan->shape.wg_x + 2 * (size_t)plan->max_radius);
}

static size_t rows_tile_floats(const cl_sift_plan *plan)
{
    return tile_span_y(plan) * (size_t)plan->shape.wg_x;
}

/* Whether octave o runs as one fused tile pass: when an image's groups are
 * few enough that a pass takes the latency of its steps rather than its
 * work (SIFT_TILE_GROUPS per compute unit), and the tiles fit in local
 * memory.  Decided per image, not per launch, so that a batch chunk runs
 * the launches of one image. */
static int fused_octave(pv_context *ctx, const cl_sift_plan *plan, int o)
{
    const size_t groups = round_up_div((size_t)plan->g.octave_width[o], (size_t)plan->shape.wg_x) *
                          round_up_div((size_t)plan->g.octave_height[o], (size_t)plan->shape.wg_y);
    const int units = pv_cl_device_info(ctx)->compute_units;
    const size_t bytes = (base_tile_floats(plan) + rows_tile_floats(plan)) * sizeof(float);
    return groups <= (size_t)(units > 0 ? units : 1) * (size_t)plan->shape.tile_groups &&
           bytes <= pv_cl_device_info(ctx)->local_memory;
}

static pv_status blur_tile(pv_context *ctx, cl_sift_plan *plan, int o, const base_source *base,
                           int images)
{
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    cl_int stored = plan->g.params.levels, max_radius = plan->max_radius;
    cl_ulong gauss_offset = plan->octaves[o].gauss_offset, dog_offset = plan->octaves[o].dog_offset;
    cl_ulong gauss_stride = plan->gauss_floats, dog_stride = plan->dog_floats;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &base->buffer}, {sizeof base->offset, &base->offset},
        {sizeof base->pitch, &base->pitch}, {sizeof base->step, &base->step},
        {sizeof(cl_mem), &plan->gauss}, {sizeof gauss_offset, &gauss_offset},
        {sizeof(cl_mem), &plan->dog}, {sizeof dog_offset, &dog_offset},
        {sizeof(cl_mem), &plan->weights}, {sizeof stored, &stored},
        {sizeof max_radius, &max_radius}, {sizeof w, &w}, {sizeof h, &h},
        {base_tile_floats(plan) * sizeof(float), NULL},
        {rows_tile_floats(plan) * sizeof(float), NULL},
        {sizeof base->stride, &base->stride}, {sizeof gauss_stride, &gauss_stride},
        {sizeof dog_stride, &dog_stride},
    };
    const size_t wg_x = (size_t)plan->shape.wg_x, wg_y = (size_t)plan->shape.wg_y;
    return image_pass(ctx, plan, K_TILE, args, PV_CL_ARG_COUNT(args),
                      round_up_div((size_t)w, wg_x) * wg_x,
                      round_up_div((size_t)h, wg_y) * wg_y, images);
}

static pv_status build_octave(pv_context *ctx, cl_sift_plan *plan, int o, int count)
{
    const base_source base = base_of(plan, o);
    if (fused_octave(ctx, plan, o))
        return blur_tile(ctx, plan, o, &base, count);
    pv_status status = blur_rows(ctx, plan, &base, 0, plan->max_radius, o, count);
    cols_job job = {plan->gauss, plan->octaves[o].gauss_offset, plan->gauss_floats, plan->dog,
                    plan->octaves[o].dog_offset, 1, plan->g.params.levels, plan->max_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, o, &base, count) : status;
}

/* ------------------------------------------------- extrema and keypoints */

static pv_status extrema(pv_context *ctx, cl_sift_plan *plan, cl_int pass, int images)
{
    cl_ulong dog_stride = plan->dog_floats, gauss_stride = plan->gauss_floats;
    cl_int octaves = plan->g.octaves, levels = plan->g.params.levels;
    cl_float threshold = 0.8f * plan->g.params.peak_thresh;
    cl_uint capacity = plan->candidate_capacity;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog}, {sizeof(cl_mem), &plan->octave_table},
        {sizeof octaves, &octaves}, {sizeof(cl_mem), &plan->row_table},
        {sizeof levels, &levels}, {sizeof threshold, &threshold}, {sizeof pass, &pass},
        {sizeof(cl_mem), &plan->row_counts}, {sizeof(cl_mem), &plan->counters},
        {sizeof(cl_mem), &plan->candidates}, {sizeof capacity, &capacity},
        {sizeof(cl_mem), &plan->ext_masks}, {sizeof plan->mask_pitch, &plan->mask_pitch},
        {sizeof(cl_mem), &plan->gauss}, {sizeof(cl_mem), &plan->grad},
        {sizeof dog_stride, &dog_stride}, {sizeof gauss_stride, &gauss_stride},
    };
    size_t local = (size_t)plan->shape.ext_wg;
    size_t global = (size_t)plan->row_start[plan->g.octaves] * local;
    return list_pass(ctx, plan, K_EXTREMA, args, PV_CL_ARG_COUNT(args), global, local, images);
}

/* Exclusive scan of n counts in place (per image, stride apart); the sum
 * into the image's counters[which]. */
static pv_status scan(pv_context *ctx, cl_sift_plan *plan, cl_mem values, cl_uint n,
                      cl_uint stride, int which, int images)
{
    cl_uint offset = (cl_uint)which;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &values}, {sizeof n, &n}, {sizeof(cl_mem), &plan->counters},
        {sizeof offset, &offset}, {sizeof stride, &stride},
    };
    size_t local = (size_t)plan->shape.scan_wg;
    return list_pass(ctx, plan, K_SCAN, args, PV_CL_ARG_COUNT(args), local, local, images);
}

static pv_sift_settings settings_of(const pv_sift_params *p)
{
    pv_sift_settings s = {p->peak_thresh, p->edge_thresh, p->sigma0, p->orientation_window,
                       p->orientation_peak, p->magnif, p->levels};
    return s;
}

static size_t keypoint_groups(const cl_sift_plan *plan)
{
    return round_up_div(plan->candidate_capacity, (size_t)plan->shape.kp_wg);
}

/* Refinement and orientations: a fixed number of groups (enough to fill
 * the device) walk the candidate list, whose length only the device knows. */
static pv_status orientations(pv_context *ctx, cl_sift_plan *plan, int images)
{
    pv_sift_settings set = settings_of(&plan->g.params);
    cl_uint capacity = plan->candidate_capacity;
    cl_ulong dog_stride = plan->dog_floats, gauss_stride = plan->gauss_floats;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog},         {sizeof(cl_mem), &plan->grad},
        {sizeof(cl_mem), &plan->octave_table}, {sizeof(cl_mem), &plan->candidates},
        {sizeof(cl_mem), &plan->counters},    {sizeof capacity, &capacity},
        {sizeof set, &set},                   {sizeof(cl_mem), &plan->cand_geom},
        {sizeof(cl_mem), &plan->cand_scale},  {sizeof(cl_mem), &plan->cand_angles},
        {sizeof(cl_mem), &plan->cand_count}, {sizeof dog_stride, &dog_stride},
        {sizeof gauss_stride, &gauss_stride},
    };
    /* The groups that fill the device, shared among the images (each
     * candidate's result does not depend on how many groups walk the
     * list). */
    int units = pv_cl_device_info(ctx)->compute_units;
    size_t groups = (size_t)(units > 0 ? units : 16) * (size_t)plan->shape.ori_groups;
    groups = round_up_div(groups, (size_t)images);
    if (groups > capacity)
        groups = capacity;
    size_t local = (size_t)plan->shape.ori_wg;
    return list_pass(ctx, plan, K_ORIENT, args, PV_CL_ARG_COUNT(args), groups * local, local,
                     images);
}

static pv_status block_counts(pv_context *ctx, cl_sift_plan *plan, int images)
{
    cl_uint capacity = plan->candidate_capacity;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->counters}, {sizeof capacity, &capacity},
        {sizeof(cl_mem), &plan->cand_count}, {sizeof(cl_mem), &plan->block_sums},
    };
    size_t local = (size_t)plan->shape.kp_wg;
    return list_pass(ctx, plan, K_BLOCK_COUNTS, args, PV_CL_ARG_COUNT(args),
                     keypoint_groups(plan) * local, local,
                     images);
}

static pv_status scatter(pv_context *ctx, cl_sift_plan *plan, int images)
{
    cl_uint capacity = plan->candidate_capacity, kp_capacity = plan->keypoint_capacity;
    cl_int first = plan->g.params.first_octave;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->candidates}, {sizeof(cl_mem), &plan->counters},
        {sizeof capacity, &capacity},        {sizeof(cl_mem), &plan->cand_geom},
        {sizeof(cl_mem), &plan->cand_scale}, {sizeof(cl_mem), &plan->cand_angles},
        {sizeof(cl_mem), &plan->cand_count}, {sizeof(cl_mem), &plan->block_sums},
        {sizeof kp_capacity, &kp_capacity},  {sizeof first, &first},
        {sizeof(cl_mem), &plan->records},    {sizeof(cl_mem), &plan->kp_key},
        {sizeof(cl_mem), &plan->kp_geom},
    };
    size_t local = (size_t)plan->shape.kp_wg;
    return list_pass(ctx, plan, K_SCATTER, args, PV_CL_ARG_COUNT(args),
                     keypoint_groups(plan) * local, local,
                     images);
}

static pv_status describe(pv_context *ctx, cl_sift_plan *plan, int images)
{
    cl_float magnif = plan->g.params.magnif;
    cl_ulong gauss_stride = plan->gauss_floats;
    cl_uint kp_capacity = plan->keypoint_capacity;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &plan->grad},     {sizeof(cl_mem), &plan->octave_table},
        {sizeof(cl_mem), &plan->kp_geom},  {sizeof(cl_mem), &plan->kp_key},
        {sizeof magnif, &magnif},          {sizeof(cl_mem), &plan->counters},
        {sizeof kp_capacity, &kp_capacity}, {sizeof(cl_mem), &plan->descriptors},
        {sizeof gauss_stride, &gauss_stride},
    };
    size_t local = 16 * (size_t)plan->shape.desc_split;
    return list_pass(ctx, plan, K_DESCRIPTORS, args, PV_CL_ARG_COUNT(args),
                     (size_t)plan->keypoint_capacity * local, local, images);
}

/* ---------------------------------------------------------------- detect */

/* Every stage, enqueued back to back (no host wait): scale space, ordered
 * extrema, keypoints, their ordered placement, descriptors. */
pv_status pv_cl_sift_enqueue_detection(pv_context *ctx, cl_sift_plan *plan,
                                       const pv_image *images, int count)
{
    const cl_uint row_groups = plan->row_start[plan->g.octaves];
    const cl_uint blocks = (cl_uint)keypoint_groups(plan);
    pv_status status = build_first_base(ctx, plan, images, count);
    for (int o = 0; o < plan->g.octaves && status == PV_OK; o++)
        status = build_octave(ctx, plan, o, count);
    if (status == PV_OK)
        status = extrema(ctx, plan, 0, count);
    if (status == PV_OK)
        status = scan(ctx, plan, plan->row_counts, row_groups, row_groups, 0, count);
    if (status == PV_OK)
        status = extrema(ctx, plan, 1, count);
    if (status == PV_OK)
        status = orientations(ctx, plan, count);
    if (status == PV_OK)
        status = block_counts(ctx, plan, count);
    if (status == PV_OK)
        status = scan(ctx, plan, plan->block_sums, blocks, blocks, 1, count);
    if (status == PV_OK)
        status = scatter(ctx, plan, count);
    if (status == PV_OK)
        status = describe(ctx, plan, count);
    return status;
}

pv_status pv_cl_sift_detect_settled(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                    pv_sift_raw *raw, cl_uint *count)
{
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    cl_uint counts[2] = {0, 0};
    for (int attempt = 0; status == PV_OK; attempt++) {
        status = pv_cl_sift_enqueue_detection(ctx, plan, image, 1);
        if (status == PV_OK && attempt == 0 && raw)
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
            *count = counts[1];
            return PV_OK;
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

pv_status pv_cl_sift_detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                      pv_sift_raw *raw)
{
    cl_uint count = 0;
    pv_status status = pv_cl_sift_detect_settled(ctx, plan, image, raw, &count);
    return status == PV_OK ? pv_cl_sift_download(ctx, plan, 0, count, raw) : status;
}

static pv_status pv_cl_sift_detect(pv_context *ctx, void *opaque, const pv_image *image, pv_sift_raw *raw)
{
    return pv_cl_sift_finish(ctx, pv_cl_sift_detect_on_device(ctx, opaque, image, raw));
}

const pv_features_ops pv_cl_features_ops = {PV_FEATURES_SLOTS(PV_OPS_BIND, pv_cl_sift_)};
