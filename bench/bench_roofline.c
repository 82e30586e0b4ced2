/* Minimum bytes per bench case; the model is described in bench_roofline.h. */
#include "bench_roofline.h"

#define F32 4.0
#define COMPLEX 8.0
#define SIFT_DESCRIPTOR_FLOATS 128.0
#define SIFT_KEYPOINT_VALUES 7.0   /* x, y, sigma, angle, response, octave, level */
#define SHIFT_BYTES (3.0 * F32)
#define OCT_SHIFT_BYTES 16.0       /* dx, dy, dz and a valid flag */
#define MATCH_PAIR_BYTES 8.0       /* two int indices */

static int all_positive(const int *n, int dims)
{
    if (dims <= 0)
        return 0;
    for (int a = 0; a < dims; a++)
        if (n[a] <= 0)
            return 0;
    return 1;
}

static double elements(const int *n, int dims)
{
    double count = 1.0;
    for (int a = 0; a < dims; a++)
        count *= n[a];
    return count;
}

double roofline_fft_pass_bytes(const int *n, int dims)
{
    if (!n || !all_positive(n, dims))
        return 0.0;
    double half_spectrum = (double)(n[0] / 2 + 1) * elements(n + 1, dims - 1);
    return 2.0 * COMPLEX * half_spectrum;
}

double roofline_fft_bytes(const int *n, int dims, int transforms)
{
    if (transforms <= 0)
        return 0.0;
    return (double)transforms * dims * roofline_fft_pass_bytes(n, dims);
}

double roofline_sad_bytes(int width, int height)
{
    if (width <= 0 || height <= 0)
        return 0.0;
    double pixels = (double)width * height;
    return 2.0 * pixels + F32 * pixels;
}

double roofline_bp_bytes(int width, int height)
{
    return roofline_sad_bytes(width, height);
}

double roofline_sgm_bytes(int width, int height)
{
    return roofline_sad_bytes(width, height);
}

double roofline_pc3d_oneshot_bytes(const int n[3])
{
    if (!n || !all_positive(n, 3))
        return 0.0;
    return 2.0 * F32 * elements(n, 3) + roofline_fft_bytes(n, 3, 3) + SHIFT_BYTES;
}

double roofline_pc2d_oneshot_bytes(const int n[2])
{
    if (!n || !all_positive(n, 2))
        return 0.0;
    return 2.0 * F32 * elements(n, 2) + roofline_fft_bytes(n, 2, 3) + SHIFT_BYTES;
}

double roofline_pc3d_cached_bytes(const int n[3])
{
    if (!n || !all_positive(n, 3))
        return 0.0;
    double reference_spectrum = roofline_fft_pass_bytes(n, 3) / 2.0;
    return F32 * elements(n, 3) + reference_spectrum + roofline_fft_bytes(n, 3, 2) + SHIFT_BYTES;
}

double roofline_fft_pair_bytes(const int n[3])
{
    if (!n || !all_positive(n, 3))
        return 0.0;
    return 2.0 * F32 * elements(n, 3) + roofline_fft_bytes(n, 3, 2);
}

double roofline_ncc_bytes(int image, int templ)
{
    if (image <= 0 || templ <= 0)
        return 0.0;
    int map[2] = {image + templ - 1, image + templ - 1};
    double inputs = F32 * ((double)image * image + (double)templ * templ);
    return inputs + F32 * elements(map, 2) + roofline_fft_bytes(map, 2, 3);
}

double roofline_ncc_masked_bytes(int image, int templ)
{
    if (image <= 0 || templ <= 0)
        return 0.0;
    int map[2] = {image + templ - 1, image + templ - 1};
    return 2.0 * F32 * ((double)image * image + (double)templ * templ) + F32 * elements(map, 2);
}

double roofline_pcm_bytes(const int *n, int dims)
{
    if (!n || dims < 2 || dims > 3 || !all_positive(n, dims))
        return 0.0;
    int grid[3];
    for (int a = 0; a < dims; a++)
        grid[a] = 2 * n[a] - 1;
    double inputs = 4.0 * F32 * elements(n, dims);
    double maps = F32 * elements(grid, dims);
    /* the six maps written, read by the score with the score written, and
     * two arg-max passes over one map */
    return inputs + 6.0 * maps + roofline_fft_bytes(grid, dims, 12) + 7.0 * maps + 2.0 * maps +
           SHIFT_BYTES;
}

double roofline_octreg_bytes(const int n[3])
{
    if (!n || !all_positive(n, 3))
        return 0.0;
    const int plane[2] = {n[0], n[1]};
    double bscans = n[2];
    return F32 * elements(n, 3) + bscans * roofline_fft_bytes(plane, 2, 2) +
           bscans * OCT_SHIFT_BYTES;
}

double roofline_flow_bytes(int n)
{
    if (n <= 0)
        return 0.0;
    double voxels = (double)n * n * n;
    return 2.0 * F32 * voxels + 3.0 * F32 * voxels;
}

double roofline_sift_bytes(int width, int height, int keypoints)
{
    if (width <= 0 || height <= 0 || keypoints < 0)
        return 0.0;
    double per_keypoint = F32 * (SIFT_DESCRIPTOR_FLOATS + SIFT_KEYPOINT_VALUES);
    return (double)width * height + keypoints * per_keypoint;
}

double roofline_match_bytes(int query, int train, int matches)
{
    if (query <= 0 || train <= 0 || matches < 0)
        return 0.0;
    return F32 * SIFT_DESCRIPTOR_FLOATS * ((double)query + train) + MATCH_PAIR_BYTES * matches;
}

double roofline_fraction(double min_bytes, double gb_per_s, double measured_ms)
{
    if (!(min_bytes > 0.0) || !(gb_per_s > 0.0) || !(measured_ms > 0.0))
        return 0.0;
    double ideal_ms = min_bytes / (gb_per_s * 1e9) * 1e3;
    return ideal_ms / measured_ms;
}
