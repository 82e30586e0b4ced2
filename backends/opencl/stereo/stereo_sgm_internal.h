/* Internal: what stereo_sgm.c (one pair) shares with stereo_sgm_batch.c (a
 * stream of pairs through one plan).  Not installed. */
#ifndef PV_CL_STEREO_SGM_INTERNAL_H
#define PV_CL_STEREO_SGM_INTERNAL_H

#include "../opencl.h"

/* The launch shape and the kernels' build options of one image size and
 * parameter set. */
typedef struct sgm_plan {
    int dpi, items, lines, stride, win_items, wg_x, wg_y;
    int path8;        /* path costs fit 8 bits */
    int lr_local;     /* the winner keeps a row's left-right minima in local memory */
    int shfl;         /* path exchange by warp shuffles (NVIDIA), no barrier */
    int sum;          /* one 16-bit volume of the sums, a launch per direction
                         (PV_SGM_AGGREGATE_SUM), instead of a volume per path */
    char options[384];
} sgm_plan;

/* The device buffers of one pair: its inputs, the working volumes and its
 * outputs (disp, conf, and median when params.median). */
typedef struct sgm_buffers {
    cl_mem left, right, census_l, census_r, intensity, cost;
    cl_mem path[8];
    cl_mem disp, conf, median, right_scratch, winner_scratch;
} sgm_buffers;

/* The plan of left's size and p (reads the "sgm" launch parameters). */
pv_status pv_cl_sgm_make_plan(pv_context *ctx, const pv_image *left, const pv_sgm_params *p,
                              sgm_plan *plan);
/* The context's scratch buffers for the plan, with left and right
 * uploaded into b->left and b->right on the current queue. */
pv_status pv_cl_sgm_get_buffers(pv_context *ctx, const pv_image *left, const pv_image *right,
                                const pv_sgm_params *p, const sgm_plan *plan, sgm_buffers *b);
/* The kernels of one pair on the current queue, from b->left and b->right
 * to b->disp and b->conf (b->median with params.median); no wait. */
pv_status pv_cl_sgm_enqueue_pair(pv_context *ctx, const sgm_plan *plan, const pv_image *left,
                                 const pv_sgm_params *p, const sgm_buffers *b);

#endif
