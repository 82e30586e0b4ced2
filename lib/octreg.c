/* Front end of the octreg module: argument checks, the plan's geometry
 * (padded B-scan transforms, coarse stripes, reference sub-volumes), and
 * the host side of the pipeline that runs on the small arrays the backends
 * return: stripe positions and their spike detection (thesis algorithm 13),
 * the predicted position of every B-scan, the choice of its sub-volume
 * (algorithm 14), the filtering of the fine shifts (algorithm 15),
 * sub-pixel refinement, and the placement tables of the reconstruction.
 *
 * Axis names follow the thesis (see octreg.h): planes are B-scans (y),
 * pv_volume's x is depth (z) and its y the A-lines (x). */
#include "core/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Reference bins this far below the mean bin power hold only rounding. */
#define OCT_EMPTY_BIN 1e-10
/* A transform must fit the kernels' 32-bit indices. */
#define OCT_MAX_POINTS 0xFFFFFFFFu
/* Device memory a batch buffer may take when the batch is automatic. */
#define OCT_BATCH_BYTES ((size_t)256 << 20)
/* Cross-check: share of B-scans whose integer results must agree, and the
 * sub-pixel and reconstruction tolerances (documented in octreg.h). */
#define OCT_AGREEMENT 0.99
#define OCT_SUBPIXEL_TOLERANCE 0.05
#define OCT_RECON_TOLERANCE 1e-4
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

/* ================================================================ options */

void pv_octreg_options_default(pv_octreg_options *options)
{
    if (!options)
        return;
    options->stripes = 10;
    options->stripe_width = 3;
    options->subvolume_width = 32;
    options->subvolume_step = 16;
    options->coarse_tolerance = 0.0;
    options->tolerance = 8.0;
    options->pad = PV_PAD_FFT;
    options->subpixel = 0;
    options->batch = 0;
}

/* 1 when n's prime factors are 2, 3, 5 and 7 only (fast for FFTW, and
 * accepted by clFFT). */
static int fft_friendly(long long n)
{
    static const int radices[] = {2, 3, 5, 7};
    if (n < 1)
        return 0;
    for (int i = 0; i < 4; i++)
        while (n % radices[i] == 0)
            n /= radices[i];
    return n == 1;
}

static int next_friendly(long long n)
{
    for (long long m = n < 1 ? 1 : n; m <= INT_MAX; m++)
        if (fft_friendly(m))
            return (int)m;
    return 0;
}

static pv_status check_counts(pv_context *ctx, const pv_octreg_options *o)
{
    const char *op = "octreg_plan_create";
    if (o->stripes < 2 || o->stripes > 100000)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.stripes %d is not in 2..100000", op,
                       o->stripes);
    if (o->stripe_width < 1 || o->stripe_width > 64)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.stripe_width %d is not in 1..64", op,
                       o->stripe_width);
    if (o->subvolume_width < 3 || !fft_friendly(o->subvolume_width))
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
        return fft_friendly(n) ? n : 0;
    if (pad == PV_PAD_FFT)
        return next_friendly(n);
    return next_friendly(2LL * n - 1);
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
    g->coarse_depth = next_friendly(size[2]);
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

typedef struct volume_scan {
    int finite;
    int textured;      /* some plane is not constant */
    double energy;     /* sum over planes */
} volume_scan;

static volume_scan scan_stats(const pv_oct_plane_stats *stats, int planes)
{
    volume_scan scan = {1, 0, 0.0};
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

static pv_status check_scan(pv_context *ctx, const char *op, const char *name, volume_scan scan)
{
    if (!scan.finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s contains NaN or Inf", op, name);
    if (!scan.textured)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is constant (e.g. all zero): nothing to register", op, name);
    return PV_OK;
}

static int plane_textured(const pv_oct_plane_stats *s)
{
    return s->finite && s->hi > s->lo;
}

/* ============================================================ small math */

static double signed_shift(int index, int n)
{
    return index <= n / 2 ? (double)index : (double)index - n;
}

/* Vertex of the parabola through (-1, lo), (0, mid), (1, hi), limited to
 * half a voxel; 0 when the three points do not bend down. */
static double parabola_vertex(double lo, double mid, double hi)
{
    double bend = lo - 2.0 * mid + hi;
    if (!(bend < 0.0))
        return 0.0;
    double offset = 0.5 * (lo - hi) / bend;
    return offset < -0.5 ? -0.5 : offset > 0.5 ? 0.5 : offset;
}

static int wrap_index(int i, int n)
{
    return ((i % n) + n) % n;
}

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
    int position = wrap_index(-peak->index[2], n);
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
    p.dz = signed_shift(peak->index[0], g->fft[0]);
    p.dx = signed_shift(peak->index[1], g->fft[1]);
    p.position = g->sub_start[sub] + wrap_index(-peak->index[2], g->sub_width);
    return p;
}

/* Sub-pixel offsets of a fine peak per axis (0 where the parabola cannot be
 * fitted: at the sub-volume's first or last plane, the y neighbours wrap). */
static fine_point fine_fraction(const pv_oct_geometry *g, const pv_pc_peak *peak)
{
    fine_point f;
    double v = peak->value;
    int local = wrap_index(-peak->index[2], g->sub_width);
    f.dz = parabola_vertex(peak->neighbors[0][0], v, peak->neighbors[0][1]);
    f.dx = parabola_vertex(peak->neighbors[1][0], v, peak->neighbors[1][1]);
    /* Position local - 1 lies at map index + 1, local + 1 at index - 1. */
    f.position = local == 0 || local == g->sub_width - 1
                     ? 0.0
                     : parabola_vertex(peak->neighbors[2][1], v, peak->neighbors[2][0]);
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
    pv_oct_plane_stats *stats;
    pv_pc_peak *coarse;
    pv_pc_peak *fine;
    double *predicted;
    int *sub;
    int *usable;
    int *valid;
    int *scratch_int;       /* 2 * planes */
    double *scratch;        /* 3 * planes */
    fine_point *points;
} oct_work;

static void free_work(oct_work *w)
{
    free(w->stats);
    free(w->coarse);
    free(w->fine);
    free(w->predicted);
    free(w->sub);
    free(w->usable);
    free(w->valid);
    free(w->scratch_int);
    free(w->scratch);
    free(w->points);
}

static pv_status alloc_work(pv_context *ctx, const pv_octreg_plan *plan, oct_work *w)
{
    size_t planes = (size_t)plan->geometry.size[2];
    memset(w, 0, sizeof *w);
    w->stats = calloc(planes, sizeof *w->stats);
    w->coarse = calloc((size_t)plan->stripes, sizeof *w->coarse);
    w->fine = calloc(planes, sizeof *w->fine);
    w->predicted = calloc(planes, sizeof *w->predicted);
    w->sub = calloc(planes, sizeof *w->sub);
    w->usable = calloc(planes, sizeof *w->usable);
    w->valid = calloc(planes, sizeof *w->valid);
    w->scratch_int = calloc(2 * planes, sizeof *w->scratch_int);
    w->scratch = calloc(3 * planes, sizeof *w->scratch);
    w->points = calloc(planes, sizeof *w->points);
    if (!w->stats || !w->coarse || !w->fine || !w->predicted || !w->sub || !w->usable ||
        !w->valid || !w->scratch_int || !w->scratch || !w->points) {
        free_work(w);
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg: out of memory");
    }
    return PV_OK;
}

/* Upload (or borrow) a target and check it. */
static pv_status load_target(pv_octreg_plan *plan, oct_runner run, const char *op,
                             const pv_volume *target, oct_work *w)
{
    pv_status status = run.ops->octreg->load(plan->ctx, run.plan, target, w->stats);
    if (status != PV_OK)
        return status;
    return check_scan(plan->ctx, op, "target", scan_stats(w->stats, plan->geometry.size[2]));
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
        w->usable[k] = plane_textured(&w->stats[k]);
    }
    filter_points(w->points, w->usable, planes, plan->options.tolerance, w->scratch_int,
                  w->scratch_int + planes, w->scratch, w->valid);
    for (int k = 0; plan->options.subpixel && k < planes; k++) {
        if (!w->valid[k])
            continue;
        fine_point f = fine_fraction(g, &w->fine[k]);
        w->points[k].dx += f.dx;
        w->points[k].position += f.position;
        w->points[k].dz += f.dz;
    }
    write_shifts(w->points, w->valid, w->predicted, w->fine, planes, w->scratch, shifts);
    info->valid_bscans = 0;
    for (int k = 0; k < planes; k++)
        info->valid_bscans += w->valid[k];
    info->subvolumes = g->sub_count;
    return PV_OK;
}

/* ======================================================== reconstruction */

typedef struct placement_tables {
    int *plane_start, *plane;
    float *weight, *offset;
} placement_tables;

static void free_tables(placement_tables *t)
{
    free(t->plane_start);
    free(t->plane);
    free(t->weight);
    free(t->offset);
}

/* Where valid plane k lands: planes j0 and j0 + 1 around k - dy, with
 * linear weights (one plane when dy is whole). */
static int landing(const pv_octreg_shift *s, int k, int planes, int target[2], float weight[2])
{
    double position = k - s->dy;
    double j0 = floor(position), fraction = position - j0;
    int count = 0;
    if (fraction > 1.0 - OCT_WHOLE_PLANE) {
        j0 += 1.0;
        fraction = 0.0;
    }
    double w[2] = {1.0 - fraction, fraction};
    for (int i = 0; i < 2; i++) {
        double j = j0 + i;
        if (w[i] <= OCT_WHOLE_PLANE || j < 0.0 || j > planes - 1)
            continue;
        target[count] = (int)j;
        weight[count++] = (float)w[i];
    }
    return count;
}

static pv_status build_placement(pv_context *ctx, const pv_octreg_shift *shifts, int planes,
                                 placement_tables *t, pv_oct_placement *out, float *coverage)
{
    memset(t, 0, sizeof *t);
    t->plane_start = calloc((size_t)planes + 1, sizeof *t->plane_start);
    t->plane = malloc(2 * (size_t)planes * sizeof *t->plane);
    t->weight = malloc(2 * (size_t)planes * sizeof *t->weight);
    t->offset = malloc(4 * (size_t)planes * sizeof *t->offset);
    if (!t->plane_start || !t->plane || !t->weight || !t->offset) {
        free_tables(t);
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg reconstruction: out of memory");
    }
    /* Count per reference plane, then fill in plane order (CSR). */
    for (int k = 0; k < planes; k++) {
        int j[2];
        float w[2];
        int n = shifts[k].valid ? landing(&shifts[k], k, planes, j, w) : 0;
        for (int i = 0; i < n; i++)
            t->plane_start[j[i] + 1]++;
    }
    for (int j = 0; j < planes; j++)
        t->plane_start[j + 1] += t->plane_start[j];
    /* plane_start[j] counts up while filling, then is shifted back. */
    for (int j = 0; coverage && j < planes; j++)
        coverage[j] = 0.0f;
    for (int k = 0; k < planes; k++) {
        int j[2];
        float w[2];
        int n = shifts[k].valid ? landing(&shifts[k], k, planes, j, w) : 0;
        for (int i = 0; i < n; i++) {
            int e = t->plane_start[j[i]]++;
            t->plane[e] = k;
            t->weight[e] = w[i];
            t->offset[2 * e] = (float)shifts[k].dz;
            t->offset[2 * e + 1] = (float)shifts[k].dx;
            if (coverage)
                coverage[j[i]] += w[i];
        }
    }
    for (int j = planes; j > 0; j--)
        t->plane_start[j] = t->plane_start[j - 1];
    t->plane_start[0] = 0;
    out->plane_start = t->plane_start;
    out->plane = t->plane;
    out->weight = t->weight;
    out->offset = t->offset;
    out->entries = t->plane_start[planes];
    return PV_OK;
}

static pv_status place_loaded(pv_octreg_plan *plan, oct_runner run, const pv_octreg_shift *shifts,
                              int reset, float *coverage)
{
    placement_tables tables;
    pv_oct_placement placement;
    int planes = plan->geometry.size[2];
    float *added = coverage ? calloc((size_t)planes, sizeof *added) : NULL;
    if (coverage && !added)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg reconstruction: out of memory");
    pv_status status = build_placement(plan->ctx, shifts, planes, &tables, &placement, added);
    if (status != PV_OK) {
        free(added);
        return status;
    }
    status = run.ops->octreg->place(plan->ctx, run.plan, &placement, reset);
    for (int j = 0; status == PV_OK && coverage && j < planes; j++)
        coverage[j] = (reset ? 0.0f : coverage[j]) + added[j];
    free_tables(&tables);
    free(added);
    return status;
}

/* ============================================================ plan set-up */

static void plan_free(pv_octreg_plan *plan)
{
    if (!plan)
        return;
    if (plan->backend)
        plan->ctx->ops->octreg->destroy(plan->ctx, plan->backend);
    if (plan->check)
        pv_cpu_backend.octreg->destroy(plan->ctx, plan->check);
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
        status = check_scan(ctx, "octreg_plan_create", "reference", scan_stats(stats, g->size[2]));
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
    pv_timing saved = ctx->timing;
    status = pv_cpu_backend.octreg->create(ctx, &plan->geometry, &plan->check);
    if (status == PV_OK)
        status = prepare_reference(plan, (oct_runner){&pv_cpu_backend, plan->check}, reference);
    ctx->timing = saved;
    return status;
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
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    if (!plan)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (!pv_volume_is_valid(reference))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: reference is NULL or not a valid volume", op);
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
    pv_status status = check_options(ctx, &made->options);
    if (status == PV_OK)
        status = make_geometry(ctx, made, size);
    if (status == PV_OK) {
        pv_call_begin(ctx);
        status = backend_plans(made, reference);
        pv_call_end(ctx);
    }
    if (status != PV_OK) {
        plan_free(made);
        return status;
    }
    *plan = made;
    return PV_OK;
}

void pv_octreg_plan_destroy(pv_octreg_plan *plan)
{
    pv_context *ctx = plan ? plan->ctx : NULL;
    pv_context_lock(ctx); /* a shared context's device state */
    plan_free(plan);
    pv_context_unlock(ctx);
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
    if (agree < OCT_AGREEMENT * planes)
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "octreg cross-check: %d of %d B-scans agree with the CPU (need %.0f%%)",
                       agree, planes, 100.0 * OCT_AGREEMENT);
    if (!(worst <= OCT_SUBPIXEL_TOLERANCE))
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "octreg cross-check: sub-pixel shifts differ from the CPU by %g > %g",
                       worst, OCT_SUBPIXEL_TOLERANCE);
    return PV_OK;
}

static pv_status crosscheck_register(pv_octreg_plan *plan, const pv_volume *target,
                                     const pv_octreg_shift *found)
{
    pv_context *ctx = plan->ctx;
    int planes = plan->geometry.size[2];
    oct_runner cpu = {&pv_cpu_backend, plan->check};
    pv_octreg_shift *reference = calloc((size_t)planes, sizeof *reference);
    oct_work w;
    pv_octreg_info info;
    pv_status status = reference ? alloc_work(ctx, plan, &w)
                                 : pv_fail(ctx, PV_ERR_NOMEM, "octreg cross-check: out of memory");
    if (!reference || status != PV_OK) {
        free(reference);
        return status;
    }
    pv_timing saved = ctx->timing;
    status = load_target(plan, cpu, "octreg_register", target, &w);
    if (status == PV_OK)
        status = register_loaded(plan, cpu, &w, reference, &info);
    ctx->timing = saved;
    if (status == PV_OK)
        status = compare_shifts(ctx, found, reference, planes);
    free_work(&w);
    free(reference);
    return status;
}

/* ============================================================ public API */

static pv_status check_plan_target(const pv_octreg_plan *plan, const char *op,
                                   const char *name, const pv_volume *target)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (!pv_volume_is_valid(target))
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid volume", op,
                       name);
    const int *n = plan->geometry.size;
    if (target->nx != n[0] || target->ny != n[1] || target->nz != n[2])
        return pv_fail(plan->ctx, PV_ERR_INVALID,
                       "%s: %s is %dx%dx%d (depth x A-lines x B-scans) but the reference is "
                       "%dx%dx%d",
                       op, name, target->nx, target->ny, target->nz, n[0], n[1], n[2]);
    return PV_OK;
}

static pv_status run_register(pv_octreg_plan *plan, const pv_volume *target,
                              pv_octreg_shift *shifts, pv_octreg_info *info)
{
    pv_context *ctx = plan->ctx;
    oct_runner run = {ctx->ops, plan->backend};
    int planes = plan->geometry.size[2];
    pv_octreg_shift *found = calloc((size_t)planes, sizeof *found);
    oct_work w;
    pv_status status = found ? alloc_work(ctx, plan, &w)
                             : pv_fail(ctx, PV_ERR_NOMEM, "octreg_register: out of memory");
    if (!found || status != PV_OK) {
        free(found);
        return status;
    }
    pv_octreg_info summary;
    status = load_target(plan, run, "octreg_register", target, &w);
    if (status == PV_OK)
        status = register_loaded(plan, run, &w, found, &summary);
    if (status == PV_OK && plan->check)
        status = crosscheck_register(plan, target, found);
    if (status == PV_OK) {
        memcpy(shifts, found, (size_t)planes * sizeof *shifts);
        if (info)
            *info = summary;
    }
    free_work(&w);
    free(found);
    return status;
}

pv_status pv_octreg_register(pv_octreg_plan *plan, const pv_volume *target,
                             pv_octreg_shift *shifts, pv_octreg_info *info)
{
    const char *op = "octreg_register";
    pv_status status = check_plan_target(plan, op, "target", target);
    if (status != PV_OK)
        return status;
    if (!shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: shifts is NULL", op);
    pv_call_begin(plan->ctx);
    status = run_register(plan, target, shifts, info);
    pv_call_end(plan->ctx);
    return status;
}

/* ---------------------------------------------------------- reconstruction */

typedef struct recon_outputs {
    pv_volume *volume;
    pv_image *enface, *slow;
    float *coverage;
    float gap;
} recon_outputs;

static pv_status check_image_out(pv_context *ctx, const char *op, const char *name,
                                 const pv_image *image, int width, int height)
{
    if (!image)
        return PV_OK;
    if (!pv_image_is_valid(image) || image->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is not a valid f32 image", op, name);
    if (image->width != width || image->height != height)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%d but must be %dx%d", op, name,
                       image->width, image->height, width, height);
    return PV_OK;
}

static pv_status check_outputs(const pv_octreg_plan *plan, const char *op,
                               const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    const int *n = plan->geometry.size;
    if (!out->volume && !out->enface && !out->slow && !out->coverage)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: every output is NULL", op);
    pv_status status = out->volume ? check_plan_target(plan, op, "the output volume", out->volume)
                                   : PV_OK;
    if (status == PV_OK)
        status = check_image_out(ctx, op, "enface", out->enface, n[1], n[2]);
    if (status == PV_OK)
        status = check_image_out(ctx, op, "slow", out->slow, n[2], n[0]);
    return status;
}

static pv_status check_shift_values(pv_context *ctx, const char *op, const pv_octreg_shift *s,
                                    int count)
{
    for (int k = 0; k < count; k++)
        if (!isfinite(s[k].dx) || !isfinite(s[k].dy) || !isfinite(s[k].dz) ||
            (s[k].valid != 0 && s[k].valid != 1))
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: shifts[%d] is not finite or its valid flag is not 0 / 1", op, k);
    return PV_OK;
}

/* The backends write straight into the caller's outputs only when all is
 * done; outputs are compared with the CPU's in cross-check mode. */
static pv_status read_outputs(pv_octreg_plan *plan, oct_runner run, const recon_outputs *out)
{
    return run.ops->octreg->read(plan->ctx, run.plan, out->gap, out->volume, out->enface, out->slow);
}

static void free_scratch(recon_outputs *o)
{
    if (o->volume)
        pv_volume_free(o->volume);
    if (o->enface)
        pv_image_free(o->enface);
    if (o->slow)
        pv_image_free(o->slow);
}

/* Scratch outputs like out's, for the CPU side of a cross-check. */
static pv_status scratch_like(pv_context *ctx, const recon_outputs *out, pv_volume *v,
                              pv_image *e, pv_image *s, recon_outputs *scratch)
{
    memset(scratch, 0, sizeof *scratch);
    scratch->gap = out->gap;
    pv_status status = PV_OK;
    if (out->volume && (status = pv_volume_alloc_like(v, out->volume)) == PV_OK)
        scratch->volume = v;
    if (status == PV_OK && out->enface &&
        (status = pv_image_alloc_like(e, out->enface, PV_PIXEL_F32)) == PV_OK)
        scratch->enface = e;
    if (status == PV_OK && out->slow &&
        (status = pv_image_alloc_like(s, out->slow, PV_PIXEL_F32)) == PV_OK)
        scratch->slow = s;
    if (status != PV_OK) {
        free_scratch(scratch);
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg cross-check: out of memory");
    }
    return PV_OK;
}

static pv_status compare_outputs(pv_context *ctx, const recon_outputs *a, const recon_outputs *b)
{
    double error = 0.0;
    if (a->volume)
        error = fmax(error, pv_volume_rel_linf(a->volume, b->volume));
    if (a->enface)
        error = fmax(error, pv_image_rel_linf(a->enface, b->enface));
    if (a->slow)
        error = fmax(error, pv_image_rel_linf(a->slow, b->slow));
    if (!(error <= OCT_RECON_TOLERANCE))
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "octreg cross-check: the reconstruction differs from the CPU's by %g > %g",
                       error, OCT_RECON_TOLERANCE);
    return PV_OK;
}

static pv_status crosscheck_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                        const pv_octreg_shift *shifts, const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    oct_runner cpu = {&pv_cpu_backend, plan->check};
    pv_oct_plane_stats *stats = calloc((size_t)plan->geometry.size[2], sizeof *stats);
    if (!stats)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg cross-check: out of memory");
    pv_volume v;
    pv_image e, s;
    recon_outputs scratch;
    pv_timing saved = ctx->timing;
    pv_status status = scratch_like(ctx, out, &v, &e, &s, &scratch);
    if (status == PV_OK) {
        status = cpu.ops->octreg->load(ctx, cpu.plan, target, stats);
        if (status == PV_OK)
            status = place_loaded(plan, cpu, shifts, 1, NULL);
        if (status == PV_OK && (scratch.volume || scratch.enface || scratch.slow))
            status = read_outputs(plan, cpu, &scratch);
        if (status == PV_OK)
            status = compare_outputs(ctx, out, &scratch);
        free_scratch(&scratch);
    }
    ctx->timing = saved;
    free(stats);
    return status;
}

static pv_status run_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                 const pv_octreg_shift *shifts, const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    oct_runner run = {ctx->ops, plan->backend};
    int planes = plan->geometry.size[2];
    pv_oct_plane_stats *stats = calloc((size_t)planes, sizeof *stats);
    float *coverage = calloc((size_t)planes, sizeof *coverage);
    pv_status status = stats && coverage
                           ? PV_OK
                           : pv_fail(ctx, PV_ERR_NOMEM, "octreg_reconstruct: out of memory");
    if (status == PV_OK)
        status = run.ops->octreg->load(ctx, run.plan, target, stats);
    if (status == PV_OK && !scan_stats(stats, planes).finite)
        status = pv_fail(ctx, PV_ERR_INVALID, "octreg_reconstruct: target contains NaN or Inf");
    if (status == PV_OK)
        status = place_loaded(plan, run, shifts, 1, coverage);
    if (status == PV_OK && plan->check && (out->volume || out->enface || out->slow))
        status = crosscheck_reconstruct(plan, target, shifts, out);
    if (status == PV_OK && (out->volume || out->enface || out->slow))
        status = read_outputs(plan, run, out);
    if (status == PV_OK && out->coverage)
        memcpy(out->coverage, coverage, (size_t)planes * sizeof *coverage);
    free(stats);
    free(coverage);
    return status;
}

pv_status pv_octreg_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                const pv_octreg_shift *shifts, float gap_value,
                                pv_volume *registered, pv_image *enface, pv_image *slow,
                                float *coverage)
{
    const char *op = "octreg_reconstruct";
    recon_outputs out = {registered, enface, slow, coverage, gap_value};
    pv_status status = check_plan_target(plan, op, "target", target);
    if (status == PV_OK && !shifts)
        status = pv_fail(plan->ctx, PV_ERR_INVALID, "%s: shifts is NULL", op);
    if (status == PV_OK)
        status = check_outputs(plan, op, &out);
    if (status == PV_OK)
        status = check_shift_values(plan->ctx, op, shifts, plan->geometry.size[2]);
    if (status != PV_OK)
        return status;
    pv_call_begin(plan->ctx);
    status = run_reconstruct(plan, target, shifts, &out);
    pv_call_end(plan->ctx);
    return status;
}

/* ---------------------------------------------------------------- average */

/* Register each target and add its reconstruction to the accumulators. */
static pv_status average_targets(pv_octreg_plan *plan, const pv_volume *targets, int count,
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
    for (int i = 0; status == PV_OK && i < count; i++) {
        pv_octreg_shift *shifts = all + (size_t)i * planes;
        status = load_target(plan, run, "octreg_average", &targets[i], &w);
        if (status == PV_OK)
            status = register_loaded(plan, run, &w, shifts, &info);
        if (status == PV_OK)
            status = place_loaded(plan, run, shifts, i == 0, coverage);
    }
    free_work(&w);
    return status;
}

static pv_status check_average(const pv_octreg_plan *plan, const char *op,
                               const pv_volume *targets, int count, const recon_outputs *out)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (!targets || count < 1)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: targets is NULL or count %d < 1", op,
                       count);
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++)
        status = check_plan_target(plan, op, "a target", &targets[i]);
    if (status == PV_OK)
        status = check_outputs(plan, op, out);
    return status;
}

pv_status pv_octreg_average(pv_octreg_plan *plan, const pv_volume *targets, int count,
                            pv_octreg_shift *shifts, float gap_value, pv_volume *averaged,
                            pv_image *enface, pv_image *slow, float *coverage)
{
    const char *op = "octreg_average";
    recon_outputs out = {averaged, enface, slow, coverage, gap_value};
    pv_status status = check_average(plan, op, targets, count, &out);
    if (status != PV_OK)
        return status;
    pv_context *ctx = plan->ctx;
    size_t planes = (size_t)plan->geometry.size[2];
    pv_octreg_shift *all = calloc(planes * (size_t)count, sizeof *all);
    float *covered = calloc(planes, sizeof *covered);
    status = all && covered ? PV_OK : pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    pv_call_begin(ctx);
    if (status == PV_OK)
        status = average_targets(plan, targets, count, all, covered);
    if (status == PV_OK && (averaged || enface || slow))
        status = read_outputs(plan, (oct_runner){ctx->ops, plan->backend}, &out);
    pv_call_end(ctx);
    if (status == PV_OK && shifts)
        memcpy(shifts, all, planes * (size_t)count * sizeof *shifts);
    if (status == PV_OK && coverage)
        memcpy(coverage, covered, planes * sizeof *coverage);
    free(all);
    free(covered);
    return status;
}
