#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cli_fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fputs("parvis: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    return 1;
}

int cli_fail_status(pv_status status, const char *what)
{
    return cli_fail("%s: %s: %s", what, pv_status_string(status), pv_last_error());
}

int cli_parse_int(const char *text, int min, int max, int *out)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || !*text || *end || value < min || value > max)
        return -1;
    *out = (int)value;
    return 0;
}

int cli_parse_float(const char *text, float *out)
{
    char *end = NULL;
    errno = 0;
    float value = strtof(text, &end);
    if (errno || !*text || *end || !isfinite(value))
        return -1;
    *out = value;
    return 0;
}

int cli_parse_backend(const char *text, pv_backend_kind *out)
{
    if (strcmp(text, "auto") == 0)
        *out = PV_BACKEND_AUTO;
    else if (strcmp(text, "cpu") == 0)
        *out = PV_BACKEND_CPU;
    else if (strcmp(text, "opencl") == 0)
        *out = PV_BACKEND_OPENCL;
    else
        return -1;
    return 0;
}

void cli_backend_options_default(cli_backend_options *options)
{
    options->backend = PV_BACKEND_AUTO;
    options->device_index = -1;
    options->crosscheck = 0;
}

const char *cli_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_fail("%s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_take_backend_option(int argc, char **argv, int *i, cli_backend_options *options)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--crosscheck") == 0) {
        options->crosscheck = 1;
        return 1;
    }
    if (strcmp(arg, "--backend") != 0 && strcmp(arg, "--device") != 0)
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    if (strcmp(arg, "--backend") == 0 && cli_parse_backend(value, &options->backend) != 0) {
        cli_fail("--backend '%s': expected auto, cpu or opencl", value);
        return -1;
    }
    if (strcmp(arg, "--device") == 0 && cli_parse_int(value, 0, 1023, &options->device_index)) {
        cli_fail("--device '%s': expected a device index (see 'parvis devices')", value);
        return -1;
    }
    return 1;
}

pv_context *cli_context(const cli_backend_options *options)
{
    pv_context_options context_options;
    pv_context_options_default(&context_options);
    context_options.backend = options->backend;
    context_options.device_index = options->device_index;
    if (options->crosscheck)
        context_options.flags |= PV_CONTEXT_CROSSCHECK;
    if (options->device_index >= 0 && options->backend == PV_BACKEND_CPU) {
        cli_fail("--device applies to the opencl backend, not cpu");
        return NULL;
    }
    pv_context *ctx = NULL;
    pv_status status = pv_context_create(&ctx, &context_options);
    if (status != PV_OK) {
        cli_fail_status(status, "cannot create a context");
        return NULL;
    }
    return ctx;
}

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int cli_parse_devices(const char *text, int *indices, int capacity, int *count)
{
    *count = 0;
    if (strcmp(text, "all") == 0)
        return 0;
    const char *p = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long index = strtol(p, &end, 10);
        if (errno || end == p || index < 0 || index > 1023 || *count >= capacity ||
            (*end != ',' && *end != '\0'))
            return -1;
        indices[(*count)++] = (int)index;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}

int cli_take_devices_option(int argc, char **argv, int *i, const char **devices)
{
    if (strcmp(argv[*i], "--devices") != 0)
        return 0;
    const char *value = cli_value(argc, argv, i);
    int indices[CLI_MAX_DEVICES], count = 0;
    if (!value)
        return -1;
    if (cli_parse_devices(value, indices, CLI_MAX_DEVICES, &count) != 0) {
        cli_fail("--devices '%s': expected 'all' or device indices such as 0,1 "
                 "(see 'parvis devices')", value);
        return -1;
    }
    *devices = value;
    return 1;
}

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

void cli_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

int cli_write_disparity_png(const char *path, const pv_image *disparity, float lo, float hi)
{
    pv_image picture;
    pv_status status = pv_image_alloc(&picture, disparity->width, disparity->height, PV_PIXEL_U8);
    if (status != PV_OK)
        return cli_fail_status(status, "visualisation");
    float scale = hi > lo ? 255.0f / (hi - lo) : 0.0f;
    for (int y = 0; y < disparity->height; y++)
        for (int x = 0; x < disparity->width; x++) {
            float d = ((const float *)disparity->data)[(ptrdiff_t)y * disparity->stride + x];
            float v = isfinite(d) ? (d - lo) * scale : 0.0f;
            ((unsigned char *)picture.data)[(ptrdiff_t)y * picture.stride + x] =
                (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
        }
    status = pv_image_write_png(path, &picture);
    pv_image_free(&picture);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}
