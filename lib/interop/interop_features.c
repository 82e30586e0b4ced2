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

#include <stdlib.h>

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

typedef struct track_args {
    pv_sift_plan *plan;
    const pv_sift_match_params *match_params;
    const pv_ransac_params *ransac_params;
    pv_sift_chain_result *found;
} track_args;

static pv_status host_track(pv_context *ctx, void *const *images, const void *args)
{
    const track_args *a = args;
    (void)ctx;
    return pv_sift_track_next(a->plan, images[0], a->match_params, a->ransac_params, a->found);
}

pv_status pv_sift_track_next_cl(pv_sift_plan *plan, const pv_buffer *frame,
                                const pv_sift_match_params *match_params,
                                const pv_ransac_params *ransac_params,
                                pv_sift_chain_result *result, cl_uint wait_count,
                                const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"frame"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_track_next_cl: plan is NULL");
    pv_context *ctx = pv_sift_plan_context(plan);
    if (!result)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_track_next_cl: result is NULL");
    call_images c = {.buffers = {frame}, .count = 1, .first_output = 1};
    pv_sift_chain_result found = {0};
    const track_args args = {plan, match_params, ransac_params, &found};
    pv_status status = pv_interop_device_call(ctx, "sift_track_next_cl", &c, names, host_track,
                                              &args, wait_count, wait_list, done);
    if (status != PV_OK) {
        pv_sift_chain_result_free(&found);
        return status;
    }
    *result = found;
    return PV_OK;
}

/* A batch detection runs as groups of up to MAX_IMAGES images, each group
 * one pv_sift_detect_batch on its proxies (the plan's batched chunks as
 * for host images), every group between the same begin and end. */
typedef struct detect_batch_args {
    pv_sift_plan *plan;
    const call_images *groups;
    pv_sift_features *found; /* count results, zeroed */
} detect_batch_args;

static pv_status host_detect_group(pv_context *ctx, int index, void *const *images,
                                   const void *args)
{
    const detect_batch_args *a = args;
    (void)ctx;
    (void)images; /* the group's images are its call_images' array, in order */
    const call_images *g = &a->groups[index];
    return pv_sift_detect_batch(a->plan, g->images, g->count, a->found + index * MAX_IMAGES);
}

/* The caller's earlier results freed and replaced by the batch's. */
static void hand_over(pv_sift_features *results, pv_sift_features *found, int count)
{
    for (int i = 0; i < count; i++) {
        pv_sift_features_free(&results[i]);
        results[i] = found[i];
    }
}

pv_status pv_sift_detect_batch_cl(pv_sift_plan *plan, const pv_buffer *images, int count,
                                  pv_sift_features *results, cl_uint wait_count,
                                  const cl_event *wait_list, cl_event *done)
{
    static const char *const names[MAX_IMAGES] = {"image", "image", "image",
                                                  "image", "image", "image"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_detect_batch_cl: plan is NULL");
    pv_context *ctx = pv_sift_plan_context(plan);
    if (!images || !results || count < 1)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "sift_detect_batch_cl: images %p, results %p, count %d (need both and "
                       "count >= 1)", (const void *)images, (void *)results, count);
    const int groups = (count + MAX_IMAGES - 1) / MAX_IMAGES;
    call_images *calls = calloc((size_t)groups, sizeof *calls);
    pv_sift_features *found = calloc((size_t)count, sizeof *found);
    if (!calls || !found) {
        free(calls);
        free(found);
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch_cl: no memory for %d images",
                       count);
    }
    for (int i = 0; i < count; i++) {
        call_images *g = &calls[i / MAX_IMAGES];
        g->buffers[g->count++] = &images[i];
        g->first_output = g->count; /* inputs only */
    }
    const detect_batch_args args = {plan, calls, found};
    pv_status status = pv_interop_device_batch(ctx, "sift_detect_batch_cl", calls, groups, names,
                                               host_detect_group, &args, wait_count, wait_list,
                                               done);
    if (status == PV_OK)
        hand_over(results, found, count);
    else
        for (int i = 0; i < count; i++)
            pv_sift_features_free(&found[i]);
    free(found);
    free(calls);
    return status;
}
