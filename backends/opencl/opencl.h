/* Internal: the OpenCL backend's operations, one module per file. */
#ifndef PV_OPENCL_H
#define PV_OPENCL_H

#include "runtime.h"

/* Launch-parameter families (see runtime.h), defined by each module. */
extern const pv_cl_param_family pv_cl_params_filter;
extern const pv_cl_param_family pv_cl_params_sad;
extern const pv_cl_param_family pv_cl_params_bp;   /* stereo_bp.c */
extern const pv_cl_param_family pv_cl_params_register;
extern const pv_cl_param_family pv_cl_params_fft;  /* fft.c: FFT engine choice */
extern const pv_cl_param_family pv_cl_params_flow;

extern const pv_cl_param_family pv_cl_params_features;

extern const pv_cl_param_family pv_cl_params_octreg;
extern const pv_cl_param_family pv_cl_params_geometry; /* geometry.c */

/* The module sub-tables this backend's backend.c composes. */
PV_BACKEND_MODULES(PV_BACKEND_DECLARE, pv_cl_)

#endif
