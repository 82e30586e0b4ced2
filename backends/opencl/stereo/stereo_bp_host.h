/* Internal to the OpenCL BP module: what its two files share.
 * stereo_bp.c: the parameters, the plan, the buffers, the images and the
 * data-cost pyramid, and the disparities; stereo_bp_passes.c: the message
 * passes from the coarsest level down. */
#ifndef PV_CL_STEREO_BP_HOST_H
#define PV_CL_STEREO_BP_HOST_H

#include "../opencl.h"

enum {
    K_SMOOTH_ROWS,
    K_SMOOTH_COLS,
    K_DATA_COST,
    K_DATA_PYRAMID,
    K_DATA_COARSEN,
    K_SMALL_LEVELS,
    K_MESSAGES_START,
    K_ROUND,
    K_ROUND_INHERIT,
    K_DISPARITY,
    K_ROUND_COOP,
    K_ROUND_COOP_FIRST,
    K_DATA_SECOND_LEVEL,
    K_DATA_HALVE,
    K_DISPARITY_COOP,
    K_ROUND_COOP_READOUT,
    K_ROUND_COOP_FINE,
    K_ROUND_COOP_FIRST_FINE,
    K_COUNT
};

typedef struct bp_plan {
    int wg_x, wg_y;
    int reg_values, local_values;
    int nreg, nloc, npriv;
    int small_pixels;
    int fused_passes;   /* BP_FUSED_PASSES */
    int dir_items;      /* BP_DIR_ITEMS: work-items per pixel in bp_round */
    int half_messages;  /* messages stored as half (the job's precision) */
    int cooperative;    /* the job's update is PV_BP_UPDATE_COOPERATIVE */
    int coop_pixels;    /* BP_COOP_PIXELS: pixels per bp_round_coop group */
    int coop_lanes;     /* work-items per pixel (BP_COOP_LANES, fitted to ndisp) */
    int coop_values;    /* disparities per work-item: ceil(ndisp / coop_lanes) */
    int coop_rows;      /* BP_COOP_ROWS: rows per bp_round_coop group */
    int coop_scan_lanes; /* lanes a scan reaches (pv_bp_scan_lanes) */
    size_t local[3];
    int pyramid_side;   /* most finest pixels per side of a bp_data_pyramid group */
    char options[512];
    cl_kernel kernels[K_COUNT]; /* looked up on first use in this call */
} bp_plan;

typedef struct bp_buffers {
    cl_mem raw_left, raw_right;  /* the caller's pixels, packed */
    cl_mem left, right;          /* f32, smoothed */
    cl_mem tmp, weights;         /* smoothing */
    cl_mem data;                 /* data-cost pyramid of one tile */
    cl_mem msgs[2];              /* messages: even levels, odd levels */
    cl_mem disparity;
} bp_buffers;

typedef struct level_size {
    int width, height;
    size_t plane;
} level_size;

static inline size_t div_up(size_t n, size_t d)
{
    return (n + d - 1) / d;
}

/* Size of a tile's level, and the offset of its data costs in the pyramid
 * (the cooperative update's pyramid starts at level 1: its rounds compute
 * the finest level's costs from the images; its level 0 is at 0, unused). */
level_size pv_cl_bp_level_of(const pv_bp_tile *tile, int level);
size_t pv_cl_bp_data_offset(const pv_bp_job *job, const pv_bp_tile *tile, int level);

/* Kernel `which` of the plan (looked up on first use in the call); and
 * its launch with the arguments a: over global in groups local
 * (pv_cl_bp_launch_in), or over gx x gy in the plan's groups
 * (pv_cl_bp_launch). */
pv_status pv_cl_bp_kernel_of(pv_context *ctx, bp_plan *plan, int which, cl_kernel *kernel);
pv_status pv_cl_bp_launch_in(pv_context *ctx, bp_plan *plan, int which, const pv_cl_arg_list *a,
                             cl_uint dims, const size_t *global, const size_t *local);
pv_status pv_cl_bp_launch(pv_context *ctx, bp_plan *plan, int which, const pv_cl_arg_list *a,
                          size_t gx, size_t gy);

/* The level's messages, its data costs, offset, width and height: the
 * round kernels' first five arguments after the coarser level's messages. */
static inline void add_level_args(pv_cl_arg_list *a, const pv_bp_job *job, const pv_bp_tile *tile,
                                  const bp_buffers *b, int level)
{
    const level_size s = pv_cl_bp_level_of(tile, level);
    const cl_mem *const buffers[2] = {&b->msgs[level & 1], &b->data};
    const cl_int place[3] = {(cl_int)pv_cl_bp_data_offset(job, tile, level), s.width, s.height};
    pv_cl_args_buffers(a, buffers, 2);
    pv_cl_args_ints(a, place, 3);
}

/* The images the finest level's costs come from: the smoothed f32 pair,
 * or the caller's pixels when the job does not smooth. */
static inline void add_cost_images(pv_cl_arg_list *a, const pv_bp_job *job, const bp_buffers *b)
{
    const cl_mem *const images[2] = {job->weights ? &b->left : &b->raw_left,
                                     job->weights ? &b->right : &b->raw_right};
    pv_cl_args_buffers(a, images, 2);
}

/* The arguments that build the data costs of `level` from the level above
 * it (bp_data_coarsen, bp_data_halve); *coarse: that level's size. */
void pv_cl_bp_coarsen_args(pv_cl_arg_list *a, const pv_bp_job *job, const pv_bp_tile *tile,
                           const bp_buffers *b, int level, level_size *coarse);
/* The data-cost kernels' first ten arguments and the disparity kernels'
 * arguments (stereo_bp.c). */
void pv_cl_bp_cost_args(pv_cl_arg_list *a, const pv_image *left, const pv_bp_job *job,
                        const pv_bp_tile *tile, const bp_buffers *b);
void pv_cl_bp_disparity_args(pv_cl_arg_list *a, const pv_image *left, const pv_bp_job *job,
                             const pv_bp_tile *tile, const bp_buffers *b);

/* stereo_bp_passes.c: every level's messages and rounds for one tile,
 * from the coarsest level down (the data-cost pyramid is ready), with the
 * serial update. */
pv_status pv_cl_bp_message_passes(pv_context *ctx, bp_plan *plan, const pv_bp_job *job,
                                  const pv_bp_tile *tile, const bp_buffers *b);

/* stereo_bp_coop.c: one tile with the cooperative update: its data-cost
 * pyramid, every level's rounds and the disparities of its output. */
pv_status pv_cl_bp_coop_tile(pv_context *ctx, bp_plan *plan, const pv_image *left,
                             const pv_bp_job *job, const pv_bp_tile *tile, const bp_buffers *b);

#endif
