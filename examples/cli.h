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
 * and return 1; return -1 on a bad value (message printed), 0 otherwise. */
int cli_take_backend_option(int argc, char **argv, int *i, cli_backend_options *options);
/* Create a context; prints the error and returns NULL on failure. */
pv_context *cli_context(const cli_backend_options *options);

/* --devices all|LIST: the multi-device option of octreg, flow and
 * stereo --method bp. */
#define CLI_MAX_DEVICES 64
/* "all" (*count = 0: every device of the chosen platform) or a comma list
 * of device indices such as "0,2,3" (repeats allowed).  0 on success. */
int cli_parse_devices(const char *text, int *indices, int capacity, int *count);
/* If argv[*i] is --devices, consume it and its checked value into *devices
 * and return 1; -1 on a bad value (message printed), 0 otherwise. */
int cli_take_devices_option(int argc, char **argv, int *i, const char **devices);
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

/* Subcommands of the parvis tool. */
int cli_stereo(int argc, char **argv);
int cli_phasecorr(int argc, char **argv);
int cli_ncc(int argc, char **argv);
int cli_octreg(int argc, char **argv);
int cli_synth_oct(int argc, char **argv);
int cli_flow(int argc, char **argv);
int cli_sift(int argc, char **argv);
int cli_match(int argc, char **argv);
int cli_tune(int argc, char **argv);

/* cli_bp.c: `stereo --method bp` options (1 consumed, -1 error, 0 not
 * ours) and the run, with range's min_disp and ndisp. */
int cli_bp_take_option(int argc, char **argv, int *i, pv_bp_params *bp);
pv_status cli_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sad_params *range, const pv_bp_params *options, pv_image *disparity);
/* The same with the tiles spread over a device group (--devices). */
pv_status cli_bp_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                           const pv_sad_params *range, const pv_bp_params *options,
                           pv_image *disparity);

#endif
