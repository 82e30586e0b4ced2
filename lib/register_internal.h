/* Internal: register-module entry points that lib/register.c calls on the
 * backends directly, outside the backend table (lib/backend.h): the FFT
 * engine choice, which only the OpenCL backend has, and the bare transform
 * pair of a plan, a benchmark aid.  Not installed. */
#ifndef PV_REGISTER_INTERNAL_H
#define PV_REGISTER_INTERNAL_H

#include "core/internal.h"

/* Run the plan's forward and inverse transforms once over its whole batch
 * (nothing else), finishing them, so the call's timing is the bare pair. */
pv_status pv_cpu_pc_time_fft(pv_context *ctx, void *plan);

#ifdef PV_HAVE_OPENCL
pv_status pv_cl_pc_time_fft(pv_context *ctx, void *plan);
/* backends/opencl/fft.c; see fft.h. */
pv_status pv_cl_fft_engine_of(pv_context *ctx, pv_fft_engine *engine);
pv_status pv_cl_fft_set_engine(pv_context *ctx, pv_fft_engine engine);
int pv_cl_fft_engine_built(pv_fft_engine engine);
#endif

#endif
