/* Semi-global matching of a stream of pairs (--case sgm-stream): `pairs`
 * different 1080p pairs with 128 disparities and 8 paths (libSGM's
 * parameters and the 3x3 median, as the sgm rows), timed as a loop of
 * pv_stereo_sgm calls (the "-loop" row) and as one pv_stereo_sgm_batch
 * call (the case's own row).  Both rows give frames (pairs) per second;
 * the batch row also its OpenCL rate over the loop's.  libSGM's
 * host-to-host rate at this size is about 217 frames/s on an H100-class
 * GPU; the batch exists to hide the transfers and the host's work behind
 * the kernels, so that its rate approaches 1000 / (kernel ms of a pair).
 *
 * The CPU backend's batch is a loop of single calls (each one parallel):
 * it times the first `cpu_pairs` pairs only, scaled to the stream's
 * length, so that the row stays a few seconds long; the agreement column
 * compares those pairs with OpenCL's (stereo.h's cross-check). */
#include "bench.h"
#include "../tests/image_list.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream_case {
    const char *name;
    int width, height, ndisp, paths;
    int pairs, cpu_pairs;
} stream_case;

static const stream_case stream_cases[] = {
    {"sgm-stream-1080p", 1920, 1080, 128, 8, 32, 2},
    {"sgm-stream-vga", 640, 480, 64, 8, 8, 2},
};

#define STREAM_AGREEMENT_THRESHOLD 1.0
#define STREAM_AGREEMENT_TOLERANCE 1e-3f

typedef struct stream_job {
    const pv_image *lefts, *rights;
    pv_image *disparities;
    int count;
    int one_call; /* 1: pv_stereo_sgm_batch; 0: a loop of pv_stereo_sgm */
    pv_sgm_params params;
} stream_job;

/* The stream once; *timing: the batch call's, or the sum over the single
 * calls (the context keeps only the last call's). */
static pv_status run_stream(pv_context *ctx, stream_job *job, pv_timing *timing)
{
    pv_timing t;
    memset(timing, 0, sizeof *timing);
    pv_status status = PV_OK;
    if (job->one_call) {
        status = pv_stereo_sgm_batch(ctx, job->lefts, job->rights, job->count, &job->params,
                                     job->disparities, NULL);
        if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
            bench_add_timing(timing, &t);
        return status;
    }
    for (int i = 0; i < job->count && status == PV_OK; i++) {
        status = pv_stereo_sgm(ctx, &job->lefts[i], &job->rights[i], &job->params,
                               &job->disparities[i]);
        if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
            bench_add_timing(timing, &t);
    }
    return status;
}

static pv_status stream_kernel_run(pv_context *ctx, void *user, double *kernel_ms)
{
    pv_timing t;
    pv_status status = run_stream(ctx, user, &t);
    if (status == PV_OK)
        *kernel_ms = t.kernel_ms;
    return status;
}

/* Warm-up, then the runs (each sample the whole stream's time), the
 * kernel-only samples, and the medians; every sample times `scale`. */
static int time_stream(const bench_config *config, pv_context *ctx, stream_job *job,
                       double scale, pv_timing *median, bench_series *series)
{
    pv_timing t;
    pv_status status = PV_OK;
    for (int i = 0; i < bench_warmup_for(config, ctx) && status == PV_OK; i++)
        status = run_stream(ctx, job, &t);
    const int runs = bench_runs_for(config, ctx);
    series->count = 0;
    for (int i = 0; i < runs && status == PV_OK; i++) {
        status = run_stream(ctx, job, &t);
        series->total_ms[i] = t.total_ms;
        series->kernel_ms[i] = t.kernel_ms;
        series->upload_ms[i] = t.upload_ms;
        series->download_ms[i] = t.download_ms;
        series->count = i + 1;
    }
    if (status == PV_OK)
        status = bench_kernel_series(ctx, stream_kernel_run, job, series);
    if (status != PV_OK)
        return cli_fail_status(status, job->one_call ? "sgm stream (batch)" : "sgm stream (loop)");
    for (int i = 0; i < series->count; i++) {
        series->total_ms[i] *= scale;
        series->kernel_ms[i] *= scale;
        series->upload_ms[i] *= scale;
        series->download_ms[i] *= scale;
    }
    bench_series_medians(series, median);
    return 0;
}

/* The stream's pairs: copies of one synthetic pair, each in memory of its
 * own (so that the host reads every pair from memory, as a camera's
 * frames), and an output per pair. */
typedef struct stream_data {
    pv_image *lefts, *rights, *cpu_out, *cl_out;
    int count;
} stream_data;

static void free_data(stream_data *d)
{
    for (int i = 0; i < d->count; i++)
        image_list_free(&d->lefts[i], &d->rights[i], &d->cpu_out[i], &d->cl_out[i], NULL);
    free(d->lefts);
    memset(d, 0, sizeof *d);
}

static int copy_image(const pv_image *from, pv_image *to)
{
    if (pv_image_alloc(to, from->width, from->height, from->type) != PV_OK)
        return 1;
    for (int y = 0; y < from->height; y++)
        memcpy((uint8_t *)to->data + (size_t)y * to->stride,
               (const uint8_t *)from->data + (size_t)y * from->stride, (size_t)from->width);
    return 0;
}

static int make_data(const stream_case *c, stream_data *d)
{
    pv_image left = {0}, right = {0}, truth = {0};
    memset(d, 0, sizeof *d);
    int rc = bench_synthetic_stereo(c->width, c->height, c->ndisp, &left, &right, &truth);
    pv_image *all = rc == 0 ? calloc(4 * (size_t)c->pairs, sizeof *all) : NULL;
    if (rc == 0 && !all)
        rc = cli_fail("out of memory");
    if (all) {
        d->lefts = all;
        d->rights = all + c->pairs;
        d->cpu_out = all + 2 * c->pairs;
        d->cl_out = all + 3 * c->pairs;
    }
    for (int i = 0; i < c->pairs && rc == 0; i++) {
        d->count = i + 1;
        if (copy_image(&left, &d->lefts[i]) || copy_image(&right, &d->rights[i]) ||
            pv_image_alloc(&d->cpu_out[i], c->width, c->height, PV_PIXEL_F32) != PV_OK ||
            pv_image_alloc(&d->cl_out[i], c->width, c->height, PV_PIXEL_F32) != PV_OK)
            rc = cli_fail("cannot allocate the stream's %dx%d pairs", c->width, c->height);
    }
    image_list_free(&left, &right, &truth, NULL);
    return rc;
}

static void describe(const bench_contexts *contexts, const stream_case *c, int one_call,
                     const pv_sgm_params *p, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sgm");
    snprintf(r->name, sizeof r->name, "%s%s", c->name, one_call ? "" : "-loop");
    snprintf(r->variant, sizeof r->variant, "%s", one_call ? "stream" : "loop");
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = STREAM_AGREEMENT_THRESHOLD;
    r->size = (double)c->width * c->height * c->pairs;
    r->roofline_bytes = c->pairs * roofline_sgm_bytes(c->width, c->height);
    r->roofline_ops = c->pairs * ops_sgm(c->width, c->height, p->ndisp, p->paths);
    r->ops_integer = 1;
    r->stream_pairs = c->pairs;
    r->stream_cpu_pairs = c->cpu_pairs;
}

/* One row; *cl_rate: its OpenCL pairs per second (0 without OpenCL). */
static int stream_row(const bench_config *config, const bench_contexts *contexts,
                      const stream_case *c, stream_data *d, int one_call, double loop_rate,
                      double *cl_rate, bench_result *r)
{
    stream_job job = {d->lefts, d->rights, d->cpu_out, c->cpu_pairs, one_call, {0}};
    pv_sgm_params_default(&job.params);
    job.params.ndisp = c->ndisp;
    job.params.paths = c->paths;
    job.params.median = 1;
    describe(contexts, c, one_call, &job.params, r);
    pv_timing cpu_t, cl_t;
    int rc = time_stream(config, contexts->cpu, &job, (double)c->pairs / c->cpu_pairs, &cpu_t,
                         &r->cpu_samples);
    if (rc == 0)
        bench_fill_cpu(r, &cpu_t, NULL);
    if (rc == 0 && contexts->opencl) {
        job.disparities = d->cl_out;
        job.count = c->pairs;
        rc = time_stream(config, contexts->opencl, &job, 1.0, &cl_t, &r->cl_samples);
        if (rc == 0) {
            bench_fill_opencl(r, &cl_t, NULL);
            r->agreement = 1.0;
            for (int i = 0; i < c->cpu_pairs; i++)
                r->agreement = fmin(r->agreement,
                                    bench_disparity_agreement(&d->cl_out[i], &d->cpu_out[i],
                                                              STREAM_AGREEMENT_TOLERANCE));
        }
    }
    if (rc == 0) {
        *cl_rate = r->have_opencl && r->cl_total_ms > 0.0 ? 1e3 * c->pairs / r->cl_total_ms : 0.0;
        r->stream_loop_rate = one_call ? loop_rate : 0.0;
        int used = snprintf(r->params, sizeof r->params,
                            "%dx%d d%d %d paths x%d %s, pairs/s cpu %.1f cl %.1f", c->width,
                            c->height, c->ndisp, c->paths, c->pairs,
                            one_call ? "one batch" : "one call each", 1e3 * c->pairs / r->cpu_ms,
                            *cl_rate);
        if (one_call && loop_rate > 0.0 && *cl_rate > 0.0 && used > 0 &&
            (size_t)used < sizeof r->params)
            snprintf(r->params + used, sizeof r->params - (size_t)used, ", cl x%.2f the loop",
                     *cl_rate / loop_rate);
    }
    return rc;
}

int bench_sgm_stream_cases(const bench_config *config, const bench_contexts *contexts,
                           bench_rows *rows)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof stream_cases / sizeof stream_cases[0] && rc == 0; i++) {
        const stream_case *c = &stream_cases[i];
        if (!bench_wants(config, "sgm", c->name, 0))
            continue;
        stream_data d;
        bench_result *row = malloc(sizeof *row);
        rc = row ? make_data(c, &d) : cli_fail("out of memory");
        double loop_rate = 0.0, rate = 0.0;
        for (int one_call = 0; one_call <= 1 && rc == 0; one_call++) {
            rc = stream_row(config, contexts, c, &d, one_call, loop_rate, &rate, row);
            loop_rate = rate; /* the loop row comes first */
            if (rc == 0)
                rc = bench_add_row(rows, row);
        }
        if (row)
            free_data(&d);
        free(row);
    }
    return rc;
}
