/* Internal, ground floor: the context object, error recording, timing,
 * argument checks and cross-check helpers shared by the front ends (lib/)
 * and the backends (backends/).  Includes nothing above lib/core/, and
 * every function declared here is defined in lib/core/, so a backend that
 * uses them depends on the ground floor alone.  Not installed. */
#ifndef PV_INTERNAL_H
#define PV_INTERNAL_H

#include "config.h"

#include "parvis.h"
#include "parvis/config.h"
#include "parvis/progress.h"
#include "backend.h"
#include "failure.h"
#include "configuration.h"
#include "plan.h"

#include <math.h>
#include <pthread.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>

#define PV_PI 3.14159265358979323846

/* A context may be shared between threads: every call on it runs under
 * `lock` (recursive, so a call may make nested calls on the same context):
 * pv_call_begin takes it and pv_call_end gives it back, plan creation and
 * destruction take it with pv_context_lock.  Everything below, the
 * backend state included, is only touched with the lock held, except the
 * fields set once by pv_context_create (backend, ops, device_index,
 * device, selection_note, cpu_threads). */
struct pv_context {
    pthread_mutex_t lock;
    pid_t creator_pid;             /* getpid() at creation (lib/core/fork_guard.c) */
    pv_backend_kind backend;
    const pv_backend_ops *ops;     /* the backend this context runs on */
    void *backend_state;           /* owned by ops->device (the OpenCL runtime's state) */
    int crosscheck;
    pv_kernel_timing kernel_timing; /* how OpenCL kernels are timed */
    int cpu_threads;
    int device_index;              /* -1 on the CPU backend */
    /* What the context runs on, filled once when it is made (by
     * ops->device->init, or by the front end for the CPU backend): name,
     * vendor, driver, compute units and memory limits.  Nobody enumerates
     * devices again to learn them. */
    pv_device_info device;
    char selection_note[256];
    char last_error[1024];
    char *build_log;               /* malloc'ed, or NULL */
    /* The tuning cache was read into the launch parameters (or must not
     * be: PARVIS_NO_TUNE, pv_tune_use_defaults); lib/tune/tune.c's flag. */
    int tune_cache_read;
    pv_timing timing;              /* of the call in progress / last call */
    double call_start_ms;
    /* Where the launch parameters came from ("cache", "database: <entry>
     * (<level> match)", "search", "defaults"): lib/tune/tune_db.c's note. */
    char tune_source[112];
    /* Progress (lib/core/progress.c): the callback, how deep the calls in
     * progress are nested (only the outermost call reports), the last done
     * it was given in this call (reports never go back) and, during a
     * cross-check's CPU run, muted. */
    pv_progress_fn progress_fn;
    void *progress_user;
    int call_depth;
    double progress_done;
    int progress_muted;
    /* A context made on a caller's OpenCL objects (pv_context_create_cl):
     * its cl_context and cl_command_queue (NULL: parvis's own), read by the
     * runtime when it starts.  Kept as void pointers: lib/core knows no
     * OpenCL types. */
    void *adopt_context, *adopt_queue;
    /* A device-buffer call is in progress (lib/interop/interop.c): its
     * images' data are placeholders, so the front ends must not read
     * pixel values, and the cross-check is the interop front end's. */
    int device_call;
    /* A device-buffer call returned before completing: pv_wait then
     * stretches the context's timing to its completion. */
    int device_call_pending;
    /* The worker of the asynchronous calls (lib/async/async.c), NULL until
     * the first one. */
    struct pv_runner *runner;
};


/* Take / give back the context's lock (recursive; NULL is ignored).  For
 * calls that touch the context outside pv_call_begin .. pv_call_end, such
 * as making and destroying plans. */
void pv_context_lock(pv_context *ctx);
void pv_context_unlock(pv_context *ctx);

/* Keep a kernel build log on the context (copied; NULL clears it), for
 * pv_context_build_log. */
void pv_context_set_build_log(pv_context *ctx, const char *log);

/* Monotonic clock in milliseconds. */
double pv_now_ms(void);

/* The user's cache root: $XDG_CACHE_HOME, else $HOME/.cache, into dir.
 * 0 when neither is set or the name does not fit (nothing is cached then).
 * The binary cache, FFTW wisdom, PoCL's kernel cache and the tuning cache
 * all live below it. */
int pv_cache_root(char *dir, size_t size);

/* 1 when text ends in suffix (lower case), letters compared without case. */
int pv_ends_with_ignoring_case(const char *text, const char *suffix);

/* Start / finish one front-end call: pv_call_begin takes the context's
 * lock and starts the timing, pv_call_end fills timing.total_ms (the
 * backend adds kernel/upload/download) and gives the lock back.  Every
 * pv_call_begin must be matched by one pv_call_end on every path, also
 * when it fails: PV_ERR_UNSUPPORTED for a context inherited across fork,
 * where the call must not reach the backend. */
pv_status pv_call_begin(pv_context *ctx) __attribute__((warn_unused_result));
void pv_call_end(pv_context *ctx);

/* One log line (lib/core/log.c): to the callback of pv_set_log_callback
 * when one is set, else to stderr ("parvis: " first) under PARVIS_LOG=1.
 * pv_log is an info line about ctx (may be NULL); pv_log_line gives the
 * level. */
void pv_log(const pv_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pv_log_line(pv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- progress (lib/core/progress.c) ------------------------------------ */

/* Report done of total units of op's work to ctx's progress callback,
 * from the thread making the call (never inside a parallel region).
 * Nothing happens without a callback, inside a nested call or during the
 * cross-check's CPU run; done is raised to the call's last report if
 * lower.  PV_ERR_CANCELLED ("<op>: cancelled by the progress callback")
 * when the callback asks to stop: the caller then frees what it made and
 * returns that status, as for any other failure. */
pv_status pv_progress_report(pv_context *ctx, const char *op, double done, double total)
    __attribute__((warn_unused_result));
/* Bracket a public call that does not go through pv_call_begin but makes
 * other calls (the tuner): it becomes the outermost call, whose reports
 * alone reach the callback. */
void pv_progress_outer_begin(pv_context *ctx);
void pv_progress_outer_end(pv_context *ctx);
/* 1 when a report would reach a callback (to skip counting work when
 * nobody listens). */
int pv_progress_wanted(const pv_context *ctx);

/* ---- argument checks shared by the front-end files ---------------------- */

/* A pointer argument a call cannot do without, by the name its messages
 * give it. */
typedef struct pv_required_arg {
    const char *name;
    const void *value;
} pv_required_arg;
/* The check a call starts with: ctx set, then each of the count arguments
 * non-NULL.  PV_ERR_INVALID with "<op>: <name> is NULL" for the first one
 * missing (ctx first); args may be NULL when count is 0.
 * PV_CHECK_REQUIRED(ctx, op, {"plan", plan}, {"params", params}) counts
 * the list itself. */
pv_status pv_check_required(pv_context *ctx, const char *op, const pv_required_arg *args,
                            int count);
#define PV_CHECK_REQUIRED(ctx, op, ...)                                                    \
    pv_check_required((ctx), (op), (const pv_required_arg[]){__VA_ARGS__},                 \
                      (int)(sizeof((const pv_required_arg[]){__VA_ARGS__}) /                \
                            sizeof(pv_required_arg)))

/* A well-formed image: non-NULL data, positive sizes, stride >= width, a
 * known pixel type, and a total element count that fits in size_t.
 * pv_image_is_valid also asks for a grey U8 or F32 image, the types that
 * every operation takes; pv_image_is_valid_any_type accepts the 16-bit
 * and colour types too (SIFT, pv_to_grey, the image reader). */
int pv_image_is_valid(const pv_image *image);
int pv_image_is_valid_any_type(const pv_image *image);
/* U8 or F32. */
int pv_pixel_is_grey(pv_pixel_type type);
/* A well-formed volume: non-NULL data, positive sizes, strides that hold
 * the rows and planes, a known sample type and a byte span that fits in
 * ptrdiff_t.  pv_volume_is_valid also asks for F32, the type every
 * operation takes; pv_volume_is_valid_any_type accepts U16 too. */
int pv_volume_is_valid(const pv_volume *volume);
int pv_volume_is_valid_any_type(const pv_volume *volume);
/* The sample types an operation takes, as a mask for pv_check_volume. */
#define PV_ACCEPT_F32 1u
#define PV_ACCEPT_U16 2u
#define PV_ACCEPT_F32_U16 (PV_ACCEPT_F32 | PV_ACCEPT_U16)
/* The one check of a volume argument of op: PV_OK for a valid volume of a
 * type in `accepted`, else PV_ERR_INVALID with a message naming the
 * argument and why (NULL, an unknown sample type, a type the operation
 * does not take, sizes or strides). */
pv_status pv_check_volume(pv_context *ctx, const char *op, const char *name,
                          const pv_volume *volume, unsigned accepted);
/* A float view of a valid volume: the volume itself when F32 (*copy
 * NULL), else a dense float copy made here (*copy, the caller's to free).
 * The CPU backend's conversion of U16 inputs, exact (every u16 value is a
 * float). */
pv_status pv_volume_as_f32(pv_context *ctx, const pv_volume *volume, pv_volume *view,
                           float **copy);
/* Sample i (an element offset) of a valid volume, as float. */
static inline float pv_volume_value(const pv_volume *volume, ptrdiff_t i)
{
    return volume->type == PV_VOLUME_U16 ? (float)volume->data_u16[i] : volume->data[i];
}
int pv_images_same_size(const pv_image *a, const pv_image *b);
int pv_volumes_same_size(const pv_volume *a, const pv_volume *b);
/* Whether two valid images / volumes share any byte of memory (outputs
 * must not alias inputs). */
/* Bytes from an image's first pixel to one past its last (stride rows). */
size_t pv_image_span(const pv_image *image);
/* A batch's memory check: *shared = 1 when an item marked as an output
 * (is_output[i] non-zero) shares a byte with any other item, in n log n
 * time.  PV_ERR_NOMEM (nothing reported) when its working list cannot be
 * had. */
pv_status pv_batch_outputs_overlap(const pv_image *const *items, const unsigned char *is_output,
                                   size_t count, int *shared);
int pv_images_overlap(const pv_image *a, const pv_image *b);
int pv_volumes_overlap(const pv_volume *a, const pv_volume *b);
/* ---- fork (lib/core/fork_guard.c) --------------------------------------- */

/* Registers the pthread_atfork handler (once; from context creation and
 * device listing). */
void pv_fork_guard_install(void);
/* Record that this process started OpenCL. */
void pv_fork_note_opencl(void);
/* 1 in a child forked after parvis was used. */
int pv_fork_is_child(void);
/* 1 when ctx was made by another process (inherited across fork). */
int pv_context_is_inherited(const pv_context *ctx);
/* PV_ERR_UNSUPPORTED naming fork and spawn/forkserver when ctx was
 * inherited across fork; pv_call_begin and plan creation call it. */
pv_status pv_fork_check_context(pv_context *ctx);
/* PV_ERR_UNSUPPORTED when this process was forked from one that had
 * started OpenCL (a new OpenCL context would hang in PoCL). */
pv_status pv_fork_check_new_opencl(void);

/* ---- host memory -------------------------------------------------------- */

/* Bytes the process can still allocate from the host: physical RAM, less
 * where RLIMIT_AS or RLIMIT_DATA leaves less beside what the process maps
 * already.  Read afresh each call (limits may change); UINT64_MAX when
 * nothing bounds it.  The CPU backend and OpenCL devices of CPU type
 * budget their memory against it. */
uint64_t pv_host_memory_available(void);

/* ---- input files -------------------------------------------------------- */

/* pv_open_regular's result for a path that exists but is no regular file. */
#define PV_NOT_REGULAR (-1)
/* Opens path for reading ("rb") when it is a regular file, without ever
 * blocking in open (a FIFO without a writer) and before reading a byte of
 * a device.  0 with *stream (the caller's to fclose) and *size (bytes;
 * size may be NULL), else an errno value or PV_NOT_REGULAR, outputs
 * untouched.  Every reader of files in the library opens through it. */
int pv_open_regular(const char *path, FILE **stream, uint64_t *size);
/* Words for a failed pv_open_regular's result, for messages. */
const char *pv_open_regular_reason(int result);

/* The finite-input policy: every operation that takes float (F32) images
 * or volumes refuses NaN and infinities in them, before any work, with
 * PV_ERR_INVALID naming op, the argument (name) and the first bad pixel.
 * A U8 image passes (it cannot hold them).  The argument must already be
 * valid (pv_image_is_valid / pv_volume_is_valid). */
pv_status pv_check_finite_image(pv_context *ctx, const char *op, const char *name,
                                const pv_image *image);
pv_status pv_check_finite_volume(pv_context *ctx, const char *op, const char *name,
                                 const pv_volume *volume);
/* Bytes of one pixel of the type (0 for an unknown type). */
size_t pv_pixel_size(pv_pixel_type type);

/* ---- scratch: several working arrays in one allocation ------------------ */

/* A call that needs N working arrays writes one layout function that
 * assigns each array with pv_scratch_take; pv_scratch_carve runs it once
 * to add up the sizes, makes one block, and runs it again to point every
 * array into the block.  One allocation, one failure check and one free
 * (pv_scratch_free) replace N of each.  Every array starts on a
 * PV_SCRATCH_ALIGN boundary: a cache line, so that threads writing
 * neighbouring arrays do not share one, and enough for any SIMD load. */
#define PV_SCRATCH_ALIGN ((size_t)64)
typedef struct pv_scratch {
    unsigned char *block;   /* the allocation; NULL while the sizes are added up */
    size_t size;            /* bytes laid out so far */
    int overflow;           /* a size did not fit in size_t */
} pv_scratch;
/* Lays out the arrays of `arrays` (the caller's struct of pointers). */
typedef void pv_scratch_layout(pv_scratch *scratch, void *arrays);
/* The next count elements of element_size bytes: their place in the block,
 * or NULL while the sizes are being added up. */
void *pv_scratch_take(pv_scratch *scratch, size_t count, size_t element_size);
/* Make the block (zero-filled when zeroed) into *scratch and point the
 * arrays into it.  PV_ERR_NOMEM (nothing recorded: the caller says what
 * it was for) when a size overflows or memory is short; every array is
 * then NULL and *scratch untouched. */
pv_status pv_scratch_carve(pv_scratch *scratch, pv_scratch_layout *lay_out, void *arrays,
                           int zeroed);
/* Free the block (NULL-safe, and safe on an all-zero scratch). */
void pv_scratch_free(pv_scratch *scratch);

/* ---- cross-check -------------------------------------------------------- */

/* True when this call must also run on the CPU backend. */
int pv_crosscheck_wanted(const pv_context *ctx);

/* Relative L-infinity difference of two f32 images / volumes of equal size:
 * max |a - b| / max(1, max |b|).  INFINITY values must match exactly. */
double pv_image_rel_linf(const pv_image *a, const pv_image *b);
double pv_volume_rel_linf(const pv_volume *a, const pv_volume *b);

/* Scratch copies for the CPU side of a cross-check (same size, dense). */
pv_status pv_image_alloc_like(pv_image *out, const pv_image *like, pv_pixel_type type);
pv_status pv_volume_alloc_like(pv_volume *out, const pv_volume *like);

/* The CPU oracle's run inside a front-end call.  pv_oracle_begin saves the
 * call's timing (the oracle's time is not the call's); each add gives a
 * dense f32 scratch output shaped like a device output (*cpu NULL when
 * device is NULL: not wanted); pv_oracle_end restores the timing, and when
 * status is PV_OK and tolerance >= 0 fails with PV_ERR_MISMATCH if the
 * largest relative L-infinity difference of the outputs exceeds it (pass
 * PV_ORACLE_COMPARED_BY_CALLER after comparing by other means), frees the
 * scratch and returns the status.  Every begin needs one end. */
#define PV_ORACLE_MAX_OUTPUTS 4
#define PV_ORACLE_COMPARED_BY_CALLER (-1.0)
typedef struct pv_oracle_output {
    const pv_image *device_image;    /* one of the two device outputs is set */
    const pv_volume *device_volume;
    pv_image cpu_image;
    pv_volume cpu_volume;
} pv_oracle_output;
typedef struct pv_oracle {
    const char *op;
    pv_timing saved;
    int count;
    pv_oracle_output output[PV_ORACLE_MAX_OUTPUTS];
} pv_oracle;
void pv_oracle_begin(pv_context *ctx, const char *op, pv_oracle *oracle);
pv_status pv_oracle_add_image(pv_context *ctx, pv_oracle *oracle, const pv_image *device,
                              pv_image **cpu);
pv_status pv_oracle_add_volume(pv_context *ctx, pv_oracle *oracle, const pv_volume *device,
                               pv_volume **cpu);
pv_status pv_oracle_end(pv_context *ctx, pv_oracle *oracle, pv_status status, double tolerance);

/* A front-end plan holds a plan on its context's backend and, when
 * cross-checked, a twin on the CPU oracle: destroy both through their
 * modules' slots, under the context's lock (a shared context's device
 * state).  Either plan may be NULL. */
void pv_destroy_plan_pair(pv_context *ctx, pv_plan_destroy_fn backend_destroy,
                          void *backend_plan, pv_plan_destroy_fn cpu_destroy, void *cpu_plan);
/* The same through module's slot `slot` on both backends, naming them once:
 * PV_DESTROY_PLAN_PAIR(ctx, flow, destroy, plan->backend, plan->check). */
#define PV_DESTROY_PLAN_PAIR(ctx, module, slot, backend_plan, cpu_plan)                    \
    pv_destroy_plan_pair((ctx), (ctx)->ops->module->slot, (backend_plan),                   \
                         pv_cpu_backend.module->slot, (cpu_plan))

#endif
