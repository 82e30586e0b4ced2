/* The OpenCL runtime's state on a context: its set-up and release, error
 * names and checks, and the launch-parameter store (the other concerns:
 * runtime_state.h's list). */
#include "runtime_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cl_context pv_cl_context(pv_context *ctx) { return pv_cl_state_of(ctx)->context; }
cl_command_queue pv_cl_queue(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    return state->current ? state->current : state->queue;
}
cl_device_id pv_cl_device(pv_context *ctx) { return pv_cl_state_of(ctx)->device; }
const pv_device_info *pv_cl_device_info(pv_context *ctx) { return &ctx->device; }

pv_cl_faults *pv_cl_faults_of(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    return state ? &state->faults : NULL;
}

/* ------------------------------------------------------------------ errors */

/* The OpenCL 1.2 error codes parvis names: the list is written once and
 * the switch of pv_cl_error_name is generated from it. */
#define PV_CL_ERROR_CODES(X)                                                                    \
    X(CL_SUCCESS) X(CL_DEVICE_NOT_FOUND) X(CL_DEVICE_NOT_AVAILABLE)                             \
    X(CL_COMPILER_NOT_AVAILABLE) X(CL_MEM_OBJECT_ALLOCATION_FAILURE) X(CL_OUT_OF_RESOURCES)     \
    X(CL_OUT_OF_HOST_MEMORY) X(CL_PROFILING_INFO_NOT_AVAILABLE) X(CL_MEM_COPY_OVERLAP)          \
    X(CL_IMAGE_FORMAT_MISMATCH) X(CL_IMAGE_FORMAT_NOT_SUPPORTED) X(CL_BUILD_PROGRAM_FAILURE)    \
    X(CL_MAP_FAILURE) X(CL_MISALIGNED_SUB_BUFFER_OFFSET)                                        \
    X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) X(CL_COMPILE_PROGRAM_FAILURE)               \
    X(CL_LINKER_NOT_AVAILABLE) X(CL_LINK_PROGRAM_FAILURE) X(CL_DEVICE_PARTITION_FAILED)         \
    X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(CL_INVALID_VALUE) X(CL_INVALID_DEVICE_TYPE)           \
    X(CL_INVALID_PLATFORM) X(CL_INVALID_DEVICE) X(CL_INVALID_CONTEXT)                           \
    X(CL_INVALID_QUEUE_PROPERTIES) X(CL_INVALID_COMMAND_QUEUE) X(CL_INVALID_HOST_PTR)           \
    X(CL_INVALID_MEM_OBJECT) X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(CL_INVALID_IMAGE_SIZE)     \
    X(CL_INVALID_SAMPLER) X(CL_INVALID_BINARY) X(CL_INVALID_BUILD_OPTIONS)                      \
    X(CL_INVALID_PROGRAM) X(CL_INVALID_PROGRAM_EXECUTABLE) X(CL_INVALID_KERNEL_NAME)            \
    X(CL_INVALID_KERNEL_DEFINITION) X(CL_INVALID_KERNEL) X(CL_INVALID_ARG_INDEX)                \
    X(CL_INVALID_ARG_VALUE) X(CL_INVALID_ARG_SIZE) X(CL_INVALID_KERNEL_ARGS)                    \
    X(CL_INVALID_WORK_DIMENSION) X(CL_INVALID_WORK_GROUP_SIZE) X(CL_INVALID_WORK_ITEM_SIZE)     \
    X(CL_INVALID_GLOBAL_OFFSET) X(CL_INVALID_EVENT_WAIT_LIST) X(CL_INVALID_EVENT)               \
    X(CL_INVALID_OPERATION) X(CL_INVALID_GL_OBJECT) X(CL_INVALID_BUFFER_SIZE)                   \
    X(CL_INVALID_MIP_LEVEL) X(CL_INVALID_GLOBAL_WORK_SIZE) X(CL_INVALID_PROPERTY)               \
    X(CL_INVALID_IMAGE_DESCRIPTOR) X(CL_INVALID_COMPILER_OPTIONS) X(CL_INVALID_LINKER_OPTIONS)  \
    X(CL_INVALID_DEVICE_PARTITION_COUNT)

const char *pv_cl_error_name(cl_int err)
{
    switch (err) {
#define PV_CL_ERROR_CASE(code) case code: return #code;
    PV_CL_ERROR_CODES(PV_CL_ERROR_CASE)
#undef PV_CL_ERROR_CASE
    default: return "unknown OpenCL error";
    }
}

/* Names an injected failure as such in its message. */
const char *pv_cl_injected_note(pv_context *ctx)
{
    return pv_cl_fault_take_pending(ctx) ? " [injected by PARVIS_FAULT]" : "";
}

pv_status pv_cl_check(pv_context *ctx, cl_int err, const char *call)
{
    if (err == CL_SUCCESS)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_OPENCL, "%s failed: %s (%d)%s", call, pv_cl_error_name(err),
                   (int)err, pv_cl_injected_note(ctx));
}

/* ------------------------------------------------------------ init/release */

/* An in-order, profiling queue on the state's device: the context's own
 * and the extra ones of pipelined batches are made alike. */
static pv_status profiling_queue(pv_context *ctx, const pv_cl_state *state, const char *call,
                                 cl_command_queue *queue)
{
    cl_int err;
    cl_command_queue made = clCreateCommandQueue(state->context, state->device,
                                                 CL_QUEUE_PROFILING_ENABLE, &err);
    pv_status status = pv_cl_check(ctx, err, call);
    if (status == PV_OK)
        *queue = made;
    return status;
}

static pv_status create_queue(pv_context *ctx, pv_cl_state *state)
{
    cl_int err;
    state->context = clCreateContext(NULL, 1, &state->device, NULL, NULL, &err);
    pv_status status = pv_cl_check(ctx, err, "clCreateContext");
    return status == PV_OK ? profiling_queue(ctx, state, "clCreateCommandQueue", &state->queue)
                           : status;
}

pv_status pv_cl_queue_create(pv_context *ctx, cl_command_queue *queue)
{
    return profiling_queue(ctx, pv_cl_state_of(ctx), "clCreateCommandQueue(extra)", queue);
}

void pv_cl_queue_release(cl_command_queue *queue)
{
    if (!*queue)
        return;
    clFinish(*queue);
    clReleaseCommandQueue(*queue);
    *queue = NULL;
}

cl_command_queue pv_cl_use_queue(pv_context *ctx, cl_command_queue queue)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    cl_command_queue previous = state->current;
    state->current = queue;
    return previous;
}

pv_status pv_cl_runtime_init(pv_context *ctx, int device_index)
{
    pv_cl_state *state = calloc(1, sizeof *state);
    if (!state)
        return pv_fail(ctx, PV_ERR_NOMEM, "OpenCL runtime: out of memory");
    pv_status status = pv_cl_device_pick(ctx, state, device_index);
    if (status != PV_OK) {
        free(state);
        return status;
    }
    ctx->backend_state = state;
    pv_cl_profile_init(state);
    char faults[PV_CONFIG_VALUE_MAX + 1];
    pv_config_get(PV_CONFIG_FAULT, faults, sizeof faults);
    status = pv_cl_faults_parse(ctx, faults, &state->faults);
    if (status == PV_OK)
        status = create_queue(ctx, state);
    if (status != PV_OK)
        pv_cl_runtime_release(ctx);
    return status;
}

void pv_cl_runtime_release(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (!state)
        return;
    if (state->queue)
        clFinish(state->queue);
    for (size_t i = 0; i < state->hook_count; i++)
        state->hooks[i].fn(ctx, state->hooks[i].arg);
    free(state->hooks);
    pv_cl_release_stages(state);
    pv_cl_release_profile(ctx, state);
    pv_cl_release_programs(state);
    pv_cl_release_scratch(state);
    free(state->overrides);
    if (state->queue)
        clReleaseCommandQueue(state->queue);
    if (state->context)
        clReleaseContext(state->context);
    free(state);
    ctx->backend_state = NULL;
}

pv_status pv_cl_on_release(pv_context *ctx, pv_cl_release_fn fn, void *arg)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; i < state->hook_count; i++)
        if (state->hooks[i].fn == fn && state->hooks[i].arg == arg)
            return PV_OK;
    release_hook *grown = realloc(state->hooks, (state->hook_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "release hooks: out of memory");
    state->hooks = grown;
    state->hooks[state->hook_count].fn = fn;
    state->hooks[state->hook_count++].arg = arg;
    return PV_OK;
}

/* ------------------------------------------------------- parameter store */

int pv_cl_param_override(pv_context *ctx, const char *family, const char *name, int *value)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    for (size_t i = 0; state && i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            *value = state->overrides[i].value;
            return 1;
        }
    return 0;
}

pv_status pv_cl_param_store_override(pv_context *ctx, const char *family, const char *name,
                                     int value)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (strlen(family) >= sizeof state->overrides[0].family ||
        strlen(name) >= sizeof state->overrides[0].name)
        return pv_fail(ctx, PV_ERR_INVALID, "launch parameter name too long: %s.%s", family, name);
    for (size_t i = 0; i < state->override_count; i++)
        if (strcmp(state->overrides[i].family, family) == 0 &&
            strcmp(state->overrides[i].name, name) == 0) {
            state->overrides[i].value = value;
            return PV_OK;
        }
    param_override *grown =
        realloc(state->overrides, (state->override_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "launch parameter store: out of memory");
    state->overrides = grown;
    param_override *entry = &state->overrides[state->override_count++];
    snprintf(entry->family, sizeof entry->family, "%s", family);
    snprintf(entry->name, sizeof entry->name, "%s", name);
    entry->value = value;
    return PV_OK;
}

void pv_cl_param_misspelled(pv_context *ctx, const char *family, const char *name)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (state && !state->misspelled[0])
        snprintf(state->misspelled, sizeof state->misspelled, "%s.%s", family, name);
}

pv_status pv_cl_param_check(pv_context *ctx, int forget)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (!state || !state->misspelled[0])
        return PV_OK;
    pv_status status = pv_fail(ctx, PV_ERR_INVALID, "no launch parameter %s (a misspelled name)",
                               state->misspelled);
    if (forget)
        state->misspelled[0] = '\0';
    return status;
}
