/* The library's log: one line at a time to the process's log callback
 * (pv_set_log_callback), else to stderr under PARVIS_LOG=1.  The callback
 * is process-wide rather than per context because many lines have no
 * context: argument checks that fail before one exists, device listing,
 * context creation.  A read-write lock lets lines from several threads
 * reach the callback at once, while pv_set_log_callback waits for the
 * lines in flight, so that the former callback is never called after it
 * returns. */
#include "internal.h"
#include "configuration.h"
#include "stderr_line.h"

#include <pthread.h>
#include <stdio.h>

static pthread_rwlock_t callback_lock = PTHREAD_RWLOCK_INITIALIZER;
static pv_log_fn callback;
static void *callback_user;

pv_status pv_set_log_callback(pv_log_fn fn, void *user)
{
    pthread_rwlock_wrlock(&callback_lock);
    callback = fn;
    callback_user = fn ? user : NULL;
    pthread_rwlock_unlock(&callback_lock);
    return PV_OK;
}

static void log_vline(pv_log_level level, const char *fmt, va_list args)
{
    pthread_rwlock_rdlock(&callback_lock);
    if (callback) {
        char line[1024];
        vsnprintf(line, sizeof line, fmt, args);
        callback(callback_user, level, line);
    } else if (pv_config_log_enabled()) {
        pv_stderr_vline(fmt, args);
    }
    pthread_rwlock_unlock(&callback_lock);
}

void pv_log(const pv_context *ctx, const char *fmt, ...)
{
    (void)ctx;
    va_list args;
    va_start(args, fmt);
    log_vline(PV_LOG_INFO, fmt, args);
    va_end(args);
}

void pv_log_line(pv_log_level level, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_vline(level, fmt, args);
    va_end(args);
}
