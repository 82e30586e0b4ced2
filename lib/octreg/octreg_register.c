/* octreg registration: the host side of the pipeline that runs on the
 * small arrays the backends return: stripe positions and their spike
 * detection (thesis algorithm 13), the predicted position of every
 * B-scan, the choice of its sub-volume (algorithm 14), the filtering of
 * the fine shifts (algorithm 15), sub-pixel refinement, and the CPU
 * cross-check of the shifts. */
#include "octreg_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================ small math */

/* Linear interpolation of values[] over the indices where keep[] is set,
 * held constant beyond the first and last kept index.  Returns 0 when no
 * index is kept (values untouched). */
static int fill_between(double *values, const int *keep, int n)
{
    int previous = -1;
    for (int i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        if (previous < 0)
            for (int j = 0; j < i; j++)
                values[j] = values[i];
        else
            for (int j = previous + 1; j < i; j++)
                values[j] = values[previous] + (values[i] - values[previous]) *
                                                   (double)(j - previous) / (i - previous);
        previous = i;
    }
    if (previous < 0)
        return 0;
    for (int j = previous + 1; j < n; j++)
        values[j] = values[previous];
    return 1;
}

/* ======================================== spike detection (algorithm 13)
 * step[i] (i >= 1) is the step from point i - 1 to point i: signed for the
 * coarse positions (they must rise), a distance for the fine points.  A
 * point is good when both its steps lie in (0, tolerance); a second pass
 * keeps the points with one such step (the neighbours of a spike, and the
 * ends).  good[] receives 1 / 0. */
static int step_ok(double step, double tolerance)
{
    return step > 0.0 && step < tolerance;
}

static void detect_spikes(const double *step, int n, double tolerance, int *good)
{
    for (int i = 0; i < n; i++)
        good[i] = i > 0 && i < n - 1 && step_ok(step[i], tolerance) &&
                  step_ok(step[i + 1], tolerance);
    for (int i = 0; i < n; i++)
        if (!good[i])
            good[i] = (i > 0 && step_ok(step[i], tolerance)) ||
                      (i < n - 1 && step_ok(step[i + 1], tolerance));
    if (n == 1)
        good[0] = 1;
}

/* ================================================================ coarse */

/* Reference position of a stripe's first plane from its peak: the mover
 * sits at y = 0, so the peak lies at -position (mod the transform); values
 * past the middle of the y padding are positions before the first plane. */
static double coarse_position(const pv_oct_geometry *g, const pv_pc_peak *peak)
{
    int n = g->coarse_depth;
    int position = pv_peak_wrap_index(-peak->index[2], n);
    if (position > g->size[2] - 1 + (n - g->size[2]) / 2)
        position -= n;
    return position;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *values, int n, double *scratch)
{
    memcpy(scratch, values, (size_t)n * sizeof *scratch);
    qsort(scratch, (size_t)n, sizeof *scratch, compare_doubles);
    return scratch[n / 2];
}

/* dy at plane k: linear between the good stripes around it, constant
 * beyond the outer ones. */
static double interpolate_dy(const double *centre, const double *dy, const int *good, int n,
                             int k)
{
    int left = -1, right = -1;
    for (int i = 0; i < n; i++) {
        if (!good[i])
            continue;
        if (centre[i] <= k)
            left = i;
        if (centre[i] >= k && right < 0)
            right = i;
    }
    if (left < 0 || right < 0 || left == right)
        return dy[left >= 0 ? left : right];
    return dy[left] + (dy[right] - dy[left]) * (k - centre[left]) / (centre[right] - centre[left]);
}

/* Predicted dy of every plane from the good stripes.  Returns the number
 * of good stripes (-1 when out of memory); with none, every plane gets the
 * median stripe dy. */
static int predict_dy(const pv_octreg_plan *plan, const pv_pc_peak *peaks, double *predicted)
{
    int n = plan->stripes, planes = plan->geometry.size[2], good_count = 0;
    double *block = malloc(4 * (size_t)n * sizeof *block);
    int *good = malloc((size_t)n * sizeof *good);
    if (!block || !good) {
        free(block);
        free(good);
        return -1;
    }
    double *position = block, *step = block + n, *centre = block + 2 * n, *dy = block + 3 * n;
    for (int i = 0; i < n; i++) {
        position[i] = coarse_position(&plan->geometry, &peaks[i]);
        step[i] = i > 0 ? position[i] - position[i - 1] : 0.0;
        centre[i] = plan->stripe_start[i] + 0.5 * (plan->geometry.stripe_width - 1);
        dy[i] = plan->stripe_start[i] - position[i];
    }
    detect_spikes(step, n, plan->coarse_tolerance, good);
    for (int i = 0; i < n; i++)
        good_count += good[i];
    double fallback = good_count == 0 ? median_of(dy, n, step) : 0.0;
    for (int k = 0; k < planes; k++)
        predicted[k] = good_count == 0 ? fallback : interpolate_dy(centre, dy, good, n, k);
    free(block);
    free(good);
    return good_count;
}

/* Algorithm 14 in general form: the sub-volume whose centre lies nearest
 * the predicted reference position (the first of equals). */
static int nearest_subvolume(const pv_oct_geometry *g, double position)
{
    int best = 0;
    double best_distance = INFINITY;
    for (int s = 0; s < g->sub_count; s++) {
        double distance = fabs(position - (g->sub_start[s] + 0.5 * (g->sub_width - 1)));
        if (distance < best_distance) {
            best_distance = distance;
            best = s;
        }
    }
    return best;
}

/* ================================================================== fine */

typedef struct fine_point {
    double dx, position, dz;   /* integer measurement; position = k - dy */
} fine_point;

static fine_point fine_integer(const pv_oct_geometry *g, int sub, const pv_pc_peak *peak)
{
    fine_point p;
    p.dz = pv_peak_signed_shift(peak->index[0], g->fft[0]);
    p.dx = pv_peak_signed_shift(peak->index[1], g->fft[1]);
    p.position = g->sub_start[sub] + pv_peak_wrap_index(-peak->index[2], g->sub_width);
    return p;
}

/* Sub-pixel offsets of a fine peak per axis (0 where the parabola cannot be
 * fitted: at the sub-volume's first or last plane, the y neighbours wrap). */
static fine_point fine_fraction(const pv_oct_geometry *g, const pv_pc_peak *peak)
{
    fine_point f;
    double v = peak->value;
    int local = pv_peak_wrap_index(-peak->index[2], g->sub_width);
    f.dz = pv_peak_parabola_vertex(peak->neighbors[0][0], v, peak->neighbors[0][1]);
    f.dx = pv_peak_parabola_vertex(peak->neighbors[1][0], v, peak->neighbors[1][1]);
    /* Position local - 1 lies at map index + 1, local + 1 at index - 1. */
    f.position = local == 0 || local == g->sub_width - 1
                     ? 0.0
                     : pv_peak_parabola_vertex(peak->neighbors[2][1], v, peak->neighbors[2][0]);
    return f;
}

/* Algorithm 15's detection over the usable planes only (a constant plane
 * has no shift and must not break its neighbours' steps).  order, good and
 * step: scratch of `planes` entries each. */
static void filter_points(const fine_point *points, const int *usable, int planes,
                          double tolerance, int *order, int *good, double *step, int *valid)
{
    int n = 0;
    for (int k = 0; k < planes; k++) {
        valid[k] = 0;
        if (usable[k])
            order[n++] = k;
    }
    if (n == 0)
        return;
    step[0] = 0.0;
    for (int i = 1; i < n; i++) {
        const fine_point *a = &points[order[i - 1]], *b = &points[order[i]];
        double ex = b->dx - a->dx, ey = b->position - a->position, ez = b->dz - a->dz;
        step[i] = sqrt(ex * ex + ey * ey + ez * ez);
    }
    detect_spikes(step, n, tolerance, good);
    for (int i = 0; i < n; i++)
        valid[order[i]] = good[i];
}

/* Shifts of every plane: measured where valid, interpolated elsewhere; with
 * no valid plane at all, the coarse prediction and no x / z motion.
 * axes: scratch of 3 * planes doubles. */
static void write_shifts(const fine_point *points, const int *valid, const double *predicted,
                         const pv_pc_peak *peaks, int planes, double *axes,
                         pv_octreg_shift *shifts)
{
    double *dx = axes, *dy = axes + planes, *dz = axes + 2 * planes;
    for (int k = 0; k < planes; k++) {
        dx[k] = points[k].dx;
        dy[k] = k - points[k].position;
        dz[k] = points[k].dz;
    }
    if (!fill_between(dx, valid, planes)) {
        for (int k = 0; k < planes; k++) {
            dx[k] = dz[k] = 0.0;
            dy[k] = predicted[k];
        }
    } else {
        fill_between(dy, valid, planes);
        fill_between(dz, valid, planes);
    }
    for (int k = 0; k < planes; k++) {
        shifts[k].dx = dx[k];
        shifts[k].dy = dy[k];
        shifts[k].dz = dz[k];
        shifts[k].peak = peaks[k].value;
        shifts[k].valid = valid[k];
    }
}

/* ============================================================== pipeline */

typedef struct oct_work {
    size_t planes, stripes;
    pv_scratch scratch;     /* holds the arrays below */
    pv_oct_plane_stats *stats;
    pv_pc_peak *coarse;
    pv_pc_peak *fine;
    double *predicted;
    int *sub;
    int *usable;
    int *valid;
    int *scratch_int;       /* 2 * planes */
    double *scratch_double; /* 3 * planes */
    fine_point *points;
} oct_work;

static void lay_out_work(pv_scratch *scratch, void *arrays)
{
    oct_work *w = arrays;
    w->stats = pv_scratch_take(scratch, w->planes, sizeof *w->stats);
    w->coarse = pv_scratch_take(scratch, w->stripes, sizeof *w->coarse);
    w->fine = pv_scratch_take(scratch, w->planes, sizeof *w->fine);
    w->predicted = pv_scratch_take(scratch, w->planes, sizeof *w->predicted);
    w->sub = pv_scratch_take(scratch, w->planes, sizeof *w->sub);
    w->usable = pv_scratch_take(scratch, w->planes, sizeof *w->usable);
    w->valid = pv_scratch_take(scratch, w->planes, sizeof *w->valid);
    w->scratch_int = pv_scratch_take(scratch, 2 * w->planes, sizeof *w->scratch_int);
    w->scratch_double = pv_scratch_take(scratch, 3 * w->planes, sizeof *w->scratch_double);
    w->points = pv_scratch_take(scratch, w->planes, sizeof *w->points);
}

/* The working arrays, zero-filled. */
static pv_status alloc_work(pv_context *ctx, const pv_octreg_plan *plan, oct_work *w)
{
    *w = (oct_work){.planes = (size_t)plan->geometry.size[2], .stripes = (size_t)plan->stripes};
    if (pv_scratch_carve(&w->scratch, lay_out_work, w, 1) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg: out of memory");
    return PV_OK;
}

/* Upload (or borrow) a target and check it. */
static pv_status load_target(pv_octreg_plan *plan, oct_runner run, const char *op,
                             const pv_volume *target, oct_work *w)
{
    pv_status status = run.ops->octreg->load(plan->ctx, run.plan, target, w->stats);
    if (status != PV_OK)
        return status;
    return pv_oct_check_scan(plan->ctx, op, "target", pv_oct_scan_stats(w->stats, plan->geometry.size[2]));
}

static pv_status coarse_and_fine(pv_octreg_plan *plan, oct_runner run, oct_work *w,
                                 pv_octreg_info *info)
{
    const pv_oct_geometry *g = &plan->geometry;
    pv_status status = run.ops->octreg->spectra(plan->ctx, run.plan);
    if (status == PV_OK)
        status = run.ops->octreg->coarse(plan->ctx, run.plan, plan->stripe_start, plan->stripes,
                                     w->coarse);
    if (status != PV_OK)
        return status;
    info->stripes = plan->stripes;
    info->good_stripes = predict_dy(plan, w->coarse, w->predicted);
    if (info->good_stripes < 0)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg: out of memory");
    for (int k = 0; k < g->size[2]; k++)
        w->sub[k] = nearest_subvolume(g, k - w->predicted[k]);
    return run.ops->octreg->fine(plan->ctx, run.plan, w->sub, w->fine);
}

/* Registration of the loaded target: shifts and info. */
static pv_status register_loaded(pv_octreg_plan *plan, oct_runner run, oct_work *w,
                                 pv_octreg_shift *shifts, pv_octreg_info *info)
{
    const pv_oct_geometry *g = &plan->geometry;
    int planes = g->size[2];
    pv_status status = coarse_and_fine(plan, run, w, info);
    if (status != PV_OK)
        return status;
    for (int k = 0; k < planes; k++) {
        w->points[k] = fine_integer(g, w->sub[k], &w->fine[k]);
        w->usable[k] = pv_oct_plane_textured(&w->stats[k]);
    }
    filter_points(w->points, w->usable, planes, plan->options.tolerance, w->scratch_int,
                  w->scratch_int + planes, w->scratch_double, w->valid);
    for (int k = 0; plan->options.subpixel && k < planes; k++) {
        if (!w->valid[k])
            continue;
        fine_point f = fine_fraction(g, &w->fine[k]);
        w->points[k].dx += f.dx;
        w->points[k].position += f.position;
        w->points[k].dz += f.dz;
    }
    write_shifts(w->points, w->valid, w->predicted, w->fine, planes, w->scratch_double, shifts);
    info->valid_bscans = 0;
    for (int k = 0; k < planes; k++)
        info->valid_bscans += w->valid[k];
    info->subvolumes = g->sub_count;
    return PV_OK;
}

/* ============================================================ cross-check */

static int same_integer(const pv_octreg_shift *a, const pv_octreg_shift *b)
{
    return a->valid == b->valid && floor(a->dx + 0.5) == floor(b->dx + 0.5) &&
           floor(a->dy + 0.5) == floor(b->dy + 0.5) && floor(a->dz + 0.5) == floor(b->dz + 0.5);
}

static double max_axis_difference(const pv_octreg_shift *a, const pv_octreg_shift *b)
{
    return fmax(fabs(a->dx - b->dx), fmax(fabs(a->dy - b->dy), fabs(a->dz - b->dz)));
}

static pv_status compare_shifts(pv_context *ctx, const pv_octreg_shift *found,
                                const pv_octreg_shift *cpu, int planes)
{
    int agree = 0;
    double worst = 0.0;
    for (int k = 0; k < planes; k++) {
        if (!same_integer(&found[k], &cpu[k]))
            continue;
        agree++;
        worst = fmax(worst, max_axis_difference(&found[k], &cpu[k]));
    }
    if (agree < PV_TOL_OCT_AGREEMENT * planes)
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "octreg cross-check: %d of %d B-scans agree with the CPU (need %.0f%%)",
                       agree, planes, 100.0 * PV_TOL_OCT_AGREEMENT);
    if (!(worst <= PV_TOL_OCT_SUBPIXEL))
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "octreg cross-check: sub-pixel shifts differ from the CPU by %g > %g",
                       worst, PV_TOL_OCT_SUBPIXEL);
    return PV_OK;
}

/* Register target on one backend's plan: *shifts (allocated here, one per
 * B-scan; NULL on failure) and the info. */
static pv_status register_target(pv_octreg_plan *plan, oct_runner run, const pv_volume *target,
                                 pv_octreg_shift **shifts, pv_octreg_info *info)
{
    oct_work w;
    *shifts = calloc((size_t)plan->geometry.size[2], sizeof **shifts);
    pv_status status = *shifts ? alloc_work(plan->ctx, plan, &w)
                               : pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg_register: out of memory");
    /* Progress in two steps: the target loaded (its planes' spectra and
     * statistics), then registered (stripes and sub-volumes). */
    if (status == PV_OK) {
        status = pv_progress_report(plan->ctx, "octreg_register", 0.0, 2.0);
        if (status == PV_OK)
            status = load_target(plan, run, "octreg_register", target, &w);
        if (status == PV_OK)
            status = pv_progress_report(plan->ctx, "octreg_register", 1.0, 2.0);
        if (status == PV_OK)
            status = register_loaded(plan, run, &w, *shifts, info);
        if (status == PV_OK)
            status = pv_progress_report(plan->ctx, "octreg_register", 2.0, 2.0);
        pv_scratch_free(&w.scratch);
    }
    if (status != PV_OK) {
        free(*shifts);
        *shifts = NULL;
    }
    return status;
}

static pv_status crosscheck_register(pv_octreg_plan *plan, const pv_volume *target,
                                     const pv_octreg_shift *found)
{
    pv_context *ctx = plan->ctx;
    pv_octreg_shift *reference = NULL;
    pv_octreg_info info;
    pv_oracle oracle;
    pv_oracle_begin(ctx, "octreg_register", &oracle);
    pv_status status = register_target(plan, (oct_runner){&pv_cpu_backend, plan->check}, target,
                                       &reference, &info);
    status = pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
    if (status == PV_OK)
        status = compare_shifts(ctx, found, reference, plan->geometry.size[2]);
    free(reference);
    return status;
}

/* ============================================================ public API */

static pv_status run_register(pv_octreg_plan *plan, const pv_volume *target,
                              pv_octreg_shift *shifts, pv_octreg_info *info)
{
    pv_context *ctx = plan->ctx;
    pv_octreg_shift *found = NULL;
    pv_octreg_info summary;
    pv_status status = register_target(plan, (oct_runner){ctx->ops, plan->backend}, target,
                                       &found, &summary);
    if (status == PV_OK && plan->check)
        status = crosscheck_register(plan, target, found);
    if (status == PV_OK) {
        memcpy(shifts, found, (size_t)plan->geometry.size[2] * sizeof *shifts);
        if (info)
            *info = summary;
    }
    free(found);
    return status;
}

pv_status pv_octreg_register(pv_octreg_plan *plan, const pv_volume *target,
                             pv_octreg_shift *shifts, pv_octreg_info *info)
{
    const char *op = "octreg_register";
    pv_status status = pv_oct_check_target(plan, op, "target", target, PV_ACCEPT_F32_U16);
    if (status != PV_OK)
        return status;
    if (!shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: shifts is NULL", op);
    status = pv_call_begin(plan->ctx);
    if (status == PV_OK)
        status = run_register(plan, target, shifts, info);
    pv_call_end(plan->ctx);
    return status;
}

/* ---------------------------------------------------------------- average */

/* Register each target and add its reconstruction to the accumulators. */
pv_status pv_oct_average_targets(pv_octreg_plan *plan, const pv_volume *targets, int count,
                                 pv_octreg_shift *all, float *coverage)
{
    pv_context *ctx = plan->ctx;
    oct_runner run = {ctx->ops, plan->backend};
    int planes = plan->geometry.size[2];
    oct_work w;
    pv_octreg_info info;
    pv_status status = alloc_work(ctx, plan, &w);
    if (status != PV_OK)
        return status;
    status = pv_progress_report(ctx, "octreg_average", 0.0, count);
    for (int i = 0; status == PV_OK && i < count; i++) {
        pv_octreg_shift *shifts = all + (size_t)i * planes;
        status = load_target(plan, run, "octreg_average", &targets[i], &w);
        if (status == PV_OK)
            status = register_loaded(plan, run, &w, shifts, &info);
        if (status == PV_OK)
            status = pv_oct_place_loaded(plan, run, shifts, i == 0, coverage);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "octreg_average", i + 1.0, count);
    }
    pv_scratch_free(&w.scratch);
    return status;
}
