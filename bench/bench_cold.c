/* parvis-bench --cold: what the first call of each operation costs in a
 * fresh process, once with empty caches and once with the caches the
 * first process left, beside the operation's steady (median) time.
 *
 * Each measurement is a process of its own: the bench runs itself with
 * the hidden first argument --cold-child, which makes the context, times
 * the operation's first call, then its steady time, and prints one line.
 * "Cold" runs with XDG_CACHE_HOME (parvis's program binaries, FFT kernels,
 * FFTW wisdom and tuning, and PoCL's kernel cache) and CUDA_CACHE_PATH
 * (NVIDIA's compiled-kernel cache) pointed at an empty temporary
 * directory; "warm" runs again on the same directory.  The first call of
 * an operation that uses a plan includes making the plan (the OCT row is
 * the reference plan alone). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "bench.h"
#include "../tests/image_list.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Sizes of one suite: --full takes the papers' sizes (OCT 256^3). */
typedef struct cold_sizes {
    int width, height;   /* 2D operations */
    int oct;             /* OCT reference volume edge */
    int flow;            /* 3D flow volume edge */
} cold_sizes;

static const cold_sizes quick_sizes = {320, 240, 64, 32};
static const cold_sizes full_sizes = {640, 480, 256, 64};

/* The inputs of one operation, made before the clock starts. */
typedef struct cold_inputs {
    const cold_sizes *sizes;
    pv_image left, right, templ, out;
    pv_volume volume_a, volume_b;
    pv_flow_field field;
} cold_inputs;

typedef struct cold_op {
    const char *op;
    const char *name;
    pv_status (*prepare)(cold_inputs *in);
    pv_status (*call)(pv_context *ctx, cold_inputs *in);
} cold_op;

/* ------------------------------------------------------------ inputs */

static float texture(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / 16777216.0f;
}

/* A textured pair: right is left moved 4 px, so stereo and registration
 * see real structure. */
static pv_status make_pair(cold_inputs *in, pv_pixel_type type)
{
    int w = in->sizes->width, h = in->sizes->height;
    pv_status status = pv_image_alloc(&in->left, w, h, type);
    if (status == PV_OK)
        status = pv_image_alloc(&in->right, w, h, type);
    if (status != PV_OK)
        return status;
    uint32_t seed = 17;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v = texture(&seed);
            float *lf = (float *)in->left.data, *rf = (float *)in->right.data;
            unsigned char *lu = in->left.data, *ru = in->right.data;
            int xr = (x + w - 4) % w;
            if (type == PV_PIXEL_F32) {
                lf[(size_t)y * in->left.stride + x] = v;
                rf[(size_t)y * in->right.stride + xr] = v;
            } else {
                lu[(size_t)y * in->left.stride + x] = (unsigned char)(v * 255.0f);
                ru[(size_t)y * in->right.stride + xr] = (unsigned char)(v * 255.0f);
            }
        }
    return PV_OK;
}

static pv_status prepare_f32_pair(cold_inputs *in)
{
    pv_status status = make_pair(in, PV_PIXEL_F32);
    if (status == PV_OK)
        status = pv_image_alloc(&in->out, in->sizes->width, in->sizes->height, PV_PIXEL_F32);
    return status;
}

static pv_status prepare_u8_pair(cold_inputs *in)
{
    pv_status status = make_pair(in, PV_PIXEL_U8);
    if (status == PV_OK)
        status = pv_image_alloc(&in->out, in->sizes->width, in->sizes->height, PV_PIXEL_F32);
    return status;
}

static void fill_volume(pv_volume *v, uint32_t seed, int shift)
{
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++) {
                float smooth = sinf(0.21f * (float)(x + shift)) * cosf(0.13f * (float)y) +
                               0.5f * sinf(0.07f * (float)z);
                v->data[(size_t)z * v->stride_z + (size_t)y * v->stride_y + x] =
                    smooth + 0.2f * texture(&seed);
            }
}

static pv_status prepare_volumes(cold_inputs *in, int n)
{
    pv_status status = pv_volume_alloc(&in->volume_a, n, n, n);
    if (status == PV_OK)
        status = pv_volume_alloc(&in->volume_b, n, n, n);
    if (status != PV_OK)
        return status;
    fill_volume(&in->volume_a, 3, 0);
    fill_volume(&in->volume_b, 3, 1);
    return PV_OK;
}

static pv_status prepare_oct(cold_inputs *in)
{
    return prepare_volumes(in, in->sizes->oct);
}

static pv_status prepare_flow(cold_inputs *in)
{
    int n = in->sizes->flow;
    pv_status status = prepare_volumes(in, n);
    return status == PV_OK ? pv_flow_field_alloc(&in->field, n, n, n) : status;
}

static pv_status prepare_ncc(cold_inputs *in)
{
    pv_status status = prepare_f32_pair(in);
    if (status != PV_OK)
        return status;
    int side = in->sizes->height / 4;
    status = pv_image_alloc(&in->templ, side, side, PV_PIXEL_F32);
    if (status != PV_OK)
        return status;
    for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
            ((float *)in->templ.data)[(size_t)y * in->templ.stride + x] =
                ((float *)in->left.data)[(size_t)(y + side) * in->left.stride + x + side];
    pv_image_free(&in->out);
    return PV_OK;
}

static void release_inputs(cold_inputs *in)
{
    image_list_free(&in->left, &in->right, &in->templ, &in->out, NULL);
    pv_volume_free(&in->volume_a);
    pv_volume_free(&in->volume_b);
    pv_flow_field_free(&in->field);
}

/* ------------------------------------------------------------- calls */

static pv_status call_blur(pv_context *ctx, cold_inputs *in)
{
    return pv_gaussian_blur(ctx, &in->left, &in->out, 2.0f, 0);
}

static pv_status call_sad(pv_context *ctx, cold_inputs *in)
{
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 32;
    return pv_stereo_sad(ctx, &in->left, &in->right, &params, &in->out);
}

static pv_status call_bp(pv_context *ctx, cold_inputs *in)
{
    pv_bp_params params;
    pv_bp_params_default(&params);
    params.ndisp = 16;
    return pv_stereo_bp(ctx, &in->left, &in->right, &params, &in->out);
}

static pv_status call_phasecorr(pv_context *ctx, cold_inputs *in)
{
    pv_shift shift;
    return pv_phase_correlate(ctx, &in->left, &in->right, NULL, &shift);
}

static pv_status call_ncc(pv_context *ctx, cold_inputs *in)
{
    pv_ncc_result result;
    return pv_normxcorr2(ctx, &in->templ, &in->left, 0, NULL, &result);
}

static pv_status call_oct_plan(pv_context *ctx, cold_inputs *in)
{
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(ctx, &in->volume_a, NULL, &plan);
    pv_octreg_plan_destroy(plan);
    return status;
}

static pv_status call_flow(pv_context *ctx, cold_inputs *in)
{
    pv_flow_params params;
    pv_flow_params_default(&params);
    params.warps = 1;
    params.iterations = 10;
    return pv_flow3d(ctx, &in->volume_a, &in->volume_b, &params, &in->field);
}

static pv_status call_sift(pv_context *ctx, cold_inputs *in)
{
    pv_sift_plan *plan = NULL;
    pv_sift_features features;
    memset(&features, 0, sizeof features);
    pv_status status = pv_sift_plan_create(ctx, in->left.width, in->left.height, NULL, &plan);
    if (status == PV_OK)
        status = pv_sift_detect(plan, &in->left, &features);
    pv_sift_features_free(&features);
    pv_sift_plan_destroy(plan);
    return status;
}

static const cold_op cold_ops[] = {
    {"blur", "gaussian sigma 2", prepare_f32_pair, call_blur},
    {"sad", "sad 32 disparities", prepare_u8_pair, call_sad},
    {"bp", "bp 16 disparities", prepare_u8_pair, call_bp},
    {"phasecorr", "phase correlation 2D", prepare_f32_pair, call_phasecorr},
    {"ncc", "normxcorr2", prepare_ncc, call_ncc},
    {"octreg", "OCT reference plan", prepare_oct, call_oct_plan},
    {"flow", "flow3d 1 warp 10 it", prepare_flow, call_flow},
    {"sift", "sift plan + detect", prepare_f32_pair, call_sift},
};

#define COLD_OP_COUNT ((int)(sizeof cold_ops / sizeof cold_ops[0]))

/* ------------------------------------------------------------- child */

typedef struct cold_sample {
    double context_ms, first_ms, steady_ms;
} cold_sample;

/* The index of the OpenCL device named `name` ("-": none, -1), or -1 with
 * the names this process sees in `seen`: a child may see the devices in
 * another order than its parent, so the parent passes the name. */
static int child_device(const char *name, char *seen, size_t size)
{
    seen[0] = '\0';
    if (strcmp(name, "-") == 0)
        return -1;
    pv_device_info devices[64];
    int count = 0;
    if (pv_device_list(devices, 64, &count) != PV_OK)
        count = 0;
    for (int i = 0; i < count && i < 64; i++) {
        if (strcmp(devices[i].name, name) == 0)
            return i;
        size_t used = strlen(seen);
        snprintf(seen + used, size - used, "%s[%d] %s", used ? ", " : "", i, devices[i].name);
    }
    return -1;
}

static pv_context *child_context(pv_backend_kind backend, int device_index)
{
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = backend;
    options.device_index = device_index;
    pv_context *ctx = NULL;
    return pv_context_create(&ctx, &options) == PV_OK ? ctx : NULL;
}

static pv_status child_measure(const cold_op *op, pv_context *ctx, cold_inputs *in, int runs,
                               cold_sample *sample)
{
    double start = now_ms();
    pv_status status = op->call(ctx, in);
    sample->first_ms = now_ms() - start;
    double times[BENCH_MAX_SAMPLES];
    for (int i = 0; status == PV_OK && i < runs; i++) {
        start = now_ms();
        status = op->call(ctx, in);
        times[i] = now_ms() - start;
    }
    if (status == PV_OK)
        sample->steady_ms = bench_median(times, runs);
    return status;
}

/* parvis-bench --cold-child OP BACKEND DEVICE_NAME FULL RUNS: one line on
 * stdout, "ok CONTEXT_MS FIRST_MS STEADY_MS" or "error MESSAGE". */
int bench_cold_child(int argc, char **argv)
{
    if (argc != 7)
        return 2;
    int op_index = atoi(argv[2]);
    int runs = atoi(argv[6]);
    pv_backend_kind backend = strcmp(argv[3], "cpu") == 0 ? PV_BACKEND_CPU : PV_BACKEND_OPENCL;
    if (op_index < 0 || op_index >= COLD_OP_COUNT || runs < 1 || runs > BENCH_MAX_SAMPLES)
        return 2;
    char seen[1024];
    int device_index = child_device(argv[4], seen, sizeof seen);
    if (backend == PV_BACKEND_OPENCL && device_index < 0) {
        printf("error no OpenCL device named '%s' in this process (it sees: %s)\n", argv[4],
               seen[0] ? seen : "none");
        return 1;
    }
    const cold_op *op = &cold_ops[op_index];
    cold_inputs in;
    memset(&in, 0, sizeof in);
    in.sizes = atoi(argv[5]) ? &full_sizes : &quick_sizes;
    pv_status status = op->prepare(&in);
    if (status != PV_OK) {
        printf("error preparing the inputs: %s\n", pv_status_string(status));
        release_inputs(&in);
        return 1;
    }
    cold_sample sample = {0, 0, 0};
    double start = now_ms();
    pv_context *ctx = child_context(backend, device_index);
    sample.context_ms = now_ms() - start;
    status = ctx ? child_measure(op, ctx, &in, runs, &sample) : PV_ERR_OPENCL;
    if (status == PV_OK)
        printf("ok %.3f %.3f %.3f\n", sample.context_ms, sample.first_ms, sample.steady_ms);
    else
        printf("error %s\n", ctx ? pv_context_last_error(ctx) : pv_last_error());
    pv_context_destroy(ctx);
    release_inputs(&in);
    return status == PV_OK ? 0 : 1;
}

/* ------------------------------------------------------------ parent */

typedef struct cold_row {
    const cold_op *op;
    const char *backend;
    cold_sample cold, warm;
    int ok;
    char error[200];
} cold_row;

/* The child's environment: the caller's, with the cache variables set to
 * dir and those that would override the child's choices removed. */
/* The environment as this process started, before any driver loaded: a
 * driver may add variables of its own to environ when it initialises
 * (the NVIDIA OpenCL driver's child then finds no device), and a child
 * measuring a first call must start as a shell would start it. */
static char **start_environment;

__attribute__((constructor)) static void remember_start_environment(void)
{
    size_t count = 0;
    while (environ[count])
        count++;
    start_environment = calloc(count + 1, sizeof *start_environment);
    for (size_t i = 0; start_environment && i < count; i++)
        start_environment[i] = strdup(environ[i]);
}

static char **child_environment(const char *dir)
{
    char **const source = start_environment ? start_environment : environ;
    size_t count = 0;
    while (source[count])
        count++;
    char **env = calloc(count + 3, sizeof *env);
    if (!env)
        return NULL;
    static char xdg[4200], cuda[4200];
    snprintf(xdg, sizeof xdg, "XDG_CACHE_HOME=%s", dir);
    snprintf(cuda, sizeof cuda, "CUDA_CACHE_PATH=%s/nv", dir);
    size_t n = 0;
    static const char *dropped[] = {"XDG_CACHE_HOME=", "CUDA_CACHE_PATH=", "POCL_CACHE_DIR=",
                                    "PARVIS_BACKEND=", "PARVIS_DEVICE=", "PARVIS_CROSSCHECK="};
    for (size_t i = 0; i < count; i++) {
        int keep = 1;
        for (size_t d = 0; d < sizeof dropped / sizeof dropped[0]; d++)
            if (strncmp(source[i], dropped[d], strlen(dropped[d])) == 0)
                keep = 0;
        if (keep)
            env[n++] = source[i];
    }
    env[n++] = xdg;
    env[n++] = cuda;
    env[n] = NULL;
    return env;
}

/* Run one child and parse its line into sample (message on failure). */
static int run_child(const char *self, char *const args[], char **env, cold_sample *sample,
                     char *error, size_t error_size)
{
    int ends[2];
    if (pipe(ends) != 0)
        return snprintf(error, error_size, "pipe: %s", strerror(errno)), 0;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, ends[0]);
    pid_t pid;
    int spawned = posix_spawn(&pid, self, &actions, NULL, args, env);
    posix_spawn_file_actions_destroy(&actions);
    close(ends[1]);
    if (spawned != 0) {
        close(ends[0]);
        return snprintf(error, error_size, "cannot start %s: %s", self, strerror(spawned)), 0;
    }
    char line[512] = "";
    FILE *from = fdopen(ends[0], "r");
    if (!from || !fgets(line, sizeof line, from))
        line[0] = '\0';
    if (from)
        fclose(from);
    else
        close(ends[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "ok %lf %lf %lf", &sample->context_ms, &sample->first_ms,
               &sample->steady_ms) == 3)
        return 1;
    snprintf(error, error_size, "%s", line[0] ? line : "the measuring process failed");
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void measure_row(const char *self, int op_index, const char *backend,
                        const char *device_name, const bench_config *config, cold_row *row)
{
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/parvis-cold-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    row->op = &cold_ops[op_index];
    row->backend = backend;
    if (!mkdtemp(dir)) {
        snprintf(row->error, sizeof row->error, "mkdtemp: %s", strerror(errno));
        return;
    }
    /* The driver's own cache directory (CUDA_CACHE_PATH below), made
     * here so that no driver has to create a missing parent. */
    char driver_dir[4200];
    snprintf(driver_dir, sizeof driver_dir, "%s/nv", dir);
    mkdir(driver_dir, 0700);
    char op_arg[16], full_arg[4], runs_arg[16];
    snprintf(op_arg, sizeof op_arg, "%d", op_index);
    snprintf(full_arg, sizeof full_arg, "%d", config->full ? 1 : 0);
    snprintf(runs_arg, sizeof runs_arg, "%d", config->runs);
    char *const args[] = {(char *)self, "--cold-child", op_arg, (char *)backend,
                          (char *)(strcmp(backend, "cpu") == 0 ? "-" : device_name),
                          full_arg, runs_arg, NULL};
    char **env = child_environment(dir);
    row->ok = env &&
              run_child(self, args, env, &row->cold, row->error, sizeof row->error) &&
              run_child(self, args, env, &row->warm, row->error, sizeof row->error);
    if (!env)
        snprintf(row->error, sizeof row->error, "out of memory");
    free(env);
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void print_row(const cold_row *r)
{
    printf("%-10s %-22s %-7s ", r->op->op, r->op->name, r->backend);
    if (!r->ok) {
        printf("failed: %s\n", r->error);
        return;
    }
    printf("%9.1f %10.1f %9.1f %10.1f %9.1f %10.1f\n", r->cold.context_ms, r->cold.first_ms,
           r->warm.context_ms, r->warm.first_ms, r->warm.steady_ms,
           r->warm.first_ms - r->warm.steady_ms);
    fflush(stdout);
}

static void json_sample(FILE *out, const char *key, const cold_sample *s)
{
    fprintf(out, "\"%s\": {\"context_ms\": %.3f, \"first_ms\": %.3f, \"steady_ms\": %.3f}", key,
            s->context_ms, s->first_ms, s->steady_ms);
}

static int write_json(const char *path, const bench_config *config, const char *device,
                      const cold_row *rows, int count)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(out, "{\n  \"parvis_version\": ");
    cli_json_string(out, pv_version());
    fprintf(out, ",\n  \"selection\": \"cold\",\n  \"sizes\": \"%s\",\n  \"runs\": %d,\n",
            config->full ? "full" : "quick", config->runs);
    fprintf(out, "  \"opencl_device\": ");
    if (device)
        cli_json_string(out, device);
    else
        fprintf(out, "null");
    fprintf(out, ",\n  \"cold\": [");
    for (int i = 0; i < count; i++) {
        const cold_row *r = &rows[i];
        fprintf(out, "%s\n    {\"op\": ", i ? "," : "");
        cli_json_string(out, r->op->op);
        fprintf(out, ", \"case\": ");
        cli_json_string(out, r->op->name);
        fprintf(out, ", \"backend\": \"%s\", \"ok\": %s", r->backend, r->ok ? "true" : "false");
        if (r->ok) {
            fprintf(out, ", ");
            json_sample(out, "cold", &r->cold);
            fprintf(out, ", ");
            json_sample(out, "warm", &r->warm);
        } else {
            fprintf(out, ", \"error\": ");
            cli_json_string(out, r->error);
        }
        fprintf(out, "}");
    }
    fprintf(out, "\n  ]\n}\n");
    return fclose(out) == 0 ? 0 : cli_fail("cannot write %s", path);
}

static int op_selected(const bench_config *config, const cold_op *op)
{
    return bench_case_matches(config->only, op->op, op->name);
}

/* The OpenCL device of the rows (-1: none), and its name. */
static int opencl_device(const bench_config *config, char *name, size_t size)
{
    if (config->device.backend == PV_BACKEND_CPU)
        return -1;
    int index = config->device.device_index >= 0 ? config->device.device_index
                                                  : bench_first_gpu();
    pv_device_info devices[64];
    int count = 0;
    if (index < 0 || pv_device_list(devices, 64, &count) != PV_OK || index >= count ||
        index >= 64)
        return -1;
    snprintf(name, size, "%s", devices[index].name);
    return index;
}

int bench_cold_run(const bench_config *config)
{
    int selected = 0;
    for (int i = 0; i < COLD_OP_COUNT; i++)
        selected += op_selected(config, &cold_ops[i]);
    if (!selected)
        return cli_fail("no operation of --cold matches --case %s", config->only);
    char device_name[128] = "";
    int device = opencl_device(config, device_name, sizeof device_name);
    const cold_sizes *sizes = config->full ? &full_sizes : &quick_sizes;
    printf("parvis-bench %s --cold: first call of each operation in a fresh process\n",
           pv_version());
    printf("OpenCL: %s\n", device >= 0 ? device_name : "none (CPU only)");
    printf("sizes: images %dx%d, OCT %d^3, flow %d^3; steady: median of %d calls after the "
           "first.\nms.  cold: empty cache directory; warm: the directory the cold process "
           "left.\nctx: context creation; first: the operation's first call (plans included); "
           "extra: warm first - steady.\n\n",
           sizes->width, sizes->height, sizes->oct, sizes->flow,
           config->runs);
    printf("%-10s %-22s %-7s %9s %10s %9s %10s %9s %10s\n", "op", "case", "backend", "ctx cold",
           "first cold", "ctx warm", "first warm", "steady", "extra");
    cold_row rows[2 * COLD_OP_COUNT];
    int count = 0, failed = 0;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return cli_fail("cannot find the bench's own executable");
    self[len] = '\0';
    for (int i = 0; i < COLD_OP_COUNT; i++) {
        if (!op_selected(config, &cold_ops[i]))
            continue;
        for (int b = 0; b < 2; b++) {
            if (b == 1 && device < 0)
                continue;
            if (b == 0 && config->device.backend == PV_BACKEND_OPENCL)
                continue;
            cold_row *row = &rows[count++];
            memset(row, 0, sizeof *row);
            measure_row(self, i, b == 0 ? "cpu" : "opencl", device_name, config, row);
            print_row(row);
            failed |= !row->ok;
        }
    }
    if (config->json_path && write_json(config->json_path, config, device >= 0 ? device_name : NULL,
                                        rows, count))
        failed = 1;
    return failed;
}
