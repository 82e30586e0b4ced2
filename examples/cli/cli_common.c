#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pv_device_group *cli_device_group(const cli_backend_options *options, const char *devices)
{
    int indices[CLI_MAX_DEVICES], count = 0;
    if (options->device_index >= 0) {
        cli_fail("give --device or --devices, not both");
        return NULL;
    }
    if (cli_parse_devices(devices, indices, CLI_MAX_DEVICES, &count) != 0) {
        cli_fail("--devices '%s': expected 'all' or device indices such as 0,1", devices);
        return NULL;
    }
    pv_context_options base;
    pv_context_options_default(&base);
    base.backend = options->backend;
    if (options->crosscheck)
        base.flags |= PV_CONTEXT_CROSSCHECK;
    pv_device_group *group = NULL;
    pv_status status = pv_device_group_create(&group, &base, count ? indices : NULL, count);
    if (status != PV_OK) {
        cli_fail_status(status, "cannot create the device group");
        return NULL;
    }
    /* the library reports a group call's progress on its first context */
    cli_progress_attach(pv_device_group_context(group, 0), options->progress);
    return group;
}

void cli_print_group_split(FILE *out, pv_device_group *group)
{
    int size = pv_device_group_size(group);
    fprintf(out, "%d device%s:", size, size == 1 ? "" : "s");
    for (int i = 0; i < size; i++) {
        pv_timing t = {0, 0, 0, 0};
        pv_device_group_last_timing(group, i, &t);
        fprintf(out, "%s %s (%d items, %.3f ms)", i ? "," : "",
                pv_context_device_name(pv_device_group_context(group, i)),
                pv_device_group_last_items(group, i), t.total_ms);
    }
    fputc('\n', out);
}

/* One disparity's pixel: black when invalid, else its place in [lo, hi]
 * through the map. */
static void disparity_pixel(float d, float lo, float hi, int map, unsigned char *out)
{
    if (!isfinite(d)) {
        memset(out, 0, map == CLI_DISPARITY_MAP_GRAY ? 1 : 3);
        return;
    }
    float t = hi > lo ? (d - lo) / (hi - lo) : 0.5f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    if (map == CLI_DISPARITY_MAP_GRAY)
        *out = (unsigned char)(t * 255.0f + 0.5f);
    else
        cli_colormap_turbo(t, out);
}

int cli_write_disparity_png(const char *path, const pv_image *disparity, float lo, float hi,
                            int map)
{
    const char *target = cli_output_path(path);
    if (!target)
        return 1;
    const int channels = map == CLI_DISPARITY_MAP_GRAY ? 1 : 3;
    pv_image picture;
    pv_status status = pv_image_alloc(&picture, disparity->width, disparity->height,
                                      channels == 1 ? PV_PIXEL_U8 : PV_PIXEL_RGB8);
    if (status != PV_OK)
        return cli_fail_status(status, "visualisation");
    for (int y = 0; y < disparity->height; y++) {
        const float *row = (const float *)disparity->data + (ptrdiff_t)y * disparity->stride;
        /* stride counts pixels, of `channels` bytes each */
        unsigned char *out =
            (unsigned char *)picture.data + (ptrdiff_t)y * picture.stride * channels;
        for (int x = 0; x < disparity->width; x++)
            disparity_pixel(row[x], lo, hi, map, out + (ptrdiff_t)x * channels);
    }
    status = pv_image_write_png(target, &picture);
    pv_image_free(&picture);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* ------------------------------------------------------------------ inputs */

static const char *format_name(pv_image_format format)
{
    switch (format) {
    case PV_IMAGE_FORMAT_PGM: return "PGM";
    case PV_IMAGE_FORMAT_PPM: return "PPM";
    case PV_IMAGE_FORMAT_PFM: return "PFM";
    case PV_IMAGE_FORMAT_PNG: return "PNG";
    case PV_IMAGE_FORMAT_JPEG: return "JPEG";
    case PV_IMAGE_FORMAT_TIFF: return "TIFF";
    }
    return "unknown format";
}

/* --verbose: what the file holds and where its colour becomes grey: on
 * reading, or (read as RGB, as sift and match do) by the backend. */
static void describe_image(const char *path, const pv_image_info *info, pv_pixel_type type)
{
    const int kept_rgb = type == PV_PIXEL_RGB8 || type == PV_PIXEL_RGB16;
    const char *what = info->channels >= 3
                           ? (kept_rgb ? "colour, converted to grey (0.299 R + 0.587 G + 0.114 B) by the backend"
                                       : "colour, converted to grey (0.299 R + 0.587 G + 0.114 B) on reading")
                       : info->channels == 2 ? "grey with alpha, alpha dropped"
                                             : "grey";
    fprintf(stderr, "parvis: %s: %s, %dx%d, %d bit%s a sample, %s%s\n", path,
            format_name(info->format), info->width, info->height, info->bits,
            info->bits == 1 ? "" : "s", what,
            info->channels == 4 ? ", alpha dropped" : "");
}

static int ends_with_ignoring_case(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++) {
        char c = text[n - m + i];
        if ((c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != suffix[i])
            return 0;
    }
    return 1;
}

int cli_is_tiff_name(const char *path)
{
    return ends_with_ignoring_case(path, ".tif") || ends_with_ignoring_case(path, ".tiff");
}

pv_volume_type cli_raw_type(int choice)
{
    return choice == 1 ? PV_VOLUME_U16 : PV_VOLUME_F32;
}

int cli_read_image(const char *path, pv_pixel_type type, int verbose, pv_image *out)
{
    pv_image_info info;
    pv_status status = pv_image_read_info(path, &info);
    if (status == PV_OK)
        status = pv_image_read(path, type, out);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    if (verbose)
        describe_image(path, &info, type);
    return 0;
}

int cli_read_image_pair(const char *const files[2], pv_pixel_type type, int verbose,
                        pv_image pair[2])
{
    if (cli_read_image(files[0], type, verbose, &pair[0]))
        return 1;
    if (cli_read_image(files[1], type, verbose, &pair[1])) {
        pv_image_free(&pair[0]);
        return 1;
    }
    return 0;
}

void cli_free_image_pair(pv_image pair[2])
{
    pv_image_free(&pair[0]);
    pv_image_free(&pair[1]);
}
