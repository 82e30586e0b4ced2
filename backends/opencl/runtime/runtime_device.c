/* The OpenCL runtime's devices: every device of every platform, enumerated
 * once per process, described for pv_device_list and for the contexts
 * made on them. */
#include "runtime_state.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --------------------------------------------------------------- devices */

/* Every device of every platform, in platform order: the index space of
 * pv_device_list(), PARVIS_DEVICE and pv_context_options.device_index.
 * Enumerated once per process, under pthread_once: ICD loaders and drivers
 * were seen to crash, or to report no platform, when several threads made
 * their first OpenCL calls at the same moment.  Every later query reads
 * this table (devices do not come and go while a process runs). */
typedef struct device_table {
    int count;
    char problem[512];   /* why count is 0, for the error message */
    cl_platform_id platforms[PV_CL_MAX_DEVICES];
    cl_device_id devices[PV_CL_MAX_DEVICES];
    pv_device_info info[PV_CL_MAX_DEVICES];
    char platform_version[PV_CL_MAX_DEVICES][128];
} device_table;

static device_table the_devices;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void describe_device(cl_platform_id platform, cl_device_id device, int index,
                            pv_device_info *info);

/* mkdir -p of an absolute or relative path; 0 when it exists afterwards. */
static int make_directories(const char *path)
{
    char partial[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof partial)
        return -1;
    memcpy(partial, path, len + 1);
    for (char *p = partial + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(partial, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(partial, 0755) != 0 && errno != EEXIST)
        return -1;
    return access(partial, W_OK | X_OK);
}

/* PoCL keeps compiled kernels under $POCL_CACHE_DIR, else
 * $XDG_CACHE_HOME/pocl/kcache, else $HOME/.cache/pocl/kcache, and reports
 * no device at all when it cannot create that directory.  A cache is an
 * optimisation, not a requirement: when the default place is unusable and
 * the user set no POCL_CACHE_DIR, PoCL gets a private directory of this
 * user under the temporary directory (its own, checked: not a link, owned
 * by us, mode 0700).  Runs once, before the first OpenCL call. */
static void ensure_pocl_cache_dir(void)
{
    const char *set = getenv("POCL_CACHE_DIR");
    if (set && *set)
        return;
    char dir[4096], root[3072];
    dir[0] = '\0';
    if (pv_cache_root(root, sizeof root))
        snprintf(dir, sizeof dir, "%s/pocl/kcache", root);
    if (dir[0] && make_directories(dir) == 0)
        return;
    const char *tmp = getenv("TMPDIR");
    char fallback[4096];
    snprintf(fallback, sizeof fallback, "%s/parvis-pocl-%ld", tmp && *tmp ? tmp : "/tmp",
             (long)getuid());
    mkdir(fallback, 0700);
    struct stat st;
    if (lstat(fallback, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077) != 0) {
        pv_log(NULL, "OpenCL: no usable kernel cache directory for PoCL (%s, %s)",
               dir[0] ? dir : "no XDG_CACHE_HOME or HOME", fallback);
        return;
    }
    setenv("POCL_CACHE_DIR", fallback, 0);
    pv_log(NULL, "OpenCL: %s is not writable, PoCL caches its kernels in %s",
           dir[0] ? dir : "the cache directory (no XDG_CACHE_HOME or HOME)", fallback);
}

static void enumerate_once(void)
{
    device_table *table = &the_devices;
    ensure_pocl_cache_dir();
    cl_platform_id platforms[PV_CL_MAX_PLATFORMS];
    cl_uint platform_count = 0;
    cl_int err = clGetPlatformIDs(PV_CL_MAX_PLATFORMS, platforms, &platform_count);
    if (err != CL_SUCCESS || platform_count == 0) {
        snprintf(table->problem, sizeof table->problem,
                 "no OpenCL platform found (clGetPlatformIDs: %s, %d): is an ICD installed?",
                 pv_cl_error_name(err), (int)err);
        return;
    }
    snprintf(table->problem, sizeof table->problem, "no OpenCL device found:");
    for (cl_uint p = 0; p < platform_count && p < PV_CL_MAX_PLATFORMS; p++) {
        cl_device_id found[PV_CL_MAX_DEVICES];
        cl_uint count = 0;
        err = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, PV_CL_MAX_DEVICES, found, &count);
        if (err != CL_SUCCESS) {
            char name[128] = "?";
            clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
            name[sizeof name - 1] = '\0';
            size_t used = strlen(table->problem);
            snprintf(table->problem + used, sizeof table->problem - used,
                     " platform '%s': clGetDeviceIDs failed: %s (%d);", name,
                     pv_cl_error_name(err), (int)err);
            continue;
        }
        char version[128] = "";
        if (clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof version, version, NULL) !=
            CL_SUCCESS)
            version[0] = '\0';
        version[sizeof version - 1] = '\0';
        for (cl_uint d = 0; d < count && d < PV_CL_MAX_DEVICES && table->count < PV_CL_MAX_DEVICES;
             d++) {
            int i = table->count++;
            table->platforms[i] = platforms[p];
            table->devices[i] = found[d];
            describe_device(platforms[p], found[d], i, &table->info[i]);
            memcpy(table->platform_version[i], version, sizeof version);
        }
    }
}

static const device_table *devices(void)
{
    pthread_once(&devices_once, enumerate_once);
    return &the_devices;
}

/* Device strings longer than the field are truncated, not dropped. */
static void device_string(cl_device_id device, cl_device_info what, char *out, size_t size)
{
    size_t needed = 0;
    out[0] = '\0';
    if (clGetDeviceInfo(device, what, 0, NULL, &needed) != CL_SUCCESS || needed == 0)
        return;
    char *full = malloc(needed);
    if (full && clGetDeviceInfo(device, what, needed, full, NULL) == CL_SUCCESS)
        snprintf(out, size, "%s", full);
    free(full);
}

static pv_device_type device_type(cl_device_id device)
{
    cl_device_type type = 0;
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (type & CL_DEVICE_TYPE_GPU)
        return PV_DEVICE_GPU;
    if (type & CL_DEVICE_TYPE_CPU)
        return PV_DEVICE_CPU;
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return PV_DEVICE_ACCELERATOR;
    return PV_DEVICE_OTHER;
}

static void describe_device(cl_platform_id platform, cl_device_id device, int index,
                            pv_device_info *info)
{
    cl_ulong value = 0;
    cl_uint units = 0;
    size_t group = 0;
    memset(info, 0, sizeof *info);
    info->index = index;
    device_string(device, CL_DEVICE_NAME, info->name, sizeof info->name);
    device_string(device, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    device_string(device, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    device_string(device, CL_DEVICE_VERSION, info->opencl_version, sizeof info->opencl_version);
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) !=
        CL_SUCCESS)
        info->platform[0] = '\0';
    info->platform[sizeof info->platform - 1] = '\0';
    info->type = device_type(device);
    if (clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->global_memory = value;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->max_alloc = value;
    if (clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof value, &value, NULL) == CL_SUCCESS)
        info->local_memory = value;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) == CL_SUCCESS)
        info->compute_units = (int)units;
    if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL) == CL_SUCCESS)
        info->max_work_group_size = (int)group;
}

pv_status pv_cl_runtime_list(pv_device_info *list, int capacity, int *count)
{
    const device_table *table = devices();
    for (int i = 0; i < table->count && i < capacity; i++)
        list[i] = table->info[i];
    *count = table->count;
    return PV_OK;
}

pv_status pv_cl_device_pick(pv_context *ctx, pv_cl_state *state, int device_index)
{
    const device_table *table = devices();
    int total = table->count;
    if (total == 0)
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "%s", table->problem);
    if (device_index < 0 || device_index >= total)
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "OpenCL device index %d out of range (0..%d)",
                       device_index, total - 1);
    state->platform = table->platforms[device_index];
    state->device = table->devices[device_index];
    ctx->device = table->info[device_index];
    memcpy(state->platform_version, table->platform_version[device_index],
           sizeof state->platform_version);
    return PV_OK;
}

pv_status pv_cl_device_pick_id(pv_context *ctx, pv_cl_state *state, cl_device_id device)
{
    const device_table *table = devices();
    for (int i = 0; i < table->count; i++)
        if (table->devices[i] == device)
            return pv_cl_device_pick(ctx, state, i);
    return pv_fail(ctx, PV_ERR_NO_DEVICE,
                   "the caller's OpenCL device is not one of the platforms' devices "
                   "(a sub-device, or a device of another ICD loader)");
}
