/* parvis stereo: disparity maps from a rectified pair. */
#include "cli.h"

#include <math.h>
#include <string.h>

typedef struct stereo_args {
    const char *left, *right, *output, *png, *ground_truth;
    float gt_scale;
    int gt_border;    /* pixels left out on each side when scoring */
    int want_time, want_json;
    pv_sad_params sad;
    int method_bp;    /* --method bp */
    pv_bp_params bp;  /* its options (cli_bp.c) */
    const char *devices; /* --devices all|LIST (bp only), or NULL: one context */
    cli_backend_options backend;
} stereo_args;

static int parse_method(const char *value, int *method_bp)
{
    *method_bp = strcmp(value, "bp") == 0;
    if (strcmp(value, "sad") == 0 || *method_bp)
        return 0;
    return cli_fail("--method '%s': this build knows 'sad' and 'bp'", value);
}

/* Options with a value.  Returns 1 if consumed, -1 on error, 0 if unknown. */
static int take_valued(int argc, char **argv, int *i, stereo_args *args)
{
    static const char *const names[] = {"-o", "--method", "--ndisp", "--window", "--min-disp",
                                        "--uniqueness", "--png", "--gt", "--gt-scale",
                                        "--lr-max-diff", "--gt-border"};
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
    case 0: args->output = value; break;
    case 1: bad = parse_method(value, &args->method_bp); break;
    case 2: bad = cli_parse_int(value, 1, 1 << 20, &args->sad.ndisp); break;
    case 3: bad = cli_parse_int(value, 1, 1 << 20, &args->sad.window); break;
    case 4: bad = cli_parse_int(value, -(1 << 20), 1 << 20, &args->sad.min_disp); break;
    case 5: bad = cli_parse_float(value, &args->sad.uniqueness); break;
    case 6: args->png = value; break;
    case 7: args->ground_truth = value; break;
    case 8: bad = cli_parse_float(value, &args->gt_scale); break;
    case 9: bad = cli_parse_float(value, &args->sad.lr_max_diff); break;
    case 10: bad = cli_parse_int(value, 0, 1 << 20, &args->gt_border); break;
    }
    if (bad && which != 1)
        cli_fail("%s '%s': not a valid number", arg, value);
    return bad ? -1 : 1;
}

static int take_flag(const char *arg, stereo_args *args)
{
    if (strcmp(arg, "--subpixel") == 0)
        args->sad.subpixel = 1;
    else if (strcmp(arg, "--lr-check") == 0)
        args->sad.lr_check = 1;
    else if (strcmp(arg, "--time") == 0)
        args->want_time = 1;
    else if (strcmp(arg, "--json") == 0)
        args->want_json = 1;
    else
        return 0;
    return 1;
}

static int parse_stereo_args(int argc, char **argv, stereo_args *args)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        int taken = cli_take_backend_option(argc, argv, &i, &args->backend);
        if (taken == 0)
            taken = cli_take_devices_option(argc, argv, &i, &args->devices);
        if (taken == 0)
            taken = take_valued(argc, argv, &i, args);
        if (taken == 0)
            taken = take_flag(argv[i], args);
        if (taken == 0)
            taken = cli_bp_take_option(argc, argv, &i, &args->bp);
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_fail("stereo: unknown option '%s'", argv[i]);
        if (positional == 0)
            args->left = argv[i];
        else if (positional == 1)
            args->right = argv[i];
        else
            return cli_fail("stereo: unexpected argument '%s'", argv[i]);
        positional++;
    }
    if (!args->left || !args->right)
        return cli_fail("stereo: needs LEFT and RIGHT images (see 'parvis help')");
    if (args->devices && !args->method_bp)
        return cli_fail("stereo: --devices applies to --method bp");
    if (!args->output && !args->png && !args->want_json && !args->want_time && !args->ground_truth)
        return cli_fail("stereo: nothing to do: give -o OUT.pfm, --png, --gt, --time or --json");
    return 0;
}

static void print_json(const stereo_args *args, pv_context *ctx, int devices,
                       const pv_image *disparity, const pv_timing *timing, double bad_fraction)
{
    size_t valid = 0, total = (size_t)disparity->width * (size_t)disparity->height;
    for (int y = 0; y < disparity->height; y++)
        for (int x = 0; x < disparity->width; x++)
            valid += isfinite(((const float *)disparity->data)[(ptrdiff_t)y * disparity->stride + x]);
    printf("{\"method\": \"%s\", \"width\": %d, \"height\": %d, \"min_disp\": %d, \"ndisp\": %d, "
           "\"window\": %d, \"backend\": \"%s\", \"device\": ",
           args->method_bp ? "bp" : "sad", disparity->width, disparity->height, args->sad.min_disp,
           args->sad.ndisp,
           args->sad.window, pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    if (devices > 0) /* a device group ran it */
        printf(", \"devices\": %d", devices);
    printf(", \"valid_fraction\": %.6f, \"kernel_ms\": %.4f, \"total_ms\": %.4f", (double)valid / (double)total,
           timing->kernel_ms, timing->total_ms);
    if (bad_fraction >= 0)
        printf(", \"bad1_fraction\": %.6f", bad_fraction);
    printf("}\n");
}

static int evaluate(const stereo_args *args, const pv_image *disparity, double *bad_fraction)
{
    pv_image truth;
    pv_status status = pv_image_read(args->ground_truth, PV_PIXEL_F32, &truth);
    if (status != PV_OK)
        return cli_fail_status(status, args->ground_truth);
    status = pv_disparity_error(disparity, &truth, args->gt_scale, 1.0f, args->gt_border,
                                bad_fraction);
    pv_image_free(&truth);
    return status == PV_OK ? 0 : cli_fail_status(status, "ground-truth comparison");
}

static int write_outputs(const stereo_args *args, const pv_image *disparity)
{
    if (args->output) {
        pv_status status = pv_image_write(args->output, disparity);
        if (status != PV_OK)
            return cli_fail_status(status, args->output);
    }
    if (args->png)
        return cli_write_disparity_png(args->png, disparity, (float)args->sad.min_disp,
                                       (float)(args->sad.min_disp + args->sad.ndisp - 1));
    return 0;
}

/* group: --devices; its member 0 is ctx.  Timing: the group's whole call. */
static int run_stereo(const stereo_args *args, pv_context *ctx, pv_device_group *group,
                      const pv_image *left, const pv_image *right)
{
    pv_image disparity;
    pv_status status = pv_image_alloc(&disparity, left->width, left->height, PV_PIXEL_F32);
    if (status != PV_OK)
        return cli_fail_status(status, "disparity map");
    if (group)
        status = cli_bp_run_group(group, left, right, &args->sad, &args->bp, &disparity);
    else if (args->method_bp)
        status = cli_bp_run(ctx, left, right, &args->sad, &args->bp, &disparity);
    else
        status = pv_stereo_sad(ctx, left, right, &args->sad, &disparity);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "stereo");
    pv_timing timing = {0, 0, 0, 0};
    if (group)
        pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &timing);
    else
        pv_context_last_timing(ctx, &timing);
    double bad_fraction = -1.0;
    if (rc == 0 && args->ground_truth)
        rc = evaluate(args, &disparity, &bad_fraction);
    if (rc == 0)
        rc = write_outputs(args, &disparity);
    if (rc == 0 && args->want_time && !group)
        printf("stereo %s: %.3f ms (kernel %.3f ms) on %s\n",
               args->method_bp ? "bp" : "sad", timing.total_ms, timing.kernel_ms,
               pv_context_device_name(ctx));
    if (rc == 0 && args->want_time && group) {
        printf("stereo bp: %.3f ms (kernel %.3f ms summed over devices) on ", timing.total_ms,
               timing.kernel_ms);
        cli_print_group_split(stdout, group);
    }
    if (rc == 0 && args->ground_truth && !args->want_json)
        printf("bad > 1 px: %.2f%% of known pixels\n", 100.0 * bad_fraction);
    if (rc == 0 && args->want_json)
        print_json(args, ctx, group ? pv_device_group_size(group) : 0, &disparity, &timing,
                   bad_fraction);
    pv_image_free(&disparity);
    return rc;
}

int cli_stereo(int argc, char **argv)
{
    stereo_args args;
    memset(&args, 0, sizeof args);
    pv_sad_params_default(&args.sad);
    pv_bp_params_default(&args.bp);
    args.gt_scale = 1.0f;
    cli_backend_options_default(&args.backend);
    if (parse_stereo_args(argc, argv, &args))
        return 1;
    pv_image left, right;
    pv_status status = pv_image_read(args.left, PV_PIXEL_U8, &left);
    if (status != PV_OK)
        return cli_fail_status(status, args.left);
    status = pv_image_read(args.right, PV_PIXEL_U8, &right);
    if (status != PV_OK) {
        pv_image_free(&left);
        return cli_fail_status(status, args.right);
    }
    int rc = 1;
    pv_device_group *group = args.devices ? cli_device_group(&args.backend, args.devices) : NULL;
    pv_context *ctx = group ? NULL : args.devices ? NULL : cli_context(&args.backend);
    if (group)
        rc = run_stereo(&args, pv_device_group_context(group, 0), group, &left, &right);
    else if (ctx)
        rc = run_stereo(&args, ctx, NULL, &left, &right);
    pv_device_group_destroy(group);
    pv_context_destroy(ctx);
    pv_image_free(&left);
    pv_image_free(&right);
    return rc;
}
