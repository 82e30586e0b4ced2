/* Opening input files that the library reads (images, volumes, flow
 * fields, tuning and kernel caches, FFTW wisdom) only when they are
 * regular files.  A plain fopen of a FIFO blocks until a writer comes
 * (forever, in practice), and /dev/zero or /dev/urandom never end; the
 * file is therefore opened without blocking, checked with fstat, and only
 * then made blocking again for the reads. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

int pv_open_regular(const char *path, FILE **stream, uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat info;
    int result = 0;
    if (fstat(fd, &info) != 0)
        result = errno;
    else if (!S_ISREG(info.st_mode))
        result = PV_NOT_REGULAR;
    else {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
            result = errno;
    }
    FILE *opened = result == 0 ? fdopen(fd, "rb") : NULL;
    if (result == 0 && !opened)
        result = errno;
    if (result != 0) {
        close(fd);
        return result;
    }
    *stream = opened;
    if (size)
        *size = (uint64_t)info.st_size;
    return 0;
}

const char *pv_open_regular_reason(int result)
{
    return result == PV_NOT_REGULAR ? "not a regular file (a FIFO, device or directory)"
                                    : strerror(result);
}
