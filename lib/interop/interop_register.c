/* Device-buffer forms of the register module's operations, phase
 * correlation (2D, 3D) and normxcorr2 (include/parvis/interop.h): each
 * names its images and runs its host call through pv_interop_device_call
 * (lib/interop/interop.c).  The host calls' passes over their inputs
 * (finiteness, texture, means, normxcorr2's centring and scaling) run on
 * the device in such a call (lib/register/register_device.c), whose
 * kernels read the caller's buffer by sample index: an offset must be a
 * whole number of samples. */
#include "interop_internal.h"

/* Inputs at a whole number of samples from the buffer's start. */
static pv_status check_aligned(pv_context *ctx, const char *op, const char *const *names,
                               const call_images *c)
{
    for (int i = 0; i < c->first_output; i++) {
        const pv_buffer *b = c->buffers[i];
        if (b && b->offset % pv_pixel_size(b->type) != 0)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: %s's offset %zu is not a multiple of its %zu-byte sample", op,
                           names[i], b->offset, pv_pixel_size(b->type));
    }
    return PV_OK;
}

typedef struct pc_args {
    const pv_phasecorr_options *options;
    pv_shift *shift;
} pc_args;

static pv_status host_pc(pv_context *ctx, void *const *items, const void *args)
{
    const pc_args *a = args;
    return pv_phase_correlate(ctx, items[0], items[1], a->options, a->shift);
}

static pv_status host_pc3d(pv_context *ctx, void *const *items, const void *args)
{
    const pc_args *a = args;
    return pv_phase_correlate3d(ctx, items[0], items[1], a->options, a->shift);
}

/* Either dimension: the shift is found into a local and written only on
 * success. */
static pv_status phase_correlate(pv_context *ctx, const char *op, int volumes, host_call run,
                                 const pv_buffer *reference, const pv_buffer *moving,
                                 const pv_phasecorr_options *options, pv_shift *shift,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"reference", "moving"};
    call_images c = {.buffers = {reference, moving}, .count = 2, .first_output = 2,
                     .volumes = volumes ? 3u : 0u};
    if (!shift)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    pv_status status = check_aligned(ctx, op, names, &c);
    if (status != PV_OK)
        return status;
    pv_shift found;
    const pc_args args = {options, &found};
    status = pv_interop_device_call(ctx, op, &c, names, run, &args, wait_count, wait_list, done);
    if (status == PV_OK)
        *shift = found;
    return status;
}

pv_status pv_phase_correlate_cl(pv_context *ctx, const pv_buffer *reference,
                                const pv_buffer *moving, const pv_phasecorr_options *options,
                                pv_shift *shift, cl_uint wait_count, const cl_event *wait_list,
                                cl_event *done)
{
    return phase_correlate(ctx, "phase_correlate_cl", 0, host_pc, reference, moving, options,
                           shift, wait_count, wait_list, done);
}

pv_status pv_phase_correlate3d_cl(pv_context *ctx, const pv_buffer *reference,
                                  const pv_buffer *moving, const pv_phasecorr_options *options,
                                  pv_shift *shift, cl_uint wait_count, const cl_event *wait_list,
                                  cl_event *done)
{
    return phase_correlate(ctx, "phase_correlate3d_cl", 1, host_pc3d, reference, moving, options,
                           shift, wait_count, wait_list, done);
}

typedef struct ncc_args {
    int min_overlap;
    pv_ncc_result *result; /* NULL: not wanted */
} ncc_args;

static pv_status host_ncc(pv_context *ctx, void *const *items, const void *args)
{
    const ncc_args *a = args;
    return pv_normxcorr2(ctx, items[0], items[1], a->min_overlap, items[2], a->result);
}

pv_status pv_normxcorr2_cl(pv_context *ctx, const pv_buffer *templ, const pv_buffer *image,
                           int min_overlap, const pv_buffer *map, pv_ncc_result *result,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"templ", "image", "map"};
    const char *op = "normxcorr2_cl";
    call_images c = {.buffers = {templ, image, map}, .count = 3, .first_output = 2,
                     .optional = 4u};
    if (!map && !result)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: map and result are both NULL", op);
    if (map && map->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: map must hold F32 samples", op);
    pv_status status = check_aligned(ctx, op, names, &c);
    if (status != PV_OK)
        return status;
    pv_ncc_result found;
    const ncc_args args = {min_overlap, result ? &found : NULL};
    status = pv_interop_device_call(ctx, op, &c, names, host_ncc, &args, wait_count, wait_list,
                                    done);
    if (status == PV_OK && result)
        *result = found;
    return status;
}
