/* The later device-buffer forms (include/parvis/interop.h): the gradients
 * (2D and 3D), the flow's warp, SIFT tracking and batch detection and the
 * stereo batches from and to a caller's buffers (rows longer than the width, an offset) give
 * exactly the host calls' results,
 * in cross-check mode too, and misuse is refused with the outputs
 * untouched.  Skipped without an OpenCL device. */
#include "interop_util.h"
#include "image_list.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 7.0f
#define W 64
#define H 40
#define PAD 5      /* extra samples a row in the caller's buffers */
#define OFFSET 256 /* bytes before sample (0, 0) */
#define VX 20
#define VY 14
#define VZ 9

/* The caller's buffers: rows PAD samples longer than the width, one spare
 * row a slice, OFFSET bytes in; an image is one slice (depth 1). */
static const iu_layout LAYOUT = {PAD, 1, OFFSET};

static pv_buffer put_samples(const iu_caller *c, const void *data, int nx, int ny, int nz,
                             pv_pixel_type type)
{
    return iu_put_samples(c, data, nx, ny, nz, type, LAYOUT);
}

/* The image's pixels (the image may have a longer row). */
static pv_buffer put_image(const iu_caller *c, const pv_image *image)
{
    return iu_put_image(c, image, LAYOUT);
}

static pv_buffer put_volume(const iu_caller *c, const pv_volume *v)
{
    assert_int_equal(v->stride_y, v->nx); /* the tests' volumes are dense */
    return iu_put_volume(c, v, LAYOUT);
}

/* nx x ny x nz f32 samples, each SENTINEL. */
static pv_buffer new_f32(const iu_caller *c, int nx, int ny, int nz)
{
    const size_t n = (size_t)nx * ny * nz;
    float *data = malloc(n * sizeof(float));
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = SENTINEL;
    pv_buffer b = put_samples(c, data, nx, ny, nz, PV_PIXEL_F32);
    free(data);
    return b;
}

/* got (dense) equals want (dense, count samples) bit for bit. */
static void expect_same(const float *got, const float *want, size_t count, const char *what)
{
    for (size_t i = 0; i < count; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
            fail_msg("%s: sample %zu is %.9g, the host call's %.9g", what, i, (double)got[i],
                     (double)want[i]);
}

static void expect_buffer_is(const iu_caller *c, const pv_buffer *b, const float *want,
                             const char *what)
{
    const int nz = b->depth > 1 ? b->depth : 1;
    float *got = iu_get_f32(c, b);
    expect_same(got, want, (size_t)b->width * b->height * nz, what);
    free(got);
}

static void expect_untouched(const iu_caller *c, const pv_buffer *b)
{
    const int nz = b->depth > 1 ? b->depth : 1;
    float *got = iu_get_f32(c, b);
    for (size_t i = 0; i < (size_t)b->width * b->height * nz; i++)
        if (got[i] != SENTINEL)
            fail_msg("an output was written by a refused call (sample %zu is %g)", i,
                     (double)got[i]);
    free(got);
}

static void release_buffers(pv_buffer *first, ...);

/* ---------------------------------------------------------------- gradients */

/* pv_gradient_cl's outputs against pv_gradient's on the same pixels. */
static void check_gradient(iu_caller *c, pv_pixel_type type, pv_gradient_scheme scheme)
{
    pv_image src, want_x, want_y;
    assert_int_equal(pv_image_alloc(&src, W, H, type), PV_OK);
    tu_fill_random(&src, 5u);
    assert_int_equal(pv_image_alloc(&want_x, W, H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&want_y, W, H, PV_PIXEL_F32), PV_OK);
    tu_expect_ok(tu_opencl, pv_gradient(tu_opencl, &src, &want_x, &want_y, scheme), "host");
    pv_buffer s = put_image(c, &src), gx = new_f32(c, W, H, 1), gy = new_f32(c, W, H, 1);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_gradient_cl(c->ctx, &s, &gx, &gy, scheme, 0, NULL, &done),
                 "pv_gradient_cl");
    iu_wait_and_release(done);
    expect_buffer_is(c, &gx, want_x.data, "gradient gx");
    expect_buffer_is(c, &gy, want_y.data, "gradient gy");
    /* one output only: the other stays as it was */
    pv_buffer only = new_f32(c, W, H, 1);
    tu_expect_ok(c->ctx, pv_gradient_cl(c->ctx, &s, NULL, &only, scheme, 0, NULL, NULL),
                 "gy only");
    tu_expect_ok(c->ctx, pv_wait(c->ctx), "pv_wait");
    expect_buffer_is(c, &only, want_y.data, "gradient gy alone");
    image_list_free(&src, &want_x, &want_y, NULL);
    release_buffers(&s, &gx, &gy, &only, NULL);
}

static void test_gradient_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    check_gradient(&c, PV_PIXEL_U8, PV_GRADIENT_CENTRAL);
    check_gradient(&c, PV_PIXEL_F32, PV_GRADIENT_FORWARD);
    iu_caller_free(&c);
}

static pv_volume random_volume(uint32_t seed)
{
    return tu_random_volume(VX, VY, VZ, seed);
}

static void test_gradient3d_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_volume src = random_volume(11u), want[3];
    for (int a = 0; a < 3; a++)
        assert_int_equal(pv_volume_alloc(&want[a], VX, VY, VZ), PV_OK);
    tu_expect_ok(tu_opencl, pv_gradient3d(tu_opencl, &src, &want[0], &want[1], &want[2],
                                          PV_GRADIENT_CENTRAL), "host gradient3d");
    pv_buffer s = put_volume(&c, &src), g[3];
    for (int a = 0; a < 3; a++)
        g[a] = new_f32(&c, VX, VY, VZ);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_gradient3d_cl(c.ctx, &s, &g[0], &g[1], &g[2], PV_GRADIENT_CENTRAL, 0,
                                         NULL, &done), "pv_gradient3d_cl");
    iu_wait_and_release(done);
    static const char *const what[3] = {"gradient3d gx", "gradient3d gy", "gradient3d gz"};
    for (int a = 0; a < 3; a++)
        expect_buffer_is(&c, &g[a], want[a].data, what[a]);
    /* gz alone, after a user event the call waits for */
    cl_int err;
    cl_event gate = clCreateUserEvent(c.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    pv_buffer gz = new_f32(&c, VX, VY, VZ);
    tu_expect_ok(c.ctx, pv_gradient3d_cl(c.ctx, &s, NULL, NULL, &gz, PV_GRADIENT_CENTRAL, 1,
                                         &gate, &done), "gz after a user event");
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    iu_wait_and_release(done);
    clReleaseEvent(gate);
    expect_buffer_is(&c, &gz, want[2].data, "gradient3d gz alone");
    pv_volume_free(&src);
    for (int a = 0; a < 3; a++)
        pv_volume_free(&want[a]);
    release_buffers(&s, &g[0], &g[1], &g[2], &gz, NULL);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------------- warp */

/* A smooth flow of a few voxels, so that the warp samples between voxels
 * and across the borders (clamped). */
static pv_flow_field small_flow(void)
{
    pv_flow_field f;
    assert_int_equal(pv_flow_field_alloc(&f, VX, VY, VZ), PV_OK);
    for (int z = 0; z < VZ; z++)
        for (int y = 0; y < VY; y++)
            for (int x = 0; x < VX; x++) {
                const size_t i = ((size_t)z * VY + y) * VX + x;
                f.u.data[i] = 1.5f * sinf(0.3f * (float)y) + 0.25f;
                f.v.data[i] = -0.75f * cosf(0.2f * (float)x);
                f.w.data[i] = 0.4f * sinf(0.5f * (float)(x + z));
            }
    return f;
}

static void test_flow_warp_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_volume moving = random_volume(21u), want;
    pv_flow_field flow = small_flow();
    assert_int_equal(pv_volume_alloc(&want, VX, VY, VZ), PV_OK);
    tu_expect_ok(tu_opencl, pv_flow_warp(tu_opencl, &moving, &flow, &want), "host warp");
    pv_buffer m = put_volume(&c, &moving), u = put_volume(&c, &flow.u);
    pv_buffer v = put_volume(&c, &flow.v), w = put_volume(&c, &flow.w);
    pv_buffer out = new_f32(&c, VX, VY, VZ);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_flow_warp_cl(c.ctx, &m, &u, &v, &w, &out, 0, NULL, &done),
                 "pv_flow_warp_cl");
    iu_wait_and_release(done);
    expect_buffer_is(&c, &out, want.data, "warped");
    pv_volume_free(&moving);
    pv_volume_free(&want);
    pv_flow_field_free(&flow);
    release_buffers(&m, &u, &v, &w, &out, NULL);
    iu_caller_free(&c);
}

/* -------------------------------------------------------------- cross-check */

static void test_crosscheck(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    pv_image src, want;
    assert_int_equal(pv_image_alloc(&src, W, H, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&src, 31u);
    assert_int_equal(pv_image_alloc(&want, W, H, PV_PIXEL_F32), PV_OK);
    tu_expect_ok(tu_opencl, pv_gradient(tu_opencl, &src, &want, NULL, PV_GRADIENT_CENTRAL),
                 "host gradient");
    pv_buffer s = put_image(&c, &src), gx = new_f32(&c, W, H, 1);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_gradient_cl(c.ctx, &s, &gx, NULL, PV_GRADIENT_CENTRAL, 0, NULL, &done),
                 "cross-checked pv_gradient_cl");
    iu_wait_and_release(done);
    expect_buffer_is(&c, &gx, want.data, "cross-checked gx");
    pv_volume moving = random_volume(41u), warped;
    pv_flow_field flow = small_flow();
    assert_int_equal(pv_volume_alloc(&warped, VX, VY, VZ), PV_OK);
    tu_expect_ok(tu_opencl, pv_flow_warp(tu_opencl, &moving, &flow, &warped), "host warp");
    pv_buffer m = put_volume(&c, &moving), u = put_volume(&c, &flow.u);
    pv_buffer v = put_volume(&c, &flow.v), w = put_volume(&c, &flow.w);
    pv_buffer out = new_f32(&c, VX, VY, VZ);
    tu_expect_ok(c.ctx, pv_flow_warp_cl(c.ctx, &m, &u, &v, &w, &out, 0, NULL, &done),
                 "cross-checked pv_flow_warp_cl");
    iu_wait_and_release(done);
    expect_buffer_is(&c, &out, warped.data, "cross-checked warp");
    image_list_free(&src, &want, NULL);
    pv_volume_free(&moving);
    pv_volume_free(&warped);
    pv_flow_field_free(&flow);
    release_buffers(&s, &gx, &m, &u, &v, &w, &out, NULL);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------------ misuse */

/* status must be `expected`, with a message, no event handed out. */
static void expect_refused(pv_status status, pv_status expected, cl_event done, const char *what)
{
    iu_expect_status(status, expected, what);
    assert_true(strlen(pv_last_error()) > 0);
    assert_true(done == (cl_event)0x1);
}

static void test_filter_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image src;
    assert_int_equal(pv_image_alloc(&src, W, H, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&src, 3u);
    pv_buffer s = put_image(&c, &src), gx = new_f32(&c, W, H, 1), gy = new_f32(&c, W, H, 1);
    pv_buffer foreign = put_image(&other, &src);
    cl_event done = (cl_event)0x1;
    const pv_gradient_scheme k = PV_GRADIENT_CENTRAL;
    expect_refused(pv_gradient_cl(c.ctx, NULL, &gx, &gy, k, 0, NULL, &done), PV_ERR_INVALID,
                   done, "NULL src");
    expect_refused(pv_gradient_cl(c.ctx, &foreign, &gx, &gy, k, 0, NULL, &done), PV_ERR_INVALID,
                   done, "another context's buffer");
    /* with an event of its own context, as an array of another context
     * would bring: the buffer is refused before the wait list is queued */
    cl_int made;
    cl_event theirs = clCreateUserEvent(other.context, &made);
    assert_int_equal(made, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(theirs, CL_COMPLETE), CL_SUCCESS);
    expect_refused(pv_gradient_cl(c.ctx, &foreign, &gx, &gy, k, 1, &theirs, &done),
                   PV_ERR_INVALID, done, "another context's buffer and event");
    assert_non_null(strstr(pv_last_error(), "another cl_context"));
    clReleaseEvent(theirs);
    pv_buffer wide = s; /* F32 over a U8 buffer: four times its bytes */
    wide.type = PV_PIXEL_F32;
    expect_refused(pv_gradient_cl(c.ctx, &wide, &gx, &gy, k, 0, NULL, &done), PV_ERR_INVALID, done,
                   "wrong type");
    pv_buffer narrow = s;
    narrow.stride = W - 1;
    expect_refused(pv_gradient_cl(c.ctx, &narrow, &gx, &gy, k, 0, NULL, &done), PV_ERR_INVALID,
                   done, "stride < width");
    expect_refused(pv_gradient_cl(c.ctx, &s, NULL, NULL, k, 0, NULL, &done), PV_ERR_INVALID, done,
                   "no output");
    expect_refused(pv_gradient_cl(c.ctx, &s, &gx, &gx, k, 0, NULL, &done), PV_ERR_INVALID, done,
                   "gx is gy");
    cl_event failed = iu_failed_event(&c);
    expect_refused(pv_gradient_cl(c.ctx, &s, &gx, &gy, k, 1, &failed, &done), PV_ERR_INVALID,
                   done, "a failed event");
    expect_refused(pv_gradient_cl(tu_cpu, &s, &gx, &gy, k, 0, NULL, &done), PV_ERR_UNSUPPORTED,
                   done, "a CPU context");
    expect_untouched(&c, &gx);
    expect_untouched(&c, &gy);
    /* the 3D forms: an image where a volume is wanted, a U8 volume, a
     * failed event, a CPU context */
    pv_volume vol = random_volume(7u);
    pv_buffer v = put_volume(&c, &vol), g = new_f32(&c, VX, VY, VZ);
    pv_buffer u8_volume = v;
    u8_volume.type = PV_PIXEL_U8;
    expect_refused(pv_gradient3d_cl(c.ctx, &u8_volume, &g, NULL, NULL, k, 0, NULL, &done),
                   PV_ERR_INVALID, done, "a U8 volume");
    expect_refused(pv_gradient3d_cl(c.ctx, &v, &g, NULL, NULL, k, 1, &failed, &done),
                   PV_ERR_INVALID, done, "gradient3d after a failed event");
    expect_refused(pv_flow_warp_cl(c.ctx, &v, &v, &v, NULL, &g, 0, NULL, &done), PV_ERR_INVALID,
                   done, "NULL w");
    expect_refused(pv_flow_warp_cl(c.ctx, &v, &v, &v, &v, &gx, 0, NULL, &done), PV_ERR_INVALID,
                   done, "warped of another size");
    expect_refused(pv_flow_warp_cl(c.ctx, &v, &v, &v, &v, &v, 0, NULL, &done), PV_ERR_INVALID,
                   done, "warped over moving");
    expect_refused(pv_flow_warp_cl(c.ctx, &v, &v, &v, &v, &g, 1, &failed, &done),
                   PV_ERR_INVALID, done, "warp after a failed event");
    expect_refused(pv_flow_warp_cl(tu_cpu, &v, &v, &v, &v, &g, 0, NULL, &done),
                   PV_ERR_UNSUPPORTED, done, "warp on a CPU context");
    expect_untouched(&c, &g);
    clReleaseEvent(failed);
    pv_image_free(&src);
    pv_volume_free(&vol);
    release_buffers(&s, &gx, &gy, &foreign, &v, &g, NULL);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* -------------------------------------------------------------------- SIFT */

#define SW 96 /* SIFT frames */
#define SH 80

/* A frame of smooth texture: coarse random values (seed) interpolated
 * bilinearly over 4-pixel cells, seen from (dx, dy), so that frames of
 * one seed are shifted views of one scene. */
static pv_image scene_frame(uint32_t seed, int dx, int dy, pv_pixel_type type)
{
    enum { CELL = 4 };
    pv_image coarse, frame;
    assert_int_equal(pv_image_alloc(&coarse, SW / CELL + 8, SH / CELL + 8, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&coarse, seed);
    assert_int_equal(pv_image_alloc(&frame, SW, SH, type), PV_OK);
    for (int y = 0; y < SH; y++)
        for (int x = 0; x < SW; x++) {
            const int sx = x + dx, sy = y + dy, cx = sx / CELL, cy = sy / CELL;
            const float fx = (float)(sx % CELL) / CELL, fy = (float)(sy % CELL) / CELL;
            const float top = pv_image_get(&coarse, cx, cy) * (1 - fx) +
                              pv_image_get(&coarse, cx + 1, cy) * fx;
            const float bottom = pv_image_get(&coarse, cx, cy + 1) * (1 - fx) +
                                 pv_image_get(&coarse, cx + 1, cy + 1) * fx;
            tu_set_pixel(&frame, x, y, floorf(top * (1 - fy) + bottom * fy));
        }
    pv_image_free(&coarse);
    return frame;
}

static void expect_same_features(const pv_sift_features *got, const pv_sift_features *want,
                                 const char *what)
{
    if (got->count != want->count)
        fail_msg("%s: %d keypoints, the host call's %d", what, got->count, want->count);
    assert_true(want->count > 10); /* something was detected */
    const size_t n = (size_t)want->count;
    if (memcmp(got->keypoints, want->keypoints, n * sizeof *want->keypoints) != 0 ||
        memcmp(got->descriptors, want->descriptors, n * 128 * sizeof(float)) != 0 ||
        memcmp(got->descriptors_u8, want->descriptors_u8, n * 128) != 0)
        fail_msg("%s: keypoints or descriptors differ from the host call's", what);
}

static void expect_same_chain(const pv_sift_chain_result *got, const pv_sift_chain_result *want,
                              const char *what)
{
    if (got->has_model != want->has_model || got->keypoints1 != want->keypoints1 ||
        got->keypoints2 != want->keypoints2 || got->matches != want->matches ||
        got->inlier_count != want->inlier_count ||
        memcmp(&got->geometry, &want->geometry, sizeof want->geometry) != 0 ||
        (want->inlier_count > 0 && /* no list without inliers */
         memcmp(got->inliers, want->inliers, (size_t)want->inlier_count * sizeof *want->inliers)))
        fail_msg("%s: the result differs from the host call's (%d/%d keypoints, %d inliers "
                 "against %d/%d, %d)", what, got->keypoints1, got->keypoints2,
                 got->inlier_count, want->keypoints1, want->keypoints2, want->inlier_count);
}

/* Three frames of a track (moving by (3, 2) a frame): the host calls on
 * one plan, the device calls on another, result for result; then a device
 * frame after a host one on the host's plan (the kept frame is shared).
 * With crosscheck, the whole track runs with the cross-check on (which
 * takes the chain's composed path: the host calls' kept frame is then a
 * host one, so both calls must see the same setting). */
static void track_both(iu_caller *c, pv_pixel_type type, int crosscheck, const char *what)
{
    tu_expect_ok(c->ctx, pv_context_set_crosscheck(c->ctx, crosscheck), "crosscheck");
    pv_sift_plan *host = NULL, *device = NULL;
    tu_expect_ok(c->ctx, pv_sift_plan_create(c->ctx, SW, SH, NULL, &host), "host plan");
    tu_expect_ok(c->ctx, pv_sift_plan_create(c->ctx, SW, SH, NULL, &device), "device plan");
    for (int k = 0; k < 3; k++) {
        pv_image frame = scene_frame(17u, 3 * k, 2 * k, type);
        pv_buffer b = put_image(c, &frame);
        pv_sift_chain_result want = {0}, got = {0};
        tu_expect_ok(c->ctx, pv_sift_track_next(host, &frame, NULL, NULL, &want), "host track");
        cl_event done = NULL;
        tu_expect_ok(c->ctx, pv_sift_track_next_cl(device, &b, NULL, NULL, &got, 0, NULL, &done),
                     "pv_sift_track_next_cl");
        iu_wait_and_release(done);
        assert_int_equal(want.has_model, k > 0);
        if (k > 0) /* the known answer: the view moved by (3, 2), the scene by (-3, -2) */
            assert_true(fabs(want.geometry.model[2] + 3.0) < 0.25 &&
                        fabs(want.geometry.model[5] + 2.0) < 0.25);
        expect_same_chain(&got, &want, what);
        pv_sift_chain_result_free(&got);
        pv_sift_chain_result_free(&want);
        clReleaseMemObject(b.mem);
        pv_image_free(&frame);
    }
    /* the next frame from a buffer on the host calls' plan, and the
     * host call on the device calls' plan: the same result */
    pv_image frame = scene_frame(17u, 9, 6, type);
    pv_buffer b = put_image(c, &frame);
    pv_sift_chain_result want = {0}, got = {0};
    tu_expect_ok(c->ctx, pv_sift_track_next(device, &frame, NULL, NULL, &want), "host after cl");
    tu_expect_ok(c->ctx, pv_sift_track_next_cl(host, &b, NULL, NULL, &got, 0, NULL, NULL),
                 "cl after host");
    expect_same_chain(&got, &want, what);
    pv_sift_chain_result_free(&got);
    pv_sift_chain_result_free(&want);
    clReleaseMemObject(b.mem);
    pv_image_free(&frame);
    pv_sift_plan_destroy(host);
    pv_sift_plan_destroy(device);
    pv_context_set_crosscheck(c->ctx, 0);
}

static void test_sift_track_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    track_both(&c, PV_PIXEL_U8, 0, "u8 track");
    track_both(&c, PV_PIXEL_F32, 0, "f32 track");
    track_both(&c, PV_PIXEL_U8, 1, "cross-checked u8 track");
    iu_caller_free(&c);
}

#define BATCH 8 /* more than one group of the machinery's MAX_IMAGES */

/* BATCH frames (the last F32, the rest U8) detected by the host batch and
 * by the device batch, results[0] holding an earlier result to replace. */
static void test_sift_detect_batch_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_sift_plan *plan = NULL;
    tu_expect_ok(c.ctx, pv_sift_plan_create(c.ctx, SW, SH, NULL, &plan), "plan");
    pv_image frames[BATCH];
    pv_buffer buffers[BATCH];
    for (int i = 0; i < BATCH; i++) {
        frames[i] = scene_frame(50u + (uint32_t)i, i, 0,
                                i == BATCH - 1 ? PV_PIXEL_F32 : PV_PIXEL_U8);
        buffers[i] = put_image(&c, &frames[i]);
    }
    pv_sift_features want[BATCH] = {{0}}, got[BATCH] = {{0}};
    tu_expect_ok(c.ctx, pv_sift_detect_batch(plan, frames, BATCH, want), "host batch");
    tu_expect_ok(c.ctx, pv_sift_detect(plan, &frames[3], &got[0]), "an earlier result");
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_sift_detect_batch_cl(plan, buffers, BATCH, got, 0, NULL, &done),
                 "pv_sift_detect_batch_cl");
    iu_wait_and_release(done);
    char what[32];
    for (int i = 0; i < BATCH; i++) {
        snprintf(what, sizeof what, "batch image %d", i);
        expect_same_features(&got[i], &want[i], what);
    }
    /* the cross-check's host copies: the same features */
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_sift_detect_batch_cl(plan, buffers + 5, 2, got, 0, NULL, NULL),
                 "cross-checked batch");
    pv_context_set_crosscheck(c.ctx, 0);
    expect_same_features(&got[0], &want[5], "cross-checked batch image 0");
    expect_same_features(&got[1], &want[6], "cross-checked batch image 1");
    for (int i = 0; i < BATCH; i++) {
        pv_sift_features_free(&want[i]);
        pv_sift_features_free(&got[i]);
        pv_image_free(&frames[i]);
        clReleaseMemObject(buffers[i].mem);
    }
    pv_sift_plan_destroy(plan);
    iu_caller_free(&c);
}

static void test_sift_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_sift_plan *plan = NULL, *cpu_plan = NULL;
    tu_expect_ok(c.ctx, pv_sift_plan_create(c.ctx, SW, SH, NULL, &plan), "plan");
    tu_expect_ok(tu_cpu, pv_sift_plan_create(tu_cpu, SW, SH, NULL, &cpu_plan), "cpu plan");
    pv_image frame = scene_frame(5u, 0, 0, PV_PIXEL_U8);
    pv_buffer good = put_image(&c, &frame), foreign = put_image(&other, &frame);
    pv_buffer wide = good, narrow = good;
    wide.type = PV_PIXEL_F32;
    narrow.stride = SW - 1;
    cl_event failed = iu_failed_event(&c);
    /* the result's sentinel: a refused call leaves it as it was */
    pv_sift_chain_result result, before;
    memset(&result, 0x5a, sizeof result);
    before = result;
    cl_event done = (cl_event)0x1;
    const pv_buffer *bad[] = {NULL, &foreign, &wide, &narrow};
    static const char *const why[] = {"NULL frame", "another context's buffer", "wrong type",
                                      "stride < width"};
    for (int i = 0; i < 4; i++)
        expect_refused(pv_sift_track_next_cl(plan, bad[i], NULL, NULL, &result, 0, NULL, &done),
                       PV_ERR_INVALID, done, why[i]);
    expect_refused(pv_sift_track_next_cl(plan, &good, NULL, NULL, &result, 1, &failed, &done),
                   PV_ERR_INVALID, done, "a failed event");
    expect_refused(pv_sift_track_next_cl(plan, &good, NULL, NULL, NULL, 0, NULL, &done),
                   PV_ERR_INVALID, done, "NULL result");
    expect_refused(pv_sift_track_next_cl(cpu_plan, &good, NULL, NULL, &result, 0, NULL, &done),
                   PV_ERR_UNSUPPORTED, done, "a CPU context's plan");
    assert_memory_equal(&result, &before, sizeof result);
    /* the batch: the same, and an empty batch */
    pv_sift_features results[2], kept[2];
    memset(results, 0x5a, sizeof results);
    memcpy(kept, results, sizeof results);
    for (int i = 1; i < 4; i++) {
        const pv_buffer images[2] = {good, *bad[i]};
        expect_refused(pv_sift_detect_batch_cl(plan, images, 2, results, 0, NULL, &done),
                       PV_ERR_INVALID, done, why[i]);
    }
    const pv_buffer pair[2] = {good, good};
    expect_refused(pv_sift_detect_batch_cl(plan, pair, 2, results, 1, &failed, &done),
                   PV_ERR_INVALID, done, "batch after a failed event");
    expect_refused(pv_sift_detect_batch_cl(plan, pair, 0, results, 0, NULL, &done),
                   PV_ERR_INVALID, done, "an empty batch");
    expect_refused(pv_sift_detect_batch_cl(plan, NULL, 2, results, 0, NULL, &done),
                   PV_ERR_INVALID, done, "NULL images");
    expect_refused(pv_sift_detect_batch_cl(cpu_plan, pair, 2, results, 0, NULL, &done),
                   PV_ERR_UNSUPPORTED, done, "batch on a CPU context's plan");
    pv_buffer small = good; /* not the plan's size: refused by the host call, after begin */
    small.width = SW - 8;
    const pv_buffer sized[2] = {good, small};
    expect_refused(pv_sift_detect_batch_cl(plan, sized, 2, results, 0, NULL, &done),
                   PV_ERR_INVALID, done, "an image of another size");
    assert_memory_equal(results, kept, sizeof results);
    clReleaseEvent(failed);
    pv_image_free(&frame);
    clReleaseMemObject(good.mem);
    clReleaseMemObject(foreign.mem);
    pv_sift_plan_destroy(plan);
    pv_sift_plan_destroy(cpu_plan);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ----------------------------------------------------------- stereo batches */

#define PAIRS 3

/* A pair of random texture, the right image the left one moved by 4 - i
 * pixels, so that each pair of a batch has its own answer. */
static void shifted_pair(int i, pv_pixel_type type, pv_image *left, pv_image *right)
{
    assert_int_equal(pv_image_alloc(left, W, H, type), PV_OK);
    assert_int_equal(pv_image_alloc(right, W, H, type), PV_OK);
    tu_fill_random(left, 60u + (uint32_t)i);
    const int shift = 4 - i;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            tu_set_pixel(right, x, y, pv_image_get(left, x + shift < W ? x + shift : x, y));
}

typedef struct batch_data {
    pv_image lefts[PAIRS], rights[PAIRS], want[PAIRS], want_conf[PAIRS];
    pv_buffer l[PAIRS], r[PAIRS], d[PAIRS], conf[PAIRS];
} batch_data;

static void batch_new(iu_caller *c, batch_data *b, pv_pixel_type type)
{
    for (int i = 0; i < PAIRS; i++) {
        shifted_pair(i, type, &b->lefts[i], &b->rights[i]);
        assert_int_equal(pv_image_alloc(&b->want[i], W, H, PV_PIXEL_F32), PV_OK);
        assert_int_equal(pv_image_alloc(&b->want_conf[i], W, H, PV_PIXEL_F32), PV_OK);
        b->l[i] = put_image(c, &b->lefts[i]);
        b->r[i] = put_image(c, &b->rights[i]);
        b->d[i] = new_f32(c, W, H, 1);
        b->conf[i] = new_f32(c, W, H, 1);
    }
}

static void batch_free(batch_data *b)
{
    for (int i = 0; i < PAIRS; i++) {
        image_list_free(&b->lefts[i], &b->rights[i], &b->want[i], &b->want_conf[i], NULL);
        release_buffers(&b->l[i], &b->r[i], &b->d[i], &b->conf[i], NULL);
    }
}

/* The images of a dense host copy, pv_image_alloc's (its stride may be
 * longer than the width). */
static void expect_image_is(const iu_caller *c, const pv_buffer *b, const pv_image *want,
                            const char *what)
{
    float *got = iu_get_f32(c, b);
    for (int y = 0; y < want->height; y++)
        expect_same(got + (size_t)y * want->width, (const float *)want->data +
                    (size_t)y * (size_t)want->stride, (size_t)want->width, what);
    free(got);
}

static pv_sad_params sad_params(void)
{
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = 12;
    return p;
}

static pv_sgm_params sgm_params(void)
{
    pv_sgm_params p;
    pv_sgm_params_default(&p);
    p.ndisp = 16;
    return p;
}

static void test_sad_batch_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    batch_data b;
    batch_new(&c, &b, PV_PIXEL_F32);
    const pv_sad_params p = sad_params();
    tu_expect_ok(tu_opencl, pv_stereo_sad_batch(tu_opencl, b.lefts, b.rights, PAIRS, &p, b.want),
                 "host sad batch");
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_stereo_sad_batch_cl(c.ctx, b.l, b.r, PAIRS, &p, b.d, 0, NULL, &done),
                 "pv_stereo_sad_batch_cl");
    iu_wait_and_release(done);
    for (int i = 0; i < PAIRS; i++)
        expect_image_is(&c, &b.d[i], &b.want[i], "sad batch disparity");
    /* the cross-check's host copies, into the confidence buffers */
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_stereo_sad_batch_cl(c.ctx, b.l, b.r, PAIRS, &p, b.conf, 0, NULL,
                                               &done), "cross-checked sad batch");
    pv_context_set_crosscheck(c.ctx, 0);
    iu_wait_and_release(done);
    for (int i = 0; i < PAIRS; i++)
        expect_image_is(&c, &b.conf[i], &b.want[i], "cross-checked sad batch disparity");
    batch_free(&b);
    iu_caller_free(&c);
}

static void test_sgm_batch_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    batch_data b;
    batch_new(&c, &b, PV_PIXEL_U8);
    const pv_sgm_params p = sgm_params();
    tu_expect_ok(tu_opencl, pv_stereo_sgm_batch(tu_opencl, b.lefts, b.rights, PAIRS, &p, b.want,
                                                b.want_conf), "host sgm batch");
    /* after a user event: the work waits for it */
    cl_int err;
    cl_event gate = clCreateUserEvent(c.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_stereo_sgm_batch_cl(c.ctx, b.l, b.r, PAIRS, &p, b.d, b.conf, 1, &gate,
                                               &done), "pv_stereo_sgm_batch_cl");
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    iu_wait_and_release(done);
    clReleaseEvent(gate);
    for (int i = 0; i < PAIRS; i++) {
        expect_image_is(&c, &b.d[i], &b.want[i], "sgm batch disparity");
        expect_image_is(&c, &b.conf[i], &b.want_conf[i], "sgm batch confidence");
    }
    /* no confidences, no event: pv_wait */
    pv_buffer d2[PAIRS];
    for (int i = 0; i < PAIRS; i++)
        d2[i] = new_f32(&c, W, H, 1);
    tu_expect_ok(c.ctx, pv_stereo_sgm_batch_cl(c.ctx, b.l, b.r, PAIRS, &p, d2, NULL, 0, NULL,
                                               NULL), "no confidences");
    tu_expect_ok(c.ctx, pv_wait(c.ctx), "pv_wait");
    for (int i = 0; i < PAIRS; i++) {
        expect_image_is(&c, &d2[i], &b.want[i], "sgm batch disparity, no confidence");
        clReleaseMemObject(d2[i].mem);
    }
    batch_free(&b);
    iu_caller_free(&c);
}

static void expect_all(const iu_caller *c, const pv_buffer *b, float value, const char *what)
{
    float *got = iu_get_f32(c, b);
    for (size_t i = 0; i < (size_t)b->width * (size_t)b->height; i++)
        if (got[i] != value)
            fail_msg("%s: sample %zu is %g, not %g", what, i, (double)got[i], (double)value);
    free(got);
}

static void test_stereo_batch_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    batch_data b;
    batch_new(&c, &b, PV_PIXEL_U8);
    for (int i = 0; i < PAIRS; i++) { /* SENTINEL outputs, to see them untouched */
        clReleaseMemObject(b.d[i].mem);
        clReleaseMemObject(b.conf[i].mem);
        b.d[i] = new_f32(&c, W, H, 1);
        b.conf[i] = new_f32(&c, W, H, 1);
    }
    const pv_sgm_params p = sgm_params();
    const pv_sad_params sp = sad_params();
    cl_event done = (cl_event)0x1;
    pv_buffer l[PAIRS], r[PAIRS], d[PAIRS];
#define RESET() (memcpy(l, b.l, sizeof l), memcpy(r, b.r, sizeof r), memcpy(d, b.d, sizeof d))
#define SGM(count, waits, list) \
    pv_stereo_sgm_batch_cl(c.ctx, l, r, count, &p, d, b.conf, waits, list, &done)
    RESET();
    expect_refused(pv_stereo_sgm_batch_cl(c.ctx, NULL, r, PAIRS, &p, d, NULL, 0, NULL, &done),
                   PV_ERR_INVALID, done, "NULL lefts");
    expect_refused(SGM(0, 0, NULL), PV_ERR_INVALID, done, "an empty batch");
    expect_refused(pv_stereo_sgm_batch_cl(c.ctx, l, r, PAIRS, NULL, d, NULL, 0, NULL, &done),
                   PV_ERR_INVALID, done, "NULL params");
    pv_buffer foreign = put_image(&other, &b.lefts[1]);
    l[1] = foreign;
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "another context's buffer");
    RESET();
    l[2].type = r[2].type = PV_PIXEL_F32;
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "a pair of another type");
    RESET();
    for (int i = 0; i < PAIRS; i++)
        l[i].type = r[i].type = PV_PIXEL_F32; /* four times the bytes the buffers hold */
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "wrong type");
    RESET();
    l[1].stride = r[1].stride = W - 1;
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "stride < width");
    RESET();
    l[2].width = r[2].width = W - 8;
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "a pair of another size");
    RESET();
    d[2] = d[0];
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "two pairs' disparities shared");
    RESET();
    d[1] = b.l[0]; /* an output over another pair's input */
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "an output over an input");
    RESET();
    cl_event failed = iu_failed_event(&c);
    expect_refused(SGM(PAIRS, 1, &failed), PV_ERR_INVALID, done, "a failed event");
    expect_refused(pv_stereo_sad_batch_cl(c.ctx, l, r, PAIRS, &sp, d, 1, &failed, &done),
                   PV_ERR_INVALID, done, "sad batch after a failed event");
    expect_refused(pv_stereo_sgm_batch_cl(tu_cpu, l, r, PAIRS, &p, d, NULL, 0, NULL, &done),
                   PV_ERR_UNSUPPORTED, done, "a CPU context");
    expect_refused(pv_stereo_sad_batch_cl(tu_cpu, l, r, PAIRS, &sp, d, 0, NULL, &done),
                   PV_ERR_UNSUPPORTED, done, "sad batch on a CPU context");
    for (int i = 0; i < PAIRS; i++) {
        expect_untouched(&c, &b.d[i]);
        expect_untouched(&c, &b.conf[i]);
    }
    /* a failure during the work (pair 1's disparity of another size, which
     * only its host call refuses): every output reset, as the host batch
     * resets its outputs */
    d[1].width = W - 8;
    expect_refused(SGM(PAIRS, 0, NULL), PV_ERR_INVALID, done, "a failure during the work");
    assert_non_null(strstr(pv_last_error(), "disparity"));
    for (int i = 0; i < PAIRS; i++) {
        expect_all(&c, &d[i], INFINITY, "a reset disparity"); /* d[1]: its W - 8 columns */
        expect_all(&c, &b.conf[i], 0.0f, "a reset confidence");
    }
#undef SGM
#undef RESET
    clReleaseEvent(failed);
    clReleaseMemObject(foreign.mem);
    batch_free(&b);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

static void release_buffers(pv_buffer *first, ...)
{
    va_list list;
    va_start(list, first);
    for (pv_buffer *b = first; b; b = va_arg(list, pv_buffer *))
        clReleaseMemObject(b->mem);
    va_end(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradient_equals_host_call),
        cmocka_unit_test(test_gradient3d_equals_host_call),
        cmocka_unit_test(test_flow_warp_equals_host_call),
        cmocka_unit_test(test_crosscheck),
        cmocka_unit_test(test_filter_misuse),
        cmocka_unit_test(test_sift_track_equals_host_call),
        cmocka_unit_test(test_sift_detect_batch_equals_host_call),
        cmocka_unit_test(test_sift_misuse),
        cmocka_unit_test(test_sad_batch_equals_host_call),
        cmocka_unit_test(test_sgm_batch_equals_host_call),
        cmocka_unit_test(test_stereo_batch_misuse),
    };
    return cmocka_run_group_tests_name("interop_more", tests, tu_group_setup, tu_group_teardown);
}
