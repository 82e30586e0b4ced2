/* parvis-bench --ab-param: what the A/B run (bench_ab.c) collects and its
 * report (bench_ab_report.c) reads. */
#ifndef PV_BENCH_AB_H
#define PV_BENCH_AB_H

#include "bench.h"
#include "bench_ab_spec.h"

#define BENCH_AB_MAX_ROUNDS 200
/* A row's sides agree when |B/A - 1| is at most this: the tuning
 * database's target (docs/tuning.md). */
#define BENCH_AB_TARGET 0.05
/* Room for pv_tune_family_name's families. */
#define BENCH_AB_MAX_FAMILIES 16
/* A row's family: none of the context's parameters reach its launches
 * (the multi-device rows open their own contexts), or an operation this
 * file does not know, compared on every family. */
#define BENCH_AB_FAMILY_NONE (-1)
#define BENCH_AB_FAMILY_ALL (-2)

enum { BENCH_AB_A, BENCH_AB_B, BENCH_AB_SIDES };

/* One family's parameters on a side's context, as pv_tune_list gave them
 * after the side's first pass that ran (listed 0: the list failed). */
typedef struct bench_ab_family {
    int listed;
    int count;
    pv_tune_param params[PV_TUNE_MAX_PARAMS];
} bench_ab_family;

typedef struct bench_ab_row {
    bench_result first;       /* the row as first measured: the JSON's row */
    int family;               /* index of pv_tune_family_name, or BENCH_AB_FAMILY_* */
    /* OpenCL medians of each side's pass per round; NaN where the pass
     * gave none (it failed, or the row had no OpenCL side). */
    double total_ms[BENCH_AB_SIDES][BENCH_AB_MAX_ROUNDS];
    double kernel_ms[BENCH_AB_SIDES][BENCH_AB_MAX_ROUNDS];
} bench_ab_row;

typedef struct bench_ab_state {
    const bench_config *config;
    int rounds;
    bench_ab_spec spec;                        /* what --ab-param names */
    char b_params[16384];                      /* side B: --param, then --ab-param */
    char labels[BENCH_AB_SIDES][64];           /* each side's launch label */
    bench_ab_family families[BENCH_AB_SIDES][BENCH_AB_MAX_FAMILIES];
    int listed[BENCH_AB_SIDES];                /* families[side] holds a pass's values */
    int family_count;
    bench_ab_row *rows;
    int row_count, max_rows;
    int failed_passes;                         /* passes whose cases stopped on an error */
    int failed_checks;                         /* rows of any pass below their cross-check */
} bench_ab_state;

/* Side A's or B's pass of round (0-based): A first in even rounds. */
int bench_ab_side_at(int round, int position);

/* A row over the rounds: each side's medians of the end-to-end and
 * kernel ms (NaN without values) and how many rounds gave them, and the
 * ratios B/A (NaN unless both sides have a value). */
typedef struct bench_ab_summary {
    double total_ms[BENCH_AB_SIDES], kernel_ms[BENCH_AB_SIDES];
    int rounds[BENCH_AB_SIDES];
    double ratio_total, ratio_kernel;
} bench_ab_summary;
void bench_ab_summarize(const bench_ab_state *ab, const bench_ab_row *row, bench_ab_summary *s);

/* 1 when a ratio is within BENCH_AB_TARGET of 1, 0 when not, -1 when it
 * is not a number. */
int bench_ab_within(double ratio);

/* 1 when both sides launch the row's family (every family for
 * BENCH_AB_FAMILY_ALL) with the same values, 0 when they differ, -1 when
 * that cannot be told (BENCH_AB_FAMILY_NONE, or a list failed). */
int bench_ab_same_params(const bench_ab_state *ab, const bench_ab_row *row);

/* The comparison table on stdout; the JSON file (config->json_path) with
 * the rows as first measured and their "ab" objects: 0, or 1 after a
 * message. */
void bench_ab_print(const bench_ab_state *ab);
int bench_ab_write_json(const bench_ab_state *ab, const bench_contexts *probe);

#endif
