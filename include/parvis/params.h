/* parvis: every operation's parameters, declared once and introspected.
 *
 * Each operation that takes a parameter structure (pv_sgm_params,
 * pv_sift_params, ...) declares its fields once, in the library, as data:
 * name, type, default, range, unit and help text.  The structure's
 * default function, the front end's range checks, the `parvis` command's
 * options and --help, the Python keywords and docstrings and the bench's
 * labels are all derived from that one declaration; these calls expose it.
 *
 * Operations are numbered 0 .. pv_op_count() - 1 (the order is stable
 * within a release, not across releases: look them up by name).  A
 * parameter's name is its structure field's name; the command line spells
 * it with '-' for '_' (--min-disp), Python as the keyword itself. */
#ifndef PARVIS_PARAMS_H
#define PARVIS_PARAMS_H

#include <stddef.h>

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a parameter holds. */
typedef enum pv_param_type {
    PV_PARAM_INT = 1,    /**< an integer (int, size_t or uint64_t field) */
    PV_PARAM_REAL = 2,   /**< a float or double field */
    PV_PARAM_BOOL = 3,   /**< an int field holding 0 or 1 */
    PV_PARAM_CHOICE = 4  /**< an enum field; `choices` names its values */
} pv_param_type;

/** The range's lower end is excluded (a REAL that must be > min). */
#define PV_PARAM_MIN_EXCLUSIVE 1u

/** One declared parameter.  The strings are static: never freed. */
typedef struct pv_param_info {
    const char *name;       /**< the field's name, e.g. "lr_max_diff" */
    pv_param_type type;     /**< what the field holds */
    double default_value;   /**< the declared default; CHOICE: the default's numeric value */
    double min;             /**< the smallest accepted value (excluded with
                                 PV_PARAM_MIN_EXCLUSIVE) */
    double max;             /**< the largest accepted value */
    unsigned flags;         /**< PV_PARAM_MIN_EXCLUSIVE */
    const char *choices;    /**< CHOICE: "name=value|name=value..."; else NULL */
    const char *unit;       /**< "px", "voxels", "bytes", ... or "" */
    const char *help;       /**< one sentence */
} pv_param_info;

/** One operation with a parameter structure. */
typedef struct pv_op_info {
    const char *name;        /**< "sgm", "sift", "flow", ... */
    const char *module;      /**< the module it belongs to: "stereo", "features", ... */
    const char *params_type; /**< the C structure: "pv_sgm_params" */
    size_t params_size;      /**< sizeof that structure */
    int param_count;         /**< its declared parameters, 0 .. param_count - 1 */
    const char *summary;     /**< one sentence */
} pv_op_info;

/** The number of operations with declared parameters. */
PV_API int pv_op_count(void);

/** Describes operation `op` (0 .. pv_op_count() - 1). */
PV_API pv_status pv_op_get(int op, pv_op_info *info);

/** The number of the operation named `name` (PV_ERR_INVALID if none). */
PV_API pv_status pv_op_find(const char *name, int *op);

/** Describes parameter `param` (0 .. param_count - 1) of operation `op`. */
PV_API pv_status pv_op_param(int op, int param, pv_param_info *info);

/** The number of operation `op`'s parameter named `name`. */
PV_API pv_status pv_op_find_param(int op, const char *name, int *param);

/** Fills `params` (a structure of operation `op`, `size` bytes: sizeof the
 * structure, checked against the declaration) with the declared defaults.
 * The pv_<op>_params_default functions do the same. */
PV_API pv_status pv_params_init(int op, void *params, size_t size);

/** Sets one field from a number.  Refused (PV_ERR_INVALID, the structure
 * untouched, pv_last_error naming the parameter and its range) when the
 * value is outside the declared range, not an integer for INT and BOOL,
 * not a declared value for CHOICE, or not finite. */
PV_API pv_status pv_params_set(int op, void *params, size_t size, const char *name,
                               double value);

/** Sets one field from text, as the command line gives it: a number, for
 * BOOL also true/false/yes/no/on/off, for CHOICE a choice's name or value.
 * Refused as pv_params_set, and for text that is not entirely a value. */
PV_API pv_status pv_params_parse(int op, void *params, size_t size, const char *name,
                                 const char *text);

/** Reads one field as a number. */
PV_API pv_status pv_params_get(int op, const void *params, size_t size, const char *name,
                               double *value);

/** Checks every field of `params` against its declared range (the front
 * ends run the same check first; relations between fields and limits that
 * depend on the input, such as ndisp <= the image width, are the
 * operation's own checks). */
PV_API pv_status pv_params_check(int op, const void *params, size_t size);

#ifdef __cplusplus
}
#endif

#endif
