/* The OpenCL runtime's launch-parameter store: a context's overrides of the
 * families' defaults (params.c reads them), and the record of a lookup of
 * a parameter that no family has. */
#include "runtime_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pv_cl_param_override(pv_context *ctx, const char *family, const char *name, int *value)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; state && i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            *value = state->overrides[i].value;
            return 1;
        }
    return 0;
}

pv_status pv_cl_param_store_override(pv_context *ctx, const char *family, const char *name,
                                     int value)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (strlen(family) >= sizeof state->overrides[0].family ||
        strlen(name) >= sizeof state->overrides[0].name)
        return pv_fail(ctx, PV_ERR_INVALID, "launch parameter name too long: %s.%s", family, name);
    for (size_t i = 0; i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            state->overrides[i].value = value;
            return PV_OK;
        }
    param_override *grown =
        realloc(state->overrides, (state->override_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "launch parameter store: out of memory");
    state->overrides = grown;
    param_override *entry = &state->overrides[state->override_count++];
    snprintf(entry->family, sizeof entry->family, "%s", family);
    snprintf(entry->name, sizeof entry->name, "%s", name);
    entry->value = value;
    return PV_OK;
}

void pv_cl_param_misspelled(pv_context *ctx, const char *family, const char *name)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (state && !state->misspelled[0])
        snprintf(state->misspelled, sizeof state->misspelled, "%s.%s", family, name);
}

pv_status pv_cl_param_check(pv_context *ctx, int forget)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (!state || !state->misspelled[0])
        return PV_OK;
    pv_status status = pv_fail(ctx, PV_ERR_INVALID, "no launch parameter %s (a misspelled name)",
                               state->misspelled);
    if (forget)
        state->misspelled[0] = '\0';
    return status;
}
