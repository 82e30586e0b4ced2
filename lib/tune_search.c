/* The auto-tuner's search, a client of the library: it runs the public
 * operations on the context and changes their launch parameters through
 * the device sub-table's parameter slots (lib/tune.c owns the API and the
 * cache file).
 *
 * For each op, a synthetic workload with a known answer is run once on
 * the CPU backend: that output is the oracle.  Then candidates are run on
 * the device: each is built, run once and compared with the oracle
 * (failures to build or run, and disagreements beyond the op's documented
 * tolerance, reject it), and only then timed (median of `runs` end-to-end
 * calls).  The fastest candidate that passed is kept and applied.
 *
 * The search is short, after the BP paper's section 6.1: at each
 * occupancy level one well-formed configuration suffices, the one that
 * keeps the most of the message array in fast memory at that occupancy.
 * So stage 1 tries, per work-group shape and per number of groups sharing
 * a compute unit's local memory, the message split that fills that share;
 * later stages sweep one remaining parameter at a time from the best so
 * far.  SAD is searched the same way over its group shape and tile sizes. */
#include "core/internal.h"
#include "tune_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_MAX_CONFIGS 96

/* --------------------------------------------------------------- configs */

/* The family's parameter names, in the backend's order, and one value per
 * parameter in that order. */
typedef struct family_params {
    const char *family;
    pv_tune_param names[PV_TUNE_MAX_PARAMS];
    int count;
    const char *missing;   /* a parameter the search named but the family lacks */
} family_params;

typedef struct config {
    int value[PV_TUNE_MAX_PARAMS];
} config;

typedef struct config_list {
    config item[TUNE_MAX_CONFIGS];
    int count;
} config_list;

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
static void set_value(family_params *family, config *c, const char *name, int value)
{
    int i = param_index(family, name);
    if (i >= 0)
        c->value[i] = value;
    else if (!family->missing)
        family->missing = name;
}

static void add_config(config_list *list, const config *c, int params)
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

/* -------------------------------------------------------------- workloads */

typedef struct workload {
    pv_image left, right, oracle, output;
    pv_bp_params bp;
    pv_sad_params sad;
    int is_bp;
    double tolerance;    /* share of pixels that may differ from the oracle */
} workload;

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Random texture; the right view shifted by one of three disparities per
 * vertical band, so the matching has real structure to find. */
static void fill_pair(pv_image *left, pv_image *right, int ndisp)
{
    uint32_t state = 2463534242u;
    uint8_t *l = left->data, *r = right->data;
    const int width = left->width;
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < width; x++)
            l[(size_t)y * (size_t)width + (size_t)x] = (uint8_t)(next_random(&state) >> 24);
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < width; x++) {
            int d = (ndisp - 1) * (1 + 3 * x / width) / 4;
            int xs = x + d < width ? x + d : width - 1;
            r[(size_t)y * (size_t)width + (size_t)x] = l[(size_t)y * (size_t)width + (size_t)xs];
        }
}

static void free_workload(workload *w)
{
    pv_image_free(&w->left);
    pv_image_free(&w->right);
    pv_image_free(&w->oracle);
    pv_image_free(&w->output);
}

static int pick(int requested, int fallback)
{
    return requested > 0 ? requested : fallback;
}

static pv_status run_workload(pv_context *ctx, workload *w, pv_image *out)
{
    if (w->is_bp)
        return pv_stereo_bp(ctx, &w->left, &w->right, &w->bp, out);
    return pv_stereo_sad(ctx, &w->left, &w->right, &w->sad, out);
}

static void set_workload_params(workload *w, int ndisp)
{
    pv_bp_params_default(&w->bp);
    w->bp.ndisp = ndisp;
    w->bp.iterations = 7;
    w->bp.lambda = 0.1f;
    w->bp.disc_max = pv_bp_recommended_disc_max(ndisp);
    w->bp.sigma = 0.0f;
    while (w->bp.levels > 1 && (1 << (w->bp.levels - 1)) > (w->left.width < w->left.height ? w->left.width : w->left.height))
        w->bp.levels--;
    pv_sad_params_default(&w->sad);
    w->sad.ndisp = ndisp;
    w->sad.window = 9;
}

/* The synthetic pair and its CPU oracle. */
static pv_status make_workload(pv_context *ctx, const char *op, const pv_tune_options *options,
                               workload *w)
{
    memset(w, 0, sizeof *w);
    w->is_bp = strcmp(op, "bp") == 0;
    w->tolerance = w->is_bp ? 0.005 : 0.001; /* stereo.h's cross-check tolerances */
    const int width = pick(options->width, w->is_bp ? 450 : 640);
    const int height = pick(options->height, w->is_bp ? 375 : 480);
    int ndisp = pick(options->ndisp, 64);
    if (ndisp > width / 2)
        ndisp = width / 2 < 2 ? 2 : width / 2;
    if (pv_image_alloc(&w->left, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&w->right, width, height, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&w->oracle, width, height, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&w->output, width, height, PV_PIXEL_F32) != PV_OK) {
        free_workload(w);
        return pv_fail(ctx, PV_ERR_NOMEM, "tune: no memory for a %dx%d workload", width, height);
    }
    fill_pair(&w->left, &w->right, ndisp);
    set_workload_params(w, ndisp);
    pv_context_options cpu_options;
    pv_context_options_default(&cpu_options);
    cpu_options.backend = PV_BACKEND_CPU;
    cpu_options.cpu_threads = ctx->cpu_threads;
    pv_context *cpu = NULL;
    pv_status status = pv_context_create(&cpu, &cpu_options);
    if (status == PV_OK)
        status = run_workload(cpu, w, &w->oracle);
    if (status != PV_OK)
        status = pv_fail(ctx, status, "tune: the CPU oracle for '%s' failed: %s", op,
                         cpu ? pv_context_last_error(cpu) : pv_last_error());
    pv_context_destroy(cpu);
    if (status != PV_OK)
        free_workload(w);
    return status;
}

static double differing_share(const pv_image *a, const pv_image *b)
{
    size_t differing = 0, total = (size_t)a->width * (size_t)a->height;
    const float *pa = a->data, *pb = b->data;
    for (size_t i = 0; i < total; i++)
        differing += !(pa[i] == pb[i]);
    return (double)differing / (double)total;
}

/* ------------------------------------------------------------- evaluation */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median end-to-end ms of `runs` calls, or a negative value on failure. */
static double time_runs(pv_context *ctx, workload *w, int runs)
{
    double times[1000];
    for (int i = 0; i < runs; i++) {
        pv_timing timing;
        if (run_workload(ctx, w, &w->output) != PV_OK ||
            pv_context_last_timing(ctx, &timing) != PV_OK)
            return -1.0;
        times[i] = timing.total_ms;
    }
    qsort(times, (size_t)runs, sizeof times[0], compare_doubles);
    return times[runs / 2];
}

/* Build, check against the oracle, then time.  Returns the median ms, or
 * a negative value when the candidate is rejected. */
static double evaluate(pv_context *ctx, const family_params *family, const config *c,
                       workload *w, int runs)
{
    if (apply_config(ctx, family, c) != PV_OK || run_workload(ctx, w, &w->output) != PV_OK)
        return -1.0;
    double share = differing_share(&w->output, &w->oracle);
    if (share > w->tolerance) {
        pv_log(ctx, "tune: candidate rejected: %.3f%% of pixels differ from the CPU", 100.0 * share);
        return -1.0;
    }
    return time_runs(ctx, w, runs);
}

typedef struct search_state {
    family_params *family;
    workload *w;
    config best;
    double best_ms;
    int budget;          /* candidates still allowed, < 0: no limit */
    int runs;
    pv_tune_result *result;
} search_state;

static void log_config(pv_context *ctx, const search_state *s, const config *c, double ms)
{
    char text[512] = "";
    size_t used = 0;
    for (int i = 0; i < s->family->count && used < sizeof text; i++) {
        int n = snprintf(text + used, sizeof text - used, " %s=%d", s->family->names[i].name,
                         c->value[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (ms < 0)
        pv_log(ctx, "tune: %s rejected:%s", s->family->family, text);
    else
        pv_log(ctx, "tune: %s %.3f ms:%s", s->family->family, ms, text);
}

static void try_configs(pv_context *ctx, search_state *s, const config_list *list)
{
    for (int i = 0; i < list->count && s->budget != 0; i++) {
        if (memcmp(&list->item[i], &s->best, sizeof s->best) == 0)
            continue;
        double ms = evaluate(ctx, s->family, &list->item[i], s->w, s->runs);
        s->result->tried++;
        if (s->budget > 0)
            s->budget--;
        log_config(ctx, s, &list->item[i], ms);
        if (ms < 0)
            s->result->rejected++;
        else if (ms < s->best_ms) {
            s->best = list->item[i];
            s->best_ms = ms;
        }
    }
}

/* One parameter swept over values, from the best so far. */
static void sweep(pv_context *ctx, search_state *s, const char *name, const int *values, int count)
{
    config_list list = {.count = 0};
    for (int i = 0; i < count; i++) {
        config c = s->best;
        set_value(s->family, &c, name, values[i]);
        add_config(&list, &c, s->family->count);
    }
    try_configs(ctx, s, &list);
}

/* ------------------------------------------------------------ candidates */

static int group_fits(pv_context *ctx, int wg_x, int wg_y)
{
    return (long long)wg_x * wg_y <= ctx->device.max_work_group_size;
}

/* BP stage 1: per group shape (32 wide, as the paper) and per number of
 * groups sharing the local memory, the split that fills that share after
 * a few register values; plus an all-register split per shape. */
static void bp_candidates(pv_context *ctx, const search_state *s, int ndisp, config_list *list)
{
    static const int heights[] = {1, 2, 4, 8};
    static const int sharing[] = {1, 2, 4, 8};
    const size_t local = (size_t)ctx->device.local_memory;
    const int initial_registers = ndisp < 16 ? ndisp : 16;
    for (size_t h = 0; h < sizeof heights / sizeof heights[0]; h++) {
        if (!group_fits(ctx, 32, heights[h]))
            continue;
        const size_t items = 32 * (size_t)heights[h];
        config c = s->best;
        set_value(s->family, &c, "BP_WG_X", 32);
        set_value(s->family, &c, "BP_WG_Y", heights[h]);
        set_value(s->family, &c, "BP_REG_VALUES", ndisp < 64 ? ndisp : 64);
        set_value(s->family, &c, "BP_LOCAL_VALUES", 0);
        add_config(list, &c, s->family->count);
        for (size_t g = 0; g < sizeof sharing / sizeof sharing[0]; g++) {
            size_t fit = local / ((size_t)sharing[g] * items * sizeof(float));
            int values = (int)(fit < (size_t)(ndisp - initial_registers) ? fit
                                                                         : (size_t)(ndisp - initial_registers));
            if (values <= 0)
                continue;
            set_value(s->family, &c, "BP_REG_VALUES", initial_registers);
            set_value(s->family, &c, "BP_LOCAL_VALUES", values);
            add_config(list, &c, s->family->count);
        }
    }
}

static void search_bp(pv_context *ctx, search_state *s)
{
    config_list list = {.count = 0};
    bp_candidates(ctx, s, s->w->bp.ndisp, &list);
    try_configs(ctx, s, &list);
    static const int small[] = {0, 512, 2048, 8192};
    sweep(ctx, s, "BP_SMALL_LEVEL_PIXELS", small, 4);
    static const int registers[] = {0, 8, 16, 32, 64};
    sweep(ctx, s, "BP_REG_VALUES", registers, 5);
    /* the kept values serve jobs of the workload's ndisp class */
    set_value(s->family, &s->best, "BP_NDISP_CLASS", pv_bp_ndisp_class(s->w->bp.ndisp));
}

/* SAD stage 1: group shapes x columns per item; then strip height and the
 * disparities per exchange pass. */
static void sad_candidates(pv_context *ctx, const search_state *s, config_list *list)
{
    static const int shapes[][2] = {{16, 4}, {32, 2}, {32, 4}, {64, 2}, {32, 8}, {64, 4}};
    static const int columns[] = {2, 4};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (!group_fits(ctx, shapes[i][0], shapes[i][1]))
            continue;
        for (size_t k = 0; k < sizeof columns / sizeof columns[0]; k++) {
            config c = s->best;
            set_value(s->family, &c, "SAD_WG_X", shapes[i][0]);
            set_value(s->family, &c, "SAD_WG_Y", shapes[i][1]);
            set_value(s->family, &c, "SAD_COLS_PER_ITEM", columns[k]);
            add_config(list, &c, s->family->count);
        }
    }
}

static void search_sad(pv_context *ctx, search_state *s)
{
    config_list list = {.count = 0};
    sad_candidates(ctx, s, &list);
    try_configs(ctx, s, &list);
    static const int rows[] = {2, 4, 8};
    sweep(ctx, s, "SAD_ROWS_PER_ITEM", rows, 3);
    static const int pass[] = {4, 8, 16};
    sweep(ctx, s, "SAD_DISP_PER_PASS", pass, 3);
}

/* ----------------------------------------------------------------- search */

/* The tunable families: one search per family, the family named as the op
 * whose launch parameters it holds.  The only list of them. */
typedef struct tuned_family {
    const char *family;
    void (*search)(pv_context *ctx, search_state *s);
} tuned_family;

static const tuned_family tuned_families[] = {
    {"bp", search_bp},
    {"sad", search_sad},
};

#define TUNED_COUNT ((int)(sizeof tuned_families / sizeof tuned_families[0]))

const char *pv_tune_family(int index)
{
    return index >= 0 && index < TUNED_COUNT ? tuned_families[index].family : NULL;
}

int pv_tune_family_known(const char *family)
{
    for (int i = 0; family && i < TUNED_COUNT; i++)
        if (strcmp(tuned_families[i].family, family) == 0)
            return 1;
    return 0;
}

static const tuned_family *tuned_family_of(const char *family)
{
    for (int i = 0; i < TUNED_COUNT; i++)
        if (strcmp(tuned_families[i].family, family) == 0)
            return &tuned_families[i];
    return NULL;
}

static void fill_result(const search_state *s, const char *op, pv_tune_result *result)
{
    snprintf(result->op, sizeof result->op, "%s", op);
    result->best_ms = s->best_ms;
    result->param_count = 0;
    for (int i = 0; i < s->family->count; i++) {
        pv_tune_param *p = &result->params[result->param_count++];
        snprintf(p->name, sizeof p->name, "%s", s->family->names[i].name);
        p->value = s->best.value[i];
    }
}

/* The search from the defaults, the winner applied; on failure the
 * family's values on entry are put back. */
static pv_status search_from_defaults(pv_context *ctx, const tuned_family *tuned,
                                      family_params *family, search_state *s,
                                      const config *original)
{
    s->best_ms = evaluate(ctx, family, &s->best, s->w, s->runs);
    s->result->default_ms = s->best_ms;
    if (s->best_ms < 0) {
        apply_config(ctx, family, original);
        return pv_fail(ctx, PV_ERR_MISMATCH,
                       "tune: '%s' with the default parameters fails or disagrees with the CPU",
                       tuned->family);
    }
    tuned->search(ctx, s);
    if (family->missing) {
        apply_config(ctx, family, original);
        return pv_fail(ctx, PV_ERR_INVALID, "tune: the backend's '%s' family has no parameter %s",
                       tuned->family, family->missing);
    }
    fill_result(s, tuned->family, s->result);
    return apply_config(ctx, family, &s->best);
}

pv_status pv_tune_search(pv_context *ctx, const char *op, const pv_tune_options *options,
                         pv_tune_result *result)
{
    const tuned_family *tuned = tuned_family_of(op);
    if (!tuned)
        return pv_fail(ctx, PV_ERR_INVALID, "tune: unknown op '%s'", op);
    if (!ctx->ops->device->param_list)
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "tune: the %s backend has no launch parameters",
                       ctx->ops->name);
    family_params family = {.family = tuned->family};
    config original, defaults;
    pv_status status = current_config(ctx, &family, &original);
    if (status == PV_OK)
        status = default_config(ctx, &family, &defaults);
    workload w;
    if (status == PV_OK)
        status = make_workload(ctx, op, options, &w);
    if (status != PV_OK) {
        apply_config(ctx, &family, &original);
        return status;
    }
    search_state s = {&family, &w, defaults, -1.0,
                      options->max_candidates > 0 ? options->max_candidates : -1, options->runs,
                      result};
    status = search_from_defaults(ctx, tuned, &family, &s, &original);
    free_workload(&w);
    if (status == PV_OK)
        pv_log(ctx, "tune: %s: default %.3f ms, best %.3f ms after %d candidates (%d rejected)", op,
               result->default_ms, result->best_ms, result->tried, result->rejected);
    return status;
}
