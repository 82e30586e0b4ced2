/* The OpenCL backend: a composition of its module sub-tables, each
 * defined by its own module file. */
#include "opencl.h"

const pv_backend_ops pv_opencl_backend = {
    .name = "opencl",
    PV_BACKEND_MODULES(PV_BACKEND_COMPOSE, pv_cl_)
};
