/* The tuning cache file's parser (lib/tune_file.c), on the bytes as they
 * come, for a fixed device identity.  The parser is run a second time with
 * the checksum of a final "end <16 hex digits>" line recomputed, so that
 * the fuzzer reaches the entry checks behind it.  A file accepted must
 * keep the format's promises: at most PV_TUNE_MAX_ENTRIES entries, values
 * in range, names of a known family, terminated strings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const pv_tune_identity identity = {"fuzz device", "fuzz driver 1.0"};

/* The two families the tuner has; any parameter name within them. */
static int known(void *user, const char *family, const char *name)
{
    (void)user;
    return (strcmp(family, "bp") == 0 || strcmp(family, "sad") == 0) && name[0] != '\0';
}

static void check(const pv_tune_file *file)
{
    if (file->count < 0 || file->count > PV_TUNE_MAX_ENTRIES)
        __builtin_trap();
    for (int i = 0; i < file->count; i++) {
        const pv_tune_entry *e = &file->entries[i];
        if (e->value < 0 || e->value > PV_TUNE_MAX_VALUE ||
            memchr(e->family, '\0', sizeof e->family) == NULL ||
            memchr(e->name, '\0', sizeof e->name) == NULL || !known(NULL, e->family, e->name))
            __builtin_trap();
    }
}

static void parse(const char *text, size_t size)
{
    pv_tune_file file;
    const char *why = NULL;
    if (pv_tune_parse_file(text, size, &identity, known, NULL, &file, &why))
        check(&file);
    else if (!why || !*why)
        __builtin_trap();
}

#include "fuzz_tune_text.h"
