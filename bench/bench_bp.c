/* Belief-propagation stereo cases: the bundled Middlebury sets with their
 * ranges (tsukuba/16, venus/21, cones-quarter/64) and cones upsampled 2x to
 * 900x750 with 256 disparities (the paper's half-size Cones, the range of
 * cudaBeliefProp's large case).  Parameters as cudaBeliefProp's (levels 5,
 * 7 iterations, lambda 0.1, data_max 15, disc_max ndisp / 7.5, no
 * smoothing), float messages.  Each case is run on the CPU and on OpenCL
 * with the default launch parameters, then once more on OpenCL with the
 * device's tuned parameters from the tuning cache ("-tuned" rows; run
 * `parvis tune` first, else they repeat the defaults). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct bp_case {
    const char *name;
    const char *set;          /* directory under stereo/ */
    int upsample;             /* 1 or 2 */
    int ndisp;
    float gt_scale;           /* of the (upsampled) ground truth */
    int border;
    int quick;
} bp_case;

static const bp_case cases[] = {
    {"bp-tsukuba", "tsukuba", 1, 16, 16.0f, 18, 1},
    {"bp-venus", "venus", 1, 21, 8.0f, 10, 1},
    {"bp-cones-quarter", "cones-quarter", 1, 64, 4.0f, 10, 1},
    {"bp-cones-900x750", "cones-quarter", 2, 256, 2.0f, 20, 0},
};

typedef struct bp_inputs {
    pv_image left, right, truth;
    pv_bp_params params;
    pv_image *output;
} bp_inputs;

static pv_status run_bp(pv_context *ctx, void *user)
{
    bp_inputs *in = user;
    return pv_stereo_bp(ctx, &in->left, &in->right, &in->params, in->output);
}

/* Each pixel repeated factor x factor times (disparities scale with it;
 * the ground truth's values are read with the halved gt_scale). */
static int upsample(pv_image *image, int factor)
{
    if (factor == 1)
        return 0;
    pv_image big;
    if (pv_image_alloc(&big, image->width * factor, image->height * factor, image->type) != PV_OK)
        return cli_fail("cannot allocate an upsampled image");
    const size_t pixel = image->type == PV_PIXEL_U8 ? 1 : sizeof(float);
    for (int y = 0; y < big.height; y++)
        for (int x = 0; x < big.width; x++)
            memcpy((char *)big.data + ((size_t)y * (size_t)big.stride + (size_t)x) * pixel,
                   (const char *)image->data +
                       ((size_t)(y / factor) * (size_t)image->stride + (size_t)(x / factor)) * pixel,
                   pixel);
    pv_image_free(image);
    *image = big;
    return 0;
}

static int load_set(const bench_config *config, const bp_case *c, bp_inputs *in)
{
    static const char *const files[] = {"left.pgm", "right.pgm", "gt.pgm"};
    pv_image *images[] = {&in->left, &in->right, &in->truth};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/stereo/%s/%s", config->data_dir, c->set, files[i]);
        pv_status status = pv_image_read(path, i < 2 ? PV_PIXEL_U8 : PV_PIXEL_F32, images[i]);
        if (status != PV_OK)
            return cli_fail_status(status, path);
        if (upsample(images[i], c->upsample))
            return 1;
    }
    return 0;
}

static double agreement(const pv_image *a, const pv_image *b)
{
    size_t same = 0, total = (size_t)a->width * (size_t)a->height;
    const float *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < total; i++)
        same += pa[i] == pb[i];
    return (double)same / (double)total;
}

static double quality(const bp_case *c, const bp_inputs *in, const pv_image *disparity)
{
    double bad = -1.0;
    if (pv_disparity_error(disparity, &in->truth, c->gt_scale, 1.0f, c->border, &bad) != PV_OK)
        return -1.0;
    return bad;
}

static int time_backend(const bench_config *config, pv_context *ctx, bp_inputs *in,
                        pv_image *output, pv_timing *timing)
{
    in->output = output;
    pv_status status = bench_time(config, ctx, run_bp, in, timing);
    return status == PV_OK ? 0 : cli_fail_status(status, "stereo bp");
}

static void fill_opencl(bench_result *r, const pv_timing *cl, const bp_case *c,
                        const bp_inputs *in, const pv_image *cl_out, const pv_image *cpu_out)
{
    r->have_opencl = 1;
    r->cl_kernel_ms = cl->kernel_ms;
    r->cl_total_ms = cl->total_ms;
    r->cl_upload_ms = cl->upload_ms;
    r->cl_download_ms = cl->download_ms;
    r->agreement = agreement(cl_out, cpu_out);
    r->cl_quality = quality(c, in, cl_out);
}

static void name_row(bench_result *r, const bp_case *c, const bp_inputs *in, int tuned)
{
    snprintf(r->op, sizeof r->op, "bp");
    snprintf(r->name, sizeof r->name, "%s%s", c->name, tuned ? "-tuned" : "");
    snprintf(r->params, sizeof r->params, "%dx%d d%d L%d i%d %s", in->left.width,
             in->left.height, c->ndisp, in->params.levels, in->params.iterations,
             tuned ? "tuned" : "default");
    r->quality_name = "bad>1px";
}

/* The default row (CPU + OpenCL with default launch parameters) and the
 * tuned row (the same CPU figures, OpenCL with the cached parameters). */
static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const bp_case *c, bp_inputs *in, bench_result *rows, int *filled)
{
    pv_image cpu_out, cl_out;
    *filled = 0;
    if (pv_image_alloc(&cpu_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&cl_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate outputs");
    pv_timing cpu, cl;
    int rc = time_backend(config, contexts->cpu, in, &cpu_out, &cpu);
    for (int tuned = 0; rc == 0 && tuned < (contexts->opencl ? 2 : 1); tuned++) {
        bench_result *r = &rows[tuned];
        memset(r, 0, sizeof *r);
        name_row(r, c, in, tuned);
        r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
        r->cpu_ms = cpu.total_ms;
        r->cpu_quality = quality(c, in, &cpu_out);
        if (contexts->opencl) {
            pv_status status = tuned ? pv_tune_load(contexts->opencl, NULL)
                                     : pv_tune_use_defaults(contexts->opencl);
            rc = status == PV_OK ? time_backend(config, contexts->opencl, in, &cl_out, &cl)
                                 : cli_fail_status(status, "tuning parameters");
            if (rc == 0)
                fill_opencl(r, &cl, c, in, &cl_out, &cpu_out);
        }
        if (rc == 0)
            (*filled)++;
    }
    if (contexts->opencl)
        pv_tune_use_defaults(contexts->opencl); /* later cases run with the defaults */
    pv_image_free(&cpu_out);
    pv_image_free(&cl_out);
    return rc;
}

static void free_inputs(bp_inputs *in)
{
    pv_image_free(&in->left);
    pv_image_free(&in->right);
    pv_image_free(&in->truth);
}

static void set_params(const bp_case *c, pv_bp_params *params)
{
    pv_bp_params_default(params);
    params->ndisp = c->ndisp;
    params->iterations = 7;
    params->lambda = 0.1f;
    params->sigma = 0.0f;
    params->disc_max = pv_bp_recommended_disc_max(c->ndisp);
}

int bench_bp_cases(const bench_config *config, const bench_contexts *contexts,
                   bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bp_case *c = &cases[i];
        if (!bench_wants(config, "bp", c->name, c->quick))
            continue;
        if (*count + 2 > max)
            return cli_fail("too many bench cases");
        bp_inputs in;
        memset(&in, 0, sizeof in);
        int filled = 0;
        int rc = load_set(config, c, &in);
        if (rc == 0) {
            set_params(c, &in.params);
            rc = run_case(config, contexts, c, &in, &results[*count], &filled);
        }
        free_inputs(&in);
        for (int k = 0; k < filled; k++)
            bench_print_row(&results[(*count)++]);
        if (rc)
            return 1;
    }
    return 0;
}
