/* Contexts and fork(): a forked child used to hang forever on its first
 * call (the parent's OpenMP pool on the CPU backend, PoCL's threads on
 * OpenCL are not in the child).  Now a context inherited across fork
 * refuses every call with PV_ERR_UNSUPPORTED naming fork and
 * spawn/forkserver; a new CPU context in the child works (single-
 * threaded); a new OpenCL context in the child of a process that had
 * started OpenCL is refused the same way.  Every child runs under an
 * alarm, so a hang fails as "ended by SIGALRM" instead of blocking. */
#include "test_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHILD_SECONDS 60
#define SIDE 64

typedef struct fork_case {
    pv_context *inherited;
    pv_image src, dst;
} fork_case;

static void blur_or_exit(pv_context *ctx, fork_case *c, int code)
{
    if (pv_gaussian_blur(ctx, &c->src, &c->dst, 1.5f, 0) != PV_OK) {
        fprintf(stderr, "blur: %s\n", pv_context_last_error(ctx));
        _exit(code);
    }
}

/* 1 when the last error of ctx (or the thread's, ctx NULL) names fork and
 * the start methods that work. */
static int names_fork(pv_context *ctx)
{
    const char *message = ctx ? pv_context_last_error(ctx) : pv_last_error();
    return strstr(message, "fork") && strstr(message, "spawn") && strstr(message, "forkserver");
}

/* The inherited context refuses a call and a plan; destroying it does not
 * hang. */
static void check_inherited(fork_case *c)
{
    if (pv_gaussian_blur(c->inherited, &c->src, &c->dst, 1.5f, 0) != PV_ERR_UNSUPPORTED ||
        !names_fork(c->inherited))
        _exit(20);
    pv_sift_params params;
    pv_sift_params_default(&params);
    pv_sift_plan *plan = NULL;
    if (pv_sift_plan_create(c->inherited, SIDE, SIDE, &params, &plan) != PV_ERR_UNSUPPORTED ||
        plan != NULL)
        _exit(21);
    pv_context_destroy(c->inherited);
}

static void child_after_cpu(void *arg)
{
    fork_case *c = arg;
    check_inherited(c);
    pv_context *fresh = tu_context(PV_BACKEND_CPU);
    if (!fresh || pv_context_cpu_threads(fresh) != 1)
        _exit(22);
    blur_or_exit(fresh, c, 23);
    pv_context_destroy(fresh);
    _exit(0);
}

static void child_after_opencl(void *arg)
{
    fork_case *c = arg;
    check_inherited(c);
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    pv_context *fresh = NULL;
    if (pv_context_create(&fresh, &options) != PV_ERR_UNSUPPORTED || fresh || !names_fork(NULL))
        _exit(24);
    fresh = tu_context(PV_BACKEND_CPU); /* the CPU backend still works */
    if (!fresh)
        _exit(25);
    blur_or_exit(fresh, c, 26);
    pv_context_destroy(fresh);
    _exit(0);
}

static void run_case(pv_context *parent, void (*child)(void *))
{
    fork_case c = {parent, {0}, {0}};
    assert_int_equal(pv_image_alloc(&c.src, SIDE, SIDE, PV_PIXEL_F32), PV_OK);
    assert_int_equal(pv_image_alloc(&c.dst, SIDE, SIDE, PV_PIXEL_F32), PV_OK);
    tu_fill_random(&c.src, 9u);
    /* the parent's threads (OpenMP pool, PoCL) are running at the fork */
    tu_expect_ok(parent, pv_gaussian_blur(parent, &c.src, &c.dst, 1.5f, 0), "blur in the parent");
    int result = tu_run_in_child(child, &c, CHILD_SECONDS);
    if (result == 128 + SIGALRM)
        fail_msg("the forked child hung (%d s)", CHILD_SECONDS);
    if (result != 0)
        fail_msg("the forked child ended with %d", result);
    /* the parent's context is untouched by the child */
    tu_expect_ok(parent, pv_gaussian_blur(parent, &c.src, &c.dst, 1.5f, 0), "blur after fork");
    pv_image_free(&c.src);
    pv_image_free(&c.dst);
}

static void test_fork_after_cpu(void **state)
{
    (void)state;
    pv_context *parent = tu_context(PV_BACKEND_CPU);
    assert_non_null(parent);
    run_case(parent, child_after_cpu);
    pv_context_destroy(parent);
}

static void test_fork_after_opencl(void **state)
{
    (void)state;
    pv_context *parent = tu_new_opencl_or_skip();
    run_case(parent, child_after_opencl);
    pv_context_destroy(parent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_after_cpu),
        cmocka_unit_test(test_fork_after_opencl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
