/* The library prints nothing on stderr: clFFT builds its programs with its
 * own options, and PoCL printed the compiler's "N warnings generated."
 * while a clFFT plan was baked.  The case runs in a forked child whose fd 2
 * is a file (the parent makes no OpenCL context, so the child may), and
 * the file must stay empty. */
#include "test_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHILD_SECONDS 120

/* In the child: fd 2 to the file at arg, then phase correlations on sizes
 * whose clFFT programs use radices 2, 3 and 5.  Exit 0 when they all
 * ran, 77 without OpenCL or clFFT. */
static void correlate_with_clfft(void *arg)
{
    int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        _exit(2);
    close(fd);
    unsetenv("PARVIS_LOG"); /* the log is asked for, not printed unasked */
    /* PoCL compiles afresh (its kernel cache would skip the compiler and
     * its warnings); read when PoCL starts, in this child */
    setenv("POCL_KERNEL_CACHE", "0", 1);
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (!ctx || pv_context_set_fft_engine(ctx, PV_FFT_CLFFT) != PV_OK)
        _exit(77);
    const int sizes[][2] = {{64, 48}, {45, 35}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        pv_image a, b;
        if (pv_image_alloc(&a, sizes[i][0], sizes[i][1], PV_PIXEL_F32) != PV_OK ||
            pv_image_alloc(&b, sizes[i][0], sizes[i][1], PV_PIXEL_F32) != PV_OK)
            _exit(3);
        tu_fill_random(&a, 1u);
        tu_fill_random(&b, 2u);
        pv_shift shift;
        if (pv_phase_correlate(ctx, &a, &b, NULL, &shift) != PV_OK)
            _exit(4);
        pv_image_free(&a);
        pv_image_free(&b);
    }
    pv_context_destroy(ctx);
    _exit(0);
}

static void test_clfft_plans_print_nothing(void **state)
{
    (void)state;
    if (tu_skip_opencl() || !pv_fft_engine_available(PV_FFT_CLFFT))
        skip();
    const char *path = tu_tmp_path("clfft.stderr");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int result = tu_run_in_child(correlate_with_clfft, copy, CHILD_SECONDS);
    if (result == 77)
        skip();
    assert_int_equal(result, 0);
    FILE *file = fopen(copy, "rb");
    assert_non_null(file);
    char text[512];
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = '\0';
    if (n > 0)
        fail_msg("clFFT plans printed on stderr: '%s'", text);
    unlink(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clfft_plans_print_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
