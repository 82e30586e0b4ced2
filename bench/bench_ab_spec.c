/* The parser of parvis-bench --ab-param (bench_ab_spec.h).  The file form
 * reads the "param" lines of a tuning-database entry or a tuning cache
 * file and nothing else: its header names the device it was made on, but
 * the point of an A/B run is to try those values wherever it runs. */
#include "bench_ab_spec.h"

#include "parvis.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Always -1, after writing the message into why. */
static int refuse(char *why, size_t why_size, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    if (why && why_size > 0)
        vsnprintf(why, why_size, fmt, args);
    va_end(args);
    return -1;
}

static int family_known(const char *family)
{
    for (int i = 0; pv_tune_family_name(i); i++)
        if (strcmp(pv_tune_family_name(i), family) == 0)
            return 1;
    return 0;
}

/* The tunable families, comma separated, for the message that refuses
 * another. */
static void family_list(char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; pv_tune_family_name(i) && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                                 pv_tune_family_name(i));
}

static int name_is_plain(const char *name)
{
    return name[0] != '\0' && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_") == strlen(name);
}

/* A decimal number in 0 .. BENCH_AB_MAX_VALUE, digits only. */
static int parse_value(const char *text, int *value)
{
    size_t length = strlen(text);
    if (length == 0 || length > 8 || strspn(text, "0123456789") != length)
        return 0;
    long parsed = strtol(text, NULL, 10);
    if (parsed > BENCH_AB_MAX_VALUE)
        return 0;
    *value = (int)parsed;
    return 1;
}

/* One parameter, its three parts as text, into *param; where names the
 * item or line in messages. */
static int check_param(const char *family, const char *name, const char *value,
                       const char *where, bench_ab_param *param, char *why, size_t why_size)
{
    if (!family_known(family)) {
        char families[160];
        family_list(families, sizeof families);
        return refuse(why, why_size, "%s: '%s' is not a tunable family (%s)", where, family,
                      families);
    }
    if (!name_is_plain(name) || strlen(name) >= sizeof param->name)
        return refuse(why, why_size, "%s: '%s' is not a parameter name (letters, digits, _)",
                      where, name);
    int parsed;
    if (!parse_value(value, &parsed))
        return refuse(why, why_size, "%s: value '%s' is not an integer in 0..%d", where, value,
                      BENCH_AB_MAX_VALUE);
    snprintf(param->family, sizeof param->family, "%s", family);
    snprintf(param->name, sizeof param->name, "%s", name);
    param->value = parsed;
    return 0;
}

/* "FAMILY.NAME=VALUE" (length bytes of item) into *param. */
static int parse_item(const char *item, size_t length, bench_ab_param *param, char *why,
                      size_t why_size)
{
    char text[BENCH_AB_MAX_LINE], where[BENCH_AB_MAX_LINE + 8];
    if (length >= sizeof text)
        return refuse(why, why_size, "'%.40s...': too long for FAMILY.NAME=VALUE", item);
    memcpy(text, item, length);
    text[length] = '\0';
    snprintf(where, sizeof where, "'%s'", text);
    char *dot = strchr(text, '.');
    char *equals = dot ? strchr(dot + 1, '=') : NULL;
    if (!dot || !equals || dot == text)
        return refuse(why, why_size, "%s is not FAMILY.NAME=VALUE", where);
    /* A second dot or '=' ends up in the name or the value, which refuse it. */
    *dot = '\0';
    *equals = '\0';
    return check_param(text, dot + 1, equals + 1, where, param, why, why_size);
}

static int parse_list(const char *text, bench_ab_spec *spec, char *why, size_t why_size)
{
    bench_ab_spec parsed;
    parsed.count = 0;
    const char *item = text;
    for (;;) {
        size_t length = strcspn(item, ",");
        if (parsed.count == BENCH_AB_MAX_PARAMS)
            return refuse(why, why_size, "more than %d parameters", BENCH_AB_MAX_PARAMS);
        if (parse_item(item, length, &parsed.params[parsed.count], why, why_size))
            return -1;
        parsed.count++;
        if (item[length] == '\0')
            break;
        item += length + 1;
    }
    *spec = parsed;
    return 0;
}

/* A "param" line's four fields into *param; where names the line. */
static int parse_param_line(char *line, const char *where, bench_ab_param *param, char *why,
                            size_t why_size)
{
    char *fields[5] = {NULL};
    int count = 0;
    for (char *save = NULL, *field = strtok_r(line, " \t", &save); field && count < 5;
         field = strtok_r(NULL, " \t", &save))
        fields[count++] = field;
    if (count != 4)
        return refuse(why, why_size, "%s: not 'param FAMILY NAME VALUE'", where);
    return check_param(fields[1], fields[2], fields[3], where, param, why, why_size);
}

/* Whether a line is a parameter line: "param" then a blank or the end. */
static int is_param_line(const char *line)
{
    return strncmp(line, "param", 5) == 0 && (line[5] == ' ' || line[5] == '\t' || line[5] == '\0');
}

int bench_ab_spec_parse_entry(const char *text, size_t size, const char *origin,
                              bench_ab_spec *spec, char *why, size_t why_size)
{
    if (!text || !origin || !spec)
        return refuse(why, why_size, "no text to read");
    if (memchr(text, '\0', size))
        return refuse(why, why_size, "%s: not a text file (it holds a NUL byte)", origin);
    bench_ab_spec parsed;
    parsed.count = 0;
    size_t pos = 0;
    for (int number = 1; pos < size; number++) {
        const char *start = text + pos;
        const char *end = memchr(start, '\n', size - pos);
        size_t length = end ? (size_t)(end - start) : size - pos;
        pos += length + (end != NULL);
        char line[BENCH_AB_MAX_LINE], where[BENCH_AB_MAX_LINE + 32];
        if (length >= sizeof line)
            return refuse(why, why_size, "%s line %d: longer than %d characters", origin, number,
                          BENCH_AB_MAX_LINE - 1);
        memcpy(line, start, length);
        line[length - (length > 0 && start[length - 1] == '\r')] = '\0';
        if (!is_param_line(line))
            continue; /* the header, the checksum line: not parameters */
        if (parsed.count == BENCH_AB_MAX_PARAMS)
            return refuse(why, why_size, "%s: more than %d param lines", origin,
                          BENCH_AB_MAX_PARAMS);
        snprintf(where, sizeof where, "%s line %d", origin, number);
        if (parse_param_line(line, where, &parsed.params[parsed.count], why, why_size))
            return -1;
        parsed.count++;
    }
    if (parsed.count == 0)
        return refuse(why, why_size,
                      "%s: no 'param FAMILY NAME VALUE' lines (not a tuning-database entry or "
                      "tuning cache file)", origin);
    *spec = parsed;
    return 0;
}

/* The whole of a file of at most BENCH_AB_MAX_FILE bytes, malloc'd, with
 * its size; NULL with why. */
static char *read_file(const char *path, size_t *size, char *why, size_t why_size)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        refuse(why, why_size, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(BENCH_AB_MAX_FILE + 1);
    size_t got = text ? fread(text, 1, BENCH_AB_MAX_FILE + 1, in) : 0;
    int failed = !text || ferror(in);
    fclose(in);
    if (failed || got > BENCH_AB_MAX_FILE) {
        refuse(why, why_size, failed ? "cannot read %s" : "%s: larger than %d bytes", path,
               BENCH_AB_MAX_FILE);
        free(text);
        return NULL;
    }
    *size = got;
    return text;
}

int bench_ab_spec_parse(const char *text, bench_ab_spec *spec, char *why, size_t why_size)
{
    if (!text || !spec)
        return refuse(why, why_size, "no parameters given");
    if (text[0] == '\0' || (text[0] == '@' && text[1] == '\0'))
        return refuse(why, why_size, "empty: expected FAMILY.NAME=VALUE[,...] or @FILE");
    if (text[0] != '@')
        return parse_list(text, spec, why, why_size);
    size_t size = 0;
    char *content = read_file(text + 1, &size, why, why_size);
    if (!content)
        return -1;
    int rc = bench_ab_spec_parse_entry(content, size, text + 1, spec, why, why_size);
    free(content);
    return rc;
}

int bench_ab_spec_format(const char *prefix, const bench_ab_spec *spec, char *out, size_t size)
{
    if (!spec || !out || size == 0)
        return -1;
    int used = snprintf(out, size, "%s", prefix ? prefix : "");
    for (int i = 0; i < spec->count && used >= 0 && (size_t)used < size; i++) {
        const bench_ab_param *p = &spec->params[i];
        used += snprintf(out + used, size - (size_t)used, "%s%s.%s=%d", used > 0 ? "," : "",
                         p->family, p->name, p->value);
    }
    if (used < 0 || (size_t)used >= size) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}
