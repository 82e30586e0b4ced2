/* Helpers shared by the command-line programs parvis and parvis-bench:
 * one-line error messages, strict number parsing, the context from
 * --backend/--device/--crosscheck, --devices lists, a monotonic clock,
 * JSON strings and the known 2D flow both synthesise. */
#include "tool.h"
#include "progress.h"
#include "../../lib/core/stderr_line.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int cli_fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    cli_progress_close();
    pv_stderr_vline(fmt, args); /* the library's own line writer: one write */
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

static int contains_ignoring_case(const char *text, const char *part)
{
    size_t length = strlen(part);
    for (; *text; text++)
        if (strncasecmp(text, part, length) == 0)
            return 1;
    return 0;
}

int cli_parse_device(const char *text, int *index)
{
    if (cli_parse_int(text, 0, 1023, index) == 0)
        return 0;
    pv_device_info devices[CLI_MAX_DEVICES];
    int count = 0;
    if (!*text || pv_device_list(devices, CLI_MAX_DEVICES, &count) != PV_OK)
        return -1;
    for (int i = 0; i < count && i < CLI_MAX_DEVICES; i++)
        if (contains_ignoring_case(devices[i].name, text)) {
            *index = i;
            return 0;
        }
    return -1;
}

void cli_backend_options_default(cli_backend_options *options)
{
    options->backend = PV_BACKEND_AUTO;
    options->device_index = -1;
    options->crosscheck = 0;
    options->progress = 0;
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
    cli_progress_attach(ctx, options->progress);
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

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when the
 * byte at s does not start one: a stray continuation byte, a truncated
 * sequence, an overlong form, a UTF-16 surrogate or a code point above
 * U+10FFFF (RFC 3629's table of well-formed sequences). */
static int utf8_sequence_length(const unsigned char *s)
{
    const unsigned char c = s[0];
    int length;
    unsigned char low = 0x80, high = 0xbf; /* the range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        length = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        length = 3;
        low = c == 0xe0 ? 0xa0 : 0x80;
        high = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        length = 4;
        low = c == 0xf0 ? 0x90 : 0x80;
        high = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (s[1] < low || s[1] > high)
        return 0;
    for (int k = 2; k < length; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return length;
}

void cli_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    while (*p) {
        int length = utf8_sequence_length(p);
        if (length == 0) { /* not UTF-8 (a file name's raw byte): U+FFFD */
            fputs("\\ufffd", out);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)length, out);
            p += length;
        }
    }
    fputc('"', out);
}

void cli_json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.9g", value);
    else
        fprintf(out, "null");
}

/* ------------------------------------------------------------ known flow */

/* A smooth known field of largest magnitude about `magnitude` px: a slow
 * sinusoidal shear plus a small rotation and zoom about the centre. */
void cli_synth_flow_truth(pv_flow_field *truth, float magnitude)
{
    const int nx = truth->u.nx, ny = truth->u.ny;
    const float two_pi = 6.28318531f, cx = 0.5f * (float)(nx - 1), cy = 0.5f * (float)(ny - 1);
    const float side = (float)(nx > ny ? nx : ny);
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            float rx = ((float)x - cx) / side, ry = ((float)y - cy) / side;
            float u = 0.6f * sinf(two_pi * (float)y / (float)ny + 0.5f) + 0.8f * (0.5f * rx - ry);
            float v = 0.6f * cosf(two_pi * (float)x / (float)nx + 1.0f) + 0.8f * (rx + 0.5f * ry);
            truth->u.data[(ptrdiff_t)y * truth->u.stride_y + x] = magnitude * u;
            truth->v.data[(ptrdiff_t)y * truth->v.stride_y + x] = magnitude * v;
        }
}

