/* Internal: the CPU reference backend's operations, one module per file. */
#ifndef PV_CPU_H
#define PV_CPU_H

#include "../../lib/core/internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The calling thread's index in the current OpenMP team (0 outside one, or
 * without OpenMP): which per-thread scratch buffer it may use. */
static inline int pv_cpu_thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The module sub-tables this backend's backend.c composes. */
PV_BACKEND_MODULES(PV_BACKEND_DECLARE, pv_cpu_)

/* peak_search.c: the first largest value of a dense n[0] x n[1] x n[2]
 * correlation map (x fastest), its grid index and its six neighbours
 * (wrapped), in pv_pc_peak form. */
pv_pc_peak pv_cpu_map_peak(pv_context *ctx, const float *map, const int n[3]);

#endif
