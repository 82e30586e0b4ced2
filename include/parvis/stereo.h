/* parvis stereo: SAD block matching.
 *
 * Convention: the left image is the reference.  A left pixel at column x
 * matches right column x - d, for d in [min_disp, min_disp + ndisp).  The
 * output is an f32 disparity per left pixel; a pixel with no valid match
 * (no candidate column inside the right image, or rejected by the
 * left-right or uniqueness checks) is INFINITY, as in Middlebury's PFM files.
 *
 * Matching cost: the sum over a window x window block of |L - R|, with
 * image borders replicated.  A candidate d is valid when 0 <= x - d < width.
 * The winner is the smallest cost; on equal costs the smaller d wins, on
 * both backends. */
#ifndef PARVIS_STEREO_H
#define PARVIS_STEREO_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pv_sad_params {
    int min_disp;       /* smallest disparity (may be negative); default 0 */
    int ndisp;          /* number of disparities, >= 1, <= image width; default 64 */
    int window;         /* odd block size >= 1; default 5 */
    int subpixel;       /* 1: parabola through the costs at d-1, d, d+1 */
    int lr_check;       /* 1: invalidate where |d_LR - d_RL| > lr_max_diff */
    float lr_max_diff;  /* default 1 */
    /* Uniqueness: a winner with cost c is rejected when another candidate
     * outside d-1..d+1 costs less than c * (1 + uniqueness).  0 disables. */
    float uniqueness;
} pv_sad_params;

void pv_sad_params_default(pv_sad_params *params);

/* left, right: same size, same pixel type (u8 or f32).  disparity: f32
 * image of the same size, caller-allocated.  Cross-check tolerance: the
 * backends must give identical disparities on >= 99.9% of pixels (exact
 * cost ties on f32 input aside), and sub-pixel values within 1e-3. */
pv_status pv_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_sad_params *params, pv_image *disparity);

/* Middlebury-style error: share (0..1) of pixels with known ground truth
 * (gt > 0 after dividing by gt_scale; gt == 0 means unknown) whose disparity
 * differs by more than `threshold`, leaving out `border` pixels on each side.
 * Invalid (INFINITY) disparities count as bad.  gt is u8 or f32. */
pv_status pv_disparity_error(const pv_image *disparity, const pv_image *ground_truth,
                             float gt_scale, float threshold, int border, double *bad_fraction);

#ifdef __cplusplus
}
#endif

#endif
