/* Internal: the OpenCL runtime.  Owns platform, device, context and the
 * in-order profiling queue; builds embedded kernel sources on first use
 * (with -D parameters from the launch-parameter table) and caches program
 * binaries on disk; times every transfer and launch with events. */
#ifndef PV_CL_RUNTIME_H
#define PV_CL_RUNTIME_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "../../../lib/core/internal.h"

/* The device sub-table's hooks (device.c composes them). */
pv_status pv_cl_runtime_init(pv_context *ctx, int device_index);
void pv_cl_runtime_release(pv_context *ctx);
/* Every device of every platform (pv_device_list's index space). */
pv_status pv_cl_runtime_list(pv_device_info *devices, int capacity, int *count);

/* Handles of the context's device (valid after init).  Its description
 * (limits, name) is ctx->device. */
cl_context pv_cl_context(pv_context *ctx);
cl_command_queue pv_cl_queue(pv_context *ctx);

/* More in-order profiling queues on the context's device, for work that
 * overlaps (the pipelined SIFT batch).  pv_cl_use_queue makes `queue` the
 * one that pv_cl_queue returns, so that every launch, transfer and
 * pv_cl_finish of the runtime goes to it, until it is called again (NULL:
 * the context's own queue); it returns the queue it replaces.  Only while
 * the context is held by its call (pv_call_begin .. pv_call_end), and
 * always restored before the call ends.  pv_cl_queue_release waits for
 * the queue, then releases it (NULL is skipped; *queue becomes NULL). */
pv_status pv_cl_queue_create(pv_context *ctx, cl_command_queue *queue);
void pv_cl_queue_release(cl_command_queue *queue);
cl_command_queue pv_cl_use_queue(pv_context *ctx, cl_command_queue queue);
/* An event (the caller's to release) that completes when every command
 * enqueued so far on the current queue has. */
pv_status pv_cl_marker(pv_context *ctx, cl_event *event);
cl_device_id pv_cl_device(pv_context *ctx);
const pv_device_info *pv_cl_device_info(pv_context *ctx);

/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *pv_cl_error_name(cl_int err);

/* PV_OK when err == CL_SUCCESS; otherwise records "<call> failed: NAME (code)"
 * on ctx and returns PV_ERR_OPENCL. */
pv_status pv_cl_check(pv_context *ctx, cl_int err, const char *call);

/* A kernel from the embedded program `program` (file kernels/<program>.cl)
 * built with `options` (may be NULL).  Programs and kernels are cached per
 * (program, options) on the context: do not release the returned kernel. */
pv_status pv_cl_kernel(pv_context *ctx, const char *program, const char *options,
                       const char *kernel_name, cl_kernel *kernel);

/* One launch-parameter table per kernel family (e.g. "sad"): the defaults
 * that the tuner may replace per device.  Each backends/opencl/<module>.c
 * defines its families; params.c lists them. */
typedef struct pv_cl_param_default {
    const char *name;   /* the -D define name, e.g. "SAD_TILE_W" */
    int value;
} pv_cl_param_default;

typedef struct pv_cl_param_family {
    const char *family;
    const pv_cl_param_default *params;
    size_t count;
} pv_cl_param_family;

/* Launch-parameter table (params.c): the value of parameter `name` of
 * kernel family `family` (tuned override if set, else the default).  A
 * family or name the table does not have is a mistake in the caller that
 * must not pass unseen: it is recorded on the context, `fallback` is
 * returned, and the call's kernel fetches, launches and final wait fail
 * with PV_ERR_INVALID naming it (pv_cl_param_check). */
int pv_cl_param(pv_context *ctx, const char *family, const char *name, int fallback);
/* Override one parameter on this context (for the tuner and experiments). */
pv_status pv_cl_param_set(pv_context *ctx, const char *family, const char *name, int value);
/* The device sub-table's parameter slots (lib/core/ops_device.h). */
const char *pv_cl_param_family_name(int index);
pv_status pv_cl_param_get(pv_context *ctx, const char *family, const char *name, int *value);
pv_status pv_cl_param_list(pv_context *ctx, const char *family, pv_tune_param *params,
                           int capacity, int *count);
pv_status pv_cl_param_reset(pv_context *ctx, const char *family);
/* Internal to params.c / the runtime: the context's override store, and
 * the record of a lookup of an unknown parameter. */
int pv_cl_param_override(pv_context *ctx, const char *family, const char *name, int *value);
pv_status pv_cl_param_store_override(pv_context *ctx, const char *family, const char *name,
                                     int value);
void pv_cl_param_misspelled(pv_context *ctx, const char *family, const char *name);
/* PV_OK, or PV_ERR_INVALID (recorded on ctx) when a pv_cl_param lookup
 * named an unknown parameter; forget: clear the record (pv_cl_finish, at
 * the end of a call, does), so that only the call that made it fails. */
pv_status pv_cl_param_check(pv_context *ctx, int forget);
/* The longest build options string a program is built with. */
#define PV_CL_OPTIONS_MAX 4096
/* Append " -DNAME=value" for every parameter of `family` to buf. */
pv_status pv_cl_param_defines(pv_context *ctx, const char *family, char *buf, size_t size);

/* Device buffers; bytes are checked against CL_DEVICE_MAX_MEM_ALLOC_SIZE
 * (PV_ERR_DEVICE_MEMORY with a clear message).  Release with pv_cl_release. */
pv_status pv_cl_buffer(pv_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *buffer);
void pv_cl_release(cl_mem *buffer);

/* One read-write buffer of a set made by pv_cl_buffers. */
typedef struct pv_cl_buffer_spec {
    cl_mem *buffer;
    size_t bytes;
} pv_cl_buffer_spec;

/* pv_cl_buffer(CL_MEM_READ_WRITE) for each spec in turn, up to the first
 * failure (the buffers made before it stay for the caller to release). */
pv_status pv_cl_buffers(pv_context *ctx, const pv_cl_buffer_spec *specs, size_t count);

/* A device buffer kept on the context between calls under `slot` (a string
 * literal naming its use, e.g. "sad.left"), grown when a call needs more.
 * Saves an allocation per call on repeated sizes.  Do not release it. */
pv_status pv_cl_scratch(pv_context *ctx, const char *slot, size_t bytes, cl_mem *buffer);

/* Timed copies (added to the call's upload_ms / download_ms).  Images and
 * volumes are packed densely on the device (stride = width). */
pv_status pv_cl_write(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                      const void *host);
pv_status pv_cl_read(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes, void *host);
/* Timed copies that do not wait (for pinned host memory, where the copy is
 * a plain DMA): host must stay as it is (write) or becomes valid (read)
 * until the next pv_cl_finish. */
pv_status pv_cl_write_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            const void *host);
pv_status pv_cl_read_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                           void *host);
/* Rectangular copies that do not wait (timed as transfers): `rows` rows
 * of row_bytes, on the device from byte `offset` of the buffer,
 * device_pitch bytes apart, on the host host_pitch bytes apart.  host must
 * stay as it is (write) or becomes valid (read) until the next
 * pv_cl_finish. */
typedef struct pv_cl_rows {
    size_t offset, device_pitch;
    size_t host_pitch;
    size_t rows, row_bytes;
} pv_cl_rows;
pv_status pv_cl_write_rows_async(pv_context *ctx, cl_mem buffer, const pv_cl_rows *rows,
                                 const void *host);
pv_status pv_cl_read_rows_async(pv_context *ctx, cl_mem buffer, const pv_cl_rows *rows,
                                void *host);
/* pv_cl_read through the pinned stages whatever the size, for results
 * read back on every call (the driver's pageable path costs more than the
 * staging copy even for a small map); PARVIS_PINNED_MIN=0 still turns
 * staging off. */
pv_status pv_cl_read_staged(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            void *host);
/* Uploads through the pinned stages whatever their size and whatever
 * PARVIS_PINNED_MIN says, without waiting: for inputs sent on every call
 * (the driver's path from pageable memory was seen to delay the commands
 * after a small upload by most of a millisecond).  `rows` rows of
 * row_bytes, host_pitch bytes apart on the host, land densely at the
 * buffer's start. */
pv_status pv_cl_write_rows_staged(pv_context *ctx, cl_mem buffer, size_t rows, size_t row_bytes,
                                  size_t host_pitch, const void *host);
/* A read through the pinned stages (whatever PARVIS_PINNED_MIN says) that
 * hands the result to sink chunk by chunk, while the DMA of the next chunks
 * runs: for results the host transforms on their way out.  offset: the
 * chunk's place within the read; chunks are 4 MiB except the last. */
typedef void (*pv_cl_chunk_sink)(void *user, size_t offset, const void *chunk, size_t bytes);
pv_status pv_cl_read_chunked(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                             pv_cl_chunk_sink sink, void *user);
/* memcpy over a few OpenMP threads (pv_cl_copy_threads) for copies into
 * or out of pinned staging memory. */
void pv_cl_copy_parallel(void *dst, const void *src, size_t bytes);
/* The threads a host copy of this size uses: one below 1 MiB, else up to 8
 * and half the OpenMP threads, one per 256 KiB piece. */
int pv_cl_copy_threads(size_t bytes);
/* The same for a copy that is worth threads from parallel_min bytes on
 * (one that does more per byte than memcpy). */
int pv_cl_copy_threads_from(size_t bytes, size_t parallel_min);
/* Device time of a finished, profiled event in ms (0 when unknown). */
double pv_cl_event_ms(cl_event event);
pv_status pv_cl_upload_image(pv_context *ctx, const pv_image *image, cl_mem *buffer);
pv_status pv_cl_download_image(pv_context *ctx, cl_mem buffer, pv_image *image);
/* Timed rectangular copies between a strided host image/volume and an
 * existing dense device buffer (no allocation, no host packing). */
pv_status pv_cl_write_image(pv_context *ctx, cl_mem buffer, const pv_image *image);
/* Volume uploads (runtime_convert.c) fill float buffers from either sample
 * type: an F32 volume is copied, a U16 one moves 2 bytes a voxel into a
 * staging buffer (the context's "volume.u16" scratch) and a kernel
 * converts it to float in the destination, exactly as the host would.
 * pv_cl_write_volume_at writes at `offset` floats into buffer. */
pv_status pv_cl_write_volume(pv_context *ctx, cl_mem buffer, const pv_volume *volume);
pv_status pv_cl_write_volume_at(pv_context *ctx, cl_mem buffer, size_t offset,
                                const pv_volume *volume);
pv_status pv_cl_upload_volume(pv_context *ctx, const pv_volume *volume, cl_mem *buffer);
pv_status pv_cl_download_volume(pv_context *ctx, cl_mem buffer, pv_volume *volume);
/* buffers[i] into volumes[i] (i < count), all or nothing: every volume but
 * the last is read into a host temporary and copied to the caller's only
 * once the last one's download has succeeded, so a failed download leaves
 * every volume as it was. */
pv_status pv_cl_download_volumes(pv_context *ctx, const cl_mem *buffers, pv_volume *const *volumes,
                                 int count);

/* ---- launches: the modules' one way (runtime_launch.c) -----------------
 * Only the runtime sets kernel arguments and enqueues kernels
 * (tests/test_layers.sh's raw-launch rule).  A module gets its kernel with
 * pv_cl_family_kernel (or pv_cl_kernel), and launches it with its whole
 * argument list through pv_cl_launch_args; pv_cl_run does both.  The list
 * is an array of pv_cl_kernel_arg in the kernel's order, written out
 * (PV_CL_ARG, PV_CL_LOCAL, counted by PV_CL_ARG_COUNT) or gathered piece by
 * piece in a pv_cl_arg_list. */

/* One kernel argument: PV_CL_ARG(x) for a variable x (a cl_mem, a
 * scalar), PV_CL_LOCAL(bytes) for a __local array. */
typedef struct pv_cl_kernel_arg {
    size_t size;
    const void *value;
} pv_cl_kernel_arg;
#define PV_CL_ARG(x) {sizeof(x), &(x)}
#define PV_CL_LOCAL(bytes) {(bytes), NULL}
/* The length of an argument array (not of a pointer to one). */
#define PV_CL_ARG_COUNT(args) ((int)(sizeof(args) / sizeof((args)[0])))

/* An argument list gathered piece by piece (for kernels whose arguments
 * share runs, such as BP's): buffers and __local sizes point at the
 * caller's, scalars are copied into the list, so that they live as long
 * as it does (do not copy a list: its items point into it).  Start it
 * with {.count = 0}; more than PV_CL_ARGS_MAX arguments turn count to
 * PV_CL_ARGS_OVERFLOW, which the launch refuses (PV_ERR_INVALID). */
#define PV_CL_ARGS_MAX 32
#define PV_CL_ARGS_OVERFLOW (-1)
typedef struct pv_cl_arg_list {
    pv_cl_kernel_arg item[PV_CL_ARGS_MAX];
    union {
        cl_int i;
        cl_float f;
    } scalar[PV_CL_ARGS_MAX];
    int count;
} pv_cl_arg_list;
void pv_cl_args_add(pv_cl_arg_list *list, size_t size, const void *value);
void pv_cl_args_buffers(pv_cl_arg_list *list, const cl_mem *const *buffers, int count);
void pv_cl_args_ints(pv_cl_arg_list *list, const cl_int *values, int count);
void pv_cl_args_floats(pv_cl_arg_list *list, const cl_float *values, int count);

/* Kernel `name` of the embedded program `program` built with the launch
 * parameters of `family` as -D defines, then `extra` (more defines, may
 * be NULL).  Cached as pv_cl_kernel's. */
pv_status pv_cl_family_kernel(pv_context *ctx, const char *program, const char *family,
                              const char *extra, const char *name, cl_kernel *kernel);
/* Set args[0 .. count) on kernel, then enqueue it over global (dims 1 to
 * 3; rounded up to a multiple of local, which may be NULL) on the current
 * queue.  The launch's time goes to the call's kernel_ms at the next
 * pv_cl_finish (by runs of launches or each launch, as the context says:
 * docs/timing.md). */
pv_status pv_cl_launch_args(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                            int count, cl_uint dims, const size_t *global, const size_t *local);
/* Both: kernel `name` of program built with family's parameters, its
 * arguments, its launch. */
pv_status pv_cl_run(pv_context *ctx, const char *program, const char *family, const char *name,
                    const pv_cl_kernel_arg *args, int count, cl_uint dims, const size_t *global,
                    const size_t *local);
/* A launch as pv_cl_launch_args's, waited for, its device time in *ms and
 * not in the call's timing: for the device probes, which time their own
 * runs. */
pv_status pv_cl_launch_waited(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                              int count, cl_uint dims, const size_t *global, const size_t *local,
                              double *ms);
/* The end of a call: pv_cl_finish even after a failure (so that every
 * event is accounted and released), keeping the first error. */
pv_status pv_cl_finish_after(pv_context *ctx, pv_status status);

/* Wait for the current queue and for every command tracked since the last
 * wait (on whichever queue), then account the events' times: kernel_ms is
 * the sum of the kernels' durations, which exceeds the wall time when
 * commands of several queues overlap. */
pv_status pv_cl_finish(pv_context *ctx);
/* Account and release the tracked events whose commands have completed,
 * without waiting (keeps the event list short during long pipelines;
 * PARVIS_PROFILE's per-wait timeline then sees only the events left for
 * the wait). */
void pv_cl_account_completed(pv_context *ctx);

/* runtime_interop.c: a caller's buffers in a call (lib/core/ops_interop.h
 * says what each does; the backend's interop table binds them). */
pv_status pv_cl_bind_host(pv_context *ctx, const void *proxy, size_t bytes, cl_mem mem,
                         size_t offset);
void pv_cl_unbind_images(pv_context *ctx);
/* The caller's buffer bound to the placeholder `proxy` and its offset: 1,
 * or 0 when proxy is not bound.  The count of bindings in place. */
int pv_cl_bound_buffer(pv_context *ctx, const void *proxy, cl_mem *mem, size_t *offset);
size_t pv_cl_binding_count(pv_context *ctx);
/* proxy's binding forgotten before its placeholder is unmapped (so that
 * memory mapped later at its address is not taken for it); its entry
 * stays counted until pv_cl_unbind_images. */
void pv_cl_forget_host(pv_context *ctx, const void *proxy);
pv_status pv_cl_defer_begin(pv_context *ctx, cl_uint count, const cl_event *events, int defer);
pv_status pv_cl_defer_end(pv_context *ctx, pv_status status, cl_event *done);
pv_status pv_cl_read_caller_image(pv_context *ctx, cl_mem mem, size_t offset, ptrdiff_t stride,
                                  pv_image *dst);
pv_status pv_cl_write_caller_image(pv_context *ctx, const pv_image *src, cl_mem mem,
                                   size_t offset, ptrdiff_t stride);
pv_status pv_cl_caller_objects(pv_context *ctx, cl_context *context, cl_command_queue *queue);

/* Run fn(ctx, arg) when the context is destroyed, before its queue and
 * context are released (for modules that cache objects tied to them, such
 * as FFT plans).  Registering the same (fn, arg) twice registers it once. */
typedef void (*pv_cl_release_fn)(pv_context *ctx, void *arg);
pv_status pv_cl_on_release(pv_context *ctx, pv_cl_release_fn fn, void *arg);

/* ---- fault injection (runtime_fault.c) -----------------------------------
 * PARVIS_FAULT=<kind>:<N>[,<kind>:<N>...], kind alloc, build or enqueue:
 * the context's N-th device buffer allocation, program build or enqueued
 * command (counted from 1 since the context was made) fails as if the
 * driver had refused it (CL_MEM_OBJECT_ALLOCATION_FAILURE,
 * CL_BUILD_PROGRAM_FAILURE, CL_OUT_OF_RESOURCES).  Read when the context
 * is made; each fault fires once.  For testing the error paths. */
typedef enum pv_cl_fault_kind {
    PV_CL_FAULT_ALLOC = 0,
    PV_CL_FAULT_BUILD = 1,
    PV_CL_FAULT_ENQUEUE = 2,
    PV_CL_FAULT_KINDS = 3
} pv_cl_fault_kind;

typedef struct pv_cl_faults {
    long at[PV_CL_FAULT_KINDS];     /* the call that fails, 0 = none */
    long calls[PV_CL_FAULT_KINDS];  /* calls made so far */
    int fired;                      /* faults injected so far */
    int pending;                    /* the last fault is not reported yet */
} pv_cl_faults;

/* Parse PARVIS_FAULT's value (NULL or "" = no faults) into faults. */
pv_status pv_cl_faults_parse(pv_context *ctx, const char *spec, pv_cl_faults *faults);
/* Count one call of `kind` on ctx: CL_SUCCESS, or the error it must fail with. */
cl_int pv_cl_fault(pv_context *ctx, pv_cl_fault_kind kind);
/* Whether the failure being reported was injected (then cleared). */
int pv_cl_fault_take_pending(pv_context *ctx);
/* For tests: faults fired on ctx, and calls of one kind made so far. */
int pv_cl_faults_fired(pv_context *ctx);
long pv_cl_fault_calls(pv_context *ctx, pv_cl_fault_kind kind);
/* The context's fault state (runtime_fault.c). */
pv_cl_faults *pv_cl_faults_of(pv_context *ctx);

#endif
