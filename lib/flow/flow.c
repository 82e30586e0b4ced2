/* Front end of the flow module: parameter and argument checks, the pyramid
 * geometry and the Gaussian taps (computed once, so both backends use the
 * same numbers), the warping / level loop that drives the backend's
 * stages, per-stage timing and the cross-check.  The evaluation helpers
 * (endpoint error, divergence, field difference) are in flow_eval.c.
 *
 * The algorithm, per level from coarsest to finest:
 *   begin_level   flow = 0 (coarsest) or 2 x the up-sampled coarser flow
 *   gradients     Ix, Iy, Iz of I1 at this level
 *   R times:
 *     resample    It = I2(x + w) - I1            (trilinear, clamped)
 *     tensor      J = K_rho * (grad4 I grad4 I^T), then b = J[1:3,1:3] w0 - J[1:3,4]
 *     jacobi      N iterations (or until the relative change < tolerance)
 * The Jacobi update and the divergence term are derived in
 * backends/cpu/flow/flow.c. */
#include "../core/internal.h"
#include "../core/params_decl.h"
#include "../core/tolerance.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A Fourier analysis of the Jacobi iteration (J = 0, interior) finds modes
 * with |eigenvalue| > 1 beyond beta ~ 3.5 alpha; the one-sided stencils at
 * the faces lower that bound (beta = 3 alpha diverged there in tests), so
 * 2 alpha is the accepted maximum. */
#define PV_FLOW_MAX_BETA_RATIO 2.0f

/* The declared parameters (flow_params.c). */
extern const pv_op_decl pv_flow_decl;

struct pv_flow_plan {
    pv_context *ctx;
    pv_flow_params params;
    pv_flow_setup setup;
    float *weights;
    void *backend_plan;
    void *cpu_plan;        /* made on the first cross-checked run */
    pv_flow_stats stats;
};

void pv_flow_params_default(pv_flow_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_flow_decl, params); /* declared in flow_params.c */
}

void pv_flow_params_default_2d(pv_flow_params *params)
{
    if (!params)
        return;
    pv_flow_params_default(params);
    /* chosen on warped-image pairs with known flow (docs/flow2d.md); the
     * 3D warps and iterations suit 2D too */
    params->alpha = 0.02f;
    params->rho = 1.5f;
    params->kernel_size = 0;
    params->levels = 4;
}

/* ------------------------------------------------------------ flow fields */

pv_status pv_flow_field_alloc(pv_flow_field *field, int nx, int ny, int nz)
{
    if (!field)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_flow_field_alloc: field is NULL");
    pv_volume *parts[3] = {&field->u, &field->v, &field->w};
    for (int i = 0; i < 3; i++) {
        pv_status status = pv_volume_alloc(parts[i], nx, ny, nz);
        if (status != PV_OK) {
            for (int j = 0; j < i; j++)
                pv_volume_free(parts[j]);
            return status;
        }
    }
    return PV_OK;
}

void pv_flow_field_free(pv_flow_field *field)
{
    if (!field)
        return;
    pv_volume_free(&field->u);
    pv_volume_free(&field->v);
    pv_volume_free(&field->w);
}

static const pv_volume *field_part(const pv_flow_field *field, int i)
{
    return i == 0 ? &field->u : i == 1 ? &field->v : &field->w;
}

/* ------------------------------------------------------------------ checks */

static int finite_positive(float value)
{
    return isfinite(value) && value > 0.0f;
}

static pv_status check_weights(pv_context *ctx, const char *op, const pv_flow_params *p)
{
    /* every field in its declared range (flow_params.c), then what relates them */
    pv_status status = pv_decl_check(ctx, op, &pv_flow_decl, p);
    if (status != PV_OK)
        return status;
    if (p->beta > PV_FLOW_MAX_BETA_RATIO * p->alpha)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: beta %g exceeds %g alpha (the Jacobi iteration would diverge)", op,
                       (double)p->beta, (double)PV_FLOW_MAX_BETA_RATIO);
    float h2 = p->spacing * p->spacing;
    if (!finite_positive(h2) || !finite_positive(p->alpha / h2) || !isfinite(p->beta / h2))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: alpha / spacing^2 is out of float range", op);
    return PV_OK;
}


/* Taps of K_rho: kernel_size, or derived from rho. */
static pv_status resolve_taps(pv_context *ctx, const char *op, const pv_flow_params *p,
                              int *taps)
{
    *taps = p->kernel_size ? p->kernel_size : pv_gaussian_taps_for_sigma(p->rho);
    if (*taps < 1 || *taps % 2 == 0 || *taps > 4095)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: kernel_size %d is not 0 or odd in 1..4095", op,
                       p->kernel_size);
    return PV_OK;
}

static int axis_fits(int n, int min_edge, int may_be_flat)
{
    return (may_be_flat && n == 1) || n >= min_edge;
}

static int next_coarser(int n)
{
    return n == 1 ? 1 : (n + 1) / 2;
}

/* Level sizes (each axis halved, rounding up; flat axes stay 1), every
 * level large enough for the kernel. */
static pv_status build_levels(pv_context *ctx, const char *op, int nx, int ny, int nz,
                              int levels, int taps, pv_flow_setup *setup)
{
    const int min_edge = taps > 2 ? taps : 2;
    int n[3] = {nx, ny, nz};
    setup->levels = levels;
    for (int l = 0; l < levels; l++) {
        if (!axis_fits(n[0], min_edge, 0) || !axis_fits(n[1], min_edge, 0) ||
            !axis_fits(n[2], min_edge, 1))
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: level %d is %dx%dx%d, smaller than the %d-tap kernel (needs "
                           "nx, ny >= %d and nz = 1 or >= %d; use fewer levels or a smaller "
                           "kernel)",
                           op, l, n[0], n[1], n[2], taps, min_edge, min_edge);
        for (int a = 0; a < 3; a++) {
            setup->size[l][a] = n[a];
            n[a] = next_coarser(n[a]);
        }
    }
    return PV_OK;
}

static pv_status check_plan_args(pv_context *ctx, int nx, int ny, int nz,
                                 const pv_flow_params *params, pv_flow_plan **plan)
{
    const char *op = "pv_flow_plan_create";
    pv_status status = PV_CHECK_REQUIRED(ctx, op, {"plan", plan}, {"params", params});
    if (status != PV_OK)
        return status;
    if (nx < 1 || ny < 1 || nz < 1)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: size %dx%dx%d is not positive", op, nx, ny, nz);
    if ((double)nx * (double)ny * (double)nz > (double)INT_MAX)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %dx%dx%d has more than INT_MAX voxels", op, nx,
                       ny, nz);
    return check_weights(ctx, op, params);
}

/* ------------------------------------------------------------------- plans */

static pv_status fill_setup(pv_context *ctx, int nx, int ny, int nz, pv_flow_plan *plan)
{
    const char *op = "pv_flow_plan_create";
    const pv_flow_params *p = &plan->params;
    int taps;
    pv_status status = resolve_taps(ctx, op, p, &taps);
    if (status == PV_OK)
        status = build_levels(ctx, op, nx, ny, nz, p->levels, taps, &plan->setup);
    if (status != PV_OK)
        return status;
    plan->weights = malloc((size_t)taps * sizeof *plan->weights);
    if (!plan->weights)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for %d weights", op, taps);
    pv_gaussian_weights(p->rho, taps, plan->weights);
    float h2 = p->spacing * p->spacing;
    plan->setup.weights = plan->weights;
    plan->setup.radius = taps / 2;
    plan->setup.smooth = p->alpha / h2;
    plan->setup.divergence = p->beta / h2;
    plan->setup.scheme = p->gradient;
    return PV_OK;
}

/* The plan's parameters and sizes and its backend plan, made under the
 * context's lock (a shared context's device state). */
static pv_status set_up_plan(pv_context *ctx, int nx, int ny, int nz,
                             const pv_flow_params *params, pv_flow_plan *plan)
{
    plan->ctx = ctx;
    plan->params = *params;
    pv_status status = pv_fork_check_context(ctx);
    if (status != PV_OK)
        return status;
    pv_context_lock(ctx);
    status = fill_setup(ctx, nx, ny, nz, plan);
    if (status == PV_OK)
        status = ctx->ops->flow->create(ctx, &plan->setup, &plan->backend_plan);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_flow_plan_create(pv_context *ctx, int nx, int ny, int nz,
                              const pv_flow_params *params, pv_flow_plan **plan)
{
    pv_status status = check_plan_args(ctx, nx, ny, nz, params, plan);
    if (status != PV_OK)
        return status;
    pv_flow_plan *made = calloc(1, sizeof *made);
    status = made ? set_up_plan(ctx, nx, ny, nz, params, made)
                  : pv_fail(ctx, PV_ERR_NOMEM, "pv_flow_plan_create: no memory for the plan");
    if (status == PV_OK)
        *plan = made;
    else
        pv_flow_plan_destroy(made);
    return status;
}

void pv_flow_plan_destroy(pv_flow_plan *plan)
{
    if (!plan)
        return;
    PV_DESTROY_PLAN_PAIR(plan->ctx, flow, destroy, plan->backend_plan, plan->cpu_plan);
    free(plan->weights);
    free(plan);
}

pv_status pv_flow_plan_stats(const pv_flow_plan *plan, pv_flow_stats *stats)
{
    if (!plan || !stats)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_flow_plan_stats: plan or stats is NULL");
    *stats = plan->stats;
    return PV_OK;
}

/* ---------------------------------------------------------- volume checks */

static int volume_has_size(const pv_volume *v, const int size[3])
{
    return v->nx == size[0] && v->ny == size[1] && v->nz == size[2];
}

/* 1 when every voxel is finite; rows checked in parallel. */
static int volume_is_finite(const pv_volume *v, int threads)
{
    if (v->type != PV_VOLUME_F32)
        return 1;   /* integers are finite */
    int bad = 0;
    #pragma omp parallel for collapse(2) num_threads(threads) reduction(|| : bad)
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++) {
            const float *row = v->data + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z;
            int row_bad = 0;
            for (int x = 0; x < v->nx; x++)
                row_bad |= !isfinite(row[x]);
            bad = bad || row_bad;
        }
    return !bad;
}

/* v valid and of the expected size; free of NaN and infinities when it is
 * read (an input).  The images registered (fixed, moving) may be U16; the
 * flow's components and the warp's volumes are F32. */
static pv_status check_volume_typed(pv_context *ctx, const char *op, const char *name,
                                    const pv_volume *v, const int size[3], int is_input,
                                    unsigned accepted)
{
    pv_status status = pv_check_volume(ctx, op, name, v, accepted);
    if (status != PV_OK)
        return status;
    if (!volume_has_size(v, size))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%dx%d, expected %dx%dx%d", op, name,
                       v->nx, v->ny, v->nz, size[0], size[1], size[2]);
    /* A device-buffer call's volumes are not in host memory (interop.h). */
    if (is_input && !ctx->device_call && !volume_is_finite(v, ctx->cpu_threads))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s holds NaN or infinite voxels", op, name);
    return PV_OK;
}

static pv_status check_volume(pv_context *ctx, const char *op, const char *name,
                              const pv_volume *v, const int size[3], int is_input)
{
    return check_volume_typed(ctx, op, name, v, size, is_input, PV_ACCEPT_F32);
}

/* Each flow component valid and of the expected size, and finite when
 * it is an input (warping). */
static pv_status check_parts(pv_context *ctx, const char *op, const pv_flow_field *flow,
                             const int size[3], int is_input)
{
    static const char *const names[3] = {"flow.u", "flow.v", "flow.w"};
    if (!flow)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: flow is NULL", op);
    pv_status status = PV_OK;
    for (int i = 0; i < 3 && status == PV_OK; i++)
        status = check_volume(ctx, op, names[i], field_part(flow, i), size, is_input);
    return status;
}

/* No flow component shares memory with `others` (count of them, NULL
 * entries skipped) or, for an output field, with another component. */
static pv_status check_parts_apart(pv_context *ctx, const char *op, const pv_flow_field *flow,
                                   const pv_volume *const *others, int count, int is_output)
{
    static const char *const names[3] = {"flow.u", "flow.v", "flow.w"};
    for (int i = 0; i < 3; i++) {
        const pv_volume *part = field_part(flow, i);
        for (int k = 0; k < count; k++)
            if (others[k] && pv_volumes_overlap(part, others[k]))
                return pv_fail(ctx, PV_ERR_INVALID, "%s: %s shares memory with %s", op,
                               names[i], is_output ? "an input" : "warped");
        for (int j = 0; is_output && j < i; j++)
            if (pv_volumes_overlap(part, field_part(flow, j)))
                return pv_fail(ctx, PV_ERR_INVALID, "%s: %s and %s share memory", op, names[j],
                               names[i]);
    }
    return PV_OK;
}

static pv_status check_run_args(pv_flow_plan *plan, const pv_volume *fixed,
                                const pv_volume *moving, const pv_flow_field *flow)
{
    const char *op = "pv_flow_plan_run";
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    pv_context *ctx = plan->ctx;
    const int *size = plan->setup.size[0];
    pv_status status = check_volume_typed(ctx, op, "fixed", fixed, size, 1, PV_ACCEPT_F32_U16);
    if (status == PV_OK)
        status = check_volume_typed(ctx, op, "moving", moving, size, 1, PV_ACCEPT_F32_U16);
    if (status == PV_OK)
        status = check_parts(ctx, op, flow, size, 0);
    const pv_volume *const inputs[2] = {fixed, moving};
    return status == PV_OK ? check_parts_apart(ctx, op, flow, inputs, 2, 1) : status;
}

/* --------------------------------------------------------------- pipeline */

/* Stage time: device time (event sums) on OpenCL, wall time on the CPU. */
typedef struct stage_clock {
    double wall_ms;
    double kernel_ms;
} stage_clock;

static stage_clock clock_now(const pv_context *ctx)
{
    stage_clock c = {pv_now_ms(), ctx->timing.kernel_ms};
    return c;
}

static double clock_since(const pv_context *ctx, const pv_backend_ops *ops, stage_clock start)
{
    if (ops == &pv_cpu_backend)
        return pv_now_ms() - start.wall_ms;
    return ctx->timing.kernel_ms - start.kernel_ms;
}

typedef struct flow_run {
    pv_context *ctx;
    const pv_backend_ops *ops;
    void *plan;
    const pv_flow_params *params;
    int levels;
    pv_flow_stats *stats;
    double *done; /* progress: Jacobi iterations, levels x warps x iterations in all */
} flow_run;

static pv_status report_progress(const flow_run *run, double done)
{
    const pv_flow_params *p = run->params;
    *run->done = done;
    return pv_progress_report(run->ctx, "flow", done,
                              (double)run->levels * p->warps * (double)p->iterations);
}

/* One warp's iterations: a fixed count, or chunks of check_every until the
 * relative change falls below the tolerance. */
static pv_status solve(const flow_run *run, int level)
{
    const pv_flow_params *p = run->params;
    if (p->tolerance <= 0.0f) {
        run->stats->iterations += p->iterations;
        return run->ops->flow->jacobi(run->ctx, run->plan, level, p->iterations, NULL);
    }
    for (int done = 0; done < p->iterations;) {
        int chunk = p->iterations - done < p->check_every ? p->iterations - done : p->check_every;
        double change = 0.0;
        pv_status status = run->ops->flow->jacobi(run->ctx, run->plan, level, chunk, &change);
        if (status != PV_OK)
            return status;
        done += chunk;
        run->stats->iterations += chunk;
        if (change < (double)p->tolerance)
            break;
        status = report_progress(run, *run->done + chunk);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

static pv_status run_warps(const flow_run *run, int level)
{
    pv_context *ctx = run->ctx;
    pv_flow_stats *stats = run->stats;
    pv_status status = PV_OK;
    for (int r = 0; r < run->params->warps && status == PV_OK; r++) {
        stage_clock start = clock_now(ctx);
        status = run->ops->flow->resample(ctx, run->plan, level);
        stats->resample_ms += clock_since(ctx, run->ops, start);
        if (status != PV_OK)
            break;
        start = clock_now(ctx);
        status = run->ops->flow->tensor(ctx, run->plan, level);
        stats->tensor_ms += clock_since(ctx, run->ops, start);
        if (status != PV_OK)
            break;
        start = clock_now(ctx);
        const double warp_end = *run->done + run->params->iterations;
        status = solve(run, level);
        stats->jacobi_ms += clock_since(ctx, run->ops, start);
        /* a warp that converged early counts all of its iterations */
        if (status == PV_OK)
            status = report_progress(run, warp_end);
    }
    return status;
}

static pv_status run_level(const flow_run *run, int level)
{
    pv_context *ctx = run->ctx;
    stage_clock start = clock_now(ctx);
    pv_status status = run->ops->flow->begin_level(ctx, run->plan, level);
    run->stats->pyramid_ms += clock_since(ctx, run->ops, start);
    if (status != PV_OK)
        return status;
    start = clock_now(ctx);
    status = run->ops->flow->gradients(ctx, run->plan, level);
    run->stats->gradient_ms += clock_since(ctx, run->ops, start);
    return status == PV_OK ? run_warps(run, level) : status;
}

static pv_status run_pipeline(const flow_run *run, const pv_volume *fixed,
                              const pv_volume *moving, pv_flow_field *flow)
{
    memset(run->stats, 0, sizeof *run->stats);
    stage_clock start = clock_now(run->ctx);
    pv_status status = report_progress(run, 0.0);
    if (status == PV_OK)
        status = run->ops->flow->load(run->ctx, run->plan, fixed, moving);
    run->stats->pyramid_ms += clock_since(run->ctx, run->ops, start);
    for (int level = run->levels - 1; level >= 0 && status == PV_OK; level--)
        status = run_level(run, level);
    return status == PV_OK ? run->ops->flow->read(run->ctx, run->plan, flow) : status;
}

/* ------------------------------------------------------------- cross-check */

static pv_status compare_with_cpu(pv_flow_plan *plan, const pv_volume *fixed,
                                  const pv_volume *moving, const pv_flow_field *flow)
{
    pv_context *ctx = plan->ctx;
    const int *size = plan->setup.size[0];
    if (!plan->cpu_plan) {
        pv_status status = pv_cpu_backend.flow->create(ctx, &plan->setup, &plan->cpu_plan);
        if (status != PV_OK)
            return status;
    }
    pv_flow_field ref;
    if (pv_flow_field_alloc(&ref, size[0], size[1], size[2]) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "flow cross-check: no memory for the CPU result");
    pv_flow_stats scratch;
    double done = 0.0;
    flow_run run = {ctx, &pv_cpu_backend, plan->cpu_plan, &plan->params, plan->setup.levels,
                    &scratch, &done};
    pv_status status = run_pipeline(&run, fixed, moving, &ref);
    double error = 0.0;
    if (status == PV_OK)
        status = pv_flow_max_difference(flow, &ref, &error);
    if (status == PV_OK && !(error <= PV_FLOW_TOLERANCE))
        status = pv_fail(ctx, PV_ERR_MISMATCH, "flow cross-check: max difference %g voxel > %g",
                         error, PV_FLOW_TOLERANCE);
    pv_flow_field_free(&ref);
    return status;
}

static pv_status crosscheck_run(pv_flow_plan *plan, const pv_volume *fixed,
                                const pv_volume *moving, const pv_flow_field *flow)
{
    pv_oracle oracle;
    pv_oracle_begin(plan->ctx, "flow", &oracle);
    pv_status status = compare_with_cpu(plan, fixed, moving, flow);
    return pv_oracle_end(plan->ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

/* ------------------------------------------------------------- operations */

/* One call (timed, under the context's lock) of a run whose arguments
 * check_run_args accepted. */
static pv_status plan_run_checked(pv_flow_plan *plan, const pv_volume *fixed,
                                  const pv_volume *moving, pv_flow_field *flow)
{
    pv_context *ctx = plan->ctx;
    double done = 0.0;
    flow_run run = {ctx, ctx->ops, plan->backend_plan, &plan->params, plan->setup.levels,
                    &plan->stats, &done};
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = run_pipeline(&run, fixed, moving, flow);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_run(plan, fixed, moving, flow);
    pv_call_end(ctx);
    return status;
}

pv_status pv_flow_plan_run(pv_flow_plan *plan, const pv_volume *fixed, const pv_volume *moving,
                           pv_flow_field *flow)
{
    pv_status status = check_run_args(plan, fixed, moving, flow);
    return status == PV_OK ? plan_run_checked(plan, fixed, moving, flow) : status;
}

pv_status pv_flow3d(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                    const pv_flow_params *params, pv_flow_field *flow)
{
    pv_status status = pv_check_required(ctx, "pv_flow3d", NULL, 0);
    if (status != PV_OK)
        return status;
    status = pv_check_volume(ctx, "pv_flow3d", "fixed", fixed, PV_ACCEPT_F32_U16);
    if (status != PV_OK)
        return status;
    pv_flow_plan *plan = NULL;
    status = pv_flow_plan_create(ctx, fixed->nx, fixed->ny, fixed->nz, params, &plan);
    if (status == PV_OK)
        status = check_run_args(plan, fixed, moving, flow);
    if (status == PV_OK)
        status = plan_run_checked(plan, fixed, moving, flow);
    pv_flow_plan_destroy(plan);
    return status;
}

/* ------------------------------------------------------------------ warp */

static pv_status check_warp_args(pv_context *ctx, const pv_volume *moving,
                                 const pv_flow_field *flow, const pv_volume *warped)
{
    const char *op = "pv_flow_warp";
    pv_status status = pv_check_required(ctx, op, NULL, 0);
    if (status != PV_OK)
        return status;
    status = pv_check_volume(ctx, op, "moving", moving, PV_ACCEPT_F32);
    if (status != PV_OK)
        return status;
    const int size[3] = {moving->nx, moving->ny, moving->nz};
    status = check_volume(ctx, op, "warped", warped, size, 0);
    if (status != PV_OK)
        return status;
    if (pv_volumes_overlap(warped, moving))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: warped shares memory with moving", op);
    status = check_parts(ctx, op, flow, size, 1);
    const pv_volume *const outputs[1] = {warped};
    return status == PV_OK ? check_parts_apart(ctx, op, flow, outputs, 1, 0) : status;
}

static pv_status crosscheck_warp(pv_context *ctx, const pv_volume *moving,
                                 const pv_flow_field *flow, const pv_volume *warped)
{
    pv_oracle oracle;
    pv_volume *ref;
    pv_oracle_begin(ctx, "flow_warp", &oracle);
    pv_status status = pv_oracle_add_volume(ctx, &oracle, warped, &ref);
    if (status == PV_OK)
        status = pv_cpu_backend.flow->warp(ctx, moving, flow, ref);
    return pv_oracle_end(ctx, &oracle, status, PV_TOL_FLOW_WARP_REL);
}

pv_status pv_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                       pv_volume *warped)
{
    pv_status status = check_warp_args(ctx, moving, flow, warped);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = ctx->ops->flow->warp(ctx, moving, flow, warped);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_warp(ctx, moving, flow, warped);
    pv_call_end(ctx);
    return status;
}
