/* Operations per bench case; the model and each count's derivation are in
 * bench_ops.h. */
#include "bench_ops.h"

#include <math.h>

#define REAL_FFT_OPS_PER_POINT_LOG 2.5  /* half of the complex 5 N log2 N */
#define CROSS_POWER_OPS 12.0
#define SAD_OPS 8.0
#define BP_MESSAGE_OPS_PER_LABEL 11.0
#define BP_MESSAGES 4.0
#define BP_DATA_OPS 3.0
#define BP_CHILDREN 4.0
#define BP_BELIEF_OPS 5.0
#define SGM_COST_OPS 2.0
#define SGM_PATH_OPS 10.0
#define SGM_WINNER_OPS 2.0
#define NCC_PRODUCT_OPS 6.0
#define NCC_LOCAL_SUM_OPS 8.0
#define NCC_NORMALISE_OPS 10.0
#define NCC_MASKED_PAIR_OPS 18.0
#define PCM_PRODUCT_OPS 36.0
#define PCM_LOAD_OPS 2.0
#define PCM_SCORE_OPS 16.0
#define FLOW_WARP_FIXED_OPS (24.0 + 6.0 + 1.0 + 9.0 + 18.0)
#define FLOW_TENSOR_COMPONENTS 9.0
#define FLOW_JACOBI_OPS 128.0
#define SIFT_SIGMA0 1.6
#define SIFT_SIGMA_INPUT 0.5
#define SIFT_NEIGHBOURS 26.0
#define SIFT_KEYPOINT_OPS (450.0 * 20.0 + 2000.0 * 30.0)
#define DESCRIPTOR_DIMS 128.0

static double points(const int *n, int dims)
{
    double count = 1.0;
    for (int a = 0; a < dims; a++) {
        if (n[a] <= 0)
            return 0.0;
        count *= n[a];
    }
    return dims > 0 ? count : 0.0;
}

/* Elements of the half spectrum of a real transform. */
static double half_spectrum(const int *n, int dims)
{
    double full = points(n, dims);
    return full > 0.0 ? full / n[0] * (n[0] / 2 + 1) : 0.0;
}

double ops_fft(const int *n, int dims)
{
    double count = n ? points(n, dims) : 0.0;
    return count > 1.0 ? REAL_FFT_OPS_PER_POINT_LOG * count * log2(count) : 0.0;
}

double ops_sad(int width, int height, int ndisp)
{
    if (width <= 0 || height <= 0 || ndisp <= 0)
        return 0.0;
    return SAD_OPS * (double)width * height * ndisp;
}

double ops_sgm(int width, int height, int ndisp, int paths)
{
    if (width <= 0 || height <= 0 || ndisp <= 0 || paths <= 0)
        return 0.0;
    return (SGM_COST_OPS + SGM_PATH_OPS * paths + SGM_WINNER_OPS) * (double)width * height * ndisp;
}

double ops_bp(int width, int height, int ndisp, int levels, int iterations)
{
    if (width <= 0 || height <= 0 || ndisp <= 0 || levels <= 0 || iterations < 0)
        return 0.0;
    double pixels = (double)width * height, labels = ndisp, total = 0.0;
    for (int l = 0; l < levels; l++) {
        double level_pixels = pixels / pow(4.0, l);
        total += 0.5 * level_pixels * iterations * BP_MESSAGES * BP_MESSAGE_OPS_PER_LABEL * labels;
        total += level_pixels * labels * (l == 0 ? BP_DATA_OPS : BP_CHILDREN);
    }
    return total + pixels * labels * BP_BELIEF_OPS;
}

double ops_phase_correlation(const int *n, int dims, int transforms)
{
    if (!n || points(n, dims) <= 0.0 || transforms <= 0)
        return 0.0;
    return transforms * ops_fft(n, dims) + CROSS_POWER_OPS * half_spectrum(n, dims);
}

double ops_fft_pair(const int n[3])
{
    return n ? 2.0 * ops_fft(n, 3) : 0.0;
}

double ops_ncc(int image, int templ)
{
    if (image <= 0 || templ <= 0)
        return 0.0;
    const int map[2] = {image + templ - 1, image + templ - 1};
    return 3.0 * ops_fft(map, 2) + NCC_PRODUCT_OPS * half_spectrum(map, 2) +
           (NCC_LOCAL_SUM_OPS + NCC_NORMALISE_OPS) * points(map, 2);
}

double ops_ncc_masked(int image, int templ, double valid_share)
{
    if (image <= 0 || templ <= 0 || !(valid_share > 0.0))
        return 0.0;
    return NCC_MASKED_PAIR_OPS * (double)image * image * (double)templ * templ * valid_share;
}

double ops_pcm(const int *n, int dims)
{
    if (!n || dims < 2 || dims > 3 || points(n, dims) <= 0.0)
        return 0.0;
    int grid[3];
    for (int a = 0; a < dims; a++)
        grid[a] = 2 * n[a] - 1;
    return 12.0 * ops_fft(grid, dims) + PCM_PRODUCT_OPS * half_spectrum(grid, dims) +
           (PCM_LOAD_OPS + PCM_SCORE_OPS) * points(grid, dims);
}

double ops_octreg(const int n[3])
{
    if (!n || points(n, 3) <= 0.0)
        return 0.0;
    const int plane[2] = {n[0], n[1]};
    return n[2] * ops_phase_correlation(plane, 2, 2);
}

double ops_flow(int n, int warps, int iterations, int taps)
{
    if (n <= 0 || warps <= 0 || iterations < 0 || taps <= 0)
        return 0.0;
    double voxels = (double)n * n * n;
    double smoothing = FLOW_TENSOR_COMPONENTS * 3.0 * taps * 2.0;
    return voxels * warps * (FLOW_WARP_FIXED_OPS + smoothing + iterations * FLOW_JACOBI_OPS);
}

/* A separable Gaussian of sigma: 2 passes of 2 ceil(4 sigma) + 1 taps,
 * a multiply-add each. */
static double blur_ops_per_pixel(double sigma)
{
    double radius = ceil(4.0 * sigma);
    return 2.0 * (2.0 * (radius < 1.0 ? 1.0 : radius) + 1.0) * 2.0;
}

/* Per pixel of an octave: its incremental blurs, differences and the
 * extremum test. */
static double sift_octave_ops_per_pixel(int levels)
{
    double total = 0.0, k = pow(2.0, 1.0 / levels);
    for (int l = 1; l < levels + 3; l++) {
        double previous = SIFT_SIGMA0 * pow(k, l - 1);
        total += blur_ops_per_pixel(previous * sqrt(k * k - 1.0));
    }
    return total + (levels + 2) + SIFT_NEIGHBOURS * levels;
}

double ops_sift(int width, int height, int octaves, int levels, int keypoints)
{
    if (width <= 0 || height <= 0 || octaves <= 0 || levels <= 0 || keypoints < 0)
        return 0.0;
    double pixels = (double)width * height;
    double base_sigma = sqrt(SIFT_SIGMA0 * SIFT_SIGMA0 - SIFT_SIGMA_INPUT * SIFT_SIGMA_INPUT);
    double total = pixels * blur_ops_per_pixel(base_sigma);
    for (int o = 0; o < octaves; o++)
        total += pixels / pow(4.0, o) * sift_octave_ops_per_pixel(levels);
    return total + keypoints * SIFT_KEYPOINT_OPS;
}

double ops_match(int query, int train)
{
    if (query <= 0 || train <= 0)
        return 0.0;
    return (2.0 * DESCRIPTOR_DIMS + 2.0) * (double)query * train;
}

double ops_fraction(double ops, double gops, double measured_ms)
{
    if (!(ops > 0.0) || !(gops > 0.0) || !(measured_ms > 0.0))
        return 0.0;
    double ideal_ms = ops / (gops * 1e9) * 1e3;
    return ideal_ms / measured_ms;
}
