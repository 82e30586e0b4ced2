/* The launch-parameter table: every kernel family's defaults, with
 * per-context overrides (the tuner's values, or a caller's experiment).
 * Kernels receive the values as -D defines, never as literals.  The
 * device sub-table's parameter slots (lib/core/ops_device.h) are here. */
#include "opencl.h"

#include <stdio.h>
#include <string.h>

static const pv_cl_param_family *const families[] = {
    &pv_cl_params_filter,
    &pv_cl_params_sad,
    &pv_cl_params_bp,
    &pv_cl_params_sgm,
    &pv_cl_params_register,
    &pv_cl_params_fft,
    &pv_cl_params_flow,
    &pv_cl_params_features,
    &pv_cl_params_octreg,
    &pv_cl_params_geometry,
    &pv_cl_params_colour,
};

#define FAMILY_COUNT (sizeof families / sizeof families[0])

static const pv_cl_param_family *find_family(const char *family)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++)
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

/* The entry of family.name, or NULL with PV_ERR_INVALID recorded on ctx. */
static const pv_cl_param_default *checked_entry(pv_context *ctx, const char *family,
                                                const char *name)
{
    const pv_cl_param_family *table = find_family(family);
    if (!table) {
        pv_fail(ctx, PV_ERR_INVALID, "no launch-parameter family '%s'", family);
        return NULL;
    }
    const pv_cl_param_default *entry = find_default(table, name);
    if (!entry)
        pv_fail(ctx, PV_ERR_INVALID, "no launch parameter %s.%s", family, name);
    return entry;
}

/* The current value of a known entry: the override if set, else the default. */
static int current_value(pv_context *ctx, const char *family, const pv_cl_param_default *entry)
{
    int value;
    return pv_cl_param_override(ctx, family, entry->name, &value) ? value : entry->value;
}

int pv_cl_param(pv_context *ctx, const char *family, const char *name, int fallback)
{
    const pv_cl_param_default *entry = find_default(find_family(family), name);
    if (!entry) {
        pv_cl_param_misspelled(ctx, family, name);
        return fallback;
    }
    return current_value(ctx, family, entry);
}

pv_status pv_cl_param_set(pv_context *ctx, const char *family, const char *name, int value)
{
    if (!checked_entry(ctx, family, name))
        return PV_ERR_INVALID;
    return pv_cl_param_store_override(ctx, family, name, value);
}

pv_status pv_cl_param_defines(pv_context *ctx, const char *family, char *buf, size_t size)
{
    const pv_cl_param_family *table = find_family(family);
    if (!table)
        return pv_fail(ctx, PV_ERR_INVALID, "no launch-parameter family '%s'", family);
    for (size_t i = 0; i < table->count; i++) {
        size_t used = strlen(buf);
        int value = current_value(ctx, family, &table->params[i]);
        int n = snprintf(buf + used, size - used, " -D%s=%d", table->params[i].name, value);
        if (n < 0 || (size_t)n >= size - used)
            return pv_fail(ctx, PV_ERR_INVALID, "launch-parameter defines of '%s' overflow", family);
    }
    return PV_OK;
}

/* ------------------------------------------- the device sub-table's slots */

const char *pv_cl_param_family_name(int index)
{
    return index >= 0 && (size_t)index < FAMILY_COUNT ? families[index]->family : NULL;
}

pv_status pv_cl_param_get(pv_context *ctx, const char *family, const char *name, int *value)
{
    const pv_cl_param_default *entry = checked_entry(ctx, family, name);
    if (!entry)
        return PV_ERR_INVALID;
    *value = current_value(ctx, family, entry);
    return PV_OK;
}

pv_status pv_cl_param_list(pv_context *ctx, const char *family, pv_tune_param *params,
                           int capacity, int *count)
{
    const pv_cl_param_family *table = find_family(family);
    if (!table)
        return pv_fail(ctx, PV_ERR_INVALID, "no launch-parameter family '%s'", family);
    int filled = 0;
    for (size_t i = 0; i < table->count && filled < capacity; i++, filled++) {
        snprintf(params[filled].name, sizeof params[filled].name, "%s", table->params[i].name);
        params[filled].value = current_value(ctx, family, &table->params[i]);
    }
    *count = filled;
    return PV_OK;
}

pv_status pv_cl_param_reset(pv_context *ctx, const char *family)
{
    const pv_cl_param_family *table = find_family(family);
    if (!table)
        return pv_fail(ctx, PV_ERR_INVALID, "no launch-parameter family '%s'", family);
    for (size_t i = 0; i < table->count; i++) {
        pv_status status = pv_cl_param_store_override(ctx, family, table->params[i].name,
                                                      table->params[i].value);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}
