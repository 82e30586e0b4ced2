/* parvis-bench: CPU backend vs OpenCL, per operation and case: median
 * times after warm-up (kernel-only and end to end), speedups, agreement
 * between the backends against each operation's cross-check threshold,
 * the roofline fraction, and quality against ground truth.
 *
 * Exit status: 0 when every case ran and agreed, 1 when a case failed to
 * run or a cross-check fell below its threshold (after the full report). */
#include "bench.h"
#include "bench_ab.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define BENCH_MAX_RESULTS 128

/* The quick suite's repetitions, unless --runs / --warmup say otherwise. */
#define QUICK_RUNS 3
#define QUICK_WARMUP 1

static const char summary[] =
    "Compares the CPU backend with an OpenCL device (the first GPU, else any\n"
    "OpenCL device).  Without a selection it runs the quick suite: every\n"
    "operation on small bundled and synthetic cases.  --full runs every case,\n"
    "--case NAME the cases of an operation or whose name contains NAME (=NAME\n"
    "that case alone), and --paper NAME one paper's cases beside its published\n"
    "figures.  Exits 1 when a cross-check falls below its threshold.  --cold\n"
    "times every operation's first call in fresh processes, with empty and\n"
    "with warm caches, beside its steady time (--full: the papers' sizes).\n"
    "--ab-param compares two sets of OpenCL launch parameters in this one\n"
    "process: the selection runs once per side and round, each side on a\n"
    "fresh OpenCL context, the order alternating, then a table of B over A\n"
    "per row (docs/tuning.md).";

static const char conventions[] =
    "  One row a case: median times (CPU, OpenCL kernel and end to end), speedups,\n"
    "  the share of outputs on which the backends agree against the operation's\n"
    "  threshold, the fraction of the copy-bandwidth and compute limits reached\n"
    "  and which of the two binds (docs/benchmarks.md, docs/bench-json.md).\n"
    "  SIFT detection rows end their params with the OpenCL cost per keypoint,\n"
    "  'cl N ns/kp (kernels M)': end to end less the upload, and the kernels.\n";

typedef struct bench_options {
    int runs_given, warmup_given, ab_rounds_given;
} bench_options;

/* An A/B run's rounds unless --ab-rounds says otherwise. */
#define AB_ROUNDS_DEFAULT 5

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

static int parse_paper(const char *value, void *field)
{
    if (!bench_paper_known(value))
        return -1;
    *(const char **)field = value;
    return 0;
}

/* The command line into config; CLI_PARSED, CLI_HELP or CLI_ERROR. */
static int parse_options(int argc, char **argv, bench_config *config, bench_options *given)
{
    char paper_names[160];
    snprintf(paper_names, sizeof paper_names, "one of %s", bench_paper_names());
    cli_option options[] = {
        {.name = "--quick", .kind = CLI_FLAG, .field = &config->quick,
         .help = "the quick suite: every operation on small cases (the default selection)"},
        {.name = "--full", .kind = CLI_FLAG, .field = &config->full,
         .help = "every case of every family"},
        {.name = "--cold", .kind = CLI_FLAG, .field = &config->cold,
         .help = "each operation's first call in fresh processes, empty and warm caches"},
        {.name = "--case", .kind = CLI_TEXT, .field = &config->only, .value_name = "NAME",
         .help = "the cases of an operation, or whose name contains NAME; =NAME: that case alone"},
        {.name = "--paper", .kind = CLI_CUSTOM, .field = &config->paper, .value_name = "NAME",
         .parse = parse_paper, .expect = paper_names,
         .help = "one paper's cases beside its published figures"},
        {.name = "--runs", .kind = CLI_INT, .field = &config->runs, .min = 1,
         .max = BENCH_MAX_SAMPLES, .value_name = "N",
         .help = "timed runs per backend, the median reported (quick suite: 3)"},
        {.name = "--min-time", .kind = CLI_FLOAT, .field = &config->min_time_ms, .min = 0,
         .max = 60000, .value_name = "MS",
         .help = "an OpenCL row goes on past --runs until its timed runs add up to MS ms "
                 "end to end (at most 100 runs; default 0: exactly --runs), so that rows of a "
                 "fraction of a millisecond get as steady a median as long ones"},
        {.name = "--warmup", .kind = CLI_INT, .field = &config->warmup, .min = 0, .max = 100000,
         .value_name = "N", .help = "untimed runs first (quick suite: 1)"},
        {.name = "--cpu-runs", .kind = CLI_INT, .field = &config->cpu_runs, .min = 1,
         .max = BENCH_MAX_SAMPLES, .value_name = "N",
         .help = "timed runs of the CPU backend (default: as --runs); the large BP and "
                 "batch cases' CPU oracle takes seconds a run"},
        {.name = "--cpu-warmup", .kind = CLI_INT, .field = &config->cpu_warmup, .min = 0,
         .max = 100000, .value_name = "N",
         .help = "untimed runs of the CPU backend first (default: as --warmup)"},
        {.name = "--json", .kind = CLI_TEXT, .field = &config->json_path, .value_name = "FILE",
         .help = "write the results as JSON (docs/bench-json.md)"},
        {.name = "--csv", .kind = CLI_TEXT, .field = &config->csv_path, .value_name = "FILE",
         .help = "write one CSV row per case"},
        {.name = "--plot", .kind = CLI_TEXT, .field = &config->plot_dir, .value_name = "DIR",
         .help = "write gnuplot PNGs of the size sweeps"},
        {.name = "--data", .kind = CLI_TEXT, .field = &config->data_dir, .value_name = "DIR",
         .no_default = 1,
         .help = "directory holding stereo/<set>/ (default $PARVIS_DATA, else the bundled data)"},
        {.name = "--param", .kind = CLI_TEXT, .field = &config->params,
         .value_name = "FAMILY.NAME=VALUE[,...]",
         .help = "launch parameters set on the OpenCL context when it is made and before "
                 "each timed series, over the defaults or the tuned values (e.g. "
                 "bp.BP_DIR_ITEMS=4)"},
        {.name = "--ab-param", .kind = CLI_TEXT, .field = &config->ab_param,
         .value_name = "FAMILY.NAME=VALUE[,...]|@FILE",
         .help = "compare two launch-parameter sets in this process: side A the context's own "
                 "(cache, database entry or defaults, then --param), side B side A with these "
                 "on top; @FILE reads the 'param FAMILY NAME VALUE' lines of a tuning-database "
                 "entry or tuning cache file.  The CPU backend then runs once a row without "
                 "warm-up unless --cpu-runs/--cpu-warmup are given"},
        {.name = "--ab-rounds", .kind = CLI_INT, .field = &config->ab_rounds, .min = 1,
         .max = BENCH_AB_MAX_ROUNDS, .value_name = "N",
         .help = "rounds of --ab-param, each timing side A and side B (warm-up and --runs), "
                 "the order alternating"},
        {.name = "--bp-messages", .kind = CLI_CHOICE, .field = &config->bp_messages,
         .choices = "f32|f16", .value_name = "f32|f16",
         .help = "message precision of the BP cases (default f32)"},
        {.name = "--bp-update", .kind = CLI_CHOICE, .field = &config->bp_update,
         .choices = "serial|cooperative", .value_name = "serial|cooperative",
         .help = "message update of the BP cases (default serial; the -coop rows are always "
                 "cooperative)"},
        CLI_BACKEND_ENTRIES(&config->device),
        CLI_DEVICES_ENTRY(&config->devices, 0),
    };
    cli_command command = {.name = "parvis-bench", .program = "parvis-bench",
                           .synopsis = "[options]", .summary = summary,
                           .conventions = conventions, .options = options,
                           .option_count = CLI_COUNT(options)};
    int parsed = cli_parse(&command, argc, argv);
    given->runs_given = cli_given(&command, "--runs");
    given->warmup_given = cli_given(&command, "--warmup");
    given->ab_rounds_given = cli_given(&command, "--ab-rounds");
    return parsed;
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

/* An A/B run's defaults: the CPU backend, which has no launch parameters,
 * timed once a row without warm-up (the comparison is of the OpenCL
 * rows), unless the command line says otherwise; the options it does not
 * go with refused. */
static int resolve_ab(bench_config *config, const bench_options *given)
{
    if (!config->ab_param) {
        if (given->ab_rounds_given)
            return cli_fail("--ab-rounds goes with --ab-param");
        return 0;
    }
    if (config->cold)
        return cli_fail("--ab-param does not go with --cold");
    if (config->cpu_runs == 0)
        config->cpu_runs = 1;
    if (config->cpu_warmup < 0)
        config->cpu_warmup = 0;
    return 0;
}

static int run_families(const bench_config *config, const bench_contexts *contexts,
                        bench_result *results, int *count)
{
    if (config->paper)
        return bench_paper_run(config, contexts, results, BENCH_MAX_RESULTS, count);
    static bench_family_fn *const families[] = {
        bench_stereo_cases, bench_bp_cases,       bench_sgm_cases,      bench_register_cases,
        bench_octreg_cases, bench_flow_cases,     bench_features_cases, bench_geometry_cases,
        bench_multi_cases,  bench_async_cases};
    int rc = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0] && rc == 0; f++)
        rc = families[f](config, contexts, results, BENCH_MAX_RESULTS, count);
    return rc;
}

/* run_families with the bench's row capacity, for the A/B run. */
static int run_suite(const bench_config *config, const bench_contexts *contexts,
                     bench_result *results, int max, int *count)
{
    (void)max; /* results holds BENCH_MAX_RESULTS rows: bench_ab_run is given that */
    return run_families(config, contexts, results, count);
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

/* The selection's rows, their summary and the requested output files. */
static int run_and_report(const bench_config *config, const bench_contexts *contexts,
                          bench_result *results)
{
    int count = 0;
    int rc = run_families(config, contexts, results, &count);
    if (bench_print_summary(results, count))
        rc = 1;
    if (write_outputs(config, contexts, results, count))
        rc = 1;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cold-child") == 0)
        return bench_cold_child(argc, argv);
    bench_config config;
    memset(&config, 0, sizeof config);
    config.runs = 11;
    config.warmup = 3;
    config.cpu_warmup = -1;
    config.ab_rounds = AB_ROUNDS_DEFAULT;
    cli_backend_options_default(&config.device);
    bench_options given = {0, 0, 0};
    int parsed = parse_options(argc, argv, &config, &given);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    if (!config.data_dir)
        config.data_dir = default_data_dir();
    resolve_selection(&config, &given);
    if (resolve_ab(&config, &given))
        return 1;
    if (config.cold)
        return bench_cold_run(&config);
    wait_passively_beside_cpu_device(&config, argv);
    bench_stderr_filter_start();
    if (config.ab_param) {
        int rc = bench_ab_run(&config, run_suite, BENCH_MAX_RESULTS);
        bench_stderr_filter_stop();
        return rc;
    }
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
    int rc = config.only && bench_progress_total() == 0
                 ? cli_fail("no case matches --case %s", config.only)
                 : run_and_report(&config, &contexts, results);
    free(results);
    bench_close_contexts(&contexts);
    int dropped = bench_stderr_filter_stop();
    if (dropped)
        fprintf(stderr, "parvis-bench: %d \"warnings generated\" lines of the OpenCL compiler "
                        "(PoCL building clFFT's kernels) left out\n", dropped);
    return rc;
}
