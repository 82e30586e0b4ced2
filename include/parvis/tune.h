/** @file
 * parvis tune: per-device auto-tuning of the OpenCL kernels' launch and
 * memory parameters (work-group shape, message-storage split, tile sizes).
 *
 * pv_tune searches, per kernel family (every module with launch
 * parameters: pv_tune_family_name), a short list of candidate
 * configurations (for BP the paper's section 6.1: one well-formed
 * configuration per occupancy level; elsewhere one parameter at a time,
 * with work-group sizes that fit the device), builds each, checks its
 * output against the CPU backend before timing it, and keeps the
 * fastest.  The FFT engine choice ("fft" family) is the caller's
 * (pv_context_set_fft_engine, PARVIS_FFT) and is not searched.  The
 * result is written to a cache file keyed by device name, driver version
 * and parvis version:
 *   $PARVIS_TUNE_DIR, else $XDG_CACHE_HOME/parvis, else $HOME/.cache/parvis,
 *   file tune-<16 hex digits>.txt
 * A context reads it once, when it is made (or through pv_tune_load);
 * PARVIS_NO_TUNE=1 turns the automatic reading off.  A corrupt file, or one
 * written for another device, driver or version, is ignored with a warning
 * through the log (PARVIS_LOG=1), never trusted.  Absent a usable cache
 * file, the first tunable call applies the tuning database's entry for
 * the device (built into the library: same device, else architecture,
 * else vendor; docs/tuning.md), and absent that the defaults.  The CPU
 * backend has no launch parameters: there pv_tune_set, pv_tune_list,
 * pv_tune_load and pv_tune_use_defaults do nothing and return PV_OK
 * (pv_tune_list with *count 0), while pv_tune, pv_tune_get,
 * pv_tune_cache_path and pv_tune_check_cache_writable return
 * PV_ERR_UNSUPPORTED. */
#ifndef PARVIS_TUNE_H
#define PARVIS_TUNE_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most parameters one family's result holds. */
#define PV_TUNE_MAX_PARAMS 16

struct pv_tune_result;

/** What pv_tune searches (pv_tune_options_default). */
typedef struct pv_tune_options {
    const char *op;       /**< one family (pv_tune_family_name), or NULL for all */
    int max_candidates;   /**< per op; 0 = every candidate the search makes */
    int runs;             /**< timed runs per candidate (median); default 3 */
    /** @{ */
    /** synthetic workload; 0 = the op's default size */
    int width, height;
    /** @} */
    int ndisp;            /**< 0 = the op's default range */
    int write_cache;      /**< 1: store the winners in the cache file */
    /** Called after each family's search with its result (may be NULL):
     * progress for a caller that shows it. */
    void (*progress)(void *user, const struct pv_tune_result *result);
    void *progress_user;  /**< handed to progress as user */
    /** Seconds for the whole search (0: no limit).  It is shared among the
     * families by weight (BP the most), a family's unused time passing to
     * the next; a family out of time starts no more candidates and keeps
     * its best so far (its defaults are always measured). */
    double budget_s;
} pv_tune_options;

/** Defaults: every family, all candidates, 3 runs, default workloads, write,
 * no time budget.
 * @param options receives the defaults */
PV_API void pv_tune_options_default(pv_tune_options *options);

/** One launch parameter and its value. */
typedef struct pv_tune_param {
    char name[48];  /**< the parameter's name */
    int value;      /**< its value */
} pv_tune_param;

/** One family's search. */
typedef struct pv_tune_result {
    char op[16];          /**< the family's name */
    int tried;            /**< candidates built and run */
    int rejected;         /**< failed to build or run, or disagreed with the CPU */
    int pruned;           /**< timed once only: over 1.5x the best so far */
    double search_ms;     /**< wall time of this family's search, workload included */
    double default_ms;    /**< median time with the default parameters on the family's
                             main workload: end to end, kernels only for "geometry"
                             (whose calls are mostly host time) */
    double best_ms;       /**< the same with the kept parameters (for families scored on
                             two workloads, "bp" and "geometry", a kept value may be
                             slower here and faster on the small one: docs/tuning.md) */
    int param_count;      /**< entries of params filled */
    pv_tune_param params[PV_TUNE_MAX_PARAMS]; /**< the kept values */
} pv_tune_result;

/** The index-th tunable family ("filter", "sad", "bp", "register", "flow",
 * "features", "octreg", "geometry"), NULL past the last.
 * @param index the family's index, from 0
 * @return the name, or NULL past the last */
PV_API const char *pv_tune_family_name(int index);

/** Tune ctx's OpenCL device.  results: room for `capacity` entries (one
 * per family); *count receives the number filled.  The winners
 * are applied to ctx, and written to the cache when options.write_cache.
 * @param ctx the context
 * @param options the options, or NULL (defaults)
 * @param results receives the results
 * @param capacity entries the array holds
 * @param count receives the number of results
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune(pv_context *ctx, const pv_tune_options *options, pv_tune_result *results,
                         int capacity, int *count);

/** Apply the cached values for ctx's device.  *applied (may be NULL)
 * receives the number of parameters set (0: no usable cache entry).
 * @param ctx the context
 * @param applied receives the number of parameters set
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_load(pv_context *ctx, int *applied);

/** Override one parameter on this context, for experiments (a family of
 * pv_tune_family_name, names as pv_tune_list gives them), or read its
 * value.
 * @param ctx the context
 * @param family the parameter family's name
 * @param name the parameter's name
 * @param value the value
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_set(pv_context *ctx, const char *family, const char *name, int value);
/** The value of one launch parameter.
 * @param ctx the context
 * @param family the parameter family's name
 * @param name the parameter's name
 * @param value receives the value
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_get(pv_context *ctx, const char *family, const char *name, int *value);

/** Put every tunable parameter of ctx back to its default and stop the
 * automatic cache reading on this context (for default-vs-tuned tests).
 * @param ctx the context
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_use_defaults(pv_context *ctx);

/** The parameters of a family with their current values on ctx: up to
 * capacity entries, *count receives the number filled.
 * @param ctx the context
 * @param family the family's name
 * @param params receives the parameters
 * @param capacity entries the array holds
 * @param count receives the number filled
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_list(pv_context *ctx, const char *family, pv_tune_param *params, int capacity,
                              int *count);

/** Path of ctx's cache file into path (size bytes); the device is named by
 * the description ctx took when it was made.
 * @param ctx the context
 * @param path receives the path
 * @param size bytes the buffer holds
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_cache_path(pv_context *ctx, char *path, size_t size);

/** PV_OK when ctx's cache file can be written: its directory exists (it is
 * made if needed) and takes a new file, and no symbolic link stands at the
 * file's name; else PV_ERR_IO saying why (PV_ERR_UNSUPPORTED on the CPU
 * backend).  pv_tune with write_cache checks the same before its search.
 * The file is written through a private temporary file (mkstemp), synced
 * and renamed; a symbolic link at its name is refused, never followed.
 * @param ctx the context
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_check_cache_writable(pv_context *ctx);

/** Where ctx's launch parameters come from, into source (size bytes; 112
 * hold any answer): "cache" (the local tuning cache), "database: <entry>
 * (device|architecture|vendor match)" (the tuning database built into the
 * library, used when no local cache fits), "search" (pv_tune ran on ctx),
 * "defaults", or "none" on the CPU backend.  pv_tune_set overrides single
 * values on top of any of these.
 * @param ctx the context
 * @param source receives the description
 * @param size bytes the buffer holds
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_source(pv_context *ctx, char *source, size_t size);

/** ctx's device and its local tuning cache as an entry of the tuning
 * database (text, NUL-terminated, into size bytes; 8192 hold any entry of
 * today's parameters): the text docs/tuning.md asks contributors to send.
 * PV_ERR_IO when the cache holds nothing usable for this device (run
 * pv_tune first), PV_ERR_UNSUPPORTED on the CPU backend.
 * @param ctx the context
 * @param text receives the text
 * @param size bytes the buffer holds
 * @return PV_OK, or the failure's status */
PV_API pv_status pv_tune_export(pv_context *ctx, char *text, size_t size);

#ifdef __cplusplus
}
#endif

#endif
