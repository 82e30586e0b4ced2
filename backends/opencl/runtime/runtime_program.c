/* The OpenCL runtime's programs: the embedded kernel sources built on first
 * use per (program, options), from the binary cache when it holds a
 * working entry, and their kernels, kept on the context. */
#include "runtime_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pv_cl_source { const char *name; const char *text; };
extern const struct pv_cl_source pv_cl_sources[];
extern const size_t pv_cl_source_count;

/* ------------------------------------------------------------- programs */

static const char *embedded_source(const char *name)
{
    for (size_t i = 0; i < pv_cl_source_count; i++)
        if (strcmp(pv_cl_sources[i].name, name) == 0)
            return pv_cl_sources[i].text;
    return NULL;
}

static char *build_log(pv_cl_state *state, cl_program program)
{
    size_t size = 0;
    clGetProgramBuildInfo(program, state->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
    char *log = calloc(size + 1, 1);
    if (log && size > 0)
        clGetProgramBuildInfo(program, state->device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
    return log;
}

/* Where a failed build's log is worth reading from: the line of its first
 * error, since compilers list warnings first and the message keeps only
 * the start of what it is given; the whole log when no line says "error". */
static const char *log_from_first_error(const char *log)
{
    const char *error = log ? strstr(log, "error") : NULL;
    if (!error)
        return log ? log : "";
    while (error > log && error[-1] != '\n')
        error--;
    return error;
}

/* clBuildProgram for one device, through the fault injection. */
static cl_int build_program(pv_context *ctx, cl_program program, const char *options)
{
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_BUILD);
    if (err != CL_SUCCESS)
        return err;
    cl_device_id device = pv_cl_state_of(ctx)->device;
    return clBuildProgram(program, 1, &device, options, NULL, NULL);
}

static cl_program try_cached_binary(pv_context *ctx, uint64_t key, const char *options)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    size_t size = 0;
    unsigned char *binary = pv_cl_binary_load(key, &size);
    if (!binary)
        return NULL;
    cl_int err, binary_status;
    const unsigned char *binaries[1] = {binary};
    cl_program program = clCreateProgramWithBinary(state->context, 1, &state->device, &size,
                                                   binaries, &binary_status, &err);
    free(binary);
    if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program)
            clReleaseProgram(program);
        pv_cl_binary_remove(key);
        return NULL;
    }
    if (build_program(ctx, program, options) != CL_SUCCESS) {
        clReleaseProgram(program);
        pv_cl_binary_remove(key);
        return NULL;
    }
    return program;
}

/* With PARVIS_CL_OPTIONS_LOG set, every program built from source adds a
 * line "name<TAB>options" to that file, so that tests/test_kernel_syntax.sh
 * can check the kernels with the options they were really built with by a
 * second, stricter compiler (PoCL's lets some errors pass, such as calls to
 * functions declared later, that other drivers refuse). */
static void log_build_options(const char *name, const char *options)
{
    char path[PV_CONFIG_VALUE_MAX + 1];
    FILE *file = pv_config_get(PV_CONFIG_CL_OPTIONS_LOG, path, sizeof path) ? fopen(path, "a")
                                                                            : NULL;
    if (!file)
        return;
    fprintf(file, "%s\t%s\n", name, options);
    fclose(file);
}

static pv_status build_from_source(pv_context *ctx, const char *name, const char *source,
                                   const char *options, cl_program *out)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    cl_int err;
    cl_program program = clCreateProgramWithSource(state->context, 1, &source, NULL, &err);
    pv_status status = pv_cl_check(ctx, err, "clCreateProgramWithSource");
    if (status != PV_OK)
        return status;
    err = build_program(ctx, program, options);
    if (err != CL_SUCCESS) {
        char *log = build_log(state, program);
        pv_context_set_build_log(ctx, log);
        status = pv_fail(ctx, PV_ERR_BUILD,
                         "clBuildProgram of kernels/%s.cl failed: %s (%d)%s; log from the first "
                         "error: %.600s", name, pv_cl_error_name(err), (int)err,
                         pv_cl_injected_note(ctx), log_from_first_error(log));
        free(log);
        clReleaseProgram(program);
        return status;
    }
    *out = program;
    log_build_options(name, options);
    return PV_OK;
}

/* The program from the binary cache when it has a working entry (and
 * use_cache), else built from source and stored.  *key: its cache key;
 * *from_cache: whether the binary came from the cache. */
static pv_status obtain_program(pv_context *ctx, const char *name, const char *options,
                                int use_cache, cl_program *out, uint64_t *key_out,
                                int *from_cache)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    const char *source = embedded_source(name);
    if (!source)
        return pv_fail(ctx, PV_ERR_INVALID, "no embedded OpenCL program '%s'", name);
    uint64_t key = pv_cl_binary_key(ctx, state, name, source, options);
    *key_out = key;
    cl_program program = use_cache ? try_cached_binary(ctx, key, options) : NULL;
    *from_cache = program != NULL;
    if (program) {
        *out = program;
        return PV_OK;
    }
    pv_status status = build_from_source(ctx, name, source, options, &program);
    if (status != PV_OK)
        return status;
    size_t size = 0;
    unsigned char *binary = pv_cl_program_binary(program, &size);
    if (binary)
        pv_cl_binary_store(key, binary, size);
    free(binary);
    *out = program;
    return PV_OK;
}

static built_program *find_program(pv_cl_state *state, const char *key)
{
    for (size_t i = 0; i < state->program_count; i++)
        if (strcmp(state->programs[i].key, key) == 0)
            return &state->programs[i];
    return NULL;
}

static pv_status remember_program(pv_context *ctx, const char *key, cl_program program,
                                  built_program **out)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    built_program *grown = realloc(state->programs, (state->program_count + 1) * sizeof *grown);
    char *key_copy = strdup(key);
    if (!grown || !key_copy) {
        if (grown)
            state->programs = grown;
        free(key_copy);
        clReleaseProgram(program);
        return pv_fail(ctx, PV_ERR_NOMEM, "program cache: out of memory");
    }
    state->programs = grown;
    built_program *entry = &state->programs[state->program_count++];
    memset(entry, 0, sizeof *entry);
    entry->key = key_copy;
    entry->program = program;
    *out = entry;
    return PV_OK;
}

static pv_status program_entry(pv_context *ctx, const char *name, const char *options,
                               built_program **out)
{
    char key[PV_CL_OPTIONS_MAX + 128];
    int n = snprintf(key, sizeof key, "%s|%s", name, options);
    if (n < 0 || (size_t)n >= sizeof key) /* a cut key could name another program */
        return pv_fail(ctx, PV_ERR_INVALID, "build options of kernels/%s.cl too long", name);
    built_program *entry = find_program(pv_cl_state_of(ctx), key);
    if (entry) {
        *out = entry;
        return PV_OK;
    }
    cl_program program = NULL;
    uint64_t cache_key = 0;
    int from_cache = 0;
    pv_status status = obtain_program(ctx, name, options, 1, &program, &cache_key, &from_cache);
    if (status != PV_OK)
        return status;
    status = remember_program(ctx, key, program, out);
    if (status == PV_OK) {
        (*out)->cache_key = cache_key;
        (*out)->from_cache = from_cache;
    }
    return status;
}

/* A cached binary that built but lacks a kernel (or whose kernel cannot be
 * made) is not trusted: its cache entry goes, the program is built from
 * source (and stored again) and replaces the entry's.  Kernels already made
 * from the old program stay valid (they hold their own reference). */
static pv_status rebuild_from_source(pv_context *ctx, built_program *entry, const char *name,
                                     const char *options)
{
    pv_log(ctx, "binary cache: the cached kernels/%s.cl does not work, rebuilding from source",
           name);
    pv_cl_binary_remove(entry->cache_key);
    cl_program program = NULL;
    pv_status status = obtain_program(ctx, name, options, 0, &program, &entry->cache_key,
                                      &entry->from_cache);
    if (status != PV_OK)
        return status;
    clReleaseProgram(entry->program);
    entry->program = program;
    return PV_OK;
}

static pv_status add_kernel(pv_context *ctx, built_program *entry, const char *kernel_name,
                            cl_kernel *out)
{
    cl_int err;
    cl_kernel kernel = clCreateKernel(entry->program, kernel_name, &err);
    if (err != CL_SUCCESS)
        return pv_fail(ctx, PV_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", kernel_name,
                       pv_cl_error_name(err), (int)err);
    size_t n = entry->kernel_count + 1;
    cl_kernel *kernels = realloc(entry->kernels, n * sizeof *kernels);
    if (kernels)
        entry->kernels = kernels;
    char **names = realloc(entry->kernel_names, n * sizeof *names);
    if (names)
        entry->kernel_names = names;
    char *name_copy = strdup(kernel_name);
    if (!kernels || !names || !name_copy) {
        free(name_copy);
        clReleaseKernel(kernel);
        return pv_fail(ctx, PV_ERR_NOMEM, "kernel cache: out of memory");
    }
    entry->kernels[entry->kernel_count] = kernel;
    entry->kernel_names[entry->kernel_count++] = name_copy;
    *out = kernel;
    return PV_OK;
}

pv_status pv_cl_kernel(pv_context *ctx, const char *program, const char *requested,
                       const char *kernel_name, cl_kernel *kernel)
{
    built_program *entry = NULL;
    const char *options = requested ? requested : "";
    pv_status status = pv_cl_param_check(ctx, 0);
    if (status == PV_OK)
        status = program_entry(ctx, program, options, &entry);
    if (status != PV_OK)
        return status;
    for (size_t i = 0; i < entry->kernel_count; i++)
        if (strcmp(entry->kernel_names[i], kernel_name) == 0) {
            *kernel = entry->kernels[i];
            return PV_OK;
        }
    status = add_kernel(ctx, entry, kernel_name, kernel);
    if (status != PV_OK && entry->from_cache) {
        status = rebuild_from_source(ctx, entry, program, options);
        if (status == PV_OK)
            status = add_kernel(ctx, entry, kernel_name, kernel);
    }
    return status;
}

void pv_cl_release_programs(pv_cl_state *state)
{
    for (size_t i = 0; i < state->program_count; i++) {
        built_program *entry = &state->programs[i];
        for (size_t k = 0; k < entry->kernel_count; k++) {
            clReleaseKernel(entry->kernels[k]);
            free(entry->kernel_names[k]);
        }
        free(entry->kernels);
        free(entry->kernel_names);
        clReleaseProgram(entry->program);
        free(entry->key);
    }
    free(state->programs);
}
