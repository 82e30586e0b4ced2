/* Device-buffer forms of SIFT and of the AO-OCT registration
 * (include/parvis/interop.h): pv_sift_detect_cl, pv_sift_match_images_cl,
 * pv_octreg_plan_create_cl, pv_octreg_register_cl and
 * pv_octreg_reconstruct_cl on a caller's buffers (row pitches larger than
 * the width, an offset) give exactly the host calls' results on the same
 * pixels, U8 and F32 images, F32 and U16 volumes; the cross-check mode
 * gives the same results; misuse is refused with the outputs untouched.
 * Skipped without an OpenCL device. */
#include "interop_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 96          /* SIFT frames */
#define H 80
#define SHIFT_X 5     /* the second frame: the first moved by (5, 3) */
#define SHIFT_Y 3
#define ND 64         /* OCT volumes: depth, A-lines, B-scans (as test_octreg.c) */
#define NA 48
#define NB 40
#define PAD 5         /* extra elements a row in the caller's buffers */
#define OFFSET 256    /* bytes before the first element */
#define U16_SCALE 20000.0f /* synthesized f32 samples to u16 counts */

/* The caller's images: rows PAD pixels apart more than the width, OFFSET
 * bytes in; its volumes: rows PAD samples apart more than nx, one spare row
 * a slice. */
static const iu_layout IMAGE_LAYOUT = {PAD, 0, OFFSET};
static const iu_layout VOLUME_LAYOUT = {PAD, 1, OFFSET};

static pv_buffer put_image(const iu_caller *c, const pv_image *image)
{
    return iu_put_image(c, image, IMAGE_LAYOUT);
}

static pv_buffer put_volume(const iu_caller *c, const pv_volume *v)
{
    return iu_put_volume(c, v, VOLUME_LAYOUT);
}

/* A caller's F32 buffer of w x h x d (d 0: an image) filled with `value`. */
static pv_buffer new_f32(const iu_caller *c, int w, int h, int d, float value)
{
    const int depth = d > 1 ? d : 1;
    const ptrdiff_t stride = w + PAD, slice = stride * h;
    const size_t count = (size_t)OFFSET / sizeof(float) + (size_t)slice * (size_t)depth;
    float *host = malloc(count * sizeof *host);
    assert_non_null(host);
    for (size_t i = 0; i < count; i++)
        host[i] = value;
    pv_buffer b = {iu_put_bytes(c, host, count * sizeof *host), OFFSET, w, h, stride,
                   PV_PIXEL_F32, d, d > 1 ? slice : 0};
    free(host);
    return b;
}

/* ------------------------------------------------------------------ SIFT */

/* Two frames of smooth random texture (blobs near SIFT's finest scales),
 * the second the first moved by (SHIFT_X, SHIFT_Y), as u8. */
static void make_frames(pv_image *a, pv_image *b)
{
    tu_blob_frames(a, b, W, H, 4, 23u, SHIFT_X, SHIFT_Y);
}

static pv_image as_f32(const pv_image *u8)
{
    pv_image f;
    assert_int_equal(pv_image_alloc(&f, u8->width, u8->height, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < u8->height; y++)
        for (int x = 0; x < u8->width; x++)
            tu_set_pixel(&f, x, y, pv_image_get(u8, x, y));
    return f;
}

/* The u8 image as another pixel type: u16 (v * 257, the same grey after
 * scaling) or RGB8 (v in each channel). */
static pv_image as_type(const pv_image *u8, pv_pixel_type type)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, u8->width, u8->height, type), PV_OK);
    for (int y = 0; y < u8->height; y++)
        for (int x = 0; x < u8->width; x++) {
            const uint8_t v = ((const uint8_t *)u8->data)[(size_t)y * u8->stride + x];
            if (type == PV_PIXEL_U16)
                ((uint16_t *)out.data)[(size_t)y * out.stride + x] = (uint16_t)(v * 257);
            else
                memset((uint8_t *)out.data + 3 * ((size_t)y * out.stride + x), v, 3);
        }
    return out;
}

static void expect_same_features(const pv_sift_features *got, const pv_sift_features *want,
                                 const char *what)
{
    if (got->count != want->count)
        fail_msg("%s: %d keypoints against the host call's %d", what, got->count, want->count);
    assert_true(want->count > 10); /* a test of something */
    const size_t n = (size_t)want->count;
    if (memcmp(got->keypoints, want->keypoints, n * sizeof *want->keypoints) != 0)
        fail_msg("%s: keypoints differ from the host call's", what);
    if (memcmp(got->descriptors, want->descriptors, n * 128 * sizeof(float)) != 0 ||
        memcmp(got->descriptors_u8, want->descriptors_u8, n * 128) != 0)
        fail_msg("%s: descriptors differ from the host call's", what);
}

static void detect_both(iu_caller *c, const pv_image *image, const char *what)
{
    pv_sift_plan *plan = NULL;
    tu_expect_ok(c->ctx, pv_sift_plan_create(c->ctx, W, H, NULL, &plan), "sift plan");
    pv_sift_features want = {0}, got = {0};
    tu_expect_ok(c->ctx, pv_sift_detect(plan, image, &want), "host sift_detect");
    pv_buffer in = put_image(c, image);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_sift_detect_cl(plan, &in, &got, 0, NULL, &done), "sift_detect_cl");
    iu_wait_and_release(done);
    expect_same_features(&got, &want, what);
    pv_sift_features_free(&got);
    /* the cross-check's host copies: the same features */
    tu_expect_ok(c->ctx, pv_context_set_crosscheck(c->ctx, 1), "crosscheck on");
    tu_expect_ok(c->ctx, pv_sift_detect_cl(plan, &in, &got, 0, NULL, NULL),
                 "sift_detect_cl cross-checked");
    pv_context_set_crosscheck(c->ctx, 0);
    expect_same_features(&got, &want, what);
    pv_sift_features_free(&got);
    pv_sift_features_free(&want);
    clReleaseMemObject(in.mem);
    pv_sift_plan_destroy(plan);
}

static void test_sift_detect_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image a, b;
    make_frames(&a, &b);
    pv_image f = as_f32(&a), u16 = as_type(&a, PV_PIXEL_U16), rgb = as_type(&a, PV_PIXEL_RGB8);
    detect_both(&c, &a, "u8 image");
    detect_both(&c, &f, "f32 image");
    /* converted to grey on the device from the caller's buffer */
    detect_both(&c, &u16, "u16 image");
    detect_both(&c, &rgb, "rgb8 image");
    pv_image_free(&a);
    pv_image_free(&b);
    pv_image_free(&f);
    pv_image_free(&u16);
    pv_image_free(&rgb);
    iu_caller_free(&c);
}

static void expect_same_chain(const pv_sift_chain_result *got, const pv_sift_chain_result *want,
                              const char *what)
{
    assert_int_equal(want->has_model, 1);
    assert_true(want->inlier_count >= 8);
    if (got->has_model != want->has_model || got->keypoints1 != want->keypoints1 ||
        got->keypoints2 != want->keypoints2 || got->matches != want->matches ||
        got->inlier_count != want->inlier_count)
        fail_msg("%s: counts differ from the host call's (%d/%d keypoints, %d matches, %d "
                 "inliers against %d/%d, %d, %d)", what, got->keypoints1, got->keypoints2,
                 got->matches, got->inlier_count, want->keypoints1, want->keypoints2,
                 want->matches, want->inlier_count);
    if (memcmp(&got->geometry, &want->geometry, sizeof want->geometry) != 0)
        fail_msg("%s: the homography differs from the host call's", what);
    if (memcmp(got->inliers, want->inliers, (size_t)want->inlier_count * sizeof *want->inliers))
        fail_msg("%s: the inlier matches differ from the host call's", what);
}

static void match_both(iu_caller *c, const pv_image *a, const pv_image *b, const char *what)
{
    pv_sift_plan *plan = NULL;
    tu_expect_ok(c->ctx, pv_sift_plan_create(c->ctx, W, H, NULL, &plan), "sift plan");
    pv_sift_chain_result want = {0}, got = {0};
    tu_expect_ok(c->ctx, pv_sift_match_images(plan, a, b, NULL, NULL, &want),
                 "host sift_match_images");
    /* the known answer: the frames' shift */
    assert_true(fabs(want.geometry.model[2] + SHIFT_X) < 0.25);
    assert_true(fabs(want.geometry.model[5] + SHIFT_Y) < 0.25);
    pv_buffer one = put_image(c, a), two = put_image(c, b);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_sift_match_images_cl(plan, &one, &two, NULL, NULL, &got, 0, NULL,
                                                 &done),
                 "sift_match_images_cl");
    iu_wait_and_release(done);
    expect_same_chain(&got, &want, what);
    pv_sift_chain_result_free(&got);
    tu_expect_ok(c->ctx, pv_context_set_crosscheck(c->ctx, 1), "crosscheck on");
    tu_expect_ok(c->ctx, pv_sift_match_images_cl(plan, &one, &two, NULL, NULL, &got, 0, NULL,
                                                 NULL),
                 "sift_match_images_cl cross-checked");
    pv_context_set_crosscheck(c->ctx, 0);
    expect_same_chain(&got, &want, what);
    pv_sift_chain_result_free(&got);
    pv_sift_chain_result_free(&want);
    clReleaseMemObject(one.mem);
    clReleaseMemObject(two.mem);
    pv_sift_plan_destroy(plan);
}

static void test_sift_match_images_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image a, b;
    make_frames(&a, &b);
    pv_image fa = as_f32(&a), fb = as_f32(&b);
    match_both(&c, &a, &b, "u8 frames");
    match_both(&c, &fa, &fb, "f32 frames");
    pv_image_free(&a);
    pv_image_free(&b);
    pv_image_free(&fa);
    pv_image_free(&fb);
    iu_caller_free(&c);
}

static void test_sift_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image a, b;
    make_frames(&a, &b);
    pv_sift_plan *plan = NULL, *cpu_plan = NULL;
    tu_expect_ok(c.ctx, pv_sift_plan_create(c.ctx, W, H, NULL, &plan), "sift plan");
    tu_expect_ok(tu_cpu, pv_sift_plan_create(tu_cpu, W, H, NULL, &cpu_plan), "cpu sift plan");
    pv_buffer in = put_image(&c, &a), two = put_image(&c, &b), foreign = put_image(&other, &a);
    pv_buffer wrong_type = in, narrow = in, small = in, no_mem = in;
    wrong_type.type = PV_PIXEL_F32; /* four times the bytes the buffer holds */
    narrow.stride = W - 1;
    small.width = W - 8; /* not the plan's size */
    no_mem.mem = NULL;
    const pv_buffer *bad[] = {NULL, &foreign, &wrong_type, &narrow, &small, &no_mem};
    pv_sift_features untouched;
    memset(&untouched, 0x5a, sizeof untouched);
    pv_sift_chain_result untouched_chain;
    memset(&untouched_chain, 0x5a, sizeof untouched_chain);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pv_sift_features f = untouched;
        pv_sift_chain_result r = untouched_chain;
        cl_event done = (cl_event)0x1;
        assert_int_equal(pv_sift_detect_cl(plan, bad[i], &f, 0, NULL, &done), PV_ERR_INVALID);
        assert_int_equal(pv_sift_match_images_cl(plan, &in, bad[i], NULL, NULL, &r, 0, NULL,
                                                 &done),
                         PV_ERR_INVALID);
        assert_int_equal(pv_sift_match_images_cl(plan, bad[i], &two, NULL, NULL, &r, 0, NULL,
                                                 &done),
                         PV_ERR_INVALID);
        assert_memory_equal(&f, &untouched, sizeof f);
        assert_memory_equal(&r, &untouched_chain, sizeof r);
        assert_ptr_equal(done, (cl_event)0x1);
    }
    pv_sift_features f = untouched;
    pv_sift_chain_result r = untouched_chain;
    cl_event failed = iu_failed_event(&c);
    assert_int_equal(pv_sift_detect_cl(plan, &in, &f, 1, &failed, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images_cl(plan, &in, &two, NULL, NULL, &r, 1, &failed, NULL),
                     PV_ERR_INVALID);
    clReleaseEvent(failed);
    assert_int_equal(pv_sift_detect_cl(plan, &in, &f, 1, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_cl(NULL, &in, &f, 0, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_cl(plan, &in, NULL, 0, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images_cl(NULL, &in, &two, NULL, NULL, &r, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_sift_match_images_cl(plan, &in, &two, NULL, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    /* a CPU context has no device buffers */
    assert_int_equal(pv_sift_detect_cl(cpu_plan, &in, &f, 0, NULL, NULL), PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_sift_match_images_cl(cpu_plan, &in, &two, NULL, NULL, &r, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    assert_memory_equal(&f, &untouched, sizeof f);
    assert_memory_equal(&r, &untouched_chain, sizeof r);
    /* the context still works after the refusals */
    tu_expect_ok(c.ctx, pv_sift_detect_cl(plan, &in, &f, 0, NULL, NULL), "sift_detect_cl");
    assert_true(f.count > 0);
    pv_sift_features_free(&f);
    clReleaseMemObject(in.mem);
    clReleaseMemObject(two.mem);
    clReleaseMemObject(foreign.mem);
    pv_sift_plan_destroy(plan);
    pv_sift_plan_destroy(cpu_plan);
    pv_image_free(&a);
    pv_image_free(&b);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------------- OCT */

typedef struct oct_data {
    pv_volume reference, target;
} oct_data;

/* The synthesized pair (f32) or its u16 counts. */
static oct_data make_volumes(int u16)
{
    oct_data d;
    pv_octreg_synth_params p;
    tu_octreg_synth_params(&p, ND, NA, NB, 7);
    pv_volume ref, target;
    assert_int_equal(pv_volume_alloc(&ref, ND, NA, NB), PV_OK);
    assert_int_equal(pv_volume_alloc(&target, ND, NA, NB), PV_OK);
    assert_int_equal(pv_octreg_synthesize(&p, &ref, &target, NULL), PV_OK);
    if (!u16) {
        d.reference = ref;
        d.target = target;
        return d;
    }
    pv_volume *in[2] = {&ref, &target}, *out[2] = {&d.reference, &d.target};
    for (int v = 0; v < 2; v++) {
        assert_int_equal(pv_volume_alloc_u16(out[v], ND, NA, NB), PV_OK);
        for (size_t i = 0; i < (size_t)ND * NA * NB; i++) {
            const float s = in[v]->data[i] * U16_SCALE;
            out[v]->data_u16[i] = (uint16_t)(s < 0.0f ? 0.0f : s > 65535.0f ? 65535.0f : s);
        }
        pv_volume_free(in[v]);
    }
    return d;
}

static void oct_data_free(oct_data *d)
{
    pv_volume_free(&d->reference);
    pv_volume_free(&d->target);
}

static void expect_same_floats(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
            fail_msg("%s: element %zu %.9g against the host call's %.9g", what, i,
                     (double)got[i], (double)want[i]);
}

/* The reconstruction's outputs, host call against device form. */
static void reconstruct_both(iu_caller *c, pv_octreg_plan *plan, const oct_data *d,
                             const pv_buffer *target, const pv_octreg_shift *shifts)
{
    pv_volume volume;
    pv_image enface, slow;
    float coverage[NB], got_coverage[NB];
    assert_int_equal(pv_volume_alloc(&volume, ND, NA, NB), PV_OK);
    assert_int_equal(pv_image_alloc(&enface, NA, NB, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&slow, NB, ND, PV_PIXEL_F32), PV_OK);
    tu_expect_ok(c->ctx, pv_octreg_reconstruct(plan, &d->target, shifts, 0.0f, &volume, &enface,
                                               &slow, coverage),
                 "host octreg_reconstruct");
    pv_buffer out_volume = new_f32(c, ND, NA, NB, -1.0f), out_enface = new_f32(c, NA, NB, 0, -1.0f),
              out_slow = new_f32(c, NB, ND, 0, -1.0f);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_octreg_reconstruct_cl(plan, target, shifts, 0.0f, &out_volume,
                                                  &out_enface, &out_slow, got_coverage, 0, NULL,
                                                  &done),
                 "octreg_reconstruct_cl");
    iu_wait_and_release(done);
    float *got = iu_get_f32(c, &out_volume);
    expect_same_floats(got, volume.data, (size_t)ND * NA * NB, "registered volume");
    free(got);
    got = iu_get_f32(c, &out_enface);
    expect_same_floats(got, enface.data, (size_t)NA * NB, "en-face image");
    free(got);
    got = iu_get_f32(c, &out_slow);
    expect_same_floats(got, slow.data, (size_t)NB * ND, "slow image");
    free(got);
    expect_same_floats(got_coverage, coverage, NB, "coverage");
    clReleaseMemObject(out_volume.mem);
    clReleaseMemObject(out_enface.mem);
    clReleaseMemObject(out_slow.mem);
    pv_volume_free(&volume);
    pv_image_free(&enface);
    pv_image_free(&slow);
}

static void expect_same_shifts(const pv_octreg_shift *got, const pv_octreg_shift *want,
                               const char *what)
{
    for (int k = 0; k < NB; k++)
        if (memcmp(&got[k], &want[k], sizeof want[k]) != 0)
            fail_msg("%s: B-scan %d: (%g, %g, %g) valid %d against the host call's (%g, %g, %g) "
                     "valid %d", what, k, got[k].dx, got[k].dy, got[k].dz, got[k].valid,
                     want[k].dx, want[k].dy, want[k].dz, want[k].valid);
}

static void register_both(iu_caller *c, int u16)
{
    const char *what = u16 ? "u16 volumes" : "f32 volumes";
    oct_data d = make_volumes(u16);
    pv_octreg_plan *host_plan = NULL, *plan = NULL;
    tu_expect_ok(c->ctx, pv_octreg_plan_create(c->ctx, &d.reference, NULL, &host_plan),
                 "host octreg_plan_create");
    pv_octreg_shift want[NB], got[NB];
    pv_octreg_info want_info, got_info;
    tu_expect_ok(c->ctx, pv_octreg_register(host_plan, &d.target, want, &want_info),
                 "host octreg_register");
    assert_true(want_info.valid_bscans > NB / 2); /* a test of something */
    pv_buffer ref = put_volume(c, &d.reference), target = put_volume(c, &d.target);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_octreg_plan_create_cl(c->ctx, &ref, NULL, &plan, 0, NULL, &done),
                 "octreg_plan_create_cl");
    iu_wait_and_release(done);
    done = NULL;
    tu_expect_ok(c->ctx, pv_octreg_register_cl(plan, &target, got, &got_info, 0, NULL, &done),
                 "octreg_register_cl");
    iu_wait_and_release(done);
    expect_same_shifts(got, want, what);
    assert_memory_equal(&got_info, &want_info, sizeof want_info);
    reconstruct_both(c, plan, &d, &target, want);
    pv_octreg_plan_destroy(plan);
    plan = NULL;
    /* the cross-check: host copies, the CPU's plan beside the device's */
    tu_expect_ok(c->ctx, pv_context_set_crosscheck(c->ctx, 1), "crosscheck on");
    tu_expect_ok(c->ctx, pv_octreg_plan_create_cl(c->ctx, &ref, NULL, &plan, 0, NULL, NULL),
                 "octreg_plan_create_cl cross-checked");
    tu_expect_ok(c->ctx, pv_octreg_register_cl(plan, &target, got, NULL, 0, NULL, NULL),
                 "octreg_register_cl cross-checked");
    pv_volume volume;
    assert_int_equal(pv_volume_alloc(&volume, ND, NA, NB), PV_OK);
    tu_expect_ok(c->ctx, pv_octreg_reconstruct(host_plan, &d.target, want, 0.0f, &volume, NULL,
                                               NULL, NULL),
                 "host octreg_reconstruct");
    pv_buffer out = new_f32(c, ND, NA, NB, -1.0f);
    tu_expect_ok(c->ctx, pv_octreg_reconstruct_cl(plan, &target, want, 0.0f, &out, NULL, NULL,
                                                  NULL, 0, NULL, NULL),
                 "octreg_reconstruct_cl cross-checked");
    pv_context_set_crosscheck(c->ctx, 0);
    expect_same_shifts(got, want, what);
    float *registered = iu_get_f32(c, &out);
    expect_same_floats(registered, volume.data, (size_t)ND * NA * NB,
                       "registered volume (cross-check)");
    free(registered);
    clReleaseMemObject(out.mem);
    pv_volume_free(&volume);
    pv_octreg_plan_destroy(plan);
    pv_octreg_plan_destroy(host_plan);
    clReleaseMemObject(ref.mem);
    clReleaseMemObject(target.mem);
    oct_data_free(&d);
}

static void test_octreg_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    register_both(&c, 0);
    register_both(&c, 1);
    iu_caller_free(&c);
}

static void test_octreg_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    oct_data d = make_volumes(0);
    pv_buffer ref = put_volume(&c, &d.reference), foreign = put_volume(&other, &d.reference);
    pv_buffer u8 = ref, narrow = ref, no_mem = ref;
    u8.type = PV_PIXEL_U8;
    narrow.stride = ND - 1;
    no_mem.mem = NULL;
    const pv_buffer *bad[] = {NULL, &foreign, &u8, &narrow, &no_mem};
    pv_octreg_plan *const sentinel = (pv_octreg_plan *)0x1;
    pv_octreg_plan *plan = NULL, *cpu_plan = NULL;
    tu_expect_ok(c.ctx, pv_octreg_plan_create_cl(c.ctx, &ref, NULL, &plan, 0, NULL, NULL),
                 "octreg_plan_create_cl");
    tu_expect_ok(tu_cpu, pv_octreg_plan_create(tu_cpu, &d.reference, NULL, &cpu_plan),
                 "cpu octreg plan");
    pv_octreg_shift shifts[NB], untouched[NB];
    memset(untouched, 0x5a, sizeof untouched);
    memcpy(shifts, untouched, sizeof shifts);
    float coverage[NB], untouched_coverage[NB];
    memset(untouched_coverage, 0x5a, sizeof untouched_coverage);
    memcpy(coverage, untouched_coverage, sizeof coverage);
    pv_buffer out = new_f32(&c, ND, NA, NB, -1.0f);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pv_octreg_plan *made = sentinel;
        assert_int_equal(pv_octreg_plan_create_cl(c.ctx, bad[i], NULL, &made, 0, NULL, NULL),
                         PV_ERR_INVALID);
        assert_ptr_equal(made, sentinel);
        assert_int_equal(pv_octreg_register_cl(plan, bad[i], shifts, NULL, 0, NULL, NULL),
                         PV_ERR_INVALID);
        assert_int_equal(pv_octreg_reconstruct_cl(plan, bad[i], untouched, 0.0f, &out, NULL, NULL,
                                                  coverage, 0, NULL, NULL),
                         PV_ERR_INVALID);
    }
    cl_event failed = iu_failed_event(&c);
    assert_int_equal(pv_octreg_register_cl(plan, &ref, shifts, NULL, 1, &failed, NULL),
                     PV_ERR_INVALID);
    pv_octreg_plan *made = sentinel;
    assert_int_equal(pv_octreg_plan_create_cl(c.ctx, &ref, NULL, &made, 1, &failed, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_reconstruct_cl(plan, &ref, untouched, 0.0f, &out, NULL, NULL,
                                              coverage, 1, &failed, NULL),
                     PV_ERR_INVALID);
    clReleaseEvent(failed);
    assert_int_equal(pv_octreg_plan_create_cl(NULL, &ref, NULL, &made, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_plan_create_cl(c.ctx, &ref, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_register_cl(NULL, &ref, shifts, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_register_cl(plan, &ref, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    /* the output over the target's bytes; no output at all */
    assert_int_equal(pv_octreg_reconstruct_cl(plan, &ref, untouched, 0.0f, &ref, NULL, NULL,
                                              coverage, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_reconstruct_cl(plan, &ref, untouched, 0.0f, NULL, NULL, NULL, NULL,
                                              0, NULL, NULL),
                     PV_ERR_INVALID);
    /* a CPU context has no device buffers */
    assert_int_equal(pv_octreg_plan_create_cl(tu_cpu, &ref, NULL, &made, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_octreg_register_cl(cpu_plan, &ref, shifts, NULL, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    assert_ptr_equal(made, sentinel);
    assert_memory_equal(shifts, untouched, sizeof shifts);
    assert_memory_equal(coverage, untouched_coverage, sizeof coverage);
    float *left = iu_get_f32(&c, &out);
    for (size_t i = 0; i < (size_t)ND * NA * NB; i++)
        if (left[i] != -1.0f)
            fail_msg("the refused reconstruction wrote element %zu", i);
    free(left);
    pv_octreg_plan_destroy(plan);
    pv_octreg_plan_destroy(cpu_plan);
    clReleaseMemObject(ref.mem);
    clReleaseMemObject(foreign.mem);
    clReleaseMemObject(out.mem);
    oct_data_free(&d);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sift_detect_equals_host_call),
        cmocka_unit_test(test_sift_match_images_equals_host_call),
        cmocka_unit_test(test_sift_misuse),
        cmocka_unit_test(test_octreg_equals_host_call),
        cmocka_unit_test(test_octreg_misuse),
    };
    return cmocka_run_group_tests_name("interop_features", tests, tu_group_setup,
                                       tu_group_teardown);
}
