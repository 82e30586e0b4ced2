/* Internal, front end only: what the octreg front-end files share.
 * octreg.c holds the options, the plan's geometry and set-up;
 * octreg_register.c the registration pipeline (coarse stripes, spike
 * detection, sub-volume choice, fine shifts and their filtering);
 * octreg_recon.c the placement tables, reconstruction and averaging.
 *
 * Axis names follow the thesis (see octreg.h): planes are B-scans (y),
 * pv_volume's x is depth (z) and its y the A-lines (x).  Not installed. */
#ifndef PV_OCTREG_INTERNAL_H
#define PV_OCTREG_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"
#include "../core/tolerance.h"
#include "../register/peak.h"

/* Reference bins this far below the mean bin power hold only rounding. */
#define OCT_EMPTY_BIN 1e-10
/* A transform must fit the kernels' 32-bit indices. */
#define OCT_MAX_POINTS 0xFFFFFFFFu
/* Device memory a batch buffer may take when the batch is automatic. */
#define OCT_BATCH_BYTES ((size_t)256 << 20)
/* A y fraction below this places a B-scan on one reference plane only. */
#define OCT_WHOLE_PLANE 1e-6

struct pv_octreg_plan {
    pv_context *ctx;
    pv_octreg_options options;
    pv_oct_geometry geometry;
    int *sub_start;            /* owned tables the geometry points to */
    float *twiddle;
    int *stripe_start;
    int stripes;
    double coarse_tolerance;
    void *backend;             /* ctx->ops's plan */
    void *check;               /* the CPU backend's plan for the cross-check, or NULL */
};

/* One backend's plan: the pipeline runs the same on either. */
typedef struct oct_runner {
    const pv_backend_ops *ops;
    void *plan;
} oct_runner;


/* Over a volume's planes: all finite, some plane not constant, and the
 * summed energy. */
typedef struct pv_oct_volume_scan {
    int finite;
    int textured;
    double energy;
} pv_oct_volume_scan;

pv_oct_volume_scan pv_oct_scan_stats(const pv_oct_plane_stats *stats, int planes);
/* PV_ERR_INVALID when the scan found NaN / Inf or nothing but a constant. */
pv_status pv_oct_check_scan(pv_context *ctx, const char *op, const char *name,
                            pv_oct_volume_scan scan);
int pv_oct_plane_textured(const pv_oct_plane_stats *s);
/* A volume argument of the plan's size (`name` in the messages), of a
 * sample type in `accepted` (inputs: PV_ACCEPT_F32_U16; outputs: F32). */
pv_status pv_oct_check_target(const pv_octreg_plan *plan, const char *op, const char *name,
                              const pv_volume *target, unsigned accepted);
/* Accumulate the volume loaded on `run` per the shifts (reset: start
 * over); coverage (may be NULL) gathers each reference plane's weight. */
pv_status pv_oct_place_loaded(pv_octreg_plan *plan, oct_runner run,
                              const pv_octreg_shift *shifts, int reset, float *coverage);
/* Register each target and add its reconstruction to the accumulators:
 * all[i * planes + k] the shifts of target i. */
pv_status pv_oct_average_targets(pv_octreg_plan *plan, const pv_volume *targets, int count,
                                 pv_octreg_shift *all, float *coverage);

/* Declared parameters (octreg_params.c). */
extern const pv_op_decl pv_octreg_decl;

#endif
