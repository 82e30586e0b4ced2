/* Device-buffer forms of the phase-correlation plans
 * (include/parvis/interop.h): a plan's reference set from a caller's
 * buffer, and movers in caller's buffers correlated against it.  Each runs
 * the host plan call through pv_interop_device_call (lib/interop/interop.c);
 * the plan's scans, means and u8 conversions run on the device for bound
 * inputs (lib/register/register_device.c), so the shifts are the host
 * call's bit for bit.  A device call binds every buffer it names, and the
 * OpenCL backend numbers a call's working copies after its bindings (a U8
 * mover needs one of each, out of 16 slots), so the movers go through in
 * groups of GROUP, one device call each: the first waits for the caller's wait list, and as each group's shifts come
 * back to the host before the next starts, only the last one's event is
 * handed back.  Plans and shifts are handed over only when the whole call
 * has succeeded, so that the outputs stay untouched on error. */
#include "interop_internal.h"
#include "../register/register_internal.h" /* the plan's context and kind */

#include <stdlib.h>
#include <string.h>

/* Movers a device call: each bound, and each U8 one converted into a
 * working copy, well within the backend's 16 working-copy slots. */
#define GROUP 4

/* Inputs at a whole number of samples from the buffer's start (the
 * device scans read them by sample index). */
static pv_status check_aligned(pv_context *ctx, const char *op, const pv_buffer *b)
{
    if (b && b->offset % pv_pixel_size(b->type) != 0)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: a buffer's offset %zu is not a multiple of its "
                       "%zu-byte sample", op, b->offset, pv_pixel_size(b->type));
    return PV_OK;
}

/* ------------------------------------------------------------- creation */

typedef struct create_args {
    const pv_phasecorr_options *options;
    int max_batch;
    pv_phasecorr_plan **made;
} create_args;

static pv_status host_create(pv_context *ctx, void *const *items, const void *args)
{
    const create_args *a = args;
    return pv_phasecorr_plan_create(ctx, items[0], a->options, a->max_batch, a->made);
}

static pv_status host_create3d(pv_context *ctx, void *const *items, const void *args)
{
    const create_args *a = args;
    return pv_phasecorr_plan_create3d(ctx, items[0], a->options, a->max_batch, a->made);
}

static pv_status create_plan(pv_context *ctx, const char *op, int volumes, host_call run,
                             const pv_buffer *reference, const pv_phasecorr_options *options,
                             int max_batch, pv_phasecorr_plan **plan, cl_uint wait_count,
                             const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"reference"};
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    if (!plan)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: plan is NULL", op);
    pv_status status = check_aligned(ctx, op, reference);
    if (status != PV_OK)
        return status;
    call_images c = {.buffers = {reference}, .count = 1, .first_output = 1,
                     .volumes = volumes ? 1u : 0u};
    pv_phasecorr_plan *made = NULL;
    const create_args args = {options, max_batch, &made};
    status = pv_interop_device_call(ctx, op, &c, names, run, &args, wait_count, wait_list, done);
    if (status != PV_OK) {
        pv_phasecorr_plan_destroy(made);
        return status;
    }
    *plan = made;
    return PV_OK;
}

pv_status pv_phasecorr_plan_create_cl(pv_context *ctx, const pv_buffer *reference,
                                      const pv_phasecorr_options *options, int max_batch,
                                      pv_phasecorr_plan **plan, cl_uint wait_count,
                                      const cl_event *wait_list, cl_event *done)
{
    return create_plan(ctx, "phasecorr_plan_create_cl", 0, host_create, reference, options,
                       max_batch, plan, wait_count, wait_list, done);
}

pv_status pv_phasecorr_plan_create3d_cl(pv_context *ctx, const pv_buffer *reference,
                                        const pv_phasecorr_options *options, int max_batch,
                                        pv_phasecorr_plan **plan, cl_uint wait_count,
                                        const cl_event *wait_list, cl_event *done)
{
    return create_plan(ctx, "phasecorr_plan_create3d_cl", 1, host_create3d, reference, options,
                       max_batch, plan, wait_count, wait_list, done);
}

/* ------------------------------------------------------------ reference */

typedef struct plan_args {
    pv_phasecorr_plan *plan;
    pv_shift *shifts; /* correlate: the group's shifts */
} plan_args;

static pv_status host_reference(pv_context *ctx, void *const *items, const void *args)
{
    const plan_args *a = args;
    (void)ctx;
    return a->plan->dims == 2 ? pv_phasecorr_plan_set_reference(a->plan, items[0])
                              : pv_phasecorr_plan_set_reference3d(a->plan, items[0]);
}

static pv_status set_reference(pv_phasecorr_plan *plan, const char *op, int dims,
                               const pv_buffer *reference, cl_uint wait_count,
                               const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"reference"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (plan->dims != dims)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: the plan was made for %dD inputs", op,
                       plan->dims);
    pv_status status = check_aligned(plan->ctx, op, reference);
    if (status != PV_OK)
        return status;
    call_images c = {.buffers = {reference}, .count = 1, .first_output = 1,
                     .volumes = dims == 3 ? 1u : 0u};
    const plan_args args = {plan, NULL};
    return pv_interop_device_call(plan->ctx, op, &c, names, host_reference, &args, wait_count,
                                  wait_list, done);
}

pv_status pv_phasecorr_plan_set_reference_cl(pv_phasecorr_plan *plan, const pv_buffer *reference,
                                             cl_uint wait_count, const cl_event *wait_list,
                                             cl_event *done)
{
    return set_reference(plan, "phasecorr_plan_set_reference_cl", 2, reference, wait_count,
                         wait_list, done);
}

pv_status pv_phasecorr_plan_set_reference3d_cl(pv_phasecorr_plan *plan,
                                               const pv_buffer *reference, cl_uint wait_count,
                                               const cl_event *wait_list, cl_event *done)
{
    return set_reference(plan, "phasecorr_plan_set_reference3d_cl", 3, reference, wait_count,
                         wait_list, done);
}

/* --------------------------------------------------------------- movers */

/* items: the group's movers, as images or as volumes. */
static pv_status host_correlate(pv_context *ctx, void *const *items, const void *args,
                                int count)
{
    const plan_args *a = args;
    (void)ctx;
    if (a->plan->dims == 2) {
        pv_image group[GROUP];
        for (int i = 0; i < count; i++)
            group[i] = *(const pv_image *)items[i];
        return pv_phasecorr_plan_correlate(a->plan, group, count, a->shifts);
    }
    pv_volume group[GROUP];
    for (int i = 0; i < count; i++)
        group[i] = *(const pv_volume *)items[i];
    return pv_phasecorr_plan_correlate3d(a->plan, group, count, a->shifts);
}

/* One host_call per group size: the machinery's calls carry no count. */
#define GROUP_CALL(n)                                                                   \
    static pv_status host_correlate_##n(pv_context *ctx, void *const *items,            \
                                        const void *args)                               \
    {                                                                                   \
        return host_correlate(ctx, items, args, n);                                     \
    }
GROUP_CALL(1)
GROUP_CALL(2)
GROUP_CALL(3)
GROUP_CALL(4)
#undef GROUP_CALL

_Static_assert(GROUP == 4 && GROUP <= MAX_IMAGES, "one group call per group size");
static const host_call group_calls[GROUP] = {host_correlate_1, host_correlate_2,
                                             host_correlate_3, host_correlate_4};

/* Movers [first, first + n) in one device call. */
static pv_status correlate_group(pv_phasecorr_plan *plan, const char *op,
                                 const pv_buffer *movers, int first, int n, pv_shift *shifts,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[GROUP] = {"a mover", "a mover", "a mover", "a mover"};
    call_images c = {.count = n, .first_output = n,
                     .volumes = plan->dims == 3 ? (1u << n) - 1u : 0u};
    for (int i = 0; i < n; i++)
        c.buffers[i] = &movers[first + i];
    const plan_args args = {plan, shifts + first};
    return pv_interop_device_call(plan->ctx, op, &c, names, group_calls[n - 1], &args,
                                  wait_count, wait_list, done);
}

static pv_status correlate(pv_phasecorr_plan *plan, const char *op, int dims,
                           const pv_buffer *movers, int count, pv_shift *shifts,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (plan->dims != dims)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: the plan was made for %dD inputs", op,
                       plan->dims);
    if (!movers || !shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: movers or shifts is NULL", op);
    if (count < 1)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: count %d < 1", op, count);
    for (int i = 0; i < count; i++) {
        pv_status status = check_aligned(plan->ctx, op, &movers[i]);
        if (status != PV_OK)
            return status;
    }
    pv_shift *found = calloc((size_t)count, sizeof *found);
    if (!found)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    pv_status status = PV_OK;
    for (int first = 0; status == PV_OK && first < count; first += GROUP) {
        const int n = count - first < GROUP ? count - first : GROUP;
        const int last = first + n == count;
        status = correlate_group(plan, op, movers, first, n, found, first == 0 ? wait_count : 0,
                                 first == 0 ? wait_list : NULL, last ? done : NULL);
    }
    if (status == PV_OK)
        memcpy(shifts, found, (size_t)count * sizeof *found);
    free(found);
    return status;
}

pv_status pv_phasecorr_plan_correlate_cl(pv_phasecorr_plan *plan, const pv_buffer *movers,
                                         int count, pv_shift *shifts, cl_uint wait_count,
                                         const cl_event *wait_list, cl_event *done)
{
    return correlate(plan, "phasecorr_plan_correlate_cl", 2, movers, count, shifts, wait_count,
                     wait_list, done);
}

pv_status pv_phasecorr_plan_correlate3d_cl(pv_phasecorr_plan *plan, const pv_buffer *movers,
                                           int count, pv_shift *shifts, cl_uint wait_count,
                                           const cl_event *wait_list, cl_event *done)
{
    return correlate(plan, "phasecorr_plan_correlate3d_cl", 3, movers, count, shifts,
                     wait_count, wait_list, done);
}
