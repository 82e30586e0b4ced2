/* Internal to the OpenCL SIFT host code (features_plan.c: the plan and its
 * batch buffers; features.c: scale space and detection; features_result.c:
 * the result's download; features_batch.c: batches in chunks of images
 * side by side; features_match.c: matching). */
#ifndef PV_CL_FEATURES_INTERNAL_H
#define PV_CL_FEATURES_INTERNAL_H

#include "../opencl.h"
#include "../../common/sift_structs.h" /* the structs the kernels read */

#include <stdint.h>

#define MAX_ORIENTATIONS 4
#define DESC_SIZE PV_SIFT_DESCRIPTOR_SIZE
#define MAX_ATTEMPTS 4

/* The scatter kernel writes pv_sift_keypoint records word by word. */
_Static_assert(sizeof(pv_sift_keypoint) == 7 * sizeof(float), "pv_sift_keypoint is 7 words");


/* The plan's kernels, looked up once (with the plan's launch parameters). */
enum {
    K_PREPARE_U8, K_PREPARE_F32, K_ROWS, K_COLS, K_TILE, K_EXTREMA, K_SCAN, K_ORIENT,
    K_BLOCK_COUNTS, K_SCATTER, K_DESCRIPTORS, K_COUNT
};


/* Launch parameters, read once when the plan is made, so the shapes always
 * match the kernels built with them. */
typedef struct launch_shape {
    int wg_x, wg_y, row_steps, col_steps, ext_wg, ext_run, scan_wg, kp_wg, desc_split;
    int ori_wg, ori_groups;
    int tile_groups; /* fused tile pass for octaves of at most this many groups per
                        compute unit (0: never) */
} launch_shape;

/* A plan holds one image's buffers (images == 1); its batch buffers are a
 * second cl_sift_plan with room for `images` images side by side, each
 * buffer `images` times as long, image i's part at i times the per-image
 * stride.  Both run the same kernels. */
typedef struct cl_sift_plan {
    pv_sift_geometry g;
    int images;                /* images side by side in every buffer */
    launch_shape shape;
    cl_kernel kernels[K_COUNT];
    int max_radius;            /* over the levels */
    cl_mem weights;            /* level taps, then base taps */
    cl_mem octave_table;       /* pv_sift_octave_info per octave */
    pv_sift_octave_info octaves[PV_SIFT_MAX_OCTAVES];
    cl_uint row_start[PV_SIFT_MAX_OCTAVES + 1]; /* first row group of each octave */
    cl_mem row_table;          /* row_start on the device */
    cl_mem row_counts;         /* per row group: extrema, then their offsets */
    cl_mem ext_masks;          /* per row group: the extrema bit masks of pass 0 */
    cl_uint mask_pitch;        /* masks per row group */
    cl_mem input;              /* the caller's image, dense */
    cl_mem base;               /* the first octave's base level */
    cl_mem rows;               /* row-pass results, levels + 2 planes */
    cl_mem gauss, dog;         /* pyramids */
    size_t gauss_floats, dog_floats; /* one image's pyramid sizes */
    cl_mem grad;               /* gradient (modulus, angle) of every gauss sample */
    cl_mem counters;           /* per image: [0] candidates, [1] keypoints (totals of the scans) */
    /* Candidates, in key order, and per candidate its keypoints. */
    cl_mem candidates, cand_geom, cand_scale, cand_angles, cand_count, block_sums;
    cl_uint candidate_capacity; /* per image */
    /* Keypoints, in key order: records (pv_sift_keypoint), keys, geometry
     * in octave pixels for the descriptors, descriptors. */
    cl_mem records, kp_key, kp_geom, descriptors;
    cl_uint keypoint_capacity;  /* per image */
    cl_uint last_count;        /* keypoints of the previous call */
    /* Pinned, mapped host memory that small inputs and results pass
     * through (see "pinned stage"). */
    cl_mem stage;
    void *stage_host;
    size_t stage_bytes;
    /* Where in the stage the inputs (at most input_room bytes; larger
     * ones are written directly) and the results go: 0 and 0 for a plan;
     * a batch set keeps its counts first, then its inputs, then its
     * results, so that the next chunk's inputs can be packed while the
     * last one's results come down. */
    size_t input_at, input_room, result_at;
    /* A plan: its sets of batch buffers, made by the first batch of more
     * than one image (NULL, 0 until then). */
    struct cl_sift_plan *batch;
    int batch_sets;
    /* A plan: the queue its batches read results on (made with the batch
     * buffers), so that a chunk's results come down while the next
     * chunk's kernels run on the context's queue. */
    cl_command_queue transfer;
    /* The chain (features_chain.c): the kept frame's keypoint records and
     * descriptors, copied out of the lists above after its detection, room
     * for kept_capacity keypoints; kept_count of them when `kept` is set. */
    cl_mem kept_records, kept_descriptors;
    cl_uint kept_capacity, kept_count;
    int kept;
    /* A pair's second frame (its lists, room for next_capacity keypoints),
     * which becomes the kept frame by a swap of the handles. */
    cl_mem next_records, next_descriptors;
    cl_uint next_capacity;
} cl_sift_plan;

/* Batches (features_batch.c): chunks of SIFT_BATCH_CHUNK images (1 ..
 * MAX_BATCH_CHUNK) side by side, on two sets of batch buffers in turn when
 * there is more than one chunk (the next chunk's work is queued while the
 * host collects the last one's results); fewer images per chunk when the
 * sets would take more than 1/BATCH_MEMORY_SHARE of the device's memory. */
#define MAX_BATCH_CHUNK 64
#define MAX_BATCH_SETS 2
#define BATCH_MEMORY_SHARE 4

/* Pinned stage:
 * Pinned, mapped host memory of the plan: small inputs are packed into it
 * and DMA'd without a wait, small results are DMA'd into it in one go.
 * Up to STAGE_MAX bytes; larger transfers go through pv_cl_write/read,
 * whose pinned chunks overlap the DMA with the host copies. */
#define STAGE_MAX ((size_t)16 << 20)
/* A batch chunk's inputs and results pass through its own stage up to
 * this size (several images at once). */
#define BATCH_STAGE_MAX ((size_t)64 << 20)
#define RESULT_BYTES (sizeof(pv_sift_keypoint) + sizeof(uint64_t) + DESC_SIZE * sizeof(float))

static inline size_t round_up_div(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

static inline size_t plane_of(const pv_sift_geometry *g, int o)
{
    return (size_t)g->octave_width[o] * (size_t)g->octave_height[o];
}

/* features_plan.c: the table's create and destroy entries, and the growth
 * of the candidate and keypoint lists. */
pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out);
void pv_cl_sift_destroy(pv_context *ctx, void *opaque);
pv_status pv_cl_sift_initial_capacities(pv_context *ctx, cl_sift_plan *plan);
pv_status pv_cl_sift_grow_candidates(pv_context *ctx, cl_sift_plan *plan, size_t needed);
pv_status pv_cl_sift_grow_keypoints(pv_context *ctx, cl_sift_plan *plan, size_t needed);
/* At least `sets` sets of batch buffers on the plan with room for at
 * least `images` images each (made again when fewer or smaller), their
 * lists at least as long as the plan's. */
pv_status pv_cl_sift_ensure_batch(pv_context *ctx, cl_sift_plan *plan, int images, int sets);
/* The device bytes one image's slot of batch buffers takes, and the
 * longest of its buffers (for the allocation limit). */
void pv_cl_sift_slot_bytes(const cl_sift_plan *plan, size_t *total, size_t *largest);
/* Lists of at least the given lengths (per image). */
pv_status pv_cl_sift_grow_to(pv_context *ctx, cl_sift_plan *plan, size_t candidates,
                             size_t keypoints);
/* The stage's size limit: STAGE_MAX for a plan, BATCH_STAGE_MAX for
 * batch buffers. */
size_t pv_cl_sift_stage_limit(const cl_sift_plan *plan);

/* The features tuning parameter `name` of the context's device. */
int pv_cl_sift_param(pv_context *ctx, const char *name);
/* The kernel `name` built with the tuning parameters, and the blur
 * constants when g is given (matching has no plan: g NULL). */
pv_status pv_cl_sift_kernel(pv_context *ctx, const pv_sift_geometry *g, const char *name,
                            cl_kernel *kernel);
/* Waits for the queue; the first failure wins. */
pv_status pv_cl_sift_finish(pv_context *ctx, pv_status status);
/* The plan's stage with room for `bytes`. */
pv_status pv_cl_sift_ensure_stage(pv_context *ctx, cl_sift_plan *plan, size_t bytes);

/* features.c: every stage of the detection of images[0 .. count) (count
 * <= plan->images) side by side, enqueued without a wait; a whole single
 * detection (growing the lists and running again when short) left on the
 * device, its keypoint count in *count (raw, when given, is the storage
 * the download will fill: its pages are touched while the device works);
 * and that detection with its result downloaded. */
pv_status pv_cl_sift_enqueue_detection(pv_context *ctx, cl_sift_plan *plan,
                                       const pv_image *images, int count);
pv_status pv_cl_sift_detect_settled(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                    pv_sift_raw *raw, cl_uint *count);
pv_status pv_cl_sift_detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                      pv_sift_raw *raw);

/* features_result.c: the `count` keypoints of image `image`'s finished
 * detection into the storage lent in raw (grown when short); and, while
 * the device works, storage for about the previous call's count with its
 * pages touched. */
pv_status pv_cl_sift_download(pv_context *ctx, cl_sift_plan *plan, int image, cl_uint count,
                              pv_sift_raw *raw);
/* The results of a finished batch chunk in two steps: begin reserves
 * raws[i] for counts[i] keypoints for every i < n with done[i] set and,
 * when they fit the stage, only enqueues their reads into it on the
 * current queue (one rectangular read per array, or one read per image
 * and array when a rectangle's padding would cost more bytes; *pending =
 * 1: call pv_cl_sift_download_chunk_end once the queue has done the
 * reads, before the stage's results are used again); else it downloads
 * image by image at once (*pending = 0).  end copies every done image out
 * of the stage, all images in one parallel copy. */
pv_status pv_cl_sift_download_chunk_begin(pv_context *ctx, cl_sift_plan *plan, int n,
                                          const cl_uint *counts, const char *done,
                                          pv_sift_raw *raws, int *pending);
void pv_cl_sift_download_chunk_end(const cl_sift_plan *plan, int n, const char *done,
                                   pv_sift_raw *raws);
void pv_cl_sift_prepare_result(pv_context *ctx, const cl_sift_plan *plan, pv_sift_raw *raw);

/* features_batch.c: the table's detect_batch entry. */
pv_status pv_cl_sift_detect_batch(pv_context *ctx, void *opaque, const pv_image *images,
                                  int count, pv_sift_raw *raws);

/* features_chain.c: the table's chain entries, and the release of the
 * kept frame's buffers (with the plan). */
pv_status pv_cl_sift_chain_step(pv_context *ctx, void *opaque, const pv_image *image,
                                const pv_sift_chain_step *step, pv_sift_chain_raw *out);
void pv_cl_sift_chain_forget(pv_context *ctx, void *opaque);
void pv_cl_sift_chain_release(cl_sift_plan *plan);

/* features_match.c: nearest neighbours of device-resident descriptors
 * (query rows against train rows) into `out` = [best | d1 | d2] (3 nq
 * words), enqueued without a wait; and the table's nearest entry. */
pv_status pv_cl_sift_nearest_buffers(pv_context *ctx, cl_mem query, cl_int nq, cl_mem train,
                                     cl_int nt, const char *slot, cl_mem *out);
/* The same with the train count read on the device (counters[1] of a
 * detection, at most capacity): queued behind the detection without a
 * wait for its count. */
pv_status pv_cl_sift_nearest_counted(pv_context *ctx, cl_mem query, cl_int nq, cl_mem train,
                                     cl_mem counters, cl_int capacity, const char *slot,
                                     cl_mem *out);
/* features_match.c: the table's nearest entry. */
pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2);

#endif
