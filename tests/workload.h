/* A small operation of each parvis module, run on a context into a flat
 * array of floats, for the tests that hammer one context from several
 * threads (test_threads) and that inject device faults (test_faults).
 * Every operation checks, when it fails, that its outputs were left as
 * they were. */
#ifndef PV_TEST_WORKLOAD_H
#define PV_TEST_WORKLOAD_H

#include "parvis.h"

#include <stddef.h>

/* Room for the largest result (the flow field of 12^3 voxels x 3). */
#define WL_MAX_VALUES 8192

typedef struct wl_result {
    size_t count;
    float values[WL_MAX_VALUES];
} wl_result;

typedef struct wl_op {
    const char *name;
    /* Run on ctx into out.  *untouched: 1 when the call failed and left its
     * outputs as they were (always 1 on success). */
    pv_status (*run)(pv_context *ctx, wl_result *out, int *untouched);
} wl_op;

/* filter, stereo SAD, BP, SIFT, phase correlation, NCC, octreg, flow. */
extern const wl_op wl_ops[];
extern const int wl_op_count;

/* Make the shared inputs (once, before any thread starts). */
int wl_init(void);
void wl_free(void);

/* Largest |a - b| / max(1, |b|) over two results of equal count; INFINITY
 * when the counts differ. */
double wl_difference(const wl_result *a, const wl_result *b);

#endif
