/* The tuning cache file's parser (lib/tune/tune_file.c), on the bytes as they
 * come, for a fixed device identity.  The parser is run a second time with
 * the checksum of a final "end <16 hex digits>" line recomputed, so that
 * the fuzzer reaches the entry checks behind it.  A file accepted must
 * keep the format's promises: at most PV_TUNE_MAX_ENTRIES entries, values
 * in range, names of a known family, terminated strings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_lookup.h"

#include "fuzz_tune_text.h"

static const pv_tune_identity identity = {"fuzz device", "fuzz driver 1.0"};

static void parse(const char *text, size_t size)
{
    pv_tune_file file;
    const char *why = NULL;
    if (pv_tune_parse_file(text, size, &identity, known, NULL, &file, &why))
        check_entries(&file);
    else if (!why || !*why)
        __builtin_trap();
}

