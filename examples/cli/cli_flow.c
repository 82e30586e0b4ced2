/* parvis flow (alias flow3d): 3D motion estimation between two volumes. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Most frames one command reads. */
#define FLOW_MAX_FRAMES 1024

typedef struct flow_args {
    const char *fixed, *moving, *output, *warped, *color, *truth;
    const char *frames[FLOW_MAX_FRAMES]; /* every input given; fixed, moving the first two */
    int frame_count;
    const char *devices;  /* --devices all|LIST, or NULL: one context */
    int size[3];          /* --size: raw volumes when size[0] > 0 */
    int raw_type;         /* --raw-type: 0 f32, 1 u16 (cli_raw_type) */
    int want_time, want_json, verbose, forward;
    int gt_border;
    float max_radius;     /* --max-radius of the colour coding; 0: the largest */
    pv_flow_params params;
    cli_backend_options backend;
    cli_option *table;    /* the parsed option table (which options were given) */
    int table_size;
} flow_args;

static int parse_size3(const char *value, void *field)
{
    return cli_parse_size3(value, 1 << 20, field);
}

static const char flow_summary[] =
    "CLG optical flow between two images (2D: PNG/PGM/PPM/PFM, nz = 1) or volumes (3D:\n"
    "NIfTI, multi-page TIFF, or raw float32/uint16 with --size).  More inputs: a sequence,\n"
    "pair i's flow in OUT_i.ext.  Alias: flow3d.";

static const char flow_conventions[] =
    "  The flow (u, v[, w]) is in pixels/voxels with MOVING(x + u, y + v, z + w) ~ FIXED(x, y, z):\n"
    "  u to the right (+x), v down the rows (+y), w along the slices (+z).\n"
    "  Images are read as grey (colour: 0.299 R + 0.587 G + 0.114 B) and scaled to [0, 1]\n"
    "  (divided by 255, or by the pair's largest value when that exceeds 255); volumes are\n"
    "  used as given, so alpha is in squared intensity units; unsigned 16-bit volumes (raw\n"
    "  with --raw-type u16, NIfTI uint16, 16-bit TIFF) stay 16-bit, converted on the device.\n"
    "  Defaults differ: images use pv_flow_params_default_2d (alpha 0.02, rho 1.5, kernel\n"
    "  from rho, 4 levels, fewer when the image is small: the coarsest level keeps >= 16 px),\n"
    "  volumes the 3D ones (alpha 0.05, rho 2, 15 taps, 1 level).\n"
    "  -o by name: .flo = Middlebury (float 202021.25, int32 width, height, then (u, v)\n"
    "  float32 pairs row by row, little-endian; 2D only); .nii/.nii.gz/.hdr = NIfTI vector\n"
    "  field; anything else = prefix of raw float32 files PREFIX_u.raw, _v.raw, _w.raw.\n"
    "  --color: Middlebury colour coding (hue = direction, white = still, full colour at\n"
    "  --max-radius px, darker beyond).  --gt TRUTH.flo prints the mean endpoint error\n"
    "  (EPE, px) and mean angular error (degrees) over known truth (|u|,|v| < 1e9).\n";

/* The defaults, then the command line. */
static int parse_flow_args(int argc, char **argv, flow_args *args)
{
    memset(args, 0, sizeof *args);
    pv_flow_params_default(&args->params);
    cli_backend_options_default(&args->backend);
    pv_flow_params *p = &args->params;
    static cli_option table[40];
    const cli_option entries[] = {
        {.name = "-o", .kind = CLI_TEXT, .field = &args->output, .value_name = "FLOW",
         .help = "the flow: .flo, .nii or a raw prefix (see below)"},
        {.name = "--warped", .kind = CLI_TEXT, .field = &args->warped, .value_name = "OUT",
         .help = "MOVING warped back onto FIXED (.nii, or raw float32; images: PFM/PNG/PGM)"},
        {.name = "--color", .kind = CLI_TEXT, .field = &args->color, .value_name = "VIS.png",
         .help = "colour-coded 2D flow"},
        {.name = "--max-radius", .kind = CLI_FLOAT, .field = &args->max_radius, .min = 0,
         .max = 1e6, .value_name = "R", .help = "flow magnitude of full colour; 0 = the largest"},
        {.name = "--gt", .kind = CLI_TEXT, .field = &args->truth, .value_name = "TRUTH.flo",
         .help = "score a 2D flow against the truth"},
        {.name = "--gt-border", .kind = CLI_INT, .field = &args->gt_border, .min = 0,
         .max = 1 << 20, .value_name = "B", .help = "pixels left out on each side when scoring"},
        {.name = "--size", .kind = CLI_CUSTOM, .field = args->size, .parse = parse_size3,
         .value_name = "NXxNYxNZ", .expect = "NXxNYxNZ (x fastest), each 1..1048576",
         .no_default = 1, .help = "inputs are raw little-endian volumes of this size"},
        {.name = "--raw-type", .kind = CLI_CHOICE, .field = &args->raw_type,
         .choices = "f32|u16", .value_name = "f32|u16",
         .help = "raw volumes' samples: float32, or uint16 kept as 16 bits"},
        /* --alpha, --rho, --kernel-size and --levels in the command's own form: their
         * defaults depend on whether the inputs are images or volumes, known only
         * after parsing (apply_2d_defaults); the help says both */
        {.name = "--alpha", .kind = CLI_FLOAT, .field = &p->alpha, .min = 0, .open_min = 1,
         .max = 1e6, .value_name = "A", .no_default = 1,
         .help = "smoothness weight (default 0.02 images, 0.05 volumes)"},
        /* declared by the library (parvis params flow) */
        cli_declared("flow", "beta", p, sizeof *p, 0),
        {.name = "--rho", .kind = CLI_FLOAT, .field = &p->rho, .min = 0, .open_min = 1,
         .max = 100, .value_name = "S", .no_default = 1,
         .help = "structure-tensor Gaussian sigma (default 1.5 images, 2 volumes)"},
        {.name = "--kernel-size", .kind = CLI_INT, .field = &p->kernel_size, .min = 0, .max = 4095,
         .value_name = "K", .no_default = 1,
         .help = "odd taps of that Gaussian, 0 = from rho (default 0 images, 15 volumes)"},
        cli_declared("flow", "warps", p, sizeof *p, 0),
        cli_declared("flow", "iterations", p, sizeof *p, 0),
        {.name = "--levels", .kind = CLI_INT, .field = &p->levels, .min = 1,
         .max = PV_FLOW_MAX_LEVELS, .value_name = "L", .no_default = 1,
         .help = "pyramid levels, factor 2 (default 4 images, 1 volumes)"},
        cli_declared("flow", "tolerance", p, sizeof *p, 0),
        cli_declared("flow", "check_every", p, sizeof *p, 0),
        cli_declared("flow", "spacing", p, sizeof *p, 0),
        cli_declared("flow", "gradient", p, sizeof *p, 0),
        /* a short form of --gradient forward, kept for the scripts that use it */
        {.name = "--forward", .kind = CLI_FLAG, .field = &args->forward,
         .help = "the same as --gradient forward"},
        CLI_TIME_ENTRY(&args->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &args->want_json,
         .help = "print one JSON line instead of text"},
        {.name = "--verbose", .kind = CLI_FLAG, .field = &args->verbose,
         .help = "say what the inputs are and the parameters used"},
        CLI_BACKEND_ENTRIES(&args->backend),
        CLI_PROGRESS_ENTRY(&args->backend.progress),
        CLI_DEVICES_ENTRY(&args->devices, 0),
    };
    memcpy(table, entries, sizeof entries);
    args->table = table;
    args->table_size = CLI_COUNT(entries);
    cli_command c = {.name = "flow", .synopsis = "FIXED MOVING [MORE...] [options]",
                     .summary = flow_summary, .conventions = flow_conventions,
                     .options = table, .option_count = args->table_size,
                     .positional = args->frames, .min_positional = 2,
                     .max_positional = FLOW_MAX_FRAMES, .positional_count = &args->frame_count};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    if (args->forward && cli_given(&c, "--gradient") && p->gradient != PV_GRADIENT_FORWARD)
        return cli_fail("flow: --forward disagrees with --gradient");
    if (args->forward)
        p->gradient = PV_GRADIENT_FORWARD;
    args->fixed = args->frames[0];
    args->moving = args->frames[1];
    if (args->frame_count > 2 && (args->warped || args->truth || args->color))
        return cli_fail("flow: --warped, --color and --gt take one FIXED MOVING pair");
    if (p->kernel_size != 0 && p->kernel_size % 2 == 0)
        return cli_fail("flow --kernel-size %d: must be odd (or 0)", p->kernel_size);
    if (!args->output && !args->warped && !args->want_json && !args->want_time && !args->color &&
        !args->truth)
        return cli_fail("flow: nothing to do: give -o FLOW, --warped, --color, --gt, --time "
                        "or --json");
    return CLI_PARSED;
}

static int given(const flow_args *args, const char *name)
{
    cli_command c = {.options = args->table, .option_count = args->table_size};
    return cli_given(&c, name);
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

/* Not NIfTI, not TIFF (pages as slices), not raw (--size): an image for
 * pv_image_read. */
static int is_image_input(const flow_args *args, const char *path)
{
    return args->size[0] == 0 && !is_nifti_name(path) && !cli_is_tiff_name(path);
}

/* An image as a volume with nz = 1, in the file's grey values. */
static int read_image_volume(const flow_args *args, const char *path, pv_volume *volume)
{
    pv_image image;
    if (cli_read_image(path, PV_PIXEL_F32, args->verbose, &image))
        return 1;
    pv_status status = pv_volume_alloc(volume, image.width, image.height, 1);
    for (int y = 0; status == PV_OK && y < image.height; y++)
        memcpy(volume->data + (ptrdiff_t)y * volume->stride_y,
               (const float *)image.data + (ptrdiff_t)y * image.stride,
               (size_t)image.width * sizeof(float));
    pv_image_free(&image);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static int read_volume(const flow_args *args, const char *path, pv_volume *volume)
{
    if (is_image_input(args, path))
        return read_image_volume(args, path, volume);
    pv_status status = args->size[0] > 0
                           ? pv_volume_read_raw_typed(path, args->size[0], args->size[1],
                                                      args->size[2],
                                                      cli_raw_type(args->raw_type), volume)
                           : cli_is_tiff_name(path) ? pv_volume_read_tiff_native(path, volume)
                                                    : pv_volume_read_nifti_native(path, volume);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static float volume_max(const pv_volume *v)
{
    float largest = 0.0f;
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++) {
                float value = v->data[(ptrdiff_t)z * v->stride_z + (ptrdiff_t)y * v->stride_y + x];
                if (value > largest)
                    largest = value;
            }
    return largest;
}

/* Images to [0, 1]: by 255, or by the largest value above it, one scale
 * for all frames so their intensities stay comparable. */
static void normalise_images(const flow_args *args, pv_volume *frames, int count)
{
    float largest = 255.0f;
    for (int i = 0; i < count; i++) {
        float m = volume_max(&frames[i]);
        largest = m > largest ? m : largest;
    }
    for (int i = 0; i < count; i++) {
        pv_volume *v = &frames[i];
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++)
                v->data[(ptrdiff_t)y * v->stride_y + x] /= largest;
    }
    if (args->verbose)
        fprintf(stderr, "parvis: flow: images scaled to [0, 1] (divided by %g)\n",
                (double)largest);
}

/* 2D defaults for what the user left unset; levels also fitted to the
 * image so that the coarsest level keeps 16 pixels on its smaller side. */
static void apply_2d_defaults(flow_args *args, int nx, int ny)
{
    pv_flow_params d;
    pv_flow_params_default_2d(&d);
    pv_flow_params *p = &args->params;
    if (!given(args, "--alpha"))
        p->alpha = d.alpha;
    if (!given(args, "--rho"))
        p->rho = d.rho;
    if (!given(args, "--kernel-size"))
        p->kernel_size = d.kernel_size;
    if (!given(args, "--warps"))
        p->warps = d.warps;
    if (!given(args, "--iterations"))
        p->iterations = d.iterations;
    if (!given(args, "--levels")) {
        p->levels = d.levels;
        int side = nx < ny ? nx : ny;
        while (p->levels > 1 && (side >> (p->levels - 1)) < 16)
            p->levels--;
    }
}

/* Options of a 2D pair given for volumes (or a 3D run): errors. */
static int check_dimension(const flow_args *args, int nz)
{
    if (nz > 1 && (args->color || args->truth || (args->output && ends_with(args->output, ".flo"))))
        return cli_fail("flow: --color, --gt and .flo output are for 2D flow (nz = 1), "
                        "these inputs have nz = %d", nz);
    return 0;
}

/* .flo for 2D, NIfTI vector field for .nii names; otherwise three raw
 * files PATH_u.raw, PATH_v.raw, PATH_w.raw. */
static int write_flow(const char *path, const pv_flow_field *flow)
{
    if (ends_with(path, ".flo") || is_nifti_name(path)) {
        const char *target = cli_output_path(path);
        if (!target)
            return 1;
        pv_status status = ends_with(path, ".flo") ? pv_flow_write_flo(target, flow)
                                                   : pv_flow_write_nifti(target, flow);
        return status == PV_OK ? 0 : cli_fail_status(status, path);
    }
    const pv_volume *parts[3] = {&flow->u, &flow->v, &flow->w};
    static const char names[3] = {'u', 'v', 'w'};
    for (int c = 0; c < 3; c++) {
        char name[4096];
        snprintf(name, sizeof name, "%s_%c.raw", path, names[c]);
        const char *target = cli_output_path(name);
        if (!target)
            return 1;
        pv_status status = pv_volume_write_raw(target, parts[c]);
        if (status != PV_OK)
            return cli_fail_status(status, name);
    }
    return 0;
}

/* The warped moving input in the inputs' kind of file: an 8-bit picture
 * (values back to 0..255) or a PFM for 2D image inputs, NIfTI or raw
 * float32 for volumes. */
static int save_warped(const flow_args *args, pv_volume *warped)
{
    const int picture_file = warped->nz == 1 && is_image_input(args, args->warped);
    pv_image picture = pv_image_wrap(warped->data, warped->nx, warped->ny, PV_PIXEL_F32);
    picture.stride = warped->stride_y;
    if (picture_file && !ends_with(args->warped, ".pfm")) {
        for (int y = 0; y < warped->ny; y++)
            for (int x = 0; x < warped->nx; x++)
                warped->data[(ptrdiff_t)y * warped->stride_y + x] *= 255.0f;
        return cli_write_disparity_png(args->warped, &picture, 0.0f, 255.0f,
                                       CLI_DISPARITY_MAP_GRAY);
    }
    const char *target = cli_output_path(args->warped);
    if (!target)
        return 1;
    pv_status status = picture_file ? pv_image_write(target, &picture)
                       : is_nifti_name(args->warped) ? pv_volume_write_nifti(target, warped)
                                                     : pv_volume_write_raw(target, warped);
    return status == PV_OK ? 0 : cli_fail_status(status, args->warped);
}

/* A float copy of a u16 volume (the warp takes float volumes only). */
static int float_copy(const pv_volume *v, pv_volume *out)
{
    if (pv_volume_alloc(out, v->nx, v->ny, v->nz) != PV_OK)
        return cli_fail("no memory for a float copy of the moving volume");
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++)
                out->data[((ptrdiff_t)z * v->ny + y) * v->nx + x] =
                    v->data_u16[(ptrdiff_t)z * v->stride_z + (ptrdiff_t)y * v->stride_y + x];
    return 0;
}

static int write_warped(pv_context *ctx, const flow_args *args, const pv_volume *moving,
                        const pv_flow_field *flow)
{
    pv_volume warped, converted = {0};
    if (moving->type == PV_VOLUME_U16) {
        if (float_copy(moving, &converted))
            return 1;
        moving = &converted;
    }
    if (pv_volume_alloc(&warped, moving->nx, moving->ny, moving->nz) != PV_OK) {
        pv_volume_free(&converted);
        return cli_fail("no memory for the warped volume");
    }
    pv_status status = pv_flow_warp(ctx, moving, flow, &warped);
    int rc = status == PV_OK ? save_warped(args, &warped) : cli_fail_status(status, "warp");
    pv_volume_free(&warped);
    pv_volume_free(&converted);
    return rc;
}

static void print_report(const flow_args *args, pv_context *ctx, const pv_volume *fixed,
                         const pv_timing *timing, const pv_flow_stats *stats,
                         const pv_flow_error *error)
{
    if (args->truth && !args->want_json)
        printf("flow vs %s: EPE %.4f px (max %.3f), angular error %.3f deg over %zu pixels\n",
               args->truth, error->mean_endpoint, error->max_endpoint, error->mean_angular_deg,
               error->known);
    if (args->want_time && !args->want_json)
        printf("flow %dx%dx%d: %.3f ms (kernel %.3f ms) on %s; stages ms: pyramid %.3f, "
               "gradients %.3f, resample %.3f, tensor %.3f, jacobi %.3f (%d iterations)\n",
               fixed->nx, fixed->ny, fixed->nz, timing->total_ms, timing->kernel_ms,
               pv_context_device_name(ctx), stats->pyramid_ms, stats->gradient_ms,
               stats->resample_ms, stats->tensor_ms, stats->jacobi_ms, stats->iterations);
    if (!args->want_json)
        return;
    printf("{\"op\": \"%s\", \"nx\": %d, \"ny\": %d, \"nz\": %d, \"backend\": \"%s\", "
           "\"device\": ",
           fixed->nz == 1 ? "flow2d" : "flow3d", fixed->nx, fixed->ny, fixed->nz, pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    printf(", \"alpha\": %g, \"beta\": %g, \"warps\": %d, \"iterations\": %d, \"levels\": %d, "
           "\"total_ms\": %.4f, \"kernel_ms\": %.4f, \"pyramid_ms\": %.4f, \"gradient_ms\": %.4f, "
           "\"resample_ms\": %.4f, \"tensor_ms\": %.4f, \"jacobi_ms\": %.4f, "
           "\"jacobi_iterations\": %d",
           (double)args->params.alpha, (double)args->params.beta, args->params.warps,
           args->params.iterations, args->params.levels, timing->total_ms, timing->kernel_ms,
           stats->pyramid_ms, stats->gradient_ms, stats->resample_ms, stats->tensor_ms,
           stats->jacobi_ms, stats->iterations);
    if (args->truth)
        printf(", \"epe\": %.6f, \"max_epe\": %.6f, \"angular_deg\": %.6f", error->mean_endpoint,
               error->max_endpoint, error->mean_angular_deg);
    printf("}\n");
}

static int score(const flow_args *args, const pv_flow_field *flow, pv_flow_error *error)
{
    pv_flow_field truth;
    pv_status status = pv_flow_read_flo(args->truth, &truth);
    if (status != PV_OK)
        return cli_fail_status(status, args->truth);
    status = pv_flow_error_2d(flow, &truth, args->gt_border, error);
    pv_flow_field_free(&truth);
    return status == PV_OK ? 0 : cli_fail_status(status, "flow scoring");
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
    if (rc == 0 && args->color) {
        const char *target = cli_output_path(args->color);
        status = target ? pv_flow_write_color_png(target, &flow, args->max_radius) : PV_OK;
        rc = !target ? 1 : status == PV_OK ? 0 : cli_fail_status(status, args->color);
    }
    pv_flow_error error = {-1.0, -1.0, -1.0, 0};
    if (rc == 0 && args->truth)
        rc = score(args, &flow, &error);
    if (rc == 0)
        print_report(args, ctx, fixed, &timing, &stats, &error);
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
                      : ends_with(output, ".flo")  ? ".flo"
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

static pv_volume *read_frames(flow_args *args)
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
    if (check_dimension(args, frames[0].nz)) {
        free_frames(frames, args->frame_count);
        return NULL;
    }
    if (frames[0].nz == 1 && is_image_input(args, args->frames[0]))
        normalise_images(args, frames, args->frame_count);
    if (frames[0].nz == 1)
        apply_2d_defaults(args, frames[0].nx, frames[0].ny);
    const pv_flow_params *p = &args->params;
    if (args->verbose)
        fprintf(stderr, "parvis: flow %s: alpha %g, beta %g, rho %g, kernel %d, levels %d, "
                "warps %d, iterations %d\n", frames[0].nz == 1 ? "2D" : "3D", (double)p->alpha,
                (double)p->beta, (double)p->rho, p->kernel_size, p->levels, p->warps,
                p->iterations);
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

static int flow_sequence(const flow_args *args, pv_volume *frames)
{
    int pairs = args->frame_count - 1;
    pv_flow_field *flows = alloc_flows(&frames[0], pairs);
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
    int parsed = parse_flow_args(argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    pv_volume *frames = read_frames(&args);
    if (!frames)
        return 1;
    if (args.frame_count > 2 || args.devices)
        return flow_sequence(&args, frames);
    int rc = 1;
    pv_context *ctx = cli_context(&args.backend);
    if (ctx)
        rc = run_flow(&args, ctx, &frames[0], &frames[1]);
    pv_context_destroy(ctx);
    free_frames(frames, args.frame_count);
    return rc;
}

/* ============================================================ synth-flow */

static int write_frame(const char *path, const pv_volume *v)
{
    pv_image picture = pv_image_wrap(v->data, v->nx, v->ny, PV_PIXEL_F32);
    picture.stride = v->stride_y;
    if (!ends_with(path, ".pfm")) /* prints its own message */
        return cli_write_disparity_png(path, &picture, 0.0f, 255.0f, CLI_DISPARITY_MAP_GRAY);
    const char *target = cli_output_path(path);
    if (!target)
        return 1;
    pv_status status = pv_image_write(target, &picture);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

int cli_synth_flow(int argc, char **argv)
{
    const char *paths[4] = {NULL, NULL, NULL, NULL};
    float magnitude = 4.0f;
    cli_backend_options backend;
    cli_backend_options_default(&backend);
    backend.backend = PV_BACKEND_CPU;
    cli_option table[] = {
        {.name = "--magnitude", .kind = CLI_FLOAT, .field = &magnitude, .min = 0, .open_min = 1,
         .max = 1000, .value_name = "M", .help = "about the largest flow magnitude, px"},
    };
    cli_command c = {
        .name = "synth-flow", .synopsis = "IMAGE FIXED MOVING TRUTH.flo [options]",
        .summary = "A 2D pair with known flow: MOVING is IMAGE (grey), FIXED is MOVING sampled\n"
                   "at x + truth(x) (bilinear), so that MOVING(x + u, y + v) = FIXED(x, y).",
        .conventions = "  FIXED and MOVING: .pfm keeps float32 grey values (0..255), other names are\n"
                       "  8-bit PNG.  TRUTH.flo: Middlebury .flo, u right, v down, pixels.\n",
        .options = table, .option_count = CLI_COUNT(table), .positional = paths,
        .min_positional = 4, .max_positional = 4};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    pv_image image;
    if (cli_read_image(paths[0], PV_PIXEL_F32, 0, &image))
        return 1;
    pv_volume moving = pv_volume_wrap(image.data, image.width, image.height, 1);
    moving.stride_y = image.stride;
    pv_volume fixed = {0};
    pv_flow_field truth = {{0}, {0}, {0}};
    pv_context *ctx = cli_context(&backend);
    int rc = !ctx || pv_volume_alloc(&fixed, image.width, image.height, 1) != PV_OK ||
             pv_flow_field_alloc(&truth, image.width, image.height, 1) != PV_OK;
    if (rc == 0) {
        cli_synth_flow_truth(&truth, magnitude);
        pv_status status = pv_flow_warp(ctx, &moving, &truth, &fixed);
        rc = status == PV_OK ? 0 : cli_fail_status(status, "synth-flow");
    }
    if (rc == 0)
        rc = write_frame(paths[1], &fixed) || write_frame(paths[2], &moving);
    const char *truth_target = rc == 0 ? cli_output_path(paths[3]) : NULL;
    if (rc == 0 && !truth_target)
        rc = 1;
    if (rc == 0) {
        pv_status status = pv_flow_write_flo(truth_target, &truth);
        rc = status == PV_OK ? 0 : cli_fail_status(status, paths[3]);
    }
    pv_flow_field_free(&truth);
    pv_volume_free(&fixed);
    pv_context_destroy(ctx);
    pv_image_free(&image);
    return rc;
}
