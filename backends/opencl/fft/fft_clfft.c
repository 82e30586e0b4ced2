/* The clFFT engine of the OpenCL FFT layer.
 *
 * clfftSetup runs with the first clFFT pair of the process and
 * clfftTeardown with the last one (fft.c frees a context's pairs from the
 * runtime's release hook, before the context goes), so nothing is left for
 * clFFT's exit-time clean-up.  clFFT keeps compiled programs per context
 * in one process-wide repository that only clfftTeardown empties: while
 * another context still holds clFFT pairs, a released context's programs
 * (and the cl_context they reference) live on until that teardown. */
#include "fft_engine.h"

#include <clFFT.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct clfft_pair {
    clfftPlanHandle forward;
    clfftPlanHandle inverse;
} clfft_pair;

/* Pairs alive in the process; guarded by fft.c's cache lock. */
static int live_pairs;

static int clfft_length_ok(int n)
{
    static const int radices[] = {2, 3, 5, 7, 11, 13};
    if (n < 1)
        return 0;
    for (size_t i = 0; i < sizeof radices / sizeof radices[0]; i++)
        while (n % radices[i] == 0)
            n /= radices[i];
    return n == 1;
}

static int clfft_shape_ok(const int size[3])
{
    return clfft_length_ok(size[0]) && clfft_length_ok(size[1]) && clfft_length_ok(size[2]);
}

static pv_status clfft_check(pv_context *ctx, clfftStatus status, const char *call)
{
    if (status == CLFFT_SUCCESS)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_OPENCL, "%s failed: clFFT status %d (%s)", call, (int)status,
                   pv_cl_error_name((cl_int)status));
}

static pv_status setup_if_first(pv_context *ctx)
{
    if (live_pairs > 0)
        return PV_OK;
    clfftSetupData setup;
    pv_status status = clfft_check(ctx, clfftInitSetupData(&setup), "clfftInitSetupData");
    if (status == PV_OK)
        status = clfft_check(ctx, clfftSetup(&setup), "clfftSetup");
    return status;
}

/* clFFT's releaseResources frees the plans it still lists without
 * forgetting them, so it must only run once every plan was destroyed:
 * live_pairs counts exactly those. */
static void teardown_if_last(void)
{
    if (live_pairs == 0)
        clfftTeardown();
}

static clfftDim rank_of(const int size[3])
{
    return size[2] > 1 ? CLFFT_3D : size[1] > 1 ? CLFFT_2D : CLFFT_1D;
}

static pv_status configure_plan(pv_context *ctx, clfftPlanHandle plan,
                                const pv_cl_fft_shape *shape, int forward)
{
    clfftDim dim = rank_of(shape->size);
    size_t kx = (size_t)shape->size[0] / 2 + 1;
    size_t real_strides[3] = {1, (size_t)shape->size[0], (size_t)shape->size[0] * shape->size[1]};
    size_t complex_strides[3] = {1, kx, kx * (size_t)shape->size[1]};
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
        s = forward ? clfftSetPlanDistance(plan, shape->real_count, shape->complex_count)
                    : clfftSetPlanDistance(plan, shape->complex_count, shape->real_count);
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanBatchSize(plan, (size_t)shape->batch);
    /* clFFT scales its backward transform by 1/N unless told otherwise. */
    if (s == CLFFT_SUCCESS)
        s = clfftSetPlanScale(plan, CLFFT_BACKWARD, 1.0f);
    return clfft_check(ctx, s, "clfftSetPlan*");
}

/* Keep what fd 2 received in capture in the context's log. */
static void log_captured(pv_context *ctx, FILE *capture)
{
    char text[2048];
    rewind(capture);
    size_t n = fread(text, 1, sizeof text - 1, capture);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        n--;
    text[n] = '\0';
    if (n > 0)
        pv_log(ctx, "clFFT's program build said: %s", text);
}

/* clFFT builds its programs inside clfftBakePlan with options of its own,
 * and PoCL prints the compiler's diagnostics ("N warnings generated.") on
 * stderr, where the library prints nothing: fd 2 goes to a temporary file
 * for the bake, and what lands there joins the context's log (PARVIS_LOG).
 * Bakes run one at a time under fft.c's cache lock; what another thread
 * writes to stderr meanwhile goes to the log too.  Without a temporary
 * file or a spare descriptor the bake runs uncaptured. */
static clfftStatus bake_quietly(pv_context *ctx, clfftPlanHandle plan, cl_command_queue *queue)
{
    fflush(stderr);
    FILE *capture = tmpfile();
    int saved = capture ? dup(STDERR_FILENO) : -1;
    if (saved >= 0 && dup2(fileno(capture), STDERR_FILENO) < 0) {
        close(saved);
        saved = -1;
    }
    clfftStatus status = clfftBakePlan(plan, 1, queue, NULL, NULL);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        log_captured(ctx, capture);
    }
    if (capture)
        fclose(capture);
    return status;
}

static pv_status make_plan(pv_context *ctx, pv_cl_fft_shape *shape, int forward,
                           clfftPlanHandle *out)
{
    size_t lengths[3] = {(size_t)shape->size[0], (size_t)shape->size[1], (size_t)shape->size[2]};
    clfftPlanHandle plan;
    pv_status status = clfft_check(
        ctx, clfftCreateDefaultPlan(&plan, shape->context, rank_of(shape->size), lengths),
        "clfftCreateDefaultPlan");
    if (status != PV_OK)
        return status;
    status = configure_plan(ctx, plan, shape, forward);
    if (status == PV_OK)
        status = clfft_check(ctx, bake_quietly(ctx, plan, &shape->queue), "clfftBakePlan");
    if (status != PV_OK) {
        clfftDestroyPlan(&plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

static void clfft_destroy(pv_context *ctx, void *plan)
{
    (void)ctx;
    clfft_pair *pair = plan;
    if (pair->forward)
        clfftDestroyPlan(&pair->forward);
    if (pair->inverse)
        clfftDestroyPlan(&pair->inverse);
    free(pair);
    live_pairs--;
    teardown_if_last();
}

static pv_status clfft_create(pv_context *ctx, pv_cl_fft_shape *shape, void **plan)
{
    pv_status status = setup_if_first(ctx);
    if (status != PV_OK)
        return status;
    clfft_pair *pair = calloc(1, sizeof *pair);
    if (!pair) {
        teardown_if_last();
        return pv_fail(ctx, PV_ERR_NOMEM, "clFFT plans: out of memory");
    }
    live_pairs++;
    status = make_plan(ctx, shape, 1, &pair->forward);
    if (status == PV_OK)
        status = make_plan(ctx, shape, 0, &pair->inverse);
    return pv_plan_hand_over(ctx, status, pair, clfft_destroy, plan);
}

static pv_status clfft_enqueue(pv_context *ctx, void *plan, int forward, cl_mem in, cl_mem out)
{
    clfft_pair *pair = plan;
    cl_command_queue queue = pv_cl_queue(ctx);
    return clfft_check(ctx,
                       clfftEnqueueTransform(forward ? pair->forward : pair->inverse,
                                             forward ? CLFFT_FORWARD : CLFFT_BACKWARD, 1, &queue,
                                             0, NULL, NULL, &in, &out, NULL),
                       forward ? "clfftEnqueueTransform(forward)"
                               : "clfftEnqueueTransform(backward)");
}

const pv_cl_fft_engine_ops pv_cl_fft_clfft_ops = {
    PV_FFT_CLFFT, "clFFT", clfft_length_ok, clfft_create, clfft_destroy, clfft_enqueue,
    "clfftEnqueueTransform", clfft_shape_ok,
};
