/* parvis-bench's flat files: one CSV row a case, and gnuplot PNGs of the
 * operations measured at several sizes. */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
    double memory = bench_row_memory_fraction(r, cl), compute = bench_row_compute_fraction(r, cl);
    csv_number(out, memory > 0.0, memory);
    fputc(',', out);
    csv_string(out, r->cpu_quality >= 0 && r->quality_name ? r->quality_name : "");
    csv_number(out, r->cpu_quality >= 0, r->cpu_quality);
    csv_number(out, r->cpu_quality >= 0 && cl, r->cl_quality);
    csv_number(out, r->roofline_ops > 0.0, r->roofline_ops);
    csv_number(out, compute > 0.0, compute);
    fprintf(out, ",%s\n", strcmp(bench_row_bound(r, cl), "-") == 0 ? "" : bench_row_bound(r, cl));
}

int bench_write_csv(const char *path, const bench_result *results, int count)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(out, "op,case,params,fft_engine,size,cpu_threads,cpu_ms,opencl_kernel_ms,"
                 "opencl_total_ms,opencl_upload_ms,opencl_download_ms,speedup_kernel,"
                 "speedup_total,agreement,threshold,check,roofline_bytes,roofline_fraction,"
                 "quality_metric,cpu_quality,opencl_quality,compute_ops,compute_fraction,bound\n");
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
