/* SIFT chain cases: two frames to a homography (pv_sift_match_images) at
 * 1280x720 and 1920x1080, and tracking through a 720p video
 * (pv_sift_track_next) against today's synchronous loop of calls.
 *
 * sift-chain-720p / -1080p: frame 1 is Venus mirror-tiled to the size with
 * a tenth of a lattice texture that does not repeat (scene(), below),
 * frame 2 the same scene turned 0.1 rad, scaled 0.9 about the centre and
 * shifted (12, -8) px (bilinear from the scene, so no borders appear).
 * Each backend runs the whole chain from host images to the homography in
 * host memory; the row's kernel and end-to-end times are the chain call's
 * (pv_context_last_timing sums its parts).  Quality: the largest distance
 * of the four frame corners under the estimate from the truth, px.
 * Agreement: 1 when the two backends' models map the corners within
 * 0.5 px of each other, else 0 (not a gate: the backends' keypoints differ
 * within PV_SIFT_POSITION_TOLERANCE, so their matches may).
 *
 * sift-track-720p: TRACK_FRAMES frames of a panning video (the scene
 * from offsets (37 i, 23 i)); the "-loop" row times pv_sift_detect_into,
 * pv_sift_match and pv_find_geometry_sift per frame, the case's row
 * pv_sift_track_next per frame, both on the same contexts in the same
 * process; frames/s in the params, the chain's OpenCL rate over the
 * loop's.  Agreement: the share of frames whose chain model equals the
 * loop's (they run the same steps on the same data, so 1). */
#include "config.h"

#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <parvis/geometry.h>

#define CHAIN_SCALE 0.9
#define CHAIN_ANGLE 0.1
#define CHAIN_DX 12.0
#define CHAIN_DY -8.0
#define BACKENDS_APART_PX 0.5
#define TRACK_FRAMES 8
#define TRACK_STEP_X 37
#define TRACK_STEP_Y 23
#define SAME_MODEL_PX 1e-3

typedef struct chain_case {
    const char *name;
    int width, height;
} chain_case;

static const chain_case chain_cases[] = {
    {"sift-chain-720p", 1280, 720},
    {"sift-chain-1080p", 1920, 1080},
};

static const chain_case track_case = {"sift-track-720p", 1280, 720};

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------------ frames */

static int mirror(int i, int n)
{
    const int period = 2 * n;
    i %= period;
    i = i < 0 ? i + period : i;
    return i < n ? i : period - 1 - i;
}

static double tiled(const pv_image *venus, int x, int y)
{
    return ((const uint8_t *)venus->data)[(ptrdiff_t)mirror(y, venus->height) * venus->stride +
                                          mirror(x, venus->width)];
}

static double tiled_bilinear(const pv_image *venus, double x, double y)
{
    const int x0 = (int)floor(x), y0 = (int)floor(y);
    const double fx = x - x0, fy = y - y0;
    return (tiled(venus, x0, y0) * (1 - fx) + tiled(venus, x0 + 1, y0) * fx) * (1 - fy) +
           (tiled(venus, x0, y0 + 1) * (1 - fx) + tiled(venus, x0 + 1, y0 + 1) * fx) * fy;
}

/* A texture without repeats, one tenth of each pixel: mirror tiling
 * repeats Venus every 868 x 766 px, and the ratio test drops every
 * keypoint that has copies, so a 1080p pair of plain tiles kept 63 inliers
 * of 4035 keypoints and its H missed the corners by 2.6 px.  Values on an
 * 8 px lattice from a hash of the lattice point, bilinear between. */
#define TEXTURE_WEIGHT 0.1
#define TEXTURE_SPACING 8.0

static double lattice(int ix, int iy)
{
    uint32_t h = ((uint32_t)ix * 0x8da6b343u) ^ ((uint32_t)iy * 0xd8163841u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(h & 255u);
}

static double lattice_bilinear(double x, double y)
{
    const int x0 = (int)floor(x), y0 = (int)floor(y);
    const double fx = x - x0, fy = y - y0;
    return (lattice(x0, y0) * (1 - fx) + lattice(x0 + 1, y0) * fx) * (1 - fy) +
           (lattice(x0, y0 + 1) * (1 - fx) + lattice(x0 + 1, y0 + 1) * fx) * fy;
}

/* The frames' scene at (x, y): the tiling and the lattice texture. */
static double scene(const pv_image *venus, double x, double y)
{
    return (1.0 - TEXTURE_WEIGHT) * tiled_bilinear(venus, x, y) +
           TEXTURE_WEIGHT * lattice_bilinear(x / TEXTURE_SPACING, y / TEXTURE_SPACING);
}

static int load_venus(const bench_config *config, pv_image *venus)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/stereo/venus/left.pgm", config->data_dir);
    pv_status status = pv_image_read(path, PV_PIXEL_U8, venus);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}

/* The true homography of frame 2 against frame 1. */
static void chain_truth(int width, int height, double h[9])
{
    const double c = CHAIN_SCALE * cos(CHAIN_ANGLE), s = CHAIN_SCALE * sin(CHAIN_ANGLE);
    const double cx = 0.5 * (width - 1), cy = 0.5 * (height - 1);
    const double m[9] = {c, -s, cx + CHAIN_DX - c * cx + s * cy,
                         s, c,  cy + CHAIN_DY - s * cx - c * cy,
                         0, 0,  1};
    memcpy(h, m, sizeof m);
}

/* Frame 1: the scene from (x0, y0); frame 2 (warped): the scene seen
 * through the inverse of chain_truth. */
static int make_frame(const pv_image *venus, int width, int height, int x0, int y0, int warped,
                      pv_image *frame)
{
    if (pv_image_alloc(frame, width, height, PV_PIXEL_U8) != PV_OK)
        return cli_fail("cannot allocate a %dx%d frame", width, height);
    double h[9];
    chain_truth(width, height, h);
    const double det = h[0] * h[4] - h[1] * h[3];
    uint8_t *out = frame->data;
    for (int v = 0; v < height; v++)
        for (int u = 0; u < width; u++) {
            double value;
            if (warped) {
                const double px = u - h[2], py = v - h[5];
                value = scene(venus, (h[4] * px - h[1] * py) / det,
                              (-h[3] * px + h[0] * py) / det);
            } else {
                value = scene(venus, u + x0, v + y0);
            }
            out[(size_t)v * width + u] = (uint8_t)(value + 0.5 > 255.0 ? 255.0 : value + 0.5);
        }
    return 0;
}

/* Largest distance of the frame's corners under a and under b. */
static double corner_distance(const double *a, const double *b, int width, int height)
{
    const double corners[4][2] = {{0, 0}, {width - 1, 0}, {0, height - 1},
                                  {width - 1, height - 1}};
    double worst = 0.0;
    for (int c = 0; c < 4; c++) {
        const double x = corners[c][0], y = corners[c][1];
        const double wa = a[6] * x + a[7] * y + a[8], wb = b[6] * x + b[7] * y + b[8];
        const double dx = (a[0] * x + a[1] * y + a[2]) / wa - (b[0] * x + b[1] * y + b[2]) / wb;
        const double dy = (a[3] * x + a[4] * y + a[5]) / wa - (b[3] * x + b[4] * y + b[5]) / wb;
        worst = fmax(worst, hypot(dx, dy));
    }
    return worst;
}

static pv_sift_params chain_sift_params(void)
{
    pv_sift_params params;
    pv_sift_params_preset(&params, PV_SIFT_PRESET_FAST);
    return params;
}

/* ------------------------------------------------------------- two frames */

typedef struct chain_job {
    pv_sift_plan *plan;
    const pv_image *frames;  /* two */
    pv_sift_chain_result result;
} chain_job;

static pv_status run_chain(pv_context *ctx, void *user)
{
    (void)ctx;
    chain_job *job = user;
    pv_sift_chain_result_free(&job->result);
    return pv_sift_match_images(job->plan, &job->frames[0], &job->frames[1], NULL, NULL,
                                &job->result);
}

static int time_chain(const bench_config *config, pv_context *ctx, const pv_image *frames,
                      chain_job *job, pv_timing *timing, bench_series *series)
{
    const pv_sift_params params = chain_sift_params();
    memset(job, 0, sizeof *job);
    job->frames = frames;
    pv_status status = pv_sift_plan_create(ctx, frames[0].width, frames[0].height, &params,
                                           &job->plan);
    if (status == PV_OK)
        status = bench_time_series(config, ctx, run_chain, job, timing, series);
    pv_sift_plan_destroy(job->plan);
    return status == PV_OK ? 0 : cli_fail_status(status, "sift chain");
}

static void fill_chain_row(bench_result *r, const chain_case *c, const chain_job *cpu,
                           const chain_job *cl)
{
    double truth[9];
    chain_truth(c->width, c->height, truth);
    r->cpu_quality = corner_distance(cpu->result.geometry.model, truth, c->width, c->height);
    int used = snprintf(r->params, sizeof r->params, "%dx%d x2, cpu %d+%d kp %d matches %d in",
                        c->width, c->height, cpu->result.keypoints1, cpu->result.keypoints2,
                        cpu->result.matches, cpu->result.inlier_count);
    if (!cl)
        return;
    r->cl_quality = corner_distance(cl->result.geometry.model, truth, c->width, c->height);
    r->agreement = corner_distance(cl->result.geometry.model, cpu->result.geometry.model,
                                   c->width, c->height) <= BACKENDS_APART_PX;
    if (used > 0 && (size_t)used < sizeof r->params)
        snprintf(r->params + used, sizeof r->params - (size_t)used,
                 ", cl %d+%d kp %d matches %d in, corner err cpu %.3f cl %.3f px",
                 cl->result.keypoints1, cl->result.keypoints2, cl->result.matches,
                 cl->result.inlier_count, r->cpu_quality, r->cl_quality);
}

static void start_row(bench_result *r, const bench_contexts *contexts, const char *name,
                      const chain_case *c, int frames)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sift");
    snprintf(r->name, sizeof r->name, "%s", name);
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->size = (double)c->width * c->height * frames;
}

static int chain_row(const bench_config *config, const bench_contexts *contexts,
                     const pv_image *venus, const chain_case *c, bench_result *r)
{
    start_row(r, contexts, c->name, c, 2);
    snprintf(r->variant, sizeof r->variant, "chain");
    r->quality_name = "corner_px";
    r->quality_absolute = 1;
    pv_image frames[2];
    memset(frames, 0, sizeof frames);
    int rc = make_frame(venus, c->width, c->height, 0, 0, 0, &frames[0]);
    if (rc == 0)
        rc = make_frame(venus, c->width, c->height, 0, 0, 1, &frames[1]);
    chain_job cpu, cl;
    memset(&cpu, 0, sizeof cpu);
    memset(&cl, 0, sizeof cl);
    pv_timing cpu_t, cl_t;
    if (rc == 0)
        rc = time_chain(config, contexts->cpu, frames, &cpu, &cpu_t, &r->cpu_samples);
    if (rc == 0)
        bench_fill_cpu(r, &cpu_t, NULL);
    if (rc == 0 && contexts->opencl) {
        rc = time_chain(config, contexts->opencl, frames, &cl, &cl_t, &r->cl_samples);
        if (rc == 0)
            bench_fill_opencl(r, &cl_t, NULL);
    }
    if (rc == 0)
        fill_chain_row(r, c, &cpu, contexts->opencl ? &cl : NULL);
    pv_sift_chain_result_free(&cpu.result);
    pv_sift_chain_result_free(&cl.result);
    pv_image_free(&frames[0]);
    pv_image_free(&frames[1]);
    return rc;
}

/* ---------------------------------------------------------------- tracking */

typedef struct track_job {
    pv_sift_plan *plan;
    const pv_image *frames;
    int count;
    int chain;               /* 1: pv_sift_track_next; 0: the loop of calls */
    pv_sift_features features[2];
    double models[TRACK_FRAMES][9];
} track_job;

/* Frame i of the loop: detect, and from the second frame on match the
 * previous frame's features to it and estimate H. */
static pv_status loop_frame(pv_context *ctx, track_job *job, int i, pv_timing *sum)
{
    pv_sift_features *cur = &job->features[i % 2], *prev = &job->features[(i + 1) % 2];
    pv_timing t;
    pv_status status = pv_sift_detect_into(job->plan, &job->frames[i], cur);
    if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
        bench_add_timing(sum, &t);
    if (status != PV_OK || i == 0)
        return status;
    pv_sift_matches matches = {0, NULL};
    pv_geometry_result g;
    status = pv_sift_match(ctx, prev, cur, NULL, &matches);
    if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
        bench_add_timing(sum, &t);
    if (status == PV_OK)
        status = pv_find_geometry_sift(ctx, PV_GEOMETRY_HOMOGRAPHY, prev, cur, &matches, NULL, &g,
                                       NULL);
    if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
        bench_add_timing(sum, &t);
    if (status == PV_OK)
        memcpy(job->models[i], g.model, sizeof g.model);
    pv_sift_matches_free(&matches);
    return status;
}

static pv_status chain_frame(pv_context *ctx, track_job *job, int i, pv_timing *sum)
{
    pv_sift_chain_result r;
    pv_timing t;
    pv_status status = pv_sift_track_next(job->plan, &job->frames[i], NULL, NULL, &r);
    if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
        bench_add_timing(sum, &t);
    if (status == PV_OK && r.has_model)
        memcpy(job->models[i], r.geometry.model, sizeof r.geometry.model);
    pv_sift_chain_result_free(&r);
    return status;
}

/* The whole video once; *timing: the calls' timings summed, end to end
 * by the wall clock. */
static pv_status run_video(pv_context *ctx, track_job *job, pv_timing *timing)
{
    memset(timing, 0, sizeof *timing);
    if (job->chain)
        pv_sift_track_reset(job->plan);
    const double start = wall_ms();
    pv_status status = PV_OK;
    for (int i = 0; i < job->count && status == PV_OK; i++)
        status = job->chain ? chain_frame(ctx, job, i, timing) : loop_frame(ctx, job, i, timing);
    timing->total_ms = wall_ms() - start;
    return status;
}

static pv_status time_video(const bench_config *config, pv_context *ctx, track_job *job,
                            pv_timing *median, bench_series *series)
{
    const pv_sift_params params = chain_sift_params();
    pv_status status = pv_sift_plan_create(ctx, job->frames[0].width, job->frames[0].height,
                                           &params, &job->plan);
    pv_timing t;
    for (int i = 0; status == PV_OK && i < bench_warmup_for(config, ctx); i++)
        status = run_video(ctx, job, &t);
    const int runs = bench_runs_for(config, ctx);
    series->count = 0;
    for (int i = 0; status == PV_OK && i < runs; i++) {
        status = run_video(ctx, job, &t);
        series->total_ms[i] = t.total_ms;
        series->kernel_ms[i] = t.kernel_ms;
        series->upload_ms[i] = t.upload_ms;
        series->download_ms[i] = t.download_ms;
        series->count = i + 1;
    }
    if (status == PV_OK)
        bench_series_medians(series, median);
    pv_sift_plan_destroy(job->plan);
    pv_sift_features_free(&job->features[0]);
    pv_sift_features_free(&job->features[1]);
    job->plan = NULL;
    return status;
}

static int time_track(const bench_config *config, pv_context *ctx, const pv_image *frames,
                      int chain, track_job *job, pv_timing *median, bench_series *series)
{
    memset(job, 0, sizeof *job);
    job->frames = frames;
    job->count = TRACK_FRAMES;
    job->chain = chain;
    pv_status status = time_video(config, ctx, job, median, series);
    return status == PV_OK ? 0 : cli_fail_status(status, chain ? "sift track" : "sift track loop");
}

/* Share of frames (from the second) whose models agree. */
static double same_models(const track_job *a, const track_job *b, int width, int height)
{
    int same = 0;
    for (int i = 1; i < TRACK_FRAMES; i++)
        same += corner_distance(a->models[i], b->models[i], width, height) <= SAME_MODEL_PX;
    return (double)same / (TRACK_FRAMES - 1);
}

static void track_params(bench_result *r, const chain_case *c, int chain, double loop_rate,
                         double cl_rate)
{
    int used = snprintf(r->params, sizeof r->params, "%dx%d x%d %s, frames/s cpu %.1f cl %.1f",
                        c->width, c->height, TRACK_FRAMES,
                        chain ? "pv_sift_track_next" : "detect+match+homography",
                        1e3 * TRACK_FRAMES / r->cpu_ms, cl_rate);
    if (chain && loop_rate > 0.0 && cl_rate > 0.0 && used > 0 && (size_t)used < sizeof r->params)
        snprintf(r->params + used, sizeof r->params - (size_t)used, ", cl x%.2f the loop",
                 cl_rate / loop_rate);
}

/* One row; *loop (the loop row's jobs, run first) gives the chain row its
 * comparison. */
static int track_row(const bench_config *config, const bench_contexts *contexts,
                     const pv_image *frames, int chain, track_job loop[2], double *loop_rate,
                     bench_result *r)
{
    const chain_case *c = &track_case;
    char name[48];
    snprintf(name, sizeof name, "%s%s", c->name, chain ? "" : "-loop");
    start_row(r, contexts, name, c, TRACK_FRAMES);
    snprintf(r->variant, sizeof r->variant, "%s", chain ? "track" : "loop");
    r->threshold = chain ? 1.0 : 0.0;
    track_job *cpu = calloc(1, sizeof *cpu), *cl = calloc(1, sizeof *cl);
    if (!cpu || !cl) {
        free(cpu);
        free(cl);
        return cli_fail("out of memory");
    }
    pv_timing cpu_t, cl_t;
    int rc = time_track(config, contexts->cpu, frames, chain, cpu, &cpu_t, &r->cpu_samples);
    if (rc == 0)
        bench_fill_cpu(r, &cpu_t, NULL);
    double cl_rate = 0.0;
    if (rc == 0 && contexts->opencl) {
        rc = time_track(config, contexts->opencl, frames, chain, cl, &cl_t, &r->cl_samples);
        if (rc == 0) {
            bench_fill_opencl(r, &cl_t, NULL);
            cl_rate = r->cl_total_ms > 0.0 ? 1e3 * TRACK_FRAMES / r->cl_total_ms : 0.0;
        }
    }
    if (rc == 0 && chain)
        r->agreement = contexts->opencl ? same_models(cl, &loop[1], c->width, c->height)
                                        : same_models(cpu, &loop[0], c->width, c->height);
    if (rc == 0)
        track_params(r, c, chain, *loop_rate, cl_rate);
    if (rc == 0 && !chain) {
        loop[0] = *cpu;
        loop[1] = *cl;
        *loop_rate = cl_rate;
    }
    free(cpu);
    free(cl);
    return rc;
}

static int track_rows(const bench_config *config, const bench_contexts *contexts,
                      const pv_image *venus, bench_rows *rows)
{
    const chain_case *c = &track_case;
    pv_image frames[TRACK_FRAMES];
    memset(frames, 0, sizeof frames);
    int rc = 0;
    for (int i = 0; i < TRACK_FRAMES && rc == 0; i++)
        rc = make_frame(venus, c->width, c->height, TRACK_STEP_X * i, TRACK_STEP_Y * i, 0,
                        &frames[i]);
    bench_result *row = malloc(sizeof *row);
    track_job *loop = malloc(2 * sizeof *loop);
    if (rc == 0 && (!row || !loop))
        rc = cli_fail("out of memory");
    if (loop)
        memset(loop, 0, 2 * sizeof *loop);
    double loop_rate = 0.0;
    for (int chain = 0; chain <= 1 && rc == 0; chain++) {
        rc = track_row(config, contexts, frames, chain, loop, &loop_rate, row);
        if (rc == 0)
            rc = bench_add_row(rows, row);
    }
    for (int i = 0; i < TRACK_FRAMES; i++)
        pv_image_free(&frames[i]);
    free(loop);
    free(row);
    return rc;
}

/* ------------------------------------------------------------------ cases */

int bench_sift_chain_cases(const bench_config *config, const bench_contexts *contexts,
                           bench_rows *rows)
{
    const size_t n = sizeof chain_cases / sizeof chain_cases[0];
    int wanted[sizeof chain_cases / sizeof chain_cases[0] + 1], any = 0;
    for (size_t i = 0; i < n; i++)
        any |= wanted[i] = bench_wants(config, "sift", chain_cases[i].name, 0);
    any |= wanted[n] = bench_wants(config, "sift", track_case.name, 0);
    if (!any)
        return 0;
    pv_image venus;
    if (load_venus(config, &venus))
        return 1;
    int rc = 0;
    bench_result *row = malloc(sizeof *row);
    if (!row)
        rc = cli_fail("out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!wanted[i])
            continue;
        rc = chain_row(config, contexts, &venus, &chain_cases[i], row);
        if (rc == 0)
            rc = bench_add_row(rows, row);
    }
    if (rc == 0 && wanted[n])
        rc = track_rows(config, contexts, &venus, rows);
    free(row);
    pv_image_free(&venus);
    return rc;
}
