/* Transform lengths and peak positions shared by the correlation front
 * ends (see peak.h). */
#include "peak.h"

#include <limits.h>

int pv_fft_friendly(long long n)
{
    static const int radices[] = {2, 3, 5, 7};
    if (n < 1)
        return 0;
    for (int i = 0; i < 4; i++)
        while (n % radices[i] == 0)
            n /= radices[i];
    return n == 1;
}

int pv_fft_friendly_size(long long n)
{
    for (long long m = n < 1 ? 1 : n; m <= INT_MAX; m++)
        if (pv_fft_friendly(m))
            return (int)m;
    return 0;
}

double pv_peak_signed_shift(int index, int n)
{
    return index <= n / 2 ? (double)index : (double)index - n;
}

double pv_peak_parabola_vertex(double lo, double mid, double hi)
{
    double bend = lo - 2.0 * mid + hi;
    if (!(bend < 0.0))
        return 0.0;
    double offset = 0.5 * (lo - hi) / bend;
    return offset < -0.5 ? -0.5 : offset > 0.5 ? 0.5 : offset;
}

int pv_peak_wrap_index(int i, int n)
{
    return ((i % n) + n) % n;
}
