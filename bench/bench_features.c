/* SIFT cases: detect + describe at 640x480 (the quick suite's), 1280x720,
 * 1920x1080, 3840x2160 and 7680x4320 (first octave 0, the GPU
 * targets), on the bundled Venus
 * image mirror-tiled to the size (natural-image texture at its own scale);
 * and brute-force matching of 1000 (quick), 2000 and 10000 descriptors with planted
 * correspondences.  Agreement: the share of keypoints the backends pair
 * within 0.05 px (both ways, the smaller), or of identical matches.
 * Quality (VLFeat builds): share of VLFeat's keypoints that a backend
 * reproduces within 1 px and 10% in scale (sizes up to 1080p, where
 * VLFeat's single-threaded run stays short). */
#include "config.h"

#include "bench.h"

#include "bench_ops.h"
#include "bench_roofline.h"
#ifdef BENCH_DEVICE_BUFFERS
#include "bench_sift_device.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef PV_HAVE_VLFEAT
#include <vl/sift.h>
#endif

/* Detection is timed as a stream (pv_sift_detect_into, each run reusing
 * the previous result's arrays); a fresh_results case times pv_sift_detect,
 * a new result per run. */
typedef struct sift_case {
    const char *name;
    int width, height;
    int quick;
    int fresh_results;
    pv_sift_preset preset;   /* FAST: the paper's settings; REFERENCE: the defaults */
    pv_pixel_type input;     /* U8 grey, or RGB8 colour converted to grey on the device */
    int device_buffer;       /* OpenCL from a buffer already on the device (pv_sift_detect_cl) */
} sift_case;

static const sift_case sift_cases[] = {
    {"sift-vga", 640, 480, 1, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-720p", 1280, 720, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-1080p", 1920, 1080, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-rgb-1080p", 1920, 1080, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_RGB8, 0},
    {"sift-4k", 3840, 2160, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-8k", 7680, 4320, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-8k-fresh", 7680, 4320, 0, 1, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0},
    {"sift-720p-default", 1280, 720, 0, 0, PV_SIFT_PRESET_REFERENCE, PV_PIXEL_U8, 0},
    {"sift-1080p-default", 1920, 1080, 0, 0, PV_SIFT_PRESET_REFERENCE, PV_PIXEL_U8, 0},
    {"sift-8k-default", 7680, 4320, 0, 0, PV_SIFT_PRESET_REFERENCE, PV_PIXEL_U8, 0},
    /* The -d2d rows' OpenCL columns start from the image in a buffer of the
     * context (keypoints and descriptors back in host memory), as
     * cudasift_peer times ExtractSift; their end to end is that wall time. */
    {"sift-720p-d2d", 1280, 720, 0, 1, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 1},
    {"sift-1080p-d2d", 1920, 1080, 0, 1, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 1},
    {"sift-4k-d2d", 3840, 2160, 0, 1, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 1},
};

typedef struct match_case {
    const char *name;
    int count;
    int quick;
} match_case;

static const match_case match_cases[] = {
    {"match-1k", 1000, 1},
    {"match-2k", 2000, 0},
    {"match-10k", 10000, 0},
};

/* The documented cross-checks (include/parvis/features.h, lib/features/features.c):
 * keypoints paired within PV_SIFT_POSITION_TOLERANCE on at least
 * PV_SIFT_MATCHED_FRACTION of them; matching: every query's nearest
 * neighbour the same. */
#define SIFT_AGREEMENT_THRESHOLD PV_SIFT_MATCHED_FRACTION
#define MATCH_AGREEMENT_THRESHOLD 1.0

/* ------------------------------------------------------------------ inputs */

static int mirror(int i, int n)
{
    int period = 2 * n;
    i %= period;
    return i < n ? i : period - 1 - i;
}

/* Sample (x, y) of venus mirror-tiled without end. */
static uint8_t tiled(const pv_image *venus, int x, int y)
{
    return ((const uint8_t *)venus->data)[(ptrdiff_t)mirror(y, venus->height) * venus->stride +
                                          mirror(x, venus->width)];
}

/* Venus tiled to the size: grey (U8), or colour (RGB8) with three views
 * shifted apart as R, G and B, so that its luma mixes the channels. */
static int make_image(const bench_config *config, int width, int height, pv_pixel_type type,
                      pv_image *image)
{
    static const int shift[3][2] = {{0, 0}, {3, 1}, {-2, 4}};
    char path[4096];
    pv_image venus;
    snprintf(path, sizeof path, "%s/stereo/venus/left.pgm", config->data_dir);
    pv_status status = pv_image_read(path, PV_PIXEL_U8, &venus);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    if (pv_image_alloc(image, width, height, type) != PV_OK) {
        pv_image_free(&venus);
        return cli_fail("cannot allocate a %dx%d image", width, height);
    }
    const int channels = type == PV_PIXEL_RGB8 ? 3 : 1;
    uint8_t *out = image->data;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            for (int c = 0; c < channels; c++)
                out[((size_t)y * width + x) * channels + c] =
                    tiled(&venus, x + shift[c][0], y + shift[c][1]);
    pv_image_free(&venus);
    return 0;
}

/* ------------------------------------------------------------------ detect */

typedef struct detect_job {
    pv_sift_plan *plan;
    const pv_image *image;
    pv_sift_features result;
    int have_result;
    int fresh_results;
} detect_job;

static pv_status run_detect(pv_context *ctx, void *user)
{
    (void)ctx;
    detect_job *job = user;
    if (!job->fresh_results) {
        pv_status status = pv_sift_detect_into(job->plan, job->image, &job->result);
        job->have_result = status == PV_OK;
        return status;
    }
    if (job->have_result)
        pv_sift_features_free(&job->result);
    job->have_result = 0;
    pv_status status = pv_sift_detect(job->plan, job->image, &job->result);
    job->have_result = status == PV_OK;
    return status;
}

#ifdef BENCH_DEVICE_BUFFERS
/* The timed runs from a device buffer; job->result receives the last
 * run's features. */
static int time_from_buffer(const bench_config *config, pv_context *ctx, detect_job *job,
                            pv_timing *timing, bench_series *series)
{
    sift_device_run *run = NULL;
    if (bench_sift_device_open(ctx, job->plan, job->image, &run))
        return 1;
    pv_status status = bench_time_series(config, ctx, bench_sift_device_call, run, timing, series);
    job->have_result = status == PV_OK && bench_sift_device_take(run, &job->result);
    bench_sift_device_close(run);
    return status == PV_OK ? 0 : cli_fail_status(status, "sift detect (device buffer)");
}
#else
static int time_from_buffer(const bench_config *config, pv_context *ctx, detect_job *job,
                            pv_timing *timing, bench_series *series)
{
    (void)config, (void)ctx, (void)job, (void)timing, (void)series;
    return cli_fail("device buffers need the OpenCL backend");
}
#endif

static int time_detect(const bench_config *config, pv_context *ctx, const pv_image *image,
                       int fresh_results, pv_sift_preset preset, int device_buffer,
                       detect_job *job, pv_timing *timing, bench_series *series, int *octaves)
{
    pv_sift_params params;
    pv_sift_params_preset(&params, preset);
    memset(job, 0, sizeof *job);
    job->image = image;
    job->fresh_results = fresh_results;
    pv_status status = pv_sift_plan_create(ctx, image->width, image->height, &params, &job->plan);
    if (status != PV_OK)
        return cli_fail_status(status, "sift detect");
    *octaves = pv_sift_plan_octaves(job->plan);
    int rc = 0;
    if (device_buffer)
        rc = time_from_buffer(config, ctx, job, timing, series);
    else if ((status = bench_time_series(config, ctx, run_detect, job, timing, series)) != PV_OK)
        rc = cli_fail_status(status, "sift detect");
    pv_sift_plan_destroy(job->plan);
    return rc;
}

static double paired(const pv_sift_features *a, const pv_sift_features *ref, float radius,
                     float scale_tol)
{
    pv_sift_agreement ag;
    if (pv_sift_compare(a, ref, radius, scale_tol, 0.1f, &ag) != PV_OK)
        return -1.0;
    return ag.paired_fraction;
}

#ifdef PV_HAVE_VLFEAT
/* VLFeat's keypoint positions and scales (orientations are not needed
 * for the paired share). */
static int vlfeat_keypoints(const pv_image *image, int octaves, pv_sift_preset preset,
                            pv_sift_features *out)
{
    const int w = image->width, h = image->height;
    pv_sift_params p;
    pv_sift_params_preset(&p, preset);
    float *data = malloc((size_t)w * h * sizeof(float));
    int capacity = 4096, count = 0;
    pv_sift_keypoint *kps = malloc((size_t)capacity * sizeof *kps);
    VlSiftFilt *f = data && kps ? vl_sift_new(w, h, octaves, p.levels, p.first_octave) : NULL;
    if (!f) {
        free(data);
        free(kps);
        return cli_fail("VLFeat: out of memory");
    }
    for (size_t i = 0; i < (size_t)w * h; i++)
        data[i] = (float)((const uint8_t *)image->data)[i] * (1.0f / 255.0f);
    vl_sift_set_peak_thresh(f, p.peak_thresh);
    vl_sift_set_edge_thresh(f, p.edge_thresh);
    for (int err = vl_sift_process_first_octave(f, data); err != VL_ERR_EOF && kps;
         err = vl_sift_process_next_octave(f)) {
        vl_sift_detect(f);
        const VlSiftKeypoint *k = vl_sift_get_keypoints(f);
        for (int i = 0; i < vl_sift_get_nkeypoints(f) && kps; i++) {
            if (count == capacity) {
                pv_sift_keypoint *grown = realloc(kps, (size_t)(capacity *= 2) * sizeof *kps);
                if (!grown)
                    free(kps);
                kps = grown;
                if (!kps)
                    break;
            }
            kps[count++] = (pv_sift_keypoint){k[i].x, k[i].y, k[i].sigma, 0.0f, 0.0f, k[i].o, k[i].s};
        }
    }
    vl_sift_delete(f);
    free(data);
    if (!kps)
        return cli_fail("VLFeat: out of memory");
    /* pv_sift_compare wants descriptors: zeros (only the pairing is used). */
    out->descriptors = calloc((size_t)(count > 0 ? count : 1) * PV_SIFT_DESCRIPTOR_SIZE, sizeof(float));
    out->keypoints = kps;
    out->count = count;
    out->descriptors_u8 = NULL;
    if (!out->descriptors) {
        free(kps);
        return cli_fail("VLFeat: out of memory");
    }
    return 0;
}

static double vlfeat_quality(const pv_image *image, int octaves, pv_sift_preset preset,
                             const pv_sift_features *ours)
{
    pv_sift_features vl;
    /* VLFeat reads the grey u8 images only */
    if (image->type != PV_PIXEL_U8 || image->width * (double)image->height > 1920.0 * 1080.0 ||
        vlfeat_keypoints(image, octaves, preset, &vl))
        return -1.0;
    double q = paired(ours, &vl, 1.0f, 0.1f);
    free(vl.keypoints);
    free(vl.descriptors);
    return q;
}
#else
static double vlfeat_quality(const pv_image *image, int octaves, pv_sift_preset preset,
                             const pv_sift_features *ours)
{
    (void)image;
    (void)octaves;
    (void)preset;
    (void)ours;
    return -1.0;
}
#endif

/* The OpenCL time outside the kernels, appended to a row's params: "reads"
 * is the device time of the downloads (the totals and the result reads
 * into the pinned stage, pv_timing.download_ms), "host" what is left of
 * the end-to-end time less the uploads, the kernels and the reads: the
 * host's copies out of the stage, launch gaps and waits.  In a batch the
 * reads of one chunk run beside the next chunk's kernels, so there "host"
 * can be small or negative: the overlap hides the reads. */
static void append_outside_kernels(char *params, size_t size, const pv_timing *cl)
{
    const size_t used = strlen(params);
    const double host = cl->total_ms - cl->upload_ms - cl->kernel_ms - cl->download_ms;
    if (used < size)
        snprintf(params + used, size - used, ", cl reads %.3f ms host %.3f ms", cl->download_ms,
                 host);
}

/* The OpenCL cost per keypoint, end to end less the upload (the targets'
 * measure) and of the kernels, in ns: detectors that find different
 * numbers of keypoints are compared on it (CudaSift, docs/RESULTS.md). */
static void append_per_keypoint(char *params, size_t size, const pv_timing *cl, int keypoints)
{
    const size_t used = strlen(params);
    if (used < size && keypoints > 0)
        snprintf(params + used, size - used, ", cl %.0f ns/kp (kernels %.0f)",
                 (cl->total_ms - cl->upload_ms) * 1e6 / keypoints,
                 cl->kernel_ms * 1e6 / keypoints);
}

static void fill_detect_row(bench_result *r, const pv_image *image, int octaves, pv_sift_preset preset,
                            const detect_job *cpu, const pv_timing *cpu_t, const detect_job *cl,
                            const pv_timing *cl_t)
{
    bench_fill_cpu(r, cpu_t, NULL);
    r->cpu_quality = vlfeat_quality(image, octaves, preset, &cpu->result);
    pv_sift_params settings;
    pv_sift_params_preset(&settings, preset);
    settings.octaves = octaves;
    bench_describe_settings(r, "sift", &settings, sizeof settings);
    snprintf(r->params, sizeof r->params, "%dx%d%s o0 %d oct, %d kp", image->width,
             image->height, image->type == PV_PIXEL_RGB8 ? " RGB8" : "", octaves,
             cpu->result.count);
    r->size = (double)image->width * image->height;
    r->roofline_bytes = roofline_sift_bytes(image->width, image->height,
                                            cl ? cl->result.count : cpu->result.count);
    pv_sift_params defaults;
    pv_sift_params_default(&defaults);
    r->roofline_ops = ops_sift(image->width, image->height, octaves, defaults.levels,
                               cl ? cl->result.count : cpu->result.count);
    r->item_name = "keypoint";
    r->cpu_items = cpu->result.count;
    if (!cl)
        return;
    /* The targets exclude the image upload: the table's e2e-up column. */
    bench_fill_opencl(r, cl_t, NULL);
    r->cl_items = cl->result.count;
    append_outside_kernels(r->params, sizeof r->params, cl_t);
    append_per_keypoint(r->params, sizeof r->params, cl_t, cl->result.count);
    double fwd = paired(&cl->result, &cpu->result, PV_SIFT_POSITION_TOLERANCE, 1e-3f);
    double back = paired(&cpu->result, &cl->result, PV_SIFT_POSITION_TOLERANCE, 1e-3f);
    r->agreement = fwd < back ? fwd : back;
    r->cl_quality = vlfeat_quality(image, octaves, preset, &cl->result);
}

static int bench_detect(const bench_config *config, const bench_contexts *contexts,
                        const sift_case *c, bench_result *r)
{
    const pv_sift_preset preset = c->preset;
    pv_image image;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sift");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->quality_name = "vlfeat";
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = SIFT_AGREEMENT_THRESHOLD;
    if (make_image(config, c->width, c->height, c->input, &image))
        return 1;
    detect_job cpu, cl;
    pv_timing cpu_t, cl_t;
    int octaves = 0;
    int rc = time_detect(config, contexts->cpu, &image, c->fresh_results, preset, 0, &cpu,
                         &cpu_t, &r->cpu_samples, &octaves);
    if (rc == 0 && contexts->opencl)
        rc = time_detect(config, contexts->opencl, &image, c->fresh_results, preset,
                         c->device_buffer, &cl, &cl_t, &r->cl_samples, &octaves);
    if (rc == 0)
        fill_detect_row(r, &image, octaves, preset, &cpu, &cpu_t, contexts->opencl ? &cl : NULL, &cl_t);
    if (cpu.have_result)
        pv_sift_features_free(&cpu.result);
    if (contexts->opencl && cl.have_result)
        pv_sift_features_free(&cl.result);
    pv_image_free(&image);
    return rc;
}

static int sift_row(const bench_config *config, const bench_contexts *contexts,
                    const sift_case *c, bench_rows *rows)
{
    bench_result *row = malloc(sizeof *row);
    if (!row)
        return cli_fail("out of memory");
    int rc = bench_detect(config, contexts, c, row);
    if (rc == 0)
        rc = bench_add_row(rows, row);
    free(row);
    return rc;
}

int bench_sift_case(const bench_config *config, const bench_contexts *contexts, const char *name,
                    int width, int height, bench_rows *rows)
{
    const sift_case c = {name, width, height, 0, 0, PV_SIFT_PRESET_FAST, PV_PIXEL_U8, 0};
    return sift_row(config, contexts, &c, rows);
}

/* ------------------------------------------------------------------- batch */

/* Throughput of a stream of frames: c->frames different frames (Venus
 * tiled from different offsets) through one plan, timed as one call per
 * frame (pv_sift_detect_into in a loop, the "-loop" row) and as one
 * pv_sift_detect_batch call (the case's own row); both rows give images/s,
 * the batch row also its OpenCL rate over the loop's and the chunk size
 * it ran with (features.SIFT_BATCH_CHUNK: images side by side per
 * launch).  The 16-frame cases show the rate with two chunks of the
 * default 8, or one of 16 (--param features.SIFT_BATCH_CHUNK=16). */
#define MAX_BATCH_FRAMES 16

typedef struct batch_case {
    const char *name;
    int width, height, frames;
} batch_case;

static const batch_case batch_cases[] = {
    {"sift-batch-vga", 640, 480, 8},
    {"sift-batch-720p", 1280, 720, 8},
    {"sift-batch16-vga", 640, 480, 16},
    {"sift-batch16-720p", 1280, 720, 16},
};

typedef struct batch_job {
    pv_sift_plan *plan;
    const pv_image *frames;
    int count;
    pv_sift_features results[MAX_BATCH_FRAMES];
    int one_call;            /* 1: pv_sift_detect_batch; 0: a loop of detect_into */
} batch_job;

/* The whole stream once; *timing: the context's timing of the one batch
 * call, or the sum over the per-frame calls (the context keeps only the
 * last call's). */
static pv_status run_stream(pv_context *ctx, batch_job *job, pv_timing *timing)
{
    pv_timing t;
    memset(timing, 0, sizeof *timing);
    if (job->one_call) {
        pv_status status = pv_sift_detect_batch(job->plan, job->frames, job->count, job->results);
        if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
            bench_add_timing(timing, &t);
        return status;
    }
    pv_status status = PV_OK;
    for (int i = 0; i < job->count && status == PV_OK; i++) {
        status = pv_sift_detect_into(job->plan, &job->frames[i], &job->results[i]);
        if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
            bench_add_timing(timing, &t);
    }
    return status;
}

/* run_stream for bench_kernel_series: the stream's summed kernel time. */
static pv_status stream_kernel_run(pv_context *ctx, void *user, double *kernel_ms)
{
    pv_timing t;
    pv_status status = run_stream(ctx, user, &t);
    if (status == PV_OK)
        *kernel_ms = t.kernel_ms;
    return status;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *values, int count)
{
    double sorted[BENCH_MAX_SAMPLES];
    memcpy(sorted, values, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    return count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
}

/* bench_time_series for a stream: warm-up, then the configured runs, each
 * sample the whole stream's time; *median: the medians of the samples. */
static pv_status time_stream(const bench_config *config, pv_context *ctx, batch_job *job,
                             pv_timing *median, bench_series *series)
{
    pv_timing t;
    for (int i = 0; i < config->warmup; i++) {
        pv_status status = run_stream(ctx, job, &t);
        if (status != PV_OK)
            return status;
    }
    int runs = config->runs < 1 ? 1 : config->runs > BENCH_MAX_SAMPLES ? BENCH_MAX_SAMPLES
                                                                       : config->runs;
    series->count = 0;
    for (int i = 0; i < runs; i++) {
        pv_status status = run_stream(ctx, job, &t);
        if (status != PV_OK)
            return status;
        series->total_ms[i] = t.total_ms;
        series->kernel_ms[i] = t.kernel_ms;
        series->upload_ms[i] = t.upload_ms;
        series->download_ms[i] = t.download_ms;
        series->count = i + 1;
    }
    pv_status status = bench_kernel_series(ctx, stream_kernel_run, job, series);
    if (status != PV_OK)
        return status;
    memset(median, 0, sizeof *median);
    median->total_ms = median_of(series->total_ms, runs);
    median->kernel_ms = median_of(series->kernel_ms, runs);
    median->upload_ms = median_of(series->upload_ms, runs);
    median->download_ms = median_of(series->download_ms, runs);
    return PV_OK;
}

static void free_batch_results(batch_job *job)
{
    for (int i = 0; i < job->count; i++)
        pv_sift_features_free(&job->results[i]);
}

/* Frame i: Venus mirror-tiled from offset (37 i, 23 i), so every frame
 * differs as the frames of a panning video do. */
static int make_frames(const bench_config *config, const batch_case *c, pv_image *frames)
{
    pv_image tile;
    if (make_image(config, c->width + 37 * c->frames, c->height + 23 * c->frames, PV_PIXEL_U8,
                   &tile))
        return 1;
    int rc = 0;
    for (int i = 0; i < c->frames && rc == 0; i++) {
        if (pv_image_alloc(&frames[i], c->width, c->height, PV_PIXEL_U8) != PV_OK) {
            rc = cli_fail("cannot allocate a %dx%d frame", c->width, c->height);
            break;
        }
        for (int y = 0; y < c->height; y++)
            memcpy((uint8_t *)frames[i].data + (size_t)y * c->width,
                   (const uint8_t *)tile.data + (size_t)(y + 23 * i) * tile.width + 37 * i,
                   (size_t)c->width);
    }
    pv_image_free(&tile);
    return rc;
}

static int time_batch(const bench_config *config, pv_context *ctx, const pv_image *frames,
                      int count, int one_call, batch_job *job, pv_timing *timing,
                      bench_series *series)
{
    pv_sift_params params;
    pv_sift_params_preset(&params, PV_SIFT_PRESET_FAST);
    memset(job, 0, sizeof *job);
    job->frames = frames;
    job->count = count;
    job->one_call = one_call;
    pv_status status = pv_sift_plan_create(ctx, frames[0].width, frames[0].height, &params,
                                           &job->plan);
    if (status == PV_OK)
        status = time_stream(config, ctx, job, timing, series);
    pv_sift_plan_destroy(job->plan);
    return status == PV_OK ? 0 : cli_fail_status(status, one_call ? "sift batch" : "sift loop");
}

/* One row: the whole stream's time per backend, images/s in the params,
 * agreement of the backends over every frame (the smallest share).
 * *cl_rate: the OpenCL images/s (0 without OpenCL); loop_rate: the loop
 * row's, for the batch row's ratio (0: none). */
static int batch_row(const bench_config *config, const bench_contexts *contexts,
                     const batch_case *c, const pv_image *frames, int one_call,
                     double loop_rate, double *cl_rate, bench_result *r)
{
    const int n = c->frames;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sift");
    snprintf(r->name, sizeof r->name, "%s%s", c->name, one_call ? "" : "-loop");
    snprintf(r->variant, sizeof r->variant, "%s", one_call ? "batch" : "loop");
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = SIFT_AGREEMENT_THRESHOLD;
    r->size = (double)c->width * c->height * n;
    batch_job cpu, cl;
    pv_timing cpu_t, cl_t;
    int rc = time_batch(config, contexts->cpu, frames, n, one_call, &cpu, &cpu_t,
                        &r->cpu_samples);
    if (rc == 0)
        bench_fill_cpu(r, &cpu_t, NULL);
    if (rc == 0 && contexts->opencl) {
        rc = time_batch(config, contexts->opencl, frames, n, one_call, &cl, &cl_t,
                        &r->cl_samples);
        if (rc == 0) {
            bench_fill_opencl(r, &cl_t, NULL);
            r->agreement = 1.0;
            for (int i = 0; i < n; i++) {
                double fwd = paired(&cl.results[i], &cpu.results[i], PV_SIFT_POSITION_TOLERANCE, 1e-3f);
                double back = paired(&cpu.results[i], &cl.results[i], PV_SIFT_POSITION_TOLERANCE, 1e-3f);
                r->agreement = fmin(r->agreement, fmin(fwd, back));
            }
        }
        free_batch_results(&cl);
    }
    if (rc == 0) {
        *cl_rate = r->have_opencl && r->cl_total_ms > 0.0 ? 1e3 * n / r->cl_total_ms : 0.0;
        int used = snprintf(r->params, sizeof r->params, "%dx%d x%d %s, img/s cpu %.1f cl %.1f",
                            c->width, c->height, n, one_call ? "one batch" : "one call each",
                            1e3 * n / r->cpu_ms, *cl_rate);
        int chunk = 0;
        if (loop_rate > 0.0 && *cl_rate > 0.0 && used > 0 && (size_t)used < sizeof r->params &&
            pv_tune_get(contexts->opencl, "features", "SIFT_BATCH_CHUNK", &chunk) == PV_OK)
            snprintf(r->params + used, sizeof r->params - (size_t)used,
                     ", cl x%.2f the loop (SIFT_BATCH_CHUNK %d)", *cl_rate / loop_rate, chunk);
        if (r->have_opencl)
            append_outside_kernels(r->params, sizeof r->params, &cl_t);
    }
    free_batch_results(&cpu);
    return rc;
}

static int batch_rows(const bench_config *config, const bench_contexts *contexts,
                      const batch_case *c, bench_rows *rows)
{
    pv_image frames[MAX_BATCH_FRAMES];
    memset(frames, 0, sizeof frames);
    bench_result *row = malloc(sizeof *row);
    int rc = row ? make_frames(config, c, frames) : cli_fail("out of memory");
    double loop_rate = 0.0, rate = 0.0;
    for (int one_call = 0; one_call <= 1 && rc == 0; one_call++) {
        rc = batch_row(config, contexts, c, frames, one_call, loop_rate, &rate, row);
        loop_rate = rate; /* the loop row comes first */
        if (rc == 0)
            rc = bench_add_row(rows, row);
    }
    for (int i = 0; i < MAX_BATCH_FRAMES; i++)
        pv_image_free(&frames[i]);
    free(row);
    return rc;
}

/* ------------------------------------------------------------------- match */

/* Unit descriptors; train[i] for even i is query[i] plus noise, the odd
 * ones are unrelated, so about half the queries have a true match. */
static int make_descriptors(int count, pv_sift_features *query, pv_sift_features *train)
{
    uint32_t state = 2463534242u;
    pv_sift_features *sets[2] = {query, train};
    for (int s = 0; s < 2; s++) {
        sets[s]->count = count;
        sets[s]->keypoints = calloc((size_t)count, sizeof(pv_sift_keypoint));
        sets[s]->descriptors = malloc((size_t)count * PV_SIFT_DESCRIPTOR_SIZE * sizeof(float));
        sets[s]->descriptors_u8 = NULL;
        if (!sets[s]->keypoints || !sets[s]->descriptors)
            return cli_fail("cannot allocate %d descriptors", count);
    }
    for (int i = 0; i < count; i++)
        for (int s = 0; s < 2; s++) {
            float *d = sets[s]->descriptors + (size_t)i * PV_SIFT_DESCRIPTOR_SIZE;
            const float *q = query->descriptors + (size_t)i * PV_SIFT_DESCRIPTOR_SIZE;
            double norm = 0.0;
            for (int k = 0; k < PV_SIFT_DESCRIPTOR_SIZE; k++) {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                float noise = (float)(state >> 8) / 16777216.0f;
                d[k] = s == 1 && i % 2 == 0 ? q[k] + 0.02f * noise : noise;
                norm += (double)d[k] * d[k];
            }
            for (int k = 0; k < PV_SIFT_DESCRIPTOR_SIZE; k++)
                d[k] = (float)(d[k] / sqrt(norm));
        }
    return 0;
}

typedef struct match_job {
    const pv_sift_features *query, *train;
    pv_sift_matches result;
    int have_result;
} match_job;

static pv_status run_match(pv_context *ctx, void *user)
{
    match_job *job = user;
    if (job->have_result)
        pv_sift_matches_free(&job->result);
    pv_status status = pv_sift_match(ctx, job->query, job->train, NULL, &job->result);
    job->have_result = status == PV_OK;
    return status;
}

static double matches_agreement(const pv_sift_matches *a, const pv_sift_matches *b)
{
    int same = 0, i = 0, j = 0;
    while (i < a->count && j < b->count) {
        if (a->pairs[i].query == b->pairs[j].query) {
            same += a->pairs[i].train == b->pairs[j].train;
            i++;
            j++;
        } else if (a->pairs[i].query < b->pairs[j].query) {
            i++;
        } else {
            j++;
        }
    }
    int most = a->count > b->count ? a->count : b->count;
    return most ? (double)same / most : 1.0;
}

static int bench_match(const bench_config *config, const bench_contexts *contexts,
                       const match_case *c, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "match");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->quality_name = NULL;
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = MATCH_AGREEMENT_THRESHOLD;
    r->size = c->count;
    pv_sift_features query = {0}, train = {0};
    int rc = make_descriptors(c->count, &query, &train);
    match_job cpu = {&query, &train, {0, NULL}, 0}, cl = {&query, &train, {0, NULL}, 0};
    pv_timing cpu_t, cl_t;
    if (rc == 0)
        rc = bench_time_both(config, contexts, run_match, &cpu, &cl, &cpu_t, &cl_t, r, "sift match");
    if (rc == 0) {
        snprintf(r->params, sizeof r->params, "%dx%d ratio 0.8, %d matches", c->count, c->count,
                 cpu.result.count);
        bench_fill_cpu(r, &cpu_t, NULL);
        r->roofline_bytes = roofline_match_bytes(c->count, c->count, cpu.result.count);
        r->roofline_ops = ops_match(c->count, c->count);
        if (contexts->opencl) {
            bench_fill_opencl(r, &cl_t, NULL);
            r->agreement = matches_agreement(&cl.result, &cpu.result);
        }
    }
    if (cpu.have_result)
        pv_sift_matches_free(&cpu.result);
    if (cl.have_result)
        pv_sift_matches_free(&cl.result);
    free(query.keypoints);
    free(query.descriptors);
    free(train.keypoints);
    free(train.descriptors);
    return rc;
}

int bench_features_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    for (size_t i = 0; i < sizeof sift_cases / sizeof sift_cases[0]; i++) {
        const sift_case *c = &sift_cases[i];
        if (!bench_wants(config, "sift", c->name, c->quick))
            continue;
        if (sift_row(config, contexts, c, &rows))
            return 1;
    }
    for (size_t i = 0; i < sizeof batch_cases / sizeof batch_cases[0]; i++) {
        if (!bench_wants(config, "sift", batch_cases[i].name, 0))
            continue;
        if (batch_rows(config, contexts, &batch_cases[i], &rows))
            return 1;
    }
    if (bench_sift_chain_cases(config, contexts, &rows))
        return 1;
    for (size_t i = 0; i < sizeof match_cases / sizeof match_cases[0]; i++) {
        if (!bench_wants(config, "match", match_cases[i].name, match_cases[i].quick))
            continue;
        if (*count >= max)
            return cli_fail("too many bench cases");
        if (bench_match(config, contexts, &match_cases[i], &results[*count]))
            return 1;
        bench_print_row(&results[(*count)++]);
    }
    return 0;
}
