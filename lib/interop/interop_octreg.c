/* Device-buffer forms of the AO-OCT registration (include/parvis/interop.h):
 * the host calls run on proxies of the caller's buffers through
 * pv_interop_device_call (lib/interop/interop.c).  The OpenCL backend loads
 * a volume through the runtime's volume transfers, which copy a bound one
 * on the device, and computes the planes' statistics (the finiteness and
 * texture checks, the empty-bin floors) there; a reconstruction's bound
 * outputs are filled on the device too (backends/opencl/octreg/octreg.c,
 * read_bound_outputs).  The host results (a plan, shifts, coverage) are
 * built into locals and handed over only when the whole call has
 * succeeded, so that the outputs stay untouched on error. */
#include "interop_internal.h"
#include "../octreg/octreg_internal.h" /* the plan's context and size */

#include <stdlib.h>
#include <string.h>

typedef struct create_args {
    const pv_octreg_options *options;
    pv_octreg_plan **made;
} create_args;

static pv_status host_create(pv_context *ctx, void *const *items, const void *args)
{
    const create_args *a = args;
    return pv_octreg_plan_create(ctx, items[0], a->options, a->made);
}

pv_status pv_octreg_plan_create_cl(pv_context *ctx, const pv_buffer *reference,
                                   const pv_octreg_options *options, pv_octreg_plan **plan,
                                   cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"reference"};
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "octreg_plan_create_cl: ctx is NULL");
    if (!plan)
        return pv_fail(ctx, PV_ERR_INVALID, "octreg_plan_create_cl: plan is NULL");
    call_images c = {.buffers = {reference}, .count = 1, .first_output = 1, .volumes = 1u};
    pv_octreg_plan *made = NULL;
    const create_args args = {options, &made};
    pv_status status = pv_interop_device_call(ctx, "octreg_plan_create_cl", &c, names,
                                              host_create, &args, wait_count, wait_list, done);
    if (status != PV_OK) {
        pv_octreg_plan_destroy(made);
        return status;
    }
    *plan = made;
    return PV_OK;
}

typedef struct register_args {
    pv_octreg_plan *plan;
    pv_octreg_shift *shifts;
    pv_octreg_info *info;
} register_args;

static pv_status host_register(pv_context *ctx, void *const *items, const void *args)
{
    const register_args *a = args;
    (void)ctx;
    return pv_octreg_register(a->plan, items[0], a->shifts, a->info);
}

pv_status pv_octreg_register_cl(pv_octreg_plan *plan, const pv_buffer *target,
                                pv_octreg_shift *shifts, pv_octreg_info *info,
                                cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"target"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "octreg_register_cl: plan is NULL");
    if (!shifts)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "octreg_register_cl: shifts is NULL");
    const size_t planes = (size_t)plan->geometry.size[2];
    pv_octreg_shift *found = calloc(planes, sizeof *found);
    if (!found)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg_register_cl: out of memory");
    pv_octreg_info summary;
    memset(&summary, 0, sizeof summary);
    call_images c = {.buffers = {target}, .count = 1, .first_output = 1, .volumes = 1u};
    const register_args args = {plan, found, &summary};
    pv_status status = pv_interop_device_call(plan->ctx, "octreg_register_cl", &c, names,
                                              host_register, &args, wait_count, wait_list, done);
    if (status == PV_OK) {
        memcpy(shifts, found, planes * sizeof *found);
        if (info)
            *info = summary;
    }
    free(found);
    return status;
}

typedef struct reconstruct_args {
    pv_octreg_plan *plan;
    const pv_octreg_shift *shifts;
    float gap_value;
    float *coverage; /* NULL: not asked for */
} reconstruct_args;

static pv_status host_reconstruct(pv_context *ctx, void *const *items, const void *args)
{
    const reconstruct_args *a = args;
    (void)ctx;
    return pv_octreg_reconstruct(a->plan, items[0], a->shifts, a->gap_value, items[1], items[2],
                                 items[3], a->coverage);
}

pv_status pv_octreg_reconstruct_cl(pv_octreg_plan *plan, const pv_buffer *target,
                                   const pv_octreg_shift *shifts, float gap_value,
                                   const pv_buffer *registered, const pv_buffer *enface,
                                   const pv_buffer *slow, float *coverage, cl_uint wait_count,
                                   const cl_event *wait_list, cl_event *done)
{
    static const char *const names[] = {"target", "registered", "enface", "slow"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "octreg_reconstruct_cl: plan is NULL");
    if (!registered && !enface && !slow && !coverage)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "octreg_reconstruct_cl: every output is NULL");
    const size_t planes = (size_t)plan->geometry.size[2];
    float *covered = coverage ? calloc(planes, sizeof *covered) : NULL;
    if (coverage && !covered)
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg_reconstruct_cl: out of memory");
    /* items: the target and the registered volume are volumes; the three
     * outputs may each be absent */
    call_images c = {.buffers = {target, registered, enface, slow}, .count = 4, .first_output = 1,
                     .volumes = 3u, .optional = 14u};
    const reconstruct_args args = {plan, shifts, gap_value, covered};
    pv_status status = pv_interop_device_call(plan->ctx, "octreg_reconstruct_cl", &c, names,
                                              host_reconstruct, &args, wait_count, wait_list,
                                              done);
    if (status == PV_OK && coverage)
        memcpy(coverage, covered, planes * sizeof *covered);
    free(covered);
    return status;
}

/* Targets a pv_octreg_average_cl call may take: every target is bound in
 * the one call, with the three optional outputs. */
#define AVERAGE_TARGETS (MAX_IMAGES - 3)

typedef struct average_args {
    pv_octreg_plan *plan;
    int count;
    pv_octreg_shift *shifts; /* NULL: not asked for */
    float gap_value;
    float *coverage; /* NULL: not asked for */
} average_args;

static pv_status host_average(pv_context *ctx, void *const *items, const void *args)
{
    const average_args *a = args;
    pv_volume targets[AVERAGE_TARGETS];
    (void)ctx;
    for (int i = 0; i < a->count; i++)
        targets[i] = *(const pv_volume *)items[i];
    return pv_octreg_average(a->plan, targets, a->count, a->shifts, a->gap_value,
                             items[a->count], items[a->count + 1], items[a->count + 2],
                             a->coverage);
}

/* The call's items: the targets (volumes), then the averaged volume and
 * the two images, each optional. */
static pv_status average_items(pv_octreg_plan *plan, const pv_buffer *targets, int count,
                               const pv_buffer *const outputs[3], call_images *c)
{
    if (!targets || count < 1 || count > AVERAGE_TARGETS)
        return pv_fail(plan->ctx, PV_ERR_INVALID,
                       "octreg_average_cl: targets is NULL or count %d is not in 1..%d", count,
                       AVERAGE_TARGETS);
    memset(c, 0, sizeof *c);
    for (int i = 0; i < count; i++)
        c->buffers[i] = &targets[i];
    for (int k = 0; k < 3; k++)
        c->buffers[count + k] = outputs[k];
    c->count = count + 3;
    c->first_output = count;
    c->volumes = (1u << (count + 1)) - 1u; /* the targets and the averaged volume */
    c->optional = 7u << count;
    return PV_OK;
}

pv_status pv_octreg_average_cl(pv_octreg_plan *plan, const pv_buffer *targets, int count,
                               pv_octreg_shift *shifts, float gap_value,
                               const pv_buffer *averaged, const pv_buffer *enface,
                               const pv_buffer *slow, float *coverage, cl_uint wait_count,
                               const cl_event *wait_list, cl_event *done)
{
    static const char *const names[MAX_IMAGES] = {
        "a target", "a target", "a target", "a target", "a target", "a target", "a target",
        "a target", "a target", "a target", "a target", "a target", "a target", "a target",
        "a target", "a target", "a target", "a target", "a target", "a target"};
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "octreg_average_cl: plan is NULL");
    const pv_buffer *const outputs[3] = {averaged, enface, slow};
    call_images c;
    pv_status status = average_items(plan, targets, count, outputs, &c);
    if (status != PV_OK)
        return status;
    /* the outputs' names in messages, after the targets' */
    const char *named[MAX_IMAGES];
    memcpy(named, names, sizeof named);
    named[count] = "averaged";
    named[count + 1] = "enface";
    named[count + 2] = "slow";
    const size_t planes = (size_t)plan->geometry.size[2];
    pv_octreg_shift *found = shifts ? calloc(planes * (size_t)count, sizeof *found) : NULL;
    float *covered = coverage ? calloc(planes, sizeof *covered) : NULL;
    if ((shifts && !found) || (coverage && !covered)) {
        free(found);
        free(covered);
        return pv_fail(plan->ctx, PV_ERR_NOMEM, "octreg_average_cl: out of memory");
    }
    const average_args args = {plan, count, found, gap_value, covered};
    status = pv_interop_device_call(plan->ctx, "octreg_average_cl", &c, named, host_average,
                                    &args, wait_count, wait_list, done);
    if (status == PV_OK && shifts)
        memcpy(shifts, found, planes * (size_t)count * sizeof *found);
    if (status == PV_OK && coverage)
        memcpy(coverage, covered, planes * sizeof *covered);
    free(found);
    free(covered);
    return status;
}
