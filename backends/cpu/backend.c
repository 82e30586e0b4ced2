/* The CPU reference backend's dispatch table, and its copy-bandwidth
 * probe (the host memory is the CPU backend's device memory). */
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

const pv_backend_ops pv_cpu_backend = {
    .name = "cpu",
    .init = NULL,
    .release = NULL,
    .gaussian2d = pv_cpu_gaussian2d,
    .gaussian3d = pv_cpu_gaussian3d,
    .gradient2d = pv_cpu_gradient2d,
    .gradient3d = pv_cpu_gradient3d,
    .stereo_sad = pv_cpu_stereo_sad,
    .stereo_bp = pv_cpu_stereo_bp,
    .pc_create = pv_cpu_pc_create,
    .pc_destroy = pv_cpu_pc_destroy,
    .pc_reference = pv_cpu_pc_reference,
    .pc_correlate = pv_cpu_pc_correlate,
    .pc_upsample = pv_cpu_pc_upsample,
    .normxcorr2 = pv_cpu_normxcorr2,
    .flow_create = pv_cpu_flow_create,
    .flow_destroy = pv_cpu_flow_destroy,
    .flow_load = pv_cpu_flow_load,
    .flow_begin_level = pv_cpu_flow_begin_level,
    .flow_gradients = pv_cpu_flow_gradients,
    .flow_resample = pv_cpu_flow_resample,
    .flow_tensor = pv_cpu_flow_tensor,
    .flow_jacobi = pv_cpu_flow_jacobi,
    .flow_read = pv_cpu_flow_read,
    .flow_warp = pv_cpu_flow_warp,
    .sift_create = pv_cpu_sift_create,
    .sift_destroy = pv_cpu_sift_destroy,
    .sift_detect = pv_cpu_sift_detect,
    .sift_nearest = pv_cpu_sift_nearest,
    .oct_create = pv_cpu_oct_create,
    .oct_destroy = pv_cpu_oct_destroy,
    .oct_load = pv_cpu_oct_load,
    .oct_reference = pv_cpu_oct_reference,
    .oct_spectra = pv_cpu_oct_spectra,
    .oct_coarse = pv_cpu_oct_coarse,
    .oct_fine = pv_cpu_oct_fine,
    .oct_place = pv_cpu_oct_place,
    .oct_read = pv_cpu_oct_read,
    .copy_bandwidth = cpu_copy_bandwidth,
};
