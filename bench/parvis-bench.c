/* parvis-bench: CPU backend vs OpenCL, per operation and case: median
 * times after warm-up (kernel-only and end to end), speedups, agreement
 * between the backends against each operation's cross-check threshold,
 * the roofline fraction, and quality against ground truth.
 *
 * Exit status: 0 when every case ran and agreed, 1 when a case failed to
 * run or a cross-check fell below its threshold (after the full report). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define BENCH_MAX_RESULTS 128

/* The quick suite's repetitions, unless --runs / --warmup say otherwise. */
#define QUICK_RUNS 3
#define QUICK_WARMUP 1

static const char usage[] =
    "usage: parvis-bench [--quick | --full | --case NAME | --paper NAME] [--runs N]\n"
    "                    [--warmup N] [--json FILE] [--csv FILE] [--plot DIR] [--data DIR]\n"
    "                    [--backend auto|cpu|opencl] [--device I] [--devices all|LIST]\n"
    "                    [--cold]\n"
    "Compares the CPU backend with an OpenCL device (the first GPU, else any\n"
    "OpenCL device).  Without a selection it runs the quick suite: every\n"
    "operation on small bundled and synthetic cases.  --full runs every case,\n"
    "--case NAME the cases of an operation or whose name contains NAME, and\n"
    "--paper NAME (sad, bp, sift, oct, flow) one paper's cases beside its\n"
    "published figures.  Exits 1 when a cross-check falls below its threshold.\n"
    "--cold times every operation's first call in fresh processes, with empty and\n"
    "with warm caches, beside its steady time (--full: the papers' sizes).\n";

typedef struct bench_options {
    int runs_given, warmup_given;
} bench_options;

static int is_directory(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

/* --data, then $PARVIS_DATA, then the source tree, then the installed copy. */
static const char *default_data_dir(void)
{
    const char *env = getenv("PARVIS_DATA");
    if (env && *env)
        return env;
    if (is_directory(PV_SRC_DATADIR "/stereo"))
        return PV_SRC_DATADIR;
    return PV_DATADIR;
}

static int parse_flag(const char *arg, bench_config *config)
{
    if (strcmp(arg, "--quick") == 0)
        config->quick = 1;
    else if (strcmp(arg, "--full") == 0)
        config->full = 1;
    else if (strcmp(arg, "--cold") == 0)
        config->cold = 1;
    else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        fputs(usage, stdout);
        exit(0);
    } else
        return 0;
    return 1;
}

static int parse_value(const char *arg, const char *value, bench_config *config,
                       bench_options *given)
{
    if (strcmp(arg, "--case") == 0)
        config->only = value;
    else if (strcmp(arg, "--paper") == 0) {
        if (!bench_paper_known(value))
            return cli_fail("unknown --paper '%s' (one of %s)", value, bench_paper_names());
        config->paper = value;
    } else if (strcmp(arg, "--json") == 0)
        config->json_path = value;
    else if (strcmp(arg, "--csv") == 0)
        config->csv_path = value;
    else if (strcmp(arg, "--plot") == 0)
        config->plot_dir = value;
    else if (strcmp(arg, "--data") == 0)
        config->data_dir = value;
    else if (strcmp(arg, "--devices") == 0)
        config->devices = value;
    else if (strcmp(arg, "--runs") == 0) {
        given->runs_given = 1;
        if (cli_parse_int(value, 1, BENCH_MAX_SAMPLES, &config->runs))
            return cli_fail("bad --runs (1 .. %d)", BENCH_MAX_SAMPLES);
    } else if (strcmp(arg, "--warmup") == 0) {
        given->warmup_given = 1;
        if (cli_parse_int(value, 0, 100000, &config->warmup))
            return cli_fail("bad --warmup");
    } else
        return cli_fail("unknown option '%s'\n%s", arg, usage);
    return 0;
}

static int parse_option(int argc, char **argv, int *i, bench_config *config, bench_options *given)
{
    int taken = cli_take_backend_option(argc, argv, i, &config->device);
    if (taken != 0)
        return taken < 0;
    if (parse_flag(argv[*i], config))
        return 0;
    const char *arg = argv[*i];
    const char *value = cli_value(argc, argv, i);
    return value ? parse_value(arg, value, config, given) : 1;
}

/* No selection means the quick suite; --full and --paper take every size. */
static void resolve_selection(bench_config *config, const bench_options *given)
{
    if (config->full || config->paper)
        config->quick = 0;
    else if (!config->only)
        config->quick = 1;
    if (config->quick && !given->runs_given)
        config->runs = QUICK_RUNS;
    if (config->quick && !given->warmup_given)
        config->warmup = QUICK_WARMUP;
}

static int run_families(const bench_config *config, const bench_contexts *contexts,
                        bench_result *results, int *count)
{
    if (config->paper)
        return bench_paper_run(config, contexts, results, BENCH_MAX_RESULTS, count);
    int rc = bench_stereo_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_bp_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_register_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_octreg_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_flow_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_features_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_geometry_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    if (rc == 0)
        rc = bench_multi_cases(config, contexts, results, BENCH_MAX_RESULTS, count);
    return rc;
}

/* The selection's case count, for the progress line: the families run
 * with counting on, so that bench_wants counts and skips every case. */
static void count_cases(const bench_config *config, const bench_contexts *contexts,
                        bench_result *results)
{
    int none = 0;
    bench_progress_counting(1);
    run_families(config, contexts, results, &none);
    bench_progress_counting(0);
}

static int write_outputs(const bench_config *config, const bench_contexts *contexts,
                         const bench_result *results, int count)
{
    int rc = 0;
    if (config->json_path)
        rc |= bench_write_json(config->json_path, contexts, config, results, count);
    if (config->csv_path)
        rc |= bench_write_csv(config->csv_path, results, count);
    if (config->plot_dir)
        rc |= bench_write_plots(config->plot_dir, results, count);
    return rc;
}

/* When the OpenCL device the bench compares with runs on the same cores as
 * the CPU backend (PoCL), OpenMP's default spin-waiting makes the two
 * runtimes' threads fight: an OpenMP thread spins through its time slice
 * at every barrier while its partner waits for a core held by a PoCL
 * worker or another process, and FFTW's many short parallel regions then
 * take 10 to 60 times longer in some runs than in others
 * (docs/benchmarks.md).  Waiting passively removes that.  libgomp reads
 * OMP_WAIT_POLICY once, when it is loaded, so the bench runs itself again
 * with it set; an OMP_WAIT_POLICY the user set is left alone. */
static void wait_passively_beside_cpu_device(const bench_config *config, char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || config->device.backend == PV_BACKEND_CPU)
        return;
    int index = config->device.device_index >= 0 ? config->device.device_index
                                                  : bench_first_gpu();
    pv_device_info devices[64];
    int count = 0;
    if (index < 0 || pv_device_list(devices, 64, &count) != PV_OK || index >= count ||
        index >= 64 || devices[index].type != PV_DEVICE_CPU)
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
        return;
    fprintf(stderr, "parvis-bench: the OpenCL device %s shares the CPU backend's cores: "
                    "OpenMP waits passively (OMP_WAIT_POLICY=passive; set it to override)\n",
            devices[index].name);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: go on with the policy already loaded */
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cold-child") == 0)
        return bench_cold_child(argc, argv);
    bench_config config;
    memset(&config, 0, sizeof config);
    config.runs = 11;
    config.warmup = 3;
    cli_backend_options_default(&config.device);
    bench_options given = {0, 0};
    for (int i = 1; i < argc; i++)
        if (parse_option(argc, argv, &i, &config, &given))
            return 1;
    if (!config.data_dir)
        config.data_dir = default_data_dir();
    resolve_selection(&config, &given);
    if (config.cold)
        return bench_cold_run(&config);
    wait_passively_beside_cpu_device(&config, argv);
    bench_stderr_filter_start();
    bench_result *results = calloc(BENCH_MAX_RESULTS, sizeof *results);
    if (!results)
        return cli_fail("out of memory");
    bench_contexts contexts;
    if (bench_open_contexts(&config, &contexts)) {
        free(results);
        bench_stderr_filter_stop();
        return 1;
    }
    bench_print_header(&contexts);
    count_cases(&config, &contexts, results);
    int count = 0;
    int rc = run_families(&config, &contexts, results, &count);
    if (bench_print_summary(results, count))
        rc = 1;
    if (write_outputs(&config, &contexts, results, count))
        rc = 1;
    free(results);
    bench_close_contexts(&contexts);
    int dropped = bench_stderr_filter_stop();
    if (dropped)
        fprintf(stderr, "parvis-bench: %d \"warnings generated\" lines of the OpenCL compiler "
                        "(PoCL building clFFT's kernels) left out\n", dropped);
    return rc;
}
