/* Internal: the tuner's hooks between the front end (lib/tune.c: options,
 * the cache file) and the OpenCL backend (backends/opencl/tune.c: the
 * parameter families and the candidate search).  Not installed. */
#ifndef PV_TUNE_INTERNAL_H
#define PV_TUNE_INTERNAL_H

#include "internal.h"

/* Read the tuning cache into an OpenCL ctx once, before its first tunable
 * call (no-op on the CPU backend, after pv_tune_use_defaults, or with
 * PARVIS_NO_TUNE=1).  Never fails: an unusable cache is logged and ignored. */
void pv_tune_autoload(pv_context *ctx);

#ifdef PV_HAVE_OPENCL
/* 1 when family is one the tuner covers ("bp", "sad"). */
int pv_cl_tune_family_known(const char *family);
pv_status pv_cl_tune_set(pv_context *ctx, const char *family, const char *name, int value);
pv_status pv_cl_tune_get(pv_context *ctx, const char *family, const char *name, int *value);
pv_status pv_cl_tune_list(pv_context *ctx, const char *family, pv_tune_param *params,
                          int capacity, int *count);
/* Every tunable parameter back to its default. */
pv_status pv_cl_tune_reset(pv_context *ctx);
/* Whether the cache was read (or reading was switched off) on ctx. */
int pv_cl_tune_cache_read(pv_context *ctx);
pv_status pv_cl_tune_mark_cache_read(pv_context *ctx);
/* Search one op's family on ctx; the winner is left applied to ctx. */
pv_status pv_cl_tune_search(pv_context *ctx, const char *op, const pv_tune_options *options,
                            pv_tune_result *result);
#endif

#endif
