/* Internal to the OpenCL FFT layer: one FFT library behind fft.c's plan
 * cache.  fft.c calls every function here with its cache lock held, so an
 * engine's own process-wide state (clFFT's set-up) needs no lock of its
 * own.  Buffers and layouts are those of fft.h. */
#ifndef PV_CL_FFT_ENGINE_H
#define PV_CL_FFT_ENGINE_H

#include "../opencl.h"

/* What a pair is made for.  The engine may keep pointers to this struct's
 * fields for the life of its plan (VkFFT does): it lives inside the cache
 * entry. */
typedef struct pv_cl_fft_shape {
    int size[3];
    int batch;
    size_t real_count;      /* per transform */
    size_t complex_count;
    cl_context context;
    cl_command_queue queue;
    cl_device_id device;
} pv_cl_fft_shape;

typedef struct pv_cl_fft_engine_ops {
    pv_fft_engine kind;
    const char *name;                        /* for messages: "clFFT" */
    int (*length_ok)(int n);                 /* transforms length n unpadded */
    /* Make (and compile) the R2C / C2R pair; *plan receives the engine's
     * object.  Failures are recorded on ctx. */
    pv_status (*create)(pv_context *ctx, pv_cl_fft_shape *shape, void **plan);
    /* Frees a plan create made (never NULL; ctx is NULL from fft.c,
     * whose cache entries outlive their contexts). */
    pv_plan_destroy_fn destroy;
    /* Enqueue one direction for the whole batch on ctx's queue (fft.c has
     * already passed PARVIS_FAULT's enqueue check, naming enqueue_call). */
    pv_status (*enqueue)(pv_context *ctx, void *plan, int forward, cl_mem in, cl_mem out);
    const char *enqueue_call;                /* the library's enqueue, for messages */
    /* 1 when the engine transforms the whole shape safely (its lengths
     * each pass length_ok); 0 sends the shape to the other engine. */
    int (*shape_ok)(const int size[3]);
} pv_cl_fft_engine_ops;

extern const pv_cl_fft_engine_ops pv_cl_fft_clfft_ops;
#ifdef PV_HAVE_VKFFT
extern const pv_cl_fft_engine_ops pv_cl_fft_vkfft_ops;
#endif

#endif
