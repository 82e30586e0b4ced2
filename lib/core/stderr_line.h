/* Internal: one line "parvis: <message>" on stderr, shared by the library's
 * log (pv_log, lib/core/status.c) and the command-line programs' error
 * messages (examples/common/tool.c), which compile this header too: plain
 * C on the standard library alone.  The line is formatted first and leaves
 * in one write, since stderr is unbuffered: piecewise writes from several
 * threads would interleave, and the bench's stderr filter (or a parallel
 * run) must not see a line in pieces.  Longer messages are cut at 1023
 * characters. */
#ifndef PV_STDERR_LINE_H
#define PV_STDERR_LINE_H

#include <stdarg.h>
#include <stdio.h>

static inline void pv_stderr_vline(const char *fmt, va_list args)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, args);
    fprintf(stderr, "parvis: %s\n", line);
}

#endif
