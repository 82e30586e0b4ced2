/* Front end of the SIFT chain (include/parvis/geometry.h): two frames, or
 * a new frame and the plan's kept one, to a homography and its inlier
 * matches.  The features half (detection, matching, the ratio test; on
 * the device where the backend can) is lib/features/features_chain.c;
 * here the matches' positions go through pv_find_homography, so the
 * RANSAC draws the very samples the composed public calls draw. */
#include "../core/internal.h"
#include "../features/features_chain.h"
#include "geometry_internal.h"

#include <stdlib.h>
#include <string.h>

void pv_sift_chain_result_free(pv_sift_chain_result *result)
{
    if (!result)
        return;
    free(result->inliers);
    memset(result, 0, sizeof *result);
}

/* The arguments every chain call shares, params defaulted into *mp, *rp. */
static pv_status check_chain(pv_sift_plan *plan, const char *op,
                             const pv_sift_match_params *match_params,
                             const pv_ransac_params *ransac_params,
                             const pv_sift_chain_result *result, pv_sift_match_params *mp,
                             pv_ransac_params *rp)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    pv_context *ctx = pv_sift_plan_context(plan);
    if (!result)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: result is NULL", op);
    pv_sift_match_params_default(mp);
    if (match_params)
        *mp = *match_params;
    pv_ransac_params_default(rp);
    if (ransac_params)
        *rp = *ransac_params;
    pv_status status = pv_sift_chain_check_match(plan, op, mp);
    return status == PV_OK ? pv_decl_check(ctx, op, &pv_ransac_decl, rp) : status;
}

/* The inlier matches of the mask into a fresh list. */
static pv_status collect_inliers(pv_context *ctx, const pv_sift_chain_frame *frame,
                                 const uint8_t *mask, int inliers, pv_sift_point_match **out)
{
    pv_sift_point_match *list = malloc((inliers > 0 ? (size_t)inliers : 1) * sizeof *list);
    if (!list)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift chain: no memory for %d inliers", inliers);
    int k = 0;
    for (int i = 0; i < frame->matches.count && k < inliers; i++) {
        if (!mask[i])
            continue;
        const pv_sift_pair *pair = &frame->matches.pairs[i];
        list[k++] = (pv_sift_point_match){pair->query, pair->train, frame->points1[2 * i],
                                          frame->points1[2 * i + 1], frame->points2[2 * i],
                                          frame->points2[2 * i + 1], pair->distance};
    }
    *out = list;
    return PV_OK;
}

/* The chain call's timing, left as the context's last: its calls'
 * device, upload and download times summed, end to end from `start`. */
static void report_timing(pv_context *ctx, double start, const pv_timing *parts)
{
    ctx->timing = *parts;
    ctx->timing.total_ms = pv_now_ms() - start;
}

/* RANSAC on the frame's matches into *result (untouched on failure);
 * its timing added to *timing. */
static pv_status estimate(pv_context *ctx, const char *op, const pv_sift_chain_frame *frame,
                          const pv_ransac_params *rp, pv_sift_chain_result *result,
                          pv_timing *timing)
{
    const int n = frame->matches.count;
    if (n < PV_HOMOGRAPHY_SAMPLE)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %d matches passed the ratio test (of %d and %d "
                       "keypoints); a homography needs at least %d", op, n, frame->kept_keypoints,
                       frame->keypoints, PV_HOMOGRAPHY_SAMPLE);
    uint8_t *mask = malloc((size_t)n);
    if (!mask)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for %d matches", op, n);
    pv_sift_chain_result out;
    memset(&out, 0, sizeof out);
    pv_status status = pv_find_homography(ctx, frame->points1, frame->points2, n, rp,
                                          &out.geometry, mask);
    if (status == PV_OK)
        pv_sift_chain_add_timing(timing, &ctx->timing);
    if (status == PV_OK)
        status = collect_inliers(ctx, frame, mask, out.geometry.inlier_count, &out.inliers);
    free(mask);
    if (status != PV_OK)
        return status;
    out.has_model = 1;
    out.keypoints1 = frame->kept_keypoints;
    out.keypoints2 = frame->keypoints;
    out.matches = n;
    out.inlier_count = out.geometry.inlier_count;
    *result = out;
    return PV_OK;
}

pv_status pv_sift_match_images(pv_sift_plan *plan, const pv_image *image1,
                               const pv_image *image2, const pv_sift_match_params *match_params,
                               const pv_ransac_params *ransac_params, pv_sift_chain_result *result)
{
    const char *op = "sift_match_images";
    pv_sift_match_params mp;
    pv_ransac_params rp;
    pv_status status = check_chain(plan, op, match_params, ransac_params, result, &mp, &rp);
    if (status == PV_OK)
        status = pv_sift_chain_check_image(plan, op, "image1", image1);
    if (status == PV_OK)
        status = pv_sift_chain_check_image(plan, op, "image2", image2);
    if (status != PV_OK)
        return status;
    pv_context *ctx = pv_sift_plan_context(plan);
    const double start = pv_now_ms();
    pv_sift_chain_frame second;
    memset(&second, 0, sizeof second);
    status = pv_sift_chain_pair(plan, image1, image2, &mp, &second);
    pv_timing timing = second.timing;
    if (status == PV_OK)
        status = estimate(ctx, op, &second, &rp, result, &timing);
    if (status == PV_OK)
        report_timing(ctx, start, &timing);
    else
        pv_sift_chain_forget(plan);
    pv_sift_chain_frame_free(&second);
    return status;
}

pv_status pv_sift_track_next(pv_sift_plan *plan, const pv_image *frame,
                             const pv_sift_match_params *match_params,
                             const pv_ransac_params *ransac_params, pv_sift_chain_result *result)
{
    const char *op = "sift_track_next";
    pv_sift_match_params mp;
    pv_ransac_params rp;
    pv_status status = check_chain(plan, op, match_params, ransac_params, result, &mp, &rp);
    if (status == PV_OK)
        status = pv_sift_chain_check_image(plan, op, "frame", frame);
    if (status != PV_OK)
        return status;
    pv_context *ctx = pv_sift_plan_context(plan);
    const double start = pv_now_ms();
    pv_sift_chain_frame step;
    memset(&step, 0, sizeof step);
    status = pv_sift_chain_advance(plan, frame, 1, &mp, &step);
    pv_timing timing = step.timing;
    if (status == PV_OK && step.matched)
        status = estimate(ctx, op, &step, &rp, result, &timing);
    else if (status == PV_OK) {
        memset(result, 0, sizeof *result);
        result->keypoints2 = step.keypoints;
    }
    if (status == PV_OK)
        report_timing(ctx, start, &timing);
    pv_sift_chain_frame_free(&step);
    return status;
}

void pv_sift_track_reset(pv_sift_plan *plan)
{
    if (plan)
        pv_sift_chain_forget(plan);
}
