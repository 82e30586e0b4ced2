/* parvis-bench --ab-param: the comparison's table and its JSON (the rows
 * as first measured, each with an "ab" object; docs/bench-json.md). */
#include "bench_ab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *verdict(int within)
{
    return within < 0 ? "-" : within ? "yes" : "NO";
}

static const char *params_word(int same)
{
    return same < 0 ? "n/a" : same ? "same" : "differ";
}

/* The families a row is compared on: [*first, *last], none when last < first. */
static void row_families(const bench_ab_state *ab, const bench_ab_row *row, int *first, int *last)
{
    if (row->family == BENCH_AB_FAMILY_NONE) {
        *first = 0;
        *last = -1;
    } else if (row->family == BENCH_AB_FAMILY_ALL) {
        *first = 0;
        *last = ab->family_count - 1;
    } else {
        *first = *last = row->family;
    }
}

/* ---------------------------------------------------------------- table */

static void print_ms(double ms)
{
    if (isfinite(ms))
        printf(" %10.4f", ms);
    else
        printf(" %10s", "-");
}

static void print_ratio(double ratio)
{
    if (isfinite(ratio))
        printf(" %8.3f", ratio);
    else
        printf(" %8s", "-");
}

/* One kind of time (end to end or kernel) of a row, round by round. */
static void print_rounds(const bench_ab_state *ab, const char *what, const double *a,
                         const double *b)
{
    printf("       %s A/B by round:", what);
    for (int k = 0; k < ab->rounds; k++) {
        printf(" ");
        if (isfinite(a[k]))
            printf("%.4g", a[k]);
        else
            printf("-");
        printf("/");
        if (isfinite(b[k]))
            printf("%.4g", b[k]);
        else
            printf("-");
    }
    printf("\n");
}

/* The parameters of the row's families whose values differ between the
 * sides: "family.NAME A->B". */
static void print_differences(const bench_ab_state *ab, const bench_ab_row *row)
{
    int first, last, shown = 0;
    row_families(ab, row, &first, &last);
    for (int f = first; f <= last; f++) {
        const bench_ab_family *a = &ab->families[BENCH_AB_A][f];
        const bench_ab_family *b = &ab->families[BENCH_AB_B][f];
        for (int i = 0; i < a->count && i < b->count; i++) {
            if (a->params[i].value == b->params[i].value)
                continue;
            printf("%s %s.%s %d->%d", shown++ ? "," : "       differs:", pv_tune_family_name(f),
                   a->params[i].name, a->params[i].value, b->params[i].value);
        }
    }
    if (shown)
        printf("\n");
}

static void print_row(const bench_ab_state *ab, const bench_ab_row *row, int *within_total,
                      int *within_kernel)
{
    bench_ab_summary s;
    bench_ab_summarize(ab, row, &s);
    int total = bench_ab_within(s.ratio_total), kernel = bench_ab_within(s.ratio_kernel);
    *within_total = total;
    *within_kernel = kernel;
    printf("%-6s %-26s %-6s %3d/%-3d", row->first.op, row->first.name,
           params_word(bench_ab_same_params(ab, row)), s.rounds[BENCH_AB_A],
           s.rounds[BENCH_AB_B]);
    print_ms(s.total_ms[BENCH_AB_A]);
    print_ms(s.total_ms[BENCH_AB_B]);
    print_ratio(s.ratio_total);
    printf(" %-6s", verdict(total));
    print_ms(s.kernel_ms[BENCH_AB_A]);
    print_ms(s.kernel_ms[BENCH_AB_B]);
    print_ratio(s.ratio_kernel);
    printf(" %s\n", verdict(kernel));
    print_rounds(ab, "e2e ms   ", row->total_ms[BENCH_AB_A], row->total_ms[BENCH_AB_B]);
    print_rounds(ab, "kernel ms", row->kernel_ms[BENCH_AB_A], row->kernel_ms[BENCH_AB_B]);
    print_differences(ab, row);
}

static void print_legend(const bench_ab_state *ab)
{
    printf("\nA/B comparison: %d round(s) in this process, each side's pass on a fresh OpenCL\n"
           "context, the order alternating (round 1 A then B, round 2 B then A, ...)\n",
           ab->rounds);
    printf("  side A: %s, the context's own launch parameters%s%s\n", ab->labels[BENCH_AB_A],
           ab->config->params ? ", then --param " : "",
           ab->config->params ? ab->config->params : "");
    printf("  side B: %s, side A with --ab-param %s on top (%d parameter(s))\n",
           ab->labels[BENCH_AB_B], ab->config->ab_param, ab->spec.count);
    printf("  A ms, B ms: medians over the rounds of each pass's OpenCL median (end to end,\n"
           "  then kernels); B/A: their ratio; within: |B/A - 1| <= %.0f%%.  params: the row's\n"
           "  family has the same values on both sides (a difference is noise), they differ,\n"
           "  or n/a (the context's parameters do not reach the row).  rounds: A/B values.\n\n",
           100 * BENCH_AB_TARGET);
    printf("%-6s %-26s %-6s %-7s %10s %10s %8s %-6s %10s %10s %8s %s\n", "op", "case", "params",
           "rounds", "A e2e ms", "B e2e ms", "B/A e2e", "within", "A kern ms", "B kern ms",
           "B/A kern", "within");
}

/* The verdict counts: rows within the target end to end and in kernels,
 * of all rows and of those with the same parameters on both sides. */
static void print_counts(const bench_ab_state *ab, const int counts[2][3])
{
    printf("\n%d of %d rows within %.0f%% end to end (B over A), %d in kernels; of the %d rows "
           "with the same parameters on both sides, %d within end to end, %d in kernels\n",
           counts[0][0], ab->row_count, 100 * BENCH_AB_TARGET, counts[0][1], counts[1][2],
           counts[1][0], counts[1][1]);
    if (ab->failed_passes)
        printf("%d pass(es) failed (see the messages on stderr): their rows lack that round's "
               "values\n", ab->failed_passes);
    if (ab->failed_checks)
        printf("%d row(s) over all passes below their cross-check threshold (see the rows "
               "above)\n", ab->failed_checks);
    fflush(stdout);
}

void bench_ab_print(const bench_ab_state *ab)
{
    int counts[2][3] = {{0, 0, 0}, {0, 0, 0}}; /* [all, same params][within e2e, kernel, rows] */
    print_legend(ab);
    for (int i = 0; i < ab->row_count; i++) {
        const bench_ab_row *row = &ab->rows[i];
        int total, kernel;
        print_row(ab, row, &total, &kernel);
        int same = bench_ab_same_params(ab, row) == 1;
        counts[0][0] += total == 1;
        counts[0][1] += kernel == 1;
        counts[0][2]++;
        counts[1][0] += same && total == 1;
        counts[1][1] += same && kernel == 1;
        counts[1][2] += same;
    }
    print_counts(ab, counts);
}

/* ----------------------------------------------------------------- JSON */

static void json_verdict(FILE *out, int value)
{
    fprintf(out, "%s", value < 0 ? "null" : value ? "true" : "false");
}

/* A side's parameters of the row's families: {"family.NAME": value, ...}. */
static void json_params(FILE *out, const bench_ab_state *ab, const bench_ab_row *row, int side)
{
    int first, last, shown = 0;
    row_families(ab, row, &first, &last);
    fprintf(out, "{");
    for (int f = first; f <= last; f++) {
        const bench_ab_family *family = &ab->families[side][f];
        for (int i = 0; i < family->count; i++)
            fprintf(out, "%s\"%s.%s\": %d", shown++ ? ", " : "", pv_tune_family_name(f),
                    family->params[i].name, family->params[i].value);
    }
    fprintf(out, "}");
}

/* A side's medians as the key's object, after separator. */
static void json_side(FILE *out, const char *separator, const char *key,
                      const bench_ab_summary *s, int side)
{
    fprintf(out, "%s\"%s\": {\"total_ms\": ", separator, key);
    cli_json_number(out, s->total_ms[side]);
    fprintf(out, ", \"kernel_ms\": ");
    cli_json_number(out, s->kernel_ms[side]);
    fprintf(out, ", \"rounds\": %d}", s->rounds[side]);
}

static void json_rounds(FILE *out, const bench_ab_state *ab, const bench_ab_row *row)
{
    fprintf(out, ",\n            \"rounds\": [");
    for (int k = 0; k < ab->rounds; k++) {
        const double values[4] = {row->total_ms[BENCH_AB_A][k], row->kernel_ms[BENCH_AB_A][k],
                                  row->total_ms[BENCH_AB_B][k], row->kernel_ms[BENCH_AB_B][k]};
        static const char *const keys[4] = {"a_total_ms", "a_kernel_ms", "b_total_ms",
                                            "b_kernel_ms"};
        fprintf(out, "%s{\"order\": \"%s\"", k ? ", " : "",
                bench_ab_side_at(k, 0) == BENCH_AB_A ? "AB" : "BA");
        for (int v = 0; v < 4; v++) {
            fprintf(out, ", \"%s\": ", keys[v]);
            cli_json_number(out, values[v]);
        }
        fprintf(out, "}");
    }
    fprintf(out, "]");
}

static void json_row(FILE *out, int index, const void *user)
{
    const bench_ab_state *ab = user;
    const bench_ab_row *row = &ab->rows[index];
    bench_ab_summary s;
    bench_ab_summarize(ab, row, &s);
    fprintf(out, ",\n     \"ab\": {\"family\": ");
    if (row->family >= 0)
        cli_json_string(out, pv_tune_family_name(row->family));
    else
        fprintf(out, row->family == BENCH_AB_FAMILY_ALL ? "\"all\"" : "null");
    fprintf(out, ", \"same_params\": ");
    json_verdict(out, bench_ab_same_params(ab, row));
    fprintf(out, ",\n            \"params_a\": ");
    json_params(out, ab, row, BENCH_AB_A);
    fprintf(out, ",\n            \"params_b\": ");
    json_params(out, ab, row, BENCH_AB_B);
    json_side(out, ",\n            ", "a", &s, BENCH_AB_A);
    json_side(out, ", ", "b", &s, BENCH_AB_B);
    fprintf(out, ", \"ratio_total\": ");
    cli_json_number(out, s.ratio_total);
    fprintf(out, ", \"ratio_kernel\": ");
    cli_json_number(out, s.ratio_kernel);
    fprintf(out, ", \"within_total\": ");
    json_verdict(out, bench_ab_within(s.ratio_total));
    fprintf(out, ", \"within_kernel\": ");
    json_verdict(out, bench_ab_within(s.ratio_kernel));
    json_rounds(out, ab, row);
    fprintf(out, "}");
}

static void json_document(FILE *out, const void *user)
{
    const bench_ab_state *ab = user;
    fprintf(out, "\"ab\": {\"param\": ");
    cli_json_string(out, ab->config->ab_param);
    fprintf(out, ", \"side_b_params\": ");
    cli_json_string(out, ab->b_params);
    fprintf(out, ", \"side_a\": ");
    cli_json_string(out, ab->labels[BENCH_AB_A]);
    fprintf(out, ", \"side_b\": ");
    cli_json_string(out, ab->labels[BENCH_AB_B]);
    fprintf(out, ",\n         \"rounds\": %d, \"target\": %g, \"failed_passes\": %d, "
                 "\"failed_checks\": %d},\n  ",
            ab->rounds, BENCH_AB_TARGET, ab->failed_passes, ab->failed_checks);
}

int bench_ab_write_json(const bench_ab_state *ab, const bench_contexts *probe)
{
    bench_result *rows = calloc((size_t)(ab->row_count > 0 ? ab->row_count : 1), sizeof *rows);
    if (!rows)
        return cli_fail("out of memory");
    for (int i = 0; i < ab->row_count; i++)
        rows[i] = ab->rows[i].first;
    const bench_json_extra extra = {json_document, json_row, ab};
    int rc = bench_write_json_extra(ab->config->json_path, probe, ab->config, rows, ab->row_count,
                                    &extra);
    free(rows);
    return rc;
}
