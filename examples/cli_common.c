#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
