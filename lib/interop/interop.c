/* Front end of the device-buffer calls (include/parvis/interop.h).
 *
 * A device-buffer call runs the host call of the same operation on proxy
 * images: each pv_buffer becomes a pv_image whose data pointer is a
 * placeholder (an inaccessible mapping of the image's size, so that the
 * host call's checks of aliasing between images still see distinct
 * ranges, and a read of a pixel would fault instead of passing), and the
 * backend's interop table binds the placeholder to the caller's buffer, so
 * that the call's copies between host and device become copies between
 * the caller's buffer and parvis's on the device.  While the call runs,
 * ctx->device_call tells the front ends not to read pixel values (their
 * finiteness checks) and to leave the cross-check to this file; the
 * backend turns the call's final wait into a flush and hands back an event
 * marking its end.  With the cross-check on, the buffers are read to the
 * host and the host call runs on them instead. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "interop_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

pv_buffer pv_buffer_wrap(cl_mem mem, int width, int height, pv_pixel_type type)
{
    pv_buffer b = {mem, 0, width, height, width, type, 1, (ptrdiff_t)width * height};
    return b;
}

pv_buffer pv_buffer_wrap3d(cl_mem mem, int nx, int ny, int nz, pv_pixel_type type)
{
    pv_buffer b = {mem, 0, nx, ny, nx, type, nz, (ptrdiff_t)nx * ny};
    return b;
}

static int is_volume(const call_images *c, int i)
{
    return (c->volumes >> i) & 1u;
}

static int depth_of(const pv_buffer *b)
{
    return b->depth > 1 ? b->depth : 1;
}

/* ------------------------------------------------------------------ checks */

static int known_type(pv_pixel_type type)
{
    return type >= PV_PIXEL_U8 && type <= PV_PIXEL_RGB16;
}

/* Bytes from pixel (0, 0) to the end of the last row, 0 on overflow. */
static size_t buffer_extent(const pv_buffer *b)
{
    size_t slices = 0, rows, elements, bytes;
    if (depth_of(b) > 1 &&
        !pv_size_mul((size_t)(depth_of(b) - 1), (size_t)b->slice_stride, &slices))
        return 0;
    if (!pv_size_mul((size_t)(b->height - 1), (size_t)b->stride, &rows) ||
        rows > SIZE_MAX - (size_t)b->width - slices)
        return 0;
    elements = slices + rows + (size_t)b->width;
    return pv_size_mul(elements, pv_pixel_size(b->type), &bytes) ? bytes : 0;
}

static pv_status check_buffer(pv_context *ctx, const char *op, const char *name,
                              const pv_buffer *b, int volume)
{
    if (!b)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL", op, name);
    const int slices_ok = depth_of(b) == 1 ||
                          (b->slice_stride / b->height >= b->stride &&
                           b->slice_stride >= b->stride * (ptrdiff_t)b->height);
    if (!b->mem || b->width < 1 || b->height < 1 || b->depth < 0 || b->stride < b->width ||
        !slices_ok || !known_type(b->type) || buffer_extent(b) == 0 ||
        b->offset > SIZE_MAX - buffer_extent(b))
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: %s is not a valid buffer (mem %p, %dx%dx%d, stride %td, slice stride "
                       "%td, type %d)", op, name, (void *)b->mem, b->width, b->height, b->depth,
                       b->stride, b->slice_stride, (int)b->type);
    if (!volume && depth_of(b) > 1)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s has %d slices; an image has one", op, name,
                       b->depth);
    if (volume && b->type != PV_PIXEL_F32 && b->type != PV_PIXEL_U16)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s: a volume holds F32 or U16 samples", op,
                       name);
    return PV_OK;
}

/* Whether two buffers share bytes. */
static int overlap(const pv_buffer *a, const pv_buffer *b)
{
    return a->mem == b->mem && a->offset < b->offset + buffer_extent(b) &&
           b->offset < a->offset + buffer_extent(a);
}

static pv_status check_call(pv_context *ctx, const char *op, const call_images *c,
                            const char *const *names, cl_uint wait_count,
                            const cl_event *wait_list)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", op);
    if (!ctx->ops->interop->bind)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "%s: device buffers need an OpenCL context (this one is %s)", op,
                       pv_backend_name(ctx->backend));
    if (wait_count > 0 && !wait_list)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: wait_count %u with no wait_list", op,
                       (unsigned)wait_count);
    for (int i = 0; i < c->count; i++) {
        if (!c->buffers[i] && ((c->optional >> i) & 1u))
            continue; /* an absent optional output */
        pv_status status = check_buffer(ctx, op, names[i], c->buffers[i], is_volume(c, i));
        if (status != PV_OK)
            return status;
    }
    for (int i = c->first_output; i < c->count; i++)
        for (int j = 0; j < c->count && c->buffers[i]; j++)
            if (j != i && c->buffers[j] && overlap(c->buffers[i], c->buffers[j]))
                return pv_fail(ctx, PV_ERR_INVALID, "%s: %s shares bytes with %s", op, names[i],
                               names[j]);
    return PV_OK;
}

/* ------------------------------------------------------------ placeholders */

/* The host data pointer of item i (its placeholder or host copy). */
static void *item_data(const call_images *c, int i)
{
    return is_volume(c, i) ? (void *)c->volume[i].data : c->images[i].data;
}

static void release_images(call_images *c)
{
    for (int i = 0; i < c->count; i++) {
        if (c->mapped[i])
            munmap(item_data(c, i), c->mapped[i]);
        c->mapped[i] = 0;
    }
}

/* Item i described over `data` (a placeholder or a host copy laid out as
 * the buffer is when `as_buffer`, else densely). */
static void describe_item(call_images *c, int i, void *data, int as_buffer)
{
    const pv_buffer *b = c->buffers[i];
    if (!is_volume(c, i)) {
        c->images[i] = (pv_image){b->width, b->height, as_buffer ? b->stride : b->width, b->type,
                                  data};
        return;
    }
    c->volume[i] = b->type == PV_PIXEL_U16
                       ? pv_volume_wrap_u16(data, b->width, b->height, depth_of(b))
                       : pv_volume_wrap(data, b->width, b->height, depth_of(b));
    if (as_buffer) {
        c->volume[i].stride_y = b->stride;
        c->volume[i].stride_z = depth_of(b) > 1 ? b->slice_stride : b->stride * b->height;
    }
}

/* An inaccessible mapping of each item's span as its data. */
static pv_status map_placeholders(pv_context *ctx, call_images *c)
{
    for (int i = 0; i < c->count; i++) {
        if (!c->buffers[i])
            continue;
        const size_t bytes = buffer_extent(c->buffers[i]);
        void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            release_images(c);
            return pv_fail(ctx, PV_ERR_NOMEM, "device buffers: no address space for a proxy");
        }
        describe_item(c, i, p, 1);
        c->mapped[i] = bytes;
    }
    return PV_OK;
}

/* --------------------------------------------------------------- the calls */

static void item_list(call_images *c, void **list)
{
    for (int i = 0; i < c->count; i++)
        list[i] = !c->buffers[i] ? NULL : is_volume(c, i) ? (void *)&c->volume[i]
                                                          : (void *)&c->images[i];
}

/* The host call a device call stands for: a single call's, or a batch's
 * call of one index. */
typedef struct runner {
    host_call single;
    host_batch_call batch;
    const void *args;
} runner;

static pv_status run_items(pv_context *ctx, call_images *c, const runner *r, int index)
{
    void *list[MAX_IMAGES];
    item_list(c, list);
    return r->batch ? r->batch(ctx, index, list, r->args) : r->single(ctx, list, r->args);
}

/* One host call on proxies bound to the caller's buffers, queued, not
 * waited for (inside the backend's begin and end). */
static pv_status run_bound(pv_context *ctx, call_images *c, const runner *r, int index)
{
    const pv_interop_ops *io = ctx->ops->interop;
    pv_status status = map_placeholders(ctx, c);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < c->count && status == PV_OK; i++)
        if (c->buffers[i])
            status = io->bind(ctx, item_data(c, i), c->mapped[i], c->buffers[i]->mem,
                              c->buffers[i]->offset);
    if (status == PV_OK) {
        ctx->device_call = 1;
        status = run_items(ctx, c, r, index);
        ctx->device_call = 0;
    }
    io->unbind(ctx);
    release_images(c);
    return status;
}

/* Item i between its host copy (dense) and the caller's buffer, a slice
 * at a time (an image is one slice). */
static pv_status transfer_item(pv_context *ctx, call_images *c, int i, int to_device)
{
    const pv_interop_ops *io = ctx->ops->interop;
    const pv_buffer *b = c->buffers[i];
    const size_t pixel = pv_pixel_size(b->type);
    const size_t slice_bytes = (size_t)b->width * (size_t)b->height * pixel;
    pv_status status = PV_OK;
    for (int z = 0; z < depth_of(b) && status == PV_OK; z++) {
        pv_image slice = {b->width, b->height, b->width, b->type,
                          (char *)item_data(c, i) + (size_t)z * slice_bytes};
        const size_t at = b->offset + (size_t)z * (size_t)b->slice_stride * pixel;
        status = to_device ? io->write(ctx, &slice, b->mem, at, b->stride)
                           : io->read(ctx, b->mem, at, b->stride, &slice);
    }
    return status;
}

/* The cross-check's form of one host call: the buffers read to host
 * copies, the host call (and its cross-check) on them, the outputs
 * written back. */
static pv_status run_on_host(pv_context *ctx, call_images *c, const runner *r, int index)
{
    pv_status status = PV_OK;
    void *copies[MAX_IMAGES] = {NULL};
    for (int i = 0; i < c->count && status == PV_OK; i++) {
        if (!c->buffers[i])
            continue;
        const pv_buffer *b = c->buffers[i];
        copies[i] = malloc((size_t)b->width * (size_t)b->height * (size_t)depth_of(b) *
                           pv_pixel_size(b->type));
        if (!copies[i]) {
            status = pv_fail(ctx, PV_ERR_NOMEM, "device buffers: no host memory for a copy");
            break;
        }
        describe_item(c, i, copies[i], 0);
        if (i < c->first_output)
            status = transfer_item(ctx, c, i, 0);
    }
    if (status == PV_OK)
        status = run_items(ctx, c, r, index);
    for (int i = c->first_output; i < c->count && status == PV_OK; i++)
        if (c->buffers[i])
            status = transfer_item(ctx, c, i, 1);
    for (int i = 0; i < c->count; i++)
        free(copies[i]);
    return status;
}

/* The calls, in order, between one begin (after the wait list) and one
 * end (one completion event): on bound proxies, or with the cross-check
 * on, on host copies. */
static pv_status run_calls(pv_context *ctx, call_images *calls, int count, const runner *r,
                           cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    const pv_interop_ops *io = ctx->ops->interop;
    const int bound = !ctx->crosscheck;
    pv_status status = io->begin(ctx, wait_count, (void *const *)wait_list, bound);
    if (status != PV_OK)
        return status;
    for (int i = 0; i < count && status == PV_OK; i++)
        status = bound ? run_bound(ctx, &calls[i], r, i) : run_on_host(ctx, &calls[i], r, i);
    status = io->end(ctx, status, (void **)done);
    if (bound)
        ctx->device_call_pending = status == PV_OK;
    return status;
}

/* Every buffer of the calls accepted by the backend's binding (of the
 * context's cl_context, large enough), a call's at a time, before any
 * work and before the wait list is handed to the backend: a buffer of
 * another context is refused as such (not as a wait list the backend
 * cannot queue), and a bad buffer of a batch's late call is refused as a
 * bad argument rather than found after the earlier calls have written
 * their outputs. */
static pv_status check_bindable(pv_context *ctx, const call_images *calls, int count)
{
    const pv_interop_ops *io = ctx->ops->interop;
    pv_status status = PV_OK;
    pv_context_lock(ctx);
    for (int k = 0; k < count && status == PV_OK; k++) {
        for (int i = 0; i < calls[k].count && status == PV_OK; i++) {
            const pv_buffer *b = calls[k].buffers[i];
            if (b) /* the description's address stands for the proxy */
                status = io->bind(ctx, b, buffer_extent(b), b->mem, b->offset);
        }
        io->unbind(ctx);
    }
    pv_context_unlock(ctx);
    return status;
}

static pv_status device_calls(pv_context *ctx, call_images *calls, int count, const runner *r,
                              cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    pv_status status = pv_fork_check_context(ctx);
    if (status == PV_OK)
        status = check_bindable(ctx, calls, count);
    if (status != PV_OK)
        return status;
    pv_context_lock(ctx); /* device_call and the bindings belong to this call */
    ctx->last_error[0] = '\0';
    status = run_calls(ctx, calls, count, r, wait_count, wait_list, done);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_interop_device_call(pv_context *ctx, const char *op, call_images *c,
                                 const char *const *names, host_call run, const void *args,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    pv_status status = check_call(ctx, op, c, names, wait_count, wait_list);
    const runner r = {run, NULL, args};
    return status == PV_OK ? device_calls(ctx, c, 1, &r, wait_count, wait_list, done) : status;
}

/* ------------------------------------------------------------- batches */

/* One buffer of a batch, for the search of overlaps across its calls. */
typedef struct span {
    cl_mem mem;
    size_t start, end;
    int call, item, output;
} span;

static int span_order(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->mem != y->mem)
        return (uintptr_t)x->mem < (uintptr_t)y->mem ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static pv_status overlap_found(pv_context *ctx, const char *op, const char *const *names,
                               const span *a, const span *b)
{
    return pv_fail(ctx, PV_ERR_INVALID, "%s: %s of item %d shares bytes with %s of item %d", op,
                   names[b->item], b->call, names[a->item], a->call);
}

/* No output of any call shares bytes with another buffer of the batch:
 * the spans sorted by buffer and start, then one sweep that keeps the
 * farthest end so far of any span and of an output span (an earlier span
 * reaching past a later one's start overlaps it), so the check costs
 * O(n log n) for n buffers rather than a comparison of every pair. */
static pv_status check_batch_overlaps(pv_context *ctx, const char *op, const call_images *calls,
                                      int count, const char *const *names)
{
    size_t n = 0;
    span *spans = malloc((size_t)count * MAX_IMAGES * sizeof *spans);
    if (!spans)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for the batch's checks", op);
    for (int k = 0; k < count; k++)
        for (int i = 0; i < calls[k].count; i++) {
            const pv_buffer *b = calls[k].buffers[i];
            if (b)
                spans[n++] = (span){b->mem, b->offset, b->offset + buffer_extent(b), k, i,
                                    i >= calls[k].first_output};
        }
    qsort(spans, n, sizeof *spans, span_order);
    pv_status status = PV_OK;
    const span *far_any = NULL, *far_output = NULL;
    for (size_t i = 0; i < n && status == PV_OK; i++) {
        const span *s = &spans[i];
        if (i > 0 && s->mem != spans[i - 1].mem)
            far_any = far_output = NULL;
        const span *hit = s->output ? far_any : far_output;
        if (hit && hit->end > s->start)
            status = overlap_found(ctx, op, names, hit, s);
        if (!far_any || s->end > far_any->end)
            far_any = s;
        if (s->output && (!far_output || s->end > far_output->end))
            far_output = s;
    }
    free(spans);
    return status;
}

pv_status pv_interop_device_batch(pv_context *ctx, const char *op, call_images *calls, int count,
                                  const char *const *names, host_batch_call run, const void *args,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    if (count < 1)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: an empty batch (count %d)", op, count);
    pv_status status = PV_OK;
    for (int k = 0; k < count && status == PV_OK; k++)
        status = check_call(ctx, op, &calls[k], names, wait_count, wait_list);
    if (status == PV_OK)
        status = check_batch_overlaps(ctx, op, calls, count, names);
    const runner r = {NULL, run, args};
    return status == PV_OK ? device_calls(ctx, calls, count, &r, wait_count, wait_list, done)
                           : status;
}

/* Every sample of an F32 image buffer set to `value` (a batch's outputs
 * reset after a failure during its work, as the host batches reset
 * theirs): one host row block written through the backend's write. */
pv_status pv_interop_fill(pv_context *ctx, const pv_buffer *b, float value)
{
    if (b->type != PV_PIXEL_F32 || depth_of(b) != 1)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffers: only an F32 image is filled");
    pv_image fill;
    pv_status status = pv_image_alloc(&fill, b->width, b->height, PV_PIXEL_F32);
    if (status != PV_OK)
        return status;
    float *data = fill.data;
    for (size_t i = 0; i < (size_t)fill.stride * (size_t)fill.height; i++)
        data[i] = value;
    pv_context_lock(ctx);
    status = ctx->ops->interop->write(ctx, &fill, b->mem, b->offset, b->stride);
    pv_context_unlock(ctx);
    pv_image_free(&fill);
    return status;
}

/* ------------------------------------------------------------ the context */

pv_status pv_context_cl_objects(pv_context *ctx, cl_context *context, cl_command_queue *queue)
{
    if (!ctx || !context || !queue)
        return pv_fail(ctx, PV_ERR_INVALID, "context_cl_objects: a NULL argument");
    if (!ctx->ops->interop->objects)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "context_cl_objects: a %s context has none",
                       pv_backend_name(ctx->backend));
    void *c = NULL, *q = NULL;
    pv_context_lock(ctx);
    pv_status status = ctx->ops->interop->objects(ctx, &c, &q);
    pv_context_unlock(ctx);
    if (status == PV_OK) {
        *context = (cl_context)c;
        *queue = (cl_command_queue)q;
    }
    return status;
}
