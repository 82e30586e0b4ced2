/* OpenCL SAD block matching: host side of kernels/stereo.cl.
 *
 * One upload of each image and one download of the result per call; the
 * right-reference map and the left-right test of lr_check stay on the
 * device.  Buffers are per-context scratch slots.
 *
 * The tiled kernel is used whenever its tile fits: the halo is at most half
 * the tile width and the local arrays fit the budget (the device's local
 * memory, capped by SAD_LOCAL_KB), shrinking the strip height and the
 * disparity chunk as needed.  Otherwise the one-pixel-per-item kernel runs
 * from global memory: same results, slower. */
#include "../opencl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default sad_defaults[] = {
    {"SAD_WG_X", 32},          /* work-items of a group along x                   */
    {"SAD_WG_Y", 4},           /* row strips of a group                           */
    {"SAD_COLS_PER_ITEM", 4},  /* adjacent columns per work-item                  */
    {"SAD_ROWS_PER_ITEM", 4},  /* rows per strip (most; fewer on small images)    */
    {"SAD_DISP_PER_PASS", 8},  /* disparities per pass: per exchange barrier      */
    {"SAD_LOCAL_KB", 48},      /* local memory a group may use                    */
    {"SAD_GROUPS_PER_CU", 4},  /* shorten strips until this many groups per CU    */
};

const pv_cl_param_family pv_cl_params_sad = {
    "sad", sad_defaults, sizeof sad_defaults / sizeof sad_defaults[0]};

/* How one call runs: kernel, compile-time sizes, local arrays, launch. */
typedef struct sad_plan {
    int tiled;
    int radius;
    int full_state;        /* sub-pixel or uniqueness: the fold keeps 7 costs */
    int packed;            /* plain u8: cost and candidate in one word, no index array */
    int wg_x, wg_y, cols_per_item, max_rows, disp_per_pass;
    int xch_buffers;       /* 2: one barrier per exchange, 1: two */
    int rows;              /* strip height of each row slot */
    int chunk;             /* candidates whose other tile is staged at once */
    size_t local_bytes[4]; /* lref, loth, st_cost, st_index (kernels/stereo.cl) */
    size_t global[2], local[2];
    char options[1024];
} sad_plan;

enum { LOCAL_REF, LOCAL_OTH, LOCAL_COST, LOCAL_INDEX };

static int sad_param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "sad", name, 1);
}

static size_t div_up(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

/* --------------------------------------------------------------- planning */

static size_t pixel_bytes(const pv_image *image)
{
    return pv_pixel_size(image->type);
}

static size_t tile_cols(const sad_plan *plan)
{
    return (size_t)plan->wg_x * (size_t)plan->cols_per_item;
}

static size_t out_cols(const sad_plan *plan)
{
    return tile_cols(plan) - 2 * (size_t)plan->radius;
}

/* The tiled kernel's local arrays, as tile_geometry sizes them. */
static size_t size_local_arrays(sad_plan *plan, const pv_image *left)
{
    const size_t cols = tile_cols(plan), pixel = pixel_bytes(left);
    const size_t tile_rows = (size_t)plan->wg_y * (size_t)plan->rows + 2 * (size_t)plan->radius;
    size_t oth_stride = cols + (size_t)plan->chunk - 1;
    if (left->type != PV_PIXEL_U8)
        oth_stride = div_up(oth_stride, (size_t)plan->cols_per_item) * (size_t)plan->cols_per_item;
    const size_t slots = (size_t)plan->wg_y * (size_t)plan->rows * cols;
    const size_t xch_pixel = left->type == PV_PIXEL_U8 ? sizeof(cl_ushort) : sizeof(cl_float);
    const size_t xch = (size_t)plan->xch_buffers * (size_t)plan->wg_y *
                       (size_t)plan->disp_per_pass * cols * xch_pixel;
    plan->local_bytes[LOCAL_REF] = tile_rows * cols * pixel;
    plan->local_bytes[LOCAL_OTH] = tile_rows * oth_stride * pixel;
    plan->local_bytes[LOCAL_COST] = (plan->full_state ? 7 : 1) * slots * sizeof(cl_uint);
    plan->local_bytes[LOCAL_INDEX] = (plan->packed ? 1 : slots) * sizeof(cl_int);
    return plan->local_bytes[LOCAL_REF] + plan->local_bytes[LOCAL_OTH] +
           plan->local_bytes[LOCAL_COST] + plan->local_bytes[LOCAL_INDEX] + xch;
}

static size_t local_budget(pv_context *ctx)
{
    size_t budget = (size_t)sad_param(ctx, "SAD_LOCAL_KB") * 1024;
    size_t device = (size_t)pv_cl_device_info(ctx)->local_memory;
    return device && device < budget ? device : budget;
}

static int launch_shape_fits(pv_context *ctx, const sad_plan *plan)
{
    const long long items = (long long)plan->wg_x * plan->wg_y;
    const int max_items = pv_cl_device_info(ctx)->max_work_group_size;
    return plan->wg_x >= 1 && plan->wg_y >= 1 && plan->cols_per_item >= 1 &&
           plan->max_rows >= 1 && plan->disp_per_pass >= 1 && items <= max_items &&
           4 * (size_t)plan->radius <= tile_cols(plan);
}

/* Largest chunk (a multiple of the pass size, no more than the range
 * needs) whose tiles fit the budget with the plan's strip and exchange;
 * 0 when even one pass does not. */
static int fit_chunk(sad_plan *plan, const pv_image *left, const pv_sad_params *params,
                     size_t budget)
{
    const int pass = plan->disp_per_pass;
    plan->chunk = (int)div_up((size_t)params->ndisp, (size_t)pass) * pass;
    while (plan->chunk > pass && size_local_arrays(plan, left) > budget)
        plan->chunk -= pass;
    return size_local_arrays(plan, left) <= budget;
}

static size_t tiled_groups(const sad_plan *plan, const pv_image *left, int rows)
{
    size_t out_rows = (size_t)plan->wg_y * (size_t)rows;
    return div_up((size_t)left->width, out_cols(plan)) * div_up((size_t)left->height, out_rows);
}

/* Shorter strips on small images, so that every compute unit gets work. */
static int rows_for_occupancy(pv_context *ctx, const sad_plan *plan, const pv_image *left)
{
    const size_t wanted = (size_t)sad_param(ctx, "SAD_GROUPS_PER_CU") *
                          (size_t)pv_cl_device_info(ctx)->compute_units;
    int rows = plan->max_rows;
    while (rows > 1 && tiled_groups(plan, left, rows) < wanted)
        rows--;
    return rows;
}

/* The largest local arrays that fit: a double-buffered exchange first,
 * then the tallest strip, then the widest chunk. */
static int fit_tiles(pv_context *ctx, sad_plan *plan, const pv_image *left,
                     const pv_sad_params *params)
{
    const size_t budget = local_budget(ctx);
    const int rows = rows_for_occupancy(ctx, plan, left);
    for (plan->xch_buffers = 2; plan->xch_buffers >= 1; plan->xch_buffers--)
        for (plan->rows = rows; plan->rows >= 1; plan->rows--)
            if (fit_chunk(plan, left, params, budget))
                return 1;
    plan->xch_buffers = plan->rows = plan->chunk = 0;
    return 0;
}

static void plan_launch(sad_plan *plan, const pv_image *left)
{
    if (plan->tiled) {
        size_t out_rows = (size_t)plan->wg_y * (size_t)plan->rows;
        plan->local[0] = (size_t)plan->wg_x;
        plan->local[1] = (size_t)plan->wg_y;
        plan->global[0] = div_up((size_t)left->width, out_cols(plan)) * plan->local[0];
        plan->global[1] = div_up((size_t)left->height, out_rows) * plan->local[1];
    } else {
        plan->local[0] = 16;
        plan->local[1] = 8;
        plan->global[0] = (size_t)left->width;
        plan->global[1] = (size_t)left->height;
    }
}

/* Plain u8 matching with costs below 0xffff (window <= 15) keeps cost and
 * candidate in one word (kernels/stereo.cl, SAD_PACKED). */
static int packed_state(const pv_image *left, const pv_sad_params *params)
{
    return left->type == PV_PIXEL_U8 && !params->subpixel && !(params->uniqueness > 0.0f) &&
           params->window <= 15 && params->ndisp < 0xffff;
}

/* Program options: the launch parameters, then what the code depends on
 * (not the disparity range, so one program serves every range). */
static pv_status plan_options(pv_context *ctx, sad_plan *plan, const pv_image *left,
                              const pv_sad_params *params)
{
    plan->options[0] = '\0';
    pv_status status = pv_cl_param_defines(ctx, "sad", plan->options, sizeof plan->options);
    if (status != PV_OK)
        return status;
    size_t used = strlen(plan->options);
    int n = snprintf(plan->options + used, sizeof plan->options - used,
                     " -DSAD_RADIUS=%d -DSAD_PIXEL_U8=%d -DSAD_FULL_STATE=%d -DSAD_TILED=%d"
                     " -DSAD_XCH_BUFFERS=%d -DSAD_XCH_USHORT=%d -DSAD_PACKED=%d",
                     plan->radius, left->type == PV_PIXEL_U8, plan->full_state, plan->tiled,
                     plan->xch_buffers, left->type == PV_PIXEL_U8 && params->window <= 257,
                     plan->packed);
    if (n < 0 || (size_t)n >= sizeof plan->options - used)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sad: kernel options overflow");
    return PV_OK;
}

static void log_plan(const pv_context *ctx, const sad_plan *plan)
{
    if (!plan->tiled) {
        pv_log(ctx, "stereo_sad: per-pixel kernel (no tile of window radius %d fits)",
               plan->radius);
        return;
    }
    pv_log(ctx, "stereo_sad: tiled kernel, %zux%zu groups of %dx%d items, %d columns x %d rows "
                "per item, %d candidates per pass, chunks of %d, %d exchange buffer(s)%s",
           plan->global[0] / plan->local[0], plan->global[1] / plan->local[1], plan->wg_x,
           plan->wg_y, plan->cols_per_item, plan->rows, plan->disp_per_pass, plan->chunk,
           plan->xch_buffers, plan->packed ? ", packed fold" : "");
}

static pv_status finish_plan(pv_context *ctx, sad_plan *plan, const pv_image *left,
                             const pv_sad_params *params)
{
    plan_launch(plan, left);
    return plan_options(ctx, plan, left, params);
}

/* The compiled tiled kernel may hold fewer work-items per group than the
 * launch parameters ask (registers): then it cannot run.  A build failure
 * answers "fits", so that match() reports it. */
static int tiled_kernel_fits(pv_context *ctx, const sad_plan *plan)
{
    cl_kernel kernel;
    size_t most = 0;
    if (pv_cl_kernel(ctx, "stereo", plan->options, "sad_tiled", &kernel) != PV_OK)
        return 1;
    if (clGetKernelWorkGroupInfo(kernel, pv_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof most, &most, NULL) != CL_SUCCESS)
        return 1;
    return most >= (size_t)plan->wg_x * (size_t)plan->wg_y;
}

static pv_status make_plan(pv_context *ctx, const pv_image *left, const pv_sad_params *params,
                           sad_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->radius = params->window / 2;
    plan->full_state = params->subpixel || params->uniqueness > 0.0f;
    plan->packed = packed_state(left, params);
    plan->wg_x = sad_param(ctx, "SAD_WG_X");
    plan->wg_y = sad_param(ctx, "SAD_WG_Y");
    plan->cols_per_item = sad_param(ctx, "SAD_COLS_PER_ITEM");
    plan->max_rows = sad_param(ctx, "SAD_ROWS_PER_ITEM");
    plan->disp_per_pass = sad_param(ctx, "SAD_DISP_PER_PASS");
    plan->tiled = launch_shape_fits(ctx, plan) && fit_tiles(ctx, plan, left, params);
    pv_status status = finish_plan(ctx, plan, left, params);
    if (status == PV_OK && plan->tiled && !tiled_kernel_fits(ctx, plan)) {
        plan->tiled = plan->xch_buffers = plan->rows = plan->chunk = 0;
        status = finish_plan(ctx, plan, left, params);
    }
    if (status == PV_OK)
        log_plan(ctx, plan);
    return status;
}

/* ---------------------------------------------------------------- kernels */

typedef struct sad_buffers {
    cl_mem left, right, disp, right_disp;
} sad_buffers;

/* One disparity map: ref matched against oth (mirrored for the
 * right-reference map, which needs no uniqueness test).  The tiled
 * kernel's last four arguments are its __local arrays. */
static pv_status match(pv_context *ctx, const sad_plan *plan, const pv_image *left,
                       const pv_sad_params *params, cl_mem ref, cl_mem oth, cl_mem out,
                       cl_int mirror)
{
    cl_kernel kernel;
    pv_status status = pv_cl_kernel(ctx, "stereo", plan->options,
                                    plan->tiled ? "sad_tiled" : "sad_simple", &kernel);
    if (status != PV_OK)
        return status;
    cl_int width = left->width, height = left->height;
    cl_int min_disp = params->min_disp, ndisp = params->ndisp;
    cl_int rows = plan->rows, chunk = plan->chunk, subpixel = params->subpixel != 0;
    cl_float uniqueness = mirror ? 0.0f : params->uniqueness;
    const pv_cl_kernel_arg tiled_args[] = {
        PV_CL_ARG(ref), PV_CL_ARG(oth), PV_CL_ARG(out), PV_CL_ARG(width), PV_CL_ARG(height),
        PV_CL_ARG(min_disp), PV_CL_ARG(ndisp), PV_CL_ARG(rows), PV_CL_ARG(chunk),
        PV_CL_ARG(mirror), PV_CL_ARG(subpixel), PV_CL_ARG(uniqueness),
        PV_CL_LOCAL(plan->local_bytes[LOCAL_REF]), PV_CL_LOCAL(plan->local_bytes[LOCAL_OTH]),
        PV_CL_LOCAL(plan->local_bytes[LOCAL_COST]), PV_CL_LOCAL(plan->local_bytes[LOCAL_INDEX])};
    const pv_cl_kernel_arg simple_args[] = {
        PV_CL_ARG(ref), PV_CL_ARG(oth), PV_CL_ARG(out), PV_CL_ARG(width), PV_CL_ARG(height),
        PV_CL_ARG(min_disp), PV_CL_ARG(ndisp), PV_CL_ARG(mirror), PV_CL_ARG(subpixel),
        PV_CL_ARG(uniqueness)};
    return plan->tiled ? pv_cl_launch_args(ctx, kernel, tiled_args, PV_CL_ARG_COUNT(tiled_args), 2,
                                           plan->global, plan->local)
                       : pv_cl_launch_args(ctx, kernel, simple_args,
                                           PV_CL_ARG_COUNT(simple_args), 2, plan->global,
                                           plan->local);
}

static pv_status lr_check(pv_context *ctx, const sad_plan *plan, const pv_image *left,
                          const pv_sad_params *params, const sad_buffers *b)
{
    cl_kernel kernel;
    pv_status status = pv_cl_kernel(ctx, "stereo", plan->options, "sad_lr_check", &kernel);
    if (status != PV_OK)
        return status;
    cl_int width = left->width, height = left->height;
    cl_float max_diff = params->lr_max_diff;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(b->disp), PV_CL_ARG(b->right_disp), PV_CL_ARG(width),
                                     PV_CL_ARG(height), PV_CL_ARG(max_diff)};
    const size_t global[2] = {(size_t)width, (size_t)height};
    const size_t local[2] = {16, 8};
    return pv_cl_launch_args(ctx, kernel, args, PV_CL_ARG_COUNT(args), 2, global, local);
}

/* How a call moves its images: a single call through the runtime's image
 * transfers; a batch sends its inputs through the pinned stages without a
 * wait and copies each map into its place in one batch buffer on the
 * device, read back once a group of pairs is done, so that the device
 * runs the pairs back to back and the host waits once a group. */
typedef struct sad_io {
    int batch;
    cl_mem out;        /* batch: the group's maps, one after another */
    size_t out_offset; /* batch: where this pair's map goes */
} sad_io;

static pv_status upload(pv_context *ctx, const sad_io *io, const char *slot,
                        const pv_image *image, cl_mem *buffer)
{
    const size_t pixel = pixel_bytes(image), row = (size_t)image->width * pixel;
    pv_status status = pv_cl_scratch(ctx, slot, row * (size_t)image->height, buffer);
    if (status != PV_OK)
        return status;
    if (!io->batch)
        return pv_cl_write_image(ctx, *buffer, image);
    return pv_cl_write_rows_staged(ctx, *buffer, (size_t)image->height, row,
                                   (size_t)image->stride * pixel, image->data);
}

static pv_status download(pv_context *ctx, const sad_io *io, cl_mem buffer, pv_image *disparity)
{
    if (!io->batch)
        return pv_cl_download_image(ctx, buffer, disparity);
    const size_t bytes = (size_t)disparity->width * (size_t)disparity->height * sizeof(cl_float);
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueCopyBuffer(pv_cl_queue(ctx), buffer, io->out, 0, io->out_offset, bytes, 0,
                                  NULL, NULL);
    return pv_cl_check(ctx, err, "clEnqueueCopyBuffer(batch map)");
}

static pv_status get_buffers(pv_context *ctx, const sad_io *io, const pv_image *left,
                             const pv_image *right, const pv_sad_params *params, sad_buffers *b)
{
    const size_t map_bytes = (size_t)left->width * (size_t)left->height * sizeof(cl_float);
    pv_status status = upload(ctx, io, "sad.left", left, &b->left);
    if (status == PV_OK)
        status = upload(ctx, io, "sad.right", right, &b->right);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sad.disp", map_bytes, &b->disp);
    if (status == PV_OK && params->lr_check)
        status = pv_cl_scratch(ctx, "sad.right_disp", map_bytes, &b->right_disp);
    return status;
}

/* One pair on a made plan.  The scratch buffers serve every pair of a
 * batch: the queue is in order, so pair i+1's copies in wait for pair i's
 * kernels and copy out. */
static pv_status run_pair(pv_context *ctx, const sad_io *io, const sad_plan *plan,
                          const pv_image *left, const pv_image *right,
                          const pv_sad_params *params, pv_image *disparity)
{
    sad_buffers b = {NULL, NULL, NULL, NULL};
    pv_status status = get_buffers(ctx, io, left, right, params, &b);
    if (status == PV_OK)
        status = match(ctx, plan, left, params, b.left, b.right, b.disp, 0);
    if (status == PV_OK && params->lr_check) {
        status = match(ctx, plan, left, params, b.right, b.left, b.right_disp, 1);
        if (status == PV_OK)
            status = lr_check(ctx, plan, left, params, &b);
    }
    if (status == PV_OK)
        status = download(ctx, io, b.disp, disparity);
    return status;
}

static pv_status run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sad_params *params, pv_image *disparity)
{
    const sad_io io = {0, NULL, 0};
    sad_plan plan;
    pv_status status = make_plan(ctx, left, params, &plan);
    return status == PV_OK ? run_pair(ctx, &io, &plan, left, right, params, disparity) : status;
}

/* The maps of a group, read back in chunks and each chunk scattered over
 * the disparity images it covers (rows of `width` floats). */
typedef struct scatter {
    pv_image *disparities;
    size_t map_bytes;
} scatter;

static void scatter_chunk(void *user, size_t offset, const void *chunk, size_t bytes)
{
    const scatter *s = user;
    const char *from = chunk;
    while (bytes > 0) {
        pv_image *d = &s->disparities[offset / s->map_bytes];
        const size_t row_bytes = (size_t)d->width * sizeof(float);
        const size_t in_map = offset % s->map_bytes, y = in_map / row_bytes, x = in_map % row_bytes;
        const size_t n = row_bytes - x < bytes ? row_bytes - x : bytes;
        memcpy((char *)d->data + y * (size_t)d->stride * sizeof(float) + x, from, n);
        from += n;
        offset += n;
        bytes -= n;
    }
}

#define SAD_BATCH_GROUP_BYTES ((size_t)256 << 20)

/* Many pairs of one size: one plan, the pairs of a group queued without a
 * wait, their maps read back together. */
static pv_status pv_cl_stereo_sad_batch(pv_context *ctx, const pv_image *lefts,
                                        const pv_image *rights, int count,
                                        const pv_sad_params *params, pv_image *disparities)
{
    const size_t map_bytes = (size_t)lefts[0].width * (size_t)lefts[0].height * sizeof(float);
    const int group = (int)(SAD_BATCH_GROUP_BYTES / map_bytes) > 1
                          ? (int)(SAD_BATCH_GROUP_BYTES / map_bytes) : 1;
    sad_io io = {1, NULL, 0};
    sad_plan plan;
    pv_status status = make_plan(ctx, &lefts[0], params, &plan);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sad.batch", map_bytes * (size_t)(count < group ? count : group),
                               &io.out);
    if (status == PV_OK)
        status = pv_progress_report(ctx, "stereo_sad_batch", 0.0, count);
    for (int first = 0; first < count && status == PV_OK; first += group) {
        const int n = count - first < group ? count - first : group;
        for (int i = 0; i < n && status == PV_OK; i++) {
            io.out_offset = (size_t)i * map_bytes;
            status = run_pair(ctx, &io, &plan, &lefts[first + i], &rights[first + i], params,
                              &disparities[first + i]);
        }
        scatter sink = {disparities + first, map_bytes};
        if (status == PV_OK)
            status = pv_cl_read_chunked(ctx, io.out, 0, (size_t)n * map_bytes, scatter_chunk,
                                        &sink);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "stereo_sad_batch", first + n, count);
    }
    return pv_cl_finish_after(ctx, status);
}

static pv_status pv_cl_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_sad_params *params, pv_image *disparity)
{
    return pv_cl_finish_after(ctx, run(ctx, left, right, params, disparity));
}

/* Semi-global matching lives in stereo_sgm.c. */
static pv_status pv_cl_stereo_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                                  const pv_sgm_params *params, pv_image *disparity,
                                  pv_image *confidence)
{
    return pv_cl_sgm(ctx, left, right, params, disparity, confidence);
}

/* ... and its stream of pairs in stereo_sgm_batch.c. */
static pv_status pv_cl_stereo_sgm_batch(pv_context *ctx, const pv_image *lefts,
                                        const pv_image *rights, int count,
                                        const pv_sgm_params *params, pv_image *disparities,
                                        pv_image *confidences)
{
    return pv_cl_sgm_batch(ctx, lefts, rights, count, params, disparities, confidences);
}

const pv_stereo_ops pv_cl_stereo_ops = {PV_STEREO_SLOTS(PV_OPS_BIND, pv_cl_stereo_)};
