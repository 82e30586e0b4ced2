/* parvis-bench reports: the rows as they finish, the table again at the
 * end with the cross-check verdicts, and the JSON, CSV and plot files. */
#include "bench.h"

#include "bench_roofline.h"
#include "bench_spread.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The copy bandwidths of the run (set by bench_print_header), which the
 * roofline column divides by. */
static double report_cpu_bandwidth, report_opencl_bandwidth;

int bench_row_passes(const bench_result *r)
{
    if (!r->have_opencl || r->threshold <= 0.0)
        return 1;
    return r->agreement >= r->threshold;
}

double bench_row_roofline(const bench_result *r)
{
    if (r->have_opencl)
        return roofline_fraction(r->roofline_bytes, report_opencl_bandwidth, r->cl_kernel_ms);
    return roofline_fraction(r->roofline_bytes, report_cpu_bandwidth, r->cpu_ms);
}

static double cpu_roofline(const bench_result *r)
{
    return roofline_fraction(r->roofline_bytes, report_cpu_bandwidth, r->cpu_ms);
}

/* ----------------------------------------------------------------- table */

/* Fixed-width columns first, the free-text params last, so a long params
 * text never pushes a number out of its column. */
static void print_columns(void)
{
    printf("%-6s %-26s %9s %3s %10s %9s %9s %7s %7s %8s %-4s %6s %-22s %s\n", "op", "case",
           "cpu ms", "thr", "kernel ms", "e2e ms", "e2e-up", "x(kern)", "x(e2e)", "agree", "chk",
           "roof", "quality cpu/cl", "params");
}

void bench_print_header(const bench_contexts *contexts)
{
    report_cpu_bandwidth = contexts->cpu_bandwidth;
    report_opencl_bandwidth = contexts->opencl_bandwidth;
    printf("parvis-bench %s\n", pv_version());
    printf("CPU backend : %s, copy %.1f GB/s\n", pv_context_device_name(contexts->cpu),
           contexts->cpu_bandwidth);
    if (contexts->opencl)
        printf("OpenCL      : %s, copy %.1f GB/s\n", pv_context_device_name(contexts->opencl),
               contexts->opencl_bandwidth);
    else
        printf("OpenCL      : none (CPU only)\n");
    printf("times: median ms after warm-up.  cpu ms: the CPU backend, end to end (thr: its\n"
           "OpenMP threads); kernel ms: OpenCL device time (sum of kernel events); e2e ms:\n"
           "OpenCL end to end with transfers; e2e-up: e2e less the host-to-device uploads;\n"
           "x(kern), x(e2e): cpu ms over kernel ms / e2e ms.  agree: share of outputs on\n"
           "which both backends agree, chk: that share against the operation's cross-check\n"
           "threshold.  roof: minimum bytes at the measured copy bandwidth over the kernel\n"
           "time.  A row whose samples spread more than %.0fx (slowest over fastest run) is\n"
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

static void print_roofline(const bench_result *r)
{
    double fraction = bench_row_roofline(r);
    if (fraction > 0.0)
        printf(" %5.1f%%", 100.0 * fraction);
    else
        printf(" %6s", "-");
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
    print_roofline(r);
    char quality[64];
    format_quality(r, quality, sizeof quality);
    printf(" %-22s %s\n", quality, r->params);
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

/* ------------------------------------------------------------------ JSON */

/* The first "model name" of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *in = fopen("/proc/cpuinfo", "r");
    if (!in)
        return;
    char line[512];
    while (fgets(line, sizeof line, in)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon)
            continue;
        colon += 1 + (colon[1] == ' ');
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, size, "%s", colon);
        break;
    }
    fclose(in);
}

/* The pv_device_list entry of the OpenCL context's device. */
static int opencl_device_info(const pv_context *ctx, pv_device_info *info)
{
    pv_device_info devices[64];
    int count = 0;
    if (!ctx || pv_device_list(devices, 64, &count) != PV_OK)
        return 0;
    for (int i = 0; i < count && i < 64; i++)
        if (strcmp(devices[i].name, pv_context_device_name(ctx)) == 0) {
            *info = devices[i];
            return 1;
        }
    return 0;
}

static void json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.9g", value);
    else
        fprintf(out, "null");
}

static void json_key_string(FILE *out, const char *key, const char *value)
{
    fprintf(out, "\"%s\": ", key);
    if (value)
        cli_json_string(out, value);
    else
        fprintf(out, "null");
}

static void json_opencl(FILE *out, const bench_contexts *contexts)
{
    pv_device_info info;
    if (!contexts->opencl) {
        fprintf(out, "null");
        return;
    }
    int known = opencl_device_info(contexts->opencl, &info);
    fprintf(out, "{");
    json_key_string(out, "device", pv_context_device_name(contexts->opencl));
    fprintf(out, ", ");
    json_key_string(out, "platform", known ? info.platform : NULL);
    fprintf(out, ", ");
    json_key_string(out, "vendor", known ? info.vendor : NULL);
    fprintf(out, ", ");
    json_key_string(out, "driver_version", known ? info.driver_version : NULL);
    fprintf(out, ", ");
    json_key_string(out, "opencl_version", known ? info.opencl_version : NULL);
    fprintf(out, ", ");
    json_key_string(out, "type", known ? pv_device_type_name(info.type) : NULL);
    fprintf(out, ", \"copy_bandwidth_gbs\": ");
    json_number(out, contexts->opencl_bandwidth);
    fprintf(out, "}");
}

static void json_header(FILE *out, const bench_contexts *contexts, const bench_config *config)
{
    char model[256];
    cpu_model(model, sizeof model);
    fprintf(out, "{\n  \"schema\": \"parvis-bench/1\",\n  ");
    json_key_string(out, "parvis_version", pv_version());
    fprintf(out, ",\n  \"host\": {");
    json_key_string(out, "cpu_model", model);
    fprintf(out, ", \"online_cpus\": %ld},\n  \"cpu_backend\": {", sysconf(_SC_NPROCESSORS_ONLN));
    json_key_string(out, "device", pv_context_device_name(contexts->cpu));
    fprintf(out, ", \"threads\": %d, \"copy_bandwidth_gbs\": ",
            pv_context_cpu_threads(contexts->cpu));
    json_number(out, contexts->cpu_bandwidth);
    fprintf(out, "},\n  \"opencl\": ");
    json_opencl(out, contexts);
    /* The flat names of the first format, kept for readers of it. */
    fprintf(out, ",\n  ");
    json_key_string(out, "cpu", pv_context_device_name(contexts->cpu));
    fprintf(out, ",\n  ");
    json_key_string(out, "opencl_device",
                    contexts->opencl ? pv_context_device_name(contexts->opencl) : NULL);
    fprintf(out, ",\n  ");
    json_key_string(out, "selection", config->paper ? "paper" : config->full ? "full"
                                      : config->quick                        ? "quick"
                                                                             : "case");
    fprintf(out, ", ");
    json_key_string(out, "paper", config->paper);
    fprintf(out, ", ");
    json_key_string(out, "case_filter", config->only);
    fprintf(out, ",\n  \"runs\": %d,\n  \"warmup\": %d,\n", config->runs, config->warmup);
}

static void json_backend(FILE *out, const char *name, double total, double kernel, double upload,
                         double download, const bench_series *s)
{
    fprintf(out, ",\n     \"%s\": {\"median\": {\"total_ms\": ", name);
    json_number(out, total);
    fprintf(out, ", \"kernel_ms\": ");
    json_number(out, kernel);
    fprintf(out, ", \"upload_ms\": ");
    json_number(out, upload);
    fprintf(out, ", \"download_ms\": ");
    json_number(out, download);
    fprintf(out, "}, \"samples\": [");
    for (int i = 0; i < s->count; i++) {
        fprintf(out, "%s{\"total_ms\": ", i ? ", " : "");
        json_number(out, s->total_ms[i]);
        fprintf(out, ", \"kernel_ms\": ");
        json_number(out, s->kernel_ms[i]);
        fprintf(out, ", \"upload_ms\": ");
        json_number(out, s->upload_ms[i]);
        fprintf(out, ", \"download_ms\": ");
        json_number(out, s->download_ms[i]);
        fprintf(out, "}");
    }
    fprintf(out, "]}");
}

static void json_flat_opencl(FILE *out, const bench_result *r)
{
    fprintf(out, ", \"opencl_kernel_ms\": ");
    json_number(out, r->cl_kernel_ms);
    fprintf(out, ", \"opencl_total_ms\": ");
    json_number(out, r->cl_total_ms);
    fprintf(out, ", \"opencl_upload_ms\": ");
    json_number(out, r->cl_upload_ms);
    fprintf(out, ", \"opencl_download_ms\": ");
    json_number(out, r->cl_download_ms);
    fprintf(out, ", \"speedup_kernel\": ");
    json_number(out, r->cpu_ms / r->cl_kernel_ms);
    fprintf(out, ", \"speedup_total\": ");
    json_number(out, r->cpu_ms / r->cl_total_ms);
    fprintf(out, ", \"agreement\": ");
    json_number(out, r->agreement);
}

static void json_check(FILE *out, const bench_result *r)
{
    fprintf(out, ",\n     \"threshold\": ");
    json_number(out, r->threshold);
    fprintf(out, ", \"checked\": %s, \"pass\": %s, \"roofline_bytes\": ",
            r->have_opencl && r->threshold > 0.0 ? "true" : "false",
            bench_row_passes(r) ? "true" : "false");
    json_number(out, r->roofline_bytes);
    fprintf(out, ", \"roofline_fraction\": ");
    double fraction = bench_row_roofline(r);
    if (fraction > 0.0)
        json_number(out, fraction);
    else
        fprintf(out, "null");
    fprintf(out, ", \"cpu_roofline_fraction\": ");
    if (cpu_roofline(r) > 0.0)
        json_number(out, cpu_roofline(r));
    else
        fprintf(out, "null");
}

static void json_quality(FILE *out, const bench_result *r)
{
    fprintf(out, ",\n     \"quality\": ");
    if (r->cpu_quality < 0) {
        fprintf(out, "null");
        return;
    }
    fprintf(out, "{");
    json_key_string(out, "metric", r->quality_name ? r->quality_name : "");
    fprintf(out, ", \"cpu\": ");
    json_number(out, r->cpu_quality);
    fprintf(out, ", \"opencl\": ");
    if (r->have_opencl)
        json_number(out, r->cl_quality);
    else
        fprintf(out, "null");
    fprintf(out, "}");
    /* The flat names of the first format. */
    fprintf(out, ", ");
    json_key_string(out, "quality_metric", r->quality_name ? r->quality_name : "");
    fprintf(out, ", \"cpu_quality\": ");
    json_number(out, r->cpu_quality);
    if (r->have_opencl) {
        fprintf(out, ", \"opencl_quality\": ");
        json_number(out, r->cl_quality);
    }
}

static void json_result(FILE *out, const bench_result *r)
{
    fprintf(out, "    {");
    json_key_string(out, "op", r->op);
    fprintf(out, ", ");
    json_key_string(out, "case", r->name);
    fprintf(out, ", ");
    json_key_string(out, "params", r->params);
    fprintf(out, ", ");
    json_key_string(out, "variant", r->variant);
    fprintf(out, ", \"size\": ");
    json_number(out, r->size);
    fprintf(out, ", ");
    json_key_string(out, "fft_engine", r->fft_engine[0] ? r->fft_engine : NULL);
    fprintf(out, ",\n     \"cpu_threads\": %d, \"cpu_ms\": ", r->cpu_threads);
    json_number(out, r->cpu_ms);
    if (r->have_opencl)
        json_flat_opencl(out, r);
    /* The CPU backend's kernel time is its compute time; it has no copies. */
    json_backend(out, "cpu", r->cpu_ms,
                 bench_median(r->cpu_samples.kernel_ms, r->cpu_samples.count), 0.0, 0.0,
                 &r->cpu_samples);
    if (r->have_opencl)
        json_backend(out, "opencl", r->cl_total_ms, r->cl_kernel_ms, r->cl_upload_ms,
                     r->cl_download_ms, &r->cl_samples);
    else
        fprintf(out, ",\n     \"opencl\": null");
    json_check(out, r);
    json_quality(out, r);
    fprintf(out, "}");
}

int bench_write_json(const char *path, const bench_contexts *contexts, const bench_config *config,
                     const bench_result *results, int count)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    json_header(out, contexts, config);
    int passed = 1;
    for (int i = 0; i < count; i++)
        passed &= bench_row_passes(&results[i]);
    fprintf(out, "  \"all_passed\": %s,\n  \"results\": [\n", passed ? "true" : "false");
    for (int i = 0; i < count; i++) {
        json_result(out, &results[i]);
        fprintf(out, i + 1 < count ? ",\n" : "\n");
    }
    fprintf(out, "  ]\n}\n");
    return fclose(out) == 0 ? 0 : cli_fail("cannot write %s", path);
}

/* ------------------------------------------------------------------- CSV */

/* A CSV field: quoted, inner quotes doubled. */
static void csv_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '"')
            fputc('"', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

static void csv_number(FILE *out, int have, double value)
{
    if (have && isfinite(value))
        fprintf(out, ",%.6g", value);
    else
        fprintf(out, ",");
}

static void csv_row(FILE *out, const bench_result *r)
{
    int cl = r->have_opencl;
    csv_string(out, r->op);
    fputc(',', out);
    csv_string(out, r->name);
    fputc(',', out);
    csv_string(out, r->params);
    fputc(',', out);
    csv_string(out, r->fft_engine);
    csv_number(out, 1, r->size);
    fprintf(out, ",%d", r->cpu_threads);
    csv_number(out, 1, r->cpu_ms);
    csv_number(out, cl, r->cl_kernel_ms);
    csv_number(out, cl, r->cl_total_ms);
    csv_number(out, cl, r->cl_upload_ms);
    csv_number(out, cl, r->cl_download_ms);
    csv_number(out, cl, r->cpu_ms / r->cl_kernel_ms);
    csv_number(out, cl, r->cpu_ms / r->cl_total_ms);
    csv_number(out, cl, r->agreement);
    csv_number(out, 1, r->threshold);
    fprintf(out, ",%s", bench_row_passes(r) ? "pass" : "FAIL");
    csv_number(out, r->roofline_bytes > 0.0, r->roofline_bytes);
    csv_number(out, bench_row_roofline(r) > 0.0, bench_row_roofline(r));
    fputc(',', out);
    csv_string(out, r->cpu_quality >= 0 && r->quality_name ? r->quality_name : "");
    csv_number(out, r->cpu_quality >= 0, r->cpu_quality);
    csv_number(out, r->cpu_quality >= 0 && cl, r->cl_quality);
    fputc('\n', out);
}

int bench_write_csv(const char *path, const bench_result *results, int count)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(out, "op,case,params,fft_engine,size,cpu_threads,cpu_ms,opencl_kernel_ms,"
                 "opencl_total_ms,opencl_upload_ms,opencl_download_ms,speedup_kernel,"
                 "speedup_total,agreement,threshold,check,roofline_bytes,roofline_fraction,"
                 "quality_metric,cpu_quality,opencl_quality\n");
    for (int i = 0; i < count; i++)
        csv_row(out, &results[i]);
    return fclose(out) == 0 ? 0 : cli_fail("cannot write %s", path);
}

/* ----------------------------------------------------------------- plots */

/* The full path of gnuplot in $PATH, or 0. */
static int find_gnuplot(char *path, size_t size)
{
    const char *env = getenv("PATH");
    char *dirs = strdup(env && *env ? env : "/usr/bin:/bin");
    int found = 0;
    for (char *save = NULL, *dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        snprintf(path, size, "%s/gnuplot", *dir ? dir : ".");
        found = access(path, X_OK) == 0;
    }
    free(dirs);
    return found;
}

/* Whether op's rows cover at least two distinct sizes (worth a plot). */
static int op_has_sizes(const bench_result *results, int count, const char *op, double *lo,
                        double *hi)
{
    *lo = INFINITY;
    *hi = 0.0;
    for (int i = 0; i < count; i++)
        if (strcmp(results[i].op, op) == 0 && results[i].size > 0.0) {
            *lo = fmin(*lo, results[i].size);
            *hi = fmax(*hi, results[i].size);
        }
    return *hi > *lo;
}

static int first_of_op(const bench_result *results, int i)
{
    for (int j = 0; j < i; j++)
        if (strcmp(results[j].op, results[i].op) == 0)
            return 0;
    return 1;
}

static int first_of_variant(const bench_result *results, int i)
{
    for (int j = 0; j < i; j++)
        if (strcmp(results[j].op, results[i].op) == 0 &&
            strcmp(results[j].variant, results[i].variant) == 0)
            return 0;
    return 1;
}

#define BENCH_PLOT_MAX_POINTS 128

static int compare_by_size(const void *a, const void *b)
{
    double x = (*(const bench_result *const *)a)->size, y = (*(const bench_result *const *)b)->size;
    return (x > y) - (x < y);
}

/* The rows of v's op and variant with a size, by increasing size. */
static int variant_by_size(const bench_result *results, int count, const bench_result *v,
                           const bench_result **sorted)
{
    int points = 0;
    for (int j = 0; j < count && points < BENCH_PLOT_MAX_POINTS; j++)
        if (strcmp(results[j].op, v->op) == 0 && strcmp(results[j].variant, v->variant) == 0 &&
            results[j].size > 0)
            sorted[points++] = &results[j];
    qsort(sorted, (size_t)points, sizeof *sorted, compare_by_size);
    return points;
}

/* One data block per variant (gnuplot's "index"), rows by size:
 * size, cpu ms, kernel ms, e2e ms, speedup kernel, speedup e2e. */
static int write_plot_data(FILE *out, const bench_result *results, int count, const char *op,
                           char variants[][32], int max_variants)
{
    int blocks = 0;
    for (int i = 0; i < count && blocks < max_variants; i++) {
        const bench_result *v = &results[i];
        if (strcmp(v->op, op) != 0 || !first_of_variant(results, i))
            continue;
        snprintf(variants[blocks], 32, "%s", v->variant[0] ? v->variant : op);
        fprintf(out, "# %s\n", variants[blocks++]);
        const bench_result *sorted[BENCH_PLOT_MAX_POINTS];
        int points = variant_by_size(results, count, v, sorted);
        for (int k = 0; k < points; k++) {
            const bench_result *r = sorted[k];
            if (r->have_opencl)
                fprintf(out, "%.6g %.6g %.6g %.6g %.6g %.6g\n", r->size, r->cpu_ms,
                        r->cl_kernel_ms, r->cl_total_ms, r->cpu_ms / r->cl_kernel_ms,
                        r->cpu_ms / r->cl_total_ms);
            else
                fprintf(out, "%.6g %.6g NaN NaN NaN NaN\n", r->size, r->cpu_ms);
        }
        fprintf(out, "\n\n");
    }
    return blocks;
}

/* File names in the script are relative to its directory (gnuplot runs
 * there), so the data and scripts can be rendered on another machine. */
static void write_plot_script(FILE *out, const char *op, char variants[][32], int blocks,
                              int log_x, int have_opencl)
{
    fprintf(out, "set terminal png size 960,640\nset key left top\nset grid\n"
                 "set xlabel 'size (elements)'\n%s",
            log_x ? "set logscale x\n" : "");
    fprintf(out, "set output '%s-time.png'\nset title '%s: time against size'\n"
                 "set ylabel 'ms (median)'\nset logscale y\nplot ",
            op, op);
    for (int b = 0; b < blocks; b++)
        fprintf(out, "%s'%s.dat' index %d using 1:2 with linespoints title '%s cpu', "
                     "'' index %d using 1:3 with linespoints title '%s opencl kernel', "
                     "'' index %d using 1:4 with linespoints title '%s opencl e2e'",
                b ? ", " : "", op, b, variants[b], b, variants[b], b, variants[b]);
    fprintf(out, "\n");
    if (!have_opencl)
        return; /* no speedup without an OpenCL side */
    fprintf(out, "unset logscale y\nset output '%s-speedup.png'\n"
                 "set title '%s: speedup of OpenCL over the CPU backend'\n"
                 "set ylabel 'CPU ms / OpenCL ms'\nplot ",
            op, op);
    for (int b = 0; b < blocks; b++)
        fprintf(out, "%s'%s.dat' index %d using 1:5 with linespoints title '%s kernel', "
                     "'' index %d using 1:6 with linespoints title '%s e2e'",
                b ? ", " : "", op, b, variants[b], b, variants[b]);
    fprintf(out, "\n");
}

/* gnuplot on dir/script, run in dir. */
static int run_gnuplot(const char *gnuplot, const char *dir, const char *script)
{
    pid_t child = fork();
    if (child < 0)
        return cli_fail("cannot start gnuplot: %s", strerror(errno));
    if (child == 0) {
        if (chdir(dir) == 0)
            execl(gnuplot, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cli_fail("gnuplot failed on %s", script);
    return 0;
}

/* Write dir/op.dat and dir/op.gp, and render them when gnuplot is known. */
static int plot_op(const char *gnuplot, const char *dir, const bench_result *results, int count,
                   const char *op)
{
    char data_path[4096], script_path[4096], variants[16][32];
    snprintf(data_path, sizeof data_path, "%s/%s.dat", dir, op);
    snprintf(script_path, sizeof script_path, "%s/%s.gp", dir, op);
    double lo, hi;
    op_has_sizes(results, count, op, &lo, &hi);
    FILE *data = fopen(data_path, "w");
    if (!data)
        return cli_fail("cannot write %s: %s", data_path, strerror(errno));
    int blocks = write_plot_data(data, results, count, op, variants, 16);
    if (fclose(data) != 0)
        return cli_fail("cannot write %s", data_path);
    FILE *script = fopen(script_path, "w");
    if (!script)
        return cli_fail("cannot write %s: %s", script_path, strerror(errno));
    int have_opencl = 0;
    for (int i = 0; i < count; i++)
        have_opencl |= strcmp(results[i].op, op) == 0 && results[i].have_opencl;
    write_plot_script(script, op, variants, blocks, hi >= 10.0 * lo, have_opencl);
    if (fclose(script) != 0)
        return cli_fail("cannot write %s", script_path);
    char script_name[64];
    snprintf(script_name, sizeof script_name, "%s.gp", op);
    return gnuplot ? run_gnuplot(gnuplot, dir, script_name) : 0;
}

/* Without gnuplot (a GPU host may lack it) the data and scripts are still
 * written, to be rendered elsewhere with (cd DIR && gnuplot OP.gp). */
int bench_write_plots(const char *dir, const bench_result *results, int count)
{
    char found[4096];
    const char *gnuplot = find_gnuplot(found, sizeof found) ? found : NULL;
    if (strchr(dir, '\''))
        return cli_fail("--plot: the directory name may not contain a quote");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_fail("cannot create %s: %s", dir, strerror(errno));
    int plotted = 0;
    for (int i = 0; i < count; i++) {
        double lo, hi;
        if (!first_of_op(results, i) || !op_has_sizes(results, count, results[i].op, &lo, &hi))
            continue;
        if (plot_op(gnuplot, dir, results, count, results[i].op))
            return 1;
        if (gnuplot)
            printf("plot: %s/%s-*.png\n", dir, results[i].op);
        else
            printf("plot: no gnuplot in PATH; wrote %s/%s.gp and .dat (render with: cd %s && "
                   "gnuplot %s.gp)\n",
                   dir, results[i].op, dir, results[i].op);
        plotted++;
    }
    if (!plotted)
        printf("plot: no operation ran at two sizes or more; nothing to plot (try --full)\n");
    return 0;
}
