/* Storage of a SIFT detection result (lib/core/ops_features.h): the one
 * place where its arrays are allocated, grown and freed, shared by the
 * front end and both backends. */
#define _DEFAULT_SOURCE /* madvise */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* The raw result's arrays, listed once for the checks and the frees that
 * treat them alike.  They are separate allocations: the front end hands
 * keypoints and descriptors over to the caller's pv_sift_features. */
#define RAW_ARRAYS 4
static void list_arrays(const pv_sift_raw *raw, void *arrays[RAW_ARRAYS])
{
    arrays[0] = raw->keypoints;
    arrays[1] = raw->keys;
    arrays[2] = raw->descriptors;
    arrays[3] = raw->descriptors_u8;
}

static int all_allocated(const pv_sift_raw *raw)
{
    void *arrays[RAW_ARRAYS];
    list_arrays(raw, arrays);
    for (int i = 0; i < RAW_ARRAYS; i++)
        if (!arrays[i])
            return 0;
    return 1;
}

void pv_sift_raw_free(pv_sift_raw *raw)
{
    if (!raw)
        return;
    void *arrays[RAW_ARRAYS];
    list_arrays(raw, arrays);
    for (int i = 0; i < RAW_ARRAYS; i++)
        free(arrays[i]);
    memset(raw, 0, sizeof *raw);
}

/* A large array is a fresh mapping (beyond malloc's mmap threshold):
 * filling it page by page costs a fault per 4 KiB, which at 8K is a good
 * part of a result's download.  Transparent huge pages, where the system
 * offers them on request, take one fault per 2 MiB. */
static void advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > start)
        madvise((void *)start, end - start, MADV_HUGEPAGE); /* a hint: failure is harmless */
#else
    (void)p;
    (void)bytes;
#endif
}

/* One write per page, spread over threads when there are many pages. */
static void touch_pages(void *p, size_t bytes)
{
    const size_t page = 4096;
    const long pages = (long)((bytes + page - 1) / page);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (bytes > ((size_t)8 << 20))
#endif
    for (long i = 0; i < pages; i++)
        ((volatile char *)p)[(size_t)i * page] = 0;
}

static void *new_array(size_t bytes, int prefault)
{
    void *p = malloc(bytes);
    if (p) {
        advise_huge_pages(p, bytes);
        if (prefault)
            touch_pages(p, bytes);
    }
    return p;
}

pv_status pv_sift_raw_reserve(pv_context *ctx, pv_sift_raw *raw, int count, int prefault)
{
    if (count <= raw->capacity && all_allocated(raw))
        return PV_OK;
    pv_sift_raw_free(raw);
    const size_t n = count > 0 ? (size_t)count : 1;
    size_t desc_u8, desc_f32;
    if (!pv_size_mul(n, PV_SIFT_DESCRIPTOR_SIZE, &desc_u8) ||
        !pv_size_mul(desc_u8, sizeof(float), &desc_f32))
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: %d keypoints are too many", count);
    raw->keypoints = new_array(n * sizeof *raw->keypoints, prefault);
    raw->keys = malloc(n * sizeof *raw->keys);
    raw->descriptors = new_array(desc_f32, prefault);
    raw->descriptors_u8 = new_array(desc_u8, prefault);
    if (all_allocated(raw)) {
        raw->capacity = (int)n;
        return PV_OK;
    }
    pv_sift_raw_free(raw);
    return pv_fail(ctx, PV_ERR_NOMEM, "sift_detect: no memory for %d keypoints", count);
}
