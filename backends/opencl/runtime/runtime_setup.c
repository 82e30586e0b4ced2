/* The OpenCL runtime's state on a context: its set-up and release, and the
 * hooks run at the release.  The top of the runtime: it calls the other
 * files (runtime_state.h's list), none of them calls it. */
#include "runtime_state.h"

#include <stdlib.h>

/* ------------------------------------------------------------ init/release */

pv_status pv_cl_runtime_init(pv_context *ctx, int device_index)
{
    pv_cl_state *state = calloc(1, sizeof *state);
    if (!state)
        return pv_fail(ctx, PV_ERR_NOMEM, "OpenCL runtime: out of memory");
    pv_status status = pv_cl_device_pick(ctx, state, device_index);
    if (status != PV_OK) {
        free(state);
        return status;
    }
    ctx->backend_state = state;
    pv_cl_profile_init(state);
    char faults[PV_CONFIG_VALUE_MAX + 1];
    pv_config_get(PV_CONFIG_FAULT, faults, sizeof faults);
    status = pv_cl_faults_parse(ctx, faults, &state->faults);
    if (status == PV_OK)
        status = pv_cl_context_create(ctx, state);
    if (status != PV_OK)
        pv_cl_runtime_release(ctx);
    return status;
}

void pv_cl_runtime_release(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (!state)
        return;
    if (state->queue)
        clFinish(state->queue);
    for (size_t i = 0; i < state->hook_count; i++)
        state->hooks[i].fn(ctx, state->hooks[i].arg);
    free(state->hooks);
    pv_cl_release_stages(state);
    pv_cl_release_profile(ctx, state);
    pv_cl_release_programs(state);
    pv_cl_release_scratch(state);
    free(state->overrides);
    if (state->queue)
        clReleaseCommandQueue(state->queue);
    if (state->context)
        clReleaseContext(state->context);
    free(state);
    ctx->backend_state = NULL;
}

pv_status pv_cl_on_release(pv_context *ctx, pv_cl_release_fn fn, void *arg)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; i < state->hook_count; i++)
        if (state->hooks[i].fn == fn && state->hooks[i].arg == arg)
            return PV_OK;
    release_hook *grown = realloc(state->hooks, (state->hook_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "release hooks: out of memory");
    state->hooks = grown;
    state->hooks[state->hook_count].fn = fn;
    state->hooks[state->hook_count++].arg = arg;
    return PV_OK;
}

