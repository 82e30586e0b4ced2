/* Shared scaffolding of the device-buffer (interop) suites: a caller's own
 * OpenCL context, queue and pv_context on the device the suite's OpenCL
 * context uses; caller buffers made from host pixels with a chosen row
 * padding, spare rows a slice and byte offset; buffers read back densely;
 * and the small event helpers the suites share.  Built only with the OpenCL
 * backend (it needs the OpenCL headers through parvis/interop.h). */
#ifndef PARVIS_TESTS_INTEROP_UTIL_H
#define PARVIS_TESTS_INTEROP_UTIL_H

#include "test_util.h"
#include "parvis/interop.h"

#include <stddef.h>

/* The caller's own objects: its context and queue and a parvis context made
 * on them with pv_context_create_cl. */
typedef struct iu_caller {
    cl_context context;
    cl_command_queue queue;
    pv_context *ctx;
} iu_caller;

/* Where the samples of a caller's buffer lie. */
typedef struct iu_layout {
    int pad;        /* samples a row beyond the width */
    int spare_rows; /* rows a slice beyond the height */
    size_t offset;  /* bytes before sample (0, 0, 0) */
} iu_layout;

/* A caller on tu_opencl's device (skips the test without one). */
iu_caller iu_caller_new(void);

/* Destroys the caller's pv_context and releases its queue and context. */
void iu_caller_free(iu_caller *c);

/* A caller's buffer of `bytes` holding `host` (laid out as the buffer is). */
cl_mem iu_put_bytes(const iu_caller *c, const void *host, size_t bytes);

/* A caller's buffer holding nz slices of ny rows of nx samples of `type`
 * from `data` (rows src_row samples apart, slices src_slice apart), laid out
 * as `layout` says: rows nx + pad samples apart, slices ny + spare_rows rows
 * apart, the buffer exactly that many slices long after the offset.  Depth
 * is nz; slice_stride is 0 for one slice (an image). */
pv_buffer iu_put_strided(const iu_caller *c, const void *data, ptrdiff_t src_row,
                         ptrdiff_t src_slice, int nx, int ny, int nz, pv_pixel_type type,
                         iu_layout layout);

/* iu_put_strided of dense data. */
pv_buffer iu_put_samples(const iu_caller *c, const void *data, int nx, int ny, int nz,
                         pv_pixel_type type, iu_layout layout);

/* iu_put_strided of an image (one slice; its rows may be longer). */
pv_buffer iu_put_image(const iu_caller *c, const pv_image *image, iu_layout layout);

/* iu_put_strided of a volume (PV_PIXEL_U16 or PV_PIXEL_F32 samples). */
pv_buffer iu_put_volume(const iu_caller *c, const pv_volume *v, iu_layout layout);

/* The buffer's f32 samples read back densely (width x height x depth, depth
 * at least 1) through the caller's queue, after everything queued before
 * it, parvis's work included; free() it. */
float *iu_get_f32(const iu_caller *c, const pv_buffer *b);

/* The buffer's image (one slice, of the buffer's type) read back through the
 * caller's queue, as iu_get_f32; pv_image_free() it. */
pv_image iu_get_image(const iu_caller *c, const pv_buffer *b);

/* A user event of the caller's context that failed (status -1), for wait
 * lists; release it. */
cl_event iu_failed_event(const iu_caller *c);

/* Fails the test, naming `what`, the status and the last error message,
 * unless status is `expected`. */
void iu_expect_status(pv_status status, pv_status expected, const char *what);

/* Waits for `done` (which must be set) and releases it. */
void iu_wait_and_release(cl_event done);

#endif
