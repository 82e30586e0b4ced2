/* The parvis command-line tool: its subcommands and the helpers only
 * they share (device groups, disparity pictures, image reading).  The
 * option-table parser and the helpers parvis-bench shares with it are in
 * examples/common/. */
#ifndef PV_CLI_H
#define PV_CLI_H

#include <stdio.h>

#include "../common/colormap.h"
#include "../common/options.h"
#include "../common/outputs.h"
#include "../common/progress.h"
#include "../common/tool.h"

/* A device group from --backend/--crosscheck and a --devices value, with
 * the progress line (--progress) on its first context; prints the error
 * and returns NULL on failure. */
pv_device_group *cli_device_group(const cli_backend_options *options, const char *devices);
/* "N devices: name (k items, t ms), ..." for the group's last call. */
void cli_print_group_split(FILE *out, pv_device_group *group);

/* Disparity map as a picture, d from [lo, hi]: CLI_DISPARITY_MAP_TURBO
 * colours it (RGB, examples/common/colormap.h), CLI_DISPARITY_MAP_GRAY
 * scales it to 0..255 (grey); invalid pixels black in both. */
enum { CLI_DISPARITY_MAP_TURBO, CLI_DISPARITY_MAP_GRAY };
int cli_write_disparity_png(const char *path, const pv_image *disparity, float lo, float hi,
                            int map);

/* pv_image_read, with the library's message on failure; verbose: a note
 * on stderr of the file's format, size and sample depth and, for colour
 * files, the conversion to grey (Rec. 601 luma), from pv_image_read_info.
 * 0 on success. */
int cli_read_image(const char *path, pv_pixel_type type, int verbose, pv_image *out);

/* 1 when the name ends in .tif or .tiff (case ignored): a multi-page TIFF
 * that the volume commands read with pv_volume_read_tiff. */
int cli_is_tiff_name(const char *path);
/* The sample type of --raw-type's choice index ("f32|u16": 0, 1). */
pv_volume_type cli_raw_type(int choice);
/* Both of files[0] and files[1] into pair[0] and pair[1] (neither on
 * failure).  0 on success; cli_free_image_pair frees both. */
int cli_read_image_pair(const char *const files[2], pv_pixel_type type, int verbose,
                        pv_image pair[2]);
void cli_free_image_pair(pv_image pair[2]);

/* The known 2D flow of `parvis synth-flow` and the 2D flow bench, of
 * largest magnitude about `magnitude` px: a slow sinusoidal shear plus a
 * small rotation and zoom about the centre.  Fills u and v of a field with
 * nz = 1 (bench/peers/peers.py rebuilds it the same way). */
void cli_synth_flow_truth(pv_flow_field *truth, float magnitude);

/* cli_features_draw.c: `match --draw`.  segments[i] = {x1, y1, x2, y2} of
 * match i (IMG1 and IMG2 pixels); keep: draw match i only where keep[i]
 * is non-zero (NULL: all); homography: H of IMG1 to IMG2, whose image of
 * IMG1's outline is drawn, or NULL. */
typedef struct cli_match_drawing {
    const char *images[2];
    const float (*segments)[4];
    const unsigned char *keep;
    int count;
    const double *homography;
} cli_match_drawing;
/* The picture (RGB PNG, through cli_output_path): IMG1 and IMG2 side by
 * side in grey, a coloured line per drawn match.  0, or 1 after a message. */
int cli_draw_matches(const char *path, const cli_match_drawing *drawing);

/* Subcommands of the parvis tool. */
int cli_stereo(int argc, char **argv);
int cli_params(int argc, char **argv);
int cli_phasecorr(int argc, char **argv);
int cli_ncc(int argc, char **argv);
int cli_octreg(int argc, char **argv);
int cli_synth_oct(int argc, char **argv);
int cli_flow(int argc, char **argv);
int cli_synth_flow(int argc, char **argv);
int cli_sift(int argc, char **argv);
int cli_match(int argc, char **argv);
int cli_tune(int argc, char **argv);

/* cli_stereo_bp.c: `stereo --method bp`: its option-table entries (method bit
 * `bp_bit`), the front end's defaults for what the user left unset, the
 * memory report, and the run with range's min_disp and ndisp. */
#define CLI_BP_OPTION_COUNT 10 /* checked at compile time in cli_stereo_bp.c */
/* Fills entries[0 .. CLI_BP_OPTION_COUNT - 1]. */
void cli_bp_options(pv_bp_params *bp, unsigned bp_bit, cli_option *entries);
/* disc_max from the range unless --disc-max was given. */
void cli_bp_derive_defaults(const cli_command *command, int ndisp, pv_bp_params *bp);
pv_status cli_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sad_params *range, const pv_bp_params *options, pv_image *disparity);
/* The same with the tiles spread over a device group (--devices). */
pv_status cli_bp_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                           const pv_sad_params *range, const pv_bp_params *options,
                           pv_image *disparity);

/* cli_stereo_sgm.c: `stereo --method sgm`: its option-table entries (method bit
 * `sgm_bit`), writing into args; the options it shares with sad
 * (--uniqueness, --lr-check, --lr-max-diff) are parsed into the SAD
 * parameters and carried over, with SGM's ranges, by cli_sgm_finish. */
#define CLI_SGM_OPTION_COUNT 11
typedef struct cli_sgm_args {
    pv_sgm_params params;
    int plain_census; /* --census-plain: census_symmetric off */
} cli_sgm_args;
void cli_sgm_options(cli_sgm_args *args, unsigned sgm_bit, cli_option *entries);
/* After parsing: the off flags and the shared options applied, the
 * cross-field rules (P2 >= P1) checked.  0, or 1 after the message. */
int cli_sgm_finish(const cli_command *command, const pv_sad_params *shared, cli_sgm_args *args);
/* The call's memory need for range's min_disp and ndisp; printed when
 * verbose; 1 after a message when the estimate refuses the arguments. */
int cli_sgm_report_memory(const pv_sad_params *range, const pv_sgm_params *options, int width,
                          int height, int verbose);
/* The run with range's min_disp and ndisp; confidence may be NULL. */
pv_status cli_sgm_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                      const pv_sad_params *range, const pv_sgm_params *options,
                      pv_image *disparity, pv_image *confidence);
/* The same in bands over a device group (--devices), without confidence. */
pv_status cli_sgm_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                            const pv_sad_params *range, const pv_sgm_params *options,
                            pv_image *disparity);

/* cli_stereo_sgm_batch.c: `stereo --method sgm --batch LIST`: the list's pairs
 * (a line "LEFT RIGHT OUT.pfm" each) through pv_stereo_sgm_batch a few at
 * a time, each disparity written to its OUT, a progress line on stderr
 * after each call, and with want_time or want_json the whole run's time
 * and pairs per second.  0, or 1 after a message. */
typedef struct cli_sgm_batch_run {
    const char *list;
    pv_sgm_params params; /* min_disp and ndisp set */
    const pv_sad_params *sad; /* SAD's parameters: the list goes through
                                 pv_stereo_sad_batch instead; NULL: SGM */
    int verbose, want_time, want_json;
} cli_sgm_batch_run;
int cli_sgm_batch(pv_context *ctx, const cli_sgm_batch_run *run);

#endif
