/* OpenCL SIFT chain: detection, matching and the ratio test on the device,
 * only the candidate matches coming back (the chain slots of
 * lib/core/ops_features.h, for pv_sift_match_images and
 * pv_sift_track_next).
 *
 * A step detects its image with the plan's detection (one wait, for the
 * keypoint count), matches the kept frame to it with the matching kernels
 * on the device-resident descriptors, compacts the survivors into a list
 * in query order with both positions (sift_chain_compact), and copies the
 * new frame's records and descriptors into the kept lists for the next
 * step, all queued behind the detection and waited for once.  A pair
 * (pv_sift_match_images) is detected side by side in the plan's first
 * batch set, both frames in each launch and one wait for both counts, as
 * a batch of two is (features_batch.c): each frame's result is exactly a
 * single detection's.  Its frames are copied out into the kept and the
 * next lists, and after the match the next lists become the kept ones by
 * a swap of the handles. */
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
    pv_cl_release(&plan->next_records);
    pv_cl_release(&plan->next_descriptors);
    plan->kept_capacity = plan->next_capacity = 0;
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

/* A frame's lists (records and descriptors) with room for `count`
 * keypoints (the plan's list length at least, so that they rarely grow).
 * Lists being replaced may still be read by queued kernels: OpenCL frees a
 * released buffer only after the commands that use it are done. */
static pv_status ensure_lists(pv_context *ctx, const cl_sift_plan *plan, cl_mem *records,
                              cl_mem *descriptors, cl_uint *capacity, cl_uint count)
{
    if (count <= *capacity && *records)
        return PV_OK;
    cl_uint room = count > plan->keypoint_capacity ? count : plan->keypoint_capacity;
    room = room > 0 ? room : 1;
    pv_cl_release(records);
    pv_cl_release(descriptors);
    *capacity = 0;
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE,
                                    (size_t)room * sizeof(pv_sift_keypoint), records);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, (size_t)room * DESC_SIZE * sizeof(float),
                              descriptors);
    if (status != PV_OK) {
        pv_cl_release(records);
        pv_cl_release(descriptors);
        return status;
    }
    *capacity = room;
    return PV_OK;
}

/* dst[0 .. words) = src[from .. from + words). */
static pv_status copy_words(pv_context *ctx, const cl_sift_plan *plan, cl_mem src, size_t from,
                            cl_mem dst, size_t words)
{
    if (words == 0)
        return PV_OK;
    if (words > (size_t)CL_INT_MAX)
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY, "sift chain: %zu words to keep", words);
    cl_int count = (cl_int)words;
    cl_ulong at = (cl_ulong)from;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(src), PV_CL_ARG(at), PV_CL_ARG(dst),
                                     PV_CL_ARG(count)};
    return launch(ctx, plan, "sift_chain_copy", args, PV_CL_ARG_COUNT(args), words, 64);
}

/* Keypoint `first` .. first + count of lists (records, descriptors) into
 * the lists (to_records, to_descriptors). */
static pv_status copy_frame(pv_context *ctx, const cl_sift_plan *plan, cl_mem records,
                            cl_mem descriptors, size_t first, cl_uint count, cl_mem to_records,
                            cl_mem to_descriptors)
{
    pv_status status = copy_words(ctx, plan, records, first * RECORD_WORDS, to_records,
                                  (size_t)count * RECORD_WORDS);
    return status == PV_OK ? copy_words(ctx, plan, descriptors, first * DESC_SIZE, to_descriptors,
                                        (size_t)count * DESC_SIZE)
                           : status;
}

/* The plan's detected frame (count keypoints, in its lists) becomes the
 * kept one. */
static pv_status keep_frame(pv_context *ctx, cl_sift_plan *plan, cl_uint count)
{
    pv_status status = ensure_lists(ctx, plan, &plan->kept_records, &plan->kept_descriptors,
                                    &plan->kept_capacity, count);
    return status == PV_OK ? copy_frame(ctx, plan, plan->records, plan->descriptors, 0, count,
                                        plan->kept_records, plan->kept_descriptors)
                           : status;
}

/* The squared ratio the kernel tests, a little looser than the front
 * end's exact test in double (negative: no test). */
static float loose_ratio2(float ratio)
{
    if (ratio >= 1.0f)
        return -1.0f;
    return (float)((double)ratio * (double)ratio * (1.0 + (double)PV_SIFT_CHAIN_RATIO_SLACK));
}

/* Queue the match of the kept frame (kept_count rows) to the frame in
 * (records, descriptors) (nt rows), the compaction, and the reads of the
 * total and of up to kept_count candidates into host, without a wait.
 * counted: the frame's count is counters[1] on the device, nt the lists'
 * room (the eager step, without the mutual check); else NULL. */
static pv_status enqueue_match(pv_context *ctx, cl_sift_plan *plan, cl_mem records,
                               cl_mem descriptors, cl_uint nt, const cl_mem *counted,
                               const pv_sift_chain_step *step, cl_int *total,
                               pv_sift_chain_candidate *host)
{
    const cl_int nq = (cl_int)plan->kept_count, ntrain = (cl_int)nt;
    cl_mem fwd, back, list, count;
    pv_status status =
        counted ? pv_cl_sift_nearest_counted(ctx, plan->kept_descriptors, nq, descriptors,
                                             *counted, ntrain, "sift.chain_fwd", &fwd)
                : pv_cl_sift_nearest_buffers(ctx, plan->kept_descriptors, nq, descriptors, ntrain,
                                             "sift.chain_fwd", &fwd);
    back = fwd;
    if (status == PV_OK && step->mutual)
        status = pv_cl_sift_nearest_buffers(ctx, descriptors, ntrain, plan->kept_descriptors, nq,
                                            "sift.chain_back", &back);
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
        PV_CL_ARG(plan->kept_records), PV_CL_ARG(records), PV_CL_ARG(list), PV_CL_ARG(count)};
    status = launch(ctx, plan, "sift_chain_compact", args, PV_CL_ARG_COUNT(args), CHAIN_WG,
                    CHAIN_WG);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, count, 0, sizeof *total, total);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, list, 0, list_bytes, host);
    return status;
}

/* With a kept frame and keypoints in the new one: room for the candidates
 * in out and the match queued. */
static pv_status match_frames(pv_context *ctx, cl_sift_plan *plan, cl_mem records,
                              cl_mem descriptors, cl_uint found, const pv_sift_chain_step *step,
                              pv_sift_chain_raw *out, cl_int *total)
{
    out->kept_keypoints = (int)plan->kept_count;
    if (plan->kept_count == 0 || found == 0)
        return PV_OK;
    out->candidates = malloc((size_t)plan->kept_count * sizeof *out->candidates);
    if (!out->candidates)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift chain: no memory for %u candidates",
                       plan->kept_count);
    return enqueue_match(ctx, plan, records, descriptors, found, NULL, step, total,
                         out->candidates);
}

/* One image: detected with the plan's lists (one wait for its count),
 * matched to the kept frame when asked, then kept. */
static pv_status step_single(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                             const pv_sift_chain_step *step, pv_sift_chain_raw *out,
                             cl_int *total)
{
    cl_uint found = 0;
    pv_status status = pv_cl_sift_detect_settled(ctx, plan, image, NULL, &found);
    if (status != PV_OK)
        return status;
    out->keypoints = (int)found;
    if (step->match && plan->kept)
        status = match_frames(ctx, plan, plan->records, plan->descriptors, found, step, out, total);
    if (status == PV_OK)
        status = keep_frame(ctx, plan, found);
    if (status == PV_OK) {
        plan->kept_count = found;
        plan->kept = 1;
    }
    return status;
}

static void swap_mem(cl_mem *a, cl_mem *b)
{
    cl_mem t = *a;
    *a = *b;
    *b = t;
}

/* The next lists become the kept ones (and the kept ones the next). */
static void swap_lists(cl_sift_plan *plan)
{
    swap_mem(&plan->kept_records, &plan->next_records);
    swap_mem(&plan->kept_descriptors, &plan->next_descriptors);
    const cl_uint room = plan->kept_capacity;
    plan->kept_capacity = plan->next_capacity;
    plan->next_capacity = room;
}

/* A tracking step without a wait before the match: the detection, the
 * match with the frame's count read on the device, the reads of the count
 * and the candidates, and a copy of the whole lists into the next lists,
 * all queued and waited for once.  *done 0: the lists were short (the
 * kept frame is untouched; the caller runs the waiting step, which grows
 * them). */
static pv_status step_eager(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                            const pv_sift_chain_step *step, pv_sift_chain_raw *out,
                            cl_int *total, int *done)
{
    *done = 0;
    cl_uint counts[2] = {0, 0};
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    const cl_uint room = plan->keypoint_capacity;
    if (status == PV_OK)
        status = ensure_lists(ctx, plan, &plan->next_records, &plan->next_descriptors,
                              &plan->next_capacity, room);
    if (status == PV_OK)
        status = pv_cl_sift_enqueue_detection(ctx, plan, image, 1);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->counters, 0, sizeof counts, counts);
    out->candidates = status == PV_OK ? malloc((size_t)plan->kept_count * sizeof *out->candidates)
                                      : NULL;
    if (status == PV_OK && !out->candidates)
        status = pv_fail(ctx, PV_ERR_NOMEM, "sift chain: no memory for %u candidates",
                         plan->kept_count);
    if (status == PV_OK)
        status = enqueue_match(ctx, plan, plan->records, plan->descriptors, room, &plan->counters,
                               step, total, out->candidates);
    if (status == PV_OK)
        status = copy_frame(ctx, plan, plan->records, plan->descriptors, 0, room,
                            plan->next_records, plan->next_descriptors);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status != PV_OK || counts[0] > plan->candidate_capacity || counts[1] > room) {
        free(out->candidates);
        out->candidates = NULL;
        *total = 0;
        return status;
    }
    plan->last_count = counts[1];
    out->keypoints = (int)counts[1];
    out->kept_keypoints = (int)plan->kept_count;
    if (counts[1] == 0) { /* nothing to match: no candidates */
        free(out->candidates);
        out->candidates = NULL;
    }
    swap_lists(plan);
    plan->kept_count = counts[1];
    *done = 1;
    return PV_OK;
}

/* Both frames of a pair side by side in the plan's first batch set (one
 * launch per stage for both, one wait for both counts), copied out into
 * the kept lists (first) and the next lists (image).  *done 0: a list of
 * the set was too short (the caller detects one by one instead). */
static pv_status detect_pair(pv_context *ctx, cl_sift_plan *plan, const pv_image *first,
                             const pv_image *image, cl_uint found[2], int *done)
{
    *done = 0;
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    if (status == PV_OK)
        status = pv_cl_sift_ensure_batch(ctx, plan, 2, 1);
    if (status != PV_OK)
        return status;
    cl_sift_plan *set = &plan->batch[0];
    const pv_image images[2] = {*first, *image};
    cl_uint totals[4] = {0, 0, 0, 0};
    status = pv_cl_sift_enqueue_detection(ctx, set, images, 2);
    if (status == PV_OK)
        status = pv_cl_read(ctx, set->counters, 0, sizeof totals, totals);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < 2; i++)
        if (totals[2 * i] > set->candidate_capacity || totals[2 * i + 1] > set->keypoint_capacity)
            return PV_OK;
    found[0] = totals[1];
    found[1] = totals[3];
    status = ensure_lists(ctx, plan, &plan->kept_records, &plan->kept_descriptors,
                          &plan->kept_capacity, found[0]);
    if (status == PV_OK)
        status = ensure_lists(ctx, plan, &plan->next_records, &plan->next_descriptors,
                              &plan->next_capacity, found[1]);
    if (status == PV_OK)
        status = copy_frame(ctx, plan, set->records, set->descriptors, 0, found[0],
                            plan->kept_records, plan->kept_descriptors);
    if (status == PV_OK)
        status = copy_frame(ctx, plan, set->records, set->descriptors, set->keypoint_capacity,
                            found[1], plan->next_records, plan->next_descriptors);
    *done = status == PV_OK;
    return status;
}

/* A pair: both detected side by side, first kept, matched to image (when
 * asked), then image kept by swapping the next lists in.  When the set's
 * lists were short, one by one with the plan's lists instead (which grow
 * as a single detection's do). */
static pv_status step_pair(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                           const pv_sift_chain_step *step, pv_sift_chain_raw *out, cl_int *total)
{
    cl_uint found[2] = {0, 0};
    int done = 0;
    plan->kept = 0;
    pv_status status = detect_pair(ctx, plan, step->first, image, found, &done);
    if (status != PV_OK)
        return status;
    if (!done) {
        const pv_sift_chain_step keep_only = {0, step->ratio, step->mutual, NULL};
        pv_sift_chain_raw ignored = {0, 0, 0, NULL};
        status = step_single(ctx, plan, step->first, &keep_only, &ignored, total);
        if (status == PV_OK)
            status = step_single(ctx, plan, image, step, out, total);
        /* The plan's lists grew to fit; the set's follow, for the next pair. */
        return status == PV_OK ? pv_cl_sift_grow_to(ctx, &plan->batch[0], plan->candidate_capacity,
                                                    plan->keypoint_capacity)
                               : status;
    }
    plan->kept_count = found[0];
    out->keypoints = (int)found[1];
    if (step->match)
        status = match_frames(ctx, plan, plan->next_records, plan->next_descriptors, found[1],
                              step, out, total);
    if (status != PV_OK)
        return status;
    swap_lists(plan);
    plan->kept_count = found[1];
    plan->kept = 1;
    return PV_OK;
}

pv_status pv_cl_sift_chain_step(pv_context *ctx, void *opaque, const pv_image *image,
                                const pv_sift_chain_step *step, pv_sift_chain_raw *out)
{
    cl_sift_plan *plan = opaque;
    pv_sift_chain_raw raw = {0, 0, 0, NULL};
    cl_int total = 0;
    pv_status status = PV_OK;
    int done = 0;
    if (step->first)
        status = step_pair(ctx, plan, image, step, &raw, &total);
    else if (step->match && plan->kept && plan->kept_count > 0 && !step->mutual)
        status = step_eager(ctx, plan, image, step, &raw, &total, &done);
    if (status == PV_OK && !step->first && !done)
        status = step_single(ctx, plan, image, step, &raw, &total);
    status = pv_cl_sift_finish(ctx, status);
    if (status == PV_OK && (total < 0 || (raw.candidates && total > raw.kept_keypoints)))
        status = pv_fail(ctx, PV_ERR_OPENCL, "sift chain: the device counted %d candidates for "
                         "%d keypoints", (int)total, raw.kept_keypoints);
    if (status != PV_OK) {
        free(raw.candidates);
        plan->kept = 0; /* what the kept lists hold is not known */
        return status;
    }
    raw.count = raw.candidates ? (int)total : 0;
    *out = raw;
    return PV_OK;
}
