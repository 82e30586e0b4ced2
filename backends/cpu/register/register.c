/* CPU reference of the register module: phase correlation on a plan with a
 * cached unit-phase reference spectrum, the upsampled-DFT evaluation,
 * masked phase correlation (six FFT correlations and the score of
 * backends/common/masked_ncc.h), normxcorr2 with integral images and
 * an FFT cross term (one image, or a batch of them); masked normxcorr2
 * (direct sums) is in ncc_masked.c.
 *
 * The float arithmetic mirrors backends/opencl/kernels/register.cl step for
 * step (same formulas, same operand order), so the backends differ only by
 * the FFT libraries' rounding and, for NCC, by the order of the row scans. */
#include "../cpu.h"
#include "../fft.h"
#include "ncc_masked.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct cpu_pc_plan {
    pv_pc_geometry g;
    pv_cpu_fft *fft;
    size_t real_count;      /* P: points of the transform grid */
    size_t complex_count;   /* K: points of the half spectrum */
    float scale;            /* 1 / (non-empty reference bins): identical inputs peak at 1 */
    float *reference;       /* unit-phase reference spectrum */
    float *real;            /* padded input, then the correlation map */
    float *spectrum;
    float *kept;            /* keep_spectra: each batch slot's cross-power spectrum
                               (kept_spectrum), else NULL */
    float *block;           /* the one allocation the arrays are carved from */
} cpu_pc_plan;

/* ================================================================= shared */

static int thread_count(const pv_context *ctx)
{
    return ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

/* Copy src, less its mean, into the zero-padded grid dst (extent fft),
 * weighting by the separable window when there is one. */
static void load_padded(pv_context *ctx, const pv_pc_geometry *g, const pv_volume *src,
                        float mean, float *dst)
{
    const int px = g->fft[0], py = g->fft[1], pz = g->fft[2];
    const int windowed = g->window[0] != NULL;
    const long rows = (long)py * pz;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < rows; row++) {
        int y = (int)(row % py), z = (int)(row / py);
        float *out = dst + (size_t)row * px;
        if (y >= g->size[1] || z >= g->size[2]) {
            memset(out, 0, (size_t)px * sizeof *out);
            continue;
        }
        /* A u16 input is converted here, on the host: the oracle of the
         * OpenCL backend's conversion on the device. */
        const ptrdiff_t in = z * src->stride_z + y * src->stride_y;
        for (int x = 0; x < g->size[0]; x++) {
            float v = pv_volume_value(src, in + x) - mean;
            if (windowed) {
                float w = g->window[0][x] * g->window[1][y] * g->window[2][z];
                v = v * w;
            }
            out[x] = v;
        }
        memset(out + g->size[0], 0, (size_t)(px - g->size[0]) * sizeof *out);
    }
}

/* ========================================================== plan lifetime */

static void pv_cpu_pc_destroy(pv_context *ctx, void *plan)
{
    cpu_pc_plan *p = plan;
    (void)ctx;
    pv_cpu_fft_release(p->fft);
    pv_cpu_fft_free(p->block);
    free(p);
}

static int alloc_buffers(cpu_pc_plan *p)
{
    size_t spectrum = 2 * p->complex_count, kept = 0;
    if (p->g.keep_spectra && !pv_size_mul(spectrum, (size_t)p->g.batch, &kept))
        return 0;
    const pv_cpu_slice slices[] = {
        {&p->reference, spectrum}, {&p->real, p->real_count}, {&p->spectrum, spectrum},
        {&p->kept, kept},
    };
    p->block = pv_cpu_fft_alloc_slices(slices, sizeof slices / sizeof slices[0]);
    if (!p->g.keep_spectra)
        p->kept = NULL;
    return p->block != NULL;
}

/* The cross-power spectrum kept for batch slot `slot`. */
static float *kept_spectrum(const cpu_pc_plan *p, int slot)
{
    return p->kept + (size_t)slot * 2 * p->complex_count;
}

static pv_status pv_cpu_pc_create(pv_context *ctx, const pv_pc_geometry *geometry, void **plan)
{
    cpu_pc_plan *p = pv_plan_new(ctx, sizeof *p, "phase correlation plan");
    if (!p)
        return PV_ERR_NOMEM;
    p->g = *geometry;
    pv_status status = pv_cpu_fft_acquire(ctx, geometry->fft, &p->fft);
    if (status == PV_OK) {
        p->real_count = pv_cpu_fft_real_count(p->fft);
        p->complex_count = pv_cpu_fft_complex_count(p->fft);
        if (!alloc_buffers(p))
            status = pv_fail(ctx, PV_ERR_NOMEM,
                             "phase correlation plan: no memory for %dx%dx%d buffers",
                             geometry->fft[0], geometry->fft[1], geometry->fft[2]);
    }
    return pv_plan_hand_over(ctx, status, p, pv_cpu_pc_destroy, plan);
}

/* ================================================================ spectra */

/* How many bins of the full spectrum half-spectrum bin i stands for: its
 * mirror image is implied except in the x = 0 and x = Nyquist columns. */
static int mirror_weight(size_t i, int px)
{
    size_t column = i % (size_t)(px / 2 + 1);
    return column == 0 || (px % 2 == 0 && column == (size_t)px / 2) ? 1 : 2;
}

/* F / |F|, or 0 where |F|^2 <= floor: the cross-power spectrum is then a
 * product of two unit phases and never overflows.  Returns the weighted
 * count of the empty bins. */
static long unit_phase(pv_context *ctx, const float *spectrum, float *out, size_t count,
                       float floor, int px)
{
    long empty = 0;
    const float limit = floor > FLT_MIN ? floor : FLT_MIN;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static) reduction(+ : empty)
    for (size_t i = 0; i < count; i++) {
        float re = spectrum[2 * i], im = spectrum[2 * i + 1];
        float m2 = re * re + im * im;
        float s = 0.0f;
        if (m2 > limit)
            s = 1.0f / sqrtf(m2);
        else
            empty += mirror_weight(i, px);
        out[2 * i] = re * s;
        out[2 * i + 1] = im * s;
    }
    return empty;
}

static pv_status pv_cpu_pc_reference(pv_context *ctx, void *plan, const pv_volume *reference,
                              float mean, float floor)
{
    cpu_pc_plan *p = plan;
    load_padded(ctx, &p->g, reference, mean, p->real);
    pv_cpu_fft_forward(p->fft, p->real, p->spectrum);
    long empty = unit_phase(ctx, p->spectrum, p->reference, p->complex_count, floor, p->g.fft[0]);
    long filled = (long)p->real_count - empty;
    p->scale = filled > 0 ? (float)(1.0 / (double)filled) : 0.0f;
    return PV_OK;
}

/* spectrum <- scale * (M / |M|) * conj(F / |F|); a copy into kept if any. */
static void cross_power(pv_context *ctx, const cpu_pc_plan *p, float *spectrum, float *kept)
{
    const float *ref = p->reference;
    const float scale = p->scale;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t i = 0; i < p->complex_count; i++) {
        float mr = spectrum[2 * i], mi = spectrum[2 * i + 1];
        float m2 = mr * mr + mi * mi;
        float s = m2 > FLT_MIN ? scale / sqrtf(m2) : 0.0f;
        mr = mr * s;
        mi = mi * s;
        float fr = ref[2 * i], fi = ref[2 * i + 1];
        float re = mr * fr + mi * fi;
        float im = mi * fr - mr * fi;
        spectrum[2 * i] = re;
        spectrum[2 * i + 1] = im;
        if (kept) {
            kept[2 * i] = re;
            kept[2 * i + 1] = im;
        }
    }
}

/* Without padding, window or centring the transform input is the mover
 * itself: when it is dense and aligned as FFTW planned, the R2C reads it
 * in place (an out-of-place R2C preserves its input) and the copy, a full
 * pass over the volume, is saved. */
static float *transform_input(pv_context *ctx, const cpu_pc_plan *p, const pv_volume *mover,
                              float mean)
{
    const pv_pc_geometry *g = &p->g;
    int plain = !g->centered && !g->window[0] && memcmp(g->size, g->fft, sizeof g->size) == 0;
    int dense = mover->stride_y == mover->nx &&
                (mover->nz == 1 || mover->stride_z == (ptrdiff_t)mover->nx * mover->ny);
    if (plain && dense && mover->type == PV_VOLUME_F32 && pv_cpu_fft_can_read(p->fft, mover->data))
        return mover->data;
    load_padded(ctx, g, mover, mean, p->real);
    return p->real;
}

static pv_status pv_cpu_pc_correlate(pv_context *ctx, void *plan, const pv_volume *movers,
                              const float *means, int count, pv_pc_peak *peaks)
{
    cpu_pc_plan *p = plan;
    for (int i = 0; i < count; i++) {
        pv_cpu_fft_forward(p->fft, transform_input(ctx, p, &movers[i], means[i]), p->spectrum);
        cross_power(ctx, p, p->spectrum, p->kept ? kept_spectrum(p, i) : NULL);
        pv_cpu_fft_inverse(p->fft, p->spectrum, p->real);
        peaks[i] = pv_cpu_map_peak(ctx, p->real, p->g.fft);
    }
    return PV_OK;
}

static pv_status pv_cpu_pc_time_fft(pv_context *ctx, void *plan)
{
    cpu_pc_plan *p = plan;
    (void)ctx;
    pv_cpu_fft_forward(p->fft, p->real, p->spectrum);
    pv_cpu_fft_inverse(p->fft, p->spectrum, p->real);
    return PV_OK;
}

/* ========================================================= upsampled DFT */

/* out[w][o] = sum_k table[w][k] * in[o][k] over complex rows of length
 * stored: contracting the fastest axis moves the next one to the front. */
static void contract_rows(pv_context *ctx, const float *in, size_t outer, int stored,
                          const float *table, int count, float *out)
{
    const long total = (long)count * (long)outer;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long item = 0; item < total; item++) {
        size_t w = (size_t)item / outer, o = (size_t)item % outer;
        const float *t = table + 2 * w * (size_t)stored;
        const float *x = in + 2 * o * (size_t)stored;
        float re = 0.0f, im = 0.0f;
        for (int k = 0; k < stored; k++) {
            re = re + (t[2 * k] * x[2 * k] - t[2 * k + 1] * x[2 * k + 1]);
            im = im + (t[2 * k] * x[2 * k + 1] + t[2 * k + 1] * x[2 * k]);
        }
        out[2 * item] = re;
        out[2 * item + 1] = im;
    }
}

static pv_status pv_cpu_pc_upsample(pv_context *ctx, void *plan, int mover, const pv_dft_window *window,
                             float *values)
{
    cpu_pc_plan *p = plan;
    const int *n = p->g.fft, *c = window->count;
    const int kx = n[0] / 2 + 1;
    size_t a_count = (size_t)c[0] * n[2] * n[1], b_count = (size_t)c[1] * c[0] * n[2],
           v_count = (size_t)c[2] * c[1] * c[0];
    float *a = malloc(2 * a_count * sizeof *a), *b = malloc(2 * b_count * sizeof *b),
          *v = malloc(2 * v_count * sizeof *v);
    if (!a || !b || !v) {
        free(a);
        free(b);
        free(v);
        return pv_fail(ctx, PV_ERR_NOMEM, "upsampled DFT: out of memory");
    }
    contract_rows(ctx, kept_spectrum(p, mover), (size_t)n[2] * n[1], kx, window->table[0], c[0],
                  a);
    contract_rows(ctx, a, (size_t)c[0] * n[2], n[1], window->table[1], c[1], b);
    contract_rows(ctx, b, (size_t)c[1] * c[0], n[2], window->table[2], c[2], v);
    for (size_t i = 0; i < v_count; i++)
        values[i] = v[2 * i];
    free(a);
    free(b);
    free(v);
    return PV_OK;
}

/* ================================================================== NCC */

typedef struct ncc_work {
    float *block;                       /* the one allocation the arrays are carved from */
    float *image_pad, *templ_pad;       /* transform inputs; image_pad ends as the cross term */
    float *image_spec, *templ_spec;
    float *sum_i, *sum_i2, *sum_t, *sum_t2; /* integral images, (w + 1) x (h + 1) */
} ncc_work;

static int alloc_ncc_work(const pv_ncc_job *job, const pv_cpu_fft *fft, ncc_work *w)
{
    size_t real = pv_cpu_fft_real_count(fft), spec = 2 * pv_cpu_fft_complex_count(fft);
    size_t image_sums = (size_t)(job->image.width + 1) * (job->image.height + 1);
    size_t templ_sums = (size_t)(job->templ.width + 1) * (job->templ.height + 1);
    const pv_cpu_slice slices[] = {
        {&w->image_pad, real},       {&w->templ_pad, real},   {&w->image_spec, spec},
        {&w->templ_spec, spec},      {&w->sum_i, image_sums}, {&w->sum_i2, image_sums},
        {&w->sum_t, templ_sums},     {&w->sum_t2, templ_sums},
    };
    w->block = pv_cpu_fft_alloc_slices(slices, sizeof slices / sizeof slices[0]);
    return w->block != NULL;
}

static void pad_image(const pv_image *src, int pw, int ph, float *dst)
{
    memset(dst, 0, (size_t)pw * ph * sizeof *dst);
    for (int y = 0; y < src->height; y++)
        memcpy(dst + (size_t)y * pw, (const float *)src->data + (size_t)y * src->width,
               (size_t)src->width * sizeof *dst);
}

/* image_spec <- image_spec * conj(templ_spec) * scale */
static void spectrum_product(pv_context *ctx, float *image_spec, const float *templ_spec,
                             size_t count, float scale)
{
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t i = 0; i < count; i++) {
        float ar = image_spec[2 * i], ai = image_spec[2 * i + 1];
        float tr = templ_spec[2 * i], ti = templ_spec[2 * i + 1];
        image_spec[2 * i] = (ar * tr + ai * ti) * scale;
        image_spec[2 * i + 1] = (ai * tr - ar * ti) * scale;
    }
}

/* Exclusive 2D prefix sums of src (or of its squares) into a (w+1) x (h+1)
 * table: rows first, then columns, each in ascending order. */
static void integral_image(pv_context *ctx, const pv_image *src, int squared, float *table)
{
    const int w = src->width, h = src->height, tw = w + 1;
    const float *data = src->data;
    memset(table, 0, (size_t)tw * sizeof *table);
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (int y = 0; y < h; y++) {
        float *row = table + (size_t)(y + 1) * tw;
        float sum = 0.0f;
        row[0] = 0.0f;
        for (int x = 0; x < w; x++) {
            float v = data[(size_t)y * w + x];
            sum = sum + (squared ? v * v : v);
            row[x + 1] = sum;
        }
    }
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (int x = 0; x <= w; x++)
        for (int y = 1; y <= h; y++)
            table[(size_t)y * tw + x] = table[(size_t)y * tw + x] + table[(size_t)(y - 1) * tw + x];
}

static float box_sum(const float *table, int tw, int x0, int y0, int x1, int y1)
{
    return ((table[(size_t)y1 * tw + x1] - table[(size_t)y0 * tw + x1]) -
            table[(size_t)y1 * tw + x0]) +
           table[(size_t)y0 * tw + x0];
}

static int max_int(int a, int b) { return a > b ? a : b; }
static int min_int(int a, int b) { return a < b ? a : b; }

/* Coefficient at map position (u, v): the template's top-left corner at
 * image position (u - tw + 1, v - th + 1), normalized over the overlap. */
static float ncc_coefficient(const pv_ncc_job *job, const ncc_work *w, int u, int v)
{
    const int iw = job->image.width, ih = job->image.height;
    const int tw = job->templ.width, th = job->templ.height;
    const int ox = u - (tw - 1), oy = v - (th - 1);
    const int x0 = max_int(0, ox), x1 = min_int(iw, ox + tw);
    const int y0 = max_int(0, oy), y1 = min_int(ih, oy + th);
    const int n = (x1 - x0) * (y1 - y0);
    if (n < job->min_overlap)
        return 0.0f;
    float si = box_sum(w->sum_i, iw + 1, x0, y0, x1, y1);
    float si2 = box_sum(w->sum_i2, iw + 1, x0, y0, x1, y1);
    float st = box_sum(w->sum_t, tw + 1, x0 - ox, y0 - oy, x1 - ox, y1 - oy);
    float st2 = box_sum(w->sum_t2, tw + 1, x0 - ox, y0 - oy, x1 - ox, y1 - oy);
    int cx = ox < 0 ? ox + job->fft[0] : ox, cy = oy < 0 ? oy + job->fft[1] : oy;
    float cross = w->image_pad[(size_t)cy * job->fft[0] + cx];
    float inv_n = 1.0f / (float)n;
    float var_i = si2 - si * si * inv_n;
    float var_t = st2 - st * st * inv_n;
    if (!(var_i > job->image_floor) || !(var_t > job->templ_floor))
        return 0.0f;
    float coefficient = (cross - si * st * inv_n) / sqrtf(var_i * var_t);
    return coefficient > 1.0f ? 1.0f : coefficient < -1.0f ? -1.0f : coefficient;
}

static void ncc_map(pv_context *ctx, const pv_ncc_job *job, const ncc_work *w, pv_image *map)
{
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (int v = 0; v < map->height; v++) {
        float *row = (float *)map->data + (ptrdiff_t)v * map->stride;
        for (int u = 0; u < map->width; u++)
            row[u] = ncc_coefficient(job, w, u, v);
    }
}

static pv_status pv_cpu_normxcorr2(pv_context *ctx, const pv_ncc_job *job, pv_image *map)
{
    int size[3] = {job->fft[0], job->fft[1], 1};
    pv_cpu_fft *fft = NULL;
    ncc_work w;
    pv_status status = pv_cpu_fft_acquire(ctx, size, &fft);
    if (status != PV_OK)
        return status;
    if (!alloc_ncc_work(job, fft, &w)) {
        pv_cpu_fft_release(fft);
        return pv_fail(ctx, PV_ERR_NOMEM, "normxcorr2: no memory for %dx%d work buffers",
                       job->fft[0], job->fft[1]);
    }
    pad_image(&job->image, job->fft[0], job->fft[1], w.image_pad);
    pad_image(&job->templ, job->fft[0], job->fft[1], w.templ_pad);
    pv_cpu_fft_forward(fft, w.image_pad, w.image_spec);
    pv_cpu_fft_forward(fft, w.templ_pad, w.templ_spec);
    spectrum_product(ctx, w.image_spec, w.templ_spec, pv_cpu_fft_complex_count(fft),
                     (float)(1.0 / ((double)job->fft[0] * job->fft[1])));
    pv_cpu_fft_inverse(fft, w.image_spec, w.image_pad);
    integral_image(ctx, &job->image, 0, w.sum_i);
    integral_image(ctx, &job->image, 1, w.sum_i2);
    integral_image(ctx, &job->templ, 0, w.sum_t);
    integral_image(ctx, &job->templ, 1, w.sum_t2);
    ncc_map(ctx, job, &w, map);
    pv_cpu_fft_free(w.block);
    pv_cpu_fft_release(fft);
    return PV_OK;
}

/* One template against several images: the single call per image (the
 * oracle's batch is the definition of the batch's result). */
static pv_status pv_cpu_normxcorr2_batch(pv_context *ctx, const pv_ncc_batch_job *job,
                                         pv_image *maps)
{
    pv_ncc_job single = {job->templ, {0, 0, 0, PV_PIXEL_F32, NULL}, {job->fft[0], job->fft[1]},
                         job->min_overlap, job->templ_floor, job->image_floor};
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < job->count; i++) {
        single.image = job->images[i];
        status = pv_cpu_normxcorr2(ctx, &single, &maps[i]);
    }
    return status;
}

/* ========================================================= masked NCC */

/* Direct sums per map point (backends/common/ncc_masked.h), in ncc_masked.c. */
static pv_status pv_cpu_normxcorr2_masked(pv_context *ctx, const pv_ncc_masked_job *job,
                                          pv_image *map)
{
    return pv_cpu_ncc_masked(ctx, job, map);
}

/* ====================================================== masked phase correlation */

/* backends/common/masked_ncc.h: one text with the kernel's pcm_score. */
#define PCM_SQRT(x) sqrtf(x)
#define PCM_RINT(x) rintf(x)
#include "../../common/masked_ncc.h"

/* The six transform inputs, in the order of the maps: the reference, its
 * square, its mask, the moving input, its square, its mask. */
enum { PCM_F, PCM_F2, PCM_A, PCM_M, PCM_M2, PCM_B, PCM_MAPS };

/* map[k] of the padded grid from the job's dense inputs. */
static void pcm_load(pv_context *ctx, const pv_pcm_job *job, float *const map[PCM_MAPS])
{
    const int px = job->fft[0], py = job->fft[1], pz = job->fft[2];
    const int nx = job->size[0], ny = job->size[1], nz = job->size[2];
    const long rows = (long)py * pz;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < rows; row++) {
        int y = (int)(row % py), z = (int)(row / py);
        size_t out = (size_t)row * px;
        for (int k = 0; k < PCM_MAPS; k++)
            memset(map[k] + out, 0, (size_t)px * sizeof(float));
        if (y >= ny || z >= nz)
            continue;
        size_t in = ((size_t)z * ny + y) * nx;
        for (int x = 0; x < nx; x++) {
            float f = job->reference[in + x], m = job->moving[in + x];
            map[PCM_F][out + x] = f;
            map[PCM_F2][out + x] = f * f;
            map[PCM_A][out + x] = job->reference_mask[in + x];
            map[PCM_M][out + x] = m;
            map[PCM_M2][out + x] = m * m;
            map[PCM_B][out + x] = job->moving_mask[in + x];
        }
    }
}

/* In place, per bin: the six correlation spectra (times scale), each a
 * moving-side spectrum times the conjugate of a reference-side one:
 * count B.A*, sum_m M.A*, sum_f B.F*, cross M.F*, sum_m2 M2.A*,
 * sum_f2 B.F2*; they land in the slots F, F2, A, M, M2, B. */
static void pcm_products(pv_context *ctx, float *const spec[PCM_MAPS], size_t count, float scale)
{
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t i = 0; i < count; i++) {
        float v[PCM_MAPS][2];
        for (int k = 0; k < PCM_MAPS; k++) {
            v[k][0] = spec[k][2 * i];
            v[k][1] = spec[k][2 * i + 1];
        }
        static const int pairs[PCM_MAPS][2] = {{PCM_B, PCM_A},  {PCM_M, PCM_A},
                                               {PCM_B, PCM_F},  {PCM_M, PCM_F},
                                               {PCM_M2, PCM_A}, {PCM_B, PCM_F2}};
        for (int k = 0; k < PCM_MAPS; k++) {
            const float *a = v[pairs[k][0]], *b = v[pairs[k][1]];
            spec[k][2 * i] = (a[0] * b[0] + a[1] * b[1]) * scale;
            spec[k][2 * i + 1] = (a[1] * b[0] - a[0] * b[1]) * scale;
        }
    }
}

static float pcm_max_count(pv_context *ctx, const float *count, size_t points)
{
    float best = 0.0f;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static) reduction(max : best)
    for (size_t i = 0; i < points; i++) {
        float n = rintf(count[i]);
        if (n > best)
            best = n;
    }
    return best;
}

/* The scores into map[0] (each point reads only its own values), then the
 * first largest in memory order. */
static void pcm_scores(pv_context *ctx, const pv_pcm_job *job, float *const map[PCM_MAPS],
                       size_t points, pv_pcm_peak *peak)
{
    const float threshold = job->overlap_ratio * peak->max_count;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t i = 0; i < points; i++)
        map[0][i] = pcm_score(map[0][i], map[1][i], map[2][i], map[3][i], map[4][i], map[5][i],
                              threshold, job->moving_floor, job->reference_floor);
    size_t best = 0;
    for (size_t i = 1; i < points; i++)
        if (map[0][i] > map[0][best])
            best = i;
    const size_t px = (size_t)job->fft[0], py = (size_t)job->fft[1];
    peak->value = map[0][best];
    peak->index[0] = (int)(best % px);
    peak->index[1] = (int)(best / px % py);
    peak->index[2] = (int)(best / (px * py));
}

static pv_status pv_cpu_pc_masked(pv_context *ctx, const pv_pcm_job *job, pv_pcm_peak *peak)
{
    pv_cpu_fft *fft = NULL;
    pv_status status = pv_cpu_fft_acquire(ctx, job->fft, &fft);
    if (status != PV_OK)
        return status;
    const size_t real = pv_cpu_fft_real_count(fft), bins = pv_cpu_fft_complex_count(fft);
    float *map[PCM_MAPS], *spec[PCM_MAPS];
    pv_cpu_slice slices[2 * PCM_MAPS];
    for (int k = 0; k < PCM_MAPS; k++) {
        slices[k] = (pv_cpu_slice){&map[k], real};
        slices[PCM_MAPS + k] = (pv_cpu_slice){&spec[k], 2 * bins};
    }
    float *block = pv_cpu_fft_alloc_slices(slices, 2 * PCM_MAPS);
    if (!block) {
        pv_cpu_fft_release(fft);
        return pv_fail(ctx, PV_ERR_NOMEM,
                       "phase_correlate_masked: no memory for six %dx%dx%d transforms",
                       job->fft[0], job->fft[1], job->fft[2]);
    }
    pcm_load(ctx, job, map);
    for (int k = 0; k < PCM_MAPS; k++)
        pv_cpu_fft_forward(fft, map[k], spec[k]);
    pcm_products(ctx, spec, bins, (float)(1.0 / (double)real));
    for (int k = 0; k < PCM_MAPS; k++)
        pv_cpu_fft_inverse(fft, spec[k], map[k]);
    pv_pcm_peak found;
    found.max_count = pcm_max_count(ctx, map[0], real);
    pcm_scores(ctx, job, map, real, &found);
    *peak = found;
    pv_cpu_fft_free(block);
    pv_cpu_fft_release(fft);
    return PV_OK;
}

/* ============================================================ FFT engine */

/* The CPU backend transforms with FFTW alone: it reports that engine and
 * accepts any choice, which concerns OpenCL contexts only. */
static int pv_cpu_fft_engine_built(pv_fft_engine engine)
{
    return engine == PV_FFT_AUTO || engine == PV_FFT_FFTW;
}

static pv_status pv_cpu_fft_engine_of(pv_context *ctx, pv_fft_engine *engine)
{
    (void)ctx;
    *engine = PV_FFT_FFTW;
    return PV_OK;
}

static pv_status pv_cpu_fft_set_engine(pv_context *ctx, pv_fft_engine engine)
{
    (void)ctx;
    (void)engine;
    return PV_OK;
}

const pv_register_ops pv_cpu_register_ops = {PV_REGISTER_SLOTS(PV_OPS_BIND, pv_cpu_)};
