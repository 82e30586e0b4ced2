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
} sift_case;

static const sift_case sift_cases[] = {
    {"sift-vga", 640, 480, 1, 0, PV_SIFT_PRESET_FAST},
    {"sift-720p", 1280, 720, 0, 0, PV_SIFT_PRESET_FAST},
    {"sift-1080p", 1920, 1080, 0, 0, PV_SIFT_PRESET_FAST},
    {"sift-4k", 3840, 2160, 0, 0, PV_SIFT_PRESET_FAST},
    {"sift-8k", 7680, 4320, 0, 0, PV_SIFT_PRESET_FAST},
    {"sift-8k-fresh", 7680, 4320, 0, 1, PV_SIFT_PRESET_FAST},
    {"sift-720p-default", 1280, 720, 0, 0, PV_SIFT_PRESET_REFERENCE},
    {"sift-1080p-default", 1920, 1080, 0, 0, PV_SIFT_PRESET_REFERENCE},
    {"sift-8k-default", 7680, 4320, 0, 0, PV_SIFT_PRESET_REFERENCE},
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

/* The documented cross-checks (include/parvis/features.h, lib/features.c):
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

static int make_image(const bench_config *config, int width, int height, pv_image *image)
{
    char path[4096];
    pv_image venus;
    snprintf(path, sizeof path, "%s/stereo/venus/left.pgm", config->data_dir);
    pv_status status = pv_image_read(path, PV_PIXEL_U8, &venus);
    if (status != PV_OK)
        return cli_fail_status(status, path);
    if (pv_image_alloc(image, width, height, PV_PIXEL_U8) != PV_OK) {
        pv_image_free(&venus);
        return cli_fail("cannot allocate a %dx%d image", width, height);
    }
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            ((uint8_t *)image->data)[(size_t)y * width + x] =
                ((const uint8_t *)venus.data)[(ptrdiff_t)mirror(y, venus.height) * venus.stride +
                                              mirror(x, venus.width)];
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

static int time_detect(const bench_config *config, pv_context *ctx, const pv_image *image,
                       int fresh_results, pv_sift_preset preset, detect_job *job, pv_timing *timing,
                       bench_series *series, int *octaves)
{
    pv_sift_params params;
    pv_sift_params_preset(&params, preset);
    memset(job, 0, sizeof *job);
    job->image = image;
    job->fresh_results = fresh_results;
    pv_status status = pv_sift_plan_create(ctx, image->width, image->height, &params, &job->plan);
    if (status == PV_OK) {
        *octaves = pv_sift_plan_octaves(job->plan);
        status = bench_time_series(config, ctx, run_detect, job, timing, series);
    }
    pv_sift_plan_destroy(job->plan);
    return status == PV_OK ? 0 : cli_fail_status(status, "sift detect");
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
    if (image->width * (double)image->height > 1920.0 * 1080.0 || vlfeat_keypoints(image, octaves, preset, &vl))
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
    (void)ours;
    return -1.0;
}
#endif

static void fill_detect_row(bench_result *r, const pv_image *image, int octaves, pv_sift_preset preset,
                            const detect_job *cpu, const pv_timing *cpu_t, const detect_job *cl,
                            const pv_timing *cl_t)
{
    bench_fill_cpu(r, cpu_t, NULL);
    r->cpu_quality = vlfeat_quality(image, octaves, preset, &cpu->result);
    snprintf(r->params, sizeof r->params, "%dx%d o0 %d oct, %d kp", image->width, image->height,
             octaves, cpu->result.count);
    r->size = (double)image->width * image->height;
    r->roofline_bytes = roofline_sift_bytes(image->width, image->height,
                                            cl ? cl->result.count : cpu->result.count);
    pv_sift_params defaults;
    pv_sift_params_default(&defaults);
    r->roofline_ops = ops_sift(image->width, image->height, octaves, defaults.levels,
                               cl ? cl->result.count : cpu->result.count);
    if (!cl)
        return;
    /* The targets exclude the image upload: the table's e2e-up column. */
    bench_fill_opencl(r, cl_t, NULL);
    double fwd = paired(&cl->result, &cpu->result, PV_SIFT_POSITION_TOLERANCE, 1e-3f);
    double back = paired(&cpu->result, &cl->result, PV_SIFT_POSITION_TOLERANCE, 1e-3f);
    r->agreement = fwd < back ? fwd : back;
    r->cl_quality = vlfeat_quality(image, octaves, preset, &cl->result);
}

static int bench_detect(const bench_config *config, const bench_contexts *contexts,
                        const char *name, int width, int height, int fresh_results,
                        pv_sift_preset preset, bench_result *r)
{
    pv_image image;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sift");
    snprintf(r->name, sizeof r->name, "%s", name);
    r->quality_name = "vlfeat";
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = SIFT_AGREEMENT_THRESHOLD;
    if (make_image(config, width, height, &image))
        return 1;
    detect_job cpu, cl;
    pv_timing cpu_t, cl_t;
    int octaves = 0;
    int rc = time_detect(config, contexts->cpu, &image, fresh_results, preset, &cpu, &cpu_t,
                         &r->cpu_samples, &octaves);
    if (rc == 0 && contexts->opencl)
        rc = time_detect(config, contexts->opencl, &image, fresh_results, preset, &cl, &cl_t,
                         &r->cl_samples, &octaves);
    if (rc == 0)
        fill_detect_row(r, &image, octaves, preset, &cpu, &cpu_t, contexts->opencl ? &cl : NULL, &cl_t);
    if (cpu.have_result)
        pv_sift_features_free(&cpu.result);
    if (contexts->opencl && cl.have_result)
        pv_sift_features_free(&cl.result);
    pv_image_free(&image);
    return rc;
}

static int sift_row(const bench_config *config, const bench_contexts *contexts, const char *name,
                    int width, int height, int fresh_results, pv_sift_preset preset,
                    bench_rows *rows)
{
    bench_result *row = malloc(sizeof *row);
    if (!row)
        return cli_fail("out of memory");
    int rc = bench_detect(config, contexts, name, width, height, fresh_results, preset, row);
    if (rc == 0)
        rc = bench_add_row(rows, row);
    free(row);
    return rc;
}

int bench_sift_case(const bench_config *config, const bench_contexts *contexts, const char *name,
                    int width, int height, bench_rows *rows)
{
    return sift_row(config, contexts, name, width, height, 0, PV_SIFT_PRESET_FAST, rows);
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
    pv_status status = PV_OK;
    if (rc == 0 && (status = bench_time_series(config, contexts->cpu, run_match, &cpu, &cpu_t,
                                               &r->cpu_samples)) != PV_OK)
        rc = cli_fail_status(status, "sift match (cpu)");
    if (rc == 0 && contexts->opencl &&
        (status = bench_time_series(config, contexts->opencl, run_match, &cl, &cl_t,
                                    &r->cl_samples)) != PV_OK)
        rc = cli_fail_status(status, "sift match (opencl)");
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
        if (sift_row(config, contexts, c->name, c->width, c->height, c->fresh_results, c->preset,
                     &rows))
            return 1;
    }
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
