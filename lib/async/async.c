/* Asynchronous calls (include/parvis/async.h): one worker thread per
 * context runs the context's queued calls in order.
 *
 * Why a thread and not deferred OpenCL commands: an operation's host side
 * (argument checks, plan choices, the pinned stages' copies, peak searches
 * and other small host passes between kernels) is part of its time, and a
 * queue of device commands cannot carry it.  A worker runs the very
 * synchronous call, so every operation, on both backends, can be queued
 * and its results are the synchronous call's by construction.  Overlap
 * between calls comes from contexts: each has its worker, its queue and
 * its buffers, so two contexts on one device keep its copy engines and
 * compute units busy at once.
 *
 * The runner is made on the first asynchronous call (never for a context
 * used only synchronously) and stopped by pv_context_destroy, which waits
 * for what is queued. */
#include "../core/internal.h"
#include "async_internal.h"
#include "parvis/async.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pv_job {
    pv_task_fn fn;
    void *user;
    void (*free_user)(void *user);
    int detached;            /* no handle: a failure goes to the runner's */
    int done;
    pv_status status;
    char message[1024];
    struct pv_runner *runner;
    struct pv_job *next;
};

struct pv_runner {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a job was queued or completed, or stop */
    pthread_t thread;
    pv_job *head, *tail;     /* queued, not started */
    int running;             /* a job is in progress */
    int stop;
    int handles;             /* jobs with a handle not yet waited for */
    int orphaned;            /* its context is gone: the last pv_job_wait frees it */
    pv_status first_failure; /* of the detached jobs since the last pv_wait */
    char failure_message[1024];
    pv_context *ctx;
    pid_t pid;               /* the process whose thread this is */
};

/* Runners are made outside the context's lock: a call holding it on the
 * worker must not block the caller that queues the next one. */
static pthread_mutex_t runner_creation = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------- the worker */

static void finish_job(pv_runner *r, pv_job *job, pv_status status)
{
    if (job->free_user)
        job->free_user(job->user);
    job->user = NULL;
    pthread_mutex_lock(&r->lock);
    r->running = 0;
    if (job->detached) {
        if (status != PV_OK && r->first_failure == PV_OK) {
            r->first_failure = status;
            snprintf(r->failure_message, sizeof r->failure_message, "%s", pv_last_error());
        }
        free(job);
    } else {
        job->status = status;
        snprintf(job->message, sizeof job->message, "%s", status == PV_OK ? "" : pv_last_error());
        job->done = 1;
    }
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

static void *worker_main(void *arg)
{
    pv_runner *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->head && !r->stop)
            pthread_cond_wait(&r->changed, &r->lock);
        if (!r->head)
            break; /* stopped with nothing queued */
        pv_job *job = r->head;
        r->head = job->next;
        if (!r->head)
            r->tail = NULL;
        r->running = 1;
        pthread_mutex_unlock(&r->lock);
        finish_job(r, job, job->fn(r->ctx, job->user));
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* ------------------------------------------------------------- the runner */

static pv_status start_runner(pv_context *ctx, pv_runner **out)
{
    pv_runner *r = calloc(1, sizeof *r);
    if (!r)
        return pv_fail(ctx, PV_ERR_NOMEM, "async: no memory for the worker");
    r->ctx = ctx;
    r->pid = getpid();
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return pv_fail(ctx, PV_ERR_NOMEM, "async: no mutex for the worker");
    }
    if (pthread_cond_init(&r->changed, NULL) != 0) {
        pthread_mutex_destroy(&r->lock);
        free(r);
        return pv_fail(ctx, PV_ERR_NOMEM, "async: no condition for the worker");
    }
    if (pthread_create(&r->thread, NULL, worker_main, r) != 0) {
        pthread_cond_destroy(&r->changed);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return pv_fail(ctx, PV_ERR_NOMEM, "async: no worker thread");
    }
    *out = r;
    return PV_OK;
}

static pv_status runner_of(pv_context *ctx, pv_runner **out)
{
    pv_status status = PV_OK;
    pthread_mutex_lock(&runner_creation);
    if (!ctx->runner)
        status = start_runner(ctx, &ctx->runner);
    *out = ctx->runner;
    pthread_mutex_unlock(&runner_creation);
    return status;
}

static void free_runner(pv_runner *r)
{
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void pv_runner_stop(pv_context *ctx)
{
    pthread_mutex_lock(&runner_creation);
    pv_runner *r = ctx->runner;
    ctx->runner = NULL;
    pthread_mutex_unlock(&runner_creation);
    if (!r)
        return;
    if (r->pid != getpid())
        return; /* inherited across fork: the worker is not in this process,
                   and its lock may be held by it; the parent frees it */
    pthread_mutex_lock(&r->lock);
    r->stop = 1; /* the worker drains the queue, then leaves */
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    /* Jobs whose handles are not waited for yet still point at the
     * runner: the last pv_job_wait frees it then. */
    pthread_mutex_lock(&r->lock);
    r->orphaned = r->handles > 0;
    const int keep = r->orphaned;
    pthread_mutex_unlock(&r->lock);
    if (!keep)
        free_runner(r);
}

/* ------------------------------------------------------------ queuing */

pv_status pv_submit_owned(pv_context *ctx, pv_task_fn fn, void *user, void (*free_user)(void *),
                          pv_job **job)
{
    pv_status status = ctx ? pv_fork_check_context(ctx) : PV_ERR_INVALID;
    pv_runner *r = NULL;
    if (!ctx || !fn)
        status = pv_fail(ctx, PV_ERR_INVALID, "submit: %s is NULL", ctx ? "fn" : "ctx");
    if (status == PV_OK)
        status = runner_of(ctx, &r);
    pv_job *j = status == PV_OK ? calloc(1, sizeof *j) : NULL;
    if (status == PV_OK && !j)
        status = pv_fail(ctx, PV_ERR_NOMEM, "submit: no memory for the job");
    if (status != PV_OK) {
        if (free_user)
            free_user(user);
        return status;
    }
    *j = (pv_job){fn, user, free_user, job == NULL, 0, PV_OK, "", r, NULL};
    if (job)
        *job = j;
    pthread_mutex_lock(&r->lock);
    r->handles += job != NULL;
    if (r->tail)
        r->tail->next = j;
    else
        r->head = j;
    r->tail = j;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return PV_OK;
}

pv_status pv_submit(pv_context *ctx, pv_task_fn fn, void *user, pv_job **job)
{
    return pv_submit_owned(ctx, fn, user, NULL, job);
}

/* ------------------------------------------------------------- waiting */

pv_status pv_job_wait(pv_job *job)
{
    if (!job)
        return pv_fail(NULL, PV_ERR_INVALID, "job_wait: job is NULL");
    pv_runner *r = job->runner;
    pthread_mutex_lock(&r->lock);
    while (!job->done)
        pthread_cond_wait(&r->changed, &r->lock);
    const int last = --r->handles == 0 && r->orphaned;
    pthread_mutex_unlock(&r->lock);
    if (last)
        free_runner(r);
    const pv_status status = job->status;
    if (status != PV_OK)
        pv_fail(NULL, status, "%s", job->message); /* the caller's thread reads it */
    free(job);
    return status;
}

int pv_job_done(const pv_job *job)
{
    if (!job)
        return 0;
    pthread_mutex_lock(&job->runner->lock);
    const int done = job->done;
    pthread_mutex_unlock(&job->runner->lock);
    return done;
}

/* Every queued job of the context done; the detached jobs' first failure
 * taken (and forgotten). */
static pv_status drain_runner(pv_context *ctx)
{
    pthread_mutex_lock(&runner_creation);
    pv_runner *r = ctx->runner;
    pthread_mutex_unlock(&runner_creation);
    if (!r)
        return PV_OK;
    pthread_mutex_lock(&r->lock);
    while (r->head || r->running)
        pthread_cond_wait(&r->changed, &r->lock);
    const pv_status failure = r->first_failure;
    char message[sizeof r->failure_message];
    memcpy(message, r->failure_message, sizeof message);
    r->first_failure = PV_OK;
    pthread_mutex_unlock(&r->lock);
    return failure == PV_OK ? PV_OK : pv_fail(ctx, failure, "%s", message);
}

pv_status pv_wait(pv_context *ctx)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "wait: ctx is NULL");
    pv_status status = drain_runner(ctx);
    if (!ctx->ops->interop->wait)
        return status; /* a CPU context queues no device commands */
    pv_context_lock(ctx);
    pv_status device = ctx->ops->interop->wait(ctx);
    /* The last device-buffer call's time now runs from its start to its
     * completion, and its kernels' times are accounted
     * (pv_context_last_timing). */
    if (ctx->device_call_pending)
        ctx->timing.total_ms = pv_now_ms() - ctx->call_start_ms;
    ctx->device_call_pending = 0;
    pv_context_unlock(ctx);
    return status != PV_OK ? status : device;
}
