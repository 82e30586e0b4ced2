/* Device-buffer calls on a caller's OpenCL objects (include/parvis/interop.h):
 * a context made on the caller's cl_context and queue, SGM, SAD and the
 * Gaussian blur from and to the caller's buffers (with offsets and row
 * pitches) giving exactly the host calls' results, events and the caller's
 * queue ordering the work, a chain of the caller's own kernel and two
 * parvis operations that never touches the host, the cross-check, and
 * misuse refused with the outputs untouched.  Skipped without an OpenCL
 * device. */
#include "interop_util.h"
#include "../lib/core/internal.h" /* pv_image_span */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7.0f
#define W 72
#define H 40
#define PAD 5           /* extra pixels a row in the caller's buffers */
#define OFFSET 256      /* bytes before pixel (0, 0) */

/* The caller's images: rows PAD pixels apart more than the width, OFFSET
 * bytes in. */
static const iu_layout IMAGE_LAYOUT = {PAD, 0, OFFSET};

static pv_buffer put_image(const iu_caller *c, const pv_image *image)
{
    return iu_put_image(c, image, IMAGE_LAYOUT);
}

/* A buffer of w x h f32 pixels filled with `value`. */
static pv_buffer new_f32(const iu_caller *c, int w, int h, float value)
{
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, w, h, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&image, value);
    pv_buffer b = put_image(c, &image);
    pv_image_free(&image);
    return b;
}

static void expect_same(const pv_image *a, const pv_image *b, const char *what)
{
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++) {
            float u = *tu_fpixel(a, x, y), v = *tu_fpixel(b, x, y);
            if (!(u == v || (isnan(u) && isnan(v))))
                fail_msg("%s: (%d, %d) %.7g against the host call's %.7g", what, x, y,
                         (double)u, (double)v);
        }
}

static void random_pair(pv_image *left, pv_image *right, pv_pixel_type type)
{
    assert_int_equal(pv_image_alloc(left, W, H, type), PV_OK);
    assert_int_equal(pv_image_alloc(right, W, H, type), PV_OK);
    tu_fill_random(left, 3u);
    /* the right image: the left one shifted by 4 pixels, so that there is
     * something to match */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            tu_set_pixel(right, x, y, pv_image_get(left, x + 4 < W ? x + 4 : x, y));
}

static pv_sgm_params sgm_params(void)
{
    pv_sgm_params p;
    pv_sgm_params_default(&p);
    p.ndisp = 16;
    p.subpixel = 0;
    return p;
}

/* ------------------------------------------------------------ known results */

static void test_sgm_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image left, right, want, want_conf;
    random_pair(&left, &right, PV_PIXEL_U8);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&want_conf, W, H, PV_PIXEL_F32), PV_OK);
    pv_sgm_params p = sgm_params();
    tu_expect_ok(tu_opencl, pv_stereo_sgm_confidence(tu_opencl, &left, &right, &p, &want,
                                                     &want_conf), "host sgm");
    pv_buffer l = put_image(&c, &left), r = put_image(&c, &right);
    pv_buffer d = new_f32(&c, W, H, SENTINEL), conf = new_f32(&c, W, H, SENTINEL);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_stereo_sgm_cl(c.ctx, &l, &r, &p, &d, &conf, 0, NULL, &done),
                 "pv_stereo_sgm_cl");
    iu_wait_and_release(done);
    pv_image got = iu_get_image(&c, &d), got_conf = iu_get_image(&c, &conf);
    expect_same(&got, &want, "sgm disparity");
    expect_same(&got_conf, &want_conf, "sgm confidence");
    /* no confidence, no event: pv_wait */
    pv_buffer d2 = new_f32(&c, W, H, SENTINEL);
    tu_expect_ok(c.ctx, pv_stereo_sgm_cl(c.ctx, &l, &r, &p, &d2, NULL, 0, NULL, NULL), "no conf");
    tu_expect_ok(c.ctx, pv_wait(c.ctx), "pv_wait");
    pv_image got2 = iu_get_image(&c, &d2);
    expect_same(&got2, &want, "sgm disparity, no confidence");
    image_list_free(&left, &right, &want, &want_conf, &got, &got_conf, &got2, NULL);
    clReleaseMemObject(l.mem), clReleaseMemObject(r.mem), clReleaseMemObject(d.mem);
    clReleaseMemObject(conf.mem), clReleaseMemObject(d2.mem);
    iu_caller_free(&c);
}

static void test_sad_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image left, right, want;
    random_pair(&left, &right, PV_PIXEL_F32);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 12;
    tu_expect_ok(tu_opencl, pv_stereo_sad(tu_opencl, &left, &right, &p, &want), "host sad");
    pv_buffer l = put_image(&c, &left), r = put_image(&c, &right), d = new_f32(&c, W, H, SENTINEL);
    /* the caller's queue orders the work: no events at all */
    tu_expect_ok(c.ctx, pv_stereo_sad_cl(c.ctx, &l, &r, &p, &d, 0, NULL, NULL), "pv_stereo_sad_cl");
    pv_image got = iu_get_image(&c, &d);
    expect_same(&got, &want, "sad disparity");
    image_list_free(&left, &right, &want, &got, NULL);
    clReleaseMemObject(l.mem), clReleaseMemObject(r.mem), clReleaseMemObject(d.mem);
    iu_caller_free(&c);
}

/* The caller's kernel: dst = 0.5 * src + 10 over a dense image. */
static const char *const scale_source =
    "kernel void scale(global const uchar *src, global float *dst, int n)\n"
    "{ int i = get_global_id(0); if (i < n) dst[i] = 0.5f * (float)src[i] + 10.0f; }\n";

static cl_kernel scale_kernel(const iu_caller *c, cl_program *program)
{
    cl_int err;
    const char *source = scale_source;
    *program = clCreateProgramWithSource(c->context, 1, &source, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clBuildProgram(*program, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
    cl_kernel k = clCreateKernel(*program, "scale", &err);
    assert_int_equal(err, CL_SUCCESS);
    return k;
}

/* The caller's kernel, then two parvis operations, chained by events on
 * the device; the host sees only the final disparities. */
/* A dense f32 buffer of w x h pixels (offset 0, stride w): the dense
 * download paths (pinned stages) of the host calls. */
static pv_buffer new_dense_f32(const iu_caller *c, int w, int h)
{
    cl_int err;
    cl_mem mem = clCreateBuffer(c->context, CL_MEM_READ_WRITE, (size_t)w * h * sizeof(float), NULL,
                                &err);
    assert_int_equal(err, CL_SUCCESS);
    return pv_buffer_wrap(mem, w, h, PV_PIXEL_F32);
}

static void test_bp_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image left, right, want;
    random_pair(&left, &right, PV_PIXEL_U8);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    pv_bp_params p;
    pv_bp_params_default(&p);
    tu_expect_ok(tu_opencl, pv_stereo_bp(tu_opencl, &left, &right, &p, &want), "host bp");
    pv_buffer l = put_image(&c, &left), r = put_image(&c, &right);
    pv_buffer strided = new_f32(&c, W, H, SENTINEL), dense = new_dense_f32(&c, W, H);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_stereo_bp_cl(c.ctx, &l, &r, &p, &strided, 0, NULL, &done), "bp_cl");
    tu_expect_ok(c.ctx, pv_stereo_bp_cl(c.ctx, &l, &r, &p, &dense, 1, &done, NULL), "bp_cl dense");
    tu_expect_ok(c.ctx, pv_wait(c.ctx), "pv_wait");
    clReleaseEvent(done);
    pv_image got = iu_get_image(&c, &strided), got_dense = iu_get_image(&c, &dense);
    expect_same(&got, &want, "bp disparity (row pitch)");
    expect_same(&got_dense, &want, "bp disparity (dense)");
    image_list_free(&left, &right, &want, &got, &got_dense, NULL);
    clReleaseMemObject(l.mem), clReleaseMemObject(r.mem), clReleaseMemObject(strided.mem);
    clReleaseMemObject(dense.mem);
    iu_caller_free(&c);
}

static void test_grey_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    const pv_pixel_type types[] = {PV_PIXEL_RGB8, PV_PIXEL_U16, PV_PIXEL_RGB16};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        pv_image in, want;
        assert_int_equal(pv_image_alloc(&in, W, H, types[t]), PV_OK);
        uint8_t *bytes = in.data;
        for (size_t i = 0; i < pv_image_span(&in); i++)
            bytes[i] = (uint8_t)(i * 37u + t);
        assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
        tu_expect_ok(tu_opencl, pv_to_grey(tu_opencl, &in, &want), "host to_grey");
        pv_buffer b = put_image(&c, &in), out = new_f32(&c, W, H, SENTINEL);
        tu_expect_ok(c.ctx, pv_to_grey_cl(c.ctx, &b, &out, 0, NULL, NULL), "to_grey_cl");
        pv_image got = iu_get_image(&c, &out);
        expect_same(&got, &want, "grey");
        image_list_free(&in, &want, &got, NULL);
        clReleaseMemObject(b.mem), clReleaseMemObject(out.mem);
    }
    iu_caller_free(&c);
}

/* ----------------------------------------------------------------- volumes */

#define VX 20
#define VY 18
#define VZ 16

/* The caller's volumes: rows PAD samples apart more than nx, one spare row
 * a slice, OFFSET bytes in. */
static const iu_layout VOLUME_LAYOUT = {PAD, 1, OFFSET};

static pv_buffer put_volume(const iu_caller *c, const pv_volume *v)
{
    return iu_put_volume(c, v, VOLUME_LAYOUT);
}

static pv_buffer new_f32_volume(const iu_caller *c)
{
    pv_volume v;
    assert_int_equal(pv_volume_alloc(&v, VX, VY, VZ), PV_OK);
    for (size_t i = 0; i < (size_t)VX * VY * VZ; i++)
        v.data[i] = SENTINEL;
    pv_buffer b = put_volume(c, &v);
    pv_volume_free(&v);
    return b;
}

static void expect_same_volume(const float *got, const pv_volume *want, const char *what)
{
    for (int z = 0; z < want->nz; z++)
        for (int y = 0; y < want->ny; y++)
            for (int x = 0; x < want->nx; x++) {
                const float g = got[((size_t)z * want->ny + y) * want->nx + x];
                const float w = want->data[z * want->stride_z + y * want->stride_y + x];
                if (!(g == w))
                    fail_msg("%s: (%d, %d, %d) %.7g against the host call's %.7g", what, x, y, z,
                             (double)g, (double)w);
            }
}

static void test_blur3d_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_volume src = tu_random_volume(VX, VY, VZ, 5u), want;
    assert_int_equal(pv_volume_alloc(&want, VX, VY, VZ), PV_OK);
    tu_expect_ok(tu_opencl, pv_gaussian_blur3d(tu_opencl, &src, &want, 1.2f, 0), "host blur3d");
    pv_buffer in = put_volume(&c, &src), out = new_f32_volume(&c);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_gaussian_blur3d_cl(c.ctx, &in, &out, 1.2f, 0, 0, NULL, &done),
                 "blur3d_cl");
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    float *got = iu_get_f32(&c, &out);
    expect_same_volume(got, &want, "blur3d");
    free(got);
    /* the same through the cross-check's host copies */
    pv_buffer out2 = new_f32_volume(&c);
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_gaussian_blur3d_cl(c.ctx, &in, &out2, 1.2f, 0, 0, NULL, NULL),
                 "blur3d_cl cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    got = iu_get_f32(&c, &out2);
    expect_same_volume(got, &want, "blur3d (cross-check)");
    free(got);
    clReleaseMemObject(in.mem), clReleaseMemObject(out.mem), clReleaseMemObject(out2.mem);
    pv_volume_free(&src);
    pv_volume_free(&want);
    iu_caller_free(&c);
}

static void test_flow3d_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_volume fixed, moving;
    assert_int_equal(pv_volume_alloc_u16(&fixed, VX, VY, VZ), PV_OK);
    assert_int_equal(pv_volume_alloc_u16(&moving, VX, VY, VZ), PV_OK);
    for (int z = 0; z < VZ; z++)
        for (int y = 0; y < VY; y++)
            for (int x = 0; x < VX; x++) {
                const double f = 3000.0 + 2000.0 * sin(0.4 * x) * cos(0.3 * y + 0.2 * z);
                const double m = 3000.0 + 2000.0 * sin(0.4 * (x - 0.5)) * cos(0.3 * y + 0.2 * z);
                fixed.data_u16[(z * VY + y) * VX + x] = (uint16_t)f;
                moving.data_u16[(z * VY + y) * VX + x] = (uint16_t)m;
            }
    pv_flow_params p;
    pv_flow_params_default(&p);
    p.warps = 2;
    p.iterations = 5;
    pv_flow_field want;
    assert_int_equal(pv_flow_field_alloc(&want, VX, VY, VZ), PV_OK);
    tu_expect_ok(tu_opencl, pv_flow3d(tu_opencl, &fixed, &moving, &p, &want), "host flow3d");
    pv_buffer f = put_volume(&c, &fixed), m = put_volume(&c, &moving);
    pv_buffer u = new_f32_volume(&c), v = new_f32_volume(&c), w = new_f32_volume(&c);
    tu_expect_ok(c.ctx, pv_flow3d_cl(c.ctx, &f, &m, &p, &u, &v, &w, 0, NULL, NULL), "flow3d_cl");
    tu_expect_ok(c.ctx, pv_wait(c.ctx), "pv_wait");
    const pv_buffer *outs[3] = {&u, &v, &w};
    const pv_volume *wants[3] = {&want.u, &want.v, &want.w};
    for (int k = 0; k < 3; k++) {
        float *got = iu_get_f32(&c, outs[k]);
        expect_same_volume(got, wants[k], "flow3d component");
        free(got);
    }
    /* misuse: a missing component, a u16 component, too few slices for the
     * stride, a volume given to an image operation */
    float *before = iu_get_f32(&c, &u);
    pv_buffer bad = w;
    assert_int_equal(pv_flow3d_cl(c.ctx, &f, &m, &p, &u, &v, NULL, 0, NULL, NULL), PV_ERR_INVALID);
    bad.type = PV_PIXEL_U16;
    assert_int_equal(pv_flow3d_cl(c.ctx, &f, &m, &p, &u, &v, &bad, 0, NULL, NULL), PV_ERR_INVALID);
    bad = w;
    bad.slice_stride = bad.stride * (bad.height - 1);
    assert_int_equal(pv_flow3d_cl(c.ctx, &f, &m, &p, &u, &v, &bad, 0, NULL, NULL), PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "not a valid buffer"));
    pv_buffer image_out = new_f32(&c, VX, VY, SENTINEL);
    assert_int_equal(pv_gaussian_blur_cl(c.ctx, &f, &image_out, 1.0f, 0, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "slices"));
    float *after = iu_get_f32(&c, &u);
    assert_memory_equal(before, after, (size_t)VX * VY * VZ * sizeof(float));
    free(before);
    free(after);
    clReleaseMemObject(image_out.mem);
    clReleaseMemObject(f.mem), clReleaseMemObject(m.mem);
    clReleaseMemObject(u.mem), clReleaseMemObject(v.mem), clReleaseMemObject(w.mem);
    pv_flow_field_free(&want);
    pv_volume_free(&fixed);
    pv_volume_free(&moving);
    iu_caller_free(&c);
}

static void test_chain_stays_on_device(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image left, right;
    random_pair(&left, &right, PV_PIXEL_U8);
    /* the host reference: the same three steps, through host memory */
    pv_image sl, sr, bl, br, want;
    pv_image *const f32[] = {&sl, &sr, &bl, &br, &want};
    for (int i = 0; i < 5; i++)
        assert_int_equal(pv_image_alloc(f32[i], W, H, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            tu_set_pixel(&sl, x, y, 0.5f * pv_image_get(&left, x, y) + 10.0f);
            tu_set_pixel(&sr, x, y, 0.5f * pv_image_get(&right, x, y) + 10.0f);
        }
    pv_sgm_params p = sgm_params();
    tu_expect_ok(tu_opencl, pv_gaussian_blur(tu_opencl, &sl, &bl, 1.0f, 0), "host blur l");
    tu_expect_ok(tu_opencl, pv_gaussian_blur(tu_opencl, &sr, &br, 1.0f, 0), "host blur r");
    tu_expect_ok(tu_opencl, pv_stereo_sgm(tu_opencl, &bl, &br, &p, &want), "host sgm");
    /* on the device: dense buffers for the caller's kernel */
    cl_int err;
    cl_mem raw[2], scaled[2], blurred[2];
    const pv_image *inputs[2] = {&left, &right};
    for (int i = 0; i < 2; i++) {
        raw[i] = clCreateBuffer(c.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, W * H,
                                inputs[i]->data, &err);
        assert_int_equal(err, CL_SUCCESS);
        scaled[i] = clCreateBuffer(c.context, CL_MEM_READ_WRITE, W * H * sizeof(float), NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
        blurred[i] = clCreateBuffer(c.context, CL_MEM_READ_WRITE, W * H * sizeof(float), NULL,
                                    &err);
        assert_int_equal(err, CL_SUCCESS);
    }
    cl_program program;
    cl_kernel k = scale_kernel(&c, &program);
    cl_event scaled_done[2], blurred_done[2], matched;
    const cl_int n = W * H;
    const size_t global = W * H;
    for (int i = 0; i < 2; i++) {
        clSetKernelArg(k, 0, sizeof raw[i], &raw[i]);
        clSetKernelArg(k, 1, sizeof scaled[i], &scaled[i]);
        clSetKernelArg(k, 2, sizeof n, &n);
        assert_int_equal(clEnqueueNDRangeKernel(c.queue, k, 1, NULL, &global, NULL, 0, NULL,
                                                &scaled_done[i]), CL_SUCCESS);
        pv_buffer src = pv_buffer_wrap(scaled[i], W, H, PV_PIXEL_F32);
        pv_buffer dst = pv_buffer_wrap(blurred[i], W, H, PV_PIXEL_F32);
        tu_expect_ok(c.ctx, pv_gaussian_blur_cl(c.ctx, &src, &dst, 1.0f, 0, 1, &scaled_done[i],
                                                &blurred_done[i]), "pv_gaussian_blur_cl");
    }
    pv_buffer l = pv_buffer_wrap(blurred[0], W, H, PV_PIXEL_F32);
    pv_buffer r = pv_buffer_wrap(blurred[1], W, H, PV_PIXEL_F32);
    pv_buffer d = new_f32(&c, W, H, SENTINEL);
    tu_expect_ok(c.ctx, pv_stereo_sgm_cl(c.ctx, &l, &r, &p, &d, NULL, 2, blurred_done, &matched),
                 "pv_stereo_sgm_cl after the blurs");
    assert_int_equal(clWaitForEvents(1, &matched), CL_SUCCESS);
    pv_image got = iu_get_image(&c, &d);
    expect_same(&got, &want, "chained disparity");
    for (int i = 0; i < 2; i++) {
        clReleaseEvent(scaled_done[i]);
        clReleaseEvent(blurred_done[i]);
        clReleaseMemObject(raw[i]), clReleaseMemObject(scaled[i]), clReleaseMemObject(blurred[i]);
    }
    clReleaseEvent(matched);
    clReleaseMemObject(d.mem);
    clReleaseKernel(k);
    clReleaseProgram(program);
    image_list_free(&left, &right, &sl, &sr, &bl, &br, &want, &got, NULL);
    iu_caller_free(&c);
}

/* With the cross-check on, the same result (through host copies). */
static void test_crosscheck(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    pv_image left, right, want;
    random_pair(&left, &right, PV_PIXEL_U8);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    pv_sgm_params p = sgm_params();
    tu_expect_ok(tu_opencl, pv_stereo_sgm(tu_opencl, &left, &right, &p, &want), "host sgm");
    pv_buffer l = put_image(&c, &left), r = put_image(&c, &right), d = new_f32(&c, W, H, SENTINEL);
    cl_event done;
    tu_expect_ok(c.ctx, pv_stereo_sgm_cl(c.ctx, &l, &r, &p, &d, NULL, 0, NULL, &done),
                 "cross-checked pv_stereo_sgm_cl");
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    pv_image got = iu_get_image(&c, &d);
    expect_same(&got, &want, "cross-checked disparity");
    image_list_free(&left, &right, &want, &got, NULL);
    clReleaseMemObject(l.mem), clReleaseMemObject(r.mem), clReleaseMemObject(d.mem);
    iu_caller_free(&c);
}

/* A parvis-made context's own objects serve a caller as well. */
static void test_parvis_objects(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    iu_caller c;
    assert_int_equal(pv_context_cl_objects(ctx, &c.context, &c.queue), PV_OK);
    c.ctx = ctx;
    pv_image src, want;
    assert_int_equal(pv_image_alloc(&src, W, H, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&src, 9u);
    tu_expect_ok(ctx, pv_gaussian_blur(ctx, &src, &want, 2.0f, 0), "host blur");
    pv_buffer s = put_image(&c, &src), d = new_f32(&c, W, H, SENTINEL);
    tu_expect_ok(ctx, pv_gaussian_blur_cl(ctx, &s, &d, 2.0f, 0, 0, NULL, NULL), "blur_cl");
    tu_expect_ok(ctx, pv_wait(ctx), "pv_wait");
    pv_image got = iu_get_image(&c, &d);
    expect_same(&got, &want, "blur on parvis's context");
    image_list_free(&src, &want, &got, NULL);
    clReleaseMemObject(s.mem), clReleaseMemObject(d.mem);
    pv_context_destroy(ctx);
}

/* ------------------------------------------------------------------ misuse */

static void expect_refused(iu_caller *c, const pv_buffer *l, const pv_buffer *r, const pv_buffer *d,
                           cl_uint count, const cl_event *events, pv_status expected,
                           const char *what)
{
    pv_sgm_params p = sgm_params();
    cl_event done = (cl_event)0x1;
    pv_status status = pv_stereo_sgm_cl(c->ctx, l, r, &p, d, NULL, count, events, &done);
    iu_expect_status(status, expected, what);
    assert_true(strlen(pv_last_error()) > 0);
    assert_true(done == (cl_event)0x1); /* no event handed out */
}

static void expect_untouched(const iu_caller *c, const pv_buffer *d)
{
    pv_image got = iu_get_image(c, d);
    assert_true(tu_image_all_equal(&got, SENTINEL));
    pv_image_free(&got);
}

static void test_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image left, right;
    random_pair(&left, &right, PV_PIXEL_U8);
    pv_buffer l = put_image(&c, &left), r = put_image(&c, &right), d = new_f32(&c, W, H, SENTINEL);
    pv_buffer foreign = put_image(&other, &left);
    expect_refused(&c, &foreign, &r, &d, 0, NULL, PV_ERR_INVALID, "another context's buffer");
    pv_buffer wrong_type = l;
    wrong_type.type = PV_PIXEL_F32; /* four times the bytes the buffer holds */
    pv_buffer wrong_type_r = r;
    wrong_type_r.type = PV_PIXEL_F32;
    expect_refused(&c, &wrong_type, &wrong_type_r, &d, 0, NULL, PV_ERR_INVALID, "wrong type");
    pv_buffer no_mem = l;
    no_mem.mem = NULL;
    expect_refused(&c, &no_mem, &r, &d, 0, NULL, PV_ERR_INVALID, "NULL mem");
    pv_buffer narrow = l;
    narrow.stride = W - 1;
    expect_refused(&c, &narrow, &r, &d, 0, NULL, PV_ERR_INVALID, "stride < width");
    expect_refused(&c, NULL, &r, &d, 0, NULL, PV_ERR_INVALID, "NULL left");
    expect_refused(&c, &l, &r, &d, 1, NULL, PV_ERR_INVALID, "a count with no wait list");
    pv_buffer over = l; /* the output on the left image's bytes */
    over.type = PV_PIXEL_F32;
    over.stride = (W + PAD) / 4;
    over.width = over.stride;
    expect_refused(&c, &l, &r, &over, 0, NULL, PV_ERR_INVALID, "output over an input");
    cl_event failed = iu_failed_event(&c);
    expect_refused(&c, &l, &r, &d, 1, &failed, PV_ERR_INVALID, "a failed event");
    clReleaseEvent(failed);
    pv_buffer small = d; /* an output of another size than the inputs */
    small.width = W - 8;
    expect_refused(&c, &l, &r, &small, 0, NULL, PV_ERR_INVALID, "output size");
    expect_untouched(&c, &d);
    /* device buffers on a CPU context */
    pv_sgm_params p = sgm_params();
    assert_int_equal(pv_stereo_sgm_cl(tu_cpu, &l, &r, &p, &d, NULL, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    cl_context cc;
    cl_command_queue cq;
    assert_int_equal(pv_context_cl_objects(tu_cpu, &cc, &cq), PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_wait(tu_cpu), PV_OK);
    /* contexts: NULL, and a queue of another context */
    pv_context *made = (pv_context *)0x1;
    assert_int_equal(pv_context_create_cl(&made, NULL, NULL), PV_ERR_INVALID);
    assert_null(made);
    assert_int_equal(pv_context_create_cl(&made, c.context, other.queue), PV_ERR_INVALID);
    assert_null(made);
    image_list_free(&left, &right, NULL);
    clReleaseMemObject(l.mem), clReleaseMemObject(r.mem), clReleaseMemObject(d.mem);
    clReleaseMemObject(foreign.mem);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgm_equals_host_call),
        cmocka_unit_test(test_sad_equals_host_call),
        cmocka_unit_test(test_bp_equals_host_call),
        cmocka_unit_test(test_grey_equals_host_call),
        cmocka_unit_test(test_blur3d_equals_host_call),
        cmocka_unit_test(test_flow3d_equals_host_call),
        cmocka_unit_test(test_chain_stays_on_device),
        cmocka_unit_test(test_crosscheck),
        cmocka_unit_test(test_parvis_objects),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests_name("interop", tests, tu_group_setup, tu_group_teardown);
}
