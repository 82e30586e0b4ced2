/* parvis inside a caller's OpenCL pipeline: the program owns the OpenCL
 * context, the queue and the buffers, runs a kernel of its own, then two
 * parvis operations on its buffers, and reads back only the final result.
 *
 *     usage: opencl_chain LEFT RIGHT OUT.pfm [NDISP]
 *
 * On the device, for each image of the pair: the program's kernel turns
 * the 8-bit pixels into floats with a gain and an offset (a stand-in for
 * whatever a pipeline does first), parvis blurs them (pv_gaussian_blur_cl);
 * then parvis matches the pair by semi-global matching (pv_stereo_sgm_cl).
 * Events chain the steps; nothing goes through host memory between them.
 * docs/interop.md explains each call. */
#include <parvis.h>
#include <parvis/interop.h>

#include <stdio.h>
#include <stdlib.h>

static const char *const gain_source =
    "kernel void gain(global const uchar *src, global float *dst, float gain, float offset,\n"
    "                 int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        dst[i] = gain * (float)src[i] + offset;\n"
    "}\n";

typedef struct pipeline {
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel gain;
} pipeline;

static int fail_cl(const char *what, cl_int err)
{
    fprintf(stderr, "opencl_chain: %s failed (OpenCL error %d)\n", what, (int)err);
    return 1;
}

static int fail_pv(const char *what, pv_status status)
{
    fprintf(stderr, "opencl_chain: %s: %s (%s)\n", what, pv_last_error(),
            pv_status_string(status));
    return 1;
}

/* The program's own OpenCL objects: the first GPU, else the first device. */
static int pipeline_open(pipeline *p)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_int err = clGetPlatformIDs(1, &platform, NULL);
    if (err != CL_SUCCESS)
        return fail_cl("clGetPlatformIDs", err);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL) != CL_SUCCESS &&
        (err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL)) != CL_SUCCESS)
        return fail_cl("clGetDeviceIDs", err);
    p->context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return fail_cl("clCreateContext", err);
    p->queue = clCreateCommandQueue(p->context, device, 0, &err);
    if (err != CL_SUCCESS)
        return fail_cl("clCreateCommandQueue", err);
    const char *source = gain_source;
    p->program = clCreateProgramWithSource(p->context, 1, &source, NULL, &err);
    if (err == CL_SUCCESS)
        err = clBuildProgram(p->program, 1, &device, NULL, NULL, NULL);
    if (err != CL_SUCCESS)
        return fail_cl("building the gain kernel", err);
    p->gain = clCreateKernel(p->program, "gain", &err);
    return err == CL_SUCCESS ? 0 : fail_cl("clCreateKernel", err);
}

static void pipeline_close(pipeline *p)
{
    clReleaseKernel(p->gain);
    clReleaseProgram(p->program);
    clReleaseCommandQueue(p->queue);
    clReleaseContext(p->context);
}

/* One image: uploaded, the gain kernel, the parvis blur; *blurred is the
 * result's buffer and *done the event that marks it ready. */
static int prepare(pipeline *p, pv_context *ctx, const pv_image *image, cl_mem *blurred,
                   cl_event *done)
{
    const size_t pixels = (size_t)image->width * (size_t)image->height;
    cl_int err, n = (cl_int)pixels;
    cl_mem raw = clCreateBuffer(p->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, pixels,
                                image->data, &err);
    if (err != CL_SUCCESS)
        return fail_cl("clCreateBuffer", err);
    cl_mem scaled = clCreateBuffer(p->context, CL_MEM_READ_WRITE, pixels * sizeof(float), NULL,
                                   &err);
    if (err == CL_SUCCESS)
        *blurred = clCreateBuffer(p->context, CL_MEM_READ_WRITE, pixels * sizeof(float), NULL,
                                  &err);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(raw);
        if (scaled)
            clReleaseMemObject(scaled);
        return fail_cl("clCreateBuffer", err);
    }
    const cl_float gain = 0.5f, offset = 16.0f;
    clSetKernelArg(p->gain, 0, sizeof raw, &raw);
    clSetKernelArg(p->gain, 1, sizeof scaled, &scaled);
    clSetKernelArg(p->gain, 2, sizeof gain, &gain);
    clSetKernelArg(p->gain, 3, sizeof offset, &offset);
    clSetKernelArg(p->gain, 4, sizeof n, &n);
    cl_event gained;
    err = clEnqueueNDRangeKernel(p->queue, p->gain, 1, NULL, &pixels, NULL, 0, NULL, &gained);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(raw);
        clReleaseMemObject(scaled);
        return fail_cl("the gain kernel", err);
    }
    /* parvis's blur waits for the kernel's event, on the device */
    pv_buffer src = pv_buffer_wrap(scaled, image->width, image->height, PV_PIXEL_F32);
    pv_buffer dst = pv_buffer_wrap(*blurred, image->width, image->height, PV_PIXEL_F32);
    pv_status status = pv_gaussian_blur_cl(ctx, &src, &dst, 1.0f, 0, 1, &gained, done);
    clReleaseEvent(gained);
    clReleaseMemObject(raw);    /* OpenCL keeps them alive until the commands are done */
    clReleaseMemObject(scaled);
    return status == PV_OK ? 0 : fail_pv("pv_gaussian_blur_cl", status);
}

/* SGM of the two blurred images into a host image. */
static int match(pipeline *p, pv_context *ctx, cl_mem blurred[2], cl_event ready[2],
                 int ndisp, pv_image *disparity)
{
    const int w = disparity->width, h = disparity->height;
    cl_int err;
    cl_mem out = clCreateBuffer(p->context, CL_MEM_WRITE_ONLY, (size_t)w * h * sizeof(float),
                                NULL, &err);
    if (err != CL_SUCCESS)
        return fail_cl("clCreateBuffer", err);
    pv_sgm_params params;
    pv_sgm_params_default(&params);
    params.ndisp = ndisp;
    pv_buffer left = pv_buffer_wrap(blurred[0], w, h, PV_PIXEL_F32);
    pv_buffer right = pv_buffer_wrap(blurred[1], w, h, PV_PIXEL_F32);
    pv_buffer result = pv_buffer_wrap(out, w, h, PV_PIXEL_F32);
    pv_status status = pv_stereo_sgm_cl(ctx, &left, &right, &params, &result, NULL, 2, ready, NULL);
    if (status != PV_OK) {
        clReleaseMemObject(out);
        return fail_pv("pv_stereo_sgm_cl", status);
    }
    /* the program's queue runs its read after parvis's work */
    err = clEnqueueReadBuffer(p->queue, out, CL_TRUE, 0, (size_t)w * h * sizeof(float),
                              disparity->data, 0, NULL, NULL);
    clReleaseMemObject(out);
    return err == CL_SUCCESS ? 0 : fail_cl("clEnqueueReadBuffer", err);
}

static int run(pipeline *p, const pv_image images[2], int ndisp, const char *out_path)
{
    pv_context *ctx;
    pv_status status = pv_context_create_cl(&ctx, p->context, p->queue);
    if (status != PV_OK)
        return fail_pv("pv_context_create_cl", status);
    cl_mem blurred[2] = {NULL, NULL};
    cl_event ready[2] = {NULL, NULL};
    pv_image disparity = {0};
    int rc = prepare(p, ctx, &images[0], &blurred[0], &ready[0]);
    if (rc == 0)
        rc = prepare(p, ctx, &images[1], &blurred[1], &ready[1]);
    if (rc == 0 && (status = pv_image_alloc(&disparity, images[0].width, images[0].height,
                                            PV_PIXEL_F32)) != PV_OK)
        rc = fail_pv("pv_image_alloc", status);
    if (rc == 0)
        rc = match(p, ctx, blurred, ready, ndisp, &disparity);
    if (rc == 0 && (status = pv_image_write_pfm(out_path, &disparity)) != PV_OK)
        rc = fail_pv("pv_image_write_pfm", status);
    if (rc == 0)
        printf("opencl_chain: %dx%d disparities on %s written to %s\n", disparity.width,
               disparity.height, pv_context_device_name(ctx), out_path);
    for (int i = 0; i < 2; i++) {
        if (ready[i])
            clReleaseEvent(ready[i]);
        if (blurred[i])
            clReleaseMemObject(blurred[i]);
    }
    pv_image_free(&disparity);
    pv_context_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: opencl_chain LEFT RIGHT OUT.pfm [NDISP]\n");
        return 2;
    }
    const int ndisp = argc == 5 ? atoi(argv[4]) : 16;
    pv_image images[2] = {{0}, {0}};
    for (int i = 0; i < 2; i++) {
        pv_status status = pv_image_read(argv[1 + i], PV_PIXEL_U8, &images[i]);
        if (status != PV_OK) {
            pv_image_free(&images[0]);
            return fail_pv(argv[1 + i], status);
        }
    }
    pipeline p;
    int rc = pipeline_open(&p);
    if (rc == 0) {
        rc = run(&p, images, ndisp, argv[3]);
        pipeline_close(&p);
    }
    pv_image_free(&images[0]);
    pv_image_free(&images[1]);
    return rc;
}
