/* The spread of a row's timed samples (bench_spread.h). */
#include "bench_spread.h"

#include <math.h>

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
