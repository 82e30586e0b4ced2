/* Cross-check support: comparing a device result with the CPU oracle. */
#include "internal.h"

#include <math.h>
#include <string.h>

int pv_crosscheck_wanted(const pv_context *ctx)
{
    /* A device-buffer call's cross-check is lib/interop/interop.c's, on
     * host copies of its buffers. */
    return ctx->crosscheck && ctx->ops != &pv_cpu_backend && !ctx->device_call;
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

/* ------------------------------------------------------------ the oracle */

void pv_oracle_begin(pv_context *ctx, const char *op, pv_oracle *oracle)
{
    memset(oracle, 0, sizeof *oracle);
    oracle->op = op;
    oracle->saved = ctx->timing;
    ctx->progress_muted++;
}

/* One more output: a dense scratch twin of `image` or else of `volume`. */
static pv_status add_output(pv_context *ctx, pv_oracle *oracle, const pv_image *image,
                            const pv_volume *volume)
{
    if (oracle->count == PV_ORACLE_MAX_OUTPUTS)
        return pv_fail(ctx, PV_ERR_INVALID, "%s cross-check: more than %d outputs", oracle->op,
                       PV_ORACLE_MAX_OUTPUTS);
    pv_oracle_output *out = &oracle->output[oracle->count];
    memset(out, 0, sizeof *out);
    pv_status status = image ? pv_image_alloc_like(&out->cpu_image, image, PV_PIXEL_F32)
                             : pv_volume_alloc_like(&out->cpu_volume, volume);
    if (status != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s cross-check: no memory for the CPU result",
                       oracle->op);
    out->device_image = image;
    out->device_volume = image ? NULL : volume;
    oracle->count++;
    return PV_OK;
}

pv_status pv_oracle_add_image(pv_context *ctx, pv_oracle *oracle, const pv_image *device,
                              pv_image **cpu)
{
    *cpu = NULL;
    pv_status status = device ? add_output(ctx, oracle, device, NULL) : PV_OK;
    if (device && status == PV_OK)
        *cpu = &oracle->output[oracle->count - 1].cpu_image;
    return status;
}

pv_status pv_oracle_add_volume(pv_context *ctx, pv_oracle *oracle, const pv_volume *device,
                               pv_volume **cpu)
{
    *cpu = NULL;
    pv_status status = device ? add_output(ctx, oracle, NULL, device) : PV_OK;
    if (device && status == PV_OK)
        *cpu = &oracle->output[oracle->count - 1].cpu_volume;
    return status;
}

/* The largest relative L-infinity difference over the outputs. */
static double oracle_error(const pv_oracle *oracle)
{
    double worst = 0.0;
    for (int i = 0; i < oracle->count; i++) {
        const pv_oracle_output *out = &oracle->output[i];
        double error = out->device_image ? pv_image_rel_linf(out->device_image, &out->cpu_image)
                                         : pv_volume_rel_linf(out->device_volume,
                                                              &out->cpu_volume);
        if (!(error <= worst))
            worst = error;
    }
    return worst;
}

pv_status pv_oracle_end(pv_context *ctx, pv_oracle *oracle, pv_status status, double tolerance)
{
    ctx->timing = oracle->saved;
    ctx->progress_muted--;
    if (status == PV_OK && tolerance >= 0.0) {
        double error = oracle_error(oracle);
        if (!(error <= tolerance))
            status = pv_fail(ctx, PV_ERR_MISMATCH, "%s cross-check: relative error %g > %g",
                             oracle->op, error, tolerance);
    }
    for (int i = 0; i < oracle->count; i++) {
        pv_oracle_output *out = &oracle->output[i];
        if (out->device_image)
            pv_image_free(&out->cpu_image);
        else
            pv_volume_free(&out->cpu_volume);
    }
    oracle->count = 0;
    return status;
}

void pv_destroy_plan_pair(pv_context *ctx, pv_plan_destroy_fn backend_destroy,
                          void *backend_plan, pv_plan_destroy_fn cpu_destroy, void *cpu_plan)
{
    pv_context_lock(ctx);
    if (backend_plan && backend_destroy)
        backend_destroy(ctx, backend_plan);
    if (cpu_plan && cpu_destroy)
        cpu_destroy(ctx, cpu_plan);
    pv_context_unlock(ctx);
}
