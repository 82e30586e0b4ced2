/* SGM from and to device buffers for the bench (bench_sgm_device.h). */
#include "bench_sgm_device.h"
#include "bench.h"

#include <parvis/interop.h>

#include <stdlib.h>

struct sgm_device_run {
    cl_context context;
    cl_command_queue queue;
    pv_buffer left, right, disparity;
    pv_sgm_params params;
};

static int buffer_of(sgm_device_run *r, const pv_image *image, pv_buffer *b)
{
    const size_t bytes = (size_t)image->width * (size_t)image->height *
                         (image->type == PV_PIXEL_U8 ? 1 : image->type == PV_PIXEL_U16 ? 2 : 4);
    cl_int err;
    cl_mem mem = clCreateBuffer(r->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS && image->data)
        err = clEnqueueWriteBuffer(r->queue, mem, CL_TRUE, 0, bytes, image->data, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        if (mem)
            clReleaseMemObject(mem);
        return cli_fail("device buffers: OpenCL error %d", (int)err);
    }
    *b = pv_buffer_wrap(mem, image->width, image->height, image->type);
    return 0;
}

int bench_sgm_device_open(pv_context *ctx, const pv_image *left, const pv_image *right,
                          const pv_sgm_params *params, sgm_device_run **out)
{
    sgm_device_run *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail("out of memory");
    r->params = *params;
    const pv_image disparity = {left->width, left->height, left->width, PV_PIXEL_F32, NULL};
    int rc = pv_context_cl_objects(ctx, &r->context, &r->queue) == PV_OK
                 ? 0 : cli_fail("device buffers: %s", pv_last_error());
    if (rc == 0)
        rc = buffer_of(r, left, &r->left);
    if (rc == 0)
        rc = buffer_of(r, right, &r->right);
    if (rc == 0)
        rc = buffer_of(r, &disparity, &r->disparity);
    if (rc != 0) {
        bench_sgm_device_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

pv_status bench_sgm_device_call(pv_context *ctx, void *user)
{
    sgm_device_run *r = user;
    pv_status status = pv_stereo_sgm_cl(ctx, &r->left, &r->right, &r->params, &r->disparity, NULL,
                                        0, NULL, NULL);
    return status == PV_OK ? pv_wait(ctx) : status;
}

int bench_sgm_device_read(sgm_device_run *r, pv_image *out)
{
    const size_t row = (size_t)out->width * sizeof(float);
    const size_t origin[3] = {0, 0, 0}, region[3] = {row, (size_t)out->height, 1};
    cl_int err = clEnqueueReadBufferRect(r->queue, r->disparity.mem, CL_TRUE, origin, origin,
                                         region, row, 0, (size_t)out->stride * sizeof(float), 0,
                                         out->data, 0, NULL, NULL);
    return err == CL_SUCCESS ? 0 : cli_fail("device buffers: read, OpenCL error %d", (int)err);
}

void bench_sgm_device_close(sgm_device_run *r)
{
    if (!r)
        return;
    pv_buffer *buffers[3] = {&r->left, &r->right, &r->disparity};
    for (int i = 0; i < 3; i++)
        if (buffers[i]->mem)
            clReleaseMemObject(buffers[i]->mem);
    free(r);
}
