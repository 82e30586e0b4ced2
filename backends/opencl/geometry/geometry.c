/* OpenCL RANSAC scoring (geometry module): the matches are uploaded once
 * per estimation and stay on the device; each batch uploads its samples,
 * solves every hypothesis' minimal model (ransac_solve, one item per
 * hypothesis) and counts inliers (ransac_score_h / _f, one work group per
 * hypothesis), then reads the counts and models back.
 *
 * The device buffers are the context's scratch buffers (kept between
 * calls, grown when a call has more matches), so a call allocates nothing
 * on the device; a batch queues its upload, both kernels and both
 * read-backs without waiting and synchronises once. */
#include "../opencl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default geometry_defaults[] = {
    {"GEOM_WG", 256},
};

const pv_cl_param_family pv_cl_params_geometry = {
    "geometry", geometry_defaults, sizeof geometry_defaults / sizeof geometry_defaults[0]};

typedef struct cl_ransac_plan {
    pv_ransac_job job;       /* points not kept: they live in `points` */
    int capacity;            /* hypotheses the per-batch buffers hold */
    cl_mem points;           /* count float4: x1, y1, x2, y2 */
    cl_mem samples, models, counts;
} cl_ransac_plan;            /* the cl_mem are the context's scratch buffers: not released here */

static int sample_size(pv_geometry_model model)
{
    return model == PV_GEOMETRY_HOMOGRAPHY ? PV_HOMOGRAPHY_SAMPLE : PV_FUNDAMENTAL_SAMPLE;
}

/* Build options: the launch parameters, and correctly rounded division
 * where the device offers it, so the solver divides as the CPU does. */
static pv_status geometry_kernel(pv_context *ctx, const char *name, cl_kernel *kernel)
{
    char options[512] = "";
    pv_status status = pv_cl_param_defines(ctx, "geometry", options, sizeof options);
    cl_device_fp_config fp = 0;
    if (status == PV_OK &&
        clGetDeviceInfo(pv_cl_device(ctx), CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) ==
            CL_SUCCESS &&
        (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)) {
        size_t used = strlen(options);
        snprintf(options + used, sizeof options - used, " -cl-fp32-correctly-rounded-divide-sqrt");
    }
    return status == PV_OK ? pv_cl_kernel(ctx, "geometry", options, name, kernel) : status;
}

static void cl_ransac_destroy(pv_context *ctx, void *opaque)
{
    /* The points' write reads the front end's array, which goes after
     * this: it must be done even when no batch waited for it (a failure
     * between create and the first batch).  The queue is idle otherwise. */
    (void)pv_cl_finish(ctx);
    free(opaque);
}

static pv_status cl_ransac_create(pv_context *ctx, const pv_ransac_job *job, void **out)
{
    cl_ransac_plan *plan = pv_plan_new(ctx, sizeof *plan, "ransac plan");
    if (!plan)
        return PV_ERR_NOMEM;
    plan->job = *job;
    plan->job.points = NULL;
    plan->capacity = PV_RANSAC_BATCH;
    const size_t cap = (size_t)plan->capacity;
    const size_t point_bytes = 4 * (size_t)job->count * sizeof(float);
    /* The samples' slot is sized for F's 8 indices, so H and F share it. */
    pv_status status = pv_cl_scratch(ctx, "geometry.points", point_bytes, &plan->points);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "geometry.samples", cap * PV_FUNDAMENTAL_SAMPLE * sizeof(cl_int),
                               &plan->samples);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "geometry.models", cap * 9 * sizeof(float), &plan->models);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "geometry.counts", cap * sizeof(cl_int), &plan->counts);
    /* In queue order before the first batch's kernels, and not waited for
     * (a blocking write cost a round trip per estimation): the front end's
     * points stay as they are until the estimation ends, after the first
     * batch's wait. */
    if (status == PV_OK)
        status = pv_cl_write_async(ctx, plan->points, 0, point_bytes, job->points);
    return pv_plan_hand_over(ctx, status, plan, cl_ransac_destroy, out);
}

static pv_status launch_solve(pv_context *ctx, cl_ransac_plan *plan, cl_int hypotheses)
{
    cl_kernel kernel;
    cl_int model = plan->job.model == PV_GEOMETRY_HOMOGRAPHY ? 0 : 1;
    pv_status status = geometry_kernel(ctx, "ransac_solve", &kernel);
    const pv_cl_kernel_arg args[] = {PV_CL_ARG(plan->points), PV_CL_ARG(plan->samples),
                                     PV_CL_ARG(hypotheses), PV_CL_ARG(model),
                                     PV_CL_ARG(plan->models)};
    size_t local = 64, global = (size_t)hypotheses;
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, PV_CL_ARG_COUNT(args), 1,
                                               &global, &local)
                           : status;
}

static pv_status launch_score(pv_context *ctx, cl_ransac_plan *plan, cl_int hypotheses)
{
    const pv_ransac_job *job = &plan->job;
    const int homography = job->model == PV_GEOMETRY_HOMOGRAPHY;
    cl_kernel kernel;
    cl_int count = job->count;
    pv_status status = geometry_kernel(ctx, homography ? "ransac_score_h" : "ransac_score_f",
                                       &kernel);
    /* The homography's limit: the same float product the CPU backend forms. */
    float limit = job->threshold2 * job->scale2_sq;
    const pv_cl_kernel_arg homography_args[] = {
        PV_CL_ARG(plan->points), PV_CL_ARG(count), PV_CL_ARG(plan->models), PV_CL_ARG(limit),
        PV_CL_ARG(plan->counts)};
    const pv_cl_kernel_arg fundamental_args[] = {
        PV_CL_ARG(plan->points), PV_CL_ARG(count), PV_CL_ARG(plan->models),
        PV_CL_ARG(job->threshold2), PV_CL_ARG(job->scale1_sq), PV_CL_ARG(job->scale2_sq),
        PV_CL_ARG(plan->counts)};
    size_t local = (size_t)pv_cl_param(ctx, "geometry", "GEOM_WG", 256);
    size_t global = local * (size_t)hypotheses;
    if (status != PV_OK)
        return status;
    return homography ? pv_cl_launch_args(ctx, kernel, homography_args,
                                          PV_CL_ARG_COUNT(homography_args), 1, &global, &local)
                      : pv_cl_launch_args(ctx, kernel, fundamental_args,
                                          PV_CL_ARG_COUNT(fundamental_args), 1, &global, &local);
}

static pv_status score_on_device(pv_context *ctx, cl_ransac_plan *plan, const int *samples,
                                 int hypotheses, float *models, int *counts)
{
    if (hypotheses > plan->capacity)
        return pv_fail(ctx, PV_ERR_INVALID, "ransac: %d hypotheses in one batch, at most %d",
                       hypotheses, plan->capacity);
    size_t sample_bytes = (size_t)hypotheses * (size_t)sample_size(plan->job.model) * sizeof(cl_int);
    /* Nothing waits until cl_ransac_score's finish: samples stays as it is
     * until then, and models and counts become valid then. */
    pv_status status = pv_cl_write_async(ctx, plan->samples, 0, sample_bytes, samples);
    if (status == PV_OK)
        status = launch_solve(ctx, plan, hypotheses);
    if (status == PV_OK)
        status = launch_score(ctx, plan, hypotheses);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->counts, 0, (size_t)hypotheses * sizeof(cl_int),
                                  counts);
    if (status == PV_OK)
        status = pv_cl_read_async(ctx, plan->models, 0, (size_t)hypotheses * 9 * sizeof(float),
                                  models);
    return status;
}

static pv_status cl_ransac_score(pv_context *ctx, void *opaque, const int *samples, int hypotheses,
                                 float *models, int *counts)
{
    pv_status status = score_on_device(ctx, opaque, samples, hypotheses, models, counts);
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}

const pv_geometry_ops pv_cl_geometry_ops = {PV_GEOMETRY_SLOTS(PV_OPS_BIND, cl_)};
