/* The command-line programs' progress line: a context's progress reports
 * (parvis/progress.h) shown on stderr as one line rewritten in place with
 * \r, "parvis: stereo_bp 42% (17/40)", ended by a newline when the call
 * finishes.  Shown when --progress was given, or when stderr is a
 * terminal and the call has lasted longer than a second (short calls stay
 * quiet). */
#ifndef PV_CLI_PROGRESS_H
#define PV_CLI_PROGRESS_H

#include "parvis.h"

/* --progress: the table entry of the long commands. */
#define CLI_PROGRESS_ENTRY(flag)                                                            \
    {.name = "--progress", .kind = CLI_FLAG, .field = (flag),                              \
     .help = "show a progress line on stderr (default: only on a terminal, for calls "    \
             "longer than a second)"}

/* Install the line on ctx: always when forced (--progress), else only
 * when stderr is a terminal.  Never fails the command (a failure to
 * install only loses the line). */
void cli_progress_attach(pv_context *ctx, int forced);

/* End a line left open (a call that failed or was cancelled), so that the
 * next message starts on a line of its own. */
void cli_progress_close(void);

#endif
