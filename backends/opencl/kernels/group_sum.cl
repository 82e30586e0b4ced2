/* A work group's sum of one value per work item, by a tree in local memory,
 * shared by the programs that reduce over a one-dimensional group
 * (build-aux/embed-kernels.sh inlines this file where a program says
 * #include "group_sum.cl").
 *
 * DEFINE_GROUP_SUM(NAME, TYPE, WIDTH) defines
 *     TYPE NAME(__local TYPE *partial, TYPE mine)
 * for a group of WIDTH items (a power of two; partial holds WIDTH values):
 * every item passes its value and gets the group's sum back.  Item i adds
 * item i + step, for step = WIDTH / 2 down to 1, so a float sum is added in
 * the same order on every run.  partial must be free when it is called: the
 * first store is not behind a barrier of its own. */
#define DEFINE_GROUP_SUM(NAME, TYPE, WIDTH)                                              \
static TYPE NAME(__local TYPE *partial, TYPE mine)                                       \
{                                                                                        \
    const int lid = get_local_id(0);                                                     \
    partial[lid] = mine;                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    for (int step = (WIDTH) / 2; step > 0; step >>= 1) {                                 \
        if (lid < step)                                                                  \
            partial[lid] += partial[lid + step];                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    }                                                                                    \
    return partial[0];                                                                   \
}
