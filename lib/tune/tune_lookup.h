/* Internal: the tuned launch parameters' lookup, what the context and the
 * front ends use: the cache file's and the tuning database's text
 * (tune_file.c, tune_db.c), finding this device's entry and applying it
 * through the device sub-table's parameter slots (tune.c), and the list
 * of tunable families.  It knows nothing of the search (tune_search.h),
 * which stands above it.  Not installed. */
#ifndef PV_TUNE_LOOKUP_H
#define PV_TUNE_LOOKUP_H

#include "../core/internal.h"

#include <stdint.h>

/* ------------------------------------------------- the cache file's text */
/* Format: the comment at the top of lib/tune/tune.c.  The parser
 * (lib/tune/tune_file.c) makes no OpenCL call: it is fuzzed on its own. */

#define PV_TUNE_MAGIC "parvis-tune 1"
#define PV_TUNE_MAX_ENTRIES 128
#define PV_TUNE_MAX_FILE (64 * 1024)
#define PV_TUNE_MAX_VALUE (1 << 20)
#define PV_TUNE_FNV_START 14695981039346656037ull

typedef struct pv_tune_entry {
    char family[32];
    char name[48];
    int value;
} pv_tune_entry;

typedef struct pv_tune_file {
    pv_tune_entry entries[PV_TUNE_MAX_ENTRIES];
    int count;
} pv_tune_file;

/* What a cache file is written for (with the parvis version). */
typedef struct pv_tune_identity {
    char name[128];
    char driver[64];
} pv_tune_identity;

/* Whether a parameter named in a file is one the reader knows. */
typedef int (*pv_tune_param_known)(void *user, const char *family, const char *name);

uint64_t pv_tune_fnv1a(uint64_t hash, const char *bytes, size_t size);

/* 1 and the entries when all `size` bytes of text (no terminator needed)
 * are a valid file for id whose every parameter `known` accepts;
 * otherwise 0 with *why saying what is wrong (file->count is then
 * meaningless). */
int pv_tune_parse_file(const char *text, size_t size, const pv_tune_identity *id,
                       pv_tune_param_known known, void *user, pv_tune_file *file,
                       const char **why);

/* The text of a tuning file (malloc'ed, NUL-terminated, *size its length
 * without the NUL), or NULL when absent, unreadable or longer than
 * PV_TUNE_MAX_FILE (too large to be one of ours). */
char *pv_tune_read_text(const char *path, size_t *size);

/* printf onto text[*used..size): 1 and *used advanced, or 0 when it does
 * not fit (text then holds a cut line, and the caller gives up). */
int pv_tune_append(char *text, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Read the tuning cache into ctx once, before its first tunable call
 * (no-op on a backend without launch parameters, after
 * pv_tune_use_defaults, or with PARVIS_NO_TUNE=1).  Never fails: an
 * unusable cache is logged and ignored. */
void pv_tune_autoload(pv_context *ctx);

/* Through ctx's parameter slots (lib/tune/tune.c), for the cache file and the
 * tuning database alike: whether ctx (user) has family.name among its
 * tunable parameters; every entry of file applied; every tunable family
 * back to its defaults. */
int pv_tune_knows_param(void *user, const char *family, const char *name);
pv_status pv_tune_apply_file(pv_context *ctx, const pv_tune_file *file);
pv_status pv_tune_reset_families(pv_context *ctx);

/* The first checks of a call that fills a caller's buffer (what: the
 * call's name, buffer_name: the argument's): ctx, the buffer and its size,
 * and a backend with launch parameters (else PV_ERR_UNSUPPORTED). */
pv_status pv_tune_check_text_call(pv_context *ctx, const char *what, const char *buffer_name,
                                  const char *buffer, size_t size);

/* The tunable families (tune_families.c), each named as the op whose
 * launch parameters it holds: the one list of them (the search has one
 * search per family, tests/test_tune.c checks that they match).  The
 * index-th one's name, NULL past the last; whether family is one. */
const char *pv_tune_family(int index);
int pv_tune_family_known(const char *family);

#endif
