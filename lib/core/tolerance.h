/* Internal: the one table of cross-check tolerances, how far an OpenCL
 * result may lie from the CPU oracle's before a call (PARVIS_CROSSCHECK),
 * the tuner or a test calls them different.  The public headers document
 * the same values to users; change both together.  Tests may include this
 * header.  Not installed. */
#ifndef PV_TOLERANCE_H
#define PV_TOLERANCE_H

/* colour: relative L-infinity of pv_to_grey.  Both backends do the same
 * float multiplies and adds in the same order without contraction, so the
 * grey images are bit-identical; the margin is a few ulps. */
#define PV_TOL_COLOUR_REL 1e-6

/* filter: relative L-infinity (of the reference's largest value) of blurs
 * and gradients.  Both backends sum the same taps in float; a different
 * summation order (work-group tiling, FMA contraction) moves a result by a
 * few float ulps of the largest value, far below 1e-5. */
#define PV_TOL_FILTER_REL 1e-5

/* stereo SAD: share of pixels whose disparities may differ.  Window costs
 * of f32 input can tie exactly and each backend then picks its first
 * minimum in its own order; 0.1% covers those ties. */
#define PV_TOL_SAD_DIFFERING_SHARE 0.001
/* stereo SAD: two sub-pixel disparities agree within this many pixels:
 * the parabola fit divides float costs that differ by rounding only. */
#define PV_TOL_SAD_SUBPIXEL 1e-3f

/* stereo SGM: integer disparities are identical (every step before the
 * sub-pixel parabola is integer arithmetic in the same order).  Sub-pixel
 * values agree within this many pixels: the parabola's one float division
 * may be rounded differently by OpenCL (2.5 ulp allowed), far below 1e-3.
 * The confidence agrees within PV_TOL_SGM_CONFIDENCE (one float division). */
#define PV_TOL_SGM_SUBPIXEL 1e-3f
#define PV_TOL_SGM_CONFIDENCE 1e-5f

/* stereo BP: share of pixels whose disparities may differ.  The backends
 * run the same float operations in the same order, but the message
 * normalisation rounds differently under FMA, and a tie in the final
 * belief flips a pixel now and then.  The same share holds for half
 * messages (PV_BP_MESSAGES_F16): the CPU rounds every stored message to
 * half exactly as the kernels' vstore_half_rte does (nearest, ties to
 * even) and keeps it in a float, which holds it exactly, so the two
 * backends still see the same values; 100% identical in every test.
 * (Half against float messages is a change of the result, not a
 * backend difference: docs/bp-at-scale.md measures it.) */
#define PV_TOL_BP_DIFFERING_SHARE 0.005

/* phase correlation: sub-pixel shifts agree within 1e-3 px (the peak's
 * neighbours differ by the FFT libraries' rounding, ~1e-6 of the peak,
 * which the parabola fit magnifies); the upsampled DFT may land one step
 * of its grid apart (1 / upsample) when two points tie within rounding. */
#define PV_TOL_PC_SHIFT 1e-3
/* phase correlation: peak heights (normalised to 1 for identical inputs)
 * agree within 1e-3: float FFTs of up to 2^32 points lose that little. */
#define PV_TOL_PC_PEAK 1e-3
/* masked phase correlation: the same integer shift, and peak coefficients
 * (in [-1, 1]) within 1e-4: six float FFT correlations, the score from
 * sums over an overlap of inputs centred on their masked means. */
#define PV_TOL_PCM_PEAK 1e-4
/* normxcorr2: largest absolute difference of two coefficient maps.  The
 * coefficients lie in [-1, 1]; the integral images are summed in a
 * different row order on each backend, which costs ~1e-5 at most. */
#define PV_TOL_NCC_MAP 1e-4

/* octreg: share of B-scans whose integer results (sub-volume, shift) must
 * agree.  A B-scan whose two best peaks tie within rounding may pick
 * either; 1% allows for those. */
#define PV_TOL_OCT_AGREEMENT 0.99
/* octreg: sub-pixel shifts of agreeing B-scans, in voxels: the parabola
 * fit on nearly flat peaks magnifies the FFTs' rounding. */
#define PV_TOL_OCT_SUBPIXEL 0.05
/* octreg: relative L-infinity of reconstructions: bilinear sums of the
 * same float products, in a different order. */
#define PV_TOL_OCT_RECON_REL 1e-4

/* flow: largest absolute flow difference, in voxels, is PV_FLOW_TOLERANCE
 * (public, flow.h: Jacobi iterations amplify float rounding).  Warping is
 * one trilinear interpolation per voxel: relative L-infinity 1e-5. */
#define PV_TOL_FLOW_WARP_REL 1e-5

#endif
