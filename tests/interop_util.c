/* Shared scaffolding of the device-buffer (interop) suites (interop_util.h). */
#include "interop_util.h"
#include "../lib/core/internal.h" /* pv_pixel_size */

#include <stdlib.h>
#include <string.h>

/* The device of tu_opencl's queue (skips the test without OpenCL). */
static cl_device_id parvis_device(void)
{
    pv_context *cl = tu_opencl_or_skip();
    cl_context context;
    cl_command_queue queue;
    assert_int_equal(pv_context_cl_objects(cl, &context, &queue), PV_OK);
    cl_device_id device;
    assert_int_equal(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL),
                     CL_SUCCESS);
    return device;
}

iu_caller iu_caller_new(void)
{
    iu_caller c;
    cl_device_id device = parvis_device();
    cl_int err;
    c.context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    c.queue = clCreateCommandQueue(c.context, device, 0, &err); /* no profiling */
    assert_int_equal(err, CL_SUCCESS);
    tu_expect_ok(NULL, pv_context_create_cl(&c.ctx, c.context, c.queue), "pv_context_create_cl");
    return c;
}

void iu_caller_free(iu_caller *c)
{
    pv_context_destroy(c->ctx);
    clReleaseCommandQueue(c->queue);
    clReleaseContext(c->context);
}

cl_mem iu_put_bytes(const iu_caller *c, const void *host, size_t bytes)
{
    cl_int err;
    cl_mem mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                                (void *)host, &err);
    assert_int_equal(err, CL_SUCCESS);
    return mem;
}

pv_buffer iu_put_strided(const iu_caller *c, const void *data, ptrdiff_t src_row,
                         ptrdiff_t src_slice, int nx, int ny, int nz, pv_pixel_type type,
                         iu_layout layout)
{
    const size_t sample = pv_pixel_size(type);
    const ptrdiff_t stride = nx + layout.pad, slice = stride * (ny + layout.spare_rows);
    const size_t bytes = layout.offset + (size_t)slice * (size_t)nz * sample;
    unsigned char *host = calloc(1, bytes);
    assert_non_null(host);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            memcpy(host + layout.offset +
                       ((size_t)z * (size_t)slice + (size_t)y * (size_t)stride) * sample,
                   (const unsigned char *)data +
                       ((size_t)z * (size_t)src_slice + (size_t)y * (size_t)src_row) * sample,
                   (size_t)nx * sample);
    pv_buffer b = {iu_put_bytes(c, host, bytes), layout.offset, nx, ny, stride, type, nz,
                   nz > 1 ? slice : 0};
    free(host);
    return b;
}

pv_buffer iu_put_samples(const iu_caller *c, const void *data, int nx, int ny, int nz,
                         pv_pixel_type type, iu_layout layout)
{
    return iu_put_strided(c, data, nx, (ptrdiff_t)nx * ny, nx, ny, nz, type, layout);
}

pv_buffer iu_put_image(const iu_caller *c, const pv_image *image, iu_layout layout)
{
    return iu_put_strided(c, image->data, image->stride, 0, image->width, image->height, 1,
                          image->type, layout);
}

pv_buffer iu_put_volume(const iu_caller *c, const pv_volume *v, iu_layout layout)
{
    return iu_put_strided(c, v->data, v->stride_y, v->stride_z, v->nx, v->ny, v->nz,
                          v->type == PV_VOLUME_U16 ? PV_PIXEL_U16 : PV_PIXEL_F32, layout);
}

float *iu_get_f32(const iu_caller *c, const pv_buffer *b)
{
    const int nz = b->depth > 1 ? b->depth : 1;
    float *host = malloc((size_t)b->width * b->height * nz * sizeof(float));
    assert_non_null(host);
    const size_t origin[3] = {b->offset, 0, 0}, at[3] = {0, 0, 0};
    const size_t region[3] = {(size_t)b->width * sizeof(float), (size_t)b->height, (size_t)nz};
    const size_t slice = nz > 1 ? (size_t)b->slice_stride * sizeof(float) : 0;
    assert_int_equal(clEnqueueReadBufferRect(c->queue, b->mem, CL_TRUE, origin, at, region,
                                             (size_t)b->stride * sizeof(float), slice, region[0],
                                             region[0] * region[1], host, 0, NULL, NULL),
                     CL_SUCCESS);
    return host;
}

pv_image iu_get_image(const iu_caller *c, const pv_buffer *b)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, b->width, b->height, b->type), PV_OK);
    const size_t pixel = pv_pixel_size(b->type);
    const size_t origin[3] = {b->offset, 0, 0}, host[3] = {0, 0, 0};
    const size_t region[3] = {(size_t)b->width * pixel, (size_t)b->height, 1};
    assert_int_equal(clEnqueueReadBufferRect(c->queue, b->mem, CL_TRUE, origin, host, region,
                                             (size_t)b->stride * pixel, 0,
                                             (size_t)image.stride * pixel, 0, image.data, 0, NULL,
                                             NULL),
                     CL_SUCCESS);
    return image;
}

cl_event iu_failed_event(const iu_caller *c)
{
    cl_int err;
    cl_event failed = clCreateUserEvent(c->context, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(failed, -1), CL_SUCCESS);
    return failed;
}

void iu_wait_and_release(cl_event done)
{
    assert_non_null(done);
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
}

void iu_expect_status(pv_status status, pv_status expected, const char *what)
{
    if (status != expected)
        fail_msg("%s: status %d, expected %d (%s)", what, (int)status, (int)expected,
                 pv_last_error());
}
