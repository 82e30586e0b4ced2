/* How much memory the process can still have from the host: what both
 * the CPU backend and an OpenCL device of CPU type (PoCL: its buffers are
 * host memory) budget their allocations against.  Physical RAM alone
 * overstates it under `ulimit -v` or a data limit, where the allocation
 * fails (or, inside PoCL, aborts the process) long before RAM runs out. */
#include "internal.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0 || (uint64_t)pages > UINT64_MAX / (uint64_t)page_size)
        return 0;
    return (uint64_t)pages * (uint64_t)page_size;
}

/* The process's mapped size and data+stack size in bytes (statm's first
 * and sixth fields); 0 when /proc says nothing. */
static void process_usage(uint64_t *mapped, uint64_t *data)
{
    *mapped = *data = 0;
    FILE *file = fopen("/proc/self/statm", "r"); /* a proc file: never blocks */
    if (!file)
        return;
    unsigned long long size = 0, resident, shared, text, lib, data_pages = 0;
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (fscanf(file, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text, &lib,
               &data_pages) == 6 && page_size > 0) {
        *mapped = (uint64_t)size * (uint64_t)page_size;
        *data = (uint64_t)data_pages * (uint64_t)page_size;
    }
    fclose(file);
}

/* What is left under one resource limit, given what is in use; UINT64_MAX
 * when unlimited. */
static uint64_t left_under(int resource, uint64_t used)
{
    struct rlimit limit;
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    uint64_t cap = (uint64_t)limit.rlim_cur;
    return cap > used ? cap - used : 0;
}

uint64_t pv_host_memory_available(void)
{
    uint64_t mapped, data;
    process_usage(&mapped, &data);
    uint64_t available = physical_memory();
    if (available == 0)
        available = UINT64_MAX;
    uint64_t left = left_under(RLIMIT_AS, mapped);
    if (left < available)
        available = left;
    left = left_under(RLIMIT_DATA, data);
    if (left < available)
        available = left;
    return available;
}
