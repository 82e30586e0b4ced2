/* Threads: contexts made and destroyed from several threads at once (the
 * first OpenCL use of a process included), and one context shared by
 * several threads running different operations, whose results must equal
 * the single-threaded ones.  Built with -fsanitize=thread by
 * tests/sanitize.sh, this is also the data-race test. */
#include "test_util.h"
#include "workload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CREATOR_THREADS 4
#define CREATOR_ROUNDS 3
#define FIRST_USE_TRIES 4
#define SHARING_THREADS 4
#define SHARING_ROUNDS 2

/* Same context, same inputs, same device: the results are bit-identical
 * whatever thread runs them; 1e-6 relative leaves room for nothing more. */
#define SHARED_TOLERANCE 1e-6

/* --------------------------------------------- concurrent context creation */

typedef struct creator {
    pv_status status;
    char error[256];
} creator;

static void *create_and_use(void *arg)
{
    creator *self = arg;
    pv_image src, dst;
    self->status = pv_image_alloc(&src, 32, 32, PV_PIXEL_F32);
    if (self->status == PV_OK)
        self->status = pv_image_alloc(&dst, 32, 32, PV_PIXEL_F32);
    for (int round = 0; round < CREATOR_ROUNDS && self->status == PV_OK; round++) {
        pv_context_options options;
        pv_context_options_default(&options);
        options.backend = PV_BACKEND_OPENCL;
        pv_context *ctx = NULL;
        self->status = pv_context_create(&ctx, &options);
        if (self->status == PV_OK)
            self->status = pv_gaussian_blur(ctx, &src, &dst, 1.0f, 0);
        if (self->status != PV_OK)
            snprintf(self->error, sizeof self->error, "%s", pv_last_error());
        pv_context_destroy(ctx);
    }
    image_list_free(&src, &dst, NULL);
    return NULL;
}

/* In a fresh process (its first OpenCL calls): threads racing to make
 * OpenCL contexts.  Exit status 0 when every thread succeeded. */
static int creation_race_child(void)
{
    pthread_t threads[CREATOR_THREADS];
    creator creators[CREATOR_THREADS];
    memset(creators, 0, sizeof creators);
    for (int i = 0; i < CREATOR_THREADS; i++)
        if (pthread_create(&threads[i], NULL, create_and_use, &creators[i]) != 0)
            return 2;
    int failed = 0;
    for (int i = 0; i < CREATOR_THREADS; i++) {
        pthread_join(threads[i], NULL);
        if (creators[i].status != PV_OK) {
            fprintf(stderr, "thread %d: %s: %s\n", i, pv_status_string(creators[i].status),
                    creators[i].error);
            failed = 1;
        }
    }
    return failed;
}

static void test_concurrent_opencl_context_creation(void **state)
{
    (void)state;
    if (!tu_child_sees_opencl())
        skip();
    for (int attempt = 0; attempt < FIRST_USE_TRIES; attempt++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(creation_race_child());
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
            fail_msg("attempt %d: the child died of signal %d", attempt, WTERMSIG(status));
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

/* The same race again inside this process, once OpenCL is initialised:
 * creation and destruction must stay safe on every later use. */
static void test_concurrent_creation_after_first_use(void **state)
{
    (void)state;
    if (!tu_have_opencl())
        skip();
    assert_int_equal(creation_race_child(), 0);
}

/* ------------------------------------------------------ one shared context */

typedef struct sharer {
    pv_context *ctx;
    int first_op;
    const wl_result *expected; /* wl_op_count entries */
    int failures;
    char failure[256];
} sharer;

static void note_failure(sharer *self, const char *fmt, const char *name, const char *detail)
{
    if (self->failures++ == 0)
        snprintf(self->failure, sizeof self->failure, fmt, name, detail);
}

/* A failing call's message must reach this thread's pv_last_error, whatever
 * the other threads do on the same context meanwhile. */
static void check_own_error(sharer *self)
{
    pv_image bad = pv_image_wrap(NULL, 8, 8, PV_PIXEL_F32);
    pv_image dst;
    if (pv_image_alloc(&dst, 8, 8, PV_PIXEL_F32) != PV_OK)
        return;
    if (pv_gaussian_blur(self->ctx, &bad, &dst, 1.0f, 0) != PV_ERR_INVALID)
        note_failure(self, "%s%s", "a NULL source was accepted", "");
    else if (!strstr(pv_last_error(), "src"))
        note_failure(self, "pv_last_error() is '%s'%s", pv_last_error(), "");
    pv_image_free(&dst);
}

static void *share_context(void *arg)
{
    sharer *self = arg;
    wl_result *got = malloc(sizeof *got);
    if (!got) {
        note_failure(self, "%s%s", "out of memory", "");
        return NULL;
    }
    for (int round = 0; round < SHARING_ROUNDS; round++)
        for (int k = 0; k < wl_op_count; k++) {
            const int i = (self->first_op + k) % wl_op_count;
            int untouched = 1;
            got->count = 0;
            pv_status status = wl_ops[i].run(self->ctx, got, &untouched);
            if (status != PV_OK)
                note_failure(self, "%s failed: %s", wl_ops[i].name, pv_last_error());
            else if (wl_difference(got, &self->expected[i]) > SHARED_TOLERANCE)
                note_failure(self, "%s%s: result differs from the single-threaded one",
                             wl_ops[i].name, "");
            check_own_error(self);
        }
    free(got);
    return NULL;
}

static void hammer_shared_context(pv_context *ctx)
{
    assert_int_equal(wl_init(), 0);
    wl_result *expected = calloc((size_t)wl_op_count, sizeof *expected);
    assert_non_null(expected);
    for (int i = 0; i < wl_op_count; i++) {
        int untouched = 1;
        pv_status status = wl_ops[i].run(ctx, &expected[i], &untouched);
        if (status != PV_OK)
            fail_msg("%s (single-threaded): %s", wl_ops[i].name, pv_last_error());
        assert_true(expected[i].count > 0);
    }
    pthread_t threads[SHARING_THREADS];
    sharer sharers[SHARING_THREADS];
    memset(sharers, 0, sizeof sharers);
    for (int t = 0; t < SHARING_THREADS; t++) {
        sharers[t].ctx = ctx;
        sharers[t].first_op = (t * wl_op_count) / SHARING_THREADS;
        sharers[t].expected = expected;
        assert_int_equal(pthread_create(&threads[t], NULL, share_context, &sharers[t]), 0);
    }
    for (int t = 0; t < SHARING_THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < SHARING_THREADS; t++)
        if (sharers[t].failures)
            fail_msg("thread %d: %d failure(s), first: %s", t, sharers[t].failures,
                     sharers[t].failure);
    /* The shared context still answers as before. */
    for (int i = 0; i < wl_op_count; i++) {
        wl_result *again = malloc(sizeof *again);
        assert_non_null(again);
        int untouched = 1;
        again->count = 0;
        assert_int_equal(wl_ops[i].run(ctx, again, &untouched), PV_OK);
        assert_true(wl_difference(again, &expected[i]) <= SHARED_TOLERANCE);
        free(again);
    }
    free(expected);
    wl_free();
}

/* One context of the backend *state names, shared by the threads. */
static void test_shared_context(void **state)
{
    const pv_backend_kind kind = *(const pv_backend_kind *)*state;
    pv_context *ctx = kind == PV_BACKEND_OPENCL ? tu_new_opencl_or_skip() : tu_context(kind);
    assert_non_null(ctx);
    hammer_shared_context(ctx);
    pv_context_destroy(ctx);
}

/* Getters of a shared context's messages hand each thread its own copy. */
static void *read_messages(void *arg)
{
    pv_context *ctx = arg;
    for (int i = 0; i < 200; i++) {
        const char *message = pv_context_last_error(ctx);
        const char *log = pv_context_build_log(ctx);
        if (!message || !log)
            return arg;
        pv_timing timing;
        if (pv_context_last_timing(ctx, &timing) != PV_OK)
            return arg;
        pv_context_set_crosscheck(ctx, 0);
    }
    return NULL;
}

static void test_shared_context_getters(void **state)
{
    (void)state;
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    assert_non_null(ctx);
    pthread_t threads[SHARING_THREADS];
    for (int t = 0; t < SHARING_THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, read_messages, ctx), 0);
    pv_image bad = pv_image_wrap(NULL, 4, 4, PV_PIXEL_F32);
    for (int i = 0; i < 200; i++)
        assert_int_equal(pv_gaussian_blur(ctx, &bad, &bad, 1.0f, 0), PV_ERR_INVALID);
    for (int t = 0; t < SHARING_THREADS; t++) {
        void *result = &result;
        pthread_join(threads[t], &result);
        assert_null(result);
    }
    assert_non_null(strstr(pv_context_last_error(ctx), "src"));
    pv_context_destroy(ctx);
}

int main(void)
{
    /* The creation race must come first: it needs this process to have
     * made no OpenCL call yet (its children inherit that state). */
    static pv_backend_kind cpu = PV_BACKEND_CPU, opencl = PV_BACKEND_OPENCL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_opencl_context_creation),
        cmocka_unit_test(test_concurrent_creation_after_first_use),
        cmocka_unit_test(test_shared_context_getters),
        {"test_shared_cpu_context", test_shared_context, NULL, NULL, &cpu},
        {"test_shared_opencl_context", test_shared_context, NULL, NULL, &opencl},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
