/* Belief-propagation stereo cases: the bundled Middlebury sets with their
 * ranges (tsukuba/16, venus/21, cones-quarter/64) and cones upsampled 2x to
 * 900x750 with 256 disparities (the paper's half-size Cones, the range of
 * cudaBeliefProp's large case).  Parameters as cudaBeliefProp's (levels 5,
 * 7 iterations, lambda 0.1, data_max 15, disc_max ndisp / 7.5, no
 * smoothing), float messages.  Each case is run on the CPU and on OpenCL
 * with the launch parameters the context has (the tuning cache, else the
 * tuning database's entry for the device, else the defaults: the row's
 * params column names which), then once more on OpenCL after reading the
 * tuning cache again ("-tuned" rows, left out of the quick suite; without
 * a cache they repeat the first).  --paper bp runs the paper's own
 * parameters (bench_papers.c).
 *
 * The large case also runs with the cooperative message update
 * (PV_BP_UPDATE_COOPERATIVE, docs/bp-at-scale.md), in float and in half
 * messages ("-coop" and "-coop-f16" rows, whatever --bp-messages says; not
 * with --case bp, which selects the four cases in the options' update); the
 * other cases use it with --bp-update cooperative.  Their CPU oracle runs
 * the same update and precision, so the agreement column still checks
 * exactness. */
#include "bench.h"

#include "bench_ops.h"
#include "bench_roofline.h"

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
    int update;               /* BENCH_UPDATE_*: the message update and precision */
} bp_case;

/* A case's message update: as --bp-update and --bp-messages say, or the
 * cooperative update in a fixed precision. */
enum { BENCH_UPDATE_OPTIONS, BENCH_UPDATE_COOP_F32, BENCH_UPDATE_COOP_F16 };

static const bp_case cases[] = {
    {"bp-tsukuba", "tsukuba", 1, 16, 16.0f, 18, 1, BENCH_UPDATE_OPTIONS},
    {"bp-venus", "venus", 1, 21, 8.0f, 10, 0, BENCH_UPDATE_OPTIONS},
    {"bp-cones-quarter", "cones-quarter", 1, 64, 4.0f, 10, 0, BENCH_UPDATE_OPTIONS},
    {"bp-cones-900x750", "cones-quarter", 2, 256, 2.0f, 20, 0, BENCH_UPDATE_OPTIONS},
    {"bp-cones-900x750-coop", "cones-quarter", 2, 256, 2.0f, 20, 0, BENCH_UPDATE_COOP_F32},
    {"bp-cones-900x750-coop-f16", "cones-quarter", 2, 256, 2.0f, 20, 0, BENCH_UPDATE_COOP_F16},
};

/* The documented cross-check (include/parvis/stereo.h): identical
 * disparities on >= 99.5% of pixels. */
#define BP_AGREEMENT_THRESHOLD 0.995

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

/* The set, each image upsampled. */
static int load_set(const bench_config *config, const bench_bp_spec *c, bp_inputs *in)
{
    if (bench_load_stereo_set(config, c->set, &in->left, &in->right, &in->truth))
        return 1;
    pv_image *images[] = {&in->left, &in->right, &in->truth};
    for (int i = 0; i < 3; i++)
        if (upsample(images[i], c->upsample))
            return 1;
    return 0;
}

/* BP's cross-check asks for identical disparities. */
static double agreement(const pv_image *a, const pv_image *b)
{
    return bench_disparity_agreement(a, b, 0.0f);
}

static double quality(const bench_bp_spec *c, const bp_inputs *in, const pv_image *disparity)
{
    return bench_bad_pixels(disparity, &in->truth, c->gt_scale, c->border);
}

static int time_backend(const bench_config *config, pv_context *ctx, bp_inputs *in,
                        pv_image *output, pv_timing *timing, bench_series *series)
{
    in->output = output;
    return bench_time_or_fail(config, ctx, run_bp, in, timing, series, "stereo bp");
}

static void fill_opencl(bench_result *r, const pv_timing *cl, const bench_bp_spec *c,
                        const bp_inputs *in, const pv_image *cl_out, const pv_image *cpu_out)
{
    bench_fill_opencl(r, cl, NULL);
    r->agreement = agreement(cl_out, cpu_out);
    r->cl_quality = quality(c, in, cl_out);
}

static void name_row(bench_result *r, const bench_bp_spec *c, const bp_inputs *in, int tuned)
{
    snprintf(r->op, sizeof r->op, "bp");
    snprintf(r->name, sizeof r->name, "%s%s", c->name, tuned ? "-tuned" : "");
    snprintf(r->params, sizeof r->params, "%dx%d d%d L%d i%d%s%s", in->left.width,
             in->left.height, in->params.ndisp, in->params.levels, in->params.iterations,
             in->params.message_update == PV_BP_UPDATE_COOPERATIVE ? " coop" : "",
             in->params.message_precision == PV_BP_MESSAGES_F16 ? " f16" : "");
    snprintf(r->variant, sizeof r->variant, "%s", tuned ? "tuned" : "default");
    bench_describe_settings(r, "bp", &in->params, sizeof in->params);
    r->quality_name = "bad>1px";
    r->threshold = BP_AGREEMENT_THRESHOLD;
    r->size = (double)in->left.width * in->left.height;
    r->roofline_bytes = roofline_bp_bytes(in->left.width, in->left.height);
    r->roofline_ops = ops_bp(in->left.width, in->left.height, in->params.ndisp, in->params.levels,
                             in->params.iterations);
}

/* The row's OpenCL launch parameters: as the context has them (the
 * tuning cache, else the tuning database's entry, else the defaults), or
 * for the tuned row the cache read again (where there is none the row
 * repeats the first). */
static int choose_params(pv_context *ctx, int tuned, bench_result *r)
{
    pv_status status = tuned ? pv_tune_load(ctx, NULL) : PV_OK;
    if (status != PV_OK)
        return cli_fail_status(status, "tuning parameters");
    bench_launch_source(ctx, r->launch, sizeof r->launch);
    return 0;
}

/* The row with the context's launch parameters and, when asked, the tuned
 * row (the same CPU figures, OpenCL with the cached parameters). */
static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const bench_bp_spec *c, bp_inputs *in, bench_result *rows, int *filled)
{
    pv_image cpu_out, cl_out;
    *filled = 0;
    if (pv_image_alloc(&cpu_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&cl_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate outputs");
    pv_timing cpu, cl;
    int rc = time_backend(config, contexts->cpu, in, &cpu_out, &cpu, &rows[0].cpu_samples);
    int variants = contexts->opencl && c->tuned ? 2 : 1;
    for (int tuned = 0; rc == 0 && tuned < variants; tuned++) {
        bench_result *r = &rows[tuned];
        bench_series cpu_samples = rows[0].cpu_samples;
        memset(r, 0, sizeof *r);
        name_row(r, c, in, tuned);
        r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
        bench_fill_cpu(r, &cpu, &cpu_samples);
        r->cpu_quality = quality(c, in, &cpu_out);
        if (contexts->opencl) {
            rc = choose_params(contexts->opencl, tuned, r);
            if (rc == 0)
                rc = time_backend(config, contexts->opencl, in, &cl_out, &cl, &r->cl_samples);
            if (rc == 0)
                fill_opencl(r, &cl, c, in, &cl_out, &cpu_out);
        }
        if (rc == 0)
            (*filled)++;
    }
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

/* cudaBeliefProp's parameters (see the top of this file). */
static void set_params(const bp_case *c, pv_bp_params *params)
{
    pv_bp_params_default(params);
    params->ndisp = c->ndisp;
    params->iterations = 7;
    params->lambda = 0.1f;
    params->sigma = 0.0f;
    params->disc_max = pv_bp_recommended_disc_max(c->ndisp);
}

int bench_bp_case(const bench_config *config, const bench_contexts *contexts,
                  const bench_bp_spec *spec, bench_rows *rows)
{
    bench_result *pair = calloc(2, sizeof *pair);
    if (!pair)
        return cli_fail("out of memory");
    bp_inputs in;
    memset(&in, 0, sizeof in);
    int filled = 0;
    /* An A/B run (bench_ab.c) leaves the tuned row out: reading the cache
     * into the context would replace the side's parameters in the middle
     * of its pass, and the comparison of parameters is the A/B run's own. */
    bench_bp_spec run_spec = *spec;
    run_spec.tuned = spec->tuned && !config->ab_param;
    int rc = load_set(config, spec, &in);
    if (rc == 0) {
        in.params = spec->params;
        rc = run_case(config, contexts, &run_spec, &in, pair, &filled);
    }
    free_inputs(&in);
    for (int k = 0; k < filled && rc == 0; k++)
        rc = bench_add_row(rows, &pair[k]);
    free(pair);
    return rc;
}

int bench_bp_cases(const bench_config *config, const bench_contexts *contexts,
                   bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bp_case *c = &cases[i];
        /* The fixed -coop rows come with the whole suite or by case name
         * (--case bp-cones-900x750 runs all three); --case bp means the
         * four cases in the update the options ask for (bench/bp_sweep.sh). */
        const int by_op = config->only && strcmp(config->only, "bp") == 0;
        if (c->update != BENCH_UPDATE_OPTIONS && by_op)
            continue;
        if (!bench_wants(config, "bp", c->name, c->quick))
            continue;
        /* The quick suite leaves the tuned rows out: they double the time. */
        bench_bp_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.name = c->name;
        spec.set = c->set;
        spec.upsample = c->upsample;
        spec.gt_scale = c->gt_scale;
        spec.border = c->border;
        spec.tuned = !config->quick;
        set_params(c, &spec.params);
        spec.params.message_precision =
            c->update == BENCH_UPDATE_COOP_F16 ||
                    (c->update == BENCH_UPDATE_OPTIONS && config->bp_messages)
                ? PV_BP_MESSAGES_F16
                : PV_BP_MESSAGES_F32;
        spec.params.message_update = c->update != BENCH_UPDATE_OPTIONS || config->bp_update
                                         ? PV_BP_UPDATE_COOPERATIVE
                                         : PV_BP_UPDATE_SERIAL;
        if (bench_bp_case(config, contexts, &spec, &rows))
            return 1;
    }
    return 0;
}
