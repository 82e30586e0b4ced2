/* The shared operations of test_threads and test_faults (workload.h). */
#include "workload.h"

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL (-7.25f)

static pv_image g_left, g_right;       /* 48x40 u8, right = left moved 3 px */
static pv_image g_reference, g_moving; /* 32x32 f32, moving = reference moved (2, 1) */
static pv_image g_templ, g_search;     /* NCC: 6x6 cut from 24x24 */
static pv_image g_blob;                /* 64x64 f32 for SIFT */
static pv_volume g_fixed, g_moved;     /* flow: 12^3 */
static pv_volume g_oct_ref, g_oct_target;

#define OCT_SIZE_X 32
#define OCT_SIZE_Y 24
#define OCT_BSCANS 24

static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static float random01(uint32_t *state)
{
    return (float)(next_random(state) >> 8) / 16777216.0f;
}

/* Smooth-ish texture: noise averaged over 3x3, so correlations peak cleanly. */
static float texture(int x, int y, uint32_t seed)
{
    float sum = 0.0f;
    for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++) {
            uint32_t s = seed ^ ((uint32_t)(x + i) * 73856093u) ^ ((uint32_t)(y + j) * 19349663u);
            s = s ? s : 1;
            next_random(&s);
            sum += random01(&s);
        }
    return sum / 9.0f;
}

static int make_images(void)
{
    if (pv_image_alloc(&g_left, 48, 40, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&g_right, 48, 40, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&g_reference, 32, 32, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&g_moving, 32, 32, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&g_templ, 6, 6, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&g_search, 24, 24, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&g_blob, 64, 64, PV_PIXEL_F32) != PV_OK)
        return -1;
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 48; x++) {
            ((uint8_t *)g_left.data)[y * 48 + x] = (uint8_t)(255.0f * texture(x, y, 11));
            ((uint8_t *)g_right.data)[y * 48 + x] = (uint8_t)(255.0f * texture(x + 3, y, 11));
        }
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++) {
            ((float *)g_reference.data)[y * 32 + x] = texture(x, y, 23);
            ((float *)g_moving.data)[y * 32 + x] = texture((x + 30) % 32, (y + 31) % 32, 23);
        }
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 24; x++)
            ((float *)g_search.data)[y * 24 + x] = texture(x, y, 31);
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 6; x++)
            ((float *)g_templ.data)[y * 6 + x] = ((float *)g_search.data)[(y + 7) * 24 + x + 5];
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++) {
            float dx = (float)(x - 30), dy = (float)(y - 34);
            ((float *)g_blob.data)[y * 64 + x] =
                0.6f * expf(-(dx * dx + dy * dy) / 40.0f) + 0.4f * texture(x / 4, y / 4, 5);
        }
    return 0;
}

static int make_volumes(void)
{
    if (pv_volume_alloc(&g_fixed, 12, 12, 12) != PV_OK ||
        pv_volume_alloc(&g_moved, 12, 12, 12) != PV_OK ||
        pv_volume_alloc(&g_oct_ref, OCT_SIZE_X, OCT_SIZE_Y, OCT_BSCANS) != PV_OK ||
        pv_volume_alloc(&g_oct_target, OCT_SIZE_X, OCT_SIZE_Y, OCT_BSCANS) != PV_OK)
        return -1;
    for (int z = 0; z < 12; z++)
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 12; x++) {
                float a = sinf(0.5f * (float)x) * cosf(0.4f * (float)y) + 0.3f * sinf(0.6f * (float)z);
                float b = sinf(0.5f * (float)x - 0.25f) * cosf(0.4f * (float)y) +
                          0.3f * sinf(0.6f * (float)z);
                g_fixed.data[(z * 12 + y) * 12 + x] = a;
                g_moved.data[(z * 12 + y) * 12 + x] = b;
            }
    pv_octreg_synth_params p;
    tu_octreg_synth_params(&p, OCT_SIZE_X, OCT_SIZE_Y, OCT_BSCANS, 3);
    p.integer_shifts = 1;
    p.saccades = 0;
    return pv_octreg_synthesize(&p, &g_oct_ref, &g_oct_target, NULL) == PV_OK ? 0 : -1;
}

int wl_init(void)
{
    return make_images() == 0 && make_volumes() == 0 ? 0 : -1;
}

void wl_free(void)
{
    pv_image *images[] = {&g_left, &g_right, &g_reference, &g_moving, &g_templ, &g_search, &g_blob};
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
        pv_image_free(images[i]);
    pv_volume *volumes[] = {&g_fixed, &g_moved, &g_oct_ref, &g_oct_target};
    for (size_t i = 0; i < sizeof volumes / sizeof volumes[0]; i++)
        pv_volume_free(volumes[i]);
}

/* ------------------------------------------------------------ helpers */

static void fill_floats(float *data, size_t count, float value)
{
    for (size_t i = 0; i < count; i++)
        data[i] = value;
}

static int all_equal(const float *data, size_t count, float value)
{
    for (size_t i = 0; i < count; i++)
        if (data[i] != value)
            return 0;
    return 1;
}

static void put(wl_result *out, float value)
{
    if (out->count < WL_MAX_VALUES)
        out->values[out->count++] = value;
}

static void put_floats(wl_result *out, const float *data, size_t count)
{
    for (size_t i = 0; i < count; i++)
        put(out, data[i]);
}

/* A width x height f32 image of sentinels, for a call to write into. */
static pv_status sentinel_image(pv_image *image, int width, int height)
{
    if (pv_image_alloc(image, width, height, PV_PIXEL_F32) != PV_OK)
        return PV_ERR_NOMEM;
    fill_floats(image->data, (size_t)width * (size_t)height, SENTINEL);
    return PV_OK;
}

/* Run an image-producing call into a sentinel-filled f32 image. */
static pv_status image_result(pv_status status, pv_image *image, wl_result *out, int *untouched)
{
    size_t n = (size_t)image->width * (size_t)image->height;
    if (status == PV_OK)
        put_floats(out, image->data, n);
    else
        *untouched = all_equal(image->data, n, SENTINEL);
    pv_image_free(image);
    return status;
}

/* ---------------------------------------------------------- operations */

static pv_status op_blur(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_image dst;
    if (sentinel_image(&dst, 32, 32) != PV_OK)
        return PV_ERR_NOMEM;
    return image_result(pv_gaussian_blur(ctx, &g_reference, &dst, 1.2f, 0), &dst, out, untouched);
}

/* SAD (bp NULL) or BP on the shared pair, into a sentinel disparity map. */
static pv_status stereo_result(pv_context *ctx, const pv_sad_params *sad, const pv_bp_params *bp,
                               wl_result *out, int *untouched)
{
    pv_image disparity;
    if (sentinel_image(&disparity, 48, 40) != PV_OK)
        return PV_ERR_NOMEM;
    pv_status status = bp ? pv_stereo_bp(ctx, &g_left, &g_right, bp, &disparity)
                          : pv_stereo_sad(ctx, &g_left, &g_right, sad, &disparity);
    return image_result(status, &disparity, out, untouched);
}

static pv_status op_sad(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 8;
    return stereo_result(ctx, &params, NULL, out, untouched);
}

static pv_status op_bp(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_bp_params params;
    pv_bp_params_default(&params);
    params.ndisp = 8;
    params.levels = 2;
    params.iterations = 3;
    return stereo_result(ctx, NULL, &params, out, untouched);
}

static pv_status op_sift(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_sift_plan *plan = NULL;
    pv_sift_features features;
    memset(&features, 0, sizeof features);
    pv_status status = pv_sift_plan_create(ctx, 64, 64, NULL, &plan);
    if (status == PV_OK)
        status = pv_sift_detect(plan, &g_blob, &features);
    pv_sift_plan_destroy(plan);
    if (status != PV_OK) {
        *untouched = features.count == 0 && !features.keypoints && !features.descriptors;
        return status;
    }
    put(out, (float)features.count);
    for (int i = 0; i < features.count && i < 200; i++) {
        put(out, features.keypoints[i].x);
        put(out, features.keypoints[i].y);
        put(out, features.keypoints[i].sigma);
        put(out, features.descriptors[128 * i]);
    }
    pv_sift_features_free(&features);
    return PV_OK;
}

static void put_shift(wl_result *out, const pv_shift *shift)
{
    put(out, (float)shift->dx);
    put(out, (float)shift->dy);
    put(out, (float)shift->dz);
    put(out, (float)shift->peak);
}

static pv_status op_phasecorr(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_shift shift, before;
    memset(&shift, 0x5a, sizeof shift);
    before = shift;
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    options.upsample = 20;
    pv_status status = pv_phase_correlate(ctx, &g_reference, &g_moving, &options, &shift);
    if (status != PV_OK)
        *untouched = memcmp(&shift, &before, sizeof shift) == 0;
    else
        put_shift(out, &shift);
    return status;
}

static pv_status op_ncc(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_image map;
    if (sentinel_image(&map, 29, 29) != PV_OK)
        return PV_ERR_NOMEM;
    pv_ncc_result result, before;
    memset(&result, 0x5a, sizeof result);
    before = result;
    pv_status status = pv_normxcorr2(ctx, &g_templ, &g_search, 4, &map, &result);
    if (status != PV_OK) {
        *untouched = memcmp(&result, &before, sizeof result) == 0;
    } else {
        put(out, (float)result.x);
        put(out, (float)result.y);
        put(out, result.coefficient);
    }
    int map_untouched = 1;
    status = image_result(status, &map, out, &map_untouched);
    *untouched = *untouched && map_untouched;
    return status;
}

/* The reconstruction's four outputs, sentinel-filled before the call. */
typedef struct oct_outputs {
    pv_volume registered;
    pv_image enface, slow;
    float coverage[OCT_BSCANS];
} oct_outputs;

static pv_status oct_outputs_alloc(oct_outputs *o)
{
    memset(o, 0, sizeof *o);
    if (pv_volume_alloc(&o->registered, OCT_SIZE_X, OCT_SIZE_Y, OCT_BSCANS) != PV_OK ||
        pv_image_alloc(&o->enface, OCT_SIZE_Y, OCT_BSCANS, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&o->slow, OCT_BSCANS, OCT_SIZE_X, PV_PIXEL_F32) != PV_OK)
        return PV_ERR_NOMEM;
    fill_floats(o->registered.data, (size_t)OCT_SIZE_X * OCT_SIZE_Y * OCT_BSCANS, SENTINEL);
    fill_floats(o->enface.data, (size_t)OCT_SIZE_Y * OCT_BSCANS, SENTINEL);
    fill_floats(o->slow.data, (size_t)OCT_BSCANS * OCT_SIZE_X, SENTINEL);
    fill_floats(o->coverage, OCT_BSCANS, SENTINEL);
    return PV_OK;
}

static int oct_outputs_untouched(const oct_outputs *o)
{
    return all_equal(o->registered.data, (size_t)OCT_SIZE_X * OCT_SIZE_Y * OCT_BSCANS, SENTINEL) &&
           all_equal(o->enface.data, (size_t)OCT_SIZE_Y * OCT_BSCANS, SENTINEL) &&
           all_equal(o->slow.data, (size_t)OCT_BSCANS * OCT_SIZE_X, SENTINEL) &&
           all_equal(o->coverage, OCT_BSCANS, SENTINEL);
}

/* The images and coverage whole, every 7th voxel of the volume (the
 * result holds WL_MAX_VALUES values). */
static void put_oct_outputs(wl_result *out, const oct_outputs *o)
{
    put_floats(out, o->enface.data, (size_t)OCT_SIZE_Y * OCT_BSCANS);
    put_floats(out, o->slow.data, (size_t)OCT_BSCANS * OCT_SIZE_X);
    put_floats(out, o->coverage, OCT_BSCANS);
    for (size_t i = 0; i < (size_t)OCT_SIZE_X * OCT_SIZE_Y * OCT_BSCANS; i += 7)
        put(out, o->registered.data[i]);
}

static void oct_outputs_free(oct_outputs *o)
{
    pv_volume_free(&o->registered);
    pv_image_free(&o->enface);
    pv_image_free(&o->slow);
}

/* Registration (shifts), then the reconstruction with every output: each
 * call's own outputs must be untouched when it fails. */
static pv_status op_octreg(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    options.stripes = 4;
    options.stripe_width = 2;
    options.subvolume_width = 16;
    options.subvolume_step = 8;
    pv_octreg_shift shifts[OCT_BSCANS], before[OCT_BSCANS];
    memset(shifts, 0x5a, sizeof shifts);
    memcpy(before, shifts, sizeof shifts);
    oct_outputs recon;
    if (oct_outputs_alloc(&recon) != PV_OK) {
        oct_outputs_free(&recon);
        return PV_ERR_NOMEM;
    }
    pv_octreg_plan *plan = NULL;
    pv_status status = pv_octreg_plan_create(ctx, &g_oct_ref, &options, &plan);
    if (status == PV_OK)
        status = pv_octreg_register(plan, &g_oct_target, shifts, NULL);
    if (status != PV_OK) {
        *untouched = memcmp(shifts, before, sizeof shifts) == 0 && oct_outputs_untouched(&recon);
    } else {
        status = pv_octreg_reconstruct(plan, &g_oct_target, shifts, 0.0f, &recon.registered,
                                       &recon.enface, &recon.slow, recon.coverage);
        if (status != PV_OK)
            *untouched = oct_outputs_untouched(&recon);
    }
    pv_octreg_plan_destroy(plan);
    if (status == PV_OK) {
        for (int k = 0; k < OCT_BSCANS; k++) {
            put(out, (float)shifts[k].dx);
            put(out, (float)shifts[k].dy);
            put(out, (float)shifts[k].dz);
            put(out, (float)shifts[k].valid);
        }
        put_oct_outputs(out, &recon);
    }
    oct_outputs_free(&recon);
    return status;
}

static pv_status op_flow(pv_context *ctx, wl_result *out, int *untouched)
{
    pv_flow_field flow;
    if (pv_flow_field_alloc(&flow, 12, 12, 12) != PV_OK)
        return PV_ERR_NOMEM;
    const size_t n = 12 * 12 * 12;
    fill_floats(flow.u.data, n, SENTINEL);
    fill_floats(flow.v.data, n, SENTINEL);
    fill_floats(flow.w.data, n, SENTINEL);
    pv_flow_params params;
    pv_flow_params_default(&params);
    params.rho = 1.0f;
    params.kernel_size = 3;
    params.warps = 1;
    params.iterations = 4;
    pv_flow_plan *plan = NULL;
    pv_status status = pv_flow_plan_create(ctx, 12, 12, 12, &params, &plan);
    if (status == PV_OK)
        status = pv_flow_plan_run(plan, &g_fixed, &g_moved, &flow);
    pv_flow_plan_destroy(plan);
    if (status == PV_OK) {
        put_floats(out, flow.u.data, n);
        put_floats(out, flow.v.data, n);
        put_floats(out, flow.w.data, n);
    } else {
        *untouched = all_equal(flow.u.data, n, SENTINEL) && all_equal(flow.v.data, n, SENTINEL) &&
                     all_equal(flow.w.data, n, SENTINEL);
    }
    pv_flow_field_free(&flow);
    return status;
}

const wl_op wl_ops[] = {
    {"filter", op_blur},   {"stereo_sad", op_sad},     {"stereo_bp", op_bp},
    {"sift", op_sift},     {"phasecorr", op_phasecorr}, {"ncc", op_ncc},
    {"octreg", op_octreg}, {"flow", op_flow},
};
const int wl_op_count = (int)(sizeof wl_ops / sizeof wl_ops[0]);

double wl_difference(const wl_result *a, const wl_result *b)
{
    if (a->count != b->count)
        return INFINITY;
    double worst = 0.0;
    for (size_t i = 0; i < a->count; i++) {
        float x = a->values[i], y = b->values[i];
        if (isinf(x) || isinf(y) || isnan(x) || isnan(y)) {
            if (!(x == y || (isnan(x) && isnan(y))))
                return INFINITY;
            continue;
        }
        double scale = fabs((double)y) > 1.0 ? fabs((double)y) : 1.0;
        double d = fabs((double)x - (double)y) / scale;
        worst = d > worst ? d : worst;
    }
    return worst;
}
