/* Internal: the CPU semi-global matching's per-call state shared by
 * stereo_sgm.c (costs, paths) and sgm_winner.c. */
#ifndef PV_CPU_SGM_VOLUME_H
#define PV_CPU_SGM_VOLUME_H

#include <stddef.h>
#include <stdint.h>

typedef struct sgm_volume {
    int width, height, ndisp, min_disp;
    int threads;
    uint64_t *census_left, *census_right;
    int32_t *intensity;  /* left integer intensities (adaptive P2), or NULL */
    uint8_t *cost;       /* [(y * width + x) * ndisp + k] */
    uint16_t *sum;       /* same layout */
} sgm_volume;

/* The first of pixel (x, y)'s ndisp entries in cost and sum. */
static inline size_t cell(const sgm_volume *v, int x, int y)
{
    return ((size_t)y * (size_t)v->width + (size_t)x) * (size_t)v->ndisp;
}

#endif
