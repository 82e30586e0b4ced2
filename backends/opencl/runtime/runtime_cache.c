/* The program-binary cache's entry reader (format in runtime_cache.h), and
 * the file helpers both on-disk caches (this one and the FFT kernel cache)
 * share.  The file is a cache the user's account can write: anything in it
 * may be wrong, so the header's claims are checked against the file's real
 * size before a byte is allocated. */
#include "runtime_cache.h"
#include "../../../lib/core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t pv_cl_fnv1a(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

int pv_cl_cache_regular_size(FILE *file, uint64_t *size)
{
    struct stat st;
    if (!file || fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0)
        return 0;
    *size = (uint64_t)st.st_size;
    return 1;
}

/* A new file of its own for one writer, beside path. */
static FILE *open_unique(const char *path, char *temporary, size_t size)
{
    int n = snprintf(temporary, size, "%s.XXXXXX", path);
    if (n < 0 || (size_t)n >= size)
        return NULL;
    int fd = mkstemp(temporary);
    if (fd < 0)
        return NULL;
    fchmod(fd, 0644); /* mkstemp's 0600 would hide the cache from a shared account's readers */
    FILE *file = fdopen(fd, "wb");
    if (!file) {
        close(fd);
        unlink(temporary);
    }
    return file;
}

int pv_cl_cache_write_atomic(const char *path, const char *cache_name,
                             int (*write)(FILE *file, const void *data), const void *data)
{
    char temporary[4200];
    FILE *file = open_unique(path, temporary, sizeof temporary);
    if (!file) {
        pv_log(NULL, "%s: cannot write in the directory of %s (%s); running uncached",
               cache_name, path, strerror(errno));
        return 0;
    }
    int ok = write(file, data);
    ok = (fclose(file) == 0) && ok;
    if (!ok || rename(temporary, path) != 0) {
        pv_log(NULL, "%s: cannot store %s; running uncached", cache_name, path);
        unlink(temporary);
        return 0;
    }
    return 1;
}

/* 1 when the file is exactly a header and header->size bytes long. */
static int holds_exactly(FILE *file, const pv_cl_cache_header *header)
{
    uint64_t size;
    return pv_cl_cache_regular_size(file, &size) && size >= sizeof *header &&
           size - sizeof *header == header->size;
}

unsigned char *pv_cl_cache_read_entry(FILE *file, uint64_t key, size_t *size)
{
    pv_cl_cache_header header;
    if (fread(&header, sizeof header, 1, file) != 1 ||
        memcmp(header.magic, PV_CL_CACHE_MAGIC, 8) != 0 || header.key != key ||
        header.size == 0 || header.size >= PV_CL_CACHE_MAX_BINARY || !holds_exactly(file, &header))
        return NULL;
    unsigned char *binary = malloc((size_t)header.size);
    if (!binary)
        return NULL;
    if (fread(binary, 1, (size_t)header.size, file) != header.size ||
        pv_cl_fnv1a(PV_CL_FNV_START, binary, (size_t)header.size) != header.checksum) {
        free(binary);
        return NULL;
    }
    *size = (size_t)header.size;
    return binary;
}
