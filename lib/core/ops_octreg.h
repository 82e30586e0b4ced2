/* Internal: the AO-OCT registration sub-table of a backend
 * (lib/core/backend.h) and the tables the front end prepares for it.  Not
 * installed. */
#ifndef PV_OPS_OCTREG_H
#define PV_OPS_OCTREG_H

#include "parvis.h"
#include "ops_slots.h"
#include "ops_register.h"

/* octreg: AO-OCT stripe-wise registration (lib/octreg*.c).  Volumes have
 * nx = depth, ny = A-lines, nz = B-scans ("planes").  The front end fixes
 * the geometry and the tables, and runs the spike detection, prediction and
 * filtering on the small arrays the backends return. */
typedef struct pv_oct_geometry {
    int size[3];            /* depth, A-lines, planes of every volume */
    int fft[2];             /* padded depth and A-lines of each plane's transform */
    int coarse_depth;       /* y extent of the coarse transform (>= size[2]) */
    int stripe_width;       /* planes per coarse stripe */
    int sub_width;          /* planes per reference sub-volume (its y extent) */
    int sub_count;
    const int *sub_start;   /* first reference plane of each sub-volume */
    int coarse_batch;       /* stripes per coarse transform batch */
    int fine_batch;         /* planes per fine transform batch */
    const float *twiddle;   /* [p][ky] complex exp(-2 pi i ky p / coarse_depth),
                               p < stripe_width, ky < coarse_depth */
} pv_oct_geometry;

/* A plan's three transforms, in the order both backends make them: one
 * plane (a target's planes, size[2] at once), a reference sub-volume of
 * sub_width planes (fine_batch at once) and a coarse stack of coarse_depth
 * planes (coarse_batch at once).  Every transform is fft[0] x fft[1] x
 * the depth here. */
typedef enum pv_oct_transform {
    PV_OCT_PLANE,
    PV_OCT_SUB,
    PV_OCT_FULL,
    PV_OCT_TRANSFORMS
} pv_oct_transform;

typedef struct pv_oct_transform_shape {
    int size[3];
    int batch;              /* transforms made at once */
} pv_oct_transform_shape;

static inline pv_oct_transform_shape pv_oct_transform_shape_of(const pv_oct_geometry *g,
                                                                pv_oct_transform t)
{
    const int depth[PV_OCT_TRANSFORMS] = {1, g->sub_width, g->coarse_depth};
    const int batch[PV_OCT_TRANSFORMS] = {g->size[2], g->fine_batch, g->coarse_batch};
    return (pv_oct_transform_shape){{g->fft[0], g->fft[1], depth[t]}, batch[t]};
}

typedef struct pv_oct_plane_stats {
    float mean, energy;     /* mean, and sum of (v - mean)^2 */
    float lo, hi;
    int finite;             /* 0 when the plane holds NaN or Inf */
} pv_oct_plane_stats;

/* Reconstruction: reference plane j gathers entries plane_start[j] ..
 * plane_start[j + 1] - 1, each a target plane, its y weight and its sample
 * offsets (depth, A-line): weight * target_plane(d + offset[0], a + offset[1]),
 * bilinear, where the sample lies inside the plane. */
typedef struct pv_oct_placement {
    const int *plane_start;
    const int *plane;
    const float *weight;
    const float *offset;
    int entries;
} pv_oct_placement;

/* octreg: load makes `volume` (f32 or u16, converted as the register
 * module's inputs are) the plan's current volume and returns its
 * per-plane stats; reference turns the current volume into the unit-phase
 * spectra of the whole (floors[0]) and of each sub-volume (floors[1 + s]),
 * each plane less its mean; spectra transforms the current volume's planes
 * as a target; coarse correlates target stripes starting at start[i] with
 * the whole reference; fine correlates target plane k with sub-volume
 * sub[k]; place accumulates the current volume per the placement; read
 * writes the accumulated reconstruction (any output may be NULL). */
#define PV_OCTREG_SLOTS(X, P)                                                                     \
    PV_OPS_PLAN_SLOTS(X, P, create, destroy, pv_oct_geometry)                                     \
    X(P, pv_status, load,                                                                         \
      (pv_context *ctx, void *plan, const pv_volume *volume, pv_oct_plane_stats *stats))          \
    X(P, pv_status, reference, (pv_context *ctx, void *plan, const float *floors))                \
    X(P, pv_status, spectra, (pv_context *ctx, void *plan))                                       \
    X(P, pv_status, coarse,                                                                       \
      (pv_context *ctx, void *plan, const int *start, int count, pv_pc_peak *peaks))              \
    X(P, pv_status, fine, (pv_context *ctx, void *plan, const int *sub, pv_pc_peak *peaks))       \
    X(P, pv_status, place,                                                                        \
      (pv_context *ctx, void *plan, const pv_oct_placement *placement, int reset))                \
    X(P, pv_status, read,                                                                         \
      (pv_context *ctx, void *plan, float gap, pv_volume *registered, pv_image *enface,           \
       pv_image *slow))

#endif
