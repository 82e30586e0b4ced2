/* The interop sub-table of the CPU backend: empty.  Device buffers need an
 * OpenCL context; lib/interop/interop.c refuses them on a CPU context with
 * PV_ERR_UNSUPPORTED before reaching a slot. */
#include "../cpu.h"

const pv_interop_ops pv_cpu_interop_ops = {0};
