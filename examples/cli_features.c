/* parvis sift / parvis match: SIFT keypoints of an image, and matches
 * between two images. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct features_args {
    const char *images[2];
    const char *output;
    int want_json;
    pv_sift_params sift;
    pv_sift_match_params match;
    cli_backend_options backend;
} features_args;

/* Options with a value.  Returns 1 if consumed, -1 on error, 0 if unknown. */
static int take_valued(int argc, char **argv, int *i, features_args *args)
{
    static const char *const names[] = {"-o", "--first-octave", "--peak-thresh", "--edge-thresh",
                                        "--max-keypoints", "--levels", "--octaves", "--ratio"};
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
    case 1: bad = cli_parse_int(value, -1, 0, &args->sift.first_octave); break;
    case 2: bad = cli_parse_float(value, &args->sift.peak_thresh); break;
    case 3: bad = cli_parse_float(value, &args->sift.edge_thresh); break;
    case 4: bad = cli_parse_int(value, 0, 1 << 30, &args->sift.max_keypoints); break;
    case 5: bad = cli_parse_int(value, 1, PV_SIFT_MAX_LEVELS, &args->sift.levels); break;
    case 6: bad = cli_parse_int(value, 0, PV_SIFT_MAX_OCTAVES, &args->sift.octaves); break;
    case 7: bad = cli_parse_float(value, &args->match.ratio); break;
    }
    if (bad)
        cli_fail("%s '%s': not a valid value", arg, value);
    return bad ? -1 : 1;
}

static int take_flag(const char *arg, features_args *args)
{
    if (strcmp(arg, "--json") == 0)
        args->want_json = 1;
    else if (strcmp(arg, "--mutual") == 0)
        args->match.mutual = 1;
    else
        return 0;
    return 1;
}

static int parse_args(const char *command, int need, int argc, char **argv, features_args *args)
{
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        int taken = cli_take_backend_option(argc, argv, &i, &args->backend);
        if (taken == 0)
            taken = take_valued(argc, argv, &i, args);
        if (taken == 0)
            taken = take_flag(argv[i], args);
        if (taken < 0)
            return 1;
        if (taken > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_fail("%s: unknown option '%s'", command, argv[i]);
        if (positional >= need)
            return cli_fail("%s: unexpected argument '%s'", command, argv[i]);
        args->images[positional++] = argv[i];
    }
    if (positional < need)
        return cli_fail("%s: needs %s (see 'parvis help')", command,
                        need == 1 ? "an IMAGE" : "IMG1 and IMG2");
    if (!args->output && !args->want_json)
        return cli_fail("%s: nothing to do: give -o FILE or --json", command);
    return 0;
}

static void init_args(features_args *args)
{
    memset(args, 0, sizeof *args);
    pv_sift_params_default(&args->sift);
    pv_sift_match_params_default(&args->match);
    cli_backend_options_default(&args->backend);
}

/* Read an image as u8 and detect its keypoints. */
static int detect_file(pv_context *ctx, const features_args *args, const char *path,
                       pv_sift_features *features, int *octaves)
{
    pv_image image;
    pv_status status = pv_image_read(path, PV_PIXEL_U8, &image);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    pv_sift_plan *plan = NULL;
    status = pv_sift_plan_create(ctx, image.width, image.height, &args->sift, &plan);
    if (status == PV_OK)
        status = pv_sift_detect(plan, &image, features);
    if (status == PV_OK && octaves)
        *octaves = pv_sift_plan_octaves(plan);
    pv_sift_plan_destroy(plan);
    pv_image_free(&image);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

static int write_keypoints(const features_args *args, const pv_sift_features *f, int octaves)
{
    FILE *out = fopen(args->output, "w");
    if (!out)
        return cli_fail("cannot write '%s'", args->output);
    fprintf(out, "# parvis sift %s: %d keypoints, first octave %d, %d octaves, %d levels, "
            "peak %g, edge %g\n", args->images[0], f->count, args->sift.first_octave, octaves,
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
    return fclose(out) == 0 ? 0 : cli_fail("error writing '%s'", args->output);
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

int cli_sift(int argc, char **argv)
{
    features_args args;
    init_args(&args);
    if (parse_args("sift", 1, argc, argv, &args))
        return 1;
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    pv_sift_features f;
    int octaves = 0;
    int rc = detect_file(ctx, &args, args.images[0], &f, &octaves);
    if (rc == 0 && args.output)
        rc = write_keypoints(&args, &f, octaves);
    if (rc == 0 && args.want_json) {
        printf("{\"image\": ");
        cli_json_string(stdout, args.images[0]);
        printf(", \"keypoints\": %d, \"octaves\": %d, ", f.count, octaves);
        print_timing_json(ctx);
        printf("}\n");
    }
    if (rc == 0)
        pv_sift_features_free(&f);
    pv_context_destroy(ctx);
    return rc;
}

static int write_matches(const features_args *args, const pv_sift_features *a,
                         const pv_sift_features *b, const pv_sift_matches *m)
{
    FILE *out = fopen(args->output, "w");
    if (!out)
        return cli_fail("cannot write '%s'", args->output);
    fprintf(out, "# parvis match %s %s: %d matches of %d / %d keypoints, ratio %g%s\n",
            args->images[0], args->images[1], m->count, a->count, b->count,
            (double)args->match.ratio, args->match.mutual ? ", mutual" : "");
    fprintf(out, "# x1 y1 x2 y2 distance\n");
    for (int i = 0; i < m->count; i++) {
        const pv_sift_keypoint *p = &a->keypoints[m->pairs[i].query];
        const pv_sift_keypoint *q = &b->keypoints[m->pairs[i].train];
        fprintf(out, "%.4f %.4f %.4f %.4f %.6f\n", (double)p->x, (double)p->y, (double)q->x,
                (double)q->y, (double)m->pairs[i].distance);
    }
    return fclose(out) == 0 ? 0 : cli_fail("error writing '%s'", args->output);
}

static int match_features(pv_context *ctx, const features_args *args, const pv_sift_features *a,
                          const pv_sift_features *b)
{
    pv_sift_matches m;
    pv_status status = pv_sift_match(ctx, a, b, &args->match, &m);
    if (status != PV_OK)
        return cli_fail_status(status, "match");
    int rc = args->output ? write_matches(args, a, b, &m) : 0;
    if (rc == 0 && args->want_json) {
        printf("{\"keypoints1\": %d, \"keypoints2\": %d, \"matches\": %d, ", a->count, b->count,
               m.count);
        print_timing_json(ctx);
        printf("}\n");
    }
    pv_sift_matches_free(&m);
    return rc;
}

int cli_match(int argc, char **argv)
{
    features_args args;
    init_args(&args);
    if (parse_args("match", 2, argc, argv, &args))
        return 1;
    pv_context *ctx = cli_context(&args.backend);
    if (!ctx)
        return 1;
    pv_sift_features a, b;
    int rc = detect_file(ctx, &args, args.images[0], &a, NULL);
    if (rc == 0) {
        rc = detect_file(ctx, &args, args.images[1], &b, NULL);
        if (rc == 0) {
            rc = match_features(ctx, &args, &a, &b);
            pv_sift_features_free(&b);
        }
        pv_sift_features_free(&a);
    }
    pv_context_destroy(ctx);
    return rc;
}
