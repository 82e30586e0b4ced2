/* parvis stereo --method sgm: the semi-global matching option-table
 * entries, the checks the table cannot express, the memory report and the
 * run, kept apart from cli_stereo.c as BP's are in cli_stereo_bp.c. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "WxH": one of the census windows stereo.h accepts (5x5, 7x7, 9x7). */
static int parse_census(const char *value, void *field)
{
    pv_sgm_params *sgm = field;
    int width = 0, height = 0;
    if (cli_parse_size2(value, 9, &width, &height) != 0)
        return -1;
    if (!((width == 5 && height == 5) || (width == 7 && height == 7) ||
          (width == 9 && height == 7)))
        return -1;
    sgm->census_width = width;
    sgm->census_height = height;
    return 0;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static int parse_budget(const char *value, void *field)
{
    char *end = NULL;
    double amount = strtod(value, &end);
    if (end == value || !(amount >= 0) || amount > 1e18)
        return -1;
    double unit = 1.0;
    if (*end == 'K' || *end == 'k')
        unit = 1024.0;
    else if (*end == 'M' || *end == 'm')
        unit = 1048576.0;
    else if (*end == 'G' || *end == 'g')
        unit = 1073741824.0;
    if (unit > 1.0)
        end++;
    if (*end || amount * unit > 1e18)
        return -1;
    *(size_t *)field = (size_t)(amount * unit);
    return 0;
}

void cli_sgm_options(cli_sgm_args *args, unsigned sgm_bit, cli_option *entries)
{
    pv_sgm_params *sgm = &args->params;
    const cli_option table[CLI_SGM_OPTION_COUNT] = {
        {.name = "--census", .kind = CLI_CUSTOM, .field = sgm, .parse = parse_census,
         .value_name = "5x5|7x7|9x7", .expect = "5x5, 7x7 or 9x7", .methods = sgm_bit, .no_default = 1,
         .help = "census window: 5x5, 7x7 or 9x7 (default 9x7)"},
        /* --census WxH sets the declared census_width and census_height at once, and
         * --census-plain is the declared census_symmetric turned off under the name
         * the command has always used */
        {.name = "--census-plain", .kind = CLI_FLAG, .field = &args->plain_census,
         .methods = sgm_bit,
         .help = "compare every window pixel with the centre, not centre-symmetric pairs "
                 "(twice the bits)"},
        /* declared by the library (lib/stereo/stereo_params.c) */
        cli_declared("sgm", "p1", sgm, sizeof *sgm, sgm_bit),
        cli_declared("sgm", "p2", sgm, sizeof *sgm, sgm_bit),
        cli_declared("sgm", "p2_adaptive", sgm, sizeof *sgm, sgm_bit),
        cli_declared("sgm", "paths", sgm, sizeof *sgm, sgm_bit),
        cli_declared("sgm", "lr_check", sgm, sizeof *sgm, sgm_bit),    /* --no-lr-check */
        cli_declared("sgm", "subpixel", sgm, sizeof *sgm, sgm_bit),    /* --no-subpixel */
        cli_declared("sgm", "median", sgm, sizeof *sgm, sgm_bit),
        cli_declared("sgm", "aggregation", sgm, sizeof *sgm, sgm_bit),
        {.name = "--memory-budget", .kind = CLI_CUSTOM, .field = &sgm->memory_budget,
         .parse = parse_budget, .value_name = "BYTES", .expect = "a byte count, suffix K, M or G",
         .methods = sgm_bit, .no_default = 1,
         .help = "bytes the call may use (suffix K/M/G); under --aggregation auto a call "
                 "whose per-path volumes need more runs with one summed volume, and one that "
                 "needs more than even that stops before allocating (default: the available "
                 "memory)"},
    };
    memcpy(entries, table, sizeof table);
}

int cli_sgm_finish(const cli_command *command, const pv_sad_params *shared, cli_sgm_args *args)
{
    pv_sgm_params *sgm = &args->params;
    if (args->plain_census)
        sgm->census_symmetric = 0;
    if (cli_given(command, "--no-lr-check") && cli_given(command, "--lr-check"))
        return cli_fail("stereo: give --lr-check or --no-lr-check, not both");
    if (sgm->p2 < sgm->p1)
        return cli_fail("stereo --p2 %d: must be at least --p1 (%d)", sgm->p2, sgm->p1);
    if (cli_given(command, "--uniqueness")) {
        if (!(shared->uniqueness > 0.0f && shared->uniqueness <= 1.0f))
            return cli_fail("stereo --uniqueness %g: sgm expects a number > 0 and <= 1 "
                            "(1 = off)", (double)shared->uniqueness);
        sgm->uniqueness = shared->uniqueness;
    }
    if (cli_given(command, "--lr-max-diff")) {
        float diff = shared->lr_max_diff;
        if (diff != floorf(diff) || diff > 1024.0f)
            return cli_fail("stereo --lr-max-diff %g: sgm expects an integer in 0..1024",
                            (double)diff);
        sgm->lr_max_diff = (int)diff;
    }
    return 0;
}

int cli_sgm_report_memory(const pv_sad_params *range, const pv_sgm_params *options, int width,
                          int height, int verbose)
{
    pv_sgm_params params = *options;
    params.min_disp = range->min_disp;
    params.ndisp = range->ndisp;
    const pv_sgm_params *sgm = &params;
    pv_sgm_params summed = params;
    summed.aggregation = PV_SGM_AGGREGATE_SUM;
    const size_t bytes = pv_sgm_memory_estimate(width, height, sgm);
    const size_t least = pv_sgm_memory_estimate(width, height, &summed);
    if (bytes == 0 || least == 0)
        return cli_fail("stereo sgm: the range or the size is out of bounds "
                        "(ndisp 1..min(width, %d))", PV_SGM_MAX_NDISP);
    if (!verbose)
        return 0;
    const int fits = !sgm->memory_budget || bytes <= sgm->memory_budget;
    fprintf(stderr,
            "parvis: sgm: %dx%d census, %s, P1 %d, P2 %d%s, %d paths; needs %.1f MiB in one run"
            " (%.1f MiB with one summed volume)%s\n",
            sgm->census_width, sgm->census_height, sgm->census_symmetric ? "symmetric" : "plain",
            sgm->p1, sgm->p2, sgm->p2_adaptive ? " (adaptive)" : "", sgm->paths,
            (double)bytes / 1048576.0, (double)least / 1048576.0,
            fits ? ""
            : sgm->aggregation == PV_SGM_AGGREGATE_AUTO && least <= sgm->memory_budget
                ? "; above --memory-budget: runs with the summed volume"
                : "; above --memory-budget: the call stops before allocating");
    return 0;
}

pv_status cli_sgm_run_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                            const pv_sad_params *range, const pv_sgm_params *options,
                            pv_image *disparity)
{
    pv_sgm_params sgm = *options;
    sgm.min_disp = range->min_disp;
    sgm.ndisp = range->ndisp;
    return pv_stereo_sgm_group(group, left, right, &sgm, disparity);
}

pv_status cli_sgm_run(pv_context *ctx, const pv_image *left, const pv_image *right,
                      const pv_sad_params *range, const pv_sgm_params *options,
                      pv_image *disparity, pv_image *confidence)
{
    pv_sgm_params sgm = *options;
    sgm.min_disp = range->min_disp;
    sgm.ndisp = range->ndisp;
    return pv_stereo_sgm_confidence(ctx, left, right, &sgm, disparity, confidence);
}
