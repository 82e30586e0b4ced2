/* OpenCL SIFT chain: detection, matching and the ratio test on the device,
 * only the candidate matches coming back (the chain slots of
 * lib/core/ops_features.h, for pv_sift_match_images and
 * pv_sift_track_next).
 *
 * A step detects its image with the plan's detection (one wait, for the
 * keypoint count), matches the kept frame to it with the matching kernels
 * on the device-resident descriptors, compacts the survivors into a list
 * in query order with both positions (sift_chain_compact), and copies the
 * new frame's records and descriptors into the kept buffers for the next
 * step, all queued behind the detection and waited for once. */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

#define RECORD_WORDS (sizeof(pv_sift_keypoint) / sizeof(float))
#define CHAIN_WG 256 /* features_chain.cl's work group */

_Static_assert(sizeof(pv_sift_chain_candidate) == 8 * sizeof(cl_int),
               "pv_sift_chain_candidate is the kernel's eight words");

void pv_cl_sift_chain_release(cl_sift_plan *plan)
{
    pv_cl_release(&plan->kept_records);
    pv_cl_release(&plan->kept_descriptors);
    plan->kept_capacity = 0;
    plan->kept_count = 0;
    plan->kept = 0;
}

void pv_cl_sift_chain_forget(pv_context *ctx, void *opaque)
{
    (void)ctx;
    ((cl_sift_plan *)opaque)->kept = 0;
}

static pv_status launch(pv_context *ctx, const cl_sift_plan *plan, const char *name,
                        const pv_cl_kernel_arg *args, int count, size_t global, size_t local)
{
    cl_kernel kernel;
    pv_status status = pv_cl_sift_kernel(ctx, &plan->g, name, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, count, 1, &global, &local)
                           : status;
}

/* Kept buffers with room for `count` keypoints (the plan's list length at
 * least, so that they rarely grow).  Buffers being replaced may still be
 * read by queued kernels: OpenCL frees a released buffer only after the
 * commands that use it are done. */
static pv_status ensure_kept(pv_context *ctx, cl_sift_plan *plan, cl_uint count)
{
    if (count <= plan->kept_capacity && plan->kept_records)
        return PV_OK;
    cl_uint room = count > plan->keypoint_capacity ? count : plan->keypoint_capacity;
    room = room > 0 ? room : 1;
    pv_cl_sift_chain_release(plan);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE,
                                    (size_t)room * sizeof(pv_sift_keypoint), &plan->kept_records);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, (size_t)room * DESC_SIZE * sizeof(float),
                              &plan->kept_descriptors);
    if (status != PV_OK) {
        pv_cl_sift_chain_release(plan);
        return status;
    }
    plan->kept_capacity = room;
    return PV_OK;
}

static pv_status copy_words(pv_context *ctx, const cl_sift_plan *plan, cl_mem src, cl_mem dst,
                            size_t words)
{
    if (words == 0)
        return PV_OK;
    if (words > (size_t)CL_INT_MAX)
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY, "sift chain: %zu words to keep", words);
    cl_int count = (cl_int)words;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(src), PV_CL_ARG(dst), PV_CL_ARG(count)};
    return launch(ctx, plan, "sift_chain_copy", args, PV_CL_ARG_COUNT(args), words, 64);
}

/* The new frame (count keypoints, in the plan's lists) becomes the kept one. */
static pv_status keep_frame(pv_context *ctx, cl_sift_plan *plan, cl_uint count)
{
    pv_status status = ensure_kept(ctx, plan, count);
    if (status == PV_OK)
        status = copy_words(ctx, plan, plan->records, plan->kept_records,
                            (size_t)count * RECORD_WORDS);
    if (status == PV_OK)
        status = copy_words(ctx, plan, plan->descriptors, plan->kept_descriptors,
                            (size_t)count * DESC_SIZE);
    return status;
}

/* The squared ratio the kernel tests, a little looser than the front
 * end's exact test in double (negative: no test). */
static float loose_ratio2(float ratio)
{
    if (ratio >= 1.0f)
        return -1.0f;
    return (float)((double)ratio * (double)ratio * (1.0 + (double)PV_SIFT_CHAIN_RATIO_SLACK));
}

/* Queue the match of the kept frame (nq rows) to the new one (nt rows),
 * the compaction, and the reads of the total and of up to nq candidates
 * into host (nq entries), without a wait. */
static pv_status enqueue_match(pv_context *ctx, cl_sift_plan *plan, cl_uint nt,
                               const pv_sift_chain_step *step, cl_int *total,
                               pv_sift_chain_candidate *host)
{
    const cl_int nq = (cl_int)plan->kept_count, ntrain = (cl_int)nt;
    cl_mem fwd, back, list, count;
    pv_status status = pv_cl_sift_nearest_buffers(ctx, plan->kept_descriptors, nq,
                                                  plan->descriptors, ntrain, "sift.chain_fwd",
                                                  &fwd);
    back = fwd;
    if (status == PV_OK && step->mutual)
        status = pv_cl_sift_nearest_buffers(ctx, plan->descriptors, ntrain,
                                            plan->kept_descriptors, nq, "sift.chain_back", &back);
    const size_t list_bytes = (size_t)nq * sizeof(pv_sift_chain_candidate);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.chain_list", list_bytes, &list);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.chain_count", sizeof(cl_int), &count);
    if (status != PV_OK)
        return status;
    cl_int mutual = step->mutual ? 1 : 0;
    cl_float ratio2 = loose_ratio2(step->ratio);
    const pv_cl_kernel_arg args[] = {
        PV_CL_ARG(fwd), PV_CL_ARG(nq), PV_CL_ARG(back), PV_CL_ARG(mutual), PV_CL_ARG(ratio2),
        PV_CL_ARG(plan->kept_records), PV_CL_ARG(plan->records), PV_CL_ARG(list),
        PV_CL_ARG(count)};
    status = launch(ctx, plan, "sift_chain_compact", args, PV_CL_ARG_COUNT(args), CHAIN_WG,
                    CHAIN_WG);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, count, 0, sizeof *total, total);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, list, 0, list_bytes, host);
    return status;
}

static pv_status step_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                const pv_sift_chain_step *step, pv_sift_chain_raw *out,
                                cl_int *total)
{
    cl_uint found = 0;
    pv_status status = pv_cl_sift_detect_settled(ctx, plan, image, NULL, &found);
    if (status != PV_OK)
        return status;
    out->keypoints = (int)found;
    const int matching = step->match && plan->kept && plan->kept_count > 0 && found > 0;
    out->kept_keypoints = step->match && plan->kept ? (int)plan->kept_count : 0;
    if (matching) {
        out->candidates = malloc((size_t)plan->kept_count * sizeof *out->candidates);
        if (!out->candidates)
            return pv_fail(ctx, PV_ERR_NOMEM, "sift chain: no memory for %u candidates",
                           plan->kept_count);
        status = enqueue_match(ctx, plan, found, step, total, out->candidates);
    }
    if (status == PV_OK)
        status = keep_frame(ctx, plan, found);
    return status;
}

pv_status pv_cl_sift_chain_step(pv_context *ctx, void *opaque, const pv_image *image,
                                const pv_sift_chain_step *step, pv_sift_chain_raw *out)
{
    cl_sift_plan *plan = opaque;
    pv_sift_chain_raw raw = {0, 0, 0, NULL};
    cl_int total = 0;
    pv_status status = pv_cl_sift_finish(ctx, step_on_device(ctx, plan, image, step, &raw, &total));
    if (status == PV_OK && (total < 0 || (raw.candidates && total > raw.kept_keypoints)))
        status = pv_fail(ctx, PV_ERR_OPENCL, "sift chain: the device counted %d candidates for "
                         "%d keypoints", (int)total, raw.kept_keypoints);
    if (status != PV_OK) {
        free(raw.candidates);
        plan->kept = 0; /* what the kept buffers hold is not known */
        return status;
    }
    raw.count = raw.candidates ? (int)total : 0;
    plan->kept_count = (cl_uint)raw.keypoints;
    plan->kept = 1;
    *out = raw;
    return PV_OK;
}
