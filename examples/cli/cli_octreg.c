/* parvis octreg / parvis synth-oct: stripe-wise AO-OCT volume registration,
 * and synthetic AO-OCT pairs with their true motion trace.
 *
 * Volumes are raw little-endian float32 (or uint16 with --raw-type u16)
 * with --size NZxNXxNY (depth fastest, then A-lines, then B-scans: the
 * order AO-OCT files are acquired in), or NIfTI-1 (.nii / .nii.gz, same
 * axis order) when the library has NIfTI, and multi-page TIFF (.tif /
 * .tiff) when it has TIFF.  16-bit inputs stay 16-bit (the library
 * uploads them as such and converts on the device). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* =================================================================== I/O */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_nifti(const char *path)
{
    return ends_with(path, ".nii") || ends_with(path, ".nii.gz");
}

/* --size "NZxNXxNY", axes fastest first. */
static int parse_oct_size(const char *value, void *field)
{
    return cli_parse_size3(value, 1 << 16, field);
}

/* Unsigned 16-bit files (raw with --raw-type u16, NIfTI uint16, 16-bit
 * TIFF pages) are kept as u16 volumes, which octreg takes as they are. */
static int read_volume(const char *path, const int size[3], int raw_type, pv_volume *out)
{
    pv_status status = size[0] > 0 ? pv_volume_read_raw_typed(path, size[0], size[1], size[2],
                                                              cli_raw_type(raw_type), out)
                       : is_nifti(path) ? pv_volume_read_nifti_native(path, out)
                       : cli_is_tiff_name(path) ? pv_volume_read_tiff_native(path, out)
                                                : PV_ERR_INVALID;
    if (status == PV_ERR_INVALID && size[0] <= 0 && !is_nifti(path) && !cli_is_tiff_name(path))
        return cli_fail("%s: give --size NZxNXxNY for raw volumes", path);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static int write_volume(const char *path, const pv_volume *volume)
{
    const char *target = cli_output_path(path);
    if (!target)
        return 1;
    pv_status status = is_nifti(path) ? pv_volume_write_nifti(target, volume)
                                      : pv_volume_write_raw(target, volume);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static int write_shifts_csv(const char *path, const pv_octreg_shift *s, int count)
{
    FILE *out = path ? cli_open_output(path) : stdout;
    if (!out)
        return 1;
    fprintf(out, "bscan,dx,dy,dz,peak,valid\n");
    for (int k = 0; k < count; k++)
        fprintf(out, "%d,%.4f,%.4f,%.4f,%.6f,%d\n", k, s[k].dx, s[k].dy, s[k].dz, s[k].peak,
                s[k].valid);
    return path ? cli_close_output(out, path) : 0;
}

/* A projection as an 8-bit PNG: scaled from its 1st..99th percentile range
 * (gaps, at NaN, black). */
static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int write_projection_png(const char *path, const pv_image *image)
{
    const char *target = cli_output_path(path);
    if (!target)
        return 1;
    size_t n = (size_t)image->width * image->height, finite = 0;
    float *sorted = malloc(n * sizeof *sorted);
    pv_image picture;
    if (!sorted || pv_image_alloc(&picture, image->width, image->height, PV_PIXEL_U8) != PV_OK) {
        free(sorted);
        return cli_fail("no memory for the projection picture");
    }
    const float *v = image->data;
    for (size_t i = 0; i < n; i++)
        if (v[i] == v[i])
            sorted[finite++] = v[i];
    qsort(sorted, finite, sizeof *sorted, compare_floats);
    float lo = finite ? sorted[finite / 100] : 0.0f;
    float hi = finite ? sorted[finite - 1 - finite / 100] : 1.0f;
    unsigned char *px = picture.data;
    for (size_t i = 0; i < n; i++) {
        float t = v[i] == v[i] && hi > lo ? (v[i] - lo) / (hi - lo) : 0.0f;
        px[i] = (unsigned char)(t <= 0.0f ? 0 : t >= 1.0f ? 255 : (int)(t * 255.0f + 0.5f));
    }
    pv_status status = pv_image_write_png(target, &picture);
    pv_image_free(&picture);
    free(sorted);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* ================================================================ octreg */

/* Most targets one command registers. */
#define OCTREG_MAX_TARGETS 4096

typedef struct octreg_args {
    const char *reference, *target, *shifts_path, *registered_path, *enface_path, *slow_path;
    const char **files;       /* REF, then every TARGET */
    const char **targets;     /* every TARGET given; target is the first */
    int target_count;
    const char *devices;      /* --devices all|LIST, or NULL: one context */
    int size[3];
    int raw_type;             /* --raw-type: 0 f32, 1 u16 (cli_raw_type) */
    int want_json, want_time;
    pv_octreg_options options;
    cli_backend_options backend;
} octreg_args;

static const char octreg_conventions[] =
    "  Axes (the thesis's names): z = depth along an A-line, x = A-line within a B-scan,\n"
    "  y = B-scan index (slow axis).  Raw volumes are little-endian float32 (uint16 with\n"
    "  --raw-type u16) with --size NZxNXxNY, depth fastest, then A-lines, then B-scans;\n"
    "  NIfTI and multi-page TIFF (.tif/.tiff: a page's rows are A-lines, pages are\n"
    "  B-scans) in the same order.  Unsigned 16-bit inputs (raw u16, NIfTI uint16, 16-bit\n"
    "  TIFF) are kept as 16 bits: the OpenCL backend uploads half the bytes and converts\n"
    "  on the device, with the results of the same data as float.\n"
    "  Output CSV (stdout without -o): 'bscan,dx,dy,dz,peak,valid', one row per target\n"
    "  B-scan k, with TARGET(x, k, z) ~ REF(x - dx, k - dy, z - dz), in voxels (the\n"
    "  matching reference B-scan is k - dy); peak: the fine correlation peak; valid 0:\n"
    "  rejected as an outlier, the shift interpolated from its neighbours.  Several\n"
    "  targets: one CSV with a leading 'volume' column (0 = the first TARGET).\n"
    "  --registered/--enface/--slow take one TARGET; --enface is the depth projection\n"
    "  (A-lines x B-scans), --slow the projection along the A-lines (depth x B-scans),\n"
    "  8-bit PNG scaled from the 1st to the 99th percentile, gaps black.\n";

static int parse_octreg_args(int argc, char **argv, octreg_args *a)
{
    pv_octreg_options *o = &a->options;
    const size_t size = sizeof *o;
    cli_option table[] = {
        {.name = "-o", .kind = CLI_TEXT, .field = &a->shifts_path, .value_name = "SHIFTS.csv",
         .help = "the per-B-scan shifts (default: stdout)"},
        {.name = "--size", .kind = CLI_CUSTOM, .field = a->size, .parse = parse_oct_size,
         .value_name = "NZxNXxNY", .expect = "NZxNXxNY (depth fastest), each 1..65536",
         .no_default = 1, .help = "inputs are raw volumes of this size"},
        {.name = "--raw-type", .kind = CLI_CHOICE, .field = &a->raw_type, .choices = "f32|u16",
         .value_name = "f32|u16",
         .help = "raw inputs' samples: little-endian float32, or uint16 kept as 16 bits"},
        {.name = "--registered", .kind = CLI_TEXT, .field = &a->registered_path,
         .value_name = "OUT.raw|.nii", .help = "the target moved onto the reference"},
        {.name = "--enface", .kind = CLI_TEXT, .field = &a->enface_path, .value_name = "OUT.png",
         .help = "en-face projection of the registered target"},
        {.name = "--slow", .kind = CLI_TEXT, .field = &a->slow_path, .value_name = "OUT.png",
         .help = "slow-axis projection of the registered target"},
        /* declared by the library (parvis params octreg) */
        cli_declared("octreg", "subpixel", o, size, 0),
        cli_declared("octreg", "stripes", o, size, 0),
        cli_declared("octreg", "stripe_width", o, size, 0),
        /* subvolume_width and subvolume_step under their older, shorter names; the
         * range is the declaration's (parvis params octreg), checked again by it */
        {.name = "--subvolume", .kind = CLI_INT, .field = &o->subvolume_width, .min = 3,
         .max = 1 << 16, .value_name = "W",
         .help = "reference B-scans per fine sub-volume (factors 2, 3, 5, 7 only)"},
        {.name = "--step", .kind = CLI_INT, .field = &o->subvolume_step, .min = 1,
         .max = 1 << 16, .value_name = "S", .help = "B-scans between sub-volume starts"},
        cli_declared("octreg", "coarse_tolerance", o, size, 0),
        cli_declared("octreg", "tolerance", o, size, 0),
        cli_declared("octreg", "pad", o, size, 0),
        cli_declared("octreg", "batch", o, size, 0),
        CLI_TIME_ENTRY(&a->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &a->want_json,
         .help = "print one JSON line (the CSV only with -o)"},
        CLI_BACKEND_ENTRIES(&a->backend),
        CLI_PROGRESS_ENTRY(&a->backend.progress),
        CLI_DEVICES_ENTRY(&a->devices, 0),
    };
    int count = 0;
    cli_command c = {.name = "octreg", .synopsis = "REF TARGET [TARGET...] [options]",
                     .summary = "Stripe-wise AO-OCT volume registration (coarse to fine 3D phase "
                                "correlation).",
                     .conventions = octreg_conventions, .options = table,
                     .option_count = CLI_COUNT(table), .positional = a->files,
                     .min_positional = 2, .max_positional = OCTREG_MAX_TARGETS + 1,
                     .positional_count = &count};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    a->reference = a->files[0];
    a->targets = a->files + 1;
    a->target_count = count - 1;
    a->target = a->targets[0];
    if (a->target_count > 1 && (a->registered_path || a->enface_path || a->slow_path))
        return cli_fail("octreg: --registered, --enface and --slow take one TARGET");
    return CLI_PARSED;
}

static void print_json(const octreg_args *a, pv_context *ctx, const pv_octreg_info *info,
                       double precompute_ms, const pv_timing *t)
{
    printf("{\"bscans\": %d, \"valid\": %d, \"stripes\": %d, \"good_stripes\": %d, "
           "\"subvolumes\": %d, \"subpixel\": %s, \"backend\": \"%s\", \"device\": ",
           a->size[2] > 0 ? a->size[2] : -1, info->valid_bscans, info->stripes,
           info->good_stripes, info->subvolumes, a->options.subpixel ? "true" : "false",
           pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    printf(", \"precompute_ms\": %.3f, \"register_ms\": %.3f, \"kernel_ms\": %.3f, "
           "\"upload_ms\": %.3f}\n",
           precompute_ms, t->total_ms, t->kernel_ms, t->upload_ms);
}

/* Reconstruction outputs the arguments ask for. */
static int reconstruct(const octreg_args *a, pv_octreg_plan *plan, const pv_volume *target,
                       const pv_octreg_shift *shifts)
{
    if (!a->registered_path && !a->enface_path && !a->slow_path)
        return 0;
    pv_volume registered = {0};
    pv_image enface = {0, 0, 0, PV_PIXEL_F32, NULL}, slow = enface;
    int rc = 0;
    if ((a->registered_path && pv_volume_alloc(&registered, target->nx, target->ny, target->nz)) ||
        (a->enface_path && pv_image_alloc(&enface, target->ny, target->nz, PV_PIXEL_F32)) ||
        (a->slow_path && pv_image_alloc(&slow, target->nz, target->nx, PV_PIXEL_F32)))
        rc = cli_fail("no memory for the reconstruction");
    pv_status status = rc ? PV_OK
                          : pv_octreg_reconstruct(plan, target, shifts, 0.0f,
                                                  a->registered_path ? &registered : NULL,
                                                  a->enface_path ? &enface : NULL,
                                                  a->slow_path ? &slow : NULL, NULL);
    if (!rc && status != PV_OK)
        rc = cli_fail_status(status, "octreg reconstruction");
    if (!rc && a->registered_path)
        rc = write_volume(a->registered_path, &registered);
    if (!rc && a->enface_path)
        rc = write_projection_png(a->enface_path, &enface);
    if (!rc && a->slow_path)
        rc = write_projection_png(a->slow_path, &slow);
    pv_volume_free(&registered);
    pv_image_free(&enface);
    pv_image_free(&slow);
    return rc;
}

static int run_octreg(octreg_args *a, pv_context *ctx, const pv_volume *reference,
                      const pv_volume *target)
{
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(ctx, reference, &a->options, &plan);
    if (status != PV_OK)
        return cli_fail_status(status, "octreg plan");
    pv_timing pre = {0, 0, 0, 0}, t = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &pre);
    pv_octreg_shift *shifts = calloc((size_t)target->nz, sizeof *shifts);
    pv_octreg_info info;
    status = shifts ? pv_octreg_register(plan, target, shifts, &info) : PV_ERR_NOMEM;
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "octreg");
    pv_context_last_timing(ctx, &t);
    a->size[2] = target->nz;
    if (rc == 0 && (a->shifts_path || !a->want_json))
        rc = write_shifts_csv(a->shifts_path, shifts, target->nz);
    if (rc == 0)
        rc = reconstruct(a, plan, target, shifts);
    if (rc == 0 && a->want_time && !a->want_json) /* stdout may hold the CSV */
        fprintf(a->shifts_path ? stdout : stderr,
                "octreg: %.3f ms (kernel %.3f ms; plan %.3f ms before it) on %s\n", t.total_ms,
                t.kernel_ms, pre.total_ms, pv_context_device_name(ctx));
    if (rc == 0 && a->want_json)
        print_json(a, ctx, &info, pre.total_ms, &t);
    free(shifts);
    pv_octreg_plan_destroy(plan);
    return rc;
}

/* ======================================================= target sequences */

/* One CSV for the whole sequence: the volume index leads each row. */
static int write_sequence_csv(const char *path, const pv_octreg_shift *s, int volumes, int planes)
{
    if (volumes == 1)
        return write_shifts_csv(path, s, planes);
    FILE *out = path ? cli_open_output(path) : stdout;
    if (!out)
        return 1;
    fprintf(out, "volume,bscan,dx,dy,dz,peak,valid\n");
    for (int v = 0; v < volumes; v++)
        for (int k = 0; k < planes; k++) {
            const pv_octreg_shift *e = &s[(size_t)v * planes + k];
            fprintf(out, "%d,%d,%.4f,%.4f,%.4f,%.6f,%d\n", v, k, e->dx, e->dy, e->dz, e->peak,
                    e->valid);
        }
    return path ? cli_close_output(out, path) : 0;
}

static void free_volumes(pv_volume *volumes, int count)
{
    for (int i = 0; volumes && i < count; i++)
        pv_volume_free(&volumes[i]);
    free(volumes);
}

static pv_volume *read_targets(const octreg_args *a)
{
    pv_volume *targets = calloc((size_t)a->target_count, sizeof *targets);
    if (!targets) {
        cli_fail("no memory for %d targets", a->target_count);
        return NULL;
    }
    for (int i = 0; i < a->target_count; i++)
        if (read_volume(a->targets[i], a->size, a->raw_type, &targets[i])) {
            free_volumes(targets, i);
            return NULL;
        }
    return targets;
}

/* Without --devices: one plan on one context, the targets in turn. */
static pv_status register_in_turn(pv_context *ctx, const octreg_args *a,
                                  const pv_volume *reference, const pv_volume *targets,
                                  pv_octreg_shift *shifts, double *total_ms)
{
    double start = cli_now_ms();
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(ctx, reference, &a->options, &plan);
    for (int i = 0; status == PV_OK && i < a->target_count; i++)
        status = pv_octreg_register(plan, &targets[i], shifts + (size_t)i * reference->nz, NULL);
    pv_octreg_plan_destroy(plan);
    *total_ms = cli_now_ms() - start;
    return status;
}

static void print_sequence_json(const octreg_args *a, int planes, const pv_octreg_shift *shifts,
                                double total_ms, int devices)
{
    int valid = 0;
    for (size_t i = 0; i < (size_t)a->target_count * planes; i++)
        valid += shifts[i].valid;
    printf("{\"volumes\": %d, \"bscans\": %d, \"valid\": %d, \"devices\": %d, "
           "\"total_ms\": %.3f}\n",
           a->target_count, planes, valid, devices, total_ms);
}

static int run_sequence(octreg_args *a, const pv_volume *reference, const pv_volume *targets)
{
    int planes = reference->nz;
    pv_octreg_shift *shifts = calloc((size_t)a->target_count * planes, sizeof *shifts);
    if (!shifts)
        return cli_fail("no memory for the shifts");
    pv_device_group *group = a->devices ? cli_device_group(&a->backend, a->devices) : NULL;
    pv_context *ctx = a->devices ? NULL : cli_context(&a->backend);
    double total_ms = 0.0;
    pv_status status = PV_ERR_INVALID;
    if (group) {
        status = pv_octreg_register_sequence(group, reference, targets, a->target_count,
                                             &a->options, shifts, NULL);
        pv_timing whole = {0, 0, 0, 0};
        pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &whole);
        total_ms = whole.total_ms;
    } else if (ctx) {
        status = register_in_turn(ctx, a, reference, targets, shifts, &total_ms);
    }
    int rc = group || ctx ? (status == PV_OK ? 0 : cli_fail_status(status, "octreg")) : 1;
    if (rc == 0 && (a->shifts_path || !a->want_json))
        rc = write_sequence_csv(a->shifts_path, shifts, a->target_count, planes);
    if (rc == 0 && a->want_json)
        print_sequence_json(a, planes, shifts, total_ms, group ? pv_device_group_size(group) : 1);
    if (rc == 0 && a->want_time && !a->want_json) /* stdout may hold the CSV */
        fprintf(a->shifts_path ? stdout : stderr, "octreg %d targets: %.3f ms on %s%s",
                a->target_count, total_ms, group ? "" : pv_context_device_name(ctx),
                group ? "" : "\n");
    if (rc == 0 && group && (a->want_time || a->shifts_path) && !a->want_json)
        cli_print_group_split(a->shifts_path ? stdout : stderr, group);
    free(shifts);
    pv_device_group_destroy(group);
    pv_context_destroy(ctx);
    return rc;
}

static int octreg_sequence(octreg_args *a)
{
    pv_volume reference;
    if (read_volume(a->reference, a->size, a->raw_type, &reference))
        return 1;
    pv_volume *targets = read_targets(a);
    int rc = targets ? run_sequence(a, &reference, targets) : 1;
    free_volumes(targets, a->target_count);
    pv_volume_free(&reference);
    return rc;
}

static int octreg_pair(octreg_args *a);

int cli_octreg(int argc, char **argv)
{
    octreg_args a;
    memset(&a, 0, sizeof a);
    pv_octreg_options_default(&a.options);
    cli_backend_options_default(&a.backend);
    a.files = calloc(OCTREG_MAX_TARGETS + 1, sizeof *a.files);
    if (!a.files)
        return cli_fail("out of memory");
    int parsed = parse_octreg_args(argc, argv, &a);
    int rc = parsed != CLI_PARSED              ? cli_parse_exit(parsed)
             : a.target_count > 1 || a.devices ? octreg_sequence(&a)
                                               : octreg_pair(&a);
    free(a.files);
    return rc;
}

/* One REF and one TARGET on one context (reconstruction outputs allowed). */
static int octreg_pair(octreg_args *a)
{
    pv_volume reference, target;
    if (read_volume(a->reference, a->size, a->raw_type, &reference))
        return 1;
    if (read_volume(a->target, a->size, a->raw_type, &target)) {
        pv_volume_free(&reference);
        return 1;
    }
    pv_context *ctx = cli_context(&a->backend);
    int rc = ctx ? run_octreg(a, ctx, &reference, &target) : 1;
    pv_context_destroy(ctx);
    pv_volume_free(&reference);
    pv_volume_free(&target);
    return rc;
}

/* ============================================================= synth-oct */

int cli_synth_oct(int argc, char **argv)
{
    pv_octreg_synth_params p;
    pv_octreg_synth_params_default(&p);
    const char *paths[3] = {NULL, NULL, NULL};
    int seed = (int)p.seed;
    float noise = (float)p.noise, tremor = (float)p.tremor;
    cli_option table[] = {
        {.name = "--size", .kind = CLI_CUSTOM, .field = p.size, .parse = parse_oct_size,
         .value_name = "NZxNXxNY", .expect = "NZxNXxNY (depth fastest), each 1..65536",
         .no_default = 1, .help = "volume size (default 64x48x40)"},
        {.name = "--seed", .kind = CLI_INT, .field = &seed, .min = 0, .max = 1 << 30,
         .value_name = "S", .help = "random seed"},
        {.name = "--noise", .kind = CLI_FLOAT, .field = &noise, .min = 0, .max = 1e6,
         .value_name = "N", .help = "noise std relative to the brightest layer"},
        {.name = "--tremor", .kind = CLI_FLOAT, .field = &tremor, .min = 0, .max = 1e6,
         .value_name = "T", .help = "tremor amplitude, voxels per axis"},
        {.name = "--saccades", .kind = CLI_INT, .field = &p.saccades, .min = 0, .max = 1 << 30,
         .value_name = "K", .help = "micro-saccade jumps"},
        {.name = "--integer", .kind = CLI_FLAG, .field = &p.integer_shifts,
         .help = "round the trace to whole voxels"},
    };
    cli_command c = {
        .name = "synth-oct", .synopsis = "REF TARGET TRACE.csv [options]",
        .summary = "A synthetic AO-OCT pair (layered retina, drift, tremor, saccades, noise) and\n"
                   "its true motion trace.",
        .conventions = "  REF and TARGET: NIfTI by name (.nii/.nii.gz), else raw float32, depth\n"
                       "  fastest.  TRACE.csv: 'bscan,dx,dy,dz,peak,valid' as 'parvis octreg'\n"
                       "  writes it: the true motion that octreg should find.\n",
        .options = table, .option_count = CLI_COUNT(table), .positional = paths,
        .min_positional = 3, .max_positional = 3};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    p.seed = (uint32_t)seed;
    p.noise = noise;
    p.tremor = tremor;
    pv_volume reference, target;
    if (pv_volume_alloc(&reference, p.size[0], p.size[1], p.size[2]) != PV_OK ||
        pv_volume_alloc(&target, p.size[0], p.size[1], p.size[2]) != PV_OK)
        return cli_fail("no memory for two %dx%dx%d volumes", p.size[0], p.size[1], p.size[2]);
    pv_octreg_shift *trace = calloc((size_t)p.size[2], sizeof *trace);
    pv_status status = trace ? pv_octreg_synthesize(&p, &reference, &target, trace)
                             : PV_ERR_NOMEM;
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "synth-oct");
    if (rc == 0)
        rc = write_volume(paths[0], &reference);
    if (rc == 0)
        rc = write_volume(paths[1], &target);
    if (rc == 0)
        rc = write_shifts_csv(paths[2], trace, p.size[2]);
    free(trace);
    pv_volume_free(&reference);
    pv_volume_free(&target);
    return rc;
}
