/* Tests of device groups: creation and its argument checks, and the group
 * operations (OCT sequences, flow sequences, BP tiles) giving exactly the
 * results of running their items one by one on a single context, and SGM's
 * overlapping bands within multi.h's tolerance of one context's result.  On the
 * OpenCL side the group holds the same device twice (two contexts, two
 * queues), which exercises the threads on a one-device host. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ND 64   /* depth */
#define NA 48   /* A-lines */
#define NB 40   /* B-scans */
#define TARGETS 3

#define FLOW_N 16
#define FRAMES 4

#define BP_W 64
#define BP_H 48

typedef struct fixture {
    pv_volume reference;
    pv_volume targets[TARGETS];
    pv_volume frames[FRAMES];
    pv_image left, right;
} fixture;

static fixture fx;

/* ================================================================ inputs */

/* Same seed, so one scene and one reference; the motion differs per target. */
static int make_oct_inputs(void)
{
    pv_octreg_synth_params p;
    tu_octreg_synth_params(&p, ND, NA, NB, 11);
    for (int i = 0; i < TARGETS; i++) {
        p.start[0] = 0.5 * i;
        p.start[1] = 1.0 + i;
        p.integer_shifts = i % 2;
        if (pv_volume_alloc(&fx.targets[i], ND, NA, NB) != PV_OK)
            return -1;
        if (i == 0 && pv_volume_alloc(&fx.reference, ND, NA, NB) != PV_OK)
            return -1;
        pv_volume scratch;
        if (pv_volume_alloc(&scratch, ND, NA, NB) != PV_OK)
            return -1;
        pv_status status = pv_octreg_synthesize(&p, i == 0 ? &fx.reference : &scratch,
                                                &fx.targets[i], NULL);
        pv_volume_free(&scratch);
        if (status != PV_OK)
            return -1;
    }
    return 0;
}

/* A smooth texture moving a fraction of a voxel per frame. */
static float moving_texture(int x, int y, int z, int t)
{
    float fx_ = (float)x - 0.4f * (float)t, fy = (float)y + 0.3f * (float)t;
    float fz = (float)z - 0.2f * (float)t;
    return 0.5f + 0.2f * sinf(0.45f * fx_) * cosf(0.35f * fy) + 0.15f * sinf(0.3f * fz + 0.2f * fx_);
}

static int make_frames(void)
{
    for (int t = 0; t < FRAMES; t++) {
        if (pv_volume_alloc(&fx.frames[t], FLOW_N, FLOW_N, FLOW_N) != PV_OK)
            return -1;
        for (int z = 0; z < FLOW_N; z++)
            for (int y = 0; y < FLOW_N; y++)
                for (int x = 0; x < FLOW_N; x++)
                    fx.frames[t].data[x + y * fx.frames[t].stride_y + z * fx.frames[t].stride_z] =
                        moving_texture(x, y, z, t);
    }
    return 0;
}

/* Random texture; the right view sees it 3 pixels to the left. */
static int make_pair(void)
{
    if (pv_image_alloc(&fx.left, BP_W, BP_H, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&fx.right, BP_W, BP_H, PV_PIXEL_U8) != PV_OK)
        return -1;
    tu_fill_random(&fx.left, 5);
    unsigned char *l = fx.left.data, *r = fx.right.data;
    for (int y = 0; y < BP_H; y++)
        for (int x = 0; x < BP_W; x++)
            r[y * BP_W + x] = l[y * BP_W + (x + 3 < BP_W ? x + 3 : BP_W - 1)];
    return 0;
}

static int setup(void **state)
{
    memset(&fx, 0, sizeof fx);
    if (tu_group_setup(state) != 0)
        return -1;
    return make_oct_inputs() || make_frames() || make_pair() ? -1 : 0;
}

static int teardown(void **state)
{
    pv_volume_free(&fx.reference);
    for (int i = 0; i < TARGETS; i++)
        pv_volume_free(&fx.targets[i]);
    for (int t = 0; t < FRAMES; t++)
        pv_volume_free(&fx.frames[t]);
    image_list_free(&fx.left, &fx.right, NULL);
    return tu_group_teardown(state);
}

/* ================================================================ groups */

/* The OpenCL device the tests' single context runs on: the first GPU, else
 * the first device (the OPENCL backend's own choice). */
static int opencl_index(void)
{
    pv_device_info devices[64];
    int count = 0;
    if (pv_device_list(devices, 64, &count) != PV_OK || count < 1)
        return -1;
    for (int i = 0; i < count && i < 64; i++)
        if (devices[i].type == PV_DEVICE_GPU)
            return i;
    return 0;
}

static pv_device_group *cpu_group(void)
{
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_CPU;
    pv_device_group *group = NULL;
    assert_int_equal(pv_device_group_create(&group, &options, NULL, 0), PV_OK);
    return group;
}

/* The OpenCL device twice, or NULL (skip) without OpenCL. */
static pv_device_group *opencl_group(void)
{
    if (!tu_opencl)
        return NULL;
    int index = opencl_index();
    int twice[2] = {index, index};
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    pv_device_group *group = NULL;
    assert_int_equal(pv_device_group_create(&group, &options, twice, 2), PV_OK);
    if (pv_context_backend(pv_device_group_context(group, 0)) != PV_BACKEND_OPENCL) {
        pv_device_group_destroy(group);   /* PARVIS_BACKEND=cpu */
        return NULL;
    }
    return group;
}

/* A check of a group against a single context of its backend. */
typedef void group_check(pv_device_group *group, pv_context *single);

/* check on the group of the backend *state names (the OpenCL one skipped
 * without OpenCL) against that backend's single context. */
static void check_on_backend(void **state, group_check *check)
{
    const int cpu = *(const pv_backend_kind *)*state == PV_BACKEND_CPU;
    pv_device_group *group = cpu ? cpu_group() : opencl_group();
    if (!group)
        skip();
    check(group, cpu ? tu_cpu : tu_opencl);
    pv_device_group_destroy(group);
}

static void expect_invalid(pv_status status)
{
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(strlen(pv_last_error()) > 0);
}

static void test_cpu_group_is_one_context(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    assert_int_equal(pv_device_group_size(group), 1);
    pv_context *ctx = pv_device_group_context(group, 0);
    assert_non_null(ctx);
    assert_int_equal(pv_context_backend(ctx), PV_BACKEND_CPU);
    assert_null(pv_device_group_context(group, 1));
    assert_null(pv_device_group_context(group, -1));
    assert_int_equal(pv_device_group_size(NULL), 0);
    pv_timing t;
    assert_int_equal(pv_device_group_last_timing(group, 0, &t), PV_OK);
    assert_int_equal(pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &t), PV_OK);
    expect_invalid(pv_device_group_last_timing(group, 1, &t));
    expect_invalid(pv_device_group_last_timing(group, 0, NULL));
    expect_invalid(pv_device_group_last_timing(NULL, 0, &t));
    assert_int_equal(pv_device_group_last_items(group, 0), 0);
    assert_int_equal(pv_device_group_last_items(group, 5), -1);
    pv_device_group_destroy(group);
    pv_device_group_destroy(NULL);
}

static void test_create_bad_arguments(void **state)
{
    (void)state;
    pv_device_group *group = (pv_device_group *)&fx;   /* must become NULL or stay */
    int zero = 0, negative = -1;
    pv_context_options cpu;
    pv_context_options_default(&cpu);
    cpu.backend = PV_BACKEND_CPU;
    expect_invalid(pv_device_group_create(NULL, NULL, NULL, 0));
    expect_invalid(pv_device_group_create(&group, NULL, &zero, -1));
    expect_invalid(pv_device_group_create(&group, NULL, &zero, PV_DEVICE_GROUP_MAX + 1));
    expect_invalid(pv_device_group_create(&group, NULL, NULL, 1));
    expect_invalid(pv_device_group_create(&group, &cpu, &zero, 1));
    expect_invalid(pv_device_group_create(&group, NULL, &negative, 1));
    assert_true(strstr(pv_last_error(), "device_indices[0]") != NULL);
    assert_true(group == NULL || group == (pv_device_group *)&fx);
    if (tu_skip_opencl())
        return;   /* counting devices wakes the ICD loader */
    int beyond = 4096;
    expect_invalid(pv_device_group_create(&group, NULL, &beyond, 1));
    assert_true(strstr(pv_last_error(), "4096") != NULL);
    assert_null(group);
}

static void test_opencl_groups(void **state)
{
    (void)state;
    if (!tu_opencl)
        skip();
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    pv_device_group *all = NULL;
    assert_int_equal(pv_device_group_create(&all, &options, NULL, 0), PV_OK);
    int size = pv_device_group_size(all);
    assert_true(size >= 1);
    for (int i = 0; i < size; i++)
        assert_int_equal(pv_context_backend(pv_device_group_context(all, i)), PV_BACKEND_OPENCL);
    print_message("  all devices of the platform: %d\n", size);
    pv_device_group_destroy(all);
    pv_device_group *twice = opencl_group();
    assert_non_null(twice);
    assert_int_equal(pv_device_group_size(twice), 2);
    assert_ptr_not_equal(pv_device_group_context(twice, 0), pv_device_group_context(twice, 1));
    pv_device_group_destroy(twice);
}

/* ================================================================ octreg */

static void register_one_by_one(pv_context *ctx, pv_octreg_shift *shifts, pv_octreg_info *infos)
{
    pv_octreg_plan *plan = NULL;
    assert_int_equal(pv_octreg_plan_create(ctx, &fx.reference, NULL, &plan), PV_OK);
    for (int i = 0; i < TARGETS; i++)
        assert_int_equal(pv_octreg_register(plan, &fx.targets[i], shifts + i * NB, &infos[i]),
                         PV_OK);
    pv_octreg_plan_destroy(plan);
}

static void check_octreg_sequence(pv_device_group *group, pv_context *single)
{
    pv_octreg_shift expected[TARGETS * NB], found[TARGETS * NB];
    pv_octreg_info expected_info[TARGETS], found_info[TARGETS];
    memset(expected, 0, sizeof expected);
    memset(found, 0, sizeof found);
    register_one_by_one(single, expected, expected_info);
    assert_int_equal(pv_octreg_register_sequence(group, &fx.reference, fx.targets, TARGETS, NULL,
                                                 found, found_info),
                     PV_OK);
    assert_memory_equal(found, expected, sizeof found);
    assert_memory_equal(found_info, expected_info, sizeof found_info);
    int items = 0;
    for (int i = 0; i < pv_device_group_size(group); i++)
        items += pv_device_group_last_items(group, i);
    assert_int_equal(items, TARGETS);
    assert_int_equal(pv_device_group_last_items(group, PV_DEVICE_GROUP_WHOLE), TARGETS);
    pv_timing whole;
    assert_int_equal(pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &whole), PV_OK);
    assert_true(whole.total_ms > 0.0);
}

static void test_octreg_sequence(void **state)
{
    check_on_backend(state, check_octreg_sequence);
}

/* A target with a NaN fails its item; the error names it; no output moves. */
static void check_octreg_failure(pv_device_group *group)
{
    pv_volume bad[TARGETS];
    memcpy(bad, fx.targets, sizeof bad);
    pv_volume poisoned;
    assert_int_equal(pv_volume_alloc(&poisoned, ND, NA, NB), PV_OK);
    memcpy(poisoned.data, fx.targets[1].data, sizeof(float) * ND * NA * NB);
    poisoned.data[1234] = NAN;
    bad[1] = poisoned;
    pv_octreg_shift shifts[TARGETS * NB];
    memset(shifts, 0x5a, sizeof shifts);
    pv_octreg_shift untouched[TARGETS * NB];
    memcpy(untouched, shifts, sizeof shifts);
    pv_status status =
        pv_octreg_register_sequence(group, &fx.reference, bad, TARGETS, NULL, shifts, NULL);
    assert_int_equal(status, PV_ERR_INVALID);
    assert_true(strstr(pv_last_error(), "item 1") != NULL);
    assert_memory_equal(shifts, untouched, sizeof shifts);
    pv_volume_free(&poisoned);
}

static void test_octreg_failure_propagates(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    check_octreg_failure(group);
    pv_device_group_destroy(group);
    group = opencl_group();
    if (group) {
        check_octreg_failure(group);
        pv_device_group_destroy(group);
    }
}

static void test_octreg_sequence_bad_input(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    pv_octreg_shift shifts[TARGETS * NB];
    memset(shifts, 0x33, sizeof shifts);
    pv_octreg_shift untouched[TARGETS * NB];
    memcpy(untouched, shifts, sizeof shifts);
    expect_invalid(pv_octreg_register_sequence(NULL, &fx.reference, fx.targets, TARGETS, NULL,
                                               shifts, NULL));
    expect_invalid(pv_octreg_register_sequence(group, NULL, fx.targets, TARGETS, NULL, shifts,
                                               NULL));
    expect_invalid(pv_octreg_register_sequence(group, &fx.reference, NULL, TARGETS, NULL, shifts,
                                               NULL));
    expect_invalid(pv_octreg_register_sequence(group, &fx.reference, fx.targets, 0, NULL, shifts,
                                               NULL));
    expect_invalid(pv_octreg_register_sequence(group, &fx.reference, fx.targets, TARGETS, NULL,
                                               NULL, NULL));
    pv_volume wrong[TARGETS];
    memcpy(wrong, fx.targets, sizeof wrong);
    wrong[2].nz = NB - 1;
    expect_invalid(pv_octreg_register_sequence(group, &fx.reference, wrong, TARGETS, NULL, shifts,
                                               NULL));
    assert_true(strstr(pv_last_error(), "targets[2]") != NULL);
    pv_octreg_options options;
    pv_octreg_options_default(&options);
    options.stripes = 1;
    expect_invalid(pv_octreg_register_sequence(group, &fx.reference, fx.targets, TARGETS,
                                               &options, shifts, NULL));
    assert_memory_equal(shifts, untouched, sizeof shifts);
    pv_device_group_destroy(group);
}

/* ================================================================== flow */

static void small_flow_params(pv_flow_params *p)
{
    pv_flow_params_default(p);
    p->alpha = 1e-3f;   /* the texture's gradients are ~0.1 */
    p->rho = 1.0f;
    p->kernel_size = 5;
    p->warps = 2;
    p->iterations = 10;
}

static void alloc_fields(pv_flow_field *fields, int count)
{
    for (int i = 0; i < count; i++)
        assert_int_equal(pv_flow_field_alloc(&fields[i], FLOW_N, FLOW_N, FLOW_N), PV_OK);
}

static void free_fields(pv_flow_field *fields, int count)
{
    for (int i = 0; i < count; i++)
        pv_flow_field_free(&fields[i]);
}

static void assert_fields_equal(const pv_flow_field *a, const pv_flow_field *b)
{
    size_t bytes = sizeof(float) * FLOW_N * FLOW_N * FLOW_N;
    assert_memory_equal(a->u.data, b->u.data, bytes);
    assert_memory_equal(a->v.data, b->v.data, bytes);
    assert_memory_equal(a->w.data, b->w.data, bytes);
}

static void check_flow_sequence(pv_device_group *group, pv_context *single)
{
    pv_flow_params params;
    small_flow_params(&params);
    pv_flow_field expected[FRAMES - 1], found[FRAMES - 1];
    alloc_fields(expected, FRAMES - 1);
    alloc_fields(found, FRAMES - 1);
    pv_flow_plan *plan = NULL;
    assert_int_equal(pv_flow_plan_create(single, FLOW_N, FLOW_N, FLOW_N, &params, &plan), PV_OK);
    for (int i = 0; i < FRAMES - 1; i++)
        assert_int_equal(pv_flow_plan_run(plan, &fx.frames[i], &fx.frames[i + 1], &expected[i]),
                         PV_OK);
    pv_flow_plan_destroy(plan);
    assert_int_equal(pv_flow3d_sequence(group, fx.frames, FRAMES, &params, found), PV_OK);
    for (int i = 0; i < FRAMES - 1; i++)
        assert_fields_equal(&found[i], &expected[i]);
    /* the motion is there: about +0.4 voxel in x (MOVING(x + w) ~ FIXED(x)) */
    float u = found[0].u.data[FLOW_N / 2 + FLOW_N * (FLOW_N / 2 + FLOW_N * (FLOW_N / 2))];
    print_message("  centre u %.3f\n", (double)u);
    assert_true(u > 0.05f && u < 0.8f);
    free_fields(expected, FRAMES - 1);
    free_fields(found, FRAMES - 1);
}

static void test_flow_sequence(void **state)
{
    check_on_backend(state, check_flow_sequence);
}

static void test_flow_sequence_failure_and_bad_input(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    pv_flow_params params;
    small_flow_params(&params);
    pv_flow_field flows[FRAMES - 1];
    alloc_fields(flows, FRAMES - 1);
    expect_invalid(pv_flow3d_sequence(NULL, fx.frames, FRAMES, &params, flows));
    expect_invalid(pv_flow3d_sequence(group, fx.frames, 1, &params, flows));
    expect_invalid(pv_flow3d_sequence(group, NULL, FRAMES, &params, flows));
    expect_invalid(pv_flow3d_sequence(group, fx.frames, FRAMES, &params, NULL));
    pv_flow_field shared[FRAMES - 1];
    memcpy(shared, flows, sizeof shared);
    shared[2].v = shared[0].u;   /* two threads would write one volume */
    expect_invalid(pv_flow3d_sequence(group, fx.frames, FRAMES, &params, shared));
    assert_true(strstr(pv_last_error(), "share memory") != NULL);
    pv_flow_field into_frame[FRAMES - 1];
    memcpy(into_frame, flows, sizeof into_frame);
    into_frame[1].w = fx.frames[3];
    expect_invalid(pv_flow3d_sequence(group, fx.frames, FRAMES, &params, into_frame));
    /* a NaN in the last frame fails the last pair */
    pv_volume frames[FRAMES];
    memcpy(frames, fx.frames, sizeof frames);
    pv_volume poisoned;
    assert_int_equal(pv_volume_alloc(&poisoned, FLOW_N, FLOW_N, FLOW_N), PV_OK);
    poisoned.data[77] = INFINITY;
    frames[FRAMES - 1] = poisoned;
    assert_int_equal(pv_flow3d_sequence(group, frames, FRAMES, &params, flows), PV_ERR_INVALID);
    assert_true(strstr(pv_last_error(), "item 2") != NULL);
    pv_volume_free(&poisoned);
    free_fields(flows, FRAMES - 1);
    pv_device_group_destroy(group);
}

/* ==================================================================== BP */

static void small_bp_params(pv_bp_params *p)
{
    pv_bp_params_default(p);
    p->ndisp = 8;
    p->levels = 3;
    p->iterations = 5;
    p->tile_padding = 8;
}

static void check_bp_group(pv_device_group *group, pv_context *single, const pv_bp_params *params,
                           const pv_bp_params *single_params)
{
    pv_image expected, found;
    assert_int_equal(pv_image_alloc(&expected, BP_W, BP_H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&found, BP_W, BP_H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_stereo_bp(single, &fx.left, &fx.right, single_params, &expected), PV_OK);
    assert_int_equal(pv_stereo_bp_group(group, &fx.left, &fx.right, params, &found), PV_OK);
    assert_memory_equal(found.data, expected.data, sizeof(float) * BP_W * BP_H);
    int near_three = 0;
    for (int i = 0; i < BP_W * BP_H; i++)
        near_three += fabsf(((float *)found.data)[i] - 3.0f) < 0.5f;
    assert_true(near_three > BP_W * BP_H / 2);
    image_list_free(&expected, &found, NULL);
}

static void test_bp_group_cpu(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    pv_bp_params params;
    small_bp_params(&params);
    check_bp_group(group, tu_cpu, &params, &params);   /* one member: no split */
    params.tile_width = 24;
    params.tile_height = 20;
    check_bp_group(group, tu_cpu, &params, &params);
    pv_device_group_destroy(group);
}

static void test_bp_group_opencl(void **state)
{
    (void)state;
    pv_device_group *group = opencl_group();
    if (!group)
        skip();
    pv_bp_params params, banded;
    small_bp_params(&params);
    banded = params;
    banded.tile_height = BP_H / 2;   /* the group's own split: one band per member */
    check_bp_group(group, tu_opencl, &params, &banded);
    params.tile_width = 24;
    params.tile_height = 20;
    check_bp_group(group, tu_opencl, &params, &params);
    assert_true(pv_device_group_last_items(group, PV_DEVICE_GROUP_WHOLE) == 9);
    pv_device_group_destroy(group);
}

static void test_bp_group_bad_input(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    pv_bp_params params;
    small_bp_params(&params);
    pv_image out;
    assert_int_equal(pv_image_alloc(&out, BP_W, BP_H, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&out, 42.0f);
    expect_invalid(pv_stereo_bp_group(NULL, &fx.left, &fx.right, &params, &out));
    expect_invalid(pv_stereo_bp_group(group, &fx.left, &fx.right, NULL, &out));
    expect_invalid(pv_stereo_bp_group(group, &fx.left, NULL, &params, &out));
    params.ndisp = 1;
    expect_invalid(pv_stereo_bp_group(group, &fx.left, &fx.right, &params, &out));
    assert_true(tu_image_all_equal(&out, 42.0f));
    pv_image_free(&out);
    pv_device_group_destroy(group);
}

/* =================================================================== SGM */

/* multi.h's tolerance: integer disparities of a banded run identical to
 * one context's on at least this share of the pixels. */
#define SGM_GROUP_SAME_SHARE 0.99

static void read_tsukuba(pv_image *left, pv_image *right)
{
    assert_int_equal(pv_image_read(tu_data_path("stereo/tsukuba/left.pgm"), PV_PIXEL_U8, left),
                     PV_OK);
    assert_int_equal(pv_image_read(tu_data_path("stereo/tsukuba/right.pgm"), PV_PIXEL_U8, right),
                     PV_OK);
}

static void sgm_test_params(pv_sgm_params *p)
{
    pv_sgm_params_default(p);
    p->ndisp = 16;
    p->subpixel = 0;
}

/* The share of pixels with the same value (both INFINITY counts). */
static double same_share(const pv_image *a, const pv_image *b)
{
    size_t same = 0, total = (size_t)a->width * (size_t)a->height;
    for (size_t i = 0; i < total; i++)
        same += ((const float *)a->data)[i] == ((const float *)b->data)[i];
    return (double)same / (double)total;
}

/* A group's banded map against one context's, with the share printed for
 * the record; a one-member group must match exactly. */
static void check_sgm_group(pv_device_group *group, pv_context *single)
{
    pv_image left, right, expected, found;
    read_tsukuba(&left, &right);
    pv_sgm_params params;
    sgm_test_params(&params);
    assert_int_equal(pv_image_alloc(&expected, left.width, left.height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&found, left.width, left.height, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_stereo_sgm(single, &left, &right, &params, &expected), PV_OK);
    assert_int_equal(pv_stereo_sgm_group(group, &left, &right, &params, &found), PV_OK);
    double share = same_share(&found, &expected);
    printf("sgm group of %d: %.4f%% of pixels as one context\n", pv_device_group_size(group),
           100.0 * share);
    if (pv_device_group_size(group) == 1)
        assert_true(share == 1.0);
    else
        assert_true(share >= SGM_GROUP_SAME_SHARE);
    assert_int_equal(pv_device_group_last_items(group, PV_DEVICE_GROUP_WHOLE),
                     pv_device_group_size(group));
    image_list_free(&left, &right, &expected, &found, NULL);
}

static void test_sgm_group_cpu(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    check_sgm_group(group, tu_cpu);
    pv_device_group_destroy(group);
}

static void test_sgm_group_opencl(void **state)
{
    (void)state;
    pv_device_group *group = opencl_group();
    if (!group)
        skip();
    check_sgm_group(group, tu_opencl);
    pv_device_group_destroy(group);
}

static void test_sgm_group_bad_input(void **state)
{
    (void)state;
    pv_device_group *group = cpu_group();
    pv_sgm_params params;
    sgm_test_params(&params);
    pv_image out, small;
    assert_int_equal(pv_image_alloc(&out, BP_W, BP_H, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&small, BP_W / 2, BP_H, PV_PIXEL_F32), PV_OK);
    tu_fill_image(&out, 42.0f);
    expect_invalid(pv_stereo_sgm_group(NULL, &fx.left, &fx.right, &params, &out));
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, &fx.right, NULL, &out));
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, NULL, &params, &out));
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, &fx.right, &params, &small));
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, &fx.right, &params, &fx.left));
    params.ndisp = 0;
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, &fx.right, &params, &out));
    sgm_test_params(&params);
    params.paths = 6;
    expect_invalid(pv_stereo_sgm_group(group, &fx.left, &fx.right, &params, &out));
    assert_true(tu_image_all_equal(&out, 42.0f));
    image_list_free(&out, &small, NULL);
    pv_device_group_destroy(group);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_group_is_one_context),
        cmocka_unit_test(test_create_bad_arguments),
        cmocka_unit_test(test_opencl_groups),
        TU_ON_BOTH(test_octreg_sequence),
        cmocka_unit_test(test_octreg_failure_propagates),
        cmocka_unit_test(test_octreg_sequence_bad_input),
        TU_ON_BOTH(test_flow_sequence),
        cmocka_unit_test(test_flow_sequence_failure_and_bad_input),
        cmocka_unit_test(test_bp_group_cpu),
        cmocka_unit_test(test_bp_group_opencl),
        cmocka_unit_test(test_bp_group_bad_input),
        cmocka_unit_test(test_sgm_group_cpu),
        cmocka_unit_test(test_sgm_group_opencl),
        cmocka_unit_test(test_sgm_group_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
