/* OpenCL filters: host side of kernels/filter.cl.
 *
 * Data is packed densely on the device; buffers are per-context scratch
 * slots, so repeated calls on one size allocate nothing.  Separable passes
 * run x, then y, then z, through a device temporary, in the same order as
 * the CPU backend. */
#include "../opencl.h"

#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default filter_defaults[] = {
    {"FILTER_WG_X", 32},      /* Gaussian passes: work-group width ...   */
    {"FILTER_WG_Y", 8},       /* ... and height                          */
    {"FILTER_ROW_STEPS", 4},  /* row pass: outputs per work item along x */
    {"FILTER_COL_STEPS", 4},  /* column pass: outputs per item along y   */
    {"FILTER_GRAD_WG_X", 32}, /* gradient work-group shape               */
    {"FILTER_GRAD_WG_Y", 8},
};

const pv_cl_param_family pv_cl_params_filter = {
    "filter", filter_defaults, sizeof filter_defaults / sizeof filter_defaults[0]};

/* Extent of a dense device image (nz = 1) or volume. */
typedef struct grid {
    cl_int nx, ny, nz;
} grid;

/* The runtime's kernel argument (runtime.h), under this file's short name. */
typedef pv_cl_kernel_arg kernel_arg;

static int param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "filter", name, 1);
}

static size_t round_up_div(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

/* Kernel `name` of kernels/filter.cl with args, over global in groups local. */
static pv_status run_filter(pv_context *ctx, const char *name, const kernel_arg *args, int count,
                            const size_t *global, const size_t *local)
{
    return pv_cl_run(ctx, "filter", "filter", name, args, count, 3, global, local);
}

/* ------------------------------------------------------------- transfers */

/* Upload an image / volume into scratch slot `slot` (strided host rows are
 * gathered by the rectangular copy itself). */
static pv_status upload_image(pv_context *ctx, const char *slot, const pv_image *image,
                              cl_mem *buffer)
{
    size_t bytes = (size_t)image->width * (size_t)image->height * pv_pixel_size(image->type);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    return status == PV_OK ? pv_cl_write_image(ctx, *buffer, image) : status;
}

static pv_status upload_volume(pv_context *ctx, const char *slot, const pv_volume *volume,
                               cl_mem *buffer)
{
    size_t bytes = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    return status == PV_OK ? pv_cl_write_volume(ctx, *buffer, volume) : status;
}

static size_t grid_floats_bytes(grid g)
{
    return (size_t)g.nx * (size_t)g.ny * (size_t)g.nz * sizeof(float);
}

static pv_status upload_weights(pv_context *ctx, const float *weights, int radius, cl_mem *buffer)
{
    size_t bytes = (size_t)(2 * radius + 1) * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, "filter.weights", bytes, buffer);
    return status == PV_OK ? pv_cl_write(ctx, *buffer, 0, bytes, weights) : status;
}

/* --------------------------------------------------------- Gaussian passes */

/* Local memory for a tile of `lines` lines of `length` outputs plus the
 * 2r apron, if the device has that much; 0 when it does not. */
static size_t tile_bytes(pv_context *ctx, int lines, int length, int radius)
{
    size_t bytes = (size_t)lines * ((size_t)length + 2 * (size_t)radius) * sizeof(float);
    return bytes <= pv_cl_device_info(ctx)->local_memory ? bytes : 0;
}

/* Untiled pass along `axis`, one output per work item. */
static pv_status pass_axis(pv_context *ctx, cl_mem in, int in_u8, cl_mem out, cl_mem weights,
                           cl_int radius, grid g, cl_int axis)
{
    const kernel_arg args[] = {
        {sizeof in, &in},         {sizeof out, &out}, {sizeof weights, &weights},
        {sizeof radius, &radius}, {sizeof g.nx, &g.nx}, {sizeof g.ny, &g.ny},
        {sizeof g.nz, &g.nz},     {sizeof axis, &axis},
    };
    size_t local[3] = {(size_t)param(ctx, "FILTER_WG_X"), (size_t)param(ctx, "FILTER_WG_Y"), 1};
    size_t global[3] = {(size_t)g.nx, (size_t)g.ny, (size_t)g.nz};
    return run_filter(ctx, in_u8 ? "gauss_axis_u8" : "gauss_axis_f32", args, PV_CL_ARG_COUNT(args),
                      global, local);
}

/* A tiled Gaussian pass: its seven arguments, the last the tile's local
 * memory, over a 3D range. */
static pv_status launch_tiled(pv_context *ctx, const char *name, cl_mem in, cl_mem out,
                              cl_mem weights, cl_int radius, grid g, size_t local_bytes,
                              const size_t local[3], const size_t global[3])
{
    const kernel_arg args[] = {
        {sizeof in, &in},         {sizeof out, &out},   {sizeof weights, &weights},
        {sizeof radius, &radius}, {sizeof g.nx, &g.nx}, {sizeof g.ny, &g.ny},
        {local_bytes, NULL},
    };
    return run_filter(ctx, name, args, PV_CL_ARG_COUNT(args), global, local);
}

/* x pass; falls back to the untiled kernel when the tile (very wide
 * kernels) does not fit in local memory. */
static pv_status pass_rows(pv_context *ctx, cl_mem in, int in_u8, cl_mem out, cl_mem weights,
                           cl_int radius, grid g)
{
    const int wg_x = param(ctx, "FILTER_WG_X"), wg_y = param(ctx, "FILTER_WG_Y");
    const int tile = wg_x * param(ctx, "FILTER_ROW_STEPS");
    size_t local_bytes = tile_bytes(ctx, wg_y, tile, radius);
    if (!local_bytes)
        return pass_axis(ctx, in, in_u8, out, weights, radius, g, 0);
    size_t local[3] = {(size_t)wg_x, (size_t)wg_y, 1};
    size_t global[3] = {round_up_div((size_t)g.nx, (size_t)tile) * (size_t)wg_x, (size_t)g.ny,
                        (size_t)g.nz};
    return launch_tiled(ctx, in_u8 ? "gauss_rows_u8" : "gauss_rows_f32", in, out, weights, radius,
                        g, local_bytes, local, global);
}

/* y pass (f32 in), tiled like the rows. */
static pv_status pass_cols(pv_context *ctx, cl_mem in, cl_mem out, cl_mem weights, cl_int radius,
                           grid g)
{
    const int wg_x = param(ctx, "FILTER_WG_X"), wg_y = param(ctx, "FILTER_WG_Y");
    const int tile = wg_y * param(ctx, "FILTER_COL_STEPS");
    size_t local_bytes = tile_bytes(ctx, wg_x, tile, radius);
    if (!local_bytes)
        return pass_axis(ctx, in, 0, out, weights, radius, g, 1);
    size_t local[3] = {(size_t)wg_x, (size_t)wg_y, 1};
    size_t global[3] = {(size_t)g.nx, round_up_div((size_t)g.ny, (size_t)tile) * (size_t)wg_y,
                        (size_t)g.nz};
    return launch_tiled(ctx, "gauss_cols", in, out, weights, radius, g, local_bytes, local,
                        global);
}

/* -------------------------------------------------------------- Gaussian */

/* Blur the uploaded source `in` (dense, u8 only when 2D): x into the
 * scratch "filter.tmp", y into an f32 buffer, then, for volumes, z back
 * into "filter.tmp"; *result is the buffer holding the blur.  A volume's
 * y pass overwrites its uploaded copy (ours), so a volume needs two
 * buffers in all; an image, which may be u8, gets "filter.dst". */
static pv_status blur_on_device(pv_context *ctx, cl_mem in, int in_u8, grid g, int along_z,
                                const float *weights, cl_int radius, cl_mem *result)
{
    cl_mem w, tmp, out = in;
    pv_status status = upload_weights(ctx, weights, radius, &w);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "filter.tmp", grid_floats_bytes(g), &tmp);
    if (status == PV_OK && !along_z)
        status = pv_cl_scratch(ctx, "filter.dst", grid_floats_bytes(g), &out);
    if (status == PV_OK)
        status = pass_rows(ctx, in, in_u8, tmp, w, radius, g);
    if (status == PV_OK)
        status = pass_cols(ctx, tmp, out, w, radius, g);
    if (status == PV_OK && along_z)
        status = pass_axis(ctx, out, 0, tmp, w, radius, g, 2);
    *result = along_z ? tmp : out;
    return status;
}

static pv_status pv_cl_gaussian2d(pv_context *ctx, const pv_image *src, pv_image *dst,
                                  const float *weights, int radius)
{
    grid g = {src->width, src->height, 1};
    cl_mem in, out;
    pv_status status = upload_image(ctx, "filter.src", src, &in);
    if (status == PV_OK)
        status = blur_on_device(ctx, in, src->type == PV_PIXEL_U8, g, 0, weights, radius, &out);
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, out, dst);
    return pv_cl_finish_after(ctx, status);
}

static pv_status pv_cl_gaussian3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                                  const float *weights, int radius)
{
    grid g = {src->nx, src->ny, src->nz};
    cl_mem in, out;
    pv_status status = upload_volume(ctx, "filter.src", src, &in);
    if (status == PV_OK)
        status = blur_on_device(ctx, in, 0, g, 1, weights, radius, &out);
    if (status == PV_OK)
        status = pv_cl_download_volume(ctx, out, dst);
    return pv_cl_finish_after(ctx, status);
}

/* -------------------------------------------------------------- gradients */

/* The derivative of the dense device input `in` along `axis` into the
 * scratch slot `slot`; *out receives the buffer. */
static pv_status gradient_axis(pv_context *ctx, cl_mem in, int in_u8, grid g, cl_int axis,
                               cl_int scheme, const char *slot, cl_mem *out)
{
    pv_status status = pv_cl_scratch(ctx, slot, grid_floats_bytes(g), out);
    if (status != PV_OK)
        return status;
    const kernel_arg args[] = {
        {sizeof in, &in},     {sizeof *out, out},   {sizeof g.nx, &g.nx},     {sizeof g.ny, &g.ny},
        {sizeof g.nz, &g.nz}, {sizeof axis, &axis}, {sizeof scheme, &scheme},
    };
    size_t local[3] = {(size_t)param(ctx, "FILTER_GRAD_WG_X"), (size_t)param(ctx, "FILTER_GRAD_WG_Y"),
                       1};
    size_t global[3] = {(size_t)g.nx, (size_t)g.ny, (size_t)g.nz};
    return run_filter(ctx, in_u8 ? "gradient_u8" : "gradient_f32", args, PV_CL_ARG_COUNT(args),
                      global, local);
}

/* The derivatives of the uploaded source `in` along each axis whose bit is
 * set in `wanted` (1 x, 2 y, 4 z), each into its own scratch slot. */
static pv_status gradients_on_device(pv_context *ctx, cl_mem in, int in_u8, grid g, int wanted,
                                     cl_int scheme, cl_mem buffers[3])
{
    static const char *const slots[3] = {"filter.gx", "filter.gy", "filter.gz"};
    pv_status status = PV_OK;
    for (int axis = 0; axis < 3 && status == PV_OK; axis++)
        if (wanted & (1 << axis))
            status = gradient_axis(ctx, in, in_u8, g, axis, scheme, slots[axis], &buffers[axis]);
    return status;
}

static pv_status pv_cl_gradient2d(pv_context *ctx, const pv_image *src, pv_image *gx,
                                  pv_image *gy, pv_gradient_scheme scheme)
{
    pv_image *const outs[2] = {gx, gy};
    grid g = {src->width, src->height, 1};
    cl_mem in, buffers[3] = {NULL, NULL, NULL};
    pv_status status = upload_image(ctx, "filter.src", src, &in);
    if (status == PV_OK)
        status = gradients_on_device(ctx, in, src->type == PV_PIXEL_U8, g,
                                     (gx != NULL) | (gy != NULL) << 1, (cl_int)scheme, buffers);
    for (int axis = 0; axis < 2 && status == PV_OK; axis++)
        if (outs[axis])
            status = pv_cl_download_image(ctx, buffers[axis], outs[axis]);
    return pv_cl_finish_after(ctx, status);
}

static pv_status pv_cl_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                                  pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme)
{
    pv_volume *const outs[3] = {gx, gy, gz};
    grid g = {src->nx, src->ny, src->nz};
    cl_mem in, buffers[3] = {NULL, NULL, NULL};
    pv_status status = upload_volume(ctx, "filter.src", src, &in);
    if (status == PV_OK)
        status = gradients_on_device(ctx, in, 0, g,
                                     (gx != NULL) | (gy != NULL) << 1 | (gz != NULL) << 2,
                                     (cl_int)scheme, buffers);
    for (int axis = 0; axis < 3 && status == PV_OK; axis++)
        if (outs[axis])
            status = pv_cl_download_volume(ctx, buffers[axis], outs[axis]);
    return pv_cl_finish_after(ctx, status);
}

const pv_filter_ops pv_cl_filter_ops = {PV_FILTER_SLOTS(PV_OPS_BIND, pv_cl_)};
