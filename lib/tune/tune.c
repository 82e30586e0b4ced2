/* Front end of the auto-tuner: options, the per-device cache file and the
 * API that applies or overrides launch parameters, all through the
 * device sub-table's parameter slots.  The search itself is in
 * lib/tune/tune_search.c.
 *
 * Cache file (text, one per device identity):
 *     parvis-tune 1
 *     device <CL_DEVICE_NAME>
 *     driver <CL_DRIVER_VERSION>
 *     parvis <version>
 *     param <family> <NAME> <value>      (any number of lines)
 *     end <FNV-1a 64 of every byte before this line, 16 hex digits>
 * A file is used only when all of it parses, the identity lines match the
 * context's device and the checksum matches; otherwise it is ignored with
 * a logged warning.  It is written to a temporary name and renamed, so a
 * reader never sees half a file. */
#include "../core/internal.h"
#include "tune_search.h"
#include "tune_db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pv_tune_options_default(pv_tune_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->runs = 3;
    options->write_cache = 1;
}

/* Whether ctx's backend has launch parameters to tune (the CPU backend
 * has none: the tuning calls do nothing there). */
static int has_params(const pv_context *ctx)
{
    return ctx->ops->device->param_list != NULL;
}

/* The cache file's types (tune_internal.h) under this file's short names. */
typedef pv_tune_entry tune_entry;
typedef pv_tune_file tune_file;
typedef pv_tune_identity device_identity;

/* ------------------------------------------------------------- identity */

/* The device as the context described it when it was made. */
static int context_identity(pv_context *ctx, device_identity *id)
{
    if (!has_params(ctx) || !ctx->device.name[0])
        return 0;
    snprintf(id->name, sizeof id->name, "%s", ctx->device.name);
    /* the identity keeps the driver string's start (as it always has) */
    snprintf(id->driver, sizeof id->driver, "%.*s", (int)sizeof id->driver - 1,
             ctx->device.driver_version);
    return 1;
}

static uint64_t identity_hash(const device_identity *id)
{
    uint64_t hash = pv_tune_fnv1a(PV_TUNE_FNV_START, id->name, strlen(id->name) + 1);
    hash = pv_tune_fnv1a(hash, id->driver, strlen(id->driver) + 1);
    return pv_tune_fnv1a(hash, PV_VERSION_STRING, strlen(PV_VERSION_STRING) + 1);
}

/* $PARVIS_TUNE_DIR, else $XDG_CACHE_HOME/parvis, else $HOME/.cache/parvis. */
static int cache_dir(char *dir, size_t size, int create)
{
    char own[PV_CONFIG_VALUE_MAX + 1];
    char root[3072];
    int n;
    if (pv_config_get(PV_CONFIG_TUNE_DIR, own, sizeof own))
        n = snprintf(dir, size, "%s", own);
    else if (pv_cache_root(root, sizeof root)) {
        if (create)
            mkdir(root, 0755);
        n = snprintf(dir, size, "%s/parvis", root);
    } else
        return 0;
    if (n <= 0 || (size_t)n >= size)
        return 0;
    return !create || mkdir(dir, 0755) == 0 || errno == EEXIST;
}

static int identity_path(const device_identity *id, char *path, size_t size, int create)
{
    char dir[3072];
    if (!cache_dir(dir, sizeof dir, create))
        return 0;
    int n = snprintf(path, size, "%s/tune-%016llx.txt", dir,
                     (unsigned long long)identity_hash(id));
    return n > 0 && (size_t)n < size;
}

/* -------------------------------------------------------------- parsing */

/* Whether ctx knows the parameter (the cache may name one a later or
 * earlier parvis had). */
int pv_tune_knows_param(void *user, const char *family, const char *name)
{
    int current;
    pv_context *ctx = user;
    return pv_tune_family_known(family) &&
           ctx->ops->device->param_get(ctx, family, name, &current) == PV_OK;
}

/* Loads ctx's cache file: 1 with entries, 0 when absent or unusable
 * (unusable files are logged). */
static int load_file(pv_context *ctx, const device_identity *id, tune_file *file)
{
    char path[4200];
    size_t size = 0;
    file->count = 0;
    if (!identity_path(id, path, sizeof path, 0))
        return 0;
    char *text = pv_tune_read_text(path, &size);
    if (!text) {
        if (access(path, F_OK) == 0)
            pv_log(ctx, "tune: warning: ignoring %s: unreadable or too large", path);
        return 0;
    }
    const char *why = "";
    int ok = pv_tune_parse_file(text, size, id, pv_tune_knows_param, ctx, file, &why);
    free(text);
    if (!ok) {
        pv_log(ctx, "tune: warning: ignoring %s: %s", path, why);
        file->count = 0;
    }
    return ok;
}

/* -------------------------------------------------------------- writing */

static int format_file(const device_identity *id, const tune_file *file, char *text, size_t size,
                       size_t *used)
{
    *used = 0;
    int ok = pv_tune_append(text, size, used, "%s\ndevice %s\ndriver %s\nparvis %s\n",
                            PV_TUNE_MAGIC, id->name, id->driver, PV_VERSION_STRING);
    for (int i = 0; ok && i < file->count; i++)
        ok = pv_tune_append(text, size, used, "param %s %s %d\n", file->entries[i].family,
                            file->entries[i].name, file->entries[i].value);
    uint64_t checksum = pv_tune_fnv1a(PV_TUNE_FNV_START, text, *used);
    return ok && pv_tune_append(text, size, used, "end %016llx\n", (unsigned long long)checksum);
}

/* A new file of its own in path's directory, made by mkstemp (O_EXCL:
 * nothing planted at a predictable name can be followed). */
static int open_temporary(const char *path, char *temporary, size_t size)
{
    int n = snprintf(temporary, size, "%s.XXXXXX", path);
    if (n <= 0 || (size_t)n >= size)
        return -1;
    int fd = mkstemp(temporary);
    if (fd >= 0)
        fchmod(fd, 0644); /* readable like the rest of the cache */
    return fd;
}

static int write_all(int fd, const char *text, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, text, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        text += n;
        size -= (size_t)n;
    }
    return 1;
}

/* The final name must be a regular file or absent: a symbolic link there
 * (or anything else) is refused rather than replaced or followed. */
static pv_status check_final_name(pv_context *ctx, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? PV_OK
                               : pv_fail(ctx, PV_ERR_IO, "tune: cannot inspect %s: %s", path,
                                         strerror(errno));
    if (!S_ISREG(st.st_mode))
        return pv_fail(ctx, PV_ERR_IO, "tune: %s is %s, not a regular file: refusing to write it",
                       path, S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
    return PV_OK;
}

/* A new private temporary file beside path, whose final name must not be
 * a link or anything but a regular file: *fd, or the failure. */
static pv_status open_beside(pv_context *ctx, const char *path, char *temporary, size_t size,
                             int *fd)
{
    pv_status status = check_final_name(ctx, path);
    if (status != PV_OK)
        return status;
    *fd = open_temporary(path, temporary, size);
    if (*fd < 0)
        return pv_fail(ctx, PV_ERR_IO, "tune: cannot create a file in the directory of %s: %s",
                       path, strerror(errno));
    return PV_OK;
}

/* Written to a private temporary file in the cache directory, flushed to
 * the disk and renamed over the final name, so readers see the old file
 * or the new one, never half of one. */
static pv_status write_text(pv_context *ctx, const char *path, const char *text, size_t used)
{
    char temporary[4300];
    int fd;
    pv_status status = open_beside(ctx, path, temporary, sizeof temporary, &fd);
    if (status != PV_OK)
        return status;
    int ok = write_all(fd, text, used) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok)
        ok = check_final_name(ctx, path) == PV_OK && rename(temporary, path) == 0;
    if (!ok) {
        unlink(temporary);
        return pv_fail(ctx, PV_ERR_IO, "tune: cannot write %s: %s", path, strerror(errno));
    }
    return PV_OK;
}

static pv_status write_file(pv_context *ctx, const device_identity *id, const tune_file *file)
{
    char path[4200];
    if (!identity_path(id, path, sizeof path, 1))
        return pv_fail(ctx, PV_ERR_IO, "tune: no cache directory (set PARVIS_TUNE_DIR, "
                                       "XDG_CACHE_HOME or HOME)");
    char *text = malloc(PV_TUNE_MAX_FILE);
    size_t used = 0;
    if (!text || !format_file(id, file, text, PV_TUNE_MAX_FILE, &used)) {
        free(text);
        return pv_fail(ctx, PV_ERR_NOMEM, "tune: cannot format the cache file");
    }
    pv_status status = write_text(ctx, path, text, used);
    free(text);
    if (status == PV_OK)
        pv_log(ctx, "tune: wrote %s", path);
    return status;
}

/* Whether the cache file of ctx's device can be written: the directory
 * exists (made if needed) and takes a new file, and the final name is not
 * a link.  The probe file is removed again. */
static pv_status check_writable(pv_context *ctx)
{
    device_identity id;
    char path[4200], temporary[4300];
    if (!context_identity(ctx, &id))
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "tune: cannot identify the context's device");
    if (!identity_path(&id, path, sizeof path, 1))
        return pv_fail(ctx, PV_ERR_IO, "tune: no usable cache directory (set PARVIS_TUNE_DIR, "
                                       "XDG_CACHE_HOME or HOME to a writable place)");
    int fd;
    pv_status status = open_beside(ctx, path, temporary, sizeof temporary, &fd);
    if (status != PV_OK)
        return status;
    close(fd);
    unlink(temporary);
    return PV_OK;
}

/* The file's entries with every entry of `family` replaced by result's. */
static void merge_result(tune_file *file, const char *family, const pv_tune_result *result)
{
    int kept = 0;
    for (int i = 0; i < file->count; i++)
        if (strcmp(file->entries[i].family, family) != 0)
            file->entries[kept++] = file->entries[i];
    file->count = kept;
    for (int i = 0; i < result->param_count && file->count < PV_TUNE_MAX_ENTRIES; i++) {
        tune_entry *entry = &file->entries[file->count++];
        snprintf(entry->family, sizeof entry->family, "%s", family);
        snprintf(entry->name, sizeof entry->name, "%s", result->params[i].name);
        entry->value = result->params[i].value;
    }
}

static pv_status store_results(pv_context *ctx, const pv_tune_result *results, int count)
{
    device_identity id;
    if (!context_identity(ctx, &id))
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "tune: cannot identify the context's device");
    tune_file file;
    load_file(ctx, &id, &file);
    for (int i = 0; i < count; i++)
        merge_result(&file, results[i].op, &results[i]);
    return write_file(ctx, &id, &file);
}

/* --------------------------------------------------------------- loading */

pv_status pv_tune_apply_file(pv_context *ctx, const pv_tune_file *file)
{
    for (int i = 0; i < file->count; i++) {
        pv_status status = ctx->ops->device->param_set(ctx, file->entries[i].family,
                                                       file->entries[i].name, file->entries[i].value);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

static pv_status load_into(pv_context *ctx, int *applied)
{
    device_identity id;
    tune_file file;
    *applied = 0;
    ctx->tune_cache_read = 1;
    if (!context_identity(ctx, &id) || !load_file(ctx, &id, &file))
        return PV_OK;
    pv_status status = pv_tune_apply_file(ctx, &file);
    if (status == PV_OK) {
        *applied = file.count;
        pv_log(ctx, "tune: applied %d tuned parameter(s) for %s", file.count, id.name);
    }
    return status;
}

pv_status pv_tune_reset_families(pv_context *ctx)
{
    pv_status status = PV_OK;
    for (int i = 0; pv_tune_family(i) && status == PV_OK; i++)
        status = ctx->ops->device->param_reset(ctx, pv_tune_family(i));
    return status;
}

static int autoload_disabled(void)
{
    return pv_config_is(PV_CONFIG_NO_TUNE, "1");
}

void pv_tune_autoload(pv_context *ctx)
{
    int applied;
    if (!has_params(ctx) || ctx->tune_cache_read)
        return;
    if (autoload_disabled()) {
        ctx->tune_cache_read = 1;
        pv_tune_db_note_source(ctx, "defaults");
        return;
    }
    char saved[sizeof ctx->last_error];
    memcpy(saved, ctx->last_error, sizeof saved);
    load_into(ctx, &applied); /* a failure leaves the defaults: never fatal */
    pv_tune_db_after_cache(ctx, applied); /* no cache: the tuning database */
    memcpy(ctx->last_error, saved, sizeof saved);
}

/* ------------------------------------------------------------------- API */

static pv_status check_family(pv_context *ctx, const char *what, const char *family,
                              const char *name)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", what);
    if (!family)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: family is NULL", what);
    if (!pv_tune_family_known(family))
        return pv_fail(ctx, PV_ERR_INVALID, "%s: family '%s' is not a tunable family", what, family);
    if (!name)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: name is NULL", what);
    return PV_OK;
}

static pv_status tune_unlocked_set(pv_context *ctx, const char *family, const char *name, int value)
{
    pv_status status = check_family(ctx, "pv_tune_set", family, name);
    if (status != PV_OK)
        return status;
    if (value < 0 || value > PV_TUNE_MAX_VALUE)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune_set: value %d is not in 0..%d", value,
                       PV_TUNE_MAX_VALUE);
    if (!has_params(ctx))
        return PV_OK;
    pv_tune_autoload(ctx); /* a later first call must not overwrite this value */
    return ctx->ops->device->param_set(ctx, family, name, value);
}

static pv_status tune_unlocked_get(pv_context *ctx, const char *family, const char *name, int *value)
{
    pv_status status = check_family(ctx, "pv_tune_get", family, name);
    if (status != PV_OK)
        return status;
    if (!value)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune_get: value is NULL");
    if (!has_params(ctx))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "pv_tune_get: the CPU backend has no launch parameters");
    pv_tune_autoload(ctx);
    return ctx->ops->device->param_get(ctx, family, name, value);
}

static pv_status tune_unlocked_list(pv_context *ctx, const char *family, pv_tune_param *params, int capacity,
                       int *count)
{
    pv_status status = check_family(ctx, "pv_tune_list", family, "");
    if (status != PV_OK)
        return status;
    if (!count || capacity < 0 || (capacity > 0 && !params))
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune_list: params/capacity/count are inconsistent");
    *count = 0;
    if (!has_params(ctx))
        return PV_OK;
    pv_tune_autoload(ctx);
    return ctx->ops->device->param_list(ctx, family, params, capacity, count);
}

static pv_status tune_unlocked_use_defaults(pv_context *ctx)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_tune_use_defaults: ctx is NULL");
    if (!has_params(ctx))
        return PV_OK;
    ctx->tune_cache_read = 1;
    pv_tune_db_note_source(ctx, "defaults");
    return pv_tune_reset_families(ctx);
}

static pv_status tune_unlocked_load(pv_context *ctx, int *applied)
{
    int none = 0;
    if (!applied)
        applied = &none;
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_tune_load: ctx is NULL");
    *applied = 0;
    if (!has_params(ctx))
        return PV_OK;
    pv_status status = load_into(ctx, applied);
    if (*applied > 0)
        pv_tune_db_note_source(ctx, "cache");
    return status;
}

pv_status pv_tune_check_text_call(pv_context *ctx, const char *what, const char *buffer_name,
                                  const char *buffer, size_t size)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: ctx is NULL", what);
    if (!buffer || size == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is NULL or size is 0", what, buffer_name);
    if (!has_params(ctx))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "%s: the CPU backend is not tuned", what);
    return PV_OK;
}

static pv_status tune_unlocked_cache_path(pv_context *ctx, char *path, size_t size)
{
    pv_status status = pv_tune_check_text_call(ctx, "pv_tune_cache_path", "path", path, size);
    if (status != PV_OK)
        return status;
    device_identity id;
    if (!context_identity(ctx, &id))
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "pv_tune_cache_path: cannot identify the device");
    if (!identity_path(&id, path, size, 0))
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune_cache_path: no cache directory or path too long");
    return PV_OK;
}

static pv_status check_options(pv_context *ctx, const pv_tune_options *options,
                               const pv_tune_result *results, int capacity, const int *count)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_tune: ctx is NULL");
    if (!options)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: options is NULL");
    if (!results || capacity < 1 || !count)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: results/capacity/count are missing");
    if (options->op && !pv_tune_family_known(options->op))
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: options.op '%s' is not a tunable op",
                       options->op);
    if (!(options->budget_s >= 0 && options->budget_s <= 86400))
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: options.budget_s %g is not in 0..86400",
                       options->budget_s);
    if (options->max_candidates < 0 || options->runs < 1 || options->runs > 1000)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: options.max_candidates %d / runs %d out of range",
                       options->max_candidates, options->runs);
    if (options->width < 0 || options->height < 0 || options->ndisp < 0 ||
        options->width > 8192 || options->height > 8192 || options->ndisp > 1024)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: options.width/height/ndisp %dx%d/%d out of range",
                       options->width, options->height, options->ndisp);
    if (!has_params(ctx))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED, "pv_tune: the CPU backend has nothing to tune");
    return PV_OK;
}

/* Family index's deadline within a budget ending at `end` (0: none): the
 * time left, shared among the families still to search by weight, so a
 * family that finishes early leaves its time to the later ones. */
static double family_deadline(const pv_tune_options *options, int index, double end)
{
    if (end <= 0)
        return 0.0;
    int weights = 0;
    for (int i = index; pv_tune_family(i); i++)
        if (!options->op || strcmp(options->op, pv_tune_family(i)) == 0)
            weights += pv_tune_family_weight(i);
    const double now = pv_now_ms();
    return now + (end - now) * pv_tune_family_weight(index) / (weights > 0 ? weights : 1);
}

static pv_status tune_unlocked(pv_context *ctx, const pv_tune_options *options, pv_tune_result *results,
                  int capacity, int *count)
{
    pv_status status = check_options(ctx, options, results, capacity, count);
    if (status != PV_OK)
        return status;
    /* Before a search of minutes, not after it. */
    if (options->write_cache && (status = check_writable(ctx)) != PV_OK)
        return status;
    *count = 0;
    pv_tune_autoload(ctx);
    const double end = options->budget_s > 0 ? pv_now_ms() + 1000.0 * options->budget_s : 0.0;
    /* Progress in families searched; the searches' own calls report
     * nothing (they are nested in this one). */
    int families = 0;
    for (int i = 0; pv_tune_family(i); i++)
        families += !options->op || strcmp(options->op, pv_tune_family(i)) == 0;
    pv_progress_outer_begin(ctx);
    status = pv_progress_report(ctx, "tune", 0.0, families);
    for (int i = 0; pv_tune_family(i) && status == PV_OK; i++) {
        if (options->op && strcmp(options->op, pv_tune_family(i)) != 0)
            continue;
        if (*count == capacity) {
            pv_progress_outer_end(ctx);
            return pv_fail(ctx, PV_ERR_INVALID, "pv_tune: capacity %d is too small", capacity);
        }
        memset(&results[*count], 0, sizeof results[*count]);
        const pv_tune_search_spec spec = {family_deadline(options, i, end), NULL, NULL};
        status = pv_tune_search(ctx, pv_tune_family(i), options, &spec, &results[*count]);
        if (status == PV_OK && options->progress)
            options->progress(options->progress_user, &results[*count]);
        if (status == PV_OK)
            (*count)++;
        if (status == PV_OK)
            status = pv_progress_report(ctx, "tune", *count, families);
    }
    pv_progress_outer_end(ctx);
    if (*count > 0)
        pv_tune_db_note_source(ctx, "search");
    if (status == PV_OK && options->write_cache)
        status = store_results(ctx, results, *count);
    return status;
}

static pv_status tune_unlocked_check_cache_writable(pv_context *ctx)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_tune_check_cache_writable: ctx is NULL");
    if (!has_params(ctx))
        return pv_fail(ctx, PV_ERR_UNSUPPORTED,
                       "pv_tune_check_cache_writable: the CPU backend is not tuned");
    return check_writable(ctx);
}

/* The public calls run under the context's lock: a shared context's
 * parameter store and cache state change only inside one of them.  Each
 * takes the lock, then its work (an argument of unlock_after) runs, then
 * unlock_after gives the lock back. */

static pv_status unlock_after(pv_context *ctx, pv_status status)
{
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_tune_set(pv_context *ctx, const char *family, const char *name, int value)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_set(ctx, family, name, value));
}

pv_status pv_tune_get(pv_context *ctx, const char *family, const char *name, int *value)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_get(ctx, family, name, value));
}

pv_status pv_tune_list(pv_context *ctx, const char *family, pv_tune_param *params, int capacity,
                       int *count)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_list(ctx, family, params, capacity, count));
}

pv_status pv_tune_use_defaults(pv_context *ctx)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_use_defaults(ctx));
}

pv_status pv_tune_load(pv_context *ctx, int *applied)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_load(ctx, applied));
}

pv_status pv_tune_cache_path(pv_context *ctx, char *path, size_t size)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_cache_path(ctx, path, size));
}

pv_status pv_tune(pv_context *ctx, const pv_tune_options *options, pv_tune_result *results,
                  int capacity, int *count)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked(ctx, options, results, capacity, count));
}

pv_status pv_tune_check_cache_writable(pv_context *ctx)
{
    pv_context_lock(ctx);
    return unlock_after(ctx, tune_unlocked_check_cache_writable(ctx));
}
