/* Internal to the tuner's search: the workloads each family is timed on
 * (tune_workloads.c) and the rule by which a candidate wins.  Not
 * installed; only the search's files include it (tests/test_layers.sh). */
#ifndef PV_TUNE_WORKLOADS_H
#define PV_TUNE_WORKLOADS_H

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

#endif
