/* CPU reference SAD block matching: the oracle for kernels/stereo.cl.
 *
 * cost(x, y, d) is built as the OpenCL kernel builds it: column sums of
 * |ref - other| over the window's rows first, then the sum of 2r + 1 column
 * sums.  u8 costs are integers, so running (sliding) sums are exact and both
 * backends agree to the bit.  f32 sums are taken directly, in the kernel's
 * order (rows top to bottom, then columns left to right, from 0), so they
 * round identically too.
 *
 * Candidates are scanned in increasing d and folded into a small per-pixel
 * state with the same rules as the kernel (sad_state below), which yields
 * the winner (ties: smaller d), the costs beside it for the sub-pixel
 * parabola, and the best cost outside d-1..d+1 for the uniqueness test.
 * Plain matching (neither option) keeps only the winner.
 *
 * The right-reference map of the left-right check is the same matching on
 * mirrored images: flipping both images turns "right pixel xr matches left
 * xr + d" into "reference pixel matches other pixel - d".  Everything that
 * can fail is allocated before the output is written. */
#include "../cpu.h"
#include "stereo_sgm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Padded copies of the two images: reference columns -r .. width + r, other
 * columns wide enough for every disparity, so the loops need no clamping.
 * u8 pixels are kept as int32 (exact sums), f32 as float. */
typedef struct sad_images {
    int is_u8;
    int width, height, radius;
    int min_disp, ndisp;
    size_t ref_pitch;  /* width + 2r */
    size_t oth_pitch;  /* width + 2r + ndisp - 1 */
    int32_t *ref_i, *oth_i;
    float *ref_f, *oth_f;
} sad_images;

/* The fold of one pixel's candidates (backends/common/sad_fold.h, one text
 * with the kernel's).  Costs are doubles holding exact u8 sums or f32
 * values, so comparisons match the kernel's uint / float comparisons; the
 * CPU keeps the full state always (plain matching has its own fold). */
typedef double cost_t;
#define COST_NONE INFINITY
#define SAD_FULL_STATE 1
#include "../../common/sad_fold.h"

/* Per-band scratch, allocated for all bands before matching starts. */
typedef struct sad_work {
    int32_t *colsums_i;        /* u8: ndisp rows of column sums, slid down the band */
    float *colsums_f;          /* f32: the column sums of one candidate */
    uint32_t *costs_u;         /* u8: window costs of one candidate (exact) */
    float *costs_f;            /* f32: window costs of one candidate */
    sad_state *states;         /* one row's folds (sub-pixel or uniqueness) */
    uint32_t *best_u;          /* plain matching: one row's winning u8 costs ... */
    float *best_f;             /* ... or f32 costs ... */
    int *index;                /* ... and candidates (-1: none) */
} sad_work;

typedef struct sad_pass {
    int flip;          /* mirrored images: the right-reference map */
    float uniqueness;
    int subpixel;
    float *out;
    ptrdiff_t stride;
} sad_pass;

/* Without sub-pixel and uniqueness only the winner matters: a cheaper fold. */
static int pass_is_plain(const sad_pass *pass)
{
    return !pass->subpixel && !(pass->uniqueness > 0.0f);
}

/* --------------------------------------------------------------- the fold */

static int state_unique(const sad_state *s, float uniqueness)
{
    float second = (float)cost_min(s->below, s->above);
    return !(second < (float)s->best * (1.0f + uniqueness));
}

/* Vertex of the parabola through (d-1, minus), (d, best), (d+1, plus).
 * minus > best (a tie would have gone to d-1) and plus >= best, so the
 * denominator is positive.  The differences round as the kernel's do: u8
 * integers exactly, then to float; f32 values in float. */
static float parabola_offset(const sad_state *s, int is_u8)
{
    float a = is_u8 ? (float)(s->minus - s->best) : (float)s->minus - (float)s->best;
    float b = is_u8 ? (float)(s->plus - s->best) : (float)s->plus - (float)s->best;
    return (a - b) / (2.0f * (a + b));
}

static float state_result(const sad_state *s, int min_disp, int is_u8, const sad_pass *pass)
{
    if (s->index < 0)
        return INFINITY;
    if (pass->uniqueness > 0.0f && !state_unique(s, pass->uniqueness))
        return INFINITY;
    float d = (float)(min_disp + s->index);
    if (pass->subpixel && s->minus < INFINITY && s->plus < INFINITY)
        d += parabola_offset(s, is_u8);
    return d;
}

/* ------------------------------------------------------------ padded copies */

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static float pixel_at(const pv_image *image, int x, int y)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    if (image->type == PV_PIXEL_U8)
        return (float)((const uint8_t *)image->data)[i];
    return ((const float *)image->data)[i];
}

/* Row y of `image`, columns first .. first + count - 1, clamped, mirrored
 * when flip. */
static void pad_row(const pv_image *image, int y, int flip, int first, size_t count, int32_t *dst_i,
                    float *dst_f)
{
    const int last = image->width - 1;
    for (size_t i = 0; i < count; i++) {
        int x = clamp_int(first + (int)i, 0, last);
        float v = pixel_at(image, flip ? last - x : x, y);
        if (dst_i)
            dst_i[i] = (int32_t)v;
        else
            dst_f[i] = v;
    }
}

static void fill_padded(sad_images *im, const pv_image *ref, const pv_image *oth, int flip)
{
    const int max_disp = im->min_disp + im->ndisp - 1;
    for (int y = 0; y < im->height; y++) {
        size_t r = (size_t)y * im->ref_pitch, o = (size_t)y * im->oth_pitch;
        if (im->is_u8) {
            pad_row(ref, y, flip, -im->radius, im->ref_pitch, im->ref_i + r, NULL);
            pad_row(oth, y, flip, -im->radius - max_disp, im->oth_pitch, im->oth_i + o, NULL);
        } else {
            pad_row(ref, y, flip, -im->radius, im->ref_pitch, NULL, im->ref_f + r);
            pad_row(oth, y, flip, -im->radius - max_disp, im->oth_pitch, NULL, im->oth_f + o);
        }
    }
}

static void *alloc_array(size_t a, size_t b, size_t size)
{
    size_t count, bytes;
    if (!pv_size_mul(a, b, &count) || !pv_size_mul(count, size, &bytes))
        return NULL;
    return malloc(bytes ? bytes : 1);
}

static void free_images(sad_images *im)
{
    free(im->ref_i);
    free(im->oth_i);
    free(im->ref_f);
    free(im->oth_f);
}

static pv_status alloc_images(pv_context *ctx, sad_images *im, const pv_image *left,
                              const pv_sad_params *params)
{
    memset(im, 0, sizeof *im);
    im->is_u8 = left->type == PV_PIXEL_U8;
    im->width = left->width;
    im->height = left->height;
    im->radius = params->window / 2;
    im->min_disp = params->min_disp;
    im->ndisp = params->ndisp;
    im->ref_pitch = (size_t)im->width + 2 * (size_t)im->radius;
    im->oth_pitch = im->ref_pitch + (size_t)im->ndisp - 1;
    const size_t rows = (size_t)im->height;
    if (im->is_u8) {
        im->ref_i = alloc_array(rows, im->ref_pitch, sizeof(int32_t));
        im->oth_i = alloc_array(rows, im->oth_pitch, sizeof(int32_t));
    } else {
        im->ref_f = alloc_array(rows, im->ref_pitch, sizeof(float));
        im->oth_f = alloc_array(rows, im->oth_pitch, sizeof(float));
    }
    if (im->is_u8 ? im->ref_i && im->oth_i : im->ref_f && im->oth_f)
        return PV_OK;
    free_images(im);
    return pv_fail(ctx, PV_ERR_NOMEM, "stereo_sad: no memory for padded copies of the images");
}

/* ------------------------------------------------------------ column sums */

static size_t colsum_count(const sad_images *im)
{
    return im->ref_pitch;
}

/* Offset of the other image's column u - d from the reference column u in
 * the padded rows, for candidate k (d = min_disp + k). */
static size_t other_shift(const sad_images *im, int k)
{
    return (size_t)(im->ndisp - 1 - k);
}

static int window_row(const sad_images *im, int y)
{
    return clamp_int(y, 0, im->height - 1);
}

/* Column sums of row y for candidate k, summed afresh over the window's
 * rows (top to bottom, from 0: the kernel's order).  One text for both
 * pixel types: T is the padded copies' element type, ref/oth their arrays
 * in sad_images, ABS its absolute value.  u8 uses it for a band's first
 * row and slides from there; f32 for every row. */
#define DEFINE_COLSUMS_DIRECT(NAME, T, REF, OTH, ABS)                                     \
    static void NAME(const sad_images *im, int y, int k, T *cs)                           \
    {                                                                                     \
        const size_t n = colsum_count(im), shift = other_shift(im, k);                   \
        memset(cs, 0, n * sizeof *cs);                                                    \
        for (int j = -im->radius; j <= im->radius; j++) {                                \
            const size_t row = (size_t)window_row(im, y + j);                            \
            const T *ref = im->REF + row * im->ref_pitch;                                 \
            const T *oth = im->OTH + row * im->oth_pitch + shift;                         \
            _Pragma("omp simd")                                                           \
            for (size_t u = 0; u < n; u++)                                                \
                cs[u] += ABS(ref[u] - oth[u]);                                            \
        }                                                                                 \
    }
DEFINE_COLSUMS_DIRECT(colsums_u8_direct, int32_t, ref_i, oth_i, abs)
DEFINE_COLSUMS_DIRECT(colsums_f32, float, ref_f, oth_f, fabsf)

/* Column sums of row y from those of row y - 1: one row enters, one leaves. */
static void colsums_u8_slide(const sad_images *im, int y, int k, int32_t *cs)
{
    const size_t n = colsum_count(im), shift = other_shift(im, k);
    const size_t in = (size_t)window_row(im, y + im->radius);
    const size_t out = (size_t)window_row(im, y - im->radius - 1);
    const int32_t *ref_in = im->ref_i + in * im->ref_pitch;
    const int32_t *oth_in = im->oth_i + in * im->oth_pitch + shift;
    const int32_t *ref_out = im->ref_i + out * im->ref_pitch;
    const int32_t *oth_out = im->oth_i + out * im->oth_pitch + shift;
    #pragma omp simd
    for (size_t u = 0; u < n; u++)
        cs[u] += abs(ref_in[u] - oth_in[u]) - abs(ref_out[u] - oth_out[u]);
}

/* Window sums slid along the row; uint32 wraps in between but every true
 * sum is below 2^32 (the front end keeps u8 windows <= 4095). */
static void costs_u8(const sad_images *im, const int32_t *cs, uint32_t *costs)
{
    const int taps = 2 * im->radius + 1;
    uint32_t sum = 0;
    for (int i = 0; i < taps; i++)
        sum += (uint32_t)cs[i];
    costs[0] = sum;
    for (int x = 1; x < im->width; x++) {
        sum += (uint32_t)cs[x - 1 + taps] - (uint32_t)cs[x - 1];
        costs[x] = sum;
    }
}

static void costs_f32(const sad_images *im, const float *cs, float *costs)
{
    const int taps = 2 * im->radius + 1;
    for (int x = 0; x < im->width; x++)
        costs[x] = 0.0f;
    for (int i = 0; i < taps; i++) {
        #pragma omp simd
        for (int x = 0; x < im->width; x++)
            costs[x] += cs[x + i];
    }
}

/* Window costs of candidate k for row y (costs_u or costs_f).  u8 column
 * sums slide down the band from its first row. */
static void row_costs(const sad_images *im, int y, int first_row, int k, sad_work *work)
{
    if (im->is_u8) {
        int32_t *cs = work->colsums_i + (size_t)k * colsum_count(im);
        if (y == first_row)
            colsums_u8_direct(im, y, k, cs);
        else
            colsums_u8_slide(im, y, k, cs);
        costs_u8(im, cs, work->costs_u);
    } else {
        colsums_f32(im, y, k, work->colsums_f);
        costs_f32(im, work->colsums_f, work->costs_f);
    }
}

/* ---------------------------------------------------------------- matching */

/* Pixels x in [*lo, *hi) have their match column x - d inside the image;
 * the others see candidate k as no candidate. */
static void candidate_columns(const sad_images *im, int k, int *lo, int *hi)
{
    const int d = im->min_disp + k;
    *lo = d > 0 ? d : 0;
    *hi = d < 0 ? im->width + d : im->width;
}

static void fold_full(const sad_images *im, int k, sad_work *work)
{
    int lo, hi;
    candidate_columns(im, k, &lo, &hi);
    for (int x = 0; x < im->width; x++) {
        double cost = INFINITY;
        if (x >= lo && x < hi)
            cost = im->is_u8 ? (double)work->costs_u[x] : (double)work->costs_f[x];
        state_add(&work->states[x], cost, k);
    }
}

/* The plain fold (winner only) of one candidate's window costs, for both
 * cost types (T: uint32_t or float): no candidate never wins, so it needs
 * no visit, and the rest is branch-free so that it vectorises. */
#define DEFINE_FOLD_PLAIN(NAME, T)                                                        \
    static void NAME(const T *costs, T *best, int *index, int k, int lo, int hi)          \
    {                                                                                     \
        _Pragma("omp simd")                                                               \
        for (int x = lo; x < hi; x++) {                                                   \
            int better = costs[x] < best[x];                                              \
            best[x] = better ? costs[x] : best[x];                                        \
            index[x] = better ? k : index[x];                                             \
        }                                                                                 \
    }
DEFINE_FOLD_PLAIN(fold_plain_u8, uint32_t)
DEFINE_FOLD_PLAIN(fold_plain_f32, float)

static void fold_plain(const sad_images *im, int k, sad_work *work)
{
    int lo, hi;
    candidate_columns(im, k, &lo, &hi);
    if (im->is_u8)
        fold_plain_u8(work->costs_u, work->best_u, work->index, k, lo, hi);
    else
        fold_plain_f32(work->costs_f, work->best_f, work->index, k, lo, hi);
}

static void reset_row(const sad_images *im, const sad_pass *pass, sad_work *work)
{
    for (int x = 0; x < im->width; x++) {
        if (!pass_is_plain(pass))
            state_reset(&work->states[x]);
        else if (im->is_u8)
            work->best_u[x] = UINT32_MAX;
        else
            work->best_f[x] = INFINITY;
        work->index[x] = -1;
    }
}

static void write_row(const sad_images *im, const sad_pass *pass, int y, const sad_work *work)
{
    float *out = pass->out + (ptrdiff_t)y * pass->stride;
    for (int x = 0; x < im->width; x++) {
        int column = pass->flip ? im->width - 1 - x : x;
        if (!pass_is_plain(pass))
            out[column] = state_result(&work->states[x], im->min_disp, im->is_u8, pass);
        else if (work->index[x] < 0)
            out[column] = INFINITY;
        else
            out[column] = (float)(im->min_disp + work->index[x]);
    }
}

static void match_rows(const sad_images *im, const sad_pass *pass, int y0, int y1, sad_work *work)
{
    const int plain = pass_is_plain(pass);
    for (int y = y0; y < y1; y++) {
        reset_row(im, pass, work);
        for (int k = 0; k < im->ndisp; k++) {
            row_costs(im, y, y0, k, work);
            if (plain)
                fold_plain(im, k, work);
            else
                fold_full(im, k, work);
        }
        write_row(im, pass, y, work);
    }
}

static void free_work(sad_work *work, int count)
{
    for (int i = 0; work && i < count; i++) {
        free(work[i].colsums_i);
        free(work[i].colsums_f);
        free(work[i].costs_u);
        free(work[i].costs_f);
        free(work[i].states);
        free(work[i].best_u);
        free(work[i].best_f);
        free(work[i].index);
    }
    free(work);
}

static int alloc_band_work(const sad_images *im, sad_work *w)
{
    const size_t width = (size_t)im->width;
    int ok;
    if (im->is_u8) {
        w->colsums_i = alloc_array((size_t)im->ndisp, colsum_count(im), sizeof(int32_t));
        w->costs_u = alloc_array(1, width, sizeof(uint32_t));
        w->best_u = alloc_array(1, width, sizeof(uint32_t));
        ok = w->colsums_i && w->costs_u && w->best_u;
    } else {
        w->colsums_f = alloc_array(1, colsum_count(im), sizeof(float));
        w->costs_f = alloc_array(1, width, sizeof(float));
        w->best_f = alloc_array(1, width, sizeof(float));
        ok = w->colsums_f && w->costs_f && w->best_f;
    }
    w->states = alloc_array(1, width, sizeof(sad_state));
    w->index = alloc_array(1, width, sizeof(int));
    return ok && w->states && w->index;
}

static pv_status alloc_work(pv_context *ctx, const sad_images *im, int bands, sad_work **out)
{
    sad_work *work = calloc((size_t)bands, sizeof *work);
    int ok = work != NULL;
    for (int i = 0; ok && i < bands; i++)
        ok = alloc_band_work(im, &work[i]);
    if (!ok) {
        free_work(work, bands);
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_sad: no memory for per-thread cost rows");
    }
    *out = work;
    return PV_OK;
}

/* Bands of consecutive rows, one per thread, so the u8 column sums slide;
 * a band's result does not depend on the thread count. */
static void match_image(const sad_images *im, const sad_pass *pass, sad_work *work, int bands)
{
    #pragma omp parallel for num_threads(bands) schedule(static, 1)
    for (int b = 0; b < bands; b++) {
        int y0 = (int)((long long)im->height * b / bands);
        int y1 = (int)((long long)im->height * (b + 1) / bands);
        match_rows(im, pass, y0, y1, &work[b]);
    }
}

/* Invalidate left pixels whose match in the right map disagrees. */
static void lr_check(pv_image *disparity, const float *right_map, float max_diff)
{
    const int width = disparity->width;
    for (int y = 0; y < disparity->height; y++) {
        float *row = (float *)disparity->data + (ptrdiff_t)y * disparity->stride;
        const float *right = right_map + (size_t)y * (size_t)width;
        for (int x = 0; x < width; x++) {
            if (!isfinite(row[x]))
                continue;
            int xr = x - (int)roundf(row[x]);
            if (xr < 0 || xr >= width || !(fabsf(row[x] - right[xr]) <= max_diff))
                row[x] = INFINITY;
        }
    }
}

static int band_count(const pv_context *ctx, int height)
{
    int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    return threads < height ? threads : height;
}

static pv_status pv_cpu_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                            const pv_sad_params *params, pv_image *disparity)
{
    sad_images im;
    pv_status status = alloc_images(ctx, &im, left, params);
    if (status != PV_OK)
        return status;
    const int bands = band_count(ctx, left->height);
    sad_work *work = NULL;
    float *right_map = NULL;
    status = alloc_work(ctx, &im, bands, &work);
    if (status == PV_OK && params->lr_check) {
        right_map = alloc_array((size_t)left->width, (size_t)left->height, sizeof(float));
        if (!right_map)
            status = pv_fail(ctx, PV_ERR_NOMEM,
                             "stereo_sad: no memory for the right disparity map");
    }
    if (status == PV_OK) {
        sad_pass pass = {0, params->uniqueness, params->subpixel != 0, disparity->data,
                         disparity->stride};
        fill_padded(&im, left, right, 0);
        match_image(&im, &pass, work, bands);
        if (params->lr_check) {
            sad_pass mirrored = {1, 0.0f, params->subpixel != 0, right_map, left->width};
            fill_padded(&im, right, left, 1);
            match_image(&im, &mirrored, work, bands);
            lr_check(disparity, right_map, params->lr_max_diff);
        }
    }
    free(right_map);
    free_work(work, bands);
    free_images(&im);
    return status;
}

/* Many small pairs: a loop of single calls (each spreads over the cores). */
static pv_status pv_cpu_stereo_sad_batch(pv_context *ctx, const pv_image *lefts,
                                         const pv_image *rights, int count,
                                         const pv_sad_params *params, pv_image *disparities)
{
    pv_status status = pv_progress_report(ctx, "stereo_sad_batch", 0.0, count);
    for (int i = 0; i < count && status == PV_OK; i++) {
        status = pv_cpu_stereo_sad(ctx, &lefts[i], &rights[i], params, &disparities[i]);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "stereo_sad_batch", i + 1.0, count);
    }
    return status;
}

/* Semi-global matching lives in stereo_sgm.c. */
static pv_status pv_cpu_stereo_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                                   const pv_sgm_params *params, pv_image *disparity,
                                   pv_image *confidence)
{
    return pv_cpu_sgm(ctx, left, right, params, disparity, confidence);
}

/* A stream of pairs is a loop of single calls: each call already spreads
 * its work over the cores, and there are no transfers to hide. */
static pv_status pv_cpu_stereo_sgm_batch(pv_context *ctx, const pv_image *lefts,
                                         const pv_image *rights, int count,
                                         const pv_sgm_params *params, pv_image *disparities,
                                         pv_image *confidences)
{
    pv_status status = pv_progress_report(ctx, "stereo_sgm_batch", 0.0, count);
    for (int i = 0; i < count && status == PV_OK; i++) {
        status = pv_cpu_sgm(ctx, &lefts[i], &rights[i], params, &disparities[i],
                            confidences ? &confidences[i] : NULL);
        if (status == PV_OK)
            status = pv_progress_report(ctx, "stereo_sgm_batch", i + 1.0, count);
    }
    return status;
}

const pv_stereo_ops pv_cpu_stereo_ops = {PV_STEREO_SLOTS(PV_OPS_BIND, pv_cpu_stereo_)};
