/* OpenCL SIFT: the plan.  Its program (the blur radii and tap offsets are
 * constants of it), kernels and launch shape, looked up once; the scale
 * space buffers with per-octave offsets; the candidate and keypoint lists,
 * grown geometrically when a detection finds them short; the pinned host
 * stage that small inputs and results pass through; and, made by the
 * first batch, the same buffers again with room for a chunk of images side
 * by side. */
#include "features_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_names[K_COUNT] = {
    "sift_prepare_u8", "sift_prepare_f32", "sift_blur_rows", "sift_blur_cols", "sift_blur_tile",
    "sift_extrema",
    "sift_scan", "sift_orient", "sift_block_counts", "sift_scatter", "sift_descriptors",
};


/* The blur weights (the levels', then the base's) as SIFT_WEIGHTS, float
 * literals in hexadecimal, which name every float exactly.  Left out when
 * SIFT_WEIGHT_LITERALS is 0 or when they would not fit in buf (a large
 * sigma0 or many levels: a few thousand taps); the kernels then read them
 * from the plan's weight buffer. */
static void weight_defines(pv_context *ctx, const pv_sift_geometry *g, char *buf, size_t size)
{
    const int base_taps = g->base_radius > 0 ? 2 * g->base_radius + 1 : 0;
    if (!g->level_weights || !pv_cl_param(ctx, "features", "SIFT_WEIGHT_LITERALS", 1))
        return;
    const size_t start = strlen(buf);
    size_t used = start;
    int n = snprintf(buf + used, size - used, " -DSIFT_WEIGHTS=");
    for (int i = 0; i < g->level_taps + base_taps && n >= 0 && (size_t)n < size - used; i++) {
        used += (size_t)n;
        const float w = i < g->level_taps ? g->level_weights[i]
                                          : g->base_weights[i - g->level_taps];
        n = snprintf(buf + used, size - used, "%s%af", i > 0 ? "," : "", (double)w);
    }
    if (n < 0 || (size_t)n >= size - used)
        buf[start] = '\0';
}

/* The blur radii and tap offsets as constants of the plan's program (the
 * kernels unroll their tap loops with them; unused levels get 0), and its
 * weights where they fit. */
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
    weight_defines(ctx, g, buf, size);
    return PV_OK;
}

/* The program for the context's launch parameters, and for a plan's blur
 * constants when g is given (matching has no plan: g NULL). */
pv_status pv_cl_sift_kernel(pv_context *ctx, const pv_sift_geometry *g, const char *name,
                                 cl_kernel *kernel)
{
    char options[PV_CL_OPTIONS_MAX] = "";
    pv_status status = pv_cl_param_defines(ctx, "features", options, sizeof options);
    if (status == PV_OK && g)
        status = blur_defines(ctx, g, options, sizeof options);
    return status == PV_OK ? pv_cl_kernel(ctx, "features", options, name, kernel) : status;
}

static pv_status plan_kernel(pv_context *ctx, const cl_sift_plan *plan, const char *name,
                             cl_kernel *kernel)
{
    return pv_cl_sift_kernel(ctx, &plan->g, name, kernel);
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

/* Everything a plan or its batch buffers hold (the batch's tables are
 * references to its plan's, retained). */
static void release_plan_objects(pv_context *ctx, cl_sift_plan *plan)
{
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
    pv_cl_sift_chain_release(plan);
}

static void release_batch(pv_context *ctx, cl_sift_plan *plan)
{
    for (int i = 0; i < plan->batch_sets; i++)
        release_plan_objects(ctx, &plan->batch[i]);
    free(plan->batch);
    plan->batch = NULL;
    plan->batch_sets = 0;
}

void pv_cl_sift_destroy(pv_context *ctx, void *opaque)
{
    cl_sift_plan *plan = opaque;
    if (!plan)
        return;
    pv_cl_queue_release(&plan->transfer); /* waits for its reads first */
    release_batch(ctx, plan);
    release_plan_objects(ctx, plan);
    free(plan);
}

/* Octave offsets within one image's pyramids (their sizes in floats into
 * plan->dog_floats, gauss_floats) and the first extrema row group of each
 * octave. */
static void layout_octaves(cl_sift_plan *plan)
{
    const pv_sift_geometry *g = &plan->g;
    const int levels = g->params.levels;
    size_t dog = 0, gauss = 0;
    cl_uint rows = 0;
    for (int o = 0; o < g->octaves; o++) {
        plan->octaves[o] =
            (pv_sift_octave_info){g->octave_width[o], g->octave_height[o], dog, gauss};
        plan->row_start[o] = rows;
        dog += plane_of(g, o) * (size_t)(levels + 2);
        gauss += plane_of(g, o) * (size_t)levels;
        rows += (cl_uint)(levels * g->octave_height[o]);
    }
    plan->row_start[g->octaves] = rows;
    plan->dog_floats = dog;
    plan->gauss_floats = gauss;
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

/* The bytes of `per_image` elements of `size` bytes for each of the
 * plan's images. */
static pv_status bytes_of(pv_context *ctx, const cl_sift_plan *plan, size_t per_image,
                         size_t size, size_t *bytes)
{
    size_t each;
    if (!pv_size_mul(per_image, size, &each) || !pv_size_mul(each, (size_t)plan->images, bytes))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift: the scale space size overflows");
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
    if (!pv_size_mul(plan->mask_pitch, plan->row_start[plan->g.octaves], &masks))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_plan_create: the extrema masks overflow");
    pv_status status = bytes_of(ctx, plan, masks, sizeof(cl_uint), &bytes);
    return status == PV_OK ? pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &plan->ext_masks)
                           : status;
}

/* One buffer of per_image elements of `size` bytes per image. */
static pv_status alloc_per_image(pv_context *ctx, const cl_sift_plan *plan, cl_mem_flags flags,
                                 size_t per_image, size_t size, cl_mem *buffer)
{
    size_t bytes;
    pv_status status = bytes_of(ctx, plan, per_image, size, &bytes);
    return status == PV_OK ? pv_cl_buffer(ctx, flags, bytes, buffer) : status;
}

/* The scale space and extrema bookkeeping of plan->images images. */
static pv_status alloc_pyramids(pv_context *ctx, cl_sift_plan *plan)
{
    const pv_sift_geometry *g = &plan->g;
    const size_t plane0 = plane_of(g, 0), f = sizeof(float);
    const cl_mem_flags rw = CL_MEM_READ_WRITE;
    layout_octaves(plan);
    pv_status status =
        alloc_per_image(ctx, plan, rw, plane0 * (size_t)(g->params.levels + 2), f, &plan->rows);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, plane0, f, &plan->base);
    if (status == PV_OK) /* room for f32 input, the widest that goes up as it is */
        status = alloc_per_image(ctx, plan, CL_MEM_READ_ONLY,
                                 (size_t)g->width * (size_t)g->height, f, &plan->input);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, plan->dog_floats, f, &plan->dog);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, plan->gauss_floats, f, &plan->gauss);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, plan->gauss_floats, 2 * f, &plan->grad);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, 2, sizeof(cl_uint), &plan->counters);
    if (status == PV_OK)
        status = alloc_per_image(ctx, plan, rw, plan->row_start[g->octaves], sizeof(cl_uint),
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
                                        "SIFT_ORI_WG", "SIFT_ORI_GROUPS", "SIFT_TILE_GROUPS"};
    int *fields[] = {&plan->shape.wg_x, &plan->shape.wg_y, &plan->shape.row_steps,
                     &plan->shape.col_steps, &plan->shape.ext_wg, &plan->shape.ext_run,
                     &plan->shape.scan_wg, &plan->shape.kp_wg, &plan->shape.desc_split,
                     &plan->shape.ori_wg, &plan->shape.ori_groups, &plan->shape.tile_groups};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        *fields[i] = pv_cl_param(ctx, "features", names[i], 1);
    pv_status status = PV_OK;
    for (int k = 0; k < K_COUNT && status == PV_OK; k++)
        status = plan_kernel(ctx, plan, kernel_names[k], &plan->kernels[k]);
    return status;
}

pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out)
{
    cl_sift_plan *plan = pv_plan_new(ctx, sizeof *plan, "the OpenCL SIFT plan");
    if (!plan)
        return PV_ERR_NOMEM;
    plan->g = *geometry;
    plan->images = 1;
    plan->input_room = STAGE_MAX;
    pv_status status = load_shape_and_kernels(ctx, plan); /* with the caller's weights */
    plan->g.base_weights = plan->g.level_weights = NULL; /* then only on the device */
    if (status == PV_OK)
        status = alloc_pyramids(ctx, plan);
    if (status == PV_OK)
        status = upload_tables(ctx, plan, geometry);
    if (status == PV_OK)
        status = check_local_memory(ctx, plan);
    status = pv_cl_sift_finish(ctx, status);
    if (status != PV_OK) {
        pv_cl_sift_destroy(ctx, plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

pv_status pv_cl_sift_ensure_stage(pv_context *ctx, cl_sift_plan *plan, size_t bytes)
{
    if (bytes <= plan->stage_bytes)
        return PV_OK;
    release_stage(ctx, plan);
    const size_t limit = pv_cl_sift_stage_limit(plan);
    size_t want = (size_t)plan->keypoint_capacity * (size_t)plan->images * RESULT_BYTES;
    want = want < limit ? want : limit;
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

/* ------------------------------------------------------------- capacities */

pv_status pv_cl_sift_grow_candidates(pv_context *ctx, cl_sift_plan *plan, size_t needed)
{
    if (needed > (size_t)UINT32_MAX / 8 / (size_t)plan->images)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %zu candidates are too many", needed);
    release_candidate_buffers(plan);
    size_t kp_wg = (size_t)plan->shape.kp_wg;
    size_t capacity = round_up_div(needed, kp_wg) * kp_wg;
    const size_t all = capacity * (size_t)plan->images; /* no overflow: checked above */
    const pv_cl_buffer_spec specs[] = {
        {&plan->candidates, all * sizeof(cl_int4)},
        {&plan->cand_geom, all * sizeof(cl_float4)},
        {&plan->cand_scale, all * sizeof(cl_float)},
        {&plan->cand_angles, all * sizeof(cl_float4)},
        {&plan->cand_count, all * sizeof(cl_uint)},
        {&plan->block_sums, all / kp_wg * sizeof(cl_uint)},
    };
    pv_status status = pv_cl_buffers(ctx, specs, sizeof specs / sizeof specs[0]);
    if (status == PV_OK)
        plan->candidate_capacity = (cl_uint)capacity;
    return status;
}

pv_status pv_cl_sift_grow_keypoints(pv_context *ctx, cl_sift_plan *plan, size_t needed)
{
    if (needed > (size_t)UINT32_MAX / 8 / (size_t)plan->images)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %zu keypoint slots are too many", needed);
    release_keypoint_buffers(plan);
    const size_t all = needed * (size_t)plan->images; /* no overflow: checked above */
    const pv_cl_buffer_spec specs[] = {
        {&plan->records, all * sizeof(pv_sift_keypoint)},
        {&plan->kp_key, all * sizeof(cl_ulong)},
        {&plan->kp_geom, all * sizeof(cl_float4)},
        {&plan->descriptors, all * DESC_SIZE * sizeof(float)},
    };
    pv_status status = pv_cl_buffers(ctx, specs, sizeof specs / sizeof specs[0]);
    if (status == PV_OK)
        plan->keypoint_capacity = (cl_uint)needed;
    return status;
}

/* First sizes from the first octave's area (natural images give about one
 * candidate per 250 pixels and one keypoint per 500); a detection that
 * finds more grows them (by a quarter more than it found) and runs again,
 * so a plan settles after its first call. */
pv_status pv_cl_sift_initial_capacities(pv_context *ctx, cl_sift_plan *plan)
{
    const size_t area = plane_of(&plan->g, 0);
    pv_status status = PV_OK;
    if (!plan->candidate_capacity)
        status = pv_cl_sift_grow_candidates(ctx, plan, area / 128 > 1024 ? area / 128 : 1024);
    if (status == PV_OK && !plan->keypoint_capacity)
        status = pv_cl_sift_grow_keypoints(ctx, plan, area / 256 > 1024 ? area / 256 : 1024);
    return status;
}


/* ---------------------------------------------------------- batch buffers */

size_t pv_cl_sift_stage_limit(const cl_sift_plan *plan)
{
    return plan->images > 1 ? BATCH_STAGE_MAX : STAGE_MAX;
}

pv_status pv_cl_sift_grow_to(pv_context *ctx, cl_sift_plan *plan, size_t candidates,
                             size_t keypoints)
{
    pv_status status = PV_OK;
    if (plan->candidate_capacity < candidates)
        status = pv_cl_sift_grow_candidates(ctx, plan, candidates);
    if (status == PV_OK && plan->keypoint_capacity < keypoints)
        status = pv_cl_sift_grow_keypoints(ctx, plan, keypoints);
    return status;
}

/* Batch buffers for `images` images: the plan's geometry, launch shape,
 * kernels (set and enqueued one launch at a time on the context's queue,
 * so shared) and tables (retained), with a scale space, lists and stage
 * of their own. */
static pv_status make_batch(pv_context *ctx, const cl_sift_plan *plan, int images,
                            cl_sift_plan *batch)
{
    memset(batch, 0, sizeof *batch);
    batch->g = plan->g;
    batch->images = images;
    batch->shape = plan->shape;
    memcpy(batch->kernels, plan->kernels, sizeof batch->kernels);
    batch->max_radius = plan->max_radius;
    cl_mem *shared[][2] = {{&batch->weights, (cl_mem *)&plan->weights},
                           {&batch->octave_table, (cl_mem *)&plan->octave_table},
                           {&batch->row_table, (cl_mem *)&plan->row_table}};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
        clRetainMemObject(*shared[i][1]);
        *shared[i][0] = *shared[i][1];
    }
    pv_status status = alloc_pyramids(ctx, batch); /* the plan's layout again */
    if (status == PV_OK)
        status = pv_cl_sift_grow_candidates(ctx, batch, plan->candidate_capacity);
    if (status == PV_OK)
        status = pv_cl_sift_grow_keypoints(ctx, batch, plan->keypoint_capacity);
    batch->last_count = plan->last_count;
    /* The stage: the counts, room for the inputs (f32 ones when they fit
     * BATCH_STAGE_MAX, else u8 ones, else none: they are written
     * directly), the results; made now so that packing the next inputs
     * never moves it while results are on their way into it. */
    const size_t pixels = (size_t)images * (size_t)batch->g.width * (size_t)batch->g.height;
    const size_t inputs = pixels * sizeof(float) <= BATCH_STAGE_MAX ? pixels * sizeof(float)
                          : pixels <= BATCH_STAGE_MAX                ? pixels
                                                                     : 0;
    batch->input_at = round_up_div(2 * (size_t)images * sizeof(cl_uint), 64) * 64;
    batch->input_room = round_up_div(inputs, 64) * 64;
    batch->result_at = batch->input_at + batch->input_room;
    if (status == PV_OK)
        status = pv_cl_sift_ensure_stage(ctx, batch, batch->result_at);
    if (status != PV_OK)
        release_plan_objects(ctx, batch);
    return status;
}

pv_status pv_cl_sift_ensure_batch(pv_context *ctx, cl_sift_plan *plan, int images, int sets)
{
    if (!plan->transfer) {
        pv_status status = pv_cl_queue_create(ctx, &plan->transfer);
        if (status != PV_OK)
            return status;
    }
    if (plan->batch && (plan->batch_sets < sets || plan->batch[0].images < images))
        release_batch(ctx, plan);
    if (!plan->batch) {
        plan->batch = calloc((size_t)sets, sizeof *plan->batch);
        if (!plan->batch)
            return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: out of memory");
    }
    pv_status status = PV_OK;
    while (plan->batch_sets < sets && status == PV_OK) {
        status = make_batch(ctx, plan, images, &plan->batch[plan->batch_sets]);
        if (status == PV_OK)
            plan->batch_sets++;
    }
    if (status != PV_OK && plan->batch_sets == 0)
        release_batch(ctx, plan);
    for (int i = 0; i < plan->batch_sets && status == PV_OK; i++)
        status = pv_cl_sift_grow_to(ctx, &plan->batch[i], plan->candidate_capacity,
                                    plan->keypoint_capacity);
    return status;
}

void pv_cl_sift_slot_bytes(const cl_sift_plan *plan, size_t *total, size_t *largest)
{
    const pv_sift_geometry *g = &plan->g;
    const size_t plane0 = plane_of(g, 0), f = sizeof(float);
    const size_t grad = plan->gauss_floats * 2 * f;
    const size_t planes = plane0 * (size_t)(g->params.levels + 3) +
                          (size_t)g->width * (size_t)g->height + plan->dog_floats +
                          plan->gauss_floats;
    const size_t masks = (size_t)plan->mask_pitch * plan->row_start[g->octaves] * sizeof(cl_uint);
    const size_t lists = (size_t)plan->candidate_capacity * 56 +
                         (size_t)plan->keypoint_capacity * (RESULT_BYTES + sizeof(cl_float4));
    const size_t descriptors = (size_t)plan->keypoint_capacity * DESC_SIZE * f;
    *total = planes * f + grad + masks + lists;
    *largest = grad > descriptors ? grad : descriptors;
}
