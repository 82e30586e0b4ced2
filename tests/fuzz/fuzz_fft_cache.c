/* The FFT kernel cache's entry reader (backends/opencl/fft/fft_cache.c) on a
 * file holding the input, for a fixed key.  An accepted entry must be
 * exactly what the file holds: its programs, in order, fill the payload
 * after the 40-byte header with nothing left over, each inside the copy
 * the reader made, and writing the entry back gives the input byte for
 * byte.  The reader must not allocate what the header claims beyond the
 * file (libFuzzer's -malloc_limit_mb catches that). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fft_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_KEY 0x5056464654433031ull /* the corpus script writes it */

/* Serialise the entry again and compare with the input. */
static void check_round_trip(const pv_fft_cache_entry *entry, const uint8_t *data, size_t size)
{
    FILE *file = tmpfile();
    if (!file)
        __builtin_trap();
    if (!pv_fft_cache_write(file, FUZZ_KEY, entry->programs, entry->count))
        __builtin_trap();
    long length = ftell(file);
    if (length < 0 || (size_t)length != size)
        __builtin_trap();
    unsigned char *again = malloc(size);
    if (!again)
        __builtin_trap();
    rewind(file);
    if (fread(again, 1, size, file) != size || memcmp(again, data, size) != 0)
        __builtin_trap();
    free(again);
    fclose(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("entry.fftbin", data, size);
    FILE *file = fopen(path, "rb");
    if (!file)
        __builtin_trap();
    pv_fft_cache_entry entry;
    memset(&entry, 0, sizeof entry);
    int ok = pv_fft_cache_read(file, FUZZ_KEY, &entry);
    fclose(file);
    if (!ok) {
        if (entry.programs || entry.payload || entry.count)
            __builtin_trap();
        return 0;
    }
    const size_t header = sizeof(pv_fft_cache_header);
    size_t covered = 0;
    for (size_t i = 0; i < entry.count; i++) {
        const pv_fft_cache_program *p = &entry.programs[i];
        if (p->size == 0 || p->binary != entry.payload + covered + 16)
            __builtin_trap();
        covered += 16 + p->size;
        /* touch every byte, for the sanitizers */
        volatile unsigned char sink = 0;
        for (size_t b = 0; b < p->size; b++)
            sink ^= p->binary[b];
        (void)sink;
    }
    if (header + covered != size)
        __builtin_trap();
    check_round_trip(&entry, data, size);
    pv_fft_cache_entry_free(&entry);
    return 0;
}
