/* The OpenCL runtime's timing: every tracked command's event kept until
 * the call's wait adds its device time to the call's timing (kernels by
 * runs of launches, or each launch on its own: docs/timing.md), and the
 * PARVIS_PROFILE summaries.  The launches (runtime_launch.c) ask it which
 * of them take an event and hand it their events. */
#include "runtime_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- events */

/* The open run of kernels on `queue`: its last tracked command, when that
 * is a run's first launch and nothing has ended the run yet. */
static timed_event *open_run(pv_cl_state *state, cl_command_queue queue)
{
    for (size_t i = state->event_count; i-- > 0;) {
        timed_event *t = &state->events[i];
        if (t->queue == queue)
            return t->kind == EVENT_KERNEL_RUN && !t->until ? t : NULL;
    }
    return NULL;
}

/* `closer`, a command just enqueued on `queue`, ends the queue's open run
 * there: on an in-order queue it starts when the run's last kernel ends. */
static void end_run(pv_cl_state *state, cl_command_queue queue, cl_event closer)
{
    timed_event *run = open_run(state, queue);
    if (run && clRetainEvent(closer) == CL_SUCCESS)
        run->until = closer;
}

static pv_status append_event(pv_context *ctx, cl_event event, event_kind kind,
                              cl_command_queue queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (state->event_count == state->event_capacity) {
        size_t capacity = state->event_capacity ? 2 * state->event_capacity : 32;
        timed_event *grown = realloc(state->events, capacity * sizeof *grown);
        if (!grown) {
            clWaitForEvents(1, &event);
            clReleaseEvent(event);
            return pv_fail(ctx, PV_ERR_NOMEM, "event list: out of memory");
        }
        state->events = grown;
        state->event_capacity = capacity;
    }
    timed_event *t = &state->events[state->event_count++];
    *t = (timed_event){.event = event, .kind = kind, .queue = queue};
    return PV_OK;
}

pv_status pv_cl_track_event(pv_context *ctx, cl_event event, event_kind kind)
{
    cl_command_queue queue = pv_cl_queue(ctx);
    end_run(pv_cl_state_of(ctx), queue, event);
    return append_event(ctx, event, kind, queue);
}

/* A marker ends the queue's open run too (the FFT's brackets, a batch
 * chunk's markers). */
pv_status pv_cl_marker(pv_context *ctx, cl_event *event)
{
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(pv_cl_queue(ctx), 0, NULL, event);
    if (err == CL_SUCCESS)
        end_run(pv_cl_state_of(ctx), pv_cl_queue(ctx), *event);
    return pv_cl_check(ctx, err, "clEnqueueMarkerWithWaitList");
}

/* Every run still open gets a marker to end it, so that the wait times it
 * (when the marker cannot be enqueued the run counts its first kernel). */
static void end_open_runs(pv_cl_state *state)
{
    for (size_t i = 0; i < state->event_count; i++) {
        timed_event *t = &state->events[i];
        if (t->kind != EVENT_KERNEL_RUN || t->until)
            continue;
        cl_event marker;
        if (clEnqueueMarkerWithWaitList(t->queue, 0, NULL, &marker) == CL_SUCCESS)
            t->until = marker;
    }
}

/* PARVIS_PROFILE=1: the summaries; 2: also every command of every wait. */
void pv_cl_profile_init(pv_cl_state *state)
{
    state->profile_level = pv_config_is(PV_CONFIG_PROFILE, "1")   ? 1
                           : pv_config_is(PV_CONFIG_PROFILE, "2") ? 2
                                                                  : 0;
}

/* Add one launch's time to its kernel's entry (a failed allocation only
 * loses the entry). */
static void profile_add(pv_cl_state *state, cl_kernel kernel, double ms)
{
    char name[64] = "?";
    if (kernel)
        clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = '\0';
    size_t i = 0;
    while (i < state->profile_count && strcmp(state->profile[i].name, name) != 0)
        i++;
    if (i == state->profile_count) {
        profile_entry *grown = realloc(state->profile, (i + 1) * sizeof *grown);
        if (!grown)
            return;
        state->profile = grown;
        state->profile_count++;
        memset(&grown[i], 0, sizeof grown[i]);
        memcpy(grown[i].name, name, sizeof name);
    }
    state->profile[i].ms += ms;
    state->profile[i].launches++;
}

/* One profiling timestamp of an event in ns, 0 when unknown. */
static cl_ulong event_time(cl_event event, cl_profiling_info what)
{
    cl_ulong ns = 0;
    return clGetEventProfilingInfo(event, what, sizeof ns, &ns, NULL) == CL_SUCCESS ? ns : 0;
}

double pv_cl_event_ms(cl_event event)
{
    cl_ulong start = event_time(event, CL_PROFILING_COMMAND_START);
    cl_ulong end = event_time(event, CL_PROFILING_COMMAND_END);
    return start && end >= start ? (double)(end - start) * 1e-6 : 0.0;
}

/* A run of kernels: from its first kernel's start to the start of the
 * command after it. */
static double run_ms(const timed_event *t)
{
    if (!t->until)
        return pv_cl_event_ms(t->event);
    cl_ulong start = event_time(t->event, CL_PROFILING_COMMAND_START);
    cl_ulong end = event_time(t->until, CL_PROFILING_COMMAND_START);
    return start && end >= start ? (double)(end - start) * 1e-6 : 0.0;
}

/* Every command of one wait, in microseconds from the first submission:
 * queued, submitted, started, ended. */
static void log_commands(pv_context *ctx, pv_cl_state *state, cl_ulong origin)
{
    for (size_t i = 0; i < state->event_count; i++) {
        const timed_event *t = &state->events[i];
        char name[64] = "transfer";
        if (t->kernel)
            clGetKernelInfo(t->kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        name[sizeof name - 1] = '\0';
        cl_ulong q = event_time(t->event, CL_PROFILING_COMMAND_QUEUED);
        cl_ulong sub = event_time(t->event, CL_PROFILING_COMMAND_SUBMIT);
        cl_ulong s = event_time(t->event, CL_PROFILING_COMMAND_START);
        cl_ulong e = event_time(t->event, CL_PROFILING_COMMAND_END);
        pv_log(ctx, "profile:   %-24s q %8.1f sub %8.1f start %8.1f end %8.1f us", name,
               (double)(q - origin) * 1e-3, (double)(sub - origin) * 1e-3,
               (double)(s - origin) * 1e-3, (double)(e - origin) * 1e-3);
    }
}

/* The timeline of the events one wait drained (PARVIS_PROFILE=1). */
static void profile_timeline_add(pv_context *ctx, pv_cl_state *state, int verbose)
{
    cl_ulong queued = CL_ULONG_MAX, start = CL_ULONG_MAX, end = 0;
    double busy = 0.0;
    for (size_t i = 0; i < state->event_count; i++) {
        cl_event event = state->events[i].event;
        cl_ulong q = event_time(event, CL_PROFILING_COMMAND_QUEUED);
        cl_ulong s = event_time(event, CL_PROFILING_COMMAND_START);
        cl_ulong e = event_time(event, CL_PROFILING_COMMAND_END);
        if (!q || !s || e < s)
            continue;
        queued = q < queued ? q : queued;
        start = s < start ? s : start;
        end = e > end ? e : end;
        busy += (double)(e - s) * 1e-6;
    }
    if (end == 0 || start < queued)
        return;
    if (verbose)
        log_commands(ctx, state, queued);
    state->timeline.waits++;
    state->timeline.lead_ms += (double)(start - queued) * 1e-6;
    state->timeline.span_ms += (double)(end - start) * 1e-6;
    state->timeline.busy_ms += busy;
}

/* A tracked command's events (and a run's queue) released. */
static void release_event(const timed_event *t)
{
    clReleaseEvent(t->event);
    if (t->kind != EVENT_KERNEL_RUN)
        return;
    if (t->until)
        clReleaseEvent(t->until);
    clReleaseCommandQueue(t->queue);
}

/* One finished command's time into the call's timing, then released. */
static void account_event(pv_context *ctx, pv_cl_state *state, const timed_event *t, int profile)
{
    double ms = t->kind == EVENT_KERNEL_RUN ? run_ms(t) : pv_cl_event_ms(t->event);
    if (profile && t->kind == EVENT_KERNEL)
        profile_add(state, t->kernel, ms);
    switch (t->kind) {
    case EVENT_KERNEL:
    case EVENT_KERNEL_RUN: ctx->timing.kernel_ms += ms; break;
    case EVENT_UPLOAD: ctx->timing.upload_ms += ms; break;
    case EVENT_DOWNLOAD: ctx->timing.download_ms += ms; break;
    }
    release_event(t);
}

/* Whether a tracked command (and a run's closer) has completed. */
static int completed(const timed_event *t)
{
    cl_event last = t->kind == EVENT_KERNEL_RUN ? t->until : t->event;
    cl_int done = CL_QUEUED;
    if (!last)
        return 0;
    clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof done, &done, NULL);
    return done == CL_COMPLETE;
}

pv_status pv_cl_finish(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    end_open_runs(state);
    pv_status status = pv_cl_check(ctx, clFinish(pv_cl_queue(ctx)), "clFinish");
    /* Commands of other queues (pipelines) must be complete to be timed. */
    for (size_t i = 0; i < state->event_count; i++) {
        clWaitForEvents(1, &state->events[i].event);
        if (state->events[i].until)
            clWaitForEvents(1, &state->events[i].until);
    }
    const int profile = state->profile_level;
    if (profile)
        profile_timeline_add(ctx, state, profile == 2);
    for (size_t i = 0; i < state->event_count; i++)
        account_event(ctx, state, &state->events[i], profile);
    state->event_count = 0;
    pv_status checked = pv_cl_param_check(ctx, 1);
    return status != PV_OK ? status : checked;
}

void pv_cl_account_completed(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    const int profile = state->profile_level;
    size_t kept = 0;
    for (size_t i = 0; i < state->event_count; i++) {
        if (completed(&state->events[i]))
            account_event(ctx, state, &state->events[i], profile);
        else
            state->events[kept++] = state->events[i];
    }
    state->event_count = kept;
}

/* The PARVIS_PROFILE summary, one line per kernel name. */
static void log_profile(pv_context *ctx, pv_cl_state *state)
{
    for (size_t i = 0; i < state->profile_count; i++) {
        const profile_entry *e = &state->profile[i];
        pv_log(ctx, "profile: %-28s %6ld launches %10.3f ms %9.4f ms/launch", e->name,
               e->launches, e->ms, e->ms / (double)e->launches);
    }
    const profile_timeline *t = &state->timeline;
    if (t->waits > 0)
        pv_log(ctx, "profile: %ld waits: queued->start %.3f ms, span %.3f ms, busy %.3f ms, "
               "idle between commands %.3f ms (per wait %.4f / %.4f / %.4f / %.4f)",
               t->waits, t->lead_ms, t->span_ms, t->busy_ms, t->span_ms - t->busy_ms,
               t->lead_ms / t->waits, t->span_ms / t->waits, t->busy_ms / t->waits,
               (t->span_ms - t->busy_ms) / t->waits);
    free(state->profile);
}

void pv_cl_release_profile(pv_context *ctx, pv_cl_state *state)
{
    log_profile(ctx, state);
    for (size_t i = 0; i < state->event_count; i++)
        release_event(&state->events[i]);
    free(state->events);
}

/* ------------------------------------------------------ launches' events */

/* Every launch timed on its own (the context's choice, or PARVIS_PROFILE's
 * summary per kernel name), rather than by runs. */
static int times_each(pv_context *ctx, const pv_cl_state *state)
{
    return ctx->kernel_timing == PV_KERNEL_TIMING_EACH || state->profile_level;
}

int pv_cl_launch_wants_event(pv_context *ctx, cl_command_queue queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    /* Within a run only the first launch takes an event (see core.h). */
    return times_each(ctx, state) || !open_run(state, queue);
}

pv_status pv_cl_track_launch(pv_context *ctx, cl_event event, cl_kernel kernel,
                             cl_command_queue queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (times_each(ctx, state)) {
        pv_status status = pv_cl_track_event(ctx, event, EVENT_KERNEL);
        if (status == PV_OK)
            state->events[state->event_count - 1].kernel = kernel;
        return status;
    }
    /* A run keeps its queue until a marker at the wait may end it. */
    clRetainCommandQueue(queue);
    pv_status status = append_event(ctx, event, EVENT_KERNEL_RUN, queue);
    if (status != PV_OK)
        clReleaseCommandQueue(queue);
    return status;
}
