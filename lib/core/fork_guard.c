/* Contexts and fork().  A forked child has one thread: the parent's other
 * threads, its OpenMP pool (libgomp) and its OpenCL runtime's threads
 * (PoCL's) are not there, and the first call that waits on them hangs
 * forever.  So a context made before fork() refuses every call in the
 * child with PV_ERR_UNSUPPORTED (the check costs one getpid per call), and
 * in a child of a process that had started OpenCL a new OpenCL context is
 * refused too; a new CPU context in a child works, single-threaded (it
 * cannot use the inherited OpenMP pool).  pthread_atfork tells this file
 * that the process is such a child. */
#include "internal.h"

#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int opencl_started;     /* this process (or its parent) started OpenCL */
static int forked_child;       /* this process was forked after parvis was used */
static int opencl_inherited;   /* ... from a process that had started OpenCL */

static void in_child(void)
{
    forked_child = 1;
#ifdef _OPENMP
    omp_set_num_threads(1); /* the parent's pool is not in the child */
#endif
    opencl_inherited = __atomic_load_n(&opencl_started, __ATOMIC_RELAXED);
}

static void install(void)
{
    pthread_atfork(NULL, NULL, in_child);
}

void pv_fork_guard_install(void)
{
    pthread_once(&install_once, install);
}

void pv_fork_note_opencl(void)
{
    __atomic_store_n(&opencl_started, 1, __ATOMIC_RELAXED);
}

int pv_fork_is_child(void)
{
    return forked_child;
}

int pv_context_is_inherited(const pv_context *ctx)
{
    return ctx && ctx->creator_pid != getpid();
}

pv_status pv_fork_check_new_opencl(void)
{
    if (!opencl_inherited)
        return PV_OK;
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "pv_context_create: this process was forked from one that had started "
                   "OpenCL, whose runtime does not survive fork(); start workers with spawn or "
                   "forkserver (Python multiprocessing), or fork before any OpenCL use");
}

pv_status pv_fork_check_context(pv_context *ctx)
{
    if (!pv_context_is_inherited(ctx))
        return PV_OK;
    return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                   "this context was made before fork(), and a forked child cannot use it (the "
                   "parent's threads, OpenMP pool and OpenCL runtime are not in the child): make "
                   "a new context in the child, or start workers with spawn or forkserver");
}
