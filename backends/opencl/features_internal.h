/* Internal to the OpenCL SIFT host code (features_plan.c: the plan and its
 * batch lanes; features.c: scale space and detection; features_result.c:
 * the result's download; features_batch.c: the pipelined batch;
 * features_match.c: matching). */
#ifndef PV_CL_FEATURES_INTERNAL_H
#define PV_CL_FEATURES_INTERNAL_H

#include "opencl.h"

#include <stdint.h>

#define MAX_ORIENTATIONS 4
#define DESC_SIZE PV_SIFT_DESCRIPTOR_SIZE
#define MAX_ATTEMPTS 4

/* The scatter kernel writes pv_sift_keypoint records word by word. */
_Static_assert(sizeof(pv_sift_keypoint) == 7 * sizeof(float), "pv_sift_keypoint is 7 words");

/* Mirrors of the kernels' structs (same member order and alignment). */
typedef struct octave_info {
    cl_int w, h;
    cl_ulong dog_offset, gauss_offset;
} octave_info;

typedef struct sift_settings {
    cl_float peak_thresh, edge_thresh, sigma0, ori_window, ori_peak, magnif;
    cl_int levels;
} sift_settings;

/* The plan's kernels, looked up once (with the plan's launch parameters). */
enum {
    K_PREPARE_U8, K_PREPARE_F32, K_ROWS, K_COLS, K_EXTREMA, K_SCAN, K_ORIENT, K_BLOCK_COUNTS,
    K_SCATTER, K_DESCRIPTORS, K_COUNT
};


/* Launch parameters, read once when the plan is made, so the shapes always
 * match the kernels built with them. */
typedef struct launch_shape {
    int wg_x, wg_y, row_steps, col_steps, ext_wg, ext_run, scan_wg, kp_wg, desc_split;
    int ori_wg, ori_groups;
} launch_shape;

typedef struct cl_sift_plan {
    pv_sift_geometry g;
    launch_shape shape;
    cl_kernel kernels[K_COUNT];
    int max_radius;            /* over the levels */
    cl_mem weights;            /* level taps, then base taps */
    cl_mem octave_table;       /* octave_info per octave */
    octave_info octaves[PV_SIFT_MAX_OCTAVES];
    cl_uint row_start[PV_SIFT_MAX_OCTAVES + 1]; /* first row group of each octave */
    cl_mem row_table;          /* row_start on the device */
    cl_mem row_counts;         /* per row group: extrema, then their offsets */
    cl_mem ext_masks;          /* per row group: the extrema bit masks of pass 0 */
    cl_uint mask_pitch;        /* masks per row group */
    cl_mem input;              /* the caller's image, dense */
    cl_mem base;               /* the first octave's base level */
    cl_mem rows;               /* row-pass results, levels + 2 planes */
    cl_mem gauss, dog;         /* pyramids */
    cl_mem grad;               /* gradient (modulus, angle) of every gauss sample */
    cl_mem counters;           /* [0] candidates, [1] keypoints (totals of the scans) */
    /* Candidates, in key order, and per candidate its keypoints. */
    cl_mem candidates, cand_geom, cand_scale, cand_angles, cand_count, block_sums;
    cl_uint candidate_capacity;
    /* Keypoints, in key order: records (pv_sift_keypoint), keys, geometry
     * in octave pixels for the descriptors, descriptors. */
    cl_mem records, kp_key, kp_geom, descriptors;
    cl_uint keypoint_capacity;
    cl_uint last_count;        /* keypoints of the previous call */
    /* Pinned, mapped host memory that small inputs and results pass
     * through (see "pinned stage"). */
    cl_mem stage;
    void *stage_host;
    size_t stage_bytes;
    /* Where in the stage the input and the result go: both 0 for a plan;
     * a batch lane keeps its counts first, then its input, then its
     * result, so that the next image's input can go up while the last
     * one's result comes down. */
    size_t input_at, result_at;
    /* A batch lane: its own in-order queue (NULL: the context's queue).
     * A plan: its lanes, made by the first batch that uses them. */
    cl_command_queue queue;
    struct cl_sift_plan *lanes;
    int lane_count;
} cl_sift_plan;

/* The lanes of a pipelined batch (launch parameter SIFT_BATCH_LANES, at
 * most MAX_BATCH_LANES; 1, the default, is a loop of single detections in
 * one call): two images in flight were meant to hide one image's host work
 * and waits behind the other's kernels, a third to let the small kernels
 * of a third image fill the device's gaps.  On the H100 the host's
 * launches bound the rate and the lanes' extra flushes and queue switches
 * made VGA batches slower (docs/sift.md), so the pipeline is opt-in.
 * Fewer lanes when their buffers would take more than 1/LANE_MEMORY_SHARE
 * of the device's memory. */
#define MAX_BATCH_LANES 8
#define LANE_MEMORY_SHARE 4
/* The lane stage's counts region (two totals, padded). */
#define LANE_COUNTS_BYTES ((size_t)64)

typedef struct kernel_arg {
    size_t size;
    const void *value; /* NULL with a size: a __local buffer */
} kernel_arg;

/* Pinned stage:
 * Pinned, mapped host memory of the plan: small inputs are packed into it
 * and DMA'd without a wait, small results are DMA'd into it in one go.
 * Up to STAGE_MAX bytes; larger transfers go through pv_cl_write/read,
 * whose pinned chunks overlap the DMA with the host copies. */
#define STAGE_MAX ((size_t)16 << 20)
#define RESULT_BYTES (sizeof(pv_sift_keypoint) + sizeof(uint64_t) + DESC_SIZE * sizeof(float))

static inline size_t round_up_div(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

static inline size_t plane_of(const pv_sift_geometry *g, int o)
{
    return (size_t)g->octave_width[o] * (size_t)g->octave_height[o];
}

/* Offsets of every octave in the pyramids (totals in floats) and the first
 * extrema row group of each octave. */
/* features_plan.c: the table's create and destroy entries, and the growth
 * of the candidate and keypoint lists. */
pv_status pv_cl_sift_create(pv_context *ctx, const pv_sift_geometry *geometry, void **out);
void pv_cl_sift_destroy(pv_context *ctx, void *opaque);
pv_status pv_cl_sift_initial_capacities(pv_context *ctx, cl_sift_plan *plan);
pv_status pv_cl_sift_grow_candidates(pv_context *ctx, cl_sift_plan *plan, size_t needed);
pv_status pv_cl_sift_grow_keypoints(pv_context *ctx, cl_sift_plan *plan, size_t needed);
/* At least `lanes` batch lanes on the plan (with its capacities). */
pv_status pv_cl_sift_ensure_lanes(pv_context *ctx, cl_sift_plan *plan, int lanes);
/* The device bytes one lane takes (its scale space, lists and stage). */
size_t pv_cl_sift_lane_bytes(const cl_sift_plan *plan);
/* Every lane's (and the plan's) lists at least as long as the longest. */
pv_status pv_cl_sift_match_capacities(pv_context *ctx, cl_sift_plan *plan);

/* The features tuning parameter `name` of the context's device. */
int pv_cl_sift_param(pv_context *ctx, const char *name);
/* The kernel `name` built with the tuning parameters, and the blur
 * constants when g is given (matching has no plan: g NULL). */
pv_status pv_cl_sift_kernel(pv_context *ctx, const pv_sift_geometry *g, const char *name,
                            cl_kernel *kernel);
pv_status pv_cl_sift_set_args(pv_context *ctx, cl_kernel kernel, const kernel_arg *args,
                              int count);
/* Waits for the queue; the first failure wins. */
pv_status pv_cl_sift_finish(pv_context *ctx, pv_status status);
/* The plan's stage with room for `bytes`. */
pv_status pv_cl_sift_ensure_stage(pv_context *ctx, cl_sift_plan *plan, size_t bytes);

/* features.c: every stage of one detection, enqueued without a wait; and
 * a whole detection (growing the lists and running again when short),
 * its result downloaded, on the current queue. */
pv_status pv_cl_sift_enqueue_detection(pv_context *ctx, cl_sift_plan *plan,
                                       const pv_image *image);
pv_status pv_cl_sift_detect_on_device(pv_context *ctx, cl_sift_plan *plan, const pv_image *image,
                                      pv_sift_raw *raw);

/* features_result.c: the `count` keypoints of the finished detection into
 * the storage lent in raw (grown when short); and, while the device works,
 * storage for about the previous call's count with its pages touched. */
pv_status pv_cl_sift_download(pv_context *ctx, cl_sift_plan *plan, cl_uint count, pv_sift_raw *raw);
/* The download in two steps, for the batch: begin reserves raw and, when
 * the result fits the stage, only enqueues its DMA (*pending = 1: call
 * pv_cl_sift_download_end once the queue has finished it, before the stage
 * is used again); a larger result is read at once (*pending = 0). */
pv_status pv_cl_sift_download_begin(pv_context *ctx, cl_sift_plan *plan, cl_uint count,
                                    pv_sift_raw *raw, int *pending);
void pv_cl_sift_download_end(const cl_sift_plan *plan, pv_sift_raw *raw);
void pv_cl_sift_prepare_result(pv_context *ctx, const cl_sift_plan *plan, pv_sift_raw *raw);

/* features_batch.c: the table's detect_batch entry. */
pv_status pv_cl_sift_detect_batch(pv_context *ctx, void *opaque, const pv_image *images,
                                  int count, pv_sift_raw *raws);

/* features_match.c: the table's nearest entry. */
pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2);

#endif
