/* The auto-tuner's search, a client of the library: it runs the public
 * operations on the context and changes their launch parameters through
 * the device sub-table's parameter slots (lib/tune/tune.c owns the API and the
 * cache file, lib/tune/tune_workloads.c the inputs and the oracle).
 *
 * The defaults are measured first.  Each candidate is then built, run
 * once and compared with the CPU oracle (failures to build or run, and
 * disagreements beyond the op's documented tolerance, reject it), timed
 * once, and only when that run is within 1.5x of the best so far timed
 * again up to `runs` runs (median, the first run counted; three times as
 * many for a workload of a millisecond, pv_tune_workload_runs).  No
 * configuration is measured twice in a search, and a candidate becomes the
 * best only when it beats the best so far by more than PV_TUNE_MIN_GAIN
 * (tune_internal.h): within that margin the earlier one (first of all the
 * defaults) is kept, and at the end the winner and the defaults are timed
 * again and the winner kept only when still clearly faster, so that
 * repeated tunes agree.
 *
 * Two workloads.  The kept values go into a tuning database that serves
 * every size, so a family whose parameters act differently on the sizes
 * users run has a second workload of another size (lib/tune/tune_workloads.c):
 * BP a Tsukuba-sized image beside its large one, geometry ten times the
 * matches.  The defaults are timed on both first, and a configuration's
 * score is the mean over the workloads of its time relative to the
 * defaults' there (pv_tune_relative_score), so each size counts the same
 * however long its run; a candidate replaces the best so far when its
 * score is lower by more than the margin, and the confirmation compares
 * the winner with the defaults the same way.  A gain on one size thus
 * has to outweigh a loss on the other: a value within noise on the large
 * image and much slower on the small one (BP_SMALL_LEVEL_PIXELS 2048
 * against 0 on an H200: 1.32x on Tsukuba) loses, where the large
 * workload alone left the choice to noise.  Each step of the search
 * names the workloads it judges on (scope); the best so far is timed on
 * a workload it lacks before a step that uses it, and a configuration is
 * never timed twice on one workload.  A candidate pruned on the main
 * workload is timed on no other.
 *
 * The candidates are few.  BP follows its paper's section 6.1: at each
 * occupancy level one well-formed configuration suffices, the one that
 * keeps the most of the message array in fast memory at that occupancy;
 * so stage 1 tries, per work-group shape and per number of groups sharing
 * a compute unit's local memory, the message split that fills that share,
 * and later stages sweep one remaining parameter at a time from the best
 * so far.  SAD is searched the same way over its group shape and tile
 * sizes.  The other families descend one coordinate at a time (a
 * parameter, or a work-group shape) through a short list of values: the
 * work-group sizes that divide the device's largest, and a few tile steps
 * around the default. */
#include "../core/internal.h"
#include "tune_search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The family's current values on ctx, its parameter names into family. */
static pv_status current_config(pv_context *ctx, family_params *family, config *c)
{
    pv_tune_param params[PV_TUNE_MAX_PARAMS];
    int count = 0;
    pv_status status = ctx->ops->device->param_list(ctx, family->family, params,
                                                    PV_TUNE_MAX_PARAMS, &count);
    if (status != PV_OK)
        return status;
    memset(c, 0, sizeof *c);
    family->count = count;
    for (int i = 0; i < count; i++) {
        family->names[i] = params[i];
        c->value[i] = params[i].value;
    }
    return PV_OK;
}

/* The family's defaults: its values just after a reset. */
static pv_status default_config(pv_context *ctx, family_params *family, config *c)
{
    pv_status status = ctx->ops->device->param_reset(ctx, family->family);
    return status == PV_OK ? current_config(ctx, family, c) : status;
}

static int param_index(const family_params *family, const char *name)
{
    for (int i = 0; i < family->count; i++)
        if (strcmp(family->names[i].name, name) == 0)
            return i;
    return -1;
}

/* Set one parameter of a candidate.  A name the backend's family lacks
 * (the search's names out of step with the table) is kept in
 * family->missing and fails the search. */
void pv_tune_set_value(family_params *family, config *c, const char *name, int value)
{
    int i = param_index(family, name);
    if (i >= 0)
        c->value[i] = value;
    else if (!family->missing)
        family->missing = name;
}

void pv_tune_add_config(config_list *list, const config *c, int params)
{
    for (int i = 0; i < list->count; i++)
        if (memcmp(list->item[i].value, c->value, (size_t)params * sizeof(int)) == 0)
            return;
    if (list->count < TUNE_MAX_CONFIGS)
        list->item[list->count++] = *c;
}

static pv_status apply_config(pv_context *ctx, const family_params *family, const config *c)
{
    for (int i = 0; i < family->count; i++) {
        pv_status status = ctx->ops->device->param_set(ctx, family->family, family->names[i].name,
                                                       c->value[i]);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

/* ------------------------------------------------------------- evaluation */

/* A candidate over this share of the best time so far on the main
 * workload is timed once only: no median of several runs brings it back,
 * and it is timed on no other workload. */
#define TUNE_PRUNE_FACTOR 1.5

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


static int scope_count(const search_state *s, scope sc)
{
    return sc == SCOPE_MAIN ? 1 : s->workloads;
}

/* m's score on the scope's workloads (pv_tune_relative_score: the mean of
 * its times relative to the defaults'), negative when it lacks one. */
static double score(const search_state *s, const measured *m, scope sc)
{
    return pv_tune_relative_score(m->ms, s->reference_ms, scope_count(s, sc));
}

static int rejected(const measured *m)
{
    for (int i = 0; i < PV_TUNE_MAX_WORKLOADS; i++)
        if (m->ms[i] < 0)
            return 1;
    return 0;
}

/* Nothing more to measure of m on the scope: rejected, pruned (kept out of
 * the running), or timed on each of its workloads. */
static int settled(const search_state *s, const measured *m, scope sc)
{
    if (rejected(m) || m->pruned)
        return 1;
    for (int i = 0; i < scope_count(s, sc); i++)
        if (m->ms[i] == 0.0)
            return 0;
    return 1;
}

/* Median ms of the workload's runs (pv_tune_workload_runs) whose first
 * sample is `first`. */
static double median_runs(pv_context *ctx, search_state *s, int wi, double first)
{
    double times[1000];
    const int runs = pv_tune_workload_runs(s->w[wi], s->runs);
    times[0] = first;
    for (int i = 1; i < runs; i++)
        if ((times[i] = pv_tune_workload_time(ctx, s->w[wi])) < 0)
            return -1.0;
    qsort(times, (size_t)runs, sizeof times[0], compare_doubles);
    return times[runs / 2];
}

/* The applied configuration checked against the oracle on workload wi,
 * then timed once; unless that run is clearly slower than the best so
 * far on the main workload, timed again for the median (the first sample
 * reused).  Returns the ms, negative when rejected. */
static double measure_on(pv_context *ctx, search_state *s, int wi, measured *m)
{
    pv_tune_workload *w = s->w[wi];
    pv_status status = pv_tune_workload_check(ctx, w);
    if (status != PV_OK) {
        pv_log(ctx, "tune: %s candidate rejected on %s: %s", s->family->family,
               pv_tune_workload_describe(w), pv_context_last_error(ctx));
        return -1.0;
    }
    /* The defaults come first, in a process where nothing may have run
     * yet: one more untimed run takes the first-use costs (scratch
     * buffers, lazy set-up) out of the time every candidate is judged by. */
    if (s->best_index < 0 && pv_tune_workload_time(ctx, w) < 0)
        return -1.0;
    double first = pv_tune_workload_time(ctx, w);
    if (first < 0)
        return -1.0;
    const double best_ms = s->best_index >= 0 ? s->memo[s->best_index].ms[0] : -1.0;
    if (wi == 0 && best_ms > 0 && first > TUNE_PRUNE_FACTOR * best_ms) {
        s->result->pruned++;
        m->pruned = 1;
        return first;
    }
    return median_runs(ctx, s, wi, first);
}

/* m measured on the workloads of the scope it has not been timed on (the
 * main one first, so a pruned candidate costs no other).  A workload is
 * never measured twice for one configuration. */
static void complete(pv_context *ctx, search_state *s, measured *m, scope sc)
{
    int applied = 0;
    for (int wi = 0; wi < scope_count(s, sc) && !settled(s, m, sc); wi++) {
        if (m->ms[wi] != 0.0)
            continue;
        if (!applied && apply_config(ctx, s->family, &m->c) != PV_OK) {
            m->ms[wi] = -1.0; /* a value the backend refuses */
            return;
        }
        applied = 1;
        m->ms[wi] = measure_on(ctx, s, wi, m);
    }
}

static measured *find_measured(search_state *s, const config *c)
{
    for (int i = 0; i < s->memo_count; i++)
        if (memcmp(&s->memo[i].c, c, sizeof *c) == 0)
            return &s->memo[i];
    return NULL;
}

/* A new record for c, NULL when the record is full (the search then
 * stops: 256 is far more than any family's candidates). */
static measured *add_measured(search_state *s, const config *c)
{
    if (s->memo_count == TUNE_MEMO)
        return NULL;
    measured *m = &s->memo[s->memo_count++];
    *m = (measured){.c = *c};
    return m;
}

static void log_config(pv_context *ctx, const search_state *s, const measured *m, scope sc)
{
    char text[640] = "";
    size_t used = 0;
    for (int i = 0; i < scope_count(s, sc); i++)
        if (!pv_tune_append(text, sizeof text, &used, "%s%.3f ms", i ? " / " : " ", m->ms[i]))
            break;
    if (scope_count(s, sc) > 1 && score(s, m, sc) > 0)
        pv_tune_append(text, sizeof text, &used, " (relative %.3f)", score(s, m, sc));
    pv_tune_append(text, sizeof text, &used, ":");
    for (int i = 0; i < s->family->count; i++)
        if (!pv_tune_append(text, sizeof text, &used, " %s=%d", s->family->names[i].name,
                            m->c.value[i]))
            break;
    pv_log(ctx, "tune: %s%s%s", s->family->family, rejected(m) ? " rejected" : "", text);
}

static int out_of_time(const search_state *s)
{
    return s->deadline_ms > 0 && pv_now_ms() >= s->deadline_ms;
}

/* The best so far measured on the scope's workloads, so that the step's
 * candidates are compared with it on the same ones.  One that fails on a
 * workload it was not timed on before gives way to the defaults (timed on
 * every workload first of all).  0 when out of time. */
static int best_on_scope(pv_context *ctx, search_state *s, scope sc)
{
    measured *best = &s->memo[s->best_index];
    if (settled(s, best, sc))
        return 1;
    if (out_of_time(s))
        return 0;
    complete(ctx, s, best, sc);
    if (rejected(best)) {
        pv_log(ctx, "tune: %s: the best so far fails on another workload: back to the defaults",
               s->family->family);
        s->best_index = 0;
        s->best = s->memo[0].c;
    }
    return 1;
}

/* One step of the search: each candidate measured on the scope's
 * workloads and kept as the best when its score there is clearly lower
 * (by more than PV_TUNE_MIN_GAIN) than the best's. */
void pv_tune_try_configs(pv_context *ctx, search_state *s, const config_list *list, scope sc)
{
    if (s->budget == 0 || !best_on_scope(ctx, s, sc)) {
        s->budget = 0;
        return;
    }
    for (int i = 0; i < list->count && s->budget != 0; i++) {
        if (out_of_time(s)) {
            s->budget = 0; /* the family's time is spent: keep the best so far */
            break;
        }
        measured *m = find_measured(s, &list->item[i]);
        if (m && settled(s, m, sc))
            continue; /* the best so far among them, or measured before */
        if (!m) {
            if (!(m = add_measured(s, &list->item[i]))) {
                s->budget = 0;
                break;
            }
            s->result->tried++;
            if (s->budget > 0)
                s->budget--;
        }
        complete(ctx, s, m, sc);
        log_config(ctx, s, m, sc);
        if (rejected(m))
            s->result->rejected++;
        else if (pv_tune_clearly_faster(score(s, m, sc), score(s, &s->memo[s->best_index], sc))) {
            s->best_index = (int)(m - s->memo);
            s->best = m->c;
        }
    }
}

/* Whether the search sweeps this parameter (all, or the one asked for). */
int pv_tune_wanted(search_state *s, const char *name)
{
    if (s->only && strcmp(s->only, name) != 0)
        return 0;
    s->only_found = 1;
    return 1;
}

/* One parameter swept over values, from the best so far. */
void pv_tune_sweep(pv_context *ctx, search_state *s, const char *name, const int *values, int count,
                  scope sc)
{
    if (!pv_tune_wanted(s, name))
        return;
    config_list list = {.count = 0};
    for (int i = 0; i < count; i++) {
        config c = s->best;
        pv_tune_set_value(s->family, &c, name, values[i]);
        pv_tune_add_config(&list, &c, s->family->count);
    }
    pv_tune_try_configs(ctx, s, &list, sc);
}

/* ----------------------------------------------------------------- search */

/* One search per tunable family (the families' list is the lookup's,
 * tune_families.c; tests/test_tune.c checks that both name the same). */
typedef struct tuned_family {
    const char *family;
    void (*search)(pv_context *ctx, search_state *s);
    int weight;          /* its share of a time budget: about its candidates */
    /* NULL, or what the kept values are for, set on the winner and the
     * defaults alike before they are compared (so not a difference) */
    void (*label)(const search_state *s, config *c);
} tuned_family;

static const tuned_family tuned_families[] = {
    {"filter", pv_tune_search_filter, 2, NULL},     {"sad", pv_tune_search_sad, 2, NULL},
    {"bp", pv_tune_search_bp, 4, pv_tune_label_bp},         {"register", pv_tune_search_register, 3, NULL},
    {"flow", pv_tune_search_flow, 2, NULL},         {"features", pv_tune_search_features, 3, NULL},
    {"octreg", pv_tune_search_octreg, 2, NULL},     {"geometry", pv_tune_search_geometry, 1, NULL},
    {"sgm", pv_tune_search_sgm, 2, NULL},
};

#define TUNED_COUNT ((int)(sizeof tuned_families / sizeof tuned_families[0]))

/* The index-th family's share of a time budget (relative), 0 for a name
 * the search does not know. */
int pv_tune_family_weight(int index)
{
    const char *name = pv_tune_family(index);
    for (int i = 0; name && i < TUNED_COUNT; i++)
        if (strcmp(tuned_families[i].family, name) == 0)
            return tuned_families[i].weight;
    return 0;
}

static const tuned_family *tuned_family_of(const char *family)
{
    for (int i = 0; i < TUNED_COUNT; i++)
        if (strcmp(tuned_families[i].family, family) == 0)
            return &tuned_families[i];
    return NULL;
}

int pv_tune_search_knows(const char *family)
{
    return family && tuned_family_of(family) != NULL;
}

static void fill_result(const search_state *s, const char *op, pv_tune_result *result)
{
    snprintf(result->op, sizeof result->op, "%s", op);
    result->param_count = 0;
    for (int i = 0; i < s->family->count; i++) {
        pv_tune_param *p = &result->params[result->param_count++];
        snprintf(p->name, sizeof p->name, "%s", s->family->names[i].name);
        p->value = s->best.value[i];
    }
}

/* Configuration c timed again on every workload: per workload one
 * untimed run (the switch's own costs), then the median.  0 on failure. */
static int retime(pv_context *ctx, search_state *s, const config *c, double *ms)
{
    if (apply_config(ctx, s->family, c) != PV_OK)
        return 0;
    for (int wi = 0; wi < s->workloads; wi++) {
        double first = -1.0;
        if (pv_tune_workload_time(ctx, s->w[wi]) < 0 ||
            (first = pv_tune_workload_time(ctx, s->w[wi])) < 0 ||
            (ms[wi] = median_runs(ctx, s, wi, first)) < 0)
            return 0;
    }
    return 1;
}

/* The winner confirmed against the defaults, both timed again one after
 * the other on every workload: the defaults were timed first of all, in a
 * process where little had run yet, and a candidate's median can land in
 * a lucky moment; either can be off by more than the margin (a family's
 * defaults were once timed at 22.8 ms, then at 14.3).  Unless the
 * winner's score relative to the defaults' new times is still clearly
 * lower, the defaults stay, so that a noisy search does not move a
 * device's parameters. */
static void confirm_winner(pv_context *ctx, search_state *s, pv_tune_trace *trace)
{
    if (s->best_index == 0)
        return;
    double default_ms[PV_TUNE_MAX_WORKLOADS] = {0}, winner_ms[PV_TUNE_MAX_WORKLOADS] = {0};
    if (!retime(ctx, s, &s->memo[0].c, default_ms) || !retime(ctx, s, &s->best, winner_ms))
        return; /* both passed before: keep the search's verdict */
    const double relative = pv_tune_relative_score(winner_ms, default_ms, s->workloads);
    const int kept = pv_tune_clearly_faster(relative, 1.0);
    if (trace) {
        trace->confirmed = 1;
        trace->winner_kept = kept;
        memcpy(trace->confirm_default_ms, default_ms, sizeof default_ms);
        memcpy(trace->confirm_winner_ms, winner_ms, sizeof winner_ms);
    }
    s->result->default_ms = default_ms[0];
    if (kept) {
        s->result->best_ms = winner_ms[0];
        return;
    }
    pv_log(ctx, "tune: %s: the winner (%.3f of the defaults' time) is not clearly faster than "
                "the defaults when timed again: the defaults stay",
           s->family->family, relative);
    s->best_index = 0;
    s->best = s->memo[0].c;
    s->result->best_ms = default_ms[0];
}

static void fill_trace(const search_state *s, int winner, pv_tune_trace *trace)
{
    trace->workloads = s->workloads;
    trace->param_count = s->family->count;
    for (int i = 0; i < s->family->count; i++)
        snprintf(trace->names[i], sizeof trace->names[i], "%s", s->family->names[i].name);
    trace->count = s->memo_count;
    for (int i = 0; i < s->memo_count; i++) {
        pv_tune_trace_entry *e = &trace->measured[i];
        memcpy(e->value, s->memo[i].c.value, sizeof e->value);
        memcpy(e->ms, s->memo[i].ms, sizeof e->ms);
        e->pruned = s->memo[i].pruned;
    }
    trace->winner = winner;
}

/* The search from the defaults (measured first on every workload: every
 * later candidate is judged relative to them), the winner confirmed and
 * applied; on failure the family's values on entry are put back. */
static pv_status search_from_defaults(pv_context *ctx, const tuned_family *tuned,
                                      family_params *family, search_state *s,
                                      const config *original, pv_tune_trace *trace)
{
    measured *defaults = add_measured(s, &s->best);
    complete(ctx, s, defaults, SCOPE_ALL);
    if (rejected(defaults)) {
        apply_config(ctx, family, original);
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "tune: '%s' with the default parameters fails or disagrees with the CPU",
                       tuned->family);
    }
    memcpy(s->reference_ms, defaults->ms, sizeof s->reference_ms);
    s->best_index = 0;
    s->result->default_ms = defaults->ms[0];
    tuned->search(ctx, s);
    if (tuned->label) { /* every record alike, so the trace shows what is kept */
        tuned->label(s, &s->best);
        for (int i = 0; i < s->memo_count; i++)
            tuned->label(s, &s->memo[i].c);
    }
    if (family->missing) {
        apply_config(ctx, family, original);
        return pv_fail(ctx, PV_ERR_INVALID, "tune: the backend's '%s' family has no parameter %s",
                       tuned->family, family->missing);
    }
    if (s->only && !s->only_found) {
        apply_config(ctx, family, original);
        return pv_fail(ctx, PV_ERR_INVALID, "tune: the '%s' search sweeps no parameter %s",
                       tuned->family, s->only);
    }
    if (trace)
        fill_trace(s, s->best_index, trace);
    s->result->best_ms = s->memo[s->best_index].ms[0];
    confirm_winner(ctx, s, trace); /* may time both again, and put the defaults back */
    fill_result(s, tuned->family, s->result);
    return apply_config(ctx, family, &s->best);
}

/* The family's workloads into s; on failure those made are freed. */
static pv_status make_workloads(pv_context *ctx, const char *op, const pv_tune_options *options,
                                search_state *s)
{
    s->workloads = pv_tune_workload_count(op);
    if (s->workloads < 1 || s->workloads > PV_TUNE_MAX_WORKLOADS)
        return pv_fail(ctx, PV_ERR_INVALID, "tune: family '%s' has %d workloads", op,
                       s->workloads);
    for (int i = 0; i < s->workloads; i++) {
        pv_status status = pv_tune_workload_make(ctx, op, i, options, &s->w[i]);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

static void free_workloads(search_state *s)
{
    for (int i = 0; i < PV_TUNE_MAX_WORKLOADS; i++)
        pv_tune_workload_free(s->w[i]);
}

static void log_search(pv_context *ctx, const search_state *s, const char *op,
                       const pv_tune_result *result)
{
    char sizes[192] = "";
    size_t used = 0;
    for (int i = 0; i < s->workloads; i++)
        pv_tune_append(sizes, sizeof sizes, &used, "%s%s", i ? "; " : "",
                       pv_tune_workload_describe(s->w[i]));
    pv_log(ctx, "tune: %s (%s): default %.3f ms, best %.3f ms after %d candidates (%d rejected, "
                "%d timed once), %.1f s",
           op, sizes, result->default_ms, result->best_ms, result->tried, result->rejected,
           result->pruned, result->search_ms / 1000.0);
}

pv_status pv_tune_search(pv_context *ctx, const char *op, const pv_tune_options *options,
                         const pv_tune_search_spec *spec, pv_tune_result *result)
{
    const tuned_family *tuned = tuned_family_of(op);
    if (!tuned)
        return pv_fail(ctx, PV_ERR_INVALID, "tune: unknown op '%s'", op);
    if (!ctx->ops->device->param_list)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "tune: the %s backend has no launch parameters",
                       ctx->ops->name);
    const double start = pv_now_ms();
    family_params family = {.family = tuned->family};
    config original, defaults;
    pv_status status = current_config(ctx, &family, &original);
    if (status == PV_OK)
        status = default_config(ctx, &family, &defaults);
    search_state *s = status == PV_OK ? calloc(1, sizeof *s) : NULL;
    if (status == PV_OK && !s)
        status = pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for the search");
    if (status == PV_OK)
        status = make_workloads(ctx, op, options, s);
    if (status != PV_OK) {
        if (s)
            free_workloads(s);
        free(s);
        apply_config(ctx, &family, &original);
        return status;
    }
    s->family = &family;
    s->best = defaults;
    s->best_index = -1;
    s->budget = options->max_candidates > 0 ? options->max_candidates : -1;
    s->deadline_ms = spec ? spec->deadline_ms : 0.0;
    s->runs = options->runs;
    s->only = spec ? spec->only_param : NULL;
    s->result = result;
    if (spec && spec->trace)
        memset(spec->trace, 0, sizeof *spec->trace);
    status = search_from_defaults(ctx, tuned, &family, s, &original, spec ? spec->trace : NULL);
    result->search_ms = pv_now_ms() - start;
    if (status == PV_OK)
        log_search(ctx, s, op, result);
    free_workloads(s);
    free(s);
    return status;
}
