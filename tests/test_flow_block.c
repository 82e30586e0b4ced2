/* Tests of the OpenCL flow's blocked Jacobi iterations (FLOW_JACOBI_BLOCK
 * above 1: several iterations per launch, backends/opencl/flow/flow_block.c
 * and kernels/flow_block.cl):
 *   - bit-identical flow: the same call with the block on and off gives
 *     the same bits, for block depths 2 to 5, tiles smaller than the volume
 *     (halos crossing work groups and z chunks) and larger, sizes that are
 *     not multiples of the tile, flat and thin volumes (nz 1, 3, 4),
 *     iteration counts that leave single steps after the blocks, with and
 *     without the divergence term; the block really ran (the kernel
 *     profile's launch counts: PARVIS_PROFILE=1);
 *   - the paper's setting (5 warps x 50 iterations, 15 taps) with a
 *     pyramid: identical with the block on and off;
 *   - convergence checks: the same result and the same iteration count;
 *   - OpenCL with the block against the CPU backend: max abs difference
 *     within PV_FLOW_TOLERANCE (1e-3 voxel), the flow's documented
 *     tolerance;
 *   - a shape that does not fit the device (a group larger than its
 *     largest, a depth beyond the bound, a zero tile) runs single steps:
 *     the same bits, a log line, no failure. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the scene */

/* A smooth texture with a little noise, and the same texture moved by a
 * constant sub-voxel shift. */
static float texture(double x, double y, double z)
{
    return (float)(0.5 + 0.2 * sin(0.45 * x + 0.3 * y) * cos(0.35 * z + 0.2 * x) +
                   0.1 * sin(0.7 * y - 0.25 * z));
}

typedef struct scene {
    pv_volume fixed, moving;
} scene;

static void scene_make(scene *s, int nx, int ny, int nz)
{
    assert_int_equal(pv_volume_alloc(&s->fixed, nx, ny, nz), PV_OK);
    assert_int_equal(pv_volume_alloc(&s->moving, nx, ny, nz), PV_OK);
    uint32_t seed = 12345u + (uint32_t)(nx * 7 + ny * 11 + nz * 13);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const ptrdiff_t i = x + y * s->fixed.stride_y + z * s->fixed.stride_z;
                const float noise = 0.02f * (tu_rand01(&seed) - 0.5f);
                s->fixed.data[i] = texture(x, y, z) + noise;
                s->moving.data[i] = texture(x - 0.6, y + 0.4, z - (nz > 1 ? 0.3 : 0.0)) + noise;
            }
}

static void scene_free(scene *s)
{
    pv_volume_free(&s->fixed);
    pv_volume_free(&s->moving);
}

static void field_alloc(pv_flow_field *f, const scene *s)
{
    assert_int_equal(pv_flow_field_alloc(f, s->fixed.nx, s->fixed.ny, s->fixed.nz), PV_OK);
}

/* Every bit of the three components the same (fields from
 * pv_flow_field_alloc are dense). */
static void expect_identical(const pv_flow_field *a, const pv_flow_field *b, const char *what)
{
    const pv_volume *va[3] = {&a->u, &a->v, &a->w}, *vb[3] = {&b->u, &b->v, &b->w};
    for (int c = 0; c < 3; c++) {
        const size_t count = (size_t)va[c]->nx * (size_t)va[c]->ny * (size_t)va[c]->nz;
        if (memcmp(va[c]->data, vb[c]->data, count * sizeof(float)) != 0) {
            double diff = 0.0;
            pv_flow_max_difference(a, b, &diff);
            fail_msg("%s: component %d differs with the block on and off (max |diff| %.3g)",
                     what, c, diff);
        }
    }
}

/* ------------------------------------------------- the block's settings */

typedef struct block {
    int depth, tile[3];
    int queue; /* FLOW_BLOCK_TENSOR_QUEUE */
} block;

static void set_block(pv_context *ctx, const block *b)
{
    static const char *const names[5] = {"FLOW_JACOBI_BLOCK", "FLOW_BLOCK_TILE_X",
                                         "FLOW_BLOCK_TILE_Y", "FLOW_BLOCK_TILE_Z",
                                         "FLOW_BLOCK_TENSOR_QUEUE"};
    const int values[5] = {b->depth, b->tile[0], b->tile[1], b->tile[2], b->queue};
    for (int k = 0; k < 5; k++)
        assert_int_equal(pv_tune_set(ctx, "flow", names[k], values[k]), PV_OK);
}

/* What the log said while a profiled context lived: the blocked kernels'
 * launches (from the profile written when the context is released) and
 * whether a shape was refused. */
typedef struct log_seen {
    long block_launches, div_block_launches;
    int refused;
} log_seen;

static long launches_of(const char *line, const char *kernel)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "profile: %s ", kernel);
    long count = 0;
    if (strncmp(line, prefix, strlen(prefix)) == 0 &&
        sscanf(line + strlen(prefix), "%ld launches", &count) == 1)
        return count;
    return 0;
}

static void watch_log(void *user, pv_log_level level, const char *line)
{
    log_seen *seen = user;
    (void)level;
    seen->block_launches += launches_of(line, "flow_jacobi_block");
    seen->div_block_launches += launches_of(line, "flow_jacobi_div_block");
    if (strstr(line, "flow: a Jacobi block") && strstr(line, "single steps"))
        seen->refused = 1;
}

/* pv_flow3d on a fresh OpenCL context with the block b and the kernel
 * profile on; *seen receives what its log said. */
static void run_blocked(const scene *s, const pv_flow_params *params, const block *b,
                        pv_flow_field *flow, log_seen *seen)
{
    memset(seen, 0, sizeof *seen);
    tu_set_env("PARVIS_PROFILE", "1");
    pv_context *ctx = tu_new_opencl_or_skip();
    tu_set_env("PARVIS_PROFILE", NULL);
    assert_int_equal(pv_set_log_callback(watch_log, seen), PV_OK);
    set_block(ctx, b);
    tu_expect_ok(ctx, pv_flow3d(ctx, &s->fixed, &s->moving, params, flow), "blocked flow");
    pv_context_destroy(ctx); /* writes the profile */
    assert_int_equal(pv_set_log_callback(NULL, NULL), PV_OK);
}

/* Blocked launches per warp: count / depth, or (count - 1) / depth with
 * convergence checks, whose last step runs alone. */
static long blocks_expected(const pv_flow_params *p, int depth, int levels)
{
    return (long)levels * p->warps * (p->iterations / depth);
}

static pv_flow_params small_params(float beta)
{
    pv_flow_params p;
    pv_flow_params_default(&p);
    p.alpha = 1e-3f;
    p.beta = beta;
    p.kernel_size = 3;
    p.warps = 2;
    p.iterations = 7;
    return p;
}

/* ------------------------------------------------------------- the tests */

typedef struct block_case {
    int n[3];
    block b;
} block_case;

/* The tensor queue (FLOW_BLOCK_TENSOR_QUEUE) changes only the kernel
 * without the divergence term; half the cases run it. */
static const block_case cases[] = {
    {{21, 13, 9}, {2, {8, 4, 4}, 0}},    /* halos across groups and z chunks */
    {{21, 13, 9}, {3, {5, 3, 2}, 1}},    /* chunks thinner than the depth */
    {{21, 13, 9}, {4, {32, 8, 32}, 0}},  /* the default tile: one group wider than the volume */
    {{21, 13, 9}, {4, {8, 4, 4}, 1}},
    {{19, 10, 3}, {4, {6, 4, 1}, 0}},    /* thin volume, one plane a chunk */
    {{19, 10, 3}, {2, {6, 4, 1}, 1}},
    {{17, 12, 1}, {3, {4, 4, 1}, 1}},    /* flat volume */
    {{16, 16, 4}, {2, {16, 16, 32}, 0}}, /* exact multiples of the tile */
    {{9, 7, 5}, {5, {2, 2, 3}, 1}},      /* deep block, tiny tile */
};

static void check_case(const block_case *c, float beta)
{
    scene s;
    scene_make(&s, c->n[0], c->n[1], c->n[2]);
    const pv_flow_params params = small_params(beta);
    pv_flow_field single, blocked;
    field_alloc(&single, &s);
    field_alloc(&blocked, &s);
    tu_expect_ok(tu_opencl, pv_flow3d(tu_opencl, &s.fixed, &s.moving, &params, &single),
                 "single steps");
    log_seen seen;
    run_blocked(&s, &params, &c->b, &blocked, &seen);
    char what[160];
    snprintf(what, sizeof what, "%dx%dx%d, depth %d, tile %dx%dx%d, queue %d, beta %g", c->n[0],
             c->n[1], c->n[2], c->b.depth, c->b.tile[0], c->b.tile[1], c->b.tile[2], c->b.queue,
             (double)beta);
    const long ran = beta != 0.0f ? seen.div_block_launches : seen.block_launches;
    printf("    %s: %ld blocked launches\n", what, ran);
    assert_false(seen.refused);
    assert_int_equal(ran, blocks_expected(&params, c->b.depth, 1));
    expect_identical(&single, &blocked, what);
    pv_flow_field_free(&single);
    pv_flow_field_free(&blocked);
    scene_free(&s);
}

static void test_identical_plain(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_case(&cases[k], 0.0f);
}

static void test_identical_divergence(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_case(&cases[k], 1e-3f);
}

/* The paper's setting (pv_flow_params_default: 5 warps x 50 iterations,
 * 15 taps) on two pyramid levels, the default tile, depth 4. */
static void test_identical_paper_setting(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    scene s;
    scene_make(&s, 33, 31, 30);
    pv_flow_params params;
    pv_flow_params_default(&params);
    params.levels = 2;
    pv_flow_field single, blocked;
    field_alloc(&single, &s);
    field_alloc(&blocked, &s);
    tu_expect_ok(tu_opencl, pv_flow3d(tu_opencl, &s.fixed, &s.moving, &params, &single),
                 "single steps");
    const block b = {4, {32, 8, 32}, 1};
    log_seen seen;
    run_blocked(&s, &params, &b, &blocked, &seen);
    assert_int_equal(seen.block_launches, blocks_expected(&params, 4, 2));
    expect_identical(&single, &blocked, "paper setting, two levels");
    pv_flow_field_free(&single);
    pv_flow_field_free(&blocked);
    scene_free(&s);
}

/* Runs through a plan with the block b (depth 1: single steps); the flow
 * and the iterations run. */
static int run_plan(pv_context *ctx, const scene *s, const pv_flow_params *params, const block *b,
                    pv_flow_field *flow)
{
    set_block(ctx, b);
    pv_flow_plan *plan = NULL;
    tu_expect_ok(ctx, pv_flow_plan_create(ctx, s->fixed.nx, s->fixed.ny, s->fixed.nz, params,
                                          &plan), "plan");
    tu_expect_ok(ctx, pv_flow_plan_run(plan, &s->fixed, &s->moving, flow), "plan run");
    pv_flow_stats stats;
    assert_int_equal(pv_flow_plan_stats(plan, &stats), PV_OK);
    pv_flow_plan_destroy(plan);
    return stats.iterations;
}

/* With a tolerance the warps stop at a check; blocks run only between
 * checks, so the iterates compared and the stopping point are those of
 * single steps. */
static void test_convergence_checks(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    scene s;
    scene_make(&s, 20, 18, 17);
    pv_flow_params params = small_params(0.0f);
    params.iterations = 60;
    params.tolerance = 2e-3f;
    params.check_every = 7;
    pv_flow_field single, blocked;
    field_alloc(&single, &s);
    field_alloc(&blocked, &s);
    const block off = {1, {32, 8, 32}, 0}, on = {3, {8, 4, 8}, 1};
    const int n_single = run_plan(ctx, &s, &params, &off, &single);
    const int n_blocked = run_plan(ctx, &s, &params, &on, &blocked);
    printf("    iterations: %d single, %d blocked (cap %d per warp)\n", n_single, n_blocked,
           params.iterations);
    assert_int_equal(n_single, n_blocked);
    assert_true(n_single < params.warps * params.iterations); /* a check stopped a warp */
    expect_identical(&single, &blocked, "convergence checks");
    pv_flow_field_free(&single);
    pv_flow_field_free(&blocked);
    scene_free(&s);
    pv_context_destroy(ctx);
}

/* The blocked OpenCL flow against the CPU backend, with and without the
 * divergence term: within the flow's documented tolerance. */
static void test_against_cpu(void **state)
{
    (void)state;
    pv_context *ctx = tu_new_opencl_or_skip();
    scene s;
    scene_make(&s, 24, 22, 20);
    const float betas[2] = {0.0f, 0.05f};
    const block b = {2, {8, 8, 8}, 1};
    set_block(ctx, &b);
    for (int k = 0; k < 2; k++) {
        pv_flow_params params;
        pv_flow_params_default(&params);
        params.beta = betas[k];
        pv_flow_field cpu, cl;
        field_alloc(&cpu, &s);
        field_alloc(&cl, &s);
        assert_int_equal(pv_flow3d(tu_cpu, &s.fixed, &s.moving, &params, &cpu), PV_OK);
        tu_expect_ok(ctx, pv_flow3d(ctx, &s.fixed, &s.moving, &params, &cl), "blocked flow");
        double diff = 1.0;
        assert_int_equal(pv_flow_max_difference(&cl, &cpu, &diff), PV_OK);
        printf("    beta %g: blocked OpenCL vs CPU max |diff| %.3g voxel\n", (double)betas[k],
               diff);
        assert_true(diff <= PV_FLOW_TOLERANCE);
        pv_flow_field_free(&cpu);
        pv_flow_field_free(&cl);
    }
    scene_free(&s);
    pv_context_destroy(ctx);
}

/* Shapes that do not fit: single steps, the same bits, a log line. */
static void test_refused_shapes(void **state)
{
    (void)state;
    tu_opencl_or_skip();
    scene s;
    scene_make(&s, 20, 12, 6);
    const pv_flow_params params = small_params(0.0f);
    pv_flow_field single, blocked;
    field_alloc(&single, &s);
    field_alloc(&blocked, &s);
    tu_expect_ok(tu_opencl, pv_flow3d(tu_opencl, &s.fixed, &s.moving, &params, &single),
                 "single steps");
    const block refused[] = {
        {2, {200, 200, 8}, 0}, /* a group of 204 x 204 items */
        {17, {4, 4, 4}, 0},    /* deeper than the bound */
        {2, {0, 4, 4}, 0},     /* no tile */
        {2, {4, 4, 0}, 0},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        log_seen seen;
        run_blocked(&s, &params, &refused[k], &blocked, &seen);
        assert_true(seen.refused);
        assert_int_equal(seen.block_launches, 0);
        expect_identical(&single, &blocked, "refused shape");
    }
    pv_flow_field_free(&single);
    pv_flow_field_free(&blocked);
    scene_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_plain),
        cmocka_unit_test(test_identical_divergence),
        cmocka_unit_test(test_identical_paper_setting),
        cmocka_unit_test(test_convergence_checks),
        cmocka_unit_test(test_against_cpu),
        cmocka_unit_test(test_refused_shapes),
    };
    return cmocka_run_group_tests_name("flow_block", tests, tu_group_setup, tu_group_teardown);
}
