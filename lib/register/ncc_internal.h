/* Internal, front end only: what normxcorr2's three front-end files share.
 * ncc.c holds the single call and these helpers, ncc_batch.c the batch
 * (one template, many images), ncc_masked.c the masked form.  Not
 * installed. */
#ifndef PV_NCC_INTERNAL_H
#define PV_NCC_INTERNAL_H

#include "register_internal.h"

typedef struct pv_ncc_stats {
    double mean;
    double deviation;  /* population standard deviation */
} pv_ncc_stats;

/* Pixel (x, y) of a u8 or f32 image. */
double pv_ncc_pixel(const pv_image *image, int x, int y);
/* Mean and deviation of every pixel, two passes in double: exact enough
 * to tell a constant image (deviation 0) apart. */
pv_ncc_stats pv_ncc_image_stats(const pv_image *image);
/* Context, template and image valid, min_overlap >= 0, and the map's size
 * (image + templ - 1 per axis) within the kernels' 32-bit indices. */
pv_status pv_ncc_check_inputs(pv_context *ctx, const char *op, const pv_image *templ,
                              const pv_image *image, int min_overlap, int *map_w, int *map_h);
/* out: a valid f32 image of the map's size that shares no memory with
 * templ or image. */
pv_status pv_ncc_check_output(pv_context *ctx, const char *op, const pv_image *templ,
                              const pv_image *image, const pv_image *out, int map_w, int map_h);
/* Whether every value of the image is finite. */
int pv_ncc_is_finite(const pv_context *ctx, const pv_image *image);
/* The job's transform grid, floors and min_overlap, its images unset. */
pv_status pv_ncc_job_shape(pv_context *ctx, const char *op, const pv_image *templ,
                           const pv_image *image, int min_overlap, pv_ncc_job *job);
/* The job's transform grid, floors and centred, scaled copies (freed with
 * pv_ncc_job_free, also after a failure). */
pv_status pv_ncc_prepare_job(pv_context *ctx, const char *op, const pv_image *templ,
                             const pv_image *image, pv_ncc_stats t_stats, pv_ncc_stats i_stats,
                             int min_overlap, pv_ncc_job *job);
void pv_ncc_job_free(pv_ncc_job *job);
/* image centred on stats.mean and scaled by 1 / stats.deviation, dense f32. */
pv_status pv_ncc_normalized_copy(pv_context *ctx, const char *op, const pv_image *image,
                                 pv_ncc_stats stats, pv_image *out);
/* A textureless input's answer: the map all 0, result flagged
 * PV_REGISTER_NO_TEXTURE (either may be NULL). */
void pv_ncc_no_texture(pv_image *map, pv_ncc_result *result);
/* The map's largest coefficient (the first in memory order on ties), its
 * offset and its parabolic sub-pixel position. */
void pv_ncc_peak(const pv_image *map, int templ_w, int templ_h, pv_ncc_result *result);
/* Whether the map's point (bx, by) lies on its border, and the result of
 * a peak there of value best, its neighbours around = left, right, above,
 * below (unused at an edge). */
int pv_ncc_at_edge(const pv_image *map, int bx, int by);
void pv_ncc_result_at(int bx, int by, float best, const float around[4], int at_edge,
                      int templ_w, int templ_h, pv_ncc_result *result);
/* Largest |a - b| over two maps of one size (NaN counts as infinite). */
double pv_ncc_map_abs_diff(const pv_image *a, const pv_image *b);
/* The CPU backend's map of the job against map (within PV_TOL_NCC_MAP). */
pv_status pv_ncc_crosscheck(pv_context *ctx, const char *op, const pv_ncc_job *job,
                            const pv_image *map);
/* normxcorr2 of checked inputs into map (the caller's out or a scratch
 * map), the peak into result when not NULL: the single call's work inside
 * its lock, also run by the masked call when every pixel is valid. */
pv_status pv_ncc_run(pv_context *ctx, const char *op, const pv_image *templ,
                     const pv_image *image, int min_overlap, pv_image *map,
                     pv_ncc_result *result);

/* pv_ncc_run in a device-buffer call (ncc_device.c): templ and image are
 * placeholders bound to a caller's buffers, map one too when map_bound
 * (else host memory); the statistics, the finiteness check, the centred
 * and scaled copies and (on a bound map) the peak search run on the
 * device, giving pv_ncc_run's numbers. */
pv_status pv_ncc_run_device(pv_context *ctx, const char *op, const pv_image *templ,
                            const pv_image *image, int min_overlap, pv_image *map, int map_bound,
                            pv_ncc_result *result);
/* The map and peak of a device-buffer call once its statistics are known
 * (ncc_device.c): untextured, the zero map (on the device when map_bound)
 * and PV_REGISTER_NO_TEXTURE; else make(ctx, arg, map) fills a map (a
 * working buffer on the device when map_bound, searched there and then
 * copied to the caller's; else map, searched on the host), the peak into
 * result when not NULL. */
typedef pv_status (*pv_ncc_make_map)(pv_context *ctx, const void *arg, pv_image *map);
pv_status pv_ncc_device_map(pv_context *ctx, int textured, pv_ncc_make_map make,
                            const void *arg, int templ_w, int templ_h, pv_image *map,
                            int map_bound, pv_ncc_result *result);

#endif
