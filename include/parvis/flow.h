/** @file
 * parvis flow: 3D motion estimation by combined local-global (CLG) optical
 * flow with an optional volume-preserving (divergence) penalty, solved by
 * Jacobi iterations inside warps and an optional coarse-to-fine pyramid.
 *
 * For a fixed volume I1 and a moving volume I2 the flow w = (u, v, w), in
 * voxels, minimises
 *   sum [dw;1]^T J_rho [dw;1] + alpha (|grad u|^2 + |grad v|^2 + |grad w|^2)
 *                             + beta (div w)^2
 * where J_rho = K_rho * (grad4 I grad4 I^T), grad4 I = (Ix, Iy, Iz, It), the
 * spatial derivatives taken on I1 and It = I2(x + w0) - I1 with w0 the flow
 * of the previous warp (dw = w - w0).  The smoothness and divergence terms
 * act on the total flow.  The result satisfies I2(x + w(x)) ~ I1(x).
 *
 * Intensities are used as given: alpha and beta are in squared intensity
 * units (for volumes scaled to [0, 1], alpha ~ 1e-3 .. 1e-1).
 *
 * Backends: the OpenCL result is within 1e-3 voxel (max abs difference per
 * component) of the CPU result after the full run; that is the cross-check
 * tolerance.  With a convergence tolerance the two backends may stop one
 * check apart when the change lies within rounding of the tolerance. */
#ifndef PARVIS_FLOW_H
#define PARVIS_FLOW_H

#include "parvis/core.h"
#include "parvis/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most pyramid levels a plan accepts. */
#define PV_FLOW_MAX_LEVELS 12

/** Documented OpenCL-vs-CPU tolerance: max abs flow difference in voxels. */
#define PV_FLOW_TOLERANCE 1e-3

/** CLG flow parameters (pv_flow_params_default). */
typedef struct pv_flow_params {
    float alpha;        /**< smoothness weight, > 0 */
    float beta;         /**< divergence weight, 0 <= beta <= 2 alpha (0: plain CLG);
                           the Jacobi iteration diverges at the faces
                           beyond ~3 alpha */
    float rho;          /**< standard deviation of K_rho in voxels, > 0 */
    int kernel_size;    /**< taps of K_rho: odd, or 0 to derive from rho */
    int warps;          /**< R >= 1 re-samplings per level */
    int iterations;     /**< N >= 1 Jacobi iterations per warp (the cap when
                           tolerance > 0) */
    int levels;         /**< pyramid levels >= 1 (factor 2 per level) */
    float spacing;      /**< grid spacing h > 0 of the Laplacian */
    pv_gradient_scheme gradient; /**< derivatives of I1 */
    float tolerance;    /**< >= 0: stop a warp's iterations when the relative
                           change ||w_k - w_k-1|| / ||w_k|| < tolerance;
                           0 runs the fixed count */
    int check_every;    /**< test the change every k >= 1 iterations */
} pv_flow_params;

/** The paper's benchmark setting: alpha 0.05, beta 0, rho 2 with 15 taps,
 * 5 warps, 50 iterations, 1 level, h = 1, central gradients, fixed count
 * (check_every 10 for when a tolerance is set).
 * @param params receives the defaults */
PV_API void pv_flow_params_default(pv_flow_params *params);

/** A flow field: three f32 volumes of equal size, in voxels. */
typedef struct pv_flow_field {
    /** @{ */
    /** the components along x, y and z */
    pv_volume u, v, w;
    /** @} */
} pv_flow_field;

/** Allocate / free a dense zeroed field (free only what alloc made).
 * @param field receives the field
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_field_alloc(pv_flow_field *field, int nx, int ny, int nz);
/** Free the three volumes of a field made by pv_flow_field_alloc (or a
 * reader); their data pointers become NULL.
 * @param field the field, or NULL */
PV_API void pv_flow_field_free(pv_flow_field *field);

/** Time per stage of the last run of a plan, in ms: device time on OpenCL
 * (event times), wall time on the CPU. */
typedef struct pv_flow_stats {
    double pyramid_ms;   /**< building the pyramid, flow init / up-sampling */
    double gradient_ms;  /**< spatial derivatives of I1 */
    double resample_ms;  /**< trilinear warping of I2, temporal derivative */
    double tensor_ms;    /**< tensor products, Gaussian smoothing */
    double jacobi_ms;    /**< Jacobi iterations (and convergence checks) */
    int iterations;      /**< Jacobi iterations run, all levels and warps */
} pv_flow_stats;

/** A plan keeps the pyramid, tensor and flow buffers (on the device for
 * OpenCL) for volumes of one size, so repeated runs allocate nothing.
 * Sizes: nx, ny >= max(taps, 2); nz = 1 (2D images) or nz >= max(taps, 2),
 * at every pyramid level; at most INT_MAX voxels. */
typedef struct pv_flow_plan pv_flow_plan;

/** Create a plan for volumes of nx x ny x nz voxels (see pv_flow_plan).
 * @param ctx the context
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @param params the parameters, or NULL (defaults)
 * @param plan receives the plan
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_plan_create(pv_context *ctx, int nx, int ny, int nz,
                                     const pv_flow_params *params, pv_flow_plan **plan);
/** Destroy a plan.
 * @param plan the plan, or NULL */
PV_API void pv_flow_plan_destroy(pv_flow_plan *plan);

/** Estimate the flow from fixed to moving (both of the plan's size, finite
 * values; f32 or u16 volumes, u16 converted on the device with the result
 * of the same values as f32; pv_flow3d and pv_flow3d_sequence alike) into flow (fields of the plan's size, apart from the inputs and
 * from each other).  Timing on the plan's context; stats per stage.
 * @param plan the plan
 * @param fixed the fixed volume
 * @param moving the moving volume
 * @param flow receives the flow
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_plan_run(pv_flow_plan *plan, const pv_volume *fixed, const pv_volume *moving,
                                  pv_flow_field *flow);
/** Time per stage of the plan's last run (pv_flow_stats).
 * @param plan the plan
 * @param stats receives the statistics
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_plan_stats(const pv_flow_plan *plan, pv_flow_stats *stats);

/** One-shot: plan, run, destroy.
 * @param ctx the context
 * @param fixed the fixed volume
 * @param moving the moving image or volume
 * @param params the parameters, or NULL (defaults)
 * @param flow receives the flow
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow3d(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                           const pv_flow_params *params, pv_flow_field *flow);

/** warped(x) = moving(x + flow(x)), trilinear, coordinates clamped to the
 * volume.  warped has moving's size and shares no memory with the inputs.
 * Cross-check tolerance 1e-5 relative.
 * @param ctx the context
 * @param moving the moving volume
 * @param flow the flow
 * @param warped receives the warped volume
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                              pv_volume *warped);

/** Evaluation helpers (host only).  border: voxels this close to a face
 * (x and y faces, and z faces when nz > 1) are left out.
 * @param estimate the estimated flow
 * @param truth the true flow
 * @param border pixels (voxels) left out at each side
 * @param mean receives the mean endpoint error
 * @param max receives the largest endpoint error
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_endpoint_error(const pv_flow_field *estimate, const pv_flow_field *truth,
                                        int border, double *mean, double *max);
/** Mean |div w| with central differences (one-sided at the faces).
 * @param flow the flow field
 * @param border pixels (voxels) left out at each side
 * @param mean_abs receives the mean |div w|
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_divergence(const pv_flow_field *flow, int border, double *mean_abs);
/** Largest |a - b| over the three components.
 * @param a the first
 * @param b the second
 * @param max_abs receives the largest difference
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_max_difference(const pv_flow_field *a, const pv_flow_field *b,
                                        double *max_abs);

/* ------------------------------------------------------------- 2D flow
 *
 * A 2D flow is a field with nz = 1 (w stays zero): plans take nz = 1 and
 * run the 2D solver.  Convention as in 3D: MOVING(x + u, y + v) ~ FIXED(x, y),
 * u to the right, v downwards, in pixels. */

/** Defaults measured for 2D images with intensities in [0, 1] (docs/flow2d.md):
 * the 3D defaults with a pyramid, more warps and a lighter smoothness.
 * @param params receives the defaults */
PV_API void pv_flow_params_default_2d(pv_flow_params *params);

/** Middlebury .flo: the float 202021.25, int32 width and height, then rows of
 * (u, v) float32 pairs, little-endian.  The reader checks the magic and that
 * the file is exactly as long as the header says (PV_ERR_FORMAT otherwise)
 * before allocating; it allocates a width x height x 1 field (free with
 * pv_flow_field_free), field untouched on error.  Components above 1e9 in
 * magnitude mark unknown vectors (Middlebury ground truth).
 * @param path the file's path
 * @param field receives the field
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_read_flo(const char *path, pv_flow_field *field);
/** Writes u and v of a field with nz = 1.
 * @param path the file's path
 * @param field the field (nz = 1)
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_write_flo(const char *path, const pv_flow_field *field);

/** The Middlebury (Baker et al.) colour coding of a 2D field as an RGB PNG:
 * hue = direction, saturation = magnitude / max_radius (white = no motion,
 * beyond max_radius darkened); max_radius 0: the largest known magnitude.
 * Unknown vectors are black.
 * @param path the file's path
 * @param field the field (nz = 1)
 * @param max_radius the magnitude of full saturation, or 0
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_write_color_png(const char *path, const pv_flow_field *field, float max_radius);

/** The errors pv_flow_error_2d measures. */
typedef struct pv_flow_error {
    double mean_endpoint;     /**< mean |(u, v) - (u_t, v_t)|, pixels */
    double max_endpoint;      /**< largest endpoint error, pixels */
    double mean_angular_deg;  /**< mean angle between (u, v, 1) and (u_t, v_t, 1) */
    size_t known;             /**< pixels scored (known truth inside the border) */
} pv_flow_error;

/** Endpoint and angular error of a 2D estimate against a 2D truth (unknown
 * truth vectors skipped), leaving out `border` pixels on each side.
 * @param estimate the estimated flow
 * @param truth the true flow
 * @param border pixels left out on each side
 * @param error receives the errors
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_flow_error_2d(const pv_flow_field *estimate, const pv_flow_field *truth, int border,
                           pv_flow_error *error);

#ifdef __cplusplus
}
#endif

#endif
