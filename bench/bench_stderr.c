/* The bench's stderr filter (bench.h): PoCL compiles OpenCL programs with
 * an in-process clang, which prints "N warnings generated." to stderr for
 * every program with warnings, whatever the build log holds; clFFT's
 * generated kernels have some, and the build options that could silence
 * them belong to clFFT.  Those lines would land between the bench's own
 * progress lines, so stderr goes through a pipe and a thread forwards
 * every other line unchanged and counts the dropped ones. */
#include "bench.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    int active;
    int saved_fd;       /* the real stderr */
    int read_fd;
    pthread_t thread;
    int dropped;
} filter;

/* "N warning generated." / "N warnings generated." */
static int is_compiler_summary(const char *line)
{
    const char *p = line;
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    return strcmp(p, " warning generated.\n") == 0 || strcmp(p, " warnings generated.\n") == 0;
}

static void *forward_lines(void *unused)
{
    (void)unused;
    FILE *in = fdopen(filter.read_fd, "r");
    if (!in)
        return NULL;
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        if (is_compiler_summary(line))
            filter.dropped++;
        else
            dprintf(filter.saved_fd, "%s", line); /* loops over short writes */
    }
    fclose(in);
    return NULL;
}

void bench_stderr_filter_start(void)
{
    int fds[2];
    fflush(stderr);
    filter.saved_fd = dup(STDERR_FILENO);
    if (filter.saved_fd < 0)
        return;
    if (pipe(fds) != 0) {
        close(filter.saved_fd);
        return;
    }
    filter.read_fd = fds[0];
    if (dup2(fds[1], STDERR_FILENO) < 0 ||
        pthread_create(&filter.thread, NULL, forward_lines, NULL) != 0) {
        dup2(filter.saved_fd, STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        close(filter.saved_fd);
        return;
    }
    close(fds[1]);
    setvbuf(stderr, NULL, _IOLBF, 0);
    filter.active = 1;
}

int bench_stderr_filter_stop(void)
{
    if (!filter.active)
        return 0;
    fflush(stderr);
    dup2(filter.saved_fd, STDERR_FILENO);   /* closes the pipe's last writer */
    /* The thread forwards what is left in the pipe to saved_fd: close it
     * only after the thread is done, or the last lines (often the message
     * saying why the bench stopped) are lost. */
    pthread_join(filter.thread, NULL);
    close(filter.saved_fd);
    setvbuf(stderr, NULL, _IONBF, 0);
    filter.active = 0;
    return filter.dropped;
}
