/* Cross-check support: comparing a device result with the CPU oracle. */
#include "internal.h"

#include <math.h>

int pv_crosscheck_wanted(const pv_context *ctx)
{
    return ctx->crosscheck && ctx->ops != &pv_cpu_backend;
}

/* Running state of a relative L-infinity comparison. */
typedef struct linf_state {
    double max_diff;
    double max_ref;
} linf_state;

static void linf_add(linf_state *state, float a, float b)
{
    if (isinf(a) || isinf(b)) {
        if (a != b)
            state->max_diff = INFINITY;
        return;
    }
    double diff = fabs((double)a - (double)b);
    if (isnan(diff) || diff > state->max_diff)
        state->max_diff = isnan(diff) ? INFINITY : diff;
    if (fabs((double)b) > state->max_ref)
        state->max_ref = fabs((double)b);
}

double pv_image_rel_linf(const pv_image *a, const pv_image *b)
{
    linf_state state = {0.0, 1.0};
    for (int y = 0; y < b->height; y++) {
        const float *row_a = (const float *)a->data + (ptrdiff_t)y * a->stride;
        const float *row_b = (const float *)b->data + (ptrdiff_t)y * b->stride;
        for (int x = 0; x < b->width; x++)
            linf_add(&state, row_a[x], row_b[x]);
    }
    return state.max_diff / state.max_ref;
}

double pv_volume_rel_linf(const pv_volume *a, const pv_volume *b)
{
    linf_state state = {0.0, 1.0};
    for (int z = 0; z < b->nz; z++)
        for (int y = 0; y < b->ny; y++) {
            const float *row_a = a->data + y * a->stride_y + z * a->stride_z;
            const float *row_b = b->data + y * b->stride_y + z * b->stride_z;
            for (int x = 0; x < b->nx; x++)
                linf_add(&state, row_a[x], row_b[x]);
        }
    return state.max_diff / state.max_ref;
}
