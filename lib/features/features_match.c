/* Front end of the features module (SIFT): descriptor matching (nearest
 * neighbours on the backend, the ratio test and the mutual check here) and
 * its cross-check. */
#include "features_internal.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void pv_sift_matches_free(pv_sift_matches *matches)
{
    if (!matches)
        return;
    free(matches->pairs);
    matches->pairs = NULL;
    matches->count = 0;
}


typedef struct nearest_result {
    int *best;
    float *d1, *d2;
} nearest_result;

static void free_nearest(nearest_result *r)
{
    free(r->best);
    free(r->d1);
    free(r->d2);
}

static pv_status run_nearest(pv_context *ctx, const pv_backend_ops *ops,
                             const pv_sift_features *query, const pv_sift_features *train,
                             nearest_result *r)
{
    size_t n = query->count > 0 ? (size_t)query->count : 1;
    r->best = malloc(n * sizeof *r->best);
    r->d1 = malloc(n * sizeof *r->d1);
    r->d2 = malloc(n * sizeof *r->d2);
    if (!r->best || !r->d1 || !r->d2)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d queries", query->count);
    if (query->count == 0)
        return PV_OK;
    return ops->features->nearest(ctx, query->descriptors, query->count, train->descriptors,
                             train->count, r->best, r->d1, r->d2);
}

/* Decisions on the nearest-neighbour tables (squared distances). */
static pv_status collect_matches(pv_context *ctx, int count, const nearest_result *fwd,
                                 const nearest_result *back, float ratio, pv_sift_matches *out)
{
    pv_sift_pair *list = malloc((count > 0 ? (size_t)count : 1) * sizeof *list);
    if (!list)
        return pv_fail(ctx, PV_ERR_NOMEM, "sift_match: no memory for %d matches", count);
    int kept = 0;
    for (int i = 0; i < count; i++) {
        int j = fwd->best[i];
        if (j < 0 || !pv_sift_passes_ratio(fwd->d1[i], fwd->d2[i], ratio))
            continue;
        if (back && back->best[j] != i)
            continue;
        list[kept++] = (pv_sift_pair){i, j, sqrtf(fwd->d1[i]),
                                       isinf(fwd->d2[i]) ? INFINITY : sqrtf(fwd->d2[i])};
    }
    out->count = kept;
    out->pairs = list;
    return PV_OK;
}

static pv_status check_match(pv_context *ctx, const pv_sift_features *query,
                             const pv_sift_features *train, const pv_sift_match_params *p,
                             const pv_sift_matches *matches)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "sift_match: ctx is NULL");
    if (!pv_sift_features_valid(query))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: query is NULL or has no descriptors");
    if (!pv_sift_features_valid(train))
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: train is NULL or has no descriptors");
    if (!matches)
        return pv_fail(ctx, PV_ERR_INVALID, "sift_match: matches is NULL");
    return pv_decl_check(ctx, "sift_match", &pv_sift_match_decl, p); /* features_params.c */
}

static pv_status crosscheck_nearest(pv_context *ctx, const pv_sift_features *query,
                                    const pv_sift_features *train, const nearest_result *device)
{
    nearest_result cpu = {NULL, NULL, NULL};
    pv_timing saved = ctx->timing;
    pv_status status = run_nearest(ctx, &pv_cpu_backend, query, train, &cpu);
    int differ = 0;
    for (int i = 0; status == PV_OK && i < query->count; i++)
        differ += cpu.best[i] != device->best[i] ||
                  fabsf(cpu.d1[i] - device->d1[i]) > 1e-4f * (1.0f + cpu.d1[i]);
    ctx->timing = saved;
    free_nearest(&cpu);
    if (status == PV_OK && differ)
        status = pv_fail(ctx, PV_ERR_MISMATCH, "sift_match cross-check: %d of %d nearest "
                         "neighbours differ", differ, query->count);
    return status;
}

static pv_status match_on_backend(pv_context *ctx, const pv_sift_features *query,
                                  const pv_sift_features *train, const pv_sift_match_params *p,
                                  pv_sift_matches *out)
{
    nearest_result fwd = {NULL, NULL, NULL}, back = {NULL, NULL, NULL};
    pv_status status = run_nearest(ctx, ctx->ops, query, train, &fwd);
    if (status == PV_OK && p->mutual)
        status = run_nearest(ctx, ctx->ops, train, query, &back);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck_nearest(ctx, query, train, &fwd);
    if (status == PV_OK)
        status = collect_matches(ctx, query->count, &fwd, p->mutual ? &back : NULL, p->ratio, out);
    free_nearest(&fwd);
    free_nearest(&back);
    return status;
}

pv_status pv_sift_match(pv_context *ctx, const pv_sift_features *query,
                        const pv_sift_features *train, const pv_sift_match_params *params,
                        pv_sift_matches *matches)
{
    pv_sift_match_params p;
    pv_sift_match_params_default(&p);
    if (params)
        p = *params;
    pv_status status = check_match(ctx, query, train, &p, matches);
    if (status != PV_OK)
        return status;
    pv_sift_matches out = {0, NULL};
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = match_on_backend(ctx, query, train, &p, &out);
    pv_call_end(ctx);
    if (status != PV_OK)
        return status;
    *matches = out;
    return PV_OK;
}
