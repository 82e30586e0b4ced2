/** @file
 * parvis core: status codes, image and volume types, contexts and devices.
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

/** What every function returns: PV_OK = 0, errors negative. */
typedef enum pv_status {
    PV_OK = 0,                /**< success */
    PV_ERR_INVALID = -1,      /**< a bad argument: NULL, size, NaN, range ... */
    PV_ERR_NOMEM = -2,        /**< host allocation failed or size overflowed */
    PV_ERR_IO = -3,           /**< a file could not be opened, read or written */
    PV_ERR_FORMAT = -4,       /**< a file is malformed, truncated or unsupported */
    PV_ERR_UNSUPPORTED = -5,  /**< the backend or build lacks this feature */
    PV_ERR_OPENCL = -6,       /**< an OpenCL call failed (message names it) */
    PV_ERR_BUILD = -7,        /**< an OpenCL program failed to build (log kept) */
    PV_ERR_NO_DEVICE = -8,    /**< no usable device for the requested backend */
    PV_ERR_MISMATCH = -9,     /**< cross-check: backends disagree beyond tolerance */
    PV_ERR_DEVICE_MEMORY = -10, /**< a buffer exceeds what the device can hold */
    PV_ERR_CANCELLED = -11    /**< the context's progress callback asked to stop */
} pv_status;

/** Short constant name of a status ("invalid argument", ...).
 * @param status any value, known or not
 * @return a constant string, never NULL */
PV_API const char *pv_status_string(pv_status status);

/** Message of the last failure on the calling thread (any call). Never NULL.
 * @return the calling thread's message */
PV_API const char *pv_last_error(void);

/** Library version as a string, and as numbers (any pointer may be NULL).
 * @return the version, e.g. "0.1.0" (PV_VERSION_STRING of the library built) */
PV_API const char *pv_version(void);
/** Library version as numbers (any pointer may be NULL).
 * @param major receives the major version, or NULL
 * @param minor receives the minor version, or NULL
 * @param patch receives the patch version, or NULL */
PV_API void pv_version_numbers(int *major, int *minor, int *patch);

/* ------------------------------------------------------------------ images */

/** Pixel types.  Grey: U8, U16, F32.  Colour: RGB8 and RGB16, three
 * interleaved samples (R, G, B) a pixel.  16-bit samples are in host byte
 * order.  Every operation takes U8 and F32; SIFT (parvis/features.h) and
 * pv_to_grey (parvis/colour.h) also take U16, RGB8 and RGB16. */
typedef enum pv_pixel_type {
    PV_PIXEL_U8 = 1,    /**< grey, unsigned 8-bit */
    PV_PIXEL_F32 = 2,   /**< grey, 32-bit float */
    PV_PIXEL_U16 = 3,   /**< grey, unsigned 16-bit */
    PV_PIXEL_RGB8 = 4,  /**< colour, three unsigned 8-bit samples */
    PV_PIXEL_RGB16 = 5  /**< colour, three unsigned 16-bit samples */
} pv_pixel_type;

/** A 2D image.  Row y starts at pixel y * stride (stride >= width, in
 * pixels of the pixel type, so a colour pixel's three samples count as
 * one).  The caller owns data. */
typedef struct pv_image {
    int width;            /**< pixels a row */
    int height;           /**< rows */
    ptrdiff_t stride;     /**< pixels from one row's start to the next's (>= width) */
    pv_pixel_type type;   /**< the pixel type */
    void *data;           /**< the first pixel of row 0 (owned by the caller) */
} pv_image;

/** Sample types of a volume.  Zero is F32, so a zero-initialised volume
 * (= {0}, a positional initialiser of the six older members, or designated
 * initialisers that leave the type out) holds floats, as every volume did
 * before the type existed.  U16 has a distinctive value so that a volume
 * filled member by member in memory that was never cleared, its type left
 * unset, is refused as of an unknown type (PV_ERR_INVALID) rather than
 * taken for u16 by chance: such code sets type = PV_VOLUME_F32, or starts
 * from pv_volume_wrap. */
typedef enum pv_volume_type {
    PV_VOLUME_F32 = 0,       /**< 32-bit float samples (data) */
    PV_VOLUME_U16 = 0x5516   /**< unsigned 16-bit samples in host byte order (data_u16) */
} pv_volume_type;

/** A 3D volume, x fastest, then y, then z.  Element (x, y, z) is at
 * x + y * stride_y + z * stride_z (strides in samples, not bytes).
 *
 * Most operations take F32 volumes only and refuse U16 ones with
 * PV_ERR_INVALID; OCT registration (parvis/octreg.h), phase correlation
 * of volumes (plain, planned and masked, parvis/register.h) and the 3D
 * flow's inputs (parvis/flow.h) also take U16, which the OpenCL backend
 * uploads as 16 bits and converts on the device; the results are those
 * of the same call on the volume converted to float (every u16 value is
 * a float exactly).  Outputs are always F32. */
typedef struct pv_volume {
    /** @{ */
    /** Sizes in voxels along x, y and z. */
    int nx, ny, nz;
    /** @} */
    ptrdiff_t stride_y;   /**< elements from one row (y) to the next */
    ptrdiff_t stride_z;   /**< elements from one slice (z) to the next */
    union {
        float *data;          /**< element (0, 0, 0) of an F32 volume */
        uint16_t *data_u16;   /**< element (0, 0, 0) of a U16 volume */
    };
    pv_volume_type type;  /**< the sample type (PV_VOLUME_F32, zero, by default) */
} pv_volume;

/** Allocate a dense image / volume (zeroed).  Free with pv_image_free /
 * pv_volume_free; those only free what these functions allocated.
 * @param image receives the image
 * @param width pixels a row (> 0)
 * @param height rows (> 0)
 * @param type the pixel type
 * @return PV_OK, PV_ERR_INVALID or PV_ERR_NOMEM */
PV_API pv_status pv_image_alloc(pv_image *image, int width, int height, pv_pixel_type type);
/** Free an image allocated by the library (pv_image_alloc, pv_image_read ...);
 * its data pointer becomes NULL.
 * @param image the image, or NULL */
PV_API void pv_image_free(pv_image *image);
/** Allocate a dense volume (zeroed); free it with pv_volume_free.
 * @param volume receives the volume
 * @param nx size along x (> 0)
 * @param ny size along y (> 0)
 * @param nz size along z (> 0)
 * @return PV_OK, PV_ERR_INVALID or PV_ERR_NOMEM */
PV_API pv_status pv_volume_alloc(pv_volume *volume, int nx, int ny, int nz);
/** Allocate a dense volume of unsigned 16-bit samples (zeroed); free it
 * with pv_volume_free.
 * @param volume receives the volume (type PV_VOLUME_U16)
 * @param nx size along x (> 0)
 * @param ny size along y (> 0)
 * @param nz size along z (> 0)
 * @return PV_OK, PV_ERR_INVALID or PV_ERR_NOMEM */
PV_API pv_status pv_volume_alloc_u16(pv_volume *volume, int nx, int ny, int nz);
/** Free a volume allocated by the library; its data pointer becomes NULL.
 * @param volume the volume, or NULL */
PV_API void pv_volume_free(pv_volume *volume);

/** Describe caller memory without copying (dense rows).
 * @param data the caller's pixels
 * @param width pixels a row
 * @param height rows
 * @param type the pixel type
 * @return the image (stride = width) */
PV_API pv_image pv_image_wrap(void *data, int width, int height, pv_pixel_type type);
/** Describe caller memory of a volume without copying (dense).
 * @param data the caller's values
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @return the volume (stride_y = nx, stride_z = nx * ny) */
PV_API pv_volume pv_volume_wrap(float *data, int nx, int ny, int nz);
/** Describe caller memory of unsigned 16-bit samples as a volume without
 * copying (dense).
 * @param data the caller's samples
 * @param nx size along x
 * @param ny size along y
 * @param nz size along z
 * @return the volume (type PV_VOLUME_U16, stride_y = nx, stride_z = nx * ny) */
PV_API pv_volume pv_volume_wrap_u16(uint16_t *data, int nx, int ny, int nz);
/** Bytes of one sample of a volume type: 4 for F32, 2 for U16, 0 for a
 * value that names no type.
 * @param type the sample type
 * @return the size in bytes, or 0 */
PV_API size_t pv_volume_sample_size(pv_volume_type type);

/** Pixel access helper for tests and examples: the value of a grey pixel,
 * the Rec. 601 luma (0.299 R + 0.587 G + 0.114 B, in float) of a colour
 * one, on the pixel type's own scale (0..255 or 0..65535); NAN when the
 * image is invalid or (x, y) is outside it.
 * @param image the image
 * @param x column
 * @param y row
 * @return the value, or NAN */
PV_API float pv_image_get(const pv_image *image, int x, int y);

/* ---------------------------------------------------------------- contexts */

/** Which backend a context runs on. */
typedef enum pv_backend_kind {
    PV_BACKEND_AUTO = 0,   /**< first OpenCL GPU, else the CPU backend */
    PV_BACKEND_CPU = 1,    /**< OpenMP + FFTW reference backend */
    PV_BACKEND_OPENCL = 2  /**< OpenCL: a GPU if any, else any OpenCL device */
} pv_backend_kind;

/** The backend's name ("auto", "cpu", "opencl"; "unknown" otherwise).
 * @param kind the backend
 * @return a constant string, never NULL */
PV_API const char *pv_backend_name(pv_backend_kind kind);

/* Context flags. */
#define PV_CONTEXT_CROSSCHECK 0x1u /**< run each call on the CPU too and compare */

/** What pv_context_create is asked for. */
typedef struct pv_context_options {
    pv_backend_kind backend;  /**< the backend wanted */
    int device_index;       /**< index into pv_device_list(), or -1 for automatic */
    unsigned flags;         /**< PV_CONTEXT_* */
    int cpu_threads;        /**< OpenMP threads for the CPU backend; 0 = default */
} pv_context_options;

/** A context: a backend, a device and their state (opaque). */
typedef struct pv_context pv_context;

/** Defaults: AUTO, automatic device, no flags, default threads.
 * @param options filled with the defaults (nothing happens when NULL) */
PV_API void pv_context_options_default(pv_context_options *options);

/** Create a context.  options may be NULL (defaults).  The environment
 * overrides the options: PARVIS_BACKEND=auto|cpu|opencl,
 * `PARVIS_DEVICE=<index or name substring>`, PARVIS_CROSSCHECK=1.
 * On failure *out is NULL and pv_last_error() says why.
 * fork(): a context does not cross it.  In a forked child every call on a
 * context made before the fork fails with PV_ERR_UNSUPPORTED (the parent's
 * threads, OpenMP pool and OpenCL runtime are not in the child), and
 * pv_context_destroy frees only its host memory; a new CPU context in the
 * child works, single-threaded; a new OpenCL context in the child of a
 * process that had made one is refused with PV_ERR_UNSUPPORTED.  Start
 * workers with spawn or forkserver instead.
 * @param out receives the context
 * @param options the options, or NULL
 * @return PV_OK or an error status */
PV_API pv_status pv_context_create(pv_context **out, const pv_context_options *options);
/** Destroy a context and everything it holds; no other thread may still use
 * it or its plans.
 * @param ctx the context, or NULL */
PV_API void pv_context_destroy(pv_context *ctx);

/** Where the context runs and why it was chosen: the backend.
 * @param ctx the context
 * @return its backend */
PV_API pv_backend_kind pv_context_backend(const pv_context *ctx);
/** Where the context runs: the device's name.
 * @param ctx the context
 * @return the name, never NULL ("" for a NULL context) */
PV_API const char *pv_context_device_name(const pv_context *ctx);
/** One line saying how the backend was selected (e.g. why AUTO took the CPU).
 * @param ctx the context
 * @return the note, never NULL */
PV_API const char *pv_context_selection_note(const pv_context *ctx);
/** Message of the last failed call on this context ("" if none), copied for
 * the calling thread (valid until its next call of this function).
 * @param ctx the context
 * @return the message, never NULL */
PV_API const char *pv_context_last_error(const pv_context *ctx);
/** OpenCL program build log of the last build failure ("" if none), copied
 * for the calling thread (valid until its next call of this function).
 * @param ctx the context
 * @return the log, never NULL */
PV_API const char *pv_context_build_log(const pv_context *ctx);

/** Turn the cross-check (PV_CONTEXT_CROSSCHECK) on or off.
 * @param ctx the context
 * @param enabled nonzero to run each call on the CPU too and compare
 * @return PV_OK or an error status */
PV_API pv_status pv_context_set_crosscheck(pv_context *ctx, int enabled);
/** Whether the cross-check is on.
 * @param ctx the context
 * @return nonzero when on, 0 when off (or ctx is NULL) */
PV_API int pv_context_crosscheck(const pv_context *ctx);
/** OpenMP threads the CPU backend uses in this context.
 * @param ctx the context
 * @return the thread count */
PV_API int pv_context_cpu_threads(const pv_context *ctx);

/** Timing of the last successful operation on this context.
 * kernel_ms: time on the device (OpenCL event profiling; the CPU backend
 * reports its compute time).  total_ms: end to end, transfers included.
 * upload_ms / download_ms: host-device copies (0 on the CPU).
 * CPU backend: no device, so kernel_ms is the whole call (== total_ms), copies 0. */
typedef struct pv_timing {
    double kernel_ms;    /**< time on the device */
    double total_ms;     /**< end to end, transfers included */
    double upload_ms;    /**< host-to-device copies (0 on the CPU) */
    double download_ms;  /**< device-to-host copies (0 on the CPU) */
} pv_timing;
/** Timing of the last successful operation on this context.
 * @param ctx the context
 * @param timing receives the timing
 * @return PV_OK or PV_ERR_INVALID */
PV_API pv_status pv_context_last_timing(const pv_context *ctx, pv_timing *timing);

/** How the OpenCL backend measures pv_timing.kernel_ms.
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
    PV_KERNEL_TIMING_RUNS = 0,  /**< a run of launches timed as one span */
    PV_KERNEL_TIMING_EACH = 1   /**< every launch timed by its own event */
} pv_kernel_timing;
/** Set how the context measures pv_timing.kernel_ms (pv_kernel_timing).
 * @param ctx the context
 * @param timing the mode
 * @return PV_OK or PV_ERR_INVALID */
PV_API pv_status pv_context_set_kernel_timing(pv_context *ctx, pv_kernel_timing timing);
/** The context's setting (PV_KERNEL_TIMING_RUNS for a NULL context).
 * @param ctx the context
 * @return the mode */
PV_API pv_kernel_timing pv_context_kernel_timing(const pv_context *ctx);

/** Measured copy bandwidth of the context's memory: a buffer of `bytes`
 * copied to another on the same device (OpenCL: clEnqueueCopyBuffer timed
 * by its event; CPU backend: memcpy split over the context's OpenMP
 * threads), the best of a few repetitions after one untimed copy.
 * *gb_per_s counts the bytes read plus the bytes written (2 * bytes) per
 * second, in units of 1e9 bytes, so it compares directly with the bytes an
 * operation must move.  bytes must be > 0 (and fit one device buffer).
 * @param ctx the context
 * @param bytes the size of the buffer copied
 * @param gb_per_s receives the bandwidth
 * @return PV_OK or an error status */
PV_API pv_status pv_context_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s);

/** Measured arithmetic peak of the context's device, the compute limit
 * beside the copy bandwidth: a probe kernel of independent dependency
 * chains, long enough to hide latency, over enough work items (OpenCL) or
 * OpenMP threads (CPU backend) to fill the device, the best of a few
 * timed runs after an untimed one.  PV_COMPUTE_FLOAT chains x = x * a + b
 * in fp32 and counts 2 operations a step (a fused multiply-add is 2
 * FLOPs); PV_COMPUTE_INT chains x = (x + a) ^ b in 32-bit integers and
 * counts 2.  *gops: operations per second / 1e9. */
typedef enum pv_compute_kind {
    PV_COMPUTE_FLOAT = 0,  /**< fp32 x = x * a + b, 2 operations a step */
    PV_COMPUTE_INT = 1     /**< 32-bit x = (x + a) ^ b, 2 operations a step */
} pv_compute_kind;
/** Measured arithmetic peak of the context's device (pv_compute_kind).
 * @param ctx the context
 * @param kind float or integer chains
 * @param gops receives operations per second / 1e9
 * @return PV_OK or an error status */
PV_API pv_status pv_context_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops);

/* ----------------------------------------------------------------- devices */

/** The kind of an OpenCL device. */
typedef enum pv_device_type {
    PV_DEVICE_GPU = 1,          /**< a GPU */
    PV_DEVICE_CPU = 2,          /**< a CPU (PoCL, for one) */
    PV_DEVICE_ACCELERATOR = 3,  /**< an accelerator */
    PV_DEVICE_OTHER = 4         /**< anything else */
} pv_device_type;

/** An OpenCL device as pv_device_list describes it. */
typedef struct pv_device_info {
    int index;                 /**< the value PARVIS_DEVICE / device_index take */
    char name[128];            /**< device name */
    char vendor[128];          /**< device vendor */
    char platform[128];        /**< OpenCL platform name */
    char driver_version[256];  /**< driver version */
    char opencl_version[256];  /**< OpenCL version the device reports */
    pv_device_type type;       /**< device kind */
    uint64_t global_memory;    /**< bytes */
    uint64_t max_alloc;        /**< bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    uint64_t local_memory;     /**< bytes */
    int compute_units;         /**< compute units */
    int max_work_group_size;   /**< largest work-group */
} pv_device_info;

/** Fill up to capacity entries; *count receives the number of OpenCL devices
 * found (0 when OpenCL is absent or not built).  devices may be NULL when
 * capacity is 0, to count.
 * @param devices the array to fill, or NULL when capacity is 0
 * @param capacity entries devices holds
 * @param count receives the number of devices found
 * @return PV_OK or an error status */
PV_API pv_status pv_device_list(pv_device_info *devices, int capacity, int *count);
/** The device kind's name.
 * @param type the kind
 * @return a constant string, never NULL */
PV_API const char *pv_device_type_name(pv_device_type type);

#ifdef __cplusplus
}
#endif

#endif
