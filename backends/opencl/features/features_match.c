/* OpenCL SIFT: brute-force nearest and second nearest descriptors
 * (kernels sift_nearest and sift_nearest_merge of kernels/features.cl). */
#include "features_internal.h"

#include <stdlib.h>
#include <string.h>

/* Matching (no plan): the kernel for the context's current parameters. */
static pv_status launch(pv_context *ctx, const char *name, const pv_cl_kernel_arg *args, int count,
                        cl_uint dims, const size_t *global, const size_t *local)
{
    cl_kernel kernel;
    pv_status status = pv_cl_sift_kernel(ctx, NULL, name, &kernel);
    return status == PV_OK ? pv_cl_launch_args(ctx, kernel, args, count, dims, global, local)
                           : status;
}

static pv_status upload_descriptors(pv_context *ctx, const char *slot, const float *host, int count,
                                    cl_mem *buffer)
{
    size_t bytes = (size_t)(count > 0 ? count : 1) * DESC_SIZE * sizeof(float);
    pv_status status = pv_cl_scratch(ctx, slot, bytes, buffer);
    if (status == PV_OK && count > 0)
        status = pv_cl_write(ctx, *buffer, 0, (size_t)count * DESC_SIZE * sizeof(float), host);
    return status;
}

/* Train chunks per query group: enough work groups for about four per
 * compute unit, each chunk at least two local tiles long. */
static int match_chunks(pv_context *ctx, int nq, int nt)
{
    const int wg = pv_cl_sift_param(ctx, "SIFT_MATCH_WG"), tile = pv_cl_sift_param(ctx, "SIFT_MATCH_TILE");
    int units = pv_cl_device_info(ctx)->compute_units;
    int groups = (nq + wg - 1) / wg;
    int want = (4 * (units > 0 ? units : 16) + groups - 1) / groups;
    int most = (nt + 2 * tile - 1) / (2 * tile);
    int chunks = want < most ? want : most;
    return chunks < 1 ? 1 : chunks;
}

/* The nearest-neighbour table of query rows against train rows into the
 * scratch slot `slot`.  counters NULL: nt train rows (sift_nearest); else
 * the train count is counters[1] on the device, at most nt
 * (sift_chain_nearest), and the chunks are cut for nt rows. */
static pv_status enqueue_nearest(pv_context *ctx, cl_mem q, cl_int nq, cl_mem t, cl_int nt,
                                 const cl_mem *counters, const char *slot, cl_mem *out)
{
    const cl_int chunks = match_chunks(ctx, nq, nt);
    const cl_int per_chunk = (nt + chunks - 1) / chunks;
    const size_t partial = (size_t)chunks * (size_t)nq;
    cl_mem b, e1, e2;
    pv_status status = pv_cl_scratch(ctx, "sift.best", partial * sizeof(cl_int), &b);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d1", partial * sizeof(float), &e1);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "sift.d2", partial * sizeof(float), &e2);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, slot, 3 * (size_t)nq * sizeof(cl_int), out);
    if (status != PV_OK)
        return status;
    const cl_uint capacity = (cl_uint)nt;
    const pv_cl_kernel_arg args[] = {
        {sizeof(cl_mem), &q}, {sizeof nq, &nq}, {sizeof(cl_mem), &t}, {sizeof nt, &nt},
        {sizeof per_chunk, &per_chunk},
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
    };
    const pv_cl_kernel_arg counted_args[] = {
        {sizeof(cl_mem), &q}, {sizeof nq, &nq}, {sizeof(cl_mem), &t}, {sizeof(cl_mem), counters},
        {sizeof capacity, &capacity}, {sizeof per_chunk, &per_chunk},
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
    };
    const pv_cl_kernel_arg merge_args[] = {
        {sizeof(cl_mem), &b}, {sizeof(cl_mem), &e1}, {sizeof(cl_mem), &e2},
        {sizeof nq, &nq}, {sizeof chunks, &chunks}, {sizeof(cl_mem), out},
    };
    size_t local[2] = {(size_t)pv_cl_sift_param(ctx, "SIFT_MATCH_WG"), 1};
    size_t global[2] = {(size_t)nq, (size_t)chunks};
    status = counters ? launch(ctx, "sift_chain_nearest", counted_args,
                               PV_CL_ARG_COUNT(counted_args), 2, global, local)
                      : launch(ctx, "sift_nearest", args, PV_CL_ARG_COUNT(args), 2, global, local);
    if (status == PV_OK)
        status = launch(ctx, "sift_nearest_merge", merge_args, PV_CL_ARG_COUNT(merge_args), 1,
                        global, local);
    return status;
}

pv_status pv_cl_sift_nearest_buffers(pv_context *ctx, cl_mem q, cl_int nq, cl_mem t, cl_int nt,
                                     const char *slot, cl_mem *out)
{
    return enqueue_nearest(ctx, q, nq, t, nt, NULL, slot, out);
}

pv_status pv_cl_sift_nearest_counted(pv_context *ctx, cl_mem q, cl_int nq, cl_mem t,
                                     cl_mem counters, cl_int capacity, const char *slot,
                                     cl_mem *out)
{
    return enqueue_nearest(ctx, q, nq, t, capacity, &counters, slot, out);
}

static pv_status nearest_on_device(pv_context *ctx, const float *query, cl_int nq,
                                   const float *train, cl_int nt, int *best, float *d1, float *d2)
{
    cl_mem q, t, out;
    pv_status status = upload_descriptors(ctx, "sift.query", query, nq, &q);
    if (status == PV_OK)
        status = upload_descriptors(ctx, "sift.train", train, nt, &t);
    if (status == PV_OK)
        status = pv_cl_sift_nearest_buffers(ctx, q, nq, t, nt, "sift.nearest", &out);
    int *host = status == PV_OK ? malloc(3 * (size_t)nq * sizeof *host) : NULL;
    if (status == PV_OK && !host)
        status = pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d queries", nq);
    /* One copy back: best, d1, d2. */
    if (status == PV_OK)
        status = pv_cl_read(ctx, out, 0, 3 * (size_t)nq * sizeof *host, host);
    if (status == PV_OK) {
        memcpy(best, host, (size_t)nq * sizeof *best);
        memcpy(d1, host + nq, (size_t)nq * sizeof *d1);
        memcpy(d2, host + 2 * (size_t)nq, (size_t)nq * sizeof *d2);
    }
    free(host);
    return status;
}

pv_status pv_cl_sift_nearest(pv_context *ctx, const float *query, int query_count,
                             const float *train, int train_count, int *best, float *best_d2,
                             float *second_d2)
{
    return pv_cl_sift_finish(ctx, nearest_on_device(ctx, query, query_count, train, train_count, best,
                                         best_d2, second_d2));
}

