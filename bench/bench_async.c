/* Streams of independent calls through the asynchronous API
 * (include/parvis/async.h): `items` SAD or SGM pairs, or moving images and
 * volumes phase-correlated against one reference, timed as a loop of
 * synchronous calls on one context (the "-loop" row) and as the same calls
 * queued round-robin on two contexts of the same device (the case's own
 * row), so that one call's upload, kernels and download overlap the
 * other's.  sad-batch-320x240's own row is instead one pv_stereo_sad_batch
 * call over many small pairs (every pair queued, one wait).  Both rows give items per second; the queued row also its rate
 * over the loop's (the target: 1.5x).
 *
 * Phase correlation uses a plan on each context (the reference's spectrum
 * kept on the device, pv_phasecorr_plan), one mover a call.
 *
 * Kernel times are summed per call on each context's worker (a queued
 * call's pv_context_last_timing is read right after it, on the thread that
 * ran it), so the kernels column is the stream's device time whichever
 * way the calls ran.  The CPU backend runs the first `cpu_items` items
 * only, on one context, scaled to the stream's length (its calls use every
 * core already); the agreement column compares those items' results with
 * OpenCL's. */
#include "bench.h"
#include "../tests/image_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum stream_op { OP_SAD, OP_SGM, OP_PC, OP_PC3D } stream_op;

typedef struct async_case {
    const char *name;
    stream_op op;
    int width, height, depth; /* depth: volumes only */
    int ndisp;
    int items, cpu_items;
    int one_batch; /* the case's own row: one pv_stereo_sad_batch call, not two contexts */
} async_case;

static const async_case async_cases[] = {
    {"sad-async-1080p", OP_SAD, 1920, 1080, 1, 128, 32, 2, 0},
    {"sgm-async-1080p", OP_SGM, 1920, 1080, 1, 128, 32, 2, 0},
    {"pc-async-1024", OP_PC, 1024, 1024, 1, 0, 64, 4, 0},
    {"pc3d-async-128", OP_PC3D, 128, 128, 128, 0, 32, 2, 0},
    {"sad-batch-320x240", OP_SAD, 320, 240, 1, 32, 256, 16, 1},
};

#define STREAMS 2 /* contexts the queued row spreads its calls over */
#define AGREEMENT_TOLERANCE 1e-3f

/* The items: inputs in memory of their own (as a camera's frames), one
 * output each; for phase correlation, inputs[0] of every item is the one
 * reference. */
typedef struct stream_data {
    pv_image *lefts, *rights, *cpu_out, *cl_out;
    pv_volume reference, *moving;
    pv_shift *cpu_shift, *cl_shift;
    int count;   /* images allocated */
    int volumes; /* moving volumes allocated */
} stream_data;

/* One call of the stream and the place its timing is added to. */
typedef struct stream_call {
    const async_case *c;
    const stream_data *d;
    int index, opencl;
    pv_timing *sum;
    pv_phasecorr_plan *plan; /* phase correlation: the context's plan */
} stream_call;

static pv_status run_one(pv_context *ctx, const stream_call *call)
{
    const stream_data *d = call->d;
    const int i = call->index;
    pv_image *out = call->opencl ? &d->cl_out[i] : &d->cpu_out[i];
    pv_shift *shift = call->opencl ? &d->cl_shift[i] : &d->cpu_shift[i];
    switch (call->c->op) {
    case OP_SAD: {
        pv_sad_params p;
        pv_sad_params_default(&p);
        p.ndisp = call->c->ndisp;
        return pv_stereo_sad(ctx, &d->lefts[i], &d->rights[i], &p, out);
    }
    case OP_SGM: {
        pv_sgm_params p;
        pv_sgm_params_default(&p);
        p.ndisp = call->c->ndisp;
        return pv_stereo_sgm(ctx, &d->lefts[i], &d->rights[i], &p, out);
    }
    case OP_PC:
        return pv_phasecorr_plan_correlate(call->plan, &d->rights[i], 1, shift);
    case OP_PC3D:
        return pv_phasecorr_plan_correlate3d(call->plan, &d->moving[i], 1, shift);
    }
    return PV_ERR_INVALID;
}

/* The call and its timing added to the sum of its context (run on the
 * context's worker when queued). */
static pv_status timed_call(pv_context *ctx, void *user)
{
    stream_call *call = user;
    pv_timing t;
    pv_status status = run_one(ctx, call);
    if (status == PV_OK && pv_context_last_timing(ctx, &t) == PV_OK)
        bench_add_timing(call->sum, &t);
    return status;
}

typedef struct stream_job {
    const async_case *c;
    const stream_data *d;
    int count, opencl, queued;
    pv_context *contexts[STREAMS];
    pv_phasecorr_plan *plans[STREAMS]; /* phase correlation: one a context */
    int context_count;
    stream_call *calls; /* count of them */
    pv_timing sums[STREAMS];
} stream_job;

static pv_status run_batch(stream_job *job, pv_timing *timing)
{
    pv_sad_params p;
    pv_sad_params_default(&p);
    p.ndisp = job->c->ndisp;
    pv_context *ctx = job->contexts[0];
    const stream_data *d = job->d;
    pv_status status = pv_stereo_sad_batch(ctx, d->lefts, d->rights, job->count, &p,
                                           job->opencl ? d->cl_out : d->cpu_out);
    if (status == PV_OK)
        status = pv_context_last_timing(ctx, timing);
    return status;
}

/* The stream once: *timing's total the wall time, the rest summed over
 * the calls. */
static pv_status run_stream(stream_job *job, pv_timing *timing)
{
    if (job->queued && job->c->one_batch)
        return run_batch(job, timing);
    memset(job->sums, 0, sizeof job->sums);
    pv_status status = PV_OK;
    const double start = cli_now_ms();
    for (int i = 0; i < job->count && status == PV_OK; i++) {
        const int k = job->queued ? i % job->context_count : 0;
        job->calls[i] = (stream_call){job->c, job->d, i, job->opencl, &job->sums[k],
                                      job->plans[k]};
        status = job->queued ? pv_submit(job->contexts[k], timed_call, &job->calls[i], NULL)
                             : timed_call(job->contexts[0], &job->calls[i]);
    }
    for (int k = 0; k < job->context_count; k++) {
        pv_status waited = pv_wait(job->contexts[k]);
        status = status == PV_OK ? waited : status;
    }
    memset(timing, 0, sizeof *timing);
    for (int k = 0; k < job->context_count; k++)
        bench_add_timing(timing, &job->sums[k]);
    timing->total_ms = cli_now_ms() - start;
    return status;
}

/* Phase correlation against one reference: a plan holding its spectrum
 * on each context, as a stream against one reference would use. */
static pv_status make_plans(stream_job *job)
{
    pv_status status = PV_OK;
    for (int k = 0; k < job->context_count && status == PV_OK; k++) {
        if (job->c->op == OP_PC)
            status = pv_phasecorr_plan_create(job->contexts[k], &job->d->lefts[0], NULL, 1,
                                              &job->plans[k]);
        else if (job->c->op == OP_PC3D)
            status = pv_phasecorr_plan_create3d(job->contexts[k], &job->d->reference, NULL, 1,
                                                &job->plans[k]);
    }
    return status;
}

static void free_plans(stream_job *job)
{
    for (int k = 0; k < STREAMS; k++) {
        pv_phasecorr_plan_destroy(job->plans[k]);
        job->plans[k] = NULL;
    }
}

static int time_stream(const bench_config *config, stream_job *job, double scale,
                       pv_timing *median, bench_series *series)
{
    pv_timing t;
    pv_status status = make_plans(job);
    pv_context *ctx = job->contexts[0];
    for (int i = 0; i < bench_warmup_for(config, ctx) && status == PV_OK; i++)
        status = run_stream(job, &t);
    const int runs = bench_runs_for(config, ctx);
    series->count = 0;
    for (int i = 0; i < runs && status == PV_OK; i++) {
        status = run_stream(job, &t);
        series->total_ms[i] = t.total_ms * scale;
        series->kernel_ms[i] = t.kernel_ms * scale;
        series->upload_ms[i] = t.upload_ms * scale;
        series->download_ms[i] = t.download_ms * scale;
        series->count = i + 1;
    }
    free_plans(job);
    if (status != PV_OK)
        return cli_fail_status(status, job->queued ? "async stream (queued)" : "async stream (loop)");
    bench_series_medians(series, median);
    return 0;
}

/* ------------------------------------------------------------------ data */

static void free_data(stream_data *d)
{
    for (int i = 0; i < d->count; i++)
        image_list_free(&d->lefts[i], &d->rights[i], &d->cpu_out[i], &d->cl_out[i], NULL);
    for (int i = 0; i < d->volumes; i++)
        pv_volume_free(&d->moving[i]);
    pv_volume_free(&d->reference);
    free(d->lefts);
    free(d->moving);
    free(d->cpu_shift);
    memset(d, 0, sizeof *d);
}

static int copy_image(const pv_image *from, pv_image *to)
{
    if (pv_image_alloc(to, from->width, from->height, from->type) != PV_OK)
        return 1;
    const size_t pixel = from->type == PV_PIXEL_F32 ? sizeof(float) : 1u;
    for (int y = 0; y < from->height; y++)
        memcpy((uint8_t *)to->data + (size_t)y * (size_t)to->stride * pixel,
               (const uint8_t *)from->data + (size_t)y * (size_t)from->stride * pixel,
               (size_t)from->width * pixel);
    return 0;
}

/* A smooth random volume shifted by (i, -i, i/2) voxels, periodically. */
static void shifted_volume(const pv_volume *from, pv_volume *to, int i)
{
    for (int z = 0; z < from->nz; z++)
        for (int y = 0; y < from->ny; y++)
            for (int x = 0; x < from->nx; x++) {
                const int sx = ((x - i) % from->nx + from->nx) % from->nx;
                const int sy = ((y + i) % from->ny + from->ny) % from->ny;
                const int sz = ((z - i / 2) % from->nz + from->nz) % from->nz;
                to->data[z * to->stride_z + y * to->stride_y + x] =
                    from->data[sz * from->stride_z + sy * from->stride_y + sx];
            }
}

static int make_volumes(const async_case *c, stream_data *d)
{
    d->moving = calloc((size_t)c->items, sizeof *d->moving);
    if (!d->moving || pv_volume_alloc(&d->reference, c->width, c->height, c->depth) != PV_OK)
        return cli_fail("cannot allocate the stream's %d^3 volumes", c->width);
    uint32_t state = 17;
    for (size_t v = 0; v < (size_t)c->width * c->height * c->depth; v++)
        d->reference.data[v] = (float)(state = state * 1664525u + 1013904223u) / 4294967296.0f;
    for (int i = 0; i < c->items; i++) {
        if (pv_volume_alloc(&d->moving[i], c->width, c->height, c->depth) != PV_OK)
            return cli_fail("cannot allocate the stream's %d^3 volumes", c->width);
        d->volumes = i + 1;
        shifted_volume(&d->reference, &d->moving[i], i % 7);
    }
    return 0;
}

static int make_data(const async_case *c, stream_data *d)
{
    pv_image left = {0}, right = {0}, truth = {0};
    memset(d, 0, sizeof *d);
    int rc = bench_synthetic_stereo(c->width, c->height, c->ndisp > 0 ? c->ndisp : 16, &left,
                                    &right, &truth);
    pv_image *all = rc == 0 ? calloc(4 * (size_t)c->items, sizeof *all) : NULL;
    d->cpu_shift = rc == 0 ? calloc(2 * (size_t)c->items, sizeof *d->cpu_shift) : NULL;
    if (rc == 0 && (!all || !d->cpu_shift))
        rc = cli_fail("out of memory");
    if (all) {
        d->lefts = all;
        d->rights = all + c->items;
        d->cpu_out = all + 2 * c->items;
        d->cl_out = all + 3 * c->items;
        d->cl_shift = d->cpu_shift + c->items;
    }
    const int images = c->op == OP_PC3D ? 0 : c->items;
    for (int i = 0; i < images && rc == 0; i++) {
        d->count = i + 1;
        if (copy_image(&left, &d->lefts[i]) || copy_image(&right, &d->rights[i]) ||
            pv_image_alloc(&d->cpu_out[i], c->width, c->height, PV_PIXEL_F32) != PV_OK ||
            pv_image_alloc(&d->cl_out[i], c->width, c->height, PV_PIXEL_F32) != PV_OK)
            rc = cli_fail("cannot allocate the stream's %dx%d images", c->width, c->height);
    }
    d->count = images;
    image_list_free(&left, &right, &truth, NULL);
    if (rc == 0 && c->op == OP_PC3D)
        rc = make_volumes(c, d);
    return rc;
}

/* ------------------------------------------------------------------ rows */

static const char *op_name(stream_op op)
{
    return op == OP_SAD ? "sad" : op == OP_SGM ? "sgm" : op == OP_PC ? "phasecorr" : "phasecorr3d";
}

/* How far the OpenCL results of the first cpu_items items agree with the
 * CPU's: the share of agreeing pixels, or for shifts 1 when every shift is
 * within 0.01 voxel. */
static double agreement(const async_case *c, const stream_data *d)
{
    double worst = 1.0;
    for (int i = 0; i < c->cpu_items; i++) {
        if (c->op == OP_SAD || c->op == OP_SGM) {
            worst = fmin(worst, bench_disparity_agreement(&d->cl_out[i], &d->cpu_out[i],
                                                          AGREEMENT_TOLERANCE));
        } else {
            const pv_shift *a = &d->cl_shift[i], *b = &d->cpu_shift[i];
            const double off = fmax(fabs(a->dx - b->dx), fmax(fabs(a->dy - b->dy),
                                                              fabs(a->dz - b->dz)));
            worst = fmin(worst, off <= 0.01 ? 1.0 : 0.0);
        }
    }
    return worst;
}

static void describe(const bench_contexts *contexts, const async_case *c, int queued,
                     bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "%s", op_name(c->op));
    snprintf(r->name, sizeof r->name, "%s%s", c->name, queued ? "" : "-loop");
    snprintf(r->variant, sizeof r->variant, "%s",
             !queued ? "loop" : c->one_batch ? "one batch" : "async x2");
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = 1.0;
    r->size = (double)c->width * c->height * c->depth * c->items;
    r->stream_pairs = c->items;
    r->stream_cpu_pairs = c->cpu_items;
}

static int async_row(const bench_config *config, const bench_contexts *contexts,
                     pv_context *sibling, const async_case *c, stream_data *d, int queued,
                     double loop_rate, double *cl_rate, bench_result *r)
{
    stream_call *calls = malloc((size_t)c->items * sizeof *calls);
    if (!calls)
        return cli_fail("out of memory");
    stream_job job;
    memset(&job, 0, sizeof job);
    job = (stream_job){.c = c, .d = d, .count = c->cpu_items, .queued = queued,
                       .contexts = {contexts->cpu, NULL}, .context_count = 1, .calls = calls};
    describe(contexts, c, queued, r);
    pv_timing cpu_t, cl_t;
    int rc = time_stream(config, &job, (double)c->items / c->cpu_items, &cpu_t, &r->cpu_samples);
    if (rc == 0)
        bench_fill_cpu(r, &cpu_t, NULL);
    if (rc == 0 && contexts->opencl) {
        job = (stream_job){.c = c, .d = d, .count = c->items, .opencl = 1, .queued = queued,
                           .contexts = {contexts->opencl, sibling},
                           .context_count = queued && sibling && !c->one_batch ? STREAMS : 1,
                           .calls = calls};
        rc = time_stream(config, &job, 1.0, &cl_t, &r->cl_samples);
        if (rc == 0) {
            bench_fill_opencl(r, &cl_t, NULL);
            r->agreement = agreement(c, d);
        }
    }
    free(calls);
    if (rc == 0) {
        *cl_rate = r->have_opencl && r->cl_total_ms > 0.0 ? 1e3 * c->items / r->cl_total_ms : 0.0;
        r->stream_loop_rate = queued ? loop_rate : 0.0;
        int used = snprintf(r->params, sizeof r->params, "%dx%dx%d x%d %s, items/s cpu %.1f cl %.1f",
                            c->width, c->height, c->depth, c->items,
                            !queued ? "one call each" : c->one_batch ? "one batch call"
                                                                    : "queued on 2 contexts",
                            1e3 * c->items / r->cpu_ms, *cl_rate);
        if (queued && loop_rate > 0.0 && *cl_rate > 0.0 && used > 0 &&
            (size_t)used < sizeof r->params)
            snprintf(r->params + used, sizeof r->params - (size_t)used, ", cl x%.2f the loop",
                     *cl_rate / loop_rate);
    }
    return rc;
}

static int one_case(const bench_config *config, const bench_contexts *contexts,
                    const async_case *c, bench_rows *rows, bench_result *row)
{
    stream_data d;
    int rc = make_data(c, &d);
    pv_context *sibling = rc == 0 && contexts->opencl ? bench_open_opencl(config) : NULL;
    if (rc == 0 && contexts->opencl && !sibling)
        rc = 1;
    double loop_rate = 0.0, rate = 0.0;
    for (int queued = 0; queued <= 1 && rc == 0; queued++) {
        rc = async_row(config, contexts, sibling, c, &d, queued, loop_rate, &rate, row);
        loop_rate = rate; /* the loop row comes first */
        if (rc == 0)
            rc = bench_add_row(rows, row);
    }
    pv_context_destroy(sibling);
    free_data(&d);
    return rc;
}

int bench_async_cases(const bench_config *config, const bench_contexts *contexts,
                      bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    int rc = 0;
    for (size_t i = 0; i < sizeof async_cases / sizeof async_cases[0] && rc == 0; i++) {
        const async_case *c = &async_cases[i];
        if (!bench_wants(config, op_name(c->op), c->name, 0))
            continue;
        bench_result *row = malloc(sizeof *row);
        rc = row ? one_case(config, contexts, c, &rows, row) : cli_fail("out of memory");
        free(row);
    }
    return rc;
}
