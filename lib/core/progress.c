/* A context's progress callback (parvis/progress.h): set by the user,
 * reported to by the long operations through pv_progress_report. */
#include "internal.h"

pv_status pv_context_set_progress(pv_context *ctx, pv_progress_fn fn, void *user)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_set_progress: ctx is NULL");
    pv_context_lock(ctx);
    ctx->progress_fn = fn;
    ctx->progress_user = fn ? user : NULL;
    pv_context_unlock(ctx);
    return PV_OK;
}

void pv_progress_outer_begin(pv_context *ctx)
{
    if (ctx->call_depth++ == 0)
        ctx->progress_done = 0.0;
}

void pv_progress_outer_end(pv_context *ctx)
{
    ctx->call_depth--;
}

int pv_progress_wanted(const pv_context *ctx)
{
    return ctx && ctx->progress_fn && !ctx->progress_muted && ctx->call_depth <= 1;
}

pv_status pv_progress_report(pv_context *ctx, const char *op, double done, double total)
{
    if (!pv_progress_wanted(ctx))
        return PV_OK;
    /* A later stage may count from a smaller base (an op made of several
     * runs): the callback still sees work done only grow. */
    if (!(done >= ctx->progress_done))
        done = ctx->progress_done;
    if (done > total)
        done = total;
    ctx->progress_done = done;
    if (ctx->progress_fn(ctx->progress_user, op, done, total) != 0)
        return pv_fail(ctx, PV_ERR_CANCELLED, "%s: cancelled by the progress callback", op);
    return PV_OK;
}
