/* The OpenCL FFT layer: transform pairs cached process-wide by full key,
 * each made by one engine (fft_engine.h), with the engine chosen per
 * context, and the transforms timed between markers.
 *
 * A context that uses FFTs registers a release hook with the runtime,
 * which frees that context's pairs before its queue and context go.  Every
 * cached pair also holds a reference on its queue and context, so a pair
 * still in use when its context is destroyed (a plan destroyed late) stays
 * valid until its last release. */
#include "fft.h"
#include "fft_engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct timed_transform {
    cl_event start;   /* marker enqueued just before the transform */
    cl_event end;     /* marker enqueued just after it */
} timed_transform;

struct pv_cl_fft {
    pv_cl_fft_shape shape;   /* engines may point into it: never moved */
    const pv_cl_fft_engine_ops *engine;
    void *plan;              /* the engine's */
    double bake_ms;
    int users;
    int orphaned;            /* its context is gone: free on last release */
    timed_transform *pending;
    size_t pending_count, pending_capacity;
    struct pv_cl_fft *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pv_cl_fft *cache_head;

/* --------------------------------------------------------------- engines */

/* The "fft" launch-parameter family: not a kernel's, it holds the
 * context's engine choice (0 = automatic) in the runtime's override store,
 * which lives and dies with the context. */
static const pv_cl_param_default fft_defaults[] = {
    {"FFT_ENGINE", PV_FFT_AUTO},
};

const pv_cl_param_family pv_cl_params_fft = {"fft", fft_defaults,
                                             sizeof fft_defaults / sizeof fft_defaults[0]};

int pv_cl_fft_engine_built(pv_fft_engine engine)
{
#ifdef PV_HAVE_VKFFT
    if (engine == PV_FFT_VKFFT)
        return 1;
#endif
    return engine == PV_FFT_AUTO || engine == PV_FFT_CLFFT;
}

static pv_fft_engine default_engine(void)
{
#ifdef PV_HAVE_VKFFT
    return PV_FFT_VKFFT;
#else
    return PV_FFT_CLFFT;
#endif
}

static pv_status engine_from_environment(pv_context *ctx, pv_fft_engine *engine)
{
    char name[PV_CONFIG_VALUE_MAX + 1];
    if (!pv_config_get(PV_CONFIG_FFT, name, sizeof name)) {
        *engine = default_engine();
        return PV_OK;
    }
    if (strcmp(name, "clfft") == 0)
        *engine = PV_FFT_CLFFT;
    else if (strcmp(name, "vkfft") == 0)
        *engine = PV_FFT_VKFFT;
    else
        return pv_fail(ctx, PV_ERR_INVALID, "PARVIS_FFT=%s is not clfft or vkfft", name);
    if (!pv_cl_fft_engine_built(*engine))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "PARVIS_FFT=%s: this build has no VkFFT (configure --with-vkfft)", name);
    return PV_OK;
}

pv_status pv_cl_fft_engine_of(pv_context *ctx, pv_fft_engine *engine)
{
    int chosen = pv_cl_param(ctx, "fft", "FFT_ENGINE", PV_FFT_AUTO);
    if (chosen == PV_FFT_AUTO)
        return engine_from_environment(ctx, engine);
    *engine = (pv_fft_engine)chosen;
    return PV_OK;
}

pv_status pv_cl_fft_set_engine(pv_context *ctx, pv_fft_engine engine)
{
    return pv_cl_param_set(ctx, "fft", "FFT_ENGINE", (int)engine);
}

static const pv_cl_fft_engine_ops *engine_ops(pv_fft_engine engine)
{
#ifdef PV_HAVE_VKFFT
    if (engine == PV_FFT_VKFFT)
        return &pv_cl_fft_vkfft_ops;
#endif
    (void)engine;
    return &pv_cl_fft_clfft_ops;
}

static pv_status check_lengths(pv_context *ctx, const pv_cl_fft_engine_ops *engine,
                               const int size[3])
{
    for (int axis = 0; axis < 3; axis++)
        if (!engine->length_ok(size[axis]))
            return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                           "%s cannot transform length %d (axis %c of %dx%dx%d): it takes "
                           "only factors 2, 3, 5, 7, 11, 13; pad the input",
                           engine->name, size[axis], "xyz"[axis], size[0], size[1], size[2]);
    return PV_OK;
}

/* ------------------------------------------------------------- entries */

static void release_pending(pv_cl_fft *fft)
{
    for (size_t i = 0; i < fft->pending_count; i++) {
        clReleaseEvent(fft->pending[i].start);
        clReleaseEvent(fft->pending[i].end);
    }
    fft->pending_count = 0;
}

/* Called with cache_lock held. */
static void destroy_entry(pv_cl_fft *fft)
{
    release_pending(fft);
    free(fft->pending);
    if (fft->plan)
        fft->engine->destroy(NULL, fft->plan);
    clReleaseCommandQueue(fft->shape.queue);
    clReleaseContext(fft->shape.context);
    free(fft);
}

static pv_status fill_shape(pv_context *ctx, const int size[3], int batch, pv_cl_fft_shape *s)
{
    memcpy(s->size, size, sizeof s->size);
    s->batch = batch;
    if (!pv_r2c_counts(size, (size_t)batch, &s->real_count, &s->complex_count))
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT of %dx%dx%d x %d: size overflows", size[0],
                       size[1], size[2], batch);
    s->context = pv_cl_context(ctx);
    s->queue = pv_cl_queue(ctx);
    s->device = pv_cl_device(ctx);
    clRetainContext(s->context);
    clRetainCommandQueue(s->queue);
    return PV_OK;
}

/* Called with cache_lock held. */
static pv_status new_entry(pv_context *ctx, const pv_cl_fft_engine_ops *engine,
                           const int size[3], int batch, pv_cl_fft **out)
{
    pv_cl_fft *fft = calloc(1, sizeof *fft);
    if (!fft)
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT plan cache: out of memory");
    fft->engine = engine;
    pv_status status = fill_shape(ctx, size, batch, &fft->shape);
    if (status != PV_OK) {
        free(fft);
        return status;
    }
    /* The engine allocates the plans' device memory itself (clFFT's
     * twiddle tables, VkFFT's buffers), out of PARVIS_FAULT's reach: the
     * plan pair counts as one allocation, failed before the engine runs. */
    double start = pv_now_ms();
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ALLOC);
    status = err == CL_SUCCESS ? engine->create(ctx, &fft->shape, &fft->plan)
                               : pv_cl_check(ctx, err, "FFT plan creation");
    fft->bake_ms = pv_now_ms() - start;
    if (status != PV_OK) {
        destroy_entry(fft);
        return status;
    }
    pv_log(ctx, "%s plans %dx%dx%d batch %d made in %.1f ms", engine->name, size[0], size[1],
           size[2], batch, fft->bake_ms);
    fft->next = cache_head;
    cache_head = fft;
    *out = fft;
    return PV_OK;
}

/* ----------------------------------------------------- context lifetime */

/* Called with cache_lock held. */
static void forget_context(cl_context context)
{
    pv_cl_fft **p = &cache_head;
    while (*p) {
        pv_cl_fft *fft = *p;
        if (fft->shape.context == context && fft->users == 0) {
            *p = fft->next;
            destroy_entry(fft);
            continue;
        }
        if (fft->shape.context == context)
            fft->orphaned = 1;
        p = &fft->next;
    }
}

static void on_context_release(pv_context *ctx, void *unused)
{
    (void)unused;
    pthread_mutex_lock(&cache_lock);
    forget_context(pv_cl_context(ctx));
    pthread_mutex_unlock(&cache_lock);
}

/* ------------------------------------------------------------ interface */

static pv_cl_fft *find_entry(pv_context *ctx, const pv_cl_fft_engine_ops *engine,
                             const int size[3], int batch)
{
    for (pv_cl_fft *e = cache_head; e; e = e->next)
        if (e->shape.queue == pv_cl_queue(ctx) && e->shape.context == pv_cl_context(ctx) &&
            !e->orphaned && e->engine == engine &&
            memcmp(e->shape.size, size, sizeof e->shape.size) == 0 && e->shape.batch == batch)
            return e;
    return NULL;
}

/* One user fewer; an orphaned entry (its context released) goes with its
 * last user.  Called with cache_lock held. */
static void drop_user(void *entry)
{
    pv_cl_fft *fft = entry;
    fft->users--;
    if (fft->users == 0 && fft->orphaned) {
        PV_LIST_UNLINK(pv_cl_fft, &cache_head, fft);
        destroy_entry(fft);
    }
}

pv_status pv_cl_fft_acquire(pv_context *ctx, const int size[3], int batch, pv_cl_fft **out)
{
    pv_fft_engine kind;
    pv_status status = pv_cl_fft_engine_of(ctx, &kind);
    if (status != PV_OK)
        return status;
    const pv_cl_fft_engine_ops *engine = engine_ops(kind);
    /* A shape past VkFFT's safe limits (an axis past 65536 points, or one
     * point along x) goes to clFFT when clFFT can take it, and is refused
     * otherwise: never handed to an engine that would crash.  clFFT's own
     * limits are check_lengths'. */
    if (kind == PV_FFT_VKFFT && !engine->shape_ok(size)) {
        const pv_cl_fft_engine_ops *clfft = engine_ops(PV_FFT_CLFFT);
        if (!clfft->shape_ok(size))
            return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                           "no FFT engine transforms %dx%dx%d: VkFFT takes 2..65536 points "
                           "along x and at most 65536 along y and z here, clFFT lengths of "
                           "factors 2, 3, 5, 7, 11, 13 only; pad the input",
                           size[0], size[1], size[2]);
        pv_log(ctx, "FFT %dx%dx%d: beyond VkFFT's limits, made with clFFT", size[0], size[1],
               size[2]);
        engine = clfft;
    }
    status = check_lengths(ctx, engine, size);
    if (status != PV_OK)
        return status;
    pthread_mutex_lock(&cache_lock);
    pv_cl_fft *fft = find_entry(ctx, engine, size, batch);
    if (!fft) {
        status = pv_cl_on_release(ctx, on_context_release, NULL);
        if (status == PV_OK)
            status = new_entry(ctx, engine, size, batch, &fft);
    }
    if (status == PV_OK) {
        fft->users++;
        *out = fft;
    }
    pthread_mutex_unlock(&cache_lock);
    return status;
}

void pv_cl_fft_release(pv_cl_fft *fft)
{
    pv_cache_release(&cache_lock, fft, drop_user);
}

size_t pv_cl_fft_real_count(const pv_cl_fft *fft)
{
    return fft->shape.real_count;
}

size_t pv_cl_fft_complex_count(const pv_cl_fft *fft)
{
    return fft->shape.complex_count;
}

double pv_cl_fft_bake_ms(const pv_cl_fft *fft)
{
    return fft->bake_ms;
}

pv_fft_engine pv_cl_fft_engine(const pv_cl_fft *fft)
{
    return fft->engine->kind;
}

/* ------------------------------------------------------------ execution */

static pv_status remember_transform(pv_context *ctx, pv_cl_fft *fft, cl_event start,
                                    cl_event end)
{
    if (fft->pending_count == fft->pending_capacity) {
        size_t capacity = fft->pending_capacity ? 2 * fft->pending_capacity : 8;
        timed_transform *grown = realloc(fft->pending, capacity * sizeof *grown);
        if (!grown) {
            clReleaseEvent(start);
            clReleaseEvent(end);
            return pv_fail(ctx, PV_ERR_NOMEM, "FFT timing: out of memory");
        }
        fft->pending = grown;
        fft->pending_capacity = capacity;
    }
    fft->pending[fft->pending_count].start = start;
    fft->pending[fft->pending_count++].end = end;
    return PV_OK;
}

/* Neither engine returns one event for a whole transform (VkFFT returns
 * none), so markers on the in-order queue bracket it. */
static pv_status enqueue(pv_context *ctx, pv_cl_fft *fft, int forward, cl_mem in, cl_mem out)
{
    cl_event start = NULL, end = NULL;
    pv_status status = pv_cl_marker(ctx, &start);
    if (status != PV_OK)
        return status;
    /* One enqueue for PARVIS_FAULT: the kernels the engine launches inside
     * are its own. */
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err != CL_SUCCESS)
        status = pv_cl_check(ctx, err, fft->engine->enqueue_call);
    else
        status = fft->engine->enqueue(ctx, fft->plan, forward, in, out);
    if (status == PV_OK)
        status = pv_cl_marker(ctx, &end);
    if (status != PV_OK) {
        clReleaseEvent(start);
        return status;
    }
    return remember_transform(ctx, fft, start, end);
}

pv_status pv_cl_fft_forward(pv_context *ctx, pv_cl_fft *fft, cl_mem real, cl_mem spectrum)
{
    return enqueue(ctx, fft, 1, real, spectrum);
}

pv_status pv_cl_fft_inverse(pv_context *ctx, pv_cl_fft *fft, cl_mem spectrum, cl_mem real)
{
    return enqueue(ctx, fft, 0, spectrum, real);
}

static double span_ms(cl_event start, cl_event end)
{
    cl_ulong from = 0, to = 0;
    if (clGetEventProfilingInfo(start, CL_PROFILING_COMMAND_END, sizeof from, &from, NULL) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(end, CL_PROFILING_COMMAND_END, sizeof to, &to, NULL) !=
            CL_SUCCESS ||
        to < from)
        return 0.0;
    return (double)(to - from) * 1e-6;
}

/* The first marker completes when the work before the transform has, the
 * second when the transform's last kernel has: the span covers all of the
 * transform's kernels. */
void pv_cl_fft_collect(pv_context *ctx, pv_cl_fft *fft)
{
    if (!fft)
        return;
    for (size_t i = 0; i < fft->pending_count; i++)
        ctx->timing.kernel_ms += span_ms(fft->pending[i].start, fft->pending[i].end);
    release_pending(fft);
}
