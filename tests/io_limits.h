/* Running a file read in a child process whose address space may grow by
 * a bounded amount: a reader that allocates what a hostile header claims
 * fails there (or is caught by its status and message) instead of taking
 * the test machine's memory. */
#ifndef PV_TEST_IO_LIMITS_H
#define PV_TEST_IO_LIMITS_H

#include <stddef.h>

#include "parvis.h"

typedef struct io_limited_result {
    pv_status status;           /* what the read returned */
    int untouched;              /* the read left its output alone (reported by fn) */
    char message[512];          /* pv_last_error() after the read */
} io_limited_result;

/* The read: returns its status, sets *untouched. */
typedef pv_status (*io_limited_read)(const void *arg, int *untouched);

/* Runs read(arg) in a forked child limited (RLIMIT_AS) to the parent's
 * current address space plus headroom_mib.  Fails the test when the child
 * dies (a crash, or a signal from the limit). */
void io_run_limited(io_limited_read read, const void *arg, size_t headroom_mib,
                    io_limited_result *result);

/* Runs fn(arg) with stderr pointed at a temporary file and returns how
 * many bytes were written to stderr meanwhile. */
size_t io_stderr_bytes_during(void (*fn)(const void *arg), const void *arg);

#endif
