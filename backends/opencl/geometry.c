/* OpenCL RANSAC scoring (geometry module): the matches stay on the device
 * for the whole estimation; each batch uploads its samples, solves every
 * hypothesis' minimal model (ransac_solve, one item per hypothesis) and
 * counts inliers (ransac_score_h / _f, one work group per hypothesis), then
 * reads the counts and models back. */
#include "opencl.h"

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
} cl_ransac_plan;

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

static void release_plan(cl_ransac_plan *plan)
{
    pv_cl_release(&plan->points);
    pv_cl_release(&plan->samples);
    pv_cl_release(&plan->models);
    pv_cl_release(&plan->counts);
    free(plan);
}

static pv_status cl_ransac_create(pv_context *ctx, const pv_ransac_job *job, void **out)
{
    cl_ransac_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return pv_fail(ctx, PV_ERR_NOMEM, "ransac: no memory for a plan");
    plan->job = *job;
    plan->job.points = NULL;
    plan->capacity = PV_RANSAC_BATCH;
    const size_t cap = (size_t)plan->capacity;
    const size_t point_bytes = 4 * (size_t)job->count * sizeof(float);
    pv_status status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY, point_bytes, &plan->points);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_ONLY,
                              cap * (size_t)sample_size(job->model) * sizeof(cl_int),
                              &plan->samples);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, cap * 9 * sizeof(float), &plan->models);
    if (status == PV_OK)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, cap * sizeof(cl_int), &plan->counts);
    if (status == PV_OK)
        status = pv_cl_write(ctx, plan->points, 0, point_bytes, job->points);
    if (status == PV_OK)
        status = pv_cl_finish(ctx);
    if (status != PV_OK) {
        release_plan(plan);
        return status;
    }
    *out = plan;
    return PV_OK;
}

static void cl_ransac_destroy(pv_context *ctx, void *opaque)
{
    (void)ctx;
    if (opaque)
        release_plan(opaque);
}

static pv_status launch_solve(pv_context *ctx, cl_ransac_plan *plan, cl_int hypotheses)
{
    cl_kernel kernel;
    cl_int model = plan->job.model == PV_GEOMETRY_HOMOGRAPHY ? 0 : 1;
    pv_status status = geometry_kernel(ctx, "ransac_solve", &kernel);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, 0, sizeof(cl_mem), &plan->points);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, 1, sizeof(cl_mem), &plan->samples);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, 2, sizeof hypotheses, &hypotheses);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, 3, sizeof model, &model);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, 4, sizeof(cl_mem), &plan->models);
    size_t local = 64, global = (size_t)hypotheses;
    return status == PV_OK ? pv_cl_launch(ctx, kernel, 1, &global, &local) : status;
}

static pv_status launch_score(pv_context *ctx, cl_ransac_plan *plan, cl_int hypotheses)
{
    const pv_ransac_job *job = &plan->job;
    const int homography = job->model == PV_GEOMETRY_HOMOGRAPHY;
    cl_kernel kernel;
    cl_int count = job->count;
    pv_status status = geometry_kernel(ctx, homography ? "ransac_score_h" : "ransac_score_f",
                                       &kernel);
    cl_uint arg = 0;
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, arg++, sizeof(cl_mem), &plan->points);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, arg++, sizeof count, &count);
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, arg++, sizeof(cl_mem), &plan->models);
    if (homography) {
        /* The same float product the CPU backend forms. */
        float limit = job->threshold2 * job->scale2_sq;
        if (status == PV_OK)
            status = pv_cl_arg(ctx, kernel, arg++, sizeof limit, &limit);
    } else {
        const float *terms[] = {&job->threshold2, &job->scale1_sq, &job->scale2_sq};
        for (int i = 0; i < 3 && status == PV_OK; i++)
            status = pv_cl_arg(ctx, kernel, arg++, sizeof(float), terms[i]);
    }
    if (status == PV_OK)
        status = pv_cl_arg(ctx, kernel, arg++, sizeof(cl_mem), &plan->counts);
    size_t local = (size_t)pv_cl_param(ctx, "geometry", "GEOM_WG", 256);
    size_t global = local * (size_t)hypotheses;
    return status == PV_OK ? pv_cl_launch(ctx, kernel, 1, &global, &local) : status;
}

static pv_status score_on_device(pv_context *ctx, cl_ransac_plan *plan, const int *samples,
                                 int hypotheses, float *models, int *counts)
{
    if (hypotheses > plan->capacity)
        return pv_fail(ctx, PV_ERR_INVALID, "ransac: %d hypotheses in one batch, at most %d",
                       hypotheses, plan->capacity);
    size_t sample_bytes = (size_t)hypotheses * (size_t)sample_size(plan->job.model) * sizeof(cl_int);
    pv_status status = pv_cl_write(ctx, plan->samples, 0, sample_bytes, samples);
    if (status == PV_OK)
        status = launch_solve(ctx, plan, hypotheses);
    if (status == PV_OK)
        status = launch_score(ctx, plan, hypotheses);
    if (status == PV_OK)
        status = pv_cl_read(ctx, plan->counts, 0, (size_t)hypotheses * sizeof(cl_int), counts);
    if (status == PV_OK)
        status = pv_cl_read(ctx, plan->models, 0, (size_t)hypotheses * 9 * sizeof(float), models);
    return status;
}

static pv_status cl_ransac_score(pv_context *ctx, void *opaque, const int *samples, int hypotheses,
                                 float *models, int *counts)
{
    pv_status status = score_on_device(ctx, opaque, samples, hypotheses, models, counts);
    pv_status finished = pv_cl_finish(ctx);
    return status != PV_OK ? status : finished;
}

const pv_geometry_ops pv_cl_geometry_ops = {
    .ransac_create = cl_ransac_create,
    .ransac_destroy = cl_ransac_destroy,
    .ransac_score = cl_ransac_score,
};
