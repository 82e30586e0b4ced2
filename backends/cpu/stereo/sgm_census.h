/* Internal: the census codes and intensities of the CPU semi-global
 * matching (sgm_census.c). */
#ifndef PV_CPU_SGM_CENSUS_H
#define PV_CPU_SGM_CENSUS_H

#include "../../../lib/core/internal.h"

#include <stdint.h>

/* The census code of every pixel of image (p's window and bit order) into
 * out, width x height dense.  Returns 0 without memory for the padded copy. */
int sgm_census_image(const pv_image *image, const pv_sgm_params *p, uint64_t *out, int threads);

/* The left image's integer intensities (sgm_math.h) into out, dense. */
void sgm_fill_intensity(const pv_image *left, int32_t *out);

#endif
