/* parvis flow (alias flow3d): 3D motion estimation between two volumes. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Most frames one command reads. */
#define FLOW_MAX_FRAMES 1024

typedef struct flow_args {
    const char *fixed, *moving, *output, *warped;
    const char *frames[FLOW_MAX_FRAMES]; /* every volume given; fixed, moving the first two */
    int frame_count;
    const char *devices;  /* --devices all|LIST, or NULL: one context */
    int size[3];          /* --size: raw float32 volumes when size[0] > 0 */
    int want_time, want_json;
    pv_flow_params params;
    cli_backend_options backend;
} flow_args;

static int parse_size(const char *text, int size[3])
{
    char *end;
    for (int a = 0; a < 3; a++) {
        long v = strtol(text, &end, 10);
        if (end == text || v < 1 || v > (1 << 20) || (a < 2 && *end != 'x') || (a == 2 && *end))
            return 1;
        size[a] = (int)v;
        text = end + 1;
    }
    return 0;
}

static int take_number(const char *arg, const char *value, flow_args *args)
{
    pv_flow_params *p = &args->params;
    static const char *const floats[] = {"--alpha", "--beta", "--rho", "--tolerance", "--spacing"};
    float *const float_slots[] = {&p->alpha, &p->beta, &p->rho, &p->tolerance, &p->spacing};
    for (int i = 0; i < 5; i++)
        if (strcmp(arg, floats[i]) == 0)
            return cli_parse_float(value, float_slots[i]);
    static const char *const ints[] = {"--kernel-size", "--warps", "--iterations", "--levels",
                                       "--check-every"};
    int *const int_slots[] = {&p->kernel_size, &p->warps, &p->iterations, &p->levels,
                              &p->check_every};
    for (int i = 0; i < 5; i++)
        if (strcmp(arg, ints[i]) == 0)
            return cli_parse_int(value, 0, 1 << 24, int_slots[i]);
    return -1;
}

/* Options with a value: 1 consumed, -1 error, 0 not ours. */
static int take_valued(int argc, char **argv, int *i, flow_args *args)
{
    const char *arg = argv[*i];
    static const char *const names[] = {"-o", "--warped", "--size", "--alpha", "--beta", "--rho",
                                        "--tolerance", "--spacing", "--kernel-size", "--warps",
                                        "--iterations", "--levels", "--check-every"};
    size_t which = 0, count = sizeof names / sizeof names[0];
    while (which < count && strcmp(arg, names[which]) != 0)
        which++;
    if (which == count)
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    if (which == 0)
        args->output = value;
    else if (which == 1)
        args->warped = value;
    else if (which == 2) {
        if (parse_size(value, args->size))
            return cli_fail("--size '%s': expected NXxNYxNZ (x fastest)", value), -1;
    } else if (take_number(arg, value, args) != 0)
        return cli_fail("%s '%s': not a valid number", arg, value), -1;
    return 1;
}

static int take_flag(const char *arg, flow_args *args)
{
    if (strcmp(arg, "--time") == 0)
        args->want_time = 1;
    else if (strcmp(arg, "--json") == 0)
        args->want_json = 1;
    else if (strcmp(arg, "--forward") == 0)
        args->params.gradient = PV_GRADIENT_FORWARD;
    else
        return 0;
    return 1;
}

static int parse_flow_args(int argc, char **argv, flow_args *args)
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
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_fail("flow: unknown option '%s'", argv[i]);
        if (positional >= FLOW_MAX_FRAMES)
            return cli_fail("flow: more than %d volumes", FLOW_MAX_FRAMES);
        args->frames[positional++] = argv[i];
    }
    args->frame_count = positional;
    args->fixed = args->frames[0];
    args->moving = args->frames[1];
    if (positional < 2)
        return cli_fail("flow: needs FIXED and MOVING volumes (see 'parvis help')");
    if (positional > 2 && args->warped)
        return cli_fail("flow: --warped takes one FIXED MOVING pair");
    if (!args->output && !args->warped && !args->want_json && !args->want_time)
        return cli_fail("flow: nothing to do: give -o FLOW, --warped OUT, --time or --json");
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_nifti_name(const char *path)
{
    return ends_with(path, ".nii") || ends_with(path, ".nii.gz") || ends_with(path, ".hdr");
}

static int read_volume(const flow_args *args, const char *path, pv_volume *volume)
{
    pv_status status = args->size[0] > 0
                           ? pv_volume_read_raw(path, args->size[0], args->size[1], args->size[2],
                                                volume)
                           : pv_volume_read_nifti(path, volume);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* NIfTI vector field for .nii names; otherwise three raw files
 * PATH_u.raw, PATH_v.raw, PATH_w.raw. */
static int write_flow(const char *path, const pv_flow_field *flow)
{
    if (is_nifti_name(path)) {
        pv_status status = pv_flow_write_nifti(path, flow);
        return status == PV_OK ? 0 : cli_fail_status(status, path);
    }
    const pv_volume *parts[3] = {&flow->u, &flow->v, &flow->w};
    static const char names[3] = {'u', 'v', 'w'};
    for (int c = 0; c < 3; c++) {
        char name[4096];
        snprintf(name, sizeof name, "%s_%c.raw", path, names[c]);
        pv_status status = pv_volume_write_raw(name, parts[c]);
        if (status != PV_OK)
            return cli_fail_status(status, name);
    }
    return 0;
}

static int write_warped(pv_context *ctx, const flow_args *args, const pv_volume *moving,
                        const pv_flow_field *flow)
{
    pv_volume warped;
    if (pv_volume_alloc(&warped, moving->nx, moving->ny, moving->nz) != PV_OK)
        return cli_fail("no memory for the warped volume");
    pv_status status = pv_flow_warp(ctx, moving, flow, &warped);
    if (status == PV_OK)
        status = is_nifti_name(args->warped) ? pv_volume_write_nifti(args->warped, &warped)
                                             : pv_volume_write_raw(args->warped, &warped);
    pv_volume_free(&warped);
    return status == PV_OK ? 0 : cli_fail_status(status, args->warped);
}

static void print_report(const flow_args *args, pv_context *ctx, const pv_volume *fixed,
                         const pv_timing *timing, const pv_flow_stats *stats)
{
    if (args->want_time && !args->want_json)
        printf("flow %dx%dx%d: %.3f ms (kernel %.3f ms) on %s; stages ms: pyramid %.3f, "
               "gradients %.3f, resample %.3f, tensor %.3f, jacobi %.3f (%d iterations)\n",
               fixed->nx, fixed->ny, fixed->nz, timing->total_ms, timing->kernel_ms,
               pv_context_device_name(ctx), stats->pyramid_ms, stats->gradient_ms,
               stats->resample_ms, stats->tensor_ms, stats->jacobi_ms, stats->iterations);
    if (!args->want_json)
        return;
    printf("{\"op\": \"flow3d\", \"nx\": %d, \"ny\": %d, \"nz\": %d, \"backend\": \"%s\", "
           "\"device\": ",
           fixed->nx, fixed->ny, fixed->nz, pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    printf(", \"alpha\": %g, \"beta\": %g, \"warps\": %d, \"iterations\": %d, \"levels\": %d, "
           "\"total_ms\": %.4f, \"kernel_ms\": %.4f, \"pyramid_ms\": %.4f, \"gradient_ms\": %.4f, "
           "\"resample_ms\": %.4f, \"tensor_ms\": %.4f, \"jacobi_ms\": %.4f, "
           "\"jacobi_iterations\": %d}\n",
           (double)args->params.alpha, (double)args->params.beta, args->params.warps,
           args->params.iterations, args->params.levels, timing->total_ms, timing->kernel_ms,
           stats->pyramid_ms, stats->gradient_ms, stats->resample_ms, stats->tensor_ms,
           stats->jacobi_ms, stats->iterations);
}

static int run_flow(const flow_args *args, pv_context *ctx, const pv_volume *fixed,
                    const pv_volume *moving)
{
    pv_flow_plan *plan = NULL;
    pv_status status = pv_flow_plan_create(ctx, fixed->nx, fixed->ny, fixed->nz, &args->params,
                                           &plan);
    if (status != PV_OK)
        return cli_fail_status(status, "flow");
    pv_flow_field flow;
    int rc = pv_flow_field_alloc(&flow, fixed->nx, fixed->ny, fixed->nz) == PV_OK
                 ? 0 : cli_fail("no memory for the flow");
    if (rc == 0) {
        status = pv_flow_plan_run(plan, fixed, moving, &flow);
        rc = status == PV_OK ? 0 : cli_fail_status(status, "flow");
    }
    pv_timing timing = {0, 0, 0, 0};
    pv_flow_stats stats;
    memset(&stats, 0, sizeof stats);
    pv_context_last_timing(ctx, &timing);
    pv_flow_plan_stats(plan, &stats);
    if (rc == 0 && args->output)
        rc = write_flow(args->output, &flow);
    if (rc == 0 && args->warped)
        rc = write_warped(ctx, args, moving, &flow);
    if (rc == 0)
        print_report(args, ctx, fixed, &timing, &stats);
    pv_flow_field_free(&flow);
    pv_flow_plan_destroy(plan);
    return rc;
}

/* ========================================================== frame sequences */

/* OUT with "_<i>" before a NIfTI extension (or at the end of a raw prefix),
 * when the sequence has several pairs. */
static void pair_path(const char *output, int pair, int pairs, char *path, size_t size)
{
    if (pairs == 1) {
        snprintf(path, size, "%s", output);
        return;
    }
    const char *ext = ends_with(output, ".nii.gz") ? ".nii.gz"
                      : ends_with(output, ".nii")  ? ".nii"
                      : ends_with(output, ".hdr")  ? ".hdr"
                                                   : "";
    int stem = (int)(strlen(output) - strlen(ext));
    snprintf(path, size, "%.*s_%d%s", stem, output, pair, ext);
}

static void free_frames(pv_volume *frames, int count)
{
    for (int i = 0; frames && i < count; i++)
        pv_volume_free(&frames[i]);
    free(frames);
}

static void free_flows(pv_flow_field *flows, int count)
{
    for (int i = 0; flows && i < count; i++)
        pv_flow_field_free(&flows[i]);
    free(flows);
}

static pv_volume *read_frames(const flow_args *args)
{
    pv_volume *frames = calloc((size_t)args->frame_count, sizeof *frames);
    if (!frames) {
        cli_fail("no memory for %d volumes", args->frame_count);
        return NULL;
    }
    for (int i = 0; i < args->frame_count; i++)
        if (read_volume(args, args->frames[i], &frames[i])) {
            free_frames(frames, i);
            return NULL;
        }
    return frames;
}

static pv_flow_field *alloc_flows(const pv_volume *like, int count)
{
    pv_flow_field *flows = calloc((size_t)count, sizeof *flows);
    for (int i = 0; flows && i < count; i++)
        if (pv_flow_field_alloc(&flows[i], like->nx, like->ny, like->nz) != PV_OK) {
            free_flows(flows, i);
            flows = NULL;
        }
    if (!flows)
        cli_fail("no memory for %d flow fields", count);
    return flows;
}

/* Without --devices: one plan on one context, the pairs in turn. */
static pv_status flows_in_turn(const flow_args *args, pv_context *ctx, const pv_volume *frames,
                               pv_flow_field *flows, double *total_ms)
{
    double start = cli_now_ms();
    pv_flow_plan *plan = NULL;
    pv_status status = pv_flow_plan_create(ctx, frames[0].nx, frames[0].ny, frames[0].nz,
                                           &args->params, &plan);
    for (int i = 0; status == PV_OK && i < args->frame_count - 1; i++)
        status = pv_flow_plan_run(plan, &frames[i], &frames[i + 1], &flows[i]);
    *total_ms = cli_now_ms() - start;
    pv_flow_plan_destroy(plan);
    return status;
}

static pv_status flows_on_group(const flow_args *args, pv_device_group *group,
                                const pv_volume *frames, pv_flow_field *flows, double *total_ms)
{
    pv_status status = pv_flow3d_sequence(group, frames, args->frame_count, &args->params, flows);
    pv_timing whole = {0, 0, 0, 0};
    pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &whole);
    *total_ms = whole.total_ms;
    return status;
}

static int write_sequence(const flow_args *args, const pv_flow_field *flows, int pairs)
{
    for (int i = 0; args->output && i < pairs; i++) {
        char path[4096];
        pair_path(args->output, i, pairs, path, sizeof path);
        if (write_flow(path, &flows[i]))
            return 1;
    }
    return 0;
}

static void report_sequence(const flow_args *args, const pv_volume *frames,
                            pv_device_group *group, double total_ms)
{
    int pairs = args->frame_count - 1, devices = group ? pv_device_group_size(group) : 1;
    if (args->want_time && !args->want_json) {
        printf("flow sequence %dx%dx%d, %d pairs: %.3f ms; ", frames[0].nx, frames[0].ny,
               frames[0].nz, pairs, total_ms);
        if (group)
            cli_print_group_split(stdout, group);
        else
            printf("one context\n");
    }
    if (args->want_json)
        printf("{\"op\": \"flow3d_sequence\", \"nx\": %d, \"ny\": %d, \"nz\": %d, "
               "\"pairs\": %d, \"devices\": %d, \"total_ms\": %.4f}\n",
               frames[0].nx, frames[0].ny, frames[0].nz, pairs, devices, total_ms);
}

static int flow_sequence(const flow_args *args)
{
    int pairs = args->frame_count - 1;
    pv_volume *frames = read_frames(args);
    pv_flow_field *flows = frames ? alloc_flows(&frames[0], pairs) : NULL;
    pv_device_group *group =
        flows && args->devices ? cli_device_group(&args->backend, args->devices) : NULL;
    pv_context *ctx = flows && !args->devices ? cli_context(&args->backend) : NULL;
    int rc = !group && !ctx;
    double total_ms = 0.0;
    if (rc == 0) {
        pv_status status = group ? flows_on_group(args, group, frames, flows, &total_ms)
                                 : flows_in_turn(args, ctx, frames, flows, &total_ms);
        rc = status == PV_OK ? 0 : cli_fail_status(status, "flow");
    }
    if (rc == 0)
        rc = write_sequence(args, flows, pairs);
    if (rc == 0)
        report_sequence(args, frames, group, total_ms);
    pv_device_group_destroy(group);
    pv_context_destroy(ctx);
    free_flows(flows, pairs);
    free_frames(frames, args->frame_count);
    return rc;
}

int cli_flow(int argc, char **argv)
{
    flow_args args;
    memset(&args, 0, sizeof args);
    pv_flow_params_default(&args.params);
    cli_backend_options_default(&args.backend);
    if (parse_flow_args(argc, argv, &args))
        return 1;
    if (args.frame_count > 2 || args.devices)
        return flow_sequence(&args);
    pv_volume fixed, moving;
    if (read_volume(&args, args.fixed, &fixed))
        return 1;
    if (read_volume(&args, args.moving, &moving)) {
        pv_volume_free(&fixed);
        return 1;
    }
    int rc = 1;
    pv_context *ctx = cli_context(&args.backend);
    if (ctx)
        rc = run_flow(&args, ctx, &fixed, &moving);
    pv_context_destroy(ctx);
    pv_volume_free(&fixed);
    pv_volume_free(&moving);
    return rc;
}
