/* octreg reconstruction: the placement tables (where each registered
 * B-scan lands in the reference frame), reconstruction and averaging of
 * targets, and the CPU cross-check of the reconstructed outputs. */
#include "octreg_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================== reconstruction */

typedef struct placement_tables {
    size_t planes;
    int with_coverage;
    pv_scratch scratch;     /* holds the arrays below */
    int *plane_start, *plane;
    float *weight, *offset;
    float *coverage;        /* each reference plane's share of the target; NULL when unwanted */
} placement_tables;

static void lay_out_tables(pv_scratch *scratch, void *arrays)
{
    placement_tables *t = arrays;
    t->plane_start = pv_scratch_take(scratch, t->planes + 1, sizeof *t->plane_start);
    t->plane = pv_scratch_take(scratch, 2 * t->planes, sizeof *t->plane);
    t->weight = pv_scratch_take(scratch, 2 * t->planes, sizeof *t->weight);
    t->offset = pv_scratch_take(scratch, 4 * t->planes, sizeof *t->offset);
    t->coverage = t->with_coverage ? pv_scratch_take(scratch, t->planes, sizeof *t->coverage)
                                   : NULL;
}

/* Where valid plane k lands: planes j0 and j0 + 1 around k - dy, with
 * linear weights (one plane when dy is whole). */
static int landing(const pv_octreg_shift *s, int k, int planes, int target[2], float weight[2])
{
    double position = k - s->dy;
    double j0 = floor(position), fraction = position - j0;
    int count = 0;
    if (fraction > 1.0 - OCT_WHOLE_PLANE) {
        j0 += 1.0;
        fraction = 0.0;
    }
    double w[2] = {1.0 - fraction, fraction};
    for (int i = 0; i < 2; i++) {
        double j = j0 + i;
        if (w[i] <= OCT_WHOLE_PLANE || j < 0.0 || j > planes - 1)
            continue;
        target[count] = (int)j;
        weight[count++] = (float)w[i];
    }
    return count;
}

/* The placement of the valid planes of shifts in CSR form into *out, whose
 * arrays live in t (free them with pv_scratch_free(&t->scratch)). */
static pv_status build_placement(pv_context *ctx, const pv_octreg_shift *shifts, int planes,
                                 int with_coverage, placement_tables *t, pv_oct_placement *out)
{
    *t = (placement_tables){.planes = (size_t)planes, .with_coverage = with_coverage};
    if (pv_scratch_carve(&t->scratch, lay_out_tables, t, 1) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg reconstruction: out of memory");
    float *coverage = t->coverage;
    /* Count per reference plane, then fill in plane order (CSR). */
    for (int k = 0; k < planes; k++) {
        int j[2];
        float w[2];
        int n = shifts[k].valid ? landing(&shifts[k], k, planes, j, w) : 0;
        for (int i = 0; i < n; i++)
            t->plane_start[j[i] + 1]++;
    }
    for (int j = 0; j < planes; j++)
        t->plane_start[j + 1] += t->plane_start[j];
    /* plane_start[j] counts up while filling, then is shifted back. */
    for (int k = 0; k < planes; k++) {
        int j[2];
        float w[2];
        int n = shifts[k].valid ? landing(&shifts[k], k, planes, j, w) : 0;
        for (int i = 0; i < n; i++) {
            int e = t->plane_start[j[i]]++;
            t->plane[e] = k;
            t->weight[e] = w[i];
            t->offset[2 * e] = (float)shifts[k].dz;
            t->offset[2 * e + 1] = (float)shifts[k].dx;
            if (coverage)
                coverage[j[i]] += w[i];
        }
    }
    for (int j = planes; j > 0; j--)
        t->plane_start[j] = t->plane_start[j - 1];
    t->plane_start[0] = 0;
    out->plane_start = t->plane_start;
    out->plane = t->plane;
    out->weight = t->weight;
    out->offset = t->offset;
    out->entries = t->plane_start[planes];
    return PV_OK;
}

pv_status pv_oct_place_loaded(pv_octreg_plan *plan, oct_runner run,
                              const pv_octreg_shift *shifts, int reset, float *coverage)
{
    placement_tables tables;
    pv_oct_placement placement;
    int planes = plan->geometry.size[2];
    pv_status status = build_placement(plan->ctx, shifts, planes, coverage != NULL, &tables,
                                       &placement);
    if (status != PV_OK)
        return status;
    status = run.ops->octreg->place(plan->ctx, run.plan, &placement, reset);
    for (int j = 0; status == PV_OK && coverage && j < planes; j++)
        coverage[j] = (reset ? 0.0f : coverage[j]) + tables.coverage[j];
    pv_scratch_free(&tables.scratch);
    return status;
}

/* ---------------------------------------------------------- reconstruction */

typedef struct recon_outputs {
    pv_volume *volume;
    pv_image *enface, *slow;
    float *coverage;
    float gap;
} recon_outputs;

static pv_status check_image_out(pv_context *ctx, const char *op, const char *name,
                                 const pv_image *image, int width, int height)
{
    if (!image)
        return PV_OK;
    if (!pv_image_is_valid(image) || image->type != PV_PIXEL_F32)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is not a valid f32 image", op, name);
    if (image->width != width || image->height != height)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%d but must be %dx%d", op, name,
                       image->width, image->height, width, height);
    return PV_OK;
}

static pv_status check_outputs(const pv_octreg_plan *plan, const char *op,
                               const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    const int *n = plan->geometry.size;
    if (!out->volume && !out->enface && !out->slow && !out->coverage)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: every output is NULL", op);
    pv_status status = out->volume ? pv_oct_check_target(plan, op, "the output volume", out->volume,
                                                         PV_ACCEPT_F32)
                                   : PV_OK;
    if (status == PV_OK)
        status = check_image_out(ctx, op, "enface", out->enface, n[1], n[2]);
    if (status == PV_OK)
        status = check_image_out(ctx, op, "slow", out->slow, n[2], n[0]);
    return status;
}

static pv_status check_shift_values(pv_context *ctx, const char *op, const pv_octreg_shift *s,
                                    int count)
{
    for (int k = 0; k < count; k++)
        if (!isfinite(s[k].dx) || !isfinite(s[k].dy) || !isfinite(s[k].dz) ||
            (s[k].valid != 0 && s[k].valid != 1))
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: shifts[%d] is not finite or its valid flag is not 0 / 1", op, k);
    return PV_OK;
}

/* The backends write straight into the caller's outputs only when all is
 * done; outputs are compared with the CPU's in cross-check mode. */
static pv_status read_outputs(pv_octreg_plan *plan, oct_runner run, const recon_outputs *out)
{
    return run.ops->octreg->read(plan->ctx, run.plan, out->gap, out->volume, out->enface, out->slow);
}

/* Scratch outputs like out's, for the CPU side of a cross-check. */
static pv_status scratch_like(pv_context *ctx, pv_oracle *oracle, const recon_outputs *out,
                              recon_outputs *scratch)
{
    memset(scratch, 0, sizeof *scratch);
    scratch->gap = out->gap;
    pv_status status = pv_oracle_add_volume(ctx, oracle, out->volume, &scratch->volume);
    if (status == PV_OK)
        status = pv_oracle_add_image(ctx, oracle, out->enface, &scratch->enface);
    if (status == PV_OK)
        status = pv_oracle_add_image(ctx, oracle, out->slow, &scratch->slow);
    return status;
}

static pv_status crosscheck_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                        const pv_octreg_shift *shifts, const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    oct_runner cpu = {&pv_cpu_backend, plan->check};
    pv_oct_plane_stats *stats = calloc((size_t)plan->geometry.size[2], sizeof *stats);
    if (!stats)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg cross-check: out of memory");
    recon_outputs scratch;
    pv_oracle oracle;
    pv_oracle_begin(ctx, "octreg_reconstruct", &oracle);
    pv_status status = scratch_like(ctx, &oracle, out, &scratch);
    if (status == PV_OK)
        status = cpu.ops->octreg->load(ctx, cpu.plan, target, stats);
    if (status == PV_OK)
        status = pv_oct_place_loaded(plan, cpu, shifts, 1, NULL);
    if (status == PV_OK && (scratch.volume || scratch.enface || scratch.slow))
        status = read_outputs(plan, cpu, &scratch);
    status = pv_oracle_end(ctx, &oracle, status, PV_TOL_OCT_RECON_REL);
    free(stats);
    return status;
}

static pv_status run_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                 const pv_octreg_shift *shifts, const recon_outputs *out)
{
    pv_context *ctx = plan->ctx;
    oct_runner run = {ctx->ops, plan->backend};
    int planes = plan->geometry.size[2];
    pv_oct_plane_stats *stats = calloc((size_t)planes, sizeof *stats);
    float *coverage = calloc((size_t)planes, sizeof *coverage);
    pv_status status = stats && coverage
                           ? PV_OK
                           : pv_fail(ctx, PV_ERR_NOMEM, "octreg_reconstruct: out of memory");
    if (status == PV_OK)
        status = run.ops->octreg->load(ctx, run.plan, target, stats);
    if (status == PV_OK && !pv_oct_scan_stats(stats, planes).finite)
        status = pv_fail(ctx, PV_ERR_INVALID, "octreg_reconstruct: target contains NaN or Inf");
    if (status == PV_OK)
        status = pv_oct_place_loaded(plan, run, shifts, 1, coverage);
    if (status == PV_OK && (out->volume || out->enface || out->slow))
        status = read_outputs(plan, run, out);
    /* after the read: the oracle compares the CPU's outputs with the
     * device's, which are the caller's */
    if (status == PV_OK && plan->check && (out->volume || out->enface || out->slow))
        status = crosscheck_reconstruct(plan, target, shifts, out);
    if (status == PV_OK && out->coverage)
        memcpy(out->coverage, coverage, (size_t)planes * sizeof *coverage);
    free(stats);
    free(coverage);
    return status;
}

pv_status pv_octreg_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                const pv_octreg_shift *shifts, float gap_value,
                                pv_volume *registered, pv_image *enface, pv_image *slow,
                                float *coverage)
{
    const char *op = "octreg_reconstruct";
    recon_outputs out = {registered, enface, slow, coverage, gap_value};
    pv_status status = pv_oct_check_target(plan, op, "target", target, PV_ACCEPT_F32_U16);
    if (status == PV_OK && !shifts)
        status = pv_fail(plan->ctx, PV_ERR_INVALID, "%s: shifts is NULL", op);
    if (status == PV_OK)
        status = check_outputs(plan, op, &out);
    if (status == PV_OK)
        status = check_shift_values(plan->ctx, op, shifts, plan->geometry.size[2]);
    if (status != PV_OK)
        return status;
    status = pv_call_begin(plan->ctx);
    if (status == PV_OK)
        status = run_reconstruct(plan, target, shifts, &out);
    pv_call_end(plan->ctx);
    return status;
}

/* ---------------------------------------------------------------- average */

static pv_status check_average(const pv_octreg_plan *plan, const char *op,
                               const pv_volume *targets, int count, const recon_outputs *out)
{
    if (!plan)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: plan is NULL", op);
    if (!targets || count < 1)
        return pv_fail(plan->ctx, PV_ERR_INVALID, "%s: targets is NULL or count %d < 1", op,
                       count);
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++)
        status = pv_oct_check_target(plan, op, "a target", &targets[i], PV_ACCEPT_F32_U16);
    if (status == PV_OK)
        status = check_outputs(plan, op, out);
    return status;
}

pv_status pv_octreg_average(pv_octreg_plan *plan, const pv_volume *targets, int count,
                            pv_octreg_shift *shifts, float gap_value, pv_volume *averaged,
                            pv_image *enface, pv_image *slow, float *coverage)
{
    const char *op = "octreg_average";
    recon_outputs out = {averaged, enface, slow, coverage, gap_value};
    pv_status status = check_average(plan, op, targets, count, &out);
    if (status != PV_OK)
        return status;
    pv_context *ctx = plan->ctx;
    size_t planes = (size_t)plan->geometry.size[2];
    pv_octreg_shift *all = calloc(planes * (size_t)count, sizeof *all);
    float *covered = calloc(planes, sizeof *covered);
    status = all && covered ? PV_OK : pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    pv_status begun = pv_call_begin(ctx);
    if (status == PV_OK)
        status = begun;
    if (status == PV_OK)
        status = pv_oct_average_targets(plan, targets, count, all, covered);
    if (status == PV_OK && (averaged || enface || slow))
        status = read_outputs(plan, (oct_runner){ctx->ops, plan->backend}, &out);
    pv_call_end(ctx);
    if (status == PV_OK && shifts)
        memcpy(shifts, all, planes * (size_t)count * sizeof *shifts);
    if (status == PV_OK && coverage)
        memcpy(coverage, covered, planes * sizeof *coverage);
    free(all);
    free(covered);
    return status;
}

