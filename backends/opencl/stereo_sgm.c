/* OpenCL semi-global matching: host side of kernels/stereo_sgm.cl.
 *
 * One upload of each image, then on the device: the census of both images
 * (and the left intensities under the adaptive P2), one sgm_path launch
 * per direction writing that path's L_r(p, d) once (8-bit when
 * bits + P2 <= 255, else 16-bit), the winner (sums S once into 16 bits,
 * winner, uniqueness, confidence, sub-pixel), the left-right check from the
 * same S, the optional median; one download of the result (and of the
 * confidence).  The launch shape is the "sgm" parameter family below, the
 * one place where it is set (and tuned). */
#include "opencl.h"
#include "../common/sgm_math.h"

#include <stdio.h>

static const pv_cl_param_default sgm_defaults[] = {
    {"SGM_ITEMS", 16},  /* work-items sharing one scan line of a path        */
    {"SGM_LINES", 8},   /* scan lines per aggregation work-group              */
    {"SGM_WG_X", 32},   /* per-pixel kernels (census, winner, check): x size  */
    {"SGM_WG_Y", 4},    /* ... and y size                                     */
};

const pv_cl_param_family pv_cl_params_sgm = {
    "sgm", sgm_defaults, sizeof sgm_defaults / sizeof sgm_defaults[0]};

/* The eight directions (dx, dy); the first four are the 4-path set. */
static const int directions[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1},
                                     {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

typedef struct sgm_plan {
    int items, lines, wg_x, wg_y;
    int path8;        /* path costs fit 8 bits */
    char options[256];
} sgm_plan;

typedef struct sgm_buffers {
    cl_mem left, right, census_l, census_r, intensity;
    cl_mem path[8];
    cl_mem sum, disp, winner, conf, median;
} sgm_buffers;

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

static pv_status make_plan(pv_context *ctx, const pv_image *left, const pv_sgm_params *p,
                           sgm_plan *plan)
{
    plan->items = sgm_param(ctx, "SGM_ITEMS");
    plan->lines = sgm_param(ctx, "SGM_LINES");
    plan->wg_x = sgm_param(ctx, "SGM_WG_X");
    plan->wg_y = sgm_param(ctx, "SGM_WG_Y");
    const int most = pv_cl_device_info(ctx)->max_work_group_size;
    if (plan->items < 1 || plan->lines < 1 || plan->items * plan->lines > most ||
        plan->wg_x < 1 || plan->wg_y < 1 || plan->wg_x * plan->wg_y > most)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: launch parameters sgm.SGM_ITEMS x SGM_LINES = %dx%d or "
                       "SGM_WG_X x SGM_WG_Y = %dx%d do not fit work-groups of %d items",
                       plan->items, plan->lines, plan->wg_x, plan->wg_y, most);
    const int bits = sgm_census_bits(p->census_width, p->census_height, p->census_symmetric);
    plan->path8 = bits + p->p2 <= 255;
    const int dpi = (p->ndisp + plan->items - 1) / plan->items;
    int n = snprintf(plan->options, sizeof plan->options,
                     " -DSGM_DPI=%d -DSGM_NDISP=%d -DSGM_PIXEL=%d -DSGM_CENSUS_W=%d "
                     "-DSGM_CENSUS_H=%d -DSGM_CENSUS_SYM=%d -DSGM_PATH8=%d",
                     dpi, p->ndisp, pixel_code(left), p->census_width, p->census_height,
                     p->census_symmetric != 0, plan->path8);
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

static pv_status get_buffers(pv_context *ctx, const pv_image *left, const pv_image *right,
                             const pv_sgm_params *p, const sgm_plan *plan, sgm_buffers *b)
{
    static const char *const path_slots[8] = {"sgm.path0", "sgm.path1", "sgm.path2", "sgm.path3",
                                              "sgm.path4", "sgm.path5", "sgm.path6", "sgm.path7"};
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    const size_t cells = pixels * (size_t)p->ndisp;
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
    for (int i = 0; i < p->paths && status == PV_OK; i++)
        status = pv_cl_scratch(ctx, path_slots[i], cells * (plan->path8 ? 1 : 2), &b->path[i]);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.sum", cells * sizeof(cl_ushort), &b->sum);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.disp", pixels * sizeof(cl_float), &b->disp);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.winner", pixels * sizeof(cl_int), &b->winner);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.conf", pixels * sizeof(cl_float), &b->conf);
    if (status == PV_OK && p->median)
        status = pv_cl_scratch(ctx, "sgm.median", pixels * sizeof(cl_float), &b->median);
    for (int i = p->paths; i < 8; i++)
        b->path[i] = b->path[0]; /* unread: the winner sums paths 0..3 only */
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

static pv_status aggregate(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                           const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_kernel k;
    pv_status status = kernel(ctx, plan, "sgm_path", &k);
    cl_int width = left->width, height = left->height, min_disp = p->min_disp, p1 = p->p1;
    cl_int p2 = p->p2, adaptive = p->p2_adaptive != 0;
    cl_int bits = sgm_census_bits(p->census_width, p->census_height, p->census_symmetric);
    for (int i = 0; i < p->paths && status == PV_OK; i++) {
        cl_int dx = directions[i][0], dy = directions[i][1];
        const pv_cl_kernel_arg args[] = {
            PV_CL_ARG(b->census_l), PV_CL_ARG(b->census_r), PV_CL_ARG(b->intensity),
            PV_CL_ARG(b->path[i]), PV_CL_ARG(width), PV_CL_ARG(height), PV_CL_ARG(min_disp),
            PV_CL_ARG(p1), PV_CL_ARG(p2), PV_CL_ARG(adaptive), PV_CL_ARG(dx), PV_CL_ARG(dy),
            PV_CL_ARG(bits)};
        const size_t local[2] = {(size_t)plan->items, (size_t)plan->lines};
        const size_t global[2] = {local[0], round_up(line_count(left, dx, dy), local[1])};
        status = pv_cl_launch_args(ctx, k, args, 13, 2, global, local);
    }
    return status;
}

static pv_status winner(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                        const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_int paths = p->paths, width = left->width, height = left->height;
    cl_int min_disp = p->min_disp, subpixel = p->subpixel != 0;
    cl_uint u = sgm_uniqueness_fixed(p->uniqueness);
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(b->path[0]), PV_CL_ARG(b->path[1]), PV_CL_ARG(b->path[2]),
        PV_CL_ARG(b->path[3]), PV_CL_ARG(b->path[4]), PV_CL_ARG(b->path[5]),
        PV_CL_ARG(b->path[6]), PV_CL_ARG(b->path[7]), PV_CL_ARG(paths), PV_CL_ARG(b->sum),
        PV_CL_ARG(b->disp), PV_CL_ARG(b->winner), PV_CL_ARG(b->conf), PV_CL_ARG(width),
        PV_CL_ARG(height), PV_CL_ARG(min_disp), PV_CL_ARG(u), PV_CL_ARG(subpixel)};
    return run_pixels(ctx, plan, "sgm_winner", left, args, 18);
}

static pv_status lr_check(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                          const pv_sgm_params *p, const sgm_buffers *b)
{
    cl_int width = left->width, height = left->height, min_disp = p->min_disp;
    cl_int max_diff = p->lr_max_diff;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(b->sum), PV_CL_ARG(b->winner), PV_CL_ARG(b->disp),
                                     PV_CL_ARG(b->conf), PV_CL_ARG(width), PV_CL_ARG(height),
                                     PV_CL_ARG(min_disp), PV_CL_ARG(max_diff)};
    return run_pixels(ctx, plan, "sgm_lr_check", left, args, 8);
}

static pv_status median(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                        const sgm_buffers *b)
{
    cl_int width = left->width, height = left->height;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(b->disp), PV_CL_ARG(b->median), PV_CL_ARG(width),
                                     PV_CL_ARG(height)};
    return run_pixels(ctx, plan, "sgm_median", left, args, 4);
}

static pv_status run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sgm_params *p, pv_image *disparity, pv_image *confidence)
{
    sgm_plan plan;
    sgm_buffers b = {0};
    pv_status status = make_plan(ctx, left, p, &plan);
    if (status == PV_OK)
        status = get_buffers(ctx, left, right, p, &plan, &b);
    if (status == PV_OK)
        status = census(ctx, &plan, left, p, &b);
    if (status == PV_OK)
        status = aggregate(ctx, &plan, left, p, &b);
    if (status == PV_OK)
        status = winner(ctx, &plan, left, p, &b);
    if (status == PV_OK && p->lr_check)
        status = lr_check(ctx, &plan, left, p, &b);
    if (status == PV_OK && p->median)
        status = median(ctx, &plan, left, &b);
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
