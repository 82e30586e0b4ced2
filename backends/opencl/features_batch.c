/* OpenCL SIFT: a batch of images in chunks side by side.
 *
 * One detection of a small image is about 60 small kernels and two host
 * waits, and on a large GPU the host's launches, not the kernels, bound a
 * loop of single detections.  A batch therefore runs its images in chunks
 * of up to SIFT_BATCH_CHUNK: the plan's batch buffers hold a chunk's
 * images side by side (features_plan.c), and every stage of the detection
 * is one launch over all of them (features.c), so a chunk costs the
 * launches of one image.  Per chunk the host uploads the inputs (one DMA
 * through the stage when they fit), enqueues the stages, reads every
 * image's two totals with one read, and downloads the results with one
 * rectangular read per array.
 *
 * The kernels and their per-image arithmetic are those of a single
 * detection, and the lists of every image are at least as long as the
 * plan's, so each result is exactly a single call's.  An image whose
 * totals show a list too short is detected again on its own with the
 * plan's buffers, as a single call is (growing them until it fits); the
 * chunk's lists then grow for the next chunks. */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

/* Images per chunk: SIFT_BATCH_CHUNK, at most the batch, fewer when the
 * chunk's buffers would take more than 1/BATCH_MEMORY_SHARE of the
 * device's memory or one of them more than the largest allocation.
 * *chunk 1 means a loop of single detections. */
static pv_status chunk_for(pv_context *ctx, const cl_sift_plan *plan, int count, int *chunk)
{
    const int wanted = pv_cl_sift_param(ctx, "SIFT_BATCH_CHUNK");
    if (wanted < 1 || wanted > MAX_BATCH_CHUNK)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "sift_detect_batch: features.SIFT_BATCH_CHUNK %d is not in 1..%d", wanted,
                       MAX_BATCH_CHUNK);
    int images = count < wanted ? count : wanted;
    const pv_device_info *device = pv_cl_device_info(ctx);
    const uint64_t budget = device->global_memory / BATCH_MEMORY_SHARE;
    size_t each, largest;
    pv_cl_sift_slot_bytes(plan, &each, &largest);
    while (images > 1 && ((budget > 0 && (uint64_t)images * each > budget) ||
                          (device->max_alloc > 0 && (uint64_t)images * largest > device->max_alloc)))
        images--;
    *chunk = images;
    return PV_OK;
}

/* Grows the chunk's lists to hold what the short images of a chunk found
 * (a quarter more, as a single detection grows). */
static pv_status grow_for(pv_context *ctx, cl_sift_plan *batch, const cl_uint *counts, int n)
{
    size_t candidates = 0, keypoints = 0;
    for (int i = 0; i < n; i++) {
        const cl_uint c = counts[2 * i], k = counts[2 * i + 1];
        /* Keypoints of candidates that did not fit were not counted:
         * scaled by the share that was seen. */
        double seen = k;
        if (c > batch->candidate_capacity)
            seen *= (double)c / batch->candidate_capacity;
        if (c > batch->candidate_capacity && (size_t)c + c / 4 > candidates)
            candidates = (size_t)c + c / 4;
        if (seen > batch->keypoint_capacity && (size_t)(seen * 1.25) + 1 > keypoints)
            keypoints = (size_t)(seen * 1.25) + 1;
    }
    return pv_cl_sift_grow_to(ctx, batch, candidates, keypoints);
}

/* One chunk of n images on the batch buffers: detected side by side, the
 * results of those whose lists were long enough downloaded; the others
 * detected again one by one on the plan. */
static pv_status detect_chunk(pv_context *ctx, cl_sift_plan *plan, const pv_image *images, int n,
                              pv_sift_raw *raws)
{
    cl_sift_plan *batch = plan->batch;
    cl_uint counts[2 * MAX_BATCH_CHUNK];
    char done[MAX_BATCH_CHUNK];
    pv_status status = pv_cl_sift_enqueue_detection(ctx, batch, images, n);
    for (int i = 0; i < n && status == PV_OK; i++)
        pv_cl_sift_prepare_result(ctx, batch, &raws[i]);
    /* The chunk's one wait before its results: every image's totals. */
    if (status == PV_OK)
        status = pv_cl_read(ctx, batch->counters, 0, 2 * (size_t)n * sizeof(cl_uint), counts);
    if (status != PV_OK)
        return status;
    int short_lists = 0;
    cl_uint found[MAX_BATCH_CHUNK];
    for (int i = 0; i < n; i++) {
        found[i] = counts[2 * i + 1];
        done[i] = counts[2 * i] <= batch->candidate_capacity &&
                  counts[2 * i + 1] <= batch->keypoint_capacity;
        short_lists |= !done[i];
        if (done[i])
            batch->last_count = found[i] > batch->last_count ? found[i] : batch->last_count;
    }
    status = pv_cl_sift_download_chunk(ctx, batch, n, found, done, raws);
    for (int i = 0; i < n && status == PV_OK; i++)
        if (!done[i])
            status = pv_cl_sift_detect_on_device(ctx, plan, &images[i], &raws[i]);
    if (status == PV_OK && short_lists)
        status = grow_for(ctx, batch, counts, n);
    return status;
}

static pv_status detect_one_by_one(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                                   int count, pv_sift_raw *raws)
{
    pv_status status = PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++)
        status = pv_cl_sift_detect_on_device(ctx, plan, &images[i], &raws[i]);
    return status;
}

pv_status pv_cl_sift_detect_batch(pv_context *ctx, void *opaque, const pv_image *images,
                                  int count, pv_sift_raw *raws)
{
    cl_sift_plan *plan = opaque;
    int chunk = 1;
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    if (status == PV_OK)
        status = chunk_for(ctx, plan, count, &chunk);
    if (status == PV_OK && chunk < 2)
        status = detect_one_by_one(ctx, plan, images, count, raws);
    else if (status == PV_OK)
        status = pv_cl_sift_ensure_batch(ctx, plan, chunk);
    for (int first = 0; chunk >= 2 && first < count && status == PV_OK; first += chunk) {
        const int n = count - first < chunk ? count - first : chunk;
        status = detect_chunk(ctx, plan, images + first, n, raws + first);
    }
    return pv_cl_sift_finish(ctx, status);
}
