#include "bench.h"

#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

pv_status bench_time(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                     pv_timing *result)
{
    for (int i = 0; i < config->warmup; i++) {
        pv_status status = run(ctx, user);
        if (status != PV_OK)
            return status;
    }
    int runs = config->runs > 0 ? config->runs : 1;
    double *samples = calloc((size_t)runs * 4, sizeof *samples);
    if (!samples)
        return PV_ERR_NOMEM;
    pv_status status = PV_OK;
    for (int i = 0; i < runs && status == PV_OK; i++) {
        pv_timing timing;
        status = run(ctx, user);
        pv_context_last_timing(ctx, &timing);
        samples[i] = timing.total_ms;
        samples[runs + i] = timing.kernel_ms;
        samples[2 * runs + i] = timing.upload_ms;
        samples[3 * runs + i] = timing.download_ms;
    }
    if (status == PV_OK) {
        result->total_ms = median(samples, runs);
        result->kernel_ms = median(samples + runs, runs);
        result->upload_ms = median(samples + 2 * runs, runs);
        result->download_ms = median(samples + 3 * runs, runs);
    }
    free(samples);
    return status;
}

int bench_wants(const bench_config *config, const char *op, const char *name, int quick_case)
{
    if (config->quick && !quick_case)
        return 0;
    return !config->only || strcmp(config->only, op) == 0 || strstr(name, config->only) != NULL;
}

static int first_gpu(void)
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

int bench_open_contexts(const bench_config *config, bench_contexts *contexts)
{
    cli_backend_options cpu = config->device;
    cpu.backend = PV_BACKEND_CPU;
    cpu.device_index = -1;
    contexts->cpu = cli_context(&cpu);
    contexts->opencl = NULL;
    if (!contexts->cpu)
        return 1;
    if (config->device.backend == PV_BACKEND_CPU)
        return 0;
    cli_backend_options opencl = config->device;
    opencl.backend = PV_BACKEND_OPENCL;
    if (opencl.device_index < 0)
        opencl.device_index = first_gpu();
    if (opencl.device_index < 0) {
        if (config->device.backend == PV_BACKEND_OPENCL)
            return cli_fail("no OpenCL device found");
        return 0;
    }
    contexts->opencl = cli_context(&opencl);
    return contexts->opencl || config->device.backend != PV_BACKEND_OPENCL ? 0 : 1;
}

void bench_close_contexts(bench_contexts *contexts)
{
    pv_context_destroy(contexts->cpu);
    pv_context_destroy(contexts->opencl);
    contexts->cpu = contexts->opencl = NULL;
}

void bench_print_header(const bench_contexts *contexts)
{
    printf("parvis-bench %s\n", pv_version());
    printf("CPU backend : %s\n", pv_context_device_name(contexts->cpu));
    printf("OpenCL      : %s\n",
           contexts->opencl ? pv_context_device_name(contexts->opencl) : "none (CPU only)");
    printf("times: median ms after warm-up; kernel = device event time, e2e = with transfers\n\n");
    printf("%-6s %-16s %-18s %10s %11s %10s %9s %9s %8s %15s\n", "op", "case", "params", "cpu ms",
           "kernel ms", "e2e ms", "x(kern)", "x(e2e)", "agree", "quality cpu/cl");
}

static void print_quality(const bench_result *r)
{
    if (r->cpu_quality < 0) {
        printf(" %15s\n", "-");
        return;
    }
    char text[64];
    if (r->have_opencl)
        snprintf(text, sizeof text, "%.2f/%.2f%%", 100 * r->cpu_quality, 100 * r->cl_quality);
    else
        snprintf(text, sizeof text, "%.2f%%", 100 * r->cpu_quality);
    printf(" %15s %s\n", text, r->quality_name ? r->quality_name : "");
}

void bench_print_row(const bench_result *r)
{
    printf("%-6s %-16s %-18s %10.3f", r->op, r->name, r->params, r->cpu_ms);
    if (r->have_opencl)
        printf(" %11.4f %10.3f %8.1fx %8.1fx %7.3f%%", r->cl_kernel_ms, r->cl_total_ms,
               r->cpu_ms / r->cl_kernel_ms, r->cpu_ms / r->cl_total_ms, 100 * r->agreement);
    else
        printf(" %11s %10s %9s %9s %8s", "-", "-", "-", "-", "-");
    print_quality(r);
    fflush(stdout);
}

static void json_result(FILE *out, const bench_result *r)
{
    fprintf(out, "    {\"op\": ");
    cli_json_string(out, r->op);
    fprintf(out, ", \"case\": ");
    cli_json_string(out, r->name);
    fprintf(out, ", \"params\": ");
    cli_json_string(out, r->params);
    fprintf(out, ", \"cpu_threads\": %d, \"cpu_ms\": %.6f", r->cpu_threads, r->cpu_ms);
    if (r->have_opencl)
        fprintf(out, ", \"opencl_kernel_ms\": %.6f, \"opencl_total_ms\": %.6f, "
                     "\"opencl_upload_ms\": %.6f, \"opencl_download_ms\": %.6f, "
                     "\"speedup_kernel\": %.3f, \"speedup_total\": %.3f, \"agreement\": %.6f",
                r->cl_kernel_ms, r->cl_total_ms, r->cl_upload_ms, r->cl_download_ms,
                r->cpu_ms / r->cl_kernel_ms, r->cpu_ms / r->cl_total_ms, r->agreement);
    if (r->cpu_quality >= 0) {
        fprintf(out, ", \"quality_metric\": ");
        cli_json_string(out, r->quality_name ? r->quality_name : "");
        fprintf(out, ", \"cpu_quality\": %.6f", r->cpu_quality);
        if (r->have_opencl)
            fprintf(out, ", \"opencl_quality\": %.6f", r->cl_quality);
    }
    fprintf(out, "}");
}

int bench_write_json(const char *path, const bench_contexts *contexts, const bench_config *config,
                     const bench_result *results, int count)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s", path);
    fprintf(out, "{\n  \"parvis_version\": ");
    cli_json_string(out, pv_version());
    fprintf(out, ",\n  \"cpu\": ");
    cli_json_string(out, pv_context_device_name(contexts->cpu));
    fprintf(out, ",\n  \"opencl_device\": ");
    if (contexts->opencl)
        cli_json_string(out, pv_context_device_name(contexts->opencl));
    else
        fprintf(out, "null");
    fprintf(out, ",\n  \"runs\": %d,\n  \"warmup\": %d,\n  \"results\": [\n", config->runs,
            config->warmup);
    for (int i = 0; i < count; i++) {
        json_result(out, &results[i]);
        fprintf(out, i + 1 < count ? ",\n" : "\n");
    }
    fprintf(out, "  ]\n}\n");
    return fclose(out) == 0 ? 0 : cli_fail("cannot write %s", path);
}
