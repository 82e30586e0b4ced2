/* Internal to the geometry front end (lib/geometry/geometry.c, lib/geometry/geometry_refine.c):
 * one estimation's state, shared by the RANSAC loop and the refinement. */
#ifndef PV_GEOMETRY_INTERNAL_H
#define PV_GEOMETRY_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"

/* Passes over fewer matches than this stay on one thread: starting the
 * others would cost more than the pass. */
#define PV_GEOMETRY_PARALLEL_MIN 4096

/* Hartley normalisation of one image: normalised = scale * (p - c). */
typedef struct pv_normaliser {
    double cx, cy, scale;
} pv_normaliser;

typedef struct pv_estimation {
    pv_context *ctx;
    pv_geometry_model kind;
    const char *op;            /* the public call's name, for messages */
    int count;                 /* matches */
    int sample;                /* minimal sample size */
    const float *points1, *points2; /* the caller's pixels, 2 x count each */
    pv_ransac_params params;
    pv_normaliser n[2];
    float *points;             /* count x 4 normalised x1, y1, x2, y2 (the backends' input) */
    uint8_t *mask;             /* the current inlier mask */
    uint8_t *scratch;          /* a second mask of count entries */
    int *index;                /* count entries: the refinement's inlier list */
    /* RANSAC's outcome */
    int hypotheses;
    int best_index;
    int best_count;
    float best_model[9];       /* in normalised coordinates */
} pv_estimation;

/* Match `match`'s point in image 0 or 1, normalised, in double (inline:
 * the refinement's passes call it for every inlier). */
static inline void pv_normalised_point(const pv_estimation *est, int match, int image,
                                       double out[2])
{
    const float *pts = image == 0 ? est->points1 : est->points2;
    const pv_normaliser *n = &est->n[image];
    out[0] = n->scale * (pts[2 * match] - n->cx);
    out[1] = n->scale * (pts[2 * match + 1] - n->cy);
}

/* From the winner's model (normalised coordinates): the refinement when
 * params.refine asks for it, the model in pixels (unit Frobenius norm,
 * signed), its inliers into est->mask and result->model/inlier_count. */
void pv_finish_model(pv_estimation *est, const double model[9], pv_geometry_result *result);

/* Declared parameters (geometry_params.c). */
extern const pv_op_decl pv_ransac_decl;

#endif
