/* The launch-parameter table: every kernel family's defaults, with
 * per-context overrides (the tuner's values, or a caller's experiment).
 * Kernels receive the values as -D defines, never as literals. */
#include "opencl.h"

#include <stdio.h>
#include <string.h>

static const pv_cl_param_family *const families[] = {
    &pv_cl_params_filter,
    &pv_cl_params_sad,
    &pv_cl_params_bp,
    &pv_cl_params_tune,
    &pv_cl_params_register,
    &pv_cl_params_fft,
    &pv_cl_params_flow,
    &pv_cl_params_features,
    &pv_cl_params_octreg,
    &pv_cl_params_geometry,
};

static const pv_cl_param_family *find_family(const char *family)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i]->family, family) == 0)
            return families[i];
    return NULL;
}

static const pv_cl_param_default *find_default(const pv_cl_param_family *family, const char *name)
{
    for (size_t i = 0; family && i < family->count; i++)
        if (strcmp(family->params[i].name, name) == 0)
            return &family->params[i];
    return NULL;
}

int pv_cl_param(pv_context *ctx, const char *family, const char *name, int fallback)
{
    int value;
    if (pv_cl_param_override(ctx, family, name, &value))
        return value;
    const pv_cl_param_default *entry = find_default(find_family(family), name);
    return entry ? entry->value : fallback;
}

pv_status pv_cl_param_set(pv_context *ctx, const char *family, const char *name, int value)
{
    if (!find_default(find_family(family), name))
        return pv_fail(ctx, PV_ERR_INVALID, "no launch parameter %s.%s", family, name);
    return pv_cl_param_store_override(ctx, family, name, value);
}

pv_status pv_cl_param_defines(pv_context *ctx, const char *family, char *buf, size_t size)
{
    const pv_cl_param_family *table = find_family(family);
    if (!table)
        return pv_fail(ctx, PV_ERR_INVALID, "no launch-parameter family '%s'", family);
    for (size_t i = 0; i < table->count; i++) {
        size_t used = strlen(buf);
        int value = pv_cl_param(ctx, family, table->params[i].name, table->params[i].value);
        int n = snprintf(buf + used, size - used, " -D%s=%d", table->params[i].name, value);
        if (n < 0 || (size_t)n >= size - used)
            return pv_fail(ctx, PV_ERR_INVALID, "launch-parameter defines of '%s' overflow", family);
    }
    return PV_OK;
}
