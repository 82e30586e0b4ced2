/* CPU SIFT: a refined keypoint's orientations and descriptors.
 *
 * The part of the reference SIFT that works on one Gaussian level around
 * one keypoint, kept apart from the scale space and the candidate search
 * (backends/cpu/features/features.c).  Formulas, sums and their order follow
 * kernels/features.cl (VLFeat's rules), so the backends agree to rounding. */
#ifndef PV_CPU_SIFT_DESCRIBE_H
#define PV_CPU_SIFT_DESCRIBE_H

#include "../../../lib/core/internal.h"

/* At most this many orientations per keypoint (VLFeat's limit). */
#define PV_CPU_SIFT_MAX_ORIENTATIONS 4

/* A refined keypoint in octave coordinates. */
typedef struct pv_cpu_sift_refined {
    float x, y, s, sigma, response;   /* s: level + offset; sigma in octave pixels */
    int level;
} pv_cpu_sift_refined;

/* The Gaussian level a keypoint lies on: width x height floats, rows contiguous. */
typedef struct pv_cpu_sift_level {
    const float *plane;
    int width, height;
} pv_cpu_sift_level;

/* The dominant orientations (radians in [0, 2 pi)) of keypoint k, at most
 * PV_CPU_SIFT_MAX_ORIENTATIONS, into angles; returns how many. */
int pv_cpu_sift_orientations(const pv_cpu_sift_level *level, const pv_sift_params *params,
                             const pv_cpu_sift_refined *k, float *angles);

/* The PV_SIFT_DESCRIPTOR_SIZE-value descriptor of keypoint k at angle into d. */
void pv_cpu_sift_describe(const pv_cpu_sift_level *level, const pv_sift_params *params,
                          const pv_cpu_sift_refined *k, float angle, float *d);

#endif
