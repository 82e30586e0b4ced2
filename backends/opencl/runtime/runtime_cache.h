/* Internal: the OpenCL program-binary cache's file format, apart from the
 * runtime so that it can be read (and fuzzed) without OpenCL.  An entry is
 *     "PVCLBIN1"  key (u64)  size (u64)  FNV-1a 64 of the binary (u64)
 * in host byte order, then `size` bytes of program binary. */
#ifndef PV_CL_RUNTIME_CACHE_H
#define PV_CL_RUNTIME_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PV_CL_CACHE_MAGIC "PVCLBIN1"
/* Larger claims are refused whatever the file holds. */
#define PV_CL_CACHE_MAX_BINARY ((uint64_t)1 << 30)

typedef struct pv_cl_cache_header {
    char magic[8];
    uint64_t key;
    uint64_t size;
    uint64_t checksum;
} pv_cl_cache_header;

/* FNV-1a 64 of data, continuing from hash (start: PV_CL_FNV_START). */
#define PV_CL_FNV_START 14695981039346656037ull
uint64_t pv_cl_fnv1a(uint64_t hash, const void *data, size_t size);

/* The size of file when it is a regular file: 1 and *size, else 0.  Both
 * caches check a header's claims against it before allocating. */
int pv_cl_cache_regular_size(FILE *file, uint64_t *size);

/* Writes a cache file so that readers never see half of one: write(file,
 * data) fills a new temporary file beside path (one per writer, so threads
 * and processes storing the same entry at once do not meet), which is
 * renamed over path only when everything was written; otherwise it is
 * removed.  cache_name prefixes the log lines (e.g. "binary cache").
 * Returns 1 when path holds the new file, 0 otherwise. */
int pv_cl_cache_write_atomic(const char *path, const char *cache_name,
                             int (*write)(FILE *file, const void *data), const void *data);

/* The binary of the entry held by file (read from its start) when it is
 * one for key, complete (the file holds exactly the header and `size`
 * bytes, checked before allocating) and its checksum matches: a malloc'ed
 * copy and its size; NULL otherwise.  No OpenCL call. */
unsigned char *pv_cl_cache_read_entry(FILE *file, uint64_t key, size_t *size);

#endif
