/* OpenCL hierarchical belief propagation: the message passes of one tile
 * (stereo_bp.c describes the whole).  From the coarsest level: the levels
 * small enough for one work-group in a single launch (all their rounds,
 * BP_SMALL_LEVEL_PIXELS), then per larger level one launch per round, the
 * first also handing the messages down from the coarser level (the
 * cooperative update's tile: stereo_bp_coop.c). */
#include "stereo_bp_host.h"

#include <stdio.h>
#include <string.h>

/* Work-items of bp_small_levels' one-row group: as many as the compiled
 * kernel (its registers), the device and the local memory for NLOC values
 * per item allow, at most 1024, a multiple of 32 where possible; the
 * single-work-group levels then update up to 1024 pixels at once.  The
 * kernel has no local memory of its own; 1 KiB of the device's is left
 * spare (a group asking for all of it failed to launch on NVIDIA's
 * driver).  0 when the kernel cannot say (those levels then run one
 * launch per round). */
static int small_group_items(pv_context *ctx, const bp_plan *plan, cl_kernel kernel)
{
    size_t fits = 0;
    if (clGetKernelWorkGroupInfo(kernel, pv_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE, sizeof fits,
                                 &fits, NULL) != CL_SUCCESS)
        return 0;
    const size_t device_local = (size_t)pv_cl_device_info(ctx)->local_memory;
    const size_t local = device_local > 1024 ? device_local - 1024 : 0;
    size_t items = fits < 1024 ? fits : 1024;
    if ((size_t)pv_cl_device_info(ctx)->max_work_group_size < items)
        items = (size_t)pv_cl_device_info(ctx)->max_work_group_size;
    if (plan->nloc > 0 && local / ((size_t)plan->nloc * sizeof(cl_float)) < items)
        items = local / ((size_t)plan->nloc * sizeof(cl_float));
    if (items >= 32)
        items -= items % 32;
    return (int)items;
}

/* disc_max and 1 / ndisp: the last float arguments of every round kernel. */
static void add_cost_args(pv_cl_arg_list *a, const pv_bp_job *job)
{
    const cl_float costs[2] = {job->disc_max, job->inv_ndisp};
    pv_cl_args_floats(a, costs, 2);
}

/* Levels from the coarsest down with at most small_pixels pixels: the
 * finest of them, or tile->levels when none. */
static int small_finest(const bp_plan *plan, const pv_bp_tile *tile)
{
    int finest = tile->levels;
    while (finest > 0) {
        level_size s = pv_cl_bp_level_of(tile, finest - 1);
        if ((long long)s.width * s.height > plan->small_pixels)
            break;
        finest--;
    }
    return finest;
}

/* Enqueue bp_small_levels for levels coarsest .. finest in one group of
 * `items`: *launched 0 when the driver refuses the launch (resources),
 * which is not an error: those levels then run one launch per round (where
 * a real error, met again, is reported). */
static void launch_small(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                         const pv_bp_tile *tile, const bp_buffers *b, int finest, int items,
                         int *launched)
{
    const cl_mem *const buffers[3] = {&b->msgs[0], &b->msgs[1], &b->data};
    /* the tile's size, levels coarsest .. finest, rounds per level */
    const cl_int schedule[5] = {tile->width, tile->height, tile->levels - 1, finest,
                                job->iterations};
    pv_cl_arg_list a = {.count = 0};
    pv_cl_args_buffers(&a, buffers, 3);
    pv_cl_args_ints(&a, schedule, 5);
    add_cost_args(&a, job);
    pv_cl_args_add(&a, (size_t)(plan->nloc > 0 ? plan->nloc : 1) * (size_t)items * sizeof(cl_float),
                   NULL);
    /* A refused launch records an error message; the call goes on. */
    char saved[sizeof ctx->last_error], saved_thread[sizeof ctx->last_error];
    memcpy(saved, ctx->last_error, sizeof saved);
    snprintf(saved_thread, sizeof saved_thread, "%s", pv_last_error());
    const size_t group[2] = {(size_t)items, 1};
    *launched = pv_cl_bp_launch_in(ctx, plan, K_SMALL_LEVELS, &a, 2, group, group) == PV_OK;
    if (!*launched) {
        pv_log(ctx, "stereo_bp: bp_small_levels with %d work-items refused (%s); one launch "
                    "per round", items, ctx->last_error);
        memcpy(ctx->last_error, saved, sizeof saved);
        pv_set_thread_error(saved_thread);
    }
}

/* The levels coarser than the first with more than small_pixels pixels,
 * in one launch; returns the finest level it handled in *finest
 * (tile->levels when none). */
static pv_status small_levels(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                              const pv_bp_tile *tile, const bp_buffers *b, int *finest)
{
    *finest = small_finest(plan, tile);
    if (*finest == tile->levels)
        return PV_OK;
    cl_kernel kernel;
    pv_status status = pv_cl_bp_kernel_of(ctx, plan, K_SMALL_LEVELS, &kernel);
    if (status != PV_OK)
        return status;
    const int items = small_group_items(ctx, plan, kernel);
    if (items < 1)
        pv_log(ctx, "stereo_bp: no group size for bp_small_levels on %s; one launch per round",
               pv_cl_device_info(ctx)->name);
    int launched = 0;
    if (items >= 1)
        launch_small(ctx, plan, job, tile, b, *finest, items, &launched);
    if (!launched)
        *finest = tile->levels;
    return status;
}

/* Messages of the level `level` from zero (the coarsest level when no
 * single-work-group launch handled it). */
static pv_status start_level(pv_context *ctx, bp_plan *plan, const pv_bp_tile *tile,
                             const bp_buffers *b, int level)
{
    level_size s = pv_cl_bp_level_of(tile, level);
    const cl_mem *const fine[2] = {&b->msgs[level & 1], &b->msgs[level & 1]};
    const cl_int size[3] = {s.width, s.height, 0 /* not from a coarser level */};
    pv_cl_arg_list a = {.count = 0};
    pv_cl_args_buffers(&a, fine, 2);
    pv_cl_args_ints(&a, size, 3);
    return pv_cl_bp_launch(ctx, plan, K_MESSAGES_START, &a, (size_t)(s.width + 1) / 2 + 2,
                           (size_t)s.height + 2);
}

/* The hand-down from the coarser level fused with the first round. */
static pv_status inherit_round(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                               const pv_bp_tile *tile, const bp_buffers *b, int level)
{
    const level_size s = pv_cl_bp_level_of(tile, level);
    const cl_int rounds = job->iterations;
    pv_cl_arg_list a = {.count = 0};
    pv_cl_args_add(&a, sizeof(cl_mem), &b->msgs[(level + 1) & 1]);
    add_level_args(&a, job, tile, b, level);
    add_cost_args(&a, job);
    pv_cl_args_ints(&a, &rounds, 1);
    return pv_cl_bp_launch(ctx, plan, K_ROUND_INHERIT, &a, (size_t)(s.width + 1) / 2 + 2,
                           (size_t)s.height + 2);
}

/* Rounds first..iterations-1 of a level (round t updates colour (t+1)&1,
 * F&H's order); the rounds differ only in the colour. */
static pv_status level_rounds(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                              const pv_bp_tile *tile, const bp_buffers *b, int level, int first)
{
    const level_size s = pv_cl_bp_level_of(tile, level);
    const size_t global[3] = {div_up((size_t)s.width, 2), (size_t)s.height,
                              (size_t)plan->dir_items};
    pv_status status = PV_OK;
    for (int t = first; status == PV_OK && t < job->iterations; t++) {
        const cl_int colour = (t + 1) & 1;
        pv_cl_arg_list a = {.count = 0};
        add_level_args(&a, job, tile, b, level);
        pv_cl_args_ints(&a, &colour, 1);
        add_cost_args(&a, job);
        status = pv_cl_bp_launch_in(ctx, plan, K_ROUND, &a, 3, global, plan->local);
    }
    return status;
}

/* A level's messages and rounds. */
static pv_status run_level(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                           const pv_bp_tile *tile, const bp_buffers *b, int level)
{
    if (level == tile->levels - 1) {
        pv_status status = start_level(ctx, plan, tile, b, level);
        return status == PV_OK ? level_rounds(ctx, plan, job, tile, b, level, 0) : status;
    }
    pv_status status = inherit_round(ctx, plan, job, tile, b, level);
    return status == PV_OK ? level_rounds(ctx, plan, job, tile, b, level, 1) : status;
}

pv_status pv_cl_bp_message_passes(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                                  const pv_bp_tile *tile, const bp_buffers *b)
{
    int finest_small;
    pv_status status = small_levels(ctx, plan, job, tile, b, &finest_small);
    for (int level = finest_small - 1; status == PV_OK && level >= 0; level--)
        status = run_level(ctx, plan, job, tile, b, level);
    return status;
}
