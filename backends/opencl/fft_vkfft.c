/* The VkFFT engine of the OpenCL FFT layer (VkFFT's OpenCL backend,
 * header-only; built when configure finds vkFFT.h).
 *
 * One VkFFT application holds both directions: out of place, the real
 * blocks are VkFFT's unpadded ("formatted") input buffer and the half
 * spectra its main buffer; the inverse writes back into the input buffer.
 * VkFFT generates and compiles its kernels in initializeVkFFT, so pairs
 * are made once per key and cached by fft.c.
 *
 * VkFFT keeps the addresses of the handles and sizes it is given (device,
 * context, queue, buffer sizes, and at launch the cl_mem handles) and
 * reads them again later; they all live in this file's plan struct or in
 * fft.c's cache entry, never on the stack.  It only re-reads which buffers
 * to bind when those addresses change, so every launch passes the same two
 * slots, filled with the launch's buffers just before. */
#define VKFFT_BACKEND 3
#include "fft_engine.h"

#include <stdlib.h>
/* vkFFT.h is one large header of static functions; most of them are
 * unused here and some of its code trips -Wextra. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#include <vkFFT.h>
#pragma GCC diagnostic pop

typedef struct vkfft_pair {
    VkFFTApplication app;
    cl_command_queue queue;
    uint64_t spectrum_bytes;  /* the whole batch */
    uint64_t real_bytes;
    cl_mem real_slot;         /* this launch's buffers (see the file comment) */
    cl_mem spectrum_slot;
} vkfft_pair;

/* VkFFT transforms any length: factors past 13 go through Bluestein. */
static int vkfft_length_ok(int n)
{
    return n >= 1;
}

static pv_status vkfft_check(pv_context *ctx, VkFFTResult result, const char *call)
{
    if (result == VKFFT_SUCCESS)
        return PV_OK;
    pv_status status = result == VKFFT_ERROR_MALLOC_FAILED ? PV_ERR_NOMEM : PV_ERR_OPENCL;
    return pv_fail(ctx, status, "%s failed: VkFFTResult %d", call, (int)result);
}

static int rank_of(const int size[3])
{
    return size[2] > 1 ? 3 : size[1] > 1 ? 2 : 1;
}

/* Strides in elements: [0] between rows, [1] between planes, [2] between
 * the batch's transforms; real rows of nx, complex rows of nx / 2 + 1. */
static void describe_layout(const pv_cl_fft_shape *shape, vkfft_pair *pair,
                            VkFFTConfiguration *config)
{
    uint64_t nx = (uint64_t)shape->size[0], ny = (uint64_t)shape->size[1];
    uint64_t kx = nx / 2 + 1;
    config->FFTdim = (uint64_t)rank_of(shape->size);
    for (int a = 0; a < 3; a++)
        config->size[a] = (uint64_t)shape->size[a];
    config->performR2C = 1;
    config->isInputFormatted = 1;
    config->inverseReturnToInputBuffer = 1;
    config->numberBatches = (uint64_t)shape->batch;
    config->inputBufferStride[0] = nx;
    config->inputBufferStride[1] = nx * ny;
    config->inputBufferStride[2] = shape->real_count;
    config->bufferStride[0] = kx;
    config->bufferStride[1] = kx * ny;
    config->bufferStride[2] = shape->complex_count;
    pair->spectrum_bytes = (uint64_t)shape->complex_count * 2 * sizeof(float) * shape->batch;
    pair->real_bytes = (uint64_t)shape->real_count * sizeof(float) * shape->batch;
    config->bufferSize = &pair->spectrum_bytes;
    config->inputBufferSize = &pair->real_bytes;
}

static void vkfft_destroy(void *plan)
{
    vkfft_pair *pair = plan;
    if (!pair)
        return;
    deleteVkFFT(&pair->app);
    free(pair);
}

static pv_status vkfft_create(pv_context *ctx, pv_cl_fft_shape *shape, void **plan)
{
    vkfft_pair *pair = calloc(1, sizeof *pair);
    if (!pair)
        return pv_fail(ctx, PV_ERR_NOMEM, "VkFFT plans: out of memory");
    VkFFTConfiguration config = {0};
    describe_layout(shape, pair, &config);
    pair->queue = shape->queue;
    config.device = &shape->device;
    config.context = &shape->context;
    config.commandQueue = &pair->queue;
    pv_status status = vkfft_check(ctx, initializeVkFFT(&pair->app, config), "initializeVkFFT");
    if (status != PV_OK) {
        /* initializeVkFFT frees what it made before it fails. */
        free(pair);
        return status;
    }
    *plan = pair;
    return PV_OK;
}

static pv_status vkfft_enqueue(pv_context *ctx, void *plan, int forward, cl_mem in, cl_mem out)
{
    vkfft_pair *pair = plan;
    VkFFTLaunchParams launch = {0};
    pair->queue = pv_cl_queue(ctx);
    pair->real_slot = forward ? in : out;
    pair->spectrum_slot = forward ? out : in;
    launch.commandQueue = &pair->queue;
    launch.inputBuffer = &pair->real_slot;
    launch.buffer = &pair->spectrum_slot;
    /* One enqueue for PARVIS_FAULT: the kernels VkFFT launches inside are
     * its own. */
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err != CL_SUCCESS)
        return pv_cl_check(ctx, err, "VkFFTAppend");
    return vkfft_check(ctx, VkFFTAppend(&pair->app, forward ? -1 : 1, &launch),
                       forward ? "VkFFTAppend(forward)" : "VkFFTAppend(inverse)");
}

const pv_cl_fft_engine_ops pv_cl_fft_vkfft_ops = {
    PV_FFT_VKFFT, "VkFFT", vkfft_length_ok, vkfft_create, vkfft_destroy, vkfft_enqueue,
};
