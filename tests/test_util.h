/* Shared test helpers: contexts for each backend, random textures and
 * guarded images (a sentinel border around the pixels that catches writes
 * outside the image, as OpenCV's OpenCL tests do). */
#ifndef PV_TEST_UTIL_H
#define PV_TEST_UTIL_H

#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "parvis.h"
#include "image_list.h"

/* A context on the given backend, or NULL when it cannot be had (the
 * OpenCL backend on a host without OpenCL).  The CPU backend always works. */
pv_context *tu_context(pv_backend_kind kind);
/* 1 when PARVIS_TEST_SKIP_OPENCL=1 asks the suites to leave OpenCL alone
 * (valgrind runs of the CPU backend: the ICD loader and PoCL are noisy). */
int tu_skip_opencl(void);
/* 1 when an OpenCL device is usable for the tests. */
int tu_have_opencl(void);

/* A shared group fixture for suites that run each known-answer test on
 * both backends: tu_group_setup makes tu_cpu (always) and tu_opencl (NULL
 * when OpenCL is absent, skipped by PARVIS_TEST_SKIP_OPENCL=1, or
 * overridden by PARVIS_BACKEND=cpu).  Tests registered with
 * &tu_cpu_kind / &tu_opencl_kind as their state get their context from
 * tu_backend_ctx(state), which skips the OpenCL variant when there is none. */
extern pv_context *tu_cpu;
extern pv_context *tu_opencl;
extern const pv_backend_kind tu_cpu_kind;
extern const pv_backend_kind tu_opencl_kind;
int tu_group_setup(void **state);
int tu_group_teardown(void **state);
pv_context *tu_opencl_or_skip(void);
/* A new OpenCL context of the caller's own (to destroy), or skip the test
 * when there is none. */
pv_context *tu_new_opencl_or_skip(void);
pv_context *tu_backend_ctx(void **state);
/* A new OpenCL context (the caller's to destroy) whose device fault
 * injector follows spec, as PARVIS_FAULT would (alloc:N, build:N or
 * enqueue:N: the N-th such call fails); spec NULL: no faults.  NULL when
 * no OpenCL context can be had.  The variable is unset again, so that
 * later contexts are healthy. */
pv_context *tu_fault_context(const char *spec);
/* Fail the test unless status is PV_OK, naming what was called, on which
 * backend, and ctx's message. */
void tu_expect_ok(pv_context *ctx, pv_status status, const char *what);
/* A known-answer test's two entries in a group's table: once per backend,
 * named test/cpu and test/opencl. */
#define TU_ON_BOTH(test)                                        \
    {#test "/cpu", test, NULL, NULL, (void *)&tu_cpu_kind},     \
    {#test "/opencl", test, NULL, NULL, (void *)&tu_opencl_kind}
/* An OpenCL-only test's entry: tu_backend_ctx(state) gives it the group's
 * OpenCL context, or skips it. */
#define TU_ON_OPENCL(test) {#test, test, NULL, NULL, (void *)&tu_opencl_kind}

/* Deterministic pseudo-random numbers (xorshift32). */
uint32_t tu_rand(uint32_t *state);
float tu_rand01(uint32_t *state);

/* Fill with uniform noise: u8 in 0..255, f32 in [0, 1). */
void tu_fill_random(pv_image *image, uint32_t seed);
void tu_fill_random_volume(pv_volume *volume, uint32_t seed);
/* A new nx x ny x nz volume of that noise (the test fails without memory). */
pv_volume tu_random_volume(int nx, int ny, int nz, uint32_t seed);
/* Two new w x h u8 frames of blob texture (u8 noise from `seed` every
 * `blob` pixels, bilinear between: blobs near SIFT's finest scales for
 * blob 3 or 4): still(x, y) is the texture at (x, y), moved(x, y) at
 * (x + dx, y + dy), dx and dy >= 0. */
void tu_blob_frames(pv_image *still, pv_image *moved, int w, int h, int blob, uint32_t seed,
                    int dx, int dy);

/* An image whose rows have `guard` sentinel elements on each side and
 * `guard` sentinel rows above and below; stride = width + 2 * guard. */
void tu_guarded_alloc(pv_image *image, int width, int height, pv_pixel_type type, int guard);
/* 1 when every sentinel is still intact. */
int tu_guard_intact(const pv_image *image, int guard);
void tu_guarded_free(pv_image *image, int guard);

/* Set (value NULL: unset) an environment variable and read the library's
 * configuration again, for a test that changes a PARVIS_* variable under
 * a context already made (the library reads them at context creation). */
void tu_set_env(const char *name, const char *value);

/* Path of a file under tests/data (static buffer, overwritten by each call). */
const char *tu_data_path(const char *relative);
/* A scratch path under the build tree's tests/tmp (created on demand). */
const char *tu_tmp_path(const char *name);
/* pv_octreg_synth_params_default with the volume's size (depth, A-lines,
 * B-scans) and the scene's seed set. */
void tu_octreg_synth_params(pv_octreg_synth_params *p, int depth, int alines, int bscans,
                            uint32_t seed);
/* Write length bytes to path (asserting every step; length may be 0). */
void tu_write_file(const char *path, const void *bytes, size_t length);
/* Whether a fresh process finds an OpenCL device: asked in a child, so
 * that this process's first OpenCL use stays the one under test. */
int tu_child_sees_opencl(void);
/* Run body(arg) in a forked child that SIGALRM ends after `seconds` (so a
 * hang fails instead of blocking the suite); body ends the child with
 * _exit(code), returning means _exit(0).  The child's exit code, or
 * 128 + the signal that ended it (SIGALRM: it hung; SIGABRT/SIGSEGV: it
 * crashed). */
int tu_run_in_child(void (*body)(void *arg), void *arg, unsigned seconds);

/* Pixel helpers for u8 or f32 images: the address of an f32 pixel, a
 * write (u8 values truncated), a fill, and whether every pixel equals value. */
float *tu_fpixel(const pv_image *image, int x, int y);
void tu_set_pixel(pv_image *image, int x, int y, float value);
void tu_fill_image(pv_image *image, float value);
int tu_image_all_equal(const pv_image *image, float value);

/* Relative L-infinity error of two f32 images: max|a-b| / max(1, max|b|). */
double tu_rel_linf(const pv_image *a, const pv_image *b);

#endif
