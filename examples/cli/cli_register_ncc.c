/* parvis ncc: template matching by normalized cross-correlation, of one
 * image (pv_normxcorr2), of several images in one batch
 * (pv_normxcorr2_batch), or with masks (pv_normxcorr2_masked). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The most IMAGE arguments one run takes. */
#define NCC_MAX_IMAGES 1024

typedef struct ncc_args {
    const char *files[1 + NCC_MAX_IMAGES];  /* TEMPLATE, IMAGE... */
    int file_count;
    const char *output;
    const char *mask, *image_mask;           /* --mask, --image-mask: masked NCC */
    int min_overlap;
    int want_json, want_time, verbose;
    cli_backend_options backend;
} ncc_args;

static const char ncc_conventions[] =
    "  Prints 'x y coefficient': the best position of the template's top-left corner in\n"
    "  the image (pixels, x right, y down; negative when the template hangs over the\n"
    "  image's top or left edge) and its coefficient in [-1, 1].\n"
    "  -o MAP.pfm: the full coefficient map (float32; .png/.pgm: clamped to 0..255, so use\n"
    "  .pfm), (IMAGE.width + TEMPLATE.width - 1) x (IMAGE.height + TEMPLATE.height - 1) as\n"
    "  MATLAB's normxcorr2: map pixel (u, v) puts the template's top-left corner at image\n"
    "  position (u - TEMPLATE.width + 1, v - TEMPLATE.height + 1).  Each coefficient is\n"
    "  normalized over the overlap only; 0 where the overlap has fewer than --min-overlap\n"
    "  pixels or no variance.\n"
    "  Several IMAGEs (of one size) run as one batch, the template prepared once: one line\n"
    "  per image, in their order (with --json one object per line, with its \"image\");\n"
    "  -o takes one IMAGE.\n"
    "  --mask FILE (the template's) and --image-mask FILE (the image's): masked NCC (OpenCV's\n"
    "  matchTemplate with a mask, TM_CCOEFF_NORMED): images of their input's size, non-zero\n"
    "  = valid; each coefficient is normalized over the pixels valid in both, and\n"
    "  --min-overlap counts those.  Without --mask every template pixel is valid.  Masks\n"
    "  take one IMAGE.\n";

/* The defaults, then the command line. */
static int parse_ncc_args(int argc, char **argv, ncc_args *args)
{
    memset(args, 0, sizeof *args);
    cli_backend_options_default(&args->backend);
    cli_option table[] = {
        {.name = "-o", .kind = CLI_TEXT, .field = &args->output, .value_name = "MAP.pfm",
         .help = "the coefficient map (see below)"},
        {.name = "--min-overlap", .kind = CLI_INT, .field = &args->min_overlap, .min = 0,
         .max = 1 << 30, .value_name = "N",
         .help = "coefficients of overlaps smaller than N pixels are 0"},
        {.name = "--mask", .kind = CLI_TEXT, .field = &args->mask, .value_name = "FILE",
         .help = "mask of TEMPLATE (non-zero = valid): masked NCC"},
        {.name = "--image-mask", .kind = CLI_TEXT, .field = &args->image_mask,
         .value_name = "FILE", .help = "mask of IMAGE (non-zero = valid): masked NCC"},
        CLI_TIME_ENTRY(&args->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &args->want_json,
         .help = "print one JSON line instead of text"},
        {.name = "--verbose", .kind = CLI_FLAG, .field = &args->verbose,
         .help = "say what the input images are"},
        CLI_BACKEND_ENTRIES(&args->backend),
    };
    cli_command c = {
        .name = "ncc", .synopsis = "TEMPLATE IMAGE [IMAGE...] [options]",
        .summary = "Template matching by normalized cross-correlation (images: PGM/PPM/PNG/PFM/\n"
                   "JPEG, colour read as grey), of one image, a batch, or with masks.",
        .conventions = ncc_conventions, .options = table, .option_count = CLI_COUNT(table),
        .positional = args->files, .min_positional = 2, .max_positional = 1 + NCC_MAX_IMAGES,
        .positional_count = &args->file_count};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed == CLI_PARSED && args->file_count > 2 && (args->output || args->mask ||
                                                         args->image_mask))
        return cli_fail("ncc: %s takes one IMAGE",
                        args->output ? "-o" : args->mask ? "--mask" : "--image-mask");
    return parsed;
}

static void print_match(const ncc_args *args, pv_context *ctx, const pv_ncc_result *r,
                        const char *image)
{
    pv_timing timing = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &timing);
    if (args->want_json) {
        printf("{\"x\": %d, \"y\": %d, \"coefficient\": %.6f, \"sub_x\": %.4f, \"sub_y\": %.4f, "
               "\"no_texture\": %s, ",
               r->x, r->y, (double)r->coefficient, r->sub_x, r->sub_y,
               r->flags & PV_REGISTER_NO_TEXTURE ? "true" : "false");
        if (args->file_count > 2) {
            printf("\"image\": ");
            cli_json_string(stdout, image);
            printf(", ");
        }
        printf("\"backend\": \"%s\", \"device\": ", pv_backend_name(pv_context_backend(ctx)));
        cli_json_string(stdout, pv_context_device_name(ctx));
        printf(", \"kernel_ms\": %.4f, \"total_ms\": %.4f}\n", timing.kernel_ms, timing.total_ms);
        return;
    }
    printf("%d %d %.6f\n", r->x, r->y, (double)r->coefficient);
    if (r->flags & PV_REGISTER_NO_TEXTURE)
        fprintf(stderr, "parvis: warning: %s or the template has no texture; the map is 0\n",
                image);
}

static void print_time(const ncc_args *args, pv_context *ctx)
{
    pv_timing timing = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &timing);
    if (args->want_time && !args->want_json)
        printf("ncc: %.3f ms (kernel %.3f ms) on %s\n", timing.total_ms, timing.kernel_ms,
               pv_context_device_name(ctx));
}

/* The masks (u8): the template's, or all valid without --mask; the
 * image's, or none.  0 on success. */
static int read_masks(const ncc_args *args, const pv_image *templ, pv_image masks[2])
{
    memset(masks, 0, 2 * sizeof *masks);
    if (args->mask && cli_read_image(args->mask, PV_PIXEL_U8, args->verbose, &masks[0]))
        return 1;
    if (!args->mask) {
        if (pv_image_alloc(&masks[0], templ->width, templ->height, PV_PIXEL_U8) != PV_OK)
            return cli_fail("ncc: no memory for the template's mask");
        for (int y = 0; y < templ->height; y++)
            memset((unsigned char *)masks[0].data + (ptrdiff_t)y * masks[0].stride, 1,
                   (size_t)templ->width);
    }
    if (args->image_mask &&
        cli_read_image(args->image_mask, PV_PIXEL_U8, args->verbose, &masks[1])) {
        pv_image_free(&masks[0]);
        return 1;
    }
    return 0;
}

/* One image: pv_normxcorr2, or pv_normxcorr2_masked with masks. */
static int run_single(const ncc_args *args, pv_context *ctx, const pv_image *templ,
                      const pv_image *image)
{
    pv_image map = {0, 0, 0, PV_PIXEL_F32, NULL}, masks[2];
    int masked = args->mask || args->image_mask;
    if (masked && read_masks(args, templ, masks))
        return 1;
    int rc = 0;
    if (args->output && pv_image_alloc(&map, image->width + templ->width - 1,
                                       image->height + templ->height - 1,
                                       PV_PIXEL_F32) != PV_OK)
        rc = cli_fail("ncc: no memory for the map");
    pv_ncc_result result;
    pv_image *out = args->output ? &map : NULL;
    pv_status status = PV_OK;
    if (rc == 0)
        status = masked ? pv_normxcorr2_masked(ctx, templ, image, &masks[0],
                                               args->image_mask ? &masks[1] : NULL,
                                               args->min_overlap, out, &result)
                        : pv_normxcorr2(ctx, templ, image, args->min_overlap, out, &result);
    if (rc == 0 && status != PV_OK)
        rc = cli_fail_status(status, "ncc");
    const char *target = rc == 0 && args->output ? cli_output_path(args->output) : NULL;
    if (rc == 0 && args->output && !target)
        rc = 1;
    if (rc == 0 && target && (status = pv_image_write(target, &map)) != PV_OK)
        rc = cli_fail_status(status, args->output);
    if (rc == 0) {
        print_match(args, ctx, &result, args->files[1]);
        print_time(args, ctx);
    }
    if (masked) {
        pv_image_free(&masks[0]);
        pv_image_free(&masks[1]);
    }
    pv_image_free(&map);
    return rc;
}

/* Several images: one pv_normxcorr2_batch call. */
static int run_batch(const ncc_args *args, pv_context *ctx, const pv_image *templ)
{
    const int count = args->file_count - 1;
    pv_image *images = calloc((size_t)count, sizeof *images);
    pv_ncc_result *results = calloc((size_t)count, sizeof *results);
    int rc = images && results ? 0 : cli_fail("ncc: out of memory");
    int read = 0;
    for (; rc == 0 && read < count; read++)
        if (cli_read_image(args->files[1 + read], PV_PIXEL_F32, args->verbose, &images[read]))
            rc = 1;
    if (rc)
        read--;
    pv_status status = PV_OK;
    if (rc == 0 && (status = pv_normxcorr2_batch(ctx, templ, images, count, args->min_overlap,
                                                 NULL, results)) != PV_OK)
        rc = cli_fail_status(status, "ncc");
    for (int i = 0; rc == 0 && i < count; i++)
        print_match(args, ctx, &results[i], args->files[1 + i]);
    if (rc == 0)
        print_time(args, ctx);
    for (int i = 0; i < read; i++)
        pv_image_free(&images[i]);
    free(images);
    free(results);
    return rc;
}

int cli_ncc(int argc, char **argv)
{
    ncc_args args;
    int parsed = parse_ncc_args(argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    pv_image templ, image;
    if (cli_read_image(args.files[0], PV_PIXEL_F32, args.verbose, &templ))
        return 1;
    int rc = 1;
    pv_context *ctx = cli_context(&args.backend);
    if (ctx && args.file_count > 2) {
        rc = run_batch(&args, ctx, &templ);
    } else if (ctx && !cli_read_image(args.files[1], PV_PIXEL_F32, args.verbose, &image)) {
        rc = run_single(&args, ctx, &templ, &image);
        pv_image_free(&image);
    }
    pv_context_destroy(ctx);
    pv_image_free(&templ);
    return rc;
}
