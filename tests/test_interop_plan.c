/* Device-buffer forms of the phase-correlation plans and of masked phase
 * correlation (include/parvis/interop.h) on a caller's OpenCL objects:
 * plans made and fed from buffers, and masked correlations, give shifts
 * equal, bit for bit, to the host calls' on an OpenCL context (the same kernels on the same numbers);
 * u8, u16 and f32 images and u16 and f32 volumes in buffers with row
 * pitches wider than the width and an offset; more movers than one device
 * call holds; the cross-check mode and a wait list; and misuse refused
 * with the outputs untouched.  Skipped without an OpenCL device. */
#include "interop_util.h"
#include "../lib/core/internal.h" /* pv_pixel_size */
#include "image_list.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 48
#define H 40
#define PAD 5      /* extra samples a row in the caller's buffers */
#define OFFSET 256 /* bytes before sample (0, 0, 0) */
#define VX 20
#define VY 16
#define VZ 10
#define MOVERS 8 /* more than one device call's six buffers */
#define BATCH 3  /* the plan's batch: groups split across batches */

/* The caller's buffers: rows PAD samples wider than the width, slices one
 * row more than the height apart, OFFSET bytes in. */
static const iu_layout LAYOUT = {PAD, 1, OFFSET};

static pv_buffer put_samples(const iu_caller *c, const void *data, int nx, int ny, int nz,
                             pv_pixel_type type)
{
    return iu_put_samples(c, data, nx, ny, nz, type, LAYOUT);
}

static pv_buffer put_image(const iu_caller *c, const pv_image *image)
{
    assert_int_equal(image->stride, image->width);
    return iu_put_image(c, image, LAYOUT);
}

static pv_buffer put_volume(const iu_caller *c, const pv_volume *v)
{
    return iu_put_volume(c, v, LAYOUT);
}

static void release_buffers(pv_buffer *b, int count)
{
    for (int i = 0; i < count; i++)
        clReleaseMemObject(b[i].mem);
}

/* Image k of a series of `type`: one random field (0..255, 0..60000 or
 * 0..1) moved by (k - 3, 2 - k) with wrap-around; k = 0 is the field. */
static pv_image series_image(pv_pixel_type type, int k)
{
    const double range = type == PV_PIXEL_U8 ? 255.0 : type == PV_PIXEL_U16 ? 60000.0 : 1.0;
    const int dx = k == 0 ? 0 : k - 3, dy = k == 0 ? 0 : 2 - k;
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, W, H, type), PV_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const int fx = (x - dx + W) % W, fy = (y - dy + H) % H;
            uint32_t state = (uint32_t)(fy * W + fx) * 2654435761u + 12345u;
            state ^= state >> 13;
            state *= 1664525u;
            const double value = (double)(state >> 8) / 16777216.0 * range;
            const size_t at = (size_t)y * W + x;
            if (type == PV_PIXEL_U8)
                ((uint8_t *)image.data)[at] = (uint8_t)value;
            else if (type == PV_PIXEL_U16)
                ((uint16_t *)image.data)[at] = (uint16_t)value;
            else
                ((float *)image.data)[at] = (float)value;
        }
    return image;
}

/* Volume k of a series: one random field moved by (k, -k, k % 3), wrapped. */
static pv_volume series_volume(int u16, int k)
{
    pv_volume f = tu_random_volume(VX, VY, VZ, 77u), v;
    assert_int_equal(u16 ? pv_volume_alloc_u16(&v, VX, VY, VZ) : pv_volume_alloc(&v, VX, VY, VZ),
                     PV_OK);
    for (int z = 0; z < VZ; z++)
        for (int y = 0; y < VY; y++)
            for (int x = 0; x < VX; x++) {
                const size_t at = ((size_t)z * VY + y) * VX + x;
                const size_t zf = (size_t)(z - k % 3 + VZ) % VZ, yf = (size_t)(y + k + VY) % VY;
                const size_t from = (zf * VY + yf) * VX + (size_t)(x - k + VX) % VX;
                if (u16)
                    v.data_u16[at] = (uint16_t)(f.data[from] * 4000.0f);
                else
                    v.data[at] = f.data[from];
            }
    pv_volume_free(&f);
    return v;
}

static void expect_same_shifts(const pv_shift *got, const pv_shift *want, int count,
                               const char *what)
{
    for (int i = 0; i < count; i++) /* field by field: the structure has padding */
        if (memcmp(&got[i].dx, &want[i].dx, 3 * sizeof got->dx) != 0 ||
            memcmp(&got[i].peak, &want[i].peak, sizeof got->peak) != 0 ||
            got[i].flags != want[i].flags)
            fail_msg("%s, mover %d: (%.9g, %.9g, %.9g) peak %.9g flags %u against the host "
                     "call's (%.9g, %.9g, %.9g) peak %.9g flags %u",
                     what, i, got[i].dx, got[i].dy, got[i].dz, got[i].peak, got[i].flags,
                     want[i].dx, want[i].dy, want[i].dz, want[i].peak, want[i].flags);
}

/* Default options, and a Hann window with padding and the upsampled
 * refinement (centred: the means and energies on the device). */
static pv_phasecorr_options options_case(int which)
{
    pv_phasecorr_options o;
    pv_phasecorr_options_default(&o);
    if (which == 1) {
        o.window = PV_WINDOW_HANN;
        o.pad = PV_PAD_FFT;
        o.subpixel = PV_SUBPIXEL_UPSAMPLE;
        o.upsample = 10;
    }
    return o;
}

/* ------------------------------------------------------------ 2D plans */

/* A plan made from a buffer, MOVERS movers correlated, then a new
 * reference (mover 2) set from a buffer and the movers again: each
 * against the host plan's shifts. */
static void plan_image_case(iu_caller *c, pv_pixel_type type, int which)
{
    char what[96];
    snprintf(what, sizeof what, "plan_correlate_cl, type %d, options %d", (int)type, which);
    const pv_phasecorr_options o = options_case(which);
    pv_image host[MOVERS];
    pv_buffer dev[MOVERS];
    for (int k = 0; k < MOVERS; k++) {
        host[k] = series_image(type, k);
        dev[k] = put_image(c, &host[k]);
    }
    pv_shift want[MOVERS], got[MOVERS];
    pv_phasecorr_plan *host_plan = NULL, *plan = NULL;
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_create(tu_opencl, &host[0], &o, BATCH, &host_plan),
                 "host plan");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate(host_plan, host, MOVERS, want),
                 "host correlate");
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_phasecorr_plan_create_cl(c->ctx, &dev[0], &o, BATCH, &plan, 0, NULL,
                                                     &done),
                 "plan_create_cl");
    assert_non_null(plan);
    iu_wait_and_release(done);
    done = NULL;
    tu_expect_ok(c->ctx, pv_phasecorr_plan_correlate_cl(plan, dev, MOVERS, got, 0, NULL, &done),
                 what);
    iu_wait_and_release(done);
    expect_same_shifts(got, want, MOVERS, what);
    assert_true(fabs(got[5].dx - 2.0) < 0.5 && fabs(got[5].dy + 3.0) < 0.5);
    /* a new reference from a buffer; the host plan's movers from host images */
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_set_reference(host_plan, &host[2]), "host ref");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate(host_plan, host, MOVERS, want), "host");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_set_reference_cl(plan, &dev[2], 0, NULL, NULL),
                 "set_reference_cl");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_correlate_cl(plan, dev, MOVERS, got, 0, NULL, NULL),
                 what);
    expect_same_shifts(got, want, MOVERS, "after set_reference_cl");
    /* the plan takes host images too */
    tu_expect_ok(c->ctx, pv_phasecorr_plan_correlate(plan, host, 2, got), "host movers");
    expect_same_shifts(got, want, 2, "host movers on a device-made plan");
    pv_phasecorr_plan_destroy(plan);
    pv_phasecorr_plan_destroy(host_plan);
    release_buffers(dev, MOVERS);
    for (int k = 0; k < MOVERS; k++)
        pv_image_free(&host[k]);
}

static void test_plan_images_equal_host_calls(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    plan_image_case(&c, PV_PIXEL_U8, 0);
    plan_image_case(&c, PV_PIXEL_F32, 1);
    plan_image_case(&c, PV_PIXEL_U16, 1);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------ 3D plans */

static void plan_volume_case(iu_caller *c, int u16, int which)
{
    enum { N = 3 };
    char what[96];
    snprintf(what, sizeof what, "plan_correlate3d_cl, %s, options %d", u16 ? "u16" : "f32",
             which);
    const pv_phasecorr_options o = options_case(which);
    pv_volume host[N];
    pv_buffer dev[N];
    for (int k = 0; k < N; k++) {
        host[k] = series_volume(u16, k);
        dev[k] = put_volume(c, &host[k]);
    }
    pv_shift want[N], got[N];
    pv_phasecorr_plan *host_plan = NULL, *plan = NULL;
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_create3d(tu_opencl, &host[0], &o, 2, &host_plan),
                 "host plan 3D");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate3d(host_plan, host, N, want), "host 3D");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_create3d_cl(c->ctx, &dev[0], &o, 2, &plan, 0, NULL,
                                                       NULL),
                 "plan_create3d_cl");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_correlate3d_cl(plan, dev, N, got, 0, NULL, NULL), what);
    expect_same_shifts(got, want, N, what);
    assert_true(fabs(got[2].dx - 2.0) < 0.5 && fabs(got[2].dy + 2.0) < 0.5 &&
                fabs(got[2].dz - 2.0) < 0.5);
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_set_reference3d(host_plan, &host[1]), "host ref");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate3d(host_plan, host, N, want), "host 3D");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_set_reference3d_cl(plan, &dev[1], 0, NULL, NULL),
                 "set_reference3d_cl");
    tu_expect_ok(c->ctx, pv_phasecorr_plan_correlate3d_cl(plan, dev, N, got, 0, NULL, NULL), what);
    expect_same_shifts(got, want, N, "after set_reference3d_cl");
    pv_phasecorr_plan_destroy(plan);
    pv_phasecorr_plan_destroy(host_plan);
    release_buffers(dev, N);
    for (int k = 0; k < N; k++)
        pv_volume_free(&host[k]);
}

static void test_plan_volumes_equal_host_calls(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    plan_volume_case(&c, 1, 0);
    plan_volume_case(&c, 0, 1);
    iu_caller_free(&c);
}

/* ------------------------------------------- cross-check and wait lists */

static void test_plan_crosscheck_and_wait_list(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    const pv_phasecorr_options o = options_case(1);
    pv_image host[MOVERS];
    pv_buffer dev[MOVERS];
    for (int k = 0; k < MOVERS; k++) {
        host[k] = series_image(PV_PIXEL_U8, k);
        dev[k] = put_image(&c, &host[k]);
    }
    pv_shift want[MOVERS], got[MOVERS];
    pv_phasecorr_plan *host_plan = NULL, *plan = NULL;
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_create(tu_opencl, &host[0], &o, BATCH, &host_plan),
                 "host plan");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate(host_plan, host, MOVERS, want), "host");
    cl_int err;
    cl_event events[2];
    events[0] = clCreateUserEvent(c.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(events[0], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clEnqueueMarkerWithWaitList(c.queue, 0, NULL, &events[1]), CL_SUCCESS);
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_phasecorr_plan_create_cl(c.ctx, &dev[0], &o, BATCH, &plan, 2, events,
                                                    NULL),
                 "plan_create_cl cross-checked");
    tu_expect_ok(c.ctx, pv_phasecorr_plan_correlate_cl(plan, dev, MOVERS, got, 2, events, &done),
                 "plan_correlate_cl cross-checked");
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    expect_same_shifts(got, want, MOVERS, "cross-checked");
    tu_expect_ok(c.ctx, pv_phasecorr_plan_set_reference_cl(plan, &dev[0], 2, events, NULL),
                 "set_reference_cl cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    tu_expect_ok(c.ctx, pv_phasecorr_plan_correlate_cl(plan, dev, MOVERS, got, 2, events, NULL),
                 "plan_correlate_cl after a wait list");
    expect_same_shifts(got, want, MOVERS, "after a wait list");
    clReleaseEvent(events[0]), clReleaseEvent(events[1]);
    pv_phasecorr_plan_destroy(plan);
    pv_phasecorr_plan_destroy(host_plan);
    release_buffers(dev, MOVERS);
    for (int k = 0; k < MOVERS; k++)
        pv_image_free(&host[k]);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------- misuse */

static void expect_correlate_refused(pv_phasecorr_plan *plan, const pv_buffer *movers,
                                     int count, cl_uint wait_count, const cl_event *wait_list,
                                     pv_status expected, const char *what)
{
    pv_shift got[MOVERS], kept[MOVERS];
    memset(kept, 0x5A, sizeof kept);
    memcpy(got, kept, sizeof got);
    cl_event done = NULL;
    pv_status status =
        pv_phasecorr_plan_correlate_cl(plan, movers, count, got, wait_count, wait_list, &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    assert_memory_equal(got, kept, sizeof got);
}

static void expect_create_refused(pv_context *ctx, const pv_buffer *reference, int max_batch,
                                  cl_uint wait_count, const cl_event *wait_list,
                                  pv_status expected, const char *what)
{
    pv_phasecorr_plan *kept = (pv_phasecorr_plan *)&kept, *plan = kept;
    cl_event done = NULL;
    pv_status status = pv_phasecorr_plan_create_cl(ctx, reference, NULL, max_batch, &plan,
                                                   wait_count, wait_list, &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    assert_ptr_equal(plan, kept);
}

static void test_plan_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image host[MOVERS];
    pv_buffer dev[MOVERS];
    for (int k = 0; k < MOVERS; k++) {
        host[k] = series_image(PV_PIXEL_F32, k);
        dev[k] = put_image(&c, &host[k]);
    }
    pv_buffer foreign = put_image(&other, &host[1]);
    cl_event failed = iu_failed_event(&c);
    /* creation */
    expect_create_refused(c.ctx, NULL, 1, 0, NULL, PV_ERR_INVALID, "NULL reference");
    expect_create_refused(c.ctx, &foreign, 1, 0, NULL, PV_ERR_INVALID, "another context's");
    expect_create_refused(c.ctx, &dev[0], 0, 0, NULL, PV_ERR_INVALID, "max_batch 0");
    expect_create_refused(c.ctx, &dev[0], 1, 1, &failed, PV_ERR_INVALID, "a failed event");
    expect_create_refused(tu_cpu, &dev[0], 1, 0, NULL, PV_ERR_UNSUPPORTED, "a CPU context");
    pv_buffer rgb = dev[0];
    rgb.type = PV_PIXEL_RGB8;
    expect_create_refused(c.ctx, &rgb, 1, 0, NULL, PV_ERR_INVALID, "wrong type");
    pv_buffer narrow = dev[0];
    narrow.stride = W - 1;
    expect_create_refused(c.ctx, &narrow, 1, 0, NULL, PV_ERR_INVALID, "stride < width");
    pv_buffer odd = dev[0];
    odd.offset = OFFSET + 2;
    expect_create_refused(c.ctx, &odd, 1, 0, NULL, PV_ERR_INVALID, "offset within a sample");
    pv_phasecorr_plan *plan = NULL;
    assert_int_equal(pv_phasecorr_plan_create_cl(c.ctx, &dev[0], NULL, 1, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    pv_buffer u8 = dev[0]; /* a volume holds F32 or U16 samples */
    u8.type = PV_PIXEL_U8;
    assert_int_equal(pv_phasecorr_plan_create3d_cl(c.ctx, &u8, NULL, 1, &plan, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_null(plan);
    tu_expect_ok(c.ctx, pv_phasecorr_plan_create_cl(c.ctx, &dev[0], NULL, BATCH, &plan, 0, NULL,
                                                    NULL),
                 "plan_create_cl");
    /* correlation: one bad mover among good ones fails the call */
    pv_buffer bad[MOVERS];
    memcpy(bad, dev, sizeof bad);
    bad[7] = foreign;
    expect_correlate_refused(plan, bad, MOVERS, 0, NULL, PV_ERR_INVALID, "another context's");
    memcpy(bad, dev, sizeof bad);
    bad[3].mem = NULL;
    expect_correlate_refused(plan, bad, MOVERS, 0, NULL, PV_ERR_INVALID, "a NULL mem");
    memcpy(bad, dev, sizeof bad);
    bad[1].height = H - 1;
    expect_correlate_refused(plan, bad, MOVERS, 0, NULL, PV_ERR_INVALID, "size differs");
    memcpy(bad, dev, sizeof bad);
    bad[6].stride = W - 1;
    expect_correlate_refused(plan, bad, MOVERS, 0, NULL, PV_ERR_INVALID, "stride < width");
    memcpy(bad, dev, sizeof bad);
    bad[0].type = PV_PIXEL_RGB8;
    expect_correlate_refused(plan, bad, MOVERS, 0, NULL, PV_ERR_INVALID, "wrong type");
    expect_correlate_refused(plan, NULL, MOVERS, 0, NULL, PV_ERR_INVALID, "NULL movers");
    expect_correlate_refused(plan, dev, 0, 0, NULL, PV_ERR_INVALID, "count 0");
    expect_correlate_refused(plan, dev, MOVERS, 1, &failed, PV_ERR_INVALID, "a failed event");
    expect_correlate_refused(plan, dev, MOVERS, 1, NULL, PV_ERR_INVALID, "count, no list");
    expect_correlate_refused(NULL, dev, MOVERS, 0, NULL, PV_ERR_INVALID, "NULL plan");
    pv_shift one;
    assert_int_equal(pv_phasecorr_plan_correlate_cl(plan, dev, 1, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_phasecorr_plan_correlate3d_cl(plan, dev, 1, &one, 0, NULL, NULL),
                     PV_ERR_INVALID); /* a 2D plan */
    assert_int_equal(pv_phasecorr_plan_set_reference3d_cl(plan, &dev[1], 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_phasecorr_plan_set_reference_cl(plan, &foreign, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_phasecorr_plan_set_reference_cl(plan, &dev[1], 1, &failed, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_phasecorr_plan_set_reference_cl(NULL, &dev[1], 0, NULL, NULL),
                     PV_ERR_INVALID);
    /* a plan of a CPU context: device buffers unsupported */
    pv_phasecorr_plan *cpu_plan = NULL;
    tu_expect_ok(tu_cpu, pv_phasecorr_plan_create(tu_cpu, &host[0], NULL, 1, &cpu_plan), "CPU");
    expect_correlate_refused(cpu_plan, dev, 2, 0, NULL, PV_ERR_UNSUPPORTED, "a CPU plan");
    assert_int_equal(pv_phasecorr_plan_set_reference_cl(cpu_plan, &dev[1], 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    pv_phasecorr_plan_destroy(cpu_plan);
    /* the plan still works after every refusal, on its first reference */
    pv_phasecorr_plan *host_plan = NULL;
    pv_shift want[MOVERS], got[MOVERS];
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_create(tu_opencl, &host[0], NULL, BATCH,
                                                     &host_plan),
                 "host plan");
    tu_expect_ok(tu_opencl, pv_phasecorr_plan_correlate(host_plan, host, MOVERS, want), "host");
    tu_expect_ok(c.ctx, pv_phasecorr_plan_correlate_cl(plan, dev, MOVERS, got, 0, NULL, NULL),
                 "after the refusals");
    expect_same_shifts(got, want, MOVERS, "after the refusals");
    clReleaseEvent(failed);
    pv_phasecorr_plan_destroy(host_plan);
    pv_phasecorr_plan_destroy(plan);
    release_buffers(dev, MOVERS);
    clReleaseMemObject(foreign.mem);
    for (int k = 0; k < MOVERS; k++)
        pv_image_free(&host[k]);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ------------------------------------------------ masked phase correlation */

/* A mask of `type` (u8, f32 or u16, values 0 / 3): a rectangle of the
 * nx x ny x nz grid, moved by (dx, dy). */
static void *rect_mask(pv_pixel_type type, int nx, int ny, int nz, int dx, int dy)
{
    const size_t sample = pv_pixel_size(type), count = (size_t)nx * ny * nz;
    unsigned char *m = calloc(count, sample);
    assert_non_null(m);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const int inside = x - dx >= 4 && x - dx < nx - 6 && y - dy >= 3 &&
                                   y - dy < ny - 5;
                const size_t at = ((size_t)z * ny + y) * nx + x;
                if (!inside)
                    continue;
                if (type == PV_PIXEL_U8)
                    m[at] = 3;
                else if (type == PV_PIXEL_U16)
                    ((uint16_t *)m)[at] = 3;
                else
                    ((float *)m)[at] = 3.0f;
            }
    return m;
}

static void expect_same_shift(const pv_shift *got, const pv_shift *want, const char *what)
{
    expect_same_shifts(got, want, 1, what);
}

static void masked_image_case(iu_caller *c, pv_pixel_type type, int separate_masks)
{
    char what[96];
    snprintf(what, sizeof what, "phase_correlate_masked_cl, type %d, %s", (int)type,
             separate_masks ? "two masks" : "one mask");
    pv_image reference = series_image(type, 0), moving = series_image(type, 5);
    void *rm = rect_mask(type, W, H, 1, 0, 0), *mm = rect_mask(type, W, H, 1, 2, -3);
    pv_image ref_mask = {W, H, W, type, rm}, mov_mask = {W, H, W, type, mm};
    pv_phasecorr_masked_params params;
    pv_phasecorr_masked_params_default(&params);
    pv_shift want, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate_masked(tu_opencl, &reference, &moving, &ref_mask,
                                                      separate_masks ? &mov_mask : NULL,
                                                      &params, &want),
                 "host masked phase correlation");
    pv_buffer r = put_image(c, &reference), m = put_image(c, &moving);
    pv_buffer rmb = put_image(c, &ref_mask), mmb = put_image(c, &mov_mask);
    cl_event done = NULL;
    memset(&got, 0xA5, sizeof got);
    tu_expect_ok(c->ctx, pv_phase_correlate_masked_cl(c->ctx, &r, &m, &rmb,
                                                      separate_masks ? &mmb : NULL, &params,
                                                      &got, 0, NULL, &done),
                 what);
    iu_wait_and_release(done);
    expect_same_shift(&got, &want, what);
    assert_true(fabs(got.dx - 2.0) < 0.5 && fabs(got.dy + 3.0) < 0.5);
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem);
    clReleaseMemObject(rmb.mem), clReleaseMemObject(mmb.mem);
    image_list_free(&reference, &moving, NULL);
    free(rm);
    free(mm);
}

static void test_masked_images_equal_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    masked_image_case(&c, PV_PIXEL_U8, 1);
    masked_image_case(&c, PV_PIXEL_F32, 0);
    iu_caller_free(&c);
}

static void masked_volume_case(iu_caller *c, int u16)
{
    const char *what = u16 ? "phase_correlate_masked3d_cl, u16" : "phase_correlate_masked3d_cl";
    const pv_pixel_type type = u16 ? PV_PIXEL_U16 : PV_PIXEL_F32;
    pv_volume reference = series_volume(u16, 0), moving = series_volume(u16, 2);
    void *mask = rect_mask(type, VX, VY, VZ, 0, 0);
    pv_volume rm = u16 ? pv_volume_wrap_u16(mask, VX, VY, VZ) : pv_volume_wrap(mask, VX, VY, VZ);
    pv_shift want, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate_masked3d(tu_opencl, &reference, &moving, &rm, &rm,
                                                        NULL, &want),
                 "host masked 3D");
    pv_buffer r = put_volume(c, &reference), m = put_volume(c, &moving), k = put_volume(c, &rm);
    tu_expect_ok(c->ctx, pv_phase_correlate_masked3d_cl(c->ctx, &r, &m, &k, &k, NULL, &got, 0,
                                                        NULL, NULL),
                 what);
    expect_same_shift(&got, &want, what);
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem), clReleaseMemObject(k.mem);
    pv_volume_free(&reference);
    pv_volume_free(&moving);
    free(mask);
}

static void test_masked_volumes_equal_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    masked_volume_case(&c, 1);
    masked_volume_case(&c, 0);
    iu_caller_free(&c);
}

static void expect_masked_refused(pv_context *ctx, const pv_buffer *r, const pv_buffer *m,
                                  const pv_buffer *rm, const pv_buffer *mm, cl_uint wait_count,
                                  const cl_event *wait_list, pv_status expected,
                                  const char *what)
{
    pv_shift got, kept;
    memset(&kept, 0x5A, sizeof kept);
    got = kept;
    cl_event done = NULL;
    pv_status status = pv_phase_correlate_masked_cl(ctx, r, m, rm, mm, NULL, &got, wait_count,
                                                    wait_list, &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    assert_memory_equal(&got, &kept, sizeof got);
}

/* The cross-check on host copies, and misuse refused with the shift untouched. */
static void test_masked_crosscheck_and_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image reference = series_image(PV_PIXEL_F32, 0), moving = series_image(PV_PIXEL_F32, 5);
    void *rm = rect_mask(PV_PIXEL_F32, W, H, 1, 0, 0);
    float *zero = calloc((size_t)W * H, sizeof *zero);
    assert_non_null(zero);
    pv_image ref_mask = {W, H, W, PV_PIXEL_F32, rm}, empty = {W, H, W, PV_PIXEL_F32, zero};
    pv_shift want, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate_masked(tu_opencl, &reference, &moving, &ref_mask,
                                                      NULL, NULL, &want),
                 "host");
    pv_buffer r = put_image(&c, &reference), m = put_image(&c, &moving);
    pv_buffer k = put_image(&c, &ref_mask), e = put_image(&c, &empty);
    pv_buffer foreign = put_image(&other, &ref_mask);
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_phase_correlate_masked_cl(c.ctx, &r, &m, &k, NULL, NULL, &got, 0,
                                                     NULL, NULL),
                 "cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    expect_same_shift(&got, &want, "cross-checked");
    expect_masked_refused(c.ctx, &r, &m, NULL, NULL, 0, NULL, PV_ERR_INVALID, "NULL mask");
    expect_masked_refused(c.ctx, NULL, &m, &k, NULL, 0, NULL, PV_ERR_INVALID, "NULL reference");
    expect_masked_refused(c.ctx, &r, &m, &foreign, NULL, 0, NULL, PV_ERR_INVALID,
                          "another context's mask");
    expect_masked_refused(c.ctx, &r, &m, &e, NULL, 0, NULL, PV_ERR_INVALID, "an all-zero mask");
    assert_non_null(strstr(pv_last_error(), "no valid"));
    pv_buffer small = k;
    small.height = H - 1;
    expect_masked_refused(c.ctx, &r, &m, &small, NULL, 0, NULL, PV_ERR_INVALID,
                          "a mask of the wrong size");
    pv_buffer rgb = k;
    rgb.type = PV_PIXEL_RGB8;
    expect_masked_refused(c.ctx, &r, &m, &rgb, NULL, 0, NULL, PV_ERR_INVALID, "wrong type");
    pv_buffer narrow = m;
    narrow.stride = W - 1;
    expect_masked_refused(c.ctx, &r, &narrow, &k, NULL, 0, NULL, PV_ERR_INVALID,
                          "stride < width");
    cl_event failed = iu_failed_event(&c);
    expect_masked_refused(c.ctx, &r, &m, &k, NULL, 1, &failed, PV_ERR_INVALID, "a failed event");
    clReleaseEvent(failed);
    expect_masked_refused(tu_cpu, &r, &m, &k, NULL, 0, NULL, PV_ERR_UNSUPPORTED, "a CPU context");
    /* a NaN in the moving image, found by the device's scan */
    ((float *)moving.data)[W * 7 + 9] = NAN;
    pv_buffer bad = put_image(&c, &moving);
    expect_masked_refused(c.ctx, &r, &bad, &k, NULL, 0, NULL, PV_ERR_INVALID, "a NaN");
    assert_non_null(strstr(pv_last_error(), "NaN"));
    tu_expect_ok(c.ctx, pv_phase_correlate_masked_cl(c.ctx, &r, &m, &k, NULL, NULL, &got, 0,
                                                     NULL, NULL),
                 "after the refusals");
    expect_same_shift(&got, &want, "after the refusals");
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem), clReleaseMemObject(k.mem);
    clReleaseMemObject(e.mem), clReleaseMemObject(foreign.mem), clReleaseMemObject(bad.mem);
    image_list_free(&reference, &moving, NULL);
    free(rm);
    free(zero);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ------------------------------------------------------ normxcorr2 batch */

#define TW 12
#define TH 10
#define NCC_IMAGES 3
#define MAP_W (W + TW - 1)
#define MAP_H (H + TH - 1)
#define SENTINEL 7.0f

/* A float buffer of nx x ny x nz filled with `value`, laid out as put_samples. */
static pv_buffer new_floats(const iu_caller *c, int nx, int ny, int nz, float value)
{
    const size_t count = (size_t)nx * ny * nz;
    float *fill = malloc(count * sizeof *fill);
    assert_non_null(fill);
    for (size_t i = 0; i < count; i++)
        fill[i] = value;
    pv_buffer b = put_samples(c, fill, nx, ny, nz, PV_PIXEL_F32);
    free(fill);
    return b;
}

static void expect_same_floats(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!(got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))))
            fail_msg("%s: element %zu %.9g against the host call's %.9g", what, i,
                     (double)got[i], (double)want[i]);
}

static void expect_same_result(const pv_ncc_result *got, const pv_ncc_result *want,
                               const char *what)
{
    if (got->x != want->x || got->y != want->y || got->coefficient != want->coefficient ||
        got->sub_x != want->sub_x || got->sub_y != want->sub_y || got->flags != want->flags)
        fail_msg("%s: (%d, %d) %.9g flags %u against the host call's (%d, %d) %.9g flags %u",
                 what, got->x, got->y, (double)got->coefficient, got->flags, want->x, want->y,
                 (double)want->coefficient, want->flags);
}

/* The template: image 0's block at (9, 7), of image 0's type. */
static pv_image cut_template(const pv_image *image)
{
    pv_image t;
    const size_t sample = pv_pixel_size(image->type);
    assert_int_equal(pv_image_alloc(&t, TW, TH, image->type), PV_OK);
    for (int y = 0; y < TH; y++)
        memcpy((unsigned char *)t.data + (size_t)y * TW * sample,
               (const unsigned char *)image->data + ((size_t)(7 + y) * W + 9) * sample,
               TW * sample);
    return t;
}

static void test_ncc_batch_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image images[NCC_IMAGES], want_maps[NCC_IMAGES];
    pv_buffer dev[NCC_IMAGES], maps[NCC_IMAGES];
    for (int i = 0; i < NCC_IMAGES; i++) { /* types differ, as the host batch allows */
        images[i] = series_image(i == 1 ? PV_PIXEL_F32 : PV_PIXEL_U8, i);
        dev[i] = put_image(&c, &images[i]);
        maps[i] = new_floats(&c, MAP_W, MAP_H, 1, SENTINEL);
        assert_int_equal(pv_image_alloc(&want_maps[i], MAP_W, MAP_H, PV_PIXEL_F32), PV_OK);
    }
    pv_image templ = cut_template(&images[0]);
    pv_buffer t = put_image(&c, &templ);
    pv_ncc_result want[NCC_IMAGES], got[NCC_IMAGES];
    tu_expect_ok(tu_opencl, pv_normxcorr2_batch(tu_opencl, &templ, images, NCC_IMAGES, 20,
                                                want_maps, want),
                 "host normxcorr2_batch");
    assert_int_equal(want[0].x, 9);
    assert_int_equal(want[0].y, 7);
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_normxcorr2_batch_cl(c.ctx, &t, dev, NCC_IMAGES, 20, maps, got, 0,
                                               NULL, &done),
                 "normxcorr2_batch_cl");
    iu_wait_and_release(done);
    for (int i = 0; i < NCC_IMAGES; i++) {
        float *map = iu_get_f32(&c, &maps[i]);
        expect_same_floats(map, want_maps[i].data, (size_t)MAP_W * MAP_H, "batch map");
        free(map);
        expect_same_result(&got[i], &want[i], "batch result");
    }
    /* results alone; the cross-check */
    memset(got, 0, sizeof got);
    tu_expect_ok(c.ctx, pv_normxcorr2_batch_cl(c.ctx, &t, dev, NCC_IMAGES, 20, NULL, got, 0,
                                               NULL, NULL),
                 "results only");
    for (int i = 0; i < NCC_IMAGES; i++)
        expect_same_result(&got[i], &want[i], "results only");
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_normxcorr2_batch_cl(c.ctx, &t, dev, NCC_IMAGES, 20, maps, got, 0,
                                               NULL, NULL),
                 "cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    for (int i = 0; i < NCC_IMAGES; i++)
        expect_same_result(&got[i], &want[i], "cross-checked");
    /* misuse: the results untouched */
    pv_ncc_result kept[NCC_IMAGES];
    memset(kept, 0x5A, sizeof kept);
    memcpy(got, kept, sizeof got);
    pv_buffer small[NCC_IMAGES];
    memcpy(small, maps, sizeof small);
    small[2].height -= 1;
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, dev, NCC_IMAGES, 20, small, got, 0, NULL,
                                            NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, dev, 0, 20, maps, got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, NULL, 1, 20, maps, got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, dev, 1, 20, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    pv_buffer narrow[NCC_IMAGES];
    memcpy(narrow, dev, sizeof narrow);
    narrow[1].stride = W - 1;
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, narrow, NCC_IMAGES, 20, NULL, got, 0,
                                            NULL, NULL),
                     PV_ERR_INVALID);
    cl_event failed = iu_failed_event(&c);
    assert_int_equal(pv_normxcorr2_batch_cl(c.ctx, &t, dev, NCC_IMAGES, 20, NULL, got, 1,
                                            &failed, NULL),
                     PV_ERR_INVALID);
    clReleaseEvent(failed);
    assert_int_equal(pv_normxcorr2_batch_cl(tu_cpu, &t, dev, NCC_IMAGES, 20, NULL, got, 0, NULL,
                                            NULL),
                     PV_ERR_UNSUPPORTED);
    assert_memory_equal(got, kept, sizeof got);
    clReleaseMemObject(t.mem);
    release_buffers(dev, NCC_IMAGES);
    release_buffers(maps, NCC_IMAGES);
    for (int i = 0; i < NCC_IMAGES; i++)
        image_list_free(&images[i], &want_maps[i], NULL);
    pv_image_free(&templ);
    iu_caller_free(&c);
}

/* -------------------------------------------------------- masked normxcorr2 */

/* A u8 mask of w x h: 1 inside a border `margin` wide, 0 on it, and a
 * notch of invalid pixels. */
static pv_image u8_mask(int w, int h, int margin)
{
    pv_image m;
    assert_int_equal(pv_image_alloc(&m, w, h, PV_PIXEL_U8), PV_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            ((uint8_t *)m.data)[(size_t)y * w + x] =
                x >= margin && y >= margin && x < w - margin && y < h - margin &&
                !(x == w / 2 && y < h / 2);
    return m;
}

static void ncc_masked_case(iu_caller *c, pv_pixel_type type, int with_image_mask)
{
    char what[80];
    snprintf(what, sizeof what, "normxcorr2_masked_cl, type %d, %s", (int)type,
             with_image_mask ? "both masks" : "templ_mask only");
    pv_image image = series_image(type, 0), templ = cut_template(&image);
    pv_image tmask = u8_mask(TW, TH, 1), imask = u8_mask(W, H, 2), want_map;
    assert_int_equal(pv_image_alloc(&want_map, MAP_W, MAP_H, PV_PIXEL_F32), PV_OK);
    pv_ncc_result want, got;
    tu_expect_ok(tu_opencl, pv_normxcorr2_masked(tu_opencl, &templ, &image, &tmask,
                                                 with_image_mask ? &imask : NULL, 20, &want_map,
                                                 &want),
                 "host normxcorr2_masked");
    assert_int_equal(want.x, 9);
    assert_int_equal(want.y, 7);
    pv_buffer t = put_image(c, &templ), i = put_image(c, &image), tm = put_image(c, &tmask);
    pv_buffer im = put_image(c, &imask), map = new_floats(c, MAP_W, MAP_H, 1, SENTINEL);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_normxcorr2_masked_cl(c->ctx, &t, &i, &tm,
                                                 with_image_mask ? &im : NULL, 20, &map, &got, 0,
                                                 NULL, &done),
                 what);
    iu_wait_and_release(done);
    float *back = iu_get_f32(c, &map);
    expect_same_floats(back, want_map.data, (size_t)MAP_W * MAP_H, what);
    free(back);
    expect_same_result(&got, &want, what);
    memset(&got, 0, sizeof got); /* the result alone: the map in host memory */
    tu_expect_ok(c->ctx, pv_normxcorr2_masked_cl(c->ctx, &t, &i, &tm,
                                                 with_image_mask ? &im : NULL, 20, NULL, &got, 0,
                                                 NULL, NULL),
                 "result only");
    expect_same_result(&got, &want, "result only");
    clReleaseMemObject(t.mem), clReleaseMemObject(i.mem), clReleaseMemObject(tm.mem);
    clReleaseMemObject(im.mem), clReleaseMemObject(map.mem);
    image_list_free(&image, &templ, &tmask, &imask, &want_map, NULL);
}

static void test_ncc_masked_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    ncc_masked_case(&c, PV_PIXEL_U8, 1);
    ncc_masked_case(&c, PV_PIXEL_F32, 1);
    ncc_masked_case(&c, PV_PIXEL_F32, 0);
    iu_caller_free(&c);
}

static void expect_ncc_masked_refused(pv_context *ctx, const pv_buffer *t, const pv_buffer *i,
                                      const pv_buffer *tm, const pv_buffer *im,
                                      const pv_buffer *map, cl_uint wait_count,
                                      const cl_event *wait_list, pv_status expected,
                                      const char *what)
{
    pv_ncc_result got, kept;
    memset(&kept, 0x5A, sizeof kept);
    got = kept;
    cl_event done = NULL;
    pv_status status = pv_normxcorr2_masked_cl(ctx, t, i, tm, im, 20, map, &got, wait_count,
                                               wait_list, &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    assert_memory_equal(&got, &kept, sizeof got);
}

static void test_ncc_masked_crosscheck_and_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image image = series_image(PV_PIXEL_F32, 0), templ = cut_template(&image);
    pv_image tmask = u8_mask(TW, TH, 1), zero = u8_mask(TW, TH, TW), want_map;
    assert_int_equal(pv_image_alloc(&want_map, MAP_W, MAP_H, PV_PIXEL_F32), PV_OK);
    pv_ncc_result want, got;
    tu_expect_ok(tu_opencl, pv_normxcorr2_masked(tu_opencl, &templ, &image, &tmask, NULL, 20,
                                                 &want_map, &want),
                 "host");
    pv_buffer t = put_image(&c, &templ), i = put_image(&c, &image), tm = put_image(&c, &tmask);
    pv_buffer z = put_image(&c, &zero), map = new_floats(&c, MAP_W, MAP_H, 1, SENTINEL);
    pv_buffer foreign = put_image(&other, &tmask);
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_normxcorr2_masked_cl(c.ctx, &t, &i, &tm, NULL, 20, &map, &got, 0,
                                                NULL, NULL),
                 "cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    expect_same_result(&got, &want, "cross-checked");
    float *back = iu_get_f32(&c, &map);
    expect_same_floats(back, want_map.data, (size_t)MAP_W * MAP_H, "cross-checked");
    free(back);
    pv_buffer fresh = new_floats(&c, MAP_W, MAP_H, 1, SENTINEL);
    expect_ncc_masked_refused(c.ctx, &t, &i, NULL, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "NULL templ_mask");
    expect_ncc_masked_refused(c.ctx, &t, &i, &z, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "an all-zero mask");
    expect_ncc_masked_refused(c.ctx, &t, &i, &foreign, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "another context's mask");
    pv_buffer small = tm;
    small.width -= 1;
    expect_ncc_masked_refused(c.ctx, &t, &i, &small, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "a mask of the wrong size");
    pv_buffer f32_mask = t; /* a mask must be u8 */
    expect_ncc_masked_refused(c.ctx, &t, &i, &f32_mask, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "an f32 mask");
    pv_buffer narrow = i;
    narrow.stride = W - 1;
    expect_ncc_masked_refused(c.ctx, &t, &narrow, &tm, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "stride < width");
    pv_buffer u8_map = fresh;
    u8_map.type = PV_PIXEL_U8;
    expect_ncc_masked_refused(c.ctx, &t, &i, &tm, NULL, &u8_map, 0, NULL, PV_ERR_INVALID,
                              "a u8 map");
    cl_event failed = iu_failed_event(&c);
    expect_ncc_masked_refused(c.ctx, &t, &i, &tm, NULL, &fresh, 1, &failed, PV_ERR_INVALID,
                              "a failed event");
    clReleaseEvent(failed);
    expect_ncc_masked_refused(tu_cpu, &t, &i, &tm, NULL, &fresh, 0, NULL, PV_ERR_UNSUPPORTED,
                              "a CPU context");
    ((float *)image.data)[W * 3 + 4] = NAN; /* found by the device's scan */
    pv_buffer bad = put_image(&c, &image);
    expect_ncc_masked_refused(c.ctx, &t, &bad, &tm, NULL, &fresh, 0, NULL, PV_ERR_INVALID,
                              "a NaN");
    back = iu_get_f32(&c, &fresh);
    for (size_t k = 0; k < (size_t)MAP_W * MAP_H; k++)
        assert_true(back[k] == SENTINEL);
    free(back);
    clReleaseMemObject(t.mem), clReleaseMemObject(i.mem), clReleaseMemObject(tm.mem);
    clReleaseMemObject(z.mem), clReleaseMemObject(map.mem), clReleaseMemObject(fresh.mem);
    clReleaseMemObject(foreign.mem), clReleaseMemObject(bad.mem);
    image_list_free(&image, &templ, &tmask, &zero, &want_map, NULL);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* --------------------------------------------------------- the OCT average */

#define ND 48 /* depth, A-lines, B-scans */
#define NA 32
#define NB 36
#define OCT_TARGETS 2

static void test_octreg_average_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_octreg_synth_params p;
    pv_volume reference, targets[OCT_TARGETS];
    assert_int_equal(pv_volume_alloc(&reference, ND, NA, NB), PV_OK);
    for (int i = 0; i < OCT_TARGETS; i++) {
        tu_octreg_synth_params(&p, ND, NA, NB, 5u + (uint32_t)i);
        assert_int_equal(pv_volume_alloc(&targets[i], ND, NA, NB), PV_OK);
        assert_int_equal(pv_octreg_synthesize(&p, &reference, &targets[i], NULL), PV_OK);
    }
    pv_octreg_plan *plan = NULL;
    tu_expect_ok(c.ctx, pv_octreg_plan_create(c.ctx, &reference, NULL, &plan), "plan");
    pv_volume averaged;
    pv_image enface, slow;
    assert_int_equal(pv_volume_alloc(&averaged, ND, NA, NB), PV_OK);
    assert_int_equal(pv_image_alloc(&enface, NA, NB, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&slow, NB, ND, PV_PIXEL_F32), PV_OK);
    pv_octreg_shift want[OCT_TARGETS * NB], got[OCT_TARGETS * NB];
    float coverage[NB], got_coverage[NB];
    tu_expect_ok(c.ctx, pv_octreg_average(plan, targets, OCT_TARGETS, want, 0.0f, &averaged,
                                          &enface, &slow, coverage),
                 "host octreg_average");
    pv_buffer dev[OCT_TARGETS];
    for (int i = 0; i < OCT_TARGETS; i++)
        dev[i] = put_volume(&c, &targets[i]);
    pv_buffer out_volume = new_floats(&c, ND, NA, NB, -1.0f);
    pv_buffer out_enface = new_floats(&c, NA, NB, 1, -1.0f);
    pv_buffer out_slow = new_floats(&c, NB, ND, 1, -1.0f);
    out_enface.depth = out_slow.depth = 0; /* images */
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_octreg_average_cl(plan, dev, OCT_TARGETS, got, 0.0f, &out_volume,
                                             &out_enface, &out_slow, got_coverage, 0, NULL,
                                             &done),
                 "octreg_average_cl");
    iu_wait_and_release(done);
    assert_memory_equal(got, want, sizeof got);
    expect_same_floats(got_coverage, coverage, NB, "coverage");
    float *back = iu_get_f32(&c, &out_volume);
    expect_same_floats(back, averaged.data, (size_t)ND * NA * NB, "averaged volume");
    free(back);
    back = iu_get_f32(&c, &out_enface);
    expect_same_floats(back, enface.data, (size_t)NA * NB, "en-face image");
    free(back);
    back = iu_get_f32(&c, &out_slow);
    expect_same_floats(back, slow.data, (size_t)NB * ND, "slow image");
    free(back);
    /* only the en-face image; misuse with the outputs untouched */
    tu_expect_ok(c.ctx, pv_octreg_average_cl(plan, dev, OCT_TARGETS, NULL, 0.0f, NULL,
                                             &out_enface, NULL, NULL, 0, NULL, NULL),
                 "en-face only");
    pv_octreg_shift kept[OCT_TARGETS * NB];
    memset(kept, 0x5A, sizeof kept);
    memcpy(got, kept, sizeof got);
    pv_buffer bad[OCT_TARGETS];
    memcpy(bad, dev, sizeof bad);
    bad[1].type = PV_PIXEL_U8;
    assert_int_equal(pv_octreg_average_cl(plan, bad, OCT_TARGETS, got, 0.0f, &out_volume, NULL,
                                          NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_average_cl(plan, dev, 0, got, 0.0f, &out_volume, NULL, NULL,
                                          NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_average_cl(plan, dev, 18, got, 0.0f, &out_volume, NULL, NULL,
                                          NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_average_cl(plan, dev, OCT_TARGETS, got, 0.0f, NULL, NULL, NULL,
                                          NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_octreg_average_cl(NULL, dev, OCT_TARGETS, got, 0.0f, &out_volume, NULL,
                                          NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    pv_buffer over = dev[0]; /* the averaged volume on a target's bytes */
    over.type = PV_PIXEL_F32;
    assert_int_equal(pv_octreg_average_cl(plan, dev, OCT_TARGETS, got, 0.0f, &over, NULL, NULL,
                                          NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    cl_event failed = iu_failed_event(&c);
    assert_int_equal(pv_octreg_average_cl(plan, dev, OCT_TARGETS, got, 0.0f, &out_volume, NULL,
                                          NULL, NULL, 1, &failed, NULL),
                     PV_ERR_INVALID);
    clReleaseEvent(failed);
    assert_memory_equal(got, kept, sizeof got);
    pv_octreg_plan *cpu_plan = NULL;
    tu_expect_ok(tu_cpu, pv_octreg_plan_create(tu_cpu, &reference, NULL, &cpu_plan), "CPU plan");
    assert_int_equal(pv_octreg_average_cl(cpu_plan, dev, OCT_TARGETS, got, 0.0f, &out_volume,
                                          NULL, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    pv_octreg_plan_destroy(cpu_plan);
    pv_octreg_plan_destroy(plan);
    release_buffers(dev, OCT_TARGETS);
    clReleaseMemObject(out_volume.mem);
    clReleaseMemObject(out_enface.mem);
    clReleaseMemObject(out_slow.mem);
    for (int i = 0; i < OCT_TARGETS; i++)
        pv_volume_free(&targets[i]);
    pv_volume_free(&reference);
    pv_volume_free(&averaged);
    image_list_free(&enface, &slow, NULL);
    iu_caller_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_images_equal_host_calls),
        cmocka_unit_test(test_plan_volumes_equal_host_calls),
        cmocka_unit_test(test_plan_crosscheck_and_wait_list),
        cmocka_unit_test(test_plan_misuse),
        cmocka_unit_test(test_masked_images_equal_host_call),
        cmocka_unit_test(test_masked_volumes_equal_host_call),
        cmocka_unit_test(test_masked_crosscheck_and_misuse),
        cmocka_unit_test(test_ncc_batch_equals_host_call),
        cmocka_unit_test(test_ncc_masked_equals_host_call),
        cmocka_unit_test(test_ncc_masked_crosscheck_and_misuse),
        cmocka_unit_test(test_octreg_average_equals_host_call),
    };
    return cmocka_run_group_tests_name("interop_plan", tests, tu_group_setup, tu_group_teardown);
}
