/* The FFT kernel cache's file format, its reader and its atomic writer
 * (format and rules in fft_cache.h).  The files live in a directory the
 * user's account can write: anything in them may be wrong, so every claim
 * of a header is checked against the bytes really there before it is
 * trusted, and nothing is allocated beyond the file's real size. */
#include "fft_cache.h"
#include "../../../lib/core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pv_fft_cache_stats counters;

/* ----------------------------------------------------------------- keys */

/* Strings with their terminating NUL, so that "ab"+"c" and "a"+"bc" differ. */
static uint64_t hash_string(uint64_t hash, const char *text)
{
    return pv_cl_fnv1a(hash, text, strlen(text) + 1);
}

static uint64_t hash_int(uint64_t hash, int value)
{
    int64_t wide = value;
    return pv_cl_fnv1a(hash, &wide, sizeof wide);
}

uint64_t pv_fft_cache_key(const pv_fft_cache_identity *id)
{
    uint64_t hash = hash_string(PV_CL_FNV_START, PV_FFT_CACHE_MAGIC);
    hash = hash_string(hash, id->device);
    hash = hash_string(hash, id->vendor);
    hash = hash_string(hash, id->driver);
    hash = hash_string(hash, id->platform);
    hash = hash_string(hash, PV_VERSION_STRING);
    hash = hash_string(hash, id->engine);
    hash = hash_int(hash, id->engine_version);
    for (int axis = 0; axis < 3; axis++)
        hash = hash_int(hash, id->size[axis]);
    hash = hash_int(hash, id->batch);
    return hash_string(hash, id->transform);
}

/* --------------------------------------------------------------- reading */

static uint64_t read_u64(const unsigned char *at)
{
    uint64_t value;
    memcpy(&value, at, sizeof value);
    return value;
}

/* Walk the payload's records; fill programs when it is not NULL.  1 when
 * exactly `count` records fill the payload to its last byte. */
static int walk_programs(const unsigned char *payload, uint64_t size, uint64_t count,
                         pv_fft_cache_program *programs)
{
    uint64_t at = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (size - at < 16)
            return 0;
        uint64_t source_hash = read_u64(payload + at);
        uint64_t length = read_u64(payload + at + 8);
        at += 16;
        if (length == 0 || length > size - at)
            return 0;
        if (programs) {
            programs[i].source_hash = source_hash;
            programs[i].size = (size_t)length;
            programs[i].binary = payload + at;
        }
        at += length;
    }
    return at == size;
}

int pv_fft_cache_parse(const unsigned char *data, size_t size, uint64_t key,
                       pv_fft_cache_entry *entry)
{
    pv_fft_cache_header header;
    if (!data || size < sizeof header)
        return 0;
    memcpy(&header, data, sizeof header);
    const unsigned char *payload = data + sizeof header;
    uint64_t payload_size = size - sizeof header;
    if (memcmp(header.magic, PV_FFT_CACHE_MAGIC, 8) != 0 || header.key != key ||
        header.count == 0 || header.count > PV_FFT_CACHE_MAX_PROGRAMS ||
        header.size != payload_size || payload_size >= PV_FFT_CACHE_MAX_BYTES ||
        pv_cl_fnv1a(PV_CL_FNV_START, payload, (size_t)payload_size) !=
            header.checksum ||
        !walk_programs(payload, payload_size, header.count, NULL))
        return 0;
    /* One allocation: the program table, then the payload copy its records
     * point into (sizes bounded above, far from overflow). */
    const size_t table = (size_t)header.count * sizeof(pv_fft_cache_program);
    pv_fft_cache_program *programs = malloc(table + (size_t)payload_size);
    if (!programs)
        return 0;
    unsigned char *copy = (unsigned char *)programs + table;
    memcpy(copy, payload, (size_t)payload_size);
    walk_programs(copy, payload_size, header.count, programs);
    entry->count = (size_t)header.count;
    entry->programs = programs;
    entry->payload = copy;
    return 1;
}

int pv_fft_cache_read(FILE *file, uint64_t key, pv_fft_cache_entry *entry)
{
    uint64_t file_size;
    if (!pv_cl_cache_regular_size(file, &file_size) || file_size < sizeof(pv_fft_cache_header) ||
        file_size >= PV_FFT_CACHE_MAX_BYTES)
        return 0;
    size_t size = (size_t)file_size;
    unsigned char *data = malloc(size);
    if (!data)
        return 0;
    int ok = fread(data, 1, size, file) == size && fgetc(file) == EOF &&
             pv_fft_cache_parse(data, size, key, entry);
    free(data);
    return ok;
}

void pv_fft_cache_entry_free(pv_fft_cache_entry *entry)
{
    if (!entry)
        return;
    free(entry->programs); /* the payload too: one allocation */
    memset(entry, 0, sizeof *entry);
}

/* --------------------------------------------------------------- writing */

static int payload_size(const pv_fft_cache_program *programs, size_t count, uint64_t *size)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (!programs[i].binary || programs[i].size == 0 ||
            programs[i].size >= PV_FFT_CACHE_MAX_BYTES)
            return 0;
        total += 16 + (uint64_t)programs[i].size;
        if (total >= PV_FFT_CACHE_MAX_BYTES)
            return 0;
    }
    *size = total;
    return 1;
}

static uint64_t payload_checksum(const pv_fft_cache_program *programs, size_t count)
{
    uint64_t hash = PV_CL_FNV_START;
    for (size_t i = 0; i < count; i++) {
        uint64_t length = programs[i].size;
        hash = pv_cl_fnv1a(hash, &programs[i].source_hash, 8);
        hash = pv_cl_fnv1a(hash, &length, 8);
        hash = pv_cl_fnv1a(hash, programs[i].binary, programs[i].size);
    }
    return hash;
}

int pv_fft_cache_write(FILE *file, uint64_t key, const pv_fft_cache_program *programs,
                       size_t count)
{
    pv_fft_cache_header header;
    if (!file || !programs || count == 0 || count > PV_FFT_CACHE_MAX_PROGRAMS ||
        !payload_size(programs, count, &header.size))
        return 0;
    memcpy(header.magic, PV_FFT_CACHE_MAGIC, 8);
    header.key = key;
    header.count = count;
    header.checksum = payload_checksum(programs, count);
    int ok = fwrite(&header, sizeof header, 1, file) == 1;
    for (size_t i = 0; ok && i < count; i++) {
        uint64_t length = programs[i].size;
        ok = fwrite(&programs[i].source_hash, 8, 1, file) == 1 &&
             fwrite(&length, 8, 1, file) == 1 &&
             fwrite(programs[i].binary, 1, programs[i].size, file) == programs[i].size;
    }
    return ok;
}

/* ----------------------------------------------------------------- files */

int pv_fft_cache_enabled(void)
{
    return !pv_config_is(PV_CONFIG_NO_BINARY_CACHE, "1") &&
           !pv_config_is(PV_CONFIG_NO_FFT_CACHE, "1");
}

/* mkdir that accepts a directory already there. */
static int ensure_directory(const char *dir)
{
    return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

int pv_fft_cache_path(uint64_t key, char *path, size_t size)
{
    char dir[3072];
    if (!pv_cache_root(dir, sizeof dir))
        return 0;
    ensure_directory(dir);
    size_t len = strlen(dir);
    if (snprintf(dir + len, sizeof dir - len, "/parvis") >= (int)(sizeof dir - len) ||
        !ensure_directory(dir))
        return 0;
    len = strlen(dir);
    if (snprintf(dir + len, sizeof dir - len, "/fft") >= (int)(sizeof dir - len) ||
        !ensure_directory(dir))
        return 0;
    int n = snprintf(path, size, "%s/%016llx.fftbin", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < size;
}

void pv_fft_cache_remove(uint64_t key)
{
    char path[4096];
    if (pv_fft_cache_path(key, path, sizeof path) && unlink(path) == 0)
        pv_log(NULL, "FFT cache: removed the unusable entry %s", path);
}

int pv_fft_cache_load(uint64_t key, pv_fft_cache_entry *entry)
{
    char path[4096];
    if (!pv_fft_cache_enabled() || !pv_fft_cache_path(key, path, sizeof path))
        return 0;
    FILE *file = NULL;
    if (pv_open_regular(path, &file, NULL) != 0)
        return 0;
    int ok = pv_fft_cache_read(file, key, entry);
    fclose(file);
    if (!ok) {
        pv_fft_cache_count_rejected();
        pv_fft_cache_remove(key);
    }
    return ok;
}

static void count_store(int ok)
{
    if (ok)
        __atomic_fetch_add(&counters.stored, 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&counters.store_failures, 1, __ATOMIC_RELAXED);
}

/* The entry being stored: its key and programs. */
typedef struct store_request {
    uint64_t key;
    const pv_fft_cache_program *programs;
    size_t count;
} store_request;

static int write_request(FILE *file, const void *data)
{
    const store_request *request = data;
    return pv_fft_cache_write(file, request->key, request->programs, request->count);
}

/* Written to a temporary name and renamed (threads or processes making the
 * same plan at once each write their own, and the last rename wins). */
int pv_fft_cache_store(uint64_t key, const pv_fft_cache_program *programs, size_t count)
{
    char path[4096];
    if (!pv_fft_cache_enabled())
        return 0;
    if (!pv_fft_cache_path(key, path, sizeof path)) {
        pv_log(NULL, "FFT cache: no usable cache directory; running uncached");
        count_store(0);
        return 0;
    }
    store_request request = {key, programs, count};
    int ok = pv_cl_cache_write_atomic(path, "FFT cache", write_request, &request);
    count_store(ok);
    return ok;
}

/* -------------------------------------------------------------- counters */

void pv_fft_cache_count_hit(int hit)
{
    if (hit)
        __atomic_fetch_add(&counters.hits, 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&counters.misses, 1, __ATOMIC_RELAXED);
}

void pv_fft_cache_count_rejected(void)
{
    __atomic_fetch_add(&counters.rejected, 1, __ATOMIC_RELAXED);
}

void pv_fft_cache_get_stats(pv_fft_cache_stats *stats)
{
    if (!stats)
        return;
    stats->hits = __atomic_load_n(&counters.hits, __ATOMIC_RELAXED);
    stats->misses = __atomic_load_n(&counters.misses, __ATOMIC_RELAXED);
    stats->rejected = __atomic_load_n(&counters.rejected, __ATOMIC_RELAXED);
    stats->stored = __atomic_load_n(&counters.stored, __ATOMIC_RELAXED);
    stats->store_failures = __atomic_load_n(&counters.store_failures, __ATOMIC_RELAXED);
}
