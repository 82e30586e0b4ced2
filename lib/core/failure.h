/* The lowest services of the ground floor: recording a failure and size
 * arithmetic that cannot overflow.  A header of its own so that the files
 * internal.h itself includes (configuration, plans) can use them without
 * including internal.h back (tests/test_layers.sh counts a header and its
 * source as one unit, and such a pair as a cycle). */
#ifndef PV_CORE_FAILURE_H
#define PV_CORE_FAILURE_H

#include <stddef.h>

#include "parvis.h"

/* Record a failure: formats the message into ctx (may be NULL) and the
 * thread's last-error slot, and returns status so callers can write
 * `return pv_fail(ctx, PV_ERR_INVALID, "...")`. */
pv_status pv_fail(pv_context *ctx, pv_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Put back pv_last_error()'s text after a failure the caller recovered
 * from (the call as a whole succeeds). */
void pv_set_thread_error(const char *message);

/* a * b into *out; 0 on overflow. */
int pv_size_mul(size_t a, size_t b, size_t *out);

#endif
