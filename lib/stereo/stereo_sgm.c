/* Front end of semi-global matching (include/parvis/stereo.h): the
 * arguments are checked once here (the backends trust them), the memory a
 * call needs is compared with what it may use before anything is
 * allocated, and with cross-checks on, the device's result is compared
 * with the CPU backend's. */
#include "stereo_internal.h"
#include "../core/tolerance.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pv_sgm_params_default(pv_sgm_params *params)
{
    if (!params)
        return;
    pv_decl_defaults(&pv_sgm_decl, params); /* declared in stereo_params.c */
}

/* Bits of a census string of the window (as backends/common/sgm_math.h). */
static int census_bits(const pv_sgm_params *p)
{
    const int n = p->census_width * p->census_height;
    return p->census_symmetric ? (n - 1) / 2 : n - 1;
}

/* The largest P2 whose path costs (at most bits + P2 each) still sum to
 * at most 65535 over all paths: the backends keep S in 16 bits. */
static int largest_p2(const pv_sgm_params *p)
{
    return 65535 / p->paths - census_bits(p);
}

/* ------------------------------------------------------------ memory model */

/* a * b * c, saturating at SIZE_MAX. */
static size_t product(size_t a, size_t b, size_t c)
{
    size_t ab, abc;
    if (!pv_size_mul(a, b, &ab) || !pv_size_mul(ab, c, &abc))
        return SIZE_MAX;
    return abc;
}

static size_t sum3(size_t a, size_t b, size_t c)
{
    if (a > SIZE_MAX - b || a + b > SIZE_MAX - c)
        return SIZE_MAX;
    return a + b + c;
}

/* CPU backend: census strings and intensities (20 bytes a pixel), the
 * 8-bit cost and 16-bit sum volumes (3 bytes a cell), the sweeps' two
 * rows of 16-bit path costs per direction, the outputs' staging (8). */
static size_t cpu_bytes(size_t width, size_t height, size_t ndisp, int paths)
{
    const size_t pixels = product(width, height, 1);
    const size_t rows = product(2 * (size_t)(paths == 8 ? 3 : 1) + 2, width + 64, (ndisp + 2) * 2);
    return sum3(product(pixels, 28, 1), product(pixels, ndisp, 3), rows);
}

/* OpenCL backend: the uploaded images (at most 4 bytes a pixel each),
 * census strings and intensities (20), the 8-bit cost volume and one
 * path-cost volume per path (1 byte a cell, 2 when bits + P2 > 255) over
 * ndisp rounded up to 16 cells (the kernels' vector slices), and five
 * maps of 4 bytes (disparities, winners, right disparities, confidence,
 * median). */
static size_t opencl_bytes(size_t width, size_t height, size_t ndisp, const pv_sgm_params *p)
{
    const size_t pixels = product(width, height, 1);
    const size_t cell = census_bits(p) + p->p2 <= 255 ? 1 : 2;
    /* Summed: one 16-bit volume, whatever the number of paths. */
    const size_t per_cell =
        p->aggregation == PV_SGM_AGGREGATE_SUM ? 2 + 1 : (size_t)p->paths * cell + 1;
    const size_t stride = (ndisp + 15) / 16 * 16;
    return sum3(product(pixels, 48, 1), product(pixels, stride, per_cell), 0);
}

static size_t backend_bytes(pv_backend_kind backend, int width, int height, const pv_sgm_params *p)
{
    if (backend == PV_BACKEND_CPU)
        return cpu_bytes((size_t)width, (size_t)height, (size_t)p->ndisp, p->paths);
    return opencl_bytes((size_t)width, (size_t)height, (size_t)p->ndisp, p);
}

/* ------------------------------------------------------------------ checks */

static int census_window_ok(int w, int h)
{
    return (w == 5 && h == 5) || (w == 7 && h == 7) || (w == 9 && h == 7);
}

/* Some pixel has a candidate inside the image exactly when the range of
 * disparities meets (-width, width). */
static int range_reaches_image(long long min_disp, long long ndisp, int width)
{
    return min_disp < width && min_disp + ndisp - 1 > -(long long)width;
}

static pv_status check_window(pv_context *ctx, const pv_sgm_params *p, int width, int height)
{
    if (!census_window_ok(p->census_width, p->census_height))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: census window %dx%d is not 5x5, 7x7 or 9x7", p->census_width,
                       p->census_height);
    if (p->census_width > width || p->census_height > height)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: census window %dx%d is larger than the %dx%d image",
                       p->census_width, p->census_height, width, height);
    return PV_OK;
}

static pv_status check_range(pv_context *ctx, const pv_sgm_params *p, int width)
{
    const int most = width < PV_SGM_MAX_NDISP ? width : PV_SGM_MAX_NDISP;
    if (p->ndisp < 1 || p->ndisp > most)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: params.ndisp %d is not in 1..%d (the image width, at most %d)",
                       p->ndisp, most, PV_SGM_MAX_NDISP);
    if (!range_reaches_image(p->min_disp, p->ndisp, width))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: params.min_disp %d with ndisp %d leaves no candidate inside a "
                       "%d-pixel-wide image", p->min_disp, p->ndisp, width);
    return PV_OK;
}

static pv_status check_smoothing(pv_context *ctx, const pv_sgm_params *p)
{
    if (p->p2 < p->p1)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: params.p2 %d is smaller than p1 %d",
                       p->p2, p->p1);
    if (p->p2 > largest_p2(p))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: params.p2 %d is larger than %d, the most whose %d path costs "
                       "still sum in 16 bits with a %d-bit census", p->p2, largest_p2(p), p->paths,
                       census_bits(p));
    return PV_OK;
}

/* F32 inputs finite (pv_check_finite_image, which leaves a device-buffer
 * call's pixels alone). */
static pv_status check_pixels(pv_context *ctx, const pv_image *left, const pv_image *right)
{
    pv_status status = pv_check_finite_image(ctx, "stereo_sgm", "left", left);
    return status == PV_OK ? pv_check_finite_image(ctx, "stereo_sgm", "right", right) : status;
}

/* As pv_stereo_check_images, with 16-bit inputs accepted too. */
static pv_status check_images(pv_context *ctx, const pv_image *left, const pv_image *right,
                              const pv_image *disparity)
{
    if (!pv_image_is_valid_any_type(left) || !pv_image_is_valid_any_type(right))
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: %s is NULL or not a valid image",
                       pv_image_is_valid_any_type(left) ? "right" : "left");
    if (left->type != right->type)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: left and right pixel types differ");
    if (left->type != PV_PIXEL_U8 && left->type != PV_PIXEL_U16 && left->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: pixel type must be u8, u16 or f32");
    if (!pv_images_same_size(left, right))
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: right is %dx%d but left is %dx%d",
                       right->width, right->height, left->width, left->height);
    if (!pv_image_is_valid(disparity) || disparity->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: disparity is not a valid f32 image");
    if (!pv_images_same_size(left, disparity))
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: disparity is %dx%d but left is %dx%d",
                       disparity->width, disparity->height, left->width, left->height);
    if (pv_images_overlap(disparity, left) || pv_images_overlap(disparity, right))
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: disparity shares memory with an input");
    return PV_OK;
}

static pv_status check_confidence(pv_context *ctx, const pv_image *left, const pv_image *right,
                                  const pv_image *disparity, const pv_image *confidence)
{
    if (!confidence)
        return PV_OK;
    if (!pv_image_is_valid(confidence) || confidence->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: confidence is not a valid f32 image");
    if (!pv_images_same_size(confidence, left))
        return pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm: confidence is %dx%d but left is %dx%d",
                       confidence->width, confidence->height, left->width, left->height);
    if (pv_images_overlap(confidence, left) || pv_images_overlap(confidence, right) ||
        pv_images_overlap(confidence, disparity))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: confidence shares memory with an input or the disparity");
    return PV_OK;
}

static pv_status check_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_sgm_params *p, const pv_image *disparity,
                           const pv_image *confidence)
{
    pv_status status = PV_CHECK_REQUIRED(ctx, "stereo_sgm", {"params", p});
    if (status == PV_OK) /* every field in its declared range (stereo_params.c) */
        status = pv_decl_check(ctx, "stereo_sgm", &pv_sgm_decl, p);
    if (status == PV_OK)
        status = check_images(ctx, left, right, disparity);
    if (status == PV_OK)
        status = check_confidence(ctx, left, right, disparity, confidence);
    if (status == PV_OK)
        status = check_window(ctx, p, left->width, left->height);
    if (status == PV_OK)
        status = check_range(ctx, p, left->width);
    if (status == PV_OK)
        status = check_smoothing(ctx, p);
    if (status == PV_OK)
        status = check_pixels(ctx, left, right);
    return status;
}

/* ------------------------------------------------------------------ memory */

/* What the context's device holds: its global memory on OpenCL, the
 * host's RAM on the CPU (SIZE_MAX when unknown). */
static size_t device_memory(const pv_context *ctx)
{
    if (ctx->backend != PV_BACKEND_CPU && ctx->device.global_memory)
        return (size_t)ctx->device.global_memory;
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
    size_t bytes;
    if (pages <= 0 || page_size <= 0 || !pv_size_mul((size_t)pages, (size_t)page_size, &bytes))
        return SIZE_MAX;
    return bytes;
}

/* The bytes the call may use: the device's (or host's) memory, lowered by
 * PARVIS_MEMORY_LIMIT and by params.memory_budget. */
static pv_status available_bytes(pv_context *ctx, const pv_sgm_params *p, size_t *available)
{
    size_t cap;
    if (pv_config_memory_limit(&cap) != 0)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "stereo_sgm: PARVIS_MEMORY_LIMIT '%s' is not a byte count (e.g. 512M, 8G)",
                       pv_config_text(PV_CONFIG_MEMORY_LIMIT).text);
    *available = device_memory(ctx);
    *available = cap < *available ? cap : *available;
    if (p->memory_budget && p->memory_budget < *available)
        *available = p->memory_budget;
    return PV_OK;
}

/* The parameters the backend runs with: under PV_SGM_AGGREGATE_AUTO, the
 * per-path volumes when they fit the memory the call may use, else the
 * summed volume.  A call that fits neither is refused before anything is
 * allocated. */
static pv_status plan_memory(pv_context *ctx, const pv_image *left, const pv_sgm_params *p,
                             pv_sgm_params *run)
{
    size_t available;
    pv_status status = available_bytes(ctx, p, &available);
    if (status != PV_OK)
        return status;
    *run = *p;
    if (run->aggregation == PV_SGM_AGGREGATE_AUTO) {
        run->aggregation = PV_SGM_AGGREGATE_PATHS;
        if (backend_bytes(ctx->backend, left->width, left->height, run) > available)
            run->aggregation = PV_SGM_AGGREGATE_SUM;
    }
    const size_t need = backend_bytes(ctx->backend, left->width, left->height, run);
    const size_t volume = product((size_t)left->width * (size_t)left->height, (size_t)p->ndisp, 2);
    if (need <= available && volume <= UINT32_MAX)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                   "stereo_sgm: not enough memory: %dx%d with %d disparities needs %zu bytes "
                   "(%s; one 16-bit volume %zu, at most 4 GiB) but %zu are available%s; lower "
                   "ndisp or the image size, or raise the limit",
                   left->width, left->height, p->ndisp, need,
                   run->aggregation == PV_SGM_AGGREGATE_SUM ? "summed volume" : "per-path volumes",
                   volume, available,
                   p->memory_budget ? " (params.memory_budget)"
                   : pv_config_get(PV_CONFIG_MEMORY_LIMIT, NULL, 0) ? " (PARVIS_MEMORY_LIMIT)" : "");
}

size_t pv_sgm_memory_estimate(int width, int height, const pv_sgm_params *params)
{
    if (!params || width < 1 || height < 1 || !census_window_ok(params->census_width,
                                                                params->census_height))
        return 0;
    if (params->ndisp < 1 || params->ndisp > PV_SGM_MAX_NDISP ||
        (params->paths != 4 && params->paths != 8) || params->p2 < 0 ||
        params->p2 > largest_p2(params))
        return 0;
    size_t cpu = backend_bytes(PV_BACKEND_CPU, width, height, params);
    size_t device = backend_bytes(PV_BACKEND_OPENCL, width, height, params);
    size_t most = cpu > device ? cpu : device;
    return most == SIZE_MAX ? 0 : most;
}

/* ------------------------------------------------------------------- calls */

/* The CPU reference for the cross-check. */
static pv_status cpu_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                         const void *params, pv_image *ref)
{
    return pv_cpu_backend.stereo->sgm(ctx, left, right, params, ref, NULL);
}

static pv_status sgm_call(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_sgm_params *params, pv_image *disparity,
                          pv_image *confidence)
{
    pv_sgm_params run;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = plan_memory(ctx, left, params, &run);
    if (status == PV_OK)
        status = ctx->ops->stereo->sgm(ctx, left, right, &run, disparity, confidence);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = pv_disparity_crosscheck(ctx, "stereo_sgm", left, right, cpu_sgm, &run,
                                         disparity, 0.0);
    pv_call_end(ctx);
    return status;
}

pv_status pv_stereo_sgm_confidence(pv_context *ctx, const pv_image *left, const pv_image *right,
                                   const pv_sgm_params *params, pv_image *disparity,
                                   pv_image *confidence)
{
    pv_status status = check_sgm(ctx, left, right, params, disparity, confidence);
    return status == PV_OK ? sgm_call(ctx, left, right, params, disparity, confidence) : status;
}

pv_status pv_stereo_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_sgm_params *params, pv_image *disparity)
{
    return pv_stereo_sgm_confidence(ctx, left, right, params, disparity, NULL);
}

/* ------------------------------------------------------------------ batch */

/* Pair i held to the single call's rules, its message naming the pair. */
static pv_status check_batch_pair(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                                  int i, const pv_sgm_params *params,
                                  const pv_image *disparities, const pv_image *confidences)
{
    pv_status status = check_sgm(ctx, &lefts[i], &rights[i], params, &disparities[i],
                                 confidences ? &confidences[i] : NULL);
    if (status != PV_OK)
        return pv_stereo_batch_pair_failed(ctx, "stereo_sgm_batch", "stereo_sgm", status, i);
    return pv_stereo_batch_same_kind(ctx, "stereo_sgm_batch", lefts, i);
}

static pv_status check_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                             int count, const pv_sgm_params *params,
                             const pv_image *disparities, const pv_image *confidences)
{
    pv_status status = PV_CHECK_REQUIRED(ctx, "stereo_sgm_batch", {"lefts", lefts},
                                         {"rights", rights}, {"params", params},
                                         {"disparities", disparities});
    if (status == PV_OK && count < 1)
        status = pv_fail(ctx, PV_ERR_INVALID, "stereo_sgm_batch: count %d is not positive",
                         count);
    for (int i = 0; status == PV_OK && i < count; i++)
        status = check_batch_pair(ctx, lefts, rights, i, params, disparities, confidences);
    if (status == PV_OK)
        status = pv_stereo_batch_overlaps(ctx, "stereo_sgm_batch", lefts, rights, count,
                                          disparities, confidences);
    return status;
}

static pv_status sgm_batch_call(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                                int count, const pv_sgm_params *params, pv_image *disparities,
                                pv_image *confidences)
{
    pv_sgm_params run;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = plan_memory(ctx, &lefts[0], params, &run);
    if (status != PV_OK) {
        pv_call_end(ctx);
        return status; /* nothing done: outputs untouched */
    }
    status = ctx->ops->stereo->sgm_batch(ctx, lefts, rights, count, &run, disparities,
                                         confidences);
    for (int i = 0; status == PV_OK && i < count && pv_crosscheck_wanted(ctx); i++)
        status = pv_disparity_crosscheck(ctx, "stereo_sgm_batch", &lefts[i], &rights[i], cpu_sgm,
                                         &run, &disparities[i], 0.0);
    if (status != PV_OK)
        pv_stereo_batch_reset(count, disparities, confidences);
    pv_call_end(ctx);
    return status;
}

pv_status pv_stereo_sgm_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                              int count, const pv_sgm_params *params, pv_image *disparities,
                              pv_image *confidences)
{
    pv_status status = check_batch(ctx, lefts, rights, count, params, disparities, confidences);
    return status == PV_OK
               ? sgm_batch_call(ctx, lefts, rights, count, params, disparities, confidences)
               : status;
}
