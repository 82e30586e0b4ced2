/* The OpenCL FFT layer: clFFT plan pairs cached process-wide by full key.
 *
 * A context that uses FFTs registers a release hook with the runtime,
 * which frees that context's plans before its queue and context go (and
 * tears clFFT down with the last plan, so nothing is left for clFFT's own
 * exit-time clean-up).  Every cached plan also holds a reference on its
 * queue and context. */
#include "fft.h"

#include <clFFT.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct timed_transform {
    cl_event start;   /* marker enqueued just before the transform */
    cl_event end;     /* clFFT's event of its last kernel */
} timed_transform;

struct pv_cl_fft {
    cl_context context;
    cl_command_queue queue;
    int size[3];
    int batch;
    clfftPlanHandle forward;
    clfftPlanHandle inverse;
    size_t real_count;
    size_t complex_count;
    double bake_ms;
    int users;
    int orphaned;            /* its context is gone: free on last release */
    timed_transform *pending;
    size_t pending_count, pending_capacity;
    struct pv_cl_fft *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pv_cl_fft *cache_head;
static int clfft_ready;

/* ------------------------------------------------------------- lengths */

int pv_cl_fft_length_ok(int n)
{
    static const int radices[] = {2, 3, 5, 7, 11, 13};
    if (n < 1)
        return 0;
    for (size_t i = 0; i < sizeof radices / sizeof radices[0]; i++)
        while (n % radices[i] == 0)
            n /= radices[i];
    return n == 1;
}

static pv_status check_lengths(pv_context *ctx, const int size[3])
{
    for (int axis = 0; axis < 3; axis++)
        if (!pv_cl_fft_length_ok(size[axis]))
            return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                           "clFFT cannot transform length %d (axis %c of %dx%dx%d): it takes "
                           "only factors 2, 3, 5, 7, 11, 13; pad the input",
                           size[axis], "xyz"[axis], size[0], size[1], size[2]);
    return PV_OK;
}

/* --------------------------------------------------------- clFFT set-up */

static pv_status clfft_check(pv_context *ctx, clfftStatus status, const char *call)
{
    if (status == CLFFT_SUCCESS)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_OPENCL, "%s failed: clFFT status %d (%s)", call, (int)status,
                   pv_cl_error_name((cl_int)status));
}

/* Called with cache_lock held. */
static pv_status ensure_setup(pv_context *ctx)
{
    if (clfft_ready)
        return PV_OK;
    clfftSetupData setup;
    pv_status status = clfft_check(ctx, clfftInitSetupData(&setup), "clfftInitSetupData");
    if (status == PV_OK)
        status = clfft_check(ctx, clfftSetup(&setup), "clfftSetup");
    clfft_ready = status == PV_OK;
    return status;
}

/* Called with cache_lock held, after the last plan is gone. */
static void teardown_if_unused(void)
{
    if (clfft_ready && !cache_head) {
        clfftTeardown();
        clfft_ready = 0;
    }
}

/* ------------------------------------------------------------- planning */

static clfftDim rank_of(const int size[3])
{
    return size[2] > 1 ? CLFFT_3D : size[1] > 1 ? CLFFT_2D : CLFFT_1D;
}

static pv_status configure_plan(pv_context *ctx, clfftPlanHandle plan, const pv_cl_fft *fft,
                                int forward)
{
    clfftDim dim = rank_of(fft->size);
    size_t kx = (size_t)fft->size[0] / 2 + 1;
    size_t real_strides[3] = {1, (size_t)fft->size[0], (size_t)fft->size[0] * fft->size[1]};
    size_t complex_strides[3] = {1, kx, kx * (size_t)fft->size[1]};
    clfftStatus s = clfftSetPlanPrecision(plan, CLFFT_SINGLE);
    if (s == CLFFT_SUCCESS)
        s = forward ? clfftSetLayout(plan, CLFFT_REAL, CLFFT_HERMITIAN_INTERLEAVED)
                    : clfftSetLayout(plan, CLFFT_HERMITIAN_INTERLEAVED, CLFFT_REAL);
    if (s == CLFFT_SUCCESS)
        s = clfftSetResultLocation(plan, CLFFT_OUTOFPLACE);
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanInStride(plan, dim, forward ? real_strides : complex_strides);
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanOutStride(plan, dim, forward ? complex_strides : real_strides);
    if (s == CLFFT_SUCCESS)
        s = forward ? clfftSetPlanDistance(plan, fft->real_count, fft->complex_count)
                    : clfftSetPlanDistance(plan, fft->complex_count, fft->real_count);
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanBatchSize(plan, (size_t)fft->batch);
    /* clFFT scales its backward transform by 1/N unless told otherwise. */
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanScale(plan, CLFFT_BACKWARD, 1.0f);
    return clfft_check(ctx, s, "clfftSetPlan*");
}

static pv_status make_plan(pv_context *ctx, pv_cl_fft *fft, int forward, clfftPlanHandle *out)
{
    size_t lengths[3] = {(size_t)fft->size[0], (size_t)fft->size[1], (size_t)fft->size[2]};
    clfftPlanHandle plan;
    pv_status status = clfft_check(
        ctx, clfftCreateDefaultPlan(&plan, fft->context, rank_of(fft->size), lengths),
        "clfftCreateDefaultPlan");
    if (status != PV_OK)
        return status;
    status = configure_plan(ctx, plan, fft, forward);
    double start = pv_now_ms();
    if (status == PV_OK)
        status = clfft_check(ctx, clfftBakePlan(plan, 1, &fft->queue, NULL, NULL),
                             "clfftBakePlan");
    fft->bake_ms += pv_now_ms() - start;
    if (status != PV_OK) {
        clfftDestroyPlan(&plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

static void release_pending(pv_cl_fft *fft)
{
    for (size_t i = 0; i < fft->pending_count; i++) {
        clReleaseEvent(fft->pending[i].start);
        clReleaseEvent(fft->pending[i].end);
    }
    fft->pending_count = 0;
}

static void destroy_entry(pv_cl_fft *fft)
{
    release_pending(fft);
    free(fft->pending);
    if (fft->forward)
        clfftDestroyPlan(&fft->forward);
    if (fft->inverse)
        clfftDestroyPlan(&fft->inverse);
    clReleaseCommandQueue(fft->queue);
    clReleaseContext(fft->context);
    free(fft);
}

static int counts_for(const int size[3], int batch, size_t *real_count, size_t *complex_count)
{
    size_t plane, half_plane, total;
    return pv_size_mul((size_t)size[0], (size_t)size[1], &plane) &&
           pv_size_mul(plane, (size_t)size[2], real_count) &&
           pv_size_mul((size_t)(size[0] / 2 + 1), (size_t)size[1], &half_plane) &&
           pv_size_mul(half_plane, (size_t)size[2], complex_count) &&
           pv_size_mul(*complex_count, 2 * sizeof(float) * (size_t)batch, &total);
}

static pv_status new_entry(pv_context *ctx, const int size[3], int batch, pv_cl_fft **out)
{
    pv_cl_fft *fft = calloc(1, sizeof *fft);
    if (!fft)
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT plan cache: out of memory");
    memcpy(fft->size, size, sizeof fft->size);
    fft->batch = batch;
    if (!counts_for(size, batch, &fft->real_count, &fft->complex_count)) {
        free(fft);
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT of %dx%dx%d x %d: size overflows", size[0],
                       size[1], size[2], batch);
    }
    fft->context = pv_cl_context(ctx);
    fft->queue = pv_cl_queue(ctx);
    clRetainContext(fft->context);
    clRetainCommandQueue(fft->queue);
    pv_status status = make_plan(ctx, fft, 1, &fft->forward);
    if (status == PV_OK)
        status = make_plan(ctx, fft, 0, &fft->inverse);
    if (status != PV_OK) {
        destroy_entry(fft);
        return status;
    }
    pv_log(ctx, "clFFT plans %dx%dx%d batch %d baked in %.1f ms", size[0], size[1], size[2],
           batch, fft->bake_ms);
    fft->next = cache_head;
    cache_head = fft;
    *out = fft;
    return PV_OK;
}

/* ----------------------------------------------------- context lifetime */

static void unlink_entry(pv_cl_fft *fft)
{
    for (pv_cl_fft **p = &cache_head; *p; p = &(*p)->next)
        if (*p == fft) {
            *p = fft->next;
            return;
        }
}

/* Called with cache_lock held. */
static void forget_context(cl_context context)
{
    pv_cl_fft **p = &cache_head;
    while (*p) {
        pv_cl_fft *fft = *p;
        if (fft->context == context && fft->users == 0) {
            *p = fft->next;
            destroy_entry(fft);
            continue;
        }
        if (fft->context == context)
            fft->orphaned = 1;
        p = &fft->next;
    }
    teardown_if_unused();
}

static void on_context_release(pv_context *ctx, void *unused)
{
    (void)unused;
    pthread_mutex_lock(&cache_lock);
    forget_context(pv_cl_context(ctx));
    pthread_mutex_unlock(&cache_lock);
}

static pv_status watch_context(pv_context *ctx)
{
    return pv_cl_on_release(ctx, on_context_release, NULL);
}

/* ------------------------------------------------------------ interface */

static pv_cl_fft *find_entry(pv_context *ctx, const int size[3], int batch)
{
    for (pv_cl_fft *e = cache_head; e; e = e->next)
        if (e->queue == pv_cl_queue(ctx) && e->context == pv_cl_context(ctx) && !e->orphaned &&
            memcmp(e->size, size, sizeof e->size) == 0 && e->batch == batch)
            return e;
    return NULL;
}

pv_status pv_cl_fft_acquire(pv_context *ctx, const int size[3], int batch, pv_cl_fft **out)
{
    pv_status status = check_lengths(ctx, size);
    if (status != PV_OK)
        return status;
    pthread_mutex_lock(&cache_lock);
    pv_cl_fft *fft = find_entry(ctx, size, batch);
    if (!fft) {
        status = watch_context(ctx);
        if (status == PV_OK)
            status = ensure_setup(ctx);
        if (status == PV_OK)
            status = new_entry(ctx, size, batch, &fft);
        if (status != PV_OK)
            teardown_if_unused();
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
    if (!fft)
        return;
    pthread_mutex_lock(&cache_lock);
    fft->users--;
    if (fft->users == 0 && fft->orphaned) {
        unlink_entry(fft);
        destroy_entry(fft);
        teardown_if_unused();
    }
    pthread_mutex_unlock(&cache_lock);
}

size_t pv_cl_fft_real_count(const pv_cl_fft *fft)
{
    return fft->real_count;
}

size_t pv_cl_fft_complex_count(const pv_cl_fft *fft)
{
    return fft->complex_count;
}

double pv_cl_fft_bake_ms(const pv_cl_fft *fft)
{
    return fft->bake_ms;
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

static pv_status enqueue(pv_context *ctx, pv_cl_fft *fft, int forward, cl_mem in, cl_mem out)
{
    cl_command_queue queue = pv_cl_queue(ctx);
    cl_event start = NULL, end = NULL;
    pv_status status = pv_cl_check(ctx, clEnqueueMarkerWithWaitList(queue, 0, NULL, &start),
                                   "clEnqueueMarkerWithWaitList");
    if (status != PV_OK)
        return status;
    status = clfft_check(ctx,
                         clfftEnqueueTransform(forward ? fft->forward : fft->inverse,
                                               forward ? CLFFT_FORWARD : CLFFT_BACKWARD, 1,
                                               &queue, 0, NULL, &end, &in, &out, NULL),
                         forward ? "clfftEnqueueTransform(forward)"
                                 : "clfftEnqueueTransform(backward)");
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

/* The marker completes when the work before the transform has, so the
 * span to clFFT's last event covers all of the transform's kernels. */
void pv_cl_fft_collect(pv_context *ctx, pv_cl_fft *fft)
{
    if (!fft)
        return;
    for (size_t i = 0; i < fft->pending_count; i++)
        ctx->timing.kernel_ms += span_ms(fft->pending[i].start, fft->pending[i].end);
    release_pending(fft);
}
