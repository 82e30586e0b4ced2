/* The OpenCL runtime's kernel launches: the one place of the library that
 * sets kernel arguments (clSetKernelArg) and enqueues kernels
 * (clEnqueueNDRangeKernel).  The modules hand it a kernel and its whole
 * argument list, as an array of pv_cl_kernel_arg (written out, or gathered
 * by a pv_cl_arg_list); every launch sets every argument, so that no launch
 * depends on what an earlier one left on the kernel. */
#include "runtime_state.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------- argument lists */

void pv_cl_args_add(pv_cl_arg_list *list, size_t size, const void *value)
{
    if (list->count < 0 || list->count >= PV_CL_ARGS_MAX) {
        list->count = PV_CL_ARGS_OVERFLOW;
        return;
    }
    list->item[list->count].size = size;
    list->item[list->count++].value = value;
}

void pv_cl_args_buffers(pv_cl_arg_list *list, const cl_mem *const *buffers, int count)
{
    for (int i = 0; i < count; i++)
        pv_cl_args_add(list, sizeof(cl_mem), buffers[i]);
}

/* The scalars are copied into the list's own slot of the argument, so that
 * they live as long as the list. */
void pv_cl_args_ints(pv_cl_arg_list *list, const cl_int *values, int count)
{
    for (int i = 0; i < count; i++) {
        if (list->count < 0 || list->count >= PV_CL_ARGS_MAX) {
            list->count = PV_CL_ARGS_OVERFLOW;
            return;
        }
        list->scalar[list->count].i = values[i];
        pv_cl_args_add(list, sizeof(cl_int), &list->scalar[list->count].i);
    }
}

void pv_cl_args_floats(pv_cl_arg_list *list, const cl_float *values, int count)
{
    for (int i = 0; i < count; i++) {
        if (list->count < 0 || list->count >= PV_CL_ARGS_MAX) {
            list->count = PV_CL_ARGS_OVERFLOW;
            return;
        }
        list->scalar[list->count].f = values[i];
        pv_cl_args_add(list, sizeof(cl_float), &list->scalar[list->count].f);
    }
}

/* --------------------------------------------------------------- launches */

/* args[0 .. count) onto kernel.  A list that overflowed (count < 0) or a
 * missing array is a mistake in the caller, refused before any argument is
 * set. */
static pv_status set_args(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                          int count)
{
    if (count < 0 || count > PV_CL_ARGS_MAX || (count > 0 && !args))
        return pv_fail(ctx, PV_ERR_INVALID, "kernel arguments: %d arguments (at most %d)",
                       count, PV_CL_ARGS_MAX);
    for (int i = 0; i < count; i++) {
        cl_int err = clSetKernelArg(kernel, (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS)
            return pv_fail(ctx, PV_ERR_OPENCL, "clSetKernelArg(%d) failed: %s (%d)", i,
                           pv_cl_error_name(err), (int)err);
    }
    return PV_OK;
}

/* global rounded up to a multiple of local (local may be NULL). */
static void round_global(cl_uint dims, const size_t *global, const size_t *local, size_t *rounded)
{
    for (cl_uint i = 0; i < dims && i < 3; i++)
        rounded[i] = local ? (global[i] + local[i] - 1) / local[i] * local[i] : global[i];
}

/* Enqueue kernel on the current queue (the injected faults counted), its
 * event in *event when event is not NULL. */
static pv_status enqueue(pv_context *ctx, cl_kernel kernel, cl_uint dims, const size_t *global,
                         const size_t *local, cl_event *event)
{
    if (dims < 1 || dims > 3 || !global)
        return pv_fail(ctx, PV_ERR_INVALID, "kernel launch: %u dimensions", (unsigned)dims);
    size_t rounded[3];
    round_global(dims, global, local, rounded);
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(pv_cl_queue(ctx), kernel, dims, NULL, rounded, local, 0,
                                     NULL, event);
    if (err == CL_SUCCESS)
        return PV_OK;
    char name[128] = "";
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = '\0';
    return pv_fail(ctx, PV_ERR_OPENCL, "clEnqueueNDRangeKernel(%s) failed: %s (%d)%s", name,
                   pv_cl_error_name(err), (int)err, pv_cl_injected_note(ctx));
}

pv_status pv_cl_launch_args(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                            int count, cl_uint dims, const size_t *global, const size_t *local)
{
    pv_status status = set_args(ctx, kernel, args, count);
    if (status == PV_OK)
        status = pv_cl_param_check(ctx, 0);
    if (status != PV_OK)
        return status;
    cl_command_queue queue = pv_cl_queue(ctx);
    cl_event event = NULL;
    const int timed = pv_cl_launch_wants_event(ctx, queue);
    status = enqueue(ctx, kernel, dims, global, local, timed ? &event : NULL);
    if (status != PV_OK || !timed)
        return status;
    return pv_cl_track_launch(ctx, event, kernel, queue);
}

pv_status pv_cl_family_kernel(pv_context *ctx, const char *program, const char *family,
                              const char *extra, const char *name, cl_kernel *kernel)
{
    char options[1024] = "";
    pv_status status = pv_cl_param_defines(ctx, family, options, sizeof options);
    if (status == PV_OK && extra) {
        size_t used = strlen(options);
        int n = snprintf(options + used, sizeof options - used, "%s", extra);
        if (n < 0 || (size_t)n >= sizeof options - used)
            status = pv_fail(ctx, PV_ERR_INVALID, "build options of %s overflow", name);
    }
    return status == PV_OK ? pv_cl_kernel(ctx, program, options, name, kernel) : status;
}

pv_status pv_cl_run(pv_context *ctx, const char *program, const char *family, const char *name,
                    const pv_cl_kernel_arg *args, int count, cl_uint dims, const size_t *global,
                    const size_t *local)
{
    cl_kernel kernel;
    pv_status status = pv_cl_family_kernel(ctx, program, family, NULL, name, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, count, dims, global, local)
                           : status;
}

pv_status pv_cl_launch_waited(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                              int count, cl_uint dims, const size_t *global, const size_t *local,
                              double *ms)
{
    cl_event event = NULL;
    pv_status status = set_args(ctx, kernel, args, count);
    if (status == PV_OK)
        status = enqueue(ctx, kernel, dims, global, local, &event);
    if (status != PV_OK)
        return status;
    status = pv_cl_check(ctx, clWaitForEvents(1, &event), "clWaitForEvents");
    if (status == PV_OK)
        *ms = pv_cl_event_ms(event);
    clReleaseEvent(event);
    return status;
}

pv_status pv_cl_finish_after(pv_context *ctx, pv_status status)
{
    /* A device-buffer call returns once its commands are queued: its
     * caller waits for the event it gets back (lib/interop/interop.c). */
    if (pv_cl_state_of(ctx)->deferred && status == PV_OK)
        return pv_cl_check(ctx, clFlush(pv_cl_queue(ctx)), "clFlush(device-buffer call)");
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}
