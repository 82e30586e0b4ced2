/* parvis-bench: CPU backend vs OpenCL, per operation and case: median
 * times after warm-up (kernel-only and end to end), speedups, agreement
 * between the backends, and quality against ground truth. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BENCH_MAX_RESULTS 128

static const char usage[] =
    "usage: parvis-bench [--quick] [--case NAME] [--runs N] [--warmup N] [--json FILE]\n"
    "                    [--data DIR] [--backend auto|cpu|opencl] [--device I]\n"
    "Compares the CPU backend with an OpenCL device (the first GPU, else any\n"
    "OpenCL device) on the bundled and synthetic cases.\n";

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

static int parse_option(int argc, char **argv, int *i, bench_config *config)
{
    const char *arg = argv[*i];
    int taken = cli_take_backend_option(argc, argv, i, &config->device);
    if (taken != 0)
        return taken < 0;
    if (strcmp(arg, "--quick") == 0) {
        config->quick = 1;
        return 0;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        fputs(usage, stdout);
        exit(0);
    }
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return 1;
    if (strcmp(arg, "--case") == 0)
        config->only = value;
    else if (strcmp(arg, "--json") == 0)
        config->json_path = value;
    else if (strcmp(arg, "--data") == 0)
        config->data_dir = value;
    else if (strcmp(arg, "--runs") == 0)
        return cli_parse_int(value, 1, 100000, &config->runs) ? cli_fail("bad --runs") : 0;
    else if (strcmp(arg, "--warmup") == 0)
        return cli_parse_int(value, 0, 100000, &config->warmup) ? cli_fail("bad --warmup") : 0;
    else
        return cli_fail("unknown option '%s'\n%s", arg, usage);
    return 0;
}

int main(int argc, char **argv)
{
    bench_config config = {11, 3, 0, NULL, NULL, NULL, {PV_BACKEND_AUTO, -1, 0}};
    for (int i = 1; i < argc; i++)
        if (parse_option(argc, argv, &i, &config))
            return 1;
    if (!config.data_dir)
        config.data_dir = default_data_dir();
    if (config.quick && config.runs > 5)
        config.runs = 5;
    bench_contexts contexts;
    if (bench_open_contexts(&config, &contexts))
        return 1;
    bench_print_header(&contexts);
    bench_result *results = calloc(BENCH_MAX_RESULTS, sizeof *results);
    int count = 0;
    int rc = results ? bench_stereo_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count)
                     : cli_fail("out of memory");
    if (rc == 0)
        rc = bench_bp_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count);
    if (rc == 0)
        rc = bench_register_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count);
    if (rc == 0)
        rc = bench_octreg_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count);
    if (rc == 0)
        rc = bench_flow_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count);
    if (rc == 0)
        rc = bench_features_cases(&config, &contexts, results, BENCH_MAX_RESULTS, &count);
    if (rc == 0 && config.json_path)
        rc = bench_write_json(config.json_path, &contexts, &config, results, count);
    free(results);
    bench_close_contexts(&contexts);
    return rc;
}
