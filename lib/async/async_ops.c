/* The operations' asynchronous forms (include/parvis/async.h): each copies
 * its call's arguments (the parameter structure by value, the images and
 * volumes' descriptions by value with their pixels borrowed) into a block
 * that the worker hands to the synchronous call and then frees. */
#include "../core/internal.h"
#include "async_internal.h"

#include <stdlib.h>

/* One block for every operation: which fields are used depends on the
 * operation.  has_params / has_confidence keep a NULL argument NULL. */
typedef struct queued_call {
    pv_image images[4];
    pv_volume volumes[2];
    union {
        pv_sad_params sad;
        pv_sgm_params sgm;
        pv_bp_params bp;
        pv_phasecorr_options phasecorr;
        pv_flow_params flow;
    } params;
    int has_params, has_confidence;
    pv_image *image_out[2]; /* the caller's output images */
    pv_shift *shift;
    pv_flow_field *flow;
} queued_call;

static pv_status queue_call(pv_context *ctx, queued_call *call, pv_task_fn fn, pv_job **job)
{
    return pv_submit_owned(ctx, fn, call, free, job);
}

/* The block, or NULL with *status set, for a call whose pointers are
 * checked: ctx, and `count` required pointers. */
static queued_call *new_call(pv_context *ctx, const char *op, const void *const *required,
                             const char *const *names, int count, pv_status *status)
{
    *status = PV_OK;
    if (!ctx) {
        *status = pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
        return NULL;
    }
    for (int i = 0; i < count; i++)
        if (!required[i]) {
            *status = pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL", op, names[i]);
            return NULL;
        }
    queued_call *call = calloc(1, sizeof *call);
    if (!call)
        *status = pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for the queued call", op);
    return call;
}

/* ------------------------------------------------------------------ stereo */

static pv_status run_sad(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_stereo_sad(ctx, &c->images[0], &c->images[1], c->has_params ? &c->params.sad : NULL,
                         c->image_out[0]);
}

pv_status pv_stereo_sad_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                              const pv_sad_params *params, pv_image *disparity, pv_job **job)
{
    static const char *const names[] = {"left", "right", "disparity"};
    const void *required[] = {left, right, disparity};
    pv_status status;
    queued_call *c = new_call(ctx, "stereo_sad_async", required, names, 3, &status);
    if (!c)
        return status;
    c->images[0] = *left;
    c->images[1] = *right;
    c->image_out[0] = disparity;
    c->has_params = params != NULL;
    if (params)
        c->params.sad = *params;
    return queue_call(ctx, c, run_sad, job);
}

static pv_status run_sgm(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_stereo_sgm_confidence(ctx, &c->images[0], &c->images[1],
                                    c->has_params ? &c->params.sgm : NULL, c->image_out[0],
                                    c->has_confidence ? c->image_out[1] : NULL);
}

pv_status pv_stereo_sgm_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                              const pv_sgm_params *params, pv_image *disparity,
                              pv_image *confidence, pv_job **job)
{
    static const char *const names[] = {"left", "right", "disparity"};
    const void *required[] = {left, right, disparity};
    pv_status status;
    queued_call *c = new_call(ctx, "stereo_sgm_async", required, names, 3, &status);
    if (!c)
        return status;
    c->images[0] = *left;
    c->images[1] = *right;
    c->image_out[0] = disparity;
    c->image_out[1] = confidence;
    c->has_confidence = confidence != NULL;
    c->has_params = params != NULL;
    if (params)
        c->params.sgm = *params;
    return queue_call(ctx, c, run_sgm, job);
}

static pv_status run_bp(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_stereo_bp(ctx, &c->images[0], &c->images[1], c->has_params ? &c->params.bp : NULL,
                        c->image_out[0]);
}

pv_status pv_stereo_bp_async(pv_context *ctx, const pv_image *left, const pv_image *right,
                             const pv_bp_params *params, pv_image *disparity, pv_job **job)
{
    static const char *const names[] = {"left", "right", "disparity"};
    const void *required[] = {left, right, disparity};
    pv_status status;
    queued_call *c = new_call(ctx, "stereo_bp_async", required, names, 3, &status);
    if (!c)
        return status;
    c->images[0] = *left;
    c->images[1] = *right;
    c->image_out[0] = disparity;
    c->has_params = params != NULL;
    if (params)
        c->params.bp = *params;
    return queue_call(ctx, c, run_bp, job);
}

/* ---------------------------------------------------------------- register */

static pv_status run_phasecorr(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_phase_correlate(ctx, &c->images[0], &c->images[1],
                              c->has_params ? &c->params.phasecorr : NULL, c->shift);
}

pv_status pv_phase_correlate_async(pv_context *ctx, const pv_image *reference,
                                   const pv_image *moving, const pv_phasecorr_options *options,
                                   pv_shift *shift, pv_job **job)
{
    static const char *const names[] = {"reference", "moving", "shift"};
    const void *required[] = {reference, moving, shift};
    pv_status status;
    queued_call *c = new_call(ctx, "phase_correlate_async", required, names, 3, &status);
    if (!c)
        return status;
    c->images[0] = *reference;
    c->images[1] = *moving;
    c->shift = shift;
    c->has_params = options != NULL;
    if (options)
        c->params.phasecorr = *options;
    return queue_call(ctx, c, run_phasecorr, job);
}

static pv_status run_phasecorr3d(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_phase_correlate3d(ctx, &c->volumes[0], &c->volumes[1],
                                c->has_params ? &c->params.phasecorr : NULL, c->shift);
}

pv_status pv_phase_correlate3d_async(pv_context *ctx, const pv_volume *reference,
                                     const pv_volume *moving, const pv_phasecorr_options *options,
                                     pv_shift *shift, pv_job **job)
{
    static const char *const names[] = {"reference", "moving", "shift"};
    const void *required[] = {reference, moving, shift};
    pv_status status;
    queued_call *c = new_call(ctx, "phase_correlate3d_async", required, names, 3, &status);
    if (!c)
        return status;
    c->volumes[0] = *reference;
    c->volumes[1] = *moving;
    c->shift = shift;
    c->has_params = options != NULL;
    if (options)
        c->params.phasecorr = *options;
    return queue_call(ctx, c, run_phasecorr3d, job);
}

/* -------------------------------------------------------------------- flow */

static pv_status run_flow(pv_context *ctx, void *user)
{
    queued_call *c = user;
    return pv_flow3d(ctx, &c->volumes[0], &c->volumes[1], c->has_params ? &c->params.flow : NULL,
                     c->flow);
}

pv_status pv_flow3d_async(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                          const pv_flow_params *params, pv_flow_field *flow, pv_job **job)
{
    static const char *const names[] = {"fixed", "moving", "flow"};
    const void *required[] = {fixed, moving, flow};
    pv_status status;
    queued_call *c = new_call(ctx, "flow3d_async", required, names, 3, &status);
    if (!c)
        return status;
    c->volumes[0] = *fixed;
    c->volumes[1] = *moving;
    c->flow = flow;
    c->has_params = params != NULL;
    if (params)
        c->params.flow = *params;
    return queue_call(ctx, c, run_flow, job);
}
