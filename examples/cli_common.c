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

/* ------------------------------------------------------------ option tables */

int cli_parse_size2(const char *text, int max, int *width, int *height)
{
    char *end = NULL;
    errno = 0;
    long w = strtol(text, &end, 10);
    if (errno || end == text || *end != 'x' || w < 1 || w > max)
        return -1;
    const char *rest = end + 1;
    long h = strtol(rest, &end, 10);
    if (errno || end == rest || *end || h < 1 || h > max)
        return -1;
    *width = (int)w;
    *height = (int)h;
    return 0;
}

int cli_parse_size3(const char *text, int max, int size[3])
{
    char *end = NULL;
    const char *p = text;
    int out[3];
    for (int a = 0; a < 3; a++) {
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 1 || v > max || (a < 2 && *end != 'x'))
            return -1;
        out[a] = (int)v;
        p = end + 1;
    }
    if (*end)
        return -1;
    memcpy(size, out, sizeof out);
    return 0;
}

int cli_parse_backend_field(const char *value, void *field)
{
    return cli_parse_backend(value, field);
}

int cli_parse_devices_field(const char *value, void *field)
{
    int indices[CLI_MAX_DEVICES], count = 0;
    if (cli_parse_devices(value, indices, CLI_MAX_DEVICES, &count) != 0)
        return -1;
    *(const char **)field = value;
    return 0;
}

/* Index of `value` among "a|b|c", or -1. */
static int choice_index(const char *choices, const char *value)
{
    size_t length = strlen(value);
    int index = 0;
    for (const char *p = choices; *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == length && strncmp(p, value, n) == 0)
            return index;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/* The n-th name of "a|b|c" into out. */
static void choice_name(const char *choices, int n, char *out, size_t size)
{
    const char *p = choices;
    for (int i = 0; i < n && p; i++) {
        p = strchr(p, '|');
        p = p ? p + 1 : NULL;
    }
    const char *bar = p ? strchr(p, '|') : NULL;
    int length = p ? (int)(bar ? (size_t)(bar - p) : strlen(p)) : 0;
    snprintf(out, size, "%.*s", length, p ? p : "");
}

/* Prints the number's range for messages and help: "1..64", "> 0". */
static void format_range(const cli_option *o, char *out, size_t size)
{
    if (o->kind == CLI_INT) {
        snprintf(out, size, "%d..%d", (int)o->min, (int)o->max);
    } else if (o->max >= 1e30) {
        snprintf(out, size, "%s %g", o->open_min ? ">" : ">=", o->min);
    } else {
        snprintf(out, size, "%s%g..%g", o->open_min ? "> " : "", o->min, o->max);
        if (o->open_min)
            snprintf(out, size, "> %g and <= %g", o->min, o->max);
    }
}

static int reject_value(const cli_command *c, const cli_option *o, const char *value)
{
    char what[128];
    switch (o->kind) {
    case CLI_INT:
        format_range(o, what, sizeof what);
        return cli_fail("%s %s '%s': expected an integer in %s", c->name, o->name, value, what);
    case CLI_FLOAT:
        format_range(o, what, sizeof what);
        return cli_fail("%s %s '%s': expected a number, %s", c->name, o->name, value, what);
    case CLI_CHOICE:
        return cli_fail("%s %s '%s': expected one of %s", c->name, o->name, value, o->choices);
    default:
        return cli_fail("%s %s '%s': expected %s", c->name, o->name, value,
                        o->expect ? o->expect : "a value");
    }
}

/* Store value into o's field; 0 on success. */
static int store_value(const cli_option *o, const char *value)
{
    int i = 0;
    float f = 0.0f;
    switch (o->kind) {
    case CLI_INT:
        if (cli_parse_int(value, (int)o->min, (int)o->max, &i))
            return -1;
        *(int *)o->field = i;
        return 0;
    case CLI_FLOAT:
        if (cli_parse_float(value, &f) || f < o->min || (o->open_min && f <= o->min) ||
            f > o->max)
            return -1;
        *(float *)o->field = f;
        return 0;
    case CLI_TEXT:
        *(const char **)o->field = value;
        return 0;
    case CLI_CHOICE:
        i = choice_index(o->choices, value);
        if (i < 0)
            return -1;
        *(int *)o->field = i;
        return 0;
    case CLI_CUSTOM:
        return o->parse(value, o->field);
    case CLI_FLAG:
        break;
    }
    return -1;
}

static cli_option *find_option(cli_command *c, const char *name)
{
    for (int k = 0; k < c->option_count; k++)
        if (strcmp(c->options[k].name, name) == 0)
            return &c->options[k];
    return NULL;
}

int cli_given(const cli_command *command, const char *name)
{
    for (int k = 0; k < command->option_count; k++)
        if (strcmp(command->options[k].name, name) == 0)
            return command->options[k].given;
    return 0;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

static int take_positional(cli_command *c, const char *arg, int *count)
{
    if (arg[0] == '-' && arg[1] != '\0')
        return cli_fail("%s: unknown option '%s' (see 'parvis %s --help')", c->name, arg,
                        c->name);
    if (c->max_positional == 0)
        return cli_fail("%s: takes no arguments, got '%s'", c->name, arg);
    if (*count >= c->max_positional)
        return cli_fail("%s: unexpected argument '%s' (at most %d file%s)", c->name, arg,
                        c->max_positional, c->max_positional == 1 ? "" : "s");
    c->positional[(*count)++] = arg;
    return 0;
}

/* Every given option must apply to the chosen method; required ones given. */
static int check_options(const cli_command *c)
{
    for (int k = 0; k < c->option_count; k++) {
        const cli_option *o = &c->options[k];
        if (o->given && o->methods && c->method && !(o->methods & (1u << *c->method))) {
            char applies[128] = "";
            for (int m = 0; c->method_names && c->method_names[m]; m++)
                if (o->methods & (1u << m))
                    snprintf(applies + strlen(applies), sizeof applies - strlen(applies),
                             "%s%s", applies[0] ? "|" : "", c->method_names[m]);
            return cli_fail("%s: %s applies to --method %s, not %s", c->name, o->name, applies,
                            c->method_names ? c->method_names[*c->method] : "this method");
        }
        if (o->required && !o->given) {
            char range[128] = "";
            if (o->kind == CLI_INT || o->kind == CLI_FLOAT)
                format_range(o, range, sizeof range);
            return cli_fail("%s: %s %s is required%s%s", c->name, o->name, o->value_name,
                            range[0] ? ", " : "", range);
        }
    }
    return 0;
}

int cli_parse(cli_command *c, int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        cli_print_help(c, stdout);
        return CLI_HELP;
    }
    int count = 0;
    for (int i = 1; i < argc; i++) {
        cli_option *o = find_option(c, argv[i]);
        if (!o) {
            if (take_positional(c, argv[i], &count))
                return CLI_ERROR;
            continue;
        }
        o->given = 1;
        if (o->kind == CLI_FLAG) {
            *(int *)o->field = 1;
            continue;
        }
        if (i + 1 >= argc)
            return cli_fail("%s: %s needs a value (%s)", c->name, o->name, o->value_name);
        if (store_value(o, argv[++i]))
            return reject_value(c, o, argv[i]);
    }
    if (c->positional_count)
        *c->positional_count = count;
    if (count < c->min_positional)
        return cli_fail("%s: needs %s (see 'parvis %s --help')", c->name, c->synopsis, c->name);
    return check_options(c) ? CLI_ERROR : CLI_PARSED;
}

int cli_parse_exit(int parsed)
{
    return parsed == CLI_HELP ? 0 : 1;
}

/* "default X" of the field's current value (the parse has not run). */
static void format_default(const cli_option *o, char *out, size_t size)
{
    out[0] = '\0';
    if (o->no_default || o->required)
        return;
    switch (o->kind) {
    case CLI_INT: snprintf(out, size, "default %d", *(const int *)o->field); break;
    case CLI_FLOAT: snprintf(out, size, "default %g", (double)*(const float *)o->field); break;
    case CLI_TEXT:
        if (*(const char *const *)o->field)
            snprintf(out, size, "default %s", *(const char *const *)o->field);
        break;
    case CLI_CHOICE: {
        char name[64];
        choice_name(o->choices, *(const int *)o->field, name, sizeof name);
        snprintf(out, size, "default %s", name);
        break;
    }
    default: break;
    }
}

static void print_option(const cli_command *c, const cli_option *o, FILE *out)
{
    char head[64], range[96] = "", def[96], only[96] = "";
    snprintf(head, sizeof head, "%s%s%s", o->name, o->kind == CLI_FLAG ? "" : " ",
             o->kind == CLI_FLAG ? "" : o->value_name);
    if (o->kind == CLI_INT || o->kind == CLI_FLOAT)
        format_range(o, range, sizeof range);
    format_default(o, def, sizeof def);
    for (int m = 0; o->methods && c->method_names && c->method_names[m]; m++)
        if (o->methods & (1u << m))
            snprintf(only + strlen(only), sizeof only - strlen(only), "%s%s",
                     only[0] ? "|" : "--method ", c->method_names[m]);
    fprintf(out, "  %-24s %s", head, o->help);
    const char *parts[4] = {o->required ? "required" : "", range, def, only};
    int first = 1;
    for (int k = 0; k < 4; k++)
        if (parts[k][0]) {
            fprintf(out, "%s%s", first ? " [" : "; ", parts[k]);
            first = 0;
        }
    fputs(first ? "\n" : "]\n", out);
}

void cli_print_help(const cli_command *c, FILE *out)
{
    fprintf(out, "usage: parvis %s %s\n\n%s\n\noptions:\n", c->name, c->synopsis, c->summary);
    for (int k = 0; k < c->option_count; k++)
        print_option(c, &c->options[k], out);
    fprintf(out, "  %-24s %s\n", "-h, --help", "this help");
    if (c->conventions)
        fprintf(out, "\noutput conventions:\n%s", c->conventions);
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

/* ------------------------------------------------------------------ inputs */

static const char *format_name(pv_image_format format)
{
    switch (format) {
    case PV_IMAGE_FORMAT_PGM: return "PGM";
    case PV_IMAGE_FORMAT_PPM: return "PPM";
    case PV_IMAGE_FORMAT_PFM: return "PFM";
    case PV_IMAGE_FORMAT_PNG: return "PNG";
    case PV_IMAGE_FORMAT_JPEG: return "JPEG";
    }
    return "unknown format";
}

/* --verbose: what the file holds and what reading it as grey did. */
static void describe_image(const char *path, const pv_image_info *info)
{
    const char *what = info->channels >= 3   ? "colour, converted to grey (0.299 R + 0.587 G + 0.114 B)"
                       : info->channels == 2 ? "grey with alpha, alpha dropped"
                                             : "grey";
    fprintf(stderr, "parvis: %s: %s, %dx%d, %d bit%s a sample, %s%s\n", path,
            format_name(info->format), info->width, info->height, info->bits,
            info->bits == 1 ? "" : "s", what,
            info->channels == 4 ? ", alpha dropped" : "");
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
        describe_image(path, &info);
    return 0;
}
