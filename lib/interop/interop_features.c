/* Device-buffer forms of SIFT detection and the SIFT chain
 * (include/parvis/interop.h): the host calls run on proxies of the
 * caller's buffers through pv_interop_device_call (lib/interop/interop.c).
 * The OpenCL backend sends a bound image through the runtime's transfers
 * (backends/opencl/features/features.c, upload_images), so the pixels are
 * copied on the device; the results are host structures, built into
 * locals and handed over only when the whole call (its final event
 * included) has succeeded, so that the outputs stay untouched on error. */
#include "interop_internal.h"
#include "../features/features_chain.h" /* pv_sift_plan_context */

typedef struct detect_args {
    pv_sift_plan *plan;
    pv_sift_features *found;
} detect_args;

static pv_status host_detect(pv_context *ctx, void *const *images, const void *args)
{
    const detect_args *a = args;
    (void)ctx;
    return pv_sift_detect(a->plan, images[0], a->found);
}

pv_status pv_sift_detect_cl(pv_sift_plan *plan, const pv_buffer *image,
                            pv_sift_features *features, cl_uint wait_count,
                            const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"image"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_detect_cl: plan is NULL");
    pv_context *ctx = pv_sift_plan_context(plan);
    if (!features)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_detect_cl: features is NULL");
    call_images c = {.buffers = {image}, .count = 1, .first_output = 1};
    pv_sift_features found = {0};
    const detect_args args = {plan, &found};
    pv_status status = pv_interop_device_call(ctx, "sift_detect_cl", &c, names, host_detect,
                                              &args, wait_count, wait_list, done);
    if (status != PV_OK) {
        pv_sift_features_free(&found);
        return status;
    }
    *features = found;
    return PV_OK;
}

typedef struct match_args {
    pv_sift_plan *plan;
    const pv_sift_match_params *match_params;
    const pv_ransac_params *ransac_params;
    pv_sift_chain_result *found;
} match_args;

static pv_status host_match(pv_context *ctx, void *const *images, const void *args)
{
    const match_args *a = args;
    (void)ctx;
    return pv_sift_match_images(a->plan, images[0], images[1], a->match_params,
                                a->ransac_params, a->found);
}

pv_status pv_sift_match_images_cl(pv_sift_plan *plan, const pv_buffer *image1,
                                  const pv_buffer *image2,
                                  const pv_sift_match_params *match_params,
                                  const pv_ransac_params *ransac_params,
                                  pv_sift_chain_result *result, cl_uint wait_count,
                                  const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"image1", "image2"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_match_images_cl: plan is NULL");
    pv_context *ctx = pv_sift_plan_context(plan);
    if (!result)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match_images_cl: result is NULL");
    call_images c = {.buffers = {image1, image2}, .count = 2, .first_output = 2};
    pv_sift_chain_result found = {0};
    const match_args args = {plan, match_params, ransac_params, &found};
    pv_status status = pv_interop_device_call(ctx, "sift_match_images_cl", &c, names, host_match,
                                              &args, wait_count, wait_list, done);
    if (status != PV_OK) {
        pv_sift_chain_result_free(&found);
        return status;
    }
    *result = found;
    return PV_OK;
}
