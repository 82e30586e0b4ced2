/* Internal: the CPU backend's semi-global matching (stereo_sgm.c), bound
 * to the stereo sub-table's sgm slot in stereo.c. */
#ifndef PV_CPU_STEREO_SGM_H
#define PV_CPU_STEREO_SGM_H

#include "../../../lib/core/internal.h"

/* Arguments checked by the front end (lib/stereo/stereo_sgm.c); confidence may be
 * NULL.  Everything is allocated before an output is written. */
pv_status pv_cpu_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sgm_params *params, pv_image *disparity, pv_image *confidence);

#endif
