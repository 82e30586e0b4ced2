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
    const size_t size = sizeof *bp;
    const cli_option table[] = {
        /* declared by the library (lib/stereo/stereo_params.c) */
        cli_declared("bp", "levels", bp, size, bp_bit),
        cli_declared("bp", "iterations", bp, size, bp_bit),
        cli_declared("bp", "lambda", bp, size, bp_bit),
        cli_declared("bp", "data_max", bp, size, bp_bit),
        /* not the declared form: the command's default grows with --ndisp
         * (cli_bp_derive_defaults), which a declared default cannot say */
        {.name = "--disc-max", .kind = CLI_FLOAT, .field = &bp->disc_max, .min = 0,
         .open_min = 1, .max = 1e6, .value_name = "F", .methods = bp_bit, .no_default = 1,
         .help = "smoothness truncation (disparities); default max(1.7, ndisp/7.5)"},
        cli_declared("bp", "sigma", bp, size, bp_bit),
        /* a convenience over the declared tile_width and tile_height: both in one WxH */
        {.name = "--tile", .kind = CLI_CUSTOM, .field = bp, .parse = parse_tile,
         .value_name = "WxH", .expect = "WxH, both in 16..1048576", .methods = bp_bit,
         .no_default = 1,
         .help = "cut the image into tiles of this size (default: only when memory needs it)"},
        cli_declared("bp", "tile_padding", bp, size, bp_bit),
        cli_declared("bp", "message_update", bp, size, bp_bit),
        cli_declared("bp", "message_precision", bp, size, bp_bit),
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
