/** @file
 * parvis configuration and log: the PARVIS_* environment variables the
 * library reads (their one table, docs/configuration.md) and where its log
 * lines go.
 *
 * The environment is read when the first context is made and again by
 * every pv_context_create: a variable changed between two contexts takes
 * effect from the second one on, for the whole process. */
#ifndef PARVIS_CONFIG_H
#define PARVIS_CONFIG_H

#include "parvis/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One configuration variable, as pv_config_entry describes it. */
typedef struct pv_config_entry_info {
    const char *name;          /**< "PARVIS_BACKEND", ...; constant */
    const char *kind;          /**< kind of value: "flag", "choice", "bytes", "path", ... */
    const char *default_value; /**< what holds when it is unset, in words; constant */
    const char *meaning;       /**< one sentence; constant */
    int is_set;                /**< 1 when the environment sets it (not empty) */
    char value[4096];          /**< the value read, "" when unset */
} pv_config_entry_info;

/** How many variables the library reads.
 * @return the number of entries, for pv_config_entry */
PV_API int pv_config_count(void);

/** The index-th variable with the value in effect (the environment is read
 * first if no context was made yet).
 * @param index 0 .. pv_config_count() - 1
 * @param entry receives the description; untouched on error
 * @return PV_OK, or PV_ERR_INVALID for a bad index or a NULL entry */
PV_API pv_status pv_config_entry(int index, pv_config_entry_info *entry);

/** How much a log line matters. */
typedef enum pv_log_level {
    PV_LOG_INFO = 0,  /**< device selection, profiles, notes */
    PV_LOG_ERROR = 1  /**< a failure recorded by a call (its status and message) */
} pv_log_level;

/** Receives one log line: the text without the "parvis: " prefix that
 * stderr lines carry and without a newline, valid during the call only.
 * May be called from any thread that calls parvis, with a context's lock
 * held: it must not call parvis functions (pv_set_log_callback included). */
typedef void (*pv_log_fn)(void *user, pv_log_level level, const char *line);

/** Send the library's log to fn instead of stderr, for the whole process
 * (the log also carries lines of calls that have no context yet, such as
 * argument checks and device listing).  With a callback set, every line
 * reaches it whatever PARVIS_LOG says; fn NULL puts back the default:
 * stderr, and only under PARVIS_LOG=1.  Safe against lines being logged on
 * other threads: once it returns, the former callback is called no more.
 * @param fn the callback, or NULL for the default
 * @param user passed to fn unchanged
 * @return PV_OK */
PV_API pv_status pv_set_log_callback(pv_log_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif
