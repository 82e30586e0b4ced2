/* SIFT from a device buffer for the bench (bench_sift_device.h). */
#include "bench_sift_device.h"
#include "bench.h"

#include <parvis/interop.h>

#include <stdlib.h>

struct sift_device_run {
    pv_sift_plan *plan;
    pv_buffer image;
    pv_sift_features features;
    int have_features;
};

static size_t pixel_bytes(pv_pixel_type type)
{
    switch (type) {
    case PV_PIXEL_U8: return 1;
    case PV_PIXEL_U16: return 2;
    case PV_PIXEL_RGB8: return 3;
    case PV_PIXEL_RGB16: return 6;
    default: return 4;
    }
}

int bench_sift_device_open(pv_context *ctx, pv_sift_plan *plan, const pv_image *image,
                           sift_device_run **out)
{
    cl_context context;
    cl_command_queue queue;
    if (pv_context_cl_objects(ctx, &context, &queue) != PV_OK)
        return cli_fail("device buffers: %s", pv_last_error());
    sift_device_run *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail("out of memory");
    const size_t row = (size_t)image->width * pixel_bytes(image->type);
    cl_int err;
    cl_mem mem = clCreateBuffer(context, CL_MEM_READ_ONLY, row * (size_t)image->height, NULL, &err);
    if (err == CL_SUCCESS) {
        const size_t origin[3] = {0, 0, 0}, region[3] = {row, (size_t)image->height, 1};
        err = clEnqueueWriteBufferRect(queue, mem, CL_TRUE, origin, origin, region, row, 0,
                                       (size_t)image->stride * pixel_bytes(image->type), 0,
                                       image->data, 0, NULL, NULL);
    }
    if (err != CL_SUCCESS) {
        if (mem)
            clReleaseMemObject(mem);
        free(r);
        return cli_fail("device buffers: OpenCL error %d", (int)err);
    }
    r->plan = plan;
    r->image = pv_buffer_wrap(mem, image->width, image->height, image->type);
    *out = r;
    return 0;
}

pv_status bench_sift_device_call(pv_context *ctx, void *user)
{
    (void)ctx;
    sift_device_run *r = user;
    if (r->have_features)
        pv_sift_features_free(&r->features);
    r->have_features = 0;
    pv_status status = pv_sift_detect_cl(r->plan, &r->image, &r->features, 0, NULL, NULL);
    r->have_features = status == PV_OK;
    return status;
}

int bench_sift_device_take(sift_device_run *r, pv_sift_features *out)
{
    if (!r->have_features)
        return 0;
    *out = r->features;
    r->have_features = 0;
    return 1;
}

void bench_sift_device_close(sift_device_run *r)
{
    if (!r)
        return;
    if (r->have_features)
        pv_sift_features_free(&r->features);
    if (r->image.mem)
        clReleaseMemObject(r->image.mem);
    free(r);
}
