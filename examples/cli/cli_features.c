/* parvis sift / parvis match: SIFT keypoints of an image, and matches
 * between two images. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* parvis sift takes up to this many images in one run. */
#define SIFT_MAX_IMAGES 1024
/* Same-size images detected in one pv_sift_detect_batch call, at most. */
#define SIFT_BATCH 16

typedef struct features_args {
    const char *images[SIFT_MAX_IMAGES];
    int image_count;
    const char *output;
    const char *preset;
    int want_json, want_time, verbose;
    pv_sift_params sift;
    pv_sift_match_params match;
    const char *homography, *fundamental; /* model files to write, or NULL */
    const char *draw;                     /* --draw MATCHES.png, or NULL */
    int chain;                            /* --chain: pv_sift_match_images */
    pv_ransac_params ransac;
    cli_backend_options backend;
} features_args;

static const char sift_conventions[] =
    "  -o KEYS.txt: two '#' comment lines, then one line per keypoint:\n"
    "    x y sigma angle d0 ... d127\n"
    "  x, y in input pixels with the origin at the centre of the top-left pixel, x right,\n"
    "  y down; sigma (scale) in input pixels; angle in radians in [0, 2 pi), measured from\n"
    "  +x towards +y (clockwise on screen); d0..d127 the descriptor, 4x4 cells of 8\n"
    "  orientation bins, as integers min(512 v, 255) of the unit-norm float values v.\n"
    "  Images: PGM/PPM/PNG/PFM/JPEG, read in their own depth and channels: colour (RGB,\n"
    "  8 or 16 bits) and 16-bit grey go to the device as they are and become grey there\n"
    "  (Rec. 601 luma; 16-bit values / 257, so a 16-bit picture behaves as its 8-bit\n"
    "  version); values are on the 8-bit scale (--peak-thresh is for values in [0, 1]).\n"
    "  Several images: KEYS.txt must contain {}, which stands for each image's file name\n"
    "  without folder and extension (a.png b.pgm -o out/{}.txt writes out/a.txt and\n"
    "  out/b.txt; two images of one name are refused); consecutive images of one size\n"
    "  share a plan and are detected in batches (pv_sift_detect_batch); --json prints one\n"
    "  line per image.\n";

static const char match_conventions[] =
    "  Keypoints of both images are detected with the sift options, then each keypoint\n"
    "  of IMG1 is paired with its nearest neighbour in IMG2 (L2 distance of the float\n"
    "  descriptors), kept when it passes Lowe's ratio test (d1 < ratio x d2).  Images are\n"
    "  read as 'parvis sift --help' says: colour and 16-bit ones become grey on the device.\n"
    "  -o MATCHES.txt: two '#' comment lines, then one line per match:\n"
    "    x1 y1 x2 y2 distance\n"
    "  (x1, y1) in IMG1 and (x2, y2) in IMG2, pixels as in 'parvis sift --help'; distance:\n"
    "  the L2 distance of the unit-norm float descriptors.\n"
    "  --homography H.txt / --fundamental F.txt: RANSAC on the matches (docs/geometry.md);\n"
    "  the file holds the 3x3 model, one row per line (H maps IMG1 to IMG2; F has\n"
    "  x2^T F x1 = 0), and MATCHES.txt gains a column per model, inlier_H then inlier_F:\n"
    "  1 for an inlier (within --ransac-threshold px), 0 for an outlier.\n"
    "  --draw MATCHES.png: IMG1 and IMG2 side by side in grey (RGB PNG), a coloured line\n"
    "  between the keypoints of each match; with --homography only its inliers (else\n"
    "  with --fundamental only its inliers) and, for a homography, IMG1's outline mapped\n"
    "  into IMG2 as a white quadrilateral.\n"
    "  --chain: the two-frame chain (pv_sift_match_images, docs/sift.md): both images of\n"
    "  one size through one plan, detection, matching and the ratio test kept on the device\n"
    "  (OpenCL), RANSAC on the survivors; the same H as the plain mode.  Only the inlier\n"
    "  matches come back: MATCHES.txt and --draw hold only them (no inlier column);\n"
    "  --fundamental is not available with it.\n";

/* --preset sets every SIFT setting at once, wherever it stands, before
 * the options that change single settings are read. */
static int apply_preset(const char *command, int argc, char **argv, pv_sift_params *sift)
{
    for (int i = 0; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--preset") != 0)
            continue;
        if (strcmp(argv[i + 1], "fast") == 0)
            pv_sift_params_preset(sift, PV_SIFT_PRESET_FAST);
        else if (strcmp(argv[i + 1], "reference") == 0)
            pv_sift_params_preset(sift, PV_SIFT_PRESET_REFERENCE);
        else
            return cli_fail("%s: --preset %s: expected fast or reference", command, argv[i + 1]);
    }
    return 0;
}

static int parse_args(const char *command, int need, int argc, char **argv, features_args *args)
{
    const int is_match = need == 2;
    cli_option table[] = {
        {.name = "-o", .kind = CLI_TEXT, .field = &args->output,
         .value_name = is_match ? "MATCHES.txt" : "KEYS.txt",
         .help = is_match ? "the matches (see below)" : "the keypoints (see below)"},
        {.name = "--preset", .kind = CLI_TEXT, .field = &args->preset,
         .value_name = "reference|fast",
         .help = "reference (the default) or fast (the real-time paper's settings: first "
                 "octave 0, peak 0.01); single options override it"},
        /* declared by the library (lib/features/features_params.c) */
        cli_declared("sift", "first_octave", &args->sift, sizeof args->sift, 0),
        cli_declared("sift", "octaves", &args->sift, sizeof args->sift, 0),
        cli_declared("sift", "levels", &args->sift, sizeof args->sift, 0),
        cli_declared("sift", "peak_thresh", &args->sift, sizeof args->sift, 0),
        cli_declared("sift", "edge_thresh", &args->sift, sizeof args->sift, 0),
        cli_declared("sift", "max_keypoints", &args->sift, sizeof args->sift, 0),
        CLI_TIME_ENTRY(&args->want_time),
        {.name = "--json", .kind = CLI_FLAG, .field = &args->want_json,
         .help = "print one JSON line"},
        {.name = "--verbose", .kind = CLI_FLAG, .field = &args->verbose,
         .help = "say what the input images are"},
        CLI_BACKEND_ENTRIES(&args->backend),
        /* match only: sift's table stops before these */
        cli_declared("match", "ratio", &args->match, sizeof args->match, 0),
        cli_declared("match", "mutual", &args->match, sizeof args->match, 0),
        {.name = "--homography", .kind = CLI_TEXT, .field = &args->homography,
         .value_name = "H.txt", .help = "RANSAC homography of the matches (see below)"},
        {.name = "--fundamental", .kind = CLI_TEXT, .field = &args->fundamental,
         .value_name = "F.txt", .help = "RANSAC fundamental matrix of the matches"},
        /* pv_ransac_params.threshold under a name that says whose threshold it is;
         * its range is the declaration's (parvis params ransac) */
        {.name = "--ransac-threshold", .kind = CLI_FLOAT, .field = &args->ransac.threshold,
         .min = 0, .open_min = 1, .max = 1e6, .value_name = "PX",
         .help = "inlier distance of the RANSAC models"},
        {.name = "--draw", .kind = CLI_TEXT, .field = &args->draw, .value_name = "MATCHES.png",
         .help = "picture of the matches (inliers only when a model is estimated)"},
        {.name = "--chain", .kind = CLI_FLAG, .field = &args->chain,
         .help = "two same-size images to a homography in one chain (see below)"},
    };
    const int match_options = 7;
    cli_command c = {
        .name = command,
        .synopsis = is_match ? "IMG1 IMG2 -o MATCHES.txt [options]"
                             : "IMAGE... -o KEYS.txt [options]",
        .summary = is_match ? "SIFT matches between two images."
                            : "SIFT keypoints and descriptors of an image (Lowe 2004, VLFeat's "
                              "conventions).",
        .conventions = is_match ? match_conventions : sift_conventions, .options = table,
        .option_count = CLI_COUNT(table) - (is_match ? 0 : match_options),
        .positional = args->images, .min_positional = need,
        .max_positional = is_match ? need : SIFT_MAX_IMAGES,
        .positional_count = &args->image_count};
    if (apply_preset(command, argc, argv, &args->sift))
        return CLI_ERROR;
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return parsed;
    if (!args->output && !args->want_json && !args->want_time && !args->draw)
        return cli_fail("%s: nothing to do: give -o FILE, %s--time or --json", command,
                        is_match ? "--draw, " : "");
    return CLI_PARSED;
}

static void init_args(features_args *args)
{
    memset(args, 0, sizeof *args);
    pv_sift_params_default(&args->sift);
    pv_sift_match_params_default(&args->match);
    pv_ransac_params_default(&args->ransac);
    cli_backend_options_default(&args->backend);
}

/* The pixel type that keeps a file's channels and depth for SIFT, which
 * converts colour and 16-bit data to grey on the device: RGB8 / RGB16 for
 * colour, U16 for deep grey, U8 for the rest (PFM included, its values
 * taken as 8-bit). */
static pv_pixel_type native_type(const pv_image_info *info)
{
    const int deep = info->bits > 8 && info->bits <= 16;
    if (info->channels >= 3)
        return deep ? PV_PIXEL_RGB16 : PV_PIXEL_RGB8;
    return deep ? PV_PIXEL_U16 : PV_PIXEL_U8;
}

/* Read an image file as SIFT takes it (native_type). */
static int read_sift_input(const char *path, int verbose, pv_image *image)
{
    pv_image_info info;
    pv_status status = pv_image_read_info(path, &info);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    return cli_read_image(path, native_type(&info), verbose, image);
}

/* Add the context's last call's times to *sum (--time of several calls). */
static void add_last_timing(pv_context *ctx, pv_timing *sum)
{
    pv_timing t = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &t);
    sum->total_ms += t.total_ms;
    sum->kernel_ms += t.kernel_ms;
    sum->upload_ms += t.upload_ms;
    sum->download_ms += t.download_ms;
}

/* --time without --json: "COMMAND: T ms (kernel K ms) on DEVICE", what. */
static void print_time(pv_context *ctx, const char *command, const pv_timing *sum,
                       const char *what)
{
    printf("%s: %.3f ms (kernel %.3f ms) on %s; %s\n", command, sum->total_ms, sum->kernel_ms,
           pv_context_device_name(ctx), what);
}

/* Read an image and detect its keypoints; the detection's times added to
 * *sum. */
static int detect_file(pv_context *ctx, const features_args *args, const char *path,
                       pv_sift_features *features, int *octaves, pv_timing *sum)
{
    pv_image image;
    if (read_sift_input(path, args->verbose, &image))
        return 1;
    pv_sift_plan *plan = NULL;
    pv_status status = pv_sift_plan_create(ctx, image.width, image.height, &args->sift, &plan);
    if (status == PV_OK)
        status = pv_sift_detect(plan, &image, features);
    if (status == PV_OK)
        add_last_timing(ctx, sum);
    if (status == PV_OK && octaves)
        *octaves = pv_sift_plan_octaves(plan);
    pv_sift_plan_destroy(plan);
    pv_image_free(&image);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static int write_keypoints(const features_args *args, const char *path, const char *image,
                           const pv_sift_features *f, int octaves)
{
    FILE *out = cli_open_output(path);
    if (!out)
        return 1;
    fprintf(out, "# parvis sift %s: %d keypoints, first octave %d, %d octaves, %d levels, "
            "peak %g, edge %g\n", image, f->count, args->sift.first_octave, octaves,
            args->sift.levels, (double)args->sift.peak_thresh, (double)args->sift.edge_thresh);
    fprintf(out, "# x y sigma angle d0 ... d127 (pixels, origin at the centre of the top-left "
            "pixel, y down; angle in radians; descriptor as u8)\n");
    for (int i = 0; i < f->count; i++) {
        const pv_sift_keypoint *k = &f->keypoints[i];
        fprintf(out, "%.4f %.4f %.4f %.6f", (double)k->x, (double)k->y, (double)k->sigma,
                (double)k->angle);
        for (int d = 0; d < PV_SIFT_DESCRIPTOR_SIZE; d++)
            fprintf(out, " %u", (unsigned)f->descriptors_u8[(size_t)i * PV_SIFT_DESCRIPTOR_SIZE + d]);
        fputc('\n', out);
    }
    return cli_close_output(out, path);
}

static void print_timing_json(pv_context *ctx)
{
    pv_timing t = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &t);
    printf("\"backend\": \"%s\", \"device\": ", pv_backend_name(pv_context_backend(ctx)));
    cli_json_string(stdout, pv_context_device_name(ctx));
    printf(", \"kernel_ms\": %.4f, \"total_ms\": %.4f, \"upload_ms\": %.4f, \"download_ms\": %.4f",
           t.kernel_ms, t.total_ms, t.upload_ms, t.download_ms);
}

/* An image's file name without folder and extension, into stem. */
static void image_stem(const char *image, char *stem, size_t size)
{
    const char *base = strrchr(image, '/');
    base = base ? base + 1 : image;
    const char *dot = strrchr(base, '.');
    size_t length = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(stem, size, "%.*s", (int)(length < size ? length : size - 1), base);
}

/* The output file of one image: the -o pattern with its first {} replaced
 * by the image's stem (the pattern itself when it has none). */
static int output_path(const char *pattern, const char *image, char *path, size_t size)
{
    const char *mark = strstr(pattern, "{}");
    char stem[1024];
    image_stem(image, stem, sizeof stem);
    int n = mark ? snprintf(path, size, "%.*s%s%s", (int)(mark - pattern), pattern, stem, mark + 2)
                 : snprintf(path, size, "%s", pattern);
    return n < 0 || (size_t)n >= size ? cli_fail("sift: output name for '%s' is too long", image) : 0;
}

/* Several images need a {} in -o and distinct stems (no output written
 * twice). */
static int check_outputs(const features_args *args)
{
    if (args->image_count < 2 || !args->output)
        return 0;
    if (!strstr(args->output, "{}"))
        return cli_fail("sift: %d images: -o must contain {} (one output per image)",
                        args->image_count);
    for (int i = 0; i < args->image_count; i++)
        for (int j = 0; j < i; j++) {
            char a[1024], b[1024];
            image_stem(args->images[i], a, sizeof a);
            image_stem(args->images[j], b, sizeof b);
            if (strcmp(a, b) == 0)
                return cli_fail("sift: '%s' and '%s' would write the same output",
                                args->images[j], args->images[i]);
        }
    return 0;
}

/* Consecutive images of one size, waiting for one batch call. */
typedef struct sift_group {
    pv_image images[SIFT_BATCH];
    int first;               /* index of images[0] in the command line */
    int count;
    pv_sift_plan *plan;      /* kept while the size stays the same */
    int plan_width, plan_height;
    pv_timing detection;     /* the batch calls' times, summed (--time) */
} sift_group;

static void print_image_json(pv_context *ctx, const char *image, const pv_sift_features *f,
                             int octaves)
{
    printf("{\"image\": ");
    cli_json_string(stdout, image);
    printf(", \"keypoints\": %d, \"octaves\": %d, ", f->count, octaves);
    print_timing_json(ctx);
    printf("}\n");
}

/* Detect the group's images in one batch, write their outputs, empty the
 * group (its images freed). */
static int flush_group(pv_context *ctx, const features_args *args, sift_group *g)
{
    const int width = g->images[0].width, height = g->images[0].height;
    pv_status status = PV_OK;
    if (g->plan && (g->plan_width != width || g->plan_height != height)) {
        pv_sift_plan_destroy(g->plan);
        g->plan = NULL;
    }
    if (!g->plan) {
        status = pv_sift_plan_create(ctx, width, height, &args->sift, &g->plan);
        g->plan_width = width;
        g->plan_height = height;
    }
    pv_sift_features results[SIFT_BATCH];
    memset(results, 0, sizeof results);
    if (status == PV_OK)
        status = pv_sift_detect_batch(g->plan, g->images, g->count, results);
    if (status == PV_OK)
        add_last_timing(ctx, &g->detection);
    int rc = status == PV_OK ? 0 : cli_fail_status(status, args->images[g->first]);
    const int octaves = g->plan ? pv_sift_plan_octaves(g->plan) : 0;
    for (int i = 0; i < g->count && rc == 0; i++) {
        const char *image = args->images[g->first + i];
        char path[4096];
        if (args->output)
            rc = output_path(args->output, image, path, sizeof path);
        if (rc == 0 && args->output)
            rc = write_keypoints(args, path, image, &results[i], octaves);
        if (rc == 0 && args->want_json)
            print_image_json(ctx, image, &results[i], octaves);
    }
    for (int i = 0; i < g->count; i++) {
        pv_sift_features_free(&results[i]);
        pv_image_free(&g->images[i]);
    }
    g->count = 0;
    return rc;
}

/* Every image of the command line, in order, batched by size. */
static int sift_images(pv_context *ctx, const features_args *args)
{
    sift_group g;
    memset(&g, 0, sizeof g);
    int rc = 0;
    for (int i = 0; i < args->image_count && rc == 0; i++) {
        pv_image image;
        if (read_sift_input(args->images[i], args->verbose, &image)) {
            rc = 1;
            break;
        }
        if (g.count > 0 && (g.count == SIFT_BATCH || image.width != g.images[0].width ||
                            image.height != g.images[0].height))
            rc = flush_group(ctx, args, &g);
        if (rc) {
            pv_image_free(&image);
            break;
        }
        if (g.count == 0)
            g.first = i;
        g.images[g.count++] = image;
    }
    if (rc == 0 && g.count > 0)
        rc = flush_group(ctx, args, &g);
    if (rc == 0 && args->want_time && !args->want_json) {
        char what[64];
        snprintf(what, sizeof what, "detection in %d image%s", args->image_count,
                 args->image_count == 1 ? "" : "s");
        print_time(ctx, "sift", &g.detection, what);
    }
    for (int i = 0; i < g.count; i++)
        pv_image_free(&g.images[i]);
    pv_sift_plan_destroy(g.plan);
    return rc;
}

/* The work of a command once its arguments are parsed and its context is
 * open: the exit code. */
typedef int (*command_body)(pv_context *ctx, const features_args *args);

/* Parse the command line of `command` (need: its image count), open the
 * context, run body: the exit code (--help: 0). */
static int run_command(const char *command, int need, int argc, char **argv, command_body body)
{
    features_args args;
    init_args(&args);
    int parsed = parse_args(command, need, argc, argv, &args);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    if (need == 1 && check_outputs(&args))
        return 1;
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    int rc = body(ctx, &args);
    pv_context_destroy(ctx);
    return rc;
}

int cli_sift(int argc, char **argv)
{
    return run_command("sift", 1, argc, argv, sift_images);
}

/* The matches' RANSAC results: inlier flags per model asked for (NULL if not). */
typedef struct match_models {
    uint8_t *inliers[2];     /* homography, fundamental */
    double homography[9];    /* H, when inliers[0] is set */
} match_models;

static int write_matches(const features_args *args, const pv_sift_features *a,
                         const pv_sift_features *b, const pv_sift_matches *m,
                         const match_models *models)
{
    FILE *out = cli_open_output(args->output);
    if (!out)
        return 1;
    fprintf(out, "# parvis match %s %s: %d matches of %d / %d keypoints, ratio %g%s\n",
            args->images[0], args->images[1], m->count, a->count, b->count,
            (double)args->match.ratio, args->match.mutual ? ", mutual" : "");
    fprintf(out, "# x1 y1 x2 y2 distance%s%s\n", models->inliers[0] ? " inlier_H" : "",
            models->inliers[1] ? " inlier_F" : "");
    for (int i = 0; i < m->count; i++) {
        const pv_sift_keypoint *p = &a->keypoints[m->pairs[i].query];
        const pv_sift_keypoint *q = &b->keypoints[m->pairs[i].train];
        fprintf(out, "%.4f %.4f %.4f %.4f %.6f", (double)p->x, (double)p->y, (double)q->x,
                (double)q->y, (double)m->pairs[i].distance);
        for (int k = 0; k < 2; k++)
            if (models->inliers[k])
                fprintf(out, " %d", models->inliers[k][i]);
        fputc('\n', out);
    }
    return cli_close_output(out, args->output);
}

static int write_model(const char *path, const double *model)
{
    FILE *out = cli_open_output(path);
    if (!out)
        return 1;
    for (int r = 0; r < 3; r++)
        fprintf(out, "%.12g %.12g %.12g\n", model[3 * r], model[3 * r + 1], model[3 * r + 2]);
    return cli_close_output(out, path);
}

/* --draw: the matches' segments, the first model's inliers and H. */
static int draw_matches(const features_args *args, const pv_sift_features *a,
                        const pv_sift_features *b, const pv_sift_matches *m,
                        const match_models *models)
{
    float (*segments)[4] = malloc(m->count > 0 ? (size_t)m->count * sizeof *segments : 1);
    if (!segments)
        return cli_fail("no memory for %d matches", m->count);
    for (int i = 0; i < m->count; i++) {
        const pv_sift_keypoint *p = &a->keypoints[m->pairs[i].query];
        const pv_sift_keypoint *q = &b->keypoints[m->pairs[i].train];
        segments[i][0] = p->x;
        segments[i][1] = p->y;
        segments[i][2] = q->x;
        segments[i][3] = q->y;
    }
    cli_match_drawing drawing = {
        .images = {args->images[0], args->images[1]},
        .segments = (const float (*)[4])segments,
        .keep = models->inliers[0] ? models->inliers[0] : models->inliers[1],
        .count = m->count,
        .homography = models->inliers[0] ? models->homography : NULL};
    int rc = cli_draw_matches(args->draw, &drawing);
    free(segments);
    return rc;
}

/* RANSAC for each model file asked for: the file, and the inlier flags. */
static int estimate_models(pv_context *ctx, const features_args *args, const pv_sift_features *a,
                           const pv_sift_features *b, const pv_sift_matches *m,
                           match_models *models, int *inlier_counts)
{
    const char *paths[2] = {args->homography, args->fundamental};
    const pv_geometry_model kinds[2] = {PV_GEOMETRY_HOMOGRAPHY, PV_GEOMETRY_FUNDAMENTAL};
    for (int k = 0; k < 2; k++) {
        if (!paths[k])
            continue;
        models->inliers[k] = malloc(m->count > 0 ? (size_t)m->count : 1);
        if (!models->inliers[k])
            return cli_fail("no memory for %d inlier flags", m->count);
        pv_geometry_result r;
        pv_status status = pv_find_geometry_sift(ctx, kinds[k], a, b, m, &args->ransac, &r,
                                                 models->inliers[k]);
        if (status != PV_OK)
            return cli_fail_status(status, k == 0 ? "homography" : "fundamental matrix");
        inlier_counts[k] = r.inlier_count;
        if (k == 0)
            memcpy(models->homography, r.model, sizeof models->homography);
        if (write_model(paths[k], r.model))
            return 1;
    }
    return 0;
}

static int match_features(pv_context *ctx, const features_args *args, const pv_sift_features *a,
                          const pv_sift_features *b, pv_timing *sum)
{
    pv_sift_matches m;
    pv_status status = pv_sift_match(ctx, a, b, &args->match, &m);
    if (status != PV_OK)
        return cli_fail_status(status, "match");
    add_last_timing(ctx, sum);
    match_models models = {{NULL, NULL}, {0}};
    int inlier_counts[2] = {-1, -1};
    int rc = estimate_models(ctx, args, a, b, &m, &models, inlier_counts);
    if (rc == 0 && args->output)
        rc = write_matches(args, a, b, &m, &models);
    if (rc == 0 && args->draw)
        rc = draw_matches(args, a, b, &m, &models);
    if (rc == 0 && args->want_time && !args->want_json)
        print_time(ctx, "match", sum, "detection in both images and matching");
    if (rc == 0 && args->want_json) {
        printf("{\"keypoints1\": %d, \"keypoints2\": %d, \"matches\": %d, ", a->count, b->count,
               m.count);
        if (models.inliers[0])
            printf("\"inliers_H\": %d, ", inlier_counts[0]);
        if (models.inliers[1])
            printf("\"inliers_F\": %d, ", inlier_counts[1]);
        print_timing_json(ctx);
        printf("}\n");
    }
    free(models.inliers[0]);
    free(models.inliers[1]);
    pv_sift_matches_free(&m);
    return rc;
}

/* --chain's outputs: the inliers (-o, --draw), H, the time or JSON line. */
static int chain_outputs(pv_context *ctx, const features_args *args,
                         const pv_sift_chain_result *r)
{
    const int n = r->inlier_count;
    float (*segments)[4] = malloc(n > 0 ? (size_t)n * sizeof *segments : 1);
    if (!segments)
        return cli_fail("no memory for %d inliers", n);
    for (int i = 0; i < n; i++) {
        const pv_sift_point_match *m = &r->inliers[i];
        segments[i][0] = m->x1;
        segments[i][1] = m->y1;
        segments[i][2] = m->x2;
        segments[i][3] = m->y2;
    }
    int rc = args->homography ? write_model(args->homography, r->geometry.model) : 0;
    FILE *out = rc == 0 && args->output ? cli_open_output(args->output) : NULL;
    if (rc == 0 && args->output && !out)
        rc = 1;
    if (out) {
        fprintf(out, "# parvis match --chain %s %s: %d inliers of %d matches of %d / %d "
                "keypoints, ratio %g%s\n", args->images[0], args->images[1], n, r->matches,
                r->keypoints1, r->keypoints2, (double)args->match.ratio,
                args->match.mutual ? ", mutual" : "");
        fprintf(out, "# x1 y1 x2 y2 distance\n");
        for (int i = 0; i < n; i++)
            fprintf(out, "%.4f %.4f %.4f %.4f %.6f\n", (double)segments[i][0],
                    (double)segments[i][1], (double)segments[i][2], (double)segments[i][3],
                    (double)r->inliers[i].distance);
        rc = cli_close_output(out, args->output);
    }
    if (rc == 0 && args->draw) {
        cli_match_drawing drawing = {.images = {args->images[0], args->images[1]},
                                     .segments = (const float (*)[4])segments, .keep = NULL,
                                     .count = n, .homography = r->geometry.model};
        rc = cli_draw_matches(args->draw, &drawing);
    }
    free(segments);
    pv_timing t = {0, 0, 0, 0};
    pv_context_last_timing(ctx, &t);
    if (rc == 0 && args->want_time && !args->want_json)
        print_time(ctx, "match", &t, "the chain: detection in both images, matching, RANSAC");
    if (rc == 0 && args->want_json) {
        printf("{\"keypoints1\": %d, \"keypoints2\": %d, \"matches\": %d, \"inliers_H\": %d, ",
               r->keypoints1, r->keypoints2, r->matches, n);
        print_timing_json(ctx);
        printf("}\n");
    }
    return rc;
}

/* --chain: both images through pv_sift_match_images on one plan. */
static int chain_images(pv_context *ctx, const features_args *args)
{
    if (args->fundamental)
        return cli_fail("match: --chain estimates a homography; --fundamental needs the plain mode");
    pv_image a, b;
    if (read_sift_input(args->images[0], args->verbose, &a))
        return 1;
    if (read_sift_input(args->images[1], args->verbose, &b)) {
        pv_image_free(&a);
        return 1;
    }
    int rc = 0;
    if (a.width != b.width || a.height != b.height)
        rc = cli_fail("match --chain: %s is %dx%d but %s is %dx%d (one plan takes one size)",
                      args->images[0], a.width, a.height, args->images[1], b.width, b.height);
    pv_sift_plan *plan = NULL;
    pv_sift_chain_result r;
    if (rc == 0) {
        pv_status status = pv_sift_plan_create(ctx, a.width, a.height, &args->sift, &plan);
        if (status == PV_OK)
            status = pv_sift_match_images(plan, &a, &b, &args->match, &args->ransac, &r);
        if (status != PV_OK)
            rc = cli_fail_status(status, "match --chain");
    }
    if (rc == 0) {
        rc = chain_outputs(ctx, args, &r);
        pv_sift_chain_result_free(&r);
    }
    pv_sift_plan_destroy(plan);
    pv_image_free(&a);
    pv_image_free(&b);
    return rc;
}

/* Keypoints of both images, then their matches. */
static int match_images(pv_context *ctx, const features_args *args)
{
    if (args->chain)
        return chain_images(ctx, args);
    pv_sift_features a, b;
    pv_timing sum = {0, 0, 0, 0};
    int rc = detect_file(ctx, args, args->images[0], &a, NULL, &sum);
    if (rc == 0) {
        rc = detect_file(ctx, args, args->images[1], &b, NULL, &sum);
        if (rc == 0) {
            rc = match_features(ctx, args, &a, &b, &sum);
            pv_sift_features_free(&b);
        }
        pv_sift_features_free(&a);
    }
    return rc;
}

int cli_match(int argc, char **argv)
{
    return run_command("match", 2, argc, argv, match_images);
}
