/* The bytes each bench case must move at the least, for the roofline
 * column: how close a measured kernel time comes to the time the device's
 * copy bandwidth needs for those bytes.
 *
 * The model, for every operation:
 *   - each input is read once and each output written once, at the size
 *     of its element type (u8 images 1 byte, f32 4 bytes, complex 8);
 *   - intermediates that an ideal kernel could keep on chip (cost volumes,
 *     BP messages, pyramids, Jacobi iterates, scale spaces) count nothing,
 *     so for iterative operations the fraction is a lower bound;
 *   - every FFT pass reads and writes the half-spectrum complex array once:
 *     a d-dimensional transform is d passes (one per axis), each moving
 *     2 x (n0 / 2 + 1) x n1 x ... x 8 bytes.  The pointwise products and
 *     normalisations between transforms are taken as fused into the
 *     neighbouring passes and count nothing.
 * All functions are pure and return 0 for sizes that are not positive. */
#ifndef PV_BENCH_ROOFLINE_H
#define PV_BENCH_ROOFLINE_H

#include <stddef.h>

/* Bytes one FFT pass moves over a real transform of extent n[0..dims-1]:
 * its half spectrum (n[0] / 2 + 1) x n[1] x ... complex floats, read and
 * written once. */
double roofline_fft_pass_bytes(const int *n, int dims);

/* Bytes of `transforms` real-to-complex or complex-to-real transforms of
 * extent n[0..dims-1]: dims passes each. */
double roofline_fft_bytes(const int *n, int dims, int transforms);

/* SAD stereo: two u8 images read, one f32 disparity map written. */
double roofline_sad_bytes(int width, int height);

/* BP stereo: two u8 images read, one f32 disparity map written (the
 * message pyramid is an intermediate). */
double roofline_bp_bytes(int width, int height);

/* SGM stereo: two u8 images read, one f32 disparity map written (the cost
 * volume and the path sums are intermediates). */
double roofline_sgm_bytes(int width, int height);

/* 3D phase correlation of two f32 volumes of extent n: both read, both
 * forward transforms and the inverse (3 transforms), the shift written
 * (3 floats). */
double roofline_pc3d_oneshot_bytes(const int n[3]);

/* 2D phase correlation of two f32 images of extent n[0] x n[1]: the same
 * three transforms in 2D, the shift written. */
double roofline_pc2d_oneshot_bytes(const int n[2]);

/* The same against a cached reference spectrum: the mover read, the
 * reference's half spectrum read once, one forward and one inverse
 * transform, the shift written. */
double roofline_pc3d_cached_bytes(const int n[3]);

/* A bare R2C + C2R pair on an f32 volume: the volume read, two transforms,
 * the volume written back. */
double roofline_fft_pair_bytes(const int n[3]);

/* normxcorr2 of a templ x templ f32 template in an image x image f32
 * image: both read, the (image + templ - 1)^2 f32 map written, and three
 * 2D transforms of the map's extent (template, image, inverse of their
 * product; the local sums come from running sums, not transforms). */
double roofline_ncc_bytes(int image, int templ);

/* Masked normxcorr2 of a templ x templ template in an image x image image
 * by direct sums: the f32 template, image and their two f32 masks read
 * once (the repeated reads of the sums hit the cache) and the
 * (image + templ - 1)^2 f32 map written. */
double roofline_ncc_masked_bytes(int image, int templ);

/* Masked phase correlation of extent n[0..dims-1], over the linear grid
 * G of 2 n - 1 per axis: four f32 inputs read (two images, two masks), the
 * six maps of G written, twelve transforms of G, the six maps read and the
 * score written, and two arg-max passes over one map. */
double roofline_pcm_bytes(const int *n, int dims);

/* AO-OCT registration of one f32 target of depth x alines x bscans against
 * a pre-computed reference: the target read, per B-scan one forward and
 * one inverse 2D transform of depth x alines (the fine stage; the coarse
 * stripes are fewer and left out), and per B-scan a shift written
 * (3 floats and a flag: 16 bytes). */
double roofline_octreg_bytes(const int n[3]);

/* 3D optical flow on n^3 volumes: the two f32 volumes read, three f32
 * flow components written. */
double roofline_flow_bytes(int n);

/* SIFT detection and description: one u8 image read, per keypoint its
 * 128 f32 descriptor and its 7-value record written. */
double roofline_sift_bytes(int width, int height, int keypoints);

/* Brute-force matching of query x train 128-float descriptors: both sets
 * read once, one (query, train) index pair written per match. */
double roofline_match_bytes(int query, int train, int matches);

/* The roofline fraction: the time the bandwidth (bytes read plus written
 * per second / 1e9) needs for min_bytes over the measured time in ms;
 * 0 when any of the three is not positive. */
double roofline_fraction(double min_bytes, double gb_per_s, double measured_ms);

#endif
