/* parvis stereo --method bp: the belief-propagation options, kept apart
 * from cli_stereo.c, which calls these two functions. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* "WxH" with both in 1..max. */
static int parse_size(const char *text, int *width, int *height)
{
    char w[32], h[32];
    const char *x = strchr(text, 'x');
    if (!x || (size_t)(x - text) >= sizeof w || strlen(x + 1) >= sizeof h)
        return 1;
    memcpy(w, text, (size_t)(x - text));
    w[x - text] = '\0';
    strcpy(h, x + 1);
    return cli_parse_int(w, 1, 1 << 20, width) || cli_parse_int(h, 1, 1 << 20, height);
}

int cli_bp_take_option(int argc, char **argv, int *i, pv_bp_params *bp)
{
    static const char *const names[] = {"--levels", "--iterations", "--lambda", "--data-max",
                                        "--disc-max", "--sigma", "--tile", "--tile-padding"};
    const char *arg = argv[*i];
    size_t which = 0, count = sizeof names / sizeof names[0];
    while (which < count && strcmp(arg, names[which]) != 0)
        which++;
    if (which == count)
        return 0;
    const char *value = cli_value(argc, argv, i);
    if (!value)
        return -1;
    int bad = 0;
    switch (which) {
    case 0: bad = cli_parse_int(value, 1, 16, &bp->levels); break;
    case 1: bad = cli_parse_int(value, 1, 1 << 20, &bp->iterations); break;
    case 2: bad = cli_parse_float(value, &bp->lambda); break;
    case 3: bad = cli_parse_float(value, &bp->data_max); break;
    case 4: bad = cli_parse_float(value, &bp->disc_max); break;
    case 5: bad = cli_parse_float(value, &bp->sigma); break;
    case 6: bad = parse_size(value, &bp->tile_width, &bp->tile_height); break;
    case 7: bad = cli_parse_int(value, 0, 1 << 20, &bp->tile_padding); break;
    }
    if (bad)
        cli_fail("%s '%s': not a valid %s", arg, value, which == 6 ? "WxH size" : "number");
    return bad ? -1 : 1;
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
