/* OpenCL SIFT: the result's way back to the host.  Small results are
 * DMA'd into the plan's pinned stage in one go and copied out; large ones
 * come through the runtime's pinned ring chunk by chunk; the descriptors'
 * u8 form is made on the way.  The arrays are the storage the front end
 * lent (lib/core/ops_features.h), grown through pv_sift_raw_reserve.  A
 * batch chunk's results come down together into its set's pinned stage:
 * one rectangular read per array (each image's keypoints a row padded to
 * the longest) when the padding is small, else one read per image and
 * array of only its counted rows. */
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

/* Descriptors take threads from this size on, below a plain copy's 1 MiB:
 * with the u8 form made on the way, one thread moved a 720p result's 1 MB
 * (1938 keypoints) in about 150 us on an H100 machine's host, and on
 * threads the whole 720p call was 0.06-0.17 ms faster.  From 256 KiB on,
 * VGA results (half as large) were slower on threads than on one. */
#define DESCRIPTOR_PARALLEL_MIN ((size_t)768 << 10)

/* Chunks hold whole descriptors (4 MiB chunks, 512-byte descriptors). */
static void store_descriptors(void *user, size_t offset, const void *chunk, size_t bytes)
{
    const descriptor_sink *sink = user;
    const size_t first = offset / (DESC_SIZE * sizeof(float));
    const long count = (long)(bytes / (DESC_SIZE * sizeof(float)));
    const float *src = chunk;
    const int threads = pv_cl_copy_threads_from(bytes, DESCRIPTOR_PARALLEL_MIN);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long k = 0; k < count; k++)
        store_descriptor(sink->floats + (first + (size_t)k) * DESC_SIZE,
                         sink->bytes + (first + (size_t)k) * DESC_SIZE,
                         src + (size_t)k * DESC_SIZE);
}

/* A result's keypoints and keys out of host memory into raw (reserved for
 * raw->count). */
static void copy_points(pv_sift_raw *raw, const char *keypoints, const char *keys)
{
    const size_t count = (size_t)raw->count;
    memcpy(raw->keypoints, keypoints, count * sizeof *raw->keypoints);
    memcpy(raw->keys, keys, count * sizeof *raw->keys);
}

/* A result out of host memory into raw (reserved for raw->count): its
 * keypoints, keys and descriptors at the given places. */
static void copy_out(pv_sift_raw *raw, const char *keypoints, const char *keys,
                     const char *descriptors)
{
    const size_t count = (size_t)raw->count;
    copy_points(raw, keypoints, keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    store_descriptors(&sink, 0, descriptors, count * DESC_SIZE * sizeof(float));
}

/* The three arrays DMA'd into the stage back to back without a wait (one
 * synchronisation later instead of three blocking reads through the
 * driver's pageable path).  (Reading the descriptors in pieces, each with
 * its own event, so that the host copied one piece while the next came
 * down, made sift-1080p 0.28 ms slower end to end on an H100: a wait per
 * piece costs more than the copy it overlaps.) */
static pv_status enqueue_staged(pv_context *ctx, cl_sift_plan *plan, size_t first,
                                cl_uint count)
{
    const size_t kp = count * sizeof(pv_sift_keypoint), keys = count * sizeof(uint64_t);
    const size_t desc = (size_t)count * DESC_SIZE * sizeof(float);
    pv_status status = pv_cl_sift_ensure_stage(ctx, plan, plan->result_at + kp + keys + desc);
    char *at = (char *)plan->stage_host + plan->result_at;
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->records, first * sizeof(pv_sift_keypoint), kp, at);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->kp_key, first * sizeof(uint64_t), keys, at + kp);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->descriptors, first * DESC_SIZE * sizeof(float),
                                  desc, at + kp + keys);
    return status;
}

/* The arrived result out of the stage into raw (reserved for raw->count). */
static void copy_staged(const cl_sift_plan *plan, pv_sift_raw *raw)
{
    const size_t count = (size_t)raw->count;
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const char *at = (const char *)plan->stage_host + plan->result_at;
    copy_out(raw, at, at + kp, at + kp + keys);
}

/* Beyond the plan's stage: the keypoints and keys DMA'd into it without a
 * wait, then the descriptors through the runtime's pinned ring chunk by
 * chunk while the next chunks' DMA runs (the in-order queue has finished
 * the first two when the first chunk arrives). */
static pv_status read_chunked(pv_context *ctx, cl_sift_plan *plan, size_t first,
                              cl_uint count, pv_sift_raw *raw)
{
    const size_t kp = count * sizeof *raw->keypoints, keys = count * sizeof *raw->keys;
    const size_t kp_at = first * sizeof *raw->keypoints, keys_at = first * sizeof *raw->keys;
    const int via_stage = kp + keys <= STAGE_MAX;
    pv_status status =
        via_stage ? pv_cl_sift_ensure_stage(ctx, plan, plan->result_at + kp + keys) : PV_OK;
    char *at = (char *)plan->stage_host + plan->result_at;
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->records, kp_at, kp, at)
                           : pv_cl_read_staged(ctx, plan->records, kp_at, kp, raw->keypoints);
    if (status == PV_OK)
        status = via_stage ? pv_cl_read_async(ctx, plan->kp_key, keys_at, keys, at + kp)
                           : pv_cl_read_staged(ctx, plan->kp_key, keys_at, keys, raw->keys);
    descriptor_sink sink = {raw->descriptors, raw->descriptors_u8};
    if (status == PV_OK)
        status = pv_cl_read_chunked(ctx, plan->descriptors, first * DESC_SIZE * sizeof(float),
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

/* raw reserved for `count` keypoints of a result with u8 descriptors. */
static pv_status reserve_result(pv_context *ctx, pv_sift_raw *raw, cl_uint count)
{
    pv_status status = pv_sift_raw_reserve(ctx, raw, (int)count, 0);
    if (status == PV_OK) {
        raw->count = (int)count;
        raw->u8_filled = 1;
    }
    return status;
}

/* The result, already in key order and in the caller's layout, into the
 * storage the front end lent (grown when it has no room). */
pv_status pv_cl_sift_download(pv_context *ctx, cl_sift_plan *plan, int image, cl_uint count,
                              pv_sift_raw *raw)
{
    pv_status status = reserve_result(ctx, raw, count);
    if (status != PV_OK || count == 0)
        return status;
    const size_t first = (size_t)image * plan->keypoint_capacity;
    if ((size_t)count * RESULT_BYTES > pv_cl_sift_stage_limit(plan))
        return read_chunked(ctx, plan, first, count, raw);
    status = enqueue_staged(ctx, plan, first, count);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status == PV_OK)
        copy_staged(plan, raw);
    return status;
}

/* Rows of `row` bytes, one per image (pitch apart on the device, from
 * image 0), read densely into host without a wait. */
static pv_status read_rows_async(pv_context *ctx, cl_mem buffer, size_t row, size_t pitch,
                                 int images, void *host)
{
    const pv_cl_rows rows = {.offset = 0,
                             .device_pitch = pitch,
                             .host_pitch = row,
                             .rows = (size_t)images,
                             .row_bytes = row};
    return pv_cl_read_rows_async(ctx, buffer, &rows, host);
}

/* Where image i's arrays lie in the stage after a chunk's reads: each
 * array's rows (one per image) back to back, image i's row starting at
 * slot start[i] of its array; `slots` slots per array in all. */
typedef struct chunk_layout {
    int packed;              /* rows of the counts (one read per array and image),
                                else of the longest count (one rectangular read) */
    cl_uint longest;
    size_t slots;
    size_t start[MAX_BATCH_CHUNK];
    char *kp_at, *keys_at, *desc_at;
} chunk_layout;

/* Padding that a rectangular read may carry: below this, reads per image
 * and array (three commands each) would cost more than the extra bytes
 * (64 KiB take about 3 us at 25 GB/s, PCIe 4 speed, which is of the order
 * of what a driver's host side spends enqueueing a few reads). */
#define RECT_PADDING_MAX ((size_t)64 << 10)

/* The layout of the done images' rows.  Images of a chunk find different
 * numbers of keypoints (frames of one video a little, unrelated pictures
 * a lot), and a rectangular read brings every image's row padded to the
 * longest, so the padding is measured in bytes: up to
 * RECT_PADDING_MAX or an eighth of the needed bytes, one rectangular read
 * per array; beyond that, only each image's counted rows, one read per
 * image and array, densely packed. */
static chunk_layout layout_of(const cl_sift_plan *plan, int n, const pv_sift_raw *raws,
                              const char *done)
{
    chunk_layout l;
    l.longest = 0;
    size_t needed = 0;
    for (int i = 0; i < n; i++)
        if (done[i]) {
            needed += (size_t)raws[i].count;
            if ((cl_uint)raws[i].count > l.longest)
                l.longest = (cl_uint)raws[i].count;
        }
    const size_t padded = (size_t)l.longest * (size_t)n;
    const size_t padding = (padded - needed) * RESULT_BYTES;
    l.packed = padding > RECT_PADDING_MAX && padding > needed * RESULT_BYTES / 8;
    l.slots = l.packed ? needed : padded;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        l.start[i] = l.packed ? at : (size_t)i * l.longest;
        at += done[i] ? (size_t)raws[i].count : 0;
    }
    l.kp_at = (char *)plan->stage_host + plan->result_at;
    l.keys_at = l.kp_at + l.slots * sizeof(pv_sift_keypoint);
    l.desc_at = l.keys_at + l.slots * sizeof(uint64_t);
    return l;
}

/* One read per array for each done image's counted rows, without a wait. */
static pv_status read_packed_async(pv_context *ctx, const cl_sift_plan *plan, int n,
                                   const pv_sift_raw *raws, const char *done,
                                   const chunk_layout *l)
{
    const size_t desc = DESC_SIZE * sizeof(float);
    pv_status status = PV_OK;
    for (int i = 0; i < n && status == PV_OK; i++) {
        if (!done[i] || raws[i].count == 0)
            continue;
        const size_t first = (size_t)i * plan->keypoint_capacity, at = l->start[i];
        const size_t count = (size_t)raws[i].count;
        status = pv_cl_read_async(ctx, plan->records, first * sizeof(pv_sift_keypoint),
                                  count * sizeof(pv_sift_keypoint),
                                  l->kp_at + at * sizeof(pv_sift_keypoint));
        if (status == PV_OK)
            status = pv_cl_read_async(ctx, plan->kp_key, first * sizeof(uint64_t),
                                      count * sizeof(uint64_t),
                                      l->keys_at + at * sizeof(uint64_t));
        if (status == PV_OK)
            status = pv_cl_read_async(ctx, plan->descriptors, first * desc, count * desc,
                                      l->desc_at + at * desc);
    }
    return status;
}

/* Each image's first `longest` slots: one rectangular read per array. */
static pv_status read_padded_async(pv_context *ctx, const cl_sift_plan *plan, int n,
                                   const chunk_layout *l)
{
    const size_t cap = plan->keypoint_capacity, longest = l->longest;
    const size_t desc = DESC_SIZE * sizeof(float);
    pv_status status = read_rows_async(ctx, plan->records, longest * sizeof(pv_sift_keypoint),
                                       cap * sizeof(pv_sift_keypoint), n, l->kp_at);
    if (status == PV_OK)
        status = read_rows_async(ctx, plan->kp_key, longest * sizeof(uint64_t),
                                 cap * sizeof(uint64_t), n, l->keys_at);
    if (status == PV_OK)
        status = read_rows_async(ctx, plan->descriptors, longest * desc, cap * desc, n,
                                 l->desc_at);
    return status;
}

pv_status pv_cl_sift_download_chunk_begin(pv_context *ctx, cl_sift_plan *plan, int n,
                                          const cl_uint *counts, const char *done,
                                          pv_sift_raw *raws, int *pending)
{
    *pending = 0;
    pv_status status = PV_OK;
    for (int i = 0; i < n && status == PV_OK; i++)
        if (done[i])
            status = reserve_result(ctx, &raws[i], counts[i]);
    chunk_layout l = layout_of(plan, n, raws, done);
    if (status != PV_OK || l.longest == 0)
        return status;
    const size_t bytes = l.slots * RESULT_BYTES;
    if (bytes > pv_cl_sift_stage_limit(plan)) {
        for (int i = 0; i < n && status == PV_OK; i++)
            if (done[i])
                status = pv_cl_sift_download(ctx, plan, i, counts[i], &raws[i]);
        return status;
    }
    status = pv_cl_sift_ensure_stage(ctx, plan, plan->result_at + bytes);
    l = layout_of(plan, n, raws, done); /* the stage may have moved */
    if (status == PV_OK)
        status = l.packed ? read_packed_async(ctx, plan, n, raws, done, &l)
                          : read_padded_async(ctx, plan, n, &l);
    *pending = status == PV_OK;
    return status;
}

/* The done images' results out of the stage in one parallel region: a
 * 720p image's descriptors (about 1 MB) stay below the size at which one
 * image's copy takes several threads, so copying image after image ran
 * every copy on one thread, while together they are worth the team.  Each
 * image's descriptors are shared out among the threads; its keypoints and
 * keys (a few tens of KiB) go to one thread. */
static void copy_out_chunk(int n, const char *done, pv_sift_raw *raws, const chunk_layout *l)
{
    const size_t desc = DESC_SIZE * sizeof(float);
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += done[i] ? (size_t)raws[i].count * desc : 0;
    const int threads = pv_cl_copy_threads_from(bytes, DESCRIPTOR_PARALLEL_MIN);
#pragma omp parallel num_threads(threads) if (threads > 1)
    for (int i = 0; i < n; i++) {
        if (!done[i])
            continue;
        pv_sift_raw *raw = &raws[i];
        const size_t at = l->start[i], count = (size_t)raw->count;
        const float *src = (const float *)(l->desc_at + at * desc);
#pragma omp single nowait
        copy_points(raw, l->kp_at + at * sizeof(pv_sift_keypoint),
                    l->keys_at + at * sizeof(uint64_t));
#pragma omp for schedule(static) nowait
        for (long k = 0; k < (long)count; k++)
            store_descriptor(raw->descriptors + (size_t)k * DESC_SIZE,
                             raw->descriptors_u8 + (size_t)k * DESC_SIZE,
                             src + (size_t)k * DESC_SIZE);
    }
}

void pv_cl_sift_download_chunk_end(const cl_sift_plan *plan, int n, const char *done,
                                   pv_sift_raw *raws)
{
    const chunk_layout l = layout_of(plan, n, raws, done);
    copy_out_chunk(n, done, raws, &l);
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

