/* Fault injection for the OpenCL runtime (PARVIS_FAULT): makes the N-th
 * buffer allocation, program build or enqueued command of a context fail,
 * so tests can walk every error path of an operation and check that it
 * reports the failure, leaves its outputs alone, leaks nothing and leaves
 * the context usable. */
#include "runtime_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[PV_CL_FAULT_KINDS] = {"alloc", "build", "enqueue"};
static const cl_int kind_errors[PV_CL_FAULT_KINDS] = {
    CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_BUILD_PROGRAM_FAILURE, CL_OUT_OF_RESOURCES};

/* One "<kind>:<N>" item of length len. */
static int parse_item(const char *item, size_t len, pv_cl_faults *faults)
{
    for (int k = 0; k < PV_CL_FAULT_KINDS; k++) {
        size_t name_len = strlen(kind_names[k]);
        if (len <= name_len + 1 || strncmp(item, kind_names[k], name_len) != 0 ||
            item[name_len] != ':')
            continue;
        char digits[24];
        size_t n = len - name_len - 1;
        if (n >= sizeof digits)
            return 0;
        memcpy(digits, item + name_len + 1, n);
        digits[n] = '\0';
        char *end = NULL;
        /* only digits (strtol would take signs and blanks), and no value
         * past LONG_MAX (strtol clamps it and says so in errno only) */
        if (strspn(digits, "0123456789") != n)
            return 0;
        errno = 0;
        long at = strtol(digits, &end, 10);
        if (errno == ERANGE || *end != '\0' || at < 1)
            return 0;
        faults->at[k] = at;
        return 1;
    }
    return 0;
}

pv_status pv_cl_faults_parse(pv_context *ctx, const char *spec, pv_cl_faults *faults)
{
    memset(faults, 0, sizeof *faults);
    if (!spec || !*spec)
        return PV_OK;
    const char *item = spec;
    while (*item) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (!parse_item(item, len, faults) || (comma && comma[1] == '\0')) {
            memset(faults, 0, sizeof *faults);
            return pv_fail(ctx, PV_ERR_INVALID,
                           "PARVIS_FAULT='%s': expected alloc:N, build:N or enqueue:N (N >= 1), "
                           "separated by commas", spec);
        }
        item += len + (comma ? 1 : 0);
    }
    return PV_OK;
}

pv_cl_faults *pv_cl_faults_of(pv_context *ctx)
{
    pv_cl_state *state = pv_cl_state_of(ctx);
    return state ? &state->faults : NULL;
}

cl_int pv_cl_fault(pv_context *ctx, pv_cl_fault_kind kind)
{
    pv_cl_faults *faults = pv_cl_faults_of(ctx);
    if (!faults)
        return CL_SUCCESS;
    long call = ++faults->calls[kind];
    if (faults->at[kind] == 0 || call != faults->at[kind])
        return CL_SUCCESS;
    faults->fired++;
    faults->pending = 1;
    pv_log(ctx, "PARVIS_FAULT: failing %s call %ld", kind_names[kind], call);
    return kind_errors[kind];
}

int pv_cl_fault_take_pending(pv_context *ctx)
{
    pv_cl_faults *faults = pv_cl_faults_of(ctx);
    if (!faults || !faults->pending)
        return 0;
    faults->pending = 0;
    return 1;
}

int pv_cl_faults_fired(pv_context *ctx)
{
    pv_cl_faults *faults = pv_cl_faults_of(ctx);
    return faults ? faults->fired : 0;
}

long pv_cl_fault_calls(pv_context *ctx, pv_cl_fault_kind kind)
{
    pv_cl_faults *faults = pv_cl_faults_of(ctx);
    return faults && (unsigned)kind < PV_CL_FAULT_KINDS ? faults->calls[kind] : 0;
}
