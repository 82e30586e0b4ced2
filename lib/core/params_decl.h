/* Parameter declarations: each operation's parameter structure described
 * once, as data (include/parvis/params.h is the public view).  A module
 * declares its operations with the PV_DECL_* macros below, next to its
 * front end; lib/params/ lists them for the introspection calls; the
 * generic functions here give the defaults and the range checks that the
 * default functions and the front ends use. */
#ifndef PV_CORE_PARAMS_DECL_H
#define PV_CORE_PARAMS_DECL_H

#include <stddef.h>
#include <stdint.h>

#include "parvis/params.h"

/* How a field is stored in its structure. */
typedef enum pv_field_kind {
    PV_FIELD_INT,    /* int (also BOOL and CHOICE: enums are int-sized here) */
    PV_FIELD_FLOAT,  /* float */
    PV_FIELD_DOUBLE, /* double */
    PV_FIELD_SIZE,   /* size_t */
    PV_FIELD_U64     /* uint64_t */
} pv_field_kind;

typedef struct pv_param_decl {
    pv_param_info info;
    pv_field_kind kind;
    size_t offset;
} pv_param_decl;

typedef struct pv_op_decl {
    const char *name, *module, *params_type, *summary;
    size_t size;
    const pv_param_decl *params;
    int count;
} pv_op_decl;

/* The largest integer a double holds exactly: the bound of size_t and
 * uint64_t fields, whose values travel as doubles. */
#define PV_DECL_EXACT_MAX 9007199254740992.0
/* A REAL without an upper bound (finite values only). */
#define PV_DECL_NO_MAX 1e30

#define PV_DECL_FIELD(T, f, type, kind, def, lo, hi, flags, choices, unit, help) \
    {{#f, type, def, lo, hi, flags, choices, unit, help}, kind, offsetof(T, f)}
#define PV_DECL_INT(T, f, def, lo, hi, unit, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_INT, PV_FIELD_INT, def, lo, hi, 0, NULL, unit, help)
/* size_t and uint64_t fields take every value of their type (a budget of
 * SIZE_MAX is an unbounded one); through a double, values above 2^53 are
 * rounded, and 2^64 itself (the double nearest 2^64 - 1) stores the
 * type's largest value.  Exact large values are written to the field. */
#define PV_DECL_U64_MAX 18446744073709551615.0
#define PV_DECL_SIZE(T, f, def, unit, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_INT, PV_FIELD_SIZE, def, 0, PV_DECL_U64_MAX, 0, NULL, unit, help)
#define PV_DECL_U64(T, f, def, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_INT, PV_FIELD_U64, def, 0, PV_DECL_U64_MAX, 0, NULL, "", help)
#define PV_DECL_BOOL(T, f, def, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_BOOL, PV_FIELD_INT, def, 0, 1, 0, NULL, "", help)
#define PV_DECL_FLOAT(T, f, def, lo, hi, flags, unit, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_REAL, PV_FIELD_FLOAT, def, lo, hi, flags, NULL, unit, help)
#define PV_DECL_DOUBLE(T, f, def, lo, hi, flags, unit, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_REAL, PV_FIELD_DOUBLE, def, lo, hi, flags, NULL, unit, help)
/* choices: "name=value|..." with values lo..hi (the enum's range). */
#define PV_DECL_CHOICE(T, f, def, lo, hi, choices, help) \
    PV_DECL_FIELD(T, f, PV_PARAM_CHOICE, PV_FIELD_INT, def, lo, hi, 0, choices, "", help)

#define PV_DECL_OP(T, op, module, summary, table) \
    {op, module, #T, summary, sizeof(T), table, (int)(sizeof(table) / sizeof((table)[0]))}

/* Fills params with the declared defaults (params holds decl->size bytes). */
void pv_decl_defaults(const pv_op_decl *decl, void *params);

/* Checks every field against its declared range; on failure, pv_fail on
 * ctx (may be NULL) with "<op>: params.<name> <value> is not <range>". */
pv_status pv_decl_check(pv_context *ctx, const char *op, const pv_op_decl *decl,
                        const void *params);

/* The field's value as a double, and a value's acceptance for it (NULL
 * when accepted, else a static text saying why not). */
double pv_decl_get(const pv_param_decl *p, const void *params);
const char *pv_decl_refusal(const pv_param_decl *p, double value);
void pv_decl_put(const pv_param_decl *p, void *params, double value);

/* Writes the declared range of p into buf ("in 1..1024", "> 0", ...). */
void pv_decl_range_text(const pv_param_decl *p, char *buf, size_t size);

#endif
