/* Public phase-correlation calls: one-shot correlations and plans, for
 * images (2D) and volumes (3D).  Every call checks its arguments and
 * scans its inputs first, then views them as volumes (f32, or u16 that the
 * backends convert as they load them) and runs the
 * plan machinery of phasecorr.c; the 2D and 3D entry points differ only
 * by the input_kind they pass. */
#include "register_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PV_BATCH_MAX 4096

/* What the shared calls need to know of an image or a volume argument. */
typedef struct input_kind {
    int dims;                        /* 2: pv_image, 3: pv_volume */
    size_t bytes;                    /* size of one input in an array of them */
} input_kind;

static const input_kind images = {2, sizeof(pv_image)};
static const input_kind volumes = {3, sizeof(pv_volume)};

static pv_status input_check(const input_kind *kind, pv_context *ctx, const char *op,
                             const char *name, const void *input)
{
    return kind->dims == 2 ? pv_reg_check_pc_image(ctx, op, name, input)
                           : pv_reg_check_volume(ctx, op, name, input);
}

/* An image is a volume one sample deep. */
static void input_extent(const input_kind *kind, const void *input, int size[3])
{
    const pv_image *image = input;
    const pv_volume *volume = input;
    size[0] = kind->dims == 2 ? image->width : volume->nx;
    size[1] = kind->dims == 2 ? image->height : volume->ny;
    size[2] = kind->dims == 2 ? 1 : volume->nz;
}

/* The input's values scanned on the host, or on the device when the input
 * is a caller's buffer (a device-buffer call: its pixels are not here). */
static pv_status input_scan(const input_kind *kind, pv_context *ctx, const void *input,
                            pv_data_scan *scan)
{
    if (ctx->device_call)
        return kind->dims == 2 ? pv_reg_device_scan_image(ctx, input, scan)
                               : pv_reg_device_scan_volume(ctx, input, scan);
    const int threads = pv_reg_threads(ctx);
    *scan = kind->dims == 2 ? pv_reg_scan_image(input, threads)
                            : pv_reg_scan_volume(input, threads);
    return PV_OK;
}

/* A volume view of the input (f32 or u16), converting u8 into *copy (else
 * NULL); a volume is its own view. */
static pv_status input_view(const input_kind *kind, pv_context *ctx, const void *input,
                            pv_reg_copy *copy, pv_volume *view)
{
    if (kind->dims == 2)
        return pv_reg_image_as_volume(ctx, input, copy, view);
    copy->data = NULL;
    copy->mapped = 0;
    copy->ctx = ctx;
    *view = *(const pv_volume *)input;
    return PV_OK;
}

/* ================================================================ checks */

/* "WxH" for images, "WxHxD" for volumes, as the messages print sizes. */
static void format_extent(char *text, size_t capacity, int dims, const int size[3])
{
    if (dims == 2)
        snprintf(text, capacity, "%dx%d", size[0], size[1]);
    else
        snprintf(text, capacity, "%dx%dx%d", size[0], size[1], size[2]);
}

/* Phase correlation needs two samples along x at least: a one-sample
 * axis has no shift to find, the CPU's FFTW would return a meaningless
 * peak and an OpenCL engine may refuse the transform.  Decided here, so
 * both backends give the same answer (and plans the same). */
static pv_status check_reference(pv_context *ctx, const char *op, const input_kind *kind,
                                 const void *reference, int size[3])
{
    pv_status status = pv_reg_check_ctx(ctx, op);
    if (status == PV_OK)
        status = input_check(kind, ctx, op, "reference", reference);
    if (status != PV_OK)
        return status;
    input_extent(kind, reference, size);
    if (size[0] < 2)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: reference is %d sample(s) wide; phase correlation needs at least 2 "
                       "along x",
                       op, size[0]);
    return PV_OK;
}

/* input's size against `expected`, described as `whose` in the message. */
static pv_status check_extent(pv_context *ctx, const char *op, const char *name,
                              const input_kind *kind, const void *input, const int expected[3],
                              const char *whose)
{
    int size[3];
    input_extent(kind, input, size);
    if (memcmp(size, expected, sizeof size) == 0)
        return PV_OK;
    char found[48], wanted[48];
    format_extent(found, sizeof found, kind->dims, size);
    format_extent(wanted, sizeof wanted, kind->dims, expected);
    return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %s but %s is %s", op, name, found, whose,
                   wanted);
}

/* The input's values: finite, and whether they vary. */
static pv_status scan_input(pv_context *ctx, const char *op, const char *name,
                            const input_kind *kind, const void *input, pv_data_scan *scan)
{
    pv_status status = input_scan(kind, ctx, input, scan);
    return status == PV_OK ? pv_reg_check_finite(ctx, op, name, *scan) : status;
}

/* ============================================================= one-shot */

static pv_status check_pair(pv_context *ctx, const char *op, const input_kind *kind,
                            const void *reference, const void *moving, const pv_shift *shift)
{
    int size[3];
    pv_status status = check_reference(ctx, op, kind, reference, size);
    if (status == PV_OK)
        status = input_check(kind, ctx, op, "moving", moving);
    if (status == PV_OK)
        status = check_extent(ctx, op, "moving", kind, moving, size, "reference");
    if (status == PV_OK && !shift)
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    return status;
}

/* A one-shot correlation through a transient plan (the FFT plans and the
 * device buffers stay cached on the context between calls). */
static pv_status correlate_once(pv_context *ctx, const char *op, const input_kind *kind,
                                const pv_phasecorr_options *options, const void *reference,
                                pv_data_scan ref_scan, const void *moving, int moving_textured,
                                pv_shift *shift)
{
    int size[3];
    input_extent(kind, reference, size);
    pv_volume ref_view, mov_view;
    pv_reg_copy ref_copy = {NULL, 0, ctx}, mov_copy = {NULL, 0, ctx};
    pv_phasecorr_plan *plan = NULL;
    pv_status status = input_view(kind, ctx, reference, &ref_copy, &ref_view);
    if (status == PV_OK)
        status = input_view(kind, ctx, moving, &mov_copy, &mov_view);
    if (status == PV_OK)
        status = pv_pc_plan_new(ctx, op, size, kind->dims, options, 1, 1, &plan);
    if (status == PV_OK)
        status = pv_pc_plan_reference(plan, &ref_view, ref_scan);
    if (status == PV_OK)
        status = pv_pc_correlate_chunk(plan, &mov_view, &moving_textured, 1, shift);
    pv_pc_plan_free(plan);
    pv_reg_copy_free(&ref_copy);
    pv_reg_copy_free(&mov_copy);
    return status;
}

static pv_status correlate_pair(pv_context *ctx, const char *op, const input_kind *kind,
                                const void *reference, const void *moving,
                                const pv_phasecorr_options *options, pv_shift *shift)
{
    pv_phasecorr_options resolved;
    pv_data_scan ref_scan, mov_scan;
    pv_status status = check_pair(ctx, op, kind, reference, moving, shift);
    if (status == PV_OK)
        status = pv_pc_resolve_options(ctx, op, options, &resolved);
    if (status == PV_OK)
        status = scan_input(ctx, op, "reference", kind, reference, &ref_scan);
    if (status == PV_OK)
        status = scan_input(ctx, op, "moving", kind, moving, &mov_scan);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = correlate_once(ctx, op, kind, &resolved, reference, ref_scan, moving,
                                mov_scan.textured, shift);
    pv_call_end(ctx);
    return status;
}

pv_status pv_phase_correlate3d(pv_context *ctx, const pv_volume *reference,
                               const pv_volume *moving, const pv_phasecorr_options *options,
                               pv_shift *shift)
{
    return correlate_pair(ctx, "phase_correlate3d", &volumes, reference, moving, options, shift);
}

pv_status pv_phase_correlate(pv_context *ctx, const pv_image *reference, const pv_image *moving,
                             const pv_phasecorr_options *options, pv_shift *shift)
{
    return correlate_pair(ctx, "phase_correlate", &images, reference, moving, options, shift);
}

/* ================================================================= plans */

static pv_status check_plan_args(pv_context *ctx, const char *op,
                                 const pv_phasecorr_options *options, int max_batch,
                                 pv_phasecorr_plan **plan, pv_phasecorr_options *resolved)
{
    pv_status status = pv_pc_resolve_options(ctx, op, options, resolved);
    if (status == PV_OK && (max_batch < 1 || max_batch > PV_BATCH_MAX))
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: max_batch %d is not in 1..%d", op, max_batch,
                         PV_BATCH_MAX);
    if (status == PV_OK && !plan)
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: plan is NULL", op);
    return status;
}

/* The plan's reference (checked and scanned), viewed as a volume for the call. */
static pv_status set_viewed_reference(pv_phasecorr_plan *plan, const input_kind *kind,
                                      const void *reference, pv_data_scan scan)
{
    pv_volume view;
    pv_reg_copy copy = {NULL, 0, plan->ctx};
    pv_status status = input_view(kind, plan->ctx, reference, &copy, &view);
    if (status == PV_OK)
        status = pv_pc_plan_reference(plan, &view, scan);
    pv_reg_copy_free(&copy);
    return status;
}

static pv_status create_plan(pv_context *ctx, const char *op, const input_kind *kind,
                             const void *reference, const pv_phasecorr_options *options,
                             int max_batch, pv_phasecorr_plan **plan)
{
    pv_phasecorr_options resolved;
    pv_data_scan scan;
    int size[3];
    pv_status status = check_reference(ctx, op, kind, reference, size);
    if (status == PV_OK)
        status = check_plan_args(ctx, op, options, max_batch, plan, &resolved);
    if (status == PV_OK)
        status = scan_input(ctx, op, "reference", kind, reference, &scan);
    if (status != PV_OK)
        return status;
    pv_phasecorr_plan *made = NULL;
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = pv_pc_plan_new(ctx, op, size, kind->dims, &resolved, max_batch, 0, &made);
    if (status == PV_OK)
        status = set_viewed_reference(made, kind, reference, scan);
    if (status != PV_OK)
        pv_pc_plan_free(made);
    pv_call_end(ctx);
    if (status == PV_OK)
        *plan = made;
    return status;
}

pv_status pv_phasecorr_plan_create3d(pv_context *ctx, const pv_volume *reference,
                                     const pv_phasecorr_options *options, int max_batch,
                                     pv_phasecorr_plan **plan)
{
    return create_plan(ctx, "phasecorr_plan_create3d", &volumes, reference, options, max_batch,
                       plan);
}

pv_status pv_phasecorr_plan_create(pv_context *ctx, const pv_image *reference,
                                   const pv_phasecorr_options *options, int max_batch,
                                   pv_phasecorr_plan **plan)
{
    return create_plan(ctx, "phasecorr_plan_create", &images, reference, options, max_batch,
                       plan);
}

void pv_phasecorr_plan_destroy(pv_phasecorr_plan *plan)
{
    pv_pc_plan_free(plan);
}

pv_status pv_phasecorr_plan_fft_size(const pv_phasecorr_plan *plan, int size[3])
{
    if (!plan || !size)
        return pv_fail(NULL, PV_ERR_INVALID, "phasecorr_plan_fft_size: plan or size is NULL");
    memcpy(size, plan->geometry.fft, sizeof plan->geometry.fft);
    return PV_OK;
}

pv_status pv_phasecorr_plan_time_fft(pv_phasecorr_plan *plan)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "phasecorr_plan_time_fft: plan is NULL");
    pv_context *ctx = plan->ctx;
    pv_status status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = ctx->ops->reg->pc_time_fft(ctx, plan->backend);
    pv_call_end(ctx);
    return status;
}

static pv_status check_plan(const char *op, const pv_phasecorr_plan *plan, int dims)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (plan->dims != dims)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: the plan was made for %dD %s", op,
                       plan->dims, plan->dims == 2 ? "images" : "volumes");
    return PV_OK;
}

/* The input's size against the plan's, and its values (the scan is kept
 * in *scan, so no input is read twice). */
static pv_status check_plan_input(const pv_phasecorr_plan *plan, const char *op,
                                  const char *name, const input_kind *kind, const void *input,
                                  pv_data_scan *scan)
{
    pv_status status = input_check(kind, plan->ctx, op, name, input);
    if (status == PV_OK)
        status = check_extent(plan->ctx, op, name, kind, input, plan->geometry.size,
                              "the plan's");
    if (status == PV_OK)
        status = scan_input(plan->ctx, op, name, kind, input, scan);
    return status;
}

static pv_status set_reference(pv_phasecorr_plan *plan, const char *op, const input_kind *kind,
                               const void *reference)
{
    pv_data_scan scan;
    pv_status status = check_plan(op, plan, kind->dims);
    if (status == PV_OK)
        status = check_plan_input(plan, op, "reference", kind, reference, &scan);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(plan->ctx);
    if (status == PV_OK)
        status = set_viewed_reference(plan, kind, reference, scan);
    pv_call_end(plan->ctx);
    return status;
}

pv_status pv_phasecorr_plan_set_reference3d(pv_phasecorr_plan *plan, const pv_volume *reference)
{
    return set_reference(plan, "phasecorr_plan_set_reference3d", &volumes, reference);
}

pv_status pv_phasecorr_plan_set_reference(pv_phasecorr_plan *plan, const pv_image *reference)
{
    return set_reference(plan, "phasecorr_plan_set_reference", &images, reference);
}

/* ================================================================ movers */

static pv_status check_movers(const char *op, const pv_phasecorr_plan *plan, const void *movers,
                              int count, const pv_shift *shifts)
{
    if (!movers || !shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: movers or shifts is NULL", op);
    if (count < 1)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: count %d < 1", op, count);
    return PV_OK;
}

/* One chunk of movers, viewed as volumes first. */
static pv_status correlate_viewed(pv_phasecorr_plan *plan, const input_kind *kind,
                                  const char *movers, const int *textured, int count,
                                  pv_shift *shifts)
{
    pv_volume *views = calloc((size_t)count, sizeof *views);
    pv_reg_copy *copies = calloc((size_t)count, sizeof *copies);
    pv_status status = views && copies
                           ? PV_OK
                           : pv_fail(plan->ctx, PV_ERR_NOMEM, "phase correlation: out of memory");
    for (int i = 0; status == PV_OK && i < count; i++)
        status = input_view(kind, plan->ctx, movers + (size_t)i * kind->bytes, &copies[i], &views[i]);
    if (status == PV_OK)
        status = pv_pc_correlate_chunk(plan, views, textured, count, shifts);
    for (int i = 0; copies && i < count; i++)
        pv_reg_copy_free(&copies[i]);
    free(views);
    free(copies);
    return status;
}

/* Check every mover first (nothing runs on a bad one), then correlate
 * them in chunks of the plan's batch. */
static pv_status correlate_movers(pv_phasecorr_plan *plan, const char *op, const input_kind *kind,
                                  const void *movers, int count, pv_shift *shifts)
{
    pv_status status = check_plan(op, plan, kind->dims);
    if (status == PV_OK)
        status = check_movers(op, plan, movers, count, shifts);
    if (status != PV_OK)
        return status;
    int *textured = malloc((size_t)count * sizeof *textured);
    if (!textured)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    const char *bytes = movers;
    for (int i = 0; status == PV_OK && i < count; i++) {
        pv_data_scan scan = {0, 0};
        status = check_plan_input(plan, op, "a mover", kind, bytes + (size_t)i * kind->bytes,
                                  &scan);
        textured[i] = scan.textured;
    }
    if (status == PV_OK) {
        status = pv_call_begin(plan->ctx);
        if (status == PV_OK)
            status = pv_progress_report(plan->ctx, op, 0.0, count);
        for (int done = 0; status == PV_OK && done < count; done += plan->geometry.batch) {
            int chunk = count - done < plan->geometry.batch ? count - done : plan->geometry.batch;
            status = correlate_viewed(plan, kind, bytes + (size_t)done * kind->bytes,
                                      textured + done, chunk, shifts + done);
            if (status == PV_OK)
                status = pv_progress_report(plan->ctx, op, (double)done + chunk, count);
        }
        pv_call_end(plan->ctx);
    }
    free(textured);
    return status;
}

pv_status pv_phasecorr_plan_correlate3d(pv_phasecorr_plan *plan, const pv_volume *movers,
                                        int count, pv_shift *shifts)
{
    return correlate_movers(plan, "phasecorr_plan_correlate3d", &volumes, movers, count, shifts);
}

pv_status pv_phasecorr_plan_correlate(pv_phasecorr_plan *plan, const pv_image *movers, int count,
                                      pv_shift *shifts)
{
    return correlate_movers(plan, "phasecorr_plan_correlate", &images, movers, count, shifts);
}
