/* The tuner's workloads: per tunable family, a deterministic synthetic
 * input built here (the tuner is a client of the library and makes its
 * own data) and the public calls that exercise the family's kernels.
 *
 * A candidate is checked against the CPU oracle once, then timed.  The
 * stereo families keep their oracle: the CPU backend's disparities are
 * computed once per workload and every candidate is compared with them
 * (BP on the CPU takes seconds, far more than a candidate's run).  The
 * other families are checked through the library's cross-check mode,
 * which runs the CPU backend beside the device call and compares with the
 * tolerances of lib/core/tolerance.h: their workloads are small enough
 * for the CPU to follow, and the comparison is the one users rely on.
 *
 * Sizes: options.width x options.height scales every workload (images
 * that size, volumes of side min(width, height) / 2, at least 24), so a
 * test can tune every family on a tiny input; 0 keeps each family's
 * default, sized to keep a big GPU busy for about a millisecond.
 *
 * Two families have a second workload of another size, because their
 * kept values serve sizes the main one does not stand for (the search
 * scores their candidates on both, lib/tune/tune_search.c): BP a small image
 * (Tsukuba's 384x288 with 16 disparities), where the levels that fit one
 * work-group (BP_SMALL_LEVEL_PIXELS) are a large share of the time, and
 * geometry ten times the matches of its main case. */
#include "../core/internal.h"
#include "../core/tolerance.h"
#include "../stereo/stereo_internal.h"
#include "tune_workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_MAX_IMAGES 4
#define TUNE_MAX_VOLUMES 5

struct pv_tune_workload {
    const struct workload_kind *kind;
    char description[64];
    pv_image image[TUNE_MAX_IMAGES];
    pv_volume volume[TUNE_MAX_VOLUMES];
    float *points;              /* geometry: x1, y1 of every match, then x2, y2 */
    int point_count;
    pv_bp_params bp;
    pv_sad_params sad;
    pv_sgm_params sgm;
    double differing_share;     /* stereo: share of pixels that may differ */
    /* The ms of the part of a run that is timed, where a run makes a plan
     * first (the plan's set-up is host work that launch parameters do not
     * change, and its noise would drown theirs); negative: the whole run. */
    double timed_part_ms;
};

typedef struct workload_kind {
    const char *family;
    pv_status (*make)(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options);
    pv_status (*run)(pv_context *ctx, pv_tune_workload *w);
    int has_oracle;             /* 1: make() computed the CPU's answer into image[2] */
    /* Timed runs per `runs` of the options: a run of a millisecond or less
     * is cheap, and its median needs more samples to stay within the
     * search's 3 % margin. */
    int runs_factor;
    /* 1: timed by the device's kernel time (pv_context_last_timing), for a
     * run whose host work, untouched by the family's parameters, is most
     * of its end-to-end time and would drown their effect in its noise. */
    int kernel_time;
} workload_kind;

/* ------------------------------------------------------------ synthetic */

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

static float random_unit(uint32_t *state)
{
    return (float)(next_random(state) >> 8) / 16777216.0f;
}

/* Pixel (x, y) of a dense f32 image. */
static float *pixel(pv_image *image, int x, int y)
{
    return (float *)image->data + (ptrdiff_t)y * image->stride + x;
}

/* Random texture: overlapping bright rectangles on a ramp, so the image
 * has corners (SIFT), edges (gradients) and one clear correlation peak,
 * plus `noise` of per-pixel noise (NCC needs texture in every window: a
 * flat one makes its coefficients ill-conditioned). */
static void fill_texture(pv_image *image, uint32_t seed, float noise)
{
    uint32_t state = seed;
    const int w = image->width, h = image->height;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            *pixel(image, x, y) = 0.2f * (float)(x + y) / (float)(w + h);
    for (int r = 0; r < 24 + w * h / 4096; r++) {
        int x0 = (int)(random_unit(&state) * (float)w), y0 = (int)(random_unit(&state) * (float)h);
        int rw = 2 + (int)(random_unit(&state) * (float)w / 6.0f);
        int rh = 2 + (int)(random_unit(&state) * (float)h / 6.0f);
        float value = random_unit(&state);
        for (int y = y0; y < y0 + rh && y < h; y++)
            for (int x = x0; x < x0 + rw && x < w; x++)
                *pixel(image, x, y) = 0.5f * (*pixel(image, x, y) + value);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            *pixel(image, x, y) += noise * random_unit(&state);
}

/* ------------------------------------------------------------ stereo */

/* Random texture; the right view shifted by one of three disparities per
 * vertical band, so the matching has real structure to find. */
static void fill_pair(pv_image *left, pv_image *right, int ndisp)
{
    uint32_t state = 2463534242u;
    uint8_t *l = left->data, *r = right->data;
    const int width = left->width;
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < width; x++)
            l[(size_t)y * (size_t)width + (size_t)x] = (uint8_t)(next_random(&state) >> 24);
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < width; x++) {
            int d = (ndisp - 1) * (1 + 3 * x / width) / 4;
            int xs = x + d < width ? x + d : width - 1;
            r[(size_t)y * (size_t)width + (size_t)x] = l[(size_t)y * (size_t)width + (size_t)xs];
        }
}

static pv_status run_bp(pv_context *ctx, pv_tune_workload *w)
{
    return pv_stereo_bp(ctx, &w->image[0], &w->image[1], &w->bp, &w->image[3]);
}

static pv_status run_sad(pv_context *ctx, pv_tune_workload *w)
{
    return pv_stereo_sad(ctx, &w->image[0], &w->image[1], &w->sad, &w->image[3]);
}

static void set_stereo_params(pv_tune_workload *w, int ndisp)
{
    pv_bp_params_default(&w->bp);
    w->bp.ndisp = ndisp;
    w->bp.iterations = 7;
    w->bp.lambda = 0.1f;
    w->bp.disc_max = pv_bp_recommended_disc_max(ndisp);
    w->bp.sigma = 0.0f;
    const int shorter = w->image[0].width < w->image[0].height ? w->image[0].width
                                                               : w->image[0].height;
    while (w->bp.levels > 1 && (1 << (w->bp.levels - 1)) > shorter)
        w->bp.levels--;
    pv_sad_params_default(&w->sad);
    w->sad.ndisp = ndisp;
    w->sad.window = 9;
}

/* The stereo pair (images 0, 1), the CPU's disparities (2) and room for
 * the device's (3). */
static pv_status make_stereo(pv_context *ctx, pv_tune_workload *w, int width, int height,
                             int ndisp, int is_bp)
{
    if (ndisp > width / 2)
        ndisp = width / 2 < 2 ? 2 : width / 2;
    static const pv_pixel_type types[] = {PV_PIXEL_U8, PV_PIXEL_U8, PV_PIXEL_F32, PV_PIXEL_F32};
    for (int i = 0; i < 4; i++)
        if (pv_image_alloc(&w->image[i], width, height, types[i]) != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for a %dx%d workload", width,
                           height);
    fill_pair(&w->image[0], &w->image[1], ndisp);
    set_stereo_params(w, ndisp);
    w->differing_share = is_bp ? PV_TOL_BP_DIFFERING_SHARE : PV_TOL_SAD_DIFFERING_SHARE;
    return PV_OK;
}

static int pick(int requested, int fallback)
{
    return requested > 0 ? requested : fallback;
}

static pv_status make_bp(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    return make_stereo(ctx, w, pick(options->width, 450), pick(options->height, 375),
                       pick(options->ndisp, 64), 1);
}

/* A Tsukuba-sized BP job (384x288, 16 disparities, 5 levels: the bench's
 * bp-tsukuba), or half the requested size.  Its coarse levels take a
 * large share of its time, so it judges the parameters that the main
 * workload's large fine levels hide.  A requested disparity range is
 * used as it is: the kept values serve that range's class
 * (BP_NDISP_CLASS), so both workloads must be of it. */
static pv_status make_bp_small(pv_context *ctx, pv_tune_workload *w,
                               const pv_tune_options *options)
{
    const int width = options->width ? (options->width / 2 > 16 ? options->width / 2 : 16) : 384;
    const int height = options->height ? (options->height / 2 > 16 ? options->height / 2 : 16)
                                       : 288;
    return make_stereo(ctx, w, width, height, pick(options->ndisp, 16), 1);
}

static pv_status make_sad(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    return make_stereo(ctx, w, pick(options->width, 640), pick(options->height, 480),
                       pick(options->ndisp, 64), 0);
}

/* A 640x480 pair with 64 disparities and SGM's defaults (8 paths), the
 * library's cross-check as its oracle (integer disparities identical). */
static pv_status make_sgm(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    pv_status status = make_stereo(ctx, w, pick(options->width, 640), pick(options->height, 480),
                                   pick(options->ndisp, 64), 0);
    pv_sgm_params_default(&w->sgm);
    w->sgm.ndisp = w->sad.ndisp;
    return status;
}

static pv_status run_sgm(pv_context *ctx, pv_tune_workload *w)
{
    return pv_stereo_sgm(ctx, &w->image[0], &w->image[1], &w->sgm, &w->image[3]);
}

/* ------------------------------------------------------------ filter */

static pv_status alloc_images(pv_context *ctx, pv_tune_workload *w, int count, int width,
                              int height)
{
    for (int i = 0; i < count; i++)
        if (pv_image_alloc(&w->image[i], width, height, PV_PIXEL_F32) != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for %dx%d images", width, height);
    return PV_OK;
}

/* count images of the requested size (else width x height), the first a
 * texture drawn from seed. */
static pv_status make_textured(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options,
                               int count, int width, int height, uint32_t seed)
{
    pv_status status = alloc_images(ctx, w, count, pick(options->width, width),
                                    pick(options->height, height));
    if (status == PV_OK)
        fill_texture(&w->image[0], seed, 0.0f);
    return status;
}

static pv_status make_filter(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    return make_textured(ctx, w, options, 4, 1024, 1024, 11u);
}

static pv_status run_filter(pv_context *ctx, pv_tune_workload *w)
{
    pv_status status = pv_gaussian_blur(ctx, &w->image[0], &w->image[1], 2.0f, 0);
    if (status == PV_OK)
        status = pv_gradient(ctx, &w->image[0], &w->image[2], &w->image[3], PV_GRADIENT_CENTRAL);
    return status;
}

/* ----------------------------------------------------------- register */

/* Reference (0), the reference moved by (7, -5) with wrap-around (1), a
 * template cut from the reference (2) and the NCC map (3). */
static pv_status make_register(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    const int width = pick(options->width, 512), height = pick(options->height, 512);
    pv_status status = alloc_images(ctx, w, 2, width, height);
    const int tw = width / 8 > 4 ? width / 8 : 4, th = height / 8 > 4 ? height / 8 : 4;
    if (status == PV_OK && (pv_image_alloc(&w->image[2], tw, th, PV_PIXEL_F32) != PV_OK ||
                            pv_image_alloc(&w->image[3], width + tw - 1, height + th - 1,
                                           PV_PIXEL_F32) != PV_OK))
        status = pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for the NCC workload");
    if (status != PV_OK)
        return status;
    fill_texture(&w->image[0], 23u, 0.2f);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            *pixel(&w->image[1], x, y) = *pixel(&w->image[0], (x + width - 7) % width,
                                                (y + 5) % height);
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++)
            *pixel(&w->image[2], x, y) = *pixel(&w->image[0], x + width / 3, y + height / 3);
    return PV_OK;
}

static pv_status run_register(pv_context *ctx, pv_tune_workload *w)
{
    pv_phasecorr_options options;
    pv_phasecorr_options_default(&options);
    options.subpixel = PV_SUBPIXEL_UPSAMPLE;
    options.upsample = 20;
    pv_shift shift;
    pv_status status = pv_phase_correlate(ctx, &w->image[0], &w->image[1], &options, &shift);
    if (status == PV_OK)
        status = pv_normxcorr2(ctx, &w->image[2], &w->image[0], /* no thin edge overlaps */
                               w->image[2].width * w->image[2].height / 2, &w->image[3], NULL);
    return status;
}

/* --------------------------------------------------------------- flow */

static int volume_side(const pv_tune_options *options, int fallback)
{
    if (!options->width || !options->height)
        return fallback;
    int side = (options->width < options->height ? options->width : options->height) / 2;
    return side < 24 ? 24 : side;
}

static pv_status alloc_volumes(pv_context *ctx, pv_tune_workload *w, int count, int nx, int ny,
                               int nz)
{
    for (int i = 0; i < count; i++)
        if (pv_volume_alloc(&w->volume[i], nx, ny, nz) != PV_OK)
            return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for %dx%dx%d volumes", nx, ny, nz);
    return PV_OK;
}

/* Smooth blobs (0) and the same scene moved by (0.6, -0.4, 0.3) voxels
 * (1); volumes 2..4 take the flow. */
static pv_status make_flow(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    const int n = volume_side(options, 64);
    pv_status status = alloc_volumes(ctx, w, 5, n, n, n);
    if (status != PV_OK)
        return status;
    const double k = 2.0 * 3.14159265358979 / (double)n;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                ptrdiff_t at = x + y * w->volume[0].stride_y + z * w->volume[0].stride_z;
                w->volume[0].data[at] = (float)(sin(3 * k * x) * cos(2 * k * y) + sin(2 * k * z));
                w->volume[1].data[at] = (float)(sin(3 * k * (x - 0.6)) * cos(2 * k * (y + 0.4)) +
                                                sin(2 * k * (z - 0.3)));
            }
    return PV_OK;
}

static pv_status run_flow(pv_context *ctx, pv_tune_workload *w)
{
    pv_flow_params params;
    pv_flow_params_default(&params); /* 15 taps: volumes of side >= 24 take them */
    params.warps = 2;
    params.iterations = 10;
    pv_flow_field flow = {w->volume[2], w->volume[3], w->volume[4]};
    return pv_flow3d(ctx, &w->volume[0], &w->volume[1], &params, &flow);
}

/* ----------------------------------------------------------- features */

static pv_status make_features(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    return make_textured(ctx, w, options, 1, 640, 480, 37u);
}

/* Detection (every pyramid and keypoint kernel) and matching of the
 * features with themselves (the matching kernels). */
static pv_status run_features(pv_context *ctx, pv_tune_workload *w)
{
    pv_sift_plan *plan = NULL;
    pv_sift_features features = {0};
    pv_sift_matches matches = {0};
    pv_status status = pv_sift_plan_create(ctx, w->image[0].width, w->image[0].height, NULL, &plan);
    const double start = pv_now_ms();
    if (status == PV_OK)
        status = pv_sift_detect(plan, &w->image[0], &features);
    if (status == PV_OK)
        status = pv_sift_match(ctx, &features, &features, NULL, &matches);
    w->timed_part_ms = pv_now_ms() - start;
    pv_sift_matches_free(&matches);
    pv_sift_features_free(&features);
    pv_sift_plan_destroy(plan);
    return status;
}

/* ------------------------------------------------------------- octreg */

static pv_octreg_options octreg_options(int small)
{
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    if (small) {
        options.subvolume_width = 16;
        options.subvolume_step = 8;
        options.stripes = 6;
    }
    return options;
}

static pv_status make_octreg(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    pv_octreg_synth_params params;
    pv_octreg_synth_params_default(&params);
    const int n = volume_side(options, 64);
    params.size[0] = n;
    params.size[1] = n;
    params.size[2] = n;
    params.seed = 5u;
    pv_status status = alloc_volumes(ctx, w, 2, n, n, n);
    if (status == PV_OK)
        status = pv_octreg_synthesize(&params, &w->volume[0], &w->volume[1], NULL);
    return status;
}

static pv_status run_octreg(pv_context *ctx, pv_tune_workload *w)
{
    const int bscans = w->volume[0].nz;
    pv_octreg_options options = octreg_options(bscans < 64);
    pv_octreg_shift *shifts = malloc((size_t)bscans * sizeof *shifts);
    pv_octreg_plan *plan = NULL;
    if (!shifts)
        return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for the registration's shifts");
    pv_status status = pv_octreg_plan_create(ctx, &w->volume[0], &options, &plan);
    const double start = pv_now_ms();
    if (status == PV_OK)
        status = pv_octreg_register(plan, &w->volume[1], shifts, NULL);
    w->timed_part_ms = pv_now_ms() - start;
    pv_octreg_plan_destroy(plan);
    free(shifts);
    return status;
}

/* ----------------------------------------------------------- geometry */

/* count matches of a known homography over a 1920x1080 view, half of
 * them outliers placed anywhere in the second view: the bench's
 * homography cases (bench/bench_geometry.c). */
static pv_status make_matches(pv_context *ctx, pv_tune_workload *w, int count)
{
    w->points = malloc((size_t)count * 4 * sizeof *w->points);
    if (!w->points)
        return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for %d matches", count);
    w->point_count = count;
    uint32_t state = 99u;
    float *p1 = w->points, *p2 = w->points + 2 * count;
    for (int i = 0; i < count; i++) {
        float x = 1920.0f * random_unit(&state), y = 1080.0f * random_unit(&state);
        float d = 1.0f + 4e-5f * x - 2e-5f * y;
        p1[2 * i] = x;
        p1[2 * i + 1] = y;
        p2[2 * i] = (1.05f * x - 0.12f * y + 60.0f) / d;
        p2[2 * i + 1] = (0.11f * x + 0.98f * y - 35.0f) / d;
        if (i % 2 == 1) {
            p2[2 * i] = 1920.0f * random_unit(&state);
            p2[2 * i + 1] = 1080.0f * random_unit(&state);
        }
    }
    return PV_OK;
}

/* The bench's homography-10k (10000 matches); 256 when sized for a test. */
static pv_status make_geometry(pv_context *ctx, pv_tune_workload *w, const pv_tune_options *options)
{
    return make_matches(ctx, w, options->width && options->height ? 256 : 10000);
}

/* The bench's homography-100k (100000 matches); 1024 when sized. */
static pv_status make_geometry_large(pv_context *ctx, pv_tune_workload *w,
                                     const pv_tune_options *options)
{
    return make_matches(ctx, w, options->width && options->height ? 1024 : 100000);
}

/* One batch of PV_RANSAC_BATCH hypotheses, what the bench's cases run
 * (at half outliers the default confidence stops after the first batch),
 * as a fixed amount of work; no refinement, host work that GEOM_WG does
 * not change. */
static pv_status run_geometry(pv_context *ctx, pv_tune_workload *w)
{
    pv_ransac_params params;
    pv_ransac_params_default(&params);
    params.confidence = 1.0; /* every hypothesis: a fixed amount of work */
    params.iterations = PV_RANSAC_BATCH;
    params.refine = 0;
    pv_geometry_result result;
    const float *p1 = w->points, *p2 = w->points + 2 * w->point_count;
    return pv_find_homography(ctx, p1, p2, w->point_count, &params, &result, NULL);
}

/* ---------------------------------------------------------------- table */

/* Per family its main workload, then its second one where it has one. */
static const workload_kind kinds[] = {
    {"filter", make_filter, run_filter, 0, 1, 0},
    {"sad", make_sad, run_sad, 1, 1, 0},
    {"bp", make_bp, run_bp, 1, 1, 0},
    {"sgm", make_sgm, run_sgm, 0, 1, 1},
    {"bp", make_bp_small, run_bp, 1, 3, 0},
    {"register", make_register, run_register, 0, 1, 0},
    {"flow", make_flow, run_flow, 0, 1, 0},
    {"features", make_features, run_features, 0, 1, 0},
    {"octreg", make_octreg, run_octreg, 0, 1, 0},
    {"geometry", make_geometry, run_geometry, 0, 3, 1},
    {"geometry", make_geometry_large, run_geometry, 0, 3, 1},
};

#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

/* The family's index-th workload kind, NULL when it has none. */
static const workload_kind *kind_of(const char *family, int index)
{
    for (size_t i = 0; family && index >= 0 && i < KIND_COUNT; i++)
        if (strcmp(kinds[i].family, family) == 0 && index-- == 0)
            return &kinds[i];
    return NULL;
}

int pv_tune_workload_count(const char *family)
{
    int count = 0;
    while (kind_of(family, count))
        count++;
    return count;
}

void pv_tune_workload_free(pv_tune_workload *w)
{
    if (!w)
        return;
    for (int i = 0; i < TUNE_MAX_IMAGES; i++)
        pv_image_free(&w->image[i]);
    for (int i = 0; i < TUNE_MAX_VOLUMES; i++)
        pv_volume_free(&w->volume[i]);
    free(w->points);
    free(w);
}

/* The CPU backend's answer for a stereo workload, into image 2. */
static pv_status compute_oracle(pv_context *ctx, pv_tune_workload *w)
{
    pv_context_options cpu_options;
    pv_context_options_default(&cpu_options);
    cpu_options.backend = PV_BACKEND_CPU;
    cpu_options.cpu_threads = ctx->cpu_threads;
    pv_context *cpu = NULL;
    pv_status status = pv_context_create(&cpu, &cpu_options);
    pv_image device_output = w->image[3];
    w->image[3] = w->image[2]; /* the run writes image 3 */
    if (status == PV_OK)
        status = w->kind->run(cpu, w);
    w->image[3] = device_output;
    if (status != PV_OK)
        status = pv_fail(ctx, status, "tune: the CPU oracle for '%s' failed: %s", w->kind->family,
                         cpu ? pv_context_last_error(cpu) : pv_last_error());
    pv_context_destroy(cpu);
    return status;
}

/* "450x375, 64 disparities", "10000 matches", "64x64x64", "1024x1024". */
static void describe(pv_tune_workload *w)
{
    const size_t size = sizeof w->description;
    if (w->point_count > 0)
        snprintf(w->description, size, "%d matches", w->point_count);
    else if (w->volume[0].data)
        snprintf(w->description, size, "%dx%dx%d", w->volume[0].nx, w->volume[0].ny,
                 w->volume[0].nz);
    else if (w->kind->has_oracle)
        snprintf(w->description, size, "%dx%d, %d disparities", w->image[0].width,
                 w->image[0].height, w->bp.ndisp);
    else
        snprintf(w->description, size, "%dx%d", w->image[0].width, w->image[0].height);
}

pv_status pv_tune_workload_make(pv_context *ctx, const char *family, int index,
                                const pv_tune_options *options, pv_tune_workload **out)
{
    const workload_kind *kind = kind_of(family, index);
    if (!kind)
        return pv_fail(ctx, PV_ERR_INVALID, "tune: no workload %d for family '%s'", index,
                       family ? family : "(null)");
    pv_tune_workload *w = calloc(1, sizeof *w);
    if (!w)
        return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for a workload");
    w->kind = kind;
    pv_status status = kind->make(ctx, w, options);
    if (status == PV_OK && kind->has_oracle)
        status = compute_oracle(ctx, w);
    if (status != PV_OK) {
        pv_tune_workload_free(w);
        return status;
    }
    describe(w);
    *out = w;
    return PV_OK;
}

int pv_tune_workload_runs(const pv_tune_workload *w, int runs)
{
    const long long wanted = (long long)runs * w->kind->runs_factor;
    return wanted > 1000 ? 1000 : (int)wanted;
}

const char *pv_tune_workload_describe(const pv_tune_workload *w)
{
    return w->description;
}

int pv_tune_workload_ndisp(const pv_tune_workload *w)
{
    return w->bp.ndisp;
}

/* One run checked against the CPU: the stored oracle, or the library's
 * cross-check (PV_ERR_MISMATCH beyond the operation's tolerance). */
pv_status pv_tune_workload_check(pv_context *ctx, pv_tune_workload *w)
{
    const int crosscheck = ctx->crosscheck;
    ctx->crosscheck = !w->kind->has_oracle;
    pv_status status = w->kind->run(ctx, w);
    ctx->crosscheck = crosscheck;
    if (status != PV_OK || !w->kind->has_oracle)
        return status;
    return pv_compare_disparities(ctx, "tune", &w->image[3], &w->image[2], w->differing_share);
}

/* Milliseconds of one unchecked run: end to end (of its timed part, where
 * the run makes a plan first), or the device's kernel time for a kind
 * timed by it (each kernel on its own, so that the host's pace does not
 * enter the comparison); a negative value when the run fails. */
double pv_tune_workload_time(pv_context *ctx, pv_tune_workload *w)
{
    const int crosscheck = ctx->crosscheck;
    const pv_kernel_timing kernel_timing = ctx->kernel_timing;
    ctx->crosscheck = 0;
    if (w->kind->kernel_time)
        ctx->kernel_timing = PV_KERNEL_TIMING_EACH;
    w->timed_part_ms = -1.0;
    double start = pv_now_ms();
    pv_status status = w->kind->run(ctx, w);
    double elapsed = pv_now_ms() - start;
    ctx->crosscheck = crosscheck;
    ctx->kernel_timing = kernel_timing;
    if (status != PV_OK)
        return -1.0;
    if (w->kind->kernel_time) {
        pv_timing timing;
        if (pv_context_last_timing(ctx, &timing) != PV_OK || !(timing.kernel_ms > 0.0))
            return -1.0;
        return timing.kernel_ms;
    }
    return w->timed_part_ms >= 0.0 ? w->timed_part_ms : elapsed;
}
