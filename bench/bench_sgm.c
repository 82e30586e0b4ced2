/* Semi-global matching cases (--case sgm): the bundled tsukuba pair (the
 * quick suite's), the quarter-size Middlebury 2014 motorcycle pair with 64
 * disparities (its bad > 2 px is the figure tests/data/stereo/README.md
 * quotes for libSGM and OpenCV StereoSGBM), and synthetic random-dot
 * pairs at 1280x720 and 1920x1080 with 128 disparities (8 paths, and 4
 * paths at 1080p) and 1282x1110 with 256, the sizes and ranges GPU SGM
 * implementations report.  libSGM's parameters (pv_sgm_params_default:
 * 9x7 symmetric census, P1 10, P2 120, uniqueness 0.95, LR check,
 * sub-pixel) and, as libSGM always applies one, the 3x3 median, so that
 * the rows and bench/peers/libsgm_peer.cu do the same work.  Each case runs on the CPU backend and on OpenCL; kernel and
 * end-to-end times are reported apart, the agreement column checks the
 * cross-check of stereo.h and the quality column is bad > 2 px (invalid
 * pixels counted as bad). */
#include "bench.h"
#include "../tests/image_list.h"

#include "bench_ops.h"
#include "bench_roofline.h"
#ifdef BENCH_DEVICE_BUFFERS
#include "bench_sgm_device.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct sgm_case {
    const char *name;
    const char *set;          /* bundled set under stereo/, or NULL: synthetic */
    int width, height;        /* of a synthetic pair */
    int ndisp, paths;
    float gt_scale;
    int border;
    int quick;
    int aggregation;          /* pv_sgm_aggregation (the device's path-cost storage) */
    int device_buffers;       /* OpenCL from and to device buffers (pv_stereo_sgm_cl) */
} sgm_case;

/* The -sum rows keep one summed volume on the device instead of one a
 * path (the least memory; the results are identical), and the d512 rows
 * show a range libSGM does not offer. */
static const sgm_case cases[] = {
    {"sgm-tsukuba", "tsukuba", 0, 0, 16, 8, 16.0f, 18, 1, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-motorcycle", "motorcycle", 0, 0, 64, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1280x720", NULL, 1280, 720, 128, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1920x1080", NULL, 1920, 1080, 128, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1920x1080-4paths", NULL, 1920, 1080, 128, 4, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1282x1110", NULL, 1282, 1110, 256, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1920x1080-sum", NULL, 1920, 1080, 128, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_SUM, 0},
    {"sgm-1920x1080-d512", NULL, 1920, 1080, 512, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 0},
    {"sgm-1920x1080-d512-sum", NULL, 1920, 1080, 512, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_SUM, 0},
    /* The -d2d rows' OpenCL columns run from buffers already on the device to a
     * buffer on the device (pv_stereo_sgm_cl, then pv_wait), as libSGM's
     * device-to-device call; their end to end is that wall time. */
    {"sgm-motorcycle-d2d", "motorcycle", 0, 0, 64, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 1},
    {"sgm-1920x1080-d2d", NULL, 1920, 1080, 128, 8, 1.0f, 10, 0, PV_SGM_AGGREGATE_AUTO, 1},
};

/* The documented cross-check (include/parvis/stereo.h): integer
 * disparities identical on every pixel, sub-pixel values within
 * PV_TOL_SGM_SUBPIXEL (1e-3 px; the bench sees only the public headers),
 * invalid pixels invalid on both. */
#define SGM_AGREEMENT_THRESHOLD 1.0
#define SGM_AGREEMENT_TOLERANCE 1e-3f
/* The quality column: Middlebury's bad > 2 px. */
#define SGM_BAD_THRESHOLD 2.0f

typedef struct sgm_inputs {
    pv_image left, right, truth;
    pv_sgm_params params;
    pv_image *output;
} sgm_inputs;

static pv_status run_sgm(pv_context *ctx, void *user)
{
    sgm_inputs *in = user;
    return pv_stereo_sgm(ctx, &in->left, &in->right, &in->params, in->output);
}

/* bad > 2 px of known pixels, invalid output counted as bad; -1 when it
 * cannot be computed. */
static double bad_pixels(const sgm_case *c, const sgm_inputs *in, const pv_image *disparity)
{
    double bad = -1.0;
    if (pv_disparity_error(disparity, &in->truth, c->gt_scale, SGM_BAD_THRESHOLD, c->border,
                           &bad) != PV_OK)
        return -1.0;
    return bad;
}

static int time_backend(const bench_config *config, pv_context *ctx, sgm_inputs *in,
                        pv_image *output, pv_timing *timing, bench_series *series)
{
    in->output = output;
    return bench_time_or_fail(config, ctx, run_sgm, in, timing, series, "stereo sgm");
}

/* The OpenCL columns of a -d2d row: device buffers in and out. */
static int time_device_buffers(const bench_config *config, pv_context *ctx, sgm_inputs *in,
                               pv_image *output, pv_timing *timing, bench_series *series)
{
#ifdef BENCH_DEVICE_BUFFERS
    sgm_device_run *run = NULL;
    int rc = bench_sgm_device_open(ctx, &in->left, &in->right, &in->params, &run);
    if (rc == 0)
        rc = bench_time_or_fail(config, ctx, bench_sgm_device_call, run, timing, series,
                                "stereo sgm (device buffers)");
    if (rc == 0)
        rc = bench_sgm_device_read(run, output);
    bench_sgm_device_close(run);
    return rc;
#else
    (void)config, (void)ctx, (void)in, (void)output, (void)timing, (void)series;
    return cli_fail("device buffers need the OpenCL backend");
#endif
}

static int run_case(const bench_config *config, const bench_contexts *contexts,
                    const sgm_case *c, sgm_inputs *in, bench_result *r)
{
    pv_image cpu_out = {0}, cl_out = {0};
    if (pv_image_alloc(&cpu_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&cl_out, in->left.width, in->left.height, PV_PIXEL_F32) != PV_OK) {
        image_list_free(&cpu_out, &cl_out, NULL);
        return cli_fail("cannot allocate outputs");
    }
    pv_timing cpu, cl;
    int rc = time_backend(config, contexts->cpu, in, &cpu_out, &cpu, &r->cpu_samples);
    if (rc == 0 && contexts->opencl)
        rc = (c->device_buffers ? time_device_buffers : time_backend)(config, contexts->opencl, in,
                                                                      &cl_out, &cl,
                                                                      &r->cl_samples);
    if (rc == 0) {
        bench_fill_cpu(r, &cpu, NULL);
        r->cpu_quality = bad_pixels(c, in, &cpu_out);
        if (contexts->opencl) {
            bench_fill_opencl(r, &cl, NULL);
            r->agreement = bench_disparity_agreement(&cl_out, &cpu_out, SGM_AGREEMENT_TOLERANCE);
            r->cl_quality = bad_pixels(c, in, &cl_out);
        }
    }
    image_list_free(&cpu_out, &cl_out, NULL);
    return rc;
}

static void describe_row(const bench_contexts *contexts, const sgm_inputs *in, int device_buffers,
                         bench_result *r)
{
    const pv_sgm_params *p = &in->params;
    snprintf(r->params, sizeof r->params, "%dx%d d%d census %dx%d P%d/%d %d paths%s%s",
             in->left.width, in->left.height, p->ndisp, p->census_width, p->census_height, p->p1,
             p->p2, p->paths, p->aggregation == PV_SGM_AGGREGATE_SUM ? " summed" : "",
             device_buffers ? ", device buffers" : "");
    snprintf(r->variant, sizeof r->variant, "default");
    bench_describe_settings(r, "sgm", p, sizeof *p);
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->quality_name = "bad>2px";
    r->threshold = SGM_AGREEMENT_THRESHOLD;
    r->size = (double)in->left.width * in->left.height;
    r->roofline_bytes = roofline_sgm_bytes(in->left.width, in->left.height);
    r->roofline_ops = ops_sgm(in->left.width, in->left.height, p->ndisp, p->paths);
    r->ops_integer = 1;
}

static int bench_case(const bench_config *config, const bench_contexts *contexts,
                      const sgm_case *c, bench_result *r)
{
    sgm_inputs in;
    memset(&in, 0, sizeof in);
    int rc = c->set ? bench_load_stereo_set(config, c->set, &in.left, &in.right, &in.truth)
                    : bench_synthetic_stereo(c->width, c->height, c->ndisp, &in.left, &in.right,
                                             &in.truth);
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "sgm");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    if (rc == 0) {
        pv_sgm_params_default(&in.params);
        in.params.ndisp = c->ndisp;
        in.params.paths = c->paths;
        in.params.aggregation = c->aggregation;
        in.params.median = 1;
        describe_row(contexts, &in, c->device_buffers, r);
        rc = run_case(config, contexts, c, &in, r);
    }
    image_list_free(&in.left, &in.right, &in.truth, NULL);
    return rc;
}

int bench_sgm_cases(const bench_config *config, const bench_contexts *contexts,
                    bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    bench_result *row = malloc(sizeof *row);
    if (!row)
        return cli_fail("out of memory");
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && rc == 0; i++) {
        const sgm_case *c = &cases[i];
        if (!bench_wants(config, "sgm", c->name, c->quick))
            continue;
        rc = bench_case(config, contexts, c, row);
        if (rc == 0)
            rc = bench_add_row(&rows, row);
    }
    free(row);
    if (rc == 0)
        rc = bench_sgm_stream_cases(config, contexts, &rows);
    return rc;
}
