/* OpenCL hierarchical belief propagation, the cooperative update
 * (PV_BP_UPDATE_COOPERATIVE): one tile, from the data costs to the
 * disparities (stereo_bp.c describes the whole; kernels in
 * kernels/stereo_bp_coop.cl, docs/bp-at-scale.md says why they are
 * shaped so).
 *
 * - Data costs: the finest level's are not stored; every kernel that needs
 *   them computes them from the images (the *_fine rounds, the last
 *   round's read-out and bp_disparity_coop), which reads a left pixel and
 *   a run of a right-image row that neighbouring pixels share instead of
 *   NDISP floats per pixel, and saves their writing.  The level below is
 *   made from the images in one launch with a work-item per coarse pixel
 *   and disparity (bp_data_second_level), then one launch per further
 *   level with a work-item per pixel and disparity (bp_data_halve): every
 *   plane written by neighbouring work-items at neighbouring addresses, no
 *   value read back inside a launch.
 * - Messages: per level, from the coarsest down, one launch per round; the
 *   first (bp_round_coop_first) reads the coarser level's messages itself
 *   (zeros at the coarsest) instead of a launch that copies them down
 *   first; the others are bp_round_coop.  Round t updates colour
 *   (t + 1) & 1, as in the serial update.
 * - Disparities: the finest level's last round writes those of the colour
 *   it updates, from the inputs it holds (bp_round_coop_readout); the
 *   other colour's, one work-item per pixel, consecutive work-items on
 *   consecutive slots of a colour (bp_disparity_coop). */
#include "stereo_bp_host.h"

/* Work-group of the one-value-per-work-item data-cost kernels: consecutive
 * pixels of a row along dimension 0 (whole 128-byte lines of a plane),
 * a few rows, one disparity; smaller where the device's groups are. */
#define DATA_GROUP_X 32
#define DATA_GROUP_Y 4

/* Work-group of the read-out: pixels of one row and colour (two 128-byte
 * lines of a float plane). */
#define DISPARITY_GROUP 64

/* Launches `which` (arguments a) over x x y pixels times ndisp. */
static pv_status launch_per_value(pv_context *ctx, bp_plan *plan, int which,
                                  const pv_cl_arg_list *a, int x, int y, int ndisp)
{
    const size_t most = (size_t)pv_cl_device_info(ctx)->max_work_group_size;
    const size_t gx = most < DATA_GROUP_X ? (most ? most : 1) : DATA_GROUP_X;
    const size_t gy = most / gx < DATA_GROUP_Y ? (most / gx ? most / gx : 1) : DATA_GROUP_Y;
    const size_t global[3] = {(size_t)x, (size_t)y, (size_t)ndisp};
    const size_t local[3] = {gx, gy, 1};
    return pv_cl_bp_launch_in(ctx, plan, which, a, 3, global, local);
}

/* The tile's data-cost pyramid from level 1 on: level 1 from the images,
 * then one launch per further level. */
static pv_status coop_data_costs(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                 const pv_bp_job *job, const pv_bp_tile *tile,
                                 const bp_buffers *b)
{
    if (tile->levels < 2)
        return PV_OK;
    const level_size second = pv_cl_bp_level_of(tile, 1);
    const cl_int offset = (cl_int)pv_cl_bp_data_offset(job, tile, 1);
    pv_cl_arg_list a = {.count = 0};
    pv_cl_bp_cost_args(&a, left, job, tile, b);
    pv_cl_args_ints(&a, &offset, 1);
    pv_status status = launch_per_value(ctx, plan, K_DATA_SECOND_LEVEL, &a, second.width,
                                        second.height, job->ndisp);
    for (int level = 2; status == PV_OK && level < tile->levels; level++) {
        level_size coarse;
        pv_cl_arg_list c = {.count = 0};
        pv_cl_bp_coarsen_args(&c, job, tile, b, level, &coarse);
        status = launch_per_value(ctx, plan, K_DATA_HALVE, &c, coarse.width, coarse.height,
                                  job->ndisp);
    }
    return status;
}

/* The images, lambda and data_max: the fine_costs fields that the
 * read-out kernels' other arguments do not give. */
static void add_cost_source(pv_cl_arg_list *a, const pv_bp_job *job, const bp_buffers *b)
{
    const cl_float costs[2] = {job->lambda, job->data_max};
    add_cost_images(a, job, b);
    pv_cl_args_floats(a, costs, 2);
}

/* All of fine_costs's fields, in its order. */
static void add_fine_costs(pv_cl_arg_list *a, const pv_image *left, const pv_bp_job *job,
                           const pv_bp_tile *tile, const bp_buffers *b)
{
    const cl_int place[4] = {left->width, tile->x, tile->y, job->min_disp};
    const cl_float costs[2] = {job->lambda, job->data_max};
    add_cost_images(a, job, b);
    pv_cl_args_ints(a, place, 4);
    pv_cl_args_floats(a, costs, 2);
}

/* A level's first round (colour 1), fused with the hand-down of its
 * messages from the coarser level (or their start from zero at the
 * coarsest): one slot of the level's planes, borders included, per
 * coop_lanes work-items. */
static pv_status coop_first_round(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                  const pv_bp_job *job, const pv_bp_tile *tile,
                                  const bp_buffers *b, int level)
{
    const level_size s = pv_cl_bp_level_of(tile, level);
    const cl_int from_coarse = level < tile->levels - 1, rounds = job->iterations;
    const cl_float disc_max = job->disc_max;
    pv_cl_arg_list a = {.count = 0};
    pv_cl_args_add(&a, sizeof(cl_mem), &b->msgs[(level + 1) & 1]);
    add_level_args(&a, job, tile, b, level);
    pv_cl_args_floats(&a, &disc_max, 1);
    pv_cl_args_ints(&a, &from_coarse, 1);
    pv_cl_args_ints(&a, &rounds, 1);
    const int which = level == 0 ? K_ROUND_COOP_FIRST_FINE : K_ROUND_COOP_FIRST;
    if (level == 0)
        add_fine_costs(&a, left, job, tile, b);
    const size_t local[2] = {(size_t)plan->coop_pixels, (size_t)plan->coop_lanes};
    const size_t pitch = (size_t)(s.width + 1) / 2 + 2;
    const size_t global[2] = {pitch, ((size_t)s.height + 2) * local[1]};
    return pv_cl_bp_launch_in(ctx, plan, which, &a, 2, global, local);
}

/* The finest level's last round with the disparities of the pixels it
 * updates (bp_round_coop_readout): its arguments are bp_round_coop's and
 * the output rectangle's. */
static pv_status coop_readout_round(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                    const pv_bp_job *job, const pv_bp_tile *tile,
                                    const bp_buffers *b, cl_int colour, const size_t *global)
{
    const cl_float disc_max = job->disc_max;
    const cl_int place[8] = {tile->out_x - tile->x, tile->out_y - tile->y, tile->out_width,
                             tile->out_height, tile->x, tile->y, left->width, job->min_disp};
    pv_cl_arg_list a = {.count = 0};
    add_level_args(&a, job, tile, b, 0);
    pv_cl_args_ints(&a, &colour, 1);
    pv_cl_args_floats(&a, &disc_max, 1);
    pv_cl_args_ints(&a, place, 8);
    pv_cl_args_add(&a, sizeof(cl_mem), &b->disparity);
    add_cost_source(&a, job, b);
    const size_t local[2] = {(size_t)plan->coop_pixels, (size_t)plan->coop_lanes};
    return pv_cl_bp_launch_in(ctx, plan, K_ROUND_COOP_READOUT, &a, 2, global, local);
}

/* A level's rounds: the first with the hand-down, then the others in
 * groups of coop_pixels pixels x coop_lanes work-items, coop_rows rows a
 * group (the finest level's with its costs from the images); the rounds
 * differ only in the colour.  The finest level's last round (when it is
 * not the first) also writes its pixels' disparities: *read_out receives
 * the colour left for the read-out, -1 (both) when no round did. */
static pv_status coop_level(pv_context *ctx, bp_plan *plan, const pv_image *left,
                            const pv_bp_job *job, const pv_bp_tile *tile, const bp_buffers *b,
                            int level, int *read_out)
{
    const level_size s = pv_cl_bp_level_of(tile, level);
    pv_status status = coop_first_round(ctx, plan, left, job, tile, b, level);
    *read_out = -1;
    if (status != PV_OK || job->iterations < 2)
        return status;
    const cl_float disc_max = job->disc_max;
    const int which = level == 0 ? K_ROUND_COOP_FINE : K_ROUND_COOP;
    const size_t local[2] = {(size_t)plan->coop_pixels, (size_t)plan->coop_lanes};
    const size_t global[2] = {div_up((size_t)s.width, 2),
                              div_up((size_t)s.height, (size_t)plan->coop_rows) * local[1]};
    const int last = job->iterations - 1;
    for (int t = 1; status == PV_OK && t < job->iterations; t++) {
        const cl_int colour = (t + 1) & 1;
        if (level == 0 && t == last) {
            status = coop_readout_round(ctx, plan, left, job, tile, b, colour, global);
            *read_out = status == PV_OK ? colour ^ 1 : -1;
            break;
        }
        pv_cl_arg_list a = {.count = 0};
        add_level_args(&a, job, tile, b, level);
        pv_cl_args_ints(&a, &colour, 1);
        pv_cl_args_floats(&a, &disc_max, 1);
        if (level == 0)
            add_fine_costs(&a, left, job, tile, b);
        status = pv_cl_bp_launch_in(ctx, plan, which, &a, 2, global, local);
    }
    return status;
}

/* The disparities of the tile's output rectangle: a global row per output
 * row and colour (per output row when only one colour is left), the
 * pixels of that colour from the rectangle's first column pair to its
 * last along dimension 0, one work-item each. */
static pv_status coop_disparities(pv_context *ctx, bp_plan *plan, const pv_image *left,
                                  const pv_bp_job *job, const pv_bp_tile *tile,
                                  const bp_buffers *b, cl_int only_colour)
{
    const int first = tile->out_x - tile->x, last = first + tile->out_width - 1;
    pv_cl_arg_list a = {.count = 0};
    pv_cl_bp_disparity_args(&a, left, job, tile, b);
    pv_cl_args_ints(&a, &only_colour, 1);
    add_cost_source(&a, job, b);
    const size_t most = (size_t)pv_cl_device_info(ctx)->max_work_group_size;
    const size_t local[2] = {most < DISPARITY_GROUP ? (most ? most : 1) : DISPARITY_GROUP, 1};
    const size_t rows = (only_colour < 0 ? 2 : 1) * (size_t)tile->out_height;
    const size_t global[2] = {(size_t)((last >> 1) - (first >> 1) + 1), rows};
    return pv_cl_bp_launch_in(ctx, plan, K_DISPARITY_COOP, &a, 2, global, local);
}

pv_status pv_cl_bp_coop_tile(pv_context *ctx, bp_plan *plan, const pv_image *left,
                             const pv_bp_job *job, const pv_bp_tile *tile, const bp_buffers *b)
{
    pv_status status = coop_data_costs(ctx, plan, left, job, tile, b);
    int read_out = -1;
    for (int level = tile->levels - 1; status == PV_OK && level >= 0; level--)
        status = coop_level(ctx, plan, left, job, tile, b, level, &read_out);
    return status == PV_OK ? coop_disparities(ctx, plan, left, job, tile, b, read_out) : status;
}
