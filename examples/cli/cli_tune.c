/* parvis tune: search the OpenCL device's best launch parameters for
 * every kernel family (or one) and store them in the tuning cache
 * (tune.h), showing each family's result as it finishes; show
 * where the parameters in use come from; export the cache as an entry of
 * the tuning database (docs/tuning.md). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#define TUNE_MAX_FAMILIES 16

typedef struct tune_args {
    pv_tune_options options;
    float budget;      /* --budget: seconds for the whole search, 0: none */
    cli_backend_options backend;
    int show;          /* --show: print the current values only */
    int export_entry;  /* --export: print the database entry on stdout */
} tune_args;

static int parse_tune_size(const char *value, void *field)
{
    int *size = field;
    return cli_parse_size2(value, 8192, &size[0], &size[1]);
}

static const char tune_conventions[] =
    "  Each candidate's result is checked against the CPU backend before it is timed;\n"
    "  the winners (median of --runs) are written to the tuning cache of the device\n"
    "  (path printed; PARVIS_TUNE_DIR sets its directory) unless --no-write.  Prints per\n"
    "  family as it finishes: 'FAMILY: N candidates (R rejected, P timed once), default\n"
    "  T ms, tuned T ms (Sx), S s' and the values, then the whole search's time.\n"
    "  --budget (default 120 s) bounds the search: a family out of its share starts no\n"
    "  more candidates and keeps its best so far.\n"
    "  --show prints the values in use, where they come from (cache, database entry,\n"
    "  search or defaults) and the cache path, and runs nothing; the search options do\n"
    "  not apply with it.  --export prints, after the search (or with --show, without\n"
    "  one), the device's tuning cache as a tuning database entry on stdout, all else\n"
    "  going to stderr: save it as lib/tune/tune_db/<vendor>-<device>.txt to contribute it.\n"
    "  Needs an OpenCL device (--backend cpu is an error).\n";

/* "all|filter|sad|...": the choices of --op, from the library's list. */
static const char *family_choices(void)
{
    static char choices[256];
    size_t used = (size_t)snprintf(choices, sizeof choices, "all");
    for (int i = 0; pv_tune_family_name(i) && used < sizeof choices; i++)
        used += (size_t)snprintf(choices + used, sizeof choices - used, "|%s",
                                 pv_tune_family_name(i));
    return choices;
}

static int parse_tune_args(int argc, char **argv, tune_args *args)
{
    int op = 0, no_write = 0, size[2] = {0, 0};
    const char *families = family_choices();
    cli_option table[] = {
        {.name = "--op", .kind = CLI_CHOICE, .field = &op, .choices = families,
         .value_name = families, .help = "the kernel family to tune, or all"},
        {.name = "--candidates", .kind = CLI_INT, .field = &args->options.max_candidates,
         .min = 1, .max = 10000, .value_name = "N", .no_default = 1,
         .help = "most candidates per family (default: every one the search makes)"},
        {.name = "--runs", .kind = CLI_INT, .field = &args->options.runs, .min = 1, .max = 1000,
         .value_name = "N", .help = "timed runs per candidate (the median counts)"},
        {.name = "--budget", .kind = CLI_FLOAT, .field = &args->budget, .min = 0, .max = 86400,
         .value_name = "S", .help = "seconds for the whole search, shared among the families "
                                    "(0: no limit)"},
        {.name = "--size", .kind = CLI_CUSTOM, .field = size, .parse = parse_tune_size,
         .value_name = "WxH", .expect = "WxH, each 1..8192", .no_default = 1,
         .help = "synthetic workload size (default: each family's)"},
        {.name = "--ndisp", .kind = CLI_INT, .field = &args->options.ndisp, .min = 2, .max = 1024,
         .value_name = "N", .no_default = 1, .help = "disparity range (default: the op's)"},
        {.name = "--no-write", .kind = CLI_FLAG, .field = &no_write,
         .help = "do not store the winners"},
        {.name = "--show", .kind = CLI_FLAG, .field = &args->show,
         .help = "print the values in use and stop"},
        {.name = "--export", .kind = CLI_FLAG, .field = &args->export_entry,
         .help = "print the tuning database entry of this device on stdout"},
        CLI_BACKEND_ENTRIES(&args->backend),
        CLI_PROGRESS_ENTRY(&args->backend.progress),
    };
    cli_command c = {.name = "tune", .synopsis = "[options]",
                     .summary = "Search the OpenCL device's best kernel launch parameters, "
                                "family by family.",
                     .conventions = tune_conventions, .options = table,
                     .option_count = CLI_COUNT(table), .positional = NULL};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    static const char *const search[] = {"--op",    "--candidates", "--runs",    "--size",
                                         "--ndisp", "--no-write",   "--budget"};
    for (size_t k = 0; args->show && k < sizeof search / sizeof search[0]; k++)
        if (cli_given(&c, search[k]))
            return cli_fail("tune: %s does not apply with --show", search[k]);
    if (args->export_entry && no_write)
        return cli_fail("tune: --export prints the cache: it does not go with --no-write");
    if (args->backend.backend == PV_BACKEND_CPU)
        return cli_fail("tune: needs the opencl backend, not cpu");
    args->options.op = op == 0 ? NULL : pv_tune_family_name(op - 1);
    args->options.width = size[0];
    args->options.height = size[1];
    args->options.write_cache = !no_write;
    args->options.budget_s = args->budget;
    return CLI_PARSED;
}

static void print_params(FILE *out, const char *family, const pv_tune_param *params, int count)
{
    fprintf(out, "  %s:", family);
    for (int i = 0; i < count; i++)
        fprintf(out, " %s=%d", params[i].name, params[i].value);
    fprintf(out, "\n");
}

static int show_current(pv_context *ctx, FILE *out)
{
    char path[4096], source[128];
    if (pv_tune_cache_path(ctx, path, sizeof path) == PV_OK)
        fprintf(out, "cache file: %s\n", path);
    pv_status status = pv_tune_source(ctx, source, sizeof source);
    if (status != PV_OK)
        return cli_fail_status(status, "tune --show");
    fprintf(out, "source: %s\n", source);
    for (int f = 0; pv_tune_family_name(f); f++) {
        pv_tune_param params[PV_TUNE_MAX_PARAMS];
        int count = 0;
        status = pv_tune_list(ctx, pv_tune_family_name(f), params, PV_TUNE_MAX_PARAMS, &count);
        if (status != PV_OK)
            return cli_fail_status(status, "tune --show");
        print_params(out, pv_tune_family_name(f), params, count);
    }
    return 0;
}

/* One family's result, as soon as its search ends (the search of every
 * family takes a while: this is its progress). */
static void print_result(void *user, const pv_tune_result *r)
{
    FILE *out = user;
    fprintf(out,
            "%s: %d candidates (%d rejected, %d timed once), default %.3f ms, tuned %.3f ms "
            "(%.2fx), %.1f s\n",
            r->op, r->tried, r->rejected, r->pruned, r->default_ms, r->best_ms,
            r->default_ms / r->best_ms, r->search_ms / 1000.0);
    print_params(out, r->op, r->params, r->param_count);
    fflush(out);
}

/* The device's tuning cache as a database entry, alone on stdout. */
static int export_entry(pv_context *ctx)
{
    char text[8192];
    pv_status status = pv_tune_export(ctx, text, sizeof text);
    if (status != PV_OK)
        return cli_fail_status(status, "tune --export");
    fputs(text, stdout);
    return 0;
}

static int run_tune(const tune_args *args, pv_context *ctx)
{
    if (pv_context_backend(ctx) != PV_BACKEND_OPENCL)
        return cli_fail("tune: needs an OpenCL device (the context runs on %s)",
                        pv_backend_name(pv_context_backend(ctx)));
    /* With --export, stdout holds the entry alone: a file to contribute. */
    FILE *out = args->export_entry ? stderr : stdout;
    fprintf(out, "tuning on %s\n", pv_context_device_name(ctx));
    if (args->show) {
        int rc = show_current(ctx, out);
        return rc == 0 && args->export_entry ? export_entry(ctx) : rc;
    }
    pv_tune_result results[TUNE_MAX_FAMILIES];
    int count = 0;
    pv_status status = args->options.write_cache ? pv_tune_check_cache_writable(ctx) : PV_OK;
    if (status != PV_OK)
        return cli_fail_status(status, "tune (the cache cannot be saved)");
    pv_tune_options options = args->options;
    options.progress = print_result;
    options.progress_user = out;
    const double start = cli_now_ms();
    status = pv_tune(ctx, &options, results, TUNE_MAX_FAMILIES, &count);
    if (status != PV_OK)
        return cli_fail_status(status, "tune");
    fprintf(out, "%d famil%s tuned in %.1f s\n", count, count == 1 ? "y" : "ies",
            (cli_now_ms() - start) / 1000.0);
    char path[4096];
    if (args->options.write_cache && pv_tune_cache_path(ctx, path, sizeof path) == PV_OK)
        fprintf(out, "written to %s\n", path);
    return args->export_entry ? export_entry(ctx) : 0;
}

int cli_tune(int argc, char **argv)
{
    tune_args args;
    memset(&args, 0, sizeof args);
    pv_tune_options_default(&args.options);
    cli_backend_options_default(&args.backend);
    args.backend.backend = PV_BACKEND_OPENCL;
    args.budget = 120.0f; /* a full tune in two minutes on a big GPU */
    int parsed = parse_tune_args(argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    int rc = run_tune(&args, ctx);
    pv_context_destroy(ctx);
    return rc;
}
