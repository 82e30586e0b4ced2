/* The parsers of the tuning cache file (format at the top of lib/tune/tune.c)
 * and of the tuning database's entries (format in lib/tune/tune_db.h).  A cache
 * file sits in a directory the user's account writes, so both are read as
 * untrusted text: bounded lines, every field checked, a checksum over all
 * of it, and nothing outside the buffer they are given. */
#include "tune_lookup.h"
#include "tune_db.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t pv_tune_fnv1a(uint64_t hash, const char *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        hash ^= (unsigned char)bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

/* Next line of text at *pos into line (without the newline); 0 at the end
 * or when a line is too long. */
static int next_line(const char *text, size_t size, size_t *pos, char *line, size_t line_size)
{
    if (*pos >= size)
        return 0;
    const char *start = text + *pos;
    const char *end = memchr(start, '\n', size - *pos);
    size_t length = end ? (size_t)(end - start) : size - *pos;
    if (length >= line_size || !end)
        return 0;
    memcpy(line, start, length);
    line[length] = '\0';
    *pos += length + 1;
    return 1;
}

static int expect_field(const char *line, const char *key, const char *value)
{
    size_t key_length = strlen(key);
    return strncmp(line, key, key_length) == 0 && line[key_length] == ' ' &&
           strcmp(line + key_length + 1, value) == 0;
}

static int parse_param(const char *line, pv_tune_param_known known, void *user,
                       pv_tune_entry *entry)
{
    char family[32], name[48], extra[2];
    int value;
    if (sscanf(line, "param %31s %47s %d %1s", family, name, &value, extra) != 3)
        return 0;
    if (value < 0 || value > PV_TUNE_MAX_VALUE || !known(user, family, name))
        return 0;
    snprintf(entry->family, sizeof entry->family, "%s", family);
    snprintf(entry->name, sizeof entry->name, "%s", name);
    entry->value = value;
    return 1;
}

static int parse_end(const char *line, uint64_t checksum)
{
    unsigned long long stored;
    char extra[2];
    return sscanf(line, "end %16llx %1s", &stored, extra) == 1 && stored == checksum;
}

/* The "param" lines from pos on and the closing "end" line, whose
 * checksum covers every byte before it, up to the very end of text. */
static int parse_entries(const char *text, size_t size, size_t pos, pv_tune_param_known known,
                         void *user, pv_tune_file *file, const char **why)
{
    char line[512];
    *why = "corrupt (bad entry, truncated, or checksum mismatch)";
    for (;;) {
        size_t line_start = pos;
        if (!next_line(text, size, &pos, line, sizeof line))
            return 0;
        if (strncmp(line, "end ", 4) == 0)
            return parse_end(line, pv_tune_fnv1a(PV_TUNE_FNV_START, text, line_start)) &&
                   pos == size;
        if (file->count == PV_TUNE_MAX_ENTRIES ||
            !parse_param(line, known, user, &file->entries[file->count]))
            return 0;
        file->count++;
    }
}

int pv_tune_parse_file(const char *text, size_t size, const pv_tune_identity *id,
                       pv_tune_param_known known, void *user, pv_tune_file *file,
                       const char **why)
{
    char line[512];
    size_t pos = 0;
    file->count = 0;
    *why = "not a parvis tuning file";
    if (!next_line(text, size, &pos, line, sizeof line) || strcmp(line, PV_TUNE_MAGIC) != 0)
        return 0;
    *why = "written for another device, driver or parvis version";
    if (!next_line(text, size, &pos, line, sizeof line) || !expect_field(line, "device", id->name) ||
        !next_line(text, size, &pos, line, sizeof line) || !expect_field(line, "driver", id->driver) ||
        !next_line(text, size, &pos, line, sizeof line) ||
        !expect_field(line, "parvis", PV_VERSION_STRING))
        return 0;
    return parse_entries(text, size, pos, known, user, file, why);
}

/* ------------------------------------------------- the database's entries */

/* "key value" into out (value may be empty only when may_be_empty). */
static int read_field(const char *line, const char *key, int may_be_empty, char *out,
                      size_t out_size)
{
    size_t key_length = strlen(key);
    if (strncmp(line, key, key_length) != 0 || line[key_length] != ' ')
        return 0;
    const char *value = line + key_length + 1;
    size_t length = strlen(value);
    if ((length == 0 && !may_be_empty) || length >= out_size)
        return 0;
    memcpy(out, value, length + 1);
    return 1;
}

/* "key N" with N a plain decimal number in 1..max. */
static int read_number(const char *line, const char *key, unsigned long long max,
                       unsigned long long *number)
{
    char text[32], extra[2];
    if (!read_field(line, key, 0, text, sizeof text) || strspn(text, "0123456789") != strlen(text) ||
        strlen(text) > 19 || sscanf(text, "%llu%1s", number, extra) != 1)
        return 0;
    return *number >= 1 && *number <= max;
}

static int known_type(const char *type)
{
    return strcmp(type, "cpu") == 0 || strcmp(type, "gpu") == 0 ||
           strcmp(type, "accelerator") == 0 || strcmp(type, "other") == 0;
}

static int parse_db_header(const char *text, size_t size, size_t *pos, pv_tune_db_header *header)
{
    char line[512];
    unsigned long long local_memory = 0, max_work_group = 0;
#define NEXT() next_line(text, size, pos, line, sizeof line)
    if (!NEXT() || !read_field(line, "vendor", 0, header->vendor, sizeof header->vendor) ||
        !NEXT() || !read_field(line, "type", 0, header->type, sizeof header->type) ||
        !known_type(header->type) ||
        !NEXT() || !read_field(line, "arch", 1, header->arch, sizeof header->arch) ||
        !NEXT() || !read_field(line, "device", 0, header->device, sizeof header->device) ||
        !NEXT() || !read_field(line, "driver", 0, header->driver, sizeof header->driver) ||
        !NEXT() || !read_field(line, "parvis", 0, header->parvis, sizeof header->parvis) ||
        !NEXT() || !read_number(line, "local_memory", 1ull << 40, &local_memory) ||
        !NEXT() || !read_number(line, "max_work_group", 1u << 20, &max_work_group))
        return 0;
#undef NEXT
    header->local_memory = local_memory;
    header->max_work_group = (int)max_work_group;
    return 1;
}

int pv_tune_parse_db(const char *text, size_t size, pv_tune_param_known known, void *user,
                     pv_tune_db_header *header, pv_tune_file *file, const char **why)
{
    char line[512];
    size_t pos = 0;
    file->count = 0;
    memset(header, 0, sizeof *header);
    *why = "not a parvis tuning database entry";
    if (!next_line(text, size, &pos, line, sizeof line) || strcmp(line, PV_TUNE_DB_MAGIC) != 0)
        return 0;
    *why = "a header line is missing, out of order or out of range";
    if (!parse_db_header(text, size, &pos, header))
        return 0;
    return parse_entries(text, size, pos, known, user, file, why);
}

/* Reading a file and formatting an entry (the parser's inverse); the
 * reader and pv_tune_append serve lib/tune/tune.c and lib/tune/tune_db.c too. */

char *pv_tune_read_text(const char *path, size_t *size)
{
    FILE *file = NULL;
    if (pv_open_regular(path, &file, NULL) != 0)
        return NULL;
    char *text = malloc(PV_TUNE_MAX_FILE + 1);
    size_t n = text ? fread(text, 1, PV_TUNE_MAX_FILE + 1, file) : 0;
    fclose(file);
    if (!text || n > PV_TUNE_MAX_FILE) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    *size = n;
    return text;
}

int pv_tune_append(char *text, size_t size, size_t *used, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(text + *used, size - *used, fmt, args);
    va_end(args);
    if (n < 0 || (size_t)n >= size - *used)
        return 0;
    *used += (size_t)n;
    return 1;
}

int pv_tune_db_format(const pv_tune_db_header *header, const pv_tune_file *file, char *text,
                      size_t size, size_t *used)
{
    *used = 0;
    int ok = size > 0 &&
             pv_tune_append(text, size, used,
                            "%s\nvendor %s\ntype %s\narch %s\ndevice %s\ndriver %s\nparvis %s\n"
                            "local_memory %llu\nmax_work_group %d\n",
                            PV_TUNE_DB_MAGIC, header->vendor, header->type, header->arch,
                            header->device, header->driver, header->parvis,
                            (unsigned long long)header->local_memory, header->max_work_group);
    for (int i = 0; ok && i < file->count; i++)
        ok = pv_tune_append(text, size, used, "param %s %s %d\n", file->entries[i].family,
                            file->entries[i].name, file->entries[i].value);
    uint64_t checksum = ok ? pv_tune_fnv1a(PV_TUNE_FNV_START, text, *used) : 0;
    return ok && pv_tune_append(text, size, used, "end %016llx\n", (unsigned long long)checksum);
}
