/* Internal: the winner step of the CPU semi-global matching
 * (sgm_winner.c). */
#ifndef PV_CPU_SGM_WINNER_H
#define PV_CPU_SGM_WINNER_H

#include "../../../lib/core/internal.h"
#include "sgm_volume.h"

/* Disparity (INFINITY where rejected) and confidence of every pixel from
 * v's sums, dense width x height.  right_rows: per thread 2 * width
 * entries of scratch. */
void sgm_choose_all(const sgm_volume *v, const pv_sgm_params *p, int16_t *right_rows,
                    float *disp, float *conf);

#endif
