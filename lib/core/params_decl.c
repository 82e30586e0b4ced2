/* The generic side of the parameter declarations (params_decl.h): defaults,
 * reads, writes and range checks, driven by the declared tables alone. */
#include "params_decl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

double pv_decl_get(const pv_param_decl *p, const void *params)
{
    const char *field = (const char *)params + p->offset;
    switch (p->kind) {
    case PV_FIELD_INT: {
        int v;
        memcpy(&v, field, sizeof v);
        return v;
    }
    case PV_FIELD_FLOAT: {
        float v;
        memcpy(&v, field, sizeof v);
        return v;
    }
    case PV_FIELD_DOUBLE: {
        double v;
        memcpy(&v, field, sizeof v);
        return v;
    }
    case PV_FIELD_SIZE: {
        size_t v;
        memcpy(&v, field, sizeof v);
        return (double)v;
    }
    case PV_FIELD_U64: {
        uint64_t v;
        memcpy(&v, field, sizeof v);
        return (double)v;
    }
    }
    return NAN;
}

void pv_decl_put(const pv_param_decl *p, void *params, double value)
{
    char *field = (char *)params + p->offset;
    switch (p->kind) {
    case PV_FIELD_INT: {
        const int v = (int)value;
        memcpy(field, &v, sizeof v);
        break;
    }
    case PV_FIELD_FLOAT: {
        const float v = (float)value;
        memcpy(field, &v, sizeof v);
        break;
    }
    case PV_FIELD_DOUBLE:
        memcpy(field, &value, sizeof value);
        break;
    case PV_FIELD_SIZE: { /* 2^64 (and 2^32 on a 32-bit size_t) saturates */
        const size_t v = value >= (double)SIZE_MAX ? SIZE_MAX : (size_t)value;
        memcpy(field, &v, sizeof v);
        break;
    }
    case PV_FIELD_U64: {
        const uint64_t v = value >= PV_DECL_U64_MAX ? UINT64_MAX : (uint64_t)value;
        memcpy(field, &v, sizeof v);
        break;
    }
    }
}

/* Whether value is one of the "name=value|..." list's values. */
static int is_declared_choice(const char *choices, double value)
{
    for (const char *s = choices; s && *s;) {
        const char *eq = strchr(s, '=');
        if (!eq)
            return 0;
        char *end;
        const double v = strtod(eq + 1, &end);
        if (v == value)
            return 1;
        s = *end == '|' ? end + 1 : end;
    }
    return 0;
}

const char *pv_decl_refusal(const pv_param_decl *p, double value)
{
    const pv_param_info *i = &p->info;
    if (!isfinite(value))
        return "not a finite number";
    if (i->type != PV_PARAM_REAL && value != floor(value))
        return "not an integer";
    if (value < i->min || value > i->max ||
        ((i->flags & PV_PARAM_MIN_EXCLUSIVE) && value == i->min))
        return "out of range";
    if (i->type == PV_PARAM_CHOICE && !is_declared_choice(i->choices, value))
        return "not a choice";
    if (p->kind == PV_FIELD_FLOAT && fabs(value) > 3.4e38)
        return "out of float range";
    return NULL;
}

void pv_decl_range_text(const pv_param_decl *p, char *buf, size_t size)
{
    const pv_param_info *i = &p->info;
    switch (i->type) {
    case PV_PARAM_BOOL:
        snprintf(buf, size, "0 or 1");
        return;
    case PV_PARAM_CHOICE: { /* the names only: "one of none|fft|linear" */
        size_t n = (size_t)snprintf(buf, size, "one of ");
        for (const char *s = i->choices; s && *s && n + 1 < size; s++) {
            if (*s == '=') {
                while (s[1] && s[1] != '|')
                    s++;
                continue;
            }
            buf[n++] = *s;
        }
        buf[n < size ? n : size - 1] = '\0';
        return;
    }
    case PV_PARAM_INT:
        if (i->max >= PV_DECL_EXACT_MAX)
            snprintf(buf, size, ">= %.17g", i->min);
        else
            snprintf(buf, size, "in %.17g..%.17g", i->min, i->max);
        return;
    case PV_PARAM_REAL: {
        const char *lower = (i->flags & PV_PARAM_MIN_EXCLUSIVE) ? ">" : ">=";
        if (i->max >= PV_DECL_NO_MAX)
            snprintf(buf, size, "finite and %s %.9g", lower, i->min);
        else
            snprintf(buf, size, "%s %.9g and <= %.9g", lower, i->min, i->max);
        return;
    }
    }
    snprintf(buf, size, "valid");
}

void pv_decl_defaults(const pv_op_decl *decl, void *params)
{
    memset(params, 0, decl->size); /* padding and any undeclared field: zero */
    for (int k = 0; k < decl->count; k++)
        pv_decl_put(&decl->params[k], params, decl->params[k].info.default_value);
}

pv_status pv_decl_check(pv_context *ctx, const char *op, const pv_op_decl *decl,
                        const void *params)
{
    for (int k = 0; k < decl->count; k++) {
        const pv_param_decl *p = &decl->params[k];
        const double value = pv_decl_get(p, params);
        if (pv_decl_refusal(p, value)) {
            char range[160];
            pv_decl_range_text(p, range, sizeof range);
            /* the C argument's name: "options" for the *_options structures */
            const char *suffix = strrchr(decl->params_type, '_');
            const char *arg = suffix && strcmp(suffix, "_options") == 0 ? "options" : "params";
            return pv_fail(ctx, PV_ERR_INVALID, "%s: %s.%s %.17g is not %s", op, arg,
                           p->info.name, value, range);
        }
    }
    return PV_OK;
}
