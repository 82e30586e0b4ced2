/* CPU reference: the arg-max of a correlation map and the values around
 * it, shared by the register and octreg modules. */
#include "../cpu.h"

#include <string.h>

typedef struct best_value {
    float value;
    size_t index;
} best_value;

/* Larger value wins; equal values go to the smaller index, so the answer
 * does not depend on how the search was split. */
static best_value better(best_value a, best_value b)
{
    return b.value > a.value || (b.value == a.value && b.index < a.index) ? b : a;
}

static best_value find_max(pv_context *ctx, const float *map, size_t count)
{
    best_value best = {map[0], 0};
#pragma omp parallel num_threads(ctx->cpu_threads > 0 ? ctx->cpu_threads : 1)
    {
        best_value mine = {map[0], 0};
#pragma omp for schedule(static) nowait
        for (size_t i = 0; i < count; i++)
            if (map[i] > mine.value)
                mine = (best_value){map[i], i};
#pragma omp critical(pv_cpu_map_max)
        best = better(best, mine);
    }
    return best;
}

static int wrap(int i, int n)
{
    return i < 0 ? i + n : i >= n ? i - n : i;
}

pv_pc_peak pv_cpu_map_peak(pv_context *ctx, const float *map, const int n[3])
{
    best_value best = find_max(ctx, map, (size_t)n[0] * (size_t)n[1] * (size_t)n[2]);
    pv_pc_peak peak;
    int at[3] = {(int)(best.index % (size_t)n[0]), (int)(best.index / (size_t)n[0] % (size_t)n[1]),
                 (int)(best.index / ((size_t)n[0] * n[1]))};
    peak.value = best.value;
    memcpy(peak.index, at, sizeof at);
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            int q[3] = {at[0], at[1], at[2]};
            q[a] = wrap(q[a] + (side ? 1 : -1), n[a]);
            peak.neighbors[a][side] = map[((size_t)q[2] * n[1] + q[1]) * n[0] + q[0]];
        }
    return peak;
}
