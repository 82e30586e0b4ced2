/* OpenCL semi-global matching: host side of kernels/stereo_sgm.cl.
 *
 * One upload of each image, then on the device: the census of both images
 * (and the left intensities under the adaptive P2), the 8-bit matching
 * cost volume (sgm_costs, one coalesced pass), one sgm_paths launch
 * for every direction at once writing each path's L_r(p, d) once (8-bit
 * when bits + P2 <= 255, else 16-bit), one sgm_winner_rows launch (a
 * work-group per row: sums, winner, uniqueness, confidence, sub-pixel, and
 * the left-right check from the same sums through atomic minima, S never
 * stored), the optional median; one download of the result (and of the
 * confidence).  The launch shape is the "sgm" parameter family below, the
 * one place where it is set (and tuned). */
#include "stereo_sgm_internal.h"
#include "../../common/sgm_math.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default sgm_defaults[] = {
    {"SGM_DPI", 8},         /* disparities per work-item: 1, 2, 4, 8 or 16       */
    {"SGM_LINES", 2},       /* scan lines per aggregation work-group             */
    {"SGM_WIN_ITEMS", 256}, /* work-items of a winner work-group (one row)       */
    {"SGM_WG_X", 32},       /* per-pixel kernels (census, median): x size        */
    {"SGM_WG_Y", 4},        /* ... and y size                                    */
};

const pv_cl_param_family pv_cl_params_sgm = {
    "sgm", sgm_defaults, sizeof sgm_defaults / sizeof sgm_defaults[0]};

/* The eight directions (dx, dy); the first four are the 4-path set. */
static const int directions[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1},
                                     {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

static int sgm_param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "sgm", name, 1);
}

static size_t round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

static int pixel_code(const pv_image *image)
{
    return image->type == PV_PIXEL_U8 ? 0 : image->type == PV_PIXEL_U16 ? 1 : 2;
}

static size_t pixel_bytes(const pv_image *image)
{
    return image->type == PV_PIXEL_U8 ? 1 : image->type == PV_PIXEL_U16 ? 2 : 4;
}

/* Warp shuffles (inline PTX) on NVIDIA devices when a scan line's items
 * are a power of two of at most 32 lanes, so that lines never straddle a
 * warp; the lines of a work-group are then raised to fill whole warps.
 * PARVIS_SGM_SHUFFLE=0 turns them off (the portable local-memory exchange,
 * which every device runs). */
static int use_shuffles(pv_context *ctx, sgm_plan *plan)
{
    if (pv_config_is(PV_CONFIG_SGM_SHUFFLE, "0") || !strstr(pv_cl_device_info(ctx)->vendor, "NVIDIA"))
        return 0;
    if (plan->items < 1 || plan->items > 32 || (plan->items & (plan->items - 1)))
        return 0;
    while (plan->items * plan->lines % 32)
        plan->lines++;
    return 1;
}

/* Local memory of a winner work-group: the row's right minima and
 * winners, and the team exchange. */
static size_t winner_local_bytes(int width, int win_items)
{
    return (size_t)width * (sizeof(cl_uint) + sizeof(cl_short)) +
           (size_t)win_items * 3 * sizeof(cl_uint) + (size_t)win_items * 2 * sizeof(cl_uint);
}

static pv_status check_shape(pv_context *ctx, const sgm_plan *plan, int most)
{
    const int dpi_ok = plan->dpi == 1 || plan->dpi == 2 || plan->dpi == 4 || plan->dpi == 8 ||
                       plan->dpi == 16;
    if (!dpi_ok || plan->lines < 1 || plan->items * plan->lines > most || plan->win_items < 1 ||
        plan->win_items > most || plan->wg_x < 1 || plan->wg_y < 1 ||
        plan->wg_x * plan->wg_y > most)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: launch parameters sgm.SGM_DPI %d (1, 2, 4, 8 or 16), "
                       "%d items x SGM_LINES %d, SGM_WIN_ITEMS %d or SGM_WG_X x SGM_WG_Y "
                       "%dx%d do not fit work-groups of %d items",
                       plan->dpi, plan->items, plan->lines, plan->win_items, plan->wg_x,
                       plan->wg_y, most);
    return PV_OK;
}

pv_status pv_cl_sgm_make_plan(pv_context *ctx, const pv_image *left, const pv_sgm_params *p,
                             sgm_plan *plan)
{
    const pv_device_info *device = pv_cl_device_info(ctx);
    plan->dpi = sgm_param(ctx, "SGM_DPI");
    plan->lines = sgm_param(ctx, "SGM_LINES");
    plan->wg_x = sgm_param(ctx, "SGM_WG_X");
    plan->wg_y = sgm_param(ctx, "SGM_WG_Y");
    plan->items = plan->dpi > 0 ? (p->ndisp + plan->dpi - 1) / plan->dpi : 0;
    /* Whole quads of cells for the cost kernel's 4-byte stores. */
    while (plan->dpi > 0 && plan->items * plan->dpi % 4)
        plan->items++;
    plan->stride = plan->items * plan->dpi;
    plan->shfl = use_shuffles(ctx, plan);
    /* A winner work-group holds whole teams of `items` lanes. */
    const int win = sgm_param(ctx, "SGM_WIN_ITEMS");
    plan->win_items = plan->items > 0 && win >= plan->items ? win / plan->items * plan->items
                                                            : plan->items;
    pv_status status = check_shape(ctx, plan, device->max_work_group_size);
    if (status != PV_OK)
        return status;
    const int bits = sgm_census_bits(p->census_width, p->census_height, p->census_symmetric);
    plan->sum = p->aggregation == PV_SGM_AGGREGATE_SUM;
    plan->path8 = bits + p->p2 <= 255 && !plan->sum; /* the sums need 16 bits */
    plan->lr_local = winner_local_bytes(left->width, plan->win_items) + 1024 <= device->local_memory;
    int n = snprintf(plan->options, sizeof plan->options,
                     " -DSGM_ITEMS=%d -DSGM_GROUP_LINES=%d -DSGM_STRIDE=%d -DSGM_WIN_GROUP=%d"
                     " -DSGM_SHFL=%d"
                     " -DSGM_WIDTH=%d -DSGM_LR_LOCAL=%d -DSGM_NDISP=%d -DSGM_PIXEL=%d"
                     " -DSGM_CENSUS_W=%d -DSGM_CENSUS_H=%d -DSGM_CENSUS_SYM=%d -DSGM_PATH8=%d"
                     " -DSGM_SUM=%d",
                     plan->items, plan->lines, plan->stride, plan->win_items, plan->shfl,
                     plan->lr_local ? left->width : 1, plan->lr_local, p->ndisp, pixel_code(left),
                     p->census_width, p->census_height, p->census_symmetric != 0, plan->path8,
                     plan->sum);
    if (n < 0 || (size_t)n >= sizeof plan->options)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: kernel options overflow");
    return PV_OK;
}

static pv_status kernel(pv_context *ctx, const sgm_plan *plan, const char *name, cl_kernel *k)
{
    return pv_cl_family_kernel(ctx, "stereo_sgm", "sgm", plan->options, name, k);
}

/* A per-pixel kernel over the image. */
static pv_status run_pixels(pv_context *ctx, const sgm_plan *plan, const char *name,
                            const pv_image *left, const pv_cl_kernel_arg *args, int count)
{
    cl_kernel k;
    pv_status status = kernel(ctx, plan, name, &k);
    if (status != PV_OK)
        return status;
    const size_t local[2] = {(size_t)plan->wg_x, (size_t)plan->wg_y};
    const size_t global[2] = {round_up((size_t)left->width, local[0]),
                              round_up((size_t)left->height, local[1])};
    return pv_cl_launch_args(ctx, k, args, count, 2, global, local);
}

/* ------------------------------------------------------------------ buffers */

static pv_status upload(pv_context *ctx, const char *slot, const pv_image *image, cl_mem *buffer)
{
    const size_t bytes = (size_t)image->width * (size_t)image->height * pixel_bytes(image);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    return status == PV_OK ? pv_cl_write_image(ctx, *buffer, image) : status;
}

pv_status pv_cl_sgm_get_buffers(pv_context *ctx, const pv_image *left, const pv_image *right,
                                const pv_sgm_params *p, const sgm_plan *plan, sgm_buffers *b)
{
    static const char *const path_slots[8] = {"sgm.path0", "sgm.path1", "sgm.path2", "sgm.path3",
                                              "sgm.path4", "sgm.path5", "sgm.path6", "sgm.path7"};
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    const size_t cells = pixels * (size_t)plan->stride;
    pv_status status = upload(ctx, "sgm.left", left, &b->left);
    if (status == PV_OK)
        status = upload(ctx, "sgm.right", right, &b->right);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.census_l", pixels * sizeof(cl_ulong), &b->census_l);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.census_r", pixels * sizeof(cl_ulong), &b->census_r);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.intensity", (p->p2_adaptive ? pixels : 1) * sizeof(cl_int),
                               &b->intensity);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.cost", cells, &b->cost);
    /* Summed: the one 16-bit volume every direction adds into. */
    const int volumes = plan->sum ? 1 : p->paths;
    for (int i = 0; i < volumes && status == PV_OK; i++)
        status = pv_cl_scratch(ctx, plan->sum ? "sgm.sum" : path_slots[i],
                               cells * (plan->path8 ? 1 : 2), &b->path[i]);
    const size_t scratch = plan->lr_local || !p->lr_check ? 1 : pixels;
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.right_min", scratch * sizeof(cl_uint), &b->right_scratch);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.winner", scratch * sizeof(cl_short), &b->winner_scratch);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.disp", pixels * sizeof(cl_float), &b->disp);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.conf", pixels * sizeof(cl_float), &b->conf);
    if (status == PV_OK && p->median)
        status = pv_cl_scratch(ctx, "sgm.median", pixels * sizeof(cl_float), &b->median);
    for (int i = volumes; i < 8; i++)
        b->path[i] = b->path[0]; /* unread: the winner sums paths 0..3 only, or reads the sum */
    return status;
}

/* ------------------------------------------------------------------ stages */

static pv_status census(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                        const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_int width = left->width, height = left->height, with_i = p->p2_adaptive != 0, without = 0;
    const pv_cl_kernel_arg args_l[] = {PV_CL_ARG(b->left), PV_CL_ARG(width), PV_CL_ARG(height),
                                       PV_CL_ARG(b->census_l), PV_CL_ARG(b->intensity),
                                       PV_CL_ARG(with_i)};
    pv_status status = run_pixels(ctx, plan, "sgm_census", left, args_l, 6);
    const pv_cl_kernel_arg args_r[] = {PV_CL_ARG(b->right), PV_CL_ARG(width), PV_CL_ARG(height),
                                       PV_CL_ARG(b->census_r), PV_CL_ARG(b->intensity),
                                       PV_CL_ARG(without)};
    return status == PV_OK ? run_pixels(ctx, plan, "sgm_census", left, args_r, 6) : status;
}

static size_t line_count(const pv_image *left, int dx, int dy)
{
    if (dy == 0)
        return (size_t)left->height;
    if (dx == 0)
        return (size_t)left->width;
    return (size_t)left->width + (size_t)left->height - 1;
}

/* The cost volume: one item per cell. */
static pv_status costs(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                       const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_kernel k;
    pv_status status = kernel(ctx, plan, "sgm_costs", &k);
    if (status != PV_OK)
        return status;
    cl_int width = left->width, height = left->height, min_disp = p->min_disp;
    cl_int bits = sgm_census_bits(p->census_width, p->census_height, p->census_symmetric);
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(b->census_l), PV_CL_ARG(b->census_r),
                                     PV_CL_ARG(b->cost),     PV_CL_ARG(width),
                                     PV_CL_ARG(height),      PV_CL_ARG(min_disp),
                                     PV_CL_ARG(bits)};
    /* Items of four cells: a pixel's cells along dimension 0, so that a
     * warp reads neighbouring right census strings and writes one run. */
    const size_t quads = (size_t)plan->stride / 4;
    const size_t qx = quads < 64 ? quads : 64, rows = 256 / qx > 0 ? 256 / qx : 1;
    const size_t local[3] = {qx, rows, 1};
    const size_t global[3] = {round_up(quads, qx), round_up((size_t)left->width, rows),
                              (size_t)left->height};
    return pv_cl_launch_args(ctx, k, args, (int)(sizeof args / sizeof args[0]), 3, global, local);
}

/* The directions first..last-1 in one launch: the work-groups of each
 * direction follow those of the one before (the kernel finds its direction
 * the same way). */
static pv_status aggregate_directions(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                                      const pv_sgm_params *p, const sgm_buffers *b, int first,
                                      int last)
{
    cl_kernel k;
    pv_status status = kernel(ctx, plan, "sgm_paths", &k);
    if (status != PV_OK)
        return status;
    cl_int dir_first = first, dir_last = last, width = left->width, height = left->height;
    cl_int p1 = p->p1, p2 = p->p2, adaptive = p->p2_adaptive != 0;
    size_t groups = 0;
    for (int i = first; i < last; i++)
        groups += (line_count(left, directions[i][0], directions[i][1]) + (size_t)plan->lines - 1) /
                  (size_t)plan->lines;
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(b->cost),    PV_CL_ARG(b->intensity), PV_CL_ARG(b->path[0]),
        PV_CL_ARG(b->path[1]), PV_CL_ARG(b->path[2]),   PV_CL_ARG(b->path[3]),
        PV_CL_ARG(b->path[4]), PV_CL_ARG(b->path[5]),   PV_CL_ARG(b->path[6]),
        PV_CL_ARG(b->path[7]), PV_CL_ARG(dir_first),    PV_CL_ARG(dir_last),
        PV_CL_ARG(width),      PV_CL_ARG(height),       PV_CL_ARG(p1),
        PV_CL_ARG(p2),         PV_CL_ARG(adaptive)};
    const size_t local[2] = {(size_t)plan->items, (size_t)plan->lines};
    const size_t global[2] = {local[0], groups * local[1]};
    return pv_cl_launch_args(ctx, k, args, (int)(sizeof args / sizeof args[0]), 2, global, local);
}

/* Per-path volumes: every direction in one launch, side by side.  Summed:
 * one launch per direction, in order on the queue, each adding its path
 * costs into the sums (a direction visits each pixel once, so a launch
 * has no write conflicts, and the queue orders the launches). */
static pv_status aggregate(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                           const pv_sgm_params *p, const sgm_buffers *b)
{
    if (!plan->sum)
        return aggregate_directions(ctx, plan, left, p, b, 0, p->paths);
    pv_status status = PV_OK;
    for (int dir = 0; dir < p->paths && status == PV_OK; dir++)
        status = aggregate_directions(ctx, plan, left, p, b, dir, dir + 1);
    return status;
}

/* One work-group per row: winner, uniqueness, confidence, sub-pixel and
 * the left-right check. */
static pv_status winner(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                        const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_kernel k;
    pv_status status = kernel(ctx, plan, "sgm_winner_rows", &k);
    if (status != PV_OK)
        return status;
    cl_int paths = p->paths, width = left->width, min_disp = p->min_disp;
    cl_int subpixel = p->subpixel != 0, lr_check = p->lr_check != 0, max_diff = p->lr_max_diff;
    cl_uint u = sgm_uniqueness_fixed(p->uniqueness);
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(b->path[0]),  PV_CL_ARG(b->path[1]),        PV_CL_ARG(b->path[2]),
        PV_CL_ARG(b->path[3]),  PV_CL_ARG(b->path[4]),        PV_CL_ARG(b->path[5]),
        PV_CL_ARG(b->path[6]),  PV_CL_ARG(b->path[7]),        PV_CL_ARG(paths),
        PV_CL_ARG(b->disp),     PV_CL_ARG(b->conf),           PV_CL_ARG(b->right_scratch),
        PV_CL_ARG(b->winner_scratch), PV_CL_ARG(width),       PV_CL_ARG(min_disp),
        PV_CL_ARG(u),           PV_CL_ARG(subpixel),          PV_CL_ARG(lr_check),
        PV_CL_ARG(max_diff)};
    const size_t local[1] = {(size_t)plan->win_items};
    const size_t global[1] = {(size_t)plan->win_items * (size_t)left->height};
    return pv_cl_launch_args(ctx, k, args, (int)(sizeof args / sizeof args[0]), 1, global, local);
}

static pv_status median(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                        const sgm_buffers *b)
{
    cl_int width = left->width, height = left->height;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(b->disp), PV_CL_ARG(b->median), PV_CL_ARG(width),
                                     PV_CL_ARG(height)};
    return run_pixels(ctx, plan, "sgm_median", left, args, 4);
}

pv_status pv_cl_sgm_enqueue_pair(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                                 const pv_sgm_params *p, const sgm_buffers *b)
{
    pv_status status = census(ctx, plan, left, p, b);
    if (status == PV_OK)
        status = costs(ctx, plan, left, p, b);
    if (status == PV_OK)
        status = aggregate(ctx, plan, left, p, b);
    if (status == PV_OK)
        status = winner(ctx, plan, left, p, b);
    if (status == PV_OK && p->median)
        status = median(ctx, plan, left, b);
    return status;
}

static pv_status run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sgm_params *p, pv_image *disparity, pv_image *confidence)
{
    sgm_plan plan;
    sgm_buffers b = {0};
    pv_status status = pv_cl_sgm_make_plan(ctx, left, p, &plan);
    if (status == PV_OK)
        status = pv_cl_sgm_get_buffers(ctx, left, right, p, &plan, &b);
    if (status == PV_OK)
        status = pv_cl_sgm_enqueue_pair(ctx, &plan, left, p, &b);
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, p->median ? b.median : b.disp, disparity);
    if (status == PV_OK && confidence)
        status = pv_cl_download_image(ctx, b.conf, confidence);
    return status;
}

pv_status pv_cl_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                    const pv_sgm_params *params, pv_image *disparity, pv_image *confidence)
{
    return pv_cl_finish_after(ctx, run(ctx, left, right, params, disparity, confidence));
}
