#include "test_util.h"
#include "../lib/core/configuration.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TU_SENTINEL_U8 0xA5
#define TU_SENTINEL_F32 (-12345.678f)

int tu_skip_opencl(void)
{
    const char *skip = getenv("PARVIS_TEST_SKIP_OPENCL");
    return skip && strcmp(skip, "1") == 0;
}

pv_context *tu_context(pv_backend_kind kind)
{
    if (kind != PV_BACKEND_CPU && tu_skip_opencl())
        return NULL;
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = kind;
    pv_context *ctx = NULL;
    if (pv_context_create(&ctx, &options) != PV_OK)
        return NULL;
    return ctx;
}

int tu_have_opencl(void)
{
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (!ctx)
        return 0;
    pv_context_destroy(ctx);
    return 1;
}

pv_context *tu_cpu;
pv_context *tu_opencl;
const pv_backend_kind tu_cpu_kind = PV_BACKEND_CPU;
const pv_backend_kind tu_opencl_kind = PV_BACKEND_OPENCL;

int tu_group_setup(void **state)
{
    (void)state;
    tu_cpu = tu_context(PV_BACKEND_CPU);
    if (!tu_cpu)
        return -1;
    tu_opencl = tu_context(PV_BACKEND_OPENCL);
    /* PARVIS_BACKEND=cpu overrides the requested backend: not an OpenCL run. */
    if (tu_opencl && pv_context_backend(tu_opencl) != PV_BACKEND_OPENCL) {
        pv_context_destroy(tu_opencl);
        tu_opencl = NULL;
    }
    return 0;
}

int tu_group_teardown(void **state)
{
    (void)state;
    pv_context_destroy(tu_cpu);
    pv_context_destroy(tu_opencl);
    tu_cpu = tu_opencl = NULL;
    return 0;
}

pv_context *tu_opencl_or_skip(void)
{
    if (!tu_opencl)
        skip();
    return tu_opencl;
}

pv_context *tu_new_opencl_or_skip(void)
{
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (!ctx || pv_context_backend(ctx) != PV_BACKEND_OPENCL) {
        pv_context_destroy(ctx);
        skip();
    }
    return ctx;
}

void tu_set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    assert_int_equal(pv_config_refresh(), PV_OK);
}

pv_context *tu_fault_context(const char *spec)
{
    if (spec)
        setenv("PARVIS_FAULT", spec, 1);
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    /* the injector reads the variable once, when the context is made */
    unsetenv("PARVIS_FAULT");
    if (ctx && pv_context_backend(ctx) != PV_BACKEND_OPENCL) {
        pv_context_destroy(ctx);
        ctx = NULL;
    }
    return ctx;
}

pv_context *tu_backend_ctx(void **state)
{
    const pv_backend_kind kind = *(const pv_backend_kind *)*state;
    return kind == PV_BACKEND_CPU ? tu_cpu : tu_opencl_or_skip();
}

void tu_expect_ok(pv_context *ctx, pv_status status, const char *what)
{
    if (status != PV_OK)
        fail_msg("%s on %s: %s (%s)", what, pv_backend_name(pv_context_backend(ctx)),
                 pv_status_string(status), pv_context_last_error(ctx));
}

uint32_t tu_rand(uint32_t *state)
{
    uint32_t x = *state ? *state : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

float tu_rand01(uint32_t *state)
{
    return (float)(tu_rand(state) >> 8) / 16777216.0f;
}

void tu_fill_random(pv_image *image, uint32_t seed)
{
    uint32_t state = seed;
    for (int y = 0; y < image->height; y++) {
        for (int x = 0; x < image->width; x++) {
            ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
            if (image->type == PV_PIXEL_U8)
                ((uint8_t *)image->data)[i] = (uint8_t)(tu_rand(&state) >> 24);
            else
                ((float *)image->data)[i] = tu_rand01(&state);
        }
    }
}

void tu_fill_random_volume(pv_volume *volume, uint32_t seed)
{
    uint32_t state = seed;
    for (int z = 0; z < volume->nz; z++)
        for (int y = 0; y < volume->ny; y++)
            for (int x = 0; x < volume->nx; x++)
                volume->data[x + y * volume->stride_y + z * volume->stride_z] = tu_rand01(&state);
}

pv_volume tu_random_volume(int nx, int ny, int nz, uint32_t seed)
{
    pv_volume volume;
    assert_int_equal(pv_volume_alloc(&volume, nx, ny, nz), PV_OK);
    tu_fill_random_volume(&volume, seed);
    return volume;
}

void tu_blob_frames(pv_image *still, pv_image *moved, int w, int h, int blob, uint32_t seed,
                    int dx, int dy)
{
    pv_image noise;
    assert_int_equal(pv_image_alloc(&noise, w / blob + 6, h / blob + 6, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&noise, seed);
    assert_int_equal(pv_image_alloc(still, w, h, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(moved, w, h, PV_PIXEL_U8), PV_OK);
    for (int y = 0; y < h + dy; y++)
        for (int x = 0; x < w + dx; x++) {
            const int x0 = x / blob, y0 = y / blob;
            const float fx = (float)(x % blob) / blob, fy = (float)(y % blob) / blob;
            const float v = (pv_image_get(&noise, x0, y0) * (1 - fx) +
                             pv_image_get(&noise, x0 + 1, y0) * fx) * (1 - fy) +
                            (pv_image_get(&noise, x0, y0 + 1) * (1 - fx) +
                             pv_image_get(&noise, x0 + 1, y0 + 1) * fx) * fy;
            if (x >= dx && y >= dy)
                tu_set_pixel(moved, x - dx, y - dy, v);
            if (x < w && y < h)
                tu_set_pixel(still, x, y, v);
        }
    pv_image_free(&noise);
}

static size_t element_size(pv_pixel_type type)
{
    return type == PV_PIXEL_U8 ? 1 : sizeof(float);
}

static void set_sentinel(pv_pixel_type type, void *base, size_t index)
{
    if (type == PV_PIXEL_U8)
        ((uint8_t *)base)[index] = TU_SENTINEL_U8;
    else
        ((float *)base)[index] = TU_SENTINEL_F32;
}

static int is_sentinel(pv_pixel_type type, const void *base, size_t index)
{
    if (type == PV_PIXEL_U8)
        return ((const uint8_t *)base)[index] == TU_SENTINEL_U8;
    return ((const float *)base)[index] == TU_SENTINEL_F32;
}

static int in_pixels(int x, int y, int width, int height, int guard)
{
    return x >= guard && x < guard + width && y >= guard && y < guard + height;
}

void tu_guarded_alloc(pv_image *image, int width, int height, pv_pixel_type type, int guard)
{
    size_t stride = (size_t)width + 2 * (size_t)guard;
    size_t rows = (size_t)height + 2 * (size_t)guard;
    void *base = calloc(stride * rows, element_size(type));
    assert_non_null(base);
    for (size_t y = 0; y < rows; y++)
        for (size_t x = 0; x < stride; x++)
            set_sentinel(type, base, y * stride + x);
    image->width = width;
    image->height = height;
    image->stride = (ptrdiff_t)stride;
    image->type = type;
    image->data = (char *)base + ((size_t)guard * stride + (size_t)guard) * element_size(type);
}

static void *guarded_base(const pv_image *image, int guard)
{
    size_t offset = ((size_t)guard * (size_t)image->stride + (size_t)guard) * element_size(image->type);
    return (char *)image->data - offset;
}

int tu_guard_intact(const pv_image *image, int guard)
{
    const void *base = guarded_base(image, guard);
    int rows = image->height + 2 * guard;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < (int)image->stride; x++)
            if (!in_pixels(x, y, image->width, image->height, guard) &&
                !is_sentinel(image->type, base, (size_t)y * (size_t)image->stride + (size_t)x))
                return 0;
    return 1;
}

void tu_guarded_free(pv_image *image, int guard)
{
    if (image->data)
        free(guarded_base(image, guard));
    image->data = NULL;
}

const char *tu_data_path(const char *relative)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", PV_TEST_DATA_DIR, relative);
    return path;
}

const char *tu_tmp_path(const char *name)
{
    static char path[4096];
    mkdir("tests", 0755);
    mkdir("tests/tmp", 0755);
    snprintf(path, sizeof path, "tests/tmp/%s", name);
    return path;
}

void tu_octreg_synth_params(pv_octreg_synth_params *p, int depth, int alines, int bscans,
                            uint32_t seed)
{
    pv_octreg_synth_params_default(p);
    p->size[0] = depth;
    p->size[1] = alines;
    p->size[2] = bscans;
    p->seed = seed;
}

void tu_write_file(const char *path, const void *bytes, size_t length)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (length)
        assert_int_equal(fwrite(bytes, 1, length, f), length);
    assert_int_equal(fclose(f), 0);
}

int tu_child_sees_opencl(void)
{
    if (tu_skip_opencl())
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int count = 0;
        _exit(pv_device_list(NULL, 0, &count) == PV_OK && count > 0 ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

int tu_run_in_child(void (*body)(void *arg), void *arg, unsigned seconds)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka's handlers would turn a crash into a test failure inside
         * the child; the parent is to see the signal itself */
        const int crashes[] = {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE};
        for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
            signal(crashes[i], SIG_DFL);
        alarm(seconds);
        body(arg);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

float *tu_fpixel(const pv_image *image, int x, int y)
{
    return (float *)image->data + (ptrdiff_t)y * image->stride + x;
}

void tu_set_pixel(pv_image *image, int x, int y, float value)
{
    if (image->type == PV_PIXEL_U8)
        ((uint8_t *)image->data)[(ptrdiff_t)y * image->stride + x] = (uint8_t)value;
    else
        *tu_fpixel(image, x, y) = value;
}

void tu_fill_image(pv_image *image, float value)
{
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            tu_set_pixel(image, x, y, value);
}

int tu_image_all_equal(const pv_image *image, float value)
{
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            if (pv_image_get(image, x, y) != value)
                return 0;
    return 1;
}

double tu_rel_linf(const pv_image *a, const pv_image *b)
{
    double max_diff = 0.0, max_ref = 1.0;
    for (int y = 0; y < b->height; y++) {
        const float *ra = (const float *)a->data + (ptrdiff_t)y * a->stride;
        const float *rb = (const float *)b->data + (ptrdiff_t)y * b->stride;
        for (int x = 0; x < b->width; x++) {
            if (isinf(rb[x]) || isinf(ra[x])) {
                if (ra[x] != rb[x])
                    return INFINITY;
                continue;
            }
            double d = fabs((double)ra[x] - (double)rb[x]);
            if (d > max_diff || isnan(d))
                max_diff = isnan(d) ? INFINITY : d;
            if (fabs(rb[x]) > max_ref)
                max_ref = fabs(rb[x]);
        }
    }
    return max_diff / max_ref;
}
