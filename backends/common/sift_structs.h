/* The structs that the OpenCL SIFT host code (backends/opencl/features/)
 * hands to the kernels of kernels/features.cl, declared once for both: the
 * C code includes this file, the .cl file too (inlined into the embedded
 * source by build-aux/embed-kernels.sh).  One text keeps the member order
 * and types of the two sides the same; the macros below spell each member
 * type as the side that reads it does, with the OpenCL C sizes and
 * alignments (int 4 bytes, ulong 8 bytes aligned to 8, float 4), which the
 * host side checks.
 *
 * Plain C that is also valid OpenCL C: no includes on the device. */
#ifndef PV_BACKENDS_SIFT_STRUCTS_H
#define PV_BACKENDS_SIFT_STRUCTS_H

#ifdef __OPENCL_C_VERSION__
#define PV_SHARED_INT int
#define PV_SHARED_ULONG ulong
#else
#include <stddef.h>
#include <stdint.h>
#define PV_SHARED_INT int32_t
#define PV_SHARED_ULONG _Alignas(8) uint64_t
#endif

/* Per octave (a __constant table): (width, height) and the plane offsets
 * of its DoG and Gaussian levels in the pyramids. */
typedef struct pv_sift_octave_info {
    PV_SHARED_INT w, h;
    PV_SHARED_ULONG dog_offset, gauss_offset;
} pv_sift_octave_info;

/* The detection's thresholds and sizes (a kernel argument by value). */
typedef struct pv_sift_settings {
    float peak_thresh, edge_thresh, sigma0, ori_window, ori_peak, magnif;
    PV_SHARED_INT levels;
} pv_sift_settings;

#ifndef __OPENCL_C_VERSION__
_Static_assert(sizeof(pv_sift_octave_info) == 24 &&
                   offsetof(pv_sift_octave_info, dog_offset) == 8 &&
                   offsetof(pv_sift_octave_info, gauss_offset) == 16,
               "pv_sift_octave_info has the OpenCL C layout");
_Static_assert(sizeof(pv_sift_settings) == 28 && offsetof(pv_sift_settings, levels) == 24,
               "pv_sift_settings has the OpenCL C layout");
#endif

#undef PV_SHARED_INT
#undef PV_SHARED_ULONG

#endif
