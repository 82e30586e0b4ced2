/* Internal, front end only: the small numbers the correlation front ends
 * (phase correlation, NCC, AO-OCT registration) share: transform lengths
 * that the FFT libraries handle fast, and where a correlation peak lies
 * once its grid index and neighbours are known.  Not installed. */
#ifndef PV_PEAK_H
#define PV_PEAK_H

/* 1 when n >= 1 has no prime factor but 2, 3, 5 and 7 (fast for FFTW,
 * and accepted by clFFT and VkFFT). */
int pv_fft_friendly(long long n);

/* Smallest m >= n that pv_fft_friendly accepts; 0 when none fits an int. */
int pv_fft_friendly_size(long long n);

/* The shift that a circular correlation's peak at `index` of an n-point
 * axis stands for: indices past n / 2 are negative shifts. */
double pv_peak_signed_shift(int index, int n);

/* Vertex of the parabola through (-1, lo), (0, mid), (1, hi), limited to
 * half a sample; 0 when the three points do not bend down. */
double pv_peak_parabola_vertex(double lo, double mid, double hi);

/* i modulo n in 0 .. n - 1, for negative i too. */
int pv_peak_wrap_index(int i, int n);

#endif
