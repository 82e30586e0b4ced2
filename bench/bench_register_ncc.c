/* parvis-bench's normxcorr2 rows: 2D normxcorr2 at 512^2 with a 64^2
 * template and with equal sizes (op "ncc", one row per FFT engine), masked
 * normxcorr2 (op "ncc-masked": direct sums, no FFT, one row) with a
 * quarter of the template masked out, and batches of small images against
 * one template (op "ncc-batch", one row per engine).  Kernel time and end
 * to end (the front end's copies and the transfers included) in the usual
 * columns.
 *
 * Inputs are synthetic with a known answer: the template is cut from the
 * image (each image of a batch) at a known offset.  Quality is the share
 * of exact answers; agreement the share of map points within the
 * documented 1e-4 of the CPU's. */
#include "bench_register.h"
#include "../tests/image_list.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ncc_case {
    const char *name;
    int image, templ;   /* square sizes */
    int quick;
} ncc_case;

static const ncc_case ncc_cases[] = {
    {"512^2 t64", 512, 64, 1},
    {"512^2 equal", 512, 512, 0},
};

/* The documented cross-check (include/parvis/register.h): NCC maps within
 * 1e-4 everywhere. */
#define NCC_AGREEMENT_THRESHOLD 1.0

/* As for pc2d, the CPU side is timed once per case (cpu_map keeps its
 * map for the agreement of every engine's row). */
typedef struct ncc_inputs {
    pv_image image, templ, map;
    int x, y;            /* the template's true offset */
    pv_ncc_result result;
    int cpu_timed;
    pv_timing cpu;
    bench_series cpu_samples;
    pv_ncc_result cpu_result;
    pv_image cpu_map;
} ncc_inputs;

/* Image and template cut from one noise canvas: the template's top-left
 * corner lies at (x, y) in image coordinates (partly outside for equal
 * sizes, where the general normalization matters). */
static int make_ncc_inputs(const ncc_case *c, ncc_inputs *in)
{
    const int margin = 64, side = c->image + 2 * margin;
    in->x = c->templ == c->image ? 17 : 200;
    in->y = c->templ == c->image ? -9 : 150;
    float *canvas = malloc((size_t)side * side * sizeof *canvas);
    if (!canvas || pv_image_alloc(&in->image, c->image, c->image, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&in->templ, c->templ, c->templ, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&in->map, c->image + c->templ - 1, c->image + c->templ - 1,
                       PV_PIXEL_F32) != PV_OK) {
        free(canvas);
        return cli_fail("cannot allocate the NCC inputs");
    }
    uint32_t state = 77u;
    for (size_t i = 0; i < (size_t)side * side; i++)
        canvas[i] = bench_register_random01(&state);
    for (int y = 0; y < c->image; y++)
        memcpy((float *)in->image.data + (size_t)y * c->image,
               canvas + (size_t)(y + margin) * side + margin, (size_t)c->image * sizeof(float));
    for (int y = 0; y < c->templ; y++)
        memcpy((float *)in->templ.data + (size_t)y * c->templ,
               canvas + (size_t)(y + margin + in->y) * side + margin + in->x,
               (size_t)c->templ * sizeof(float));
    free(canvas);
    return 0;
}

static pv_status run_ncc(pv_context *ctx, void *user)
{
    ncc_inputs *in = user;
    /* Offsets with under 1/4 of the template overlapping are unreliable. */
    int min_overlap = in->templ.width * in->templ.height / 4;
    return pv_normxcorr2(ctx, &in->templ, &in->image, min_overlap, &in->map, &in->result);
}

static double map_agreement(const pv_image *a, const pv_image *b)
{
    size_t same = 0, total = (size_t)a->width * a->height;
    const float *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < total; i++)
        same += fabsf(pa[i] - pb[i]) <= 1e-4f;
    return (double)same / (double)total;
}

static int bench_ncc_case(const bench_config *config, const bench_contexts *contexts,
                          const ncc_case *c, const char *engine, ncc_inputs *in, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "ncc");
    snprintf(r->name, sizeof r->name, "%s%s%s", c->name, engine ? " " : "", engine ? engine : "");
    snprintf(r->params, sizeof r->params, "%dx%d in %dx%d", c->templ, c->templ, c->image,
             c->image);
    snprintf(r->variant, sizeof r->variant, "%s %s", c->templ == c->image ? "equal" : "template",
             engine ? engine : "fftw");
    snprintf(r->fft_engine, sizeof r->fft_engine, "%s", engine ? engine : "fftw");
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "exact";
    r->threshold = NCC_AGREEMENT_THRESHOLD;
    r->size = (double)c->image * c->image;
    r->roofline_bytes = roofline_ncc_bytes(c->image, c->templ);
    r->roofline_ops = ops_ncc(c->image, c->templ);
    pv_timing cl;
    pv_status status = PV_OK;
    if (!in->cpu_timed) {
        if (!in->cpu_map.data &&
            pv_image_alloc(&in->cpu_map, in->map.width, in->map.height, PV_PIXEL_F32) != PV_OK)
            return cli_fail("cannot allocate the NCC map");
        status = bench_time_series(config, contexts->cpu, run_ncc, in, &in->cpu, &in->cpu_samples);
        memcpy(in->cpu_map.data, in->map.data,
               (size_t)in->map.width * in->map.height * sizeof(float));
        in->cpu_result = in->result;
        in->cpu_timed = status == PV_OK;
    }
    bench_fill_cpu(r, &in->cpu, &in->cpu_samples);
    r->cpu_quality = in->cpu_result.x == in->x && in->cpu_result.y == in->y;
    if (status == PV_OK && contexts->opencl) {
        status = bench_time_series(config, contexts->opencl, run_ncc, in, &cl, &r->cl_samples);
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = in->result.x == in->x && in->result.y == in->y;
        r->agreement = map_agreement(&in->map, &in->cpu_map);
    }
    return status == PV_OK ? 0 : cli_fail_status(status, "normxcorr2");
}

static int ncc_row(const bench_config *config, const bench_contexts *contexts, const void *c,
                   const char *engine, void *in, bench_result *r)
{
    return bench_ncc_case(config, contexts, c, engine, in, r);
}

static int ncc_single_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof ncc_cases / sizeof ncc_cases[0]; i++) {
        const ncc_case *c = &ncc_cases[i];
        if (!bench_wants(config, "ncc", c->name, c->quick))
            continue;
        ncc_inputs in;
        memset(&in, 0, sizeof in);
        int rc = make_ncc_inputs(c, &in);
        if (rc == 0)
            rc = bench_register_engine_rows(config, contexts, ncc_row, c, &in, results, max, count);
        image_list_free(&in.image, &in.templ, &in.map, &in.cpu_map, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

/* ============================================================ masked NCC
 * The single case's inputs with the template's central square (a quarter
 * of its pixels) masked out and every image pixel valid, as OpenCV's
 * matchTemplate with a mask takes them (bench/peers/peers.py). */

static const ncc_case ncc_masked_cases[] = {
    {"256^2 t32", 256, 32, 1},
    {"512^2 t64", 512, 64, 0},
};

#define NCC_MASKED_VALID_SHARE 0.75

typedef struct ncc_masked_inputs {
    ncc_inputs base;
    pv_image mask;
} ncc_masked_inputs;

static int make_masked_inputs(const ncc_case *c, ncc_masked_inputs *in)
{
    memset(in, 0, sizeof *in);
    if (make_ncc_inputs(c, &in->base))
        return 1;
    if (pv_image_alloc(&in->mask, c->templ, c->templ, PV_PIXEL_U8) != PV_OK)
        return cli_fail("cannot allocate the NCC mask");
    const int lo = c->templ / 4, hi = c->templ - c->templ / 4;
    for (int y = 0; y < c->templ; y++)
        for (int x = 0; x < c->templ; x++)
            ((unsigned char *)in->mask.data)[(size_t)y * c->templ + x] =
                !(x >= lo && x < hi && y >= lo && y < hi);
    return 0;
}

static pv_status run_ncc_masked(pv_context *ctx, void *user)
{
    ncc_masked_inputs *in = user;
    int min_overlap = in->base.templ.width * in->base.templ.height / 4;
    return pv_normxcorr2_masked(ctx, &in->base.templ, &in->base.image, &in->mask, NULL,
                                min_overlap, &in->base.map, &in->base.result);
}

static int ncc_masked_row(const bench_config *config, const bench_contexts *contexts,
                          const ncc_case *c, ncc_masked_inputs *in, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "ncc-masked");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    snprintf(r->params, sizeof r->params, "%dx%d (3/4 valid) in %dx%d", c->templ, c->templ,
             c->image, c->image);
    snprintf(r->variant, sizeof r->variant, "direct sums");
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "exact";
    r->threshold = NCC_AGREEMENT_THRESHOLD;
    r->size = (double)c->image * c->image;
    r->roofline_bytes = roofline_ncc_masked_bytes(c->image, c->templ);
    r->roofline_ops = ops_ncc_masked(c->image, c->templ, NCC_MASKED_VALID_SHARE);
    pv_image *map = &in->base.map, *cpu_map = &in->base.cpu_map;
    if (pv_image_alloc(cpu_map, map->width, map->height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate the NCC map");
    pv_timing cpu, cl;
    pv_status status = bench_time_series(config, contexts->cpu, run_ncc_masked, in, &cpu,
                                         &in->base.cpu_samples);
    memcpy(cpu_map->data, map->data, (size_t)map->width * map->height * sizeof(float));
    bench_fill_cpu(r, &cpu, &in->base.cpu_samples);
    r->cpu_quality = in->base.result.x == in->base.x && in->base.result.y == in->base.y;
    if (status == PV_OK && contexts->opencl) {
        status = bench_time_series(config, contexts->opencl, run_ncc_masked, in, &cl,
                                   &r->cl_samples);
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = in->base.result.x == in->base.x && in->base.result.y == in->base.y;
        r->agreement = map_agreement(map, cpu_map);
    }
    return status == PV_OK ? 0 : cli_fail_status(status, "normxcorr2_masked");
}

static int ncc_masked_run(const bench_config *config, const bench_contexts *contexts,
                            bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof ncc_masked_cases / sizeof ncc_masked_cases[0]; i++) {
        const ncc_case *c = &ncc_masked_cases[i];
        if (!bench_wants(config, "ncc-masked", c->name, c->quick))
            continue;
        if (*count >= max)
            return cli_fail("too many bench cases");
        ncc_masked_inputs in;
        int rc = make_masked_inputs(c, &in);
        if (rc == 0)
            rc = ncc_masked_row(config, contexts, c, &in, &results[*count]);
        if (rc == 0)
            bench_print_row(&results[(*count)++]);
        image_list_free(&in.base.image, &in.base.templ, &in.base.map, &in.base.cpu_map, &in.mask,
                        NULL);
        if (rc)
            return rc;
    }
    return 0;
}

/* ============================================================ NCC batch
 * count images, windows of one noise canvas at different places, against
 * one template cut from the canvas: in image k the template lies at
 * (NCC_BATCH_AT - dx_k, NCC_BATCH_AT - dy_k). */

typedef struct ncc_batch_case {
    const char *name;
    int count, image, templ;
    int quick;
} ncc_batch_case;

static const ncc_batch_case ncc_batch_cases[] = {
    {"64 x 128^2 t32", 64, 128, 32, 1},
    {"256 x 256^2 t32", 256, 256, 32, 0},
};

#define NCC_BATCH_MARGIN 32
#define NCC_BATCH_AT 48

typedef struct ncc_batch_inputs {
    int count;
    pv_image templ;
    pv_image *images, *maps, *cpu_maps;
    pv_ncc_result *results;
    int *x, *y;          /* each image's true offset */
    int cpu_timed;
    pv_timing cpu;
    bench_series cpu_samples;
    double cpu_quality;
} ncc_batch_inputs;

static void free_batch_inputs(ncc_batch_inputs *in)
{
    for (int i = 0; in->images && i < in->count; i++)
        image_list_free(&in->images[i], &in->maps[i], &in->cpu_maps[i], NULL);
    pv_image_free(&in->templ);
    free(in->images);
    free(in->maps);
    free(in->cpu_maps);
    free(in->results);
    free(in->x);
    free(in->y);
}

static void copy_window(const float *canvas, int side, int x0, int y0, pv_image *out)
{
    for (int y = 0; y < out->height; y++)
        memcpy((float *)out->data + (size_t)y * out->width, canvas + (size_t)(y0 + y) * side + x0,
               (size_t)out->width * sizeof(float));
}

static int make_batch_inputs(const ncc_batch_case *c, ncc_batch_inputs *in)
{
    memset(in, 0, sizeof *in);
    const int side = c->image + 2 * NCC_BATCH_MARGIN, map = c->image + c->templ - 1;
    const size_t n = (size_t)c->count;
    float *canvas = malloc((size_t)side * side * sizeof *canvas);
    in->images = calloc(n, sizeof *in->images);
    in->maps = calloc(n, sizeof *in->maps);
    in->cpu_maps = calloc(n, sizeof *in->cpu_maps);
    in->results = calloc(n, sizeof *in->results);
    in->x = calloc(n, sizeof *in->x);
    in->y = calloc(n, sizeof *in->y);
    int ok = canvas && in->images && in->maps && in->cpu_maps && in->results && in->x && in->y &&
             pv_image_alloc(&in->templ, c->templ, c->templ, PV_PIXEL_F32) == PV_OK;
    if (ok)
        in->count = c->count;
    for (int i = 0; ok && i < c->count; i++)
        ok = pv_image_alloc(&in->images[i], c->image, c->image, PV_PIXEL_F32) == PV_OK &&
             pv_image_alloc(&in->maps[i], map, map, PV_PIXEL_F32) == PV_OK &&
             pv_image_alloc(&in->cpu_maps[i], map, map, PV_PIXEL_F32) == PV_OK;
    if (!ok) {
        free(canvas);
        return cli_fail("cannot allocate the NCC batch");
    }
    uint32_t state = 91u;
    for (size_t i = 0; i < (size_t)side * side; i++)
        canvas[i] = bench_register_random01(&state);
    copy_window(canvas, side, NCC_BATCH_MARGIN + NCC_BATCH_AT, NCC_BATCH_MARGIN + NCC_BATCH_AT,
                &in->templ);
    for (int i = 0; i < c->count; i++) {
        const int dx = (i * 7) % (2 * NCC_BATCH_MARGIN + 1) - NCC_BATCH_MARGIN;
        const int dy = (i * 5) % (2 * NCC_BATCH_MARGIN + 1) - NCC_BATCH_MARGIN;
        copy_window(canvas, side, NCC_BATCH_MARGIN + dx, NCC_BATCH_MARGIN + dy, &in->images[i]);
        in->x[i] = NCC_BATCH_AT - dx;
        in->y[i] = NCC_BATCH_AT - dy;
    }
    free(canvas);
    return 0;
}

static pv_status run_ncc_batch(pv_context *ctx, void *user)
{
    ncc_batch_inputs *in = user;
    int min_overlap = in->templ.width * in->templ.height / 4;
    return pv_normxcorr2_batch(ctx, &in->templ, in->images, in->count, min_overlap, in->maps,
                               in->results);
}

static double batch_quality(const ncc_batch_inputs *in)
{
    int exact = 0;
    for (int i = 0; i < in->count; i++)
        exact += in->results[i].x == in->x[i] && in->results[i].y == in->y[i];
    return (double)exact / in->count;
}

static double batch_agreement(const ncc_batch_inputs *in)
{
    double sum = 0.0;
    for (int i = 0; i < in->count; i++)
        sum += map_agreement(&in->maps[i], &in->cpu_maps[i]);
    return sum / in->count;
}

static int ncc_batch_row(const bench_config *config, const bench_contexts *contexts,
                         const void *vc, const char *engine, void *vin, bench_result *r)
{
    const ncc_batch_case *c = vc;
    ncc_batch_inputs *in = vin;
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "ncc-batch");
    snprintf(r->name, sizeof r->name, "%s%s%s", c->name, engine ? " " : "", engine ? engine : "");
    snprintf(r->params, sizeof r->params, "%d images %dx%d, template %dx%d", c->count, c->image,
             c->image, c->templ, c->templ);
    snprintf(r->variant, sizeof r->variant, "batch %s", engine ? engine : "fftw");
    snprintf(r->fft_engine, sizeof r->fft_engine, "%s", engine ? engine : "fftw");
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "exact";
    r->threshold = NCC_AGREEMENT_THRESHOLD;
    r->size = (double)c->count * c->image * c->image;
    r->roofline_bytes = c->count * roofline_ncc_bytes(c->image, c->templ);
    r->roofline_ops = c->count * ops_ncc(c->image, c->templ);
    pv_timing cl;
    pv_status status = PV_OK;
    if (!in->cpu_timed) {
        status = bench_time_series(config, contexts->cpu, run_ncc_batch, in, &in->cpu,
                                   &in->cpu_samples);
        for (int i = 0; i < in->count; i++)
            memcpy(in->cpu_maps[i].data, in->maps[i].data,
                   (size_t)in->maps[i].width * in->maps[i].height * sizeof(float));
        in->cpu_quality = batch_quality(in);
        in->cpu_timed = status == PV_OK;
    }
    bench_fill_cpu(r, &in->cpu, &in->cpu_samples);
    r->cpu_quality = in->cpu_quality;
    if (status == PV_OK && contexts->opencl) {
        status = bench_time_series(config, contexts->opencl, run_ncc_batch, in, &cl,
                                   &r->cl_samples);
        bench_fill_opencl(r, &cl, NULL);
        r->cl_quality = batch_quality(in);
        r->agreement = batch_agreement(in);
    }
    return status == PV_OK ? 0 : cli_fail_status(status, "normxcorr2_batch");
}

static int ncc_batch_run(const bench_config *config, const bench_contexts *contexts,
                           bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof ncc_batch_cases / sizeof ncc_batch_cases[0]; i++) {
        const ncc_batch_case *c = &ncc_batch_cases[i];
        if (!bench_wants(config, "ncc-batch", c->name, c->quick))
            continue;
        ncc_batch_inputs in;
        int rc = make_batch_inputs(c, &in);
        if (rc == 0)
            rc = bench_register_engine_rows(config, contexts, ncc_batch_row, c, &in, results,
                                            max, count);
        free_batch_inputs(&in);
        if (rc)
            return rc;
    }
    return 0;
}

int bench_ncc_cases(const bench_config *config, const bench_contexts *contexts,
                    bench_result *results, int max, int *count)
{
    int rc = ncc_single_cases(config, contexts, results, max, count);
    if (rc == 0)
        rc = ncc_masked_run(config, contexts, results, max, count);
    return rc ? rc : ncc_batch_run(config, contexts, results, max, count);
}
