/* parvis-bench internals: configuration, one result row per case, the
 * timing loop (warm-up, then the median of N runs) and the report. */
#ifndef PV_BENCH_H
#define PV_BENCH_H

#include "../examples/cli.h"

typedef struct bench_config {
    int runs;                 /* timed runs per backend (median reported) */
    int warmup;               /* untimed runs first */
    int quick;                /* small cases only */
    const char *only;         /* run cases whose name contains this, or NULL */
    const char *json_path;    /* write JSON here, or NULL */
    const char *data_dir;     /* directory holding stereo/<set>/ */
    cli_backend_options device;
} bench_config;

typedef struct bench_result {
    char op[32];
    char name[48];
    char params[64];
    int cpu_threads;
    double cpu_ms;            /* CPU backend, median end to end */
    int have_opencl;
    double cl_kernel_ms;      /* OpenCL, median of summed kernel event times */
    double cl_total_ms;       /* OpenCL, median end to end with transfers */
    double cl_upload_ms;
    double cl_download_ms;
    double agreement;         /* share of outputs on which the backends agree */
    double cpu_quality;       /* e.g. bad > 1 px share; < 0 when not applicable */
    double cl_quality;
    const char *quality_name; /* e.g. "bad1" */
} bench_result;

/* One timed run of an operation on ctx; fills the context's timing. */
typedef pv_status (*bench_run_fn)(pv_context *ctx, void *user);

/* Warm up, then time `runs` runs; medians of total and kernel ms. */
pv_status bench_time(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                     pv_timing *median);

/* The contexts a bench run compares: the CPU backend and the OpenCL device
 * (a GPU when present, else any OpenCL device; NULL when there is none). */
typedef struct bench_contexts {
    pv_context *cpu;
    pv_context *opencl;
} bench_contexts;

int bench_open_contexts(const bench_config *config, bench_contexts *contexts);
void bench_close_contexts(bench_contexts *contexts);

/* Whether --quick/--case select a case (--case matches the op name exactly
 * or a substring of the case name). */
int bench_wants(const bench_config *config, const char *op, const char *name, int quick_case);

/* Report rows as they come, and the JSON file at the end. */
void bench_print_header(const bench_contexts *contexts);
void bench_print_row(const bench_result *result);
int bench_write_json(const char *path, const bench_contexts *contexts, const bench_config *config,
                     const bench_result *results, int count);

/* Case families.  Each appends rows to results (capacity max) and returns
 * 0, or 1 after printing why it failed. */
int bench_stereo_cases(const bench_config *config, const bench_contexts *contexts,
                       bench_result *results, int max, int *count);
int bench_bp_cases(const bench_config *config, const bench_contexts *contexts,
                   bench_result *results, int max, int *count);
int bench_register_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count);
int bench_octreg_cases(const bench_config *config, const bench_contexts *contexts,
                       bench_result *results, int max, int *count);
int bench_flow_cases(const bench_config *config, const bench_contexts *contexts,
                     bench_result *results, int max, int *count);
int bench_features_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count);

#endif
