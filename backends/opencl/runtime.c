/* The OpenCL runtime: device enumeration and selection, context and
 * profiling queue, program builds with an on-disk binary cache, timed
 * transfers and launches, and per-context scratch buffers. */
#include "runtime.h"
#include "runtime_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PV_CL_MAX_PLATFORMS 16
#define PV_CL_MAX_DEVICES 64

struct pv_cl_source { const char *name; const char *text; };
extern const struct pv_cl_source pv_cl_sources[];
extern const size_t pv_cl_source_count;

typedef enum event_kind { EVENT_KERNEL, EVENT_UPLOAD, EVENT_DOWNLOAD } event_kind;

typedef struct timed_event {
    cl_event event;
    event_kind kind;
    cl_kernel kernel; /* launches: named in the PARVIS_PROFILE summary */
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

typedef struct pv_cl_state {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
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
    pinned_stage stages[PINNED_STAGES];
    unsigned next_stage;     /* of the ring, for the next upload */
    pv_cl_faults faults;     /* PARVIS_FAULT */
} pv_cl_state;

static pv_cl_state *state_of(pv_context *ctx)
{
    return (pv_cl_state *)ctx->backend_state;
}

cl_context pv_cl_context(pv_context *ctx) { return state_of(ctx)->context; }
cl_command_queue pv_cl_queue(pv_context *ctx) { return state_of(ctx)->queue; }
cl_device_id pv_cl_device(pv_context *ctx) { return state_of(ctx)->device; }
const pv_device_info *pv_cl_device_info(pv_context *ctx) { return &ctx->device; }

pv_cl_faults *pv_cl_faults_of(pv_context *ctx)
{
    pv_cl_state *state = state_of(ctx);
    return state ? &state->faults : NULL;
}

/* ------------------------------------------------------------------ errors */

const char *pv_cl_error_name(cl_int err)
{
    switch (err) {
#define PV_CL_ERR(name) case name: return #name;
    PV_CL_ERR(CL_SUCCESS) PV_CL_ERR(CL_DEVICE_NOT_FOUND) PV_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    PV_CL_ERR(CL_COMPILER_NOT_AVAILABLE) PV_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    PV_CL_ERR(CL_OUT_OF_RESOURCES) PV_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    PV_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE) PV_CL_ERR(CL_MEM_COPY_OVERLAP)
    PV_CL_ERR(CL_IMAGE_FORMAT_MISMATCH) PV_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    PV_CL_ERR(CL_BUILD_PROGRAM_FAILURE) PV_CL_ERR(CL_MAP_FAILURE)
    PV_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    PV_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    PV_CL_ERR(CL_COMPILE_PROGRAM_FAILURE) PV_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    PV_CL_ERR(CL_LINK_PROGRAM_FAILURE) PV_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    PV_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) PV_CL_ERR(CL_INVALID_VALUE)
    PV_CL_ERR(CL_INVALID_DEVICE_TYPE) PV_CL_ERR(CL_INVALID_PLATFORM) PV_CL_ERR(CL_INVALID_DEVICE)
    PV_CL_ERR(CL_INVALID_CONTEXT) PV_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    PV_CL_ERR(CL_INVALID_COMMAND_QUEUE) PV_CL_ERR(CL_INVALID_HOST_PTR)
    PV_CL_ERR(CL_INVALID_MEM_OBJECT) PV_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    PV_CL_ERR(CL_INVALID_IMAGE_SIZE) PV_CL_ERR(CL_INVALID_SAMPLER) PV_CL_ERR(CL_INVALID_BINARY)
    PV_CL_ERR(CL_INVALID_BUILD_OPTIONS) PV_CL_ERR(CL_INVALID_PROGRAM)
    PV_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE) PV_CL_ERR(CL_INVALID_KERNEL_NAME)
    PV_CL_ERR(CL_INVALID_KERNEL_DEFINITION) PV_CL_ERR(CL_INVALID_KERNEL)
    PV_CL_ERR(CL_INVALID_ARG_INDEX) PV_CL_ERR(CL_INVALID_ARG_VALUE) PV_CL_ERR(CL_INVALID_ARG_SIZE)
    PV_CL_ERR(CL_INVALID_KERNEL_ARGS) PV_CL_ERR(CL_INVALID_WORK_DIMENSION)
    PV_CL_ERR(CL_INVALID_WORK_GROUP_SIZE) PV_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    PV_CL_ERR(CL_INVALID_GLOBAL_OFFSET) PV_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    PV_CL_ERR(CL_INVALID_EVENT) PV_CL_ERR(CL_INVALID_OPERATION) PV_CL_ERR(CL_INVALID_GL_OBJECT)
    PV_CL_ERR(CL_INVALID_BUFFER_SIZE) PV_CL_ERR(CL_INVALID_MIP_LEVEL)
    PV_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE) PV_CL_ERR(CL_INVALID_PROPERTY)
    PV_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR) PV_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    PV_CL_ERR(CL_INVALID_LINKER_OPTIONS) PV_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef PV_CL_ERR
    default: return "unknown OpenCL error";
    }
}

/* Names an injected failure as such in its message. */
static const char *injected_note(pv_context *ctx)
{
    return pv_cl_fault_take_pending(ctx) ? " [injected by PARVIS_FAULT]" : "";
}

pv_status pv_cl_check(pv_context *ctx, cl_int err, const char *call)
{
    if (err == CL_SUCCESS)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_OPENCL, "%s failed: %s (%d)%s", call, pv_cl_error_name(err),
                   (int)err, injected_note(ctx));
}

/* --------------------------------------------------------------- devices */

/* Every device of every platform, in platform order: the index space of
 * pv_device_list(), PARVIS_DEVICE and pv_context_options.device_index.
 * Enumerated once per process, under pthread_once: ICD loaders and drivers
 * were seen to crash, or to report no platform, when several threads made
 * their first OpenCL calls at the same moment.  Every later query reads
 * this table (devices do not come and go while a process runs). */
typedef struct device_table {
    int count;
    char problem[512];   /* why count is 0, for the error message */
    cl_platform_id platforms[PV_CL_MAX_DEVICES];
    cl_device_id devices[PV_CL_MAX_DEVICES];
    pv_device_info info[PV_CL_MAX_DEVICES];
    char platform_version[PV_CL_MAX_DEVICES][128];
} device_table;

static device_table the_devices;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void describe_device(cl_platform_id platform, cl_device_id device, int index,
                            pv_device_info *info);

/* mkdir -p of an absolute or relative path; 0 when it exists afterwards. */
static int make_directories(const char *path)
{
    char partial[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof partial)
        return -1;
    memcpy(partial, path, len + 1);
    for (char *p = partial + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(partial, 0755) != 0 && errno != EEXIST)
        return -1;
    return access(partial, W_OK | X_OK);
}

/* PoCL keeps compiled kernels under $POCL_CACHE_DIR, else
 * $XDG_CACHE_HOME/pocl/kcache, else $HOME/.cache/pocl/kcache, and reports
 * no device at all when it cannot create that directory.  A cache is an
 * optimisation, not a requirement: when the default place is unusable and
 * the user set no POCL_CACHE_DIR, PoCL gets a private directory of this
 * user under the temporary directory (its own, checked: not a link, owned
 * by us, mode 0700).  Runs once, before the first OpenCL call. */
static void ensure_pocl_cache_dir(void)
{
    const char *set = getenv("POCL_CACHE_DIR");
    if (set && *set)
        return;
    char dir[4096], root[3072];
    dir[0] = '\0';
    if (pv_cache_root(root, sizeof root))
        snprintf(dir, sizeof dir, "%s/pocl/kcache", root);
    if (dir[0] && make_directories(dir) == 0)
        return;
    const char *tmp = getenv("TMPDIR");
    char fallback[4096];
    snprintf(fallback, sizeof fallback, "%s/parvis-pocl-%ld", tmp && *tmp ? tmp : "/tmp",
             (long)getuid());
    mkdir(fallback, 0700);
    struct stat st;
    if (lstat(fallback, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077) != 0) {
        pv_log(NULL, "OpenCL: no usable kernel cache directory for PoCL (%s, %s)",
               dir[0] ? dir : "no XDG_CACHE_HOME or HOME", fallback);
        return;
    }
    setenv("POCL_CACHE_DIR", fallback, 0);
    pv_log(NULL, "OpenCL: %s is not writable, PoCL caches its kernels in %s",
           dir[0] ? dir : "the cache directory (no XDG_CACHE_HOME or HOME)", fallback);
}

static void enumerate_once(void)
{
    device_table *table = &the_devices;
    ensure_pocl_cache_dir();
    cl_platform_id platforms[PV_CL_MAX_PLATFORMS];
    cl_uint platform_count = 0;
    cl_int err = clGetPlatformIDs(PV_CL_MAX_PLATFORMS, platforms, &platform_count);
    if (err != CL_SUCCESS || platform_count == 0) {
        snprintf(table->problem, sizeof table->problem,
                 "no OpenCL platform found (clGetPlatformIDs: %s, %d): is an ICD installed?",
                 pv_cl_error_name(err), (int)err);
        return;
    }
    snprintf(table->problem, sizeof table->problem, "no OpenCL device found:");
    for (cl_uint p = 0; p < platform_count && p < PV_CL_MAX_PLATFORMS; p++) {
        cl_device_id found[PV_CL_MAX_DEVICES];
        cl_uint count = 0;
        err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, PV_CL_MAX_DEVICES, found, &count);
        if (err != CL_SUCCESS) {
            char name[128] = "?";
            clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
            name[sizeof name - 1] = '\0';
            size_t used = strlen(table->problem);
            snprintf(table->problem + used, sizeof table->problem - used,
                     " platform '%s': clGetDeviceIDs failed: %s (%d);", name,
                     pv_cl_error_name(err), (int)err);
            continue;
        }
        char version[128] = "";
        if (clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof version, version, NULL) !=
            CL_SUCCESS)
            version[0] = '\0';
        version[sizeof version - 1] = '\0';
        for (cl_uint d = 0; d < count && d < PV_CL_MAX_DEVICES && table->count < PV_CL_MAX_DEVICES;
             d++) {
            int i = table->count++;
            table->platforms[i] = platforms[p];
            table->devices[i] = found[d];
            describe_device(platforms[p], found[d], i, &table->info[i]);
            memcpy(table->platform_version[i], version, sizeof version);
        }
    }
}

static const device_table *devices(void)
{
    pthread_once(&devices_once, enumerate_once);
    return &the_devices;
}

/* Device strings longer than the field are truncated, not dropped. */
static void device_string(cl_device_id device, cl_device_info what, char *out, size_t size)
{
    size_t needed = 0;
    out[0] = '\0';
    if (clGetDeviceInfo(device, what, 0, NULL, &needed) != CL_SUCCESS || needed == 0)
        return;
    char *full = malloc(needed);
    if (full && clGetDeviceInfo(device, what, needed, full, NULL) == CL_SUCCESS)
        snprintf(out, size, "%s", full);
    free(full);
}

static pv_device_type device_type(cl_device_id device)
{
    cl_device_type type = 0;
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (type & CL_DEVICE_TYPE_GPU)
        return PV_DEVICE_GPU;
    if (type & CL_DEVICE_TYPE_CPU)
        return PV_DEVICE_CPU;
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return PV_DEVICE_ACCELERATOR;
    return PV_DEVICE_OTHER;
}

static void describe_device(cl_platform_id platform, cl_device_id device, int index,
                            pv_device_info *info)
{
    cl_ulong value = 0;
    cl_uint units = 0;
    size_t group = 0;
    memset(info, 0, sizeof *info);
    info->index = index;
    device_string(device, CL_DEVICE_NAME, info->name, sizeof info->name);
    device_string(device, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    device_string(device, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    device_string(device, CL_DEVICE_VERSION, info->opencl_version, sizeof info->opencl_version);
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) !=
        CL_SUCCESS)
        info->platform[0] = '\0';
    info->platform[sizeof info->platform - 1] = '\0';
    info->type = device_type(device);
    if (clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->global_memory = value;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->max_alloc = value;
    if (clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->local_memory = value;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) == CL_SUCCESS)
        info->compute_units = (int)units;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL) == CL_SUCCESS)
        info->max_work_group_size = (int)group;
}

pv_status pv_cl_list_devices(pv_device_info *list, int capacity, int *count)
{
    const device_table *table = devices();
    for (int i = 0; i < table->count && i < capacity; i++)
        list[i] = table->info[i];
    *count = table->count;
    return PV_OK;
}

/* ------------------------------------------------------------ init/release */

static pv_status create_queue(pv_context *ctx, pv_cl_state *state)
{
    cl_int err;
    state->context = clCreateContext(NULL, 1, &state->device, NULL, NULL, &err);
    pv_status status = pv_cl_check(ctx, err, "clCreateContext");
    if (status != PV_OK)
        return status;
    state->queue = clCreateCommandQueue(state->context, state->device, CL_QUEUE_PROFILING_ENABLE,
                                        &err);
    return pv_cl_check(ctx, err, "clCreateCommandQueue");
}

pv_status pv_cl_runtime_init(pv_context *ctx, int device_index)
{
    const device_table *table = devices();
    int total = table->count;
    if (total == 0)
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "%s", table->problem);
    if (device_index < 0 || device_index >= total)
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "OpenCL device index %d out of range (0..%d)",
                       device_index, total - 1);
    pv_cl_state *state = calloc(1, sizeof *state);
    if (!state)
        return pv_fail(ctx, PV_ERR_NOMEM, "OpenCL runtime: out of memory");
    state->platform = table->platforms[device_index];
    state->device = table->devices[device_index];
    ctx->device = table->info[device_index];
    memcpy(state->platform_version, table->platform_version[device_index],
           sizeof state->platform_version);
    ctx->backend_state = state;
    pv_status status = pv_cl_faults_parse(ctx, getenv("PARVIS_FAULT"), &state->faults);
    if (status == PV_OK)
        status = create_queue(ctx, state);
    if (status != PV_OK) {
        pv_cl_runtime_release(ctx);
        return status;
    }
    return PV_OK;
}

static void release_stages(pv_cl_state *state)
{
    for (int i = 0; i < PINNED_STAGES; i++) {
        pinned_stage *stage = &state->stages[i];
        if (stage->busy)
            clReleaseEvent(stage->busy);
        if (stage->host)
            clEnqueueUnmapMemObject(state->queue, stage->buffer, stage->host, 0, NULL, NULL);
        if (stage->buffer)
            clReleaseMemObject(stage->buffer);
        memset(stage, 0, sizeof *stage);
    }
    if (state->queue)
        clFinish(state->queue);
}

static void release_programs(pv_cl_state *state)
{
    for (size_t i = 0; i < state->program_count; i++) {
        built_program *entry = &state->programs[i];
        for (size_t k = 0; k < entry->kernel_count; k++) {
            clReleaseKernel(entry->kernels[k]);
            free(entry->kernel_names[k]);
        }
        free(entry->kernels);
        free(entry->kernel_names);
        clReleaseProgram(entry->program);
        free(entry->key);
    }
    free(state->programs);
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

static void release_events(pv_cl_state *state)
{
    for (size_t i = 0; i < state->event_count; i++)
        clReleaseEvent(state->events[i].event);
    free(state->events);
}

void pv_cl_runtime_release(pv_context *ctx)
{
    pv_cl_state *state = state_of(ctx);
    if (!state)
        return;
    if (state->queue)
        clFinish(state->queue);
    for (size_t i = 0; i < state->hook_count; i++)
        state->hooks[i].fn(ctx, state->hooks[i].arg);
    free(state->hooks);
    release_stages(state);
    log_profile(ctx, state);
    release_events(state);
    release_programs(state);
    for (size_t i = 0; i < state->scratch_count; i++)
        clReleaseMemObject(state->scratch[i].buffer);
    free(state->scratch);
    free(state->overrides);
    if (state->queue)
        clReleaseCommandQueue(state->queue);
    if (state->context)
        clReleaseContext(state->context);
    free(state);
    ctx->backend_state = NULL;
}

pv_status pv_cl_on_release(pv_context *ctx, pv_cl_release_fn fn, void *arg)
{
    pv_cl_state *state = state_of(ctx);
    for (size_t i = 0; i < state->hook_count; i++)
        if (state->hooks[i].fn == fn && state->hooks[i].arg == arg)
            return PV_OK;
    release_hook *grown = realloc(state->hooks, (state->hook_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "release hooks: out of memory");
    state->hooks = grown;
    state->hooks[state->hook_count].fn = fn;
    state->hooks[state->hook_count++].arg = arg;
    return PV_OK;
}

/* ------------------------------------------------------- parameter store */

int pv_cl_param_override(pv_context *ctx, const char *family, const char *name, int *value)
{
    pv_cl_state *state = state_of(ctx);
    for (size_t i = 0; state && i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            *value = state->overrides[i].value;
            return 1;
        }
    return 0;
}

pv_status pv_cl_param_store_override(pv_context *ctx, const char *family, const char *name,
                                     int value)
{
    pv_cl_state *state = state_of(ctx);
    if (strlen(family) >= sizeof state->overrides[0].family ||
        strlen(name) >= sizeof state->overrides[0].name)
        return pv_fail(ctx, PV_ERR_INVALID, "launch parameter name too long: %s.%s", family, name);
    for (size_t i = 0; i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            state->overrides[i].value = value;
            return PV_OK;
        }
    param_override *grown =
        realloc(state->overrides, (state->override_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "launch parameter store: out of memory");
    state->overrides = grown;
    param_override *entry = &state->overrides[state->override_count++];
    snprintf(entry->family, sizeof entry->family, "%s", family);
    snprintf(entry->name, sizeof entry->name, "%s", name);
    entry->value = value;
    return PV_OK;
}

void pv_cl_param_misspelled(pv_context *ctx, const char *family, const char *name)
{
    pv_cl_state *state = state_of(ctx);
    if (state && !state->misspelled[0])
        snprintf(state->misspelled, sizeof state->misspelled, "%s.%s", family, name);
}

pv_status pv_cl_param_check(pv_context *ctx, int forget)
{
    pv_cl_state *state = state_of(ctx);
    if (!state || !state->misspelled[0])
        return PV_OK;
    pv_status status = pv_fail(ctx, PV_ERR_INVALID, "no launch parameter %s (a misspelled name)",
                               state->misspelled);
    if (forget)
        state->misspelled[0] = '\0';
    return status;
}

/* ------------------------------------------------------ binary disk cache */

static uint64_t fnv1a_string(uint64_t hash, const char *text)
{
    return pv_cl_fnv1a(hash, text, strlen(text) + 1);
}

/* The cache key covers everything that changes the binary. */
static uint64_t cache_key(const pv_context *ctx, const pv_cl_state *state, const char *name,
                          const char *source, const char *options)
{
    uint64_t hash = PV_CL_FNV_START;
    hash = fnv1a_string(hash, ctx->device.name);
    hash = fnv1a_string(hash, ctx->device.vendor);
    hash = fnv1a_string(hash, ctx->device.driver_version);
    hash = fnv1a_string(hash, state->platform_version);
    hash = fnv1a_string(hash, PV_VERSION_STRING);
    hash = fnv1a_string(hash, name);
    hash = fnv1a_string(hash, source);
    return fnv1a_string(hash, options);
}

static int cache_disabled(void)
{
    const char *off = getenv("PARVIS_NO_BINARY_CACHE");
    return off && strcmp(off, "1") == 0;
}

/* $XDG_CACHE_HOME/parvis, else $HOME/.cache/parvis; created on demand. */
static int cache_path(uint64_t key, char *path, size_t size)
{
    char dir[3072];
    if (!pv_cache_root(dir, sizeof dir))
        return 0;
    mkdir(dir, 0755);
    size_t len = strlen(dir);
    snprintf(dir + len, sizeof dir - len, "/parvis");
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return 0;
    int n = snprintf(path, size, "%s/%016llx.clbin", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < size;
}

/* Returns a malloc'ed binary, or NULL when absent, foreign or corrupt. */
static unsigned char *cache_load(uint64_t key, size_t *size)
{
    char path[4096];
    if (cache_disabled() || !cache_path(key, path, sizeof path))
        return NULL;
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    unsigned char *binary = pv_cl_cache_read_entry(file, key, size);
    fclose(file);
    return binary;
}

/* A new file of its own for one writer: threads of one process (contexts
 * of a device group) may store the same program at the same moment. */
static FILE *open_unique(const char *path, char *temporary, size_t size)
{
    snprintf(temporary, size, "%s.XXXXXX", path);
    int fd = mkstemp(temporary);
    if (fd < 0)
        return NULL;
    fchmod(fd, 0644); /* mkstemp's 0600 would hide the cache from a shared account's readers */
    FILE *file = fdopen(fd, "wb");
    if (!file) {
        close(fd);
        remove(temporary);
    }
    return file;
}

/* Written to a temporary name and renamed, so readers never see a half file. */
static void cache_store(uint64_t key, const unsigned char *binary, size_t size)
{
    char path[4096], temporary[4200];
    if (cache_disabled() || !cache_path(key, path, sizeof path))
        return;
    FILE *file = open_unique(path, temporary, sizeof temporary);
    if (!file) {
        pv_log(NULL, "binary cache: cannot write in the directory of %s (%s); running uncached",
               path, strerror(errno));
        return;
    }
    pv_cl_cache_header header;
    memcpy(header.magic, PV_CL_CACHE_MAGIC, 8);
    header.key = key;
    header.size = size;
    header.checksum = pv_cl_fnv1a(PV_CL_FNV_START, binary, size);
    int ok = fwrite(&header, sizeof header, 1, file) == 1 && fwrite(binary, 1, size, file) == size;
    ok = (fclose(file) == 0) && ok;
    if (!ok || rename(temporary, path) != 0) {
        pv_log(NULL, "binary cache: cannot store %s; running uncached", path);
        remove(temporary);
    }
}

/* Drop a cache entry that loaded but does not work (a binary of another
 * program behind a valid header, a driver that rejects it): the next run
 * must not meet it again. */
static void cache_remove(uint64_t key)
{
    char path[4096];
    if (cache_path(key, path, sizeof path) && unlink(path) == 0)
        pv_log(NULL, "binary cache: removed the unusable entry %s", path);
}

static unsigned char *program_binary(cl_program program, size_t *size)
{
    size_t binary_size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, NULL) !=
            CL_SUCCESS ||
        binary_size == 0)
        return NULL;
    unsigned char *binary = malloc(binary_size);
    if (binary && clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) !=
                      CL_SUCCESS) {
        free(binary);
        return NULL;
    }
    *size = binary_size;
    return binary;
}

/* ------------------------------------------------------------- programs */

static const char *embedded_source(const char *name)
{
    for (size_t i = 0; i < pv_cl_source_count; i++)
        if (strcmp(pv_cl_sources[i].name, name) == 0)
            return pv_cl_sources[i].text;
    return NULL;
}

static char *build_log(pv_cl_state *state, cl_program program)
{
    size_t size = 0;
    clGetProgramBuildInfo(program, state->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(size + 1, 1);
    if (log && size > 0)
        clGetProgramBuildInfo(program, state->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    return log;
}

/* clBuildProgram for one device, through the fault injection. */
static cl_int build_program(pv_context *ctx, cl_program program, const char *options)
{
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_BUILD);
    if (err != CL_SUCCESS)
        return err;
    cl_device_id device = state_of(ctx)->device;
    return clBuildProgram(program, 1, &device, options, NULL, NULL);
}

static cl_program try_cached_binary(pv_context *ctx, uint64_t key, const char *options)
{
    pv_cl_state *state = state_of(ctx);
    size_t size = 0;
    unsigned char *binary = cache_load(key, &size);
    if (!binary)
        return NULL;
    cl_int err, binary_status;
    const unsigned char *binaries[1] = {binary};
    cl_program program = clCreateProgramWithBinary(state->context, 1, &state->device, &size,
                                                   binaries, &binary_status, &err);
    free(binary);
    if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        cache_remove(key);
        return NULL;
    }
    if (build_program(ctx, program, options) != CL_SUCCESS) {
        clReleaseProgram(program);
        cache_remove(key);
        return NULL;
    }
    return program;
}

static pv_status build_from_source(pv_context *ctx, const char *name, const char *source,
                                   const char *options, cl_program *out)
{
    pv_cl_state *state = state_of(ctx);
    cl_int err;
    cl_program program = clCreateProgramWithSource(state->context, 1, &source, NULL, &err);
    pv_status status = pv_cl_check(ctx, err, "clCreateProgramWithSource");
    if (status != PV_OK)
        return status;
    err = build_program(ctx, program, options);
    if (err != CL_SUCCESS) {
        char *log = build_log(state, program);
        pv_context_set_build_log(ctx, log);
        status = pv_fail(ctx, PV_ERR_BUILD,
                         "clBuildProgram of kernels/%s.cl failed: %s (%d)%s; log: %.600s", name,
                         pv_cl_error_name(err), (int)err, injected_note(ctx), log ? log : "");
        free(log);
        clReleaseProgram(program);
        return status;
    }
    *out = program;
    return PV_OK;
}

/* The program from the binary cache when it has a working entry (and
 * use_cache), else built from source and stored.  *key: its cache key;
 * *from_cache: whether the binary came from the cache. */
static pv_status obtain_program(pv_context *ctx, const char *name, const char *options,
                                int use_cache, cl_program *out, uint64_t *key_out,
                                int *from_cache)
{
    pv_cl_state *state = state_of(ctx);
    const char *source = embedded_source(name);
    if (!source)
        return pv_fail(ctx, PV_ERR_INVALID, "no embedded OpenCL program '%s'", name);
    uint64_t key = cache_key(ctx, state, name, source, options);
    *key_out = key;
    cl_program program = use_cache ? try_cached_binary(ctx, key, options) : NULL;
    *from_cache = program != NULL;
    if (program) {
        *out = program;
        return PV_OK;
    }
    pv_status status = build_from_source(ctx, name, source, options, &program);
    if (status != PV_OK)
        return status;
    size_t size = 0;
    unsigned char *binary = program_binary(program, &size);
    if (binary)
        cache_store(key, binary, size);
    free(binary);
    *out = program;
    return PV_OK;
}

static built_program *find_program(pv_cl_state *state, const char *key)
{
    for (size_t i = 0; i < state->program_count; i++)
        if (strcmp(state->programs[i].key, key) == 0)
            return &state->programs[i];
    return NULL;
}

static pv_status remember_program(pv_context *ctx, const char *key, cl_program program,
                                  built_program **out)
{
    pv_cl_state *state = state_of(ctx);
    built_program *grown = realloc(state->programs, (state->program_count + 1) * sizeof *grown);
    char *key_copy = strdup(key);
    if (!grown || !key_copy) {
        if (grown)
            state->programs = grown;
        free(key_copy);
        clReleaseProgram(program);
        return pv_fail(ctx, PV_ERR_NOMEM, "program cache: out of memory");
    }
    state->programs = grown;
    built_program *entry = &state->programs[state->program_count++];
    memset(entry, 0, sizeof *entry);
    entry->key = key_copy;
    entry->program = program;
    *out = entry;
    return PV_OK;
}

static pv_status program_entry(pv_context *ctx, const char *name, const char *options,
                               built_program **out)
{
    char key[4096];
    snprintf(key, sizeof key, "%s|%s", name, options);
    built_program *entry = find_program(state_of(ctx), key);
    if (entry) {
        *out = entry;
        return PV_OK;
    }
    cl_program program = NULL;
    uint64_t cache_key = 0;
    int from_cache = 0;
    pv_status status = obtain_program(ctx, name, options, 1, &program, &cache_key, &from_cache);
    if (status != PV_OK)
        return status;
    status = remember_program(ctx, key, program, out);
    if (status == PV_OK) {
        (*out)->cache_key = cache_key;
        (*out)->from_cache = from_cache;
    }
    return status;
}

/* A cached binary that built but lacks a kernel (or whose kernel cannot be
 * made) is not trusted: its cache entry goes, the program is built from
 * source (and stored again) and replaces the entry's.  Kernels already made
 * from the old program stay valid (they hold their own reference). */
static pv_status rebuild_from_source(pv_context *ctx, built_program *entry, const char *name,
                                     const char *options)
{
    pv_log(ctx, "binary cache: the cached kernels/%s.cl does not work, rebuilding from source",
           name);
    cache_remove(entry->cache_key);
    cl_program program = NULL;
    uint64_t cache_key = 0;
    int from_cache = 0;
    pv_status status = obtain_program(ctx, name, options, 0, &program, &cache_key, &from_cache);
    if (status != PV_OK)
        return status;
    clReleaseProgram(entry->program);
    entry->program = program;
    entry->from_cache = 0;
    return PV_OK;
}

static pv_status add_kernel(pv_context *ctx, built_program *entry, const char *kernel_name,
                            cl_kernel *out)
{
    cl_int err;
    cl_kernel kernel = clCreateKernel(entry->program, kernel_name, &err);
    if (err != CL_SUCCESS)
        return pv_fail(ctx, PV_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", kernel_name,
                       pv_cl_error_name(err), (int)err);
    size_t n = entry->kernel_count + 1;
    cl_kernel *kernels = realloc(entry->kernels, n * sizeof *kernels);
    if (kernels)
        entry->kernels = kernels;
    char **names = realloc(entry->kernel_names, n * sizeof *names);
    if (names)
        entry->kernel_names = names;
    char *name_copy = strdup(kernel_name);
    if (!kernels || !names || !name_copy) {
        free(name_copy);
        clReleaseKernel(kernel);
        return pv_fail(ctx, PV_ERR_NOMEM, "kernel cache: out of memory");
    }
    entry->kernels[entry->kernel_count] = kernel;
    entry->kernel_names[entry->kernel_count++] = name_copy;
    *out = kernel;
    return PV_OK;
}

pv_status pv_cl_kernel(pv_context *ctx, const char *program, const char *options,
                       const char *kernel_name, cl_kernel *kernel)
{
    built_program *entry;
    pv_status status = pv_cl_param_check(ctx, 0);
    if (status == PV_OK)
        status = program_entry(ctx, program, options ? options : "", &entry);
    if (status != PV_OK)
        return status;
    for (size_t i = 0; i < entry->kernel_count; i++)
        if (strcmp(entry->kernel_names[i], kernel_name) == 0) {
            *kernel = entry->kernels[i];
            return PV_OK;
        }
    status = add_kernel(ctx, entry, kernel_name, kernel);
    if (status != PV_OK && entry->from_cache) {
        status = rebuild_from_source(ctx, entry, program, options ? options : "");
        if (status == PV_OK)
            status = add_kernel(ctx, entry, kernel_name, kernel);
    }
    return status;
}

/* -------------------------------------------------------------- buffers */

pv_status pv_cl_buffer(pv_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *buffer)
{
    pv_cl_state *state = state_of(ctx);
    if (bytes == 0)
        bytes = 1;
    if (ctx->device.max_alloc && bytes > ctx->device.max_alloc)
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                       "a %zu-byte buffer exceeds %s's CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu bytes)",
                       bytes, ctx->device.name, (unsigned long long)ctx->device.max_alloc);
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ALLOC);
    *buffer = err == CL_SUCCESS ? clCreateBuffer(state->context, flags, bytes, NULL, &err) : NULL;
    return pv_cl_check(ctx, err, "clCreateBuffer");
}

void pv_cl_release(cl_mem *buffer)
{
    if (buffer && *buffer) {
        clReleaseMemObject(*buffer);
        *buffer = NULL;
    }
}

static scratch_slot *find_slot(pv_cl_state *state, const char *slot)
{
    for (size_t i = 0; i < state->scratch_count; i++)
        if (strcmp(state->scratch[i].slot, slot) == 0)
            return &state->scratch[i];
    return NULL;
}

static pv_status new_slot(pv_context *ctx, const char *slot, scratch_slot **out)
{
    pv_cl_state *state = state_of(ctx);
    scratch_slot *grown = realloc(state->scratch, (state->scratch_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "scratch buffers: out of memory");
    state->scratch = grown;
    *out = &state->scratch[state->scratch_count++];
    (*out)->slot = slot;
    (*out)->buffer = NULL;
    (*out)->bytes = 0;
    return PV_OK;
}

pv_status pv_cl_scratch(pv_context *ctx, const char *slot, size_t bytes, cl_mem *buffer)
{
    scratch_slot *entry = find_slot(state_of(ctx), slot);
    pv_status status = entry ? PV_OK : new_slot(ctx, slot, &entry);
    if (status != PV_OK)
        return status;
    if (entry->bytes < bytes || !entry->buffer) {
        pv_cl_release(&entry->buffer);
        entry->bytes = 0;
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &entry->buffer);
        if (status != PV_OK)
            return status;
        entry->bytes = bytes;
    }
    *buffer = entry->buffer;
    return PV_OK;
}

/* --------------------------------------------------------------- events */

static pv_status track_event(pv_context *ctx, cl_event event, event_kind kind)
{
    pv_cl_state *state = state_of(ctx);
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
    state->events[state->event_count].event = event;
    state->events[state->event_count].kernel = NULL;
    state->events[state->event_count++].kind = kind;
    return PV_OK;
}

/* PARVIS_PROFILE=1: the summaries; 2: also every command of every wait. */
static int profiling(void)
{
    const char *value = getenv("PARVIS_PROFILE");
    return value && (value[0] == '1' || value[0] == '2') && value[1] == '\0' ? value[0] - '0' : 0;
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

pv_status pv_cl_finish(pv_context *ctx)
{
    pv_cl_state *state = state_of(ctx);
    pv_status status = pv_cl_check(ctx, clFinish(state->queue), "clFinish");
    const int profile = profiling();
    if (profile)
        profile_timeline_add(ctx, state, profile == 2);
    for (size_t i = 0; i < state->event_count; i++) {
        double ms = pv_cl_event_ms(state->events[i].event);
        if (profile && state->events[i].kind == EVENT_KERNEL)
            profile_add(state, state->events[i].kernel, ms);
        switch (state->events[i].kind) {
        case EVENT_KERNEL: ctx->timing.kernel_ms += ms; break;
        case EVENT_UPLOAD: ctx->timing.upload_ms += ms; break;
        case EVENT_DOWNLOAD: ctx->timing.download_ms += ms; break;
        }
        clReleaseEvent(state->events[i].event);
    }
    state->event_count = 0;
    pv_status checked = pv_cl_param_check(ctx, 1);
    return status != PV_OK ? status : checked;
}

/* ------------------------------------------------------------ transfers */

#define PINNED_CHUNK ((size_t)4 << 20)

/* Transfers from this size up go through the pinned stages
 * (PARVIS_PINNED_MIN=<bytes> overrides; 0 turns staging off). */
static size_t pinned_threshold(void)
{
    const char *value = getenv("PARVIS_PINNED_MIN");
    if (value && *value) {
        char *end = NULL;
        unsigned long long bytes = strtoull(value, &end, 10);
        if (*end == '\0')
            return bytes == 0 ? SIZE_MAX : (size_t)bytes;
    }
    return (size_t)4 << 20;
}

static pv_status ensure_stage(pv_context *ctx, pinned_stage *stage)
{
    if (stage->host)
        return PV_OK;
    cl_int err = CL_SUCCESS;
    if (!stage->buffer) { /* kept when only the map failed before */
        err = pv_cl_fault(ctx, PV_CL_FAULT_ALLOC);
        if (err == CL_SUCCESS)
            stage->buffer = clCreateBuffer(pv_cl_context(ctx),
                                           CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                                           PINNED_CHUNK, NULL, &err);
    }
    pv_status status = pv_cl_check(ctx, err, "clCreateBuffer(pinned stage)");
    if (status != PV_OK)
        return status;
    err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        stage->host = clEnqueueMapBuffer(pv_cl_queue(ctx), stage->buffer, CL_TRUE,
                                     CL_MAP_READ | CL_MAP_WRITE, 0, PINNED_CHUNK, 0, NULL, NULL,
                                     &err);
    return pv_cl_check(ctx, err, "clEnqueueMapBuffer(pinned stage)");
}

/* Wait until the stage's previous transfer is done. */
static pv_status stage_idle(pv_context *ctx, pinned_stage *stage)
{
    if (!stage->busy)
        return PV_OK;
    cl_int err = clWaitForEvents(1, &stage->busy);
    clReleaseEvent(stage->busy);
    stage->busy = NULL;
    return pv_cl_check(ctx, err, "clWaitForEvents(pinned stage)");
}

/* Copies use a few threads, never the whole OpenMP team: a copy is
 * bandwidth-bound well before 8 threads, and a full team competing with the
 * driver's own threads for the cores can leave one thread waiting a
 * scheduler tick (about 4 ms) at the join.  Below 1 MiB a copy stays on the
 * calling thread: it takes tens of microseconds there, while waking even a
 * few threads was seen to cost up to 0.3 ms.  Pieces of 256 KiB. */
#define COPY_PIECE ((size_t)256 << 10)
#define PARALLEL_COPY_MIN ((size_t)1 << 20)
#define COPY_THREADS_MAX 8

int pv_cl_copy_threads(size_t bytes)
{
    if (bytes < PARALLEL_COPY_MIN)
        return 1;
    size_t pieces = (bytes + COPY_PIECE - 1) / COPY_PIECE;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads() / 2;
#endif
    threads = threads < COPY_THREADS_MAX ? threads : COPY_THREADS_MAX;
    threads = (size_t)threads < pieces ? threads : (int)pieces;
    return threads > 1 ? threads : 1;
}

void pv_cl_copy_parallel(void *dst, const void *src, size_t bytes)
{
    const long pieces = (long)((bytes + COPY_PIECE - 1) / COPY_PIECE);
    const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long i = 0; i < pieces; i++) {
        size_t start = (size_t)i * COPY_PIECE;
        size_t n = bytes - start < COPY_PIECE ? bytes - start : COPY_PIECE;
        memcpy((char *)dst + start, (const char *)src + start, n);
    }
}

/* Record the transfer's event for timing and as the stage's busy mark. */
static pv_status stage_submitted(pv_context *ctx, pinned_stage *stage, cl_event event,
                                 event_kind kind)
{
    clRetainEvent(event);
    stage->busy = event;
    return track_event(ctx, event, kind);
}

/* The next stage of the ring, once its previous transfer is done:
 * consecutive small uploads take different stages, so none waits. */
static pv_status next_write_stage(pv_context *ctx, pinned_stage **stage)
{
    pv_cl_state *state = state_of(ctx);
    *stage = &state->stages[state->next_stage++ % PINNED_STAGES];
    pv_status status = ensure_stage(ctx, *stage);
    return status == PV_OK ? stage_idle(ctx, *stage) : status;
}

static pv_status submit_write(pv_context *ctx, pinned_stage *stage, cl_mem buffer, size_t offset,
                              size_t bytes)
{
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, bytes,
                                      stage->host, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueWriteBuffer(pinned)");
    return status == PV_OK ? stage_submitted(ctx, stage, event, EVENT_UPLOAD) : status;
}

static pv_status pinned_write(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                              const void *host)
{
    pv_status status = PV_OK;
    for (size_t done = 0; done < bytes && status == PV_OK; done += PINNED_CHUNK) {
        size_t n = bytes - done < PINNED_CHUNK ? bytes - done : PINNED_CHUNK;
        pinned_stage *stage;
        status = next_write_stage(ctx, &stage);
        if (status != PV_OK)
            break;
        pv_cl_copy_parallel(stage->host, (const char *)host + done, n);
        status = submit_write(ctx, stage, buffer, offset + done, n);
    }
    return status;
}

static pv_status copy_rect(pv_context *ctx, cl_mem buffer, int to_device, size_t row_bytes,
                           size_t rows, size_t slices, size_t host_row_pitch,
                           size_t host_slice_pitch, void *host);

pv_status pv_cl_write_rows_staged(pv_context *ctx, cl_mem buffer, size_t rows, size_t row_bytes,
                                  size_t host_pitch, const void *host)
{
    if (host_pitch == row_bytes)
        return pinned_write(ctx, buffer, 0, rows * row_bytes, host);
    if (row_bytes > PINNED_CHUNK)
        return copy_rect(ctx, buffer, 1, row_bytes, rows, 1, host_pitch, 0, (void *)host);
    const size_t rows_per_chunk = PINNED_CHUNK / row_bytes;
    pv_status status = PV_OK;
    for (size_t first = 0; first < rows && status == PV_OK; first += rows_per_chunk) {
        size_t n = rows - first < rows_per_chunk ? rows - first : rows_per_chunk;
        pinned_stage *stage;
        status = next_write_stage(ctx, &stage);
        if (status != PV_OK)
            break;
        for (size_t r = 0; r < n; r++)
            memcpy((char *)stage->host + r * row_bytes,
                   (const char *)host + (first + r) * host_pitch, row_bytes);
        status = submit_write(ctx, stage, buffer, first * row_bytes, n * row_bytes);
    }
    return status;
}

static pv_status enqueue_pinned_read(pv_context *ctx, pinned_stage *stage, cl_mem buffer,
                                     size_t offset, size_t n)
{
    pv_status status = ensure_stage(ctx, stage);
    if (status == PV_OK)
        status = stage_idle(ctx, stage);
    if (status != PV_OK)
        return status;
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, n, stage->host,
                                     0, NULL, &event);
    status = pv_cl_check(ctx, err, "clEnqueueReadBuffer(pinned)");
    return status == PV_OK ? stage_submitted(ctx, stage, event, EVENT_DOWNLOAD) : status;
}

static size_t chunk_bytes(size_t bytes, size_t chunk)
{
    size_t start = chunk * PINNED_CHUNK;
    return bytes - start < PINNED_CHUNK ? bytes - start : PINNED_CHUNK;
}

/* Chunks i+1 .. i+3 are on their way while chunk i is handed to the sink. */
pv_status pv_cl_read_chunked(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                             pv_cl_chunk_sink sink, void *user)
{
    pv_cl_state *state = state_of(ctx);
    size_t chunks = (bytes + PINNED_CHUNK - 1) / PINNED_CHUNK;
    pv_status status = PV_OK;
    for (size_t i = 0; i < chunks && i < PINNED_STAGES && status == PV_OK; i++)
        status = enqueue_pinned_read(ctx, &state->stages[i], buffer, offset + i * PINNED_CHUNK,
                                     chunk_bytes(bytes, i));
    for (size_t i = 0; i < chunks && status == PV_OK; i++) {
        pinned_stage *stage = &state->stages[i % PINNED_STAGES];
        status = stage_idle(ctx, stage);
        if (status != PV_OK)
            break;
        sink(user, i * PINNED_CHUNK, stage->host, chunk_bytes(bytes, i));
        size_t next = i + PINNED_STAGES;
        if (next < chunks)
            status = enqueue_pinned_read(ctx, stage, buffer, offset + next * PINNED_CHUNK,
                                         chunk_bytes(bytes, next));
    }
    return status;
}

static void copy_sink(void *user, size_t offset, const void *chunk, size_t bytes)
{
    pv_cl_copy_parallel((char *)user + offset, chunk, bytes);
}

static pv_status pinned_read(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                             void *host)
{
    return pv_cl_read_chunked(ctx, buffer, offset, bytes, copy_sink, host);
}

pv_status pv_cl_write(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                      const void *host)
{
    if (bytes >= pinned_threshold())
        return pinned_write(ctx, buffer, offset, bytes, host);
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(pv_cl_queue(ctx), buffer, CL_TRUE, offset, bytes, host, 0,
                                      NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueWriteBuffer");
    return status == PV_OK ? track_event(ctx, event, EVENT_UPLOAD) : status;
}

pv_status pv_cl_read(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes, void *host)
{
    if (bytes >= pinned_threshold())
        return pinned_read(ctx, buffer, offset, bytes, host);
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pv_cl_queue(ctx), buffer, CL_TRUE, offset, bytes, host, 0,
                                     NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueReadBuffer");
    return status == PV_OK ? track_event(ctx, event, EVENT_DOWNLOAD) : status;
}

pv_status pv_cl_read_staged(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            void *host)
{
    if (pinned_threshold() == SIZE_MAX)
        return pv_cl_read(ctx, buffer, offset, bytes, host);
    return pinned_read(ctx, buffer, offset, bytes, host);
}

pv_status pv_cl_write_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            const void *host)
{
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, bytes, host, 0,
                                      NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueWriteBuffer(async)");
    return status == PV_OK ? track_event(ctx, event, EVENT_UPLOAD) : status;
}

pv_status pv_cl_read_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                           void *host)
{
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, bytes, host, 0,
                                     NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueReadBuffer(async)");
    return status == PV_OK ? track_event(ctx, event, EVENT_DOWNLOAD) : status;
}

/* A strided host block <-> a dense device block, in one rectangular copy. */
static pv_status copy_rect(pv_context *ctx, cl_mem buffer, int to_device, size_t row_bytes,
                           size_t rows, size_t slices, size_t host_row_pitch,
                           size_t host_slice_pitch, void *host)
{
    if (host_row_pitch == row_bytes && (slices == 1 || host_slice_pitch == row_bytes * rows))
        return to_device ? pv_cl_write(ctx, buffer, 0, row_bytes * rows * slices, host)
                         : pv_cl_read(ctx, buffer, 0, row_bytes * rows * slices, host);
    size_t origin[3] = {0, 0, 0};
    size_t region[3] = {row_bytes, rows, slices};
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && to_device)
        err = clEnqueueWriteBufferRect(pv_cl_queue(ctx), buffer, CL_TRUE, origin, origin, region,
                                       row_bytes, row_bytes * rows, host_row_pitch,
                                       host_slice_pitch, host, 0, NULL, &event);
    else if (err == CL_SUCCESS)
        err = clEnqueueReadBufferRect(pv_cl_queue(ctx), buffer, CL_TRUE, origin, origin, region,
                                      row_bytes, row_bytes * rows, host_row_pitch,
                                      host_slice_pitch, host, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, to_device ? "clEnqueueWriteBufferRect"
                                                       : "clEnqueueReadBufferRect");
    return status == PV_OK ? track_event(ctx, event, to_device ? EVENT_UPLOAD : EVENT_DOWNLOAD)
                           : status;
}

static pv_status image_rect(pv_context *ctx, cl_mem buffer, int to_device, const pv_image *image)
{
    size_t pixel = pv_pixel_size(image->type);
    size_t row_bytes = (size_t)image->width * pixel;
    size_t pitch = (size_t)image->stride * pixel;
    return copy_rect(ctx, buffer, to_device, row_bytes, (size_t)image->height, 1, pitch,
                     pitch * (size_t)image->height, image->data);
}

pv_status pv_cl_write_image(pv_context *ctx, cl_mem buffer, const pv_image *image)
{
    return image_rect(ctx, buffer, 1, image);
}

pv_status pv_cl_upload_image(pv_context *ctx, const pv_image *image, cl_mem *buffer)
{
    size_t bytes = (size_t)image->width * (size_t)image->height * pv_pixel_size(image->type);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, buffer);
    if (status != PV_OK)
        return status;
    status = image_rect(ctx, *buffer, 1, image);
    if (status != PV_OK)
        pv_cl_release(buffer);
    return status;
}

pv_status pv_cl_download_image(pv_context *ctx, cl_mem buffer, pv_image *image)
{
    return image_rect(ctx, buffer, 0, image);
}

static pv_status volume_rect(pv_context *ctx, cl_mem buffer, int to_device, const pv_volume *volume)
{
    size_t row_bytes = (size_t)volume->nx * sizeof(float);
    return copy_rect(ctx, buffer, to_device, row_bytes, (size_t)volume->ny, (size_t)volume->nz,
                     (size_t)volume->stride_y * sizeof(float),
                     (size_t)volume->stride_z * sizeof(float), volume->data);
}

pv_status pv_cl_write_volume(pv_context *ctx, cl_mem buffer, const pv_volume *volume)
{
    return volume_rect(ctx, buffer, 1, volume);
}

pv_status pv_cl_upload_volume(pv_context *ctx, const pv_volume *volume, cl_mem *buffer)
{
    size_t bytes = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz * sizeof(float);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, buffer);
    if (status != PV_OK)
        return status;
    status = volume_rect(ctx, *buffer, 1, volume);
    if (status != PV_OK)
        pv_cl_release(buffer);
    return status;
}

pv_status pv_cl_download_volume(pv_context *ctx, cl_mem buffer, pv_volume *volume)
{
    return volume_rect(ctx, buffer, 0, volume);
}

static void copy_volume(const pv_volume *from, pv_volume *to)
{
    size_t row = (size_t)from->nx * sizeof(float);
    for (int z = 0; z < from->nz; z++)
        for (int y = 0; y < from->ny; y++)
            memcpy(to->data + (ptrdiff_t)y * to->stride_y + (ptrdiff_t)z * to->stride_z,
                   from->data + (ptrdiff_t)y * from->stride_y + (ptrdiff_t)z * from->stride_z,
                   row);
}

/* The last volume needs no temporary: when its download fails nothing of
 * the caller's has been written yet (a driver that fails a read half done
 * may leave that one volume partly written; an enqueue that fails, the
 * usual case, writes nothing). */
pv_status pv_cl_download_volumes(pv_context *ctx, const cl_mem *buffers, pv_volume *const *volumes,
                                 int count)
{
    pv_volume staged[8];
    if (count < 1 || count > 8)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_cl_download_volumes: %d volumes", count);
    pv_status status = PV_OK;
    int made = 0;
    for (; made < count - 1 && status == PV_OK; made++) {
        status = pv_volume_alloc(&staged[made], volumes[made]->nx, volumes[made]->ny,
                                 volumes[made]->nz);
        if (status == PV_OK)
            status = pv_cl_download_volume(ctx, buffers[made], &staged[made]);
        else
            status = pv_fail(ctx, status, "no host memory to stage a download");
    }
    if (status == PV_OK)
        status = pv_cl_download_volume(ctx, buffers[count - 1], volumes[count - 1]);
    for (int i = 0; i < made; i++) {
        if (status == PV_OK)
            copy_volume(&staged[i], volumes[i]);
        pv_volume_free(&staged[i]);
    }
    return status;
}

/* -------------------------------------------------------------- launches */

pv_status pv_cl_arg(pv_context *ctx, cl_kernel kernel, cl_uint index, size_t size,
                    const void *value)
{
    cl_int err = clSetKernelArg(kernel, index, size, value);
    if (err == CL_SUCCESS)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_OPENCL, "clSetKernelArg(%u) failed: %s (%d)", (unsigned)index,
                   pv_cl_error_name(err), (int)err);
}

pv_status pv_cl_launch(pv_context *ctx, cl_kernel kernel, cl_uint dims, const size_t *global,
                       const size_t *local)
{
    size_t rounded[3];
    for (cl_uint i = 0; i < dims && i < 3; i++)
        rounded[i] = local ? (global[i] + local[i] - 1) / local[i] * local[i] : global[i];
    pv_status checked = pv_cl_param_check(ctx, 0);
    if (checked != PV_OK)
        return checked;
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(pv_cl_queue(ctx), kernel, dims, NULL, rounded, local, 0,
                                        NULL, &event);
    if (err != CL_SUCCESS) {
        char name[128] = "";
        clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        name[sizeof name - 1] = '\0';
        return pv_fail(ctx, PV_ERR_OPENCL, "clEnqueueNDRangeKernel(%s) failed: %s (%d)%s", name,
                       pv_cl_error_name(err), (int)err, injected_note(ctx));
    }
    pv_status status = track_event(ctx, event, EVENT_KERNEL);
    if (status == PV_OK)
        state_of(ctx)->events[state_of(ctx)->event_count - 1].kernel = kernel;
    return status;
}
