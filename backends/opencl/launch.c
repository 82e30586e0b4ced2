/* The launch path the OpenCL modules share: a module's kernel built with
 * its launch-parameter defines, its arguments set in order, then enqueued. */
#include "opencl.h"

/* Room for every module's parameter defines (-DNAME=value each). */
#define PV_CL_DEFINES_CAPACITY 1024

pv_status pv_cl_module_kernel(pv_context *ctx, const char *module, const char *name,
                              cl_kernel *kernel)
{
    char options[PV_CL_DEFINES_CAPACITY] = "";
    pv_status status = pv_cl_param_defines(ctx, module, options, sizeof options);
    if (status != PV_OK)
        return status;
    return pv_cl_kernel(ctx, module, options, name, kernel);
}

pv_status pv_cl_set_args(pv_context *ctx, cl_kernel kernel, const pv_cl_kernel_arg *args,
                         int count)
{
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++)
        status = pv_cl_arg(ctx, kernel, (cl_uint)i, args[i].size, args[i].value);
    return status;
}

pv_status pv_cl_run_kernel(pv_context *ctx, const char *module, const char *name,
                           const pv_cl_kernel_arg *args, int count, cl_uint dims,
                           const size_t *global, const size_t *local)
{
    cl_kernel kernel;
    pv_status status = pv_cl_module_kernel(ctx, module, name, &kernel);
    if (status == PV_OK)
        status = pv_cl_set_args(ctx, kernel, args, count);
    if (status == PV_OK)
        status = pv_cl_launch(ctx, kernel, dims, global, local);
    return status;
}
