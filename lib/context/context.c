/* Contexts: backend and device selection (options, then the
 * configuration read from the environment at creation),
 * the selection note, and the queries a caller needs. */
#include "../core/internal.h"
#include "../async/async_internal.h"
#ifdef PV_HAVE_OPENCL
#include "parvis/interop.h"
#endif
#include "../tune/tune_lookup.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PV_MAX_DEVICES 64

const char *pv_backend_name(pv_backend_kind kind)
{
    switch (kind) {
    case PV_BACKEND_AUTO: return "auto";
    case PV_BACKEND_CPU: return "cpu";
    case PV_BACKEND_OPENCL: return "opencl";
    }
    return "unknown";
}

const char *pv_device_type_name(pv_device_type type)
{
    switch (type) {
    case PV_DEVICE_GPU: return "GPU";
    case PV_DEVICE_CPU: return "CPU";
    case PV_DEVICE_ACCELERATOR: return "accelerator";
    case PV_DEVICE_OTHER: return "other";
    }
    return "unknown";
}

void pv_context_options_default(pv_context_options *options)
{
    if (!options)
        return;
    options->backend = PV_BACKEND_AUTO;
    options->device_index = -1;
    options->flags = 0;
    options->cpu_threads = 0;
}

pv_status pv_device_list(pv_device_info *devices, int capacity, int *count)
{
    if (!count || capacity < 0 || (capacity > 0 && !devices))
        return pv_fail(NULL, PV_ERR_INVALID, "pv_device_list: count is NULL or devices/capacity bad");
#ifdef PV_HAVE_OPENCL
    return pv_opencl_backend.device->list(devices, capacity, count);
#else
    *count = 0;
    return PV_OK;
#endif
}

static pv_status parse_backend_env(pv_backend_kind *kind)
{
    char value[PV_CONFIG_VALUE_MAX + 1];
    if (!pv_config_get(PV_CONFIG_BACKEND, value, sizeof value))
        return PV_OK;
    if (strcmp(value, "auto") == 0)
        *kind = PV_BACKEND_AUTO;
    else if (strcmp(value, "cpu") == 0)
        *kind = PV_BACKEND_CPU;
    else if (strcmp(value, "opencl") == 0)
        *kind = PV_BACKEND_OPENCL;
    else
        return pv_fail(NULL, PV_ERR_INVALID,
                       "PARVIS_BACKEND='%s': expected auto, cpu or opencl", value);
    return PV_OK;
}

/* PARVIS_KERNEL_TIMING=runs|each: the context's initial kernel timing. */
static pv_status parse_kernel_timing_env(pv_kernel_timing *timing)
{
    char value[PV_CONFIG_VALUE_MAX + 1];
    *timing = PV_KERNEL_TIMING_RUNS;
    if (!pv_config_get(PV_CONFIG_KERNEL_TIMING, value, sizeof value) ||
        strcmp(value, "runs") == 0)
        return PV_OK;
    if (strcmp(value, "each") == 0) {
        *timing = PV_KERNEL_TIMING_EACH;
        return PV_OK;
    }
    return pv_fail(NULL, PV_ERR_INVALID, "PARVIS_KERNEL_TIMING='%s': expected runs or each",
                   value);
}

static int contains_ignoring_case(const char *text, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = text; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* PARVIS_DEVICE is an index into the device list or a name substring. */
static pv_status parse_device_env(int *device_index)
{
    char value[PV_CONFIG_VALUE_MAX + 1];
    if (!pv_config_get(PV_CONFIG_DEVICE, value, sizeof value))
        return PV_OK;
    char *end = NULL;
    long index = strtol(value, &end, 10);
    if (*end == '\0' && index >= 0 && index < PV_MAX_DEVICES) {
        *device_index = (int)index;
        return PV_OK;
    }
    pv_device_info devices[PV_MAX_DEVICES];
    int count = 0;
    pv_status status = pv_device_list(devices, PV_MAX_DEVICES, &count);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < count && i < PV_MAX_DEVICES; i++)
        if (contains_ignoring_case(devices[i].name, value)) {
            *device_index = i;
            return PV_OK;
        }
    return pv_fail(NULL, PV_ERR_NO_DEVICE, "PARVIS_DEVICE='%s' matches no OpenCL device", value);
}

#ifdef PV_HAVE_OPENCL
static int first_gpu_index(void)
{
    pv_device_info devices[PV_MAX_DEVICES];
    int count = 0;
    if (pv_device_list(devices, PV_MAX_DEVICES, &count) != PV_OK)
        return -1;
    for (int i = 0; i < count && i < PV_MAX_DEVICES; i++)
        if (devices[i].type == PV_DEVICE_GPU)
            return i;
    return -1;
}

#endif

/* Physical memory of the host (0 when the system does not say). */
static uint64_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page_size)
        return 0;
    return (uint64_t)pages * (uint64_t)page_size;
}

/* The CPU backend's device: the host, as many compute units as threads;
 * no single-allocation limit (max_alloc 0) and no local memory. */
static void describe_host(pv_context *ctx)
{
    pv_device_info *device = &ctx->device;
    memset(device, 0, sizeof *device);
    device->index = -1;
    snprintf(device->name, sizeof device->name, "CPU (OpenMP, %d threads)", ctx->cpu_threads);
    snprintf(device->driver_version, sizeof device->driver_version, "parvis %s", PV_VERSION_STRING);
    device->type = PV_DEVICE_CPU;
    device->global_memory = host_memory();
    device->compute_units = ctx->cpu_threads;
    device->max_work_group_size = 1;
}

static void use_cpu(pv_context *ctx, const char *why)
{
    ctx->backend = PV_BACKEND_CPU;
    ctx->ops = &pv_cpu_backend;
    ctx->device_index = -1;
    describe_host(ctx);
    snprintf(ctx->selection_note, sizeof ctx->selection_note, "%s", why);
}

#ifdef PV_HAVE_OPENCL
static pv_status use_opencl(pv_context *ctx, int device_index)
{
    pv_status refused = pv_fork_check_new_opencl();
    if (refused != PV_OK)
        return refused;
    pv_fork_note_opencl();
    ctx->backend = PV_BACKEND_OPENCL;
    ctx->ops = &pv_opencl_backend;
    ctx->device_index = device_index;
    pv_status status = pv_opencl_backend.device->init(ctx, device_index);
    if (status != PV_OK) {
        ctx->ops = NULL;
        ctx->backend_state = NULL;
    }
    return status;
}
#endif

#ifdef PV_HAVE_OPENCL
/* On a caller's cl_context: the runtime finds the device from its queue
 * (or context) and the index it has in pv_device_list. */
static pv_status adopt_opencl(pv_context *ctx)
{
    pv_status status = use_opencl(ctx, -1);
    if (status == PV_OK) {
        ctx->device_index = ctx->device.index;
        snprintf(ctx->selection_note, sizeof ctx->selection_note,
                 "the caller's OpenCL context: device %d (%s)", ctx->device_index,
                 ctx->device.name);
    }
    return status;
}
#else
static pv_status adopt_opencl(pv_context *ctx)
{
    return pv_fail(ctx, PV_ERR_UNSUPPORTED, "the OpenCL backend was not built (--disable-opencl)");
}
#endif

static pv_status select_opencl(pv_context *ctx, int device_index)
{
#ifdef PV_HAVE_OPENCL
    int chosen = device_index >= 0 ? device_index : first_gpu_index();
    if (chosen < 0)
        chosen = 0; /* no GPU: any OpenCL device (e.g. PoCL's CPU device) */
    pv_status status = use_opencl(ctx, chosen);
    if (status == PV_OK)
        snprintf(ctx->selection_note, sizeof ctx->selection_note,
                 "opencl requested: device %d (%s)", chosen, ctx->device.name);
    return status;
#else
    (void)device_index;
    return pv_fail(ctx, PV_ERR_UNSUPPORTED, "the OpenCL backend was not built (--disable-opencl)");
#endif
}

/* AUTO: an OpenCL GPU if one is present and starts, else the CPU; the
 * decision is made once here and written into the selection note. */
static pv_status select_auto(pv_context *ctx, int device_index)
{
#ifdef PV_HAVE_OPENCL
    if (device_index >= 0)
        return select_opencl(ctx, device_index);
    int gpu = first_gpu_index();
    if (gpu < 0) {
        use_cpu(ctx, "auto: no OpenCL GPU found, using the CPU backend");
        return PV_OK;
    }
    if (use_opencl(ctx, gpu) == PV_OK) {
        snprintf(ctx->selection_note, sizeof ctx->selection_note,
                 "auto: OpenCL GPU %d (%s)", gpu, ctx->device.name);
        return PV_OK;
    }
    char why[sizeof ctx->selection_note];
    snprintf(why, sizeof why, "auto: OpenCL GPU %d failed to start (%.160s), using the CPU backend",
             gpu, ctx->last_error);
    use_cpu(ctx, why);
    return PV_OK;
#else
    (void)device_index;
    use_cpu(ctx, "auto: built without OpenCL, using the CPU backend");
    return PV_OK;
#endif
}

static int default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Recursive: a call may make nested calls on its own context. */
static int init_lock(pv_context *ctx)
{
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0)
        return -1;
    int rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    if (rc == 0)
        rc = pthread_mutex_init(&ctx->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return rc;
}

static pv_status resolve_options(const pv_context_options *options, pv_context_options *resolved)
{
    pv_context_options_default(resolved);
    if (options)
        *resolved = *options;
    if ((unsigned)resolved->backend > PV_BACKEND_OPENCL)
        return pv_fail(NULL, PV_ERR_INVALID, "options->backend %d is not a pv_backend_kind",
                       (int)resolved->backend);
    if (resolved->cpu_threads < 0 || resolved->device_index < -1)
        return pv_fail(NULL, PV_ERR_INVALID, "options: negative cpu_threads or device_index < -1");
    pv_status status = parse_backend_env(&resolved->backend);
    if (status == PV_OK)
        status = parse_device_env(&resolved->device_index);
    if (pv_config_is(PV_CONFIG_CROSSCHECK, "1"))
        resolved->flags |= PV_CONTEXT_CROSSCHECK;
    return status;
}

/* A context on parvis's own device (adopt_context NULL) or on a caller's
 * cl_context and queue (the OpenCL backend, whatever the options say). */
static pv_status create(pv_context **out, const pv_context_options *options, void *adopt_context,
                        void *adopt_queue)
{
    pv_fork_guard_install();
    pv_context_options resolved;
    pv_kernel_timing kernel_timing;
    /* The environment is read here, once per context (configuration.h). */
    pv_status status = pv_config_refresh();
    if (status == PV_OK)
        status = resolve_options(options, &resolved);
    if (status == PV_OK)
        status = parse_kernel_timing_env(&kernel_timing);
    if (status != PV_OK)
        return status;
    pv_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_context_create: out of memory");
    if (init_lock(ctx) != 0) {
        free(ctx);
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_context_create: cannot create the context's mutex");
    }
    ctx->creator_pid = getpid();
    ctx->cpu_threads = resolved.cpu_threads > 0 ? resolved.cpu_threads : default_threads();
    if (pv_fork_is_child())
        ctx->cpu_threads = 1; /* the parent's OpenMP pool is not in a forked child */
    ctx->crosscheck = (resolved.flags & PV_CONTEXT_CROSSCHECK) != 0;
    ctx->kernel_timing = kernel_timing;
    ctx->adopt_context = adopt_context;
    ctx->adopt_queue = adopt_queue;
    if (adopt_context) {
        status = adopt_opencl(ctx);
    } else if (resolved.backend == PV_BACKEND_CPU) {
        use_cpu(ctx, "cpu requested");
        status = PV_OK;
    } else if (resolved.backend == PV_BACKEND_OPENCL) {
        status = select_opencl(ctx, resolved.device_index);
    } else {
        status = select_auto(ctx, resolved.device_index);
    }
    if (status != PV_OK) {
        free(ctx->build_log);
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return status;
    }
    pv_log(ctx, "%s", ctx->selection_note);
    pv_tune_autoload(ctx); /* tuned launch parameters apply from the first call */
    *out = ctx;
    return PV_OK;
}

pv_status pv_context_create(pv_context **out, const pv_context_options *options)
{
    if (!out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_create: out is NULL");
    *out = NULL;
    return create(out, options, NULL, NULL);
}

#ifdef PV_HAVE_OPENCL
pv_status pv_context_create_cl(pv_context **out, cl_context context, cl_command_queue queue)
{
    if (!out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_create_cl: out is NULL");
    *out = NULL;
    if (!context)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_create_cl: context is NULL");
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    return create(out, &options, context, queue);
}
#endif

void pv_context_destroy(pv_context *ctx)
{
    if (!ctx)
        return;
    pv_runner_stop(ctx);  /* the queued asynchronous calls run first */
    pv_context_lock(ctx); /* a call still running on another thread finishes first */
    /* An inherited context's device state belongs to the parent's runtime,
     * whose threads are not here: only the host memory is freed. */
    if (ctx->ops && ctx->ops->device->release && !pv_context_is_inherited(ctx))
        ctx->ops->device->release(ctx);
    free(ctx->build_log);
    pv_context_unlock(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

pv_backend_kind pv_context_backend(const pv_context *ctx)
{
    return ctx ? ctx->backend : PV_BACKEND_AUTO;
}

const char *pv_context_device_name(const pv_context *ctx)
{
    return ctx ? ctx->device.name : "";
}

const char *pv_context_selection_note(const pv_context *ctx)
{
    return ctx ? ctx->selection_note : "";
}

/* The messages of a shared context change under other threads' calls:
 * the getters hand out the calling thread's own copy, taken under the
 * lock, that stays valid until the thread's next call of the same getter. */
static _Thread_local char thread_context_error[sizeof ((pv_context *)0)->last_error];

const char *pv_context_last_error(const pv_context *ctx)
{
    if (!ctx)
        return pv_last_error();
    pv_context *locked = (pv_context *)ctx;
    pv_context_lock(locked);
    memcpy(thread_context_error, ctx->last_error, sizeof thread_context_error);
    pv_context_unlock(locked);
    return thread_context_error;
}

/* The build log has no size limit: each thread keeps a malloc'ed copy,
 * freed when the thread ends (or replaced on its next call). */
static pthread_key_t build_log_key;
static pthread_once_t build_log_once = PTHREAD_ONCE_INIT;
static int build_log_key_ok;

static void make_build_log_key(void)
{
    build_log_key_ok = pthread_key_create(&build_log_key, free) == 0;
}

const char *pv_context_build_log(const pv_context *ctx)
{
    if (!ctx)
        return "";
    pthread_once(&build_log_once, make_build_log_key);
    if (!build_log_key_ok)
        return "";
    pv_context *locked = (pv_context *)ctx;
    pv_context_lock(locked);
    char *copy = strdup(ctx->build_log ? ctx->build_log : "");
    pv_context_unlock(locked);
    free(pthread_getspecific(build_log_key));
    pthread_setspecific(build_log_key, copy);
    return copy ? copy : "";
}

pv_status pv_context_set_crosscheck(pv_context *ctx, int enabled)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_set_crosscheck: ctx is NULL");
    pv_context_lock(ctx);
    ctx->crosscheck = enabled != 0;
    pv_context_unlock(ctx);
    return PV_OK;
}

int pv_context_crosscheck(const pv_context *ctx)
{
    if (!ctx)
        return 0;
    pv_context *locked = (pv_context *)ctx;
    pv_context_lock(locked);
    int enabled = ctx->crosscheck;
    pv_context_unlock(locked);
    return enabled;
}

pv_status pv_context_set_kernel_timing(pv_context *ctx, pv_kernel_timing timing)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_set_kernel_timing: ctx is NULL");
    if (timing != PV_KERNEL_TIMING_RUNS && timing != PV_KERNEL_TIMING_EACH)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_context_set_kernel_timing: unknown timing %d",
                       (int)timing);
    pv_context_lock(ctx);
    ctx->kernel_timing = timing;
    pv_context_unlock(ctx);
    return PV_OK;
}

pv_kernel_timing pv_context_kernel_timing(const pv_context *ctx)
{
    if (!ctx)
        return PV_KERNEL_TIMING_RUNS;
    pv_context *locked = (pv_context *)ctx;
    pv_context_lock(locked);
    pv_kernel_timing timing = ctx->kernel_timing;
    pv_context_unlock(locked);
    return timing;
}

int pv_context_cpu_threads(const pv_context *ctx)
{
    return ctx ? ctx->cpu_threads : 0;
}

pv_status pv_context_last_timing(const pv_context *ctx, pv_timing *timing)
{
    if (!ctx || !timing)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_context_last_timing: ctx or timing is NULL");
    pv_context *locked = (pv_context *)ctx;
    pv_context_lock(locked);
    *timing = ctx->timing;
    pv_context_unlock(locked);
    return PV_OK;
}

pv_status pv_context_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s)
{
    if (!ctx || !gb_per_s)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_context_copy_bandwidth: ctx or gb_per_s is NULL");
    if (bytes == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_context_copy_bandwidth: bytes is 0");
    if (!ctx->ops->device->copy_bandwidth)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "pv_context_copy_bandwidth: the %s backend cannot measure it",
                       ctx->ops->name);
    pv_context_lock(ctx);
    pv_status status = ctx->ops->device->copy_bandwidth(ctx, bytes, gb_per_s);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_context_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops)
{
    if (!ctx || !gops)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_context_compute_peak: ctx or gops is NULL");
    if (kind != PV_COMPUTE_FLOAT && kind != PV_COMPUTE_INT)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_context_compute_peak: unknown kind %d",
                       (int)kind);
    if (!ctx->ops->device->compute_peak)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "pv_context_compute_peak: the %s backend cannot measure it", ctx->ops->name);
    pv_context_lock(ctx);
    pv_status status = ctx->ops->device->compute_peak(ctx, kind, gops);
    pv_context_unlock(ctx);
    return status;
}
