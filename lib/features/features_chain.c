/* Front end of the features half of the SIFT chain: a frame detected and
 * matched to the plan's kept frame (lib/features/features_chain.h).
 *
 * Two paths give the same answer.  The device path asks the backend's
 * chain_step slot (OpenCL), which keeps the frame's keypoints and
 * descriptors on the device and returns only candidate matches, then
 * applies the exact ratio test here.  The composed path (the CPU backend,
 * whose slot is NULL, and any plan whose results the front end must
 * reshape or check: a top-K cap, the cross-check) calls pv_sift_detect and
 * pv_sift_match and keeps the frame's features on the host. */
#include "features_chain.h"
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

void pv_sift_chain_frame_free(pv_sift_chain_frame *frame)
{
    if (!frame)
        return;
    pv_sift_matches_free(&frame->matches);
    free(frame->points1);
    free(frame->points2);
    memset(frame, 0, sizeof *frame);
}

void pv_sift_chain_add_timing(pv_timing *sum, const pv_timing *t)
{
    sum->kernel_ms += t->kernel_ms;
    sum->total_ms += t->total_ms;
    sum->upload_ms += t->upload_ms;
    sum->download_ms += t->download_ms;
}

pv_context *pv_sift_plan_context(const pv_sift_plan *plan)
{
    return plan->ctx;
}

pv_status pv_sift_chain_check_image(pv_sift_plan *plan, const char *op, const char *name,
                                    const pv_image *image)
{
    pv_context *ctx = plan->ctx;
    if (!pv_image_is_valid_any_type(image))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid image", op, name);
    if (image->width != plan->geometry.width || image->height != plan->geometry.height)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%d but the plan is for %dx%d", op, name,
                       image->width, image->height, plan->geometry.width, plan->geometry.height);
    return pv_check_finite_image(ctx, op, name, image);
}

pv_status pv_sift_chain_check_match(pv_sift_plan *plan, const char *op,
                                    const pv_sift_match_params *p)
{
    return pv_decl_check(plan->ctx, op, &pv_sift_match_decl, p); /* features_params.c */
}

int pv_sift_chain_has_kept(const pv_sift_plan *plan)
{
    return plan->kept_at != PV_SIFT_KEPT_NONE;
}

void pv_sift_chain_forget(pv_sift_plan *plan)
{
    pv_context *ctx = plan->ctx;
    if (plan->kept_at == PV_SIFT_KEPT_DEVICE)
        ctx->ops->features->chain_forget(ctx, plan->backend_plan);
    pv_sift_features_free(&plan->kept);
    plan->kept_at = PV_SIFT_KEPT_NONE;
}

/* Room for n matches' pairs and points in frame. */
static pv_status alloc_matches(pv_context *ctx, int n, pv_sift_chain_frame *frame)
{
    const size_t room = n > 0 ? (size_t)n : 1;
    frame->matches.pairs = malloc(room * sizeof *frame->matches.pairs);
    frame->points1 = malloc(2 * room * sizeof *frame->points1);
    frame->points2 = malloc(2 * room * sizeof *frame->points2);
    if (!frame->matches.pairs || !frame->points1 || !frame->points2)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift chain: no memory for %d matches", n);
    return PV_OK;
}

static void add_match(pv_sift_chain_frame *frame, pv_sift_pair pair, const float p1[2],
                      const float p2[2])
{
    const int k = frame->matches.count++;
    frame->matches.pairs[k] = pair;
    memcpy(frame->points1 + 2 * k, p1, 2 * sizeof *p1);
    memcpy(frame->points2 + 2 * k, p2, 2 * sizeof *p2);
}

/* The exact ratio test over the backend's candidates (a superset). */
static pv_status keep_candidates(pv_context *ctx, const pv_sift_chain_raw *raw, float ratio,
                                 pv_sift_chain_frame *frame)
{
    pv_status status = alloc_matches(ctx, raw->count, frame);
    for (int i = 0; status == PV_OK && i < raw->count; i++) {
        const pv_sift_chain_candidate *c = &raw->candidates[i];
        if (!pv_sift_passes_ratio(c->d1, c->d2, ratio))
            continue;
        const pv_sift_pair pair = {c->query, c->train, sqrtf(c->d1),
                                   isinf(c->d2) ? INFINITY : sqrtf(c->d2)};
        const float p1[2] = {c->x1, c->y1}, p2[2] = {c->x2, c->y2};
        add_match(frame, pair, p1, p2);
    }
    return status;
}

/* The backend's chain step on image (first: NULL, or the pair's first
 * frame, detected and kept before image and matched to it). */
static pv_status advance_on_device(pv_sift_plan *plan, const pv_image *first,
                                   const pv_image *image, int match,
                                   const pv_sift_match_params *p, pv_sift_chain_frame *frame)
{
    pv_context *ctx = plan->ctx;
    const int had = plan->kept_at == PV_SIFT_KEPT_DEVICE || first;
    if (plan->kept_at == PV_SIFT_KEPT_HOST)
        pv_sift_chain_forget(plan);
    const pv_sift_chain_step step = {match && had, p->ratio, p->mutual, first};
    pv_sift_chain_raw raw = {0, 0, 0, NULL};
    plan->kept_at = PV_SIFT_KEPT_NONE; /* until the step succeeds */
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = ctx->ops->features->chain_step(ctx, plan->backend_plan, image, &step, &raw);
    pv_call_end(ctx);
    if (status != PV_OK)
        return status;
    pv_sift_chain_add_timing(&frame->timing, &ctx->timing);
    plan->kept_at = PV_SIFT_KEPT_DEVICE;
    frame->keypoints = raw.keypoints;
    frame->kept_keypoints = raw.kept_keypoints;
    frame->matched = step.match;
    status = keep_candidates(ctx, &raw, p->ratio, frame);
    free(raw.candidates);
    return status;
}

/* The matches' positions out of both frames' keypoints. */
static pv_status gather_points(pv_context *ctx, const pv_sift_features *f1,
                               const pv_sift_features *f2, const pv_sift_matches *matches,
                               pv_sift_chain_frame *frame)
{
    pv_status status = alloc_matches(ctx, matches->count, frame);
    for (int i = 0; status == PV_OK && i < matches->count; i++) {
        const pv_sift_keypoint *a = &f1->keypoints[matches->pairs[i].query];
        const pv_sift_keypoint *b = &f2->keypoints[matches->pairs[i].train];
        const float p1[2] = {a->x, a->y}, p2[2] = {b->x, b->y};
        add_match(frame, matches->pairs[i], p1, p2);
    }
    return status;
}

static pv_status advance_composed(pv_sift_plan *plan, const pv_image *image, int match,
                                  const pv_sift_match_params *p, pv_sift_chain_frame *frame)
{
    if (plan->kept_at == PV_SIFT_KEPT_DEVICE)
        pv_sift_chain_forget(plan);
    const int matching = match && plan->kept_at == PV_SIFT_KEPT_HOST;
    pv_sift_features fresh = {0};
    pv_sift_matches matches = {0, NULL};
    pv_status status = pv_sift_detect(plan, image, &fresh);
    if (status == PV_OK)
        pv_sift_chain_add_timing(&frame->timing, &plan->ctx->timing);
    if (status == PV_OK && matching)
        status = pv_sift_match(plan->ctx, &plan->kept, &fresh, p, &matches);
    if (status == PV_OK && matching)
        pv_sift_chain_add_timing(&frame->timing, &plan->ctx->timing);
    if (status == PV_OK && matching)
        status = gather_points(plan->ctx, &plan->kept, &fresh, &matches, frame);
    pv_sift_matches_free(&matches);
    if (status == PV_OK) {
        frame->keypoints = fresh.count;
        frame->kept_keypoints = matching ? plan->kept.count : 0;
        frame->matched = matching;
    }
    pv_sift_chain_forget(plan);
    if (status != PV_OK) {
        pv_sift_features_free(&fresh);
        return status;
    }
    plan->kept = fresh;
    plan->kept_at = PV_SIFT_KEPT_HOST;
    return PV_OK;
}

static int device_path(const pv_sift_plan *plan)
{
    pv_context *ctx = plan->ctx;
    return ctx->ops->features->chain_step && plan->geometry.params.max_keypoints == 0 &&
           !pv_crosscheck_wanted(ctx);
}

pv_status pv_sift_chain_advance(pv_sift_plan *plan, const pv_image *image, int match,
                                const pv_sift_match_params *p, pv_sift_chain_frame *frame)
{
    pv_sift_chain_frame out;
    memset(&out, 0, sizeof out);
    pv_status status = device_path(plan) ? advance_on_device(plan, NULL, image, match, p, &out)
                                         : advance_composed(plan, image, match, p, &out);
    if (status != PV_OK) {
        pv_sift_chain_frame_free(&out);
        pv_sift_chain_forget(plan);
        return status;
    }
    *frame = out;
    return PV_OK;
}

pv_status pv_sift_chain_pair(pv_sift_plan *plan, const pv_image *first, const pv_image *image,
                             const pv_sift_match_params *p, pv_sift_chain_frame *frame)
{
    pv_sift_chain_forget(plan);
    pv_sift_chain_frame head, out;
    memset(&head, 0, sizeof head);
    memset(&out, 0, sizeof out);
    pv_status status;
    if (device_path(plan)) {
        status = advance_on_device(plan, first, image, 1, p, &out);
    } else {
        status = advance_composed(plan, first, 0, p, &head);
        if (status == PV_OK)
            status = advance_composed(plan, image, 1, p, &out);
        pv_sift_chain_add_timing(&out.timing, &head.timing);
    }
    pv_sift_chain_frame_free(&head);
    if (status != PV_OK) {
        pv_sift_chain_frame_free(&out);
        pv_sift_chain_forget(plan);
        return status;
    }
    *frame = out;
    return PV_OK;
}
