/* octreg cases: stripe-wise AO-OCT registration of one target volume at the
 * sizes of the thesis's table 9.1 (depth x A-lines x B-scans), CPU backend
 * against OpenCL end to end (the target's upload included, as in the
 * thesis), with the reference's pre-computation (the plan) timed apart and
 * shown in the params column.
 *
 * Inputs are synthetic (pv_octreg_synthesize) with a known integer motion
 * trace; quality is the share of B-scans marked valid whose shifts are
 * within one voxel of the truth on every axis; agreement is the share of
 * B-scans with identical integer shifts and valid flags on both backends.
 * The CPU backend needs minutes per run at the large sizes, so it is timed
 * once there (no warm-up); the OpenCL side runs the configured median.
 *
 * The "u16" rows register the same volumes quantised to unsigned 16 bits
 * (a linear map of the reference's range onto 0 .. 65535, as OCT cameras
 * deliver them): the OpenCL backend uploads 2 bytes a voxel and converts
 * on the device, so the row beside the float one shows the upload saved
 * (docs/volumes.md). */
#include "bench.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct oct_case {
    int n[3];   /* depth, A-lines, B-scans */
    int quick;
    pv_volume_type type;   /* the samples registered */
} oct_case;

static const oct_case oct_cases[] = {
    {{64, 64, 64}, 1, PV_VOLUME_F32},    {{64, 64, 64}, 0, PV_VOLUME_U16},
    {{128, 128, 128}, 0, PV_VOLUME_F32}, {{256, 256, 256}, 0, PV_VOLUME_F32},
    {{256, 256, 256}, 0, PV_VOLUME_U16}, {{512, 256, 256}, 0, PV_VOLUME_F32},
    {{256, 512, 256}, 0, PV_VOLUME_F32}, {{256, 256, 512}, 0, PV_VOLUME_F32},
    {{512, 512, 512}, 0, PV_VOLUME_F32}, {{512, 512, 512}, 0, PV_VOLUME_U16},
};

/* The documented cross-check (include/parvis/octreg.h): identical integer
 * shifts and valid flags on >= 99% of the B-scans. */
#define OCT_AGREEMENT_THRESHOLD 0.99

/* Past this many voxels the CPU backend is timed once. */
#define OCT_CPU_SINGLE_RUN ((size_t)1 << 22)

typedef struct oct_inputs {
    pv_volume reference, target;
    pv_octreg_shift *trace, *found;
    pv_octreg_plan *plan;
} oct_inputs;

/* v's values mapped linearly from lo .. hi onto 0 .. 65535 (rounded) into
 * a new u16 volume that replaces v. */
static int quantise(pv_volume *v, float lo, float hi)
{
    pv_volume u16;
    if (pv_volume_alloc_u16(&u16, v->nx, v->ny, v->nz) != PV_OK)
        return cli_fail("cannot allocate a %dx%dx%d u16 volume", v->nx, v->ny, v->nz);
    const size_t count = (size_t)v->nx * v->ny * v->nz;
    const float scale = hi > lo ? 65535.0f / (hi - lo) : 0.0f;
    for (size_t i = 0; i < count; i++) {
        float q = (v->data[i] - lo) * scale;
        u16.data_u16[i] = (uint16_t)lrintf(q < 0.0f ? 0.0f : q > 65535.0f ? 65535.0f : q);
    }
    pv_volume_free(v);
    *v = u16;
    return 0;
}

static int quantise_inputs(oct_inputs *in)
{
    const size_t count = (size_t)in->reference.nx * in->reference.ny * in->reference.nz;
    float lo = in->reference.data[0], hi = lo;
    for (size_t i = 1; i < count; i++) {
        lo = fminf(lo, in->reference.data[i]);
        hi = fmaxf(hi, in->reference.data[i]);
    }
    int rc = quantise(&in->reference, lo, hi);
    return rc == 0 ? quantise(&in->target, lo, hi) : rc;
}

static int make_inputs(const int n[3], pv_volume_type type, oct_inputs *in)
{
    pv_octreg_synth_params p;
    pv_octreg_synth_params_default(&p);
    memcpy(p.size, n, sizeof p.size);
    p.integer_shifts = 1;
    p.start[1] = 2.0;
    /* Motion scaled with the volume, as eye motion is in time. */
    for (int a = 0; a < 3; a++)
        p.drift[a] *= n[2] / 64.0;
    in->trace = calloc((size_t)n[2], sizeof *in->trace);
    in->found = calloc((size_t)n[2], sizeof *in->found);
    if (!in->trace || !in->found || pv_volume_alloc(&in->reference, n[0], n[1], n[2]) != PV_OK ||
        pv_volume_alloc(&in->target, n[0], n[1], n[2]) != PV_OK)
        return cli_fail("cannot allocate two %dx%dx%d volumes", n[0], n[1], n[2]);
    pv_status status = pv_octreg_synthesize(&p, &in->reference, &in->target, in->trace);
    if (status != PV_OK)
        return cli_fail_status(status, "synthetic AO-OCT volumes");
    return type == PV_VOLUME_U16 ? quantise_inputs(in) : 0;
}

static void free_inputs(oct_inputs *in)
{
    pv_volume_free(&in->reference);
    pv_volume_free(&in->target);
    free(in->trace);
    free(in->found);
}

static pv_status run_register(pv_context *ctx, void *user)
{
    (void)ctx;
    oct_inputs *in = user;
    return pv_octreg_register(in->plan, &in->target, in->found, NULL);
}

static double within_one(const oct_inputs *in, int planes)
{
    int valid = 0, good = 0;
    for (int k = 0; k < planes; k++) {
        if (!in->found[k].valid)
            continue;
        valid++;
        good += fabs(in->found[k].dx - in->trace[k].dx) <= 1.0 &&
                fabs(in->found[k].dy - in->trace[k].dy) <= 1.0 &&
                fabs(in->found[k].dz - in->trace[k].dz) <= 1.0;
    }
    return valid ? (double)good / valid : 0.0;
}

/* Plan (timed apart), then the timed registrations; found keeps the last. */
static int time_backend(const bench_config *config, pv_context *ctx, oct_inputs *in,
                        double *precompute_ms, pv_timing *timing, bench_series *series)
{
    pv_timing plan_timing = {0, 0, 0, 0};
    pv_status status = pv_octreg_plan_create(ctx, &in->reference, NULL, &in->plan);
    if (status == PV_OK) {
        pv_context_last_timing(ctx, &plan_timing);
        status = bench_time_series(config, ctx, run_register, in, timing, series);
    }
    pv_octreg_plan_destroy(in->plan);
    in->plan = NULL;
    *precompute_ms = plan_timing.total_ms;
    return status == PV_OK ? 0 : cli_fail_status(status, "octreg");
}

static double agreement(const pv_octreg_shift *a, const pv_octreg_shift *b, int planes)
{
    int same = 0;
    for (int k = 0; k < planes; k++)
        same += a[k].valid == b[k].valid && a[k].dx == b[k].dx && a[k].dy == b[k].dy &&
                a[k].dz == b[k].dz;
    return (double)same / planes;
}

static void name_case(const int n[3], pv_volume_type type, char *out, size_t size)
{
    const char *suffix = type == PV_VOLUME_U16 ? " u16" : "";
    if (n[0] == n[1] && n[1] == n[2])
        snprintf(out, size, "oct %d^3%s", n[0], suffix);
    else
        snprintf(out, size, "oct %dx%dx%d%s", n[0], n[1], n[2], suffix);
}

static int bench_case(const bench_config *config, const bench_contexts *contexts,
                      const int n[3], oct_inputs *in, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "octreg");
    name_case(n, in->target.type, r->name, sizeof r->name);
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "within1";
    r->threshold = OCT_AGREEMENT_THRESHOLD;
    r->size = (double)n[0] * n[1] * n[2];
    r->roofline_bytes = roofline_octreg_bytes(n);
    r->roofline_ops = ops_octreg(n);
    bench_config cpu_config = *config;
    if ((size_t)n[0] * n[1] * n[2] > OCT_CPU_SINGLE_RUN) {
        cpu_config.runs = cpu_config.cpu_runs = 1;
        cpu_config.warmup = cpu_config.cpu_warmup = 0;
    }
    double cpu_pre = 0.0, cl_pre = 0.0;
    pv_timing cpu, cl;
    int planes = n[2];
    pv_octreg_shift *cpu_found = malloc((size_t)planes * sizeof *cpu_found);
    if (!cpu_found)
        return cli_fail("out of memory");
    int rc = time_backend(&cpu_config, contexts->cpu, in, &cpu_pre, &cpu, &r->cpu_samples);
    if (rc == 0) {
        memcpy(cpu_found, in->found, (size_t)planes * sizeof *cpu_found);
        bench_fill_cpu(r, &cpu, NULL);
        r->cpu_quality = within_one(in, planes);
    }
    if (rc == 0 && contexts->opencl &&
        (rc = time_backend(config, contexts->opencl, in, &cl_pre, &cl, &r->cl_samples)) == 0) {
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = within_one(in, planes);
        r->agreement = agreement(cpu_found, in->found, planes);
    }
    snprintf(r->params, sizeof r->params, "precompute cpu %.0f ms, cl %.0f ms", cpu_pre, cl_pre);
    free(cpu_found);
    return rc;
}

int bench_octreg_case_typed(const bench_config *config, const bench_contexts *contexts,
                            const int size[3], pv_volume_type type, bench_rows *rows)
{
    bench_result *row = malloc(sizeof *row);
    if (!row)
        return cli_fail("out of memory");
    oct_inputs in;
    memset(&in, 0, sizeof in);
    int rc = make_inputs(size, type, &in);
    if (rc == 0)
        rc = bench_case(config, contexts, size, &in, row);
    if (rc == 0)
        rc = bench_add_row(rows, row);
    free_inputs(&in);
    free(row);
    return rc;
}

int bench_octreg_case(const bench_config *config, const bench_contexts *contexts,
                      const int size[3], bench_rows *rows)
{
    return bench_octreg_case_typed(config, contexts, size, PV_VOLUME_F32, rows);
}

int bench_octreg_cases(const bench_config *config, const bench_contexts *contexts,
                       bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    for (size_t i = 0; i < sizeof oct_cases / sizeof oct_cases[0]; i++) {
        char name[48];
        name_case(oct_cases[i].n, oct_cases[i].type, name, sizeof name);
        if (!bench_wants(config, "octreg", name, oct_cases[i].quick))
            continue;
        if (bench_octreg_case_typed(config, contexts, oct_cases[i].n, oct_cases[i].type, &rows))
            return 1;
    }
    return 0;
}
