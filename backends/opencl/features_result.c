/* OpenCL SIFT: the result's way back to the host.  Small results are
 * DMA'd into the plan's pinned stage in one go and copied out; large ones
 * come through the runtime's pinned ring chunk by chunk; the descriptors'
 * u8 form is made on the way.  The arrays are the storage the front end
 * lent (lib/core/ops_features.h), grown through pv_sift_raw_reserve.  A
 * batch lane's result lands in its stage after its counts and input. */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

/* Descriptors out of pinned memory: the float copy and the u8 form in one
 * pass (the u8 form made later would read all the floats a second time). */
typedef struct descriptor_sink {
    float *floats;
    uint8_t *bytes;
} descriptor_sink;

/* One descriptor (restrict and simd: the loop vectorises). */
static void store_descriptor(float *restrict dst, uint8_t *restrict dst_u8,
                             const float *restrict src)
{
#pragma omp simd
    for (int i = 0; i < DESC_SIZE; i++) {
        dst[i] = src[i];
        dst_u8[i] = pv_sift_descriptor_u8(src[i]);
    }
}

/* Chunks hold whole descriptors (4 MiB chunks, 512-byte descriptors). */
static void store_descriptors(void *user, size_t offset, const void *chunk, size_t bytes)
{
    const descriptor_sink *sink = user;
    const size_t first = offset / (DESC_SIZE * sizeof(float));
    const long count = (long)(bytes / (DESC_SIZE * sizeof(float)));
    const float *src = chunk;
    const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long k = 0; k < count; k++)
        store_descriptor(sink->floats + (first + (size_t)k) * DESC_SIZE,
                         sink->bytes + (first + (size_t)k) * DESC_SIZE,
                         src + (size_t)k * DESC_SIZE);
}

/* The three arrays DMA'd into the stage back to back without a wait (one
 * synchronisation later instead of three blocking reads through the
 * driver's pageable path). */
static pv_status enqueue_staged(pv_context *ctx, cl_sift_plan *plan, cl_uint count)
{
    const size_t kp = count * sizeof(pv_sift_keypoint), keys = count * sizeof(uint64_t);
    const size_t desc = (size_t)count * DESC_SIZE * sizeof(float);
    pv_status status = pv_cl_sift_ensure_stage(ctx, plan, plan->result_at + kp + keys + desc);
    char *at = (char *)plan->stage_host + plan->result_at;
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->records, 0, kp, at);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->kp_key, 0, keys, at + kp);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->descriptors, 0, desc, at + kp + keys);
    return status;
}

/* The arrived result out of the stage into raw (reserved for raw->count). */
static void copy_staged(const cl_sift_plan *plan, pv_sift_raw *raw)
{
    const size_t count = (size_t)raw->count;
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const char *at = (const char *)plan->stage_host + plan->result_at;
    memcpy(raw->keypoints, at, kp);
    memcpy(raw->keys, at + kp, keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    store_descriptors(&sink, 0, at + kp + keys, count * DESC_SIZE * sizeof(float));
}

/* Beyond the plan's stage: the keypoints and keys DMA'd into it without a
 * wait, then the descriptors through the runtime's pinned ring chunk by
 * chunk while the next chunks' DMA runs (the in-order queue has finished
 * the first two when the first chunk arrives). */
static pv_status read_chunked(pv_context *ctx, cl_sift_plan *plan, cl_uint count,
                              pv_sift_raw *raw)
{
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const int via_stage = kp + keys <= STAGE_MAX;
    pv_status status =
        via_stage ? pv_cl_sift_ensure_stage(ctx, plan, plan->result_at + kp + keys) : PV_OK;
    char *at = (char *)plan->stage_host + plan->result_at;
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->records, 0, kp, at)
                           : pv_cl_read_staged(ctx, plan->records, 0, kp, raw->keypoints);
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->kp_key, 0, keys, at + kp)
                           : pv_cl_read_staged(ctx, plan->kp_key, 0, keys, raw->keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    if (status == PV_OK)
        status = pv_cl_read_chunked(ctx, plan->descriptors, 0,
                                    (size_t)count * DESC_SIZE * sizeof(float), store_descriptors,
                                    &sink);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status == PV_OK && via_stage) {
        pv_cl_copy_parallel(raw->keypoints, at, kp);
        pv_cl_copy_parallel(raw->keys, at + kp, keys);
    }
    return status;
}

pv_status pv_cl_sift_download_begin(pv_context *ctx, cl_sift_plan *plan, cl_uint count,
                                    pv_sift_raw *raw, int *pending)
{
    *pending = 0;
    pv_status status = pv_sift_raw_reserve(ctx, raw, (int)count, 0);
    if (status != PV_OK)
        return status;
    raw->count = (int)count;
    raw->u8_filled = 1;
    if (count == 0)
        return PV_OK;
    if ((size_t)count * RESULT_BYTES > STAGE_MAX)
        return read_chunked(ctx, plan, count, raw);
    status = enqueue_staged(ctx, plan, count);
    *pending = status == PV_OK;
    return status;
}

void pv_cl_sift_download_end(const cl_sift_plan *plan, pv_sift_raw *raw)
{
    copy_staged(plan, raw);
}

/* The result, already in key order and in the caller's layout, into the
 * storage the front end lent (grown when it has no room). */
pv_status pv_cl_sift_download(pv_context *ctx, cl_sift_plan *plan, cl_uint count, pv_sift_raw *raw)
{
    int pending = 0;
    pv_status status = pv_cl_sift_download_begin(ctx, plan, count, raw, &pending);
    if (status == PV_OK && pending)
        status = pv_cl_finish(ctx);
    if (status == PV_OK && pending)
        pv_cl_sift_download_end(plan, raw);
    return status;
}

/* Large storage that cannot hold the previous call's count and an eighth
 * more is replaced, and its pages touched, while the device runs the
 * detection, so that the download takes no page fault per page of fresh
 * memory.  A failure here is left to the download to report. */
#define PREPARE_RESULT_MIN ((size_t)4 << 20)

void pv_cl_sift_prepare_result(pv_context *ctx, const cl_sift_plan *plan, pv_sift_raw *raw)
{
    const size_t want = (size_t)plan->last_count + plan->last_count / 8;
    if (want <= (size_t)raw->capacity || want * RESULT_BYTES < PREPARE_RESULT_MIN)
        return;
    (void)pv_sift_raw_reserve(ctx, raw, (int)want, 1);
}

