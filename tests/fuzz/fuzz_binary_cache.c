/* The OpenCL program-binary cache's entry reader
 * (backends/opencl/runtime/runtime_cache.c) on a file holding the input, for a
 * fixed cache key.  An entry accepted must be exactly what the file holds
 * after its 32-byte header, with a matching checksum; the reader must not
 * allocate what the header claims beyond the file (libFuzzer's
 * -malloc_limit_mb catches that). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "runtime_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_KEY 0x5056434c42494e31ull /* the corpus script writes it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("entry.clbin", data, size);
    FILE *file = fopen(path, "rb");
    if (!file)
        __builtin_trap();
    size_t binary_size = 0;
    unsigned char *binary = pv_cl_cache_read_entry(file, FUZZ_KEY, &binary_size);
    fclose(file);
    if (!binary)
        return 0;
    const size_t header = sizeof(pv_cl_cache_header);
    uint64_t stored_checksum;
    memcpy(&stored_checksum, data + 24, sizeof stored_checksum);
    if (size != header + binary_size || memcmp(binary, data + header, binary_size) != 0 ||
        pv_cl_fnv1a(PV_CL_FNV_START, binary, binary_size) != stored_checksum)
        __builtin_trap();
    free(binary);
    return 0;
}
