/* Internal: the beginning and the end of a backend plan's `create`
 * (PV_OPS_PLAN_SLOTS in lib/core/ops_slots.h), shared by every module that
 * runs on a plan.  Not installed. */
#ifndef PV_PLAN_H
#define PV_PLAN_H

#include "parvis.h"

#include <pthread.h>

/* A zeroed plan of `size` bytes; NULL, with PV_ERR_NOMEM recorded on ctx
 * ("<what>: out of memory"), when memory is short. */
void *pv_plan_new(pv_context *ctx, size_t size, const char *what);

/* The module's `destroy` entry point; it accepts a partly built plan. */
typedef void (*pv_plan_destroy_fn)(pv_context *ctx, void *plan);

/* Hands the freshly built plan `built` to the caller through *plan when its
 * set-up succeeded; otherwise destroys it, leaves *plan untouched and
 * returns the set-up's failure. */
static inline pv_status pv_plan_hand_over(pv_context *ctx, pv_status status, void *built,
                                          pv_plan_destroy_fn destroy, void **plan)
{
    if (status != PV_OK) {
        destroy(ctx, built);
        return status;
    }
    *plan = built;
    return PV_OK;
}

/* ---- plan caches: the backends keep their FFT plans in lists */

/* The points of a real-to-complex transform of extent size[3]: *real_count
 * of the grid, *complex_count of its half spectrum ((size[0] / 2 + 1)
 * columns).  0 when a count, or the bytes of `batch` half spectra of
 * complex floats, overflows size_t. */
int pv_r2c_counts(const int size[3], size_t batch, size_t *real_count, size_t *complex_count);

/* Gives back one use of a cache entry: nothing for NULL (a plan's destroy
 * gives back what a failed create never took), else drop(entry) under the
 * cache's lock, which counts the user off and applies the cache's policy
 * (evicting idle plans, freeing an orphaned entry's last use). */
static inline void pv_cache_release(pthread_mutex_t *lock, void *entry, void (*drop)(void *entry))
{
    if (!entry)
        return;
    pthread_mutex_lock(lock);
    drop(entry);
    pthread_mutex_unlock(lock);
}

/* Takes `entry` out of the singly linked list whose first entry is *head
 * (entries of `type`, linked through their `next` member). */
#define PV_LIST_UNLINK(type, head, entry)                                                         \
    do {                                                                                          \
        for (type **link_ = (head); *link_; link_ = &(*link_)->next)                              \
            if (*link_ == (entry)) {                                                              \
                *link_ = (entry)->next;                                                           \
                break;                                                                            \
            }                                                                                     \
    } while (0)

#endif
