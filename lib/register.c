/* Front end of the register module: argument and data checks, transform
 * sizes, window weights, the sub-pixel searches (whose DFT tables are
 * built here in double, so both backends use identical numbers), the NCC
 * input normalization, and the CPU cross-check. */
#include "core/internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PV_UPSAMPLE_MAX 10000
#define PV_BATCH_MAX 4096
/* Each upsampling stage is at most this much finer than the one before. */
#define PV_UPSAMPLE_STAGE 10
/* Cross-check tolerances (documented in register.h). */
#define PV_PC_SHIFT_TOLERANCE 1e-3
#define PV_PC_PEAK_TOLERANCE 1e-3
#define PV_NCC_TOLERANCE 1e-4
/* Reference bins whose power lies this far below the mean bin power hold
 * only rounding (float FFTs leave about 1e-14) and count as empty. */
#define PV_PC_EMPTY_BIN 1e-10
/* A transform grid index must fit the kernels' 32-bit indices. */
#define PV_PC_MAX_POINTS 0xFFFFFFFFu

struct pv_phasecorr_plan {
    pv_context *ctx;
    pv_phasecorr_options options;
    pv_pc_geometry geometry;
    float *window[3];
    void *backend;           /* ctx->ops's plan */
    void *check;             /* the CPU backend's plan for the cross-check, or NULL */
    int dims;                /* 2: images, 3: volumes */
    int reference_textured;
};

/* ================================================================ options */

void pv_phasecorr_options_default(pv_phasecorr_options *options)
{
    if (!options)
        return;
    options->pad = PV_PAD_NONE;
    options->window = PV_WINDOW_NONE;
    options->subpixel = PV_SUBPIXEL_NONE;
    options->upsample = 100;
}

static pv_status check_options(pv_context *ctx, const char *op, const pv_phasecorr_options *o)
{
    if (o->pad != PV_PAD_NONE && o->pad != PV_PAD_FFT && o->pad != PV_PAD_LINEAR)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.pad %d is not a pv_pad_mode", op,
                       (int)o->pad);
    if (o->window != PV_WINDOW_NONE && o->window != PV_WINDOW_HANN)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.window %d is not a pv_window_kind", op,
                       (int)o->window);
    if (o->subpixel != PV_SUBPIXEL_NONE && o->subpixel != PV_SUBPIXEL_UPSAMPLE &&
        o->subpixel != PV_SUBPIXEL_PARABOLIC)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.subpixel %d is not a pv_subpixel_method",
                       op, (int)o->subpixel);
    if (o->subpixel == PV_SUBPIXEL_UPSAMPLE && (o->upsample < 2 || o->upsample > PV_UPSAMPLE_MAX))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: options.upsample %d is not in 2..%d", op,
                       o->upsample, PV_UPSAMPLE_MAX);
    return PV_OK;
}

/* ============================================================= FFT engine */

const char *pv_fft_engine_name(pv_fft_engine engine)
{
    switch (engine) {
    case PV_FFT_AUTO: return "auto";
    case PV_FFT_CLFFT: return "clFFT";
    case PV_FFT_VKFFT: return "VkFFT";
    case PV_FFT_FFTW: return "FFTW";
    }
    return "unknown";
}

int pv_fft_engine_available(pv_fft_engine engine)
{
    if (pv_cpu_backend.reg->fft_engine_built(engine))
        return 1;
#ifdef PV_HAVE_OPENCL
    return pv_opencl_backend.reg->fft_engine_built(engine);
#else
    return 0;
#endif
}

pv_status pv_context_set_fft_engine(pv_context *ctx, pv_fft_engine engine)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "set_fft_engine: ctx is NULL");
    if (engine != PV_FFT_AUTO && engine != PV_FFT_CLFFT && engine != PV_FFT_VKFFT)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "set_fft_engine: engine %d is not PV_FFT_AUTO, _CLFFT or _VKFFT",
                       (int)engine);
    if (!pv_fft_engine_available(engine))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "set_fft_engine: this build has no %s (configure --with-vkfft)",
                       pv_fft_engine_name(engine));
    pv_context_lock(ctx);
    pv_status status = ctx->ops->reg->fft_set_engine(ctx, engine);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_context_fft_engine(pv_context *ctx, pv_fft_engine *engine)
{
    if (!ctx || !engine)
        return pv_fail(ctx, PV_ERR_INVALID, "fft_engine: ctx or engine is NULL");
    pv_fft_engine found = PV_FFT_FFTW;
    pv_context_lock(ctx);
    pv_status status = ctx->ops->reg->fft_engine_of(ctx, &found);
    pv_context_unlock(ctx);
    if (status == PV_OK)
        *engine = found;
    return status;
}

/* ================================================================== sizes */

/* Smallest m >= n whose prime factors are 2, 3, 5 and 7 (fast for FFTW and
 * clFFT alike); 0 when none fits an int. */
static int fft_friendly_size(int n)
{
    for (long long m = n < 1 ? 1 : n; m <= INT_MAX; m++) {
        long long r = m;
        static const int radices[] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (r % radices[i] == 0)
                r /= radices[i];
        if (r == 1)
            return (int)m;
    }
    return 0;
}

static int padded_length(pv_pad_mode pad, int n)
{
    if (n == 1 || pad == PV_PAD_NONE)
        return n;
    if (pad == PV_PAD_FFT)
        return fft_friendly_size(n);
    return n > INT_MAX / 2 ? 0 : fft_friendly_size(2 * n - 1);
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

/* ============================================================ data checks */

typedef struct data_scan {
    int finite;
    int textured;   /* not all values equal */
} data_scan;

/* Threads for the front end's passes over inputs; small inputs stay on
 * one thread, where starting a team costs more than the pass. */
#define PV_PARALLEL_MIN_POINTS 65536

static int pass_threads(const pv_context *ctx)
{
    return ctx && ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

static long volume_rows(const pv_volume *v)
{
    return (long)v->ny * v->nz;
}

static const float *volume_row(const pv_volume *v, long row)
{
    return v->data + (row / v->ny) * v->stride_z + (row % v->ny) * v->stride_y;
}

/* Finite values and their range, one pass, split over rows (minimum,
 * maximum and a flag do not depend on the split). */
static data_scan scan_volume(const pv_volume *v, int threads)
{
    float lo = INFINITY, hi = -INFINITY;
    int finite = 1;
    const long rows = volume_rows(v);
    const int nx = v->nx;
#pragma omp parallel for num_threads(threads) schedule(static) \
    reduction(min : lo) reduction(max : hi) reduction(& : finite) \
    if ((double)rows * nx > PV_PARALLEL_MIN_POINTS)
    for (long r = 0; r < rows; r++) {
        const float *row = volume_row(v, r);
        for (int x = 0; x < nx; x++) {
            float value = row[x];
            finite &= isfinite(value) != 0;
            lo = value < lo ? value : lo;
            hi = value > hi ? value : hi;
        }
    }
    data_scan scan = {finite, finite && hi > lo};
    return scan;
}

static data_scan scan_image(const pv_image *image, int threads)
{
    data_scan scan = {1, 0};
    if (image->type == PV_PIXEL_F32) {
        pv_volume view = pv_volume_wrap(image->data, image->width, image->height, 1);
        view.stride_y = image->stride;
        return scan_volume(&view, threads);
    }
    const uint8_t *data = image->data, first = data[0];
    for (int y = 0; y < image->height && !scan.textured; y++)
        for (int x = 0; x < image->width; x++)
            if (data[(ptrdiff_t)y * image->stride + x] != first) {
                scan.textured = 1;
                break;
            }
    return scan;
}

static pv_status check_finite(pv_context *ctx, const char *op, const char *name, data_scan scan)
{
    if (!scan.finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s contains NaN or Inf", op, name);
    return PV_OK;
}

/* An f32 volume view of an image; u8 pixels are converted into *copy
 * (NULL when no copy was needed). */
static pv_status image_as_volume(pv_context *ctx, const pv_image *image, float **copy,
                                 pv_volume *view)
{
    *copy = NULL;
    if (image->type == PV_PIXEL_F32) {
        *view = pv_volume_wrap(image->data, image->width, image->height, 1);
        view->stride_y = image->stride;
        view->stride_z = image->stride * image->height;
        return PV_OK;
    }
    size_t count = (size_t)image->width * (size_t)image->height;
    float *data = malloc(count * sizeof *data);
    if (!data)
        return pv_fail(ctx, PV_ERR_NOMEM, "no memory to convert a %dx%d image to float",
                       image->width, image->height);
    const uint8_t *src = image->data;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            data[(size_t)y * image->width + x] = (float)src[(ptrdiff_t)y * image->stride + x];
    *copy = data;
    *view = pv_volume_wrap(data, image->width, image->height, 1);
    return PV_OK;
}

/* ============================================================ input levels */

/* A sum over a volume's rows of fn(row), in double: per-row sums in
 * parallel, then added in row order, so the result does not depend on the
 * number of threads. */
typedef double (*row_sum_fn)(const float *row, long index, const pv_volume *v,
                             const void *arg);

static double sum_over_rows(const pv_volume *v, int threads, row_sum_fn fn, const void *arg)
{
    const long rows = volume_rows(v);
    double *partial = malloc((size_t)rows * sizeof *partial), sum = 0.0;
    if (!partial) {
        for (long r = 0; r < rows; r++)
            sum += fn(volume_row(v, r), r, v, arg);
        return sum;
    }
#pragma omp parallel for num_threads(threads) schedule(static) \
    if ((double)rows * v->nx > PV_PARALLEL_MIN_POINTS)
    for (long r = 0; r < rows; r++)
        partial[r] = fn(volume_row(v, r), r, v, arg);
    for (long r = 0; r < rows; r++)
        sum += partial[r];
    free(partial);
    return sum;
}

static double row_sum(const float *row, long index, const pv_volume *v, const void *arg)
{
    (void)index;
    (void)arg;
    double sum = 0.0;
    for (int x = 0; x < v->nx; x++)
        sum += row[x];
    return sum;
}

static double volume_mean(const pv_volume *v, int threads)
{
    return sum_over_rows(v, threads, row_sum, NULL) / ((double)v->nx * v->ny * v->nz);
}

/* The mean a backend subtracts from an input: 0 unless the plan centres. */
static float input_mean(const pv_phasecorr_plan *plan, const pv_volume *v)
{
    return plan->geometry.centered ? (float)volume_mean(v, pass_threads(plan->ctx)) : 0.0f;
}

typedef struct energy_args {
    const float *const *window;
    float mean;
} energy_args;

static double row_energy(const float *row, long index, const pv_volume *v, const void *arg)
{
    const energy_args *e = arg;
    const int y = (int)(index % v->ny), z = (int)(index / v->ny);
    double sum = 0.0;
    for (int x = 0; x < v->nx; x++) {
        double d = (double)row[x] - e->mean;
        if (e->window[0])
            d *= (double)e->window[0][x] * e->window[1][y] * e->window[2][z];
        sum += d * d;
    }
    return sum;
}

/* Sum of squares of what the transform sees, (v - mean) * window, which by
 * Parseval is the mean power of the spectrum's bins. */
static double transformed_energy(const pv_phasecorr_plan *plan, const pv_volume *v, float mean)
{
    energy_args args = {plan->geometry.window, mean};
    return sum_over_rows(v, pass_threads(plan->ctx), row_energy, &args);
}

/* ================================================================ windows */

static float *hann_weights(int n)
{
    float *w = malloc((size_t)n * sizeof *w);
    for (int i = 0; w && i < n; i++)
        w[i] = n == 1 ? 1.0f : (float)(0.5 - 0.5 * cos(2.0 * PV_PI * i / (n - 1)));
    return w;
}

static void free_windows(float *window[3])
{
    for (int a = 0; a < 3; a++) {
        free(window[a]);
        window[a] = NULL;
    }
}

static pv_status make_windows(pv_context *ctx, pv_phasecorr_plan *plan)
{
    if (plan->options.window != PV_WINDOW_HANN)
        return PV_OK;
    for (int a = 0; a < 3; a++) {
        plan->window[a] = hann_weights(plan->geometry.size[a]);
        if (!plan->window[a]) {
            free_windows(plan->window);
            return pv_fail(ctx, PV_ERR_NOMEM, "no memory for the window weights");
        }
        plan->geometry.window[a] = plan->window[a];
    }
    return PV_OK;
}

/* ================================================================== plans */

static void plan_free(pv_phasecorr_plan *plan)
{
    if (!plan)
        return;
    if (plan->backend)
        plan->ctx->ops->reg->pc_destroy(plan->ctx, plan->backend);
    if (plan->check)
        pv_cpu_backend.reg->pc_destroy(plan->ctx, plan->check);
    free_windows(plan->window);
    free(plan);
}

static pv_status backend_plans(pv_context *ctx, pv_phasecorr_plan *plan)
{
    pv_status status = ctx->ops->reg->pc_create(ctx, &plan->geometry, &plan->backend);
    if (status != PV_OK || !pv_crosscheck_wanted(ctx))
        return status;
    pv_pc_geometry geometry = plan->geometry;
    geometry.transient = 0;
    pv_timing saved = ctx->timing;
    status = pv_cpu_backend.reg->pc_create(ctx, &geometry, &plan->check);
    ctx->timing = saved;
    return status;
}

static pv_status plan_new(pv_context *ctx, const char *op, const int size[3], int dims,
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
    if (status != PV_OK) {
        plan_free(plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

static pv_status plan_reference(pv_phasecorr_plan *plan, const pv_volume *reference,
                                data_scan scan)
{
    pv_context *ctx = plan->ctx;
    float mean = input_mean(plan, reference);
    float floor = (float)(PV_PC_EMPTY_BIN * transformed_energy(plan, reference, mean));
    pv_status status = ctx->ops->reg->pc_reference(ctx, plan->backend, reference, mean, floor);
    if (status == PV_OK && plan->check) {
        pv_timing saved = ctx->timing;
        status = pv_cpu_backend.reg->pc_reference(ctx, plan->check, reference, mean, floor);
        ctx->timing = saved;
    }
    if (status == PV_OK)
        plan->reference_textured = scan.textured;
    return status;
}

/* ========================================================= shift results */

static double signed_shift(int index, int n)
{
    return index <= n / 2 ? (double)index : (double)index - n;
}

/* Vertex of the parabola through (-1, lo), (0, mid), (1, hi), limited to
 * half a pixel; 0 when the three points do not bend down. */
static double parabola_vertex(double lo, double mid, double hi)
{
    double bend = lo - 2.0 * mid + hi;
    if (!(bend < 0.0))
        return 0.0;
    double offset = 0.5 * (lo - hi) / bend;
    return offset < -0.5 ? -0.5 : offset > 0.5 ? 0.5 : offset;
}

static void integer_result(const pv_phasecorr_plan *plan, const pv_pc_peak *peak,
                           pv_shift *shift)
{
    const int *fft = plan->geometry.fft;
    double d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = signed_shift(peak->index[a], fft[a]);
        if (plan->options.subpixel == PV_SUBPIXEL_PARABOLIC && fft[a] >= 3)
            d[a] += parabola_vertex(peak->neighbors[a][0], peak->value, peak->neighbors[a][1]);
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
        return fmax(PV_PC_SHIFT_TOLERANCE, 1.0 / options->upsample) + 1e-9;
    return PV_PC_SHIFT_TOLERANCE;
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
    if (!(error <= tolerance) || !(fabs(s->peak - ref->peak) <= PV_PC_PEAK_TOLERANCE))
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
    pv_timing saved = ctx->timing;
    if (status == PV_OK)
        status = correlate_on(plan, &pv_cpu_backend, plan->check, movers, means, textured,
                              count, ref_peaks, ref_shifts);
    ctx->timing = saved;
    double tolerance = shift_tolerance(&plan->options);
    for (int i = 0; status == PV_OK && i < count; i++)
        status = compare_shift(ctx, i, &peaks[i], &ref_peaks[i], &shifts[i], &ref_shifts[i],
                               tolerance);
    free(ref_peaks);
    free(ref_shifts);
    return status;
}

/* Movers are already checked and f32; shifts is written only on success. */
static pv_status correlate_chunk(pv_phasecorr_plan *plan, const pv_volume *movers,
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
        means[i] = input_mean(plan, &movers[i]);
    if (status == PV_OK)
        status = correlate_on(plan, ctx->ops, plan->backend, movers, means, textured, count,
                              peaks, found);
    if (status == PV_OK && plan->check)
        status = crosscheck_chunk(plan, movers, means, textured, count, peaks, found);
    if (status == PV_OK)
        memcpy(shifts, found, (size_t)count * sizeof *shifts);
    free(peaks);
    free(found);
    free(means);
    return status;
}

/* ======================================================== argument checks */

static pv_status check_ctx(pv_context *ctx, const char *op)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    return PV_OK;
}

static pv_status check_image_arg(pv_context *ctx, const char *op, const char *name,
                                 const pv_image *image)
{
    if (!pv_image_is_valid(image))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid image", op, name);
    return PV_OK;
}

static pv_status check_volume_arg(pv_context *ctx, const char *op, const char *name,
                                  const pv_volume *volume)
{
    if (!pv_volume_is_valid(volume))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or not a valid volume", op, name);
    return PV_OK;
}

/* Phase correlation needs two samples along x at least: a one-sample
 * axis has no shift to find, the CPU's FFTW would return a meaningless
 * peak and an OpenCL engine may refuse the transform.  Decided here, so
 * both backends give the same answer (and plans the same). */
static pv_status check_correlation_width(pv_context *ctx, const char *op, const char *name,
                                         int width)
{
    if (width < 2)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is %d sample(s) wide; phase correlation needs at least 2 along x",
                       op, name, width);
    return PV_OK;
}

static pv_status check_batch(pv_context *ctx, const char *op, int max_batch)
{
    if (max_batch < 1 || max_batch > PV_BATCH_MAX)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: max_batch %d is not in 1..%d", op, max_batch,
                       PV_BATCH_MAX);
    return PV_OK;
}

static pv_status resolve_options(pv_context *ctx, const char *op,
                                 const pv_phasecorr_options *options,
                                 pv_phasecorr_options *resolved)
{
    if (options)
        *resolved = *options;
    else
        pv_phasecorr_options_default(resolved);
    return check_options(ctx, op, resolved);
}

static void image_size(const pv_image *image, int size[3])
{
    size[0] = image->width;
    size[1] = image->height;
    size[2] = 1;
}

static void volume_size(const pv_volume *volume, int size[3])
{
    size[0] = volume->nx;
    size[1] = volume->ny;
    size[2] = volume->nz;
}

/* ============================================================ public: 3D */

static pv_status check_pair3d(pv_context *ctx, const char *op, const pv_volume *reference,
                              const pv_volume *moving, const pv_shift *shift)
{
    pv_status status = check_ctx(ctx, op);
    if (status == PV_OK)
        status = check_volume_arg(ctx, op, "reference", reference);
    if (status == PV_OK)
        status = check_correlation_width(ctx, op, "reference", reference->nx);
    if (status == PV_OK)
        status = check_volume_arg(ctx, op, "moving", moving);
    if (status != PV_OK)
        return status;
    if (!pv_volumes_same_size(reference, moving))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: moving is %dx%dx%d but reference is %dx%dx%d",
                       op, moving->nx, moving->ny, moving->nz, reference->nx, reference->ny,
                       reference->nz);
    if (!shift)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    return PV_OK;
}

/* A one-shot correlation through a transient plan (the FFT plans and the
 * device buffers stay cached on the context between calls). */
static pv_status correlate_once(pv_context *ctx, const char *op, const int size[3], int dims,
                                const pv_phasecorr_options *options, const pv_volume *reference,
                                data_scan ref_scan, const pv_volume *moving, int moving_textured,
                                pv_shift *shift)
{
    pv_phasecorr_plan *plan = NULL;
    pv_status status = plan_new(ctx, op, size, dims, options, 1, 1, &plan);
    if (status == PV_OK)
        status = plan_reference(plan, reference, ref_scan);
    if (status == PV_OK)
        status = correlate_chunk(plan, moving, &moving_textured, 1, shift);
    plan_free(plan);
    return status;
}

pv_status pv_phase_correlate3d(pv_context *ctx, const pv_volume *reference,
                               const pv_volume *moving, const pv_phasecorr_options *options,
                               pv_shift *shift)
{
    const char *op = "phase_correlate3d";
    pv_phasecorr_options resolved;
    pv_status status = check_pair3d(ctx, op, reference, moving, shift);
    if (status == PV_OK)
        status = resolve_options(ctx, op, options, &resolved);
    if (status != PV_OK)
        return status;
    data_scan ref_scan = scan_volume(reference, pass_threads(ctx));
    data_scan mov_scan = scan_volume(moving, pass_threads(ctx));
    status = check_finite(ctx, op, "reference", ref_scan);
    if (status == PV_OK)
        status = check_finite(ctx, op, "moving", mov_scan);
    if (status != PV_OK)
        return status;
    int size[3];
    volume_size(reference, size);
    pv_call_begin(ctx);
    status = correlate_once(ctx, op, size, 3, &resolved, reference, ref_scan, moving,
                            mov_scan.textured, shift);
    pv_call_end(ctx);
    return status;
}

/* ============================================================ public: 2D */

static pv_status check_pair2d(pv_context *ctx, const char *op, const pv_image *reference,
                              const pv_image *moving, const pv_shift *shift)
{
    pv_status status = check_ctx(ctx, op);
    if (status == PV_OK)
        status = check_image_arg(ctx, op, "reference", reference);
    if (status == PV_OK)
        status = check_correlation_width(ctx, op, "reference", reference->width);
    if (status == PV_OK)
        status = check_image_arg(ctx, op, "moving", moving);
    if (status != PV_OK)
        return status;
    if (!pv_images_same_size(reference, moving))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: moving is %dx%d but reference is %dx%d", op,
                       moving->width, moving->height, reference->width, reference->height);
    if (!shift)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    return PV_OK;
}

pv_status pv_phase_correlate(pv_context *ctx, const pv_image *reference, const pv_image *moving,
                             const pv_phasecorr_options *options, pv_shift *shift)
{
    const char *op = "phase_correlate";
    pv_phasecorr_options resolved;
    pv_status status = check_pair2d(ctx, op, reference, moving, shift);
    if (status == PV_OK)
        status = resolve_options(ctx, op, options, &resolved);
    if (status != PV_OK)
        return status;
    data_scan ref_scan = scan_image(reference, pass_threads(ctx));
    data_scan mov_scan = scan_image(moving, pass_threads(ctx));
    status = check_finite(ctx, op, "reference", ref_scan);
    if (status == PV_OK)
        status = check_finite(ctx, op, "moving", mov_scan);
    if (status != PV_OK)
        return status;
    pv_volume ref_view, mov_view;
    float *ref_copy = NULL, *mov_copy = NULL;
    int size[3];
    image_size(reference, size);
    pv_call_begin(ctx);
    status = image_as_volume(ctx, reference, &ref_copy, &ref_view);
    if (status == PV_OK)
        status = image_as_volume(ctx, moving, &mov_copy, &mov_view);
    if (status == PV_OK)
        status = correlate_once(ctx, op, size, 2, &resolved, &ref_view, ref_scan, &mov_view,
                                mov_scan.textured, shift);
    pv_call_end(ctx);
    free(ref_copy);
    free(mov_copy);
    return status;
}

/* ========================================================== public: plans */

/* The checks both plan constructors share, after their reference check. */
static pv_status check_plan_args(pv_context *ctx, const char *op,
                                 const pv_phasecorr_options *options, int max_batch,
                                 pv_phasecorr_plan **plan, pv_phasecorr_options *resolved)
{
    pv_status status = resolve_options(ctx, op, options, resolved);
    if (status == PV_OK)
        status = check_batch(ctx, op, max_batch);
    if (status == PV_OK && !plan)
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: plan is NULL", op);
    return status;
}

/* A plan of `dims` dimensions around a reference already viewed as a volume. */
static pv_status build_plan(pv_context *ctx, const char *op, const int size[3], int dims,
                            const pv_phasecorr_options *resolved, int max_batch,
                            const pv_volume *reference, data_scan scan, pv_phasecorr_plan **plan)
{
    pv_phasecorr_plan *made = NULL;
    pv_status status = plan_new(ctx, op, size, dims, resolved, max_batch, 0, &made);
    if (status == PV_OK)
        status = plan_reference(made, reference, scan);
    if (status != PV_OK) {
        plan_free(made);
        return status;
    }
    *plan = made;
    return PV_OK;
}

pv_status pv_phasecorr_plan_create3d(pv_context *ctx, const pv_volume *reference,
                                     const pv_phasecorr_options *options, int max_batch,
                                     pv_phasecorr_plan **plan)
{
    const char *op = "phasecorr_plan_create3d";
    pv_phasecorr_options resolved;
    pv_status status = check_ctx(ctx, op);
    if (status == PV_OK)
        status = check_volume_arg(ctx, op, "reference", reference);
    if (status == PV_OK)
        status = check_correlation_width(ctx, op, "reference", reference->nx);
    if (status == PV_OK)
        status = check_plan_args(ctx, op, options, max_batch, plan, &resolved);
    if (status != PV_OK)
        return status;
    data_scan scan = scan_volume(reference, pass_threads(ctx));
    status = check_finite(ctx, op, "reference", scan);
    if (status != PV_OK)
        return status;
    int size[3];
    volume_size(reference, size);
    pv_call_begin(ctx);
    status = build_plan(ctx, op, size, 3, &resolved, max_batch, reference, scan, plan);
    pv_call_end(ctx);
    return status;
}

pv_status pv_phasecorr_plan_create(pv_context *ctx, const pv_image *reference,
                                   const pv_phasecorr_options *options, int max_batch,
                                   pv_phasecorr_plan **plan)
{
    const char *op = "phasecorr_plan_create";
    pv_phasecorr_options resolved;
    pv_status status = check_ctx(ctx, op);
    if (status == PV_OK)
        status = check_image_arg(ctx, op, "reference", reference);
    if (status == PV_OK)
        status = check_correlation_width(ctx, op, "reference", reference->width);
    if (status == PV_OK)
        status = check_plan_args(ctx, op, options, max_batch, plan, &resolved);
    if (status != PV_OK)
        return status;
    data_scan scan = scan_image(reference, pass_threads(ctx));
    status = check_finite(ctx, op, "reference", scan);
    if (status != PV_OK)
        return status;
    int size[3];
    image_size(reference, size);
    pv_volume view;
    float *copy = NULL;
    pv_call_begin(ctx);
    status = image_as_volume(ctx, reference, &copy, &view);
    if (status == PV_OK)
        status = build_plan(ctx, op, size, 2, &resolved, max_batch, &view, scan, plan);
    pv_call_end(ctx);
    free(copy);
    return status;
}

void pv_phasecorr_plan_destroy(pv_phasecorr_plan *plan)
{
    pv_context *ctx = plan ? plan->ctx : NULL;
    pv_context_lock(ctx); /* a shared context's device state */
    plan_free(plan);
    pv_context_unlock(ctx);
}

pv_status pv_phasecorr_plan_fft_size(const pv_phasecorr_plan *plan, int size[3])
{
    if (!plan || !size)
        return pv_fail(NULL, PV_ERR_INVALID, "phasecorr_plan_fft_size: plan or size is NULL");
    memcpy(size, plan->geometry.fft, sizeof plan->geometry.fft);
    return PV_OK;
}

pv_status pv_phasecorr_plan_time_fft(pv_phasecorr_plan *plan)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "phasecorr_plan_time_fft: plan is NULL");
    pv_context *ctx = plan->ctx;
    pv_call_begin(ctx);
    pv_status status = ctx->ops->reg->pc_time_fft(ctx, plan->backend);
    pv_call_end(ctx);
    return status;
}

static pv_status check_plan(const char *op, const pv_phasecorr_plan *plan, int dims)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (plan->dims != dims)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: the plan was made for %dD %s", op,
                       plan->dims, plan->dims == 2 ? "images" : "volumes");
    return PV_OK;
}

/* The volume's size against the plan's, and its values (the scan is kept
 * in *scan, so no input is read twice). */
static pv_status check_plan_volume(const pv_phasecorr_plan *plan, const char *op,
                                   const char *name, const pv_volume *volume, data_scan *scan)
{
    pv_status status = check_volume_arg(plan->ctx, op, name, volume);
    if (status != PV_OK)
        return status;
    const int *n = plan->geometry.size;
    if (volume->nx != n[0] || volume->ny != n[1] || volume->nz != n[2])
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: %s is %dx%dx%d but the plan's is %dx%dx%d",
                       op, name, volume->nx, volume->ny, volume->nz, n[0], n[1], n[2]);
    *scan = scan_volume(volume, pass_threads(plan->ctx));
    return check_finite(plan->ctx, op, name, *scan);
}

static pv_status check_plan_image(const pv_phasecorr_plan *plan, const char *op,
                                  const char *name, const pv_image *image, data_scan *scan)
{
    pv_status status = check_image_arg(plan->ctx, op, name, image);
    if (status != PV_OK)
        return status;
    const int *n = plan->geometry.size;
    if (image->width != n[0] || image->height != n[1])
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: %s is %dx%d but the plan's is %dx%d", op,
                       name, image->width, image->height, n[0], n[1]);
    *scan = scan_image(image, pass_threads(plan->ctx));
    return check_finite(plan->ctx, op, name, *scan);
}

pv_status pv_phasecorr_plan_set_reference3d(pv_phasecorr_plan *plan, const pv_volume *reference)
{
    const char *op = "phasecorr_plan_set_reference3d";
    data_scan scan;
    pv_status status = check_plan(op, plan, 3);
    if (status == PV_OK)
        status = check_plan_volume(plan, op, "reference", reference, &scan);
    if (status != PV_OK)
        return status;
    pv_call_begin(plan->ctx);
    status = plan_reference(plan, reference, scan);
    pv_call_end(plan->ctx);
    return status;
}

pv_status pv_phasecorr_plan_set_reference(pv_phasecorr_plan *plan, const pv_image *reference)
{
    const char *op = "phasecorr_plan_set_reference";
    data_scan scan;
    pv_status status = check_plan(op, plan, 2);
    if (status == PV_OK)
        status = check_plan_image(plan, op, "reference", reference, &scan);
    if (status != PV_OK)
        return status;
    pv_volume view;
    float *copy = NULL;
    pv_call_begin(plan->ctx);
    status = image_as_volume(plan->ctx, reference, &copy, &view);
    if (status == PV_OK)
        status = plan_reference(plan, &view, scan);
    pv_call_end(plan->ctx);
    free(copy);
    return status;
}

static pv_status check_movers(const char *op, const pv_phasecorr_plan *plan, const void *movers,
                              int count, const pv_shift *shifts)
{
    if (!movers || !shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: movers or shifts is NULL", op);
    if (count < 1)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: count %d < 1", op, count);
    return PV_OK;
}

/* What the shared mover loop needs to know of 2D or 3D movers: their
 * size in the array, their check, and how a chunk of them is correlated. */
typedef struct mover_kind {
    int dims;
    size_t size;
    pv_status (*scan)(const pv_phasecorr_plan *plan, const char *op, const void *mover,
                      data_scan *scan);
    pv_status (*chunk)(pv_phasecorr_plan *plan, const void *movers, const int *textured,
                       int count, pv_shift *shifts);
} mover_kind;

/* Check every mover first (nothing runs on a bad one), then correlate
 * them in chunks of the plan's batch. */
static pv_status correlate_movers(pv_phasecorr_plan *plan, const char *op, const mover_kind *kind,
                                  const void *movers, int count, pv_shift *shifts)
{
    pv_status status = check_plan(op, plan, kind->dims);
    if (status == PV_OK)
        status = check_movers(op, plan, movers, count, shifts);
    if (status != PV_OK)
        return status;
    int *textured = malloc((size_t)count * sizeof *textured);
    if (!textured)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    const char *bytes = movers;
    for (int i = 0; status == PV_OK && i < count; i++) {
        data_scan scan;
        status = kind->scan(plan, op, bytes + (size_t)i * kind->size, &scan);
        textured[i] = scan.textured;
    }
    if (status == PV_OK) {
        pv_call_begin(plan->ctx);
        for (int done = 0; status == PV_OK && done < count; done += plan->geometry.batch) {
            int chunk = count - done < plan->geometry.batch ? count - done : plan->geometry.batch;
            status = kind->chunk(plan, bytes + (size_t)done * kind->size, textured + done, chunk,
                                 shifts + done);
        }
        pv_call_end(plan->ctx);
    }
    free(textured);
    return status;
}

static pv_status check_volume_mover(const pv_phasecorr_plan *plan, const char *op,
                                   const void *mover, data_scan *scan)
{
    return check_plan_volume(plan, op, "a mover", mover, scan);
}

static pv_status check_image_mover(const pv_phasecorr_plan *plan, const char *op,
                                  const void *mover, data_scan *scan)
{
    return check_plan_image(plan, op, "a mover", mover, scan);
}

static pv_status volume_chunk(pv_phasecorr_plan *plan, const void *movers, const int *textured,
                              int count, pv_shift *shifts)
{
    return correlate_chunk(plan, movers, textured, count, shifts);
}

/* One chunk of 2D movers: converted to f32 volume views first. */
static pv_status correlate_images(pv_phasecorr_plan *plan, const void *mover_array,
                                  const int *textured, int count, pv_shift *shifts)
{
    const pv_image *movers = mover_array;
    pv_volume *views = calloc((size_t)count, sizeof *views);
    float **copies = calloc((size_t)count, sizeof *copies);
    pv_status status = views && copies
                           ? PV_OK
                           : pv_fail(plan->ctx, PV_ERR_NOMEM, "phase correlation: out of memory");
    for (int i = 0; status == PV_OK && i < count; i++)
        status = image_as_volume(plan->ctx, &movers[i], &copies[i], &views[i]);
    if (status == PV_OK)
        status = correlate_chunk(plan, views, textured, count, shifts);
    for (int i = 0; copies && i < count; i++)
        free(copies[i]);
    free(views);
    free(copies);
    return status;
}

pv_status pv_phasecorr_plan_correlate3d(pv_phasecorr_plan *plan, const pv_volume *movers,
                                        int count, pv_shift *shifts)
{
    static const mover_kind volumes = {3, sizeof(pv_volume), check_volume_mover, volume_chunk};
    return correlate_movers(plan, "phasecorr_plan_correlate3d", &volumes, movers, count, shifts);
}

pv_status pv_phasecorr_plan_correlate(pv_phasecorr_plan *plan, const pv_image *movers, int count,
                                      pv_shift *shifts)
{
    static const mover_kind images = {2, sizeof(pv_image), check_image_mover, correlate_images};
    return correlate_movers(plan, "phasecorr_plan_correlate", &images, movers, count, shifts);
}

/* ================================================= normalized cross-corr */

typedef struct ncc_stats {
    double mean;
    double deviation;  /* population standard deviation */
} ncc_stats;

static double pixel_at(const pv_image *image, int x, int y)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    return image->type == PV_PIXEL_U8 ? (double)((const uint8_t *)image->data)[i]
                                      : (double)((const float *)image->data)[i];
}

/* Two passes in double: exact enough to tell a constant image (0) apart. */
static ncc_stats image_stats(const pv_image *image)
{
    double sum = 0.0, squares = 0.0, n = (double)image->width * image->height;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            sum += pixel_at(image, x, y);
    ncc_stats stats = {sum / n, 0.0};
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++) {
            double d = pixel_at(image, x, y) - stats.mean;
            squares += d * d;
        }
    stats.deviation = sqrt(squares / n);
    return stats;
}

/* Centred and scaled to unit variance: float integral images then stay
 * small enough for the local variances to keep their digits. */
static pv_status normalized_copy(pv_context *ctx, const pv_image *image, ncc_stats stats,
                                 pv_image *out)
{
    pv_status status = pv_image_alloc(out, image->width, image->height, PV_PIXEL_F32);
    if (status != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2: no memory for a %dx%d copy", image->width,
                       image->height);
    float *data = out->data;
    double scale = 1.0 / stats.deviation;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            data[(size_t)y * image->width + x] =
                (float)((pixel_at(image, x, y) - stats.mean) * scale);
    return PV_OK;
}

static int image_is_finite(const pv_context *ctx, const pv_image *image)
{
    return scan_image(image, pass_threads(ctx)).finite;
}

static pv_status check_ncc_output(pv_context *ctx, const pv_image *templ, const pv_image *image,
                                  const pv_image *out, int map_w, int map_h)
{
    if (!pv_image_is_valid(out) || out->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: out is not a valid f32 image");
    if (out->width != map_w || out->height != map_h)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: out is %dx%d but the map is %dx%d",
                       out->width, out->height, map_w, map_h);
    if (pv_images_overlap(out, templ) || pv_images_overlap(out, image))
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: out shares memory with an input");
    return PV_OK;
}

static pv_status check_ncc(pv_context *ctx, const pv_image *templ, const pv_image *image,
                           int min_overlap, const pv_image *out, const pv_ncc_result *result)
{
    const char *op = "normxcorr2";
    pv_status status = check_ctx(ctx, op);
    if (status == PV_OK)
        status = check_image_arg(ctx, op, "templ", templ);
    if (status == PV_OK)
        status = check_image_arg(ctx, op, "image", image);
    if (status != PV_OK)
        return status;
    if (!out && !result)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: out and result are both NULL");
    if (min_overlap < 0)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: min_overlap %d < 0", min_overlap);
    long long map_w = (long long)image->width + templ->width - 1;
    long long map_h = (long long)image->height + templ->height - 1;
    size_t points;
    if (map_w > INT_MAX || map_h > INT_MAX || !pv_size_mul((size_t)map_w, (size_t)map_h, &points) ||
        points > PV_PC_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: a %lldx%lld map is too large", map_w,
                       map_h);
    if (out && (status = check_ncc_output(ctx, templ, image, out, (int)map_w, (int)map_h)) != PV_OK)
        return status;
    if (!image_is_finite(ctx, templ) || !image_is_finite(ctx, image))
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: templ or image contains NaN or Inf");
    return PV_OK;
}

/* The float rounding of an integral image over n unit-variance values is
 * about n * FLT_EPSILON; variances below a margin over it are noise. */
static float variance_floor(const pv_image *image)
{
    return (float)(64.0 * FLT_EPSILON * (double)image->width * image->height);
}

static void zero_map(pv_image *map)
{
    for (int y = 0; y < map->height; y++)
        memset((float *)map->data + (ptrdiff_t)y * map->stride, 0,
               (size_t)map->width * sizeof(float));
}

static float map_at(const pv_image *map, int x, int y)
{
    return ((const float *)map->data)[(ptrdiff_t)y * map->stride + x];
}

static void ncc_peak(const pv_image *map, int templ_w, int templ_h, pv_ncc_result *result)
{
    int bx = 0, by = 0;
    for (int y = 0; y < map->height; y++)
        for (int x = 0; x < map->width; x++)
            if (map_at(map, x, y) > map_at(map, bx, by)) {
                bx = x;
                by = y;
            }
    float best = map_at(map, bx, by);
    result->x = bx - (templ_w - 1);
    result->y = by - (templ_h - 1);
    result->coefficient = best;
    result->sub_x = result->x;
    result->sub_y = result->y;
    result->flags = 0;
    if (bx == 0 || by == 0 || bx == map->width - 1 || by == map->height - 1) {
        result->flags |= PV_REGISTER_AT_EDGE;
        return;
    }
    result->sub_x += parabola_vertex(map_at(map, bx - 1, by), best, map_at(map, bx + 1, by));
    result->sub_y += parabola_vertex(map_at(map, bx, by - 1), best, map_at(map, bx, by + 1));
}

static double map_abs_diff(const pv_image *a, const pv_image *b)
{
    double worst = 0.0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++) {
            double d = fabs((double)map_at(a, x, y) - (double)map_at(b, x, y));
            if (!(d <= worst))
                worst = isnan(d) ? INFINITY : d;
        }
    return worst;
}

static pv_status crosscheck_ncc(pv_context *ctx, const pv_ncc_job *job, const pv_image *map)
{
    pv_image ref;
    if (pv_image_alloc_like(&ref, map, PV_PIXEL_F32) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2 cross-check: no memory for the CPU map");
    pv_timing saved = ctx->timing;
    pv_status status = pv_cpu_backend.reg->normxcorr2(ctx, job, &ref);
    ctx->timing = saved;
    double error = status == PV_OK ? map_abs_diff(map, &ref) : 0.0;
    if (status == PV_OK && !(error <= PV_NCC_TOLERANCE))
        status = pv_fail(ctx, PV_ERR_MISMATCH, "normxcorr2 cross-check: max |difference| %g > %g",
                         error, PV_NCC_TOLERANCE);
    pv_image_free(&ref);
    return status;
}

static pv_status prepare_ncc_job(pv_context *ctx, const pv_image *templ, const pv_image *image,
                                 ncc_stats t_stats, ncc_stats i_stats, int min_overlap,
                                 pv_ncc_job *job)
{
    memset(job, 0, sizeof *job);
    job->min_overlap = min_overlap;
    job->fft[0] = fft_friendly_size(image->width + templ->width - 1);
    job->fft[1] = fft_friendly_size(image->height + templ->height - 1);
    size_t points;
    if (!job->fft[0] || !job->fft[1] ||
        !pv_size_mul((size_t)job->fft[0], (size_t)job->fft[1], &points) ||
        points > PV_PC_MAX_POINTS)
        return pv_fail(ctx, PV_ERR_INVALID, "normxcorr2: the padded transform is too large");
    job->templ_floor = variance_floor(templ);
    job->image_floor = variance_floor(image);
    pv_status status = normalized_copy(ctx, templ, t_stats, &job->templ);
    if (status == PV_OK)
        status = normalized_copy(ctx, image, i_stats, &job->image);
    return status;
}

static pv_status run_ncc(pv_context *ctx, const pv_image *templ, const pv_image *image,
                         int min_overlap, pv_image *map, pv_ncc_result *result)
{
    ncc_stats t_stats = image_stats(templ), i_stats = image_stats(image);
    pv_ncc_result found;
    if (!(t_stats.deviation > 0.0) || !(i_stats.deviation > 0.0)) {
        zero_map(map);
        memset(&found, 0, sizeof found);
        found.flags = PV_REGISTER_NO_TEXTURE;
        if (result)
            *result = found;
        return PV_OK;
    }
    pv_ncc_job job;
    pv_status status = prepare_ncc_job(ctx, templ, image, t_stats, i_stats, min_overlap, &job);
    if (status == PV_OK)
        status = ctx->ops->reg->normxcorr2(ctx, &job, map);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_ncc(ctx, &job, map);
    pv_image_free(&job.templ);
    pv_image_free(&job.image);
    if (status == PV_OK && result) {
        ncc_peak(map, templ->width, templ->height, &found);
        *result = found;
    }
    return status;
}

pv_status pv_normxcorr2(pv_context *ctx, const pv_image *templ, const pv_image *image,
                        int min_overlap, pv_image *out, pv_ncc_result *result)
{
    pv_status status = check_ncc(ctx, templ, image, min_overlap, out, result);
    if (status != PV_OK)
        return status;
    pv_image scratch = {0, 0, 0, PV_PIXEL_F32, NULL};
    pv_image *map = out;
    if (!map) {
        status = pv_image_alloc(&scratch, image->width + templ->width - 1,
                                image->height + templ->height - 1, PV_PIXEL_F32);
        if (status != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2: no memory for the map");
        map = &scratch;
    }
    pv_call_begin(ctx);
    status = run_ncc(ctx, templ, image, min_overlap, map, result);
    pv_call_end(ctx);
    pv_image_free(&scratch);
    return status;
}
