/* parvis tune: search the OpenCL device's best launch parameters for the
 * BP and SAD kernels and store them in the tuning cache (tune.h). */
#include "cli.h"

#include <string.h>

typedef struct tune_args {
    pv_tune_options options;
    cli_backend_options backend;
    int show;          /* --show: print the current values only */
} tune_args;

static int parse_size(const char *text, int *width, int *height)
{
    char w[32];
    const char *x = strchr(text, 'x');
    if (!x || (size_t)(x - text) >= sizeof w)
        return 1;
    memcpy(w, text, (size_t)(x - text));
    w[x - text] = '\0';
    return cli_parse_int(w, 1, 8192, width) || cli_parse_int(x + 1, 1, 8192, height);
}

static int take_valued(int argc, char **argv, int *i, tune_args *args)
{
    static const char *const names[] = {"--op", "--candidates", "--runs", "--size", "--ndisp"};
    const char *arg = argv[*i];
    size_t which = 0, count = sizeof names / sizeof names[0];
    while (which < count && strcmp(arg, names[which]) != 0)
        which++;
    if (which == count)
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    int bad = 0;
    switch (which) {
    case 0:
        if (strcmp(value, "bp") != 0 && strcmp(value, "sad") != 0) {
            cli_fail("--op '%s': tunable ops are 'bp' and 'sad'", value);
            return -1;
        }
        args->options.op = value;
        break;
    case 1: bad = cli_parse_int(value, 1, 10000, &args->options.max_candidates); break;
    case 2: bad = cli_parse_int(value, 1, 1000, &args->options.runs); break;
    case 3: bad = parse_size(value, &args->options.width, &args->options.height); break;
    case 4: bad = cli_parse_int(value, 2, 1024, &args->options.ndisp); break;
    }
    if (bad)
        cli_fail("%s '%s': not a valid value", arg, value);
    return bad ? -1 : 1;
}

static int parse_tune_args(int argc, char **argv, tune_args *args)
{
    for (int i = 1; i < argc; i++) {
        int taken = cli_take_backend_option(argc, argv, &i, &args->backend);
        if (taken == 0)
            taken = take_valued(argc, argv, &i, args);
        if (taken == 0 && strcmp(argv[i], "--no-write") == 0)
            taken = 1, args->options.write_cache = 0;
        if (taken == 0 && strcmp(argv[i], "--show") == 0)
            taken = 1, args->show = 1;
        if (taken < 0)
            return 1;
        if (taken == 0)
            return cli_fail("tune: unknown argument '%s'", argv[i]);
    }
    return 0;
}

static void print_params(const char *family, const pv_tune_param *params, int count)
{
    printf("  %s:", family);
    for (int i = 0; i < count; i++)
        printf(" %s=%d", params[i].name, params[i].value);
    printf("\n");
}

static int show_current(pv_context *ctx)
{
    static const char *const families[] = {"bp", "sad"};
    char path[4096];
    if (pv_tune_cache_path(ctx, path, sizeof path) == PV_OK)
        printf("cache file: %s\n", path);
    for (int f = 0; f < 2; f++) {
        pv_tune_param params[PV_TUNE_MAX_PARAMS];
        int count = 0;
        pv_status status = pv_tune_list(ctx, families[f], params, PV_TUNE_MAX_PARAMS, &count);
        if (status != PV_OK)
            return cli_fail_status(status, "tune --show");
        print_params(families[f], params, count);
    }
    return 0;
}

static int run_tune(const tune_args *args, pv_context *ctx)
{
    if (pv_context_backend(ctx) != PV_BACKEND_OPENCL)
        return cli_fail("tune: needs an OpenCL device (the context runs on %s)",
                        pv_backend_name(pv_context_backend(ctx)));
    printf("tuning on %s\n", pv_context_device_name(ctx));
    if (args->show)
        return show_current(ctx);
    pv_tune_result results[2];
    int count = 0;
    pv_status status = args->options.write_cache ? pv_tune_check_cache_writable(ctx) : PV_OK;
    if (status != PV_OK)
        return cli_fail_status(status, "tune (the cache cannot be saved)");
    status = pv_tune(ctx, &args->options, results, 2, &count);
    if (status != PV_OK)
        return cli_fail_status(status, "tune");
    for (int i = 0; i < count; i++) {
        const pv_tune_result *r = &results[i];
        printf("%s: %d candidates (%d rejected), default %.3f ms, tuned %.3f ms (%.2fx)\n", r->op,
               r->tried, r->rejected, r->default_ms, r->best_ms, r->default_ms / r->best_ms);
        print_params(r->op, r->params, r->param_count);
    }
    char path[4096];
    if (args->options.write_cache && pv_tune_cache_path(ctx, path, sizeof path) == PV_OK)
        printf("written to %s\n", path);
    return 0;
}

int cli_tune(int argc, char **argv)
{
    tune_args args;
    memset(&args, 0, sizeof args);
    pv_tune_options_default(&args.options);
    cli_backend_options_default(&args.backend);
    args.backend.backend = PV_BACKEND_OPENCL;
    if (parse_tune_args(argc, argv, &args))
        return 1;
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    int rc = run_tune(&args, ctx);
    pv_context_destroy(ctx);
    return rc;
}
