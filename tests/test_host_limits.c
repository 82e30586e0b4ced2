/* Host memory limits: under `ulimit -v` (RLIMIT_AS) belief propagation
 * budgets against what the process may still map, on the CPU backend and
 * on an OpenCL device of CPU type (PoCL, whose buffers are host memory and
 * which aborted the process when a tile's buffers could not be had).  Each
 * case runs in a forked child under an alarm, so an abort or a hang
 * fails the test instead of ending or blocking the suite.  The suite makes
 * no OpenCL context of its own in the parent: a child forked after that
 * could not use OpenCL. */
#include "test_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define CHILD_SECONDS 120
/* Room left above what the child maps when the limit is set. */
#define HEADROOM ((uint64_t)512 << 20)

static uint64_t mapped_bytes(void)
{
    unsigned long long pages = 0;
    FILE *file = fopen("/proc/self/statm", "r");
    if (!file)
        return 0;
    int ok = fscanf(file, "%llu", &pages) == 1;
    fclose(file);
    return ok ? (uint64_t)pages * (uint64_t)sysconf(_SC_PAGE_SIZE) : 0;
}

/* 1 when every OpenCL device is of CPU type (PoCL here). */
static int only_cpu_devices(void)
{
    pv_device_info devices[16];
    int count = 0;
    if (pv_device_list(devices, 16, &count) != PV_OK || count < 1 || count > 16)
        return 0;
    for (int i = 0; i < count; i++)
        if (devices[i].type != PV_DEVICE_CPU)
            return 0;
    return 1;
}

static void run_bp_once(pv_context *ctx, int width, int height, int ndisp, pv_status *status)
{
    pv_image left, right, disparity;
    if (pv_image_alloc(&left, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&right, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&disparity, width, height, PV_PIXEL_F32) != PV_OK)
        _exit(10);
    tu_fill_random(&left, 1u);
    tu_fill_random(&right, 2u);
    pv_bp_params params;
    pv_bp_params_default(&params);
    params.ndisp = ndisp;
    params.levels = 2;
    params.iterations = 1;
    *status = pv_stereo_bp(ctx, &left, &right, &params, &disparity);
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
}

/* In the child: a context of the backend arg points to, its kernels built
 * by a small run, then RLIMIT_AS at what it maps plus HEADROOM.  BP's
 * plan must see at most that headroom, and a run whose whole estimate
 * is more must tile or refuse, not crash.  Exit 0 on
 * success, 77 when the backend cannot be had. */
static void bp_under_address_limit(void *arg)
{
    pv_backend_kind kind = *(const pv_backend_kind *)arg;
    if (kind == PV_BACKEND_OPENCL && !only_cpu_devices())
        _exit(77); /* the context would take a GPU, whose memory is its own */
    pv_context *ctx = tu_context(kind);
    if (!ctx)
        _exit(77);
    pv_status status;
    run_bp_once(ctx, 64, 32, 8, &status);
    if (status != PV_OK)
        _exit(11);
    struct rlimit limit = {(rlim_t)(mapped_bytes() + HEADROOM), RLIM_INFINITY};
    limit.rlim_max = limit.rlim_cur;
    if (setrlimit(RLIMIT_AS, &limit) != 0)
        _exit(12);
    pv_bp_params params;
    pv_bp_params_default(&params);
    params.ndisp = 448;
    pv_bp_memory_info info;
    if (pv_bp_memory_plan(ctx, 448, 128, &params, &info) != PV_OK)
        _exit(13);
    if (info.available_bytes > HEADROOM || info.whole_bytes <= HEADROOM) {
        fprintf(stderr, "available %zu bytes under a %llu-byte headroom, whole %zu\n",
                info.available_bytes, (unsigned long long)HEADROOM, info.whole_bytes);
        _exit(14);
    }
    run_bp_once(ctx, 448, 128, 448, &status);
    if (status != PV_OK && status != PV_ERR_DEVICE_MEMORY && status != PV_ERR_NOMEM) {
        fprintf(stderr, "stereo_bp: %s\n", pv_context_last_error(ctx));
        _exit(15);
    }
    _exit(0);
}

static void check_backend(pv_backend_kind kind)
{
    if (kind == PV_BACKEND_OPENCL && tu_skip_opencl())
        skip();
    int result = tu_run_in_child(bp_under_address_limit, &kind, CHILD_SECONDS);
    if (result == 77)
        skip();
    if (result != 0)
        fail_msg("BP under RLIMIT_AS on %s: the child ended with %d%s", pv_backend_name(kind),
                 result, result == 128 + SIGABRT ? " (aborted)" : "");
}

static void test_bp_budget_cpu(void **state)
{
    (void)state;
    check_backend(PV_BACKEND_CPU);
}

static void test_bp_budget_opencl_cpu_device(void **state)
{
    (void)state;
    check_backend(PV_BACKEND_OPENCL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bp_budget_cpu),
        cmocka_unit_test(test_bp_budget_opencl_cpu_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
