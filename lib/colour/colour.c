/* Front end of the colour module: pv_to_grey's checks, dispatch and
 * cross-check. */
#include "../core/internal.h"
#include "../core/tolerance.h"

static pv_status check_to_grey(pv_context *ctx, const pv_image *in, const pv_image *out)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "to_grey: ctx is NULL");
    if (!pv_image_is_valid_any_type(in))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "to_grey: in is NULL or malformed (data, size, stride or pixel type)");
    if (!pv_image_is_valid(out) || out->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "to_grey: out is NULL, malformed or not f32");
    if (!pv_images_same_size(in, out))
        return pv_fail(ctx, PV_ERR_INVALID, "to_grey: out is %dx%d but in is %dx%d", out->width,
                       out->height, in->width, in->height);
    if (pv_images_overlap(in, out))
        return pv_fail(ctx, PV_ERR_INVALID, "to_grey: out overlaps in");
    return PV_OK;
}

static pv_status crosscheck_to_grey(pv_context *ctx, const pv_image *in, const pv_image *out)
{
    pv_oracle oracle;
    pv_image *ref = NULL;
    pv_oracle_begin(ctx, "to_grey", &oracle);
    pv_status status = pv_oracle_add_image(ctx, &oracle, out, &ref);
    if (status == PV_OK)
        status = pv_cpu_backend.colour->to_grey(ctx, in, ref, 1.0f);
    return pv_oracle_end(ctx, &oracle, status, PV_TOL_COLOUR_REL);
}

pv_status pv_to_grey(pv_context *ctx, const pv_image *in, pv_image *out)
{
    pv_status status = check_to_grey(ctx, in, out);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = ctx->ops->colour->to_grey(ctx, in, out, 1.0f);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_to_grey(ctx, in, out);
    pv_call_end(ctx);
    return status;
}
