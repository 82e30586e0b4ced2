/* What both tuning-text targets share (fuzz_tune_cache.c,
 * fuzz_tune_db.c): the known-name callback, the checks of the parameter
 * entries a parser accepted, and the entry point: each input is parsed as
 * it is, and again with the right checksum put in its last line, so that
 * the fuzzer reaches past the checksum test.  The including file defines
 *     static void parse(const char *text, size_t size);
 * (declared here) and includes tune_lookup.h first. */
#ifndef PV_FUZZ_TUNE_TEXT_H
#define PV_FUZZ_TUNE_TEXT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void parse(const char *text, size_t size);

/* The two families the tuner has; any parameter name within them. */
static int known(void *user, const char *family, const char *name)
{
    (void)user;
    return (strcmp(family, "bp") == 0 || strcmp(family, "sad") == 0) && name[0] != '\0';
}

static int terminated(const char *field, size_t size)
{
    return memchr(field, '\0', size) != NULL;
}

/* At most PV_TUNE_MAX_ENTRIES entries, values in range, terminated names
 * of a known family. */
static void check_entries(const pv_tune_file *file)
{
    if (file->count < 0 || file->count > PV_TUNE_MAX_ENTRIES)
        __builtin_trap();
    for (int i = 0; i < file->count; i++) {
        const pv_tune_entry *e = &file->entries[i];
        if (e->value < 0 || e->value > PV_TUNE_MAX_VALUE ||
            !terminated(e->family, sizeof e->family) || !terminated(e->name, sizeof e->name) ||
            !known(NULL, e->family, e->name))
            __builtin_trap();
    }
}

/* With "end " + 16 hex digits + "\n" at the very end, the same text with
 * the right checksum there. */
static void parse_with_fixed_checksum(const char *text, size_t size)
{
    const size_t tail = 4 + 16 + 1;
    if (size < tail || memcmp(text + size - tail, "end ", 4) != 0 || text[size - 1] != '\n')
        return;
    size_t body = size - tail;
    if (body > 0 && text[body - 1] != '\n')
        return;
    char *copy = malloc(size + 1);
    if (!copy)
        return;
    memcpy(copy, text, body);
    snprintf(copy + body, tail + 1, "end %016llx\n",
             (unsigned long long)pv_tune_fnv1a(PV_TUNE_FNV_START, text, body));
    parse(copy, size);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy: any read past the end is seen by ASan. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    parse(text, size);
    parse_with_fixed_checksum(text, size);
    free(text);
    return 0;
}

#endif
