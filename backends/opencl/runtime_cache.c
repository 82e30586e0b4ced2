/* The program-binary cache's entry reader (format in runtime_cache.h).
 * The file is a cache the user's account can write: anything in it may be
 * wrong, so the header's claims are checked against the file's real size
 * before a byte is allocated. */
#include "runtime_cache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t pv_cl_fnv1a(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < size; i++) {
        hash ^= bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

/* 1 when the file is exactly a header and header->size bytes long. */
static int holds_exactly(FILE *file, const pv_cl_cache_header *header)
{
    struct stat st;
    if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0)
        return 0;
    return (uint64_t)st.st_size >= sizeof *header &&
           (uint64_t)st.st_size - sizeof *header == header->size;
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
