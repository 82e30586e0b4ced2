/* The entry point both tuning-text targets share (fuzz_tune_cache.c,
 * fuzz_tune_db.c): each input is parsed as it is, and again with the
 * right checksum put in its last line, so that the fuzzer reaches past the
 * checksum test.  The including file defines
 *     static void parse(const char *text, size_t size);
 * before including this header. */
#ifndef PV_FUZZ_TUNE_TEXT_H
#define PV_FUZZ_TUNE_TEXT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
