/* The CPU reference backend: a composition of its module sub-tables, each
 * defined by its own module file. */
#include "cpu.h"

const pv_backend_ops pv_cpu_backend = {
    .name = "cpu",
    PV_BACKEND_MODULES(PV_BACKEND_COMPOSE, pv_cpu_)
};
