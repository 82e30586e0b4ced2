/* Helpers shared by the command-line programs parvis (examples/cli/) and
 * parvis-bench (bench/): one-line error reporting, strict number parsing,
 * context creation from --backend/--device/--crosscheck, --devices lists,
 * a clock, JSON strings and the known 2D flow both synthesise. */
#ifndef PV_TOOL_H
#define PV_TOOL_H

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

/* --device: an index into pv_device_list or a case-blind substring of a
 * device's name (the first device it names), as PARVIS_DEVICE takes it.
 * 0 on success. */
int cli_parse_device(const char *text, int *index);

/* Options every command takes. */
typedef struct cli_backend_options {
    pv_backend_kind backend;
    int device_index;
    int crosscheck;
    int progress; /* --progress (CLI_PROGRESS_ENTRY, progress.h) */
} cli_backend_options;

void cli_backend_options_default(cli_backend_options *options);
/* Create a context, with the progress line of progress.h (forced by
 * options->progress); prints the error and returns NULL on failure. */
pv_context *cli_context(const cli_backend_options *options);

/* --devices all|LIST: the multi-device option of octreg, flow, stereo
 * --method bp and the bench's multi-device cases. */
#define CLI_MAX_DEVICES 64
/* "all" (*count = 0: every device of the chosen platform) or a comma list
 * of device indices such as "0,2,3" (repeats allowed).  0 on success. */
int cli_parse_devices(const char *text, int *indices, int capacity, int *count);

/* Monotonic clock in milliseconds. */
double cli_now_ms(void);

/* Write s as a JSON string literal that is valid UTF-8 whatever s holds:
 * quotes, backslashes and control characters escaped, well-formed UTF-8
 * kept, and each byte that is not part of well-formed UTF-8 (a file name
 * in another encoding, say) written as \ufffd, the replacement
 * character. */
void cli_json_string(FILE *out, const char *s);
/* Write value as a JSON number (9 significant digits), or null when it is
 * not finite (JSON has no NaN or infinity). */
void cli_json_number(FILE *out, double value);

/* The known 2D flow of `parvis synth-flow` and the 2D flow bench, of
 * largest magnitude about `magnitude` px: a slow sinusoidal shear plus a
 * small rotation and zoom about the centre.  Fills u and v of a field with
 * nz = 1 (bench/peers/peers.py rebuilds it the same way). */
void cli_synth_flow_truth(pv_flow_field *truth, float magnitude);

#endif
