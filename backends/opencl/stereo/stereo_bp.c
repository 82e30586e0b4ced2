/* OpenCL hierarchical belief propagation: host side of
 * kernels/stereo_bp.cl.
 *
 * One upload of each image and one download of the disparity map per
 * call; the smoothed images, the data-cost pyramid and the messages of
 * every level and round stay on the device.  Buffers are per-context
 * scratch slots, so repeated calls on one size allocate nothing.  Per tile:
 * the finest data costs with up to four coarser levels (one launch,
 * bp_data_pyramid), one launch per further level, then from the coarsest
 * level: the levels small enough for one work-group in a single launch
 * (all their rounds, BP_SMALL_LEVEL_PIXELS), and for each larger level one
 * launch per round, the first also handing the messages down from the
 * coarser level.  Without smoothing the data costs read the uploaded
 * pixels directly.  A tile with the cooperative update (stereo_bp_coop.c)
 * runs its own data-cost, round and read-out kernels.
 *
 * The message array being computed is split between registers, local
 * memory and spilled private memory by the launch parameters BP_REG_VALUES
 * and BP_LOCAL_VALUES (the paper's hybrid), within the device's local
 * memory; the tuner searches them with the work-group shape.  For wide
 * ranges, where most of that array spills, BP_FUSED_PASSES and
 * BP_DIR_ITEMS change how a round walks it without changing a bit of
 * the result, and the job's message precision (the caller's choice) how
 * messages are stored (docs/bp-at-scale.md).
 *
 * Host overhead (a small image's call is mostly launch latency): the
 * hand-down of messages to a level runs fused with the level's first round
 * (bp_round_inherit), so a level costs `iterations` launches; kernels are
 * looked up once per call, and the per-level arguments of bp_round are set
 * once per level (only the colour changes between rounds).  Uploads are
 * not blocking; the only wait is the final download, through the
 * runtime's pinned stages.  The launches are timed as one run (two
 * profiling events, not one per launch: docs/timing.md); explicit clFlush
 * calls between levels gained nothing measurable on an H200.
 *
 * Size classes: BP_NDISP_CLASS (set by the tuner to the class of its
 * workload's ndisp, 0 = every ndisp) limits the family's tuned values to
 * jobs of that class; other jobs run with the defaults of this table. */
#include "stereo_bp_host.h"
#include "../../common/bp_scan_math.h" /* pv_bp_scan_lanes */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const pv_cl_param_default bp_defaults[] = {
    {"BP_WG_X", 32},               /* work-items of a group along x (half-columns)   */
    {"BP_WG_Y", 4},                /* rows of a group                                */
    {"BP_REG_VALUES", 32},         /* message values kept in registers (at most)     */
    {"BP_LOCAL_VALUES", 0},        /* message values per item in local memory (most) */
    {"BP_SMALL_LEVEL_PIXELS", 2048}, /* levels this small run in one work-group      */
    /* The next two default to the schedule that measured fastest on a GPU
     * (H100, Cones 900x750/256: 74.5 ms against 106.9 ms with 0 and 1; on
     * PoCL 1 and 4 were 20 % slower, so its database entry keeps 0 and 1). */
    {"BP_FUSED_PASSES", 1},        /* 1: five passes over a message array, not eight */
    {"BP_DIR_ITEMS", 4},           /* work-items per pixel in bp_round: 1, or 4 (one
                                      per direction)                                  */
    /* The cooperative update (PV_BP_UPDATE_COOPERATIVE) only: bp_round_coop's
     * group is BP_COOP_PIXELS pixels x BP_COOP_LANES work-items per pixel
     * (a power of two; halved for small ranges until every work-item has
     * at least two values). */
    {"BP_COOP_PIXELS", 8},         /* pixels of a row per group (8: whole sectors) */
    {"BP_COOP_LANES", 32},         /* work-items per pixel, power of two <= 256      */
    {"BP_COOP_ROWS", 1},           /* rows a bp_round_coop group updates one after the
                                      other, the next row's loads in flight during this
                                      row's scans (1 .. 16)                           */
    {"BP_NDISP_CLASS", 0},         /* the values above apply to: 0 every ndisp,
                                      1 ndisp <= 96, 2 ndisp > 96 (pv_bp_ndisp_class) */
};

const pv_cl_param_family pv_cl_params_bp = {
    "bp", bp_defaults, sizeof bp_defaults / sizeof bp_defaults[0]};

static const char *const kernel_names[K_COUNT] = {
    "bp_smooth_rows",  "bp_smooth_cols",    "bp_data_cost",     "bp_data_pyramid",
    "bp_data_coarsen", "bp_small_levels",   "bp_messages_start", "bp_round",
    "bp_round_inherit", "bp_disparity",      "bp_round_coop",     "bp_round_coop_first",
    "bp_data_second_level", "bp_data_halve", "bp_disparity_coop", "bp_round_coop_readout",
    "bp_round_coop_fine", "bp_round_coop_first_fine",
};

static int bp_default(const char *name)
{
    for (size_t i = 0; i < sizeof bp_defaults / sizeof bp_defaults[0]; i++)
        if (strcmp(bp_defaults[i].name, name) == 0)
            return bp_defaults[i].value;
    return 0;
}

/* A parameter of the family for a job of ndisp disparities: the tuned (or
 * overridden) value when the family's values apply to ndisp's class, else
 * the default. */
static int bp_param(pv_context *ctx, const char *name, int ndisp)
{
    const int cls = pv_cl_param(ctx, "bp", "BP_NDISP_CLASS", 0);
    if (cls != 0 && cls != pv_bp_ndisp_class(ndisp))
        return bp_default(name);
    return pv_cl_param(ctx, "bp", name, bp_default(name));
}

/* ---------------------------------------------------------------- geometry */

level_size pv_cl_bp_level_of(const pv_bp_tile *tile, int level)
{
    level_size s = {tile->width, tile->height, 0};
    for (int l = 0; l < level; l++) {
        s.width = (s.width + 1) / 2;
        s.height = (s.height + 1) / 2;
    }
    s.plane = ((size_t)(s.width + 1) / 2 + 2) * ((size_t)s.height + 2);
    return s;
}

size_t pv_cl_bp_data_offset(const pv_bp_job *job, const pv_bp_tile *tile, int level)
{
    size_t offset = 0;
    for (int l = job->cooperative ? 1 : 0; l < level; l++)
        offset += 2 * (size_t)job->ndisp * pv_cl_bp_level_of(tile, l).plane;
    return offset;
}

/* Element counts of the pyramid and of each message level, for the
 * largest tile of the job. */
static void buffer_elements(const pv_bp_job *job, size_t *data, size_t *msgs)
{
    *data = msgs[0] = msgs[1] = 0;
    for (int t = 0; t < job->tile_count; t++) {
        const pv_bp_tile *tile = &job->tiles[t];
        size_t pyramid = pv_cl_bp_data_offset(job, tile, tile->levels);
        if (pyramid > *data)
            *data = pyramid;
        for (int l = 0; l < 2 && l < tile->levels; l++) {
            size_t count = 8 * (size_t)job->ndisp * pv_cl_bp_level_of(tile, l).plane;
            if (count > msgs[l])
                msgs[l] = count;
        }
    }
}

/* ------------------------------------------------------------------ plan */

/* Split of the message array: registers first, then local memory as far
 * as the device's local memory allows, the rest in private memory. */
static void split_storage(pv_context *ctx, bp_plan *plan, int ndisp)
{
    const int reg = plan->reg_values, loc = plan->local_values;
    plan->nreg = reg < 0 ? 0 : reg < ndisp ? reg : ndisp;
    plan->nloc = loc < 0 ? 0 : loc < ndisp - plan->nreg ? loc : ndisp - plan->nreg;
    const size_t items = (size_t)plan->wg_x * (size_t)plan->wg_y;
    const size_t local = (size_t)pv_cl_device_info(ctx)->local_memory;
    while (plan->nloc > 0 && (size_t)plan->nloc * items * sizeof(cl_float) > local)
        plan->nloc--;
    plan->npriv = ndisp - plan->nreg - plan->nloc;
}

/* bp_round_coop's group: BP_COOP_LANES a power of two in 1 .. 256, the
 * group within the device's size, its exchange buffers (16 floats per
 * work-item) within its local memory. */
static pv_status check_coop_shape(pv_context *ctx, const bp_plan *plan)
{
    const int lanes = plan->coop_lanes, pixels = plan->coop_pixels;
    const int power_of_two = lanes >= 1 && lanes <= 256 && (lanes & (lanes - 1)) == 0;
    const long long items = power_of_two && pixels >= 1 ? (long long)lanes * pixels : 0;
    if (plan->coop_rows < 1 || plan->coop_rows > 16)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: launch parameter bp.BP_COOP_ROWS %d is not in 1..16",
                       plan->coop_rows);
    if (items < 1 || items > pv_cl_device_info(ctx)->max_work_group_size ||
        (unsigned long long)items * 16 * sizeof(cl_float) >
            (unsigned long long)pv_cl_device_info(ctx)->local_memory)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: launch parameters bp.BP_COOP_PIXELS %d x bp.BP_COOP_LANES %d "
                       "(a power of two <= 256) do not fit %s (at most %d work-items per group, "
                       "16 floats of local memory each)",
                       pixels, lanes, pv_cl_device_info(ctx)->name,
                       pv_cl_device_info(ctx)->max_work_group_size);
    return PV_OK;
}

/* The lanes for ndisp values: BP_COOP_LANES, halved while a lane would hold
 * fewer than two values. */
static void fit_coop_lanes(bp_plan *plan, int ndisp)
{
    while (plan->coop_lanes > 1 && 2 * plan->coop_lanes > ndisp)
        plan->coop_lanes >>= 1;
    plan->coop_values = (ndisp + plan->coop_lanes - 1) / plan->coop_lanes;
}

/* A bound on every h of the cooperative passes: the coarsest level's data
 * cost (4^(levels - 1) pixel costs of at most lambda data_max each, with
 * room for the sums' rounding) plus three messages (each within disc_max
 * of zero, with room for the half rounding). */
static double coop_h_bound(const pv_bp_job *job)
{
    int levels = 1;
    for (int i = 0; i < job->tile_count; i++)
        levels = job->tiles[i].levels > levels ? job->tiles[i].levels : levels;
    const double pixel = (double)job->lambda * (double)job->data_max;
    const double data = ldexp(pixel, 2 * (levels - 1)) * (1.0 + 0x1p-10);
    return data + 3.0 * (double)job->disc_max * (1.0 + 0x1p-10) + 1.0;
}

/* The lanes the cooperative scans reach: fewer than all when disc_max
 * makes far values irrelevant (pv_bp_scan_lanes says when). */
static void fit_coop_scan(bp_plan *plan, const pv_bp_job *job)
{
    plan->coop_scan_lanes = pv_bp_scan_lanes(plan->coop_lanes, plan->coop_values,
                                             coop_h_bound(job), (double)job->disc_max);
}

static pv_status check_shape(pv_context *ctx, bp_plan *plan)
{
    const long long items = (long long)plan->wg_x * plan->wg_y;
    if (plan->wg_x < 1 || plan->wg_y < 1 || items > pv_cl_device_info(ctx)->max_work_group_size)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: launch parameters bp.BP_WG_X x BP_WG_Y = %dx%d do not fit %s "
                       "(at most %d work-items per group)",
                       plan->wg_x, plan->wg_y, pv_cl_device_info(ctx)->name,
                       pv_cl_device_info(ctx)->max_work_group_size);
    if ((plan->fused_passes != 0 && plan->fused_passes != 1) ||
        (plan->dir_items != 1 && plan->dir_items != 4))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_bp: launch parameters bp.BP_FUSED_PASSES %d (0 or 1) or "
                       "bp.BP_DIR_ITEMS %d (1 or 4) out of range",
                       plan->fused_passes, plan->dir_items);
    return plan->cooperative ? check_coop_shape(ctx, plan) : PV_OK;
}

static pv_status plan_options(pv_context *ctx, bp_plan *plan, const pv_image *left, int ndisp,
                              int from_smoothed)
{
    int n = snprintf(plan->options, sizeof plan->options,
                     " -DBP_WG_X=%d -DBP_WG_Y=%d -DBP_REG_VALUES=%d -DBP_LOCAL_VALUES=%d"
                     " -DBP_SMALL_LEVEL_PIXELS=%d"
                     " -DBP_NDISP=%d -DBP_NREG=%d -DBP_NLOC=%d -DBP_NPRIV=%d -DBP_PIXEL_U8=%d"
                     " -DBP_COST_FROM_RAW=%d -DBP_FUSED_PASSES=%d -DBP_DIR_ITEMS=%d"
                     " -DBP_HALF_MESSAGES=%d",
                     plan->wg_x, plan->wg_y, plan->reg_values, plan->local_values,
                     plan->small_pixels, ndisp, plan->nreg, plan->nloc, plan->npriv,
                     left->type == PV_PIXEL_U8, !from_smoothed, plan->fused_passes,
                     plan->dir_items, plan->half_messages);
    if (n >= 0 && (size_t)n < sizeof plan->options && plan->cooperative)
        n += snprintf(plan->options + n, sizeof plan->options - (size_t)n,
                      " -DBP_COOP_PIXELS=%d -DBP_COOP_LANES=%d -DBP_COOP_VALUES=%d"
                      " -DBP_COOP_ROWS=%d -DBP_COOP_SCAN_LANES=%d",
                      plan->coop_pixels, plan->coop_lanes, plan->coop_values, plan->coop_rows,
                      plan->coop_scan_lanes);
    if (n < 0 || (size_t)n >= sizeof plan->options)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_bp: kernel options overflow");
    return PV_OK;
}

static pv_status make_plan(pv_context *ctx, const pv_image *left, const pv_bp_job *job,
                           bp_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    const int ndisp = job->ndisp;
    plan->wg_x = bp_param(ctx, "BP_WG_X", ndisp);
    plan->wg_y = bp_param(ctx, "BP_WG_Y", ndisp);
    plan->reg_values = bp_param(ctx, "BP_REG_VALUES", ndisp);
    plan->local_values = bp_param(ctx, "BP_LOCAL_VALUES", ndisp);
    plan->small_pixels = bp_param(ctx, "BP_SMALL_LEVEL_PIXELS", ndisp);
    plan->fused_passes = bp_param(ctx, "BP_FUSED_PASSES", ndisp);
    plan->dir_items = bp_param(ctx, "BP_DIR_ITEMS", ndisp);
    plan->half_messages = job->half_messages;
    plan->cooperative = job->cooperative;
    plan->coop_pixels = bp_param(ctx, "BP_COOP_PIXELS", ndisp);
    plan->coop_lanes = bp_param(ctx, "BP_COOP_LANES", ndisp);
    plan->coop_rows = bp_param(ctx, "BP_COOP_ROWS", ndisp);
    pv_status status = check_shape(ctx, plan);
    if (status != PV_OK)
        return status;
    fit_coop_lanes(plan, ndisp);
    fit_coop_scan(plan, job);
    split_storage(ctx, plan, job->ndisp);
    plan->local[0] = (size_t)plan->wg_x;
    plan->local[1] = (size_t)plan->wg_y;
    plan->local[2] = 1;
    pv_log(ctx, "stereo_bp: groups of %dx%d, message array %d registers + %d local + %d private, "
                "%s passes, %d item(s) per pixel, %s messages",
           plan->wg_x, plan->wg_y, plan->nreg, plan->nloc, plan->npriv,
           plan->fused_passes ? "five" : "eight", plan->dir_items,
           plan->half_messages ? "f16" : "f32");
    if (plan->cooperative)
        pv_log(ctx, "stereo_bp: cooperative update, groups of %d pixels x %d work-items, %d "
                    "values each, %d row(s) per group, scans reaching %d lanes",
               plan->coop_pixels, plan->coop_lanes, plan->coop_values, plan->coop_rows,
               plan->coop_scan_lanes);
    return plan_options(ctx, plan, left, job->ndisp, job->weights != NULL);
}

/* --------------------------------------------------------------- buffers */

/* A scratch buffer of count elements of `size` bytes, indexable with int. */
static pv_status sized_buffer(pv_context *ctx, const char *slot, size_t count, size_t size,
                              cl_mem *buffer)
{
    size_t bytes;
    if (count > (size_t)INT_MAX || !pv_size_mul(count, size, &bytes))
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                       "stereo_bp: %zu elements in one buffer exceed what the kernels index; "
                       "use tiles (params.tile_width/tile_height or memory_budget)",
                       count);
    return pv_cl_scratch(ctx, slot, bytes, buffer);
}

static pv_status float_buffer(pv_context *ctx, const char *slot, size_t count, cl_mem *buffer)
{
    return sized_buffer(ctx, slot, count, sizeof(cl_float), buffer);
}

static pv_status get_buffers(pv_context *ctx, const pv_image *left, const pv_bp_job *job,
                             bp_buffers *b)
{
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    const size_t raw = pixels * pv_pixel_size(left->type);
    size_t data, msgs[2];
    buffer_elements(job, &data, msgs);
    pv_status status = pv_cl_scratch(ctx, "bp.raw_left", raw, &b->raw_left);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "bp.raw_right", raw, &b->raw_right);
    if (status == PV_OK && job->weights)
        status = float_buffer(ctx, "bp.left", pixels, &b->left);
    if (status == PV_OK && job->weights)
        status = float_buffer(ctx, "bp.right", pixels, &b->right);
    if (status == PV_OK && job->weights)
        status = float_buffer(ctx, "bp.tmp", 2 * pixels, &b->tmp);
    if (status == PV_OK && job->weights)
        status = float_buffer(ctx, "bp.weights", 2 * (size_t)job->radius + 1, &b->weights);
    if (status == PV_OK)
        status = float_buffer(ctx, "bp.data", data ? data : 1, &b->data);
    /* messages: f32, or half (cl_half) when the job asks for it */
    const size_t message = job->half_messages ? sizeof(cl_half) : sizeof(cl_float);
    if (status == PV_OK)
        status = sized_buffer(ctx, "bp.msgs0", msgs[0], message, &b->msgs[0]);
    if (status == PV_OK)
        status = sized_buffer(ctx, "bp.msgs1", msgs[1] ? msgs[1] : 1, message, &b->msgs[1]);
    if (status == PV_OK)
        status = float_buffer(ctx, "bp.disparity", pixels, &b->disparity);
    return status;
}

/* ---------------------------------------------------------------- kernels */

pv_status pv_cl_bp_kernel_of(pv_context *ctx, bp_plan *plan, int which, cl_kernel *kernel)
{
    if (!plan->kernels[which]) {
        pv_status status = pv_cl_kernel(ctx, "stereo_bp", plan->options, kernel_names[which],
                                        &plan->kernels[which]);
        if (status != PV_OK)
            return status;
    }
    *kernel = plan->kernels[which];
    return PV_OK;
}

pv_status pv_cl_bp_launch_in(pv_context *ctx, bp_plan *plan, int which, const pv_cl_arg_list *a,
                             cl_uint dims, const size_t *global, const size_t *local)
{
    cl_kernel kernel;
    pv_status status = pv_cl_bp_kernel_of(ctx, plan, which, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, a->item, a->count, dims, global, local)
                           : status;
}

pv_status pv_cl_bp_launch(pv_context *ctx, bp_plan *plan, int which, const pv_cl_arg_list *a,
                          size_t gx, size_t gy)
{
    const size_t global[2] = {gx ? gx : 1, gy ? gy : 1};
    return pv_cl_bp_launch_in(ctx, plan, which, a, 2, global, plan->local);
}

/* The inputs go up through the runtime's pinned stages without a wait:
 * from the caller's pageable memory the driver delayed the first kernel by
 * most of a millisecond on a Venus-sized pair. */
static pv_status upload_inputs(pv_context *ctx, const pv_image *left, const pv_image *right,
                               const pv_bp_job *job, const bp_buffers *b)
{
    const pv_image *images[2] = {left, right};
    const cl_mem buffers[2] = {b->raw_left, b->raw_right};
    pv_status status = PV_OK;
    for (int i = 0; i < 2 && status == PV_OK; i++) {
        const size_t pixel = pv_pixel_size(images[i]->type);
        status = pv_cl_write_rows_staged(ctx, buffers[i], (size_t)images[i]->height,
                                         (size_t)images[i]->width * pixel,
                                         (size_t)images[i]->stride * pixel, images[i]->data);
    }
    if (status == PV_OK && job->weights)
        status = pv_cl_write_rows_staged(ctx, b->weights, 1,
                                         (2 * (size_t)job->radius + 1) * sizeof(cl_float),
                                         (2 * (size_t)job->radius + 1) * sizeof(cl_float),
                                         job->weights);
    return status;
}

/* One smoothing pass: three buffers (rows: both inputs to the temporary;
 * columns: the temporary to both outputs), then the taps and the size. */
static pv_status smooth_pass(pv_context *ctx, bp_plan *plan, int which, const cl_mem *buffers,
                             const bp_buffers *b, const pv_image *left, cl_int radius)
{
    const cl_mem *const inputs[4] = {&buffers[0], &buffers[1], &buffers[2], &b->weights};
    const cl_int sizes[3] = {radius, left->width, left->height};
    pv_cl_arg_list a = {.count = 0};
    pv_cl_args_buffers(&a, inputs, 4);
    pv_cl_args_ints(&a, sizes, 3);
    return pv_cl_bp_launch(ctx, plan, which, &a, (size_t)left->width, (size_t)left->height);
}

/* The smoothed f32 images (without smoothing, the data costs read the
 * uploaded pixels directly). */
static pv_status prepare_images(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                const pv_bp_job *job, const bp_buffers *b)
{
    if (!job->weights)
        return PV_OK;
    const cl_mem rows[3] = {b->raw_left, b->raw_right, b->tmp};
    const cl_mem cols[3] = {b->tmp, b->left, b->right};
    pv_status status = smooth_pass(ctx, plan, K_SMOOTH_ROWS, rows, b, left, job->radius);
    return status == PV_OK ? smooth_pass(ctx, plan, K_SMOOTH_COLS, cols, b, left, job->radius)
                           : status;
}

/* Side of the largest square group (a power of two, at most 16: four
 * coarser levels) that bp_data_pyramid can run on this device. */
static pv_status pyramid_side(pv_context *ctx, bp_plan *plan, int *side)
{
    cl_kernel kernel;
    pv_status status = pv_cl_bp_kernel_of(ctx, plan, K_DATA_PYRAMID, &kernel);
    if (status != PV_OK)
        return status;
    size_t fits = 0;
    if (clGetKernelWorkGroupInfo(kernel, pv_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE, sizeof fits,
                                 &fits, NULL) != CL_SUCCESS)
        fits = 1;
    if (fits > (size_t)pv_cl_device_info(ctx)->max_work_group_size)
        fits = (size_t)pv_cl_device_info(ctx)->max_work_group_size;
    *side = 16;
    while (*side > 1 && (size_t)*side * (size_t)*side > fits)
        *side /= 2;
    return PV_OK;
}

/* Coarser levels fused .. levels-1 from the level above, one launch each. */
static pv_status coarsen_levels(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                                const pv_bp_tile *tile, const bp_buffers *b, int fused)
{
    pv_status status = PV_OK;
    for (int level = fused + 1; status == PV_OK && level < tile->levels; level++) {
        level_size coarse;
        pv_cl_arg_list c = {.count = 0};
        pv_cl_bp_coarsen_args(&c, job, tile, b, level, &coarse);
        status = pv_cl_bp_launch(ctx, plan, K_DATA_COARSEN, &c, (size_t)coarse.width,
                                 (size_t)coarse.height);
    }
    return status;
}

/* The data-cost kernels' first ten arguments: the images the costs read,
 * the image's width, the tile's place and size, the range's start,
 * lambda and data_max, the pyramid. */
void pv_cl_bp_coarsen_args(pv_cl_arg_list *a, const pv_bp_job *job, const pv_bp_tile *tile,
                           const bp_buffers *b, int level, level_size *coarse)
{
    const level_size fine = pv_cl_bp_level_of(tile, level - 1);
    const cl_int values[4] = {(cl_int)pv_cl_bp_data_offset(job, tile, level - 1), fine.width,
                              fine.height, (cl_int)pv_cl_bp_data_offset(job, tile, level)};
    pv_cl_args_add(a, sizeof(cl_mem), &b->data);
    pv_cl_args_ints(a, values, 4);
    *coarse = pv_cl_bp_level_of(tile, level);
}

void pv_cl_bp_cost_args(pv_cl_arg_list *a, const pv_image *left, const pv_bp_job *job,
                        const pv_bp_tile *tile, const bp_buffers *b)
{
    const cl_int place[6] = {left->width, tile->x, tile->y, tile->width, tile->height,
                             job->min_disp};
    const cl_float costs[2] = {job->lambda, job->data_max};
    add_cost_images(a, job, b);
    pv_cl_args_ints(a, place, 6);
    pv_cl_args_floats(a, costs, 2);
    pv_cl_args_add(a, sizeof(cl_mem), &b->data);
}

/* The data-cost pyramid of a tile: the finest level and up to four
 * coarser ones in one launch (bp_data_pyramid), one launch per further
 * level. */
static pv_status data_costs(pv_context *ctx, bp_plan *plan, const pv_image *left,
                            const pv_bp_job *job, const pv_bp_tile *tile, const bp_buffers *b)
{
    const size_t tw = (size_t)tile->width, th = (size_t)tile->height;
    cl_int fused = 0;
    while (fused < tile->levels - 1 && (2 << fused) <= plan->pyramid_side)
        fused++;
    pv_cl_arg_list a = {.count = 0};
    pv_cl_bp_cost_args(&a, left, job, tile, b);
    pv_status status;
    if (fused > 0) {
        pv_cl_args_ints(&a, &fused, 1);
        const size_t side[2] = {(size_t)1 << fused, (size_t)1 << fused};
        const size_t global[2] = {tw ? tw : 1, th ? th : 1};
        status = pv_cl_bp_launch_in(ctx, plan, K_DATA_PYRAMID, &a, 2, global, side);
    } else
        status = pv_cl_bp_launch(ctx, plan, K_DATA_COST, &a, tw, th);
    return status == PV_OK ? coarsen_levels(ctx, plan, job, tile, b, fused) : status;
}

/* The disparity kernels' arguments: the finest level's messages and the
 * pyramid, the tile's size, its output rectangle (relative to it), its
 * place in the image and the image's width, the range's start, the
 * image-wide disparity buffer. */
void pv_cl_bp_disparity_args(pv_cl_arg_list *a, const pv_image *left, const pv_bp_job *job,
                             const pv_bp_tile *tile, const bp_buffers *b)
{
    const cl_int place[10] = {tile->width, tile->height, tile->out_x - tile->x,
                              tile->out_y - tile->y, tile->out_width, tile->out_height,
                              tile->x, tile->y, left->width, job->min_disp};
    const cl_mem *const inputs[2] = {&b->msgs[0], &b->data};
    pv_cl_args_buffers(a, inputs, 2);
    pv_cl_args_ints(a, place, 10);
    pv_cl_args_add(a, sizeof(cl_mem), &b->disparity);
}

static pv_status write_disparities(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                   const pv_bp_job *job, const pv_bp_tile *tile,
                                   const bp_buffers *b)
{
    pv_cl_arg_list a = {.count = 0};
    pv_cl_bp_disparity_args(&a, left, job, tile, b);
    return pv_cl_bp_launch(ctx, plan, K_DISPARITY, &a, (size_t)tile->out_width,
                           (size_t)tile->out_height);
}

static pv_status run_tile(pv_context *ctx, bp_plan *plan, const pv_image *left,
                          const pv_bp_job *job, const pv_bp_tile *tile, const bp_buffers *b)
{
    if (plan->cooperative)
        return pv_cl_bp_coop_tile(ctx, plan, left, job, tile, b);
    pv_status status = data_costs(ctx, plan, left, job, tile, b);
    if (status == PV_OK)
        status = pv_cl_bp_message_passes(ctx, plan, job, tile, b);
    if (status == PV_OK)
        status = write_disparities(ctx, plan, left, job, tile, b);
    return status;
}

/* The disparity map, read back through the runtime's pinned stages when
 * the caller's image is dense (the driver's pageable path costs more than
 * the staging copy, even for one small map). */
static pv_status download(pv_context *ctx, cl_mem buffer, pv_image *disparity)
{
    if (disparity->stride != disparity->width)
        return pv_cl_download_image(ctx, buffer, disparity);
    const size_t bytes = (size_t)disparity->width * (size_t)disparity->height * sizeof(float);
    return pv_cl_read_staged(ctx, buffer, 0, bytes, disparity->data);
}

/* The whole call; the queue is drained before returning, even on error. */
static pv_status pv_cl_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                             const pv_bp_job *job, pv_image *disparity)
{
    bp_plan plan;
    bp_buffers b;
    memset(&b, 0, sizeof b);
    pv_status status = make_plan(ctx, left, job, &plan);
    if (status == PV_OK)
        status = pyramid_side(ctx, &plan, &plan.pyramid_side);
    if (status == PV_OK)
        status = get_buffers(ctx, left, job, &b);
    if (status == PV_OK)
        status = upload_inputs(ctx, left, right, job, &b);
    if (status == PV_OK)
        status = prepare_images(ctx, &plan, left, job, &b);
    /* Progress in message rounds, as on the CPU backend, reported as each
     * tile's kernels are queued (the device may still be running them). */
    double done = 0.0, total = 0.0;
    for (int t = 0; t < job->tile_count; t++)
        total += (double)job->tiles[t].levels * job->iterations;
    if (status == PV_OK)
        status = pv_progress_report(ctx, "stereo_bp", 0.0, total);
    for (int t = 0; status == PV_OK && t < job->tile_count; t++) {
        status = run_tile(ctx, &plan, left, job, &job->tiles[t], &b);
        done += (double)job->tiles[t].levels * job->iterations;
        if (status == PV_OK)
            status = pv_progress_report(ctx, "stereo_bp", done, total);
    }
    if (status == PV_OK)
        status = download(ctx, b.disparity, disparity);
    return pv_cl_finish_after(ctx, status);
}

const pv_bp_ops pv_cl_bp_ops = {PV_BP_SLOTS(PV_OPS_BIND, pv_cl_bp_)};
