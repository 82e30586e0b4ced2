/* CPU reference of the octreg module: per-plane statistics, the unit-phase
 * spectra of a reference (whole, and per sub-volume), the 2D spectra of a
 * target's planes, the coarse and fine phase correlations with their peaks,
 * and the reconstruction (gather, bilinear) with its projections.
 *
 * The float arithmetic mirrors backends/opencl/kernels/octreg.cl step for
 * step, so the backends differ by the FFT libraries' rounding only (and the
 * statistics, summed in double here).  The current volume is borrowed from
 * the caller for the duration of one front-end call. */
#include "../cpu.h"
#include "../fft.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

typedef struct cpu_oct_plan {
    pv_oct_geometry g;
    pv_cpu_fft *fft[PV_OCT_TRANSFORMS];
    size_t half_points[PV_OCT_TRANSFORMS];  /* half-spectrum points */
    size_t grid_points[PV_OCT_TRANSFORMS];  /* transform grid points */
    pv_volume volume;       /* the current volume (borrowed, or a float copy of a u16 one) */
    float *converted;       /* the float copy of a u16 current volume, or NULL */
    float *means;           /* per plane of the current volume */
    float *ref_full;        /* unit-phase spectrum of the whole reference */
    float *ref_sub;         /* sub_count unit-phase sub-volume spectra */
    float *target;          /* planes 2D spectra of the target */
    float *real, *spectrum; /* scratch for the largest transform */
    float *sum, *weight;    /* reconstruction accumulators (allocated on use) */
    float *block;           /* the one allocation means ... spectrum are carved from */
    float *accumulators;    /* the one sum and weight are carved from */
} cpu_oct_plan;

static int thread_count(const pv_context *ctx)
{
    return ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

static size_t plane_points(const cpu_oct_plan *p)
{
    return (size_t)p->g.size[0] * (size_t)p->g.size[1];
}

static const float *plane_data(const cpu_oct_plan *p, int k, int a)
{
    return p->volume.data + k * p->volume.stride_z + a * p->volume.stride_y;
}

/* ========================================================== plan lifetime */

static void pv_cpu_oct_destroy(pv_context *ctx, void *plan)
{
    cpu_oct_plan *p = plan;
    (void)ctx;
    for (int t = 0; t < PV_OCT_TRANSFORMS; t++)
        pv_cpu_fft_release(p->fft[t]);
    pv_cpu_fft_free(p->block);
    pv_cpu_fft_free(p->accumulators);
    free(p->converted);
    free(p);
}

static pv_status acquire_transforms(pv_context *ctx, cpu_oct_plan *p)
{
    for (int t = 0; t < PV_OCT_TRANSFORMS; t++) {
        const pv_oct_transform_shape shape = pv_oct_transform_shape_of(&p->g, t);
        pv_status status = pv_cpu_fft_acquire(ctx, shape.size, &p->fft[t]);
        if (status != PV_OK)
            return status;
        p->half_points[t] = pv_cpu_fft_complex_count(p->fft[t]);
        p->grid_points[t] = pv_cpu_fft_real_count(p->fft[t]);
    }
    return PV_OK;
}

static int alloc_buffers(cpu_oct_plan *p)
{
    size_t planes = (size_t)p->g.size[2];
    const pv_cpu_slice slices[] = {
        {&p->means, planes},
        {&p->ref_full, 2 * p->half_points[PV_OCT_FULL]},
        {&p->ref_sub, 2 * p->half_points[PV_OCT_SUB] * (size_t)p->g.sub_count},
        {&p->target, 2 * p->half_points[PV_OCT_PLANE] * planes},
        {&p->real, p->grid_points[PV_OCT_FULL]},
        {&p->spectrum, 2 * p->half_points[PV_OCT_FULL]},
    };
    p->block = pv_cpu_fft_alloc_slices(slices, sizeof slices / sizeof slices[0]);
    return p->block != NULL;
}

static pv_status pv_cpu_oct_create(pv_context *ctx, const pv_oct_geometry *geometry, void **plan)
{
    cpu_oct_plan *p = pv_plan_new(ctx, sizeof *p, "octreg plan");
    if (!p)
        return PV_ERR_NOMEM;
    p->g = *geometry;
    pv_status status = acquire_transforms(ctx, p);
    if (status == PV_OK && !alloc_buffers(p))
        status = pv_fail(ctx, PV_ERR_NOMEM, "octreg plan: no memory for the %dx%dx%d spectra",
                         geometry->fft[0], geometry->fft[1], geometry->coarse_depth);
    return pv_plan_hand_over(ctx, status, p, pv_cpu_oct_destroy, plan);
}

/* ============================================================ statistics */

static pv_oct_plane_stats plane_stats(const cpu_oct_plan *p, int k)
{
    pv_oct_plane_stats s = {0.0f, 0.0f, INFINITY, -INFINITY, 1};
    double sum = 0.0, squares = 0.0;
    for (int a = 0; a < p->g.size[1]; a++) {
        const float *line = plane_data(p, k, a);
        for (int d = 0; d < p->g.size[0]; d++) {
            float v = line[d];
            s.finite &= isfinite(v) != 0;
            s.lo = fminf(s.lo, v);
            s.hi = fmaxf(s.hi, v);
            sum += v;
        }
    }
    double mean = sum / (double)plane_points(p);
    for (int a = 0; s.finite && a < p->g.size[1]; a++) {
        const float *line = plane_data(p, k, a);
        for (int d = 0; d < p->g.size[0]; d++)
            squares += ((double)line[d] - mean) * ((double)line[d] - mean);
    }
    s.mean = s.finite ? (float)mean : 0.0f;
    s.energy = (float)squares;
    return s;
}

static pv_status pv_cpu_oct_load(pv_context *ctx, void *plan, const pv_volume *volume,
                          pv_oct_plane_stats *stats)
{
    cpu_oct_plan *p = plan;
    /* A u16 volume is converted on the host: the oracle of the OpenCL
     * backend's conversion on the device. */
    free(p->converted);
    p->converted = NULL;
    pv_status status = pv_volume_as_f32(ctx, volume, &p->volume, &p->converted);
    if (status != PV_OK)
        return status;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (int k = 0; k < p->g.size[2]; k++) {
        stats[k] = plane_stats(p, k);
        p->means[k] = stats[k].mean;
    }
    return PV_OK;
}

/* ================================================================ spectra */

/* Planes first .. first + count - 1 of the current volume, each less its
 * mean, into a zero-padded grid of fft[0] x fft[1] x depth planes. */
static void pad_planes(pv_context *ctx, const cpu_oct_plan *p, int first, int count, int depth,
                       float *dst)
{
    const int pd = p->g.fft[0], pa = p->g.fft[1];
    const long rows = (long)pa * depth;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < rows; row++) {
        int a = (int)(row % pa), plane = (int)(row / pa);
        float *out = dst + (size_t)row * pd;
        if (a >= p->g.size[1] || plane >= count) {
            memset(out, 0, (size_t)pd * sizeof *out);
            continue;
        }
        const float *in = plane_data(p, first + plane, a);
        const float mean = p->means[first + plane];
        for (int d = 0; d < p->g.size[0]; d++)
            out[d] = in[d] - mean;
        memset(out + p->g.size[0], 0, (size_t)(pd - p->g.size[0]) * sizeof *out);
    }
}

/* out = F / |F|, 0 where |F|^2 <= limit. */
static void unit_phase(pv_context *ctx, const float *spectrum, float *out, size_t count,
                       float floor)
{
    const float limit = floor > FLT_MIN ? floor : FLT_MIN;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t i = 0; i < count; i++) {
        float re = spectrum[2 * i], im = spectrum[2 * i + 1];
        float m2 = re * re + im * im;
        float s = m2 > limit ? 1.0f / sqrtf(m2) : 0.0f;
        out[2 * i] = re * s;
        out[2 * i + 1] = im * s;
    }
}

static pv_status pv_cpu_oct_reference(pv_context *ctx, void *plan, const float *floors)
{
    cpu_oct_plan *p = plan;
    pad_planes(ctx, p, 0, p->g.size[2], p->g.coarse_depth, p->real);
    pv_cpu_fft_forward(p->fft[PV_OCT_FULL], p->real, p->spectrum);
    unit_phase(ctx, p->spectrum, p->ref_full, p->half_points[PV_OCT_FULL], floors[0]);
    for (int s = 0; s < p->g.sub_count; s++) {
        pad_planes(ctx, p, p->g.sub_start[s], p->g.sub_width, p->g.sub_width, p->real);
        pv_cpu_fft_forward(p->fft[PV_OCT_SUB], p->real, p->spectrum);
        unit_phase(ctx, p->spectrum, p->ref_sub + 2 * p->half_points[PV_OCT_SUB] * (size_t)s,
                   p->half_points[PV_OCT_SUB], floors[1 + s]);
    }
    return PV_OK;
}

static pv_status pv_cpu_oct_spectra(pv_context *ctx, void *plan)
{
    cpu_oct_plan *p = plan;
    for (int k = 0; k < p->g.size[2]; k++) {
        pad_planes(ctx, p, k, 1, 1, p->real);
        pv_cpu_fft_forward(p->fft[PV_OCT_PLANE], p->real, p->spectrum);
        memcpy(p->target + 2 * p->half_points[PV_OCT_PLANE] * (size_t)k, p->spectrum,
               2 * p->half_points[PV_OCT_PLANE] * sizeof(float));
    }
    return PV_OK;
}

/* ============================================================ correlation */

/* scale * (m / |m|) * conj(f) into out (f is a unit phase already). */
static void cross_power(float mr, float mi, const float *f, float scale, float *out)
{
    float m2 = mr * mr + mi * mi;
    float s = m2 > FLT_MIN ? scale / sqrtf(m2) : 0.0f;
    mr = mr * s;
    mi = mi * s;
    out[0] = mr * f[0] + mi * f[1];
    out[1] = mi * f[0] - mr * f[1];
}

/* The stripe's 3D spectrum at bin (plane bin, ky): sum over its planes of
 * the plane spectrum times exp(-2 pi i ky p / coarse_depth). */
static void stripe_power(pv_context *ctx, const cpu_oct_plan *p, int start, float scale,
                         float *out)
{
    const size_t plane_bins = p->half_points[PV_OCT_PLANE], depth = (size_t)p->g.coarse_depth;
    const int last = p->g.size[2] - 1;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t ky = 0; ky < depth; ky++)
        for (size_t i = 0; i < plane_bins; i++) {
            float mr = 0.0f, mi = 0.0f;
            for (int q = 0; q < p->g.stripe_width && start + q <= last; q++) {
                const float *m = p->target + 2 * (plane_bins * (size_t)(start + q) + i);
                const float *t = p->g.twiddle + 2 * ((size_t)q * depth + ky);
                mr = mr + (m[0] * t[0] - m[1] * t[1]);
                mi = mi + (m[0] * t[1] + m[1] * t[0]);
            }
            size_t bin = ky * plane_bins + i;
            cross_power(mr, mi, p->ref_full + 2 * bin, scale, out + 2 * bin);
        }
}

static pv_status pv_cpu_oct_coarse(pv_context *ctx, void *plan, const int *start, int count,
                            pv_pc_peak *peaks)
{
    cpu_oct_plan *p = plan;
    const int n[3] = {p->g.fft[0], p->g.fft[1], p->g.coarse_depth};
    const float scale = (float)(1.0 / (double)p->grid_points[PV_OCT_FULL]);
    for (int i = 0; i < count; i++) {
        stripe_power(ctx, p, start[i], scale, p->spectrum);
        pv_cpu_fft_inverse(p->fft[PV_OCT_FULL], p->spectrum, p->real);
        peaks[i] = pv_cpu_map_peak(ctx, p->real, n);
    }
    return PV_OK;
}

/* Plane k's spectrum (constant along ky) against sub-volume s. */
static void plane_power(pv_context *ctx, const cpu_oct_plan *p, int k, int s, float scale,
                        float *out)
{
    const size_t plane_bins = p->half_points[PV_OCT_PLANE];
    const float *m = p->target + 2 * plane_bins * (size_t)k;
    const float *f = p->ref_sub + 2 * p->half_points[PV_OCT_SUB] * (size_t)s;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (size_t bin = 0; bin < p->half_points[PV_OCT_SUB]; bin++) {
        size_t i = bin % plane_bins;
        cross_power(m[2 * i], m[2 * i + 1], f + 2 * bin, scale, out + 2 * bin);
    }
}

static pv_status pv_cpu_oct_fine(pv_context *ctx, void *plan, const int *sub, pv_pc_peak *peaks)
{
    cpu_oct_plan *p = plan;
    const int n[3] = {p->g.fft[0], p->g.fft[1], p->g.sub_width};
    const float scale = (float)(1.0 / (double)p->grid_points[PV_OCT_SUB]);
    for (int k = 0; k < p->g.size[2]; k++) {
        plane_power(ctx, p, k, sub[k], scale, p->spectrum);
        pv_cpu_fft_inverse(p->fft[PV_OCT_SUB], p->spectrum, p->real);
        peaks[k] = pv_cpu_map_peak(ctx, p->real, n);
    }
    return PV_OK;
}

/* ========================================================= reconstruction */

/* Bilinear sample of plane k at (depth pd, A-line pa); 0 weight outside. */
static int sample_plane(const cpu_oct_plan *p, int k, float pd, float pa, float *value)
{
    const int nd = p->g.size[0], na = p->g.size[1];
    if (!(pd >= 0.0f) || !(pa >= 0.0f) || pd > (float)(nd - 1) || pa > (float)(na - 1))
        return 0;
    int d0 = (int)pd, a0 = (int)pa;
    int d1 = d0 + 1 < nd ? d0 + 1 : d0, a1 = a0 + 1 < na ? a0 + 1 : a0;
    float fd = pd - (float)d0, fa = pa - (float)a0;
    const float *l0 = plane_data(p, k, a0), *l1 = plane_data(p, k, a1);
    float near = (1.0f - fd) * l0[d0] + fd * l0[d1];
    float far = (1.0f - fd) * l1[d0] + fd * l1[d1];
    *value = (1.0f - fa) * near + fa * far;
    return 1;
}

static int ensure_accumulators(cpu_oct_plan *p)
{
    size_t count = plane_points(p) * (size_t)p->g.size[2];
    const pv_cpu_slice slices[] = {{&p->sum, count}, {&p->weight, count}};
    if (!p->accumulators)
        p->accumulators = pv_cpu_fft_alloc_slices(slices, 2);
    return p->accumulators != NULL;
}

static pv_status pv_cpu_oct_place(pv_context *ctx, void *plan, const pv_oct_placement *placement,
                           int reset)
{
    cpu_oct_plan *p = plan;
    if (!ensure_accumulators(p))
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg reconstruction: no memory for the accumulators");
    const int nd = p->g.size[0], na = p->g.size[1], planes = p->g.size[2];
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < (long)planes * na; row++) {
        int j = (int)(row / na), a = (int)(row % na);
        float *sum = p->sum + (size_t)row * nd, *weight = p->weight + (size_t)row * nd;
        for (int d = 0; d < nd; d++) {
            float s = reset ? 0.0f : sum[d], w = reset ? 0.0f : weight[d];
            for (int e = placement->plane_start[j]; e < placement->plane_start[j + 1]; e++) {
                float v;
                const float *o = placement->offset + 2 * e;
                if (!sample_plane(p, placement->plane[e], (float)d + o[0], (float)a + o[1], &v))
                    continue;
                s = s + placement->weight[e] * v;
                w = w + placement->weight[e];
            }
            sum[d] = s;
            weight[d] = w;
        }
    }
    return PV_OK;
}

static float voxel(const cpu_oct_plan *p, size_t i, float gap)
{
    return p->weight[i] > 0.0f ? p->sum[i] / p->weight[i] : gap;
}

static void read_volume(pv_context *ctx, const cpu_oct_plan *p, float gap, pv_volume *out)
{
    const int nd = p->g.size[0], na = p->g.size[1];
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < (long)p->g.size[2] * na; row++) {
        int j = (int)(row / na), a = (int)(row % na);
        float *line = out->data + j * out->stride_z + a * out->stride_y;
        for (int d = 0; d < nd; d++)
            line[d] = voxel(p, (size_t)row * nd + d, gap);
    }
}

/* en face (a, j): mean over depth of the covered voxels. */
static void read_enface(pv_context *ctx, const cpu_oct_plan *p, float gap, pv_image *out)
{
    const int nd = p->g.size[0], na = p->g.size[1];
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long row = 0; row < (long)p->g.size[2] * na; row++) {
        float total = 0.0f, covered = 0.0f;
        for (int d = 0; d < nd; d++) {
            size_t i = (size_t)row * nd + d;
            if (p->weight[i] > 0.0f) {
                total = total + p->sum[i] / p->weight[i];
                covered = covered + 1.0f;
            }
        }
        float *pixel = (float *)out->data + (row / na) * out->stride + row % na;
        *pixel = covered > 0.0f ? total / covered : gap;
    }
}

/* slow B-scan (j, d): mean over A-lines of the covered voxels. */
static void read_slow(pv_context *ctx, const cpu_oct_plan *p, float gap, pv_image *out)
{
    const int nd = p->g.size[0], na = p->g.size[1], planes = p->g.size[2];
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(static)
    for (long cell = 0; cell < (long)planes * nd; cell++) {
        int j = (int)(cell / nd), d = (int)(cell % nd);
        float total = 0.0f, covered = 0.0f;
        for (int a = 0; a < na; a++) {
            size_t i = ((size_t)j * na + a) * nd + d;
            if (p->weight[i] > 0.0f) {
                total = total + p->sum[i] / p->weight[i];
                covered = covered + 1.0f;
            }
        }
        ((float *)out->data)[(ptrdiff_t)d * out->stride + j] =
            covered > 0.0f ? total / covered : gap;
    }
}

static pv_status pv_cpu_oct_read(pv_context *ctx, void *plan, float gap, pv_volume *registered,
                          pv_image *enface, pv_image *slow)
{
    cpu_oct_plan *p = plan;
    if (!p->sum || !p->weight)
        return pv_fail(ctx, PV_ERR_INVALID, "octreg: nothing was reconstructed yet");
    if (registered)
        read_volume(ctx, p, gap, registered);
    if (enface)
        read_enface(ctx, p, gap, enface);
    if (slow)
        read_slow(ctx, p, gap, slow);
    return PV_OK;
}

const pv_octreg_ops pv_cpu_octreg_ops = {PV_OCTREG_SLOTS(PV_OPS_BIND, pv_cpu_oct_)};
