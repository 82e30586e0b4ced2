/* OpenCL normxcorr2: the cross term by FFT (template and image padded to
 * the job's grid, the spectrum product, the inverse), the local sums by
 * integral images, the coefficient kernel; its batch, one template against
 * many images; and its masked form by direct sums (kernels/register.cl,
 * backends/common/ncc_masked.h).
 *
 * A batch enqueues every image's work on the in-order queue and waits
 * once: the template's upload, spectrum and integral images are made
 * once, each image then reuses the same scratch buffers (the queue's
 * order keeps image i + 1's upload behind image i's kernels), and the maps
 * are read back without waiting.  Each image runs exactly the single
 * call's kernels on the same numbers, so a batch gives the single calls'
 * maps. */
#include "register_shared.h"

#include <string.h>

typedef struct ncc_buffers {
    cl_mem image, templ, image_pad, templ_pad, image_spec, templ_spec;
    cl_mem sum_i, sum_i2, sum_t, sum_t2, map;
} ncc_buffers;

/* The sizes one image's work needs; a batch's images share them. */
static pv_status ncc_scratch(pv_context *ctx, const pv_image *t, const pv_image *im,
                             const pv_cl_fft *fft, ncc_buffers *b)
{
    size_t real = pv_cl_fft_real_count(fft) * sizeof(float);
    size_t spec = pv_cl_fft_complex_count(fft) * 2 * sizeof(float);
    size_t image_sums = (size_t)(im->width + 1) * (im->height + 1) * sizeof(float);
    size_t templ_sums = (size_t)(t->width + 1) * (t->height + 1) * sizeof(float);
    size_t map = (size_t)(im->width + t->width - 1) * (im->height + t->height - 1) * sizeof(float);
    struct { const char *slot; size_t bytes; cl_mem *buffer; } wanted[] = {
        {"ncc.image", (size_t)im->width * im->height * sizeof(float), &b->image},
        {"ncc.templ", (size_t)t->width * t->height * sizeof(float), &b->templ},
        {"ncc.image_pad", real, &b->image_pad}, {"ncc.templ_pad", real, &b->templ_pad},
        {"ncc.image_spec", spec, &b->image_spec}, {"ncc.templ_spec", spec, &b->templ_spec},
        {"ncc.sum_i", image_sums, &b->sum_i}, {"ncc.sum_i2", image_sums, &b->sum_i2},
        {"ncc.sum_t", templ_sums, &b->sum_t}, {"ncc.sum_t2", templ_sums, &b->sum_t2},
        {"ncc.map", map, &b->map}};
    pv_status status = PV_OK;
    for (size_t i = 0; status == PV_OK && i < sizeof wanted / sizeof wanted[0]; i++)
        status = pv_cl_scratch(ctx, wanted[i].slot, wanted[i].bytes, wanted[i].buffer);
    return status;
}

/* src (dense f32) into dense, then padded into the grid fft.  A batch's
 * uploads do not wait: src stays as it is until the call's final wait. */
static pv_status ncc_upload_padded(pv_context *ctx, const pv_image *src, const int fft[2],
                                   int wait, cl_mem dense, cl_mem padded)
{
    int size[3] = {src->width, src->height, 1}, grid[3] = {fft[0], fft[1], 1};
    pad_job job = {dense, padded, 0, 0, size, grid, 0.0f, dense, 0};
    size_t bytes = (size_t)src->width * src->height * sizeof(float);
    pv_status status = wait ? pv_cl_write(ctx, dense, 0, bytes, src->data)
                            : pv_cl_write_async(ctx, dense, 0, bytes, src->data);
    if (status == PV_OK)
        status = pv_cl_register_pad(ctx, &job);
    return status;
}

static pv_status integral_image(pv_context *ctx, cl_mem src, int w, int h, cl_int squared,
                                cl_mem table)
{
    cl_int cw = w, ch = h;
    kernel_arg rows[] = {PV_CL_ARG(src), PV_CL_ARG(cw), PV_CL_ARG(ch), PV_CL_ARG(squared),
                         PV_CL_ARG(table)};
    kernel_arg cols[] = {PV_CL_ARG(table), PV_CL_ARG(cw), PV_CL_ARG(ch)};
    size_t scan_wg = (size_t)pv_cl_register_param(ctx, "NCC_SCAN_WG");
    size_t row_global[2] = {scan_wg, (size_t)h + 1}, row_local[2] = {scan_wg, 1};
    size_t col_global[1] = {(size_t)w + 1};
    size_t col_local[1] = {(size_t)pv_cl_register_param(ctx, "NCC_COL_WG")};
    pv_status status = pv_cl_run(ctx, "register", "register", "ncc_prefix_rows", rows,
                                 PV_CL_ARG_COUNT(rows), 2, row_global, row_local);
    if (status == PV_OK)
        status = pv_cl_run(ctx, "register", "register", "ncc_prefix_cols", cols,
                           PV_CL_ARG_COUNT(cols), 1, col_global, col_local);
    return status;
}

/* The template's spectrum and integral images (once per call). */
static pv_status ncc_template_side(pv_context *ctx, const pv_image *templ, const int fft_size[2],
                                   int wait, pv_cl_fft *fft, ncc_buffers *b)
{
    pv_status status = ncc_upload_padded(ctx, templ, fft_size, wait, b->templ, b->templ_pad);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, fft, b->templ_pad, b->templ_spec);
    if (status == PV_OK)
        status = integral_image(ctx, b->templ, templ->width, templ->height, 0, b->sum_t);
    if (status == PV_OK)
        status = integral_image(ctx, b->templ, templ->width, templ->height, 1, b->sum_t2);
    return status;
}

/* The cross term of one image with the template into image_pad, and the
 * image's integral images. */
static pv_status ncc_image_side(pv_context *ctx, const pv_image *image, const int fft_size[2],
                                int wait, pv_cl_fft *fft, ncc_buffers *b)
{
    pv_status status = ncc_upload_padded(ctx, image, fft_size, wait, b->image, b->image_pad);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, fft, b->image_pad, b->image_spec);
    if (status == PV_OK) {
        cl_uint count = (cl_uint)pv_cl_fft_complex_count(fft);
        cl_float scale = (cl_float)(1.0 / ((double)fft_size[0] * fft_size[1]));
        kernel_arg args[] = {PV_CL_ARG(b->image_spec), PV_CL_ARG(b->templ_spec),
                             PV_CL_ARG(count), PV_CL_ARG(scale)};
        status = pv_cl_register_launch_1d(ctx, "ncc_product", args, PV_CL_ARG_COUNT(args),
                                          count);
    }
    if (status == PV_OK)
        status = pv_cl_fft_inverse(ctx, fft, b->image_spec, b->image_pad);
    if (status == PV_OK)
        status = integral_image(ctx, b->image, image->width, image->height, 0, b->sum_i);
    if (status == PV_OK)
        status = integral_image(ctx, b->image, image->width, image->height, 1, b->sum_i2);
    return status;
}

/* The coefficient map of one image into b->map. */
static pv_status ncc_coefficients(pv_context *ctx, const pv_image *templ, const pv_image *image,
                                  const int fft_size[2], int min_overlap, const cl_float floors[2],
                                  ncc_buffers *b)
{
    cl_int n[7] = {image->width, image->height, templ->width, templ->height,
                   fft_size[0],  fft_size[1],   min_overlap};
    kernel_arg args[] = {PV_CL_ARG(b->image_pad), PV_CL_ARG(b->sum_i),  PV_CL_ARG(b->sum_i2),
                         PV_CL_ARG(b->sum_t),     PV_CL_ARG(b->sum_t2), PV_CL_ARG(n[0]),
                         PV_CL_ARG(n[1]),         PV_CL_ARG(n[2]),      PV_CL_ARG(n[3]),
                         PV_CL_ARG(n[4]),         PV_CL_ARG(n[5]),      PV_CL_ARG(n[6]),
                         PV_CL_ARG(floors[0]),    PV_CL_ARG(floors[1]), PV_CL_ARG(b->map)};
    size_t global[2] = {(size_t)(n[0] + n[2] - 1), (size_t)(n[1] + n[3] - 1)};
    size_t local[2] = {(size_t)pv_cl_register_param(ctx, "NCC_WG_X"),
                       (size_t)pv_cl_register_param(ctx, "NCC_WG_Y")};
    return pv_cl_run(ctx, "register", "register", "ncc_coefficients", args, PV_CL_ARG_COUNT(args),
                     2, global, local);
}

pv_status pv_cl_ncc(pv_context *ctx, const pv_ncc_job *job, pv_image *map)
{
    int size[3] = {job->fft[0], job->fft[1], 1};
    const cl_float floors[2] = {job->image_floor, job->templ_floor};
    pv_cl_fft *fft = NULL;
    ncc_buffers b;
    pv_status status = pv_cl_fft_acquire(ctx, size, 1, &fft);
    if (status != PV_OK)
        return status;
    status = ncc_scratch(ctx, &job->templ, &job->image, fft, &b);
    if (status == PV_OK)
        status = ncc_template_side(ctx, &job->templ, job->fft, 1, fft, &b);
    if (status == PV_OK)
        status = ncc_image_side(ctx, &job->image, job->fft, 1, fft, &b);
    if (status == PV_OK)
        status = ncc_coefficients(ctx, &job->templ, &job->image, job->fft, job->min_overlap,
                                  floors, &b);
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, b.map, map);
    status = pv_cl_register_finish(ctx, fft, status);
    pv_cl_fft_release(fft);
    return status;
}

/* b->map into the (possibly strided) host map, without waiting. */
static pv_status ncc_read_map(pv_context *ctx, const ncc_buffers *b, pv_image *map)
{
    const size_t row = (size_t)map->width * sizeof(float);
    const pv_cl_rows rows = {0, row, (size_t)map->stride * sizeof(float), (size_t)map->height,
                             row};
    return pv_cl_read_rows_async(ctx, b->map, &rows, map->data);
}

pv_status pv_cl_ncc_batch(pv_context *ctx, const pv_ncc_batch_job *job, pv_image *maps)
{
    int size[3] = {job->fft[0], job->fft[1], 1};
    const cl_float floors[2] = {job->image_floor, job->templ_floor};
    pv_cl_fft *fft = NULL;
    ncc_buffers b;
    pv_status status = pv_cl_fft_acquire(ctx, size, 1, &fft);
    if (status != PV_OK)
        return status;
    status = ncc_scratch(ctx, &job->templ, &job->images[0], fft, &b);
    if (status == PV_OK)
        status = ncc_template_side(ctx, &job->templ, job->fft, 0, fft, &b);
    for (int i = 0; status == PV_OK && i < job->count; i++) {
        status = ncc_image_side(ctx, &job->images[i], job->fft, 0, fft, &b);
        if (status == PV_OK)
            status = ncc_coefficients(ctx, &job->templ, &job->images[i], job->fft,
                                      job->min_overlap, floors, &b);
        if (status == PV_OK)
            status = ncc_read_map(ctx, &b, &maps[i]);
    }
    status = pv_cl_register_finish(ctx, fft, status);
    pv_cl_fft_release(fft);
    return status;
}

/* ============================================================ masked */

pv_status pv_cl_ncc_masked(pv_context *ctx, const pv_ncc_masked_job *job, pv_image *map)
{
    const pv_image *parts[4] = {&job->templ, &job->templ_mask, &job->image, &job->image_mask};
    static const char *const slots[4] = {"nccm.templ", "nccm.templ_mask", "nccm.image",
                                         "nccm.image_mask"};
    cl_mem buffers[4], out;
    pv_status status = PV_OK;
    for (int k = 0; status == PV_OK && k < 4; k++) {
        size_t bytes = (size_t)parts[k]->width * parts[k]->height * sizeof(float);
        status = pv_cl_scratch(ctx, slots[k], bytes, &buffers[k]);
        cl_mem caller;
        size_t at;
        /* a device-buffer call's part, made on the device: copied there */
        if (status == PV_OK && pv_cl_bound_buffer(ctx, parts[k]->data, &caller, &at))
            status = pv_cl_write_image(ctx, buffers[k], parts[k]);
        else if (status == PV_OK)
            status = pv_cl_write(ctx, buffers[k], 0, bytes, parts[k]->data);
    }
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "nccm.map",
                               (size_t)map->width * map->height * sizeof(float), &out);
    if (status == PV_OK) {
        cl_int n[5] = {job->templ.width, job->templ.height, job->image.width, job->image.height,
                       job->min_overlap};
        cl_float floor_ratio = job->floor_ratio;
        kernel_arg args[] = {PV_CL_ARG(buffers[0]), PV_CL_ARG(buffers[1]), PV_CL_ARG(n[0]),
                             PV_CL_ARG(n[1]),       PV_CL_ARG(buffers[2]), PV_CL_ARG(buffers[3]),
                             PV_CL_ARG(n[2]),       PV_CL_ARG(n[3]),       PV_CL_ARG(n[4]),
                             PV_CL_ARG(floor_ratio), PV_CL_ARG(out)};
        size_t global[2] = {(size_t)map->width, (size_t)map->height};
        size_t local[2] = {(size_t)pv_cl_register_param(ctx, "NCC_WG_X"),
                           (size_t)pv_cl_register_param(ctx, "NCC_WG_Y")};
        status = pv_cl_run(ctx, "register", "register", "ncc_masked", args,
                           PV_CL_ARG_COUNT(args), 2, global, local);
    }
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, out, map);
    return pv_cl_register_finish(ctx, NULL, status);
}
