/* The OpenCL runtime's on-disk cache of program binaries (the entry format
 * and its reader: runtime_cache.c). */
#include "runtime_state.h"
#include "runtime_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------ binary disk cache */

static uint64_t fnv1a_string(uint64_t hash, const char *text)
{
    return pv_cl_fnv1a(hash, text, strlen(text) + 1);
}

uint64_t pv_cl_binary_key(const pv_context *ctx, const pv_cl_state *state, const char *name,
                          const char *source, const char *options)
{
    uint64_t hash = PV_CL_FNV_START;
    hash = fnv1a_string(hash, ctx->device.name);
    hash = fnv1a_string(hash, ctx->device.vendor);
    hash = fnv1a_string(hash, ctx->device.driver_version);
    hash = fnv1a_string(hash, state->platform_version);
    hash = fnv1a_string(hash, PV_VERSION_STRING);
    hash = fnv1a_string(hash, name);
    hash = fnv1a_string(hash, source);
    return fnv1a_string(hash, options);
}

static int cache_disabled(void)
{
    return pv_config_is(PV_CONFIG_NO_BINARY_CACHE, "1");
}

/* $XDG_CACHE_HOME/parvis, else $HOME/.cache/parvis; created on demand. */
static int cache_path(uint64_t key, char *path, size_t size)
{
    char dir[3072];
    if (!pv_cache_root(dir, sizeof dir))
        return 0;
    mkdir(dir, 0755);
    size_t len = strlen(dir);
    snprintf(dir + len, sizeof dir - len, "/parvis");
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return 0;
    int n = snprintf(path, size, "%s/%016llx.clbin", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < size;
}

/* Returns a malloc'ed binary, or NULL when absent, foreign or corrupt. */
unsigned char *pv_cl_binary_load(uint64_t key, size_t *size)
{
    char path[4096];
    if (cache_disabled() || !cache_path(key, path, sizeof path))
        return NULL;
    FILE *file = NULL;
    if (pv_open_regular(path, &file, NULL) != 0)
        return NULL;
    unsigned char *binary = pv_cl_cache_read_entry(file, key, size);
    fclose(file);
    return binary;
}

/* The entry being stored: its key and binary. */
typedef struct binary_entry {
    uint64_t key;
    const unsigned char *binary;
    size_t size;
} binary_entry;

static int write_entry(FILE *file, const void *data)
{
    const binary_entry *entry = data;
    pv_cl_cache_header header;
    memcpy(header.magic, PV_CL_CACHE_MAGIC, 8);
    header.key = entry->key;
    header.size = entry->size;
    header.checksum = pv_cl_fnv1a(PV_CL_FNV_START, entry->binary, entry->size);
    return fwrite(&header, sizeof header, 1, file) == 1 &&
           fwrite(entry->binary, 1, entry->size, file) == entry->size;
}

/* Written to a temporary name and renamed, so readers never see a half file. */
void pv_cl_binary_store(uint64_t key, const unsigned char *binary, size_t size)
{
    char path[4096];
    if (cache_disabled() || !cache_path(key, path, sizeof path))
        return;
    binary_entry entry = {key, binary, size};
    pv_cl_cache_write_atomic(path, "binary cache", write_entry, &entry);
}

/* Drop a cache entry that loaded but does not work (a binary of another
 * program behind a valid header, a driver that rejects it): the next run
 * must not meet it again. */
void pv_cl_binary_remove(uint64_t key)
{
    char path[4096];
    if (cache_path(key, path, sizeof path) && unlink(path) == 0)
        pv_log(NULL, "binary cache: removed the unusable entry %s", path);
}

unsigned char *pv_cl_program_binary(cl_program program, size_t *size)
{
    size_t binary_size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, NULL) !=
            CL_SUCCESS ||
        binary_size == 0)
        return NULL;
    unsigned char *binary = malloc(binary_size);
    if (binary && clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) !=
                      CL_SUCCESS) {
        free(binary);
        return NULL;
    }
    *size = binary_size;
    return binary;
}
