/* Internal: the device group and its dispatcher (lib/multi/multidevice.c), which
 * the operations spread over a group share: the OCT, flow and BP ones in
 * lib/multi/multidevice.c, SGM's bands in lib/multi/multidevice_sgm.c.  Not installed. */
#ifndef PV_MULTIDEVICE_INTERNAL_H
#define PV_MULTIDEVICE_INTERNAL_H

#include "../core/internal.h"

typedef struct member_record {
    pv_timing timing;
    int items;
} member_record;

struct pv_device_group {
    int size;
    pv_context *contexts[PV_DEVICE_GROUP_MAX];
    member_record last[PV_DEVICE_GROUP_MAX];
    member_record whole;
};

typedef struct member_run member_run;
typedef struct dispatch dispatch;

/* One operation as the members run it.  begin makes the member's plan
 * (before its first item), item runs one item, end frees the plan. */
typedef struct group_task {
    const char *op;
    int item_count;
    void *shared;
    pv_status (*begin)(member_run *m);
    pv_status (*item)(member_run *m, int item);
    void (*end)(member_run *m);
} group_task;

/* One member's part of a call: its context, its index and its own state. */
struct member_run {
    const group_task *task;
    dispatch *dispatch;
    pv_context *ctx;
    int member;
    int members;         /* threads of the call: they share the cores */
    void *plan;          /* the member's own state, made by task->begin */
    int begun;
    member_record record;
};

/* Run every item of task on the group, one host thread per member (member
 * 0 on the caller's); the first failure stops the others and is returned
 * with its device and item named.  The group's timing records the call. */
pv_status pv_group_run_task(pv_device_group *group, const group_task *task);

/* PV_ERR_INVALID naming op when group is NULL or empty. */
pv_status pv_group_check(const pv_device_group *group, const char *op);

#endif
