/* Device-buffer forms of the stereo batches (include/parvis/interop.h).
 *
 * A batch runs as pv_interop_device_batch (lib/interop/interop.c): every
 * pair's buffers are checked first, then, after the one wait list, the
 * single pair's host call (pv_stereo_sad, pv_stereo_sgm_confidence) on
 * that pair's bound proxies, pair after pair, and one completion event
 * for them all.  The single call rather than the host batch on a group of
 * pairs, because the host batches gather their maps in a batch buffer and
 * read them back through their own staging, which a proxy cannot take;
 * each pair's map goes straight from parvis's buffer to the caller's on
 * the device instead.  The results are the host batches' (each pair's
 * map is exactly its single call's, as the host batches promise).
 *
 * The host batches' rules hold: count >= 1; every pair of one size and one
 * pixel type, checked with every buffer before any work (a refusal leaves
 * every output untouched); a failure during the work resets every output,
 * each disparity to INFINITY and each confidence to 0, so that no
 * half-finished batch can pass for a result. */
#include "interop_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* One batch's arrays, for the pair calls and the reset. */
typedef struct stereo_batch {
    const pv_buffer *lefts, *rights, *disparities, *confidences;
    int count;
    const void *params;
    int reached; /* pairs whose call began */
} stereo_batch;

/* Every pair of lefts[0]'s size and type (NULL entries are left to the
 * buffer checks). */
static pv_status check_pairs(pv_context *ctx, const char *op, const stereo_batch *b)
{
    if (!b->lefts || !b->rights || !b->disparities || !b->params || b->count < 1)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: lefts, rights, disparities and params are needed and count >= 1 "
                       "(count %d)", op, b->count);
    const pv_buffer *first = &b->lefts[0];
    for (int i = 0; i < b->count; i++) {
        const pv_buffer *l = &b->lefts[i], *r = &b->rights[i];
        if (l->width != first->width || l->height != first->height || l->type != first->type ||
            r->width != first->width || r->height != first->height || r->type != first->type)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: pair %d is %dx%d/%dx%d of types %d/%d; a batch's pairs share "
                           "pair 0's %dx%d of type %d", op, i, l->width, l->height, r->width,
                           r->height, (int)l->type, (int)r->type, first->width, first->height,
                           (int)first->type);
    }
    return PV_OK;
}

/* The pairs as the machinery's calls: left, right, disparity and (SGM)
 * an optional confidence. */
static call_images *pair_calls(pv_context *ctx, const char *op, const stereo_batch *b)
{
    call_images *calls = calloc((size_t)b->count, sizeof *calls);
    if (!calls) {
        pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for %d pairs", op, b->count);
        return NULL;
    }
    for (int i = 0; i < b->count; i++) {
        call_images *c = &calls[i];
        c->buffers[0] = &b->lefts[i];
        c->buffers[1] = &b->rights[i];
        c->buffers[2] = &b->disparities[i];
        c->buffers[3] = b->confidences ? &b->confidences[i] : NULL;
        c->count = 4;
        c->first_output = 2;
        c->optional = 8u;
    }
    return calls;
}

/* After a failure during the work (a pair's call began after others had
 * queued theirs): every output reset, as the host batches do. */
static void reset_outputs(pv_context *ctx, const stereo_batch *b)
{
    char message[sizeof ctx->last_error];
    snprintf(message, sizeof message, "%s", pv_last_error()); /* the failure's, kept */
    pv_status status = PV_OK;
    for (int i = 0; i < b->count; i++) {
        if (pv_interop_fill(ctx, &b->disparities[i], INFINITY) != PV_OK)
            status = PV_ERR_INVALID;
        if (b->confidences && pv_interop_fill(ctx, &b->confidences[i], 0.0f) != PV_OK)
            status = PV_ERR_INVALID;
    }
    if (status != PV_OK) /* a reset's message replaced the failure's: the failure's again */
        pv_fail(ctx, PV_ERR_INVALID, "%s", message);
}

static pv_status run_batch(pv_context *ctx, const char *op, stereo_batch *b, host_batch_call run,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"left", "right", "disparity", "confidence"};
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    pv_status status = check_pairs(ctx, op, b);
    if (status != PV_OK)
        return status;
    call_images *calls = pair_calls(ctx, op, b);
    if (!calls)
        return PV_ERR_NOMEM;
    status = pv_interop_device_batch(ctx, op, calls, b->count, names, run, b, wait_count,
                                     wait_list, done);
    free(calls);
    if (status != PV_OK && b->reached > 1)
        reset_outputs(ctx, b);
    return status;
}

static pv_status host_sad_pair(pv_context *ctx, int index, void *const *images, const void *args)
{
    stereo_batch *b = (stereo_batch *)args; /* this file's own, writable batch */
    b->reached = index + 1;
    return pv_stereo_sad(ctx, images[0], images[1], b->params, images[2]);
}

pv_status pv_stereo_sad_batch_cl(pv_context *ctx, const pv_buffer *lefts,
                                 const pv_buffer *rights, int count, const pv_sad_params *params,
                                 const pv_buffer *disparities, cl_uint wait_count,
                                 const cl_event *wait_list, cl_event *done)
{
    stereo_batch b = {lefts, rights, disparities, NULL, count, params, 0};
    return run_batch(ctx, "stereo_sad_batch_cl", &b, host_sad_pair, wait_count, wait_list, done);
}

static pv_status host_sgm_pair(pv_context *ctx, int index, void *const *images, const void *args)
{
    stereo_batch *b = (stereo_batch *)args;
    b->reached = index + 1;
    return pv_stereo_sgm_confidence(ctx, images[0], images[1], b->params, images[2], images[3]);
}

pv_status pv_stereo_sgm_batch_cl(pv_context *ctx, const pv_buffer *lefts,
                                 const pv_buffer *rights, int count, const pv_sgm_params *params,
                                 const pv_buffer *disparities, const pv_buffer *confidences,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    stereo_batch b = {lefts, rights, disparities, confidences, count, params, 0};
    return run_batch(ctx, "stereo_sgm_batch_cl", &b, host_sgm_pair, wait_count, wait_list, done);
}
