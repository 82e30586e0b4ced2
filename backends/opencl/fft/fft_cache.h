/* Internal: the on-disk cache of compiled FFT kernels.  An FFT engine that
 * generates OpenCL source at plan time (VkFFT) compiles several programs
 * per plan; this cache keeps their device binaries, one file per plan, so
 * that a fresh process loads them instead of compiling them again.
 *
 * A file $XDG_CACHE_HOME/parvis/fft/<key>.fftbin holds, in host byte order,
 *     "PVFFTC01"  key (u64)  count (u64)  size (u64)  FNV-1a 64 of the payload (u64)
 * then a payload of `size` bytes: `count` programs in the order the engine
 * builds them, each
 *     source hash (u64)  binary size (u64)  binary bytes.
 * The key (pv_fft_cache_key) covers the device, its driver and platform,
 * the engine and its version, parvis's version and the transform (sizes,
 * batch, precision, direction, layout); each program's source hash lets a
 * program whose generated source changed be rebuilt alone.
 *
 * Everything here is plain C without OpenCL, so the parser can be fuzzed
 * (tests/fuzz/fuzz_fft_cache.c).  Files are written to a unique temporary
 * name and renamed, so readers never see half an entry and concurrent
 * writers of one key leave one whole entry.  PARVIS_NO_BINARY_CACHE=1 or
 * PARVIS_NO_FFT_CACHE=1 turn the cache off. */
#ifndef PV_CL_FFT_CACHE_H
#define PV_CL_FFT_CACHE_H

#include "../runtime/runtime_cache.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PV_FFT_CACHE_MAGIC "PVFFTC01"
/* Larger files and program counts are refused whatever the file holds. */
#define PV_FFT_CACHE_MAX_BYTES ((uint64_t)1 << 30)
#define PV_FFT_CACHE_MAX_PROGRAMS 4096u

typedef struct pv_fft_cache_header {
    char magic[8];
    uint64_t key;
    uint64_t count;
    uint64_t size;
    uint64_t checksum;
} pv_fft_cache_header;

/* One compiled program of a plan. */
typedef struct pv_fft_cache_program {
    uint64_t source_hash;          /* pv_cl_fnv1a of its source text */
    size_t size;
    const unsigned char *binary;   /* owned by whoever filled the struct */
} pv_fft_cache_program;

/* A parsed entry: programs point into payload, which follows the program
 * table in the table's allocation. */
typedef struct pv_fft_cache_entry {
    size_t count;
    pv_fft_cache_program *programs;
    unsigned char *payload;
} pv_fft_cache_entry;

/* What identifies a plan's binaries (all strings non-NULL). */
typedef struct pv_fft_cache_identity {
    const char *device;            /* CL_DEVICE_NAME */
    const char *vendor;            /* CL_DEVICE_VENDOR */
    const char *driver;            /* CL_DRIVER_VERSION */
    const char *platform;          /* CL_PLATFORM_VERSION */
    const char *engine;            /* "VkFFT" */
    int engine_version;            /* e.g. VkFFTGetVersion() */
    int size[3];
    int batch;
    const char *transform;         /* precision, direction and layout, e.g. "f32 r2c+c2r dense" */
} pv_fft_cache_identity;

/* Counters of this process (every context), for tests and the bench. */
typedef struct pv_fft_cache_stats {
    unsigned long hits;            /* plans made wholly from cached binaries */
    unsigned long misses;          /* plans with no usable entry (or a partly stale one) */
    unsigned long rejected;        /* entries or programs found corrupt, foreign or unusable */
    unsigned long stored;          /* entries written */
    unsigned long store_failures;  /* entries that could not be written */
} pv_fft_cache_stats;

uint64_t pv_fft_cache_key(const pv_fft_cache_identity *identity);

/* Parse an entry held in data[0..size) for key: 1 and *entry filled (a
 * copy of the data; free with pv_fft_cache_entry_free) when the magic and
 * key match, the header's size is exactly what follows it, the checksum
 * matches and the programs fill the payload exactly; 0 otherwise, *entry
 * untouched. */
int pv_fft_cache_parse(const unsigned char *data, size_t size, uint64_t key,
                       pv_fft_cache_entry *entry);
/* The same on a whole file (read from its start; its size checked against
 * PV_FFT_CACHE_MAX_BYTES before anything is allocated). */
int pv_fft_cache_read(FILE *file, uint64_t key, pv_fft_cache_entry *entry);
void pv_fft_cache_entry_free(pv_fft_cache_entry *entry);

/* Write an entry to file: 1 on success. */
int pv_fft_cache_write(FILE *file, uint64_t key, const pv_fft_cache_program *programs,
                       size_t count);

/* 1 unless PARVIS_NO_BINARY_CACHE=1 or PARVIS_NO_FFT_CACHE=1. */
int pv_fft_cache_enabled(void);
/* The entry's path, creating $root/parvis/fft as needed: 1 on success. */
int pv_fft_cache_path(uint64_t key, char *path, size_t size);
/* Load key's entry from disk: 1 when there is a valid one.  An entry that
 * exists but is corrupt or foreign is counted as rejected and removed. */
int pv_fft_cache_load(uint64_t key, pv_fft_cache_entry *entry);
/* Store key's entry atomically: 1 on success (counted either way). */
int pv_fft_cache_store(uint64_t key, const pv_fft_cache_program *programs, size_t count);
/* Remove key's entry (one found unusable after loading). */
void pv_fft_cache_remove(uint64_t key);

/* Count a plan made from the cache (hit) or not (miss), or a rejected
 * program; read the counters. */
void pv_fft_cache_count_hit(int hit);
void pv_fft_cache_count_rejected(void);
void pv_fft_cache_get_stats(pv_fft_cache_stats *stats);

#endif
