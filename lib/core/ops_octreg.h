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

/* octreg: load makes `volume` the plan's current volume and returns its
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
