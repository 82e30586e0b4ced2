/* Device groups: one context per OpenCL device, and the operations that
 * spread independent items over them (OCT sequences, flow sequences, BP
 * tiles).
 *
 * Each member runs on its own host thread (the calling thread is member
 * 0's), so one device's blocking waits never hold up another.  Items are
 * handed out one at a time under a mutex: a faster device simply comes back
 * sooner.  A member makes its plan on its first item, so members that get
 * no item cost nothing.  Contexts are never shared between threads; what
 * the library holds process-wide (the FFT plan caches, the program binary
 * cache on disk) has its own locking. */
#include "multidevice_internal.h"
#include "../stereo/stereo_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MESSAGE_SIZE 1024

/* ================================================================ groups */

static pv_status check_create_args(pv_device_group **out, const pv_context_options *base,
                                   const int *device_indices, int count)
{
    const char *op = "pv_device_group_create";
    if (!out)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: out is NULL", op);
    if (count < 0 || count > PV_DEVICE_GROUP_MAX)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: count %d is not in 0..%d", op, count,
                       PV_DEVICE_GROUP_MAX);
    if (count > 0 && !device_indices)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: device_indices is NULL but count is %d", op,
                       count);
    for (int i = 0; i < count; i++)
        if (device_indices[i] < 0)
            return pv_fail(NULL, PV_ERR_INVALID, "%s: device_indices[%d] = %d is negative", op, i,
                           device_indices[i]);
    if (count > 0 && base && base->backend == PV_BACKEND_CPU)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: device indices name OpenCL devices, but base asks for the CPU backend",
                       op);
    return PV_OK;
}

/* Every index names a listed OpenCL device. */
static pv_status check_indices(const int *device_indices, int count)
{
    int devices = 0;
    pv_status status = pv_device_list(NULL, 0, &devices);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < count; i++)
        if (device_indices[i] >= devices)
            return pv_fail(NULL, PV_ERR_INVALID,
                           "pv_device_group_create: device_indices[%d] = %d names no OpenCL "
                           "device (%d found)",
                           i, device_indices[i], devices);
    return PV_OK;
}

static pv_status add_member(pv_device_group *group, const pv_context_options *options)
{
    pv_context *ctx = NULL;
    pv_status status = pv_context_create(&ctx, options);
    if (status == PV_OK)
        group->contexts[group->size++] = ctx;
    return status;
}

static void base_options(const pv_context_options *base, pv_context_options *options)
{
    pv_context_options_default(options);
    if (base)
        *options = *base;
}

static pv_status add_listed(pv_device_group *group, const pv_context_options *base,
                            const int *device_indices, int count)
{
    pv_context_options options;
    base_options(base, &options);
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++) {
        options.device_index = device_indices[i];
        status = add_member(group, &options);
        /* PARVIS_BACKEND=cpu turned the group to the CPU: one context is all
         * the CPU backend needs. */
        if (status == PV_OK && pv_context_backend(group->contexts[0]) == PV_BACKEND_CPU)
            break;
    }
    return status;
}

static int pinned_by_environment(void)
{
    return pv_config_get(PV_CONFIG_DEVICE, NULL, 0);
}

/* The probe context decides the platform; the other devices of that
 * platform join it, the group kept in device index order. */
static pv_status add_platform(pv_device_group *group, pv_context *probe,
                              const pv_context_options *base)
{
    pv_device_info devices[PV_DEVICE_GROUP_MAX];
    int found = 0;
    pv_status status = pv_device_list(devices, PV_DEVICE_GROUP_MAX, &found);
    if (status != PV_OK)
        return status;
    int chosen = probe->device_index;
    if (found > PV_DEVICE_GROUP_MAX)
        found = PV_DEVICE_GROUP_MAX;
    if (chosen >= found) {   /* the list changed under us: the probe alone */
        group->contexts[group->size++] = probe;
        return PV_OK;
    }
    pv_context_options options;
    base_options(base, &options);
    for (int i = 0; status == PV_OK && i < found; i++) {
        if (i == chosen) {
            group->contexts[group->size++] = probe;
            continue;
        }
        if (strcmp(devices[i].platform, devices[chosen].platform) != 0)
            continue;
        options.device_index = i;
        status = add_member(group, &options);
    }
    return status;
}

static pv_status add_automatic(pv_device_group *group, const pv_context_options *base)
{
    pv_context *probe = NULL;
    pv_status status = pv_context_create(&probe, base);
    if (status != PV_OK)
        return status;
    if (pv_context_backend(probe) != PV_BACKEND_OPENCL || pinned_by_environment() ||
        probe->device_index < 0 || probe->device_index >= PV_DEVICE_GROUP_MAX) {
        group->contexts[group->size++] = probe;
        return PV_OK;
    }
    status = add_platform(group, probe, base);
    /* add_platform placed the probe in the group unless it failed first */
    int placed = 0;
    for (int i = 0; i < group->size; i++)
        placed |= group->contexts[i] == probe;
    if (!placed)
        pv_context_destroy(probe);
    return status;
}

pv_status pv_device_group_create(pv_device_group **out, const pv_context_options *base,
                                 const int *device_indices, int count)
{
    pv_status status = check_create_args(out, base, device_indices, count);
    if (status != PV_OK)
        return status;
    *out = NULL;
    if (count > 0 && (status = check_indices(device_indices, count)) != PV_OK)
        return status;
    pv_device_group *group = calloc(1, sizeof *group);
    if (!group)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_device_group_create: out of memory");
    status = count > 0 ? add_listed(group, base, device_indices, count)
                       : add_automatic(group, base);
    if (status != PV_OK) {
        pv_device_group_destroy(group);
        return status;
    }
    *out = group;
    return PV_OK;
}

void pv_device_group_destroy(pv_device_group *group)
{
    if (!group)
        return;
    for (int i = 0; i < group->size; i++)
        pv_context_destroy(group->contexts[i]);
    free(group);
}

int pv_device_group_size(const pv_device_group *group)
{
    return group ? group->size : 0;
}

pv_context *pv_device_group_context(pv_device_group *group, int index)
{
    if (!group || index < 0 || index >= group->size)
        return NULL;
    return group->contexts[index];
}

static const member_record *record_of(const pv_device_group *group, int index)
{
    if (!group || index < PV_DEVICE_GROUP_WHOLE || index >= group->size)
        return NULL;
    return index == PV_DEVICE_GROUP_WHOLE ? &group->whole : &group->last[index];
}

pv_status pv_device_group_last_timing(const pv_device_group *group, int index, pv_timing *timing)
{
    const member_record *record = record_of(group, index);
    if (!record || !timing)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "pv_device_group_last_timing: group or timing is NULL, or index %d is "
                       "not a member (nor PV_DEVICE_GROUP_WHOLE)",
                       index);
    *timing = record->timing;
    return PV_OK;
}

int pv_device_group_last_items(const pv_device_group *group, int index)
{
    const member_record *record = record_of(group, index);
    return record ? record->items : -1;
}

/* ============================================================ dispatching */

/* The item counter and the first failure, shared by the members. */
struct dispatch {
    pthread_mutex_t lock;
    int next_item;
    int finished;       /* items done, by all members */
    pv_status status;   /* the first failure; PV_OK stops nothing */
    char message[GROUP_MESSAGE_SIZE];
};

static int take_item(dispatch *d, int item_count)
{
    pthread_mutex_lock(&d->lock);
    int item = d->status != PV_OK || d->next_item >= item_count ? -1 : d->next_item++;
    pthread_mutex_unlock(&d->lock);
    return item;
}

/* Keep the first failure; pv_last_error() is this thread's message. */
static void record_failure(member_run *m, int item, pv_status status)
{
    dispatch *d = m->dispatch;
    pthread_mutex_lock(&d->lock);
    if (d->status == PV_OK) {
        d->status = status;
        snprintf(d->message, sizeof d->message, "%s: device %d (%s), item %d: %s", m->task->op,
                 m->member, pv_context_device_name(m->ctx), item, pv_last_error());
    }
    pthread_mutex_unlock(&d->lock);
}

/* Add the context's timing of the call just made. */
static void account(member_run *m)
{
    pv_timing t;
    pv_context_last_timing(m->ctx, &t);
    m->record.timing.kernel_ms += t.kernel_ms;
    m->record.timing.upload_ms += t.upload_ms;
    m->record.timing.download_ms += t.download_ms;
}

static pv_status run_item(member_run *m, int item)
{
    if (!m->begun) {
        /* Not every begin step is a timed library call: start from zero so
         * the previous call's timing is not counted again. */
        memset(&m->ctx->timing, 0, sizeof m->ctx->timing);
        pv_status status = m->task->begin ? m->task->begin(m) : PV_OK;
        account(m);
        if (status != PV_OK)
            return status;
        m->begun = 1;
    }
    pv_status status = m->task->item(m, item);
    account(m);
    if (status == PV_OK)
        m->record.items++;
    return status;
}

/* The host-side OpenMP work of each member (staging copies, plan set-up)
 * gets its share of the cores: one full team per member would oversubscribe
 * them, and a team whose threads wait for a core stalls its caller. */
static int share_cores(int members)
{
#ifdef _OPENMP
    int previous = omp_get_max_threads();
    if (members > 1) {
        int share = omp_get_num_procs() / members;
        omp_set_num_threads(share > 1 ? share : 1);
    }
    return previous;
#else
    (void)members;
    return 1;
#endif
}

static void restore_threads(int previous)
{
#ifdef _OPENMP
    omp_set_num_threads(previous);
#else
    (void)previous;
#endif
}

/* Progress of a group call goes to the first context's callback, from the
 * calling thread (member 0), in items done by all members. */
static pv_status report_progress(pv_context *first, const char *op, double done, double total)
{
    pv_context_lock(first);
    pv_status status = pv_progress_report(first, op, done, total);
    pv_context_unlock(first);
    return status;
}

static pv_status item_finished(member_run *m)
{
    dispatch *d = m->dispatch;
    pthread_mutex_lock(&d->lock);
    const int finished = ++d->finished;
    pthread_mutex_unlock(&d->lock);
    if (m->member != 0 || finished >= m->task->item_count)
        return PV_OK; /* the last report is the caller's, after every member */
    return report_progress(m->ctx, m->task->op, finished, m->task->item_count);
}

static void *member_main(void *arg)
{
    member_run *m = arg;
    int threads = share_cores(m->members);
    double start = pv_now_ms();
    int item;
    while ((item = take_item(m->dispatch, m->task->item_count)) >= 0) {
        pv_status status = run_item(m, item);
        if (status == PV_OK)
            status = item_finished(m);
        if (status != PV_OK) {
            record_failure(m, item, status);
            break;
        }
    }
    if (m->begun && m->task->end)
        m->task->end(m);
    m->record.timing.total_ms = pv_now_ms() - start;
    restore_threads(threads);
    return NULL;
}

static void keep_records(pv_device_group *group, const member_run *runs, double wall_ms)
{
    memset(group->last, 0, sizeof group->last);
    memset(&group->whole, 0, sizeof group->whole);
    for (int i = 0; i < group->size; i++) {
        group->last[i] = runs[i].record;
        group->whole.items += runs[i].record.items;
        group->whole.timing.kernel_ms += runs[i].record.timing.kernel_ms;
        group->whole.timing.upload_ms += runs[i].record.timing.upload_ms;
        group->whole.timing.download_ms += runs[i].record.timing.download_ms;
    }
    group->whole.timing.total_ms = wall_ms;
}

static pv_status run_members(pv_device_group *group, const group_task *task)
{
    double start = pv_now_ms();
    dispatch d;
    memset(&d, 0, sizeof d);
    if (pthread_mutex_init(&d.lock, NULL) != 0)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: cannot create a mutex", task->op);
    member_run runs[PV_DEVICE_GROUP_MAX];
    pthread_t threads[PV_DEVICE_GROUP_MAX];
    int started[PV_DEVICE_GROUP_MAX] = {0};
    memset(runs, 0, sizeof runs);
    int members = group->size < task->item_count ? group->size : task->item_count;
    for (int i = 0; i < group->size; i++)
        runs[i] = (member_run){task, &d, group->contexts[i], i, members, NULL, 0,
                               {{0, 0, 0, 0}, 0}};
    for (int i = 1; i < members; i++)
        started[i] = pthread_create(&threads[i], NULL, member_main, &runs[i]) == 0;
    member_main(&runs[0]);
    for (int i = 1; i < members; i++)
        if (started[i])
            pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&d.lock);
    keep_records(group, runs, pv_now_ms() - start);
    if (d.status != PV_OK)
        return pv_fail(NULL, d.status, "%s", d.message);
    return PV_OK;
}

/* Run every item of task on the group.  Member 0 runs on the calling
 * thread; a member whose thread cannot start takes no items, and the
 * others take them instead.  The first context's calls are nested in the
 * group call, so that only the group's progress reaches its callback. */
pv_status pv_group_run_task(pv_device_group *group, const group_task *task)
{
    pv_context *first = group->contexts[0];
    pv_context_lock(first);
    pv_progress_outer_begin(first);
    pv_context_unlock(first);
    pv_status status = report_progress(first, task->op, 0.0, task->item_count);
    if (status == PV_OK)
        status = run_members(group, task);
    if (status == PV_OK)
        status = report_progress(first, task->op, task->item_count, task->item_count);
    pv_context_lock(first);
    pv_progress_outer_end(first);
    pv_context_unlock(first);
    return status;
}

pv_status pv_group_check(const pv_device_group *group, const char *op)
{
    if (!group || group->size < 1)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: group is NULL", op);
    return PV_OK;
}

/* ================================================================ octreg */

typedef struct octreg_shared {
    const pv_volume *reference;
    const pv_volume *targets;
    const pv_octreg_options *options;
    pv_octreg_shift *shifts;   /* count * B-scans, copied out on success */
    pv_octreg_info *infos;     /* count */
} octreg_shared;

static pv_status octreg_begin(member_run *m)
{
    const octreg_shared *s = m->task->shared;
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(m->ctx, s->reference, s->options, &plan);
    m->plan = plan;
    return status;
}

static pv_status octreg_item(member_run *m, int item)
{
    const octreg_shared *s = m->task->shared;
    pv_octreg_shift *shifts = s->shifts + (size_t)item * (size_t)s->reference->nz;
    return pv_octreg_register(m->plan, &s->targets[item], shifts, &s->infos[item]);
}

static void octreg_end(member_run *m)
{
    pv_octreg_plan_destroy(m->plan);
    m->plan = NULL;
}

/* volumes[0 .. count) valid, of a type in `accepted` and of first's size
 * (the registered volumes may be U16, the flows are F32). */
static pv_status check_sequence_volumes(const char *op, const pv_volume *first,
                                        const char *name, const pv_volume *volumes, int count,
                                        unsigned accepted)
{
    for (int i = 0; i < count; i++) {
        const pv_volume *v = &volumes[i];
        char label[64];
        snprintf(label, sizeof label, "%s[%d]", name, i);
        pv_status status = pv_check_volume(NULL, op, label, v, accepted);
        if (status != PV_OK)
            return status;
        if (!pv_volumes_same_size(v, first))
            return pv_fail(NULL, PV_ERR_INVALID, "%s: %s[%d] is %dx%dx%d, expected %dx%dx%d", op,
                           name, i, v->nx, v->ny, v->nz, first->nx, first->ny, first->nz);
    }
    return PV_OK;
}

static pv_status check_octreg_args(const pv_device_group *group, const pv_volume *reference,
                                   const pv_volume *targets, int count,
                                   const pv_octreg_shift *shifts)
{
    const char *op = "pv_octreg_register_sequence";
    pv_status status = pv_group_check(group, op);
    if (status != PV_OK)
        return status;
    status = pv_check_volume(NULL, op, "reference", reference, PV_ACCEPT_F32_U16);
    if (status != PV_OK)
        return status;
    if (!targets || count < 1)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: targets is NULL or count %d < 1", op, count);
    if (!shifts)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: shifts is NULL", op);
    return check_sequence_volumes(op, reference, "targets", targets, count, PV_ACCEPT_F32_U16);
}

pv_status pv_octreg_register_sequence(pv_device_group *group, const pv_volume *reference,
                                      const pv_volume *targets, int count,
                                      const pv_octreg_options *options,
                                      pv_octreg_shift *shifts, pv_octreg_info *infos)
{
    pv_status status = check_octreg_args(group, reference, targets, count, shifts);
    if (status != PV_OK)
        return status;
    size_t planes = (size_t)reference->nz, entries;
    if (!pv_size_mul(planes, (size_t)count, &entries))
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_octreg_register_sequence: sizes overflow");
    octreg_shared shared = {reference, targets, options, calloc(entries, sizeof *shifts),
                            calloc((size_t)count, sizeof *infos)};
    if (!shared.shifts || !shared.infos)
        status = pv_fail(NULL, PV_ERR_NOMEM, "pv_octreg_register_sequence: out of memory");
    group_task task = {"pv_octreg_register_sequence", count, &shared,
                       octreg_begin, octreg_item, octreg_end};
    if (status == PV_OK)
        status = pv_group_run_task(group, &task);
    if (status == PV_OK) {
        memcpy(shifts, shared.shifts, entries * sizeof *shifts);
        if (infos)
            memcpy(infos, shared.infos, (size_t)count * sizeof *infos);
    }
    free(shared.shifts);
    free(shared.infos);
    return status;
}

/* ================================================================== flow */

typedef struct flow_shared {
    const pv_volume *frames;
    const pv_flow_params *params;
    pv_flow_field *flows;
} flow_shared;

static pv_status flow_begin(member_run *m)
{
    const flow_shared *s = m->task->shared;
    const pv_volume *f = &s->frames[0];
    pv_flow_plan *plan = NULL;
    pv_status status = pv_flow_plan_create(m->ctx, f->nx, f->ny, f->nz, s->params, &plan);
    m->plan = plan;
    return status;
}

static pv_status flow_item(member_run *m, int item)
{
    const flow_shared *s = m->task->shared;
    return pv_flow_plan_run(m->plan, &s->frames[item], &s->frames[item + 1], &s->flows[item]);
}

static void flow_end(member_run *m)
{
    pv_flow_plan_destroy(m->plan);
    m->plan = NULL;
}

static const pv_volume *field_component(const pv_flow_field *field, int c)
{
    return c == 0 ? &field->u : c == 1 ? &field->v : &field->w;
}

/* Every output component apart from every frame and every other output:
 * the threads write them at the same time. */
static pv_status check_flows_apart(const char *op, const pv_volume *frames, int count,
                                   const pv_flow_field *flows)
{
    int parts = 3 * (count - 1);
    for (int a = 0; a < parts; a++) {
        const pv_volume *part = field_component(&flows[a / 3], a % 3);
        for (int f = 0; f < count; f++)
            if (pv_volumes_overlap(part, &frames[f]))
                return pv_fail(NULL, PV_ERR_INVALID, "%s: flows[%d] shares memory with frames[%d]",
                               op, a / 3, f);
        for (int b = 0; b < a; b++)
            if (pv_volumes_overlap(part, field_component(&flows[b / 3], b % 3)))
                return pv_fail(NULL, PV_ERR_INVALID, "%s: flows[%d] and flows[%d] share memory",
                               op, b / 3, a / 3);
    }
    return PV_OK;
}

static pv_status check_flow_args(const pv_device_group *group, const pv_volume *frames,
                                 int count, const pv_flow_field *flows)
{
    const char *op = "pv_flow3d_sequence";
    pv_status status = pv_group_check(group, op);
    if (status != PV_OK)
        return status;
    if (!frames || count < 2)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: frames is NULL or count %d < 2", op, count);
    if (!flows)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: flows is NULL", op);
    status = pv_check_volume(NULL, op, "frames[0]", &frames[0], PV_ACCEPT_F32_U16);
    if (status == PV_OK)
        status = check_sequence_volumes(op, &frames[0], "frames", frames, count,
                                        PV_ACCEPT_F32_U16);
    for (int i = 0; status == PV_OK && i < count - 1; i++)
        for (int c = 0; status == PV_OK && c < 3; c++)
            status = check_sequence_volumes(op, &frames[0], "flows", field_component(&flows[i], c),
                                             1, PV_ACCEPT_F32);
    return status == PV_OK ? check_flows_apart(op, frames, count, flows) : status;
}

pv_status pv_flow3d_sequence(pv_device_group *group, const pv_volume *frames, int count,
                             const pv_flow_params *params, pv_flow_field *flows)
{
    pv_status status = check_flow_args(group, frames, count, flows);
    if (status != PV_OK)
        return status;
    pv_flow_params defaults;
    if (!params) {
        pv_flow_params_default(&defaults);
        params = &defaults;
    }
    flow_shared shared = {frames, params, flows};
    group_task task = {"pv_flow3d_sequence", count - 1, &shared, flow_begin, flow_item, flow_end};
    return pv_group_run_task(group, &task);
}

/* ==================================================================== BP */

typedef struct bp_shared {
    const pv_image *left, *right;
    const pv_bp_tiling *tiling;
    pv_image *outputs;   /* one full-size map per member */
    int *owner;          /* the member that ran each tile */
} bp_shared;

/* Each member writes a whole map (the OpenCL backend downloads its full
 * buffer), so members get their own and the tiles are gathered after. */
static pv_status bp_begin(member_run *m)
{
    bp_shared *s = m->task->shared;
    pv_status status = pv_image_alloc(&s->outputs[m->member], s->left->width, s->left->height,
                                      PV_PIXEL_F32);
    return status == PV_OK ? PV_OK
                           : pv_fail(m->ctx, PV_ERR_NOMEM, "stereo_bp: no memory for a map");
}

static pv_status bp_item(member_run *m, int item)
{
    bp_shared *s = m->task->shared;
    s->owner[item] = m->member;
    return pv_bp_run_tiles(m->ctx, s->left, s->right, s->tiling, item, 1,
                           &s->outputs[m->member]);
}

static void copy_tile(const pv_bp_tile *tile, const pv_image *from, pv_image *to)
{
    for (int y = tile->out_y; y < tile->out_y + tile->out_height; y++) {
        const float *src = (const float *)from->data + (ptrdiff_t)y * from->stride + tile->out_x;
        float *dst = (float *)to->data + (ptrdiff_t)y * to->stride + tile->out_x;
        memcpy(dst, src, (size_t)tile->out_width * sizeof *dst);
    }
}

static void gather_tiles(const bp_shared *s, pv_image *disparity)
{
    for (int t = 0; t < s->tiling->tile_count; t++)
        copy_tile(&s->tiling->tiles[t], &s->outputs[s->owner[t]], disparity);
}

static pv_status run_bp_tiles(pv_device_group *group, bp_shared *s, pv_image *disparity)
{
    int tiles = s->tiling->tile_count;
    s->outputs = calloc((size_t)group->size, sizeof *s->outputs);
    s->owner = calloc((size_t)tiles, sizeof *s->owner);
    pv_status status = s->outputs && s->owner
                           ? PV_OK
                           : pv_fail(NULL, PV_ERR_NOMEM, "pv_stereo_bp_group: out of memory");
    group_task task = {"pv_stereo_bp_group", tiles, s, bp_begin, bp_item, NULL};
    if (status == PV_OK)
        status = pv_group_run_task(group, &task);
    if (status == PV_OK) {
        gather_tiles(s, disparity);
        status = pv_bp_crosscheck_tiling(group->contexts[0], s->left, s->right, s->tiling,
                                         disparity);
    }
    for (int i = 0; s->outputs && i < group->size; i++)
        pv_image_free(&s->outputs[i]);
    free(s->outputs);
    free(s->owner);
    return status;
}

pv_status pv_stereo_bp_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                             const pv_bp_params *params, pv_image *disparity)
{
    pv_status status = pv_group_check(group, "pv_stereo_bp_group");
    if (status != PV_OK)
        return status;
    pv_bp_tiling tiling;
    status = pv_bp_tiling_plan(group->contexts, group->size, left, right, params, disparity,
                               group->size, &tiling);
    if (status != PV_OK)
        return status;
    bp_shared shared = {left, right, &tiling, NULL, NULL};
    status = run_bp_tiles(group, &shared, disparity);
    pv_bp_tiling_free(&tiling);
    return status;
}
