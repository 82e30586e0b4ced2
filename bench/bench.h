/* parvis-bench internals: configuration, one result row per case, the
 * timing loop (warm-up, then the median of N runs) and the report. */
#ifndef PV_BENCH_H
#define PV_BENCH_H

#include "../examples/common/options.h"
#include "../examples/common/tool.h"

#include "bench_spread.h"

/* Samples kept per backend and row (--runs is limited to this). */
#define BENCH_MAX_SAMPLES BENCH_SPREAD_MAX_VALUES

typedef struct bench_config {
    int runs;                 /* timed runs per backend (median reported) */
    int warmup;               /* untimed runs first */
    int cpu_runs;             /* --cpu-runs: the CPU backend's timed runs; 0: runs */
    int cpu_warmup;           /* --cpu-warmup: the CPU backend's untimed runs; -1: warmup */
    int quick;                /* the quick suite's cases only */
    const char *only;         /* run cases whose name contains this, or NULL */
    const char *json_path;    /* write JSON here, or NULL */
    const char *data_dir;     /* directory holding stereo/<set>/ */
    cli_backend_options device;
    const char *devices;      /* --devices all|LIST (multi-device cases), or NULL */
    int full;                 /* --full: every case of every family */
    const char *paper;        /* --paper NAME: that paper's cases, or NULL */
    const char *csv_path;     /* write one CSV row per case here, or NULL */
    const char *plot_dir;     /* write gnuplot PNGs here, or NULL */
    int cold;                 /* --cold: first calls in fresh processes (bench_cold.c) */
    const char *params;       /* --param: "FAMILY.NAME=VALUE[,...]" launch parameters set
                                 on the OpenCL context when it is made and before every
                                 timed series, or NULL */
    int bp_messages;          /* --bp-messages: 0 f32, 1 f16 (pv_bp_params.message_precision) */
    int bp_update;            /* --bp-update: 0 serial, 1 cooperative (pv_bp_params.message_update) */
    const char *ab_param;     /* --ab-param: side B of an A/B comparison ("FAMILY.NAME=VALUE[,...]"
                                 or "@FILE"; bench_ab.c), or NULL for a plain run */
    int ab_rounds;            /* --ab-rounds: rounds of the A/B comparison */
    float min_time_ms;        /* --min-time: an OpenCL series goes on past `runs` until its
                                 end-to-end times add up to this (0: exactly `runs`) */
} bench_config;

/* Every timed run of one backend on one row (the first BENCH_MAX_SAMPLES). */
typedef struct bench_series {
    int count;
    double total_ms[BENCH_MAX_SAMPLES];
    double kernel_ms[BENCH_MAX_SAMPLES];
    double upload_ms[BENCH_MAX_SAMPLES];
    double download_ms[BENCH_MAX_SAMPLES];
} bench_series;

typedef struct bench_result {
    char op[32];
    char name[48];
    char params[128];
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
    int quality_absolute;     /* 1: the quality is a value in quality_name's unit, not a share */
    /* The cross-check: agreement must reach threshold (the operation's
     * documented tolerance); 0 where there is nothing to compare. */
    double threshold;
    double roofline_bytes;    /* minimum bytes moved (bench_roofline.h); 0: none */
    double roofline_ops;      /* operations the algorithm does (bench_ops.h); 0: none */
    int ops_integer;          /* 1: integer operations, set against the integer peak */
    char fft_engine[16];      /* "clfft", "vkfft", "fftw" where FFTs are used */
    double size;              /* elements (pixels, voxels, descriptors) for plots */
    char variant[32];         /* the row's series within its op, for plots */
    /* Every declared parameter of the row's operation as run, "name=value"
     * separated by spaces (bench_describe_settings; "" where none) */
    char settings[512];
    char launch[48];          /* where the OpenCL launch parameters came from:
                                 "" = the context's (bench_row_launch) */
    /* Rows whose cost is reported per result item (SIFT detection: per
     * keypoint): the item's name (NULL elsewhere) and each backend's count. */
    const char *item_name;
    int cpu_items;
    int cl_items;
    /* Rows of a stream of pairs (sgm-stream): the pairs the times cover,
     * the pairs the CPU backend ran (its times scaled from them), and on
     * the batch row the OpenCL pairs/s of the loop row (0 elsewhere). */
    int stream_pairs;
    int stream_cpu_pairs;
    double stream_loop_rate;
    bench_series cpu_samples;
    bench_series cl_samples;
} bench_result;

/* Whether case `name` of operation `op` is selected by --case `only`
 * (NULL: every case): the operation's name, a part of the case's name, or
 * "=NAME" for that case alone. */
int bench_case_matches(const char *only, const char *op, const char *name);

/* The timed and untimed runs for a context: --cpu-runs and --cpu-warmup on
 * the CPU backend, where set, else --runs and --warmup (runs clamped to
 * 1 .. BENCH_MAX_SAMPLES). */
int bench_runs_for(const bench_config *config, const pv_context *ctx);
int bench_warmup_for(const bench_config *config, const pv_context *ctx);

/* One timed run of an operation on ctx; fills the context's timing. */
typedef pv_status (*bench_run_fn)(pv_context *ctx, void *user);

/* One run for the kernel-only figure: *kernel_ms its device time. */
typedef pv_status (*bench_kernel_run_fn)(pv_context *ctx, void *user, double *kernel_ms);

/* The kernel-only samples of an OpenCL series (nothing to do on the CPU
 * backend, whose series has them already): after one untimed run,
 * series->count runs with every kernel timed on its own
 * (PV_KERNEL_TIMING_EACH) into series->kernel_ms.  The end-to-end samples
 * come from runs with the default timing, which costs the host less per
 * launch; the context's setting is put back. */
pv_status bench_kernel_series(pv_context *ctx, bench_kernel_run_fn run, void *user,
                              bench_series *series);

/* Warm up, then time `runs` runs; medians of total and kernel ms (the
 * latter, on OpenCL, from runs of its own: bench_kernel_series). */
pv_status bench_time(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                     pv_timing *median);
/* The same, keeping every sample in *series (may be NULL). */
pv_status bench_time_series(const bench_config *config, pv_context *ctx, bench_run_fn run,
                            void *user, pv_timing *median, bench_series *series);

/* Middlebury bad > 1 px share of a disparity map against its ground truth
 * (pv_disparity_error), -1 when it cannot be computed. */
double bench_bad_pixels(const pv_image *disparity, const pv_image *truth, float gt_scale,
                        int border);

/* A bundled Middlebury set (data_dir/stereo/<set>/): left and right as
 * u8, the ground truth (gt.pgm, else gt.pfm) as f32.  0, or 1 after
 * printing why it failed. */
int bench_load_stereo_set(const bench_config *config, const char *set, pv_image *left,
                          pv_image *right, pv_image *truth);

/* A random-dot pair of width x height u8 images in three vertical bands
 * of known disparities within 1..ndisp-1, and its f32 ground truth (0
 * where a left pixel has no match), as the SAD and SGM cases use it.  0,
 * or 1 after a message (nothing to free then but what was allocated:
 * image_list_free takes all three). */
int bench_synthetic_stereo(int width, int height, int ndisp, pv_image *left, pv_image *right,
                           pv_image *truth);

/* The share of pixels on which two disparity maps agree: within
 * tolerance, or both invalid (infinite). */
double bench_disparity_agreement(const pv_image *a, const pv_image *b, float tolerance);

/* bench_time_series, with the library's message (naming `what`) on
 * failure: 0 or 1. */
int bench_time_or_fail(const bench_config *config, pv_context *ctx, bench_run_fn run, void *user,
                       pv_timing *median, bench_series *series, const char *what);

/* The OpenCL device the bench compares with: the first GPU, else the first
 * device; -1 when there is none. */
int bench_first_gpu(void);

/* The medians of a series' samples (count >= 1). */
void bench_series_medians(const bench_series *series, pv_timing *median);

/* Add t's total, kernel, upload and download times to *sum (a stream timed
 * as a loop of single calls: the context keeps only the last call's). */
void bench_add_timing(pv_timing *sum, const pv_timing *t);
/* r->settings from the parameter structure of operation op, by the
 * library's declarations (include/parvis/params.h): names and values are
 * the library's own, so the labels cannot drift from the structure. */
void bench_describe_settings(bench_result *r, const char *op, const void *params, size_t size);

/* Copy a backend's medians and samples into a row (series may be NULL);
 * the OpenCL one also sets have_opencl. */
void bench_fill_cpu(bench_result *r, const pv_timing *median, const bench_series *series);
void bench_fill_opencl(bench_result *r, const pv_timing *median, const bench_series *series);

/* The contexts a bench run compares: the CPU backend and the OpenCL device
 * (a GPU when present, else any OpenCL device; NULL when there is none),
 * with each one's copy bandwidth (GB/s, read + write) and compute peaks
 * measured once (0 when not measured). */
typedef struct bench_limits {
    double bandwidth;         /* copy bandwidth, GB/s read + write; 0: not measured */
    double float_peak;        /* fp32 GFLOP/s (pv_context_compute_peak); 0: not measured */
    double int_peak;          /* integer Gop/s; 0: not measured */
} bench_limits;

typedef struct bench_contexts {
    pv_context *cpu;
    pv_context *opencl;
    bench_limits cpu_limits;
    bench_limits opencl_limits;
} bench_contexts;

/* Opens both (the OpenCL one with config->params applied as soon as it is
 * made, so that every plan made on it has them) and measures their limits:
 * 0, or 1 after a message. */
int bench_open_contexts(const bench_config *config, bench_contexts *contexts);
/* A fresh context on the OpenCL device bench_open_contexts takes, with
 * config->params applied at once, its limits not measured; NULL after a
 * message. */
pv_context *bench_open_opencl(const bench_config *config);

/* One operation timed on the CPU, then on OpenCL when there is a device,
 * through bench_time_or_fail (naming "WHAT (cpu)" / "WHAT (opencl)"), the
 * samples into r's series: 0 or 1. */
int bench_time_both(const bench_config *config, const bench_contexts *contexts, bench_run_fn run,
                    void *cpu_user, void *cl_user, pv_timing *cpu_t, pv_timing *cl_t,
                    bench_result *r, const char *what);
void bench_close_contexts(bench_contexts *contexts);

/* Whether the selection runs a case (--quick/--full/--case/--paper):
 * --case matches the op name exactly or a substring of the case name.
 * Each selected case advances the progress line on stderr. */
int bench_wants(const bench_config *config, const char *op, const char *name, int quick_case);

/* Count the cases a run will take (families called with counting on, so
 * bench_wants only counts), for the progress line's total. */
void bench_progress_counting(int on);
int bench_progress_total(void);

/* Whether a row passes its cross-check. */
int bench_row_passes(const bench_result *r);
/* Whether a row's CPU or OpenCL samples spread beyond BENCH_SPREAD_LIMIT. */
int bench_row_spreads(const bench_result *r);
/* A row's fractions of its two limits: the time the copy bandwidth needs
 * for its bytes, and the time the compute peak of its operations' kind
 * needs for its operations, each over the OpenCL kernel time (opencl = 1;
 * the row must have one) or the CPU backend's time (opencl = 0); 0 when
 * not applicable.  The row's headline side is opencl = r->have_opencl. */
double bench_row_memory_fraction(const bench_result *r, int opencl);
double bench_row_compute_fraction(const bench_result *r, int opencl);
/* The limit that binds, the one whose ideal time is the longer: "memory"
 * or "compute"; "-" when neither fraction applies. */
const char *bench_row_bound(const bench_result *r, int opencl);

/* Report rows as they come, the table again at the end with the failed
 * cross-checks, and the machine-readable files. */
void bench_print_header(const bench_contexts *contexts);
/* Where ctx's launch parameters come from, as rows show it: "default",
 * "db:<entry>", "cache", "search", or "-" without OpenCL. */
void bench_launch_source(pv_context *ctx, char *label, size_t size);
/* A row's launch-parameter source: its own, else the OpenCL context's. */
const char *bench_row_launch(const bench_result *r);
/* The label rows without their own take from now on (bench_print_header
 * sets the context's; an A/B run sets each side's). */
void bench_set_launch_label(const char *label);
void bench_print_row(const bench_result *result);
int bench_print_summary(const bench_result *results, int count);
int bench_write_json(const char *path, const bench_contexts *contexts, const bench_config *config,
                     const bench_result *results, int count);
/* More keys for the JSON document: document writes top-level keys, each
 * as "\"key\": value,\n  " (before "all_passed"); row writes keys of row
 * index, each as ", \"key\": value".  Either may be NULL. */
typedef struct bench_json_extra {
    void (*document)(FILE *out, const void *user);
    void (*row)(FILE *out, int index, const void *user);
    const void *user;
} bench_json_extra;
int bench_write_json_extra(const char *path, const bench_contexts *contexts,
                           const bench_config *config, const bench_result *results, int count,
                           const bench_json_extra *extra);
int bench_write_csv(const char *path, const bench_result *results, int count);
int bench_write_plots(const char *dir, const bench_result *results, int count);

/* Case families.  Each appends rows to results (capacity max) and returns
 * 0, or 1 after printing why it failed. */
typedef int bench_family_fn(const bench_config *config, const bench_contexts *contexts,
                            bench_result *results, int max, int *count);
bench_family_fn bench_stereo_cases, bench_bp_cases, bench_sgm_cases, bench_register_cases,
    bench_octreg_cases, bench_flow_cases, bench_features_cases, bench_geometry_cases,
    bench_multi_cases;

/* Parameterised single cases, for --paper (bench_papers.c).  Each runs one
 * case on both backends, appends its row(s) and prints them. */
typedef struct bench_rows {
    bench_result *results;
    int max;
    int *count;
} bench_rows;

/* Append a copy of row and print it (1 with a message when full). */
int bench_add_row(bench_rows *rows, const bench_result *row);

/* The async rows (bench_async.c): streams of independent calls, a loop of
 * synchronous calls against the same calls queued on two contexts. */
int bench_async_cases(const bench_config *config, const bench_contexts *contexts,
                      bench_result *results, int max, int *count);

/* The SIFT chain rows (bench_sift_chain.c: sift-chain-720p, -1080p,
 * sift-track-720p), run by bench_features_cases. */
int bench_sift_chain_cases(const bench_config *config, const bench_contexts *contexts,
                           bench_rows *rows);

/* The sgm-stream rows (bench_sgm_stream.c), run by bench_sgm_cases. */
int bench_sgm_stream_cases(const bench_config *config, const bench_contexts *contexts,
                           bench_rows *rows);

/* SAD on a bundled set (set != NULL) or a synthetic width x height pair. */
typedef struct bench_sad_spec {
    const char *name;
    const char *set;
    int width, height;
    int ndisp, window;
} bench_sad_spec;
int bench_sad_case(const bench_config *config, const bench_contexts *contexts,
                   const bench_sad_spec *spec, bench_rows *rows);

/* BP on a bundled set, each pixel repeated `upsample` times per axis, with
 * the given parameters; tuned: also a row with the tuning cache's values. */
typedef struct bench_bp_spec {
    const char *name;
    const char *set;
    int upsample;
    float gt_scale;           /* of the (upsampled) ground truth */
    int border;
    pv_bp_params params;
    int tuned;
} bench_bp_spec;
int bench_bp_case(const bench_config *config, const bench_contexts *contexts,
                  const bench_bp_spec *spec, bench_rows *rows);

/* SIFT detect + describe on the Venus image mirror-tiled to the size. */
int bench_sift_case(const bench_config *config, const bench_contexts *contexts, const char *name,
                    int width, int height, bench_rows *rows);
/* AO-OCT registration of a depth x A-lines x B-scans target. */
int bench_octreg_case(const bench_config *config, const bench_contexts *contexts,
                      const int size[3], bench_rows *rows);
/* The same with the volumes of `type` (PV_VOLUME_U16: quantised to 16 bits,
 * the row named "... u16"). */
int bench_octreg_case_typed(const bench_config *config, const bench_contexts *contexts,
                            const int size[3], pv_volume_type type, bench_rows *rows);
/* 3D optical flow on n^3 volumes (R 5, N 50, 15 taps). */
int bench_flow_case(const bench_config *config, const bench_contexts *contexts, int n,
                    bench_rows *rows);

/* --paper NAME (sad, bp, sift, oct, flow): that paper's cases beside its
 * published figures.  0, or 1 after printing why it failed. */
int bench_paper_run(const bench_config *config, const bench_contexts *contexts,
                    bench_result *results, int max, int *count);
/* Whether NAME is a paper bench_paper_run knows; the list for the usage. */
int bench_paper_known(const char *name);
const char *bench_paper_names(void);

/* --cold: every operation's first call in fresh processes, with empty and
 * with warm caches, beside its steady time (bench_cold.c); 0, or 1 when a
 * measurement failed.  bench_cold_child is the hidden --cold-child entry
 * of the processes it starts. */
int bench_cold_run(const bench_config *config);
int bench_cold_child(int argc, char **argv);

/* --ab-param: the selected cases timed with two sets of launch parameters
 * in this one process (bench_ab.c): side A, the OpenCL context's own
 * (cache, database entry or defaults, then --param), and side B, side A
 * with config->ab_param on top, each side in a fresh OpenCL context for
 * every round, the order alternating from round to round.  suite runs
 * the selection (every family, as a plain run does) into at most max_rows
 * rows.  Prints the rows of every pass, then the comparison; writes
 * --json with an "ab" object per row.  0, or 1 when a pass failed, a
 * cross-check fell below its threshold or an output could not be
 * written. */
int bench_ab_run(const bench_config *config, bench_family_fn *suite, int max_rows);

/* Send stderr through a filter that drops the OpenCL compiler's "N
 * warnings generated." lines (bench_stderr.c); stop restores stderr and
 * returns how many were dropped. */
void bench_stderr_filter_start(void);
int bench_stderr_filter_stop(void);

#endif
