/* Internal: the CPU backend's masked normxcorr2 (ncc_masked.c), bound to
 * the register sub-table's normxcorr2_masked slot in register.c. */
#ifndef PV_CPU_NCC_MASKED_H
#define PV_CPU_NCC_MASKED_H

#include "../../../lib/core/internal.h"

/* The job as lib/core/ops_register.h describes it; map: f32, the map's
 * size.  Never fails. */
pv_status pv_cpu_ncc_masked(pv_context *ctx, const pv_ncc_masked_job *job, pv_image *map);

#endif
