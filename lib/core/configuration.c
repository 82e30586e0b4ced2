/* The configuration snapshot (configuration.h): every PARVIS_* variable read from
 * the environment in one place, kept under a lock, and listed to callers.
 * The values are copied out under the lock, so a refresh on another thread
 * (a context being made) never leaves a reader with a freed or half-written
 * string. */
#include "failure.h"
#include "configuration.h"

#include "parvis/config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct variable {
    const char *name;
    const char *kind;
    const char *fallback;
    const char *meaning;
} variable;

#define PV_CONFIG_TABLE_ENTRY(name, kind, fallback, meaning)                               \
    {"PARVIS_" #name, kind, fallback, meaning},
static const variable variables[PV_CONFIG_COUNT] = {PV_CONFIG_VARIABLES(PV_CONFIG_TABLE_ENTRY)};
#undef PV_CONFIG_TABLE_ENTRY

static pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
static char values[PV_CONFIG_COUNT][PV_CONFIG_VALUE_MAX + 1];
static pthread_once_t first_read = PTHREAD_ONCE_INIT;
static atomic_int log_enabled;

/* Under snapshot_lock.  The first variable too long is named in *too_long. */
static void read_environment(int *too_long)
{
    *too_long = -1;
    for (int i = 0; i < PV_CONFIG_COUNT; i++) {
        const char *text = getenv(variables[i].name);
        size_t length = text ? strlen(text) : 0;
        if (length > PV_CONFIG_VALUE_MAX) {
            if (*too_long < 0)
                *too_long = i;
            length = 0;
        }
        memcpy(values[i], text ? text : "", length);
        values[i][length] = '\0';
    }
    atomic_store(&log_enabled, strcmp(values[PV_CONFIG_LOG], "1") == 0);
}

static void read_first_time(void)
{
    int too_long;
    pthread_mutex_lock(&snapshot_lock);
    read_environment(&too_long);
    pthread_mutex_unlock(&snapshot_lock);
}

static void ensure_read(void)
{
    pthread_once(&first_read, read_first_time);
}

pv_status pv_config_refresh(void)
{
    ensure_read();
    int too_long;
    pthread_mutex_lock(&snapshot_lock);
    read_environment(&too_long);
    pthread_mutex_unlock(&snapshot_lock);
    if (too_long >= 0)
        return pv_fail(NULL, PV_ERR_INVALID, "%s is longer than %d bytes",
                       variables[too_long].name, PV_CONFIG_VALUE_MAX);
    return PV_OK;
}

int pv_config_get(pv_config_id id, char *value, size_t size)
{
    if ((unsigned)id >= PV_CONFIG_COUNT) {
        if (value && size)
            value[0] = '\0';
        return 0;
    }
    ensure_read();
    pthread_mutex_lock(&snapshot_lock);
    int set = values[id][0] != '\0';
    if (value && size) {
        size_t length = strlen(values[id]);
        if (length >= size)
            length = size - 1;
        memcpy(value, values[id], length);
        value[length] = '\0';
    }
    pthread_mutex_unlock(&snapshot_lock);
    return set;
}

int pv_config_is(pv_config_id id, const char *text)
{
    if ((unsigned)id >= PV_CONFIG_COUNT || !text)
        return 0;
    ensure_read();
    pthread_mutex_lock(&snapshot_lock);
    int same = strcmp(values[id], text) == 0;
    pthread_mutex_unlock(&snapshot_lock);
    return same;
}

pv_config_value pv_config_text(pv_config_id id)
{
    pv_config_value value;
    pv_config_get(id, value.text, sizeof value.text);
    return value;
}

int pv_config_memory_limit(size_t *limit)
{
    pv_config_value text = pv_config_text(PV_CONFIG_MEMORY_LIMIT);
    *limit = SIZE_MAX;
    if (!text.text[0])
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text.text, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
                : *end == 'G' || *end == 'g' ? 30 : 0;
    if (shift)
        end++;
    if (errno || end == text.text || *end || text.text[0] == '-' || value == 0 ||
        value > (unsigned long long)(SIZE_MAX >> shift))
        return -1;
    *limit = (size_t)value << shift;
    return 0;
}

int pv_config_log_enabled(void)
{
    ensure_read();
    return atomic_load(&log_enabled);
}

int pv_config_count(void)
{
    return PV_CONFIG_COUNT;
}

pv_status pv_config_entry(int index, pv_config_entry_info *entry)
{
    if (index < 0 || index >= PV_CONFIG_COUNT || !entry)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_config_entry: index %d not in 0..%d or entry NULL",
                       index, PV_CONFIG_COUNT - 1);
    _Static_assert(sizeof entry->value == PV_CONFIG_VALUE_MAX + 1,
                   "pv_config_entry_info.value holds every value kept");
    const variable *v = &variables[index];
    entry->name = v->name;
    entry->kind = v->kind;
    entry->default_value = v->fallback;
    entry->meaning = v->meaning;
    entry->is_set = pv_config_get((pv_config_id)index, entry->value, sizeof entry->value);
    return PV_OK;
}
