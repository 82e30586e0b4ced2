/* parvis phasecorr: translation between two images or volumes by phase
 * correlation (parvis ncc, template matching, is cli_register_ncc.c). */
#include "cli.h"

#include <string.h>

/* ============================================================ phasecorr */

enum { SUBPIXEL_CHOICE_NONE, SUBPIXEL_CHOICE_UPSAMPLE, SUBPIXEL_CHOICE_PARABOLIC };

typedef struct phasecorr_args {
    const char *files[2];     /* REF, MOV */
    int size[3];              /* --size: raw volumes when size[0] > 0 */
    int raw_type;             /* --raw-type: 0 f32, 1 u16 (cli_raw_type) */
    int want_json, want_time, verbose, parabolic;
    int fft;                  /* --fft's choice index */
    pv_phasecorr_options options;
    const char *mask, *moving_mask;     /* --mask, --moving-mask: masked correlation */
    pv_phasecorr_masked_params masked;
    cli_backend_options backend;
} phasecorr_args;

static const char phasecorr_summary[] =
    "Translation between two images (PGM/PPM/PNG/PFM/JPEG, colour read as grey) or two\n"
    "volumes (NIfTI, multi-page TIFF, or raw float32/uint16 with --size) by phase correlation.";

static const char phasecorr_conventions[] =
    "  Prints 'dx dy [dz] peak' with MOV(p) ~ REF(p - shift): a feature at x in REF is at\n"
    "  x + dx in MOV (dx to the right, dy down the rows, dz along the slices), in pixels;\n"
    "  whole pixels with --subpixel none (the default: the integer peak), else 4\n"
    "  decimals; --upsample F implies --subpixel upsample, --parabolic parabolic.\n"
    "  The shift is wrapped into (-n/2, n/2] per axis (n: the padded size).  peak: the normalized\n"
    "  correlation peak, 1 for identical inputs; a textureless input gives a warning and\n"
    "  an undefined shift.  --size NXxNYxNZ: raw little-endian float32 (uint16 with\n"
    "  --raw-type u16), x fastest.  Unsigned 16-bit volumes (raw u16, NIfTI uint16,\n"
    "  16-bit TIFF) are kept as 16 bits and converted on the device.\n"
    "  --fft applies to the opencl backend only.\n"
    "  --mask FILE (and --moving-mask FILE, else the same mask for MOV): masked phase\n"
    "  correlation (Padfield's masked NCC, scikit-image's reference_mask / moving_mask):\n"
    "  an image or volume of the input's size, non-zero = valid; the shift is integer,\n"
    "  peak is the normalised cross-correlation over the overlap of the masks, and\n"
    "  --overlap-ratio applies; --subpixel, --upsample, --parabolic, --window and --pad do\n"
    "  not.\n";

static int parse_size_field(const char *value, void *field)
{
    return cli_parse_size3(value, 1 << 20, field);
}

static int phasecorr_subpixel(const cli_command *c, phasecorr_args *args);

/* The defaults, then the command line. */
static int parse_phasecorr_args(int argc, char **argv, phasecorr_args *args)
{
    memset(args, 0, sizeof *args);
    pv_phasecorr_options_default(&args->options);
    pv_phasecorr_masked_params_default(&args->masked);
    cli_backend_options_default(&args->backend);
    cli_option table[] = {
        /* declared by the library (lib/register/: parvis params phasecorr) */
        cli_declared("phasecorr", "subpixel", &args->options, sizeof args->options, 0),
        cli_declared("phasecorr", "upsample", &args->options, sizeof args->options, 0),
        /* a short form of --subpixel parabolic, kept for the scripts that use it */
        {.name = "--parabolic", .kind = CLI_FLAG, .field = &args->parabolic,
         .help = "the same as --subpixel parabolic"},
        cli_declared("phasecorr", "window", &args->options, sizeof args->options, 0),
        cli_declared("phasecorr", "pad", &args->options, sizeof args->options, 0),
        {.name = "--mask", .kind = CLI_TEXT, .field = &args->mask, .value_name = "FILE",
         .help = "mask of REF (and of MOV without --moving-mask): masked correlation"},
        {.name = "--moving-mask", .kind = CLI_TEXT, .field = &args->moving_mask,
         .value_name = "FILE", .help = "mask of MOV (needs --mask)"},
        cli_declared("phasecorr_masked", "overlap_ratio", &args->masked, sizeof args->masked, 0),
        {.name = "--size", .kind = CLI_CUSTOM, .field = args->size, .parse = parse_size_field,
         .value_name = "NXxNYxNZ", .expect = "NXxNYxNZ (x fastest), each 1..1048576",
         .no_default = 1, .help = "inputs are raw little-endian volumes of this size"},
        {.name = "--raw-type", .kind = CLI_CHOICE, .field = &args->raw_type,
         .choices = "f32|u16", .value_name = "f32|u16",
         .help = "raw volumes' samples: float32, or uint16 kept as 16 bits"},
        {.name = "--fft", .kind = CLI_CHOICE, .field = &args->fft, .choices = "auto|clfft|vkfft",
         .value_name = "auto|clfft|vkfft", .help = "OpenCL FFT engine"},
        CLI_TIME_ENTRY(&args->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &args->want_json,
         .help = "print one JSON line instead of text"},
        {.name = "--verbose", .kind = CLI_FLAG, .field = &args->verbose,
         .help = "say what the input images are"},
        CLI_BACKEND_ENTRIES(&args->backend),
    };
    cli_command c = {.name = "phasecorr", .synopsis = "REF MOV [options]",
                     .summary = phasecorr_summary, .conventions = phasecorr_conventions,
                     .options = table, .option_count = CLI_COUNT(table),
                     .positional = args->files, .min_positional = 2, .max_positional = 2};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    return phasecorr_subpixel(&c, args);
}

/* --subpixel, or what --upsample (upsample) and --parabolic imply; the
 * integer peak is --subpixel none, the default. */
static int phasecorr_subpixel(const cli_command *c, phasecorr_args *args)
{
    const int upsample = cli_given(c, "--upsample");
    if (args->parabolic && upsample)
        return cli_fail("phasecorr: give --upsample or --parabolic, not both");
    if (cli_given(c, "--subpixel")) {
        if ((args->parabolic && args->options.subpixel != PV_SUBPIXEL_PARABOLIC) ||
            (upsample && args->options.subpixel != PV_SUBPIXEL_UPSAMPLE))
            return cli_fail("phasecorr: --subpixel disagrees with %s",
                            upsample ? "--upsample" : "--parabolic");
    } else if (args->parabolic) {
        args->options.subpixel = PV_SUBPIXEL_PARABOLIC;
    } else if (upsample) {
        args->options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    }
    if (!args->mask) {
        if (args->moving_mask || cli_given(c, "--overlap-ratio"))
            return cli_fail("phasecorr: %s needs --mask",
                            args->moving_mask ? "--moving-mask" : "--overlap-ratio");
    } else {
        static const char *const unmasked[] = {"--subpixel", "--upsample", "--parabolic",
                                               "--window", "--pad"};
        for (size_t i = 0; i < sizeof unmasked / sizeof unmasked[0]; i++)
            if (cli_given(c, unmasked[i]))
                return cli_fail("phasecorr: %s does not apply with --mask", unmasked[i]);
    }
    if (cli_given(c, "--fft") && args->backend.backend == PV_BACKEND_CPU)
        return cli_fail("phasecorr: --fft applies to the opencl backend, not cpu");
    return CLI_PARSED;
}

static int has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcmp(path + n - k, suffix) == 0;
}

/* NIfTI-1 files are known by their names; anything else is raw. */
static int is_nifti(const char *path)
{
    return has_suffix(path, ".nii") || has_suffix(path, ".nii.gz") || has_suffix(path, ".hdr") ||
           has_suffix(path, ".img");
}

/* A volume whose file says its size: NIfTI-1 or multi-page TIFF. */
static int is_named_volume(const char *path)
{
    return is_nifti(path) || cli_is_tiff_name(path);
}

/* A NIfTI-1 volume, a multi-page TIFF, or a raw little-endian one of
 * --size and --raw-type; unsigned 16-bit files stay u16 volumes, which
 * phase correlation (plain and masked) takes as they are. */
static int read_volume(const char *path, const int size[3], int raw_type, pv_volume *volume)
{
    pv_status status = is_nifti(path)           ? pv_volume_read_nifti_native(path, volume)
                       : cli_is_tiff_name(path) ? pv_volume_read_tiff_native(path, volume)
                                                : pv_volume_read_raw_typed(
                                                      path, size[0], size[1], size[2],
                                                      cli_raw_type(raw_type), volume);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* Volumes when --size is given or an input is a NIfTI-1 or TIFF file. */
static int wants_volumes(const phasecorr_args *args)
{
    return args->size[0] > 0 || is_named_volume(args->files[0]) ||
           is_named_volume(args->files[1]);
}

static void print_shift(const phasecorr_args *args, pv_context *ctx, const pv_shift *shift,
                        int dims)
{
    pv_timing timing = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &timing);
    if (args->want_json) {
        printf("{\"dx\": %.6f, \"dy\": %.6f, \"dz\": %.6f, \"peak\": %.6f, \"no_texture\": %s, "
               "\"dims\": %d, \"backend\": \"%s\", \"device\": ",
               shift->dx, shift->dy, shift->dz, shift->peak,
               shift->flags & PV_REGISTER_NO_TEXTURE ? "true" : "false", dims,
               pv_backend_name(pv_context_backend(ctx)));
        cli_json_string(stdout, pv_context_device_name(ctx));
        printf(", \"kernel_ms\": %.4f, \"total_ms\": %.4f}\n", timing.kernel_ms, timing.total_ms);
        return;
    }
    const char *format = args->options.subpixel == PV_SUBPIXEL_NONE ? "%.0f" : "%.4f";
    printf(format, shift->dx);
    putchar(' ');
    printf(format, shift->dy);
    if (dims == 3) {
        putchar(' ');
        printf(format, shift->dz);
    }
    printf(" %.6f\n", shift->peak);
    if (shift->flags & PV_REGISTER_NO_TEXTURE)
        fprintf(stderr, "parvis: warning: an input has no texture; the shift is undefined\n");
    if (args->want_time)
        printf("phasecorr: %.3f ms (kernel %.3f ms) on %s\n", timing.total_ms, timing.kernel_ms,
               pv_context_device_name(ctx));
}

/* The shift printed, or the library's message: the exit status. */
static int report_shift(const phasecorr_args *args, pv_context *ctx, pv_status status,
                        const pv_shift *shift, int dims)
{
    if (status != PV_OK)
        return cli_fail_status(status, "phasecorr");
    print_shift(args, ctx, shift, dims);
    return 0;
}

static int correlate_volumes(const phasecorr_args *args, pv_context *ctx)
{
    pv_volume reference, moving;
    if ((!is_named_volume(args->files[0]) || !is_named_volume(args->files[1])) &&
        args->size[0] <= 0)
        return cli_fail("phasecorr: a raw volume needs --size NXxNYxNZ");
    if (read_volume(args->files[0], args->size, args->raw_type, &reference))
        return 1;
    if (read_volume(args->files[1], args->size, args->raw_type, &moving)) {
        pv_volume_free(&reference);
        return 1;
    }
    pv_shift shift;
    pv_status status;
    int rc = 0;
    if (args->mask) {
        /* the masks: read like the inputs (NIfTI, or raw of --size) */
        pv_volume masks[2];
        const char *paths[2] = {args->mask, args->moving_mask};
        int read = 0;
        for (; read < 2 && paths[read]; read++)
            if (read_volume(paths[read], args->size, args->raw_type, &masks[read])) {
                rc = 1;
                break;
            }
        status = PV_OK;
        if (!rc) {
            status = pv_phase_correlate_masked3d(ctx, &reference, &moving, &masks[0],
                                                 read > 1 ? &masks[1] : NULL, &args->masked,
                                                 &shift);
            rc = report_shift(args, ctx, status, &shift, 3);
        }
        while (read-- > 0)
            pv_volume_free(&masks[read]);
    } else {
        status = pv_phase_correlate3d(ctx, &reference, &moving, &args->options, &shift);
        rc = report_shift(args, ctx, status, &shift, 3);
    }
    pv_volume_free(&reference);
    pv_volume_free(&moving);
    return rc;
}

static int correlate_images(const phasecorr_args *args, pv_context *ctx)
{
    pv_image images[2]; /* the reference, then the moving image */
    if (cli_read_image_pair(args->files, PV_PIXEL_F32, args->verbose, images))
        return 1;
    pv_shift shift;
    int rc = 0;
    if (args->mask) {
        pv_image masks[2];
        const char *paths[2] = {args->mask, args->moving_mask};
        int read = 0;
        for (; read < 2 && paths[read]; read++)
            if (cli_read_image(paths[read], PV_PIXEL_F32, args->verbose, &masks[read])) {
                rc = 1;
                break;
            }
        if (!rc) {
            pv_status status = pv_phase_correlate_masked(ctx, &images[0], &images[1], &masks[0],
                                                         read > 1 ? &masks[1] : NULL,
                                                         &args->masked, &shift);
            rc = report_shift(args, ctx, status, &shift, 2);
        }
        while (read-- > 0)
            pv_image_free(&masks[read]);
    } else {
        pv_status status = pv_phase_correlate(ctx, &images[0], &images[1], &args->options, &shift);
        rc = report_shift(args, ctx, status, &shift, 2);
    }
    cli_free_image_pair(images);
    return rc;
}

int cli_phasecorr(int argc, char **argv)
{
    phasecorr_args args;
    int parsed = parse_phasecorr_args(argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    pv_status status = args.fft ? pv_context_set_fft_engine(ctx, (pv_fft_engine)args.fft) : PV_OK;
    if (status != PV_OK) {
        pv_context_destroy(ctx);
        return cli_fail_status(status, "--fft");
    }
    int rc = wants_volumes(&args) ? correlate_volumes(&args, ctx) : correlate_images(&args, ctx);
    pv_context_destroy(ctx);
    return rc;
}
