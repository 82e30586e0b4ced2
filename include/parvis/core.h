/* parvis core: status codes, image and volume types, contexts and devices.
 *
 * Every function returns a pv_status (PV_OK = 0, errors negative).  A failing
 * call leaves its outputs untouched and records a human-readable message:
 * per context (pv_context_last_error) and per thread (pv_last_error) for the
 * calls that take no context.  The library never prints, exits or aborts.
 *
 * Threads.  Every function may be called from any thread.  A context may be
 * shared by several threads: the calls on one context (and on the plans
 * made from it) are serialised by a lock of the context, so they run one
 * after another, never corrupt each other and give the results they give
 * on one thread; for parallel work, give each thread its own context (or
 * use a device group, parvis/multi.h).  Contexts may be made and destroyed
 * from several threads at once (OpenCL platforms and devices are
 * enumerated once per process).  pv_last_error() is per thread and always
 * describes the calling thread's own last failure; pv_context_last_error()
 * and pv_context_build_log() return the calling thread's own copy of the
 * context's message, which on a shared context may come from another
 * thread's call.  A context must not be destroyed while another thread
 * still uses it or its plans.
 *
 * Hostile input and caches: docs/hardening-concurrency.md. */
#ifndef PARVIS_CORE_H
#define PARVIS_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "parvis/export.h"
#include "parvis/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pv_status {
    PV_OK = 0,
    PV_ERR_INVALID = -1,      /* a bad argument: NULL, size, NaN, range ... */
    PV_ERR_NOMEM = -2,        /* host allocation failed or size overflowed */
    PV_ERR_IO = -3,           /* a file could not be opened, read or written */
    PV_ERR_FORMAT = -4,       /* a file is malformed, truncated or unsupported */
    PV_ERR_UNSUPPORTED = -5,  /* the backend or build lacks this feature */
    PV_ERR_OPENCL = -6,       /* an OpenCL call failed (message names it) */
    PV_ERR_BUILD = -7,        /* an OpenCL program failed to build (log kept) */
    PV_ERR_NO_DEVICE = -8,    /* no usable device for the requested backend */
    PV_ERR_MISMATCH = -9,     /* cross-check: backends disagree beyond tolerance */
    PV_ERR_DEVICE_MEMORY = -10 /* a buffer exceeds what the device can hold */
} pv_status;

/* Short constant name of a status ("invalid argument", ...). */
PV_API const char *pv_status_string(pv_status status);

/* Message of the last failure on the calling thread (any call). Never NULL. */
PV_API const char *pv_last_error(void);

/* Library version as a string, and as numbers (any pointer may be NULL). */
PV_API const char *pv_version(void);
PV_API void pv_version_numbers(int *major, int *minor, int *patch);

/* ------------------------------------------------------------------ images */

/* Pixel types.  Grey: U8, U16, F32.  Colour: RGB8 and RGB16, three
 * interleaved samples (R, G, B) a pixel.  16-bit samples are in host byte
 * order.  Every operation takes U8 and F32; SIFT (parvis/features.h) and
 * pv_to_grey (parvis/colour.h) also take U16, RGB8 and RGB16. */
typedef enum pv_pixel_type {
    PV_PIXEL_U8 = 1,
    PV_PIXEL_F32 = 2,
    PV_PIXEL_U16 = 3,
    PV_PIXEL_RGB8 = 4,
    PV_PIXEL_RGB16 = 5
} pv_pixel_type;

/* A 2D image.  Row y starts at pixel y * stride (stride >= width, in
 * pixels of the pixel type, so a colour pixel's three samples count as
 * one).  The caller owns data. */
typedef struct pv_image {
    int width;
    int height;
    ptrdiff_t stride;
    pv_pixel_type type;
    void *data;
} pv_image;

/* A 3D float volume, x fastest, then y, then z.  Element (x, y, z) is at
 * x + y * stride_y + z * stride_z. */
typedef struct pv_volume {
    int nx, ny, nz;
    ptrdiff_t stride_y;
    ptrdiff_t stride_z;
    float *data;
} pv_volume;

/* Allocate a dense image / volume (zeroed).  Free with pv_image_free /
 * pv_volume_free; those only free what these functions allocated. */
PV_API pv_status pv_image_alloc(pv_image *image, int width, int height, pv_pixel_type type);
PV_API void pv_image_free(pv_image *image);
PV_API pv_status pv_volume_alloc(pv_volume *volume, int nx, int ny, int nz);
PV_API void pv_volume_free(pv_volume *volume);

/* Describe caller memory without copying (dense rows). */
PV_API pv_image pv_image_wrap(void *data, int width, int height, pv_pixel_type type);
PV_API pv_volume pv_volume_wrap(float *data, int nx, int ny, int nz);

/* Pixel access helper for tests and examples: the value of a grey pixel,
 * the Rec. 601 luma (0.299 R + 0.587 G + 0.114 B, in float) of a colour
 * one, on the pixel type's own scale (0..255 or 0..65535); NAN when the
 * image is invalid or (x, y) is outside it. */
PV_API float pv_image_get(const pv_image *image, int x, int y);

/* ---------------------------------------------------------------- contexts */

typedef enum pv_backend_kind {
    PV_BACKEND_AUTO = 0,   /* first OpenCL GPU, else the CPU backend */
    PV_BACKEND_CPU = 1,    /* OpenMP + FFTW reference backend */
    PV_BACKEND_OPENCL = 2  /* OpenCL: a GPU if any, else any OpenCL device */
} pv_backend_kind;

PV_API const char *pv_backend_name(pv_backend_kind kind);

/* Context flags. */
#define PV_CONTEXT_CROSSCHECK 0x1u /* run each call on the CPU too and compare */

typedef struct pv_context_options {
    pv_backend_kind backend;
    int device_index;       /* index into pv_device_list(), or -1 for automatic */
    unsigned flags;         /* PV_CONTEXT_* */
    int cpu_threads;        /* OpenMP threads for the CPU backend; 0 = default */
} pv_context_options;

typedef struct pv_context pv_context;

/* Defaults: AUTO, automatic device, no flags, default threads. */
PV_API void pv_context_options_default(pv_context_options *options);

/* Create a context.  options may be NULL (defaults).  The environment
 * overrides the options: PARVIS_BACKEND=auto|cpu|opencl,
 * PARVIS_DEVICE=<index or name substring>, PARVIS_CROSSCHECK=1.
 * On failure *out is NULL and pv_last_error() says why.
 * fork(): a context does not cross it.  In a forked child every call on a
 * context made before the fork fails with PV_ERR_UNSUPPORTED (the parent's
 * threads, OpenMP pool and OpenCL runtime are not in the child), and
 * pv_context_destroy frees only its host memory; a new CPU context in the
 * child works, single-threaded; a new OpenCL context in the child of a
 * process that had made one is refused with PV_ERR_UNSUPPORTED.  Start
 * workers with spawn or forkserver instead. */
PV_API pv_status pv_context_create(pv_context **out, const pv_context_options *options);
PV_API void pv_context_destroy(pv_context *ctx);

/* Where the context runs and why it was chosen. */
PV_API pv_backend_kind pv_context_backend(const pv_context *ctx);
PV_API const char *pv_context_device_name(const pv_context *ctx);
/* One line saying how the backend was selected (e.g. why AUTO took the CPU). */
PV_API const char *pv_context_selection_note(const pv_context *ctx);
/* Message of the last failed call on this context ("" if none), copied for
 * the calling thread (valid until its next call of this function). */
PV_API const char *pv_context_last_error(const pv_context *ctx);
/* OpenCL program build log of the last build failure ("" if none), copied
 * for the calling thread (valid until its next call of this function). */
PV_API const char *pv_context_build_log(const pv_context *ctx);

PV_API pv_status pv_context_set_crosscheck(pv_context *ctx, int enabled);
PV_API int pv_context_crosscheck(const pv_context *ctx);
/* OpenMP threads the CPU backend uses in this context. */
PV_API int pv_context_cpu_threads(const pv_context *ctx);

/* Timing of the last successful operation on this context.
 * kernel_ms: time on the device (OpenCL event profiling; the CPU backend
 * reports its compute time).  total_ms: end to end, transfers included.
 * upload_ms / download_ms: host-device copies (0 on the CPU). */
/* CPU backend: no device, so kernel_ms is the whole call (== total_ms), copies 0. */
typedef struct pv_timing {
    double kernel_ms;
    double total_ms;
    double upload_ms;
    double download_ms;
} pv_timing;
PV_API pv_status pv_context_last_timing(const pv_context *ctx, pv_timing *timing);

/* How the OpenCL backend measures pv_timing.kernel_ms.
 * PV_KERNEL_TIMING_RUNS (the default): kernels launched one after another
 *   on a queue form a run, timed as one span from the first kernel's start
 *   to the start of the command after the run (the next transfer, or a
 *   marker at the call's wait): two profiling events per run.  Where the
 *   host enqueues more slowly than the device runs, the device's idle time
 *   inside the run counts too.
 * PV_KERNEL_TIMING_EACH: every launch keeps its own profiling event and
 *   kernel_ms is the sum of the kernels' own times.  On some drivers an
 *   event per launch costs host time: NVIDIA's OpenCL took about 12 us a
 *   launch with it against 6 us without, and ran launches at the host's
 *   pace (docs/timing.md).  PARVIS_PROFILE=1 or 2 selects it as well, since
 *   its per-kernel summaries need it.
 * A context starts with PARVIS_KERNEL_TIMING=runs|each from the
 * environment when set (another value fails pv_context_create), else RUNS.
 * The CPU backend accepts either and reports its compute time. */
typedef enum pv_kernel_timing {
    PV_KERNEL_TIMING_RUNS = 0,
    PV_KERNEL_TIMING_EACH = 1
} pv_kernel_timing;
PV_API pv_status pv_context_set_kernel_timing(pv_context *ctx, pv_kernel_timing timing);
/* The context's setting (PV_KERNEL_TIMING_RUNS for a NULL context). */
PV_API pv_kernel_timing pv_context_kernel_timing(const pv_context *ctx);

/* Measured copy bandwidth of the context's memory: a buffer of `bytes`
 * copied to another on the same device (OpenCL: clEnqueueCopyBuffer timed
 * by its event; CPU backend: memcpy split over the context's OpenMP
 * threads), the best of a few repetitions after one untimed copy.
 * *gb_per_s counts the bytes read plus the bytes written (2 * bytes) per
 * second, in units of 1e9 bytes, so it compares directly with the bytes an
 * operation must move.  bytes must be > 0 (and fit one device buffer). */
PV_API pv_status pv_context_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s);

/* Measured arithmetic peak of the context's device, the compute limit
 * beside the copy bandwidth: a probe kernel of independent dependency
 * chains, long enough to hide latency, over enough work items (OpenCL) or
 * OpenMP threads (CPU backend) to fill the device, the best of a few
 * timed runs after an untimed one.  PV_COMPUTE_FLOAT chains x = x * a + b
 * in fp32 and counts 2 operations a step (a fused multiply-add is 2
 * FLOPs); PV_COMPUTE_INT chains x = (x + a) ^ b in 32-bit integers and
 * counts 2.  *gops: operations per second / 1e9. */
typedef enum pv_compute_kind {
    PV_COMPUTE_FLOAT = 0,
    PV_COMPUTE_INT = 1
} pv_compute_kind;
PV_API pv_status pv_context_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops);

/* ----------------------------------------------------------------- devices */

typedef enum pv_device_type {
    PV_DEVICE_GPU = 1,
    PV_DEVICE_CPU = 2,
    PV_DEVICE_ACCELERATOR = 3,
    PV_DEVICE_OTHER = 4
} pv_device_type;

typedef struct pv_device_info {
    int index;                 /* the value PARVIS_DEVICE / device_index take */
    char name[128];
    char vendor[128];
    char platform[128];
    char driver_version[256];
    char opencl_version[256];
    pv_device_type type;
    uint64_t global_memory;    /* bytes */
    uint64_t max_alloc;        /* bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    uint64_t local_memory;     /* bytes */
    int compute_units;
    int max_work_group_size;
} pv_device_info;

/* Fill up to capacity entries; *count receives the number of OpenCL devices
 * found (0 when OpenCL is absent or not built).  devices may be NULL when
 * capacity is 0, to count. */
PV_API pv_status pv_device_list(pv_device_info *devices, int capacity, int *count);
PV_API const char *pv_device_type_name(pv_device_type type);

#ifdef __cplusplus
}
#endif

#endif
