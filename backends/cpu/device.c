/* The CPU reference backend's device sub-table: set-up and release, the
 * copy-bandwidth probe (the host memory is the CPU backend's device
 * memory) and the compute-peak probe. */
#include "cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COPY_REPEATS 5

/* One copy of src to dst, split in contiguous chunks over the threads so
 * that every memory channel is busy, as the backend's own loops keep them. */
static void parallel_copy(char *dst, const char *src, size_t bytes, int threads)
{
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; t++) {
        size_t begin = bytes / (size_t)threads * (size_t)t;
        size_t end = t + 1 == threads ? bytes : bytes / (size_t)threads * (size_t)(t + 1);
        memcpy(dst + begin, src + begin, end - begin);
    }
}

/* Best of COPY_REPEATS timed copies after an untimed one (which also
 * faults the destination's pages in). */
static pv_status cpu_copy_bandwidth(pv_context *ctx, size_t bytes, double *gb_per_s)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return pv_fail(ctx, PV_ERR_NOMEM, "copy bandwidth: cannot allocate 2 x %zu bytes", bytes);
    }
    memset(src, 1, bytes);
    int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    parallel_copy(dst, src, bytes, threads);
    double best_ms = INFINITY;
    for (int i = 0; i < COPY_REPEATS; i++) {
        double start = pv_now_ms();
        parallel_copy(dst, src, bytes, threads);
        double ms = pv_now_ms() - start;
        best_ms = ms < best_ms ? ms : best_ms;
    }
    free(src);
    free(dst);
    /* A copy too short for the clock: report the rate of one clock tick. */
    if (best_ms <= 0.0)
        best_ms = 1e-6;
    *gb_per_s = 2.0 * (double)bytes / (best_ms * 1e-3) * 1e-9;
    return PV_OK;
}

/* The compute probe: each thread runs PEAK_LANES independent chains of
 * PEAK_STEPS steps (independent lanes let the compiler fill the vector
 * units and hide each operation's latency, as the backend's own loops
 * do); a and b come from the caller so no step folds away.  The lanes'
 * sum is returned so that none is dead. */
#define PEAK_LANES 32
#define PEAK_STEPS (1 << 16)
#define PEAK_REPEATS 5

static float float_chains(float seed, float a, float b)
{
    float x[PEAK_LANES];
    for (int l = 0; l < PEAK_LANES; l++)
        x[l] = seed + (float)l * 1e-3f;
    for (int s = 0; s < PEAK_STEPS; s++)
        for (int l = 0; l < PEAK_LANES; l++)
            x[l] = x[l] * a + b;
    float sum = 0.0f;
    for (int l = 0; l < PEAK_LANES; l++)
        sum += x[l];
    return sum;
}

static uint32_t int_chains(uint32_t seed, uint32_t a, uint32_t b)
{
    uint32_t x[PEAK_LANES];
    for (int l = 0; l < PEAK_LANES; l++)
        x[l] = seed + (uint32_t)l;
    for (int s = 0; s < PEAK_STEPS; s++)
        for (int l = 0; l < PEAK_LANES; l++)
            x[l] = (x[l] + a) ^ b;
    uint32_t sum = 0;
    for (int l = 0; l < PEAK_LANES; l++)
        sum += x[l];
    return sum;
}

/* One probe run on every thread; *sink keeps the results alive. */
static void run_chains(pv_compute_kind kind, int threads, volatile float *sink)
{
    float total = 0.0f;
    #pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : total)
    for (int t = 0; t < threads; t++) {
        if (kind == PV_COMPUTE_FLOAT)
            total += float_chains((float)t, 0.999f + *sink * 0.0f, 1e-3f);
        else
            total += (float)int_chains((uint32_t)t, 0x9e3779b9u + (uint32_t)*sink, 0x7f4a7c15u);
    }
    *sink = total * 0.0f;
}

static pv_status cpu_compute_peak(pv_context *ctx, pv_compute_kind kind, double *gops)
{
    int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    volatile float sink = 0.0f;
    run_chains(kind, threads, &sink);
    double best_ms = INFINITY;
    for (int i = 0; i < PEAK_REPEATS; i++) {
        double start = pv_now_ms();
        run_chains(kind, threads, &sink);
        double ms = pv_now_ms() - start;
        best_ms = ms < best_ms ? ms : best_ms;
    }
    if (best_ms <= 0.0)
        best_ms = 1e-6;
    /* Two operations a step: multiply and add, or add and exclusive or. */
    double ops = 2.0 * PEAK_LANES * (double)PEAK_STEPS * threads;
    *gops = ops / (best_ms * 1e-3) * 1e-9;
    return PV_OK;
}

/* Only the probes: the host needs no set-up (the front end describes it in ctx->device)
 * and the CPU backend's loops take no launch parameters. */
const pv_device_ops pv_cpu_device_ops = {PV_DEVICE_PROBE_SLOTS(PV_OPS_BIND, cpu_)};
