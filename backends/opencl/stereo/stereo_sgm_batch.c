/* OpenCL semi-global matching: a stream of pairs through one plan.
 *
 * The plan (launch shape, kernels) and the working buffers (census
 * strings, cost and path volumes) are made once for the batch and serve
 * every pair, one after another, on the context's queue.  What differs
 * between consecutive pairs lives in two slots, each with its own input
 * images and output maps, so that the transfers of one pair overlap the
 * kernels of another:
 *
 *   transfer queue:  up(n+1)            down(n)   up(n+2)         down(n+1)
 *   context's queue:      kernels(n)         kernels(n+1)              ...
 *
 * Pair n+1's images go up on a second queue (the transfer queue, as the
 * SIFT batch's reads) while pair n's kernels run; its kernels are queued
 * behind them on the context's queue, waiting (an event) for its upload.
 * Pair n's maps then come down on the transfer queue, behind an event
 * marking pair n's kernels done, while pair n+1's kernels run; the host's
 * copy out of the pinned stages (backends/opencl/runtime/runtime_transfer.c) is
 * hidden the same way.  Pair n+2 reuses pair n's slot: its upload follows
 * pair n's download on the in-order transfer queue, and its kernels wait
 * for that download's event, so nothing is overwritten while read.
 *
 * The kernels, their arguments and their order are a single call's
 * (pv_cl_sgm_enqueue_pair), so every pair's result is bit for bit a
 * single call's. */
#include "stereo_sgm_internal.h"

#include <string.h>

/* The pipeline's state: the two slots' buffers and the events between
 * the queues (NULL when there is none to wait for). */
typedef struct sgm_stream {
    sgm_plan plan;
    sgm_buffers slot[2];
    cl_command_queue transfer, main;
    cl_event uploaded;       /* the last upload queued on the transfer queue */
    cl_event computed[2];    /* each slot's last kernels done */
    cl_event downloaded[2];  /* each slot's last download done */
} sgm_stream;

static void release_event(cl_event *event)
{
    if (*event)
        clReleaseEvent(*event);
    *event = NULL;
}

/* The current queue waits for the events that are set (at most two). */
static pv_status wait_for(pv_context *ctx, cl_event a, cl_event b)
{
    cl_event list[2];
    cl_uint n = 0;
    if (a)
        list[n++] = a;
    if (b)
        list[n++] = b;
    if (n == 0)
        return PV_OK;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueBarrierWithWaitList(pv_cl_queue(ctx), n, list, NULL);
    return pv_cl_check(ctx, err, "clEnqueueBarrierWithWaitList(sgm stream)");
}

/* A fresh marker of the current queue in *event, and the queue flushed so
 * that the device starts on it while the host goes on. */
static pv_status mark(pv_context *ctx, cl_event *event)
{
    release_event(event);
    pv_status status = pv_cl_marker(ctx, event);
    if (status == PV_OK)
        status = pv_cl_check(ctx, clFlush(pv_cl_queue(ctx)), "clFlush(sgm stream)");
    return status;
}

/* Slot 1: slot 0's working buffers with inputs and outputs of its own.
 * (Slot 0's come from pv_cl_sgm_get_buffers, which uploads pair 0.) */
static pv_status second_slot(pv_context *ctx, const pv_image *left, const pv_sgm_params *p,
                             sgm_stream *s)
{
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    const size_t input = pixels * pv_pixel_size(left->type);
    sgm_buffers *b = &s->slot[1];
    *b = s->slot[0];
    pv_status status = pv_cl_scratch(ctx, "sgm.stream.left", input, &b->left);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.stream.right", input, &b->right);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.stream.disp", pixels * sizeof(cl_float), &b->disp);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sgm.stream.conf", pixels * sizeof(cl_float), &b->conf);
    if (status == PV_OK && p->median)
        status = pv_cl_scratch(ctx, "sgm.stream.median", pixels * sizeof(cl_float), &b->median);
    return status;
}

/* Pair `n`'s images up into its slot on the transfer queue. */
static pv_status upload_pair(pv_context *ctx, sgm_stream *s, const pv_image *left,
                             const pv_image *right, int n)
{
    const sgm_buffers *b = &s->slot[n % 2];
    pv_cl_use_queue(ctx, s->transfer);
    pv_status status = pv_cl_write_image(ctx, b->left, left);
    if (status == PV_OK)
        status = pv_cl_write_image(ctx, b->right, right);
    if (status == PV_OK)
        status = mark(ctx, &s->uploaded);
    pv_cl_use_queue(ctx, s->main);
    return status;
}

/* Pair `n`'s kernels on the context's queue, once its upload and the
 * download of the pair that used its slot before are done. */
static pv_status compute_pair(pv_context *ctx, sgm_stream *s, const pv_image *left,
                              const pv_sgm_params *p, int n)
{
    const int k = n % 2;
    pv_status status = wait_for(ctx, s->uploaded, s->downloaded[k]);
    if (status == PV_OK)
        status = pv_cl_sgm_enqueue_pair(ctx, &s->plan, left, p, &s->slot[k]);
    if (status == PV_OK)
        status = mark(ctx, &s->computed[k]);
    return status;
}

/* Pair `n`'s maps down on the transfer queue once its kernels are done
 * (the read waits: the maps are in the caller's images on return). */
static pv_status download_pair(pv_context *ctx, sgm_stream *s, const pv_sgm_params *p, int n,
                               pv_image *disparity, pv_image *confidence)
{
    const int k = n % 2;
    const sgm_buffers *b = &s->slot[k];
    pv_cl_use_queue(ctx, s->transfer);
    pv_status status = wait_for(ctx, s->computed[k], NULL);
    if (status == PV_OK)
        status = pv_cl_download_image(ctx, p->median ? b->median : b->disp, disparity);
    if (status == PV_OK && confidence)
        status = pv_cl_download_image(ctx, b->conf, confidence);
    if (status == PV_OK)
        status = mark(ctx, &s->downloaded[k]);
    pv_cl_use_queue(ctx, s->main);
    return status;
}

/* Pair 0 is uploaded and queued on the context's queue; then, pair by
 * pair, the next pair's upload and kernels are queued before this pair's
 * download, so the device always holds the next pair's work. */
static pv_status stream(pv_context *ctx, sgm_stream *s, const pv_image *lefts,
                        const pv_image *rights, int count, const pv_sgm_params *p,
                        pv_image *disparities, pv_image *confidences)
{
    pv_status status = pv_progress_report(ctx, "stereo_sgm_batch", 0.0, count);
    if (status == PV_OK)
        status = pv_cl_sgm_get_buffers(ctx, &lefts[0], &rights[0], p, &s->plan, &s->slot[0]);
    if (status == PV_OK && count > 1)
        status = second_slot(ctx, &lefts[0], p, s);
    if (status == PV_OK)
        status = compute_pair(ctx, s, &lefts[0], p, 0);
    for (int n = 0; n < count && status == PV_OK; n++) {
        if (n + 1 < count) {
            status = upload_pair(ctx, s, &lefts[n + 1], &rights[n + 1], n + 1);
            if (status == PV_OK)
                status = compute_pair(ctx, s, &lefts[n + 1], p, n + 1);
        }
        if (status == PV_OK)
            status = download_pair(ctx, s, p, n, &disparities[n],
                                   confidences ? &confidences[n] : NULL);
        pv_cl_account_completed(ctx);
        /* pair n's download is queued: reported as done */
        if (status == PV_OK)
            status = pv_progress_report(ctx, "stereo_sgm_batch", n + 1.0, count);
    }
    return status;
}

pv_status pv_cl_sgm_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                          int count, const pv_sgm_params *params, pv_image *disparities,
                          pv_image *confidences)
{
    sgm_stream s;
    memset(&s, 0, sizeof s);
    s.main = pv_cl_queue(ctx);
    pv_status status = pv_cl_sgm_make_plan(ctx, &lefts[0], params, &s.plan);
    if (status == PV_OK)
        status = pv_cl_queue_create(ctx, &s.transfer);
    if (status == PV_OK)
        status = stream(ctx, &s, lefts, rights, count, params, disparities, confidences);
    if (status != PV_OK && s.transfer) {
        clFinish(s.transfer);
        clFinish(s.main);
    }
    pv_cl_queue_release(&s.transfer); /* waits for its commands first */
    release_event(&s.uploaded);
    for (int k = 0; k < 2; k++) {
        release_event(&s.computed[k]);
        release_event(&s.downloaded[k]);
    }
    return pv_cl_finish_after(ctx, status);
}
