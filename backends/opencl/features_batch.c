/* OpenCL SIFT: a batch of images, pipelined over the plan's lanes.
 *
 * One detection of a small image is ~60 small kernels and two host waits
 * (for the two totals, then for the result), so a loop of single calls
 * leaves the device idle while the host waits and launches, and one small
 * image's kernels do not fill a large device.  A batch spreads its images
 * over a few lanes (features_plan.c: each a scale space, lists, pinned
 * stage and in-order queue of its own) and keeps the host ahead of them:
 * image i goes to lane i % lanes, where it is uploaded through the lane's
 * stage, detected and its totals read back, all without a wait.  The host
 * waits for a lane's totals only when the lane is needed again (or at the
 * end); it then enqueues that image's download, which it copies out of
 * the stage the next time around.  Queues of different lanes run on the
 * device side by side.
 *
 * The kernels, their arguments and the lists' sizes are those of a single
 * detection, so each result is exactly a single call's.  An image whose
 * totals show a list too short is detected again once its lane has
 * drained, as a single call is (the lane's lists grow; the next batch
 * starts with every lane as long as the longest). */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

/* What a lane has in flight: at most one detection whose totals have not
 * been seen, and one download not yet copied out. */
typedef struct lane_work {
    cl_sift_plan *lane;
    int detecting;          /* image index, -1: none */
    cl_event detected;      /* its totals are in the stage */
    int downloading;        /* image index, -1: none */
    cl_event downloaded;    /* its result is in the stage */
} lane_work;

/* The batch's bookkeeping: images to detect again (a list was short). */
typedef struct batch_run {
    const pv_image *images;
    pv_sift_raw *raws;
    int count;
    char *redo;
} batch_run;

static pv_status wait_event(pv_context *ctx, cl_event *event)
{
    pv_status status = pv_cl_check(ctx, clWaitForEvents(1, event), "clWaitForEvents(sift lane)");
    clReleaseEvent(*event);
    *event = NULL;
    return status;
}

/* The last download of the lane, out of its stage. */
static pv_status collect_download(pv_context *ctx, lane_work *work, batch_run *run)
{
    if (work->downloading < 0)
        return PV_OK;
    pv_status status = wait_event(ctx, &work->downloaded);
    if (status == PV_OK)
        pv_cl_sift_download_end(work->lane, &run->raws[work->downloading]);
    work->downloading = -1;
    return status;
}

/* The totals of the lane's detection: its download enqueued, or the image
 * marked to be detected again when a list was short. */
static pv_status settle_detection(pv_context *ctx, lane_work *work, batch_run *run)
{
    if (work->detecting < 0)
        return PV_OK;
    const int image = work->detecting;
    work->detecting = -1;
    pv_status status = wait_event(ctx, &work->detected);
    if (status != PV_OK)
        return status;
    cl_sift_plan *lane = work->lane;
    cl_uint counts[2];
    memcpy(counts, lane->stage_host, sizeof counts);
    if (counts[0] > lane->candidate_capacity || counts[1] > lane->keypoint_capacity) {
        run->redo[image] = 1;
        return PV_OK;
    }
    lane->last_count = counts[1];
    int pending = 0;
    status = pv_cl_sift_download_begin(ctx, lane, counts[1], &run->raws[image], &pending);
    if (status == PV_OK && pending)
        status = pv_cl_marker(ctx, &work->downloaded);
    if (status == PV_OK && pending)
        work->downloading = image;
    return status;
}

/* Image `image` into the lane: upload, detection, totals into the stage.
 * The upload does not move the stage (which may be receiving the last
 * image's result): the lane was made with room for its counts and input,
 * and only a result's download grows it, when nothing is in flight into
 * it. */
static pv_status start_detection(pv_context *ctx, lane_work *work, batch_run *run, int image)
{
    cl_sift_plan *lane = work->lane;
    pv_status status = pv_cl_sift_enqueue_detection(ctx, lane, &run->images[image]);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, lane->counters, 0, 2 * sizeof(cl_uint), lane->stage_host);
    if (status == PV_OK)
        status = pv_cl_marker(ctx, &work->detected);
    if (status == PV_OK)
        work->detecting = image;
    return status;
}

/* One step on a lane, on its own queue: its last download collected (the
 * new one reuses the stage), its last detection settled, then `image`
 * (or nothing, < 0) started. */
static pv_status lane_step(pv_context *ctx, lane_work *work, batch_run *run, int image)
{
    cl_command_queue previous = pv_cl_use_queue(ctx, work->lane->queue);
    pv_status status = collect_download(ctx, work, run);
    if (status == PV_OK)
        status = settle_detection(ctx, work, run);
    if (status == PV_OK && image >= 0)
        status = start_detection(ctx, work, run, image);
    /* Drivers may hold enqueued commands on the host until a flush or a
     * wait: without this, a lane would start only when the host waits for
     * it a lap later. */
    if (status == PV_OK)
        status = pv_cl_check(ctx, clFlush(work->lane->queue), "clFlush(sift lane)");
    pv_cl_use_queue(ctx, previous);
    pv_cl_account_completed(ctx);
    return status;
}

/* After a failure: every lane's commands finished, its events released. */
static void abandon_lanes(lane_work *works, int lanes)
{
    for (int l = 0; l < lanes; l++) {
        clFinish(works[l].lane->queue);
        if (works[l].detected)
            clReleaseEvent(works[l].detected);
        if (works[l].downloaded)
            clReleaseEvent(works[l].downloaded);
        works[l].detected = works[l].downloaded = NULL;
    }
}

/* The pipeline: image i on lane i % lanes, the host a lap ahead. */
static pv_status run_pipeline(pv_context *ctx, cl_sift_plan *plan, int lanes, batch_run *run)
{
    lane_work works[MAX_BATCH_LANES];
    for (int l = 0; l < lanes; l++)
        works[l] = (lane_work){&plan->lanes[l], -1, NULL, -1, NULL};
    pv_status status = PV_OK;
    for (int i = 0; i < run->count && status == PV_OK; i++)
        status = lane_step(ctx, &works[i % lanes], run, i);
    /* The last lap, from the lane that started first: every lane's last
     * download enqueued, then every one collected. */
    for (int k = 0; k < lanes && status == PV_OK; k++)
        status = lane_step(ctx, &works[(run->count + k) % lanes], run, -1);
    for (int l = 0; l < lanes && status == PV_OK; l++)
        status = collect_download(ctx, &works[l], run);
    if (status != PV_OK)
        abandon_lanes(works, lanes);
    return status;
}

/* Images whose lists were short, again on their lane as a single call
 * does (growing the lane's lists until they fit). */
static pv_status redo_short(pv_context *ctx, cl_sift_plan *plan, int lanes, batch_run *run)
{
    pv_status status = PV_OK;
    for (int i = 0; i < run->count && status == PV_OK; i++) {
        if (!run->redo[i])
            continue;
        cl_sift_plan *lane = &plan->lanes[i % lanes];
        cl_command_queue previous = pv_cl_use_queue(ctx, lane->queue);
        status = pv_cl_sift_detect_on_device(ctx, lane, &run->images[i], &run->raws[i]);
        pv_cl_use_queue(ctx, previous);
    }
    return status;
}

/* Lanes for this batch: SIFT_BATCH_LANES (within 1..MAX_BATCH_LANES),
 * fewer for a short batch or when their buffers would take too much of
 * the device's memory. */
static int lanes_for(pv_context *ctx, const cl_sift_plan *plan, int count)
{
    int lanes = pv_cl_sift_param(ctx, "SIFT_BATCH_LANES");
    lanes = lanes < 1 ? 1 : lanes > MAX_BATCH_LANES ? MAX_BATCH_LANES : lanes;
    lanes = count < lanes ? count : lanes;
    const uint64_t budget = pv_cl_device_info(ctx)->global_memory / LANE_MEMORY_SHARE;
    const uint64_t each = pv_cl_sift_lane_bytes(plan);
    while (lanes > 1 && budget > 0 && (uint64_t)lanes * each > budget)
        lanes--;
    return lanes;
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
    pv_status status = pv_cl_sift_initial_capacities(ctx, plan);
    const int lanes = status == PV_OK ? lanes_for(ctx, plan, count) : 1;
    if (status != PV_OK || lanes < 2)
        return pv_cl_sift_finish(ctx, status == PV_OK ? detect_one_by_one(ctx, plan, images,
                                                                         count, raws)
                                                      : status);
    status = pv_cl_sift_ensure_lanes(ctx, plan, lanes);
    if (status == PV_OK)
        status = pv_cl_sift_match_capacities(ctx, plan);
    batch_run run = {images, raws, count, calloc((size_t)count, 1)};
    if (status == PV_OK && !run.redo)
        status = pv_fail(ctx, PV_ERR_NOMEM, "sift_detect_batch: out of memory");
    if (status == PV_OK)
        status = run_pipeline(ctx, plan, lanes, &run);
    if (status == PV_OK)
        status = redo_short(ctx, plan, lanes, &run);
    free(run.redo);
    return pv_cl_sift_finish(ctx, status);
}
