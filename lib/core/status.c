/* Status names, error recording, the library version and the
 * context services every layer uses (its lock, its build log). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char thread_last_error[1024];

const char *pv_status_string(pv_status status)
{
    switch (status) {
    case PV_OK: return "ok";
    case PV_ERR_INVALID: return "invalid argument";
    case PV_ERR_NOMEM: return "out of memory";
    case PV_ERR_IO: return "i/o error";
    case PV_ERR_FORMAT: return "bad file format";
    case PV_ERR_UNSUPPORTED: return "not supported";
    case PV_ERR_OPENCL: return "opencl error";
    case PV_ERR_BUILD: return "opencl build failure";
    case PV_ERR_NO_DEVICE: return "no device";
    case PV_ERR_MISMATCH: return "cross-check mismatch";
    case PV_ERR_DEVICE_MEMORY: return "device memory exceeded";
    case PV_ERR_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

const char *pv_last_error(void)
{
    return thread_last_error;
}

void pv_set_thread_error(const char *message)
{
    snprintf(thread_last_error, sizeof thread_last_error, "%s", message ? message : "");
}

pv_status pv_fail(pv_context *ctx, pv_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(thread_last_error, sizeof thread_last_error, fmt, args);
    va_end(args);
    if (ctx) {
        pv_context_lock(ctx); /* argument checks fail before the call takes it */
        memcpy(ctx->last_error, thread_last_error, sizeof ctx->last_error);
        pv_context_unlock(ctx);
    }
    pv_log_line(PV_LOG_ERROR, "error (%s): %s", pv_status_string(status), thread_last_error);
    return status;
}

pv_status pv_check_required(pv_context *ctx, const char *op, const pv_required_arg *args,
                            int count)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    for (int i = 0; args && i < count; i++)
        if (!args[i].value)
            return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL", op, args[i].name);
    return PV_OK;
}

const char *pv_version(void)
{
    return PV_VERSION_STRING;
}

void pv_version_numbers(int *major, int *minor, int *patch)
{
    if (major)
        *major = PV_VERSION_MAJOR;
    if (minor)
        *minor = PV_VERSION_MINOR;
    if (patch)
        *patch = PV_VERSION_PATCH;
}

int pv_cache_root(char *dir, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && *xdg)
        n = snprintf(dir, size, "%s", xdg);
    else if (home && *home)
        n = snprintf(dir, size, "%s/.cache", home);
    else
        return 0;
    return n > 0 && (size_t)n < size;
}

double pv_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* An inherited context's lock may be held by a parent's thread that is
 * not in the child: the child (one thread) leaves it alone. */
void pv_context_lock(pv_context *ctx)
{
    if (ctx && !pv_context_is_inherited(ctx))
        pthread_mutex_lock(&ctx->lock);
}

void pv_context_unlock(pv_context *ctx)
{
    if (ctx && !pv_context_is_inherited(ctx))
        pthread_mutex_unlock(&ctx->lock);
}

void pv_context_set_build_log(pv_context *ctx, const char *log)
{
    pv_context_lock(ctx);
    free(ctx->build_log);
    ctx->build_log = log ? strdup(log) : NULL;
    pv_context_unlock(ctx);
}

pv_status pv_call_begin(pv_context *ctx)
{
    pv_context_lock(ctx);
    if (ctx->call_depth++ == 0)
        ctx->progress_done = 0.0;
    memset(&ctx->timing, 0, sizeof ctx->timing);
    ctx->last_error[0] = '\0';
    ctx->call_start_ms = pv_now_ms();
    return pv_fork_check_context(ctx);
}

void pv_call_end(pv_context *ctx)
{
    ctx->timing.total_ms = pv_now_ms() - ctx->call_start_ms;
    /* The CPU backend has no device: its compute time is the whole call. */
    if (ctx->ops == &pv_cpu_backend)
        ctx->timing.kernel_ms = ctx->timing.total_ms;
    ctx->call_depth--;
    pv_context_unlock(ctx);
}
