/* parvis phasecorr / parvis ncc: translation between two images or volumes
 * by phase correlation, and template matching by normalized
 * cross-correlation. */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================ phasecorr */

typedef struct phasecorr_args {
    const char *reference, *moving;
    int size[3];              /* --size: raw float32 volumes when size[0] > 0 */
    int want_json, want_time;
    pv_fft_engine fft;        /* --fft: the OpenCL FFT engine */
    pv_phasecorr_options options;
    cli_backend_options backend;
} phasecorr_args;

/* "NXxNYxNZ", axes fastest first. */
static int parse_size(const char *text, int size[3])
{
    char *end = NULL;
    const char *p = text;
    for (int a = 0; a < 3; a++) {
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 1 || v > (1 << 20))
            return -1;
        size[a] = (int)v;
        if (a < 2 && *end != 'x')
            return -1;
        p = end + 1;
    }
    return *end == '\0' ? 0 : -1;
}

static int parse_pad(const char *value, pv_pad_mode *pad)
{
    if (strcmp(value, "none") == 0)
        *pad = PV_PAD_NONE;
    else if (strcmp(value, "fft") == 0)
        *pad = PV_PAD_FFT;
    else if (strcmp(value, "linear") == 0)
        *pad = PV_PAD_LINEAR;
    else
        return cli_fail("--pad '%s': expected none, fft or linear", value);
    return 0;
}

static int take_phasecorr_valued(int argc, char **argv, int *i, phasecorr_args *args)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--upsample") && strcmp(arg, "--window") && strcmp(arg, "--size") &&
        strcmp(arg, "--pad") && strcmp(arg, "--fft"))
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    if (strcmp(arg, "--upsample") == 0) {
        if (cli_parse_int(value, 2, 10000, &args->options.upsample))
            return cli_fail("--upsample '%s': expected an integer in 2..10000", value), -1;
        args->options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    } else if (strcmp(arg, "--window") == 0) {
        if (strcmp(value, "hann") != 0 && strcmp(value, "none") != 0)
            return cli_fail("--window '%s': expected hann or none", value), -1;
        args->options.window = strcmp(value, "hann") == 0 ? PV_WINDOW_HANN : PV_WINDOW_NONE;
    } else if (strcmp(arg, "--size") == 0) {
        if (parse_size(value, args->size))
            return cli_fail("--size '%s': expected NXxNYxNZ (x fastest)", value), -1;
    } else if (strcmp(arg, "--fft") == 0) {
        if (strcmp(value, "clfft") != 0 && strcmp(value, "vkfft") != 0)
            return cli_fail("--fft '%s': expected clfft or vkfft", value), -1;
        args->fft = strcmp(value, "vkfft") == 0 ? PV_FFT_VKFFT : PV_FFT_CLFFT;
    } else if (parse_pad(value, &args->options.pad)) {
        return -1;
    }
    return 1;
}

static int take_phasecorr_flag(const char *arg, phasecorr_args *args)
{
    if (strcmp(arg, "--parabolic") == 0)
        args->options.subpixel = PV_SUBPIXEL_PARABOLIC;
    else if (strcmp(arg, "--json") == 0)
        args->want_json = 1;
    else if (strcmp(arg, "--time") == 0)
        args->want_time = 1;
    else
        return 0;
    return 1;
}

static int parse_phasecorr_args(int argc, char **argv, phasecorr_args *args)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        int taken = cli_take_backend_option(argc, argv, &i, &args->backend);
        if (taken == 0)
            taken = take_phasecorr_valued(argc, argv, &i, args);
        if (taken == 0)
            taken = take_phasecorr_flag(argv[i], args);
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_fail("phasecorr: unknown option '%s'", argv[i]);
        if (positional == 0)
            args->reference = argv[i];
        else if (positional == 1)
            args->moving = argv[i];
        else
            return cli_fail("phasecorr: unexpected argument '%s'", argv[i]);
        positional++;
    }
    if (!args->reference || !args->moving)
        return cli_fail("phasecorr: needs REF and MOV (see 'parvis help')");
    return 0;
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

/* A NIfTI-1 volume, or a raw little-endian float32 one of --size. */
static int read_volume(const char *path, const int size[3], pv_volume *volume)
{
    pv_status status = is_nifti(path) ? pv_volume_read_nifti(path, volume)
                                      : pv_volume_read_raw(path, size[0], size[1], size[2], volume);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* Volumes when --size is given or an input is a NIfTI-1 file. */
static int wants_volumes(const phasecorr_args *args)
{
    return args->size[0] > 0 || is_nifti(args->reference) || is_nifti(args->moving);
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

static int correlate_volumes(const phasecorr_args *args, pv_context *ctx)
{
    pv_volume reference, moving;
    if ((!is_nifti(args->reference) || !is_nifti(args->moving)) && args->size[0] <= 0)
        return cli_fail("phasecorr: a raw volume needs --size NXxNYxNZ");
    if (read_volume(args->reference, args->size, &reference))
        return 1;
    if (read_volume(args->moving, args->size, &moving)) {
        pv_volume_free(&reference);
        return 1;
    }
    pv_shift shift;
    pv_status status = pv_phase_correlate3d(ctx, &reference, &moving, &args->options, &shift);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "phasecorr");
    if (rc == 0)
        print_shift(args, ctx, &shift, 3);
    pv_volume_free(&reference);
    pv_volume_free(&moving);
    return rc;
}

static int correlate_images(const phasecorr_args *args, pv_context *ctx)
{
    pv_image reference, moving;
    pv_status status = pv_image_read(args->reference, PV_PIXEL_F32, &reference);
    if (status != PV_OK)
        return cli_fail_status(status, args->reference);
    status = pv_image_read(args->moving, PV_PIXEL_F32, &moving);
    if (status != PV_OK) {
        pv_image_free(&reference);
        return cli_fail_status(status, args->moving);
    }
    pv_shift shift;
    status = pv_phase_correlate(ctx, &reference, &moving, &args->options, &shift);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "phasecorr");
    if (rc == 0)
        print_shift(args, ctx, &shift, 2);
    pv_image_free(&reference);
    pv_image_free(&moving);
    return rc;
}

int cli_phasecorr(int argc, char **argv)
{
    phasecorr_args args;
    memset(&args, 0, sizeof args);
    pv_phasecorr_options_default(&args.options);
    cli_backend_options_default(&args.backend);
    if (parse_phasecorr_args(argc, argv, &args))
        return 1;
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    pv_status status = pv_context_set_fft_engine(ctx, args.fft);
    if (status != PV_OK) {
        pv_context_destroy(ctx);
        return cli_fail_status(status, "--fft");
    }
    int rc = wants_volumes(&args) ? correlate_volumes(&args, ctx) : correlate_images(&args, ctx);
    pv_context_destroy(ctx);
    return rc;
}

/* ================================================================== ncc */

typedef struct ncc_args {
    const char *templ, *image, *output;
    int min_overlap;
    int want_json, want_time;
    cli_backend_options backend;
} ncc_args;

static int take_ncc_option(int argc, char **argv, int *i, ncc_args *args)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--json") == 0) {
        args->want_json = 1;
        return 1;
    }
    if (strcmp(arg, "--time") == 0) {
        args->want_time = 1;
        return 1;
    }
    if (strcmp(arg, "-o") && strcmp(arg, "--min-overlap"))
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    if (strcmp(arg, "-o") == 0)
        args->output = value;
    else if (cli_parse_int(value, 0, 1 << 30, &args->min_overlap))
        return cli_fail("--min-overlap '%s': expected a pixel count >= 0", value), -1;
    return 1;
}

static int parse_ncc_args(int argc, char **argv, ncc_args *args)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        int taken = cli_take_backend_option(argc, argv, &i, &args->backend);
        if (taken == 0)
            taken = take_ncc_option(argc, argv, &i, args);
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_fail("ncc: unknown option '%s'", argv[i]);
        if (positional == 0)
            args->templ = argv[i];
        else if (positional == 1)
            args->image = argv[i];
        else
            return cli_fail("ncc: unexpected argument '%s'", argv[i]);
        positional++;
    }
    if (!args->templ || !args->image)
        return cli_fail("ncc: needs TEMPLATE and IMAGE (see 'parvis help')");
    return 0;
}

static void print_match(const ncc_args *args, pv_context *ctx, const pv_ncc_result *r)
{
    pv_timing timing = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &timing);
    if (args->want_json) {
        printf("{\"x\": %d, \"y\": %d, \"coefficient\": %.6f, \"sub_x\": %.4f, \"sub_y\": %.4f, "
               "\"no_texture\": %s, \"backend\": \"%s\", \"device\": ",
               r->x, r->y, (double)r->coefficient, r->sub_x, r->sub_y,
               r->flags & PV_REGISTER_NO_TEXTURE ? "true" : "false",
               pv_backend_name(pv_context_backend(ctx)));
        cli_json_string(stdout, pv_context_device_name(ctx));
        printf(", \"kernel_ms\": %.4f, \"total_ms\": %.4f}\n", timing.kernel_ms, timing.total_ms);
        return;
    }
    printf("%d %d %.6f\n", r->x, r->y, (double)r->coefficient);
    if (r->flags & PV_REGISTER_NO_TEXTURE)
        fprintf(stderr, "parvis: warning: template or image has no texture; the map is 0\n");
    if (args->want_time)
        printf("ncc: %.3f ms (kernel %.3f ms) on %s\n", timing.total_ms, timing.kernel_ms,
               pv_context_device_name(ctx));
}

static int run_ncc(const ncc_args *args, pv_context *ctx, const pv_image *templ,
                   const pv_image *image)
{
    pv_image map = {0, 0, 0, PV_PIXEL_F32, NULL};
    if (args->output && pv_image_alloc(&map, image->width + templ->width - 1,
                                       image->height + templ->height - 1,
                                       PV_PIXEL_F32) != PV_OK)
        return cli_fail("ncc: no memory for the map");
    pv_ncc_result result;
    pv_status status = pv_normxcorr2(ctx, templ, image, args->min_overlap,
                                     args->output ? &map : NULL, &result);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, "ncc");
    if (rc == 0 && args->output && (status = pv_image_write(args->output, &map)) != PV_OK)
        rc = cli_fail_status(status, args->output);
    if (rc == 0)
        print_match(args, ctx, &result);
    pv_image_free(&map);
    return rc;
}

int cli_ncc(int argc, char **argv)
{
    ncc_args args;
    memset(&args, 0, sizeof args);
    cli_backend_options_default(&args.backend);
    if (parse_ncc_args(argc, argv, &args))
        return 1;
    pv_image templ, image;
    pv_status status = pv_image_read(args.templ, PV_PIXEL_F32, &templ);
    if (status != PV_OK)
        return cli_fail_status(status, args.templ);
    status = pv_image_read(args.image, PV_PIXEL_F32, &image);
    if (status != PV_OK) {
        pv_image_free(&templ);
        return cli_fail_status(status, args.image);
    }
    int rc = 1;
    pv_context *ctx = cli_context(&args.backend);
    if (ctx)
        rc = run_ncc(&args, ctx, &templ, &image);
    pv_context_destroy(ctx);
    pv_image_free(&templ);
    pv_image_free(&image);
    return rc;
}
