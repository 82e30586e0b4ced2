/* The tuning cache file's parser (format at the top of lib/tune.c).  The
 * file sits in a directory the user's account writes, so it is read as
 * untrusted text: bounded lines, every field checked, a checksum over all
 * of it, and nothing outside the buffer it is given. */
#include "tune_internal.h"

#include <stdio.h>
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
