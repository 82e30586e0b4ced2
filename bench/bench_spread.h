/* The median of a row's timed samples, and how far they spread: the
 * largest over the smallest.  A spread beyond BENCH_SPREAD_LIMIT means the runs did not measure the
 * same thing (another process took the cores, a first-use cost landed in
 * a timed run, threads competed), so the median alone should not be
 * trusted; the bench says so beside the row.  No library dependency, so
 * tests/test_bench.c checks it directly. */
#ifndef PV_BENCH_SPREAD_H
#define PV_BENCH_SPREAD_H

#define BENCH_SPREAD_LIMIT 2.0
/* The most values bench_median takes (a row's samples, BENCH_MAX_SAMPLES). */
#define BENCH_SPREAD_MAX_VALUES 100

/* Median of values[0..count) (sorts a copy; values stay in run order);
 * NaN when count < 1 or count > BENCH_SPREAD_MAX_VALUES. */
double bench_median(const double *values, int count);

/* max / min of values[0..count); 1 for fewer than two values; 0 when a
 * value is not positive and finite (no ratio can be formed). */
double bench_spread(const double *values, int count);

/* Whether the spread of values exceeds limit (a ratio >= 1); a spread of
 * 0 (no ratio) never does. */
int bench_spread_exceeds(const double *values, int count, double limit);

#endif
