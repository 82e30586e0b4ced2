/* SAD stereo cases: the bundled Middlebury sets, the SAD paper's own case
 * (Venus, 64 disparities, 5x5) and a synthetic 1920x1080 pair with 128
 * disparities and a 7x7 window. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct stereo_case {
    const char *name;
    const char *set;          /* directory under stereo/, or NULL: synthetic */
    int width, height;        /* synthetic size */
    int ndisp, window;
    float gt_scale;
    int border;
    int quick;                /* part of --quick */
} stereo_case;

static const stereo_case cases[] = {
    {"tsukuba", "tsukuba", 0, 0, 16, 9, 16.0f, 18, 1},
    {"venus", "venus", 0, 0, 21, 9, 8.0f, 10, 1},
    {"cones-quarter", "cones-quarter", 0, 0, 64, 9, 4.0f, 10, 1},
    {"venus-paper", "venus", 0, 0, 64, 5, 8.0f, 10, 1},
    {"synthetic-1080p", NULL, 1920, 1080, 128, 7, 1.0f, 10, 0},
};

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

static int load_set(const bench_config *config, const stereo_case *c, stereo_inputs *in)
{
    static const char *const files[] = {"left.pgm", "right.pgm", "gt.pgm"};
    pv_image *images[] = {&in->left, &in->right, &in->truth};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/stereo/%s/%s", config->data_dir, c->set, files[i]);
        pv_status status = pv_image_read(path, i < 2 ? PV_PIXEL_U8 : PV_PIXEL_F32, images[i]);
        if (status != PV_OK)
            return cli_fail_status(status, path);
    }
    return 0;
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

static int make_synthetic(const stereo_case *c, stereo_inputs *in)
{
    if (pv_image_alloc(&in->left, c->width, c->height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&in->right, c->width, c->height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&in->truth, c->width, c->height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate the synthetic pair");
    uint32_t state = 12345u;
    unsigned char *left = in->left.data, *right = in->right.data;
    float *truth = in->truth.data;
    for (size_t i = 0; i < (size_t)c->width * (size_t)c->height; i++)
        left[i] = (unsigned char)(next_random(&state) >> 24);
    for (int y = 0; y < c->height; y++)
        for (int xr = 0; xr < c->width; xr++) {
            int d = band_disparity(xr, c->width, c->ndisp);
            int xl = xr + d < c->width ? xr + d : c->width - 1;
            right[(size_t)y * c->width + xr] = left[(size_t)y * c->width + xl];
            if (xr + d < c->width)
                truth[(size_t)y * c->width + xr + d] = (float)d;
        }
    return 0;
}

static double agreement(const pv_image *a, const pv_image *b)
{
    size_t same = 0, total = (size_t)a->width * (size_t)a->height;
    const float *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < total; i++)
        same += (isinf(pa[i]) && isinf(pb[i])) || fabsf(pa[i] - pb[i]) <= 1e-3f;
    return (double)same / (double)total;
}

static double quality(const stereo_case *c, const stereo_inputs *in, const pv_image *disparity)
{
    double bad = -1.0;
    if (pv_disparity_error(disparity, &in->truth, c->gt_scale, 1.0f, c->border, &bad) != PV_OK)
        return -1.0;
    return bad;
}

static int time_backend(const bench_config *config, pv_context *ctx, stereo_inputs *in,
                        pv_image *output, pv_timing *timing)
{
    in->output = output;
    pv_status status = bench_time(config, ctx, run_sad, in, timing);
    return status == PV_OK ? 0 : cli_fail_status(status, "stereo sad");
}

static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const stereo_case *c, stereo_inputs *in, bench_result *r)
{
    pv_image cpu_out, cl_out;
    if (pv_image_alloc(&cpu_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&cl_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK)
        return cli_fail("cannot allocate outputs");
    pv_timing cpu, cl;
    int rc = time_backend(config, contexts->cpu, in, &cpu_out, &cpu);
    if (rc == 0 && contexts->opencl)
        rc = time_backend(config, contexts->opencl, in, &cl_out, &cl);
    if (rc == 0) {
        r->cpu_ms = cpu.total_ms;
        r->cpu_quality = quality(c, in, &cpu_out);
        r->have_opencl = contexts->opencl != NULL;
        if (r->have_opencl) {
            r->cl_kernel_ms = cl.kernel_ms;
            r->cl_total_ms = cl.total_ms;
            r->cl_upload_ms = cl.upload_ms;
            r->cl_download_ms = cl.download_ms;
            r->agreement = agreement(&cl_out, &cpu_out);
            r->cl_quality = quality(c, in, &cl_out);
        }
    }
    pv_image_free(&cpu_out);
    pv_image_free(&cl_out);
    return rc;
}

static void free_inputs(stereo_inputs *in)
{
    pv_image_free(&in->left);
    pv_image_free(&in->right);
    pv_image_free(&in->truth);
}

static int bench_case(const bench_config *config, const bench_contexts *contexts,
                      const stereo_case *c, bench_result *r)
{
    stereo_inputs in;
    memset(&in, 0, sizeof in);
    int rc = c->set ? load_set(config, c, &in) : make_synthetic(c, &in);
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sad");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    if (rc == 0) {
        snprintf(r->params, sizeof r->params, "%dx%d d%d w%d", in.left.width, in.left.height,
                 c->ndisp, c->window);
        pv_sad_params_default(&in.params);
        in.params.ndisp = c->ndisp;
        in.params.window = c->window;
        r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
        r->quality_name = "bad>1px";
        rc = run_case(config, contexts, c, &in, r);
    }
    free_inputs(&in);
    return rc;
}

int bench_stereo_cases(const bench_config *config, const bench_contexts *contexts,
                       bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const stereo_case *c = &cases[i];
        if (!bench_wants(config, "sad", c->name, c->quick))
            continue;
        if (*count >= max)
            return cli_fail("too many bench cases");
        if (bench_case(config, contexts, c, &results[*count]))
            return 1;
        bench_print_row(&results[(*count)++]);
    }
    return 0;
}
