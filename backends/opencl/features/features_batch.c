/* OpenCL SIFT: a batch of images in chunks side by side.
 *
 * One detection of a small image is about 25 commands (some 20 small
 * kernels, the upload, the reads), and on a large GPU the host's cost of
 * enqueuing them, not the kernels, bounds a loop of single detections.  A
 * batch therefore runs its images in chunks of up to SIFT_BATCH_CHUNK: a
 * set of batch buffers holds a chunk's images side by side
 * (features_plan.c), and every stage of the detection is one launch over
 * all of them (features.c), so a chunk costs the commands of one image.
 * Per chunk the host packs the inputs into the set's stage (one DMA),
 * enqueues the stages and one read of every image's two totals, and, once
 * those have arrived, the reads of the results into the set's pinned
 * stage (features_result.c) on the plan's second queue, the transfer
 * queue: the results of chunk k then come down while chunk k + 1's
 * kernels run on the context's queue (a GPU's copy engines work beside
 * its compute units; in one in-order queue the reads would wait for the
 * kernels queued before them).
 *
 * With more than one chunk, two sets take turns: chunk k + 1 is queued
 * before the host waits for chunk k's totals, and chunk k + 2 (on chunk
 * k's set, behind a barrier on chunk k's result reads) before the host
 * waits for chunk k's results and copies them out, so the device always
 * has the next chunk's work while the host collects the last one's.  A
 * batch that would be one chunk runs as two halves for the same overlap,
 * and a larger one in at least four chunks (most_per_chunk).
 *
 * The kernels and their per-image arithmetic are those of a single
 * detection, and every image's lists are at least as long as the plan's,
 * so each result is exactly a single call's.  An image whose totals show
 * a list too short is detected again on its own with the plan's buffers,
 * as a single call is (growing them until it fits); its set's lists then
 * grow before the set takes its next chunk. */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

#define SPLIT_MIN 4
#define PIPELINE_CHUNKS 4

/* The most images per chunk that keep the pipeline fed.  A chunk's kernels
 * overlap only the previous chunk's results coming down (on the plan's
 * transfer queue) and being copied out, so the first chunk's upload and
 * kernels and the last one's download and copy are not hidden: their share
 * is 1/chunks of the batch.  Hence two halves from SPLIT_MIN images on
 * (one chunk cannot overlap anything), and from 2 PIPELINE_CHUNKS images on
 * at least PIPELINE_CHUNKS chunks of at least SPLIT_MIN images: on an H100,
 * 16 720p frames ran at 3183-3277 images/s in four chunks of 4 against
 * 2914-2996 in two of 8 (docs/sift.md). */
static int most_per_chunk(int count)
{
    if (count < SPLIT_MIN)
        return count;
    if (count < 2 * PIPELINE_CHUNKS)
        return (count + 1) / 2;
    const int quarter = (count + PIPELINE_CHUNKS - 1) / PIPELINE_CHUNKS;
    return quarter > SPLIT_MIN ? quarter : SPLIT_MIN;
}

/* Images per chunk: SIFT_BATCH_CHUNK, at most most_per_chunk, fewer when the
 * sets' buffers would take more than 1/BATCH_MEMORY_SHARE of the device's
 * memory or one of them more than the largest allocation.  *chunk 1
 * means a loop of single detections; *sets: 2 when there is more than
 * one chunk. */
static pv_status chunk_for(pv_context *ctx, const cl_sift_plan *plan, int count, int *chunk,
                           int *sets)
{
    const int wanted = pv_cl_sift_param(ctx, "SIFT_BATCH_CHUNK");
    if (wanted < 1 || wanted > MAX_BATCH_CHUNK)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "sift_detect_batch: features.SIFT_BATCH_CHUNK %d is not in 1..%d", wanted,
                       MAX_BATCH_CHUNK);
    int images = count < wanted ? count : wanted;
    const int most = most_per_chunk(count);
    if (images > most)
        images = most;
    *sets = count > images ? MAX_BATCH_SETS : 1;
    const pv_device_info *device = pv_cl_device_info(ctx);
    uint64_t memory = device->global_memory;
    if (device->type == PV_DEVICE_CPU && pv_host_memory_available() < memory)
        memory = pv_host_memory_available(); /* host memory, under the process's limits */
    const uint64_t budget = memory / BATCH_MEMORY_SHARE;
    size_t each, largest;
    pv_cl_sift_slot_bytes(plan, &each, &largest);
    while (images > 1 &&
           ((budget > 0 && (uint64_t)images * each * (uint64_t)*sets > budget) ||
            (device->max_alloc > 0 && (uint64_t)images * largest > device->max_alloc)))
        images--;
    *chunk = images;
    return PV_OK;
}

/* One chunk in flight: its images, its set of batch buffers, and where
 * its collection stands. */
typedef struct chunk_work {
    cl_sift_plan *set;
    const pv_image *images;
    pv_sift_raw *raws;
    int n;
    cl_event counted;      /* its totals are in the set's stage */
    cl_event downloaded;   /* its results are in the set's stage (when pending) */
    int pending;
    cl_uint counts[2 * MAX_BATCH_CHUNK];
    char done[MAX_BATCH_CHUNK]; /* the image's lists were long enough */
    int short_lists;
} chunk_work;

static pv_status wait_event(pv_context *ctx, cl_event *event)
{
    pv_status status = pv_cl_check(ctx, clWaitForEvents(1, event), "clWaitForEvents(sift chunk)");
    clReleaseEvent(*event);
    *event = NULL;
    return status;
}

static void release_events(chunk_work *work)
{
    if (work->counted)
        clReleaseEvent(work->counted);
    if (work->downloaded)
        clReleaseEvent(work->downloaded);
    work->counted = work->downloaded = NULL;
}

/* The chunk's detection and the read of its totals, queued without a
 * wait (flushed, so that the device starts while the host goes on).
 * `reads`: when not NULL, the transfer queue's reads of the chunk that
 * used the set before, which the detection must not overwrite: the
 * context's queue waits for them first. */
static pv_status start_chunk(pv_context *ctx, chunk_work *work, cl_event reads)
{
    cl_sift_plan *set = work->set;
    pv_status status = PV_OK;
    if (reads) {
        cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
        if (err == CL_SUCCESS)
            err = clEnqueueBarrierWithWaitList(pv_cl_queue(ctx), 1, &reads, NULL);
        status = pv_cl_check(ctx, err, "clEnqueueBarrierWithWaitList(sift chunk)");
    }
    if (status == PV_OK)
        status = pv_cl_sift_enqueue_detection(ctx, set, work->images, work->n);
    for (int i = 0; i < work->n && status == PV_OK; i++)
        pv_cl_sift_prepare_result(ctx, set, &work->raws[i]);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, set->counters, 0, 2 * (size_t)work->n * sizeof(cl_uint),
                                  set->stage_host);
    if (status == PV_OK)
        status = pv_cl_marker(ctx, &work->counted);
    if (status == PV_OK)
        status = pv_cl_check(ctx, clFlush(pv_cl_queue(ctx)), "clFlush(sift chunk)");
    return status;
}

/* The reads of the chunk's results, queued on the plan's transfer queue
 * (the chunk's totals have arrived, so its kernels are done and the reads
 * need wait for nothing on the context's queue, where the next chunk's
 * kernels may be queued), and the event that marks them done. */
static pv_status enqueue_result_reads(pv_context *ctx, cl_sift_plan *plan, chunk_work *work,
                                      const cl_uint *found)
{
    cl_command_queue main_queue = pv_cl_use_queue(ctx, plan->transfer);
    pv_status status = pv_cl_sift_download_chunk_begin(ctx, work->set, work->n, found,
                                                       work->done, work->raws, &work->pending);
    if (status == PV_OK && work->pending)
        status = pv_cl_marker(ctx, &work->downloaded);
    if (status == PV_OK)
        status = pv_cl_check(ctx, clFlush(plan->transfer), "clFlush(sift results)");
    pv_cl_use_queue(ctx, main_queue);
    return status;
}

/* The chunk's totals: which images' lists were long enough, and the
 * reads of their results queued. */
static pv_status settle_chunk(pv_context *ctx, cl_sift_plan *plan, chunk_work *work)
{
    cl_sift_plan *set = work->set;
    pv_status status = wait_event(ctx, &work->counted);
    if (status != PV_OK)
        return status;
    memcpy(work->counts, set->stage_host, 2 * (size_t)work->n * sizeof(cl_uint));
    cl_uint found[MAX_BATCH_CHUNK];
    for (int i = 0; i < work->n; i++) {
        found[i] = work->counts[2 * i + 1];
        work->done[i] = work->counts[2 * i] <= set->candidate_capacity &&
                        found[i] <= set->keypoint_capacity;
        work->short_lists |= !work->done[i];
        if (work->done[i] && found[i] > set->last_count)
            set->last_count = found[i];
    }
    return enqueue_result_reads(ctx, plan, work, found);
}

/* The chunk's results out of the stage; its short images detected again
 * one by one on the plan's buffers (which waits for the whole queue). */
static pv_status collect_chunk(pv_context *ctx, cl_sift_plan *plan, chunk_work *work)
{
    pv_status status = work->pending ? wait_event(ctx, &work->downloaded) : PV_OK;
    if (status == PV_OK && work->pending)
        pv_cl_sift_download_chunk_end(work->set, work->n, work->done, work->raws);
    for (int i = 0; i < work->n && status == PV_OK; i++)
        if (!work->done[i])
            status = pv_cl_sift_detect_on_device(ctx, plan, &work->images[i], &work->raws[i]);
    pv_cl_account_completed(ctx);
    return status;
}

/* The chunk's set's lists grown to hold what its short images found (a
 * quarter more, as a single detection grows), while nothing is queued on
 * that set.  (The other set may hold a chunk whose results are still to
 * be read: it grows when one of its own chunks finds its lists short, or
 * at the next batch to the plan's lengths.) */
static pv_status grow_set(pv_context *ctx, const chunk_work *work)
{
    size_t candidates = 0, keypoints = 0;
    cl_sift_plan *set = work->set;
    for (int i = 0; i < work->n; i++) {
        const cl_uint c = work->counts[2 * i], k = work->counts[2 * i + 1];
        /* Keypoints of candidates that did not fit were not counted:
         * scaled by the share that was seen. */
        double seen = k;
        if (c > set->candidate_capacity)
            seen *= (double)c / set->candidate_capacity;
        if (c > set->candidate_capacity && (size_t)c + c / 4 > candidates)
            candidates = (size_t)c + c / 4;
        if (seen > set->keypoint_capacity && (size_t)(seen * 1.25) + 1 > keypoints)
            keypoints = (size_t)(seen * 1.25) + 1;
    }
    return pv_cl_sift_grow_to(ctx, set, candidates, keypoints);
}

/* The batch's chunks of `chunk` images, on the plan's sets in turn. */
static pv_status run_chunks(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                            int count, pv_sift_raw *raws, int chunk)
{
    const int chunks = (count + chunk - 1) / chunk;
    chunk_work *works = calloc((size_t)chunks, sizeof *works);
    if (!works)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: out of memory");
    for (int k = 0; k < chunks; k++) {
        works[k].set = &plan->batch[k % plan->batch_sets];
        works[k].images = images + (size_t)k * (size_t)chunk;
        works[k].raws = raws + (size_t)k * (size_t)chunk;
        works[k].n = count - k * chunk < chunk ? count - k * chunk : chunk;
    }
    const int ahead = plan->batch_sets; /* chunks queued before the first is collected */
    pv_status status = PV_OK;
    for (int k = 0; k < ahead && k < chunks && status == PV_OK; k++)
        status = start_chunk(ctx, &works[k], NULL);
    for (int k = 0; k < chunks && status == PV_OK; k++) {
        status = settle_chunk(ctx, plan, &works[k]);
        const int next = k + ahead;
        /* The next chunk on this set, queued behind this one's result
         * reads, unless the lists must grow first. */
        if (status == PV_OK && next < chunks && !works[k].short_lists)
            status = start_chunk(ctx, &works[next], works[k].downloaded);
        if (status == PV_OK)
            status = collect_chunk(ctx, plan, &works[k]);
        if (status == PV_OK && works[k].short_lists)
            status = grow_set(ctx, &works[k]);
        if (status == PV_OK && next < chunks && works[k].short_lists)
            status = start_chunk(ctx, &works[next], NULL);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "sift_detect_batch",
                                        (double)k * chunk + works[k].n, count);
    }
    if (status != PV_OK) {
        clFinish(plan->transfer);
        clFinish(pv_cl_queue(ctx));
    }
    for (int k = 0; k < chunks; k++)
        release_events(&works[k]);
    free(works);
    return status;
}

static pv_status detect_one_by_one(pv_context *ctx, cl_sift_plan *plan, const pv_image *images,
                                   int count, pv_sift_raw *raws)
{
    pv_status status = PV_OK;
    for (int i = 0; i < count && status == PV_OK; i++) {
        status = pv_cl_sift_detect_on_device(ctx, plan, &images[i], &raws[i]);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "sift_detect_batch", i + 1.0, count);
    }
    return status;
}

pv_status pv_cl_sift_detect_batch(pv_context *ctx, void *opaque, const pv_image *images,
                                  int count, pv_sift_raw *raws)
{
    cl_sift_plan *plan = opaque;
    int chunk = 1, sets = 1;
    pv_status status = pv_progress_report(ctx, "sift_detect_batch", 0.0, count);
    if (status == PV_OK)
        status = pv_cl_sift_initial_capacities(ctx, plan);
    if (status == PV_OK)
        status = chunk_for(ctx, plan, count, &chunk, &sets);
    if (status == PV_OK && chunk < 2)
        status = detect_one_by_one(ctx, plan, images, count, raws);
    else if (status == PV_OK)
        status = pv_cl_sift_ensure_batch(ctx, plan, chunk, sets);
    if (status == PV_OK && chunk >= 2)
        status = run_chunks(ctx, plan, images, count, raws, chunk);
    return pv_cl_sift_finish(ctx, status);
}
