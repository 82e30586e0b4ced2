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
 * slots, filled with the launch's buffers just before.
 *
 * Compiled kernels are kept on disk (fft_cache.h).  VkFFT 1.2's own
 * saveApplicationToString / loadApplicationFromString cannot serve here:
 * its OpenCL path copies each program binary with sprintf("%s"), which
 * cuts a binary at its first zero byte (PoCL's, AMD's and Intel's binaries
 * hold many), and reads one byte past the binaries it loads.  Instead the
 * two OpenCL calls VkFFT compiles with, clCreateProgramWithSource and
 * clBuildProgram, are routed through this file while a plan is made: each
 * program VkFFT asks for is made from the cached binary when the entry
 * holds one for the same generated source, else compiled and its binary
 * kept, and the plan's binaries are stored as one entry afterwards.
 * VkFFT still generates its sources (milliseconds); only the compiles,
 * which take seconds, are saved. */
#define VKFFT_BACKEND 3
#include "fft_engine.h"
#include "fft_cache.h"

#include <stdlib.h>
#include <string.h>

/* -------------------------------------------- the builds of one plan */

/* One program VkFFT made while a plan was being made. */
typedef struct built_program {
    cl_program program;
    uint64_t source_hash;
    int prebuilt;                  /* made from a cached binary and built already */
    const unsigned char *binary;   /* the cached one, or `owned` */
    unsigned char *owned;          /* read back after a compile from source */
    size_t size;
} built_program;

typedef struct plan_builds {
    cl_device_id device;
    const pv_fft_cache_entry *cached;   /* NULL: compile everything */
    built_program *programs;
    size_t count, capacity;
    int from_cache, from_source;
    int incomplete;                     /* a binary could not be kept: store nothing */
} plan_builds;

/* The plan this thread is making (initializeVkFFT runs on the caller's
 * thread, and fft.c makes one pair at a time). */
static _Thread_local plan_builds *active_builds;

static void free_builds(plan_builds *builds)
{
    for (size_t i = 0; i < builds->count; i++)
        free(builds->programs[i].owned);
    free(builds->programs);
    builds->programs = NULL;
    builds->count = builds->capacity = 0;
}

static built_program *next_program(plan_builds *builds)
{
    if (builds->count == builds->capacity) {
        size_t capacity = builds->capacity ? 2 * builds->capacity : 8;
        built_program *grown = realloc(builds->programs, capacity * sizeof *grown);
        if (!grown)
            return NULL;
        builds->programs = grown;
        builds->capacity = capacity;
    }
    built_program *slot = &builds->programs[builds->count++];
    memset(slot, 0, sizeof *slot);
    return slot;
}

static uint64_t source_hash(cl_uint count, const char **strings, const size_t *lengths)
{
    uint64_t hash = PV_CL_FNV_START;
    for (cl_uint i = 0; i < count; i++) {
        size_t length = lengths && lengths[i] ? lengths[i] : strlen(strings[i]);
        hash = pv_cl_fnv1a(hash, strings[i], length);
    }
    return hash;
}

/* The program at `index` of the plan from its cached binary, built, when
 * the entry holds one for the same source and the driver takes it. */
static cl_program program_from_cache(plan_builds *builds, cl_context context, size_t index,
                                     uint64_t hash, const pv_fft_cache_program **used)
{
    const pv_fft_cache_entry *cached = builds->cached;
    if (!cached || index >= cached->count)
        return NULL;
    const pv_fft_cache_program *entry = &cached->programs[index];
    if (entry->source_hash != hash) {
        pv_fft_cache_count_rejected();
        return NULL;
    }
    cl_int binary_status = CL_SUCCESS, err = CL_SUCCESS;
    size_t size = entry->size;
    const unsigned char *binary = entry->binary;
    cl_program program = clCreateProgramWithBinary(context, 1, &builds->device, &size, &binary,
                                                   &binary_status, &err);
    if (err == CL_SUCCESS && binary_status == CL_SUCCESS)
        err = clBuildProgram(program, 1, &builds->device, NULL, NULL, NULL);
    if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        pv_fft_cache_count_rejected();
        return NULL;
    }
    *used = entry;
    return program;
}

/* VkFFT's clCreateProgramWithSource while a plan is being made. */
static cl_program create_program_cached(cl_context context, cl_uint count, const char **strings,
                                        const size_t *lengths, cl_int *err)
{
    plan_builds *builds = active_builds;
    built_program *slot = builds ? next_program(builds) : NULL;
    if (!slot) {
        if (builds)
            builds->incomplete = 1;
        return clCreateProgramWithSource(context, count, strings, lengths, err);
    }
    slot->source_hash = source_hash(count, strings, lengths);
    const pv_fft_cache_program *used = NULL;
    slot->program = program_from_cache(builds, context, builds->count - 1, slot->source_hash, &used);
    if (slot->program) {
        slot->prebuilt = 1;
        slot->binary = used->binary;
        slot->size = used->size;
        builds->from_cache++;
        if (err)
            *err = CL_SUCCESS;
        return slot->program;
    }
    builds->from_source++;
    slot->program = clCreateProgramWithSource(context, count, strings, lengths, err);
    return slot->program;
}

static unsigned char *program_binary(cl_program program, size_t *size)
{
    size_t binary_size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size,
                         NULL) != CL_SUCCESS ||
        binary_size == 0)
        return NULL;
    unsigned char *binary = malloc(binary_size);
    if (binary &&
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) != CL_SUCCESS) {
        free(binary);
        return NULL;
    }
    *size = binary_size;
    return binary;
}

static built_program *find_program(plan_builds *builds, cl_program program)
{
    for (size_t i = 0; builds && i < builds->count; i++)
        if (builds->programs[i].program == program)
            return &builds->programs[i];
    return NULL;
}

/* VkFFT's clBuildProgram while a plan is being made: a program made from
 * the cache is built already; one compiled from source has its binary
 * kept for the entry. */
static cl_int build_program_cached(cl_program program, cl_uint device_count,
                                   const cl_device_id *devices, const char *options,
                                   void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    built_program *slot = find_program(active_builds, program);
    if (slot && slot->prebuilt)
        return CL_SUCCESS;
    cl_int err = clBuildProgram(program, device_count, devices, options, notify, user);
    if (err == CL_SUCCESS && slot) {
        slot->owned = program_binary(program, &slot->size);
        slot->binary = slot->owned;
        if (!slot->owned)
            active_builds->incomplete = 1;
    }
    return err;
}

#define clCreateProgramWithSource create_program_cached
#define clBuildProgram build_program_cached

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

#undef clCreateProgramWithSource
#undef clBuildProgram

typedef struct vkfft_pair {
    VkFFTApplication app;
    cl_command_queue queue;
    uint64_t spectrum_bytes;  /* the whole batch */
    uint64_t real_bytes;
    cl_mem real_slot;         /* this launch's buffers (see the file comment) */
    cl_mem spectrum_slot;
    const pv_cl_fft_shape *shape;  /* fft.c's, for the cache key */
} vkfft_pair;

/* VkFFT transforms any length: factors past 13 go through Bluestein. */
static int vkfft_length_ok(int n)
{
    return n >= 1;
}

/* The longest axis parvis gives VkFFT.  Past it VkFFT splits an axis into
 * several uploads, and on PoCL's CPU device (VkFFT 1.3, local memory as
 * PoCL reports it) valid transforms of 65537..131072 points along x killed
 * the process (SIGSEGV); 65536 and below were right.  The NVIDIA GPU's
 * limits are checked on that machine (docs/fft-engines.md). */
#define VKFFT_MAX_AXIS 65536

/* VkFFT's R2C needs at least 2 points along x (1 gives
 * VKFFT_ERROR_UNSUPPORTED_RADIX, 3001), and every axis at most
 * VKFFT_MAX_AXIS; other shapes go to clFFT (fft.c). */
static int vkfft_shape_ok(const int size[3])
{
    return size[0] >= 2 && size[0] <= VKFFT_MAX_AXIS && size[1] <= VKFFT_MAX_AXIS &&
           size[2] <= VKFFT_MAX_AXIS;
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

static void vkfft_destroy(pv_context *ctx, void *plan)
{
    (void)ctx;
    vkfft_pair *pair = plan;
    deleteVkFFT(&pair->app);
    free(pair);
}

/* ------------------------------------------------ plans and the cache */

/* A device string (name, vendor, driver) into text; "" when unknown. */
static void device_string(cl_device_id device, cl_device_info what, char *text, size_t size)
{
    text[0] = '\0';
    if (clGetDeviceInfo(device, what, size, text, NULL) != CL_SUCCESS)
        text[0] = '\0';
    text[size - 1] = '\0';
}

static void platform_version(cl_device_id device, char *text, size_t size)
{
    cl_platform_id platform = NULL;
    text[0] = '\0';
    if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) !=
            CL_SUCCESS ||
        clGetPlatformInfo(platform, CL_PLATFORM_VERSION, size, text, NULL) != CL_SUCCESS)
        text[0] = '\0';
    text[size - 1] = '\0';
}

/* The cache key of a pair: the device and its driver, VkFFT's version and
 * the transform (single precision, R2C forward and C2R inverse, dense). */
static uint64_t pair_key(const pv_cl_fft_shape *shape)
{
    char name[256], vendor[256], driver[256], platform[256];
    device_string(shape->device, CL_DEVICE_NAME, name, sizeof name);
    device_string(shape->device, CL_DEVICE_VENDOR, vendor, sizeof vendor);
    device_string(shape->device, CL_DRIVER_VERSION, driver, sizeof driver);
    platform_version(shape->device, platform, sizeof platform);
    pv_fft_cache_identity id = {
        name, vendor, driver, platform, "VkFFT", VkFFTGetVersion(),
        {shape->size[0], shape->size[1], shape->size[2]}, shape->batch, "f32 r2c+c2r dense",
    };
    return pv_fft_cache_key(&id);
}

/* After a successful initializeVkFFT: a plan made wholly from the entry is
 * a hit; otherwise the binaries of all its programs become the entry. */
static void settle_cache(const plan_builds *builds, uint64_t key)
{
    int hit = builds->from_source == 0 && builds->cached &&
              builds->cached->count == builds->count;
    pv_fft_cache_count_hit(hit);
    if (hit || builds->incomplete || builds->count == 0 || !pv_fft_cache_enabled())
        return;
    pv_fft_cache_program *programs = calloc(builds->count, sizeof *programs);
    if (!programs)
        return;
    for (size_t i = 0; i < builds->count; i++) {
        programs[i].source_hash = builds->programs[i].source_hash;
        programs[i].binary = builds->programs[i].binary;
        programs[i].size = builds->programs[i].size;
    }
    pv_fft_cache_store(key, programs, builds->count);
    free(programs);
}

/* initializeVkFFT with its compiles routed through the cache entry
 * (cached may be NULL).  *used_cache: some program came from the entry. */
static VkFFTResult initialize_through_cache(vkfft_pair *pair, const VkFFTConfiguration *config,
                                            cl_device_id device, const pv_fft_cache_entry *cached,
                                            uint64_t key, int *used_cache)
{
    plan_builds builds = {0};
    builds.device = device;
    builds.cached = cached;
    memset(&pair->app, 0, sizeof pair->app);
    active_builds = &builds;
    VkFFTResult result = initializeVkFFT(&pair->app, *config);
    active_builds = NULL;
    *used_cache = builds.from_cache > 0;
    if (result == VKFFT_SUCCESS)
        settle_cache(&builds, key);
    free_builds(&builds);
    return result;
}

/* Made from the cache when it holds the pair's binaries; an entry whose
 * binaries load but do not make a working plan is removed and the plan
 * compiled again from source. */
static VkFFTResult initialize_cached(pv_context *ctx, vkfft_pair *pair,
                                     const VkFFTConfiguration *config, cl_device_id device)
{
    if (!pv_fft_cache_enabled())
        return initializeVkFFT(&pair->app, *config);
    uint64_t key = pair_key(pair->shape);
    pv_fft_cache_entry cached = {0};
    int have_entry = pv_fft_cache_load(key, &cached);
    int used_cache = 0;
    VkFFTResult result = initialize_through_cache(pair, config, device,
                                                  have_entry ? &cached : NULL, key, &used_cache);
    pv_fft_cache_entry_free(&cached);
    if (result != VKFFT_SUCCESS && used_cache) {
        pv_log(ctx, "FFT cache: the cached VkFFT kernels do not work (VkFFTResult %d), "
                    "compiling them again", (int)result);
        pv_fft_cache_count_rejected();
        pv_fft_cache_remove(key);
        result = initialize_through_cache(pair, config, device, NULL, key, &used_cache);
    }
    return result;
}

/* A pair whose initializeVkFFT failed: VkFFT frees what it made before it
 * fails, so only the pair itself is left. */
static void free_unmade_pair(pv_context *ctx, void *plan)
{
    (void)ctx;
    free(plan);
}

static pv_status vkfft_create(pv_context *ctx, pv_cl_fft_shape *shape, void **plan)
{
    vkfft_pair *pair = calloc(1, sizeof *pair);
    if (!pair)
        return pv_fail(ctx, PV_ERR_NOMEM, "VkFFT plans: out of memory");
    VkFFTConfiguration config = {0};
    describe_layout(shape, pair, &config);
    pair->queue = shape->queue;
    pair->shape = shape;
    config.device = &shape->device;
    config.context = &shape->context;
    config.commandQueue = &pair->queue;
    pv_status status = vkfft_check(ctx, initialize_cached(ctx, pair, &config, shape->device),
                                   "initializeVkFFT");
    return pv_plan_hand_over(ctx, status, pair, free_unmade_pair, plan);
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
    return vkfft_check(ctx, VkFFTAppend(&pair->app, forward ? -1 : 1, &launch),
                       forward ? "VkFFTAppend(forward)" : "VkFFTAppend(inverse)");
}

const pv_cl_fft_engine_ops pv_cl_fft_vkfft_ops = {
    PV_FFT_VKFFT, "VkFFT", vkfft_length_ok, vkfft_create, vkfft_destroy, vkfft_enqueue,
    "VkFFTAppend", vkfft_shape_ok,
};
