/* The median and spread of a row's timed samples (bench_spread.h). */
#include "bench_spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double bench_spread(const double *values, int count)
{
    if (!values || count < 2)
        return 1.0;
    double low = values[0], high = values[0];
    for (int i = 0; i < count; i++) {
        if (!(values[i] > 0.0) || !isfinite(values[i]))
            return 0.0;
        low = values[i] < low ? values[i] : low;
        high = values[i] > high ? values[i] : high;
    }
    return high / low;
}

int bench_spread_exceeds(const double *values, int count, double limit)
{
    double spread = bench_spread(values, count);
    return spread > 0.0 && spread > limit;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *values, int count)
{
    if (!values || count <= 0 || count > BENCH_SPREAD_MAX_VALUES)
        return NAN;
    double sorted[BENCH_SPREAD_MAX_VALUES];
    memcpy(sorted, values, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    return count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
}
