/* The tuning database entry's parser (pv_tune_parse_db, lib/tune/tune_file.c),
 * on the bytes as they come.  The parser is run a second time with the
 * checksum of a final "end <16 hex digits>" line recomputed, so that the
 * fuzzer reaches the header and entry checks behind it.  An entry
 * accepted must keep the format's promises: a known device type, limits
 * in range, terminated strings, at most PV_TUNE_MAX_ENTRIES parameters of
 * a known family with values in range; and, formatted again, it parses
 * back to the same fields. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_db.h"

#include "fuzz_tune_text.h"

static void check_header(const pv_tune_db_header *h)
{
    if (!terminated(h->vendor, sizeof h->vendor) || !terminated(h->type, sizeof h->type) ||
        !terminated(h->arch, sizeof h->arch) || !terminated(h->device, sizeof h->device) ||
        !terminated(h->driver, sizeof h->driver) || !terminated(h->parvis, sizeof h->parvis))
        __builtin_trap();
    if (strcmp(h->type, "cpu") != 0 && strcmp(h->type, "gpu") != 0 &&
        strcmp(h->type, "accelerator") != 0 && strcmp(h->type, "other") != 0)
        __builtin_trap();
    if (h->local_memory < 1 || h->local_memory > (1ull << 40) || h->max_work_group < 1 ||
        h->max_work_group > (1 << 20))
        __builtin_trap();
}

/* An accepted entry, formatted again, parses back to the same fields
 * (the text may differ: the parameter lines take "+8" for "8"). */
static void check_round_trip(const pv_tune_db_header *header, const pv_tune_file *file)
{
    char *again = malloc(PV_TUNE_MAX_FILE);
    pv_tune_db_header header2;
    pv_tune_file *file2 = malloc(sizeof *file2);
    size_t used = 0;
    const char *why = NULL;
    if (again && file2) {
        if (!pv_tune_db_format(header, file, again, PV_TUNE_MAX_FILE, &used) ||
            !pv_tune_parse_db(again, used, known, NULL, &header2, file2, &why) ||
            memcmp(&header2, header, sizeof header2) != 0 || file2->count != file->count)
            __builtin_trap();
        for (int i = 0; i < file->count; i++)
            if (strcmp(file2->entries[i].family, file->entries[i].family) != 0 ||
                strcmp(file2->entries[i].name, file->entries[i].name) != 0 ||
                file2->entries[i].value != file->entries[i].value)
                __builtin_trap();
    }
    free(again);
    free(file2);
}

static void parse(const char *text, size_t size)
{
    pv_tune_db_header header;
    pv_tune_file file;
    const char *why = NULL;
    if (pv_tune_parse_db(text, size, known, NULL, &header, &file, &why)) {
        check_header(&header);
        check_entries(&file);
        check_round_trip(&header, &file);
    } else if (!why || !*why)
        __builtin_trap();
}
