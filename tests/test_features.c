/* Tests of the features module: SIFT detection/description and matching.
 *
 *   - known answers on every backend: a Gaussian blob is found at its
 *     centre and scale; the transposed real image (sampled on the same
 *     grid at every octave) gives the transposed keypoints, angles
 *     pi/2 - t and mirrored descriptors; a constant image has none; the top-K cap keeps
 *     exactly the K strongest; matching finds planted correspondences;
 *   - OpenCL against the CPU backend: >= 99% of keypoints paired within
 *     0.05 px both ways, descriptors within 1e-3, same nearest neighbours;
 *     and determinism (two runs give identical bytes); a window of a
 *     larger image (stride > width, u8 and f32) gives its dense copy's bytes;
 *   - VLFeat (when configured): >= 95% of VLFeat's keypoints have one of
 *     ours within 1 px and 10% in scale, >= 95% of those with the
 *     orientation within 0.1 rad; repeatability under a rotation and a
 *     scaling of a real image no more than 2 points below VLFeat's;
 *   - bad input: PV_ERR_INVALID, outputs untouched.
 *
 * OpenCL parts are skipped without a device, under PARVIS_BACKEND=cpu or
 * with PARVIS_TEST_SKIP_OPENCL=1 (valgrind runs). */
#include "test_util.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PV_HAVE_VLFEAT
#include <vl/sift.h>
#endif
#ifdef PV_HAVE_OPENCL
#include "../backends/opencl/runtime/runtime.h" /* pv_cl_fault_calls: enqueues of a batch */
#endif

#define PI_F 3.14159265358979f

enum { BATCH_TEST_CHUNK = 3 }; /* images per OpenCL chunk in the batch tests */

static pv_image g_venus;      /* u8, the real test image */


/* ------------------------------------------------------------------ setup */

/* tu_group_setup's contexts (tu_cpu, and tu_opencl unless OpenCL is
 * absent or left alone), the OpenCL one set for the batch tests. */
static int group_setup(void **state)
{
    if (tu_group_setup(state) != 0)
        return -1;
    /* The batch tests run chunks of 3 images side by side, so that their
     * batches of 5 and 7 end with a shorter chunk (test_batch_chunk_sizes
     * covers other chunk sizes). */
    if (tu_opencl && pv_tune_set(tu_opencl, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK) != PV_OK)
        return -1;
    return pv_image_read(tu_data_path("stereo/venus/left.pgm"), PV_PIXEL_U8, &g_venus) == PV_OK
               ? 0 : -1;
}

static int group_teardown(void **state)
{
    pv_image_free(&g_venus);
    return tu_group_teardown(state);
}

/* ---------------------------------------------------------------- helpers */

static pv_image crop_u8(const pv_image *src, int x0, int y0, int w, int h)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, w, h, PV_PIXEL_U8), PV_OK);
    for (int y = 0; y < h; y++)
        memcpy((uint8_t *)out.data + (size_t)y * w,
               (const uint8_t *)src->data + (ptrdiff_t)(y0 + y) * src->stride + x0, (size_t)w);
    return out;
}

static float bilinear_u8(const pv_image *src, float x, float y)
{
    if (x < 0.0f || y < 0.0f || x > (float)(src->width - 1) || y > (float)(src->height - 1))
        return 0.0f;
    int x0 = (int)x, y0 = (int)y;
    int x1 = x0 + 1 < src->width ? x0 + 1 : x0, y1 = y0 + 1 < src->height ? y0 + 1 : y0;
    float fx = x - (float)x0, fy = y - (float)y0;
    float a = pv_image_get(src, x0, y0), b = pv_image_get(src, x1, y0);
    float c = pv_image_get(src, x0, y1), d = pv_image_get(src, x1, y1);
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy;
}

/* A similarity about the image centre: B(p) = A(T^-1 p), T = scale * rotation. */
typedef struct similarity {
    float scale, angle, cx_a, cy_a, cx_b, cy_b;
} similarity;

static void map_point(const similarity *t, float x, float y, float *u, float *v)
{
    float c = cosf(t->angle), s = sinf(t->angle), dx = x - t->cx_a, dy = y - t->cy_a;
    *u = t->scale * (c * dx - s * dy) + t->cx_b;
    *v = t->scale * (s * dx + c * dy) + t->cy_b;
}

static pv_image warp_u8(const pv_image *src, const similarity *t, int w, int h)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, w, h, PV_PIXEL_U8), PV_OK);
    float c = cosf(t->angle), s = sinf(t->angle);
    for (int v = 0; v < h; v++)
        for (int u = 0; u < w; u++) {
            float du = ((float)u - t->cx_b) / t->scale, dv = ((float)v - t->cy_b) / t->scale;
            float x = c * du + s * dv + t->cx_a, y = -s * du + c * dv + t->cy_a;
            float value = bilinear_u8(src, x, y) + 0.5f;
            ((uint8_t *)out.data)[(size_t)v * w + u] = (uint8_t)(value > 255.0f ? 255.0f : value);
        }
    return out;
}

static pv_sift_features detect(pv_context *ctx, const pv_image *image, const pv_sift_params *params)
{
    pv_sift_plan *plan = NULL;
    pv_sift_features f = {0};
    assert_int_equal(pv_sift_plan_create(ctx, image->width, image->height, params, &plan), PV_OK);
    pv_status status = pv_sift_detect(plan, image, &f);
    if (status != PV_OK)
        fail_msg("pv_sift_detect: %s", pv_context_last_error(ctx));
    pv_sift_plan_destroy(plan);
    return f;
}

/* The real-time paper's settings (PV_SIFT_PRESET_FAST). */
static pv_sift_params fast_params(void)
{
    pv_sift_params params;
    assert_int_equal(pv_sift_params_preset(&params, PV_SIFT_PRESET_FAST), PV_OK);
    return params;
}

/* ----------------------------------------------------------- known answers */

/* A Gaussian blob of sigma 4 at (60.3, 51.7) on a 128 x 112 image. */
static void test_blob(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, 128, 112, PV_PIXEL_F32), PV_OK);
    const float bx = 60.3f, by = 51.7f, bs = 4.0f;
    for (int y = 0; y < image.height; y++)
        for (int x = 0; x < image.width; x++) {
            float dx = (float)x - bx, dy = (float)y - by;
            ((float *)image.data)[(size_t)y * image.width + x] =
                0.2f + 0.6f * expf(-(dx * dx + dy * dy) / (2.0f * bs * bs));
        }
    for (int first = -1; first <= 0; first++) {
        pv_sift_params params;
        pv_sift_params_default(&params);
        params.first_octave = first;
        pv_sift_features f = detect(ctx, &image, &params);
        int strongest = -1;
        for (int i = 0; i < f.count; i++)
            if (strongest < 0 || fabsf(f.keypoints[i].response) > fabsf(f.keypoints[strongest].response))
                strongest = i;
        assert_true(strongest >= 0);
        const pv_sift_keypoint *k = &f.keypoints[strongest];
        /* A bright blob is a DoG minimum; the scale-normalised DoG peaks
         * near sigma = blob sigma. */
        assert_true(k->response < 0.0f);
        assert_true(fabsf(k->x - bx) < 0.2f && fabsf(k->y - by) < 0.2f);
        assert_true(k->sigma > 0.8f * bs && k->sigma < 1.5f * bs);
        pv_sift_features_free(&f);
    }
    pv_image_free(&image);
}

static void test_constant_image_has_no_keypoints(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, 64, 48, PV_PIXEL_U8), PV_OK);
    memset(image.data, 90, 64 * 48);
    pv_sift_features f = detect(ctx, &image, NULL);
    assert_int_equal(f.count, 0);
    assert_non_null(f.keypoints);
    pv_sift_features_free(&f);
    pv_image_free(&image);
}

/* The transposed image R(u, v) = I(v, u) samples every octave on the same
 * grid, so its keypoints are exactly (up to rounding) the transposed ones:
 * (x, y) -> (y, x), the angle t -> pi/2 - t, and the descriptor mirrored:
 * spatial row j -> 3 - j in the keypoint frame, orientation bin o -> -o. */
static pv_image transpose_u8(const pv_image *src)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, src->height, src->width, PV_PIXEL_U8), PV_OK);
    for (int v = 0; v < out.height; v++)
        for (int u = 0; u < out.width; u++)
            ((uint8_t *)out.data)[(size_t)v * out.width + u] =
                ((const uint8_t *)src->data)[(ptrdiff_t)u * src->stride + v];
    return out;
}

static void mirror_descriptor(float *d)
{
    float copy[128];
    memcpy(copy, d, sizeof copy);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            for (int o = 0; o < 8; o++)
                d[(3 - j) * 32 + i * 8 + (8 - o) % 8] = copy[j * 32 + i * 8 + o];
}

static void test_transpose(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    for (int first = -1; first <= 0; first++) {
        pv_sift_params params;
        pv_sift_params_default(&params);
        params.first_octave = first;
        /* The transposed image sums the same floats in another order; with
         * the default threshold 0, extrema whose |D| is at rounding level
         * come and go with that order.  The symmetry is checked above it. */
        params.peak_thresh = 0.005f;
        pv_image a = crop_u8(&g_venus, 60, 40, 250 + 60 * first, 190 + 40 * first);
        pv_image b = transpose_u8(&a);
        pv_sift_features fa = detect(ctx, &a, &params), fb = detect(ctx, &b, &params);
        assert_true(fa.count > 20);
        for (int i = 0; i < fa.count; i++) {
            pv_sift_keypoint *k = &fa.keypoints[i];
            float x = k->x;
            k->x = k->y;
            k->y = x;
            k->angle = fmodf(2.5f * PI_F - k->angle, 2.0f * PI_F);
            mirror_descriptor(fa.descriptors + (size_t)i * 128);
        }
        pv_sift_agreement ag;
        assert_int_equal(pv_sift_compare(&fb, &fa, 0.01f, 1e-3f, 1e-3f, &ag), PV_OK);
        printf("    transpose, first octave %d: %d / %d keypoints, %.1f%% paired, angle ok %.1f%%, "
               "descriptor max diff %.2g\n", first, fa.count, fb.count, 100.0 * ag.paired_fraction,
               100.0 * ag.angle_ok_fraction, ag.max_descriptor_diff);
        assert_true(ag.paired_fraction >= 0.99);
        assert_true(ag.angle_ok_fraction >= 0.99);
        assert_true(ag.max_descriptor_diff < 1e-3);
        pv_sift_features_free(&fa);
        pv_sift_features_free(&fb);
        pv_image_free(&a);
        pv_image_free(&b);
    }
}

static void test_top_k_cap(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = crop_u8(&g_venus, 100, 100, 200, 160);
    pv_sift_params params = fast_params();
    pv_sift_features all = detect(ctx, &a, &params);
    assert_true(all.count > 40);
    params.max_keypoints = 25;
    pv_sift_features top = detect(ctx, &a, &params);
    assert_int_equal(top.count, 25);
    /* Every kept keypoint is one of the full set, in the same relative
     * order, and none left out is stronger than the weakest kept. */
    float weakest = INFINITY;
    int j = 0;
    for (int i = 0; i < top.count; i++) {
        while (j < all.count && memcmp(&all.keypoints[j], &top.keypoints[i], sizeof(pv_sift_keypoint)))
            j++;
        assert_true(j < all.count);
        weakest = fminf(weakest, fabsf(top.keypoints[i].response));
        j++;
    }
    int stronger = 0;
    for (int i = 0; i < all.count; i++)
        stronger += fabsf(all.keypoints[i].response) > weakest;
    assert_true(stronger <= 25);
    pv_sift_features_free(&all);
    pv_sift_features_free(&top);
    pv_image_free(&a);
}

static void test_descriptor_properties(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = crop_u8(&g_venus, 0, 0, 160, 120);
    pv_sift_features f = detect(ctx, &a, NULL);
    assert_true(f.count > 10);
    for (int i = 0; i < f.count; i++) {
        const float *d = f.descriptors + (size_t)i * 128;
        double norm = 0.0;
        for (int k = 0; k < 128; k++) {
            /* Clamped at 0.2 then renormalised: an element is at most
             * 0.2 / |clamped| <= 1 (1 when one bin holds all the weight,
             * as on the nearly flat patches the threshold 0 keeps). */
            assert_true(d[k] >= 0.0f && d[k] <= 1.0f);
            norm += (double)d[k] * d[k];
            float expect = fminf(512.0f * d[k], 255.0f);
            assert_int_equal(f.descriptors_u8[(size_t)i * 128 + k], (uint8_t)expect);
        }
        assert_true(fabs(sqrt(norm) - 1.0) < 1e-4);
        const pv_sift_keypoint *k = &f.keypoints[i];
        assert_true(k->angle >= 0.0f && k->angle < 2.0f * PI_F);
        /* The default first octave -1 samples the input at half pixels:
         * keypoints may lie up to half a pixel outside its centres. */
        assert_true(k->x >= -0.5f && k->x <= 159.5f && k->y >= -0.5f && k->y <= 119.5f);
        float expect_sigma = 1.6f * exp2f((float)k->octave + k->scale / 3.0f);
        assert_true(fabsf(k->sigma - expect_sigma) <= 1e-4f * expect_sigma);
        /* Deterministic order: octave never decreases. */
        if (i > 0)
            assert_true(f.keypoints[i - 1].octave <= k->octave);
    }
    pv_sift_features_free(&f);
    pv_image_free(&a);
}

/* --------------------------------------------------------------- matching */

static pv_sift_features random_descriptors(int count, uint32_t seed)
{
    pv_sift_features f = {count, calloc((size_t)count, sizeof(pv_sift_keypoint)),
                          malloc((size_t)count * 128 * sizeof(float)), NULL, 0};
    assert_non_null(f.keypoints);
    assert_non_null(f.descriptors);
    for (int i = 0; i < count; i++) {
        float *d = f.descriptors + (size_t)i * 128;
        double norm = 0.0;
        for (int k = 0; k < 128; k++) {
            d[k] = tu_rand01(&seed);
            norm += (double)d[k] * d[k];
        }
        for (int k = 0; k < 128; k++)
            d[k] = (float)(d[k] / sqrt(norm));
    }
    return f;
}

static void free_plain(pv_sift_features *f)
{
    free(f->keypoints);
    free(f->descriptors);
}

/* train[perm[i]] = query[i] + small noise for i < planted; the rest of
 * the train set is unrelated. */
static void test_match_planted(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int nq = 150, nt = 300, planted = 100;
    pv_sift_features q = random_descriptors(nq, 11u), t = random_descriptors(nt, 12u);
    uint32_t seed = 99u;
    for (int i = 0; i < planted; i++) {
        int j = (i * 7 + 3) % nt;
        for (int k = 0; k < 128; k++)
            t.descriptors[(size_t)j * 128 + k] =
                q.descriptors[(size_t)i * 128 + k] + 0.01f * (tu_rand01(&seed) - 0.5f);
    }
    pv_sift_match_params params;
    pv_sift_match_params_default(&params);
    for (int mutual = 0; mutual <= 1; mutual++) {
        params.mutual = mutual;
        pv_sift_matches m = {0, NULL};
        assert_int_equal(pv_sift_match(ctx, &q, &t, &params, &m), PV_OK);
        int correct = 0;
        for (int i = 0; i < m.count; i++) {
            const pv_sift_pair *p = &m.pairs[i];
            assert_true(p->query < planted);
            assert_true(p->distance < 0.8f * p->second);
            correct += p->train == (p->query * 7 + 3) % nt;
            if (i > 0)
                assert_true(m.pairs[i - 1].query < p->query);
        }
        assert_int_equal(correct, m.count);
        assert_int_equal(m.count, planted);
        pv_sift_matches_free(&m);
    }
    free_plain(&q);
    free_plain(&t);
}

static void test_match_ties_and_empty(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sift_features q = random_descriptors(3, 5u), t = random_descriptors(4, 6u), empty = {0};
    /* Two identical train rows: the lower index wins, and the ratio test
     * (d1 == d2) rejects it unless disabled. */
    memcpy(t.descriptors + 1 * 128, q.descriptors, 128 * sizeof(float));
    memcpy(t.descriptors + 3 * 128, q.descriptors, 128 * sizeof(float));
    pv_sift_match_params params = {1.0f, 0};
    pv_sift_matches m = {0, NULL};
    assert_int_equal(pv_sift_match(ctx, &q, &t, &params, &m), PV_OK);
    assert_int_equal(m.count, 3);
    assert_int_equal(m.pairs[0].train, 1);
    assert_true(m.pairs[0].distance == 0.0f && m.pairs[0].second == 0.0f);
    pv_sift_matches_free(&m);
    params.ratio = 0.8f;
    assert_int_equal(pv_sift_match(ctx, &q, &t, &params, &m), PV_OK);
    for (int i = 0; i < m.count; i++)
        assert_int_not_equal(m.pairs[i].query, 0);
    pv_sift_matches_free(&m);
    assert_int_equal(pv_sift_match(ctx, &q, &empty, &params, &m), PV_OK);
    assert_int_equal(m.count, 0);
    pv_sift_matches_free(&m);
    assert_int_equal(pv_sift_match(ctx, &empty, &t, &params, &m), PV_OK);
    assert_int_equal(m.count, 0);
    pv_sift_matches_free(&m);
    free_plain(&q);
    free_plain(&t);
}

/* ------------------------------------------------------ OpenCL against CPU */

/* Agreement of a result with a reference one (OpenCL with CPU, or two
 * inputs that differ by float rounding) to the backends' tolerances. */
static void assert_backends_agree(const pv_sift_features *a, const pv_sift_features *ref,
                                  const char *what)
{
    pv_sift_agreement fwd, back;
    assert_int_equal(pv_sift_compare(a, ref, PV_SIFT_POSITION_TOLERANCE, 1e-3f, 1e-2f, &fwd), PV_OK);
    assert_int_equal(pv_sift_compare(ref, a, PV_SIFT_POSITION_TOLERANCE, 1e-3f, 1e-2f, &back), PV_OK);
    printf("    %s: %d against %d keypoints; paired %.2f%% / %.2f%%, angle ok %.2f%%, "
           "descriptor max diff %.3g\n", what, a->count, ref->count, 100.0 * fwd.paired_fraction,
           100.0 * back.paired_fraction, 100.0 * fwd.angle_ok_fraction, fwd.max_descriptor_diff);
    assert_true(fwd.paired_fraction >= PV_SIFT_MATCHED_FRACTION);
    assert_true(back.paired_fraction >= PV_SIFT_MATCHED_FRACTION);
    assert_true(fwd.max_descriptor_diff <= PV_SIFT_DESCRIPTOR_TOLERANCE);
}

static void test_cl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_sift_params params = fast_params();
    for (int first = -1; first <= 0; first++) {
        params.first_octave = first;
        pv_image a = crop_u8(&g_venus, 20, 30, first < 0 ? 200 : 400, first < 0 ? 150 : 330);
        pv_sift_features fc = detect(tu_cpu, &a, &params), fg = detect(cl, &a, &params);
        assert_backends_agree(&fg, &fc, first < 0 ? "venus crop, first octave -1" : "venus, first octave 0");
        pv_sift_features_free(&fc);
        pv_sift_features_free(&fg);
        pv_image_free(&a);
    }
}

static void test_deterministic(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_image a = crop_u8(&g_venus, 50, 50, 240, 200);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, a.width, a.height, NULL, &plan), PV_OK);
    pv_sift_features f1, f2;
    assert_int_equal(pv_sift_detect(plan, &a, &f1), PV_OK);
    assert_int_equal(pv_sift_detect(plan, &a, &f2), PV_OK);
    assert_int_equal(f1.count, f2.count);
    assert_memory_equal(f1.keypoints, f2.keypoints, (size_t)f1.count * sizeof(pv_sift_keypoint));
    assert_memory_equal(f1.descriptors, f2.descriptors, (size_t)f1.count * 128 * sizeof(float));
    pv_sift_features_free(&f1);
    pv_sift_features_free(&f2);
    pv_sift_plan_destroy(plan);
    pv_image_free(&a);
}

/* The image as f32 in [0, 1], stride = width. */
static pv_image to_f32(const pv_image *src)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, src->width, src->height, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < src->width; x++)
            ((float *)out.data)[(size_t)y * src->width + x] =
                (float)((const uint8_t *)src->data)[(ptrdiff_t)y * src->stride + x] / 255.0f;
    return out;
}

/* A window of `whole` (stride > width), without copying. */
static pv_image window_of(const pv_image *whole, int x0, int y0, int w, int h)
{
    pv_image view = *whole;
    const size_t pixel = whole->type == PV_PIXEL_U8 ? 1 : sizeof(float);
    view.data = (char *)whole->data + ((size_t)y0 * (size_t)whole->stride + (size_t)x0) * pixel;
    view.width = w;
    view.height = h;
    return view;
}

static void assert_same_features(const pv_sift_features *a, const pv_sift_features *b)
{
    assert_int_equal(a->count, b->count);
    assert_memory_equal(a->keypoints, b->keypoints, (size_t)a->count * sizeof(pv_sift_keypoint));
    assert_memory_equal(a->descriptors, b->descriptors, (size_t)a->count * 128 * sizeof(float));
}

static void assert_u8_of_floats(const pv_sift_features *f)
{
    for (size_t i = 0; i < (size_t)f->count * 128; i++) {
        float scaled = 512.0f * f->descriptors[i];
        int expected = scaled >= 255.0f ? 255 : (int)scaled;
        assert_int_equal(f->descriptors_u8[i], expected);
    }
}

/* A stream through pv_sift_detect_into: every result equals a fresh
 * pv_sift_detect's, whatever the previous result held (more keypoints,
 * fewer, none); the OpenCL backend writes into the previous arrays when
 * they have room. */
static void test_detect_into_stream(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 200, h = 160;
    pv_image frames[4] = {crop_u8(&g_venus, 40, 30, w, h), crop_u8(&g_venus, 150, 180, w, h),
                          {0}, crop_u8(&g_venus, 40, 30, w, h)};
    assert_int_equal(pv_image_alloc(&frames[2], w, h, PV_PIXEL_U8), PV_OK);
    memset(frames[2].data, 77, (size_t)w * h);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &plan), PV_OK);
    pv_sift_features stream = {0};
    for (int i = 0; i < 4; i++) {
        const pv_sift_keypoint *before = stream.keypoints;
        const int room = stream.capacity;
        pv_sift_features fresh;
        assert_int_equal(pv_sift_detect(plan, &frames[i], &fresh), PV_OK);
        assert_int_equal(pv_sift_detect_into(plan, &frames[i], &stream), PV_OK);
        assert_same_features(&stream, &fresh);
        assert_memory_equal(stream.descriptors_u8, fresh.descriptors_u8, (size_t)fresh.count * 128);
        assert_u8_of_floats(&stream);
        assert_true(stream.capacity >= stream.count);
        assert_true(i == 2 ? stream.count == 0 : stream.count > 0);
        if (*(const pv_backend_kind *)*state == PV_BACKEND_OPENCL && room >= fresh.count &&
            room > 0)
            assert_ptr_equal(stream.keypoints, before);
        pv_sift_features_free(&fresh);
    }
    pv_sift_features_free(&stream);
    assert_int_equal(stream.capacity, 0);
    pv_sift_plan_destroy(plan);
    for (int i = 0; i < 4; i++)
        pv_image_free(&frames[i]);
}

/* Grey 3x3 blocks of pseudo-random values: about 40000 keypoints at
 * 960x720 with the first octave upsampled, a result (22 MB) beyond the
 * OpenCL plan's own staging buffer. */
static pv_image block_noise(int w, int h)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, w, h, PV_PIXEL_U8), PV_OK);
    const int bw = w / 3 + 1;
    uint8_t *blocks = malloc((size_t)bw * (size_t)(h / 3 + 1));
    assert_non_null(blocks);
    uint32_t state = 12345u;
    for (int i = 0; i < bw * (h / 3 + 1); i++) {
        state = state * 1664525u + 1013904223u;
        blocks[i] = (uint8_t)(state >> 24);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            ((uint8_t *)out.data)[(size_t)y * (size_t)w + (size_t)x] = blocks[(y / 3) * bw + x / 3];
    free(blocks);
    return out;
}

/* Large results on the OpenCL backend: read back chunk by chunk, into
 * arrays prepared while the device works (second fresh call) or into the
 * previous result's (pv_sift_detect_into); all equal, and equal to the
 * CPU's within the cross-check tolerances. */
static void test_large_results(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image image = block_noise(960, 720);
    pv_sift_params params = fast_params();
    params.first_octave = -1;
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(cl, image.width, image.height, &params, &plan), PV_OK);
    pv_sift_features first, second, stream = {0};
    assert_int_equal(pv_sift_detect(plan, &image, &first), PV_OK);
    assert_true(first.count > 30000);
    assert_int_equal(pv_sift_detect(plan, &image, &second), PV_OK);
    assert_int_equal(pv_sift_detect_into(plan, &image, &stream), PV_OK);
    assert_same_features(&second, &first);
    assert_same_features(&stream, &first);
    assert_memory_equal(second.descriptors_u8, first.descriptors_u8, (size_t)first.count * 128);
    assert_memory_equal(stream.descriptors_u8, first.descriptors_u8, (size_t)first.count * 128);
    assert_u8_of_floats(&first);
    pv_sift_features cpu = detect(tu_cpu, &image, &params);
    assert_backends_agree(&first, &cpu, "block noise 960x720, first octave -1");
    pv_sift_features_free(&cpu);
    pv_sift_features_free(&first);
    pv_sift_features_free(&second);
    pv_sift_features_free(&stream);
    pv_sift_plan_destroy(plan);
    pv_image_free(&image);
}

/* A window into a larger image (stride > width) gives exactly the result
 * of its dense copy, for u8 and f32 input (the OpenCL plan packs the rows
 * into its pinned staging buffer on the way up). */
static void test_strided_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int x0 = 30, y0 = 40, w = 220, h = 180;
    pv_image whole_f = to_f32(&g_venus);
    pv_image dense[2] = {crop_u8(&g_venus, x0, y0, w, h), {0}};
    dense[1] = to_f32(&dense[0]);
    const pv_image views[2] = {window_of(&g_venus, x0, y0, w, h),
                               window_of(&whole_f, x0, y0, w, h)};
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &plan), PV_OK);
    for (int i = 0; i < 2; i++) {
        pv_sift_features a, b;
        assert_int_equal(pv_sift_detect(plan, &dense[i], &a), PV_OK);
        assert_int_equal(pv_sift_detect(plan, &views[i], &b), PV_OK);
        assert_true(a.count > 0);
        assert_same_features(&a, &b);
        pv_sift_features_free(&a);
        pv_sift_features_free(&b);
        pv_image_free(&dense[i]);
    }
    pv_sift_plan_destroy(plan);
    pv_image_free(&whole_f);
}

static void test_cl_match_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_sift_features q = random_descriptors(200, 21u), t = random_descriptors(333, 22u);
    pv_sift_match_params params = {1.0f, 0};
    pv_sift_matches mc, mg;
    assert_int_equal(pv_sift_match(tu_cpu, &q, &t, &params, &mc), PV_OK);
    assert_int_equal(pv_sift_match(cl, &q, &t, &params, &mg), PV_OK);
    assert_int_equal(mc.count, mg.count);
    for (int i = 0; i < mc.count; i++) {
        assert_int_equal(mc.pairs[i].train, mg.pairs[i].train);
        assert_true(fabsf(mc.pairs[i].distance - mg.pairs[i].distance) <= 1e-5f);
    }
    pv_sift_matches_free(&mc);
    pv_sift_matches_free(&mg);
    free_plain(&q);
    free_plain(&t);
}

static void test_crosscheck_mode(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image a = crop_u8(&g_venus, 0, 0, 180, 140);
    assert_int_equal(pv_context_set_crosscheck(cl, 1), PV_OK);
    pv_sift_features f = detect(cl, &a, NULL);
    assert_true(f.count > 0);
    pv_sift_features_free(&f);
    assert_int_equal(pv_context_set_crosscheck(cl, 0), PV_OK);
    pv_image_free(&a);
}

/* ----------------------------------------------------------------- VLFeat */

#ifdef PV_HAVE_VLFEAT
/* VLFeat's keypoints, every orientation with its descriptor. */
static pv_sift_features vlfeat_detect(const pv_image *image, const pv_sift_params *p, int octaves)
{
    const int w = image->width, h = image->height;
    float *data = malloc((size_t)w * h * sizeof(float));
    assert_non_null(data);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            data[(size_t)y * w + x] = pv_image_get(image, x, y) * (1.0f / 255.0f);
    VlSiftFilt *f = vl_sift_new(w, h, octaves, p->levels, p->first_octave);
    vl_sift_set_peak_thresh(f, p->peak_thresh);
    vl_sift_set_edge_thresh(f, p->edge_thresh);
    int capacity = 1024, count = 0;
    pv_sift_features out = {0, malloc((size_t)capacity * sizeof(pv_sift_keypoint)),
                            malloc((size_t)capacity * 128 * sizeof(float)), NULL, 0};
    for (int err = vl_sift_process_first_octave(f, data); err != VL_ERR_EOF;
         err = vl_sift_process_next_octave(f)) {
        vl_sift_detect(f);
        const VlSiftKeypoint *k = vl_sift_get_keypoints(f);
        for (int i = 0; i < vl_sift_get_nkeypoints(f); i++) {
            double angles[4];
            int n = vl_sift_calc_keypoint_orientations(f, angles, &k[i]);
            for (int a = 0; a < n; a++) {
                if (count == capacity) {
                    capacity *= 2;
                    out.keypoints = realloc(out.keypoints, (size_t)capacity * sizeof(pv_sift_keypoint));
                    out.descriptors = realloc(out.descriptors, (size_t)capacity * 128 * sizeof(float));
                    assert_non_null(out.keypoints);
                    assert_non_null(out.descriptors);
                }
                out.keypoints[count] = (pv_sift_keypoint){k[i].x, k[i].y, k[i].sigma,
                                                          (float)angles[a], 0.0f, k[i].o, k[i].s};
                vl_sift_calc_keypoint_descriptor(f, out.descriptors + (size_t)count * 128, &k[i],
                                                 angles[a]);
                count++;
            }
        }
    }
    out.count = count;
    vl_sift_delete(f);
    free(data);
    return out;
}

static void test_vlfeat_agreement(void **state)
{
    (void)state;
    for (int first = -1; first <= 0; first++) {
        pv_sift_params params;
        pv_sift_params_default(&params);
        params.first_octave = first;
        pv_sift_plan *plan;
        assert_int_equal(pv_sift_plan_create(tu_cpu, g_venus.width, g_venus.height, &params, &plan), PV_OK);
        pv_sift_features ours;
        assert_int_equal(pv_sift_detect(plan, &g_venus, &ours), PV_OK);
        pv_sift_features vl = vlfeat_detect(&g_venus, &params, pv_sift_plan_octaves(plan));
        pv_sift_plan_destroy(plan);
        pv_sift_agreement ag;
        assert_int_equal(pv_sift_compare(&ours, &vl, 1.0f, 0.1f, 0.1f, &ag), PV_OK);
        printf("    VLFeat, first octave %d: vlfeat %d, ours %d keypoints; %.1f%% of VLFeat's "
               "within 1 px / 10%% scale, orientation within 0.1 rad on %.1f%%, mean descriptor "
               "L2 distance %.4f\n", first, vl.count, ours.count, 100.0 * ag.paired_fraction,
               100.0 * ag.angle_ok_fraction, ag.mean_descriptor_dist);
        assert_true(vl.count > 100);
        assert_true(ag.paired_fraction >= 0.95);
        assert_true(ag.angle_ok_fraction >= 0.95);
        assert_true(ag.mean_descriptor_dist < 0.1);
        pv_sift_features_free(&ours);
        free_plain(&vl);
    }
}

/* Share of a's keypoints (mapping well inside b) that b repeats within
 * 1.5 px and 20% in scale. */
static double repeatability(const pv_sift_features *a, const pv_sift_features *b,
                            const similarity *t, const pv_image *ia, const pv_image *ib)
{
    int inside = 0, repeated = 0;
    for (int i = 0; i < a->count; i++) {
        const pv_sift_keypoint *k = &a->keypoints[i];
        float u, v, margin = 12.0f + 3.0f * k->sigma * t->scale;
        map_point(t, k->x, k->y, &u, &v);
        float r_a = hypotf(k->x - t->cx_a, k->y - t->cy_a);
        float limit_a = 0.5f * (float)(ia->width < ia->height ? ia->width : ia->height) - 12.0f - 3.0f * k->sigma;
        if (u < margin || v < margin || u > (float)ib->width - 1 - margin ||
            v > (float)ib->height - 1 - margin || r_a > limit_a)
            continue;
        inside++;
        for (int j = 0; j < b->count; j++) {
            const pv_sift_keypoint *m = &b->keypoints[j];
            float ratio = m->sigma / (k->sigma * t->scale);
            if (hypotf(m->x - u, m->y - v) <= 1.5f && ratio > 0.8f && ratio < 1.25f) {
                repeated++;
                break;
            }
        }
    }
    return inside ? (double)repeated / inside : 0.0;
}

static void test_repeatability_vs_vlfeat(void **state)
{
    (void)state;
    const pv_image *a = &g_venus;
    const float cx = 0.5f * (float)(a->width - 1), cy = 0.5f * (float)(a->height - 1);
    const similarity transforms[] = {
        {1.0f, 0.5236f, cx, cy, cx, cy},                  /* 30 degrees */
        {1.5f, 0.0f, cx, cy, 1.5f * cx, 1.5f * cy},       /* x 1.5 */
        {0.8f, 1.2f, cx, cy, cx, cy},                     /* 69 degrees, x 0.8 */
    };
    pv_sift_params params = fast_params();
    for (size_t i = 0; i < sizeof transforms / sizeof transforms[0]; i++) {
        const similarity *t = &transforms[i];
        int wb = (int)(2.0f * t->cx_b + 1.0f), hb = (int)(2.0f * t->cy_b + 1.0f);
        pv_image b = warp_u8(a, t, wb, hb);
        pv_sift_features oa = detect(tu_cpu, a, &params), ob = detect(tu_cpu, &b, &params);
        pv_sift_plan *pa, *pb;
        assert_int_equal(pv_sift_plan_create(tu_cpu, a->width, a->height, &params, &pa), PV_OK);
        assert_int_equal(pv_sift_plan_create(tu_cpu, wb, hb, &params, &pb), PV_OK);
        pv_sift_features va = vlfeat_detect(a, &params, pv_sift_plan_octaves(pa));
        pv_sift_features vb = vlfeat_detect(&b, &params, pv_sift_plan_octaves(pb));
        pv_sift_plan_destroy(pa);
        pv_sift_plan_destroy(pb);
        double ours = repeatability(&oa, &ob, t, a, &b), theirs = repeatability(&va, &vb, t, a, &b);
        printf("    repeatability, scale %.2f rotation %.2f rad: ours %.1f%%, VLFeat %.1f%%\n",
               (double)t->scale, (double)t->angle, 100.0 * ours, 100.0 * theirs);
        assert_true(ours >= theirs - 0.02);
        pv_sift_features_free(&oa);
        pv_sift_features_free(&ob);
        free_plain(&va);
        free_plain(&vb);
        pv_image_free(&b);
    }
}
#endif

/* -------------------------------------------------------------- bad input */

static void test_plan_bad_input(void **state)
{
    (void)state;
    pv_sift_plan *plan = (pv_sift_plan *)&plan;
    pv_sift_plan *const sentinel = plan;
    pv_sift_params p;
    assert_int_equal(pv_sift_plan_create(NULL, 64, 64, NULL, &plan), PV_ERR_INVALID);
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_plan_create(tu_cpu, 15, 64, NULL, &plan), PV_ERR_INVALID);
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 8, NULL, &plan), PV_ERR_INVALID);
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 0, NULL, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.first_octave = 1;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.levels = 0;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.sigma0 = NAN;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.peak_thresh = -1.0f;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.edge_thresh = INFINITY;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.max_keypoints = -3;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    pv_sift_params_default(&p);
    p.octaves = PV_SIFT_MAX_OCTAVES + 1;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_ERR_INVALID);
    assert_ptr_equal(plan, sentinel);
    /* More octaves than the size allows: clamped (64 px upsampled by the
     * default first octave -1: 128 .. 8, five). */
    p.octaves = 12;
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, &p, &plan), PV_OK);
    assert_int_equal(pv_sift_plan_octaves(plan), 5);
    pv_sift_plan_destroy(plan);
    /* The default count keeps the smallest octave >= 16 px: 128 .. 16. */
    assert_int_equal(pv_sift_plan_create(tu_cpu, 64, 64, NULL, &plan), PV_OK);
    assert_int_equal(pv_sift_plan_octaves(plan), 4);
    pv_sift_plan_destroy(plan);
}

static void test_detect_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sift_plan *plan;
    assert_int_equal(pv_sift_plan_create(ctx, 40, 30, NULL, &plan), PV_OK);
    pv_image good, wrong, nan_image;
    assert_int_equal(pv_image_alloc(&good, 40, 30, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&wrong, 41, 30, PV_PIXEL_U8), PV_OK);
    assert_int_equal(pv_image_alloc(&nan_image, 40, 30, PV_PIXEL_F32), PV_OK);
    ((float *)nan_image.data)[17 * 40 + 3] = NAN;
    pv_sift_features f = {.count = -7};
    assert_int_equal(pv_sift_detect(NULL, &good, &f), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect(plan, NULL, &f), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect(plan, &good, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect(plan, &wrong, &f), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect(plan, &nan_image, &f), PV_ERR_INVALID);
    pv_image unknown = good;
    unknown.type = (pv_pixel_type)99;
    assert_int_equal(pv_sift_detect(plan, &unknown, &f), PV_ERR_INVALID);
    ((float *)nan_image.data)[17 * 40 + 3] = INFINITY;
    assert_int_equal(pv_sift_detect(plan, &nan_image, &f), PV_ERR_INVALID);
    assert_int_equal(f.count, -7);
    assert_null(f.keypoints);
    /* pv_sift_detect_into leaves its result alone on bad arguments */
    pv_sift_features kept = {0};
    assert_int_equal(pv_sift_detect_into(plan, &good, &kept), PV_OK);
    const pv_sift_features copy = kept;
    assert_int_equal(pv_sift_detect_into(NULL, &good, &kept), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_into(plan, NULL, &kept), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_into(plan, &good, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_into(plan, &wrong, &kept), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_into(plan, &nan_image, &kept), PV_ERR_INVALID);
    assert_memory_equal(&kept, &copy, sizeof kept);
    pv_sift_features_free(&kept);
    pv_sift_plan_destroy(plan);
    pv_image_free(&good);
    pv_image_free(&wrong);
    pv_image_free(&nan_image);
}

static void test_match_bad_input(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sift_features q = random_descriptors(4, 1u), broken = {.count = 3};
    pv_sift_matches m = {-5, NULL};
    pv_sift_match_params p = {0.0f, 0};
    assert_int_equal(pv_sift_match(NULL, &q, &q, NULL, &m), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match(ctx, NULL, &q, NULL, &m), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match(ctx, &q, &broken, NULL, &m), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match(ctx, &q, &q, NULL, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_match(ctx, &q, &q, &p, &m), PV_ERR_INVALID);
    p.ratio = 1.5f;
    assert_int_equal(pv_sift_match(ctx, &q, &q, &p, &m), PV_ERR_INVALID);
    p.ratio = NAN;
    assert_int_equal(pv_sift_match(ctx, &q, &q, &p, &m), PV_ERR_INVALID);
    p.ratio = 0.8f;
    p.mutual = 2;
    assert_int_equal(pv_sift_match(ctx, &q, &q, &p, &m), PV_ERR_INVALID);
    assert_int_equal(m.count, -5);
    pv_sift_agreement ag;
    assert_int_equal(pv_sift_compare(&q, NULL, 1.0f, 0.1f, 0.1f, &ag), PV_ERR_INVALID);
    assert_int_equal(pv_sift_compare(&q, &q, -1.0f, 0.1f, 0.1f, &ag), PV_ERR_INVALID);
    free_plain(&q);
}

/* The presets: FAST is the paper's settings, REFERENCE the defaults. */
static void test_presets(void **state)
{
    (void)state;
    pv_sift_params fast, reference, defaults;
    assert_int_equal(pv_sift_params_preset(&fast, PV_SIFT_PRESET_FAST), PV_OK);
    assert_int_equal(pv_sift_params_preset(&reference, PV_SIFT_PRESET_REFERENCE), PV_OK);
    pv_sift_params_default(&defaults);
    assert_memory_equal(&reference, &defaults, sizeof defaults);
    assert_int_equal(fast.first_octave, 0);
    assert_float_equal(fast.peak_thresh, 0.01f, 0.0f);
    assert_int_equal(reference.first_octave, -1);
    assert_float_equal(reference.peak_thresh, PV_SIFT_REFERENCE_PEAK_THRESH, 0.0f);
    assert_int_equal(fast.levels, 3);
    assert_float_equal(fast.sigma0, 1.6f, 0.0f);
    pv_sift_params untouched = fast;
    assert_int_equal(pv_sift_params_preset(&untouched, (pv_sift_preset)7), PV_ERR_INVALID);
    assert_memory_equal(&untouched, &fast, sizeof fast);
    assert_int_equal(pv_sift_params_preset(NULL, PV_SIFT_PRESET_FAST), PV_ERR_INVALID);
}

/* ------------------------------------------------------------------ batches */

/* Each results[i] exactly what a single call on a plan of the same
 * settings gives for images[i] (the batch's promise on both backends). */
static void assert_batch_is_singles(pv_sift_plan *plan, const pv_image *images, int count,
                                    const pv_sift_features *results)
{
    for (int i = 0; i < count; i++) {
        pv_sift_features single;
        assert_int_equal(pv_sift_detect(plan, &images[i], &single), PV_OK);
        assert_same_features(&results[i], &single);
        assert_memory_equal(results[i].descriptors_u8, single.descriptors_u8,
                            (size_t)single.count * 128);
        assert_true(results[i].capacity >= results[i].count);
        pv_sift_features_free(&single);
    }
}

enum { BATCH_FRAMES = 7 }; /* more than the OpenCL backend's lanes */

/* Frames of different content: crops of venus at different places, a flat
 * one (no keypoints) in the middle. */
static void batch_frames(pv_image *frames, int w, int h)
{
    static const int corner[BATCH_FRAMES][2] = {{10, 20},  {150, 90}, {220, 200}, {0, 0},
                                                 {60, 160}, {240, 10}, {120, 250}};
    for (int i = 0; i < BATCH_FRAMES; i++) {
        if (i == 3) {
            assert_int_equal(pv_image_alloc(&frames[i], w, h, PV_PIXEL_U8), PV_OK);
            memset(frames[i].data, 90, (size_t)w * (size_t)h);
        } else {
            frames[i] = crop_u8(&g_venus, corner[i][0], corner[i][1], w, h);
        }
    }
}

/* Detections under every setting of the launch parameter `name` (the
 * last must be the default: it stays set afterwards) agree exactly with the first
 * setting's: single images at both first octaves and a batch chunk side by
 * side.  The pass being switched must give the same bits either way. */
static void assert_setting_keeps_results(pv_context *cl, const char *name, const int *settings,
                                         int count)
{
    enum { MAX_SETTINGS = 4 };
    assert_true(count >= 2 && count <= MAX_SETTINGS);
    pv_sift_params params = fast_params();
    pv_image a = crop_u8(&g_venus, 20, 30, 400, 330);
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, 160, 120);
    pv_sift_features single[MAX_SETTINGS][2], batch[MAX_SETTINGS][BATCH_FRAMES];
    memset(batch, 0, sizeof batch);
    for (int s = 0; s < count; s++) {
        assert_int_equal(pv_tune_set(cl, "features", name, settings[s]), PV_OK);
        for (int first = -1; first <= 0; first++) {
            params.first_octave = first;
            single[s][first + 1] = detect(cl, &a, &params);
        }
        pv_sift_plan *plan = NULL;
        assert_int_equal(pv_sift_plan_create(cl, 160, 120, NULL, &plan), PV_OK);
        assert_int_equal(pv_sift_detect_batch(plan, frames, BATCH_FRAMES, batch[s]), PV_OK);
        pv_sift_plan_destroy(plan);
    }
    for (int s = 1; s < count; s++) {
        for (int k = 0; k < 2; k++)
            assert_same_features(&single[s][k], &single[0][k]);
        for (int i = 0; i < BATCH_FRAMES; i++)
            assert_same_features(&batch[s][i], &batch[0][i]);
    }
    printf("    %s: %d and %d keypoints (first octave -1, 0), %d in the batch's first frame\n",
           name, single[0][0].count, single[0][1].count, batch[0][0].count);
    assert_true(single[0][0].count > 100 && single[0][1].count > 50); /* not empty */
    for (int s = 0; s < count; s++) {
        for (int k = 0; k < 2; k++)
            pv_sift_features_free(&single[s][k]);
        for (int i = 0; i < BATCH_FRAMES; i++)
            pv_sift_features_free(&batch[s][i]);
    }
    for (int i = 0; i < BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    pv_image_free(&a);
}

/* The small octaves' fused tile pass (both blur passes in one launch)
 * gives the same bits as the row and column passes: detections with it
 * off (SIFT_TILE_GROUPS 0), with every octave fused and with the device's
 * default (the smallest octaves fused) agree exactly. */
static void test_fused_tile_pass(void **state)
{
    (void)state;
    const int settings[] = {0, 100000, 2};
    assert_setting_keeps_results(tu_opencl_or_skip(), "SIFT_TILE_GROUPS", settings, 3);
}

/* The blur weights as literals of the program (SIFT_WEIGHT_LITERALS 1,
 * the default) give the same bits as weights read from a buffer (0); and
 * a plan whose weights are too many for the build options (sigma0 4: about
 * 300 taps, more than 4 KiB of literals) reads them from the buffer and
 * still matches the CPU backend. */
static void test_weight_literals(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int settings[] = {0, 1};
    assert_setting_keeps_results(cl, "SIFT_WEIGHT_LITERALS", settings, 2);
    pv_sift_params params = fast_params();
    params.sigma0 = 4.0f;
    pv_image a = crop_u8(&g_venus, 40, 20, 240, 200);
    pv_sift_features fc = detect(tu_cpu, &a, &params), fg = detect(cl, &a, &params);
    assert_true(fc.count > 10); /* not empty */
    assert_backends_agree(&fg, &fc, "venus crop, sigma0 4 (weights from a buffer)");
    pv_sift_features_free(&fc);
    pv_sift_features_free(&fg);
    pv_image_free(&a);
}

/* The OpenCL result's copy out of the pinned stage (floats and their u8
 * form) gives the same arrays on one thread and on several: a result of
 * about 4500 keypoints (2.3 MB of descriptors, above the size from which
 * the copy takes threads) and a batch of crops of it (about 1000 keypoints
 * each, so a chunk's copy takes threads too), each detected with OpenMP at
 * 16 and at 1 thread.  Machines with few cores would otherwise only ever
 * run the one-thread copy. */
static void test_copy_threads_keep_results(void **state)
{
    (void)state;
#ifndef _OPENMP
    skip();
#else
    pv_context *cl = tu_opencl_or_skip();
    pv_image image = block_noise(320, 240);
    pv_image frames[BATCH_FRAMES];
    for (int i = 0; i < BATCH_FRAMES; i++)
        frames[i] = crop_u8(&image, 20 * i, 15 * i, 160, 120);
    pv_sift_params params = fast_params();
    params.first_octave = -1;
    /* Fresh plans for each setting, the threaded one first: a copy that
     * missed a descriptor must not find the right one left in storage by
     * an earlier call. */
    const int saved = omp_get_max_threads(), threads[2] = {16, 1};
    pv_sift_features single[2], batch[2][BATCH_FRAMES];
    memset(batch, 0, sizeof batch);
    for (int t = 0; t < 2; t++) {
        pv_sift_plan *plan = NULL, *batch_plan = NULL;
        assert_int_equal(pv_sift_plan_create(cl, image.width, image.height, &params, &plan),
                         PV_OK);
        assert_int_equal(pv_sift_plan_create(cl, 160, 120, &params, &batch_plan), PV_OK);
        omp_set_num_threads(threads[t]);
        assert_int_equal(pv_sift_detect(plan, &image, &single[t]), PV_OK);
        assert_int_equal(pv_sift_detect_batch(batch_plan, frames, BATCH_FRAMES, batch[t]), PV_OK);
        omp_set_num_threads(saved);
        pv_sift_plan_destroy(batch_plan);
        pv_sift_plan_destroy(plan);
    }
    assert_true(single[0].count > 1536); /* descriptors above 768 KiB */
    assert_same_features(&single[1], &single[0]);
    assert_memory_equal(single[1].descriptors_u8, single[0].descriptors_u8,
                        (size_t)single[0].count * 128);
    assert_u8_of_floats(&single[0]);
    for (int i = 0; i < BATCH_FRAMES; i++) {
        assert_same_features(&batch[1][i], &batch[0][i]);
        assert_memory_equal(batch[1][i].descriptors_u8, batch[0][i].descriptors_u8,
                            (size_t)batch[0][i].count * 128);
        assert_u8_of_floats(&batch[0][i]);
    }
    printf("    %d keypoints, %d in the batch's first frame, at 16 and 1 threads\n",
           single[0].count, batch[0][0].count);
    for (int t = 0; t < 2; t++) {
        pv_sift_features_free(&single[t]);
        for (int i = 0; i < BATCH_FRAMES; i++)
            pv_sift_features_free(&batch[t][i]);
    }
    for (int i = 0; i < BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    pv_image_free(&image);
#endif
}

/* The kernel timing setting (pv_context_set_kernel_timing): bad settings
 * are refused and leave it as it was; a detection and a batch (two queues,
 * waits between chunks) give the same results timed by runs of kernels
 * (the default) and kernel by kernel, with a kernel time in both.  A single
 * call's kernel time lies within its end-to-end time either way, and the
 * runs' figure is not far below the per-kernel sum: on an in-order queue a
 * run spans at least its kernels' own times, and half allows for the two
 * figures coming from separate calls, whose times vary on a busy CPU. */
static void test_kernel_timing(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    assert_int_equal(pv_context_kernel_timing(cl), PV_KERNEL_TIMING_RUNS);
    assert_int_equal(pv_context_kernel_timing(NULL), PV_KERNEL_TIMING_RUNS);
    assert_int_equal(pv_context_set_kernel_timing(NULL, PV_KERNEL_TIMING_EACH), PV_ERR_INVALID);
    assert_int_equal(pv_context_set_kernel_timing(cl, (pv_kernel_timing)7), PV_ERR_INVALID);
    assert_int_equal(pv_context_kernel_timing(cl), PV_KERNEL_TIMING_RUNS);
    assert_int_equal(pv_context_set_kernel_timing(tu_cpu, PV_KERNEL_TIMING_EACH), PV_OK);
    assert_int_equal(pv_context_kernel_timing(tu_cpu), PV_KERNEL_TIMING_EACH);
    assert_int_equal(pv_context_set_kernel_timing(tu_cpu, PV_KERNEL_TIMING_RUNS), PV_OK);
    pv_sift_params params = fast_params();
    pv_image a = crop_u8(&g_venus, 20, 30, 400, 330);
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, 160, 120);
    pv_sift_plan *plan = NULL, *batch_plan = NULL;
    assert_int_equal(pv_sift_plan_create(cl, a.width, a.height, &params, &plan), PV_OK);
    assert_int_equal(pv_sift_plan_create(cl, 160, 120, NULL, &batch_plan), PV_OK);
    const pv_kernel_timing modes[2] = {PV_KERNEL_TIMING_RUNS, PV_KERNEL_TIMING_EACH};
    pv_sift_features single[2], batch[2][BATCH_FRAMES];
    memset(batch, 0, sizeof batch);
    pv_timing single_t[2], batch_t[2];
    for (int m = 0; m < 2; m++) {
        assert_int_equal(pv_context_set_kernel_timing(cl, modes[m]), PV_OK);
        assert_int_equal(pv_sift_detect(plan, &a, &single[m]), PV_OK); /* warm */
        pv_sift_features_free(&single[m]);
        assert_int_equal(pv_sift_detect(plan, &a, &single[m]), PV_OK);
        assert_int_equal(pv_context_last_timing(cl, &single_t[m]), PV_OK);
        assert_int_equal(pv_sift_detect_batch(batch_plan, frames, BATCH_FRAMES, batch[m]), PV_OK);
        assert_int_equal(pv_context_last_timing(cl, &batch_t[m]), PV_OK);
    }
    assert_int_equal(pv_context_set_kernel_timing(cl, PV_KERNEL_TIMING_RUNS), PV_OK);
    assert_true(single[0].count > 50); /* not empty */
    assert_same_features(&single[1], &single[0]);
    for (int i = 0; i < BATCH_FRAMES; i++)
        assert_same_features(&batch[1][i], &batch[0][i]);
    for (int m = 0; m < 2; m++) {
        printf("    %s: single %.3f of %.3f ms, batch %.3f of %.3f ms\n",
               m ? "each kernel" : "runs", single_t[m].kernel_ms, single_t[m].total_ms,
               batch_t[m].kernel_ms, batch_t[m].total_ms);
        assert_true(single_t[m].kernel_ms > 0.0);
        assert_true(single_t[m].kernel_ms <= single_t[m].total_ms);
        assert_true(batch_t[m].kernel_ms > 0.0);
    }
    assert_true(single_t[0].kernel_ms >= 0.5 * single_t[1].kernel_ms);
    for (int m = 0; m < 2; m++) {
        pv_sift_features_free(&single[m]);
        for (int i = 0; i < BATCH_FRAMES; i++)
            pv_sift_features_free(&batch[m][i]);
    }
    pv_sift_plan_destroy(batch_plan);
    pv_sift_plan_destroy(plan);
    for (int i = 0; i < BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    pv_image_free(&a);
}

/* Batches of 7, 2 (into the first two results of the 7), 7 again (five
 * of them holding the older, larger batch's results) and 1: every result
 * is a single call's, whatever its storage held before. */
static void test_detect_batch(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 160, h = 120;
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, w, h);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &plan), PV_OK);
    pv_sift_features batch[BATCH_FRAMES] = {{0}};
    const int sizes[] = {BATCH_FRAMES, 2, BATCH_FRAMES, 1};
    for (size_t round = 0; round < sizeof sizes / sizeof sizes[0]; round++) {
        const int n = sizes[round];
        const int first = round == 1 ? 4 : 0; /* the 2-batch: frames 4 and 5 */
        assert_int_equal(pv_sift_detect_batch(plan, frames + first, n, batch), PV_OK);
        assert_batch_is_singles(plan, frames + first, n, batch);
        pv_timing timing;
        assert_int_equal(pv_sift_detect_batch(plan, frames + first, n, batch), PV_OK);
        assert_int_equal(pv_context_last_timing(ctx, &timing), PV_OK);
        assert_true(timing.total_ms > 0.0);
        if (pv_context_backend(ctx) == PV_BACKEND_OPENCL)
            assert_true(timing.kernel_ms > 0.0);
    }
    assert_int_equal(batch[3].count, 0); /* the flat frame, from the 7-batch */
    const pv_sift_keypoint *kept = batch[0].keypoints;
    assert_int_equal(pv_sift_detect_batch(plan, frames, 0, batch), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_batch(plan, frames, -1, batch), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_batch(plan, NULL, 2, batch), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_batch(plan, frames, 2, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_sift_detect_batch(NULL, frames, 2, batch), PV_ERR_INVALID);
    pv_image mixed[2] = {frames[0], crop_u8(&g_venus, 0, 0, w + 1, h)};
    assert_int_equal(pv_sift_detect_batch(plan, mixed, 2, batch), PV_ERR_INVALID);
    assert_ptr_equal(batch[0].keypoints, kept); /* untouched */
    pv_image_free(&mixed[1]);
    for (int i = 0; i < BATCH_FRAMES; i++) {
        pv_sift_features_free(&batch[i]);
        pv_image_free(&frames[i]);
    }
    pv_sift_plan_destroy(plan);
}

/* A batch on a fresh plan where one image has far more keypoints than the
 * others (block noise: about 2000 at 200x160 upsampled, more than the
 * lists a fresh OpenCL plan starts with, 1024 at this size): the lists
 * grow inside the batch and every result is still a single call's, in
 * that batch and in the next (whose buffers start grown).  On OpenCL the
 * noise is in the first of three chunks of 3, 3 and 1, so the third chunk
 * goes on the first chunk's buffers after they grew. */
static void test_batch_grows_lists(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 200, h = 160;
    enum { N = 7 };
    pv_image frames[N] = {crop_u8(&g_venus, 40, 30, w, h),   crop_u8(&g_venus, 150, 180, w, h),
                          block_noise(w, h),                 crop_u8(&g_venus, 10, 200, w, h),
                          crop_u8(&g_venus, 200, 60, w, h),  crop_u8(&g_venus, 120, 120, w, h),
                          crop_u8(&g_venus, 230, 220, w, h)};
    pv_sift_plan *plan = NULL, *oracle = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &plan), PV_OK);
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &oracle), PV_OK);
    pv_sift_features batch[N] = {{0}};
    for (int round = 0; round < 2; round++) {
        assert_int_equal(pv_sift_detect_batch(plan, frames, N, batch), PV_OK);
        assert_true(batch[2].count > 1024);
        assert_true(batch[2].count > 4 * batch[0].count);
        assert_batch_is_singles(oracle, frames, N, batch);
    }
    for (int i = 0; i < N; i++) {
        pv_sift_features_free(&batch[i]);
        pv_image_free(&frames[i]);
    }
    pv_sift_plan_destroy(oracle);
    pv_sift_plan_destroy(plan);
}

/* Results after the result staging grows: on a fresh plan, a batch of
 * smooth frames (few keypoints), then a batch of block noise (far more,
 * beyond the lists and the pinned stage the first batch made), then the
 * smooth frames again, and single calls the same way round: every result
 * a fresh plan's single call's.  The noise frames' counts differ from the
 * venus frame's among them by more than the padding a rectangular read
 * may carry, so their chunk comes down image by image, the smooth ones'
 * in one read per array; a noise frame's single result (over 4096
 * keypoints) comes down in several pieces that the host copies out as
 * they arrive. */
static void test_batch_after_stage_grows(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 320, h = 240;
    enum { N = 4 };
    pv_image smooth[N] = {crop_u8(&g_venus, 0, 0, w, h), crop_u8(&g_venus, 100, 100, w, h),
                          crop_u8(&g_venus, 50, 120, w, h), crop_u8(&g_venus, 114, 20, w, h)};
    pv_image noisy[N] = {block_noise(w, h), crop_u8(&g_venus, 80, 60, w, h), block_noise(w, h),
                         block_noise(w, h)};
    pv_sift_plan *plan = NULL, *oracle = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &plan), PV_OK);
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &oracle), PV_OK);
    pv_sift_features batch[N] = {{0}}, single = {0};
    const pv_image *rounds[] = {smooth, noisy, smooth};
    for (int r = 0; r < 3; r++) {
        assert_int_equal(pv_sift_detect_batch(plan, rounds[r], N, batch), PV_OK);
        assert_batch_is_singles(oracle, rounds[r], N, batch);
    }
    assert_true(batch[0].count < 1024);
    assert_true(batch[0].count > 0);
    pv_sift_plan *fresh = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, NULL, &fresh), PV_OK);
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < N; i++) {
            assert_int_equal(pv_sift_detect_into(fresh, &rounds[r][i], &single), PV_OK);
            assert_batch_is_singles(oracle, &rounds[r][i], 1, &single);
            if (r == 1 && i == 0)
                assert_true(single.count > 4096);
        }
    pv_sift_features_free(&single);
    for (int i = 0; i < N; i++) {
        pv_sift_features_free(&batch[i]);
        pv_image_free(&smooth[i]);
        pv_image_free(&noisy[i]);
    }
    pv_sift_plan_destroy(fresh);
    pv_sift_plan_destroy(oracle);
    pv_sift_plan_destroy(plan);
}

/* The OpenCL batch against the CPU batch, image by image, within the
 * cross-check tolerances (PV_SIFT_POSITION_TOLERANCE, ...). */
static void test_batch_cl_matches_cpu(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int w = 160, h = 120;
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, w, h);
    pv_sift_params params = fast_params();
    pv_sift_plan *on_cl = NULL, *on_cpu = NULL;
    assert_int_equal(pv_sift_plan_create(cl, w, h, &params, &on_cl), PV_OK);
    assert_int_equal(pv_sift_plan_create(tu_cpu, w, h, &params, &on_cpu), PV_OK);
    pv_sift_features a[BATCH_FRAMES] = {{0}}, b[BATCH_FRAMES] = {{0}};
    assert_int_equal(pv_sift_detect_batch(on_cl, frames, BATCH_FRAMES, a), PV_OK);
    assert_int_equal(pv_sift_detect_batch(on_cpu, frames, BATCH_FRAMES, b), PV_OK);
    for (int i = 0; i < BATCH_FRAMES; i++) {
        char what[64];
        snprintf(what, sizeof what, "batch image %d", i);
        if (b[i].count == 0)
            assert_int_equal(a[i].count, 0);
        else
            assert_backends_agree(&a[i], &b[i], what);
        pv_sift_features_free(&a[i]);
        pv_sift_features_free(&b[i]);
        pv_image_free(&frames[i]);
    }
    pv_sift_plan_destroy(on_cl);
    pv_sift_plan_destroy(on_cpu);
}

/* The OpenCL batch with chunks of 1 (the loop of single detections), 2,
 * 7 (the whole batch) and 64 (more than the batch): each result a single
 * call's.  A chunk size outside 1..64 is refused. */
static void test_batch_chunk_sizes(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int w = 160, h = 120;
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, w, h);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(cl, w, h, NULL, &plan), PV_OK);
    const int chunks[] = {1, 2, BATCH_FRAMES, 64};
    pv_sift_features batch[BATCH_FRAMES] = {{0}};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", chunks[k]), PV_OK);
        assert_int_equal(pv_sift_detect_batch(plan, frames, BATCH_FRAMES, batch), PV_OK);
        assert_batch_is_singles(plan, frames, BATCH_FRAMES, batch);
    }
    /* Negative values are refused when set; 0 and values past 64 when a
     * batch meets them. */
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", -2), PV_ERR_INVALID);
    const int bad[] = {0, 65};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", bad[k]), PV_OK);
        assert_int_equal(pv_sift_detect_batch(plan, frames, 2, batch), PV_ERR_INVALID);
        assert_non_null(strstr(pv_context_last_error(cl), "SIFT_BATCH_CHUNK"));
        /* A failed batch leaves no result half-written: all are freed. */
        assert_null(batch[0].keypoints);
        assert_int_equal(batch[1].count, 0);
    }
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK), PV_OK);
    for (int i = 0; i < BATCH_FRAMES; i++) {
        pv_sift_features_free(&batch[i]);
        pv_image_free(&frames[i]);
    }
    pv_sift_plan_destroy(plan);
}

/* The commands of one batch call of `count` frames on a warm plan. */
static long batch_commands(pv_context *cl, pv_sift_plan *plan, const pv_image *frames, int count,
                           pv_sift_features *batch)
{
#ifdef PV_HAVE_OPENCL
    const long before = pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE);
    assert_int_equal(pv_sift_detect_batch(plan, frames, count, batch), PV_OK);
    return pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE) - before;
#else
    (void)cl, (void)plan, (void)frames, (void)count, (void)batch;
    return 0;
#endif
}

/* A chunk costs the commands of one image: a batch of 3 images in one
 * chunk enqueues no more commands than one single detection and 4 (the
 * single call reads its totals and three arrays; the chunk the same, as
 * one read of all totals and one read per array, and the chunk's results
 * may need one stage map more).  A batch of 6 that would fit one chunk
 * runs as two halves of 3 (so that one half's results come down while the
 * other's kernels run): twice that.  Counted with the fault injector's
 * enqueue counter; the same plan is warm for all. */
static void test_batch_launches_per_chunk(void **state)
{
    (void)state;
#ifdef PV_HAVE_OPENCL
    pv_context *cl = tu_opencl_or_skip();
    const int w = 160, h = 120, n = 6;
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, w, h);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(cl, w, h, NULL, &plan), PV_OK);
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", n), PV_OK);
    pv_sift_features single = {0}, batch[BATCH_FRAMES] = {{0}};
    /* Warm: lists grown, stages made. */
    assert_int_equal(pv_sift_detect_into(plan, &frames[0], &single), PV_OK);
    assert_int_equal(pv_sift_detect_batch(plan, frames, n, batch), PV_OK);
    assert_int_equal(pv_sift_detect_batch(plan, frames, n / 2, batch), PV_OK);
    long before = pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE);
    assert_int_equal(pv_sift_detect_into(plan, &frames[0], &single), PV_OK);
    const long per_single = pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE) - before;
    const long per_chunk = batch_commands(cl, plan, frames, n / 2, batch);
    const long halves = batch_commands(cl, plan, frames, n, batch);
    printf("    enqueued commands: %ld for one image, %ld for a chunk of %d, %ld for %d images"
           " in two halves\n", per_single, per_chunk, n / 2, halves, n);
    assert_true(per_single > 10);
    assert_true(per_chunk <= per_single + 4);
    assert_true(halves <= 2 * (per_single + 4));
    assert_batch_is_singles(plan, frames, n, batch);
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK), PV_OK);
    pv_sift_features_free(&single);
    for (int i = 0; i < BATCH_FRAMES; i++) {
        pv_sift_features_free(&batch[i]);
        pv_image_free(&frames[i]);
    }
    pv_sift_plan_destroy(plan);
#else
    skip();
#endif
}

/* From 8 images on a batch runs in at least four chunks of at least 4
 * images (backends/opencl/features/features_batch.c, most_per_chunk): 9 frames with
 * the chunk parameter at 8 run as chunks of 4, 4 and 1: as many commands
 * as with the parameter at 4, and more than two chunks (8 and 1, what the
 * parameter alone would give) take; every result is a single call's. */
static void test_batch_quarters(void **state)
{
    (void)state;
#ifdef PV_HAVE_OPENCL
    pv_context *cl = tu_opencl_or_skip();
    enum { QUARTER_FRAMES = 9 };
    const int w = 160, h = 120;
    pv_image frames[QUARTER_FRAMES];
    batch_frames(frames, w, h);
    /* two of the frames again, so that the batch has more than BATCH_FRAMES */
    frames[BATCH_FRAMES] = frames[0];
    frames[BATCH_FRAMES + 1] = frames[2];
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(cl, w, h, NULL, &plan), PV_OK);
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", 8), PV_OK);
    pv_sift_features single = {0}, batch[QUARTER_FRAMES] = {{0}};
    /* Warm: lists grown, stages made. */
    assert_int_equal(pv_sift_detect_into(plan, &frames[0], &single), PV_OK);
    assert_int_equal(pv_sift_detect_batch(plan, frames, QUARTER_FRAMES, batch), PV_OK);
    const long before = pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE);
    assert_int_equal(pv_sift_detect_into(plan, &frames[0], &single), PV_OK);
    const long per_single = pv_cl_fault_calls(cl, PV_CL_FAULT_ENQUEUE) - before;
    const long work = batch_commands(cl, plan, frames, QUARTER_FRAMES, batch);
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", 4), PV_OK);
    const long fours = batch_commands(cl, plan, frames, QUARTER_FRAMES, batch);
    printf("    enqueued commands: %ld for one image, %ld for %d images at chunk 8, %ld at 4\n",
           per_single, work, QUARTER_FRAMES, fours);
    assert_int_equal(work, fours);
    assert_true(work > 2 * (per_single + 4));
    assert_batch_is_singles(plan, frames, QUARTER_FRAMES, batch);
    assert_int_equal(pv_tune_set(cl, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK), PV_OK);
    pv_sift_features_free(&single);
    for (int i = 0; i < QUARTER_FRAMES; i++)
        pv_sift_features_free(&batch[i]);
    for (int i = 0; i < BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    pv_sift_plan_destroy(plan);
#else
    skip();
#endif
}

/* The commands a fresh context enqueues to make a plan (*setup) and then
 * to run a batch of `count` frames on it in chunks of BATCH_TEST_CHUNK
 * (*work). */
static void count_batch_commands(const pv_image *frames, int count, long *setup, long *work)
{
#ifdef PV_HAVE_OPENCL
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    assert_int_equal(pv_tune_set(ctx, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK), PV_OK);
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, frames[0].width, frames[0].height, NULL, &plan),
                     PV_OK);
    *setup = pv_cl_fault_calls(ctx, PV_CL_FAULT_ENQUEUE);
    pv_sift_features batch[BATCH_FRAMES] = {{0}};
    assert_int_equal(pv_sift_detect_batch(plan, frames, count, batch), PV_OK);
    *work = pv_cl_fault_calls(ctx, PV_CL_FAULT_ENQUEUE) - *setup;
    for (int i = 0; i < count; i++)
        pv_sift_features_free(&batch[i]);
    pv_sift_plan_destroy(plan);
    pv_context_destroy(ctx);
#else
    (void)frames, (void)count;
    *setup = *work = 0;
#endif
}

/* A result that a failed call freed and zeroed (none half-written). */
static void assert_freed(const pv_sift_features *f)
{
    assert_int_equal(f->count, 0);
    assert_int_equal(f->capacity, 0);
    assert_null(f->keypoints);
    assert_null(f->descriptors);
    assert_null(f->descriptors_u8);
}

/* A new OpenCL context whose `command`-th enqueued command fails
 * (PARVIS_FAULT=enqueue:N), counted from the context's creation. */
static pv_context *faulty_context_at(long command)
{
    char spec[64];
    snprintf(spec, sizeof spec, "enqueue:%ld", command);
    pv_context *faulty = tu_fault_context(spec);
    assert_non_null(faulty);
    return faulty;
}

/* A device failure during an OpenCL batch (an enqueued command refused,
 * PARVIS_FAULT=enqueue:N, N counted on a healthy context: the batch's
 * first command, one half-way through (in its second of three chunks,
 * after the first chunk's results were written), its last result read
 * and its last command, the marker after the reads on the plan's transfer
 * queue): the call fails saying so, every result is freed and zeroed (none
 * half-written), and the context and plan work again afterwards. */
static void test_batch_fails_whole(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    const int w = 160, h = 120;
    pv_image frames[BATCH_FRAMES];
    batch_frames(frames, w, h);
    long setup = 0, work = 0;
    count_batch_commands(frames, BATCH_FRAMES, &setup, &work);
    pv_sift_plan *healthy = NULL;
    assert_int_equal(pv_sift_plan_create(cl, w, h, NULL, &healthy), PV_OK);
    const long points[] = {setup + 1, setup + work / 2, setup + work - 1, setup + work};
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        pv_context *faulty = faulty_context_at(points[p]);
        assert_int_equal(pv_tune_set(faulty, "features", "SIFT_BATCH_CHUNK", BATCH_TEST_CHUNK),
                         PV_OK);
        pv_sift_plan *plan = NULL;
        assert_int_equal(pv_sift_plan_create(faulty, w, h, NULL, &plan), PV_OK);
        pv_sift_features batch[BATCH_FRAMES] = {{0}};
        assert_int_equal(pv_sift_detect_batch(healthy, frames, BATCH_FRAMES, batch), PV_OK);
        assert_int_equal(pv_sift_detect_batch(plan, frames, BATCH_FRAMES, batch), PV_ERR_OPENCL);
        assert_non_null(strstr(pv_context_last_error(faulty), "PARVIS_FAULT"));
        for (int i = 0; i < BATCH_FRAMES; i++)
            assert_freed(&batch[i]);
        assert_int_equal(pv_sift_detect_batch(plan, frames, BATCH_FRAMES, batch), PV_OK);
        assert_batch_is_singles(healthy, frames, BATCH_FRAMES, batch);
        for (int i = 0; i < BATCH_FRAMES; i++)
            pv_sift_features_free(&batch[i]);
        pv_sift_plan_destroy(plan);
        pv_context_destroy(faulty);
    }
    for (int i = 0; i < BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    pv_sift_plan_destroy(healthy);
}

/* The commands a fresh context enqueues to make a plan and warm it with
 * one detection of `image` (*setup), then for a second detection (*work). */
static void count_single_commands(const pv_image *image, long *setup, long *work)
{
#ifdef PV_HAVE_OPENCL
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    assert_non_null(ctx);
    pv_sift_plan *plan = NULL;
    pv_sift_features result = {0};
    assert_int_equal(pv_sift_plan_create(ctx, image->width, image->height, NULL, &plan), PV_OK);
    assert_int_equal(pv_sift_detect_into(plan, image, &result), PV_OK);
    *setup = pv_cl_fault_calls(ctx, PV_CL_FAULT_ENQUEUE);
    assert_int_equal(pv_sift_detect_into(plan, image, &result), PV_OK);
    *work = pv_cl_fault_calls(ctx, PV_CL_FAULT_ENQUEUE) - *setup;
    pv_sift_features_free(&result);
    pv_sift_plan_destroy(plan);
    pv_context_destroy(ctx);
#else
    (void)image;
    *setup = *work = 0;
#endif
}

/* A device failure during a single detection's result reads (the fault
 * injector refusing the descriptors' read, the last command, the keys'
 * and the keypoints' before it; block noise gives over 4096 keypoints, a
 * result larger than the stage's first size):
 * pv_sift_detect_into fails saying so and frees and zeroes its result,
 * pv_sift_detect leaves its output untouched, and the plan works again. */
static void test_single_fails_at_result_read(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_image noise = block_noise(320, 240);
    long setup = 0, work = 0;
    count_single_commands(&noise, &setup, &work);
    pv_sift_plan *healthy = NULL;
    pv_sift_features expected = {0};
    assert_int_equal(pv_sift_plan_create(cl, noise.width, noise.height, NULL, &healthy), PV_OK);
    assert_int_equal(pv_sift_detect(healthy, &noise, &expected), PV_OK);
    assert_true(expected.count > 4096);
    /* The reads, last: keypoints, keys, descriptors. */
    const long points[] = {setup + work, setup + work - 1, setup + work - 2};
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        for (int into = 0; into < 2; into++) {
            pv_context *faulty = faulty_context_at(points[p]);
            pv_sift_plan *plan = NULL;
            pv_sift_features result = {0};
            assert_int_equal(pv_sift_plan_create(faulty, noise.width, noise.height, NULL, &plan),
                             PV_OK);
            assert_int_equal(pv_sift_detect_into(plan, &noise, &result), PV_OK);
            if (into) {
                assert_int_equal(pv_sift_detect_into(plan, &noise, &result), PV_ERR_OPENCL);
                assert_freed(&result);
            } else {
                pv_sift_features untouched = result;
                assert_int_equal(pv_sift_detect(plan, &noise, &result), PV_ERR_OPENCL);
                assert_memory_equal(&untouched, &result, sizeof result);
            }
            assert_non_null(strstr(pv_context_last_error(faulty), "PARVIS_FAULT"));
            assert_non_null(strstr(pv_context_last_error(faulty), "clEnqueueReadBuffer"));
            assert_int_equal(pv_sift_detect_into(plan, &noise, &result), PV_OK);
            assert_batch_is_singles(healthy, &noise, 1, &result);
            pv_sift_features_free(&result);
            pv_sift_plan_destroy(plan);
            pv_context_destroy(faulty);
        }
    }
    pv_sift_features_free(&expected);
    pv_sift_plan_destroy(healthy);
    pv_image_free(&noise);
}

/* ------------------------------------------------- colour and 16-bit input */

/* A colour picture made from venus: three differently shifted views as R,
 * G and B, so its luma is a genuine mix of channels.  deep: 16-bit samples
 * (the 8-bit ones times 257). */
static pv_image venus_colour(int x0, int y0, int w, int h, int deep)
{
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, w, h, deep ? PV_PIXEL_RGB16 : PV_PIXEL_RGB8), PV_OK);
    const int shift[3][2] = {{0, 0}, {3, 1}, {-2, 4}};
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                int v = (int)pv_image_get(&g_venus, x0 + x + shift[c][0], y0 + y + shift[c][1]);
                v = c == 2 ? 255 - v : v;
                size_t i = 3 * ((size_t)y * (size_t)w + (size_t)x) + (size_t)c;
                if (deep)
                    ((uint16_t *)out.data)[i] = (uint16_t)(v * 257);
                else
                    ((uint8_t *)out.data)[i] = (uint8_t)v;
            }
    return out;
}

/* pv_to_grey's image (on the CPU) scaled to SIFT's [0, 1] as u8 input is:
 * what SIFT computes from colour or 16-bit input before its pyramid. */
static pv_image grey_unit_of(const pv_image *image)
{
    pv_image grey;
    assert_int_equal(pv_image_alloc(&grey, image->width, image->height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_to_grey(tu_cpu, image, &grey), PV_OK);
    for (size_t i = 0; i < (size_t)image->width * (size_t)image->height; i++)
        ((float *)grey.data)[i] *= 1.0f / 255.0f;
    return grey;
}

/* Frees count results and image_count images. */
static void free_all(pv_sift_features *results, int count, pv_image *images, int image_count)
{
    for (int i = 0; i < count; i++)
        pv_sift_features_free(&results[i]);
    for (int i = 0; i < image_count; i++)
        pv_image_free(&images[i]);
}


/* A batch mixing every input type (8- and 16-bit colour, whose grey the
 * OpenCL backend makes on the device, u8, f32, a window with stride >
 * width) over two OpenCL chunks, then one of float frames only: each
 * result a single call's. */
static void test_batch_mixed_inputs(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    const int w = 160, h = 120;
    pv_image grey = crop_u8(&g_venus, 60, 40, w, h);
    pv_image frames[5] = {venus_colour(20, 30, w, h, 0), grey, venus_colour(90, 120, w, h, 1),
                          to_f32(&grey), window_of(&g_venus, 200, 150, w, h)};
    pv_sift_params params = fast_params();
    pv_sift_plan *plan = NULL;
    assert_int_equal(pv_sift_plan_create(ctx, w, h, &params, &plan), PV_OK);
    pv_sift_features batch[5] = {{0}};
    assert_int_equal(pv_sift_detect_batch(plan, frames, 5, batch), PV_OK);
    assert_batch_is_singles(plan, frames, 5, batch);
    for (int i = 0; i < 5; i++) {
        assert_true(batch[i].count > 0);
        pv_sift_features_free(&batch[i]);
    }
    for (int i = 0; i < 4; i++) /* frames[4] is a view of g_venus */
        pv_image_free(&frames[i]);
    /* Float frames only (one of them a window of a larger float image,
     * stride > width): on OpenCL a chunk of one type, prepared in one
     * launch, then a chunk of one. */
    pv_image whole = to_f32(&g_venus);
    pv_image floats[4] = {window_of(&whole, 5, 5, w, h), window_of(&whole, 30, 70, w, h),
                          window_of(&whole, 180, 20, w, h), window_of(&whole, 100, 200, w, h)};
    pv_image dense; /* a dense copy of the first window */
    assert_int_equal(pv_image_alloc(&dense, w, h, PV_PIXEL_F32), PV_OK);
    for (int y = 0; y < h; y++)
        memcpy((float *)dense.data + (size_t)y * w,
               (const float *)floats[0].data + (size_t)y * (size_t)whole.stride,
               (size_t)w * sizeof(float));
    floats[0] = dense;
    assert_int_equal(pv_sift_detect_batch(plan, floats, 4, batch), PV_OK);
    assert_batch_is_singles(plan, floats, 4, batch);
    for (int i = 0; i < 4; i++) {
        assert_true(batch[i].count > 0);
        pv_sift_features_free(&batch[i]);
    }
    pv_image_free(&dense);
    pv_image_free(&whole);
    pv_sift_plan_destroy(plan);
}
/* On each backend, SIFT of a colour or 16-bit image is exactly SIFT of
 * its grey image: the conversion on the device (or the CPU's) computes
 * the same floats as pv_to_grey on the host. */
static void test_colour_input_is_its_grey(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sift_params params = fast_params();
    params.first_octave = -1;
    pv_image inputs[3] = {venus_colour(40, 30, 190, 140, 0), venus_colour(40, 30, 190, 140, 1)};
    assert_int_equal(pv_image_alloc(&inputs[2], 190, 140, PV_PIXEL_U16), PV_OK);
    for (int y = 0; y < 140; y++)
        for (int x = 0; x < 190; x++)
            ((uint16_t *)inputs[2].data)[y * 190 + x] =
                (uint16_t)(pv_image_get(&g_venus, 40 + x, 30 + y) * 257.0f + 11.0f);
    for (int i = 0; i < 3; i++) {
        pv_image grey = grey_unit_of(&inputs[i]);
        pv_sift_features f[2] = {detect(ctx, &inputs[i], &params), detect(ctx, &grey, &params)};
        printf("    pixel type %d: %d keypoints\n", (int)inputs[i].type, f[0].count);
        assert_true(f[0].count > 10);
        assert_same_features(&f[0], &f[1]);
        free_all(f, 2, &grey, 1);
    }
    free_all(NULL, 0, inputs, 3);
}

/* A colour PNG read natively and given to SIFT agrees with the same file
 * folded to grey by the host reader (luma in double, rounded to float,
 * then scaled to [0, 1] here): the grey values differ by float rounding
 * only, so the keypoints agree to the backends' tolerances. */
static void test_colour_file_matches_host_fold(void **state)
{
    pv_context *ctx = tu_backend_ctx(state);
    pv_sift_params params = fast_params();
    enum { SOURCE, NATIVE, FOLDED };
    pv_image images[3] = {venus_colour(60, 40, 210, 160, 0)};
    const char *path = tu_tmp_path("sift_colour.png");
    assert_int_equal(pv_image_write_png(path, &images[SOURCE]), PV_OK);
    assert_int_equal(pv_image_read(path, PV_PIXEL_RGB8, &images[NATIVE]), PV_OK);
    assert_int_equal(pv_image_read(path, PV_PIXEL_F32, &images[FOLDED]), PV_OK);
    float *grey = images[FOLDED].data;
    for (size_t i = 0; i < (size_t)images[FOLDED].width * (size_t)images[FOLDED].height; i++)
        grey[i] *= 1.0f / 255.0f;
    pv_sift_features f[2] = {detect(ctx, &images[NATIVE], &params),
                             detect(ctx, &images[FOLDED], &params)};
    assert_backends_agree(&f[0], &f[1], "RGB8 file against its host fold");
    free_all(f, 2, images, 3);
}

/* Two pairs that must agree to the backends' tolerances: the OpenCL and
 * CPU backends on 8- and 16-bit colour input, and (on each backend) a
 * 16-bit picture and its 8-bit original, whose grey values differ by float
 * rounding only (1/257 scaling). */
static void test_colour_backends_and_depths_agree(void **state)
{
    (void)state;
    pv_context *cl = tu_opencl_or_skip();
    pv_sift_params params = fast_params();
    params.first_octave = -1;
    pv_image rgb[2] = {venus_colour(20, 30, 200, 150, 0), venus_colour(20, 30, 200, 150, 1)};
    /* CPU and OpenCL results of the 8-bit, then of the 16-bit picture */
    pv_sift_features f[4] = {detect(tu_cpu, &rgb[0], &params), detect(cl, &rgb[0], &params),
                             detect(tu_cpu, &rgb[1], &params), detect(cl, &rgb[1], &params)};
    assert_backends_agree(&f[1], &f[0], "RGB8 venus, OpenCL against CPU");
    assert_backends_agree(&f[3], &f[2], "RGB16 venus, OpenCL against CPU");
    assert_backends_agree(&f[2], &f[0], "RGB16 against RGB8 venus, CPU");
    assert_backends_agree(&f[3], &f[1], "RGB16 against RGB8 venus, OpenCL");
    free_all(f, 4, rgb, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_ON_BOTH(test_blob),
        TU_ON_BOTH(test_constant_image_has_no_keypoints),
        TU_ON_BOTH(test_transpose),
        TU_ON_BOTH(test_top_k_cap),
        TU_ON_BOTH(test_descriptor_properties),
        TU_ON_BOTH(test_match_planted),
        TU_ON_BOTH(test_match_ties_and_empty),
        TU_ON_BOTH(test_deterministic),
        TU_ON_BOTH(test_strided_input),
        TU_ON_BOTH(test_detect_into_stream),
        TU_ON_BOTH(test_detect_batch),
        TU_ON_BOTH(test_batch_grows_lists),
        TU_ON_BOTH(test_batch_after_stage_grows),
        TU_ON_BOTH(test_batch_mixed_inputs),
        cmocka_unit_test(test_batch_cl_matches_cpu),
        cmocka_unit_test(test_batch_fails_whole),
        cmocka_unit_test(test_single_fails_at_result_read),
        cmocka_unit_test(test_batch_chunk_sizes),
        cmocka_unit_test(test_batch_launches_per_chunk),
        cmocka_unit_test(test_batch_quarters),
        TU_ON_BOTH(test_colour_input_is_its_grey),
        TU_ON_BOTH(test_colour_file_matches_host_fold),
        cmocka_unit_test(test_colour_backends_and_depths_agree),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_cl_matches_cpu),
        cmocka_unit_test(test_fused_tile_pass),
        cmocka_unit_test(test_weight_literals),
        cmocka_unit_test(test_large_results),
        cmocka_unit_test(test_copy_threads_keep_results),
        cmocka_unit_test(test_kernel_timing),
        cmocka_unit_test(test_cl_match_matches_cpu),
        cmocka_unit_test(test_crosscheck_mode),
#ifdef PV_HAVE_VLFEAT
        cmocka_unit_test(test_vlfeat_agreement),
        cmocka_unit_test(test_repeatability_vs_vlfeat),
#endif
        cmocka_unit_test(test_plan_bad_input),
        TU_ON_BOTH(test_detect_bad_input),
        TU_ON_BOTH(test_match_bad_input),
    };
    return cmocka_run_group_tests_name("features", tests, group_setup, group_teardown);
}
