/* Front end of the octreg module: options, argument checks, the plan's
 * geometry (padded B-scan transforms, coarse stripes, reference
 * sub-volumes) and its set-up on the backends, the reference included.
 * The registration pipeline is in octreg_register.c, the reconstruction
 * in octreg_recon.c. */
#include "octreg_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ options */

void pv_octreg_options_default(pv_octreg_options *options)
{
    if (!options)
        return;
    pv_decl_defaults(&pv_octreg_decl, options); /* declared in octreg_params.c */
}

static pv_status check_counts(pv_context *ctx, const pv_octreg_options *o)
{
    const char *op = "octreg_plan_create";
    pv_status status = pv_decl_check(ctx, op, &pv_octreg_decl, o); /* octreg_params.c */
    if (status != PV_OK)
        return status;
    if (o->stripes < 2 || o->stripes > 100000)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.stripes %d is not in 2..100000", op,
                       o->stripes);
    if (o->stripe_width < 1 || o->stripe_width > 64)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.stripe_width %d is not in 1..64", op,
                       o->stripe_width);
    if (o->subvolume_width < 3 || !pv_fft_friendly(o->subvolume_width))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: options.subvolume_width %d must be >= 3 with prime factors 2, 3, 5, "
                       "7 only",
                       op, o->subvolume_width);
    if (o->subvolume_step < 1 || o->subvolume_step > o->subvolume_width)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: options.subvolume_step %d is not in 1..subvolume_width (%d)", op,
                       o->subvolume_step, o->subvolume_width);
    if (o->batch < 0 || o->batch > 4096)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.batch %d is not in 0..4096", op,
                       o->batch);
    return PV_OK;
}

static pv_status check_options(pv_context *ctx, const pv_octreg_options *o)
{
    const char *op = "octreg_plan_create";
    pv_status status = check_counts(ctx, o);
    if (status != PV_OK)
        return status;
    if (!(o->coarse_tolerance >= 0.0) || !isfinite(o->coarse_tolerance))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.coarse_tolerance %g is not finite >= 0",
                       op, o->coarse_tolerance);
    if (!(o->tolerance > 0.0) || !isfinite(o->tolerance))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.tolerance %g is not finite > 0", op,
                       o->tolerance);
    if (o->pad != PV_PAD_NONE && o->pad != PV_PAD_FFT && o->pad != PV_PAD_LINEAR)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.pad %d is not a pv_pad_mode", op,
                       (int)o->pad);
    if (o->subpixel != 0 && o->subpixel != 1)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.subpixel %d is not 0 or 1", op,
                       o->subpixel);
    return PV_OK;
}

/* =============================================================== geometry */

static int padded_length(pv_pad_mode pad, int n)
{
    if (pad == PV_PAD_NONE)
        return pv_fft_friendly(n) ? n : 0;
    if (pad == PV_PAD_FFT)
        return pv_fft_friendly_size(n);
    return pv_fft_friendly_size(2LL * n - 1);
}

static pv_status plane_transform(pv_context *ctx, const pv_octreg_options *o, const int size[3],
                                 int fft[2])
{
    for (int a = 0; a < 2; a++) {
        fft[a] = padded_length(o->pad, size[a]);
        if (fft[a] == 0)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "octreg_plan_create: %s %d cannot be transformed with options.pad %d "
                           "(PV_PAD_NONE needs factors 2, 3, 5, 7 only)",
                           a == 0 ? "depth" : "A-line count", size[a], (int)o->pad);
    }
    return PV_OK;
}

static pv_status check_thickness(pv_context *ctx, const pv_octreg_options *o, int planes)
{
    if (planes < o->subvolume_width)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "octreg_plan_create: %d B-scans are fewer than options.subvolume_width %d",
                       planes, o->subvolume_width);
    if (planes - o->stripe_width + 1 < o->stripes)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "octreg_plan_create: %d B-scans cannot hold %d distinct stripes of %d",
                       planes, o->stripes, o->stripe_width);
    return PV_OK;
}

/* The largest transform (the coarse one) must fit 32-bit indices. */
static pv_status check_points(pv_context *ctx, const pv_oct_geometry *g)
{
    size_t points = (size_t)g->fft[0] * (size_t)g->fft[1];
    if (!pv_size_mul(points, (size_t)g->coarse_depth, &points) || points > OCT_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "octreg_plan_create: a %dx%dx%d coarse transform has more than 2^32 points",
                       g->fft[0], g->fft[1], g->coarse_depth);
    return PV_OK;
}

/* Sub-volumes start every `step` planes while they fit; one more ends at
 * the last plane when the regular ones stop short of it. */
static int *subvolume_starts(int planes, int width, int step, int *count)
{
    int regular = (planes - width) / step + 1;
    int extra = (regular - 1) * step + width < planes;
    int *start = malloc((size_t)(regular + extra) * sizeof *start);
    if (!start)
        return NULL;
    for (int s = 0; s < regular; s++)
        start[s] = s * step;
    if (extra)
        start[regular] = planes - width;
    *count = regular + extra;
    return start;
}

/* Thesis algorithm 12: round(linspace(0, planes - width, stripes)). */
static int *stripe_starts(int planes, int width, int stripes)
{
    int *start = malloc((size_t)stripes * sizeof *start);
    double interval = (double)(planes - width) / (stripes - 1);
    for (int i = 0; start && i < stripes; i++)
        start[i] = (int)floor(interval * i + 0.5);
    return start;
}

/* exp(-2 pi i ky p / n) in double, so both backends use identical numbers. */
static float *coarse_twiddles(int width, int n)
{
    float *table = malloc(2 * (size_t)width * (size_t)n * sizeof *table);
    for (int p = 0; table && p < width; p++)
        for (int k = 0; k < n; k++) {
            double turns = fmod((double)k * p, (double)n) / n;
            table[2 * ((size_t)p * n + k)] = (float)cos(2.0 * PV_PI * turns);
            table[2 * ((size_t)p * n + k) + 1] = (float)-sin(2.0 * PV_PI * turns);
        }
    return table;
}

/* Automatic batches keep each batch buffer near OCT_BATCH_BYTES. */
static int batch_for(size_t bytes_per_item, int most)
{
    size_t fit = OCT_BATCH_BYTES / (bytes_per_item ? bytes_per_item : 1);
    return fit < 1 ? 1 : fit > (size_t)most ? most : (int)fit;
}

static pv_status make_geometry(pv_context *ctx, pv_octreg_plan *plan, const int size[3])
{
    const pv_octreg_options *o = &plan->options;
    pv_oct_geometry *g = &plan->geometry;
    memcpy(g->size, size, sizeof g->size);
    pv_status status = check_thickness(ctx, o, size[2]);
    if (status == PV_OK)
        status = plane_transform(ctx, o, size, g->fft);
    if (status != PV_OK)
        return status;
    g->coarse_depth = pv_fft_friendly_size(size[2]);
    g->stripe_width = o->stripe_width;
    g->sub_width = o->subvolume_width;
    if ((status = check_points(ctx, g)) != PV_OK)
        return status;
    plan->sub_start = subvolume_starts(size[2], g->sub_width, o->subvolume_step, &g->sub_count);
    plan->stripe_start = stripe_starts(size[2], o->stripe_width, o->stripes);
    plan->twiddle = coarse_twiddles(o->stripe_width, g->coarse_depth);
    if (!plan->sub_start || !plan->stripe_start || !plan->twiddle)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg_plan_create: out of memory");
    g->sub_start = plan->sub_start;
    g->twiddle = plan->twiddle;
    plan->stripes = o->stripes;
    size_t plane = (size_t)g->fft[0] * g->fft[1] * sizeof(float);
    g->coarse_batch = batch_for(plane * g->coarse_depth, o->stripes);
    g->fine_batch = o->batch ? (o->batch < size[2] ? o->batch : size[2])
                             : batch_for(plane * g->sub_width, size[2]);
    double spacing = (double)(size[2] - o->stripe_width) / (o->stripes - 1);
    plan->coarse_tolerance = o->coarse_tolerance > 0.0 ? o->coarse_tolerance : 2.0 * spacing;
    return PV_OK;
}

/* ========================================================== volume checks */

pv_oct_volume_scan pv_oct_scan_stats(const pv_oct_plane_stats *stats, int planes)
{
    pv_oct_volume_scan scan = {1, 0, 0.0};
    float lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < planes; k++) {
        scan.finite &= stats[k].finite != 0;
        lo = fminf(lo, stats[k].lo);
        hi = fmaxf(hi, stats[k].hi);
        scan.energy += stats[k].energy;
    }
    scan.textured = scan.finite && hi > lo;
    return scan;
}

pv_status pv_oct_check_scan(pv_context *ctx, const char *op, const char *name,
                            pv_oct_volume_scan scan)
{
    if (!scan.finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s contains NaN or Inf", op, name);
    if (!scan.textured)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is constant (e.g. all zero): nothing to register", op, name);
    return PV_OK;
}

int pv_oct_plane_textured(const pv_oct_plane_stats *s)
{
    return s->finite && s->hi > s->lo;
}

/* ============================================================ plan set-up */

static void plan_free(pv_octreg_plan *plan)
{
    if (!plan)
        return;
    PV_DESTROY_PLAN_PAIR(plan->ctx, octreg, destroy, plan->backend, plan->check);
    free(plan->sub_start);
    free(plan->twiddle);
    free(plan->stripe_start);
    free(plan);
}

/* Empty-bin floors: of the whole reference, then of each sub-volume. */
static float *reference_floors(const pv_oct_geometry *g, const pv_oct_plane_stats *stats)
{
    float *floors = malloc((size_t)(g->sub_count + 1) * sizeof *floors);
    if (!floors)
        return NULL;
    double total = 0.0;
    for (int k = 0; k < g->size[2]; k++)
        total += stats[k].energy;
    floors[0] = (float)(OCT_EMPTY_BIN * total);
    for (int s = 0; s < g->sub_count; s++) {
        double energy = 0.0;
        for (int k = g->sub_start[s]; k < g->sub_start[s] + g->sub_width; k++)
            energy += stats[k].energy;
        floors[1 + s] = (float)(OCT_EMPTY_BIN * energy);
    }
    return floors;
}

static pv_status prepare_reference(pv_octreg_plan *plan, oct_runner run, const pv_volume *reference)
{
    pv_context *ctx = plan->ctx;
    const pv_oct_geometry *g = &plan->geometry;
    pv_oct_plane_stats *stats = calloc((size_t)g->size[2], sizeof *stats);
    if (!stats)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg_plan_create: out of memory");
    pv_status status = run.ops->octreg->load(ctx, run.plan, reference, stats);
    if (status == PV_OK)
        status = pv_oct_check_scan(ctx, "octreg_plan_create", "reference", pv_oct_scan_stats(stats, g->size[2]));
    float *floors = status == PV_OK ? reference_floors(g, stats) : NULL;
    if (status == PV_OK && !floors)
        status = pv_fail(ctx, PV_ERR_NOMEM, "octreg_plan_create: out of memory");
    if (status == PV_OK)
        status = run.ops->octreg->reference(ctx, run.plan, floors);
    free(floors);
    free(stats);
    return status;
}

static pv_status backend_plans(pv_octreg_plan *plan, const pv_volume *reference)
{
    pv_context *ctx = plan->ctx;
    if (!ctx->ops->octreg->create)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "octreg: the %s backend has no octreg",
                       ctx->ops->name);
    pv_status status = ctx->ops->octreg->create(ctx, &plan->geometry, &plan->backend);
    if (status == PV_OK)
        status = prepare_reference(plan, (oct_runner){ctx->ops, plan->backend}, reference);
    if (status != PV_OK || !pv_crosscheck_wanted(ctx))
        return status;
    pv_oracle oracle;
    pv_oracle_begin(ctx, "octreg_plan_create", &oracle);
    status = pv_cpu_backend.octreg->create(ctx, &plan->geometry, &plan->check);
    if (status == PV_OK)
        status = prepare_reference(plan, (oct_runner){&pv_cpu_backend, plan->check}, reference);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

static void volume_size(const pv_volume *v, int size[3])
{
    size[0] = v->nx;
    size[1] = v->ny;
    size[2] = v->nz;
}

pv_status pv_octreg_plan_create(pv_context *ctx, const pv_volume *reference,
                                const pv_octreg_options *options, pv_octreg_plan **plan)
{
    const char *op = "octreg_plan_create";
    pv_status status = PV_CHECK_REQUIRED(ctx, op, {"plan", plan});
    if (status != PV_OK)
        return status;
    status = pv_check_volume(ctx, op, "reference", reference, PV_ACCEPT_F32_U16);
    if (status != PV_OK)
        return status;
    pv_octreg_plan *made = calloc(1, sizeof *made);
    if (!made)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    made->ctx = ctx;
    if (options)
        made->options = *options;
    else
        pv_octreg_options_default(&made->options);
    int size[3];
    volume_size(reference, size);
    status = check_options(ctx, &made->options);
    if (status == PV_OK)
        status = make_geometry(ctx, made, size);
    if (status == PV_OK) {
        status = pv_call_begin(ctx);
        if (status == PV_OK)
            status = backend_plans(made, reference);
        pv_call_end(ctx);
    }
    if (status == PV_OK)
        *plan = made;
    else
        plan_free(made);
    return status;
}

void pv_octreg_plan_destroy(pv_octreg_plan *plan)
{
    plan_free(plan);
}


pv_status pv_oct_check_target(const pv_octreg_plan *plan, const char *op, const char *name,
                              const pv_volume *target, unsigned accepted)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    pv_status status = pv_check_volume(plan->ctx, op, name, target, accepted);
    if (status != PV_OK)
        return status;
    const int *n = plan->geometry.size;
    if (target->nx != n[0] || target->ny != n[1] || target->nz != n[2])
        return pv_fail(plan->ctx, PV_ERR_INVALID,
                       "%s: %s is %dx%dx%d (depth x A-lines x B-scans) but the reference is "
                       "%dx%dx%d",
                       op, name, target->nx, target->ny, target->nz, n[0], n[1], n[2]);
    return PV_OK;
}
