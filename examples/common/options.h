/* The option tables of the command-line programs (parvis, parvis-bench):
 * every option declared once, parsed, range-checked and described in
 * --help by one parser (options.c). */
#ifndef PV_OPTIONS_H
#define PV_OPTIONS_H

#include <stdio.h>

#include "tool.h"

/* ------------------------------------------------------- option tables
 *
 * Every command declares its options in a table read by one parser
 * (cli_parse): the same checks, range messages and --help text for all.
 * An option that does not apply to the chosen method (stereo's --window
 * with --method bp, say) is an error, never silently ignored. */
typedef enum cli_kind {
    CLI_FLAG,   /* int field set to 1 */
    CLI_INT,    /* int field in [min, max] */
    CLI_FLOAT,  /* float field in [min, max]; min excluded when open_min */
    CLI_TEXT,   /* const char * field (a path, a name) */
    CLI_CHOICE, /* int field: index of the value among choices "a|b|c" */
    CLI_CUSTOM, /* parse(value, field) == 0; `expect` says what is accepted */
    CLI_DECLARED /* a parameter the library declares (include/parvis/params.h): field is
                  * the parameter structure; type, range, default and help come from
                  * the declaration (cli_declared fills the entry) */
} cli_kind;

typedef struct cli_option {
    const char *name;        /* "--ndisp", "-o" */
    cli_kind kind;
    void *field;
    double min, max;         /* CLI_INT, CLI_FLOAT */
    int open_min;            /* CLI_FLOAT: value must be > min */
    const char *value_name;  /* "N", "PATH" ... in the help */
    const char *help;        /* one sentence; range and default are appended */
    const char *choices;     /* CLI_CHOICE: "sad|bp" */
    const char *expect;      /* CLI_CUSTOM: the accepted form, for messages */
    int (*parse)(const char *value, void *field);
    unsigned methods;        /* bit i: applies to method i; 0: to all */
    int required;
    int no_default;          /* the field's initial value is not a default to show */
    int given;               /* set by cli_parse */
    int declared_op;         /* CLI_DECLARED: the operation's number */
    const char *declared;    /* CLI_DECLARED: the parameter's name */
    size_t params_size;      /* CLI_DECLARED: sizeof the structure at field */
    int declared_flag;       /* CLI_DECLARED BOOL: the option takes no value and sets
                              * the parameter to this (1 for --x, 0 for --no-x) */
} cli_option;

/* The table entry of a declared parameter `param` of operation `op`
 * ("sgm", "p1"), stored in the structure `params` of `size` bytes: the
 * option is "--" + the name with '-' for '_' (a BOOL that defaults to 1
 * becomes the flag "--no-" + name, one that defaults to 0 the flag "--" +
 * name); value name, range, default and help are the declaration's.
 * An unknown operation or parameter is a programming error: the entry is
 * left without a name, which cli_parse refuses. */
cli_option cli_declared(const char *op, const char *param, void *params, size_t size,
                        unsigned methods);
/* A declared parameter's range as --help shows it ("1..1024", "> 0",
 * "4|8"); parvis params prints the same. */
void cli_declared_range(const pv_param_info *info, char *out, size_t size);


typedef struct cli_command {
    const char *name;        /* "stereo" */
    const char *program;     /* NULL: a subcommand of parvis; else a program of its own
                              * ("parvis-bench"), invoked without a command name */
    const char *synopsis;    /* "LEFT RIGHT [options]" */
    const char *summary;     /* what the command does */
    const char *conventions; /* the output's conventions, printed by --help */
    cli_option *options;
    int option_count;
    const char **positional; /* filled in order */
    int min_positional, max_positional;
    int *positional_count;   /* may be NULL */
    const char *const *method_names; /* names of the method bits, or NULL */
    const int *method;       /* the chosen method's index after parsing */
} cli_command;

enum { CLI_PARSED = 0, CLI_ERROR = 1, CLI_HELP = 2 };

/* Parse argv[1..] (argv[0] is the command name).  CLI_HELP after printing
 * the help on stdout (for --help / -h anywhere); CLI_ERROR after printing
 * the message on stderr. */
int cli_parse(cli_command *command, int argc, char **argv);
/* The exit status for a cli_parse result: 0 for help, 1 for an error. */
int cli_parse_exit(int parsed);
/* 1 when the option (by name) was on the command line. */
int cli_given(const cli_command *command, const char *name);
void cli_print_help(const cli_command *command, FILE *out);

/* Table entries of the options every command takes. */
int cli_parse_backend_field(const char *value, void *field);
int cli_parse_devices_field(const char *value, void *field);
int cli_parse_device_field(const char *value, void *field);
#define CLI_BACKEND_ENTRIES(options)                                                       \
    {.name = "--backend", .kind = CLI_CUSTOM, .field = &(options)->backend,                \
     .value_name = "auto|cpu|opencl", .expect = "auto, cpu or opencl",                   \
     .parse = cli_parse_backend_field, .no_default = 1,                                   \
     .help = "backend (default auto: the first OpenCL GPU, else the CPU)"},              \
    {.name = "--device", .kind = CLI_CUSTOM, .field = &(options)->device_index,          \
     .value_name = "I|NAME", .expect = "a device index or part of a device's name",      \
     .parse = cli_parse_device_field, .no_default = 1,                                   \
     .help = "OpenCL device: index or part of its name (see 'parvis devices')"},         \
    {.name = "--crosscheck", .kind = CLI_FLAG, .field = &(options)->crosscheck,           \
     .help = "run the CPU backend too and fail when the results disagree"}
#define CLI_DEVICES_ENTRY(devices, applies)                                                \
    {.name = "--devices", .kind = CLI_CUSTOM, .field = (devices), .value_name = "all|LIST", \
     .expect = "'all' or device indices such as 0,1", .parse = cli_parse_devices_field,  \
     .methods = (applies),                                                                \
     .help = "spread the work over several OpenCL devices ('all': the platform's)"}
/* --time, the same in every command that runs an operation: the library's
 * times of the calls (pv_context_last_timing), as text or in the --json line */
#define CLI_TIME_ENTRY(want_time)                                                          \
    {.name = "--time", .kind = CLI_FLAG, .field = (want_time),                            \
     .help = "print the time the library's calls took (with --json: in the JSON line)"}
#define CLI_COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* "WxH" with both sides in 1..max. */
int cli_parse_size2(const char *text, int max, int *width, int *height);
/* "AxBxC" with each in 1..max. */
int cli_parse_size3(const char *text, int max, int size[3]);

#endif
