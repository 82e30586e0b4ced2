/* OpenCL SIFT: host side of kernels/features.cl.
 *
 * The plan keeps the whole scale space on the device (DoG and Gaussian
 * pyramids as two buffers with per-octave offsets), the candidate and
 * keypoint lists and the descriptor buffer, so a detection uploads the
 * image once and downloads only the keypoints.  Per octave: downsample,
 * one merged row pass and one merged column pass for all its levels (the
 * column pass also writes the DoG), extrema with compaction; then one
 * launch refines and orients all candidates of all octaves, and one
 * launch describes all keypoints.  Two counts are read back on the way
 * (candidates, keypoints) to size the next launches. */
#include "opencl.h"

#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default features_defaults[] = {
    {"SIFT_WG_X", 32},         /* image passes: work-group width ...           */
    {"SIFT_WG_Y", 8},          /* ... and height                               */
    {"SIFT_ROW_STEPS", 4},     /* merged row pass: outputs per item along x     */
    {"SIFT_COL_STEPS", 4},     /* merged column pass: outputs per item along y  */
    {"SIFT_KP_WG", 64},        /* refinement + orientation: items per group     */
    {"SIFT_DESC_SPLIT", 4},    /* descriptor: items per cell (x 16 cells)       */
    {"SIFT_MATCH_WG", 64},     /* matching: queries per group                   */
    {"SIFT_MATCH_TILE", 32},   /* matching: train descriptors per local tile    */
};

const pv_cl_param_family pv_cl_params_features = {
    "features", features_defaults, sizeof features_defaults / sizeof features_defaults[0]};

#define MAX_ORIENTATIONS 4
#define DESC_SIZE PV_SIFT_DESCRIPTOR_SIZE

/* Mirrors of the kernels' structs (same member order and alignment). */
typedef struct octave_info {
    cl_int w, h;
    cl_ulong dog_offset, gauss_offset;
} octave_info;

typedef struct sift_settings {
    cl_float peak_thresh, edge_thresh, sigma0, ori_window, ori_peak, magnif;
    cl_int levels;
} sift_settings;

typedef struct cl_sift_plan {
    pv_sift_geometry g;
    int max_radius;            /* over the levels */
    cl_mem weights;            /* level taps, then base taps */
    cl_mem level_info;         /* int2 (radius, offset) per level */
    cl_mem base_info;
    cl_mem octave_table;       /* octave_info per octave */
    octave_info octaves[PV_SIFT_MAX_OCTAVES];
    cl_mem input;              /* the caller's image, dense */
    cl_mem base;               /* current octave's base level */
    cl_mem rows;               /* row-pass results, levels + 2 planes */
    cl_mem gauss, dog;         /* pyramids */
    cl_mem counters;           /* [0] candidates, [1] keypoints */
    cl_mem candidates;
    cl_uint candidate_capacity;
    cl_mem kp_geom, kp_extra, kp_key, descriptors;
    cl_uint keypoint_capacity;
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

static pv_status features_kernel(pv_context *ctx, const char *name, cl_kernel *kernel)
{
    char options[512] = "";
    pv_status status = pv_cl_param_defines(ctx, "features", options, sizeof options);
    return status == PV_OK ? pv_cl_kernel(ctx, "features", options, name, kernel) : status;
}

static pv_status launch(pv_context *ctx, const char *name, const kernel_arg *args, int count,
                        cl_uint dims, const size_t *global, const size_t *local)
{
    cl_kernel kernel;
    pv_status status = features_kernel(ctx, name, &kernel);
    for (int i = 0; i < count && status == PV_OK; i++)
        status = pv_cl_arg(ctx, kernel, (cl_uint)i, args[i].size, args[i].value);
    return status == PV_OK ? pv_cl_launch(ctx, kernel, dims, global, local) : status;
}

static pv_status finish(pv_context *ctx, pv_status status)
{
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}

/* ------------------------------------------------------------------ plan */

static void release_keypoint_buffers(cl_sift_plan *plan)
{
    pv_cl_release(&plan->kp_geom);
    pv_cl_release(&plan->kp_extra);
    pv_cl_release(&plan->kp_key);
    pv_cl_release(&plan->descriptors);
    plan->keypoint_capacity = 0;
}

void pv_cl_sift_destroy(pv_context *ctx, void *opaque)
{
    (void)ctx;
    cl_sift_plan *plan = opaque;
    if (!plan)
        return;
    cl_mem *buffers[] = {&plan->weights, &plan->level_info, &plan->base_info,
                         &plan->octave_table, &plan->input, &plan->base, &plan->rows,
                         &plan->gauss, &plan->dog, &plan->counters, &plan->candidates};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        pv_cl_release(buffers[i]);
    release_keypoint_buffers(plan);
    free(plan);
}

static size_t plane_of(const pv_sift_geometry *g, int o)
{
    return (size_t)g->octave_width[o] * (size_t)g->octave_height[o];
}

/* Offsets of every octave in the pyramids; totals in floats. */
static void layout_octaves(cl_sift_plan *plan, size_t *dog_total, size_t *gauss_total)
{
    const pv_sift_geometry *g = &plan->g;
    const int levels = g->params.levels;
    size_t dog = 0, gauss = 0;
    for (int o = 0; o < g->octaves; o++) {
        plan->octaves[o] = (octave_info){g->octave_width[o], g->octave_height[o], dog, gauss};
        dog += plane_of(g, o) * (size_t)(levels + 2);
        gauss += plane_of(g, o) * (size_t)levels;
    }
    *dog_total = dog;
    *gauss_total = gauss;
}

/* Weights come from the caller's geometry: the plan keeps none on the host. */
static pv_status upload_tables(pv_context *ctx, cl_sift_plan *plan, const pv_sift_geometry *g)
{
    const int nlevels = g->params.levels + 2, base_taps = 2 * g->base_radius + 1;
    cl_int level_info[2 * (PV_SIFT_MAX_LEVELS + 2)], base_info[2] = {g->base_radius, g->level_taps};
    for (int l = 1; l <= nlevels; l++) {
        level_info[2 * (l - 1)] = g->level_radius[l];
        level_info[2 * (l - 1) + 1] = g->level_offset[l];
        if (g->level_radius[l] > plan->max_radius)
            plan->max_radius = g->level_radius[l];
    }
    size_t weight_bytes = (size_t)(g->level_taps + base_taps) * sizeof(float);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, weight_bytes, &plan->weights);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->weights, 0, (size_t)g->level_taps * sizeof(float),
                             g->level_weights);
    if (status == PV_OK && g->base_radius > 0)
        status = pv_cl_write(ctx, plan->weights, (size_t)g->level_taps * sizeof(float),
                             (size_t)base_taps * sizeof(float), g->base_weights);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, sizeof level_info, &plan->level_info);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->level_info, 0, sizeof level_info, level_info);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, sizeof base_info, &plan->base_info);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->base_info, 0, sizeof base_info, base_info);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, sizeof plan->octaves, &plan->octave_table);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->octave_table, 0, sizeof plan->octaves, plan->octaves);
    return status;
}

static pv_status bytes_of(pv_context *ctx, size_t floats, size_t *bytes)
{
    if (!pv_size_mul(floats, sizeof(float), bytes))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: the scale space size overflows");
    return PV_OK;
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
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), &plan->counters);
    return status;
}

/* Local memory of the merged passes must fit the device. */
static pv_status check_local_memory(pv_context *ctx, const cl_sift_plan *plan)
{
    const size_t wg_x = (size_t)param(ctx, "SIFT_WG_X"), wg_y = (size_t)param(ctx, "SIFT_WG_Y");
    const size_t r = (size_t)(plan->max_radius > plan->g.base_radius ? plan->max_radius
                                                                     : plan->g.base_radius);
    size_t rows = wg_y * (wg_x * (size_t)param(ctx, "SIFT_ROW_STEPS") + 2 * r) * sizeof(float);
    size_t cols = wg_x * (wg_y * (size_t)param(ctx, "SIFT_COL_STEPS") + 2 * r) * sizeof(float);
    size_t need = rows > cols ? rows : cols;
    if (need > pv_cl_device_info(ctx)->local_memory)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "sift: blur radius %zu needs %zu bytes of local memory, the device has %llu",
                       r, need, (unsigned long long)pv_cl_device_info(ctx)->local_memory);
    return PV_OK;
}

pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out)
{
    cl_sift_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: no memory for the OpenCL plan");
    plan->g = *geometry;
    plan->g.base_weights = plan->g.level_weights = NULL; /* only on the device */
    pv_status status = alloc_pyramids(ctx, plan);
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

/* ------------------------------------------------------------ scale space */

static pv_status prepare_input(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                               cl_mem target)
{
    const pv_sift_geometry *g = &plan->g;
    pv_status status = pv_cl_write_image(ctx, plan->input, image);
    if (status != PV_OK)
        return status;
    cl_int in_w = g->width, in_h = g->height, upsample = g->params.first_octave < 0;
    cl_float scale = 1.0f / 255.0f;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->input}, {sizeof(cl_mem), &target}, {sizeof in_w, &in_w},
        {sizeof in_h, &in_h}, {sizeof upsample, &upsample}, {sizeof scale, &scale},
    };
    size_t local[2] = {(size_t)param(ctx, "SIFT_WG_X"), (size_t)param(ctx, "SIFT_WG_Y")};
    size_t global[2] = {(size_t)g->octave_width[0], (size_t)g->octave_height[0]};
    return launch(ctx, image->type == PV_PIXEL_U8 ? "sift_prepare_u8" : "sift_prepare_f32", args,
                  6, 2, global, local);
}

/* Row pass of nlevels blurs of src (at src_offset floats) into dst. */
static pv_status blur_rows(pv_context *ctx, cl_sift_plan *plan, cl_mem src, cl_ulong src_offset,
                           cl_mem dst, cl_ulong dst_offset, cl_mem info, cl_int nlevels,
                           cl_int max_radius, int o)
{
    const int wg_x = param(ctx, "SIFT_WG_X"), wg_y = param(ctx, "SIFT_WG_Y");
    const int tile = wg_x * param(ctx, "SIFT_ROW_STEPS");
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    const kernel_arg args[] = {
        {sizeof(cl_mem), &src},   {sizeof src_offset, &src_offset}, {sizeof(cl_mem), &dst},
        {sizeof dst_offset, &dst_offset}, {sizeof(cl_mem), &plan->weights},
        {sizeof(cl_mem), &info},  {sizeof nlevels, &nlevels}, {sizeof max_radius, &max_radius},
        {sizeof w, &w},           {sizeof h, &h},
        {(size_t)wg_y * ((size_t)tile + 2 * (size_t)max_radius) * sizeof(float), NULL},
    };
    size_t local[2] = {(size_t)wg_x, (size_t)wg_y};
    size_t global[2] = {round_up_div((size_t)w, (size_t)tile) * (size_t)wg_x, (size_t)h};
    return launch(ctx, "sift_blur_rows", args, 11, 2, global, local);
}

typedef struct cols_job {
    cl_mem gauss;
    cl_ulong gauss_offset;
    cl_mem dog;
    cl_ulong dog_offset;
    cl_int with_dog;
    cl_mem info;
    cl_int nlevels, stored, max_radius;
} cols_job;

static pv_status blur_cols(pv_context *ctx, cl_sift_plan *plan, const cols_job *job, int o,
                           cl_mem base)
{
    const int wg_x = param(ctx, "SIFT_WG_X"), wg_y = param(ctx, "SIFT_WG_Y");
    const int tile = wg_y * param(ctx, "SIFT_COL_STEPS");
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o];
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->rows}, {sizeof(cl_mem), &base},
        {sizeof(cl_mem), &job->gauss}, {sizeof job->gauss_offset, &job->gauss_offset},
        {sizeof(cl_mem), &job->dog},   {sizeof job->dog_offset, &job->dog_offset},
        {sizeof job->with_dog, &job->with_dog}, {sizeof(cl_mem), &plan->weights},
        {sizeof(cl_mem), &job->info},  {sizeof job->nlevels, &job->nlevels},
        {sizeof job->stored, &job->stored}, {sizeof job->max_radius, &job->max_radius},
        {sizeof w, &w}, {sizeof h, &h},
        {(size_t)wg_x * ((size_t)tile + 2 * (size_t)job->max_radius) * sizeof(float), NULL},
    };
    size_t local[2] = {(size_t)wg_x, (size_t)wg_y};
    size_t global[2] = {(size_t)w, round_up_div((size_t)h, (size_t)tile) * (size_t)wg_y};
    return launch(ctx, "sift_blur_cols", args, 15, 2, global, local);
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
    status = blur_rows(ctx, plan, plan->base, 0, plan->rows, 0, plan->base_info, 1,
                       g->base_radius, 0);
    cols_job job = {plan->base, 0, plan->rows, 0, 0, plan->base_info, 1, 1, g->base_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, 0, plan->rows) : status;
}

static pv_status build_next_base(pv_context *ctx, cl_sift_plan *plan, int o)
{
    const pv_sift_geometry *g = &plan->g;
    cl_ulong src_offset = plan->octaves[o - 1].gauss_offset +
                          (cl_ulong)(g->params.levels - 1) * plane_of(g, o - 1);
    cl_int src_w = g->octave_width[o - 1], w = g->octave_width[o], h = g->octave_height[o];
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->gauss}, {sizeof src_offset, &src_offset}, {sizeof src_w, &src_w},
        {sizeof(cl_mem), &plan->base},  {sizeof w, &w}, {sizeof h, &h},
    };
    size_t local[2] = {(size_t)param(ctx, "SIFT_WG_X"), (size_t)param(ctx, "SIFT_WG_Y")};
    size_t global[2] = {(size_t)w, (size_t)h};
    return launch(ctx, "sift_downsample", args, 6, 2, global, local);
}

static pv_status build_octave(pv_context *ctx, cl_sift_plan *plan, int o)
{
    const cl_int nlevels = plan->g.params.levels + 2;
    pv_status status = blur_rows(ctx, plan, plan->base, 0, plan->rows, 0, plan->level_info,
                                 nlevels, plan->max_radius, o);
    cols_job job = {plan->gauss, plan->octaves[o].gauss_offset, plan->dog,
                    plan->octaves[o].dog_offset, 1, plan->level_info, nlevels,
                    plan->g.params.levels, plan->max_radius};
    return status == PV_OK ? blur_cols(ctx, plan, &job, o, plan->base) : status;
}

static pv_status find_extrema(pv_context *ctx, cl_sift_plan *plan, int o)
{
    cl_ulong dog_offset = plan->octaves[o].dog_offset;
    cl_int w = plan->g.octave_width[o], h = plan->g.octave_height[o], octave = o;
    cl_float threshold = 0.8f * plan->g.params.peak_thresh;
    cl_uint capacity = plan->candidate_capacity;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog}, {sizeof dog_offset, &dog_offset}, {sizeof w, &w},
        {sizeof h, &h}, {sizeof threshold, &threshold}, {sizeof octave, &octave},
        {sizeof(cl_mem), &plan->candidates}, {sizeof(cl_mem), &plan->counters},
        {sizeof capacity, &capacity},
    };
    size_t local[3] = {(size_t)param(ctx, "SIFT_WG_X"), (size_t)param(ctx, "SIFT_WG_Y"), 1};
    size_t global[3] = {(size_t)w, (size_t)h, (size_t)plan->g.params.levels};
    return launch(ctx, "sift_extrema", args, 9, 3, global, local);
}

static pv_status reset_counters(pv_context *ctx, cl_sift_plan *plan)
{
    const cl_uint zero[2] = {0, 0};
    return pv_cl_write(ctx, plan->counters, 0, sizeof zero, zero);
}

/* Every octave's extrema; *count may exceed the list's capacity. */
static pv_status extrema_pass(pv_context *ctx, cl_sift_plan *plan, cl_uint *count)
{
    pv_status status = reset_counters(ctx, plan);
    for (int o = 0; o < plan->g.octaves && status == PV_OK; o++)
        status = find_extrema(ctx, plan, o);
    return status == PV_OK ? pv_cl_read(ctx, plan->counters, 0, sizeof *count, count) : status;
}

static pv_status grow_candidates(pv_context *ctx, cl_sift_plan *plan, cl_uint needed)
{
    pv_cl_release(&plan->candidates);
    plan->candidate_capacity = 0;
    cl_uint capacity = needed < 4096 ? 4096 : needed + needed / 4;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, (size_t)capacity * sizeof(cl_int4),
                                    &plan->candidates);
    if (status == PV_OK)
        plan->candidate_capacity = capacity;
    return status;
}

/* The scale space of every octave, then the complete candidate list. */
static pv_status detect_candidates(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                   cl_uint *count)
{
    pv_status status = PV_OK;
    if (!plan->candidates)
        status = grow_candidates(ctx, plan, 0);
    if (status == PV_OK)
        status = build_first_base(ctx, plan, image);
    for (int o = 0; o < plan->g.octaves && status == PV_OK; o++) {
        if (o > 0)
            status = build_next_base(ctx, plan, o);
        if (status == PV_OK)
            status = build_octave(ctx, plan, o);
    }
    if (status == PV_OK)
        status = extrema_pass(ctx, plan, count);
    /* A truncated list would drop arbitrary extrema: grow and scan again. */
    if (status == PV_OK && *count > plan->candidate_capacity) {
        status = grow_candidates(ctx, plan, *count);
        if (status == PV_OK)
            status = extrema_pass(ctx, plan, count);
    }
    return status;
}

/* -------------------------------------------------------------- keypoints */

static pv_status ensure_keypoint_capacity(pv_context *ctx, cl_sift_plan *plan, size_t needed)
{
    if (needed <= plan->keypoint_capacity)
        return PV_OK;
    if (needed > (size_t)UINT32_MAX / 2)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %zu keypoint slots are too many", needed);
    release_keypoint_buffers(plan);
    size_t capacity = needed < 4096 ? 4096 : needed + needed / 4;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_float4),
                                    &plan->kp_geom);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_float2), &plan->kp_extra);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * sizeof(cl_ulong), &plan->kp_key);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, capacity * DESC_SIZE * sizeof(float),
                              &plan->descriptors);
    if (status == PV_OK)
        plan->keypoint_capacity = (cl_uint)capacity;
    return status;
}

static sift_settings settings_of(const pv_sift_params *p)
{
    sift_settings s = {p->peak_thresh, p->edge_thresh, p->sigma0, p->orientation_window,
                       p->orientation_peak, p->magnif, p->levels};
    return s;
}

static pv_status orient_candidates(pv_context *ctx, cl_sift_plan *plan, cl_uint candidates)
{
    sift_settings set = settings_of(&plan->g.params);
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->dog},        {sizeof(cl_mem), &plan->gauss},
        {sizeof(cl_mem), &plan->octave_table}, {sizeof(cl_mem), &plan->candidates},
        {sizeof candidates, &candidates},    {sizeof set, &set},
        {sizeof(cl_mem), &plan->kp_geom},    {sizeof(cl_mem), &plan->kp_extra},
        {sizeof(cl_mem), &plan->kp_key},     {sizeof(cl_mem), &plan->counters},
    };
    size_t local = (size_t)param(ctx, "SIFT_KP_WG"), global = candidates;
    return launch(ctx, "sift_keypoints", args, 10, 1, &global, &local);
}

static pv_status describe_keypoints(pv_context *ctx, cl_sift_plan *plan, cl_uint count)
{
    cl_float magnif = plan->g.params.magnif;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &plan->gauss},   {sizeof(cl_mem), &plan->octave_table},
        {sizeof(cl_mem), &plan->kp_geom}, {sizeof(cl_mem), &plan->kp_key},
        {sizeof magnif, &magnif},         {sizeof(cl_mem), &plan->descriptors},
    };
    size_t local = 16 * (size_t)param(ctx, "SIFT_DESC_SPLIT"), global = (size_t)count * local;
    return launch(ctx, "sift_descriptors", args, 6, 1, &global, &local);
}

/* ---------------------------------------------------------------- results */

static pv_status alloc_raw(pv_context *ctx, cl_uint count, pv_sift_raw *raw)
{
    size_t n = count > 0 ? count : 1;
    raw->keypoints = malloc(n * sizeof *raw->keypoints);
    raw->keys = malloc(n * sizeof *raw->keys);
    raw->descriptors = malloc(n * DESC_SIZE * sizeof(float));
    if (raw->keypoints && raw->keys && raw->descriptors)
        return PV_OK;
    free(raw->keypoints);
    free(raw->keys);
    free(raw->descriptors);
    memset(raw, 0, sizeof *raw);
    return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %u keypoints", count);
}

/* Octave coordinates to input pixels, with the CPU backend's float steps. */
static void fill_keypoints(const cl_sift_plan *plan, const cl_float4 *geom,
                           const cl_float2 *extra, cl_uint count, pv_sift_raw *raw)
{
    const int first = plan->g.params.first_octave;
    for (cl_uint i = 0; i < count; i++) {
        int o = (int)(raw->keys[i] >> 38);
        float xper = exp2f((float)(o + first));
        raw->keypoints[i] = (pv_sift_keypoint){geom[i].s[0] * xper, geom[i].s[1] * xper,
                                               geom[i].s[2] * xper, geom[i].s[3], extra[i].s[0],
                                               o + first, extra[i].s[1]};
    }
    raw->count = (int)count;
}

static pv_status download_keypoints(pv_context *ctx, cl_sift_plan *plan, cl_uint count,
                                    pv_sift_raw *raw)
{
    cl_float4 *geom = malloc((count ? count : 1) * sizeof *geom);
    cl_float2 *extra = malloc((count ? count : 1) * sizeof *extra);
    pv_status status = geom && extra ? alloc_raw(ctx, count, raw)
                                     : pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for keypoints");
    if (status == PV_OK && count > 0) {
        status = pv_cl_read(ctx, plan->kp_geom, 0, count * sizeof *geom, geom);
        if (status == PV_OK)
            status = pv_cl_read(ctx, plan->kp_extra, 0, count * sizeof *extra, extra);
        if (status == PV_OK)
            status = pv_cl_read(ctx, plan->kp_key, 0, count * sizeof(cl_ulong), raw->keys);
        if (status == PV_OK)
            status = pv_cl_read(ctx, plan->descriptors, 0, (size_t)count * DESC_SIZE * sizeof(float),
                                raw->descriptors);
    }
    if (status == PV_OK)
        fill_keypoints(plan, geom, extra, count, raw);
    else if (raw->keypoints) {
        free(raw->keypoints);
        free(raw->keys);
        free(raw->descriptors);
        memset(raw, 0, sizeof *raw);
    }
    free(geom);
    free(extra);
    return status;
}

static pv_status detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                  pv_sift_raw *raw)
{
    cl_uint candidates = 0, keypoints = 0;
    pv_status status = detect_candidates(ctx, plan, image, &candidates);
    if (status == PV_OK)
        status = ensure_keypoint_capacity(ctx, plan, (size_t)candidates * MAX_ORIENTATIONS);
    if (status == PV_OK && candidates > 0)
        status = orient_candidates(ctx, plan, candidates);
    if (status == PV_OK)
        status = pv_cl_read(ctx, plan->counters, sizeof(cl_uint), sizeof keypoints, &keypoints);
    if (status == PV_OK && keypoints > 0)
        status = describe_keypoints(ctx, plan, keypoints);
    if (status == PV_OK)
        status = download_keypoints(ctx, plan, keypoints, raw);
    return status;
}

pv_status pv_cl_sift_detect(pv_context *ctx, void *opaque, const pv_image *image, pv_sift_raw *raw)
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

static pv_status nearest_on_device(pv_context *ctx, const float *query, cl_int nq,
                                   const float *train, cl_int nt, int *best, float *d1, float *d2)
{
    cl_mem q, t, b, e1, e2;
    pv_status status = upload_descriptors(ctx, "sift.query", query, nq, &q);
    if (status == PV_OK)
        status = upload_descriptors(ctx, "sift.train", train, nt, &t);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.best", (size_t)nq * sizeof(cl_int), &b);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d1", (size_t)nq * sizeof(float), &e1);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d2", (size_t)nq * sizeof(float), &e2);
    if (status != PV_OK)
        return status;
    const kernel_arg args[] = {
        {sizeof(cl_mem), &q}, {sizeof nq, &nq}, {sizeof(cl_mem), &t}, {sizeof nt, &nt},
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
    };
    size_t local = (size_t)param(ctx, "SIFT_MATCH_WG"), global = (size_t)nq;
    status = launch(ctx, "sift_nearest", args, 7, 1, &global, &local);
    if (status == PV_OK)
        status = pv_cl_read(ctx, b, 0, (size_t)nq * sizeof(cl_int), best);
    if (status == PV_OK)
        status = pv_cl_read(ctx, e1, 0, (size_t)nq * sizeof(float), d1);
    if (status == PV_OK)
        status = pv_cl_read(ctx, e2, 0, (size_t)nq * sizeof(float), d2);
    return status;
}

pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2)
{
    return finish(ctx, nearest_on_device(ctx, query, query_count, train, train_count, best,
                                         best_d2, second_d2));
}
