/* Internal: the tuner's search (tune_search.c, its candidates in
 * tune_candidates.c, its workloads in tune_workloads.c), which stands above
 * the lookup (tune_lookup.h) and the operations it times: nothing below it
 * includes this header (tests/test_layers.sh).  Not installed. */
#ifndef PV_TUNE_SEARCH_H
#define PV_TUNE_SEARCH_H

#include "tune_steps.h"

/* ------------------------------------------------ the search (tune_search.c) */

/* Whether the search has a search for family (every pv_tune_family has). */
int pv_tune_search_knows(const char *family);
/* The index-th family's share of a time budget (relative), 0 past the last. */
int pv_tune_family_weight(int index);

/* A configuration's score on a family with several workloads: the mean
 * over the workloads of its time relative to the reference's (the
 * defaults') time there, so that every workload, each standing for a
 * class of sizes users run, counts the same however long it takes; 1.0
 * for the reference itself.  Negative when a time is missing or rejected
 * (<= 0) or count is out of range. */
static inline double pv_tune_relative_score(const double *ms, const double *reference_ms,
                                            int count)
{
    if (count < 1 || count > PV_TUNE_MAX_WORKLOADS)
        return -1.0;
    double sum = 0.0;
    for (int i = 0; i < count; i++) {
        if (!(ms[i] > 0.0 && reference_ms[i] > 0.0))
            return -1.0;
        sum += ms[i] / reference_ms[i];
    }
    return sum / count;
}

/* The record of one search, for a caller that checks its decisions (the
 * tests): every configuration measured, in order, the defaults first. */

typedef struct pv_tune_trace_entry {
    int value[PV_TUNE_MAX_PARAMS];          /* in the order of trace.names */
    /* median ms per workload: 0 not timed there, < 0 rejected */
    double ms[PV_TUNE_MAX_WORKLOADS];
    int pruned;                             /* timed once only on the main workload */
} pv_tune_trace_entry;

typedef struct pv_tune_trace {
    int workloads;                          /* the family's workload count */
    int param_count;
    char names[PV_TUNE_MAX_PARAMS][48];
    pv_tune_trace_entry measured[PV_TUNE_TRACE_MAX];
    int count;
    int winner;        /* index in measured of the search's best, before confirmation */
    /* The confirmation (when the winner was not the defaults): both timed
     * again on every workload, and whether the winner stayed. */
    int confirmed;
    double confirm_default_ms[PV_TUNE_MAX_WORKLOADS];
    double confirm_winner_ms[PV_TUNE_MAX_WORKLOADS];
    int winner_kept;
} pv_tune_trace;

/* How a search runs, beyond the options. */
typedef struct pv_tune_search_spec {
    double deadline_ms;      /* no candidate starts after it (pv_now_ms's clock); 0: none */
    const char *only_param;  /* NULL, or the one parameter whose sweep alone runs (the
                                defaults measured first, the winner confirmed as always) */
    pv_tune_trace *trace;    /* NULL, or filled with the search's record */
} pv_tune_search_spec;

/* Search one op's family on ctx through its backend's parameter slots,
 * every candidate checked against the CPU backend on every workload it is
 * timed on; the winner is left applied to ctx.  The defaults are always
 * measured.  result->search_ms receives the search's wall time;
 * result->default_ms and best_ms are the main workload's times. */
pv_status pv_tune_search(pv_context *ctx, const char *op, const pv_tune_options *options,
                         const pv_tune_search_spec *spec, pv_tune_result *result);

#endif
