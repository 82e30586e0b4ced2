/* SAD stereo cases: the bundled Middlebury sets, the SAD paper's own case
 * (Venus, 64 disparities, 5x5) and a synthetic 1920x1080 pair with 128
 * disparities and a 7x7 window. */
#include "bench.h"
#include "../tests/image_list.h"

#include "bench_ops.h"
#include "bench_roofline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct stereo_case {
    bench_sad_spec spec;
    float gt_scale;
    int border;
    int quick;                /* part of --quick */
} stereo_case;

static const stereo_case cases[] = {
    {{"tsukuba", "tsukuba", 0, 0, 16, 9}, 16.0f, 18, 1},
    {{"venus", "venus", 0, 0, 21, 9}, 8.0f, 10, 0},
    {{"cones-quarter", "cones-quarter", 0, 0, 64, 9}, 4.0f, 10, 0},
    {{"venus-paper", "venus", 0, 0, 64, 5}, 8.0f, 10, 1},
    {{"synthetic-1080p", NULL, 1920, 1080, 128, 7}, 1.0f, 10, 0},
};

/* The documented cross-check (include/parvis/stereo.h): identical
 * disparities on >= 99.9% of pixels. */
#define SAD_AGREEMENT_THRESHOLD 0.999
/* Disparities within this of each other count as identical (sub-pixel
 * refinement may round differently on the two backends). */
#define SAD_AGREEMENT_TOLERANCE 1e-3f

typedef struct stereo_inputs {
    pv_image left, right, truth;
    pv_sad_params params;
    pv_image *output;
} stereo_inputs;

static pv_status run_sad(pv_context *ctx, void *user)
{
    stereo_inputs *in = user;
    return pv_stereo_sad(ctx, &in->left, &in->right, &in->params, in->output);
}

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Band b of the right image is the left image shifted by band_disparity(b),
 * so every left pixel seen through a band has a known disparity. */
static int band_disparity(int x, int width, int ndisp)
{
    int band = 3 * x / width;
    return (ndisp - 1) * (band + 1) / 4 + 1;
}

int bench_synthetic_stereo(int width, int height, int ndisp, pv_image *left_image,
                           pv_image *right_image, pv_image *truth_image)
{
    if (pv_image_alloc(left_image, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(right_image, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(truth_image, width, height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate the synthetic pair");
    uint32_t state = 12345u;
    unsigned char *left = left_image->data, *right = right_image->data;
    float *truth = truth_image->data;
    for (size_t i = 0; i < (size_t)width * (size_t)height; i++)
        left[i] = (unsigned char)(next_random(&state) >> 24);
    for (int y = 0; y < height; y++)
        for (int xr = 0; xr < width; xr++) {
            int d = band_disparity(xr, width, ndisp);
            int xl = xr + d < width ? xr + d : width - 1;
            right[(size_t)y * width + xr] = left[(size_t)y * width + xl];
            if (xr + d < width)
                truth[(size_t)y * width + xr + d] = (float)d;
        }
    return 0;
}

/* Ground-truth scale and border of a case: the bundled sets' own, else
 * the synthetic pair's (scale 1, a 10-pixel border). */
typedef struct truth_frame {
    float gt_scale;
    int border;
} truth_frame;

static int time_backend(const bench_config *config, pv_context *ctx, stereo_inputs *in,
                        pv_image *output, pv_timing *timing, bench_series *series)
{
    in->output = output;
    return bench_time_or_fail(config, ctx, run_sad, in, timing, series, "stereo sad");
}

static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const truth_frame *c, stereo_inputs *in, bench_result *r)
{
    pv_image cpu_out, cl_out;
    if (pv_image_alloc(&cpu_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&cl_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate outputs");
    pv_timing cpu, cl;
    int rc = time_backend(config, contexts->cpu, in, &cpu_out, &cpu, &r->cpu_samples);
    if (rc == 0 && contexts->opencl)
        rc = time_backend(config, contexts->opencl, in, &cl_out, &cl, &r->cl_samples);
    if (rc == 0) {
        bench_fill_cpu(r, &cpu, NULL);
        r->cpu_quality = bench_bad_pixels(&cpu_out, &in->truth, c->gt_scale, c->border);
        if (contexts->opencl) {
            bench_fill_opencl(r, &cl, NULL);
            r->agreement = bench_disparity_agreement(&cl_out, &cpu_out, SAD_AGREEMENT_TOLERANCE);
            r->cl_quality = bench_bad_pixels(&cl_out, &in->truth, c->gt_scale, c->border);
        }
    }
    image_list_free(&cpu_out, &cl_out, NULL);
    return rc;
}

/* The ground truth's frame: the bundled sets' from the case table (by set
 * name), a synthetic pair's scale 1 with a 10-pixel border. */
static truth_frame frame_of(const bench_sad_spec *spec)
{
    truth_frame frame = {1.0f, 10};
    for (size_t i = 0; spec->set && i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].spec.set && strcmp(cases[i].spec.set, spec->set) == 0) {
            frame.gt_scale = cases[i].gt_scale;
            frame.border = cases[i].border;
        }
    return frame;
}

static void describe_row(const bench_contexts *contexts, const bench_sad_spec *c,
                         const stereo_inputs *in, bench_result *r)
{
    snprintf(r->params, sizeof r->params, "%dx%d d%d w%d", in->left.width, in->left.height,
             c->ndisp, c->window);
    bench_describe_settings(r, "sad", &in->params, sizeof in->params);
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "bad>1px";
    r->threshold = SAD_AGREEMENT_THRESHOLD;
    r->size = (double)in->left.width * in->left.height;
    r->roofline_bytes = roofline_sad_bytes(in->left.width, in->left.height);
    r->roofline_ops = ops_sad(in->left.width, in->left.height, c->ndisp);
    r->ops_integer = 1;
}

static int bench_case(const bench_config *config, const bench_contexts *contexts,
                      const bench_sad_spec *c, bench_result *r)
{
    stereo_inputs in;
    memset(&in, 0, sizeof in);
    int rc = c->set ? bench_load_stereo_set(config, c->set, &in.left, &in.right, &in.truth)
                    : bench_synthetic_stereo(c->width, c->height, c->ndisp, &in.left, &in.right,
                                             &in.truth);
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sad");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    if (rc == 0) {
        pv_sad_params_default(&in.params);
        in.params.ndisp = c->ndisp;
        in.params.window = c->window;
        describe_row(contexts, c, &in, r);
        truth_frame frame = frame_of(c);
        rc = run_case(config, contexts, &frame, &in, r);
    }
    image_list_free(&in.left, &in.right, &in.truth, NULL);
    return rc;
}

int bench_sad_case(const bench_config *config, const bench_contexts *contexts,
                   const bench_sad_spec *spec, bench_rows *rows)
{
    bench_result *row = malloc(sizeof *row);
    if (!row)
        return cli_fail("out of memory");
    int rc = bench_case(config, contexts, spec, row);
    if (rc == 0)
        rc = bench_add_row(rows, row);
    free(row);
    return rc;
}

int bench_stereo_cases(const bench_config *config, const bench_contexts *contexts,
                       bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const stereo_case *c = &cases[i];
        if (!bench_wants(config, "sad", c->spec.name, c->quick))
            continue;
        if (bench_sad_case(config, contexts, &c->spec, &rows))
            return 1;
    }
    return 0;
}
