/* Internal, front end only: what the register module's front-end files
 * share.  register_input.c scans and views the inputs, phasecorr.c runs
 * phase-correlation plans (register_device.c runs the input passes on the
 * device in a device-buffer call), phasecorr_api.c holds the public phase
 * correlation calls, phasecorr_masked.c the masked ones, ncc.c normxcorr2 (with ncc_batch.c
 * and ncc_masked.c, sharing ncc_internal.h) and register_fft.c the FFT engine
 * choice.  No backend includes this header.  Not installed. */
#ifndef PV_REGISTER_INTERNAL_H
#define PV_REGISTER_INTERNAL_H

#include "../core/internal.h"
#include "../core/params_decl.h"
#include "peak.h"

/* A transform grid index must fit the kernels' 32-bit indices. */
#define PV_PC_MAX_POINTS 0xFFFFFFFFu

/* ============================================================ inputs */

typedef struct pv_data_scan {
    int finite;
    int textured;   /* not all values equal */
} pv_data_scan;

/* Threads for the front end's passes over inputs. */
int pv_reg_threads(const pv_context *ctx);
/* Finite values and whether they vary, one pass. */
pv_data_scan pv_reg_scan_volume(const pv_volume *v, int threads);
pv_data_scan pv_reg_scan_image(const pv_image *image, int threads);
pv_status pv_reg_check_finite(pv_context *ctx, const char *op, const char *name,
                              pv_data_scan scan);
/* A converted copy of an input: host memory, or in a device-buffer call a
 * placeholder of `mapped` bytes bound to the device's copy (data NULL:
 * none).  pv_reg_copy_free releases either (register_device.c). */
typedef struct pv_reg_copy {
    float *data;
    size_t mapped;
    pv_context *ctx; /* the call's context, for a placeholder */
} pv_reg_copy;
void pv_reg_copy_free(pv_reg_copy *copy);
/* A volume view of an image: f32 and u16 images are viewed in place (u16
 * as a PV_VOLUME_U16 view, which the backends convert as they upload);
 * u8 pixels are converted into *copy (on the device in a device-buffer
 * call; copy->data NULL when no copy was needed; the caller frees it with
 * pv_reg_copy_free). */
pv_status pv_reg_image_as_volume(pv_context *ctx, const pv_image *image, pv_reg_copy *copy,
                                 pv_volume *view);
/* The mean, and the sum of ((v - mean) * window)^2 (window[0] NULL: no
 * window), in double and independent of the number of threads. */
double pv_reg_volume_mean(const pv_volume *v, int threads);
double pv_reg_windowed_energy(const pv_volume *v, const float *const window[3], float mean,
                              int threads);
/* The passes above, and the u8 conversion, on the device for the inputs
 * of a device-buffer call (ctx->device_call: the data pointers are bound
 * placeholders that must not be read; register_device.c).  Each gives the
 * host pass's numbers exactly.  pv_reg_device_image_stats: whether a u8
 * or f32 image is finite and, when it is, its mean and the sum of squares
 * about it (normxcorr2's statistics); pv_reg_device_f32_copy: the image as
 * dense f32 (v - mean) * scale into *copy; pv_reg_device_argmax: an f32
 * image's largest value and its position (the first in memory order on
 * ties); pv_reg_device_rect: host's pixels from or to the image's buffer
 * at (x, y); pv_reg_device_stage: a dense f32 placeholder bound to a
 * working buffer on the device (an output made there first), and
 * pv_reg_device_unstage its copy into out, a caller's image. */
pv_status pv_reg_device_scan_image(pv_context *ctx, const pv_image *image, pv_data_scan *scan);
pv_status pv_reg_device_scan_volume(pv_context *ctx, const pv_volume *v, pv_data_scan *scan);
pv_status pv_reg_device_volume_mean(pv_context *ctx, const pv_volume *v, double *mean);
pv_status pv_reg_device_windowed_energy(pv_context *ctx, const pv_volume *v,
                                        const float *const window[3], float mean,
                                        double *energy);
pv_status pv_reg_device_image_stats(pv_context *ctx, const pv_image *image, int *finite,
                                    double *mean, double *squares);
pv_status pv_reg_device_argmax(pv_context *ctx, const pv_image *image, int *x, int *y,
                               float *value);
pv_status pv_reg_device_rect(pv_context *ctx, const pv_image *image, int x, int y,
                             pv_image *host, int to_device);
pv_status pv_reg_device_stage(pv_context *ctx, int width, int height, pv_reg_copy *copy);
pv_status pv_reg_device_unstage(pv_context *ctx, const pv_reg_copy *copy, pv_image *out);
pv_status pv_reg_device_f32_copy(pv_context *ctx, const pv_image *image, double mean,
                                 double scale, pv_reg_copy *copy);
/* Masked phase correlation's read of one side in a device-buffer call:
 * the input (an image or a volume: one of image, volume set) and its mask
 * (likewise) scanned on the device, then, when finite with a valid pixel,
 * their dense masked, centred copy and 0 / 1 mask made there, staged to
 * the placeholders values.data and mask.data; the numbers are the host
 * pass's (lib/register/phasecorr_masked.c). */
typedef struct pv_reg_masked {
    pv_reg_copy values, mask;
    size_t valid;
    int finite, textured;
    double energy;
} pv_reg_masked;
pv_status pv_reg_device_masked(pv_context *ctx, const pv_image *image, const pv_volume *volume,
                               const pv_image *mask_image, const pv_volume *mask_volume,
                               pv_reg_masked *out);
/* Masked normxcorr2's passes in a device-buffer call (ncc_masked.c):
 * over the pixels where mask (NULL: every pixel) is not 0, whether image
 * and mask are finite, the count and the sum (rows summed in double, added
 * in row order); then, for the mean, the centred copy (float)((v - mean) *
 * scale) and the 0 / 1 mask staged to the placeholders of *values and
 * *mask01 (staged on the first call, NULL data) and the squared
 * deviations' sum, in double. */
pv_status pv_reg_device_mask_count(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                   int *finite, size_t *valid, double *sum);
pv_status pv_reg_device_mask_copy(pv_context *ctx, const pv_image *image, const pv_image *mask,
                                  double mean, double scale, pv_reg_copy *values,
                                  pv_reg_copy *mask01, double *squares);
/* Argument checks with the register module's messages. */
pv_status pv_reg_check_ctx(pv_context *ctx, const char *op);
/* Phase correlation's images: u8, f32 or u16 (grey). */
pv_status pv_reg_check_pc_image(pv_context *ctx, const char *op, const char *name,
                                const pv_image *image);
pv_status pv_reg_check_image(pv_context *ctx, const char *op, const char *name,
                             const pv_image *image);
pv_status pv_reg_check_volume(pv_context *ctx, const char *op, const char *name,
                              const pv_volume *volume);

/* ============================================== phase-correlation plans */

struct pv_phasecorr_plan {
    pv_context *ctx;
    pv_phasecorr_options options;
    pv_pc_geometry geometry;
    float *window[3];        /* Hann weights per axis (NULL without a window) ... */
    pv_scratch window_block; /* ... which live here */
    void *backend;           /* ctx->ops's plan */
    void *check;             /* the CPU backend's plan for the cross-check, or NULL */
    int dims;                /* 2: images, 3: volumes */
    int reference_textured;
};

/* Options, or the defaults when NULL, checked. */
pv_status pv_pc_resolve_options(pv_context *ctx, const char *op,
                                const pv_phasecorr_options *options,
                                pv_phasecorr_options *resolved);
/* A plan for inputs of size[3] (transient: a one-shot plan that may use
 * the context's scratch buffers), with its cross-check twin if wanted. */
pv_status pv_pc_plan_new(pv_context *ctx, const char *op, const int size[3], int dims,
                         const pv_phasecorr_options *options, int max_batch, int transient,
                         pv_phasecorr_plan **out);
void pv_pc_plan_free(pv_phasecorr_plan *plan);
/* The reference, already checked and viewed as an f32 volume. */
pv_status pv_pc_plan_reference(pv_phasecorr_plan *plan, const pv_volume *reference,
                               pv_data_scan scan);
/* Shifts of up to geometry.batch movers, checked and f32; shifts is
 * written only on success. */
pv_status pv_pc_correlate_chunk(pv_phasecorr_plan *plan, const pv_volume *movers,
                                const int *textured, int count, pv_shift *shifts);

/* Declared parameters (register_params.c). */
extern const pv_op_decl pv_phasecorr_decl;
extern const pv_op_decl pv_phasecorr_masked_decl;

#endif
