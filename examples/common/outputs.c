/* All-or-none outputs of the command-line programs: temporary names in
 * the destination's folder, renamed into place at the end (rename within
 * one folder replaces the old file in one step), removed on failure. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "outputs.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One pending output: where it goes, and where it is being written. */
typedef struct pending_output {
    char *final_path;
    char *temp_path;
} pending_output;

/* The outputs of the running command (a program runs one command). */
static pending_output *pending;
static int pending_count, pending_capacity;

static char *copy_text(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = malloc(size);
    if (copy)
        memcpy(copy, text, size);
    return copy;
}

/* "DIR/.parvis-PID-N-NAME" for "DIR/NAME" ("NAME" alone: in the current
 * folder); NULL when out of memory. */
static char *temp_name(const char *path, int serial)
{
    const char *slash = strrchr(path, '/');
    int folder = slash ? (int)(slash - path) + 1 : 0;
    const char *name = path + folder;
    size_t size = strlen(path) + 64;
    char *temp = malloc(size);
    if (temp)
        snprintf(temp, size, "%.*s.parvis-%ld-%d-%s", folder, path, (long)getpid(), serial,
                 name);
    return temp;
}

/* Something other than a regular file is already at path: write there. */
static int names_special_file(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && !S_ISREG(info.st_mode);
}

static int names_link(const char *path)
{
    struct stat info;
    return lstat(path, &info) == 0 && S_ISLNK(info.st_mode);
}

static int grow_pending(void)
{
    if (pending_count < pending_capacity)
        return 0;
    int capacity = pending_capacity ? 2 * pending_capacity : 8;
    pending_output *grown = realloc(pending, (size_t)capacity * sizeof *grown);
    if (!grown)
        return -1;
    pending = grown;
    pending_capacity = capacity;
    return 0;
}

const char *cli_output_path(const char *path)
{
    if (!path || !*path) {
        cli_fail("cannot write '': an empty file name");
        return NULL;
    }
    if (names_special_file(path))
        return path;
    if (grow_pending() != 0) {
        cli_fail("cannot write '%s': out of memory", path);
        return NULL;
    }
    /* a symbolic link is written through: its target is replaced */
    char *final_path = names_link(path) ? realpath(path, NULL) : NULL;
    if (!final_path)
        final_path = copy_text(path);
    char *temp_path = final_path ? temp_name(final_path, pending_count) : NULL;
    int fd = final_path && temp_path ? open(temp_path, O_WRONLY | O_CREAT | O_EXCL, 0666) : -1;
    if (fd < 0) {
        const char *cause = final_path && temp_path ? strerror(errno) : "out of memory";
        free(final_path);
        free(temp_path);
        cli_fail("cannot write '%s': %s", path, cause);
        return NULL;
    }
    close(fd);
    pending[pending_count].final_path = final_path;
    pending[pending_count].temp_path = temp_path;
    return pending[pending_count++].temp_path;
}

FILE *cli_open_output(const char *path)
{
    const char *target = cli_output_path(path);
    FILE *out = target ? fopen(target, "w") : NULL;
    if (target && !out)
        cli_fail("cannot write '%s': %s", path, strerror(errno));
    return out;
}

int cli_close_output(FILE *out, const char *path)
{
    errno = 0;
    int failed = ferror(out);
    int cause = errno;
    if (fclose(out) != 0 && !failed) {
        failed = 1;
        cause = errno;
    }
    if (failed)
        cli_fail("cannot write '%s': %s", path, cause ? strerror(cause) : "write error");
    return failed;
}

/* Flush and close stdout; 0 when everything printed reached it. */
static int finish_stdout(void)
{
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int cause = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        cause = errno;
    }
    if (failed)
        cli_fail("cannot write the standard output: %s",
                 cause ? strerror(cause) : "write error");
    return failed;
}

/* Rename every pending file into place, or remove them (keep = 0). */
static int settle_outputs(int keep)
{
    int failed = 0;
    for (int i = 0; i < pending_count; i++) {
        if (keep && !failed && rename(pending[i].temp_path, pending[i].final_path) != 0) {
            cli_fail("cannot write '%s': %s", pending[i].final_path, strerror(errno));
            failed = 1;
        }
        if (!keep || failed)
            remove(pending[i].temp_path);
        free(pending[i].temp_path);
        free(pending[i].final_path);
    }
    free(pending);
    pending = NULL;
    pending_count = pending_capacity = 0;
    return failed;
}

int cli_outputs_finish(int status)
{
    if (finish_stdout() && status == 0)
        status = 1;
    if (settle_outputs(status == 0) && status == 0)
        status = 1;
    return status;
}
