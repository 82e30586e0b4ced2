/* The option-table parser of the command-line programs: every option is
 * declared once (name, kind, field, range, help) and this file parses,
 * range-checks and prints --help from the declarations. */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int cli_parse_device_field(const char *value, void *field)
{
    return cli_parse_device(value, field);
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

/* How the user invokes the command: "parvis stereo" or "parvis-bench". */
static const char *invocation(const cli_command *c, char *out, size_t size)
{
    if (c->program)
        snprintf(out, size, "%s", c->program);
    else
        snprintf(out, size, "parvis %s", c->name);
    return out;
}

static int take_positional(cli_command *c, const char *arg, int *count)
{
    char how[80];
    if (arg[0] == '-' && arg[1] != '\0')
        return cli_fail("%s: unknown option '%s' (see '%s --help')", c->name, arg,
                        invocation(c, how, sizeof how));
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

/* A table with an unnamed entry (a slot left empty) or a name twice (one
 * entry written over another's place) is a programming error: refused
 * before anything is parsed, so that it cannot go unnoticed. */
static int check_table(const cli_command *c)
{
    for (int k = 0; k < c->option_count; k++) {
        const char *name = c->options[k].name;
        if (!name || name[0] != '-')
            return cli_fail("%s: internal error: option table entry %d has no name", c->name, k);
        for (int j = 0; j < k; j++)
            if (strcmp(c->options[j].name, name) == 0)
                return cli_fail("%s: internal error: option %s is in the table twice", c->name,
                                name);
    }
    return 0;
}

int cli_parse(cli_command *c, int argc, char **argv)
{
    if (check_table(c))
        return CLI_ERROR;
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
    char how[80];
    if (count < c->min_positional)
        return cli_fail("%s: needs %s (see '%s --help')", c->name, c->synopsis,
                        invocation(c, how, sizeof how));
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
    char head[160], range[96] = "", def[96], only[96] = "";
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
    char how[80];
    fprintf(out, "usage: %s %s\n\n%s\n\noptions:\n", invocation(c, how, sizeof how), c->synopsis,
            c->summary);
    for (int k = 0; k < c->option_count; k++)
        print_option(c, &c->options[k], out);
    fprintf(out, "  %-24s %s\n", "-h, --help", "this help");
    if (c->conventions)
        fprintf(out, "\noutput conventions:\n%s", c->conventions);
}

