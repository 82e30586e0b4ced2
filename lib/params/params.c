/* The introspection calls of include/parvis/params.h: the list of every
 * operation's declaration (each lives beside its front end, in
 * lib/<module>/<module>_params.c) and the checked reads and writes of a
 * parameter structure by name. */
#include "../core/internal.h"
#include "../core/params_decl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Every operation with a parameter structure, in the order the command
 * line's help and the docs list them.  Adding an operation adds its
 * declaration's name here. */
#define PV_DECLARED_OPS(X) \
    X(sad) X(bp) X(sgm) X(sift) X(sift_match) X(ransac) X(phasecorr) X(phasecorr_masked) X(octreg) X(flow)

#define PV_DECLARE_EXTERN(name) extern const pv_op_decl pv_##name##_decl;
PV_DECLARED_OPS(PV_DECLARE_EXTERN)
#define PV_LIST_ENTRY(name) &pv_##name##_decl,
static const pv_op_decl *const declared_ops[] = {PV_DECLARED_OPS(PV_LIST_ENTRY)};
#define OP_COUNT ((int)(sizeof declared_ops / sizeof declared_ops[0]))

int pv_op_count(void)
{
    return OP_COUNT;
}

static pv_status op_decl(int op, const char *call, const pv_op_decl **out)
{
    if (op < 0 || op >= OP_COUNT)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: operation %d is not in 0..%d", call, op,
                       OP_COUNT - 1);
    *out = declared_ops[op];
    return PV_OK;
}

pv_status pv_op_get(int op, pv_op_info *info)
{
    const pv_op_decl *d = NULL;
    if (!info)
        return pv_fail(NULL, PV_ERR_INVALID, "op_get: info is NULL");
    pv_status status = op_decl(op, "op_get", &d);
    if (status != PV_OK)
        return status;
    *info = (pv_op_info){d->name, d->module, d->params_type, d->size, d->count, d->summary};
    return PV_OK;
}

pv_status pv_op_find(const char *name, int *op)
{
    if (!name || !op)
        return pv_fail(NULL, PV_ERR_INVALID, "op_find: %s is NULL", name ? "op" : "name");
    for (int k = 0; k < OP_COUNT; k++) {
        if (strcmp(declared_ops[k]->name, name) == 0) {
            *op = k;
            return PV_OK;
        }
    }
    return pv_fail(NULL, PV_ERR_INVALID, "op_find: no operation named '%s'", name);
}

pv_status pv_op_param(int op, int param, pv_param_info *info)
{
    const pv_op_decl *d = NULL;
    if (!info)
        return pv_fail(NULL, PV_ERR_INVALID, "op_param: info is NULL");
    pv_status status = op_decl(op, "op_param", &d);
    if (status != PV_OK)
        return status;
    if (param < 0 || param >= d->count)
        return pv_fail(NULL, PV_ERR_INVALID, "op_param: %s has no parameter %d (0..%d)",
                       d->name, param, d->count - 1);
    *info = d->params[param].info;
    return PV_OK;
}

static const pv_param_decl *find_param(const pv_op_decl *d, const char *name)
{
    for (int k = 0; k < d->count; k++)
        if (strcmp(d->params[k].info.name, name) == 0)
            return &d->params[k];
    return NULL;
}

pv_status pv_op_find_param(int op, const char *name, int *param)
{
    const pv_op_decl *d = NULL;
    if (!name || !param)
        return pv_fail(NULL, PV_ERR_INVALID, "op_find_param: %s is NULL",
                       name ? "param" : "name");
    pv_status status = op_decl(op, "op_find_param", &d);
    if (status != PV_OK)
        return status;
    const pv_param_decl *p = find_param(d, name);
    if (!p)
        return pv_fail(NULL, PV_ERR_INVALID, "op_find_param: %s has no parameter '%s'",
                       d->name, name);
    *param = (int)(p - d->params);
    return PV_OK;
}

/* The declaration of op and, when name is given, of its parameter, after
 * checking the structure pointer and its size. */
static pv_status lookup(int op, const void *params, size_t size, const char *name,
                        const char *call, const pv_op_decl **decl, const pv_param_decl **param)
{
    pv_status status = op_decl(op, call, decl);
    if (status != PV_OK)
        return status;
    if (!params)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: params is NULL", call);
    if (size != (*decl)->size)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: size %zu is not sizeof(%s) = %zu", call, size,
                       (*decl)->params_type, (*decl)->size);
    if (!param)
        return PV_OK;
    if (!name)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: name is NULL", call);
    *param = find_param(*decl, name);
    if (!*param)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: %s has no parameter '%s'", call, (*decl)->name,
                       name);
    return PV_OK;
}

pv_status pv_params_init(int op, void *params, size_t size)
{
    const pv_op_decl *d = NULL;
    pv_status status = lookup(op, params, size, NULL, "params_init", &d, NULL);
    if (status == PV_OK)
        pv_decl_defaults(d, params);
    return status;
}

pv_status pv_params_set(int op, void *params, size_t size, const char *name, double value)
{
    const pv_op_decl *d = NULL;
    const pv_param_decl *p = NULL;
    pv_status status = lookup(op, params, size, name, "params_set", &d, &p);
    if (status != PV_OK)
        return status;
    const char *why = pv_decl_refusal(p, value);
    if (why) {
        char range[160];
        pv_decl_range_text(p, range, sizeof range);
        return pv_fail(NULL, PV_ERR_INVALID, "%s: %s %.17g is %s (%s)", d->name, name, value,
                       why, range);
    }
    pv_decl_put(p, params, value);
    return PV_OK;
}

/* A CHOICE's value from its name in "name=value|...", or -1 if none. */
static int choice_named(const char *choices, const char *text, double *value)
{
    const size_t length = strlen(text);
    for (const char *s = choices; s && *s;) {
        const char *eq = strchr(s, '=');
        if (!eq)
            return -1;
        char *end;
        const double v = strtod(eq + 1, &end);
        if ((size_t)(eq - s) == length && strncasecmp(s, text, length) == 0) {
            *value = v;
            return 0;
        }
        s = *end == '|' ? end + 1 : end;
    }
    return -1;
}

static int bool_named(const char *text, double *value)
{
    static const char *const names[][2] = {{"true", "false"}, {"yes", "no"}, {"on", "off"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        for (int v = 0; v < 2; v++) {
            if (strcasecmp(text, names[k][v]) == 0) {
                *value = v == 0 ? 1.0 : 0.0;
                return 0;
            }
        }
    }
    return -1;
}

/* The whole text as a number (no trailing characters, no empty text). */
static int whole_number(const char *text, double *value)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*text))
        text++;
    if (!*text)
        return -1;
    const double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE)
        return -1;
    *value = v;
    return 0;
}

pv_status pv_params_parse(int op, void *params, size_t size, const char *name, const char *text)
{
    const pv_op_decl *d = NULL;
    const pv_param_decl *p = NULL;
    pv_status status = lookup(op, params, size, name, "params_parse", &d, &p);
    if (status != PV_OK)
        return status;
    if (!text)
        return pv_fail(NULL, PV_ERR_INVALID, "params_parse: text is NULL");
    double value;
    int found = whole_number(text, &value);
    if (found != 0 && p->info.type == PV_PARAM_BOOL)
        found = bool_named(text, &value);
    if (found != 0 && p->info.type == PV_PARAM_CHOICE)
        found = choice_named(p->info.choices, text, &value);
    if (found != 0) {
        char range[160];
        pv_decl_range_text(p, range, sizeof range);
        return pv_fail(NULL, PV_ERR_INVALID, "%s: %s '%.40s' is not a value (%s)", d->name, name,
                       text, range);
    }
    return pv_params_set(op, params, size, name, value);
}

pv_status pv_params_get(int op, const void *params, size_t size, const char *name, double *value)
{
    const pv_op_decl *d = NULL;
    const pv_param_decl *p = NULL;
    if (!value)
        return pv_fail(NULL, PV_ERR_INVALID, "params_get: value is NULL");
    pv_status status = lookup(op, params, size, name, "params_get", &d, &p);
    if (status == PV_OK)
        *value = pv_decl_get(p, params);
    return status;
}

pv_status pv_params_check(int op, const void *params, size_t size)
{
    const pv_op_decl *d = NULL;
    pv_status status = lookup(op, params, size, NULL, "params_check", &d, NULL);
    return status == PV_OK ? pv_decl_check(NULL, d->name, d, params) : status;
}
