/* Internal to the tuner's search: the state one family's search works on
 * (tune_search.c) and the steps its candidate generators use
 * (tune_candidates.c).  Not installed. */
#ifndef PV_TUNE_STEPS_H
#define PV_TUNE_STEPS_H

#include "tune_workloads.h"

/* The configurations one search remembers (and reports in its trace). */
#define PV_TUNE_TRACE_MAX 256

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

#define TUNE_MEMO PV_TUNE_TRACE_MAX

/* A configuration measured: its median per workload (0: not timed there
 * yet, negative: rejected). */
typedef struct measured {
    config c;
    double ms[PV_TUNE_MAX_WORKLOADS];
    int pruned;          /* timed once on the main workload, over the prune factor */
} measured;

/* Which workloads a step of the search judges its candidates on: the
 * main one only, or all of the family's (the same for a family with one).
 * A step's candidates and the best so far are compared on the same ones. */
typedef enum scope { SCOPE_MAIN, SCOPE_ALL } scope;

typedef struct search_state {
    family_params *family;
    pv_tune_workload *w[PV_TUNE_MAX_WORKLOADS];
    int workloads;
    config best;         /* the best so far, memo[best_index] */
    int best_index;      /* -1 until the defaults are measured */
    double reference_ms[PV_TUNE_MAX_WORKLOADS]; /* the defaults' times: scores are relative */
    int budget;          /* candidates still allowed, < 0: no limit */
    double deadline_ms;  /* pv_now_ms() after which no candidate starts; 0: none */
    int runs;
    const char *only;    /* NULL, or the one parameter swept */
    int only_found;      /* whether a step sweeps it */
    pv_tune_result *result;
    measured memo[TUNE_MEMO];
    int memo_count;
} search_state;

/* Steps shared by the search and the candidate generators (tune_search.c). */
void pv_tune_set_value(family_params *family, config *c, const char *name, int value);
void pv_tune_add_config(config_list *list, const config *c, int params);
void pv_tune_try_configs(pv_context *ctx, search_state *s, const config_list *list, scope sc);
int pv_tune_wanted(search_state *s, const char *name);
void pv_tune_sweep(pv_context *ctx, search_state *s, const char *name, const int *values,
                   int count, scope sc);

/* Each family's search (tune_candidates.c), and what BP's kept values are
 * for (set on the winner and the defaults alike before they are compared). */
void pv_tune_search_bp(pv_context *ctx, search_state *s);
void pv_tune_label_bp(const search_state *s, config *c);
void pv_tune_search_sad(pv_context *ctx, search_state *s);
void pv_tune_search_filter(pv_context *ctx, search_state *s);
void pv_tune_search_register(pv_context *ctx, search_state *s);
void pv_tune_search_flow(pv_context *ctx, search_state *s);
void pv_tune_search_features(pv_context *ctx, search_state *s);
void pv_tune_search_octreg(pv_context *ctx, search_state *s);
void pv_tune_search_geometry(pv_context *ctx, search_state *s);
void pv_tune_search_sgm(pv_context *ctx, search_state *s);

#endif
