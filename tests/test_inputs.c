/* Files that are not regular files: every reader of the library refuses a
 * FIFO (whose plain open blocks until a writer comes), /dev/zero (endless)
 * and a directory at once with PV_ERR_IO, and the FFTW wisdom file is
 * skipped when it is such a thing or larger than the bound on it.  Each
 * case runs in a forked child under an alarm, so a regression hangs no
 * suite: it fails as "ended by SIGALRM". */
#include "test_util.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Seconds a child may take: every case is a refusal or a 64x64 FFT. */
#define CHILD_SECONDS 20

/* A FIFO without a writer, made afresh. */
static const char *make_fifo(const char *name)
{
    const char *path = tu_tmp_path(name);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    return path;
}

static void expect_child_ok(void (*body)(void *), void *arg, const char *what)
{
    int result = tu_run_in_child(body, arg, CHILD_SECONDS);
    if (result == 128 + SIGALRM)
        fail_msg("%s: still blocked after %d s", what, CHILD_SECONDS);
    if (result != 0)
        fail_msg("%s: the child ended with %d", what, result);
}

/* In the child: exit 1 unless the readers all refuse path with PV_ERR_IO. */
static void read_everything(void *arg)
{
    const char *path = arg;
    pv_image image;
    pv_image_info info;
    pv_flow_field field;
    pv_volume volume;
    int bad = 0;
    bad |= pv_image_read(path, PV_PIXEL_U8, &image) != PV_ERR_IO;
    bad |= strstr(pv_last_error(), "not a regular file") == NULL;
    bad |= pv_image_read_info(path, &info) != PV_ERR_IO;
    bad |= pv_flow_read_flo(path, &field) != PV_ERR_IO;
    bad |= pv_volume_read_raw(path, 4, 4, 4, &volume) != PV_ERR_IO;
    bad |= pv_volume_read_nifti(path, &volume) != PV_ERR_IO;
    if (bad)
        fprintf(stderr, "'%s': last error '%s'\n", path, pv_last_error());
    _exit(bad);
}

static void test_readers_refuse_fifo(void **state)
{
    (void)state;
    const char *path = make_fifo("reader.fifo");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    expect_child_ok(read_everything, copy, "reading a FIFO");
    unlink(copy);
}

static void test_readers_refuse_devices(void **state)
{
    (void)state;
    expect_child_ok(read_everything, "/dev/zero", "reading /dev/zero");
    expect_child_ok(read_everything, "/dev/null", "reading /dev/null");
    expect_child_ok(read_everything, "/", "reading a directory");
}

/* In the child: PARVIS_FFTW_WISDOM=arg, then a CPU phase correlation
 * (the default planner reads the wisdom) must find the shift. */
static void correlate_with_wisdom(void *arg)
{
    setenv("PARVIS_FFTW_WISDOM", arg, 1);
    pv_context *ctx = tu_context(PV_BACKEND_CPU);
    pv_image reference, moving;
    if (!ctx || pv_image_alloc(&reference, 64, 64, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&moving, 64, 64, PV_PIXEL_F32) != PV_OK)
        _exit(2);
    tu_fill_random(&reference, 7u);
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            tu_set_pixel(&moving, x, y, *tu_fpixel(&reference, (x + 61) % 64, (y + 2) % 64));
    pv_shift shift;
    if (pv_phase_correlate(ctx, &reference, &moving, NULL, &shift) != PV_OK) {
        fprintf(stderr, "phase_correlate: %s\n", pv_context_last_error(ctx));
        _exit(3);
    }
    _exit(fabs(shift.dx - 3.0) < 0.05 && fabs(shift.dy + 2.0) < 0.05 ? 0 : 4);
}

/* The same with measured plans, which are saved to the wisdom file too
 * (as root, renaming over /dev/zero would have replaced the device). */
static void correlate_measuring(void *arg)
{
    setenv("PARVIS_FFTW_PLANNER", "measure", 1);
    correlate_with_wisdom(arg);
}

static void test_wisdom_not_a_regular_file(void **state)
{
    (void)state;
    const char *path = make_fifo("wisdom.fifo");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    expect_child_ok(correlate_measuring, copy, "FFTW wisdom from a FIFO");
    struct stat info;
    assert_int_equal(stat(copy, &info), 0);
    assert_true(S_ISFIFO(info.st_mode)); /* not replaced by a saved file */
    unlink(copy);
    expect_child_ok(correlate_with_wisdom, "/dev/zero", "FFTW wisdom from /dev/zero");
    expect_child_ok(correlate_with_wisdom, "/dev/full", "FFTW wisdom from /dev/full");
    assert_int_equal(stat("/dev/zero", &info), 0);
    assert_true(S_ISCHR(info.st_mode));
}

/* A sparse 2 GiB wisdom file: skipped (reading it took 15 s per call). */
static void test_wisdom_too_large(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("huge.wisdom");
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    if (ftruncate(fd, (off_t)2 << 30) != 0) {
        close(fd);
        unlink(copy);
        skip(); /* a file system without sparse files of that size */
    }
    close(fd);
    int result = tu_run_in_child(correlate_with_wisdom, copy, 5);
    unlink(copy);
    if (result != 0)
        fail_msg("2 GiB of wisdom: the child ended with %d (128 + %d: too slow)", result, SIGALRM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers_refuse_fifo),
        cmocka_unit_test(test_readers_refuse_devices),
        cmocka_unit_test(test_wisdom_not_a_regular_file),
        cmocka_unit_test(test_wisdom_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
