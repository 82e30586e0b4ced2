/* Internal: the geometry sub-table of a backend (lib/core/backend.h):
 * RANSAC scoring.  Not installed.
 *
 * The front end (lib/geometry/geometry.c) normalises the points, draws every
 * hypothesis' minimal sample and keeps the best; a backend solves each
 * sample's minimal model and counts its inliers over all matches.  Both
 * backends use the same float operations in the same order (see
 * backends/cpu/geometry/geometry.c and backends/opencl/kernels/geometry.cl), so
 * they return the same models and counts. */
#ifndef PV_OPS_GEOMETRY_H
#define PV_OPS_GEOMETRY_H

#include "parvis.h"
#include "ops_slots.h"

/* One estimation's matches, already normalised.  A match is an inlier of
 * model M when
 *   H: |u - x2 w|^2 + |v - y2 w|^2 < threshold2 * scale2_sq * w^2,
 *      (u, v, w) = M (x1, y1, 1), i.e. transfer error below the threshold
 *      in image 2's pixels;
 *   F: e^2 < threshold2 * (scale2_sq (a^2 + b^2) + scale1_sq (c^2 + d^2)),
 *      e = x2^T M x1, (a, b) the first two entries of M x1, (c, d) those of
 *      M^T x2, i.e. Sampson distance below the threshold in pixels. */
typedef struct pv_ransac_job {
    pv_geometry_model model;
    const float *points;     /* count x 4: normalised x1, y1, x2, y2 */
    int count;
    float threshold2;        /* squared pixel threshold */
    float scale1_sq;         /* squared Hartley scale of image 1 (normalised = scale * pixels) */
    float scale2_sq;         /* the same for image 2 */
} pv_ransac_job;

/* ransac_create: a plan holding the job's matches (on the device for
 * OpenCL).  ransac_score: samples are hypotheses x sample size match
 * indices (sample size 4 for H, 8 for F); models: hypotheses x 9 floats,
 * row-major, scaled so that the largest |entry| is 1, all zero for a
 * degenerate sample; counts: the inliers of each model (0 for a degenerate
 * sample). */
#define PV_GEOMETRY_SLOTS(X, P)                                                                   \
    PV_OPS_PLAN_SLOTS(X, P, ransac_create, ransac_destroy, pv_ransac_job)                         \
    X(P, pv_status, ransac_score,                                                                 \
      (pv_context *ctx, void *plan, const int *samples, int hypotheses, float *models,            \
       int *counts))

/* The smallest pivot, relative to the largest entry of the sample's
 * system, below which a sample counts as degenerate. */
#define PV_RANSAC_PIVOT_FLOOR 1e-5f

#endif
