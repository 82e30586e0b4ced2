/* Arg-max over batches of float maps, shared by the phase-correlation and
 * AO-OCT programs (build-aux/embed-kernels.sh inlines this file where a
 * program says #include "argmax.cl").  The including program defines
 * ARGMAX_WG, the work-group size of the reductions (a power of two), from
 * its own launch parameter.
 *
 * Larger value wins; equal values go to the smaller index, so the result
 * is the first maximum in memory order however the work is split. */
static void take_better(float *value, uint *index, float other_value, uint other_index)
{
    if (other_value > *value || (other_value == *value && other_index < *index)) {
        *value = other_value;
        *index = other_index;
    }
}

static void reduce_local(__local float *values, __local uint *indices)
{
    const int lid = get_local_id(0);
    for (int step = ARGMAX_WG / 2; step > 0; step >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < step) {
            float v = values[lid];
            uint i = indices[lid];
            take_better(&v, &i, values[lid + step], indices[lid + step]);
            values[lid] = v;
            indices[lid] = i;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The best of map data's elements group * WG + lid, stepping by
 * groups * WG, left in values[0] / indices[0] of the group. */
static void reduce_strided(__global const float *data, uint count, uint group, uint groups,
                           __local float *values, __local uint *indices)
{
    const int lid = get_local_id(0);
    float best = -INFINITY;
    uint best_index = UINT_MAX;
    for (uint i = group * ARGMAX_WG + lid; i < count; i += groups * ARGMAX_WG)
        if (data[i] > best) {
            best = data[i];
            best_index = i;
        }
    values[lid] = best;
    indices[lid] = best_index;
    reduce_local(values, indices);
}

/* Stage 1: one partial (value, index) per group and map.
 * Global (groups * ARGMAX_WG, maps). */
__kernel __attribute__((reqd_work_group_size(ARGMAX_WG, 1, 1)))
void argmax_partial(__global const float *maps, uint count, uint groups,
                    __global float *part_values, __global uint *part_indices)
{
    __local float values[ARGMAX_WG];
    __local uint indices[ARGMAX_WG];
    const uint group = get_group_id(0), map = get_global_id(1);
    reduce_strided(maps + (size_t)map * count, count, group, groups, values, indices);
    if (get_local_id(0) == 0) {
        part_values[(size_t)map * groups + group] = values[0];
        part_indices[(size_t)map * groups + group] = indices[0];
    }
}

/* Stage 2 helper: the best of map m's partials, left in values[0] /
 * indices[0] of the group (one group per map). */
static void reduce_partials(__global const float *part_values, __global const uint *part_indices,
                            uint groups, uint map, __local float *values, __local uint *indices)
{
    const int lid = get_local_id(0);
    float best = -INFINITY;
    uint best_index = UINT_MAX;
    for (uint g = lid; g < groups; g += ARGMAX_WG)
        take_better(&best, &best_index, part_values[(size_t)map * groups + g],
                    part_indices[(size_t)map * groups + g]);
    values[lid] = best;
    indices[lid] = best_index;
    reduce_local(values, indices);
}

static int wrap(int i, int n)
{
    return i < 0 ? i + n : i >= n ? i - n : i;
}

static size_t grid_index(int x, int y, int z, int nx, int ny)
{
    return (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * (size_t)z);
}
