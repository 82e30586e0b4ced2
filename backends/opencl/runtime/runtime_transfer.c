/* The OpenCL runtime's memory: device buffers (checked against the
 * device's allocation limit), scratch buffers kept between calls, and timed
 * transfers, large ones staged through pinned host memory. */
#include "runtime_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* -------------------------------------------------------------- buffers */

pv_status pv_cl_buffer(pv_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *buffer)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (bytes == 0)
        bytes = 1;
    if (ctx->device.max_alloc && bytes > ctx->device.max_alloc)
        return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                       "a %zu-byte buffer exceeds %s's CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu bytes)",
                       bytes, ctx->device.name, (unsigned long long)ctx->device.max_alloc);
    /* A CPU device's buffers are host memory, which `ulimit -v` or a data
     * limit may bound far below the global memory the driver reports;
     * PoCL aborts the process when it cannot have it. */
    if (ctx->device.type == PV_DEVICE_CPU) {
        uint64_t host = pv_host_memory_available();
        if ((uint64_t)bytes > host)
            return pv_fail(ctx, PV_ERR_DEVICE_MEMORY,
                           "a %zu-byte buffer on %s (a CPU device: host memory) exceeds the "
                           "%llu bytes the process may still allocate (RAM, RLIMIT_AS, "
                           "RLIMIT_DATA)", bytes, ctx->device.name, (unsigned long long)host);
    }
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ALLOC);
    *buffer = err == CL_SUCCESS ? clCreateBuffer(state->context, flags, bytes, NULL, &err) : NULL;
    return pv_cl_check(ctx, err, "clCreateBuffer");
}

pv_status pv_cl_buffers(pv_context *ctx, const pv_cl_buffer_spec *specs, size_t count)
{
    pv_status status = PV_OK;
    for (size_t i = 0; status == PV_OK && i < count; i++)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, specs[i].bytes, specs[i].buffer);
    return status;
}

void pv_cl_release(cl_mem *buffer)
{
    if (buffer && *buffer) {
        clReleaseMemObject(*buffer);
        *buffer = NULL;
    }
}

static scratch_slot *find_slot(pv_cl_state *state, const char *slot)
{
    for (size_t i = 0; i < state->scratch_count; i++)
        if (strcmp(state->scratch[i].slot, slot) == 0)
            return &state->scratch[i];
    return NULL;
}

static pv_status new_slot(pv_context *ctx, const char *slot, scratch_slot **out)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    scratch_slot *grown = realloc(state->scratch, (state->scratch_count + 1) * sizeof *grown);
    if (!grown)
        return pv_fail(ctx, PV_ERR_NOMEM, "scratch buffers: out of memory");
    state->scratch = grown;
    *out = &state->scratch[state->scratch_count++];
    (*out)->slot = slot;
    (*out)->buffer = NULL;
    (*out)->bytes = 0;
    return PV_OK;
}

pv_status pv_cl_scratch(pv_context *ctx, const char *slot, size_t bytes, cl_mem *buffer)
{
    scratch_slot *entry = find_slot(pv_cl_state_of(ctx), slot);
    pv_status status = entry ? PV_OK : new_slot(ctx, slot, &entry);
    if (status != PV_OK)
        return status;
    if (entry->bytes < bytes || !entry->buffer) {
        pv_cl_release(&entry->buffer);
        entry->bytes = 0;
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &entry->buffer);
        if (status != PV_OK)
            return status;
        entry->bytes = bytes;
    }
    *buffer = entry->buffer;
    return PV_OK;
}

void pv_cl_release_scratch(pv_cl_state *state)
{
    for (size_t i = 0; i < state->scratch_count; i++)
        clReleaseMemObject(state->scratch[i].buffer);
    free(state->scratch);
}

/* ------------------------------------------------------------ transfers */

#define PINNED_CHUNK ((size_t)4 << 20)

/* Transfers from this size up go through the pinned stages
 * (PARVIS_PINNED_MIN=<bytes> overrides; 0 turns staging off). */
static size_t pinned_threshold(void)
{
    char value[64];
    if (pv_config_get(PV_CONFIG_PINNED_MIN, value, sizeof value)) {
        char *end = NULL;
        unsigned long long bytes = strtoull(value, &end, 10);
        if (*end == '\0')
            return bytes == 0 ? SIZE_MAX : (size_t)bytes;
    }
    return (size_t)4 << 20;
}

static pv_status ensure_stage(pv_context *ctx, pinned_stage *stage)
{
    if (stage->host)
        return PV_OK;
    cl_int err = CL_SUCCESS;
    if (!stage->buffer) { /* kept when only the map failed before */
        err = pv_cl_fault(ctx, PV_CL_FAULT_ALLOC);
        if (err == CL_SUCCESS)
            stage->buffer = clCreateBuffer(pv_cl_context(ctx),
                                           CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                                           PINNED_CHUNK, NULL, &err);
    }
    pv_status status = pv_cl_check(ctx, err, "clCreateBuffer(pinned stage)");
    if (status != PV_OK)
        return status;
    err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        stage->host = clEnqueueMapBuffer(pv_cl_queue(ctx), stage->buffer, CL_TRUE,
                                     CL_MAP_READ | CL_MAP_WRITE, 0, PINNED_CHUNK, 0, NULL, NULL,
                                     &err);
    return pv_cl_check(ctx, err, "clEnqueueMapBuffer(pinned stage)");
}

/* Wait until the stage's previous transfer is done. */
static pv_status stage_idle(pv_context *ctx, pinned_stage *stage)
{
    if (!stage->busy)
        return PV_OK;
    cl_int err = clWaitForEvents(1, &stage->busy);
    clReleaseEvent(stage->busy);
    stage->busy = NULL;
    return pv_cl_check(ctx, err, "clWaitForEvents(pinned stage)");
}

/* Copies use a few threads, never the whole OpenMP team: a copy is
 * bandwidth-bound well before 8 threads, and a full team competing with the
 * driver's own threads for the cores can leave one thread waiting a
 * scheduler tick (about 4 ms) at the join.  Below 1 MiB a copy stays on the
 * calling thread: it takes tens of microseconds there, while waking even a
 * few threads was seen to cost up to 0.3 ms.  Pieces of 256 KiB. */
#define COPY_PIECE ((size_t)256 << 10)
#define PARALLEL_COPY_MIN ((size_t)1 << 20)
#define COPY_THREADS_MAX 8

int pv_cl_copy_threads(size_t bytes)
{
    return pv_cl_copy_threads_from(bytes, PARALLEL_COPY_MIN);
}

int pv_cl_copy_threads_from(size_t bytes, size_t parallel_min)
{
    if (bytes < parallel_min)
        return 1;
    size_t pieces = (bytes + COPY_PIECE - 1) / COPY_PIECE;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads() / 2;
#endif
    threads = threads < COPY_THREADS_MAX ? threads : COPY_THREADS_MAX;
    threads = (size_t)threads < pieces ? threads : (int)pieces;
    return threads > 1 ? threads : 1;
}

void pv_cl_copy_parallel(void *dst, const void *src, size_t bytes)
{
    const long pieces = (long)((bytes + COPY_PIECE - 1) / COPY_PIECE);
    const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (long i = 0; i < pieces; i++) {
        size_t start = (size_t)i * COPY_PIECE;
        size_t n = bytes - start < COPY_PIECE ? bytes - start : COPY_PIECE;
        memcpy((char *)dst + start, (const char *)src + start, n);
    }
}

/* Record the transfer's event for timing and as the stage's busy mark. */
static pv_status stage_submitted(pv_context *ctx, pinned_stage *stage, cl_event event,
                                 event_kind kind)
{
    clRetainEvent(event);
    stage->busy = event;
    return pv_cl_track_event(ctx, event, kind);
}

/* The next stage of the ring, once its previous transfer is done:
 * consecutive small uploads take different stages, so none waits. */
static pv_status next_write_stage(pv_context *ctx, pinned_stage **stage)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    *stage = &state->stages[state->next_stage++ % PINNED_STAGES];
    pv_status status = ensure_stage(ctx, *stage);
    return status == PV_OK ? stage_idle(ctx, *stage) : status;
}

static pv_status submit_write(pv_context *ctx, pinned_stage *stage, cl_mem buffer, size_t offset,
                              size_t bytes)
{
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueWriteBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, bytes,
                                      stage->host, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, "clEnqueueWriteBuffer(pinned)");
    return status == PV_OK ? stage_submitted(ctx, stage, event, EVENT_UPLOAD) : status;
}

/* `rows` rows of row_bytes, host_pitch bytes apart on the host, up through
 * the stages to the buffer's `offset`, densely: whole rows per chunk
 * (row_bytes <= PINNED_CHUNK), a contiguous chunk copied by several
 * threads. */
static pv_status staged_rows(pv_context *ctx, cl_mem buffer, size_t offset, size_t rows,
                             size_t row_bytes, size_t host_pitch, const void *host)
{
    const size_t rows_per_chunk = PINNED_CHUNK / row_bytes;
    pv_status status = PV_OK;
    for (size_t first = 0; first < rows && status == PV_OK; first += rows_per_chunk) {
        size_t n = rows - first < rows_per_chunk ? rows - first : rows_per_chunk;
        pinned_stage *stage;
        status = next_write_stage(ctx, &stage);
        if (status != PV_OK)
            break;
        const char *from = (const char *)host + first * host_pitch;
        if (host_pitch == row_bytes)
            pv_cl_copy_parallel(stage->host, from, n * row_bytes);
        else
            for (size_t r = 0; r < n; r++)
                memcpy((char *)stage->host + r * row_bytes, from + r * host_pitch, row_bytes);
        status = submit_write(ctx, stage, buffer, offset + first * row_bytes, n * row_bytes);
    }
    return status;
}

/* bytes in PINNED_CHUNK pieces (rows of one byte). */
static pv_status pinned_write(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                              const void *host)
{
    return staged_rows(ctx, buffer, offset, bytes, 1, 1, host);
}

static pv_status copy_rect(pv_context *ctx, cl_mem buffer, int to_device, size_t row_bytes,
                           size_t rows, size_t slices, size_t host_row_pitch,
                           size_t host_slice_pitch, void *host);

/* The transfers below that take a host pointer and a byte count (or
 * rows) also serve device-buffer calls: when the host pointer is a bound
 * proxy image (runtime_interop.c), the copy is made on the device between
 * parvis's buffer and the caller's.  Operations pass whole images to them,
 * so the bound range starts at the proxy's first byte. */
static pv_status bound_rows(pv_context *ctx, cl_mem buffer, int to_device, size_t offset,
                            size_t rows, size_t row_bytes, size_t caller_pitch,
                            const device_binding *bound)
{
    if (rows > 0 && (rows - 1) * caller_pitch + row_bytes > bound->bytes)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffer: a transfer of %zu rows of %zu bytes "
                       "exceeds the image's %zu bytes", rows, row_bytes, bound->bytes);
    const size_t at_caller[3] = {bound->offset, 0, 0}, at_dense[3] = {offset, 0, 0};
    const size_t region[3] = {row_bytes, rows, 1};
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && to_device)
        err = clEnqueueCopyBufferRect(pv_cl_queue(ctx), bound->mem, buffer, at_caller, at_dense,
                                      region, caller_pitch, 0, row_bytes, 0, 0, NULL, NULL);
    else if (err == CL_SUCCESS)
        err = clEnqueueCopyBufferRect(pv_cl_queue(ctx), buffer, bound->mem, at_dense, at_caller,
                                      region, row_bytes, 0, caller_pitch, 0, 0, NULL, NULL);
    return pv_cl_check(ctx, err, "clEnqueueCopyBufferRect(caller's buffer)");
}

static const device_binding *bound_to(pv_context *ctx, const void *host)
{
    return pv_cl_binding_of(pv_cl_state_of(ctx), host);
}

pv_status pv_cl_write_rows_staged(pv_context *ctx, cl_mem buffer, size_t rows, size_t row_bytes,
                                  size_t host_pitch, const void *host)
{
    const device_binding *bound = bound_to(ctx, host);
    if (bound)
        return bound_rows(ctx, buffer, 1, 0, rows, row_bytes, host_pitch, bound);
    if (host_pitch == row_bytes)
        return pinned_write(ctx, buffer, 0, rows * row_bytes, host);
    if (row_bytes > PINNED_CHUNK)
        return copy_rect(ctx, buffer, 1, row_bytes, rows, 1, host_pitch, 0, (void *)host);
    return staged_rows(ctx, buffer, 0, rows, row_bytes, host_pitch, host);
}

static pv_status enqueue_pinned_read(pv_context *ctx, pinned_stage *stage, cl_mem buffer,
                                     size_t offset, size_t n)
{
    pv_status status = ensure_stage(ctx, stage);
    if (status == PV_OK)
        status = stage_idle(ctx, stage);
    if (status != PV_OK)
        return status;
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pv_cl_queue(ctx), buffer, CL_FALSE, offset, n, stage->host,
                                     0, NULL, &event);
    status = pv_cl_check(ctx, err, "clEnqueueReadBuffer(pinned)");
    return status == PV_OK ? stage_submitted(ctx, stage, event, EVENT_DOWNLOAD) : status;
}

static size_t chunk_bytes(size_t bytes, size_t chunk)
{
    size_t start = chunk * PINNED_CHUNK;
    return bytes - start < PINNED_CHUNK ? bytes - start : PINNED_CHUNK;
}

/* Chunks i+1 .. i+3 are on their way while chunk i is handed to the sink. */
pv_status pv_cl_read_chunked(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                             pv_cl_chunk_sink sink, void *user)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    size_t chunks = (bytes + PINNED_CHUNK - 1) / PINNED_CHUNK;
    pv_status status = PV_OK;
    for (size_t i = 0; i < chunks && i < PINNED_STAGES && status == PV_OK; i++)
        status = enqueue_pinned_read(ctx, &state->stages[i], buffer, offset + i * PINNED_CHUNK,
                                     chunk_bytes(bytes, i));
    for (size_t i = 0; i < chunks && status == PV_OK; i++) {
        pinned_stage *stage = &state->stages[i % PINNED_STAGES];
        status = stage_idle(ctx, stage);
        if (status != PV_OK)
            break;
        sink(user, i * PINNED_CHUNK, stage->host, chunk_bytes(bytes, i));
        size_t next = i + PINNED_STAGES;
        if (next < chunks)
            status = enqueue_pinned_read(ctx, stage, buffer, offset + next * PINNED_CHUNK,
                                         chunk_bytes(bytes, next));
    }
    return status;
}

static void copy_sink(void *user, size_t offset, const void *chunk, size_t bytes)
{
    pv_cl_copy_parallel((char *)user + offset, chunk, bytes);
}

static pv_status pinned_read(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                             void *host)
{
    return pv_cl_read_chunked(ctx, buffer, offset, bytes, copy_sink, host);
}

/* One timed copy straight between host memory and a buffer (no staging);
 * blocking: it has finished on return. */
static pv_status direct_copy(pv_context *ctx, cl_mem buffer, int to_device, cl_bool blocking,
                             size_t offset, size_t bytes, void *host)
{
    static const char *const calls[2][2] = {
        {"clEnqueueReadBuffer(async)", "clEnqueueReadBuffer"},
        {"clEnqueueWriteBuffer(async)", "clEnqueueWriteBuffer"},
    };
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && to_device)
        err = clEnqueueWriteBuffer(pv_cl_queue(ctx), buffer, blocking, offset, bytes, host, 0,
                                   NULL, &event);
    else if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(pv_cl_queue(ctx), buffer, blocking, offset, bytes, host, 0,
                                  NULL, &event);
    pv_status status = pv_cl_check(ctx, err, calls[to_device != 0][blocking == CL_TRUE]);
    return status == PV_OK
               ? pv_cl_track_event(ctx, event, to_device ? EVENT_UPLOAD : EVENT_DOWNLOAD)
               : status;
}

pv_status pv_cl_write(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                      const void *host)
{
    const device_binding *bound = bound_to(ctx, host);
    if (bound)
        return bound_rows(ctx, buffer, 1, offset, 1, bytes, bytes, bound);
    if (bytes >= pinned_threshold())
        return pinned_write(ctx, buffer, offset, bytes, host);
    return direct_copy(ctx, buffer, 1, CL_TRUE, offset, bytes, (void *)host);
}

pv_status pv_cl_read(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes, void *host)
{
    const device_binding *bound = bound_to(ctx, host);
    if (bound)
        return bound_rows(ctx, buffer, 0, offset, 1, bytes, bytes, bound);
    if (bytes >= pinned_threshold())
        return pinned_read(ctx, buffer, offset, bytes, host);
    return direct_copy(ctx, buffer, 0, CL_TRUE, offset, bytes, host);
}

pv_status pv_cl_read_staged(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            void *host)
{
    if (pinned_threshold() == SIZE_MAX || bound_to(ctx, host))
        return pv_cl_read(ctx, buffer, offset, bytes, host);
    return pinned_read(ctx, buffer, offset, bytes, host);
}

pv_status pv_cl_write_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                            const void *host)
{
    return direct_copy(ctx, buffer, 1, CL_FALSE, offset, bytes, (void *)host);
}

pv_status pv_cl_read_async(pv_context *ctx, cl_mem buffer, size_t offset, size_t bytes,
                           void *host)
{
    return direct_copy(ctx, buffer, 0, CL_FALSE, offset, bytes, host);
}

/* A strided host block <-> a dense device block, in one rectangular copy. */
static pv_status copy_rect(pv_context *ctx, cl_mem buffer, int to_device, size_t row_bytes,
                           size_t rows, size_t slices, size_t host_row_pitch,
                           size_t host_slice_pitch, void *host)
{
    if (host_row_pitch == row_bytes && (slices == 1 || host_slice_pitch == row_bytes * rows))
        return to_device ? pv_cl_write(ctx, buffer, 0, row_bytes * rows * slices, host)
                         : pv_cl_read(ctx, buffer, 0, row_bytes * rows * slices, host);
    size_t origin[3] = {0, 0, 0};
    size_t region[3] = {row_bytes, rows, slices};
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && to_device)
        err = clEnqueueWriteBufferRect(pv_cl_queue(ctx), buffer, CL_TRUE, origin, origin, region,
                                       row_bytes, row_bytes * rows, host_row_pitch,
                                       host_slice_pitch, host, 0, NULL, &event);
    else if (err == CL_SUCCESS)
        err = clEnqueueReadBufferRect(pv_cl_queue(ctx), buffer, CL_TRUE, origin, origin, region,
                                      row_bytes, row_bytes * rows, host_row_pitch,
                                      host_slice_pitch, host, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, to_device ? "clEnqueueWriteBufferRect"
                                                       : "clEnqueueReadBufferRect");
    return status == PV_OK ? pv_cl_track_event(ctx, event, to_device ? EVENT_UPLOAD : EVENT_DOWNLOAD)
                           : status;
}

/* A rectangular copy without a wait, its event tracked as a transfer's:
 * host_in for a write, host_out for a read. */
static pv_status rows_async(pv_context *ctx, cl_mem buffer, const pv_cl_rows *rows,
                            const void *host_in, void *host_out)
{
    const size_t buffer_origin[3] = {rows->offset, 0, 0}, host_origin[3] = {0, 0, 0};
    const size_t region[3] = {rows->row_bytes, rows->rows, 1};
    cl_event event;
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && host_in)
        err = clEnqueueWriteBufferRect(pv_cl_queue(ctx), buffer, CL_FALSE, buffer_origin,
                                       host_origin, region, rows->device_pitch, 0,
                                       rows->host_pitch, 0, host_in, 0, NULL, &event);
    else if (err == CL_SUCCESS)
        err = clEnqueueReadBufferRect(pv_cl_queue(ctx), buffer, CL_FALSE, buffer_origin,
                                      host_origin, region, rows->device_pitch, 0,
                                      rows->host_pitch, 0, host_out, 0, NULL, &event);
    pv_status status = pv_cl_check(ctx, err, host_in ? "clEnqueueWriteBufferRect(async)"
                                                     : "clEnqueueReadBufferRect(async)");
    return status == PV_OK ? pv_cl_track_event(ctx, event, host_in ? EVENT_UPLOAD : EVENT_DOWNLOAD)
                           : status;
}

pv_status pv_cl_write_rows_async(pv_context *ctx, cl_mem buffer, const pv_cl_rows *rows,
                                 const void *host)
{
    /* A bound proxy image (a device-buffer call's input in a batch slot):
     * copied on the device into its dense rows at rows->offset. */
    const device_binding *bound = bound_to(ctx, host);
    if (bound && rows->device_pitch != rows->row_bytes)
        return pv_fail(ctx, PV_ERR_INVALID, "device buffer: rows %zu bytes apart on the device "
                       "(a bound image goes into dense rows)", rows->device_pitch);
    if (bound)
        return bound_rows(ctx, buffer, 1, rows->offset, rows->rows, rows->row_bytes,
                          rows->host_pitch, bound);
    return rows_async(ctx, buffer, rows, host, NULL);
}

pv_status pv_cl_read_rows_async(pv_context *ctx, cl_mem buffer, const pv_cl_rows *rows,
                                void *host)
{
    return rows_async(ctx, buffer, rows, NULL, host);
}

static pv_status image_rect(pv_context *ctx, cl_mem buffer, int to_device, const pv_image *image)
{
    const device_binding *bound = bound_to(ctx, image->data);
    size_t pixel = pv_pixel_size(image->type);
    size_t row_bytes = (size_t)image->width * pixel;
    size_t pitch = (size_t)image->stride * pixel;
    if (bound)
        return bound_rows(ctx, buffer, to_device, 0, (size_t)image->height, row_bytes, pitch,
                          bound);
    return copy_rect(ctx, buffer, to_device, row_bytes, (size_t)image->height, 1, pitch,
                     pitch * (size_t)image->height, image->data);
}

/* A volume between a dense buffer (from byte `dense_at` on) and the
 * caller's buffer bound to it, on the device, with the volume's own row
 * and slice pitches. */
static pv_status bound_volume(pv_context *ctx, cl_mem buffer, size_t dense_at, int to_device,
                              const pv_volume *volume, const device_binding *bound)
{
    const size_t sample = pv_volume_sample_size(volume->type);
    const size_t row = (size_t)volume->nx * sample, rows = (size_t)volume->ny;
    const size_t pitch = (size_t)volume->stride_y * sample;
    const size_t slice = (size_t)volume->stride_z * sample;
    const size_t at_caller[3] = {bound->offset, 0, 0}, at_dense[3] = {dense_at, 0, 0};
    const size_t region[3] = {row, rows, (size_t)volume->nz};
    cl_int err = pv_cl_fault(ctx, PV_CL_FAULT_ENQUEUE);
    if (err == CL_SUCCESS && to_device)
        err = clEnqueueCopyBufferRect(pv_cl_queue(ctx), bound->mem, buffer, at_caller, at_dense,
                                      region, pitch, slice, row, row * rows, 0, NULL, NULL);
    else if (err == CL_SUCCESS)
        err = clEnqueueCopyBufferRect(pv_cl_queue(ctx), buffer, bound->mem, at_dense, at_caller,
                                      region, row, row * rows, pitch, slice, 0, NULL, NULL);
    return pv_cl_check(ctx, err, "clEnqueueCopyBufferRect(caller's volume)");
}

static pv_status volume_rect(pv_context *ctx, cl_mem buffer, int to_device, const pv_volume *volume)
{
    const size_t sample = pv_volume_sample_size(volume->type);
    size_t row_bytes = (size_t)volume->nx * sample;
    const device_binding *bound = bound_to(ctx, volume->data);
    if (bound)
        return bound_volume(ctx, buffer, 0, to_device, volume, bound);
    return copy_rect(ctx, buffer, to_device, row_bytes, (size_t)volume->ny, (size_t)volume->nz,
                     (size_t)volume->stride_y * sample, (size_t)volume->stride_z * sample,
                     volume->data);
}

pv_status pv_cl_write_image(pv_context *ctx, cl_mem buffer, const pv_image *image)
{
    return image_rect(ctx, buffer, 1, image);
}

/* A new dense buffer holding image or volume (one of them is NULL); no
 * buffer is left on failure. */
static pv_status upload_new(pv_context *ctx, const pv_image *image, const pv_volume *volume,
                            cl_mem *buffer)
{
    size_t bytes = image ? (size_t)image->width * (size_t)image->height * pv_pixel_size(image->type)
                         : (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz *
                               pv_volume_sample_size(volume->type);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, buffer);
    if (status != PV_OK)
        return status;
    status = image ? image_rect(ctx, *buffer, 1, image) : volume_rect(ctx, *buffer, 1, volume);
    if (status != PV_OK)
        pv_cl_release(buffer);
    return status;
}

pv_status pv_cl_upload_image(pv_context *ctx, const pv_image *image, cl_mem *buffer)
{
    return upload_new(ctx, image, NULL, buffer);
}

pv_status pv_cl_download_image(pv_context *ctx, cl_mem buffer, pv_image *image)
{
    return image_rect(ctx, buffer, 0, image);
}

/* The volume's samples as stored (runtime_convert.c turns u16 into f32). */
pv_status pv_cl_write_volume_samples(pv_context *ctx, cl_mem buffer, const pv_volume *volume)
{
    return volume_rect(ctx, buffer, 1, volume);
}

pv_status pv_cl_write_bound_volume_at(pv_context *ctx, cl_mem buffer, size_t offset,
                                      const pv_volume *volume)
{
    const device_binding *bound = bound_to(ctx, volume->data);
    if (!bound)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_cl_write_bound_volume_at: the volume is not "
                       "bound to a device buffer");
    return bound_volume(ctx, buffer, offset, 1, volume, bound);
}

pv_status pv_cl_upload_volume_samples(pv_context *ctx, const pv_volume *volume, cl_mem *buffer)
{
    return upload_new(ctx, NULL, volume, buffer);
}

pv_status pv_cl_download_volume(pv_context *ctx, cl_mem buffer, pv_volume *volume)
{
    return volume_rect(ctx, buffer, 0, volume);
}

static void copy_volume(const pv_volume *from, pv_volume *to)
{
    size_t row = (size_t)from->nx * sizeof(float);
    const int threads = pv_cl_copy_threads(row * (size_t)from->ny * (size_t)from->nz);
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads) if (threads > 1)
    for (int z = 0; z < from->nz; z++)
        for (int y = 0; y < from->ny; y++)
            memcpy(to->data + (ptrdiff_t)y * to->stride_y + (ptrdiff_t)z * to->stride_z,
                   from->data + (ptrdiff_t)y * from->stride_y + (ptrdiff_t)z * from->stride_z,
                   row);
}

/* The host staging of pv_cl_download_volumes, kept in the context between
 * calls and grown on demand: fresh pages for each call cost their first
 * touch (page faults) on top of the copy, which for the three components
 * of a 250^3 flow field (125 MB staged) took longer than the kernels' last
 * warp.  The pages are touched once, here, by the copy threads. */
static pv_status download_stage(pv_context *ctx, size_t bytes, float **stage)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    if (bytes > state->download_stage_bytes) {
        float *grown = malloc(bytes);
        if (!grown)
            return pv_fail(ctx, PV_ERR_NOMEM, "no host memory to stage a %zu-byte download",
                           bytes);
        free(state->download_stage);
        state->download_stage = grown;
        state->download_stage_bytes = bytes;
        const long pages = (long)((bytes + 4095) / 4096);
        const int threads = pv_cl_copy_threads(bytes);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
        for (long i = 0; i < pages; i++)
            ((char *)grown)[(size_t)i * 4096] = 0;
    }
    *stage = state->download_stage;
    return PV_OK;
}

/* The last volume needs no temporary: when its download fails nothing of
 * the caller's has been written yet (a driver that fails a read half done
 * may leave that one volume partly written; an enqueue that fails, the
 * usual case, writes nothing).  The others go through the context's
 * download stage. */
pv_status pv_cl_download_volumes(pv_context *ctx, const cl_mem *buffers, pv_volume *const *volumes,
                                 int count)
{
    pv_volume staged[8];
    if (count < 1 || count > 8)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_cl_download_volumes: %d volumes", count);
    if (bound_to(ctx, volumes[0]->data)) { /* a device-buffer call: copies on the device */
        pv_status status = PV_OK;
        for (int i = 0; i < count && status == PV_OK; i++)
            status = pv_cl_download_volume(ctx, buffers[i], volumes[i]);
        return status;
    }
    size_t total = 0;
    for (int i = 0; i < count - 1; i++)
        total += (size_t)volumes[i]->nx * (size_t)volumes[i]->ny * (size_t)volumes[i]->nz;
    float *stage = NULL;
    pv_status status = total ? download_stage(ctx, total * sizeof(float), &stage) : PV_OK;
    size_t used = 0;
    for (int i = 0; i < count - 1 && status == PV_OK; i++) {
        const pv_volume *v = volumes[i];
        staged[i] = pv_volume_wrap(stage + used, v->nx, v->ny, v->nz);
        used += (size_t)v->nx * (size_t)v->ny * (size_t)v->nz;
        status = pv_cl_download_volume(ctx, buffers[i], &staged[i]);
    }
    if (status == PV_OK)
        status = pv_cl_download_volume(ctx, buffers[count - 1], volumes[count - 1]);
    for (int i = 0; i < count - 1 && status == PV_OK; i++)
        copy_volume(&staged[i], volumes[i]);
    return status;
}

void pv_cl_release_stages(pv_cl_state *state)
{
    free(state->download_stage);
    state->download_stage = NULL;
    state->download_stage_bytes = 0;
    for (int i = 0; i < PINNED_STAGES; i++) {
        pinned_stage *stage = &state->stages[i];
        if (stage->busy)
            clReleaseEvent(stage->busy);
        if (stage->host)
            clEnqueueUnmapMemObject(state->queue, stage->buffer, stage->host, 0, NULL, NULL);
        if (stage->buffer)
            clReleaseMemObject(stage->buffer);
        memset(stage, 0, sizeof *stage);
    }
    if (state->queue)
        clFinish(state->queue);
}
