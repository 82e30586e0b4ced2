/* Internal: the tuner's search (tune_search.c) and its workloads
 * (tune_workloads.c), which stand above the lookup (tune_lookup.h) and the
 * operations they time: nothing below them includes this header
 * (tests/test_layers.sh).  Not installed. */
#ifndef PV_TUNE_SEARCH_H
#define PV_TUNE_SEARCH_H

#include "tune_lookup.h"

/* A candidate replaces the best configuration so far only when its median
 * is faster by more than this share.  Repeated medians of one
 * configuration spread by a few per cent on a GPU, so a smaller "gain" is
 * noise; taking it makes two tunes of one device land on different
 * parameters for no speed, and a shipped database entry then disagrees
 * with a local tune (docs/tuning.md). */
#define PV_TUNE_MIN_GAIN 0.03

/* 1 when a candidate timed at ms is clearly faster than best_ms (by more
 * than PV_TUNE_MIN_GAIN); 0 otherwise, and for a rejected candidate
 * (ms < 0).  A best_ms <= 0 (nothing timed yet) takes any timed candidate. */
static inline int pv_tune_clearly_faster(double ms, double best_ms)
{
    if (ms < 0)
        return 0;
    return best_ms <= 0 || ms < best_ms * (1.0 - PV_TUNE_MIN_GAIN);
}

/* ---------------------------------------- the workloads (tune_workloads.c) */

/* A family's synthetic input and the public calls that run its kernels
 * (sizes from options: width, height, ndisp; 0 = the family's default). */
typedef struct pv_tune_workload pv_tune_workload;

/* A family is scored on up to this many workloads: its main one and, for
 * the families whose kept values serve sizes the main one does not stand
 * for, a second of another size (docs/tuning.md, "Two workloads"). */
#define PV_TUNE_MAX_WORKLOADS 2

/* How many workloads family has (1 or 2; 0 for an unknown family). */
int pv_tune_workload_count(const char *family);
/* The family's index-th workload (0: the main one). */
pv_status pv_tune_workload_make(pv_context *ctx, const char *family, int index,
                                const pv_tune_options *options, pv_tune_workload **workload);
void pv_tune_workload_free(pv_tune_workload *workload);
/* One run compared with the CPU oracle: PV_ERR_MISMATCH (message on ctx)
 * when it disagrees beyond the tolerances of lib/core/tolerance.h, the
 * call's own status when it fails. */
pv_status pv_tune_workload_check(pv_context *ctx, pv_tune_workload *workload);
/* The ms of one unchecked run, negative when it fails: end to end (after
 * its plan, for the families whose run makes one), or the device's kernel
 * time for the workloads whose host work dwarfs what the parameters
 * change (pv_tune_workload_describe says which). */
double pv_tune_workload_time(pv_context *ctx, pv_tune_workload *workload);
/* How many timed runs the workload takes per `runs` of the options: more
 * for a run short enough that its median needs more samples. */
int pv_tune_workload_runs(const pv_tune_workload *workload, int runs);
/* A short description for the log ("384x288, 16 disparities"). */
const char *pv_tune_workload_describe(const pv_tune_workload *workload);
/* The disparity range of a stereo workload. */
int pv_tune_workload_ndisp(const pv_tune_workload *workload);

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
#define PV_TUNE_TRACE_MAX 256

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
