/* parvis stereo: disparity maps from a rectified pair. */
#include "cli.h"

#include <math.h>
#include <string.h>

enum { METHOD_SAD, METHOD_BP, METHOD_SGM };
#define SAD_ONLY (1u << METHOD_SAD)
#define BP_ONLY (1u << METHOD_BP)
#define SGM_ONLY (1u << METHOD_SGM)

typedef struct stereo_args {
    const char *files[2];
    const char *output, *png, *ground_truth;
    int png_map; /* --png-map: CLI_DISPARITY_MAP_TURBO or _GRAY */
    const char *confidence; /* --confidence FILE.pfm (sgm) */
    float gt_scale;
    float bad_thresh; /* --bad-thresh: an error above this many pixels is bad */
    int gt_invalid;   /* --gt-invalid: 0 counts invalid pixels as bad, 1 skips them */
    int gt_border;    /* pixels left out on each side when scoring */
    int want_time, want_json, verbose;
    pv_sad_params sad;
    int method;       /* METHOD_SAD or METHOD_BP */
    pv_bp_params bp;  /* its options (cli_stereo_bp.c) */
    cli_sgm_args sgm; /* its options (cli_stereo_sgm.c) */
    const char *devices; /* --devices all|LIST (bp only), or NULL: one context */
    const char *batch;   /* --batch LIST (sad, sgm), or NULL: the pair LEFT RIGHT */
    int positional_count;
    cli_backend_options backend;
} stereo_args;

static const char *const method_names[] = {"sad", "bp", "sgm", NULL};

static const char summary[] =
    "Disparity map of a rectified pair (PGM/PPM/PNG/PFM; colour is converted to grey).\n"
    "sad: block matching, winner-take-all; bp: hierarchical belief propagation;\n"
    "sgm: semi-global matching of census costs (docs/stereo.md compares them).";

static const char conventions[] =
    "  The left image is the reference: left column x matches right column x - d,\n"
    "  d in [min-disp, min-disp + ndisp), in pixels (d >= 0 for a usual pair).\n"
    "  -o writes a PFM (float32, Middlebury's layout); a pixel without a valid match\n"
    "  (SAD's or SGM's left-right or uniqueness rejection, or no candidate inside the\n"
    "  right image) is +INFINITY.  BP labels every pixel.  --png colours the valid\n"
    "  disparities from min-disp (dark blue) to min-disp + ndisp - 1 (dark red) on a\n"
    "  turbo-like map (RGB); --png-map gray writes grey 0..255 instead; invalid pixels\n"
    "  are black in both.\n"
    "  --gt GT: Middlebury ground truth (gt value / gt-scale = disparity, 0 = unknown);\n"
    "  prints the share of known pixels whose error exceeds --bad-thresh px, with\n"
    "  --gt-invalid bad (invalid pixels count as errors) or skip (left out of the\n"
    "  count; the share of invalid known pixels is printed beside it).\n"
    "  BP: when --disc-max is not given it is max(1.7, ndisp / 7.5).  Memory: BP needs\n"
    "  about 12.7 x (width/2 + 2) x (height + 2) x ndisp x 4 bytes; above half the\n"
    "  available memory (host RAM, or the OpenCL device's; PARVIS_MEMORY_LIMIT=bytes\n"
    "  lowers it) the image is tiled, and when even small tiles do not fit the command\n"
    "  stops before allocating (--verbose prints the figures).\n"
    "  SGM: census window, P1/P2 penalties and 4 or 8 paths as in stereo.h; its left-\n"
    "  right check and sub-pixel refinement are on unless --no-lr-check/--no-subpixel;\n"
    "  --uniqueness U keeps a winner whose sum is at most U times every other (1 = off),\n"
    "  --lr-max-diff is a whole number.  --confidence writes the uniqueness margin\n"
    "  1 - S(best)/S(second) per pixel (0..1, 0 where invalid) as a PFM.  --verbose\n"
    "  prints the memory one run needs; above --memory-budget the call works in parts.\n"
    "  SAD or SGM with --batch LIST: a text file of pairs, one a line, \"LEFT RIGHT OUT.pfm\"\n"
    "  (names without spaces, relative to the current folder; blank lines and lines\n"
    "  starting with # are skipped), all of one size; each pair's disparity goes to its\n"
    "  OUT.pfm.  The pairs go through one plan 8 at a time (SGM on OpenCL: the transfers\n"
    "  of one pair overlap the kernels of the next, docs/sgm.md; SAD: every pair queued,\n"
    "  one wait, docs/stereo.md); a line on stderr after\n"
    "  each 8 says how far the list has come; --time/--json report the pairs per second\n"
    "  of the library calls.  No LEFT RIGHT, -o, --png, --gt, --confidence or --devices\n"
    "  with it.\n"
    "  SGM with --devices: one band of rows per device, each read with 64 rows of\n"
    "  context above and below; near the cuts a few pixels differ from one device's\n"
    "  result (include/parvis/multi.h).\n"
    "  Options that do not apply to the chosen --method are errors.\n";

/* --batch: the list names every input and output. */
static int check_batch_args(const cli_command *c, const stereo_args *args)
{
    static const char *const single[] = {"-o", "--png", "--png-map", "--gt", "--confidence",
                                         "--devices"};
    if (args->positional_count != 0)
        return cli_fail("stereo --batch: the list names the pairs; give no LEFT RIGHT");
    for (int k = 0; k < (int)(sizeof single / sizeof single[0]); k++)
        if (cli_given(c, single[k]))
            return cli_fail("stereo --batch: %s applies to one pair; the list names each "
                            "pair's output", single[k]);
    return CLI_PARSED;
}

/* The declared default of parameter `param` of operation `op`: 0 when
 * both are declared, -1 when not (sgm has no window, bp no uniqueness). */
static int declared_default(const char *op, const char *param, double *value)
{
    int op_number = 0, param_number = 0;
    pv_param_info info;
    if (pv_op_find(op, &op_number) != PV_OK ||
        pv_op_find_param(op_number, param, &param_number) != PV_OK ||
        pv_op_param(op_number, param_number, &info) != PV_OK)
        return -1;
    *value = info.default_value;
    return 0;
}

/* `help` followed by the declared default of the shared option `param` for
 * each method that has it ("; default: sad 64, bp 16, sgm 64"), read from
 * the declarations so that the text cannot drift from them. */
static const char *per_method_help(char *out, size_t size, const char *help, const char *param)
{
    int used = snprintf(out, size, "%s; default:", help);
    const char *separator = "";
    for (int m = 0; method_names[m] && used > 0 && (size_t)used < size; m++) {
        double value = 0;
        if (declared_default(method_names[m], param, &value) != 0)
            continue;
        used += snprintf(out + used, size - (size_t)used, "%s %s %g", separator,
                         method_names[m], value);
        separator = ",";
    }
    return out;
}

/* Options shared by several methods live in one carrier structure (args->sad);
 * one not given takes the chosen method's declared default. */
static void shared_defaults(const cli_command *c, stereo_args *args)
{
    const char *op = method_names[args->method];
    double value = 0;
    if (!cli_given(c, "--ndisp") && declared_default(op, "ndisp", &value) == 0)
        args->sad.ndisp = (int)value;
    if (!cli_given(c, "--min-disp") && declared_default(op, "min_disp", &value) == 0)
        args->sad.min_disp = (int)value;
}

/* The defaults, then the command line. */
static int parse_stereo_args(int argc, char **argv, stereo_args *args)
{
    static char ndisp_help[256], uniqueness_help[320];
    memset(args, 0, sizeof *args);
    pv_sad_params_default(&args->sad);
    pv_bp_params_default(&args->bp);
    pv_sgm_params_default(&args->sgm.params);
    args->gt_scale = 1.0f;
    args->bad_thresh = 1.0f;
    cli_backend_options_default(&args->backend);
    const cli_option own[] = {
        {.name = "-o", .kind = CLI_TEXT, .field = &args->output, .value_name = "OUT.pfm",
         .help = "disparity map (PFM, float32)"},
        {.name = "--method", .kind = CLI_CHOICE, .field = &args->method, .choices = "sad|bp|sgm",
         .value_name = "sad|bp|sgm", .help = "matching method"},
        {.name = "--ndisp", .kind = CLI_INT, .field = &args->sad.ndisp, .min = 1,
         .max = 1 << 20, .value_name = "N", .no_default = 1,
         .help = per_method_help(ndisp_help, sizeof ndisp_help,
                                 "number of disparities (at most the image width; bp: at "
                                 "least 2; sgm: at most 1024)", "ndisp")},
        {.name = "--min-disp", .kind = CLI_INT, .field = &args->sad.min_disp, .min = -(1 << 20),
         .max = 1 << 20, .value_name = "M", .help = "smallest disparity"},
        /* declared by the library (lib/stereo/stereo_params.c); --lr-check and
         * --lr-max-diff carry over to sgm (cli_sgm_finish) */
        cli_declared("sad", "window", &args->sad, sizeof args->sad, SAD_ONLY),
        cli_declared("sad", "subpixel", &args->sad, sizeof args->sad, SAD_ONLY),
        cli_declared("sad", "lr_check", &args->sad, sizeof args->sad, SAD_ONLY | SGM_ONLY),
        cli_declared("sad", "lr_max_diff", &args->sad, sizeof args->sad, SAD_ONLY | SGM_ONLY),
        /* not the declared form: one option for two parameters of opposite senses
         * (sad's margin, 0 = off; sgm's ratio, 1 = off) */
        {.name = "--uniqueness", .kind = CLI_FLOAT, .field = &args->sad.uniqueness, .min = 0,
         .max = 1e6, .value_name = "U", .methods = SAD_ONLY | SGM_ONLY, .no_default = 1,
         .help = per_method_help(uniqueness_help, sizeof uniqueness_help,
                                 "sad: reject a winner another candidate beats within a "
                                 "factor (1 + U), 0 = off; sgm: keep a winner at most U times "
                                 "every other sum, in (0, 1], 1 = off", "uniqueness")},
        {.name = "--confidence", .kind = CLI_TEXT, .field = &args->confidence,
         .value_name = "CONF.pfm", .methods = SGM_ONLY,
         .help = "per-pixel confidence, 1 - S(best)/S(second) in 0..1 (PFM, float32)"},
        {.name = "--png", .kind = CLI_TEXT, .field = &args->png, .value_name = "VIS.png",
         .help = "picture of the disparities (colour map, invalid black)"},
        {.name = "--png-map", .kind = CLI_CHOICE, .field = &args->png_map,
         .choices = "turbo|gray", .value_name = "turbo|gray",
         .help = "--png's map: turbo colours or grey 0..255"},
        {.name = "--gt", .kind = CLI_TEXT, .field = &args->ground_truth, .value_name = "GT",
         .help = "score against a ground-truth disparity image"},
        {.name = "--gt-scale", .kind = CLI_FLOAT, .field = &args->gt_scale, .min = 0,
         .open_min = 1, .max = 1e6, .value_name = "S", .help = "ground truth = value / S"},
        {.name = "--gt-border", .kind = CLI_INT, .field = &args->gt_border, .min = 0,
         .max = 1 << 20, .value_name = "B", .help = "pixels left out on each side when scoring"},
        {.name = "--bad-thresh", .kind = CLI_FLOAT, .field = &args->bad_thresh, .min = 0,
         .open_min = 1, .max = 1e6, .value_name = "T",
         .help = "error (px) above which a pixel is bad (Middlebury: 0.5, 1, 2, 4)"},
        {.name = "--gt-invalid", .kind = CLI_CHOICE, .field = &args->gt_invalid,
         .choices = "bad|skip", .value_name = "bad|skip",
         .help = "invalid (INFINITY) pixels count as bad, or are left out"},
        CLI_TIME_ENTRY(&args->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &args->want_json,
         .help = "print one JSON line instead of text"},
        {.name = "--verbose", .kind = CLI_FLAG, .field = &args->verbose,
         .help = "say what the inputs are and (bp) the memory a run needs"},
        CLI_BACKEND_ENTRIES(&args->backend),
        CLI_PROGRESS_ENTRY(&args->backend.progress),
        CLI_DEVICES_ENTRY(&args->devices, BP_ONLY | SGM_ONLY),
        {.name = "--batch", .kind = CLI_TEXT, .field = &args->batch, .value_name = "LIST",
         .methods = SAD_ONLY | SGM_ONLY,
         .help = "a list of pairs, \"LEFT RIGHT OUT.pfm\" a line, each matched and written "
                 "(instead of LEFT RIGHT)"},
    };
    /* sized from the three tables, so that none can overwrite another */
    cli_option table[CLI_COUNT(own) + CLI_BP_OPTION_COUNT + CLI_SGM_OPTION_COUNT];
    memcpy(table, own, sizeof own);
    cli_bp_options(&args->bp, BP_ONLY, &table[CLI_COUNT(own)]);
    cli_sgm_options(&args->sgm, SGM_ONLY, &table[CLI_COUNT(own) + CLI_BP_OPTION_COUNT]);
    cli_command c = {.name = "stereo",
                     .synopsis = "LEFT RIGHT [options]  |  --method sad|sgm --batch LIST [options]",
                     .summary = summary, .conventions = conventions, .options = table,
                     .option_count = CLI_COUNT(table), .positional = args->files,
                     .min_positional = 0, .max_positional = 2,
                     .positional_count = &args->positional_count, .method_names = method_names,
                     .method = &args->method};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    shared_defaults(&c, args);
    if (args->method == METHOD_SAD && args->sad.window % 2 == 0)
        return cli_fail("stereo --window %d: must be odd", args->sad.window);
    static const char *const scoring[] = {"--gt-scale", "--gt-border", "--bad-thresh",
                                          "--gt-invalid"};
    for (int k = 0; k < 4; k++)
        if (!args->ground_truth && cli_given(&c, scoring[k]))
            return cli_fail("stereo: %s applies with --gt", scoring[k]);
    if (args->method == METHOD_BP)
        cli_bp_derive_defaults(&c, args->sad.ndisp, &args->bp);
    if (args->method == METHOD_SGM && cli_sgm_finish(&c, &args->sad, &args->sgm))
        return CLI_ERROR;
    if (args->batch)
        return check_batch_args(&c, args);
    if (args->positional_count != 2)
        return cli_fail("stereo: give LEFT RIGHT (or, with --method sad or sgm, --batch LIST)");
    if (args->confidence && args->devices)
        return cli_fail("stereo: --confidence does not go with --devices (the bands' run "
                        "gives disparities only)");
    if (!args->output && !args->png && !args->want_json && !args->want_time &&
        !args->ground_truth && !args->confidence)
        return cli_fail("stereo: nothing to do: give -o OUT.pfm, --png, --gt, --confidence, "
                        "--time or --json");
    return CLI_PARSED;
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
           method_names[args->method], disparity->width, disparity->height, args->sad.min_disp,
           args->sad.ndisp, args->sad.window, pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    if (devices > 0) /* a device group ran it */
        printf(", \"devices\": %d", devices);
    if (args->method == METHOD_BP)
        printf(", \"disc_max\": %g", (double)args->bp.disc_max);
    if (args->method == METHOD_SGM) {
        const pv_sgm_params *sgm = &args->sgm.params;
        printf(", \"census\": \"%dx%d\", \"census_symmetric\": %s, \"p1\": %d, \"p2\": %d, "
               "\"p2_adaptive\": %s, \"paths\": %d, \"uniqueness\": %g, \"lr_check\": %s, "
               "\"lr_max_diff\": %d, \"subpixel\": %s, \"median\": %s",
               sgm->census_width, sgm->census_height, sgm->census_symmetric ? "true" : "false",
               sgm->p1, sgm->p2, sgm->p2_adaptive ? "true" : "false", sgm->paths,
               (double)sgm->uniqueness, sgm->lr_check ? "true" : "false", sgm->lr_max_diff,
               sgm->subpixel ? "true" : "false", sgm->median ? "true" : "false");
    }
    printf(", \"valid_fraction\": %.6f, \"kernel_ms\": %.4f, \"total_ms\": %.4f", (double)valid / (double)total,
           timing->kernel_ms, timing->total_ms);
    if (bad_fraction >= 0) {
        printf(", \"bad_thresh\": %g, \"gt_invalid\": \"%s\", \"bad_fraction\": %.6f",
               (double)args->bad_thresh, args->gt_invalid ? "skip" : "bad", bad_fraction);
        if (args->bad_thresh == 1.0f) /* the name earlier versions printed */
            printf(", \"bad1_fraction\": %.6f", bad_fraction);
    }
    printf("}\n");
}

/* --gt-invalid skip: the truth made unknown (0) where the disparity is
 * invalid, so those pixels leave the count; *skipped: how many known
 * pixels that removed. */
static void forget_invalid(const pv_image *disparity, pv_image *truth, size_t *skipped)
{
    *skipped = 0;
    for (int y = 0; y < truth->height; y++)
        for (int x = 0; x < truth->width; x++) {
            float d = ((const float *)disparity->data)[(ptrdiff_t)y * disparity->stride + x];
            float *t = (float *)truth->data + (ptrdiff_t)y * truth->stride + x;
            if (!isfinite(d) && *t > 0.0f) {
                *t = 0.0f;
                ++*skipped;
            }
        }
}

static int evaluate(const stereo_args *args, const pv_image *disparity, double *bad_fraction,
                    size_t *skipped)
{
    pv_image truth;
    pv_status status = pv_image_read(args->ground_truth, PV_PIXEL_F32, &truth);
    if (status != PV_OK)
        return cli_fail_status(status, args->ground_truth);
    *skipped = 0;
    if (args->gt_invalid && truth.width == disparity->width && truth.height == disparity->height)
        forget_invalid(disparity, &truth, skipped);
    status = pv_disparity_error(disparity, &truth, args->gt_scale, args->bad_thresh,
                                args->gt_border, bad_fraction);
    pv_image_free(&truth);
    return status == PV_OK ? 0 : cli_fail_status(status, "ground-truth comparison");
}

static int write_outputs(const stereo_args *args, const pv_image *disparity,
                         const pv_image *confidence)
{
    if (args->confidence) {
        const char *target = cli_output_path(args->confidence);
        if (!target)
            return 1;
        pv_status status = pv_image_write(target, confidence);
        if (status != PV_OK)
            return cli_fail_status(status, args->confidence);
    }
    if (args->output) {
        const char *target = cli_output_path(args->output);
        if (!target)
            return 1;
        pv_status status = pv_image_write(target, disparity);
        if (status != PV_OK)
            return cli_fail_status(status, args->output);
    }
    if (args->png)
        return cli_write_disparity_png(args->png, disparity, (float)args->sad.min_disp,
                                       (float)(args->sad.min_disp + args->sad.ndisp - 1),
                                       args->png_map);
    return 0;
}

/* --verbose, bp: what the run needs against what there is; a run that
 * cannot fit stops here, before anything large is allocated. */
static int report_bp_memory(const stereo_args *args, pv_context *ctx, const pv_image *left)
{
    pv_bp_params bp = args->bp;
    bp.min_disp = args->sad.min_disp;
    bp.ndisp = args->sad.ndisp;
    pv_bp_memory_info info;
    pv_status status = pv_bp_memory_plan(ctx, left->width, left->height, &bp, &info);
    if (status != PV_OK)
        return cli_fail_status(status, "stereo bp");
    if (args->verbose)
        fprintf(stderr,
                "parvis: bp: disc-max %g; needs %.1f MiB for the whole image, %.1f MiB "
                "available (budget per tile %.1f MiB): %dx%d tile%s of at most %.1f MiB\n",
                (double)bp.disc_max,
                (double)info.whole_bytes / 1048576.0, (double)info.available_bytes / 1048576.0,
                (double)info.budget_bytes / 1048576.0, info.tiles_x, info.tiles_y,
                info.tiles_x * info.tiles_y == 1 ? "" : "s", (double)info.tile_bytes / 1048576.0);
    return 0;
}

static void print_score(const stereo_args *args, double bad_fraction, size_t skipped,
                        const pv_image *disparity)
{
    printf("bad > %g px: %.2f%% of known pixels", (double)args->bad_thresh, 100.0 * bad_fraction);
    if (args->gt_invalid)
        printf(" (invalid pixels left out: %zu, %.2f%% of the image)", skipped,
               100.0 * (double)skipped / ((double)disparity->width * disparity->height));
    else
        printf(" (invalid pixels counted as bad)");
    printf("\n");
}

/* group: --devices; its member 0 is ctx.  Timing: the group's whole call. */
static int run_stereo(const stereo_args *args, pv_context *ctx, pv_device_group *group,
                      const pv_image *left, const pv_image *right)
{
    if (args->method == METHOD_BP && report_bp_memory(args, ctx, left))
        return 1;
    if (args->method == METHOD_SGM &&
        cli_sgm_report_memory(&args->sad, &args->sgm.params, left->width, left->height,
                              args->verbose))
        return 1;
    pv_image disparity, confidence = {0};
    pv_status status = pv_image_alloc(&disparity, left->width, left->height, PV_PIXEL_F32);
    if (status == PV_OK && args->confidence) {
        status = pv_image_alloc(&confidence, left->width, left->height, PV_PIXEL_F32);
        if (status != PV_OK)
            pv_image_free(&disparity);
    }
    if (status != PV_OK)
        return cli_fail_status(status, "disparity map");
    if (group && args->method == METHOD_SGM)
        status = cli_sgm_run_group(group, left, right, &args->sad, &args->sgm.params, &disparity);
    else if (group)
        status = cli_bp_run_group(group, left, right, &args->sad, &args->bp, &disparity);
    else if (args->method == METHOD_BP)
        status = cli_bp_run(ctx, left, right, &args->sad, &args->bp, &disparity);
    else if (args->method == METHOD_SGM)
        status = cli_sgm_run(ctx, left, right, &args->sad, &args->sgm.params, &disparity,
                             args->confidence ? &confidence : NULL);
    else
        status = pv_stereo_sad(ctx, left, right, &args->sad, &disparity);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "stereo");
    pv_timing timing = {0, 0, 0, 0};
    if (group)
        pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &timing);
    else
        pv_context_last_timing(ctx, &timing);
    double bad_fraction = -1.0;
    size_t skipped = 0;
    if (rc == 0 && args->ground_truth)
        rc = evaluate(args, &disparity, &bad_fraction, &skipped);
    if (rc == 0)
        rc = write_outputs(args, &disparity, &confidence);
    if (rc == 0 && args->want_time && !group && !args->want_json)
        printf("stereo %s: %.3f ms (kernel %.3f ms) on %s\n", method_names[args->method],
               timing.total_ms, timing.kernel_ms, pv_context_device_name(ctx));
    if (rc == 0 && args->want_time && group && !args->want_json) {
        printf("stereo %s: %.3f ms (kernel %.3f ms summed over devices) on ",
               method_names[args->method], timing.total_ms, timing.kernel_ms);
        cli_print_group_split(stdout, group);
    }
    if (rc == 0 && args->ground_truth && !args->want_json)
        print_score(args, bad_fraction, skipped, &disparity);
    if (rc == 0 && args->want_json)
        print_json(args, ctx, group ? pv_device_group_size(group) : 0, &disparity, &timing,
                   bad_fraction);
    pv_image_free(&disparity);
    if (args->confidence)
        pv_image_free(&confidence);
    return rc;
}

int cli_stereo(int argc, char **argv)
{
    stereo_args args;
    int parsed = parse_stereo_args(argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    if (args.batch) {
        pv_context *ctx = cli_context(&args.backend);
        cli_sgm_batch_run run = {.list = args.batch, .params = args.sgm.params,
                                 .sad = args.method == METHOD_SAD ? &args.sad : NULL,
                                 .verbose = args.verbose, .want_time = args.want_time,
                                 .want_json = args.want_json};
        run.params.min_disp = args.sad.min_disp;
        run.params.ndisp = args.sad.ndisp;
        int rc = ctx ? cli_sgm_batch(ctx, &run) : 1;
        pv_context_destroy(ctx);
        return rc;
    }
    pv_image pair[2]; /* left, right */
    if (cli_read_image_pair(args.files, PV_PIXEL_U8, args.verbose, pair))
        return 1;
    int rc = 1;
    pv_device_group *group = args.devices ? cli_device_group(&args.backend, args.devices) : NULL;
    pv_context *ctx = group ? NULL : args.devices ? NULL : cli_context(&args.backend);
    if (group)
        rc = run_stereo(&args, pv_device_group_context(group, 0), group, &pair[0], &pair[1]);
    else if (ctx)
        rc = run_stereo(&args, ctx, NULL, &pair[0], &pair[1]);
    pv_device_group_destroy(group);
    pv_context_destroy(ctx);
    cli_free_image_pair(pair);
    return rc;
}
