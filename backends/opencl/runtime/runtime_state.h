/* Internal to the OpenCL runtime (backends/opencl/runtime/): the state a
 * context's runtime keeps, and the runtime files' hooks into each other.
 * The modules see only runtime.h.
 *
 * One file per concern, each calling only those listed above it (no cycle:
 * tests/test_layers.sh's runtime-call-cycle rule):
 *
 *   runtime_fault.c     PARVIS_FAULT's injected failures
 *   runtime_error.c     OpenCL error names, the check of an OpenCL call
 *   runtime_param.c     the launch-parameter store (overrides, misspellings)
 *   runtime_queue.c     the OpenCL context, its queues, the handles
 *   runtime_device.c    device enumeration (once per process) and choice
 *   runtime_cache.c     the binary cache's file format (runtime_cache.h)
 *   runtime_binary.c    the on-disk cache of program binaries
 *   runtime_program.c   program builds and kernels
 *   runtime_profile.c   events, timing, PARVIS_PROFILE, markers
 *   runtime_transfer.c  buffers, scratch buffers, timed and staged transfers
 *   runtime_launch.c    kernel arguments and launches
 *   runtime_convert.c   volume uploads: u16 samples moved as 16 bits,
 *                       converted to float on the device
 *   runtime_setup.c     set-up and release of the state, release hooks */
#ifndef PV_CL_RUNTIME_STATE_H
#define PV_CL_RUNTIME_STATE_H

#include "runtime.h"

#include <stdint.h>

#define PV_CL_MAX_PLATFORMS 16
#define PV_CL_MAX_DEVICES 64

/* EVENT_KERNEL: one launch (PV_KERNEL_TIMING_EACH); EVENT_KERNEL_RUN: the
 * first launch of a run of kernels (PV_KERNEL_TIMING_RUNS), whose time
 * ends where the command after the run (`until`) starts. */
typedef enum event_kind {
    EVENT_KERNEL,
    EVENT_KERNEL_RUN,
    EVENT_UPLOAD,
    EVENT_DOWNLOAD
} event_kind;

typedef struct timed_event {
    cl_event event;
    event_kind kind;
    cl_kernel kernel;         /* launches: named in the PARVIS_PROFILE summary */
    cl_command_queue queue;   /* where it was enqueued (retained for a run) */
    cl_event until;           /* a run: the command after it, NULL while open */
} timed_event;

/* PARVIS_PROFILE=1: kernel time summed per kernel name, logged when the
 * context is released (a debugging aid; nothing is kept otherwise). */
typedef struct profile_entry {
    char name[64];
    double ms;
    long launches;
} profile_entry;

/* PARVIS_PROFILE=1 also keeps the device timeline of every wait: from the
 * first command's submission to its start (lead), from the first start to
 * the last end (span) and the commands' summed time (busy); span - busy is
 * time the device sat idle between commands, waiting for the host. */
typedef struct profile_timeline {
    long waits;
    double lead_ms, span_ms, busy_ms;
} profile_timeline;

typedef struct built_program {
    char *key;            /* "program|options" */
    cl_program program;
    uint64_t cache_key;   /* of the on-disk binary cache */
    int from_cache;       /* program made from a cached binary */
    cl_kernel *kernels;
    char **kernel_names;
    size_t kernel_count;
} built_program;

typedef struct scratch_slot {
    const char *slot;
    cl_mem buffer;
    size_t bytes;
} scratch_slot;

typedef struct param_override {
    char family[32];
    char name[48];
    int value;
} param_override;

/* Pinned (page-locked) host buffers that large transfers are staged
 * through: the driver copies pageable memory through its own small bounce
 * buffer, one thread, at a few GB/s (into freshly allocated memory far
 * less); staging in 4 MiB chunks through a ring of four stages, with a
 * multi-threaded memcpy overlapped with the DMA of the next chunks, is
 * several times faster. */
#define PINNED_STAGES 4
typedef struct pinned_stage {
    cl_mem buffer;
    void *host;       /* mapped for the context's lifetime */
    cl_event busy;    /* the last transfer that used it, or NULL */
} pinned_stage;

typedef struct release_hook {
    pv_cl_release_fn fn;
    void *arg;
} release_hook;

/* A caller's buffer standing in for a host image of the call in progress
 * (lib/interop/interop.c): the image's data pointer is a placeholder that
 * is never read, and the transfers of that image copy to or from `mem` on
 * the device instead (runtime_interop.c binds, runtime_transfer.c copies). */
#define PV_CL_BINDINGS 24 /* a device-buffer call's items and working copies */
typedef struct device_binding {
    const void *host;
    cl_mem mem;
    size_t offset;
    size_t bytes;            /* the image's span in mem from offset */
} device_binding;

typedef struct pv_cl_state {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_command_queue current;  /* pv_cl_use_queue's, or NULL: queue */
    char platform_version[128];
    char misspelled[96];     /* an unknown parameter looked up, until reported */
    built_program *programs;
    size_t program_count;
    scratch_slot *scratch;
    size_t scratch_count;
    param_override *overrides;
    size_t override_count;
    timed_event *events;
    size_t event_count, event_capacity;
    release_hook *hooks;
    size_t hook_count;
    profile_entry *profile;
    size_t profile_count;
    profile_timeline timeline;
    int profile_level;       /* PARVIS_PROFILE when the context was made */
    pinned_stage stages[PINNED_STAGES];
    unsigned next_stage;     /* of the ring, for the next upload */
    float *download_stage;   /* host staging of pv_cl_download_volumes, kept */
    size_t download_stage_bytes;
    pv_cl_faults faults;     /* PARVIS_FAULT */
    cl_command_queue caller_queue; /* the caller's, when the context was made on one */
    device_binding bindings[PV_CL_BINDINGS];
    size_t binding_count;
    int deferred;            /* a device-buffer call: its last clFinish becomes a flush */
} pv_cl_state;

/* The caller's buffer bound to the host image data `host`, or NULL. */
static inline const device_binding *pv_cl_binding_of(const pv_cl_state *state, const void *host)
{
    for (size_t i = 0; i < state->binding_count; i++)
        if (state->bindings[i].host == host)
            return &state->bindings[i];
    return NULL;
}

static inline pv_cl_state *pv_cl_state_of(pv_context *ctx)
{
    return (pv_cl_state *)ctx->backend_state;
}

/* runtime_profile.c: read PARVIS_PROFILE into state (once, when the
 * context is made). */
void pv_cl_profile_init(pv_cl_state *state);

/* runtime_error.c: " [injected by PARVIS_FAULT]" when the failure being
 * reported was injected, else "". */
const char *pv_cl_injected_note(pv_context *ctx);

/* runtime_device.c: the device_index-th device into state and
 * ctx->device, as enumerated once per process (PV_ERR_NO_DEVICE when
 * there is none such). */
pv_status pv_cl_device_pick(pv_context *ctx, pv_cl_state *state, int device_index);

/* runtime_queue.c: the OpenCL context on state's device and its own
 * profiling queue (set-up); or, for a context made on a caller's
 * cl_context (and queue), that context and queue retained and a
 * profiling queue of parvis's own on it. */
pv_status pv_cl_context_create(pv_context *ctx, pv_cl_state *state);
pv_status pv_cl_context_adopt(pv_context *ctx, pv_cl_state *state, cl_context context,
                              cl_command_queue queue);

/* runtime_device.c: the device of a caller's context or queue into state
 * and ctx->device (its index in the process's enumeration). */
pv_status pv_cl_device_pick_id(pv_context *ctx, pv_cl_state *state, cl_device_id device);

/* runtime_program.c: release every program and kernel of state. */
void pv_cl_release_programs(pv_cl_state *state);

/* runtime_binary.c: the on-disk binary cache (PARVIS_NO_BINARY_CACHE=1
 * turns it off).  The key covers everything that changes the binary. */
uint64_t pv_cl_binary_key(const pv_context *ctx, const pv_cl_state *state, const char *name,
                          const char *source, const char *options);
unsigned char *pv_cl_binary_load(uint64_t key, size_t *size);
void pv_cl_binary_store(uint64_t key, const unsigned char *binary, size_t size);
void pv_cl_binary_remove(uint64_t key);
/* The built program's binary (malloc'ed), or NULL. */
unsigned char *pv_cl_program_binary(cl_program program, size_t *size);

/* runtime_transfer.c: unmap and release the pinned stages, then wait for
 * the queue; release the scratch buffers. */
void pv_cl_release_stages(pv_cl_state *state);
void pv_cl_release_scratch(pv_cl_state *state);
/* runtime_transfer.c, for runtime_convert.c: a volume's samples as stored
 * (4 or 2 bytes each) into a dense device buffer, or a new one. */
pv_status pv_cl_write_volume_samples(pv_context *ctx, cl_mem buffer, const pv_volume *volume);
pv_status pv_cl_upload_volume_samples(pv_context *ctx, const pv_volume *volume, cl_mem *buffer);
/* A volume bound to a caller's buffer (a device-buffer call) into buffer
 * from byte `offset` on, copied on the device; PV_ERR_INVALID for a volume
 * that is not bound. */
pv_status pv_cl_write_bound_volume_at(pv_context *ctx, cl_mem buffer, size_t offset,
                                      const pv_volume *volume);

/* runtime_profile.c: keep an enqueued command's event until the next
 * pv_cl_finish accounts its time (on failure the event is waited for and
 * released); log the PARVIS_PROFILE summary and release the events. */
pv_status pv_cl_track_event(pv_context *ctx, cl_event event, event_kind kind);
void pv_cl_release_profile(pv_context *ctx, pv_cl_state *state);
/* runtime_profile.c, for the launches: whether a kernel enqueued now on
 * queue takes an event (every launch when each is timed, else the first
 * of a run), and the keeping of that event once it is enqueued. */
int pv_cl_launch_wants_event(pv_context *ctx, cl_command_queue queue);
pv_status pv_cl_track_launch(pv_context *ctx, cl_event event, cl_kernel kernel,
                             cl_command_queue queue);

#endif
