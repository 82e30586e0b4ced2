/* Core: status strings, version, images, contexts and backend selection,
 * device listing, timing, and the OpenCL runtime's program binary cache. */
#include "test_util.h"
#include "../lib/core/internal.h"
#include "../lib/core/tolerance.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PV_HAVE_OPENCL
#include "../backends/opencl/runtime/runtime.h"
#endif

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(pv_status_string(PV_OK), "ok");
    assert_string_equal(pv_status_string(PV_ERR_INVALID), "invalid argument");
    assert_string_equal(pv_status_string(PV_ERR_MISMATCH), "cross-check mismatch");
    assert_string_equal(pv_status_string((pv_status)-999), "unknown status");
}

static void test_version(void **state)
{
    (void)state;
    int major = -1, minor = -1, patch = -1;
    pv_version_numbers(&major, &minor, &patch);
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", major, minor, patch);
    assert_string_equal(pv_version(), expected);
    assert_string_equal(pv_version(), PV_VERSION_STRING);
    pv_version_numbers(NULL, NULL, NULL);
}

static void test_image_alloc_and_validity(void **state)
{
    (void)state;
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, 7, 5, PV_PIXEL_F32), PV_OK);
    assert_int_equal(image.stride, 7);
    assert_true(pv_image_get(&image, 6, 4) == 0.0f);
    assert_true(isnan(pv_image_get(&image, 7, 0)));
    pv_image_free(&image);
    assert_null(image.data);
    assert_int_equal(pv_image_alloc(&image, 0, 5, PV_PIXEL_U8), PV_ERR_INVALID);
    assert_int_equal(pv_image_alloc(&image, 5, 5, (pv_pixel_type)9), PV_ERR_INVALID);
    assert_int_equal(pv_image_alloc(NULL, 5, 5, PV_PIXEL_U8), PV_ERR_INVALID);
    assert_int_equal(pv_image_alloc(&image, 1 << 30, 1 << 30, PV_PIXEL_F32) == PV_OK, 0);
    pv_volume volume;
    assert_int_equal(pv_volume_alloc(&volume, 4, 3, 2), PV_OK);
    assert_int_equal(volume.stride_y, 4);
    assert_int_equal(volume.stride_z, 12);
    pv_volume_free(&volume);
    assert_int_equal(pv_volume_alloc(&volume, 4, -3, 2), PV_ERR_INVALID);
    assert_true(strlen(pv_last_error()) > 0);
}

static void test_cpu_context(void **state)
{
    (void)state;
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    assert_non_null(ctx);
    assert_int_equal(pv_context_backend(ctx), PV_BACKEND_CPU);
    assert_non_null(strstr(pv_context_device_name(ctx), "CPU"));
    assert_true(pv_context_cpu_threads(ctx) >= 1);
    assert_int_equal(pv_context_crosscheck(ctx), 0);
    assert_int_equal(pv_context_set_crosscheck(ctx, 1), PV_OK);
    assert_int_equal(pv_context_crosscheck(ctx), 1);
    pv_timing timing;
    assert_int_equal(pv_context_last_timing(ctx, &timing), PV_OK);
    assert_int_equal(pv_context_last_timing(ctx, NULL), PV_ERR_INVALID);
    assert_string_equal(pv_context_build_log(ctx), "");
    pv_context_destroy(ctx);
    pv_context_destroy(NULL);
}

static void test_context_bad_arguments(void **state)
{
    (void)state;
    assert_int_equal(pv_context_create(NULL, NULL), PV_ERR_INVALID);
    pv_context *ctx = (pv_context *)0x1;
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = (pv_backend_kind)7;
    assert_int_equal(pv_context_create(&ctx, &options), PV_ERR_INVALID);
    assert_null(ctx);
    pv_context_options_default(&options);
    options.cpu_threads = -2;
    assert_int_equal(pv_context_create(&ctx, &options), PV_ERR_INVALID);
    assert_int_equal(pv_context_set_crosscheck(NULL, 1), PV_ERR_INVALID);
}

static void test_environment_overrides(void **state)
{
    (void)state;
    if (tu_skip_opencl())
        skip();
    pv_context *ctx = NULL;
    setenv("PARVIS_BACKEND", "cpu", 1);
    setenv("PARVIS_CROSSCHECK", "1", 1);
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    assert_int_equal(pv_context_create(&ctx, &options), PV_OK);
    assert_int_equal(pv_context_backend(ctx), PV_BACKEND_CPU);
    assert_int_equal(pv_context_crosscheck(ctx), 1);
    pv_context_destroy(ctx);
    setenv("PARVIS_BACKEND", "gpu-please", 1);
    assert_int_equal(pv_context_create(&ctx, NULL), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "PARVIS_BACKEND"));
    unsetenv("PARVIS_BACKEND");
    unsetenv("PARVIS_CROSSCHECK");
    setenv("PARVIS_DEVICE", "no-such-device-name", 1);
    assert_int_equal(pv_context_create(&ctx, NULL), PV_ERR_NO_DEVICE);
    unsetenv("PARVIS_DEVICE");
    /* The kernel timing a context starts with (on the CPU backend, which
     * every build has). */
    options.backend = PV_BACKEND_CPU;
    setenv("PARVIS_KERNEL_TIMING", "each", 1);
    assert_int_equal(pv_context_create(&ctx, &options), PV_OK);
    assert_int_equal(pv_context_kernel_timing(ctx), PV_KERNEL_TIMING_EACH);
    pv_context_destroy(ctx);
    setenv("PARVIS_KERNEL_TIMING", "runs", 1);
    assert_int_equal(pv_context_create(&ctx, &options), PV_OK);
    assert_int_equal(pv_context_kernel_timing(ctx), PV_KERNEL_TIMING_RUNS);
    pv_context_destroy(ctx);
    setenv("PARVIS_KERNEL_TIMING", "sometimes", 1);
    ctx = NULL;
    assert_int_equal(pv_context_create(&ctx, &options), PV_ERR_INVALID);
    assert_null(ctx);
    assert_non_null(strstr(pv_last_error(), "PARVIS_KERNEL_TIMING"));
    unsetenv("PARVIS_KERNEL_TIMING");
}

static void test_auto_selection(void **state)
{
    (void)state;
    if (tu_skip_opencl())
        skip();
    pv_device_info devices[16];
    int count = -1, gpus = 0;
    assert_int_equal(pv_device_list(devices, 16, &count), PV_OK);
    assert_true(count >= 0);
    for (int i = 0; i < count && i < 16; i++) {
        assert_int_equal(devices[i].index, i);
        assert_true(strlen(devices[i].name) > 0);
        gpus += devices[i].type == PV_DEVICE_GPU;
    }
    assert_int_equal(pv_device_list(NULL, 2, &count), PV_ERR_INVALID);
    assert_int_equal(pv_device_list(devices, 2, NULL), PV_ERR_INVALID);
    pv_context *ctx = tu_context(PV_BACKEND_AUTO);
    assert_non_null(ctx);
    /* AUTO takes a GPU when there is one, and never a CPU OpenCL device. */
    assert_int_equal(pv_context_backend(ctx), gpus > 0 ? PV_BACKEND_OPENCL : PV_BACKEND_CPU);
    assert_true(strlen(pv_context_selection_note(ctx)) > 0);
    pv_context_destroy(ctx);
}

static void test_opencl_context(void **state)
{
    (void)state;
    if (tu_skip_opencl())
        skip();
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    int count = 0;
    pv_device_list(NULL, 0, &count);
    if (count == 0) {
        assert_null(ctx);
        skip();
    }
    assert_non_null(ctx);
    assert_int_equal(pv_context_backend(ctx), PV_BACKEND_OPENCL);
    pv_context_destroy(ctx);
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    options.device_index = count + 3;
    assert_int_equal(pv_context_create(&ctx, &options), PV_ERR_NO_DEVICE);
}

/* The copy probe: bad arguments leave the output alone; a real copy on
 * each backend gives a positive, finite rate. */
static void test_copy_bandwidth(void **state)
{
    (void)state;
    pv_context *cpu = tu_context(PV_BACKEND_CPU);
    assert_non_null(cpu);
    double rate = -1.0;
    assert_int_equal(pv_context_copy_bandwidth(NULL, 1024, &rate), PV_ERR_INVALID);
    assert_int_equal(pv_context_copy_bandwidth(cpu, 1024, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_context_copy_bandwidth(cpu, 0, &rate), PV_ERR_INVALID);
    assert_true(rate == -1.0);
    assert_non_null(strstr(pv_context_last_error(cpu), "bytes"));
    assert_int_equal(pv_context_copy_bandwidth(cpu, (size_t)8 << 20, &rate), PV_OK);
    assert_true(rate > 0.0 && isfinite(rate));
    pv_context_destroy(cpu);
    pv_context *opencl = tu_skip_opencl() ? NULL : tu_context(PV_BACKEND_OPENCL);
    if (!opencl)
        return;
    rate = -1.0;
    assert_int_equal(pv_context_copy_bandwidth(opencl, 0, &rate), PV_ERR_INVALID);
    assert_int_equal(pv_context_copy_bandwidth(opencl, (size_t)8 << 20, &rate), PV_OK);
    assert_true(rate > 0.0 && isfinite(rate));
    pv_context_destroy(opencl);
}

/* A dependent scalar chain x = x * a + b on one thread: 2 FLOPs a step,
 * one step at a time.  The compute probe, with independent chains on
 * every thread, must do at least as well; GFLOP/s. */
static double scalar_chain_gflops(void)
{
    volatile float a = 0.999f, b = 1e-3f;
    const int steps = 1 << 22;
    float x = 0.5f, fa = a, fb = b;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int s = 0; s < steps; s++)
        x = x * fa + fb;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    a = x;
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return 2.0 * steps / (seconds > 0.0 ? seconds : 1e-9) * 1e-9;
}

/* What a CPU could do at the very most: 64 operations a cycle (two
 * 16-lane fused multiply-add units) at 6 GHz on every online core.  A
 * probe the compiler folded away would claim more. */
static double cpu_ceiling_gops(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return 64.0 * 6.0 * (double)(cores > 0 ? cores : 1);
}

/* The probe's rate on ctx, checked against the scalar floor (a quarter
 * of it: the 2 shared cores of CI can take the probe's best runs away)
 * and, on CPU devices, against the ceiling. */
static void check_compute_peak(pv_context *ctx, int cpu_device, double floor_gflops)
{
    for (int kind = PV_COMPUTE_FLOAT; kind <= PV_COMPUTE_INT; kind++) {
        double gops = -1.0;
        assert_int_equal(pv_context_compute_peak(ctx, (pv_compute_kind)kind, &gops), PV_OK);
        assert_true(isfinite(gops) && gops > 0.0);
        if (kind == PV_COMPUTE_FLOAT)
            assert_true(gops >= 0.25 * floor_gflops);
        if (cpu_device)
            assert_true(gops <= cpu_ceiling_gops());
    }
}

/* The compute probe: bad arguments leave the output alone; each backend's
 * rates lie between a scalar chain's and what the hardware can do. */
static void test_compute_peak(void **state)
{
    (void)state;
    pv_context *cpu = tu_context(PV_BACKEND_CPU);
    assert_non_null(cpu);
    double gops = -1.0;
    assert_int_equal(pv_context_compute_peak(NULL, PV_COMPUTE_FLOAT, &gops), PV_ERR_INVALID);
    assert_int_equal(pv_context_compute_peak(cpu, PV_COMPUTE_FLOAT, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_context_compute_peak(cpu, (pv_compute_kind)7, &gops), PV_ERR_INVALID);
    assert_true(gops == -1.0);
    assert_non_null(strstr(pv_context_last_error(cpu), "kind"));
    double floor_gflops = scalar_chain_gflops();
    check_compute_peak(cpu, 1, floor_gflops);
    pv_context_destroy(cpu);
    pv_context *opencl = tu_skip_opencl() ? NULL : tu_context(PV_BACKEND_OPENCL);
    if (!opencl)
        return;
    pv_device_info devices[16];
    int count = 0, cpu_device = 0;
    if (pv_device_list(devices, 16, &count) == PV_OK)
        for (int i = 0; i < count && i < 16; i++)
            if (strcmp(devices[i].name, pv_context_device_name(opencl)) == 0)
                cpu_device = devices[i].type == PV_DEVICE_CPU;
    check_compute_peak(opencl, cpu_device, cpu_device ? floor_gflops : 0.0);
    pv_context_destroy(opencl);
}

#ifdef PV_HAVE_OPENCL
static int count_cache_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".clbin") != NULL && strstr(e->d_name, ".tmp") == NULL;
    closedir(d);
    return n;
}

static void corrupt_cache_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".clbin"))
            continue;
        char path[4096 + 256 + 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        fseek(f, 40, SEEK_SET);
        fputs("garbage garbage garbage", f);
        fclose(f);
    }
    closedir(d);
}

static pv_status blur_once(void)
{
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    pv_image src, dst;
    pv_image_alloc(&src, 16, 8, PV_PIXEL_F32);
    pv_image_alloc(&dst, 16, 8, PV_PIXEL_F32);
    tu_fill_random(&src, 3);
    pv_status status = pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0);
    image_list_free(&src, &dst, NULL);
    pv_context_destroy(ctx);
    return status;
}

/* Binaries land in $XDG_CACHE_HOME/parvis; a corrupt file is detected by
 * its checksum and rebuilt from source. */
static void test_binary_cache(void **state)
{
    (void)state;
    if (tu_skip_opencl() || !tu_have_opencl())
        skip();
    const char *root = tu_tmp_path("xdg-cache");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/parvis", root);
    char command[8300];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    assert_int_equal(system(command), 0);
    char *saved = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    setenv("XDG_CACHE_HOME", root, 1);
    assert_int_equal(blur_once(), PV_OK);
    int files = count_cache_files(dir);
    assert_true(files >= 1);
    corrupt_cache_files(dir);
    assert_int_equal(blur_once(), PV_OK);
    assert_int_equal(count_cache_files(dir), files);
    assert_int_equal(blur_once(), PV_OK);
    if (saved)
        setenv("XDG_CACHE_HOME", saved, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(saved);
}

/* A build failure returns PV_ERR_BUILD, keeps the compiler's log and quotes
 * it from the first error on. */
static void test_build_failure_keeps_log(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    cl_kernel kernel;
    pv_status status = pv_cl_kernel(ctx, "filter", "-DPV_FORCE_BUILD_ERROR=1 -Dfloat=int*)(",
                                    "gaussian_rows", &kernel);
    assert_int_equal(status, PV_ERR_BUILD);
    assert_non_null(strstr(pv_context_last_error(ctx), "clBuildProgram"));
    assert_true(strlen(pv_context_build_log(ctx)) > 0);
    /* the message quotes the log from its first error on, not the
     * warnings that compilers list before it */
    const char *quoted = strstr(pv_context_last_error(ctx), "log from the first error: ");
    assert_non_null(quoted);
    assert_non_null(strstr(quoted + strlen("log from the first error: "), "error"));
    assert_int_equal(pv_cl_kernel(ctx, "no_such_program", "", "k", &kernel), PV_ERR_INVALID);
    pv_context_destroy(ctx);
}

static void round_trip_volume(pv_context *ctx, int nx, int ny, int nz)
{
    pv_volume in = tu_random_volume(nx, ny, nz, 77), out;
    assert_int_equal(pv_volume_alloc(&out, nx, ny, nz), PV_OK);
    cl_mem buffer = NULL;
    assert_int_equal(pv_cl_upload_volume(ctx, &in, &buffer), PV_OK);
    assert_int_equal(pv_cl_download_volume(ctx, buffer, &out), PV_OK);
    assert_int_equal(pv_cl_finish(ctx), PV_OK);
    size_t bytes = (size_t)nx * ny * nz * sizeof(float);
    assert_memory_equal(in.data, out.data, bytes);
    pv_cl_release(&buffer);
    pv_volume_free(&in);
    pv_volume_free(&out);
}

/* Large transfers are staged through pinned chunks of 16 MiB: a 42 MB
 * volume takes three chunks each way; a forced threshold of 1 byte sends
 * a small one through a partial chunk, and 0 turns staging off. */
static const struct pinned_trip {
    const char *pinned_min; /* PARVIS_PINNED_MIN, or NULL: unset */
    int size[3];
} pinned_trips[] = {
    {NULL, {256, 256, 160}},
    {"1", {17, 5, 3}},
    {"0", {256, 256, 80}},
};

static void test_pinned_transfers(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    for (size_t i = 0; i < sizeof pinned_trips / sizeof pinned_trips[0]; i++) {
        const struct pinned_trip *t = &pinned_trips[i];
        tu_set_env("PARVIS_PINNED_MIN", t->pinned_min);
        round_trip_volume(ctx, t->size[0], t->size[1], t->size[2]);
    }
    tu_set_env("PARVIS_PINNED_MIN", NULL);
    pv_context_destroy(ctx);
}

static void test_launch_parameters(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    int fallback = pv_cl_param(ctx, "sad", "NO_SUCH_PARAM", 1234);
    assert_int_equal(fallback, 1234);
    assert_int_equal(pv_cl_param_set(ctx, "sad", "NO_SUCH_PARAM", 3), PV_ERR_INVALID);
    char defines[512] = "";
    assert_int_equal(pv_cl_param_defines(ctx, "sad", defines, sizeof defines), PV_OK);
    assert_non_null(strstr(defines, "-D"));
    pv_context_destroy(ctx);
}

/* peak_int's output (kernels/device.cl) for work item `item`, on the host:
 * eight chains x = (x + a) ^ b from item + k, summed (uint wraps alike). */
static cl_uint peak_int_expected(cl_uint item, cl_uint a, cl_uint b, int steps)
{
    cl_uint x[8];
    for (int k = 0; k < 8; k++)
        x[k] = item + (cl_uint)k;
    for (int s = 0; s < steps; s++)
        for (int k = 0; k < 8; k++)
            x[k] = (x[k] + a) ^ b;
    return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

#define LAUNCH_ITEMS 64

static void assert_peak_int(pv_context *ctx, cl_mem out, cl_uint a, cl_uint b, int steps)
{
    cl_uint got[LAUNCH_ITEMS];
    assert_int_equal(pv_cl_read(ctx, out, 0, sizeof got, got), PV_OK);
    assert_int_equal(pv_cl_finish(ctx), PV_OK);
    for (cl_uint i = 0; i < LAUNCH_ITEMS; i++)
        assert_int_equal(got[i], peak_int_expected(i, a, b, steps));
}

/* The runtime's one launch path (runtime_launch.c): a kernel launched with
 * an argument array, with a gathered list, and waited for, each against
 * the host's answer; bad lists and shapes refused before anything is
 * enqueued, the output left as it was. */
static void test_launch_arguments(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    cl_kernel kernel;
    cl_mem out = NULL;
    assert_int_equal(pv_cl_kernel(ctx, "device", NULL, "peak_int", &kernel), PV_OK);
    assert_int_equal(pv_cl_buffer(ctx, CL_MEM_READ_WRITE, LAUNCH_ITEMS * sizeof(cl_uint), &out),
                     PV_OK);
    const size_t global = LAUNCH_ITEMS, local = 16;

    cl_uint a = 7u, b = 0x55aa55aau;
    cl_int steps = 5;
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(out), PV_CL_ARG(a), PV_CL_ARG(b),
                                     PV_CL_ARG(steps)};
    assert_int_equal(PV_CL_ARG_COUNT(args), 4);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, args, PV_CL_ARG_COUNT(args), 1, &global,
                                       &local),
                     PV_OK);
    assert_peak_int(ctx, out, a, b, steps);

    /* The same kernel through a gathered list: every argument set again. */
    const cl_mem *const buffers[1] = {&out};
    const cl_int ints[3] = {3, 0x0f0f0f0f, 9};
    pv_cl_arg_list list = {.count = 0};
    pv_cl_args_buffers(&list, buffers, 1);
    pv_cl_args_ints(&list, ints, 3);
    assert_int_equal(list.count, 4);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, list.item, list.count, 1, &global, &local),
                     PV_OK);
    assert_peak_int(ctx, out, 3u, 0x0f0f0f0fu, 9);

    /* Waited for, outside the call's timing: its device time returned. */
    double ms = -1.0;
    assert_int_equal(pv_cl_launch_waited(ctx, kernel, args, PV_CL_ARG_COUNT(args), 1, &global,
                                         &local, &ms),
                     PV_OK);
    assert_true(ms >= 0.0);
    assert_peak_int(ctx, out, a, b, steps);

    /* Refused: a list that overflowed, counts out of range, no array, no
     * dimensions.  Nothing runs: the output keeps the last answer. */
    pv_cl_arg_list full = {.count = 0};
    for (int i = 0; i <= PV_CL_ARGS_MAX; i++)
        pv_cl_args_ints(&full, &steps, 1);
    assert_int_equal(full.count, PV_CL_ARGS_OVERFLOW);
    pv_cl_args_add(&full, sizeof out, &out); /* stays overflowed */
    assert_int_equal(full.count, PV_CL_ARGS_OVERFLOW);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, full.item, full.count, 1, &global, &local),
                     PV_ERR_INVALID);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, args, PV_CL_ARGS_MAX + 1, 1, &global, &local),
                     PV_ERR_INVALID);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, NULL, 4, 1, &global, &local), PV_ERR_INVALID);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, args, 4, 0, &global, &local), PV_ERR_INVALID);
    assert_int_equal(pv_cl_launch_args(ctx, kernel, args, 4, 4, &global, &local), PV_ERR_INVALID);
    assert_int_equal(pv_cl_launch_waited(ctx, kernel, args, -1, 1, &global, &local, &ms),
                     PV_ERR_INVALID);
    assert_peak_int(ctx, out, a, b, steps);

    pv_cl_release(&out);
    pv_context_destroy(ctx);
}
#endif

/* The cross-check oracle helper (lib/core/crosscheck.c): scratch outputs
 * shaped like the device's, the call's timing put back after the oracle's
 * run, and the outputs compared against a named tolerance. */
static void fill_image(pv_image *image, float value)
{
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            ((float *)image->data)[(ptrdiff_t)y * image->stride + x] = value;
}

static void fill_volume(pv_volume *volume, float value)
{
    for (int z = 0; z < volume->nz; z++)
        for (int y = 0; y < volume->ny; y++)
            for (int x = 0; x < volume->nx; x++)
                volume->data[z * volume->stride_z + y * volume->stride_y + x] = value;
}

/* One oracle run over `device` whose CPU twin differs at one pixel by
 * `relative` of the value 100; returns what pv_oracle_end says. */
static pv_status oracle_run(pv_context *ctx, const pv_image *device, const pv_volume *volume,
                            double relative)
{
    pv_oracle oracle;
    pv_image *ref = NULL;
    pv_volume *ref_volume = NULL, *unwanted = NULL;
    pv_oracle_begin(ctx, "oracle test", &oracle);
    assert_int_equal(pv_oracle_add_image(ctx, &oracle, device, &ref), PV_OK);
    assert_int_equal(pv_oracle_add_volume(ctx, &oracle, NULL, &unwanted), PV_OK);
    assert_null(unwanted);
    assert_int_equal(pv_oracle_add_volume(ctx, &oracle, volume, &ref_volume), PV_OK);
    assert_int_equal(ref->width, device->width);
    assert_int_equal(ref->height, device->height);
    assert_int_equal(ref_volume->nz, volume->nz);
    fill_image(ref, 100.0f);
    fill_volume(ref_volume, 1.0f);
    ((float *)ref->data)[1] = (float)(100.0 * (1.0 + relative));
    ctx->timing.total_ms = 99.0; /* what the oracle's own run would record */
    return pv_oracle_end(ctx, &oracle, PV_OK, PV_TOL_FILTER_REL);
}

static void test_oracle_helper(void **state)
{
    (void)state;
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    pv_image device;
    pv_volume volume;
    assert_int_equal(pv_image_alloc(&device, 5, 3, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_volume_alloc(&volume, 2, 3, 4), PV_OK);
    fill_image(&device, 100.0f);
    fill_volume(&volume, 1.0f);
    ctx->timing.total_ms = 7.0;
    /* Half the tolerance passes, twice the tolerance is a mismatch; the
     * call's timing comes back either way. */
    assert_int_equal(oracle_run(ctx, &device, &volume, 0.5 * PV_TOL_FILTER_REL), PV_OK);
    assert_true(ctx->timing.total_ms == 7.0);
    assert_int_equal(oracle_run(ctx, &device, &volume, 2.0 * PV_TOL_FILTER_REL),
                     PV_ERR_MISMATCH);
    assert_true(ctx->timing.total_ms == 7.0);
    /* A failed oracle run is reported as it is, without a comparison. */
    pv_oracle oracle;
    pv_image *ref[PV_ORACLE_MAX_OUTPUTS + 1];
    pv_oracle_begin(ctx, "oracle test", &oracle);
    assert_int_equal(pv_oracle_add_image(ctx, &oracle, &device, &ref[0]), PV_OK);
    assert_int_equal(pv_oracle_end(ctx, &oracle, PV_ERR_NOMEM, PV_TOL_FILTER_REL), PV_ERR_NOMEM);
    /* More outputs than the helper holds is refused. */
    pv_oracle_begin(ctx, "oracle test", &oracle);
    for (int i = 0; i < PV_ORACLE_MAX_OUTPUTS; i++)
        assert_int_equal(pv_oracle_add_image(ctx, &oracle, &device, &ref[i]), PV_OK);
    pv_status status = pv_oracle_add_image(ctx, &oracle, &device, &ref[PV_ORACLE_MAX_OUTPUTS]);
    assert_int_equal(status, PV_ERR_INVALID);
    assert_null(ref[PV_ORACLE_MAX_OUTPUTS]);
    assert_int_equal(pv_oracle_end(ctx, &oracle, status, PV_TOL_FILTER_REL), PV_ERR_INVALID);
    pv_image_free(&device);
    pv_volume_free(&volume);
    pv_context_destroy(ctx);
}

/* The scratch helper: three arrays of different element sizes carved from
 * one block, each on its own aligned line, zero-filled on request; a size
 * that overflows size_t fails with every array NULL. */
typedef struct scratch_arrays {
    size_t count;
    double *wide;
    int *narrow;
    char *bytes;
} scratch_arrays;

static void lay_out_scratch_arrays(pv_scratch *scratch, void *arrays)
{
    scratch_arrays *a = arrays;
    a->wide = pv_scratch_take(scratch, a->count, sizeof *a->wide);
    a->narrow = pv_scratch_take(scratch, 3 * a->count, sizeof *a->narrow);
    a->bytes = pv_scratch_take(scratch, 1, sizeof *a->bytes);
}

static void test_scratch_carving(void **state)
{
    (void)state;
    scratch_arrays a = {.count = 5};
    pv_scratch scratch = {0};
    assert_int_equal(pv_scratch_carve(&scratch, lay_out_scratch_arrays, &a, 1), PV_OK);
    /* 40 bytes, 60 bytes and 1 byte each take one 64-byte line, in order. */
    assert_ptr_equal(a.wide, (void *)scratch.block);
    assert_ptr_equal(a.narrow, (void *)(scratch.block + 64));
    assert_ptr_equal(a.bytes, (void *)(scratch.block + 128));
    assert_int_equal(scratch.size, 192);
    assert_int_equal((uintptr_t)scratch.block % PV_SCRATCH_ALIGN, 0);
    for (size_t i = 0; i < a.count; i++)
        assert_true(a.wide[i] == 0.0);
    for (size_t i = 0; i < 3 * a.count; i++)
        assert_int_equal(a.narrow[i], 0);
    pv_scratch_free(&scratch);
    assert_null(scratch.block);
    pv_scratch_free(&scratch);  /* a second free is harmless */

    scratch_arrays huge = {.count = SIZE_MAX / 2};
    assert_int_equal(pv_scratch_carve(&scratch, lay_out_scratch_arrays, &huge, 0),
                     PV_ERR_NOMEM);
    assert_null(scratch.block);
    assert_null(huge.wide);
    assert_null(huge.narrow);
    assert_null(huge.bytes);
    assert_int_equal(pv_scratch_carve(NULL, lay_out_scratch_arrays, &a, 0), PV_ERR_INVALID);
    assert_int_equal(pv_scratch_carve(&scratch, NULL, &a, 0), PV_ERR_INVALID);
    assert_int_equal(pv_scratch_carve(&scratch, lay_out_scratch_arrays, NULL, 0),
                     PV_ERR_INVALID);
    pv_scratch_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_oracle_helper),
        cmocka_unit_test(test_scratch_carving),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_image_alloc_and_validity),
        cmocka_unit_test(test_cpu_context),
        cmocka_unit_test(test_context_bad_arguments),
        cmocka_unit_test(test_environment_overrides),
        cmocka_unit_test(test_auto_selection),
        cmocka_unit_test(test_opencl_context),
        cmocka_unit_test(test_copy_bandwidth),
        cmocka_unit_test(test_compute_peak),
#ifdef PV_HAVE_OPENCL
        cmocka_unit_test(test_binary_cache),
        cmocka_unit_test(test_build_failure_keeps_log),
        cmocka_unit_test(test_launch_parameters),
        cmocka_unit_test(test_launch_arguments),
        cmocka_unit_test(test_pinned_transfers),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
