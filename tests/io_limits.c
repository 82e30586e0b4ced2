#include "io_limits.h"

#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t address_space_bytes(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static void write_all(int fd, const void *bytes, size_t length)
{
    const char *p = bytes;
    while (length > 0) {
        ssize_t n = write(fd, p, length);
        if (n <= 0)
            return;
        p += n;
        length -= (size_t)n;
    }
}

static size_t read_all(int fd, void *bytes, size_t length)
{
    char *p = bytes;
    size_t done = 0;
    while (done < length) {
        ssize_t n = read(fd, p + done, length - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    return done;
}

void io_run_limited(io_limited_read read_fn, const void *arg, size_t headroom_mib,
                    io_limited_result *result)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    size_t limit = address_space_bytes() + headroom_mib * 1024 * 1024;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(fds[0]);
        struct rlimit rl = {limit, limit};
        io_limited_result r;
        memset(&r, 0, sizeof r);
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(3);
        r.status = read_fn(arg, &r.untouched);
        snprintf(r.message, sizeof r.message, "%s", pv_last_error());
        write_all(fds[1], &r, sizeof r);
        _exit(0);
    }
    close(fds[1]);
    memset(result, 0, sizeof *result);
    size_t got = read_all(fds[0], result, sizeof *result);
    close(fds[0]);
    int wstatus = 0;
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || got != sizeof *result)
        fail_msg("the limited read died (wait status 0x%x, %zu of %zu result bytes)", wstatus,
                 got, sizeof *result);
}

size_t io_stderr_bytes_during(void (*fn)(const void *arg), const void *arg)
{
    char path[] = "/tmp/parvis-stderr-XXXXXX";
    int capture = mkstemp(path);
    assert_true(capture >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(capture, STDERR_FILENO) >= 0);
    fn(arg);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    struct stat info;
    assert_int_equal(fstat(capture, &info), 0);
    close(capture);
    return (size_t)info.st_size;
}
