/* CPU masked normxcorr2: the direct sums of backends/common/ncc_masked.h
 * (one text with the OpenCL kernel), evaluated for NCC_LANES neighbouring
 * map points at once where their overlaps span the template's full width,
 * and point by point elsewhere.  Each lane repeats the single point's
 * operations in the same order (no reassociation, no fused multiply-add
 * in ISO C), so the lanes give the same bits as ncc_masked_coefficient;
 * they only let the compiler keep the points in one vector register, as
 * an OpenCL CPU driver does with work items. */
#include "ncc_masked.h"

#include <math.h>
#include <stddef.h>

#define NCC_GLOBAL
#define NCC_SQRT(x) sqrtf(x)
#include "../../common/ncc_masked.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define NCC_LANES 8

typedef struct lane_sums {
    int count[NCC_LANES];
    float sum_t[NCC_LANES], sum_i[NCC_LANES];
    float mean_t[NCC_LANES], mean_i[NCC_LANES];
    float var_t[NCC_LANES], var_i[NCC_LANES], cross[NCC_LANES];
} lane_sums;

/* First pass over overlap o for the lanes u .. u + NCC_LANES - 1 (whose
 * overlaps differ only by their image columns). */
static void lanes_first(ncc_masked_side t, ncc_masked_side im, ncc_masked_overlap o,
                        lane_sums *s)
{
    for (int l = 0; l < NCC_LANES; l++) {
        s->count[l] = 0;
        s->sum_t[l] = s->sum_i[l] = 0.0f;
    }
    for (int y = o.y0; y < o.y1; y++) {
        const float *tm = t.mask + (ptrdiff_t)y * t.width, *tv = t.values + (ptrdiff_t)y * t.width;
        const ptrdiff_t i_row = (ptrdiff_t)(y + o.oy) * im.width + o.ox;
        const float *jm = im.mask + i_row, *jv = im.values + i_row;
        for (int x = o.x0; x < o.x1; x++)
            for (int l = 0; l < NCC_LANES; l++) {
                const float both = tm[x] * jm[x + l];
                s->count[l] += both != 0.0f;
                s->sum_t[l] = s->sum_t[l] + both * tv[x];
                s->sum_i[l] = s->sum_i[l] + both * jv[x + l];
            }
    }
}

/* Second pass: the centred squares and cross products about each lane's
 * means (lanes below min_overlap are computed too and dropped later). */
static void lanes_second(ncc_masked_side t, ncc_masked_side im, ncc_masked_overlap o,
                         lane_sums *s)
{
    for (int l = 0; l < NCC_LANES; l++) {
        s->mean_t[l] = s->sum_t[l] / (float)s->count[l];
        s->mean_i[l] = s->sum_i[l] / (float)s->count[l];
        s->var_t[l] = s->var_i[l] = s->cross[l] = 0.0f;
    }
    for (int y = o.y0; y < o.y1; y++) {
        const float *tm = t.mask + (ptrdiff_t)y * t.width, *tv = t.values + (ptrdiff_t)y * t.width;
        const ptrdiff_t i_row = (ptrdiff_t)(y + o.oy) * im.width + o.ox;
        const float *jm = im.mask + i_row, *jv = im.values + i_row;
        for (int x = o.x0; x < o.x1; x++)
            for (int l = 0; l < NCC_LANES; l++) {
                const float both = tm[x] * jm[x + l];
                const float dt = both * (tv[x] - s->mean_t[l]);
                const float di = both * (jv[x + l] - s->mean_i[l]);
                s->var_t[l] = s->var_t[l] + dt * dt;
                s->var_i[l] = s->var_i[l] + di * di;
                s->cross[l] = s->cross[l] + dt * di;
            }
    }
}

/* Map points u .. u + NCC_LANES - 1 of row v into out. */
static void lanes_at(ncc_masked_side t, ncc_masked_side im, int u, int v, int min_overlap,
                     float floor_ratio, float *out)
{
    const ncc_masked_overlap o = ncc_masked_overlap_at(t, im, u, v);
    lane_sums s;
    lanes_first(t, im, o, &s);
    lanes_second(t, im, o, &s);
    for (int l = 0; l < NCC_LANES; l++)
        out[l] = s.count[l] < 1 || s.count[l] < min_overlap
                     ? 0.0f
                     : ncc_masked_finish(s.var_t[l], s.var_i[l], s.cross[l], s.mean_t[l],
                                         s.sum_t[l], s.mean_i[l], s.sum_i[l], floor_ratio);
}

static int thread_count(const pv_context *ctx)
{
    return ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
}

pv_status pv_cpu_ncc_masked(pv_context *ctx, const pv_ncc_masked_job *job, pv_image *map)
{
    const ncc_masked_side t = {job->templ.data, job->templ_mask.data, job->templ.width,
                               job->templ.height};
    const ncc_masked_side im = {job->image.data, job->image_mask.data, job->image.width,
                                job->image.height};
    /* Points u whose overlap spans the template's width: first .. last. */
    const int first = t.width - 1, last = im.width - 1;
#pragma omp parallel for num_threads(thread_count(ctx)) schedule(dynamic, 4)
    for (int v = 0; v < map->height; v++) {
        float *row = (float *)map->data + (ptrdiff_t)v * map->stride;
        int u = 0;
        for (; u < map->width; u++) {
            if (u >= first && u + NCC_LANES - 1 <= last) {
                lanes_at(t, im, u, v, job->min_overlap, job->floor_ratio, row + u);
                u += NCC_LANES - 1;
                continue;
            }
            row[u] = ncc_masked_coefficient(t, im, u, v, job->min_overlap, job->floor_ratio);
        }
    }
    return PV_OK;
}
