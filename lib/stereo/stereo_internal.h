/* Internal: what the stereo front ends share with each other and with the
 * device groups (lib/stereo/stereo.c, lib/stereo/stereo_bp.c, lib/multi/multidevice.c).  Not
 * installed. */
#ifndef PV_STEREO_INTERNAL_H
#define PV_STEREO_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"

/* The image checks both stereo front ends share (lib/stereo/stereo.c): valid
 * images, equal sizes and types, an f32 disparity that aliases no input.
 * op names the operation in the message. */
pv_status pv_stereo_check_images(pv_context *ctx, const char *op, const pv_image *left,
                                 const pv_image *right, const pv_image *disparity);

/* The CPU backend's disparity map of left/right under settings (the op's
 * parameters or job), into ref. */
typedef pv_status (*pv_disparity_reference)(pv_context *ctx, const pv_image *left,
                                            const pv_image *right, const void *settings,
                                            pv_image *ref);

/* PV_OK when at most max_share (0..1) of the pixels of two disparity maps
 * of one size differ (both INFINITY, or within PV_TOL_SAD_SUBPIXEL, counts
 * as the same), else PV_ERR_MISMATCH naming op.  The cross-checks below
 * and the tuner's oracle check use it. */
pv_status pv_compare_disparities(pv_context *ctx, const char *op, const pv_image *device,
                                 const pv_image *cpu, double max_share);

/* Cross-check of a device disparity map against the CPU's, made by
 * reference under the oracle: PV_OK when at most max_share (0..1) of the
 * pixels differ (both INFINITY, or within 1e-3, counts as the same), else
 * PV_ERR_MISMATCH naming op. */
pv_status pv_disparity_crosscheck(pv_context *ctx, const char *op, const pv_image *left,
                                  const pv_image *right, pv_disparity_reference reference,
                                  const void *settings, const pv_image *device, double max_share);

/* ---- batches of pairs (lib/stereo/stereo_batch.c) ---- */

/* PV_ERR_INVALID (naming op) when an output of one pair shares memory
 * with any image of the batch; confidences may be NULL. */
pv_status pv_stereo_batch_overlaps(pv_context *ctx, const char *op, const pv_image *lefts,
                                   const pv_image *rights, int count,
                                   const pv_image *disparities, const pv_image *confidences);
/* Pair `pair` of a batch failed the single call's check (single_op names
 * that call in the context's message): the message again, as op's and
 * naming the pair; returns status. */
pv_status pv_stereo_batch_pair_failed(pv_context *ctx, const char *op, const char *single_op,
                                      pv_status status, int pair);
/* PV_ERR_INVALID unless pair `pair`'s left image has pair 0's size and type. */
pv_status pv_stereo_batch_same_kind(pv_context *ctx, const char *op, const pv_image *lefts,
                                    int pair);
/* After a failure during a batch's work: every disparity INFINITY, every
 * confidence 0 (confidences may be NULL), so no output passes for a result. */
void pv_stereo_batch_reset(int count, pv_image *disparities, pv_image *confidences);

/* ---- BP tiles for device groups (lib/stereo/stereo_bp.c, used by multidevice.c) - */

/* A checked BP run cut into tiles, shared read-only by the group's threads. */
typedef struct pv_bp_tiling {
    pv_bp_params params;    /* as planned (tile size set when split for devices) */
    pv_bp_tile *tiles;
    int tile_count;
    float *weights;         /* smoothing taps (2 * radius + 1), or NULL */
    int radius;
} pv_bp_tiling;

/* Check the arguments as pv_stereo_bp does (messages on contexts[0]) and
 * plan tiles that fit every context's device; when params set no tile
 * size and min_tiles > 1, cut the image into min_tiles bands of rows. */
pv_status pv_bp_tiling_plan(pv_context *const *contexts, int count, const pv_image *left,
                            const pv_image *right, const pv_bp_params *params,
                            const pv_image *disparity, int min_tiles, pv_bp_tiling *tiling);
void pv_bp_tiling_free(pv_bp_tiling *tiling);
/* Run tiles first .. first + count - 1 on ctx, timed as one call; only
 * those tiles' out rectangles of disparity are meaningful afterwards. */
pv_status pv_bp_run_tiles(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_bp_tiling *tiling, int first, int count, pv_image *disparity);
/* When ctx asks for cross-checks: the CPU backend's run of every tile
 * against an assembled disparity map. */
pv_status pv_bp_crosscheck_tiling(pv_context *ctx, const pv_image *left, const pv_image *right,
                                  const pv_bp_tiling *tiling, const pv_image *disparity);

/* The stereo operations' declared parameters (stereo_params.c). */
extern const pv_op_decl pv_sad_decl, pv_bp_decl, pv_sgm_decl;

#endif
