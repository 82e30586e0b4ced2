/* The progress line of progress.h.  The programs are single-threaded
 * callers of the library, so the line's state is one static record. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QUIET_MS 1000.0  /* a terminal sees no line for calls shorter than this */
#define REDRAW_MS 100.0  /* at most ten rewrites a second */

typedef struct progress_line {
    int forced;
    char op[64];
    double started_ms, drawn_ms, last_done;
    int open; /* a line is on the screen without its newline */
} progress_line;

static progress_line line;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void cli_progress_close(void)
{
    if (line.open)
        fputc('\n', stderr);
    line.open = 0;
}

/* A new call: its first report (done 0), another operation, or done gone
 * back. */
static void start_if_new(const char *op, double done, double now)
{
    if (done > 0.0 && done >= line.last_done && strcmp(op, line.op) == 0)
        return;
    cli_progress_close();
    snprintf(line.op, sizeof line.op, "%s", op);
    line.started_ms = now;
    line.drawn_ms = 0.0;
}

static int report(void *user, const char *op, double done, double total)
{
    (void)user;
    const double now = now_ms();
    start_if_new(op, done, now);
    line.last_done = done;
    const int finished = done >= total;
    if (!line.forced && now - line.started_ms < QUIET_MS)
        return 0;
    if (!finished && line.open && now - line.drawn_ms < REDRAW_MS)
        return 0;
    const double percent = total > 0.0 ? 100.0 * done / total : 100.0;
    fprintf(stderr, "\rparvis: %s %3.0f%% (%.0f/%.0f)", op, percent, done, total);
    line.drawn_ms = now;
    line.open = 1;
    if (finished)
        cli_progress_close();
    fflush(stderr);
    return 0;
}

void cli_progress_attach(pv_context *ctx, int forced)
{
    if (!ctx || (!forced && !isatty(STDERR_FILENO)))
        return;
    memset(&line, 0, sizeof line);
    line.forced = forced;
    pv_context_set_progress(ctx, report, NULL);
}
