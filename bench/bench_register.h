/* parvis-bench internals shared by the register family's two files:
 * bench_register.c (phase correlation, masked phase correlation) and
 * bench_register_ncc.c (normxcorr2: single, masked, batch). */
#ifndef PV_BENCH_REGISTER_H
#define PV_BENCH_REGISTER_H

#include "bench.h"

#include <stdint.h>

/* One row of a 2D case: the case, the engine's name (NULL on the CPU
 * alone), the inputs; fills *r and returns 0, or 1 after printing why it
 * failed. */
typedef int (*engine_row_fn)(const bench_config *config, const bench_contexts *contexts,
                             const void *c, const char *engine, void *in, bench_result *r);

/* One row per OpenCL FFT engine built in (one CPU-only row without
 * OpenCL), appended to results and printed. */
int bench_register_engine_rows(const bench_config *config, const bench_contexts *contexts,
                               engine_row_fn row, const void *c, void *in, bench_result *results,
                               int max, int *count);
/* The family's noise: uniform in [0, 1) from a xorshift state. */
float bench_register_random01(uint32_t *state);

/* The normxcorr2 cases (ncc, ncc-masked, ncc-batch). */
int bench_ncc_cases(const bench_config *config, const bench_contexts *contexts,
                    bench_result *results, int max, int *count);

#endif
