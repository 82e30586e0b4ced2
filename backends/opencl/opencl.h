/* Internal: the OpenCL backend's operations, one module per file. */
#ifndef PV_OPENCL_H
#define PV_OPENCL_H

#include "runtime/runtime.h"

/* Launch-parameter families (see runtime.h), defined by each module. */
extern const pv_cl_param_family pv_cl_params_filter;
extern const pv_cl_param_family pv_cl_params_sad;
extern const pv_cl_param_family pv_cl_params_bp;   /* stereo_bp.c */
extern const pv_cl_param_family pv_cl_params_sgm;  /* stereo_sgm.c */
extern const pv_cl_param_family pv_cl_params_register;
extern const pv_cl_param_family pv_cl_params_fft;  /* fft.c: FFT engine choice */
extern const pv_cl_param_family pv_cl_params_flow;

extern const pv_cl_param_family pv_cl_params_features;

extern const pv_cl_param_family pv_cl_params_octreg;
extern const pv_cl_param_family pv_cl_params_geometry; /* geometry.c */
extern const pv_cl_param_family pv_cl_params_colour;

/* The module sub-tables this backend's backend.c composes. */
PV_BACKEND_MODULES(PV_BACKEND_DECLARE, pv_cl_)

/* stereo_sgm.c: semi-global matching, bound to the stereo sub-table's sgm
 * slot in stereo.c; arguments checked by the front end, confidence may be
 * NULL. */
pv_status pv_cl_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                    const pv_sgm_params *params, pv_image *disparity, pv_image *confidence);
/* stereo_sgm_batch.c: count >= 1 pairs of one size and type through one
 * plan, transfers overlapping the kernels (the sgm_batch slot);
 * confidences may be NULL. */
pv_status pv_cl_sgm_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                          int count, const pv_sgm_params *params, pv_image *disparities,
                          pv_image *confidences);

/* colour.c: the grey value of each pixel of a valid image of any pixel
 * type, times scale, into the dense f32 device buffer dst (width * height
 * floats): the raw pixels are uploaded (fewer bytes than floats for 8- and
 * 16-bit data) and converted on the device.  For inputs of other
 * modules (SIFT); enqueued only, the caller finishes. */
pv_status pv_cl_grey_into(pv_context *ctx, const pv_image *in, float scale, cl_mem dst);

#endif
