/* The arithmetic each bench case must do, for the compute column beside
 * the copy-bandwidth roofline (bench_roofline.h): how close a measured
 * kernel time comes to the time the device's measured compute peak
 * (pv_context_compute_peak) needs for those operations, and which of the
 * two limits binds.
 *
 * The model, for every operation, counts what the algorithm must compute
 * in the form the library implements it, as bench_roofline.h counts the
 * bytes it must move:
 *   - one add, subtract, multiply, compare, min/max, absolute difference,
 *     exclusive or or select is one operation; a multiply-add is two (as
 *     the probe counts it); a divide, square root or exponential is one;
 *   - index arithmetic, loads, stores and loop control count nothing;
 *   - a real FFT of N points costs 2.5 N log2 N (half the 5 N log2 N of a
 *     complex one, the usual radix-2 count); a d-dimensional transform is
 *     N = the product of its extents;
 *   - where an implementation reuses partial results (sliding windows,
 *     running sums, the Gaussian semigroup), the count is the reusing
 *     form's, so the fraction measures the kernel against its own
 *     algorithm, not against a naive one.
 * Each function's comment gives its derivation.  Integer operations
 * (SAD on 8-bit images) are set against the integer peak, the rest
 * against the fp32 peak.  All functions are pure and return 0 for sizes
 * that are not positive. */
#ifndef PV_BENCH_OPS_H
#define PV_BENCH_OPS_H

/* Operations of a real FFT of n[0] x ... x n[dims-1] points. */
double ops_fft(const int *n, int dims);

/* SAD block matching (integer): per pixel and disparity, the column sums
 * slide one row (two absolute differences in and out, an add and a
 * subtract), the window slides one column (an add and a subtract), and
 * the winner fold compares and selects: 8 operations.  The window's size
 * drops out, as it does in the streaming kernel. */
double ops_sad(int width, int height, int ndisp);

/* Hierarchical BP (fp32), per level l (pixels / 4^l, ndisp labels):
 *   - each iteration updates half the pixels (checkerboard), each sending
 *     4 messages; a message over ndisp labels: 3 adds (data cost plus
 *     three incoming messages), the forward and backward passes of the
 *     linear distance transform (add and min each: 4), the truncation
 *     (min with the minimum plus disc_max: 1, finding the minimum: 1) and
 *     the normalisation (sum and subtract: 2) = 11 an label;
 *   - data cost at level 0: absolute difference, truncation, weight = 3
 *     per pixel and label; each coarser level sums its 4 children: 4;
 *   - final beliefs at level 0: data plus 4 messages (4) and the argmin
 *     compare (1) = 5 per pixel and label. */
double ops_bp(int width, int height, int ndisp, int levels, int iterations);

/* Semi-global matching (integer) over `paths` directions, per pixel and
 * disparity: the census cost (exclusive or and population count: 2); on
 * each path the recurrence's four candidates (two adds of P1, one of P2
 * to the previous minimum, three mins: 6), the add of the cost and the
 * subtract of the previous minimum (2) and the running minimum for the
 * next pixel (1), then the add into the sum: 10 a path; the winner's and
 * the right view's argmin compares (2).  The census transforms (one
 * compare a bit and pixel) are per pixel, not per disparity, and left
 * out; so are the checks, the refinement and the median. */
double ops_sgm(int width, int height, int ndisp, int paths);

/* Phase correlation (fp32) of extent n[0..dims-1] with `transforms` real
 * FFTs and one cross-power spectrum over the half spectrum: conjugate
 * product (6), magnitude (3 and a square root: 4) and the division by it
 * (2) = 12 an element. */
double ops_phase_correlation(const int *n, int dims, int transforms);

/* A bare R2C + C2R pair on an n[0] x n[1] x n[2] volume. */
double ops_fft_pair(const int n[3]);

/* normxcorr2 (fp32) of a templ^2 template in an image^2 image over the
 * (image + templ - 1)^2 map M: three 2D FFTs of M, the spectra's product
 * (6 an element of the half spectrum), running sums of the image and its
 * square for the local sums (2D box sums: 4 adds each, 8), and the
 * normalisation (mean removal, variance, square root, division: 10). */
double ops_ncc(int image, int templ);

/* Masked normxcorr2 (fp32) of a templ^2 template with valid_share of its
 * pixels valid in an image^2 image: per map point and valid template pixel
 * of the overlap two passes of direct sums (the masks' product, the count
 * and two weighted sums: 7; the product again, two centred deviations,
 * three products and three sums: 11), so 18 a pixel pair.  Over the whole
 * map every image pixel meets every template pixel exactly once, so there
 * are image^2 templ^2 valid_share pairs. */
double ops_ncc_masked(int image, int templ, double valid_share);

/* Masked phase correlation (fp32) of extent n[0..dims-1] over the linear
 * grid G of 2 n - 1 per axis (the least the library pads to): six forward
 * and six inverse real FFTs of G, six conjugate products an element of
 * the half spectrum (36), the squares of the inputs (2 an element of G)
 * and the score (means, variances, square root, division, thresholds: 16
 * an element of G). */
double ops_pcm(const int *n, int dims);

/* AO-OCT registration (fp32) of depth x alines x bscans: per B-scan the
 * fine stage's forward and inverse 2D FFT of depth x alines and one
 * cross-power spectrum (12 an element of its half spectrum); the coarse
 * stripes are fewer and left out, as in the bytes. */
double ops_octreg(const int n[3]);

/* 3D CLG flow (fp32) on n^3 voxels, `warps` warps of `iterations` Jacobi
 * iterations with a `taps`-tap Gaussian, one level:
 *   - per voxel and warp: trilinear warping (7 lerps of 3 and 3 adds: 24),
 *     central-difference gradients (3 x 2) and the time difference (1),
 *     the 9 tensor products, the separable smoothing of the 9 components
 *     (3 passes x taps x 2 each) and the right-hand side (3 x 6 = 18);
 *   - per voxel and Jacobi iteration (flow.cl's jacobi_voxel): the 6 mixed
 *     derivatives of the divergence term (5 each) and their 3 sums (33),
 *     the 6-neighbour sums of u, v and w (18), the diagonals (12), the
 *     right-hand sides (24) and the 3x3 adjugate solve (41) = 128. */
double ops_flow(int n, int warps, int iterations, int taps);

/* SIFT detection and description (fp32) of a width x height image,
 * `octaves` octaves of `levels` scales (sigma0 1.6, input blur 0.5,
 * filter radius ceil(4 sigma) as the library's):
 *   - the base blur, then per octave levels + 2 incremental blurs of the
 *     Gaussian semigroup, each separable: 2 passes x taps x 2 a pixel;
 *   - per octave levels + 2 differences of Gaussians (1 a pixel) and the
 *     26-neighbour extremum test over the levels inner ones (26);
 *   - per keypoint an orientation histogram (~450 samples of ~20) and a
 *     descriptor (~2000 samples of ~30): SIFT_KEYPOINT_OPS. */
double ops_sift(int width, int height, int octaves, int levels, int keypoints);

/* Brute-force matching (fp32) of query x train 128-float descriptors:
 * a multiply-add per dimension and pair (2 x 128, the norms precomputed)
 * and the best-two fold of each pair (2). */
double ops_match(int query, int train);

/* The compute fraction: the time the peak (operations per second / 1e9)
 * needs for ops over the measured time in ms; 0 when any of the three is
 * not positive. */
double ops_fraction(double ops, double gops, double measured_ms);

#endif
