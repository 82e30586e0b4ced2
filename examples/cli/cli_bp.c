/* parvis stereo --method bp: the belief-propagation option-table entries
 * and the front end's defaults, kept apart from cli_stereo.c. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int parse_tile(const char *value, void *field)
{
    pv_bp_params *bp = field;
    int width = 0, height = 0;
    /* the library's lower bound on a tile side (pv_bp_params.tile_width) */
    if (cli_parse_size2(value, 1 << 20, &width, &height) != 0 || width < 16 || height < 16)
        return -1;
    bp->tile_width = width;
    bp->tile_height = height;
    return 0;
}

void cli_bp_options(pv_bp_params *bp, unsigned bp_bit, cli_option *entries)
{
    const cli_option table[] = {
        {.name = "--levels", .kind = CLI_INT, .field = &bp->levels, .min = 1, .max = 16,
         .value_name = "L", .methods = bp_bit,
         .help = "pyramid levels; 2^(L-1) must not exceed the smaller image side"},
        {.name = "--iterations", .kind = CLI_INT, .field = &bp->iterations, .min = 1,
         .max = 1 << 20, .value_name = "I", .methods = bp_bit,
         .help = "message rounds per level"},
        {.name = "--lambda", .kind = CLI_FLOAT, .field = &bp->lambda, .min = 0, .open_min = 1,
         .max = 1e6, .value_name = "F", .methods = bp_bit, .help = "data-cost weight"},
        {.name = "--data-max", .kind = CLI_FLOAT, .field = &bp->data_max, .min = 0,
         .open_min = 1, .max = 1e6, .value_name = "F", .methods = bp_bit,
         .help = "data-cost truncation (grey levels)"},
        {.name = "--disc-max", .kind = CLI_FLOAT, .field = &bp->disc_max, .min = 0,
         .open_min = 1, .max = 1e6, .value_name = "F", .methods = bp_bit, .no_default = 1,
         .help = "smoothness truncation (disparities); default max(1.7, ndisp/7.5)"},
        {.name = "--sigma", .kind = CLI_FLOAT, .field = &bp->sigma, .min = 0, .max = 100,
         .value_name = "F", .methods = bp_bit, .help = "Gaussian pre-smoothing, 0 = none"},
        {.name = "--tile", .kind = CLI_CUSTOM, .field = bp, .parse = parse_tile,
         .value_name = "WxH", .expect = "WxH, both in 16..1048576", .methods = bp_bit,
         .no_default = 1,
         .help = "cut the image into tiles of this size (default: only when memory needs it)"},
        {.name = "--tile-padding", .kind = CLI_INT, .field = &bp->tile_padding, .min = 0,
         .max = 1 << 20, .value_name = "P", .methods = bp_bit,
         .help = "pixels of context around each tile"},
        {.name = "--message-update", .kind = CLI_CHOICE, .field = &bp->message_update,
         .choices = "serial|cooperative", .value_name = "serial|cooperative", .methods = bp_bit,
         .help = "messages normalised by their mean (serial), or by their minimum, which "
                 "OpenCL computes with a work-group per pixel (cooperative; faster for wide "
                 "ranges)"},
        {.name = "--message-precision", .kind = CLI_CHOICE, .field = &bp->message_precision,
         .choices = "f32|f16", .value_name = "f32|f16", .methods = bp_bit,
         .help = "messages stored as float32, or as IEEE half (f16: half the message memory "
                 "and traffic; identical disparities on >= 99.5% of pixels, measured 100%)"},
    };
    /* the caller sizes its table with CLI_BP_OPTION_COUNT: it must count these */
    _Static_assert(CLI_COUNT(table) == CLI_BP_OPTION_COUNT,
                   "CLI_BP_OPTION_COUNT must be the number of BP options");
    memcpy(entries, table, sizeof table);
}

/* The paper's 1.7 suits ranges up to ~16 disparities; wider ranges need a
 * truncation that grows with them (docs/stereo-cli.md has the sweep). */
void cli_bp_derive_defaults(const cli_command *command, int ndisp, pv_bp_params *bp)
{
    if (cli_given(command, "--disc-max"))
        return;
    float scaled = pv_bp_recommended_disc_max(ndisp);
    bp->disc_max = scaled > 1.7f ? scaled : 1.7f;
}

pv_status cli_bp_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sad_params *range, const pv_bp_params *options, pv_image *disparity)
{
    pv_bp_params bp = *options;
    bp.min_disp = range->min_disp;
    bp.ndisp = range->ndisp;
    return pv_stereo_bp(ctx, left, right, &bp, disparity);
}

pv_status cli_bp_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                           const pv_sad_params *range, const pv_bp_params *options,
                           pv_image *disparity)
{
    pv_bp_params bp = *options;
    bp.min_disp = range->min_disp;
    bp.ndisp = range->ndisp;
    return pv_stereo_bp_group(group, left, right, &bp, disparity);
}
