/* parvis params [OP] [--json]: what the library declares of every
 * operation's parameters (include/parvis/params.h), the same text the other
 * commands' options and the Python keywords are made from. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *type_name(pv_param_type type)
{
    switch (type) {
    case PV_PARAM_INT: return "int";
    case PV_PARAM_REAL: return "real";
    case PV_PARAM_BOOL: return "bool";
    case PV_PARAM_CHOICE: return "choice";
    }
    return "?";
}

/* A JSON string of s (the declarations hold no control characters, but a
 * quote or backslash is escaped all the same). */
static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void print_param_json(const pv_param_info *p, int last)
{
    printf("    {\"name\": ");
    json_string(p->name);
    printf(", \"type\": \"%s\", \"default\": %.17g, \"min\": %.17g, \"max\": %.17g, "
           "\"min_exclusive\": %s, \"choices\": ",
           type_name(p->type), p->default_value, p->min, p->max,
           (p->flags & PV_PARAM_MIN_EXCLUSIVE) ? "true" : "false");
    if (p->choices)
        json_string(p->choices);
    else
        printf("null");
    printf(", \"unit\": ");
    json_string(p->unit);
    printf(", \"help\": ");
    json_string(p->help);
    printf("}%s\n", last ? "" : ",");
}

static void print_param_text(const pv_param_info *p)
{
    char range[96];
    if (p->type == PV_PARAM_CHOICE) /* with the values, as the C structure holds them */
        snprintf(range, sizeof range, "%s", p->choices);
    else if (p->type == PV_PARAM_BOOL)
        snprintf(range, sizeof range, "0|1");
    else
        cli_declared_range(p, range, sizeof range);
    printf("  %-20s %-6s default %-9g %-24s %s%s%s%s\n", p->name, type_name(p->type),
           p->default_value, range, p->help, p->unit[0] ? " [" : "", p->unit,
           p->unit[0] ? "]" : "");
}

static void print_op(int op, int json, int last)
{
    pv_op_info info;
    if (pv_op_get(op, &info) != PV_OK)
        return;
    if (json) {
        printf("  {\"name\": ");
        json_string(info.name);
        printf(", \"module\": ");
        json_string(info.module);
        printf(", \"params_type\": ");
        json_string(info.params_type);
        printf(", \"summary\": ");
        json_string(info.summary);
        printf(", \"params\": [\n");
    } else {
        printf("%s (%s, %s): %s\n", info.name, info.module, info.params_type, info.summary);
    }
    for (int k = 0; k < info.param_count; k++) {
        pv_param_info p;
        if (pv_op_param(op, k, &p) != PV_OK)
            continue;
        if (json)
            print_param_json(&p, k + 1 == info.param_count);
        else
            print_param_text(&p);
    }
    if (json)
        printf("  ]}%s\n", last ? "" : ",");
}

int cli_params(int argc, char **argv)
{
    const char *op_name = NULL;
    int json = 0, positional = 0;
    cli_option options[] = {
        {.name = "--json", .kind = CLI_FLAG, .field = &json,
         .help = "print the declarations as JSON"},
    };
    cli_command c = {
        .name = "params", .synopsis = "[OP]",
        .summary = "List each operation's declared parameters: name, type, default, range and "
                   "help (the source of every command's options and of the Python keywords).",
        .options = options, .option_count = CLI_COUNT(options), .positional = &op_name,
        .min_positional = 0, .max_positional = 1, .positional_count = &positional};
    int parsed = cli_parse(&c, argc, argv);
    if (parsed != CLI_PARSED)
        return cli_parse_exit(parsed);
    int first = 0, end = pv_op_count();
    if (op_name) {
        if (pv_op_find(op_name, &first) != PV_OK)
            return cli_fail("params: no operation named '%s' (see 'parvis params')", op_name);
        end = first + 1;
    }
    if (json)
        printf("[\n");
    for (int op = first; op < end; op++)
        print_op(op, json, op + 1 == end);
    if (json)
        printf("]\n");
    return 0;
}
