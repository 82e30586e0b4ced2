/* Shared helpers of the parvis command-line tool and parvis-bench:
 * argument scanning, context creation from --backend/--device, and
 * one-line error reporting. */
#ifndef PV_CLI_H
#define PV_CLI_H

#include <stdio.h>

#include "parvis.h"

/* Print "parvis: <message>" on stderr and return 1 (the exit status). */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a failed library call: appends the library's message. */
int cli_fail_status(pv_status status, const char *what);

/* Parse numbers strictly (whole string, in range).  0 on success. */
int cli_parse_int(const char *text, int min, int max, int *out);
int cli_parse_float(const char *text, float *out);
int cli_parse_backend(const char *text, pv_backend_kind *out);

/* Options every command takes. */
typedef struct cli_backend_options {
    pv_backend_kind backend;
    int device_index;
    int crosscheck;
} cli_backend_options;

void cli_backend_options_default(cli_backend_options *options);
/* If argv[*i] is --backend/--device/--crosscheck, consume it (and its value)
 * and return 1; return -1 on a bad value (message printed), 0 otherwise.
 * (parvis-bench's scanner; the parvis commands use cli_parse.) */
int cli_take_backend_option(int argc, char **argv, int *i, cli_backend_options *options);
/* Create a context; prints the error and returns NULL on failure. */
pv_context *cli_context(const cli_backend_options *options);

/* --devices all|LIST: the multi-device option of octreg, flow and
 * stereo --method bp. */
#define CLI_MAX_DEVICES 64
/* "all" (*count = 0: every device of the chosen platform) or a comma list
 * of device indices such as "0,2,3" (repeats allowed).  0 on success. */
int cli_parse_devices(const char *text, int *indices, int capacity, int *count);
/* A device group from --backend/--crosscheck and a --devices value;
 * prints the error and returns NULL on failure. */
pv_device_group *cli_device_group(const cli_backend_options *options, const char *devices);
/* "N devices: name (k items, t ms), ..." for the group's last call. */
void cli_print_group_split(FILE *out, pv_device_group *group);

/* Monotonic clock in milliseconds. */
double cli_now_ms(void);

/* The value following argv[*i] (advancing *i), or NULL with a message. */
const char *cli_value(int argc, char **argv, int *i);

/* Write s as a JSON string literal. */
void cli_json_string(FILE *out, const char *s);

/* Disparity map as an 8-bit picture: d scaled from [lo, hi] to 0..255,
 * invalid pixels black. */
int cli_write_disparity_png(const char *path, const pv_image *disparity, float lo, float hi);

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
    CLI_CUSTOM  /* parse(value, field) == 0; `expect` says what is accepted */
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
} cli_option;

typedef struct cli_command {
    const char *name;        /* "stereo" */
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
#define CLI_BACKEND_ENTRIES(options)                                                       \
    {.name = "--backend", .kind = CLI_CUSTOM, .field = &(options)->backend,                \
     .value_name = "auto|cpu|opencl", .expect = "auto, cpu or opencl",                   \
     .parse = cli_parse_backend_field, .no_default = 1,                                   \
     .help = "backend (default auto: the first OpenCL GPU, else the CPU)"},              \
    {.name = "--device", .kind = CLI_INT, .field = &(options)->device_index, .min = 0,    \
     .max = 1023, .value_name = "I", .no_default = 1,                                     \
     .help = "OpenCL device index (see 'parvis devices')"},                              \
    {.name = "--crosscheck", .kind = CLI_FLAG, .field = &(options)->crosscheck,           \
     .help = "run the CPU backend too and fail when the results disagree"}
#define CLI_DEVICES_ENTRY(devices, applies)                                                \
    {.name = "--devices", .kind = CLI_CUSTOM, .field = (devices), .value_name = "all|LIST", \
     .expect = "'all' or device indices such as 0,1", .parse = cli_parse_devices_field,  \
     .methods = (applies),                                                                \
     .help = "spread the work over several OpenCL devices ('all': the platform's)"}
#define CLI_COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* "WxH" with both sides in 1..max. */
int cli_parse_size2(const char *text, int max, int *width, int *height);
/* "AxBxC" with each in 1..max. */
int cli_parse_size3(const char *text, int max, int size[3]);

/* pv_image_read, with the library's message on failure; verbose: a note
 * on stderr of the file's format, size and sample depth and, for colour
 * files, the conversion to grey (Rec. 601 luma), from pv_image_read_info.
 * 0 on success. */
int cli_read_image(const char *path, pv_pixel_type type, int verbose, pv_image *out);

/* The known 2D flow of `parvis synth-flow` and the 2D flow bench, of
 * largest magnitude about `magnitude` px: a slow sinusoidal shear plus a
 * small rotation and zoom about the centre.  Fills u and v of a field with
 * nz = 1 (bench/peers/peers.py rebuilds it the same way). */
void cli_synth_flow_truth(pv_flow_field *truth, float magnitude);

/* Subcommands of the parvis tool. */
int cli_stereo(int argc, char **argv);
int cli_phasecorr(int argc, char **argv);
int cli_ncc(int argc, char **argv);
int cli_octreg(int argc, char **argv);
int cli_synth_oct(int argc, char **argv);
int cli_flow(int argc, char **argv);
int cli_synth_flow(int argc, char **argv);
int cli_sift(int argc, char **argv);
int cli_match(int argc, char **argv);
int cli_tune(int argc, char **argv);

/* cli_bp.c: `stereo --method bp`: its option-table entries (method bit
 * `bp_bit`), the front end's defaults for what the user left unset, the
 * memory report, and the run with range's min_disp and ndisp. */
#define CLI_BP_OPTION_COUNT 8
void cli_bp_options(pv_bp_params *bp, unsigned bp_bit, cli_option *entries);
/* disc_max from the range unless --disc-max was given. */
void cli_bp_derive_defaults(const cli_command *command, int ndisp, pv_bp_params *bp);
pv_status cli_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sad_params *range, const pv_bp_params *options, pv_image *disparity);
/* The same with the tiles spread over a device group (--devices). */
pv_status cli_bp_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                           const pv_sad_params *range, const pv_bp_params *options,
                           pv_image *disparity);

#endif
