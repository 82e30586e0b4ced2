/* parvis-bench: the timing loop, the contexts (with their measured limits),
 * the case selection and its progress line. */
#include "bench.h"
#include "bench_ab_spec.h"

#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copy sizes of the bandwidth probe: past the caches everywhere, and
 * larger on a GPU, whose memory is several times faster. */
#define BANDWIDTH_BYTES_GPU ((size_t)256 << 20)
#define BANDWIDTH_BYTES_OTHER ((size_t)64 << 20)

void bench_series_medians(const bench_series *s, pv_timing *median_out)
{
    median_out->total_ms = bench_median(s->total_ms, s->count);
    median_out->kernel_ms = bench_median(s->kernel_ms, s->count);
    median_out->upload_ms = bench_median(s->upload_ms, s->count);
    median_out->download_ms = bench_median(s->download_ms, s->count);
}

void bench_add_timing(pv_timing *sum, const pv_timing *t)
{
    sum->total_ms += t->total_ms;
    sum->kernel_ms += t->kernel_ms;
    sum->upload_ms += t->upload_ms;
    sum->download_ms += t->download_ms;
}

static int on_cpu(const pv_context *ctx)
{
    return ctx && pv_context_backend(ctx) == PV_BACKEND_CPU;
}

int bench_runs_for(const bench_config *config, const pv_context *ctx)
{
    int runs = on_cpu(ctx) && config->cpu_runs > 0 ? config->cpu_runs : config->runs;
    return runs < 1 ? 1 : runs > BENCH_MAX_SAMPLES ? BENCH_MAX_SAMPLES : runs;
}

int bench_warmup_for(const bench_config *config, const pv_context *ctx)
{
    return on_cpu(ctx) && config->cpu_warmup >= 0 ? config->cpu_warmup : config->warmup;
}

pv_status bench_kernel_series(pv_context *ctx, bench_kernel_run_fn run, void *user,
                              bench_series *series)
{
    if (on_cpu(ctx))
        return PV_OK; /* one series: the CPU's kernel_ms is its compute time */
    const pv_kernel_timing before = pv_context_kernel_timing(ctx);
    double kernel_ms = 0.0;
    pv_status status = pv_context_set_kernel_timing(ctx, PV_KERNEL_TIMING_EACH);
    if (status == PV_OK)
        status = run(ctx, user, &kernel_ms);
    for (int i = 0; i < series->count && status == PV_OK; i++)
        status = run(ctx, user, &series->kernel_ms[i]);
    pv_context_set_kernel_timing(ctx, before);
    return status;
}

/* One run of a bench_run_fn, for bench_kernel_series. */
typedef struct plain_run {
    bench_run_fn run;
    void *user;
} plain_run;

static pv_status plain_kernel_run(pv_context *ctx, void *user, double *kernel_ms)
{
    const plain_run *plain = user;
    pv_timing timing;
    pv_status status = plain->run(ctx, plain->user);
    if (status == PV_OK && pv_context_last_timing(ctx, &timing) == PV_OK)
        *kernel_ms = timing.kernel_ms;
    return status;
}

pv_status bench_time_series(const bench_config *config, pv_context *ctx, bench_run_fn run,
                            void *user, pv_timing *result, bench_series *series)
{
    for (int i = 0; i < bench_warmup_for(config, ctx); i++) {
        pv_status status = run(ctx, user);
        if (status != PV_OK)
            return status;
    }
    bench_series local;
    bench_series *s = series ? series : &local;
    int runs = bench_runs_for(config, ctx);
    /* --min-time: a row of a fraction of a millisecond gets more samples,
     * up to what a series holds, so that its median is as steady as a
     * long row's; the CPU backend keeps its --cpu-runs */
    const double min_time = on_cpu(ctx) ? 0.0 : (double)config->min_time_ms;
    double timed = 0.0;
    s->count = 0;
    for (int i = 0; i < BENCH_MAX_SAMPLES && (i < runs || timed < min_time); i++) {
        pv_status status = run(ctx, user);
        if (status != PV_OK)
            return status;
        pv_timing timing;
        pv_context_last_timing(ctx, &timing);
        s->total_ms[i] = timing.total_ms;
        s->kernel_ms[i] = timing.kernel_ms;
        s->upload_ms[i] = timing.upload_ms;
        s->download_ms[i] = timing.download_ms;
        s->count = i + 1;
        timed += timing.total_ms > 0.0 ? timing.total_ms : 0.0;
    }
    plain_run plain = {run, user};
    pv_status status = bench_kernel_series(ctx, plain_kernel_run, &plain, s);
    if (status != PV_OK)
        return status;
    bench_series_medians(s, result);
    return PV_OK;
}

pv_status bench_time(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                     pv_timing *result)
{
    return bench_time_series(config, ctx, run, user, result, NULL);
}

void bench_fill_cpu(bench_result *r, const pv_timing *median, const bench_series *series)
{
    r->cpu_ms = median->total_ms;
    if (series)
        r->cpu_samples = *series;
}

void bench_fill_opencl(bench_result *r, const pv_timing *median, const bench_series *series)
{
    r->have_opencl = 1;
    r->cl_kernel_ms = median->kernel_ms;
    r->cl_total_ms = median->total_ms;
    r->cl_upload_ms = median->upload_ms;
    r->cl_download_ms = median->download_ms;
    if (series)
        r->cl_samples = *series;
}

int bench_add_row(bench_rows *rows, const bench_result *row)
{
    if (*rows->count >= rows->max)
        return cli_fail("too many bench cases");
    rows->results[(*rows->count)++] = *row;
    bench_print_row(row);
    return 0;
}

/* ------------------------------------------------------------ selection */

static int progress_counting, progress_total, progress_done;

void bench_progress_counting(int on)
{
    progress_counting = on;
    if (on)
        progress_total = progress_done = 0;
}

int bench_progress_total(void)
{
    return progress_total;
}

int bench_case_matches(const char *only, const char *op, const char *name)
{
    if (!only)
        return 1;
    /* "=NAME" is that case alone: most names are also parts of longer ones
     * (sift-720p of sift-batch16-720p). */
    if (only[0] == '=')
        return strcmp(only + 1, name) == 0;
    return strcmp(only, op) == 0 || strstr(name, only) != NULL;
}

static int selected(const bench_config *config, const char *op, const char *name, int quick_case)
{
    if (config->quick && !quick_case)
        return 0;
    return bench_case_matches(config->only, op, name);
}

int bench_wants(const bench_config *config, const char *op, const char *name, int quick_case)
{
    if (!selected(config, op, name, quick_case))
        return 0;
    if (progress_counting) {
        progress_total++;
        return 0;
    }
    progress_done++;
    if (progress_total > 0)
        fprintf(stderr, "[%d/%d] %s %s ...\n", progress_done, progress_total, op, name);
    else
        fprintf(stderr, "[%d] %s %s ...\n", progress_done, op, name);
    return 1;
}

/* ------------------------------------------------------------- contexts */

double bench_bad_pixels(const pv_image *disparity, const pv_image *truth, float gt_scale,
                        int border)
{
    double bad = -1.0;
    if (pv_disparity_error(disparity, truth, gt_scale, 1.0f, border, &bad) != PV_OK)
        return -1.0;
    return bad;
}

int bench_load_stereo_set(const bench_config *config, const char *set, pv_image *left,
                          pv_image *right, pv_image *truth)
{
    static const char *const files[] = {"left.pgm", "right.pgm", "gt.pgm"};
    pv_image *images[] = {left, right, truth};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/stereo/%s/%s", config->data_dir, set, files[i]);
        FILE *probe = i == 2 ? fopen(path, "rb") : NULL;
        if (probe)
            fclose(probe);
        else if (i == 2) /* the sets of Middlebury 2014 (motorcycle) hold their truth as PFM */
            snprintf(path, sizeof path, "%s/stereo/%s/gt.pfm", config->data_dir, set);
        pv_status status = pv_image_read(path, i < 2 ? PV_PIXEL_U8 : PV_PIXEL_F32, images[i]);
        if (status != PV_OK)
            return cli_fail_status(status, path);
    }
    return 0;
}

double bench_disparity_agreement(const pv_image *a, const pv_image *b, float tolerance)
{
    size_t same = 0, total = (size_t)a->width * (size_t)a->height;
    const float *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < total; i++)
        same += (isinf(pa[i]) && isinf(pb[i])) || fabsf(pa[i] - pb[i]) <= tolerance;
    return (double)same / (double)total;
}

/* --param's "FAMILY.NAME=VALUE,..." (the grammar of --ab-param's text
 * form, bench_ab_spec_parse) onto an OpenCL context (the CPU backend has
 * no launch parameters): 0, or 1 after a message. */
static int apply_params(const bench_config *config, pv_context *ctx)
{
    if (!config->params || pv_context_backend(ctx) != PV_BACKEND_OPENCL)
        return 0;
    if (config->params[0] == '@')
        return cli_fail("--param '%s': not FAMILY.NAME=VALUE[,...]", config->params);
    bench_ab_spec spec;
    char why[256];
    if (bench_ab_spec_parse(config->params, &spec, why, sizeof why))
        return cli_fail("--param: %s", why);
    for (int i = 0; i < spec.count; i++) {
        const bench_ab_param *p = &spec.params[i];
        pv_status status = pv_tune_set(ctx, p->family, p->name, p->value);
        if (status != PV_OK)
            return cli_fail_status(status, "--param");
    }
    return 0;
}

int bench_time_or_fail(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                       pv_timing *median, bench_series *series, const char *what)
{
    if (apply_params(config, ctx))
        return 1;
    pv_status status = bench_time_series(config, ctx, run, user, median, series);
    return status == PV_OK ? 0 : cli_fail_status(status, what);
}

int bench_time_both(const bench_config *config, const bench_contexts *contexts, bench_run_fn run,
                    void *cpu_user, void *cl_user, pv_timing *cpu_t, pv_timing *cl_t,
                    bench_result *r, const char *what)
{
    char label[128];
    snprintf(label, sizeof label, "%s (cpu)", what);
    if (bench_time_or_fail(config, contexts->cpu, run, cpu_user, cpu_t, &r->cpu_samples, label))
        return 1;
    if (!contexts->opencl)
        return 0;
    snprintf(label, sizeof label, "%s (opencl)", what);
    return bench_time_or_fail(config, contexts->opencl, run, cl_user, cl_t, &r->cl_samples, label);
}

int bench_first_gpu(void)
{
    pv_device_info devices[64];
    int count = 0;
    if (pv_device_list(devices, 64, &count) != PV_OK)
        return -1;
    for (int i = 0; i < count && i < 64; i++)
        if (devices[i].type == PV_DEVICE_GPU)
            return i;
    return count > 0 ? 0 : -1;
}

/* A probe's rate, 0 (with a note naming `what`) when it could not run. */
static double probe_rate(pv_context *ctx, pv_status status, double rate, const char *what)
{
    if (status == PV_OK)
        return rate;
    fprintf(stderr, "parvis-bench: %s of %s not measured: %s\n", what,
            pv_context_device_name(ctx), pv_context_last_error(ctx));
    return 0.0;
}

/* The copy bandwidth and compute peaks of ctx (0 for any not measured). */
static void measure_limits(pv_context *ctx, size_t copy_bytes, bench_limits *limits)
{
    double rate = 0.0;
    pv_status status = pv_context_copy_bandwidth(ctx, copy_bytes, &rate);
    limits->bandwidth = probe_rate(ctx, status, rate, "copy bandwidth");
    status = pv_context_compute_peak(ctx, PV_COMPUTE_FLOAT, &rate);
    limits->float_peak = probe_rate(ctx, status, rate, "fp32 peak");
    status = pv_context_compute_peak(ctx, PV_COMPUTE_INT, &rate);
    limits->int_peak = probe_rate(ctx, status, rate, "integer peak");
}

static size_t opencl_probe_bytes(int device_index)
{
    pv_device_info devices[64];
    int count = 0;
    if (pv_device_list(devices, 64, &count) == PV_OK && device_index >= 0 && device_index < count &&
        device_index < 64) {
        const pv_device_info *d = &devices[device_index];
        size_t bytes = d->type == PV_DEVICE_GPU ? BANDWIDTH_BYTES_GPU : BANDWIDTH_BYTES_OTHER;
        while (d->max_alloc && bytes > d->max_alloc / 2 && bytes > 4096)
            bytes /= 2;
        return bytes;
    }
    return BANDWIDTH_BYTES_OTHER;
}

/* The OpenCL device the bench compares with: --device, else the first GPU,
 * else the first device; -1 when there is none. */
static int opencl_device_index(const bench_config *config)
{
    return config->device.device_index >= 0 ? config->device.device_index : bench_first_gpu();
}

static pv_context *open_opencl_at(const bench_config *config, int device_index)
{
    cli_backend_options opencl = config->device;
    opencl.backend = PV_BACKEND_OPENCL;
    opencl.device_index = device_index;
    return cli_context(&opencl);
}

/* The OpenCL context of device_index with config->params set right after
 * it is made, before any plan is: a plan (SIFT, flow, registration...)
 * bakes the launch parameters into its programs when it is made, so
 * values set only before the timed series would miss the first case's
 * plan.  0 with *ctx; -1 when no context could be made; 1 when the
 * parameters were refused (after a message; nothing kept). */
static int open_with_params(const bench_config *config, int device_index, pv_context **ctx)
{
    *ctx = open_opencl_at(config, device_index);
    if (!*ctx)
        return -1;
    if (apply_params(config, *ctx)) {
        pv_context_destroy(*ctx);
        *ctx = NULL;
        return 1;
    }
    return 0;
}

static int open_opencl(const bench_config *config, bench_contexts *contexts)
{
    int index = opencl_device_index(config);
    if (index < 0) {
        if (config->device.backend == PV_BACKEND_OPENCL)
            return cli_fail("no OpenCL device found");
        return 0;
    }
    pv_context *ctx;
    int rc = open_with_params(config, index, &ctx);
    if (rc)
        return rc > 0 || config->device.backend == PV_BACKEND_OPENCL;
    contexts->opencl = ctx;
    measure_limits(ctx, opencl_probe_bytes(index), &contexts->opencl_limits);
    return 0;
}

pv_context *bench_open_opencl(const bench_config *config)
{
    int index = opencl_device_index(config);
    if (index < 0) {
        cli_fail("no OpenCL device found");
        return NULL;
    }
    pv_context *ctx;
    return open_with_params(config, index, &ctx) ? NULL : ctx;
}

int bench_open_contexts(const bench_config *config, bench_contexts *contexts)
{
    memset(contexts, 0, sizeof *contexts);
    cli_backend_options cpu = config->device;
    cpu.backend = PV_BACKEND_CPU;
    cpu.device_index = -1;
    contexts->cpu = cli_context(&cpu);
    if (!contexts->cpu)
        return 1;
    measure_limits(contexts->cpu, BANDWIDTH_BYTES_OTHER, &contexts->cpu_limits);
    if (config->device.backend == PV_BACKEND_CPU)
        return 0;
    if (open_opencl(config, contexts)) {
        bench_close_contexts(contexts);
        return 1;
    }
    return 0;
}

void bench_close_contexts(bench_contexts *contexts)
{
    pv_context_destroy(contexts->cpu);
    pv_context_destroy(contexts->opencl);
    contexts->cpu = contexts->opencl = NULL;
}

void bench_describe_settings(bench_result *r, const char *op, const void *params, size_t size)
{
    int index = -1;
    pv_op_info info;
    r->settings[0] = '\0';
    if (pv_op_find(op, &index) != PV_OK || pv_op_get(index, &info) != PV_OK)
        return;
    size_t used = 0;
    for (int k = 0; k < info.param_count && used < sizeof r->settings; k++) {
        pv_param_info p;
        double value = 0;
        if (pv_op_param(index, k, &p) != PV_OK ||
            pv_params_get(index, params, size, p.name, &value) != PV_OK)
            return; /* a size that is not the structure's: no settings rather than wrong ones */
        /* floats to their 7 significant digits: 0.95, not 0.949999988 */
        int n = snprintf(r->settings + used, sizeof r->settings - used,
                         p.type == PV_PARAM_REAL ? "%s%s=%.7g" : "%s%s=%.17g", used ? " " : "",
                         p.name, value);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}
