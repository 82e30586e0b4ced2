/* parvis-bench: RANSAC cases (geometry module).  Synthetic matches of a
 * known homography (or two camera views) with 0.3 px noise and a share of
 * uniformly random outliers; the row reports the CPU time, the OpenCL
 * kernel-only and end-to-end medians, whether both backends chose the same
 * hypothesis and model, and the model's error: for H the largest distance
 * to the truth over a 9 x 9 grid of image 1, for F the mean Sampson
 * distance of the true matches, in pixels. */
#include "bench.h"
#include "../tests/match_set.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCENE_W 1920.0
#define SCENE_H 1080.0
#define NOISE_PX 0.3

typedef struct ransac_case {
    const char *name;
    pv_geometry_model model;
    int count;
    double outliers;
    int quick;
} ransac_case;

/* "homography-10k" is the target: 10k matches, 50% outliers. */
static const ransac_case ransac_cases[] = {
    {"homography-10k", PV_GEOMETRY_HOMOGRAPHY, 10000, 0.5, 1},
    {"homography-100k", PV_GEOMETRY_HOMOGRAPHY, 100000, 0.5, 0},
    {"fundamental-10k", PV_GEOMETRY_FUNDAMENTAL, 10000, 0.3, 0},
};

static const double truth_h[9] = {1.05, -0.12, 60.0, 0.11, 0.98, -35.0, 4e-5, -2e-5, 1.0};

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11;
}

static double uniform(uint64_t *state)
{
    return (double)next_random(state) / 9007199254740992.0;
}

static double gaussian(uint64_t *state)
{
    double u = (uniform(state) + 1e-12) / (1.0 + 2e-12), v = uniform(state);
    return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979 * v);
}

/* Image 2 of a world point (x, y, z) seen by camera 1 at the origin:
 * camera 2 turned 0.1 rad about y and moved one unit along x. */
static void second_view(double x, double y, double z, double *out)
{
    const double c = cos(0.1), s = sin(0.1), f = 1000.0;
    double cx = c * x + s * z - 1.0, cz = -s * x + c * z;
    out[0] = f * cx / cz + SCENE_W / 2;
    out[1] = f * y / cz + SCENE_H / 2;
}

static int make_data(const ransac_case *c, match_set *d)
{
    if (match_set_alloc(d, c->count))
        return cli_fail("no memory for %d matches", c->count);
    uint64_t state = 12345;
    for (int i = 0; i < c->count; i++) {
        double x = SCENE_W * uniform(&state), y = SCENE_H * uniform(&state), q[2], seen[2];
        if (c->model == PV_GEOMETRY_HOMOGRAPHY) {
            match_apply_h(truth_h, x, y, q);
        } else {
            double z = 5.0 + 10.0 * uniform(&state);
            second_view((x - SCENE_W / 2) * z / 1000.0, (y - SCENE_H / 2) * z / 1000.0, z, q);
        }
        int inlier = uniform(&state) >= c->outliers;
        for (int axis = 0; axis < 2; axis++)
            seen[axis] = inlier ? q[axis] + NOISE_PX * gaussian(&state)
                                : (axis ? SCENE_H : SCENE_W) * uniform(&state);
        match_set_put(d, i, x, y, q, inlier, seen[0], seen[1]);
    }
    return 0;
}

static double homography_error(const double *h)
{
    return match_homography_error(h, truth_h, SCENE_W, SCENE_H);
}

static double fundamental_error(const double *f, const match_set *d)
{
    double sum = 0.0;
    int n = 0;
    for (int i = 0; i < d->count; i++) {
        if (!d->truth[i])
            continue;
        double x1 = d->p1[2 * i], y1 = d->p1[2 * i + 1], x2 = d->clean2[2 * i],
               y2 = d->clean2[2 * i + 1];
        double a = f[0] * x1 + f[1] * y1 + f[2], b = f[3] * x1 + f[4] * y1 + f[5];
        double c = f[6] * x1 + f[7] * y1 + f[8];
        double ta = f[0] * x2 + f[3] * y2 + f[6], tb = f[1] * x2 + f[4] * y2 + f[7];
        sum += fabs(x2 * a + y2 * b + c) / sqrt(a * a + b * b + ta * ta + tb * tb);
        n++;
    }
    return n ? sum / n : -1.0;
}

typedef struct ransac_job {
    const ransac_case *c;
    const match_set *data;
    pv_geometry_result result;
} ransac_job;

static pv_status run_ransac(pv_context *ctx, void *user)
{
    ransac_job *job = user;
    const match_set *d = job->data;
    return job->c->model == PV_GEOMETRY_HOMOGRAPHY
               ? pv_find_homography(ctx, d->p1, d->p2, d->count, NULL, &job->result, NULL)
               : pv_find_fundamental(ctx, d->p1, d->p2, d->count, NULL, &job->result, NULL);
}

static double model_error(const ransac_job *job)
{
    return job->c->model == PV_GEOMETRY_HOMOGRAPHY ? homography_error(job->result.model)
                                                   : fundamental_error(job->result.model, job->data);
}

static int bench_ransac(const bench_config *config, const bench_contexts *contexts,
                        const ransac_case *c, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "ransac");
    snprintf(r->name, sizeof r->name, "%s", c->name);
    r->quality_name = "err px";
    r->quality_absolute = 1;
    r->cpu_quality = r->cl_quality = -1.0;
    r->cpu_threads = pv_context_cpu_threads(contexts->cpu);
    r->threshold = 1.0;      /* the same hypothesis and the same model */
    r->size = c->count;
    snprintf(r->variant, sizeof r->variant, "%s",
             c->model == PV_GEOMETRY_HOMOGRAPHY ? "homography" : "fundamental");
    match_set data = {0};
    int rc = make_data(c, &data);
    ransac_job cpu = {c, &data, {{0}, 0, 0, 0, 0}}, cl = cpu;
    pv_timing cpu_t, cl_t;
    if (rc == 0)
        rc = bench_time_both(config, contexts, run_ransac, &cpu, &cl, &cpu_t, &cl_t, r, "ransac");
    if (rc == 0) {
        snprintf(r->params, sizeof r->params, "%d matches, %.0f%% outliers, %d hypotheses",
                 c->count, 100.0 * c->outliers, cpu.result.hypotheses);
        bench_fill_cpu(r, &cpu_t, NULL);
        r->cpu_quality = model_error(&cpu);
        if (contexts->opencl) {
            bench_fill_opencl(r, &cl_t, NULL);
            r->cl_quality = model_error(&cl);
            r->agreement = cl.result.best_hypothesis == cpu.result.best_hypothesis &&
                                   memcmp(cl.result.model, cpu.result.model,
                                          sizeof cpu.result.model) == 0
                               ? 1.0
                               : 0.0;
        }
    }
    match_set_free(&data);
    return rc;
}

int bench_geometry_cases(const bench_config *config, const bench_contexts *contexts,
                         bench_result *results, int max, int *count)
{
    for (size_t i = 0; i < sizeof ransac_cases / sizeof ransac_cases[0]; i++) {
        const ransac_case *c = &ransac_cases[i];
        if (!bench_wants(config, "ransac", c->name, c->quick))
            continue;
        if (*count >= max)
            return cli_fail("too many bench cases");
        if (bench_ransac(config, contexts, c, &results[*count]))
            return 1;
        bench_print_row(&results[(*count)++]);
    }
    return 0;
}
