/* parvis-bench --ab-param: two sets of OpenCL launch parameters compared
 * inside one process.
 *
 * Why in one process: on some GPUs a whole bench process runs either
 * "fast" or "slow" (even pure kernel times differ by up to a third between
 * two processes with the same parameters, whatever cores they are pinned
 * to), so a comparison of two processes measures the processes as much as
 * the parameters.  Timed in the same process, interleaved, both sides
 * share whatever mode it is in.
 *
 * Where the parameters must be set: several families make a plan (SIFT,
 * flow, registration, AO-OCT, BP's pyramids) that bakes the launch
 * parameters into its programs and work-group sizes when it is made, and
 * the cases make their plans before they time them.  Setting side B's
 * values between two timed runs of one plan would therefore time side A
 * twice.  Each side's pass instead runs the whole selection (every family,
 * as a plain run does) on a fresh OpenCL context that receives the side's
 * parameters as soon as it is made (bench_open_opencl), so every plan of
 * the pass is made under them; the cases also set them again before each
 * timed series (bench_time_or_fail), as for --param.  BP's "-tuned" rows,
 * which read the tuning cache into the context in the middle of a pass,
 * are left out (bench_bp.c).  The CPU backend has no launch parameters:
 * one CPU context serves every pass, and an A/B run times it once a row
 * without warm-up unless --cpu-runs / --cpu-warmup say otherwise.
 *
 * Rounds: in each round both sides run once, A first in odd rounds
 * (1, 3, ...) and B first in even ones, so that a drift over the run (a
 * GPU warming up or throttling) is charged to both sides alike. */
#include "bench_ab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tuning family whose parameters an operation's OpenCL launches read
 * (each backend module reads only its own family: backends/opencl/). */
static const struct {
    const char *op;
    const char *family;
} op_families[] = {
    {"sad", "sad"},       {"bp", "bp"},           {"sift", "features"}, {"match", "features"},
    {"flow", "flow"},     {"ransac", "geometry"}, {"octreg", "octreg"}, {"fft", "register"},
    {"pc3d", "register"}, {"pc2d", "register"},   {"ncc", "register"},
};

static int family_index(const char *family)
{
    for (int i = 0; pv_tune_family_name(i); i++)
        if (strcmp(pv_tune_family_name(i), family) == 0)
            return i;
    return BENCH_AB_FAMILY_ALL;
}

static int family_of(const char *op)
{
    /* The device groups of the multi rows make their own contexts, which
     * read the cache or the database but never the bench's parameters. */
    if (strcmp(op, "multi") == 0)
        return BENCH_AB_FAMILY_NONE;
    for (size_t i = 0; i < sizeof op_families / sizeof op_families[0]; i++)
        if (strcmp(op_families[i].op, op) == 0)
            return family_index(op_families[i].family);
    return BENCH_AB_FAMILY_ALL;
}

int bench_ab_side_at(int round, int position)
{
    return round % 2 == 0 ? position : 1 - position;
}

/* ------------------------------------------------------------- the rows */

static bench_ab_row *find_row(bench_ab_state *ab, const bench_result *r)
{
    for (int i = 0; i < ab->row_count; i++)
        if (strcmp(ab->rows[i].first.op, r->op) == 0 && strcmp(ab->rows[i].first.name, r->name) == 0)
            return &ab->rows[i];
    return NULL;
}

/* A row seen for the first time: kept as measured, with no values yet. */
static bench_ab_row *add_row(bench_ab_state *ab, const bench_result *r, int side)
{
    if (ab->row_count == ab->max_rows)
        return NULL;
    bench_ab_row *row = &ab->rows[ab->row_count++];
    row->first = *r;
    if (!row->first.launch[0])
        snprintf(row->first.launch, sizeof row->first.launch, "%.*s",
                 (int)sizeof row->first.launch - 1, ab->labels[side]);
    row->family = family_of(r->op);
    for (int s = 0; s < BENCH_AB_SIDES; s++)
        for (int k = 0; k < BENCH_AB_MAX_ROUNDS; k++)
            row->total_ms[s][k] = row->kernel_ms[s][k] = NAN;
    return row;
}

/* A pass's rows into the comparison: each row's OpenCL medians. */
static void record_pass(bench_ab_state *ab, int side, int round, const bench_result *results,
                        int count)
{
    for (int i = 0; i < count; i++) {
        const bench_result *r = &results[i];
        bench_ab_row *row = find_row(ab, r);
        if (!row)
            row = add_row(ab, r, side);
        if (!row)
            continue; /* more rows than the first pass had room for: not compared */
        ab->failed_checks += !bench_row_passes(r);
        if (!r->have_opencl)
            continue;
        row->total_ms[side][round] = r->cl_total_ms;
        row->kernel_ms[side][round] = r->cl_kernel_ms;
    }
}

/* -------------------------------------------------------- the parameters */

/* Every family's parameters on ctx, as pv_tune_list gives them. */
static void list_families(pv_context *ctx, bench_ab_family *families, int count)
{
    for (int i = 0; i < count; i++) {
        bench_ab_family *f = &families[i];
        f->listed = pv_tune_list(ctx, pv_tune_family_name(i), f->params, PV_TUNE_MAX_PARAMS,
                                 &f->count) == PV_OK;
        if (!f->listed)
            f->count = 0;
    }
}

static int families_equal(const bench_ab_family *a, const bench_ab_family *b)
{
    if (!a->listed || !b->listed || a->count != b->count)
        return 0;
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->params[i].name, b->params[i].name) != 0 ||
            a->params[i].value != b->params[i].value)
            return 0;
    return 1;
}

/* The side's parameters after its pass: kept after the first pass that
 * ran; after a later one compared with those, since a side whose values
 * moved in the middle of a run would not be one side any more. */
static void note_side_params(bench_ab_state *ab, pv_context *ctx, int side, int round)
{
    if (!ab->listed[side]) {
        list_families(ctx, ab->families[side], ab->family_count);
        ab->listed[side] = 1;
        return;
    }
    bench_ab_family now[BENCH_AB_MAX_FAMILIES];
    list_families(ctx, now, ab->family_count);
    for (int i = 0; i < ab->family_count; i++)
        if (!families_equal(&now[i], &ab->families[side][i]))
            fprintf(stderr, "parvis-bench: warning: side %c's %s parameters in round %d differ "
                            "from its first round's\n", 'A' + side, pv_tune_family_name(i),
                    round + 1);
}

int bench_ab_same_params(const bench_ab_state *ab, const bench_ab_row *row)
{
    if (row->family == BENCH_AB_FAMILY_NONE)
        return -1;
    int first = row->family == BENCH_AB_FAMILY_ALL ? 0 : row->family;
    int last = row->family == BENCH_AB_FAMILY_ALL ? ab->family_count - 1 : row->family;
    for (int i = first; i <= last; i++) {
        const bench_ab_family *a = &ab->families[BENCH_AB_A][i];
        const bench_ab_family *b = &ab->families[BENCH_AB_B][i];
        if (!a->listed || !b->listed)
            return -1;
        if (!families_equal(a, b))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ the medians */

/* The median of a side's values over the rounds that have one. */
static double rounds_median(const double *values, int rounds, int *count)
{
    double present[BENCH_AB_MAX_ROUNDS];
    *count = 0;
    for (int k = 0; k < rounds; k++)
        if (isfinite(values[k]))
            present[(*count)++] = values[k];
    return *count > 0 ? bench_median(present, *count) : NAN;
}

void bench_ab_summarize(const bench_ab_state *ab, const bench_ab_row *row, bench_ab_summary *s)
{
    for (int side = 0; side < BENCH_AB_SIDES; side++) {
        int kernel_rounds = 0;
        s->total_ms[side] = rounds_median(row->total_ms[side], ab->rounds, &s->rounds[side]);
        s->kernel_ms[side] = rounds_median(row->kernel_ms[side], ab->rounds, &kernel_rounds);
    }
    s->ratio_total = s->total_ms[BENCH_AB_A] > 0.0
                         ? s->total_ms[BENCH_AB_B] / s->total_ms[BENCH_AB_A]
                         : NAN;
    s->ratio_kernel = s->kernel_ms[BENCH_AB_A] > 0.0
                          ? s->kernel_ms[BENCH_AB_B] / s->kernel_ms[BENCH_AB_A]
                          : NAN;
}

int bench_ab_within(double ratio)
{
    if (!isfinite(ratio))
        return -1;
    return fabs(ratio - 1.0) <= BENCH_AB_TARGET + 1e-12;
}

/* -------------------------------------------------------------- the run */

/* The selection's case count for the progress line (bench_wants counts
 * and skips every case while counting is on). */
static void count_cases(const bench_config *config, const bench_contexts *contexts,
                        bench_family_fn *suite, bench_result *scratch, int max_rows)
{
    int none = 0;
    bench_progress_counting(1);
    suite(config, contexts, scratch, max_rows, &none);
    bench_progress_counting(0);
}

/* One side's pass of one round: the whole selection on a fresh OpenCL
 * context that holds the side's parameters from the start. */
static void run_pass(bench_ab_state *ab, const bench_contexts *probe, bench_family_fn *suite,
                     bench_result *results, int side, int round)
{
    bench_config config = *ab->config;
    config.params = side == BENCH_AB_B ? ab->b_params : ab->config->params;
    fprintf(stderr, "parvis-bench: A/B round %d/%d, side %c (%s)\n", round + 1, ab->rounds,
            'A' + side, ab->labels[side]);
    printf("\n== A/B round %d/%d, side %c: %s ==\n", round + 1, ab->rounds, 'A' + side,
           ab->labels[side]);
    fflush(stdout);
    bench_contexts contexts = *probe;
    contexts.opencl = bench_open_opencl(&config);
    if (!contexts.opencl) {
        ab->failed_passes++;
        return;
    }
    bench_set_launch_label(ab->labels[side]);
    count_cases(&config, &contexts, suite, results, ab->max_rows);
    int count = 0;
    if (suite(&config, &contexts, results, ab->max_rows, &count)) {
        ab->failed_passes++;
        fprintf(stderr, "parvis-bench: A/B round %d side %c stopped after %d rows\n", round + 1,
                'A' + side, count);
    }
    record_pass(ab, side, round, results, count);
    note_side_params(ab, contexts.opencl, side, round);
    pv_context_destroy(contexts.opencl);
}

/* Each side's launch label: the context's source, side B marked. */
static void label_sides(bench_ab_state *ab, pv_context *opencl)
{
    char source[48];
    bench_launch_source(opencl, source, sizeof source);
    snprintf(ab->labels[BENCH_AB_A], sizeof ab->labels[BENCH_AB_A], "%s%s", source,
             ab->config->params ? "+param" : "");
    snprintf(ab->labels[BENCH_AB_B], sizeof ab->labels[BENCH_AB_B], "%s%s+B", source,
             ab->config->params ? "+param" : "");
}

/* The state of a run, side B's parameter text made from --param and
 * --ab-param: 0, or 1 after a message. */
static int prepare(const bench_config *config, int max_rows, bench_ab_state *ab)
{
    char why[512];
    if (bench_ab_spec_parse(config->ab_param, &ab->spec, why, sizeof why))
        return cli_fail("--ab-param: %s", why);
    if (bench_ab_spec_format(config->params, &ab->spec, ab->b_params, sizeof ab->b_params))
        return cli_fail("--ab-param: side B's parameters do not fit in %zu characters",
                        sizeof ab->b_params);
    ab->config = config;
    ab->rounds = config->ab_rounds > 0 ? config->ab_rounds : 1;
    ab->max_rows = max_rows;
    while (ab->family_count < BENCH_AB_MAX_FAMILIES && pv_tune_family_name(ab->family_count))
        ab->family_count++;
    ab->rows = calloc((size_t)max_rows, sizeof *ab->rows);
    return ab->rows ? 0 : cli_fail("out of memory");
}

/* Every parameter --ab-param names exists on the device's context (the
 * parser knows the families, the context their parameters): 0, or 1 after
 * a message, before any round is spent on a side that cannot start. */
static int check_names(const bench_ab_state *ab, pv_context *opencl)
{
    for (int i = 0; i < ab->spec.count; i++) {
        const bench_ab_param *p = &ab->spec.params[i];
        int value;
        if (pv_tune_get(opencl, p->family, p->name, &value) != PV_OK)
            return cli_fail("--ab-param: %s.%s: %s", p->family, p->name, pv_last_error());
    }
    return 0;
}

static int write_outputs(const bench_ab_state *ab, const bench_contexts *probe)
{
    const bench_config *config = ab->config;
    int rc = config->json_path ? bench_ab_write_json(ab, probe) : 0;
    if (!config->csv_path && !config->plot_dir)
        return rc;
    bench_result *rows = calloc((size_t)(ab->row_count > 0 ? ab->row_count : 1), sizeof *rows);
    if (!rows)
        return cli_fail("out of memory");
    for (int i = 0; i < ab->row_count; i++)
        rows[i] = ab->rows[i].first;
    if (config->csv_path)
        rc |= bench_write_csv(config->csv_path, rows, ab->row_count);
    if (config->plot_dir)
        rc |= bench_write_plots(config->plot_dir, rows, ab->row_count);
    free(rows);
    return rc;
}

static int run_rounds(bench_ab_state *ab, const bench_contexts *probe, bench_family_fn *suite)
{
    bench_result *results = calloc((size_t)ab->max_rows, sizeof *results);
    if (!results)
        return cli_fail("out of memory");
    for (int round = 0; round < ab->rounds; round++)
        for (int position = 0; position < BENCH_AB_SIDES; position++)
            run_pass(ab, probe, suite, results, bench_ab_side_at(round, position), round);
    free(results);
    bench_ab_print(ab);
    int rc = write_outputs(ab, probe);
    return rc || ab->failed_passes > 0 || ab->failed_checks > 0;
}

int bench_ab_run(const bench_config *config, bench_family_fn *suite, int max_rows)
{
    if (!config || !suite || max_rows < 1 || !config->ab_param)
        return cli_fail("--ab-param: nothing to compare");
    if (config->device.backend == PV_BACKEND_CPU)
        return cli_fail("--ab-param compares OpenCL launch parameters: not with --backend cpu");
    bench_ab_state *ab = calloc(1, sizeof *ab);
    if (!ab)
        return cli_fail("out of memory");
    int rc = prepare(config, max_rows, ab);
    bench_contexts probe;
    if (rc == 0 && (rc = bench_open_contexts(config, &probe)) == 0) {
        if (!probe.opencl)
            rc = cli_fail("--ab-param compares OpenCL launch parameters: no OpenCL context");
        else if ((rc = check_names(ab, probe.opencl)) == 0) {
            label_sides(ab, probe.opencl);
            bench_print_header(&probe);
            rc = run_rounds(ab, &probe, suite);
        }
        bench_close_contexts(&probe);
    }
    free(ab->rows);
    free(ab);
    return rc;
}
