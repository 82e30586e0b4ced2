/* Register cases: 3D phase correlation at the AO-OCT thesis's volume sizes,
 * one-shot (both spectra every call) and against a cached reference (a
 * plan: one upload, R2C, C2R and arg-max per mover), once per OpenCL FFT
 * engine built in (case names end in "clfft" / "vkfft"); at 256^3 and
 * 512^3 also the bare R2C + C2R pair of each engine, beside FFTW's on the
 * CPU; masked phase correlation at 512^2 and 128^3 (one-shot); the
 * normxcorr2 rows (single, masked, batch) are in bench_register_ncc.c.
 *
 * Inputs are synthetic with a known answer: the moving volume is the
 * reference circularly shifted by (7, -5, 3).  Quality is the share of
 * exact answers. */
#include "bench_register.h"
#include "../tests/image_list.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pc_case {
    int n[3];
    int quick;
} pc_case;

static const pc_case pc_cases[] = {
    {{64, 64, 64}, 1},     {{128, 128, 128}, 0}, {{256, 256, 256}, 0}, {{512, 256, 256}, 0},
    {{256, 512, 256}, 0},  {{256, 256, 512}, 0}, {{512, 512, 512}, 0},
};

static const int pc_shift[3] = {7, -5, 3};

/* The documented cross-check (include/parvis/register.h): the same
 * integer peak (a share of 1 of the one shift). */
#define PC_AGREEMENT_THRESHOLD 1.0

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

static float random01(uint32_t *state)
{
    return (float)(next_random(state) >> 8) / 16777216.0f;
}

/* ====================================================== phase correlation */

typedef struct pc_inputs {
    pv_volume reference, moving;
    pv_phasecorr_plan *plan;   /* cached runs and transform pairs */
    pv_shift shift;
} pc_inputs;

static int make_volumes(const int n[3], pc_inputs *in)
{
    if (pv_volume_alloc(&in->reference, n[0], n[1], n[2]) != PV_OK ||
        pv_volume_alloc(&in->moving, n[0], n[1], n[2]) != PV_OK)
        return cli_fail("cannot allocate two %dx%dx%d volumes", n[0], n[1], n[2]);
    uint32_t state = 2024u;
    size_t count = (size_t)n[0] * n[1] * n[2];
    for (size_t i = 0; i < count; i++)
        in->reference.data[i] = random01(&state);
    /* moving(p) = reference(p - shift), wrapped */
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++) {
            int sz = ((z - pc_shift[2]) % n[2] + n[2]) % n[2];
            int sy = ((y - pc_shift[1]) % n[1] + n[1]) % n[1];
            float *row = in->moving.data + ((size_t)z * n[1] + y) * n[0];
            const float *src = in->reference.data + ((size_t)sz * n[1] + sy) * n[0];
            for (int x = 0; x < n[0]; x++)
                row[x] = src[((x - pc_shift[0]) % n[0] + n[0]) % n[0]];
        }
    return 0;
}

/* What one row times: a one-shot correlation (both spectra every call),
 * a correlation against a plan's cached reference, or the plan's bare
 * R2C + C2R pair (the FFT library's floor for the same size). */
typedef enum pc_mode { PC_ONESHOT, PC_CACHED, PC_FFT_PAIR } pc_mode;

static const char *const pc_mode_names[] = {"one-shot", "cached", "fft pair"};

static pv_status run_oneshot(pv_context *ctx, void *user)
{
    pc_inputs *in = user;
    return pv_phase_correlate3d(ctx, &in->reference, &in->moving, NULL, &in->shift);
}

static pv_status run_cached(pv_context *ctx, void *user)
{
    (void)ctx;
    pc_inputs *in = user;
    return pv_phasecorr_plan_correlate3d(in->plan, &in->moving, 1, &in->shift);
}

static pv_status run_fft_pair(pv_context *ctx, void *user)
{
    (void)ctx;
    pc_inputs *in = user;
    return pv_phasecorr_plan_time_fft(in->plan);
}

static double exact_shift(const pv_shift *s)
{
    return s->dx == pc_shift[0] && s->dy == pc_shift[1] && s->dz == pc_shift[2] ? 1.0 : 0.0;
}

/* Time one mode on one context; plans are made first (not timed). */
static int time_pc(const bench_config *config, pv_context *ctx, pc_mode mode, pc_inputs *in,
                   pv_timing *timing, bench_series *series, pv_shift *found)
{
    static const bench_run_fn runs[] = {run_oneshot, run_cached, run_fft_pair};
    pv_status status = PV_OK;
    in->plan = NULL;
    memset(&in->shift, 0, sizeof in->shift);
    if (mode != PC_ONESHOT)
        status = pv_phasecorr_plan_create3d(ctx, &in->reference, NULL, 1, &in->plan);
    if (status == PV_OK)
        status = bench_time_series(config, ctx, runs[mode], in, timing, series);
    pv_phasecorr_plan_destroy(in->plan);
    in->plan = NULL;
    *found = in->shift;
    return status == PV_OK ? 0 : cli_fail_status(status, "phase correlation");
}

static void name_volume(const int n[3], char *out, size_t size)
{
    if (n[0] == n[1] && n[1] == n[2])
        snprintf(out, size, "%d^3", n[0]);
    else
        snprintf(out, size, "%dx%dx%d", n[0], n[1], n[2]);
}

/* The CPU side of one size, shared by the rows of every GPU engine. */
typedef struct pc_cpu_times {
    pv_timing timing[3];
    bench_series series[3];
    pv_shift shift[3];
} pc_cpu_times;

/* The table's e2e-up column is end to end less the host-to-device copies:
 * without the mover's upload on cached rows (the reference's is part of
 * the plan), without both uploads on one-shot rows.  On the fft-pair rows
 * "pc/fft" is the CPU's cached correlation over its bare FFTW pair (the
 * 2x target); their agreement column has nothing to compare. */
static void describe_row(pc_mode mode, const pc_cpu_times *cpu, char *params, size_t size)
{
    if (mode == PC_FFT_PAIR)
        snprintf(params, size, "pc/fft cpu %.2fx",
                 cpu->timing[PC_CACHED].total_ms / cpu->timing[PC_FFT_PAIR].total_ms);
    else
        snprintf(params, size, "%s", pc_mode_names[mode]);
}

static double pc_roofline(const int n[3], pc_mode mode)
{
    if (mode == PC_ONESHOT)
        return roofline_pc3d_oneshot_bytes(n);
    return mode == PC_CACHED ? roofline_pc3d_cached_bytes(n) : roofline_fft_pair_bytes(n);
}

/* One-shot: both forward transforms and the inverse; cached: the mover's
 * forward and the inverse. */
static double pc_ops(const int n[3], pc_mode mode)
{
    if (mode == PC_FFT_PAIR)
        return ops_fft_pair(n);
    return ops_phase_correlation(n, 3, mode == PC_ONESHOT ? 3 : 2);
}

/* The parts of a row that do not depend on the OpenCL side. */
static void fill_pc_cpu(const pc_case *c, pc_mode mode, const char *engine,
                        const pc_cpu_times *cpu, int cpu_threads, bench_result *r)
{
    memset(r, 0, sizeof *r);
    char size[32];
    name_volume(c->n, size, sizeof size);
    snprintf(r->op, sizeof r->op, mode == PC_FFT_PAIR ? "fft" : "pc3d");
    snprintf(r->name, sizeof r->name, "%s %s%s%s", size, pc_mode_names[mode], engine ? " " : "",
             engine ? engine : "");
    snprintf(r->variant, sizeof r->variant, "%s %s", pc_mode_names[mode], engine ? engine : "fftw");
    snprintf(r->fft_engine, sizeof r->fft_engine, "%s", engine ? engine : "fftw");
    r->cpu_threads = cpu_threads;
    bench_fill_cpu(r, &cpu->timing[mode], &cpu->series[mode]);
    r->quality_name = "exact";
    r->cpu_quality = mode == PC_FFT_PAIR ? -1.0 : exact_shift(&cpu->shift[mode]);
    /* The bare pair has no result to compare. */
    r->threshold = mode == PC_FFT_PAIR ? 0.0 : PC_AGREEMENT_THRESHOLD;
    r->size = (double)c->n[0] * c->n[1] * c->n[2];
    r->roofline_bytes = pc_roofline(c->n, mode);
    r->roofline_ops = pc_ops(c->n, mode);
}

static void fill_pc_row(const pc_case *c, pc_mode mode, const char *engine,
                        const pc_cpu_times *cpu, int cpu_threads, const pv_timing *cl,
                        const bench_series *cl_series, const pv_shift *cl_shift, bench_result *r)
{
    fill_pc_cpu(c, mode, engine, cpu, cpu_threads, r);
    describe_row(mode, cpu, r->params, sizeof r->params);
    if (!cl)
        return;
    bench_fill_opencl(r, cl, cl_series);
    r->cl_quality = exact_shift(cl_shift);
    const pv_shift *a = &cpu->shift[mode];
    r->agreement = mode != PC_FFT_PAIR && a->dx == cl_shift->dx && a->dy == cl_shift->dy &&
                           a->dz == cl_shift->dz
                       ? 1.0
                       : 0.0;
}

/* The pair rows are kept to the sizes the issue quotes cuFFT at. */
static int pair_wanted(const pc_case *c)
{
    return c->n[0] == c->n[1] && c->n[1] == c->n[2] && c->n[0] >= 256;
}

/* The GPU rows of one engine: one-shot, cached, and the bare pair. */
static int pc_engine_rows(const bench_config *config, const bench_contexts *contexts,
                          const pc_case *c, pv_fft_engine engine, const pc_cpu_times *cpu,
                          pc_inputs *in, bench_rows *rows)
{
    char engine_name[16];
    snprintf(engine_name, sizeof engine_name, "%s", engine == PV_FFT_VKFFT ? "vkfft" : "clfft");
    pv_status status = pv_context_set_fft_engine(contexts->opencl, engine);
    if (status != PV_OK)
        return cli_fail_status(status, "set_fft_engine");
    int threads = pv_context_cpu_threads(contexts->cpu), rc = 0;
    for (int mode = PC_ONESHOT; rc == 0 && mode <= PC_FFT_PAIR; mode++) {
        if (mode == PC_FFT_PAIR && !pair_wanted(c))
            continue;
        pv_timing cl;
        pv_shift cl_shift;
        bench_result *row = malloc(sizeof *row);
        if (!row)
            return cli_fail("out of memory");
        rc = time_pc(config, contexts->opencl, (pc_mode)mode, in, &cl, &row->cl_samples, &cl_shift);
        if (rc == 0) {
            bench_series cl_series = row->cl_samples;
            fill_pc_row(c, (pc_mode)mode, engine_name, cpu, threads, &cl, &cl_series, &cl_shift,
                        row);
            rc = bench_add_row(rows, row);
        }
        free(row);
    }
    pv_context_set_fft_engine(contexts->opencl, PV_FFT_AUTO);
    return rc;
}

static int pc_cpu_only_rows(const pc_case *c, const pc_cpu_times *cpu, int threads, int modes,
                            bench_rows *rows)
{
    bench_result *row = malloc(sizeof *row);
    int rc = row ? 0 : cli_fail("out of memory");
    for (int mode = PC_ONESHOT; rc == 0 && mode < modes; mode++) {
        fill_pc_row(c, (pc_mode)mode, NULL, cpu, threads, NULL, NULL, NULL, row);
        rc = bench_add_row(rows, row);
    }
    free(row);
    return rc;
}

static int pc_size_rows(const bench_config *config, const bench_contexts *contexts,
                        const pc_case *c, pc_inputs *in, bench_rows *rows)
{
    pc_cpu_times *cpu = calloc(1, sizeof *cpu);
    if (!cpu)
        return cli_fail("out of memory");
    int rc = 0;
    int modes = pair_wanted(c) ? PC_FFT_PAIR + 1 : PC_FFT_PAIR;
    for (int mode = PC_ONESHOT; rc == 0 && mode < modes; mode++)
        rc = time_pc(config, contexts->cpu, (pc_mode)mode, in, &cpu->timing[mode],
                     &cpu->series[mode], &cpu->shift[mode]);
    int threads = pv_context_cpu_threads(contexts->cpu);
    if (rc == 0 && !contexts->opencl)
        rc = pc_cpu_only_rows(c, cpu, threads, modes, rows);
    static const pv_fft_engine engines[] = {PV_FFT_CLFFT, PV_FFT_VKFFT};
    for (size_t e = 0; rc == 0 && contexts->opencl && e < sizeof engines / sizeof engines[0]; e++)
        if (pv_fft_engine_available(engines[e]))
            rc = pc_engine_rows(config, contexts, c, engines[e], cpu, in, rows);
    free(cpu);
    return rc;
}

static int pc_cases_run(const bench_config *config, const bench_contexts *contexts,
                        bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    for (size_t i = 0; i < sizeof pc_cases / sizeof pc_cases[0]; i++) {
        char name[48];
        name_volume(pc_cases[i].n, name, sizeof name);
        if (!bench_wants(config, "pc3d", name, pc_cases[i].quick))
            continue;
        pc_inputs in;
        memset(&in, 0, sizeof in);
        int rc = make_volumes(pc_cases[i].n, &in);
        if (rc == 0)
            rc = pc_size_rows(config, contexts, &pc_cases[i], &in, &rows);
        pv_volume_free(&in.reference);
        pv_volume_free(&in.moving);
        if (rc)
            return rc;
    }
    return 0;
}

/* ============================================== 2D rows, one per engine */

/* One row per OpenCL FFT engine built in (one CPU-only row without OpenCL). */
static int engine_rows(const bench_config *config, const bench_contexts *contexts,
                       engine_row_fn row, const void *c, void *in, bench_result *results,
                       int max, int *count)
{
    static const pv_fft_engine engines[] = {PV_FFT_CLFFT, PV_FFT_VKFFT};
    int rc = 0;
    for (size_t e = 0; rc == 0 && e < sizeof engines / sizeof engines[0]; e++) {
        if (contexts->opencl && !pv_fft_engine_available(engines[e]))
            continue;
        if (*count >= max)
            return cli_fail("too many bench cases");
        const char *engine = NULL;
        if (contexts->opencl) {
            engine = engines[e] == PV_FFT_VKFFT ? "vkfft" : "clfft";
            if (pv_context_set_fft_engine(contexts->opencl, engines[e]) != PV_OK)
                return cli_fail("cannot select the %s engine", engine);
        }
        rc = row(config, contexts, c, engine, in, &results[*count]);
        if (rc == 0)
            bench_print_row(&results[(*count)++]);
        if (!contexts->opencl)
            break;
    }
    if (contexts->opencl)
        pv_context_set_fft_engine(contexts->opencl, PV_FFT_AUTO);
    return rc;
}

/* ======================================================== 2D phase correlation
 * One-shot 2D correlations at the sizes the OpenCV and scikit-image peers
 * are timed at (bench/peers/peers.py builds the same inputs): f32 noise,
 * the moving image the reference circularly shifted by (7, -5). */

typedef struct pc2d_case {
    int n;      /* square side */
    int quick;
} pc2d_case;

static const pc2d_case pc2d_cases[] = {{512, 1}, {1024, 0}, {2048, 0}};

/* The CPU side is timed once per case and shared by the rows of every
 * OpenCL FFT engine (as for 3D): the CPU does the same work in each, and
 * timing it again would only show the machine's noise as a difference
 * between adjacent rows. */
typedef struct pc2d_inputs {
    pv_image reference, moving;
    pv_shift shift;
    int cpu_timed;
    pv_timing cpu;
    bench_series cpu_samples;
    pv_shift cpu_shift;
} pc2d_inputs;

static int make_images(int n, pc2d_inputs *in)
{
    if (pv_image_alloc(&in->reference, n, n, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&in->moving, n, n, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate two %dx%d images", n, n);
    uint32_t state = 2024u;
    float *reference = in->reference.data, *moving = in->moving.data;
    for (size_t i = 0; i < (size_t)n * n; i++)
        reference[i] = random01(&state);
    for (int y = 0; y < n; y++) {
        int sy = ((y - pc_shift[1]) % n + n) % n;
        for (int x = 0; x < n; x++)
            moving[(size_t)y * n + x] = reference[(size_t)sy * n + ((x - pc_shift[0]) % n + n) % n];
    }
    return 0;
}

static pv_status run_pc2d(pv_context *ctx, void *user)
{
    pc2d_inputs *in = user;
    return pv_phase_correlate(ctx, &in->reference, &in->moving, NULL, &in->shift);
}

static double exact_shift2d(const pv_shift *s)
{
    return s->dx == pc_shift[0] && s->dy == pc_shift[1] ? 1.0 : 0.0;
}

static int pc2d_row(const bench_config *config, const bench_contexts *contexts, const void *vc,
                    const char *engine, void *vin, bench_result *r)
{
    const pc2d_case *c = vc;
    pc2d_inputs *in = vin;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "pc2d");
    snprintf(r->name, sizeof r->name, "%d^2 one-shot%s%s", c->n, engine ? " " : "",
             engine ? engine : "");
    snprintf(r->params, sizeof r->params, "f32, shift (%d, %d)", pc_shift[0], pc_shift[1]);
    snprintf(r->variant, sizeof r->variant, "one-shot %s", engine ? engine : "fftw");
    snprintf(r->fft_engine, sizeof r->fft_engine, "%s", engine ? engine : "fftw");
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "exact";
    r->threshold = PC_AGREEMENT_THRESHOLD;
    r->size = (double)c->n * c->n;
    const int n[2] = {c->n, c->n};
    r->roofline_bytes = roofline_pc2d_oneshot_bytes(n);
    r->roofline_ops = ops_phase_correlation(n, 2, 3);
    pv_timing cl;
    pv_status status = PV_OK;
    if (!in->cpu_timed) {
        status = bench_time_series(config, contexts->cpu, run_pc2d, in, &in->cpu,
                                   &in->cpu_samples);
        in->cpu_shift = in->shift;
        in->cpu_timed = status == PV_OK;
    }
    bench_fill_cpu(r, &in->cpu, &in->cpu_samples);
    pv_shift cpu_shift = in->cpu_shift;
    r->cpu_quality = exact_shift2d(&cpu_shift);
    if (status == PV_OK && contexts->opencl) {
        status = bench_time_series(config, contexts->opencl, run_pc2d, in, &cl, &r->cl_samples);
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = exact_shift2d(&in->shift);
        r->agreement = cpu_shift.dx == in->shift.dx && cpu_shift.dy == in->shift.dy;
    }
    return status == PV_OK ? 0 : cli_fail_status(status, "phase correlation 2D");
}

static int pc2d_cases_run(const bench_config *config, const bench_contexts *contexts,
                          bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof pc2d_cases / sizeof pc2d_cases[0]; i++) {
        const pc2d_case *c = &pc2d_cases[i];
        char name[32];
        snprintf(name, sizeof name, "%d^2 one-shot", c->n);
        if (!bench_wants(config, "pc2d", name, c->quick))
            continue;
        pc2d_inputs in;
        memset(&in, 0, sizeof in);
        int rc = make_images(c->n, &in);
        if (rc == 0)
            rc = engine_rows(config, contexts, pc2d_row, c, &in, results, max, count);
        image_list_free(&in.reference, &in.moving, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

/* ============================================== masked phase correlation
 * One-shot masked correlations (pv_phase_correlate_masked / 3d), one row
 * per engine: f32 noise, the moving input the reference displaced by
 * pc_shift (fresh noise where that leaves the reference, no wrap), the
 * reference's mask hiding a block of an eighth of the area or volume and
 * the moving input sharing it.  Kernel time and end to end (the front
 * end's masked copies and the four uploads included) in the usual columns;
 * quality: the exact shift. */

typedef struct pcm_case {
    const char *name;
    int n[3];
    int dims;
    int quick;
} pcm_case;

static const pcm_case pcm_cases[] = {
    {"512^2 one-shot", {512, 512, 1}, 2, 1},
    {"128^3 one-shot", {128, 128, 128}, 3, 0},
};

typedef struct pcm_inputs {
    pv_volume reference, moving, mask;
    pv_image images[3];  /* 2D views of the volumes above */
    int dims;
    pv_shift shift;
    int cpu_timed;
    pv_timing cpu;
    bench_series cpu_samples;
    pv_shift cpu_shift;
} pcm_inputs;

static int make_pcm_inputs(const pcm_case *c, pcm_inputs *in)
{
    const int *n = c->n;
    if (pv_volume_alloc(&in->reference, n[0], n[1], n[2]) != PV_OK ||
        pv_volume_alloc(&in->moving, n[0], n[1], n[2]) != PV_OK ||
        pv_volume_alloc(&in->mask, n[0], n[1], n[2]) != PV_OK)
        return cli_fail("cannot allocate the masked correlation's inputs");
    in->dims = c->dims;
    const int d[3] = {pc_shift[0], pc_shift[1], c->dims == 3 ? pc_shift[2] : 0};
    uint32_t state = 4242u;
    size_t count = (size_t)n[0] * n[1] * n[2];
    for (size_t i = 0; i < count; i++)
        in->reference.data[i] = random01(&state);
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                size_t at = ((size_t)z * n[1] + y) * n[0] + x;
                int u = x - d[0], v = y - d[1], w = z - d[2];
                int inside = u >= 0 && v >= 0 && w >= 0 && u < n[0] && v < n[1] && w < n[2];
                in->moving.data[at] = inside ? in->reference.data[((size_t)w * n[1] + v) * n[0] + u]
                                             : random01(&state);
                int hidden = x < n[0] / 2 && y < n[1] / 2 && (c->dims == 2 ? y < n[1] / 4
                                                                            : z < n[2] / 2);
                in->mask.data[at] = hidden ? 0.0f : 1.0f;
            }
    pv_volume *v[3] = {&in->reference, &in->moving, &in->mask};
    for (int k = 0; k < 3; k++)
        in->images[k] = pv_image_wrap(v[k]->data, n[0], n[1], PV_PIXEL_F32);
    return 0;
}

static pv_status run_pcm(pv_context *ctx, void *user)
{
    pcm_inputs *in = user;
    if (in->dims == 2)
        return pv_phase_correlate_masked(ctx, &in->images[0], &in->images[1], &in->images[2],
                                         NULL, NULL, &in->shift);
    return pv_phase_correlate_masked3d(ctx, &in->reference, &in->moving, &in->mask, NULL, NULL,
                                       &in->shift);
}

static double exact_pcm(const pcm_inputs *in, const pv_shift *s)
{
    return s->dx == pc_shift[0] && s->dy == pc_shift[1] &&
                   s->dz == (in->dims == 3 ? pc_shift[2] : 0)
               ? 1.0
               : 0.0;
}

static int pcm_row(const bench_config *config, const bench_contexts *contexts, const void *vc,
                   const char *engine, void *vin, bench_result *r)
{
    const pcm_case *c = vc;
    pcm_inputs *in = vin;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "pcm");
    snprintf(r->name, sizeof r->name, "%s%s%s", c->name, engine ? " " : "", engine ? engine : "");
    snprintf(r->params, sizeof r->params, "f32, 1/8 masked, overlap_ratio 0.3");
    snprintf(r->variant, sizeof r->variant, "%dd one-shot %s", c->dims, engine ? engine : "fftw");
    snprintf(r->fft_engine, sizeof r->fft_engine, "%s", engine ? engine : "fftw");
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "exact";
    r->threshold = PC_AGREEMENT_THRESHOLD;
    r->size = (double)c->n[0] * c->n[1] * c->n[2];
    r->roofline_bytes = roofline_pcm_bytes(c->n, c->dims);
    r->roofline_ops = ops_pcm(c->n, c->dims);
    pv_timing cl;
    pv_status status = PV_OK;
    if (!in->cpu_timed) {
        status = bench_time_series(config, contexts->cpu, run_pcm, in, &in->cpu,
                                   &in->cpu_samples);
        in->cpu_shift = in->shift;
        in->cpu_timed = status == PV_OK;
    }
    bench_fill_cpu(r, &in->cpu, &in->cpu_samples);
    pv_shift cpu_shift = in->cpu_shift;
    r->cpu_quality = exact_pcm(in, &cpu_shift);
    if (status == PV_OK && contexts->opencl) {
        status = bench_time_series(config, contexts->opencl, run_pcm, in, &cl, &r->cl_samples);
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = exact_pcm(in, &in->shift);
        r->agreement = cpu_shift.dx == in->shift.dx && cpu_shift.dy == in->shift.dy &&
                       cpu_shift.dz == in->shift.dz;
    }
    return status == PV_OK ? 0 : cli_fail_status(status, "masked phase correlation");
}

static int pcm_cases_run(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof pcm_cases / sizeof pcm_cases[0]; i++) {
        const pcm_case *c = &pcm_cases[i];
        if (!bench_wants(config, "pcm", c->name, c->quick))
            continue;
        pcm_inputs in;
        memset(&in, 0, sizeof in);
        int rc = make_pcm_inputs(c, &in);
        if (rc == 0)
            rc = engine_rows(config, contexts, pcm_row, c, &in, results, max, count);
        pv_volume_free(&in.reference);
        pv_volume_free(&in.moving);
        pv_volume_free(&in.mask);
        if (rc)
            return rc;
    }
    return 0;
}

int bench_register_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count)
{
    int rc = pc_cases_run(config, contexts, results, max, count);
    if (rc == 0)
        rc = pc2d_cases_run(config, contexts, results, max, count);
    if (rc == 0)
        rc = pcm_cases_run(config, contexts, results, max, count);
    return rc ? rc : bench_ncc_cases(config, contexts, results, max, count);
}

/* For the NCC rows (bench_register_ncc.c, bench_register.h). */
float bench_register_random01(uint32_t *state)
{
    return random01(state);
}

int bench_register_engine_rows(const bench_config *config, const bench_contexts *contexts,
                               engine_row_fn row, const void *c, void *in, bench_result *results,
                               int max, int *count)
{
    return engine_rows(config, contexts, row, c, in, results, max, count);
}
