/* Front end of phase correlation: options, transform sizes, window
 * weights, the plans (a backend plan and, in cross-check mode, its CPU
 * twin), the integer and parabolic peak positions, the upsampled-DFT
 * refinement (whose DFT tables are built here in double, so both backends
 * use identical numbers) and the cross-check of the shifts.  The public
 * calls are in phasecorr_api.c. */
#include "register_internal.h"
#include "../core/tolerance.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Each upsampling stage is at most this much finer than the one before. */
#define PV_UPSAMPLE_STAGE 10
/* Reference bins whose power lies this far below the mean bin power hold
 * only rounding (float FFTs leave about 1e-14) and count as empty. */
#define PV_PC_EMPTY_BIN 1e-10

/* ================================================================ options */

void pv_phasecorr_options_default(pv_phasecorr_options *options)
{
    if (!options)
        return;
    pv_decl_defaults(&pv_phasecorr_decl, options); /* declared in register_params.c */
}

/* Every field in its declared range (register_params.c): the choices of
 * pad, window and sub-pixel method, and upsample 2..10000 (kept
 * in range even when another method is chosen, so that a structure is
 * valid or not whatever is done with it). */
static pv_status check_options(pv_context *ctx, const char *op, const pv_phasecorr_options *o)
{
    return pv_decl_check(ctx, op, &pv_phasecorr_decl, o);
}

pv_status pv_pc_resolve_options(pv_context *ctx, const char *op,
                                const pv_phasecorr_options *options,
                                pv_phasecorr_options *resolved)
{
    if (options)
        *resolved = *options;
    else
        pv_phasecorr_options_default(resolved);
    return check_options(ctx, op, resolved);
}

/* ================================================================== sizes */

static int padded_length(pv_pad_mode pad, int n)
{
    if (n == 1 || pad == PV_PAD_NONE)
        return n;
    if (pad == PV_PAD_FFT)
        return pv_fft_friendly_size(n);
    return n > INT_MAX / 2 ? 0 : pv_fft_friendly_size(2 * n - 1);
}

static pv_status transform_size(pv_context *ctx, const char *op, pv_pad_mode pad,
                                const int size[3], int fft[3])
{
    size_t points = 1;
    for (int a = 0; a < 3; a++) {
        fft[a] = padded_length(pad, size[a]);
        if (fft[a] == 0 || !pv_size_mul(points, (size_t)fft[a], &points))
            return pv_fail(ctx, PV_ERR_INVALID, "%s: the padded transform of %dx%dx%d overflows",
                           op, size[0], size[1], size[2]);
    }
    if (points > PV_PC_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: a %dx%dx%d transform has more than 2^32 points", op, fft[0], fft[1],
                       fft[2]);
    return PV_OK;
}

/* ============================================================ input levels */

/* The mean a backend subtracts from an input: 0 unless the plan centres;
 * computed on the device for a caller's buffer (a device-buffer call). */
static pv_status input_mean(const pv_phasecorr_plan *plan, const pv_volume *v, float *mean)
{
    double value = 0.0;
    pv_status status = PV_OK;
    if (plan->geometry.centered && plan->ctx->device_call)
        status = pv_reg_device_volume_mean(plan->ctx, v, &value);
    else if (plan->geometry.centered)
        value = pv_reg_volume_mean(v, pv_reg_threads(plan->ctx));
    *mean = (float)value;
    return status;
}

/* Sum of squares of what the transform sees, (v - mean) * window, which by
 * Parseval is the mean power of the spectrum's bins. */
static pv_status transformed_energy(const pv_phasecorr_plan *plan, const pv_volume *v,
                                    float mean, double *energy)
{
    if (plan->ctx->device_call)
        return pv_reg_device_windowed_energy(plan->ctx, v, plan->geometry.window, mean, energy);
    *energy = pv_reg_windowed_energy(v, plan->geometry.window, mean, pv_reg_threads(plan->ctx));
    return PV_OK;
}


/* ================================================================ windows */

static void fill_hann(float *w, int n)
{
    for (int i = 0; i < n; i++)
        w[i] = n == 1 ? 1.0f : (float)(0.5 - 0.5 * cos(2.0 * PV_PI * i / (n - 1)));
}

/* One weight array per axis, in one block. */
static void lay_out_windows(pv_scratch *scratch, void *arrays)
{
    pv_phasecorr_plan *plan = arrays;
    for (int a = 0; a < 3; a++)
        plan->window[a] = pv_scratch_take(scratch, (size_t)plan->geometry.size[a],
                                          sizeof *plan->window[a]);
}

static pv_status make_windows(pv_context *ctx, pv_phasecorr_plan *plan)
{
    if (plan->options.window != PV_WINDOW_HANN)
        return PV_OK;
    if (pv_scratch_carve(&plan->window_block, lay_out_windows, plan, 0) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "no memory for the window weights");
    for (int a = 0; a < 3; a++) {
        fill_hann(plan->window[a], plan->geometry.size[a]);
        plan->geometry.window[a] = plan->window[a];
    }
    return PV_OK;
}

/* ================================================================== plans */

void pv_pc_plan_free(pv_phasecorr_plan *plan)
{
    if (!plan)
        return;
    PV_DESTROY_PLAN_PAIR(plan->ctx, reg, pc_destroy, plan->backend, plan->check);
    pv_scratch_free(&plan->window_block);
    free(plan);
}

static pv_status backend_plans(pv_context *ctx, pv_phasecorr_plan *plan)
{
    pv_status status = ctx->ops->reg->pc_create(ctx, &plan->geometry, &plan->backend);
    if (status != PV_OK || !pv_crosscheck_wanted(ctx))
        return status;
    pv_pc_geometry geometry = plan->geometry;
    geometry.transient = 0;
    pv_oracle oracle;
    pv_oracle_begin(ctx, "phase correlation", &oracle);
    status = pv_cpu_backend.reg->pc_create(ctx, &geometry, &plan->check);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

pv_status pv_pc_plan_new(pv_context *ctx, const char *op, const int size[3], int dims,
                         const pv_phasecorr_options *options, int max_batch, int transient,
                         pv_phasecorr_plan **out)
{
    pv_phasecorr_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    plan->ctx = ctx;
    plan->options = *options;
    plan->dims = dims;
    memcpy(plan->geometry.size, size, sizeof plan->geometry.size);
    plan->geometry.batch = max_batch;
    plan->geometry.keep_spectra = options->subpixel == PV_SUBPIXEL_UPSAMPLE;
    plan->geometry.transient = transient;
    plan->geometry.centered = options->pad != PV_PAD_NONE || options->window != PV_WINDOW_NONE;
    pv_status status = transform_size(ctx, op, options->pad, size, plan->geometry.fft);
    if (status == PV_OK)
        status = make_windows(ctx, plan);
    if (status == PV_OK)
        status = backend_plans(ctx, plan);
    if (status == PV_OK)
        *out = plan;
    else
        pv_pc_plan_free(plan);
    return status;
}

pv_status pv_pc_plan_reference(pv_phasecorr_plan *plan, const pv_volume *reference,
                               pv_data_scan scan)
{
    pv_context *ctx = plan->ctx;
    float mean = 0.0f;
    double energy = 0.0;
    pv_status status = input_mean(plan, reference, &mean);
    if (status == PV_OK)
        status = transformed_energy(plan, reference, mean, &energy);
    const float floor = (float)(PV_PC_EMPTY_BIN * energy);
    if (status == PV_OK)
        status = ctx->ops->reg->pc_reference(ctx, plan->backend, reference, mean, floor);
    /* A reference in a caller's buffer (a device-buffer call) cannot be
     * read here for the CPU's plan: the plan stops cross-checking (a
     * cross-checked device-buffer call runs on host copies instead). */
    if (status == PV_OK && plan->check && ctx->device_call) {
        pv_cpu_backend.reg->pc_destroy(ctx, plan->check);
        plan->check = NULL;
    }
    if (status == PV_OK && plan->check) {
        pv_oracle oracle;
        pv_oracle_begin(ctx, "phase correlation", &oracle);
        status = pv_cpu_backend.reg->pc_reference(ctx, plan->check, reference, mean, floor);
        status = pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
    }
    if (status == PV_OK)
        plan->reference_textured = scan.textured;
    return status;
}

/* ========================================================= shift results */

static void integer_result(const pv_phasecorr_plan *plan, const pv_pc_peak *peak,
                           pv_shift *shift)
{
    const int *fft = plan->geometry.fft;
    double d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = pv_peak_signed_shift(peak->index[a], fft[a]);
        if (plan->options.subpixel == PV_SUBPIXEL_PARABOLIC && fft[a] >= 3)
            d[a] += pv_peak_parabola_vertex(peak->neighbors[a][0], peak->value, peak->neighbors[a][1]);
    }
    shift->dx = d[0];
    shift->dy = d[1];
    shift->dz = d[2];
    shift->peak = peak->value;
    shift->flags = 0;
}

static void untextured_result(pv_shift *shift)
{
    shift->dx = shift->dy = shift->dz = 0.0;
    shift->peak = 0.0;
    shift->flags = PV_REGISTER_NO_TEXTURE;
}

/* ------------------------------------------------ upsampled-DFT refinement */

/* Row w of the table holds, for every stored frequency k of the axis,
 * weight(k) * exp(+2 pi i f(k) p_w / n) at p_w = first + w * step.  Along x
 * the half spectrum stands for its mirror image too, so inner bins weigh 2;
 * along y and z the frequency is signed. */
static void fill_dft_table(float *table, int axis, int n, int count, double first, double step)
{
    int stored = axis == 0 ? n / 2 + 1 : n;
    for (int w = 0; w < count; w++) {
        double p = first + w * step;
        for (int k = 0; k < stored; k++) {
            double f = axis == 0 || k <= n / 2 ? k : k - n;
            int mirrored = axis == 0 && k != 0 && !(n % 2 == 0 && k == n / 2);
            double weight = mirrored ? 2.0 : 1.0;
            /* Reduce f * p modulo n before the trigonometry, for accuracy. */
            double turns = fmod(f * p, (double)n) / n;
            table[2 * ((size_t)w * stored + k)] = (float)(weight * cos(2.0 * PV_PI * turns));
            table[2 * ((size_t)w * stored + k) + 1] = (float)(weight * sin(2.0 * PV_PI * turns));
        }
    }
}

typedef struct upsample_stage {
    int count[3];
    double first[3];
    double step;
} upsample_stage;

/* The stage at resolution 1/resolution around center: +-0.75 px on the
 * first stage (Guizar-Sicairos's 1.5-pixel window), +-1 step of the previous
 * stage after that. */
static upsample_stage stage_around(const int fft[3], const double center[3], int resolution,
                                   int previous)
{
    upsample_stage stage;
    stage.step = 1.0 / resolution;
    int half = previous == 1 ? (int)ceil(0.75 * resolution)
                             : (resolution + previous - 1) / previous;
    for (int a = 0; a < 3; a++) {
        int h = fft[a] > 1 ? half : 0;
        double snapped = floor(center[a] * resolution + 0.5) / resolution;
        stage.count[a] = 2 * h + 1;
        stage.first[a] = snapped - h * stage.step;
    }
    return stage;
}

typedef struct dft_buffers {
    float *table[3];
    float *values;
} dft_buffers;

static void free_dft_buffers(dft_buffers *b)
{
    for (int a = 0; a < 3; a++)
        free(b->table[a]);
    free(b->values);
}

/* Sized for the largest stage: PV_UPSAMPLE_STAGE steps either side. */
static pv_status alloc_dft_buffers(pv_context *ctx, const int fft[3], dft_buffers *b)
{
    int most = 2 * PV_UPSAMPLE_STAGE + 1;
    size_t points = 1;
    memset(b, 0, sizeof *b);
    for (int a = 0; a < 3; a++) {
        size_t stored = a == 0 ? (size_t)fft[0] / 2 + 1 : (size_t)fft[a];
        b->table[a] = malloc(2 * stored * (size_t)most * sizeof(float));
        points *= fft[a] > 1 ? (size_t)most : 1;
    }
    b->values = malloc(points * sizeof(float));
    if (!b->table[0] || !b->table[1] || !b->table[2] || !b->values) {
        free_dft_buffers(b);
        return pv_fail(ctx, PV_ERR_NOMEM, "no memory for the upsampled-DFT tables");
    }
    return PV_OK;
}

/* The best point of one stage: first largest value in memory order. */
static void stage_best(const upsample_stage *stage, const float *values, double best[3],
                       double *value)
{
    size_t total = (size_t)stage->count[0] * stage->count[1] * stage->count[2], at = 0;
    for (size_t i = 1; i < total; i++)
        if (values[i] > values[at])
            at = i;
    size_t wx = at % stage->count[0], wy = at / stage->count[0] % stage->count[1],
           wz = at / ((size_t)stage->count[0] * stage->count[1]);
    best[0] = stage->first[0] + (double)wx * stage->step;
    best[1] = stage->first[1] + (double)wy * stage->step;
    best[2] = stage->first[2] + (double)wz * stage->step;
    *value = values[at];
}

static pv_status run_stage(pv_context *ctx, const pv_backend_ops *ops, void *backend, int mover,
                           const int fft[3], const upsample_stage *stage, dft_buffers *b)
{
    pv_dft_window window;
    for (int a = 0; a < 3; a++) {
        fill_dft_table(b->table[a], a, fft[a], stage->count[a], stage->first[a], stage->step);
        window.count[a] = stage->count[a];
        window.table[a] = b->table[a];
    }
    return ops->reg->pc_upsample(ctx, backend, mover, &window, b->values);
}

static pv_status refine_upsampled(pv_context *ctx, const pv_backend_ops *ops, void *backend,
                                  int mover, const pv_pc_geometry *g, int upsample,
                                  pv_shift *shift)
{
    dft_buffers b;
    pv_status status = alloc_dft_buffers(ctx, g->fft, &b);
    double center[3] = {shift->dx, shift->dy, shift->dz}, value = shift->peak;
    for (int resolution = 1; status == PV_OK && resolution < upsample;) {
        int next = resolution > upsample / PV_UPSAMPLE_STAGE ? upsample
                                                             : resolution * PV_UPSAMPLE_STAGE;
        upsample_stage stage = stage_around(g->fft, center, next, resolution);
        status = run_stage(ctx, ops, backend, mover, g->fft, &stage, &b);
        if (status == PV_OK)
            stage_best(&stage, b.values, center, &value);
        resolution = next;
    }
    if (status == PV_OK) {
        shift->dx = center[0];
        shift->dy = center[1];
        shift->dz = center[2];
        shift->peak = value;
    }
    free_dft_buffers(&b);
    return status;
}

/* ----------------------------------------------------------- correlation */

/* Shifts of `count` movers on one backend plan. */
static pv_status correlate_on(pv_phasecorr_plan *plan, const pv_backend_ops *ops, void *backend,
                              const pv_volume *movers, const float *means, const int *textured,
                              int count, pv_pc_peak *peaks, pv_shift *shifts)
{
    pv_context *ctx = plan->ctx;
    pv_status status = ops->reg->pc_correlate(ctx, backend, movers, means, count, peaks);
    for (int i = 0; status == PV_OK && i < count; i++) {
        if (!textured[i] || !plan->reference_textured) {
            untextured_result(&shifts[i]);
            continue;
        }
        integer_result(plan, &peaks[i], &shifts[i]);
        if (plan->options.subpixel == PV_SUBPIXEL_UPSAMPLE)
            status = refine_upsampled(ctx, ops, backend, i, &plan->geometry,
                                      plan->options.upsample, &shifts[i]);
    }
    return status;
}

static double shift_tolerance(const pv_phasecorr_options *options)
{
    if (options->subpixel == PV_SUBPIXEL_UPSAMPLE)
        return fmax(PV_TOL_PC_SHIFT, 1.0 / options->upsample) + 1e-9;
    return PV_TOL_PC_SHIFT;
}

static pv_status compare_shift(pv_context *ctx, int i, const pv_pc_peak *peak,
                               const pv_pc_peak *ref_peak, const pv_shift *s, const pv_shift *ref,
                               double tolerance)
{
    if (s->flags & PV_REGISTER_NO_TEXTURE)
        return PV_OK;
    if (memcmp(peak->index, ref_peak->index, sizeof peak->index) != 0)
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "phase correlation cross-check: mover %d peaks at grid (%d,%d,%d) but "
                       "(%d,%d,%d) on the CPU",
                       i, peak->index[0], peak->index[1], peak->index[2], ref_peak->index[0],
                       ref_peak->index[1], ref_peak->index[2]);
    double error = fmax(fabs(s->dx - ref->dx), fmax(fabs(s->dy - ref->dy), fabs(s->dz - ref->dz)));
    if (!(error <= tolerance) || !(fabs(s->peak - ref->peak) <= PV_TOL_PC_PEAK))
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "phase correlation cross-check: mover %d shift (%g,%g,%g) peak %g vs "
                       "CPU (%g,%g,%g) peak %g",
                       i, s->dx, s->dy, s->dz, s->peak, ref->dx, ref->dy, ref->dz, ref->peak);
    return PV_OK;
}

static pv_status crosscheck_chunk(pv_phasecorr_plan *plan, const pv_volume *movers,
                                  const float *means, const int *textured, int count,
                                  const pv_pc_peak *peaks, const pv_shift *shifts)
{
    pv_context *ctx = plan->ctx;
    pv_pc_peak *ref_peaks = calloc((size_t)count, sizeof *ref_peaks);
    pv_shift *ref_shifts = calloc((size_t)count, sizeof *ref_shifts);
    pv_status status = ref_peaks && ref_shifts
                           ? PV_OK
                           : pv_fail(ctx, PV_ERR_NOMEM, "phase correlation cross-check: out of memory");
    pv_oracle oracle;
    pv_oracle_begin(ctx, "phase correlation", &oracle);
    if (status == PV_OK)
        status = correlate_on(plan, &pv_cpu_backend, plan->check, movers, means, textured,
                              count, ref_peaks, ref_shifts);
    status = pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
    double tolerance = shift_tolerance(&plan->options);
    for (int i = 0; status == PV_OK && i < count; i++)
        status = compare_shift(ctx, i, &peaks[i], &ref_peaks[i], &shifts[i], &ref_shifts[i],
                               tolerance);
    free(ref_peaks);
    free(ref_shifts);
    return status;
}

pv_status pv_pc_correlate_chunk(pv_phasecorr_plan *plan, const pv_volume *movers,
                                const int *textured, int count, pv_shift *shifts)
{
    pv_context *ctx = plan->ctx;
    pv_pc_peak *peaks = calloc((size_t)count, sizeof *peaks);
    pv_shift *found = calloc((size_t)count, sizeof *found);
    float *means = calloc((size_t)count, sizeof *means);
    pv_status status = peaks && found && means
                           ? PV_OK
                           : pv_fail(ctx, PV_ERR_NOMEM, "phase correlation: out of memory");
    for (int i = 0; status == PV_OK && i < count; i++)
        status = input_mean(plan, &movers[i], &means[i]);
    if (status == PV_OK)
        status = correlate_on(plan, ctx->ops, plan->backend, movers, means, textured, count,
                              peaks, found);
    if (status == PV_OK && plan->check && !ctx->device_call) /* movers on the device */
        status = crosscheck_chunk(plan, movers, means, textured, count, peaks, found);
    if (status == PV_OK)
        memcpy(shifts, found, (size_t)count * sizeof *shifts);
    free(peaks);
    free(found);
    free(means);
    return status;
}
