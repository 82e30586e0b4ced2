/* parvis-bench --ab-param SPEC: the launch parameters of an A/B
 * comparison's side B, as text ("FAMILY.NAME=VALUE[,...]", the --param
 * form) or as "@FILE", a tuning-database entry or a tuning cache file of
 * which only the "param FAMILY NAME VALUE" lines are read.  Only the C
 * library and pv_tune_family_name (which families exist), so
 * tests/test_bench.c checks the parser directly. */
#ifndef PV_BENCH_AB_SPEC_H
#define PV_BENCH_AB_SPEC_H

#include <stddef.h>

/* Room for every parameter of every family with space to spare (today's
 * entries hold about 60). */
#define BENCH_AB_MAX_PARAMS 128
/* The values pv_tune_set takes: 0 .. 2^20. */
#define BENCH_AB_MAX_VALUE (1 << 20)
/* The longest line and the largest file an @FILE may have: an entry is
 * a few kilobytes. */
#define BENCH_AB_MAX_LINE 256
#define BENCH_AB_MAX_FILE (1 << 20)

typedef struct bench_ab_param {
    char family[16];   /* one of pv_tune_family_name */
    char name[48];     /* e.g. SAD_WG_X; checked by pv_tune_set when applied */
    int value;         /* 0 .. BENCH_AB_MAX_VALUE */
} bench_ab_param;

typedef struct bench_ab_spec {
    int count;
    bench_ab_param params[BENCH_AB_MAX_PARAMS]; /* in the order given: a later one wins */
} bench_ab_spec;

/* text ("FAMILY.NAME=VALUE[,...]" or "@FILE") into *spec: 0, or -1 with a
 * message naming the file, line or item at fault in why (why_size bytes)
 * and *spec unchanged. */
int bench_ab_spec_parse(const char *text, bench_ab_spec *spec, char *why, size_t why_size);

/* A file's text (size bytes, named origin in messages): its param lines
 * into *spec; 0, or -1 with why and *spec unchanged. */
int bench_ab_spec_parse_entry(const char *text, size_t size, const char *origin,
                              bench_ab_spec *spec, char *why, size_t why_size);

/* spec as "FAMILY.NAME=VALUE,..." appended to prefix (may be NULL or
 * empty) with a comma between them, into out: 0, or -1 when it does not
 * fit in size bytes (out then holds ""). */
int bench_ab_spec_format(const char *prefix, const bench_ab_spec *spec, char *out, size_t size);

#endif
