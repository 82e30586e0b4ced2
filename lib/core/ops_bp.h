/* Internal: the belief-propagation stereo sub-table of a backend
 * (lib/core/backend.h), and the job the front end prepares for it.  Not
 * installed. */
#ifndef PV_OPS_BP_H
#define PV_OPS_BP_H

#include "parvis.h"
#include "ops_slots.h"

/* stereo_bp: BP over a list of tiles, prepared by the front end.  Each
 * tile runs BP on its region (x, y, width, height of the full image, data
 * costs at full-image coordinates) and writes the disparities of its out_
 * rectangle (inside the region) to the output. */
typedef struct pv_bp_tile {
    int x, y, width, height;
    int out_x, out_y, out_width, out_height;
    int levels;             /* pyramid levels for this region */
} pv_bp_tile;

typedef struct pv_bp_job {
    int min_disp, ndisp, iterations;
    float lambda, data_max, disc_max;
    float inv_ndisp;        /* 1 / ndisp, so both backends normalise alike */
    int half_messages;      /* 1: messages stored rounded to IEEE half */
    int cooperative;        /* 1: PV_BP_UPDATE_COOPERATIVE (minimum normalisation) */
    const float *weights;   /* smoothing taps (2 * radius + 1), or NULL: none */
    int radius;
    const pv_bp_tile *tiles;
    int tile_count;
} pv_bp_job;

/* A BP job's size class for tuned launch parameters (BP_NDISP_CLASS): 1
 * for ndisp <= 96, 2 above.  The message vector stays mostly in registers
 * and local memory in the first class and spills in the second, so one
 * tuned configuration does not serve both.  The tuner records the class
 * it tuned for, the OpenCL module applies tuned values to that class only. */
static inline int pv_bp_ndisp_class(int ndisp)
{
    return ndisp <= 96 ? 1 : 2;
}

/* run: left/right as the caller gave them; disparity f32. */
#define PV_BP_SLOTS(X, P)                                                                         \
    X(P, pv_status, run,                                                                          \
      (pv_context *ctx, const pv_image *left, const pv_image *right, const pv_bp_job *job,        \
       pv_image *disparity))

#endif
