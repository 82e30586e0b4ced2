/* parvis-bench's JSON report (docs/bench-json.md): the machine, the
 * backends with their measured limits, and one object a row. */
#include "bench.h"

#include "bench_spread.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

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

/* A positive value, else null (not applicable, not measured). */
static void json_fraction(FILE *out, double value)
{
    if (value > 0.0)
        cli_json_number(out, value);
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

/* A backend's measured limits, as keys of its object (null: not measured). */
static void json_limits(FILE *out, const bench_limits *limits)
{
    const double values[3] = {limits->bandwidth, limits->float_peak, limits->int_peak};
    const char *keys[3] = {"copy_bandwidth_gbs", "float_peak_gflops", "int_peak_gops"};
    for (int k = 0; k < 3; k++) {
        fprintf(out, ", \"%s\": ", keys[k]);
        json_fraction(out, values[k]);
    }
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
    json_limits(out, &contexts->opencl_limits);
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
    fprintf(out, ", \"threads\": %d", pv_context_cpu_threads(contexts->cpu));
    json_limits(out, &contexts->cpu_limits);
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
    fprintf(out, "  \"cpu_runs\": %d,\n  \"cpu_warmup\": %d,\n",
            config->cpu_runs > 0 ? config->cpu_runs : config->runs,
            config->cpu_warmup >= 0 ? config->cpu_warmup : config->warmup);
    fprintf(out, "  \"min_time_ms\": ");
    cli_json_number(out, (double)config->min_time_ms);
    fprintf(out, ",\n");
}

static void json_backend(FILE *out, const char *name, double total, double kernel, double upload,
                         double download, const bench_series *s)
{
    fprintf(out, ",\n     \"%s\": {\"median\": {\"total_ms\": ", name);
    cli_json_number(out, total);
    fprintf(out, ", \"kernel_ms\": ");
    cli_json_number(out, kernel);
    fprintf(out, ", \"upload_ms\": ");
    cli_json_number(out, upload);
    fprintf(out, ", \"download_ms\": ");
    cli_json_number(out, download);
    fprintf(out, "}, \"samples\": [");
    for (int i = 0; i < s->count; i++) {
        fprintf(out, "%s{\"total_ms\": ", i ? ", " : "");
        cli_json_number(out, s->total_ms[i]);
        fprintf(out, ", \"kernel_ms\": ");
        cli_json_number(out, s->kernel_ms[i]);
        fprintf(out, ", \"upload_ms\": ");
        cli_json_number(out, s->upload_ms[i]);
        fprintf(out, ", \"download_ms\": ");
        cli_json_number(out, s->download_ms[i]);
        fprintf(out, "}");
    }
    fprintf(out, "]}");
}

static void json_flat_opencl(FILE *out, const bench_result *r)
{
    fprintf(out, ", \"opencl_kernel_ms\": ");
    cli_json_number(out, r->cl_kernel_ms);
    fprintf(out, ", \"opencl_total_ms\": ");
    cli_json_number(out, r->cl_total_ms);
    fprintf(out, ", \"opencl_upload_ms\": ");
    cli_json_number(out, r->cl_upload_ms);
    fprintf(out, ", \"opencl_download_ms\": ");
    cli_json_number(out, r->cl_download_ms);
    fprintf(out, ", \"speedup_kernel\": ");
    cli_json_number(out, r->cpu_ms / r->cl_kernel_ms);
    fprintf(out, ", \"speedup_total\": ");
    cli_json_number(out, r->cpu_ms / r->cl_total_ms);
    fprintf(out, ", \"agreement\": ");
    cli_json_number(out, r->agreement);
}

static void json_bound(FILE *out, const char *key, const char *bound)
{
    fprintf(out, ", ");
    json_key_string(out, key, strcmp(bound, "-") == 0 ? NULL : bound);
}

static void json_check(FILE *out, const bench_result *r)
{
    fprintf(out, ",\n     \"threshold\": ");
    cli_json_number(out, r->threshold);
    fprintf(out, ", \"checked\": %s, \"pass\": %s, \"roofline_bytes\": ",
            r->have_opencl && r->threshold > 0.0 ? "true" : "false",
            bench_row_passes(r) ? "true" : "false");
    cli_json_number(out, r->roofline_bytes);
    fprintf(out, ", \"roofline_fraction\": ");
    json_fraction(out, bench_row_memory_fraction(r, r->have_opencl));
    fprintf(out, ", \"cpu_roofline_fraction\": ");
    json_fraction(out, bench_row_memory_fraction(r, 0));
    fprintf(out, ",\n     \"compute_ops\": ");
    json_fraction(out, r->roofline_ops);
    fprintf(out, ", ");
    json_key_string(out, "ops_kind", r->roofline_ops > 0.0 ? (r->ops_integer ? "int" : "float")
                                                             : NULL);
    fprintf(out, ", \"compute_fraction\": ");
    json_fraction(out, bench_row_compute_fraction(r, r->have_opencl));
    fprintf(out, ", \"cpu_compute_fraction\": ");
    json_fraction(out, bench_row_compute_fraction(r, 0));
    json_bound(out, "bound", bench_row_bound(r, r->have_opencl));
    json_bound(out, "cpu_bound", bench_row_bound(r, 0));
}

/* Nanoseconds per item of ms over count, null without items. */
static void json_per_item(FILE *out, double ms, int count)
{
    if (count > 0 && ms > 0.0)
        cli_json_number(out, ms * 1e6 / count);
    else
        fprintf(out, "null");
}

/* "per_item": each backend's count and its cost per item (SIFT: per
 * keypoint), so that detectors finding different numbers of keypoints can
 * be set side by side. */
static void json_items(FILE *out, const bench_result *r)
{
    if (!r->item_name)
        return;
    fprintf(out, ",\n     \"per_item\": {");
    json_key_string(out, "item", r->item_name);
    fprintf(out, ", \"cpu_count\": %d, \"cpu_ns\": ", r->cpu_items);
    json_per_item(out, r->cpu_ms, r->cpu_items);
    if (r->have_opencl) {
        fprintf(out, ", \"opencl_count\": %d, \"opencl_kernel_ns\": ", r->cl_items);
        json_per_item(out, r->cl_kernel_ms, r->cl_items);
        fprintf(out, ", \"opencl_total_ns\": ");
        json_per_item(out, r->cl_total_ms, r->cl_items);
        fprintf(out, ", \"opencl_total_less_upload_ns\": ");
        json_per_item(out, r->cl_total_ms - r->cl_upload_ms, r->cl_items);
    }
    fprintf(out, "}");
}

/* Pairs per second of ms over count, null without a time. */
static void json_rate(FILE *out, double ms, int count)
{
    if (count > 0 && ms > 0.0)
        cli_json_number(out, 1e3 * count / ms);
    else
        fprintf(out, "null");
}

/* "stream": a stream of pairs' rates (the sgm-stream rows). */
static void json_stream(FILE *out, const bench_result *r)
{
    if (r->stream_pairs <= 0)
        return;
    fprintf(out, ",\n     \"stream\": {\"pairs\": %d, \"cpu_pairs_timed\": %d, "
            "\"cpu_pairs_per_s\": ", r->stream_pairs, r->stream_cpu_pairs);
    json_rate(out, r->cpu_ms, r->stream_pairs);
    fprintf(out, ", \"opencl_pairs_per_s\": ");
    json_rate(out, r->have_opencl ? r->cl_total_ms : 0.0, r->stream_pairs);
    fprintf(out, ", \"opencl_kernel_pairs_per_s\": ");
    json_rate(out, r->have_opencl ? r->cl_kernel_ms : 0.0, r->stream_pairs);
    fprintf(out, ", \"opencl_loop_pairs_per_s\": ");
    if (r->stream_loop_rate > 0.0)
        cli_json_number(out, r->stream_loop_rate);
    else
        fprintf(out, "null");
    fprintf(out, "}");
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
    cli_json_number(out, r->cpu_quality);
    fprintf(out, ", \"opencl\": ");
    if (r->have_opencl)
        cli_json_number(out, r->cl_quality);
    else
        fprintf(out, "null");
    fprintf(out, "}");
    /* The flat names of the first format. */
    fprintf(out, ", ");
    json_key_string(out, "quality_metric", r->quality_name ? r->quality_name : "");
    fprintf(out, ", \"cpu_quality\": ");
    cli_json_number(out, r->cpu_quality);
    if (r->have_opencl) {
        fprintf(out, ", \"opencl_quality\": ");
        cli_json_number(out, r->cl_quality);
    }
}

static void json_result(FILE *out, const bench_result *r, int index,
                        const bench_json_extra *extra)
{
    fprintf(out, "    {");
    json_key_string(out, "op", r->op);
    fprintf(out, ", ");
    json_key_string(out, "case", r->name);
    fprintf(out, ", ");
    json_key_string(out, "params", r->params);
    fprintf(out, ", ");
    json_key_string(out, "launch_params", bench_row_launch(r));
    fprintf(out, ", ");
    json_key_string(out, "variant", r->variant);
    fprintf(out, ", ");
    json_key_string(out, "settings", r->settings);
    fprintf(out, ", \"size\": ");
    cli_json_number(out, r->size);
    fprintf(out, ", ");
    json_key_string(out, "fft_engine", r->fft_engine[0] ? r->fft_engine : NULL);
    fprintf(out, ",\n     \"cpu_threads\": %d, \"cpu_ms\": ", r->cpu_threads);
    cli_json_number(out, r->cpu_ms);
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
    json_items(out, r);
    json_stream(out, r);
    if (extra && extra->row)
        extra->row(out, index, extra->user);
    fprintf(out, "}");
}

int bench_write_json(const char *path, const bench_contexts *contexts, const bench_config *config,
                     const bench_result *results, int count)
{
    return bench_write_json_extra(path, contexts, config, results, count, NULL);
}

int bench_write_json_extra(const char *path, const bench_contexts *contexts,
                           const bench_config *config, const bench_result *results, int count,
                           const bench_json_extra *extra)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    json_header(out, contexts, config);
    int passed = 1;
    for (int i = 0; i < count; i++)
        passed &= bench_row_passes(&results[i]);
    fprintf(out, "  ");
    if (extra && extra->document)
        extra->document(out, extra->user);
    fprintf(out, "\"all_passed\": %s,\n  \"results\": [\n", passed ? "true" : "false");
    for (int i = 0; i < count; i++) {
        json_result(out, &results[i], i, extra);
        fprintf(out, i + 1 < count ? ",\n" : "\n");
    }
    fprintf(out, "  ]\n}\n");
    return fclose(out) == 0 ? 0 : cli_fail("cannot write %s", path);
}
