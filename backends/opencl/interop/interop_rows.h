/* Internal: the OpenCL backend's passes over a caller's bound buffer
 * (interop_rows.c, kernels/interop.cl), bound to the interop sub-table's
 * row_stats, row_energy, to_f32, bound_rect, stage, unstage, masked_stats and
 * masked_centre slots by interop.c; what each computes
 * is in lib/core/ops_interop.h.  Not installed. */
#ifndef PV_CL_INTEROP_ROWS_H
#define PV_CL_INTEROP_ROWS_H

#include "../opencl.h"

pv_status pv_cl_rows_stats(pv_context *ctx, const pv_device_rows *rows, pv_row_stats *out);
pv_status pv_cl_rows_energy(pv_context *ctx, const pv_device_rows *rows,
                            const float *const *window, double mean, double *out);
pv_status pv_cl_rows_to_f32(pv_context *ctx, const pv_device_rows *rows, double mean,
                            double scale, const void *proxy, size_t bytes);
pv_status pv_cl_rows_stage(pv_context *ctx, const void *proxy, size_t bytes);
pv_status pv_cl_rows_unstage(pv_context *ctx, const void *proxy, pv_image *out);
pv_status pv_cl_rows_rect(pv_context *ctx, const void *proxy, size_t offset, ptrdiff_t stride,
                          pv_image *host, int to_device);
pv_status pv_cl_rows_masked_stats(pv_context *ctx, const pv_device_rows *rows,
                                  const pv_device_rows *mask, pv_masked_row *out);
pv_status pv_cl_rows_masked_centre(pv_context *ctx, const pv_device_rows *rows,
                                   const pv_device_rows *mask, double mean, double scale,
                                   int exact, const void *values, const void *mask01,
                                   double *energy);

#endif
