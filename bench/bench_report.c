/* parvis-bench reports: each row's verdicts (cross-check, spread, limits),
 * the rows as they finish and the table again at the end.  The files are
 * written by bench_json.c and bench_plot.c. */
#include "bench.h"

#include "bench_ops.h"
#include "bench_roofline.h"
#include "bench_spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The measured limits of the run (set by bench_print_header), which the
 * roofline and compute columns divide by. */
static bench_limits report_cpu, report_opencl;

int bench_row_passes(const bench_result *r)
{
    if (!r->have_opencl || r->threshold <= 0.0)
        return 1;
    return r->agreement >= r->threshold;
}

/* The limits and the time a side of a row is judged by. */
static const bench_limits *side_limits(const bench_result *r, int opencl, double *ms)
{
    *ms = opencl ? r->cl_kernel_ms : r->cpu_ms;
    return opencl ? &report_opencl : &report_cpu;
}

double bench_row_memory_fraction(const bench_result *r, int opencl)
{
    double ms;
    const bench_limits *limits = side_limits(r, opencl, &ms);
    return roofline_fraction(r->roofline_bytes, limits->bandwidth, ms);
}

double bench_row_compute_fraction(const bench_result *r, int opencl)
{
    double ms;
    const bench_limits *limits = side_limits(r, opencl, &ms);
    double peak = r->ops_integer ? limits->int_peak : limits->float_peak;
    return ops_fraction(r->roofline_ops, peak, ms);
}

const char *bench_row_bound(const bench_result *r, int opencl)
{
    double memory = bench_row_memory_fraction(r, opencl);
    double compute = bench_row_compute_fraction(r, opencl);
    if (memory <= 0.0 && compute <= 0.0)
        return "-";
    return compute > memory ? "compute" : "memory";
}

/* ----------------------------------------------------------------- table */

/* Fixed-width columns first, the free-text params last, so a long params
 * text never pushes a number out of its column. */
static void print_columns(void)
{
    printf("%-6s %-26s %9s %3s %10s %9s %9s %7s %7s %8s %-4s %6s %6s %-5s %-22s %s\n", "op",
           "case", "cpu ms", "thr", "kernel ms", "e2e ms", "e2e-up", "x(kern)", "x(e2e)", "agree",
           "chk", "roof", "comp", "bound", "quality cpu/cl", "params");
}

static void print_limits(const char *side, pv_context *ctx, const bench_limits *limits)
{
    printf("%s : %s, copy %.1f GB/s, fp32 %.1f GFLOP/s, int %.1f Gop/s\n", side,
           pv_context_device_name(ctx), limits->bandwidth, limits->float_peak, limits->int_peak);
}

/* The OpenCL context's launch-parameter source when the bench started. */
static char report_launch[48] = "-";

void bench_launch_source(pv_context *ctx, char *label, size_t size)
{
    char source[128];
    static const char database[] = "database: ";
    if (!ctx || pv_tune_source(ctx, source, sizeof source) != PV_OK || !strcmp(source, "none"))
        snprintf(label, size, "-");
    else if (!strcmp(source, "defaults"))
        snprintf(label, size, "default");
    else if (!strncmp(source, database, sizeof database - 1)) /* "database: NAME (... match)" */
        snprintf(label, size, "db:%.*s", (int)strcspn(source + sizeof database - 1, " "),
                 source + sizeof database - 1);
    else
        snprintf(label, size, "%s", source);
}

const char *bench_row_launch(const bench_result *r)
{
    return !r->have_opencl ? "-" : r->launch[0] ? r->launch : report_launch;
}

void bench_set_launch_label(const char *label)
{
    snprintf(report_launch, sizeof report_launch, "%s", label ? label : "-");
}

void bench_print_header(const bench_contexts *contexts)
{
    bench_launch_source(contexts->opencl, report_launch, sizeof report_launch);
    report_cpu = contexts->cpu_limits;
    report_opencl = contexts->opencl_limits;
    printf("parvis-bench %s\n", pv_version());
    print_limits("CPU backend", contexts->cpu, &contexts->cpu_limits);
    if (contexts->opencl)
        print_limits("OpenCL     ", contexts->opencl, &contexts->opencl_limits);
    else
        printf("OpenCL      : none (CPU only)\n");
    printf("launch parameters: %s (the params column names each row's: default, db:<entry> of\n"
           "the tuning database, or cache, the local tuning cache)\n", report_launch);
    printf("times: median ms after warm-up.  cpu ms: the CPU backend, end to end (thr: its\n"
           "OpenMP threads); kernel ms: OpenCL device time (sum of kernel events); e2e ms:\n"
           "OpenCL end to end with transfers; e2e-up: e2e less the host-to-device uploads;\n"
           "x(kern), x(e2e): cpu ms over kernel ms / e2e ms.  agree: share of outputs on\n"
           "which both backends agree, chk: that share against the operation's cross-check\n"
           "threshold.  roof: minimum bytes at the measured copy bandwidth over the kernel\n"
           "time; comp: the algorithm's operations at the measured fp32 (int for SAD) peak\n"
           "over the kernel time; bound: the limit whose time is the longer.  A row whose samples spread more than %.0fx (slowest over fastest run) is\n"
           "followed by a warning.\n\n",
           BENCH_SPREAD_LIMIT);
    print_columns();
}

static void format_quality(const bench_result *r, char *out, size_t size)
{
    const char *name = r->quality_name ? r->quality_name : "";
    double scale = r->quality_absolute ? 1.0 : 100.0; /* shares print as percentages */
    const char *percent = r->quality_absolute ? "" : "%";
    int digits = r->quality_absolute ? 4 : 2;
    if (r->cpu_quality < 0)
        snprintf(out, size, "-");
    else if (r->have_opencl)
        snprintf(out, size, "%.*f/%.*f%s %s", digits, scale * r->cpu_quality, digits,
                 scale * r->cl_quality, percent, name);
    else
        snprintf(out, size, "%.*f%s %s", digits, scale * r->cpu_quality, percent, name);
}

static const char *check_word(const bench_result *r)
{
    if (!r->have_opencl || r->threshold <= 0.0)
        return "-";
    return bench_row_passes(r) ? "ok" : "FAIL";
}

static void print_fraction(double fraction)
{
    if (fraction > 0.0)
        printf(" %5.1f%%", 100.0 * fraction);
    else
        printf(" %6s", "-");
}

/* roof, comp and bound of the row's headline side. */
static void print_limits_columns(const bench_result *r)
{
    print_fraction(bench_row_memory_fraction(r, r->have_opencl));
    print_fraction(bench_row_compute_fraction(r, r->have_opencl));
    const char *bound = bench_row_bound(r, r->have_opencl);
    printf(" %-5s", strcmp(bound, "compute") == 0 ? "comp" : strcmp(bound, "memory") == 0 ? "mem"
                                                                                          : "-");
}

static int series_spreads(const bench_series *s)
{
    return bench_spread_exceeds(s->total_ms, s->count, BENCH_SPREAD_LIMIT);
}

int bench_row_spreads(const bench_result *r)
{
    return series_spreads(&r->cpu_samples) || (r->have_opencl && series_spreads(&r->cl_samples));
}

static void warn_series(const char *backend, const bench_series *s)
{
    if (!series_spreads(s))
        return;
    double low = s->total_ms[0], high = s->total_ms[0];
    for (int i = 1; i < s->count; i++) {
        low = s->total_ms[i] < low ? s->total_ms[i] : low;
        high = s->total_ms[i] > high ? s->total_ms[i] : high;
    }
    printf("       warning: the %s samples spread %.1fx (%.3f .. %.3f ms over %d runs): "
           "the machine was busy or a first-use cost was timed; do not trust this median\n",
           backend, bench_spread(s->total_ms, s->count), low, high, s->count);
}

void bench_print_row(const bench_result *r)
{
    printf("%-6s %-26s %9.3f %3d", r->op, r->name, r->cpu_ms, r->cpu_threads);
    if (r->have_opencl)
        printf(" %10.4f %9.3f %9.3f %6.1fx %6.1fx %7.3f%%", r->cl_kernel_ms, r->cl_total_ms,
               r->cl_total_ms - r->cl_upload_ms, r->cpu_ms / r->cl_kernel_ms,
               r->cpu_ms / r->cl_total_ms, 100 * r->agreement);
    else
        printf(" %10s %9s %9s %7s %7s %8s", "-", "-", "-", "-", "-", "-");
    printf(" %-4s", check_word(r));
    print_limits_columns(r);
    char quality[64];
    format_quality(r, quality, sizeof quality);
    printf(" %-22s %s params: %s\n", quality, r->params, bench_row_launch(r));
    warn_series("CPU", &r->cpu_samples);
    if (r->have_opencl)
        warn_series("OpenCL", &r->cl_samples);
    fflush(stdout);
}

int bench_print_summary(const bench_result *results, int count)
{
    printf("\nsummary (%d rows)\n", count);
    print_columns();
    int failed = 0;
    for (int i = 0; i < count; i++) {
        bench_print_row(&results[i]);
        failed += !bench_row_passes(&results[i]);
    }
    for (int i = 0; i < count; i++)
        if (!bench_row_passes(&results[i]))
            printf("cross-check FAILED: %s %s: agreement %.4f%% < threshold %.4f%%\n",
                   results[i].op, results[i].name, 100 * results[i].agreement,
                   100 * results[i].threshold);
    int spread = 0;
    for (int i = 0; i < count; i++)
        spread += bench_row_spreads(&results[i]);
    if (spread)
        printf("%d of %d rows with samples spread more than %.0fx (see the warnings above): "
               "rerun on an idle machine or with more --runs\n",
               spread, count, BENCH_SPREAD_LIMIT);
    if (failed)
        printf("%d of %d rows below their cross-check threshold\n", failed, count);
    else
        printf("all rows within their cross-check thresholds\n");
    fflush(stdout);
    return failed ? 1 : 0;
}
