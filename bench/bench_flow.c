/* Optical flow cases.  2D: flow2d-venus, the Venus left image warped by
 * the known smooth field of `parvis synth-flow` (cli_synth_flow_truth,
 * magnitude 4 px), solved with the 2D defaults; EPE against that truth
 * (bench/peers/peers.py runs OpenCV's Farneback and DIS on the same pair).
 * 3D: edge 32 for the quick suite, then the paper's table (cubic volumes of edge 50, 75, ..., 250; R = 5 warps, 50 Jacobi iterations per warp, a 15-tap
 * Gaussian), CPU vs OpenCL through a plan (buffers kept between runs, as
 * in the paper), with the per-stage breakdown printed under each row.
 *
 * The CPU reference takes minutes at the large sizes, so above edge 75 it
 * runs once without warm-up; the OpenCL side always uses --runs/--warmup. */
#include "bench.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLOW_BENCH_WAVES 8
#define FLOW_BENCH_MOTION 1.0 /* voxels, per component */

/* The documented cross-check (include/parvis/flow.h): every voxel's flow
 * within PV_FLOW_TOLERANCE of the CPU's. */
#define FLOW_AGREEMENT_THRESHOLD 1.0

typedef struct flow_inputs {
    pv_volume fixed, moving;
    pv_flow_field truth;
    pv_flow_plan *plan;
    pv_flow_field *output;
} flow_inputs;

static pv_status run_flow(pv_context *ctx, void *user)
{
    (void)ctx;
    flow_inputs *in = user;
    return pv_flow_plan_run(in->plan, &in->fixed, &in->moving, in->output);
}

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

static double random01(uint32_t *state)
{
    return (double)(next_random(state) >> 8) / 16777216.0;
}

/* moving = a sum of separable plane-wave products (wavelengths ~8 .. 25
 * voxels), built from 1D tables so 250^3 takes a moment, not a minute. */
static int make_moving(int n, pv_volume *moving)
{
    float *table = malloc((size_t)FLOW_BENCH_WAVES * 3 * (size_t)n * sizeof *table);
    if (!table || pv_volume_alloc(moving, n, n, n) != PV_OK) {
        free(table);
        return cli_fail("cannot allocate a %d^3 volume", n);
    }
    uint32_t state = 2024u;
    for (int w = 0; w < FLOW_BENCH_WAVES; w++)
        for (int a = 0; a < 3; a++) {
            double k = 0.25 + 0.5 * random01(&state), phase = 6.283185 * random01(&state);
            for (int i = 0; i < n; i++)
                table[((size_t)w * 3 + a) * n + i] = (float)cos(k * i + phase);
        }
    #pragma omp parallel for
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                float v = 0.5f;
                for (int w = 0; w < FLOW_BENCH_WAVES; w++)
                    v += 0.4f / FLOW_BENCH_WAVES * table[(size_t)w * 3 * n + x] *
                         table[((size_t)w * 3 + 1) * n + y] * table[((size_t)w * 3 + 2) * n + z];
                moving->data[((size_t)z * n + y) * n + x] = v;
            }
    free(table);
    return 0;
}

/* A smooth divergence-free field, one period over twice the volume. */
static void make_truth(int n, pv_flow_field *truth)
{
    const double step = 6.283185 / (2.0 * n);
    #pragma omp parallel for
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                size_t i = ((size_t)z * n + y) * n + x;
                truth->u.data[i] = (float)(FLOW_BENCH_MOTION * sin(step * (y + z)));
                truth->v.data[i] = (float)(FLOW_BENCH_MOTION * sin(step * (x + z) + 1.0));
                truth->w.data[i] = (float)(FLOW_BENCH_MOTION * cos(step * (x + y)));
            }
}

/* fixed(x) = moving(x + truth(x)), so the flow to find is the truth. */
static int make_inputs(pv_context *cpu, int n, flow_inputs *in)
{
    if (make_moving(n, &in->moving))
        return 1;
    if (pv_volume_alloc(&in->fixed, n, n, n) != PV_OK ||
        pv_flow_field_alloc(&in->truth, n, n, n) != PV_OK)
        return cli_fail("cannot allocate a %d^3 problem", n);
    make_truth(n, &in->truth);
    pv_status status = pv_flow_warp(cpu, &in->moving, &in->truth, &in->fixed);
    return status == PV_OK ? 0 : cli_fail_status(status, "flow warp");
}

static void free_inputs(flow_inputs *in)
{
    pv_volume_free(&in->fixed);
    pv_volume_free(&in->moving);
    pv_flow_field_free(&in->truth);
}

/* The paper's setting, which is the library's default (rho 2 with 15
 * taps, R 5, N 50), with alpha for volumes in [0, 1]. */
static void bench_params(pv_flow_params *params)
{
    pv_flow_params_default(params);
    params->alpha = 1e-3f;
}

typedef struct backend_run {
    pv_timing timing;
    bench_series series;
    pv_flow_stats stats;
    double epe;
    int two_d;
} backend_run;

/* 2D flow: the border left out of the EPE (as tests/test_cli.sh). */
#define FLOW2D_BORDER 8
#define FLOW2D_MAGNITUDE 4.0f

/* The mean EPE of a result: 3D voxels inside a border of 3, or 2D pixels
 * with known truth inside FLOW2D_BORDER. */
static pv_status mean_epe(const pv_flow_field *output, const pv_flow_field *truth, double *epe)
{
    if (truth->u.nz > 1)
        return pv_flow_endpoint_error(output, truth, 3, epe, NULL);
    pv_flow_error error;
    pv_status status = pv_flow_error_2d(output, truth, FLOW2D_BORDER, &error);
    if (status == PV_OK)
        *epe = error.mean_endpoint;
    return status;
}

static int time_backend(const bench_config *config, pv_context *ctx, const pv_flow_params *params,
                        flow_inputs *in, pv_flow_field *output, backend_run *result)
{
    const pv_volume *f = &in->fixed;
    pv_status status = pv_flow_plan_create(ctx, f->nx, f->ny, f->nz, params, &in->plan);
    if (status != PV_OK)
        return cli_fail_status(status, "flow plan");
    in->output = output;
    status = bench_time_series(config, ctx, run_flow, in, &result->timing, &result->series);
    if (status == PV_OK)
        status = pv_flow_plan_stats(in->plan, &result->stats);
    if (status == PV_OK)
        status = mean_epe(output, &in->truth, &result->epe);
    result->two_d = in->truth.u.nz == 1;
    pv_flow_plan_destroy(in->plan);
    in->plan = NULL;
    return status == PV_OK ? 0 : cli_fail_status(status, "flow");
}

static double agreement(const pv_flow_field *a, const pv_flow_field *b)
{
    const pv_volume *pa[3] = {&a->u, &a->v, &a->w}, *pb[3] = {&b->u, &b->v, &b->w};
    size_t total = (size_t)a->u.nx * (size_t)a->u.ny * (size_t)a->u.nz, same = 0;
    for (size_t i = 0; i < total; i++) {
        int ok = 1;
        for (int c = 0; c < 3; c++)
            ok &= fabsf(pa[c]->data[i] - pb[c]->data[i]) <= (float)PV_FLOW_TOLERANCE;
        same += ok;
    }
    return (double)same / (double)total;
}

static void print_stages(const char *name, const backend_run *r)
{
    const pv_flow_stats *s = &r->stats;
    printf("       %-6s stages ms: pyramid %.3f  gradients %.3f  resample %.3f  tensor+smooth "
           "%.3f  jacobi %.3f  (%d iterations)  mean EPE %.4f %s\n",
           name, s->pyramid_ms, s->gradient_ms, s->resample_ms, s->tensor_ms, s->jacobi_ms,
           s->iterations, r->epe, r->two_d ? "px" : "voxel");
}

/* slow_cpu: the CPU side runs once without warm-up (minutes a run). */
static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const pv_flow_params *params, int slow_cpu, flow_inputs *in, bench_result *r,
                    bench_rows *rows)
{
    const int nx = in->fixed.nx, ny = in->fixed.ny, nz = in->fixed.nz;
    pv_flow_field cpu_out = {{0}, {0}, {0}}, cl_out = cpu_out;
    backend_run *runs = calloc(2, sizeof *runs);
    if (!runs || pv_flow_field_alloc(&cpu_out, nx, ny, nz) != PV_OK ||
        pv_flow_field_alloc(&cl_out, nx, ny, nz) != PV_OK) {
        free(runs);
        pv_flow_field_free(&cpu_out);
        return cli_fail("cannot allocate the flow outputs");
    }
    bench_config cpu_config = *config;
    if (slow_cpu) {
        cpu_config.runs = cpu_config.cpu_runs = 1;
        cpu_config.warmup = cpu_config.cpu_warmup = 0;
    }
    backend_run *cpu = &runs[0], *cl = &runs[1];
    int rc = time_backend(&cpu_config, contexts->cpu, params, in, &cpu_out, cpu);
    if (rc == 0 && contexts->opencl)
        rc = time_backend(config, contexts->opencl, params, in, &cl_out, cl);
    if (rc == 0) {
        bench_fill_cpu(r, &cpu->timing, &cpu->series);
        if (nz == 1) /* 2D: the EPE is the row's quality */
            r->cpu_quality = cpu->epe;
        if (contexts->opencl) {
            bench_fill_opencl(r, &cl->timing, &cl->series);
            r->agreement = agreement(&cl_out, &cpu_out);
            if (nz == 1)
                r->cl_quality = cl->epe;
        }
        rc = bench_add_row(rows, r);
    }
    if (rc == 0) {
        print_stages("cpu", cpu);
        if (r->have_opencl)
            print_stages("opencl", cl);
    }
    pv_flow_field_free(&cpu_out);
    pv_flow_field_free(&cl_out);
    free(runs);
    return rc;
}

static void describe_row(const bench_contexts *contexts, int n, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "flow");
    snprintf(r->name, sizeof r->name, "flow3d-%d", n);
    snprintf(r->params, sizeof r->params, "%d^3 R5 N50 k15", n);
    pv_flow_params settings;
    bench_params(&settings);
    bench_describe_settings(r, "flow", &settings, sizeof settings);
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->cpu_quality = -1.0;
    r->threshold = FLOW_AGREEMENT_THRESHOLD;
    r->size = (double)n * n * n;
    r->roofline_bytes = roofline_flow_bytes(n);
    pv_flow_params params;
    bench_params(&params);
    r->roofline_ops = ops_flow(n, params.warps, params.iterations, params.kernel_size);
}

int bench_flow_case(const bench_config *config, const bench_contexts *contexts, int n,
                    bench_rows *rows)
{
    bench_result *r = malloc(sizeof *r);
    if (!r)
        return cli_fail("out of memory");
    describe_row(contexts, n, r);
    flow_inputs in;
    memset(&in, 0, sizeof in);
    pv_flow_params params;
    bench_params(&params);
    int rc = make_inputs(contexts->cpu, n, &in);
    if (rc == 0)
        rc = run_case(config, contexts, &params, n > 75, &in, r, rows);
    free_inputs(&in);
    free(r);
    return rc;
}

/* ----------------------------------------------------------------- 2D */

/* moving = the Venus left image in [0, 1]; fixed(x) = moving(x + truth(x)). */
static int make_inputs_2d(const bench_config *config, pv_context *cpu, flow_inputs *in)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/stereo/venus/left.pgm", config->data_dir);
    pv_image image;
    pv_status status = pv_image_read(path, PV_PIXEL_F32, &image);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    const int nx = image.width, ny = image.height;
    int rc = pv_volume_alloc(&in->moving, nx, ny, 1) != PV_OK ||
             pv_volume_alloc(&in->fixed, nx, ny, 1) != PV_OK ||
             pv_flow_field_alloc(&in->truth, nx, ny, 1) != PV_OK;
    if (rc == 0) {
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                in->moving.data[(ptrdiff_t)y * in->moving.stride_y + x] =
                    ((const float *)image.data)[(ptrdiff_t)y * image.stride + x] / 255.0f;
        cli_synth_flow_truth(&in->truth, FLOW2D_MAGNITUDE);
        status = pv_flow_warp(cpu, &in->moving, &in->truth, &in->fixed);
        rc = status == PV_OK ? 0 : cli_fail_status(status, "flow warp");
    } else {
        cli_fail("cannot allocate a %dx%d flow problem", nx, ny);
    }
    pv_image_free(&image);
    return rc;
}

static int bench_flow2d_case(const bench_config *config, const bench_contexts *contexts,
                             bench_rows *rows)
{
    bench_result *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail("out of memory");
    flow_inputs in;
    memset(&in, 0, sizeof in);
    pv_flow_params params;
    pv_flow_params_default_2d(&params);
    int rc = make_inputs_2d(config, contexts->cpu, &in);
    if (rc == 0) {
        snprintf(r->op, sizeof r->op, "flow");
        snprintf(r->name, sizeof r->name, "flow2d-venus");
        snprintf(r->params, sizeof r->params, "%dx%d L%d R%d N%d %gpx",
                 in.fixed.nx, in.fixed.ny, params.levels, params.warps, params.iterations,
                 (double)FLOW2D_MAGNITUDE);
        snprintf(r->variant, sizeof r->variant, "2d");
        r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
        r->cpu_quality = r->cl_quality = -1.0;
        r->quality_name = "EPE px";
        r->quality_absolute = 1;
        r->threshold = FLOW_AGREEMENT_THRESHOLD;
        r->size = (double)in.fixed.nx * in.fixed.ny;
        rc = run_case(config, contexts, &params, 0, &in, r, rows);
    }
    free_inputs(&in);
    free(r);
    return rc;
}

int bench_flow_cases(const bench_config *config, const bench_contexts *contexts,
                     bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    if (bench_wants(config, "flow", "flow2d-venus", 1) && bench_flow2d_case(config, contexts, &rows))
        return 1;
    /* Edge 32 keeps the quick suite short; 50 .. 250 are the paper's. */
    static const int edges[] = {32, 50, 75, 100, 125, 150, 175, 200, 225, 250};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        int n = edges[i];
        char name[32];
        snprintf(name, sizeof name, "flow3d-%d", n);
        if (!bench_wants(config, "flow", name, n == 32))
            continue;
        if (bench_flow_case(config, contexts, n, &rows))
            return 1;
    }
    return 0;
}
