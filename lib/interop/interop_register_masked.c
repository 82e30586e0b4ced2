/* Device-buffer forms of masked phase correlation, 2D and 3D, and of
 * masked normxcorr2 (include/parvis/interop.h): the images and masks are
 * named and the host call runs through pv_interop_device_call
 * (lib/interop/interop.c).  The host call's read of each side (the masked
 * mean, range, energy or deviation, the centred copy and the 0 / 1 mask)
 * runs on the device in such a call (lib/register/register_device.c,
 * kernels/interop.cl), with the host's numbers, and the copies go to the
 * transforms on the device.  Host results (a shift, a peak) are found into
 * locals and written only on success. */
#include "interop_internal.h"

typedef struct masked_args {
    const pv_phasecorr_masked_params *params;
    pv_shift *shift;
} masked_args;

static pv_status host_masked(pv_context *ctx, void *const *items, const void *args)
{
    const masked_args *a = args;
    return pv_phase_correlate_masked(ctx, items[0], items[1], items[2], items[3], a->params,
                                     a->shift);
}

static pv_status host_masked3d(pv_context *ctx, void *const *items, const void *args)
{
    const masked_args *a = args;
    return pv_phase_correlate_masked3d(ctx, items[0], items[1], items[2], items[3], a->params,
                                       a->shift);
}

static pv_status correlate_masked(pv_context *ctx, const char *op, int volumes, host_call run,
                                  const pv_buffer *const inputs[4],
                                  const pv_phasecorr_masked_params *params, pv_shift *shift,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"reference", "moving", "reference_mask",
                                        "moving_mask"};
    /* every item an input; moving_mask may be absent (the reference's then) */
    call_images c = {.buffers = {inputs[0], inputs[1], inputs[2], inputs[3]}, .count = 4,
                     .first_output = 4, .volumes = volumes ? 15u : 0u, .optional = 8u};
    if (!shift)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    for (int i = 0; i < 4; i++)
        if (inputs[i] && inputs[i]->offset % pv_pixel_size(inputs[i]->type) != 0)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: %s's offset %zu is not a multiple of its %zu-byte sample", op,
                           names[i], inputs[i]->offset, pv_pixel_size(inputs[i]->type));
    pv_shift found;
    const masked_args args = {params, &found};
    pv_status status =
        pv_interop_device_call(ctx, op, &c, names, run, &args, wait_count, wait_list, done);
    if (status == PV_OK)
        *shift = found;
    return status;
}

pv_status pv_phase_correlate_masked_cl(pv_context *ctx, const pv_buffer *reference,
                                       const pv_buffer *moving, const pv_buffer *reference_mask,
                                       const pv_buffer *moving_mask,
                                       const pv_phasecorr_masked_params *params, pv_shift *shift,
                                       cl_uint wait_count, const cl_event *wait_list,
                                       cl_event *done)
{
    const pv_buffer *const inputs[4] = {reference, moving, reference_mask, moving_mask};
    return correlate_masked(ctx, "phase_correlate_masked_cl", 0, host_masked, inputs, params,
                            shift, wait_count, wait_list, done);
}

pv_status pv_phase_correlate_masked3d_cl(pv_context *ctx, const pv_buffer *reference,
                                         const pv_buffer *moving,
                                         const pv_buffer *reference_mask,
                                         const pv_buffer *moving_mask,
                                         const pv_phasecorr_masked_params *params,
                                         pv_shift *shift, cl_uint wait_count,
                                         const cl_event *wait_list, cl_event *done)
{
    const pv_buffer *const inputs[4] = {reference, moving, reference_mask, moving_mask};
    return correlate_masked(ctx, "phase_correlate_masked3d_cl", 1, host_masked3d, inputs, params,
                            shift, wait_count, wait_list, done);
}

typedef struct ncc_args {
    int min_overlap;
    pv_ncc_result *result; /* NULL: not wanted */
} ncc_args;

static pv_status host_ncc_masked(pv_context *ctx, void *const *items, const void *args)
{
    const ncc_args *a = args;
    return pv_normxcorr2_masked(ctx, items[0], items[1], items[2], items[3], a->min_overlap,
                                items[4], a->result);
}

pv_status pv_normxcorr2_masked_cl(pv_context *ctx, const pv_buffer *templ,
                                  const pv_buffer *image, const pv_buffer *templ_mask,
                                  const pv_buffer *image_mask, int min_overlap,
                                  const pv_buffer *map, pv_ncc_result *result,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"templ", "image", "templ_mask", "image_mask", "map"};
    const char *op = "normxcorr2_masked_cl";
    /* image_mask (an input) and map (the output) may be absent */
    call_images c = {.buffers = {templ, image, templ_mask, image_mask, map}, .count = 5,
                     .first_output = 4, .optional = 8u | 16u};
    if (!map && !result)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: map and result are both NULL", op);
    if (map && map->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: map must hold F32 samples", op);
    for (int i = 0; i < 2; i++)
        if (c.buffers[i] && c.buffers[i]->offset % pv_pixel_size(c.buffers[i]->type) != 0)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: %s's offset %zu is not a multiple of its %zu-byte sample", op,
                           names[i], c.buffers[i]->offset, pv_pixel_size(c.buffers[i]->type));
    pv_ncc_result found;
    const ncc_args args = {min_overlap, result ? &found : NULL};
    pv_status status = pv_interop_device_call(ctx, op, &c, names, host_ncc_masked, &args,
                                              wait_count, wait_list, done);
    if (status == PV_OK && result)
        *result = found;
    return status;
}
