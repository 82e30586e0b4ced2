/* Internal: the asynchronous calls' runner (lib/async/async.c), one worker
 * thread per context, made on the context's first asynchronous call. */
#ifndef PV_ASYNC_INTERNAL_H
#define PV_ASYNC_INTERNAL_H

#include "parvis/async.h"

typedef struct pv_runner pv_runner;

/* Wait for the context's queued calls, then stop and free its runner (none:
 * nothing to do).  pv_context_destroy calls it before anything else. */
void pv_runner_stop(pv_context *ctx);

/* pv_submit, with free_user(user) called once the call has run (or at once
 * when it could not be queued): the op wrappers' copied arguments. */
pv_status pv_submit_owned(pv_context *ctx, pv_task_fn fn, void *user, void (*free_user)(void *),
                          pv_job **job);

#endif
