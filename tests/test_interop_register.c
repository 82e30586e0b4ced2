/* Device-buffer forms of phase correlation (2D and 3D) and normxcorr2
 * (include/parvis/interop.h) on a caller's OpenCL objects: results equal,
 * bit for bit, to the host calls' on an OpenCL context (the same kernels
 * on the same numbers: the inputs' scans, means and scaling run on the
 * device with the host's sums) and within the cross-check tolerances
 * (lib/core/tolerance.h) of the CPU backend's; inputs in buffers with row
 * pitches wider than the width and an offset; textureless and non-finite
 * inputs decided as the host calls decide them; the cross-check mode;
 * and misuse refused with the outputs untouched.  Skipped without an
 * OpenCL device. */
#include "interop_util.h"
#include "../lib/core/tolerance.h" /* PV_TOL_PC_SHIFT, PV_TOL_PC_PEAK, PV_TOL_NCC_MAP */
#include "image_list.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 64
#define H 48
#define PAD 5      /* extra samples a row in the caller's buffers */
#define OFFSET 256 /* bytes before sample (0, 0, 0) */
#define VX 24
#define VY 20
#define VZ 12
#define SX 3 /* the moving input is the reference moved by (SX, SY, SZ) */
#define SY -2
#define SZ 1

/* The caller's buffers: rows PAD samples wider than the width, slices one
 * row more than the height apart, OFFSET bytes in. */
static const iu_layout LAYOUT = {PAD, 1, OFFSET};

static pv_buffer put_image(const iu_caller *c, const pv_image *image)
{
    assert_int_equal(image->stride, image->width);
    return iu_put_image(c, image, LAYOUT);
}

static pv_buffer put_volume(const iu_caller *c, const pv_volume *v)
{
    return iu_put_volume(c, v, LAYOUT);
}

/* Sample (x, y) of a u8, u16 or f32 image, and its setter (the shared
 * helpers of test_util.c know u8 and f32 only). */
static double sample_of(const pv_image *image, int x, int y)
{
    const ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    return image->type == PV_PIXEL_U8    ? ((const uint8_t *)image->data)[i]
           : image->type == PV_PIXEL_U16 ? ((const uint16_t *)image->data)[i]
                                         : ((const float *)image->data)[i];
}

static void set_sample(pv_image *image, int x, int y, double value)
{
    const ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    if (image->type == PV_PIXEL_U8)
        ((uint8_t *)image->data)[i] = (uint8_t)value;
    else if (image->type == PV_PIXEL_U16)
        ((uint16_t *)image->data)[i] = (uint16_t)value;
    else
        ((float *)image->data)[i] = (float)value;
}

/* A textured pair of `type`: a random reference (0..255, 0..60000 or
 * 0..1) and the same moved by (SX, SY) with wrap-around. */
static void moved_pair(pv_image *reference, pv_image *moving, pv_pixel_type type, uint32_t seed)
{
    const double range = type == PV_PIXEL_U8 ? 255.0 : type == PV_PIXEL_U16 ? 60000.0 : 1.0;
    uint32_t state = seed;
    assert_int_equal(pv_image_alloc(reference, W, H, type), PV_OK);
    assert_int_equal(pv_image_alloc(moving, W, H, type), PV_OK);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            state = state * 1664525u + 1013904223u;
            set_sample(reference, x, y, (double)(state >> 8) / 16777216.0 * range);
        }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            set_sample(moving, x, y, sample_of(reference, (x - SX + W) % W, (y - SY + H) % H));
}

static void expect_same_shift(const pv_shift *got, const pv_shift *want, const char *what)
{
    if (memcmp(got, want, sizeof *got) != 0)
        fail_msg("%s: (%.9g, %.9g, %.9g) peak %.9g flags %u against the host call's "
                 "(%.9g, %.9g, %.9g) peak %.9g flags %u",
                 what, got->dx, got->dy, got->dz, got->peak, got->flags, want->dx, want->dy,
                 want->dz, want->peak, want->flags);
}

/* Within the cross-check's tolerances of the CPU backend's shift. */
static void expect_near_shift(const pv_shift *got, const pv_shift *cpu, double tolerance,
                              const char *what)
{
    const double error =
        fmax(fabs(got->dx - cpu->dx), fmax(fabs(got->dy - cpu->dy), fabs(got->dz - cpu->dz)));
    if (!(error <= tolerance) || !(fabs(got->peak - cpu->peak) <= PV_TOL_PC_PEAK) ||
        got->flags != cpu->flags)
        fail_msg("%s: (%g, %g, %g) peak %g against the CPU's (%g, %g, %g) peak %g", what,
                 got->dx, got->dy, got->dz, got->peak, cpu->dx, cpu->dy, cpu->dz, cpu->peak);
}

/* Default options (no centring: the inputs straight into the transform),
 * a Hann window with padding (centred: the means and the energy floor on
 * the device), and the upsampled refinement. */
static pv_phasecorr_options options_case(int which)
{
    pv_phasecorr_options o;
    pv_phasecorr_options_default(&o);
    if (which == 1) {
        o.window = PV_WINDOW_HANN;
        o.pad = PV_PAD_FFT;
    } else if (which == 2) {
        o.window = PV_WINDOW_HANN;
        o.subpixel = PV_SUBPIXEL_UPSAMPLE;
        o.upsample = 20;
    }
    return o;
}

static double shift_tolerance(const pv_phasecorr_options *o)
{
    return o->subpixel == PV_SUBPIXEL_UPSAMPLE ? fmax(PV_TOL_PC_SHIFT, 1.0 / o->upsample) + 1e-9
                                               : PV_TOL_PC_SHIFT;
}

/* ---------------------------------------------------------- phase, 2D */

static void pc_image_case(iu_caller *c, pv_pixel_type type, int which)
{
    char what[96];
    pv_image reference, moving;
    moved_pair(&reference, &moving, type, 11u + (uint32_t)which);
    const pv_phasecorr_options o = options_case(which);
    pv_shift want, cpu, got;
    memset(&got, 0xA5, sizeof got);
    tu_expect_ok(tu_opencl, pv_phase_correlate(tu_opencl, &reference, &moving, &o, &want),
                 "host phase correlation");
    tu_expect_ok(tu_cpu, pv_phase_correlate(tu_cpu, &reference, &moving, &o, &cpu),
                 "CPU phase correlation");
    pv_buffer r = put_image(c, &reference), m = put_image(c, &moving);
    cl_event done = NULL;
    snprintf(what, sizeof what, "phase_correlate_cl, type %d, options %d", (int)type, which);
    tu_expect_ok(c->ctx, pv_phase_correlate_cl(c->ctx, &r, &m, &o, &got, 0, NULL, &done), what);
    iu_wait_and_release(done);
    expect_same_shift(&got, &want, what);
    expect_near_shift(&got, &cpu, shift_tolerance(&o), what);
    assert_true(fabs(got.dx - SX) < 0.5 && fabs(got.dy - SY) < 0.5);
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem);
    image_list_free(&reference, &moving, NULL);
}

static void test_pc_images_equal_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    const pv_pixel_type types[] = {PV_PIXEL_U8, PV_PIXEL_F32, PV_PIXEL_U16};
    for (int t = 0; t < 3; t++)
        for (int which = 0; which < 3; which++)
            pc_image_case(&c, types[t], which);
    iu_caller_free(&c);
}

/* ---------------------------------------------------------- phase, 3D */

/* A random volume and the same moved by (SX, SY, SZ), wrapped; U16
 * samples when u16. */
static void moved_volumes(pv_volume *reference, pv_volume *moving, int u16)
{
    pv_volume f = tu_random_volume(VX, VY, VZ, 21u);
    if (u16) {
        assert_int_equal(pv_volume_alloc_u16(reference, VX, VY, VZ), PV_OK);
        assert_int_equal(pv_volume_alloc_u16(moving, VX, VY, VZ), PV_OK);
    } else {
        assert_int_equal(pv_volume_alloc(reference, VX, VY, VZ), PV_OK);
        assert_int_equal(pv_volume_alloc(moving, VX, VY, VZ), PV_OK);
    }
    for (int z = 0; z < VZ; z++)
        for (int y = 0; y < VY; y++)
            for (int x = 0; x < VX; x++) {
                const size_t at = ((size_t)z * VY + y) * VX + x;
                const size_t zf = (size_t)(z - SZ + VZ) % VZ, yf = (size_t)(y - SY + VY) % VY;
                const size_t from = (zf * VY + yf) * VX + (size_t)(x - SX + VX) % VX;
                if (u16) {
                    reference->data_u16[at] = (uint16_t)(f.data[at] * 4000.0f);
                    moving->data_u16[at] = (uint16_t)(f.data[from] * 4000.0f);
                } else {
                    reference->data[at] = f.data[at];
                    moving->data[at] = f.data[from];
                }
            }
    pv_volume_free(&f);
}

static void pc_volume_case(iu_caller *c, int u16, int which)
{
    char what[96];
    pv_volume reference, moving;
    moved_volumes(&reference, &moving, u16);
    const pv_phasecorr_options o = options_case(which);
    pv_shift want, cpu, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate3d(tu_opencl, &reference, &moving, &o, &want),
                 "host phase correlation 3D");
    tu_expect_ok(tu_cpu, pv_phase_correlate3d(tu_cpu, &reference, &moving, &o, &cpu),
                 "CPU phase correlation 3D");
    pv_buffer r = put_volume(c, &reference), m = put_volume(c, &moving);
    snprintf(what, sizeof what, "phase_correlate3d_cl, %s, options %d", u16 ? "u16" : "f32",
             which);
    /* no event asked for: the caller's queue orders what follows */
    tu_expect_ok(c->ctx, pv_phase_correlate3d_cl(c->ctx, &r, &m, &o, &got, 0, NULL, NULL), what);
    expect_same_shift(&got, &want, what);
    expect_near_shift(&got, &cpu, shift_tolerance(&o), what);
    assert_true(fabs(got.dx - SX) < 0.5 && fabs(got.dy - SY) < 0.5 && fabs(got.dz - SZ) < 0.5);
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem);
    pv_volume_free(&reference);
    pv_volume_free(&moving);
}

static void test_pc_volumes_equal_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pc_volume_case(&c, 1, 0);
    pc_volume_case(&c, 1, 1);
    pc_volume_case(&c, 0, 1);
    pc_volume_case(&c, 0, 2);
    iu_caller_free(&c);
}

/* ------------------------------------------------- decisions on values */

static void test_pc_textureless_and_non_finite(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image reference, moving, flat;
    moved_pair(&reference, &moving, PV_PIXEL_F32, 5u);
    assert_int_equal(pv_image_alloc(&flat, W, H, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&flat, 3.25f);
    const pv_phasecorr_options o = options_case(1);
    pv_shift want, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate(tu_opencl, &reference, &flat, &o, &want), "host");
    assert_true(want.flags & PV_REGISTER_NO_TEXTURE);
    pv_buffer r = put_image(&c, &reference), f = put_image(&c, &flat);
    tu_expect_ok(c.ctx, pv_phase_correlate_cl(c.ctx, &r, &f, &o, &got, 0, NULL, NULL),
                 "a flat moving image");
    expect_same_shift(&got, &want, "flat moving image");
    /* a NaN is refused, as the host call refuses it, the shift untouched */
    set_sample(&moving, 7, 9, NAN);
    assert_int_equal(pv_phase_correlate(tu_opencl, &reference, &moving, &o, &want),
                     PV_ERR_INVALID);
    pv_buffer m = put_image(&c, &moving);
    pv_shift kept;
    memset(&kept, 0x5A, sizeof kept);
    got = kept;
    assert_int_equal(pv_phase_correlate_cl(c.ctx, &r, &m, &o, &got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_non_null(strstr(pv_last_error(), "NaN"));
    assert_memory_equal(&got, &kept, sizeof got);
    clReleaseMemObject(r.mem), clReleaseMemObject(f.mem), clReleaseMemObject(m.mem);
    image_list_free(&reference, &moving, &flat, NULL);
    iu_caller_free(&c);
}

/* The cross-check: the buffers read to the host, the host call (with the
 * CPU comparison) on them; the wait list (a completed user event and a
 * marker of the caller's queue) honoured. */
static void test_pc_crosscheck_and_wait_list(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image reference, moving;
    moved_pair(&reference, &moving, PV_PIXEL_U8, 8u);
    const pv_phasecorr_options o = options_case(2);
    pv_shift want, got;
    tu_expect_ok(tu_opencl, pv_phase_correlate(tu_opencl, &reference, &moving, &o, &want), "host");
    pv_buffer r = put_image(&c, &reference), m = put_image(&c, &moving);
    cl_int err;
    cl_event events[2];
    events[0] = clCreateUserEvent(c.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(events[0], CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clEnqueueMarkerWithWaitList(c.queue, 0, NULL, &events[1]), CL_SUCCESS);
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    cl_event done = NULL;
    tu_expect_ok(c.ctx, pv_phase_correlate_cl(c.ctx, &r, &m, &o, &got, 2, events, &done),
                 "phase_correlate_cl cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    expect_same_shift(&got, &want, "cross-checked");
    tu_expect_ok(c.ctx, pv_phase_correlate_cl(c.ctx, &r, &m, &o, &got, 2, events, NULL),
                 "phase_correlate_cl after a wait list");
    expect_same_shift(&got, &want, "after a wait list");
    clReleaseEvent(events[0]), clReleaseEvent(events[1]);
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem);
    image_list_free(&reference, &moving, NULL);
    iu_caller_free(&c);
}

/* ------------------------------------------------------------- misuse */

static void expect_pc_refused(iu_caller *c, const pv_buffer *r, const pv_buffer *m,
                              cl_uint wait_count, const cl_event *wait_list, pv_status expected,
                              const char *what)
{
    pv_shift got, kept;
    memset(&kept, 0x5A, sizeof kept);
    got = kept;
    cl_event done = NULL;
    pv_status status = pv_phase_correlate_cl(c->ctx, r, m, NULL, &got, wait_count, wait_list,
                                             &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    assert_memory_equal(&got, &kept, sizeof got);
}

static void test_pc_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image reference, moving;
    moved_pair(&reference, &moving, PV_PIXEL_F32, 9u);
    pv_buffer r = put_image(&c, &reference), m = put_image(&c, &moving);
    pv_buffer foreign = put_image(&other, &moving);
    expect_pc_refused(&c, NULL, &m, 0, NULL, PV_ERR_INVALID, "NULL reference");
    expect_pc_refused(&c, &r, NULL, 0, NULL, PV_ERR_INVALID, "NULL moving");
    expect_pc_refused(&c, &r, &foreign, 0, NULL, PV_ERR_INVALID, "another context's buffer");
    pv_buffer rgb = r, rgb_m = m; /* a colour type: refused by the host call's checks */
    rgb.type = rgb_m.type = PV_PIXEL_RGB8;
    expect_pc_refused(&c, &rgb, &rgb_m, 0, NULL, PV_ERR_INVALID, "wrong type");
    pv_buffer big = m; /* a type of more bytes than the buffer holds */
    big.type = PV_PIXEL_RGB16;
    expect_pc_refused(&c, &r, &big, 0, NULL, PV_ERR_INVALID, "type larger than the buffer");
    pv_buffer narrow = m;
    narrow.stride = W - 1;
    expect_pc_refused(&c, &r, &narrow, 0, NULL, PV_ERR_INVALID, "stride < width");
    pv_buffer odd = m; /* an offset that is not a whole sample */
    odd.offset = OFFSET + 2;
    expect_pc_refused(&c, &r, &odd, 0, NULL, PV_ERR_INVALID, "offset within a sample");
    pv_buffer small = m;
    small.height = H - 1;
    expect_pc_refused(&c, &r, &small, 0, NULL, PV_ERR_INVALID, "sizes differ");
    expect_pc_refused(&c, &r, &m, 1, NULL, PV_ERR_INVALID, "a count with no wait list");
    cl_event failed = iu_failed_event(&c);
    expect_pc_refused(&c, &r, &m, 1, &failed, PV_ERR_INVALID, "a failed event");
    clReleaseEvent(failed);
    assert_int_equal(pv_phase_correlate_cl(c.ctx, &r, &m, NULL, NULL, 0, NULL, NULL),
                     PV_ERR_INVALID);
    pv_phasecorr_options bad = options_case(0);
    bad.upsample = 0;
    pv_shift got;
    assert_int_equal(pv_phase_correlate_cl(c.ctx, &r, &m, &bad, &got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    /* device buffers on a CPU context; a volume call given images' types */
    assert_int_equal(pv_phase_correlate_cl(tu_cpu, &r, &m, NULL, &got, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_phase_correlate3d_cl(tu_cpu, &r, &m, NULL, &got, 0, NULL, NULL),
                     PV_ERR_UNSUPPORTED);
    pv_buffer u8 = r;
    u8.type = PV_PIXEL_U8;
    assert_int_equal(pv_phase_correlate3d_cl(c.ctx, &u8, &u8, NULL, &got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_int_equal(pv_phase_correlate_cl(NULL, &r, &m, NULL, &got, 0, NULL, NULL),
                     PV_ERR_INVALID);
    /* the context still works after every refusal */
    tu_expect_ok(c.ctx, pv_phase_correlate_cl(c.ctx, &r, &m, NULL, &got, 0, NULL, NULL),
                 "after the refusals");
    clReleaseMemObject(r.mem), clReleaseMemObject(m.mem), clReleaseMemObject(foreign.mem);
    image_list_free(&reference, &moving, NULL);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ---------------------------------------------------------- normxcorr2 */

#define TW 16
#define TH 12
#define TX 21 /* the template is the image's block at (TX, TY) */
#define TY 15
#define SENTINEL 7.0f
#define OVERLAP (TW * TH / 2) /* no peaks of a few pixels' overlap at the border */

static pv_buffer new_map(const iu_caller *c)
{
    pv_image map;
    assert_int_equal(pv_image_alloc(&map, W + TW - 1, H + TH - 1, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&map, SENTINEL);
    pv_buffer b = put_image(c, &map);
    pv_image_free(&map);
    return b;
}

/* The largest |a - b| over two maps (NaN: infinite). */
static double map_difference(const pv_image *a, const pv_image *b)
{
    double worst = 0.0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++) {
            const double d = fabs((double)*tu_fpixel(a, x, y) - (double)*tu_fpixel(b, x, y));
            worst = d <= worst ? worst : isnan(d) ? INFINITY : d;
        }
    return worst;
}

/* An image of `type` and the template cut from it, the template's copy
 * scaled and offset (NCC does not see either) and lightly noised. */
static void ncc_inputs(pv_image *templ, pv_image *image, pv_pixel_type type, uint32_t seed)
{
    pv_image unused;
    moved_pair(image, &unused, type, seed);
    pv_image_free(&unused);
    assert_int_equal(pv_image_alloc(templ, TW, TH, type), PV_OK);
    for (int y = 0; y < TH; y++)
        for (int x = 0; x < TW; x++)
            set_sample(templ, x, y,
                       sample_of(image, TX + x, TY + y) * 0.5 +
                           ((x * 7 + y) % 3) * (type == PV_PIXEL_F32 ? 0.01 : 1.0));
}

static void expect_same_map(const pv_image *got, const pv_image *want, const char *what)
{
    for (int y = 0; y < want->height; y++)
        for (int x = 0; x < want->width; x++)
            if (!(*tu_fpixel(got, x, y) == *tu_fpixel(want, x, y)))
                fail_msg("%s: (%d, %d) %.9g against the host call's %.9g", what, x, y,
                         (double)*tu_fpixel(got, x, y), (double)*tu_fpixel(want, x, y));
}

/* Field by field: the structure has padding. */
static void expect_same_result(const pv_ncc_result *got, const pv_ncc_result *want,
                               const char *what)
{
    if (got->x != want->x || got->y != want->y || got->coefficient != want->coefficient ||
        got->sub_x != want->sub_x || got->sub_y != want->sub_y || got->flags != want->flags)
        fail_msg("%s: (%d, %d) %.9g (%.9g, %.9g) flags %u against the host call's (%d, %d) "
                 "%.9g (%.9g, %.9g) flags %u",
                 what, got->x, got->y, (double)got->coefficient, got->sub_x, got->sub_y,
                 got->flags, want->x, want->y, (double)want->coefficient, want->sub_x,
                 want->sub_y, want->flags);
}

static void ncc_case(iu_caller *c, pv_pixel_type type)
{
    char what[64];
    snprintf(what, sizeof what, "normxcorr2_cl, type %d", (int)type);
    pv_image templ, image, want, cpu;
    ncc_inputs(&templ, &image, type, 31u);
    assert_int_equal(pv_image_alloc(&want, W + TW - 1, H + TH - 1, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&cpu, W + TW - 1, H + TH - 1, PV_PIXEL_F32), PV_OK);
    pv_ncc_result want_result, cpu_result, got_result;
    tu_expect_ok(tu_opencl, pv_normxcorr2(tu_opencl, &templ, &image, OVERLAP, &want, &want_result),
                 "host normxcorr2");
    tu_expect_ok(tu_cpu, pv_normxcorr2(tu_cpu, &templ, &image, OVERLAP, &cpu, &cpu_result),
                 "CPU normxcorr2");
    assert_int_equal(want_result.x, TX);
    assert_int_equal(want_result.y, TY);
    pv_buffer t = put_image(c, &templ), i = put_image(c, &image), m = new_map(c);
    cl_event done = NULL;
    tu_expect_ok(c->ctx, pv_normxcorr2_cl(c->ctx, &t, &i, OVERLAP, &m, &got_result, 0, NULL, &done),
                 what);
    assert_int_equal(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
    pv_image got = iu_get_image(c, &m);
    expect_same_map(&got, &want, what);
    expect_same_result(&got_result, &want_result, what);
    /* the CPU backend's map within the cross-check's tolerance */
    assert_true(map_difference(&got, &cpu) <= PV_TOL_NCC_MAP);
    assert_int_equal(got_result.x, cpu_result.x);
    assert_int_equal(got_result.y, cpu_result.y);
    /* the result alone (the map in host memory), and the map alone */
    memset(&got_result, 0, sizeof got_result);
    tu_expect_ok(c->ctx,
                 pv_normxcorr2_cl(c->ctx, &t, &i, OVERLAP, NULL, &got_result, 0, NULL, NULL),
                 "result only");
    expect_same_result(&got_result, &want_result, what);
    pv_buffer m2 = new_map(c);
    tu_expect_ok(c->ctx, pv_normxcorr2_cl(c->ctx, &t, &i, OVERLAP, &m2, NULL, 0, NULL, NULL),
                 "map only");
    pv_image got2 = iu_get_image(c, &m2);
    expect_same_map(&got2, &want, "map only");
    clReleaseMemObject(t.mem), clReleaseMemObject(i.mem), clReleaseMemObject(m.mem);
    clReleaseMemObject(m2.mem);
    image_list_free(&templ, &image, &want, &cpu, &got, &got2, NULL);
}

static void test_ncc_equals_host_call(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    ncc_case(&c, PV_PIXEL_U8);
    ncc_case(&c, PV_PIXEL_F32);
    iu_caller_free(&c);
}

static void test_ncc_textureless_non_finite_crosscheck(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new();
    pv_image templ, image, flat, want;
    ncc_inputs(&templ, &image, PV_PIXEL_F32, 41u);
    assert_int_equal(pv_image_alloc(&flat, TW, TH, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&flat, 0.5f);
    assert_int_equal(pv_image_alloc(&want, W + TW - 1, H + TH - 1, PV_PIXEL_F32), PV_OK);
    pv_ncc_result want_result, got_result;
    /* a flat template: NO_TEXTURE and a zero map, as the host call */
    tu_expect_ok(tu_opencl, pv_normxcorr2(tu_opencl, &flat, &image, OVERLAP, &want, &want_result),
                 "host, flat");
    assert_true(want_result.flags & PV_REGISTER_NO_TEXTURE);
    pv_buffer f = put_image(&c, &flat), i = put_image(&c, &image), m = new_map(&c);
    tu_expect_ok(c.ctx, pv_normxcorr2_cl(c.ctx, &f, &i, OVERLAP, &m, &got_result, 0, NULL, NULL),
                 "flat template");
    expect_same_result(&got_result, &want_result, "normxcorr2_cl");
    pv_image got = iu_get_image(&c, &m);
    assert_true(tu_image_all_equal(&got, 0.0f));
    pv_image_free(&got);
    /* the cross-check: host copies, the host call and its CPU comparison */
    pv_buffer t = put_image(&c, &templ), m2 = new_map(&c);
    tu_expect_ok(tu_opencl, pv_normxcorr2(tu_opencl, &templ, &image, OVERLAP, &want, &want_result),
                 "host");
    tu_expect_ok(c.ctx, pv_context_set_crosscheck(c.ctx, 1), "crosscheck on");
    tu_expect_ok(c.ctx, pv_normxcorr2_cl(c.ctx, &t, &i, OVERLAP, &m2, &got_result, 0, NULL, NULL),
                 "cross-checked");
    pv_context_set_crosscheck(c.ctx, 0);
    got = iu_get_image(&c, &m2);
    expect_same_map(&got, &want, "cross-checked");
    expect_same_result(&got_result, &want_result, "normxcorr2_cl");
    pv_image_free(&got);
    /* a NaN: refused as the host call refuses it, the outputs untouched */
    set_sample(&image, 3, 4, NAN);
    assert_int_equal(pv_normxcorr2(tu_opencl, &templ, &image, OVERLAP, &want, &want_result),
                     PV_ERR_INVALID);
    pv_buffer bad = put_image(&c, &image), m3 = new_map(&c);
    pv_ncc_result kept;
    memset(&kept, 0x5A, sizeof kept);
    got_result = kept;
    assert_int_equal(pv_normxcorr2_cl(c.ctx, &t, &bad, OVERLAP, &m3, &got_result, 0, NULL, NULL),
                     PV_ERR_INVALID);
    assert_memory_equal(&got_result, &kept, sizeof kept);
    got = iu_get_image(&c, &m3);
    assert_true(tu_image_all_equal(&got, SENTINEL));
    clReleaseMemObject(f.mem), clReleaseMemObject(i.mem), clReleaseMemObject(m.mem);
    clReleaseMemObject(t.mem), clReleaseMemObject(m2.mem), clReleaseMemObject(bad.mem);
    clReleaseMemObject(m3.mem);
    image_list_free(&templ, &image, &flat, &want, &got, NULL);
    iu_caller_free(&c);
}

static void expect_ncc_refused(pv_context *ctx, const pv_buffer *t, const pv_buffer *i,
                               const pv_buffer *m, pv_ncc_result *result, cl_uint wait_count,
                               const cl_event *wait_list, pv_status expected, const char *what)
{
    pv_ncc_result kept;
    memset(&kept, 0x5A, sizeof kept);
    if (result)
        *result = kept;
    cl_event done = NULL;
    pv_status status =
        pv_normxcorr2_cl(ctx, t, i, OVERLAP, m, result, wait_count, wait_list, &done);
    iu_expect_status(status, expected, what);
    assert_null(done);
    if (result)
        assert_memory_equal(result, &kept, sizeof kept);
}

static void test_ncc_misuse(void **state)
{
    (void)state;
    iu_caller c = iu_caller_new(), other = iu_caller_new();
    pv_image templ, image;
    ncc_inputs(&templ, &image, PV_PIXEL_U8, 51u);
    pv_buffer t = put_image(&c, &templ), i = put_image(&c, &image), m = new_map(&c);
    pv_buffer foreign = put_image(&other, &image);
    pv_ncc_result r;
    expect_ncc_refused(c.ctx, NULL, &i, &m, &r, 0, NULL, PV_ERR_INVALID, "NULL templ");
    expect_ncc_refused(c.ctx, &t, &i, NULL, NULL, 0, NULL, PV_ERR_INVALID, "no output");
    expect_ncc_refused(c.ctx, &t, &foreign, &m, &r, 0, NULL, PV_ERR_INVALID,
                       "another context's buffer");
    pv_buffer u8_map = m;
    u8_map.type = PV_PIXEL_U8;
    expect_ncc_refused(c.ctx, &t, &i, &u8_map, &r, 0, NULL, PV_ERR_INVALID, "a u8 map");
    pv_buffer small = m;
    small.height -= 1;
    expect_ncc_refused(c.ctx, &t, &i, &small, &r, 0, NULL, PV_ERR_INVALID, "map size");
    pv_buffer u16 = i;
    u16.type = PV_PIXEL_U16;
    u16.width = W / 2;
    expect_ncc_refused(c.ctx, &t, &u16, &m, &r, 0, NULL, PV_ERR_INVALID, "a u16 image");
    pv_buffer narrow = i;
    narrow.stride = W - 1;
    expect_ncc_refused(c.ctx, &t, &narrow, &m, &r, 0, NULL, PV_ERR_INVALID,
                       "stride < width");
    pv_buffer over = i; /* the map on the image's bytes */
    over.type = PV_PIXEL_F32;
    over.width = W + TW - 1;
    over.height = 2;
    over.stride = over.width;
    pv_buffer image_as_map = over;
    image_as_map.height = H + TH - 1;
    expect_ncc_refused(c.ctx, &t, &i, &image_as_map, &r, 0, NULL, PV_ERR_INVALID,
                       "map over the image");
    cl_event failed = iu_failed_event(&c);
    expect_ncc_refused(c.ctx, &t, &i, &m, &r, 1, &failed, PV_ERR_INVALID, "a failed event");
    clReleaseEvent(failed);
    pv_buffer odd_in = i; /* u8: any offset is a whole sample; f32 needs four */
    odd_in.type = PV_PIXEL_F32;
    odd_in.width = W / 4;
    odd_in.offset = OFFSET + 2;
    expect_ncc_refused(c.ctx, &t, &odd_in, &m, &r, 0, NULL, PV_ERR_INVALID,
                       "offset within a sample");
    expect_ncc_refused(tu_cpu, &t, &i, &m, &r, 0, NULL, PV_ERR_UNSUPPORTED, "CPU context");
    expect_ncc_refused(c.ctx, &t, &i, &m, &r, 1, NULL, PV_ERR_INVALID, "count, no list");
    pv_image untouched = iu_get_image(&c, &m);
    assert_true(tu_image_all_equal(&untouched, SENTINEL));
    pv_image_free(&untouched);
    tu_expect_ok(c.ctx, pv_normxcorr2_cl(c.ctx, &t, &i, OVERLAP, &m, &r, 0, NULL, NULL),
                 "after the refusals");
    assert_int_equal(r.x, TX);
    assert_int_equal(r.y, TY);
    clReleaseMemObject(t.mem), clReleaseMemObject(i.mem), clReleaseMemObject(m.mem);
    clReleaseMemObject(foreign.mem);
    image_list_free(&templ, &image, NULL);
    iu_caller_free(&other);
    iu_caller_free(&c);
}

/* ------------------------------------------------------- injected faults */

/* A caller's context whose n-th OpenCL enqueue fails (PARVIS_FAULT, read
 * when the context is made). */
static iu_caller faulty_caller(long n)
{
    char spec[32];
    snprintf(spec, sizeof spec, "enqueue:%ld", n);
    setenv("PARVIS_FAULT", spec, 1);
    iu_caller c = iu_caller_new();
    unsetenv("PARVIS_FAULT");
    return c;
}

/* An enqueue failing anywhere in the calls (the device passes over the
 * inputs among them) fails the call with its outputs untouched; a call
 * the fault missed gives the host call's answer. */
static void test_faults_leave_outputs_untouched(void **state)
{
    (void)state;
    pv_image reference, moving, templ, image;
    moved_pair(&reference, &moving, PV_PIXEL_U8, 61u);
    ncc_inputs(&templ, &image, PV_PIXEL_U8, 62u);
    const pv_phasecorr_options o = options_case(1);
    pv_shift want, kept;
    pv_ncc_result want_result, kept_result;
    tu_expect_ok(tu_opencl, pv_phase_correlate(tu_opencl, &reference, &moving, &o, &want), "host");
    tu_expect_ok(tu_opencl,
                 pv_normxcorr2(tu_opencl, &templ, &image, OVERLAP, NULL, &want_result),
                 "host ncc");
    memset(&kept, 0x5A, sizeof kept);
    memset(&kept_result, 0x5A, sizeof kept_result);
    int pc_failures = 0, ncc_failures = 0;
    static const long points[] = {1, 2, 3, 5, 8, 13, 21, 34, 55};
    for (size_t k = 0; k < sizeof points / sizeof points[0]; k++) {
        iu_caller c = faulty_caller(points[k]);
        pv_buffer r = put_image(&c, &reference), m = put_image(&c, &moving);
        pv_buffer t = put_image(&c, &templ), i = put_image(&c, &image), map = new_map(&c);
        pv_shift got = kept;
        pv_status status = pv_phase_correlate_cl(c.ctx, &r, &m, &o, &got, 0, NULL, NULL);
        if (status == PV_OK)
            expect_same_shift(&got, &want, "phase correlation the fault missed");
        else
            assert_memory_equal(&got, &kept, sizeof got);
        pv_ncc_result result = kept_result;
        pv_status ncc = pv_normxcorr2_cl(c.ctx, &t, &i, OVERLAP, &map, &result, 0, NULL, NULL);
        pv_image got_map = iu_get_image(&c, &map);
        if (ncc == PV_OK) {
            expect_same_result(&result, &want_result, "normxcorr2 the fault missed");
        } else {
            assert_memory_equal(&result, &kept_result, sizeof result);
            assert_true(tu_image_all_equal(&got_map, SENTINEL));
        }
        pv_image_free(&got_map);
        pc_failures += status != PV_OK;
        ncc_failures += ncc != PV_OK;
        clReleaseMemObject(r.mem), clReleaseMemObject(m.mem), clReleaseMemObject(t.mem);
        clReleaseMemObject(i.mem), clReleaseMemObject(map.mem);
        iu_caller_free(&c);
    }
    if (!(pc_failures > 0 && ncc_failures > 0))
        fail_msg("faults hit %d phase correlations and %d normxcorr2 calls", pc_failures,
                 ncc_failures);
    image_list_free(&reference, &moving, &templ, &image, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pc_images_equal_host_call),
        cmocka_unit_test(test_pc_volumes_equal_host_call),
        cmocka_unit_test(test_pc_textureless_and_non_finite),
        cmocka_unit_test(test_pc_crosscheck_and_wait_list),
        cmocka_unit_test(test_pc_misuse),
        cmocka_unit_test(test_ncc_equals_host_call),
        cmocka_unit_test(test_ncc_textureless_non_finite_crosscheck),
        cmocka_unit_test(test_ncc_misuse),
        cmocka_unit_test(test_faults_leave_outputs_untouched),
    };
    return cmocka_run_group_tests_name("interop_register", tests, tu_group_setup,
                                       tu_group_teardown);
}
