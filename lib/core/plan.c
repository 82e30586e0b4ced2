/* Helpers of the backends' plans and plan caches (lib/core/plan.h). */
#include "failure.h"
#include "plan.h"

#include <stdlib.h>

void *pv_plan_new(pv_context *ctx, size_t size, const char *what)
{
    void *plan = calloc(1, size);
    if (!plan)
        pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", what);
    return plan;
}

int pv_r2c_counts(const int size[3], size_t batch, size_t *real_count, size_t *complex_count)
{
    size_t plane, half_plane, bytes;
    return pv_size_mul((size_t)size[0], (size_t)size[1], &plane) &&
           pv_size_mul(plane, (size_t)size[2], real_count) &&
           pv_size_mul((size_t)(size[0] / 2 + 1), (size_t)size[1], &half_plane) &&
           pv_size_mul(half_plane, (size_t)size[2], complex_count) &&
           pv_size_mul(*complex_count, 2 * sizeof(float), &bytes) &&
           pv_size_mul(bytes, batch, &bytes);
}
