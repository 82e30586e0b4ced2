/* Internal: the device-buffer calls' machinery (lib/interop/interop.c),
 * shared by the files that declare each operation's device form
 * (lib/interop/interop_*.c).  Not installed. */
#ifndef PV_INTEROP_INTERNAL_H
#define PV_INTEROP_INTERNAL_H

#include "../core/internal.h"
#include "parvis/interop.h"

/* The images and volumes of one call: inputs first, then outputs; an
 * absent optional output has a NULL buffer.  Bit i of `volumes` set: item i
 * is a volume (the operation says so; a buffer's depth alone cannot, as a
 * volume may have one slice). */
#define MAX_IMAGES 20 /* pv_octreg_average_cl: up to 17 targets and 3 outputs */
typedef struct call_images {
    const pv_buffer *buffers[MAX_IMAGES];
    int count, first_output;
    unsigned volumes;  /* bit i: item i is a volume */
    unsigned optional; /* bit i: item i (an output) may be absent */
    pv_image images[MAX_IMAGES];
    pv_volume volume[MAX_IMAGES];
    size_t mapped[MAX_IMAGES]; /* bytes of each placeholder mapping, 0: none */
} call_images;

/* The host call the device call stands for, on items[0..count-1] (each a
 * pv_image * or pv_volume *, an absent output NULL) with the operation's
 * own arguments. */
typedef pv_status (*host_call)(pv_context *ctx, void *const *items, const void *args);

/* Checks the buffers and the wait list, then runs `run` on proxies bound
 * to the caller's buffers (or, with the cross-check on, on host copies of
 * them), ordered after the wait list; *done receives the call's
 * completion event.  names[i] names item i in messages. */
pv_status pv_interop_device_call(pv_context *ctx, const char *op, call_images *c,
                                 const char *const *names, host_call run, const void *args,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/* A batch's host call: call `index` of the batch on its items. */
typedef pv_status (*host_batch_call)(pv_context *ctx, int index, void *const *items,
                                     const void *args);

/* `count` (>= 1) calls of one operation as one device call: every call's
 * buffers checked as pv_interop_device_call checks them, and no output
 * sharing bytes with any buffer of any call; then, after the wait list,
 * `run` on call 0, 1, ... in order, each on its own proxies (bound one
 * call at a time, so a batch is not limited by MAX_IMAGES or the
 * backend's bindings), and one completion event for them all.  The first
 * failure stops the batch; what the calls before it queued has finished
 * when it returns. */
pv_status pv_interop_device_batch(pv_context *ctx, const char *op, call_images *calls, int count,
                                  const char *const *names, host_batch_call run, const void *args,
                                  cl_uint wait_count, const cl_event *wait_list, cl_event *done);

/* Every sample of b (an F32 image, checked by the call that used it) set
 * to value, written before the call returns. */
pv_status pv_interop_fill(pv_context *ctx, const pv_buffer *b, float value);

#endif
