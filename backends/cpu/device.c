/* The CPU reference backend's device sub-table: set-up and release, and the
 * copy-bandwidth probe (the host memory is the CPU backend's device
 * memory). */
#include "cpu.h"

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

/* The host needs no set-up (the front end describes it in ctx->device)
 * and the CPU backend's loops take no launch parameters. */
const pv_device_ops pv_cpu_device_ops = {
    .list = NULL,
    .init = NULL,
    .release = NULL,
    .copy_bandwidth = cpu_copy_bandwidth,
    .param_family = NULL,
    .param_get = NULL,
    .param_set = NULL,
    .param_list = NULL,
    .param_reset = NULL,
};
