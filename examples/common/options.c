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
/* ------------------------------------------------- declared parameters */

static int declared_info(const cli_option *o, pv_param_info *info)
{
    int param = -1;
    return pv_op_find_param(o->declared_op, o->declared, &param) == PV_OK &&
                   pv_op_param(o->declared_op, param, info) == PV_OK
               ? 0
               : -1;
}

static void choice_names(const char *choices, char *out, size_t size);

/* Option names live as long as the program: a small pool of them. */
static const char *option_name(const char *prefix, const char *param)
{
    static char pool[64][48];
    static int used;
    if (used == 64)
        return NULL;
    char *name = pool[used++];
    snprintf(name, sizeof pool[0], "%s%s", prefix, param);
    for (char *s = name + strlen(prefix); *s; s++)
        if (*s == '_')
            *s = '-';
    return name;
}

cli_option cli_declared(const char *op, const char *param, void *params, size_t size,
                        unsigned methods)
{
    cli_option o = {.kind = CLI_DECLARED, .field = params, .params_size = size,
                    .methods = methods, .declared = param};
    pv_param_info info;
    if (pv_op_find(op, &o.declared_op) != PV_OK || declared_info(&o, &info) != 0)
        return o; /* no name: refused by check_table */
    o.help = info.help;
    if (info.type == PV_PARAM_BOOL) {
        o.declared_flag = info.default_value == 0.0;
        o.name = option_name(o.declared_flag ? "--" : "--no-", param);
        return o;
    }
    o.name = option_name("--", param);
    o.value_name = info.type == PV_PARAM_INT ? "N" : "X";
    if (info.type == PV_PARAM_CHOICE) {
        static char names[16][64];
        static int used;
        if (used < 16) {
            choice_names(info.choices, names[used], sizeof names[0]);
            o.value_name = names[used++];
        }
    }
    return o;
}

/* "a|b|c" of a declared CHOICE's "a=0|b=1|c=2". */
static void choice_names(const char *choices, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *s = choices; *s && n + 1 < size; s++) {
        if (*s == '=') {
            while (*s && *s != '|')
                s++;
            if (!*s)
                break;
        }
        out[n++] = *s;
    }
    out[n] = '\0';
}

void cli_declared_range(const pv_param_info *i, char *out, size_t size)
{
    const char *lower = (i->flags & PV_PARAM_MIN_EXCLUSIVE) ? ">" : ">=";
    if (i->type == PV_PARAM_CHOICE)
        choice_names(i->choices, out, size);
    else if (i->type == PV_PARAM_INT && i->max >= 9e15)
        snprintf(out, size, ">= %.17g", i->min);
    else if (i->type == PV_PARAM_INT)
        snprintf(out, size, "%.17g..%.17g", i->min, i->max);
    else if (i->max >= 1e30)
        snprintf(out, size, "%s %g", lower, i->min);
    else if (i->flags & PV_PARAM_MIN_EXCLUSIVE)
        snprintf(out, size, "> %g and <= %g", i->min, i->max);
    else
        snprintf(out, size, "%g..%g", i->min, i->max);
}

/* The value of a CHOICE as its name, else the number. */
static void format_declared_value(const pv_param_info *i, double value, char *out, size_t size)
{
    snprintf(out, size, "%g", value);
    if (i->type != PV_PARAM_CHOICE)
        return;
    for (const char *s = i->choices; s && *s;) {
        const char *eq = strchr(s, '='), *bar = strchr(s, '|');
        if (!eq)
            return;
        if (strtod(eq + 1, NULL) == value) {
            snprintf(out, size, "%.*s", (int)(eq - s), s);
            return;
        }
        if (!bar)
            return;
        s = bar + 1;
    }
}

static void format_range(const cli_option *o, char *out, size_t size)
{
    pv_param_info info;
    if (o->kind == CLI_DECLARED) {
        out[0] = '\0';
        if (declared_info(o, &info) == 0 && info.type != PV_PARAM_BOOL)
            cli_declared_range(&info, out, size);
        return;
    }
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
    case CLI_DECLARED:
        return cli_fail("%s %s '%s': %s", c->name, o->name, value, pv_last_error());
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
    case CLI_DECLARED:
        return pv_params_parse(o->declared_op, o->field, o->params_size, o->declared, value) ==
                       PV_OK
                   ? 0
                   : -1;
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
        if (o->kind == CLI_DECLARED && !o->value_name) { /* a declared BOOL's flag */
            if (pv_params_set(o->declared_op, o->field, o->params_size, o->declared,
                              o->declared_flag) != PV_OK)
                return cli_fail("%s %s: %s", c->name, o->name, pv_last_error());
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
    case CLI_DECLARED: {
        pv_param_info info;
        double value = 0;
        if (declared_info(o, &info) != 0 || info.type == PV_PARAM_BOOL ||
            pv_params_get(o->declared_op, o->field, o->params_size, o->declared, &value) != PV_OK)
            break;
        char text[64];
        format_declared_value(&info, value, text, sizeof text);
        snprintf(out, size, "default %s", text);
        break;
    }
    default: break;
    }
}

static void print_option(const cli_command *c, const cli_option *o, FILE *out)
{
    char head[160], range[96] = "", def[96], only[96] = "";
    const int flag = o->kind == CLI_FLAG || (o->kind == CLI_DECLARED && !o->value_name);
    snprintf(head, sizeof head, "%s%s%s", o->name, flag ? "" : " ", flag ? "" : o->value_name);
    if (o->kind == CLI_INT || o->kind == CLI_FLOAT || o->kind == CLI_DECLARED)
        format_range(o, range, sizeof range);
    format_default(o, def, sizeof def);
    for (int m = 0; o->methods && c->method_names && c->method_names[m]; m++)
        if (o->methods & (1u << m))
            snprintf(only + strlen(only), sizeof only - strlen(only), "%s%s",
                     only[0] ? "|" : "--method ", c->method_names[m]);
    /* a declared switch that is on by default: its help says what it turns off */
    const int turns_off = o->kind == CLI_DECLARED && flag && !o->declared_flag;
    fprintf(out, "  %-24s %s%s", head, turns_off ? "turns off: " : "", o->help);
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

