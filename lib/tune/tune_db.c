/* The tuning database (lib/tune/tune_db.h): choosing the embedded entry that
 * fits a device, applying it when the local tuning cache has nothing,
 * recording where a context's launch parameters came from, and exporting
 * a device's tuning cache as an entry for the database. */
#include "../core/internal.h"
#include "tune_db.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- device words */

const char *pv_tune_db_level_name(pv_tune_db_level level)
{
    switch (level) {
    case PV_TUNE_DB_DEVICE: return "device";
    case PV_TUNE_DB_ARCH: return "architecture";
    case PV_TUNE_DB_VENDOR: return "vendor";
    case PV_TUNE_DB_NONE: break;
    }
    return "none";
}

static void lower_copy(const char *from, char *to, size_t size)
{
    size_t i = 0;
    for (; from[i] && i + 1 < size; i++)
        to[i] = (char)tolower((unsigned char)from[i]);
    to[i] = '\0';
}

void pv_tune_db_vendor_key(const char *vendor, char *key, size_t size)
{
    /* One company's drivers and CPUs name it differently: "NVIDIA
     * Corporation", "Advanced Micro Devices, Inc." and PoCL's
     * "AuthenticAMD", "Intel(R) Corporation" and "GenuineIntel". */
    static const struct {
        const char *contains, *key;
    } companies[] = {{"nvidia", "nvidia"},   {"advanced micro devices", "amd"},
                     {"amd", "amd"},         {"intel", "intel"},
                     {"apple", "apple"},     {"arm", "arm"}};
    char lower[128];
    lower_copy(vendor, lower, sizeof lower);
    for (size_t i = 0; i < sizeof companies / sizeof companies[0]; i++)
        if (strstr(lower, companies[i].contains)) {
            snprintf(key, size, "%s", companies[i].key);
            return;
        }
    size_t n = 0;
    while (lower[n] && isalnum((unsigned char)lower[n]))
        n++;
    snprintf(key, size, "%.*s", (int)n, lower);
}

/* PoCL's CPU device is named "<driver>-<ISA>-<CPU model>" (e.g.
 * "pthread-skylake-avx512-AMD EPYC", "cpu-x86-64-v3-13th Gen ..."); the
 * ISA is the run of lower-case hyphen-separated words before the model,
 * whose first word has a capital letter, or is followed by a space. */
static int pocl_isa(const char *name, char *key, size_t size)
{
    static const char *const prefixes[] = {"pthread-", "cpu-minimal-", "cpu-", "basic-"};
    const char *isa = NULL;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0] && !isa; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            isa = name + strlen(prefixes[i]);
    if (!isa)
        return 0;
    size_t end = 0, word = 0;
    for (;;) {
        size_t n = strspn(isa + word, "abcdefghijklmnopqrstuvwxyz0123456789_");
        if (n == 0 || isa[word + n] != '-')
            break; /* the model's first word, or the name's end */
        end = word + n;
        word = end + 1;
    }
    if (end == 0)
        return 0;
    snprintf(key, size, "%.*s", (int)end, isa);
    return 1;
}

/* NVIDIA product names to architectures: data-centre models by their
 * code ("NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB": words split at
 * spaces and hyphens), GeForce/RTX cards by their series number. */
static const char *nvidia_architecture(const char *token, const char *previous)
{
    static const struct {
        const char *model, *arch;
    } models[] = {
        {"GH200", "hopper"},    {"H200", "hopper"},     {"H100", "hopper"},   {"H800", "hopper"},
        {"H20", "hopper"},      {"GB200", "blackwell"}, {"B200", "blackwell"}, {"B100", "blackwell"},
        {"A100", "ampere"},     {"A800", "ampere"},     {"A40", "ampere"},    {"A30", "ampere"},
        {"A16", "ampere"},      {"A10", "ampere"},      {"A2", "ampere"},     {"L40S", "ada"},
        {"L40", "ada"},         {"L20", "ada"},         {"L4", "ada"},        {"V100", "volta"},
        {"T4", "turing"},       {"P100", "pascal"},     {"P40", "pascal"},    {"P4", "pascal"},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(token, models[i].model) == 0)
            return models[i].arch;
    static const struct {
        const char *series, *arch;
    } series[] = {{"50", "blackwell"}, {"40", "ada"}, {"30", "ampere"},
                  {"20", "turing"},    {"16", "turing"}, {"10", "pascal"}};
    if (strlen(token) == 4 && strspn(token, "0123456789") == 4 &&
        (strcmp(previous, "RTX") == 0 || strcmp(previous, "GTX") == 0))
        for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
            if (strncmp(token, series[i].series, 2) == 0)
                return series[i].arch;
    return NULL;
}

static int nvidia_arch(const char *name, char *key, size_t size)
{
    char copy[128], previous[32] = "";
    snprintf(copy, sizeof copy, "%s", name);
    for (char *save = NULL, *token = strtok_r(copy, " -", &save); token;
         token = strtok_r(NULL, " -", &save)) {
        const char *arch = nvidia_architecture(token, previous);
        if (arch) {
            snprintf(key, size, "%s", arch);
            return 1;
        }
        snprintf(previous, sizeof previous, "%s", token);
    }
    return 0;
}

/* AMD's OpenCL names GPUs by their gfx target ("gfx90a:sramecc+:xnack-"). */
static int amd_gfx(const char *name, char *key, size_t size)
{
    if (strncmp(name, "gfx", 3) != 0)
        return 0;
    size_t n = strcspn(name, ": ");
    snprintf(key, size, "%.*s", (int)n, name);
    return 1;
}

void pv_tune_db_arch_key(const char *device_name, char *key, size_t size)
{
    if (size == 0)
        return;
    key[0] = '\0';
    if (!pocl_isa(device_name, key, size) && !amd_gfx(device_name, key, size))
        nvidia_arch(device_name, key, size);
}

static const char *type_word(pv_device_type type)
{
    switch (type) {
    case PV_DEVICE_GPU: return "gpu";
    case PV_DEVICE_CPU: return "cpu";
    case PV_DEVICE_ACCELERATOR: return "accelerator";
    case PV_DEVICE_OTHER: break;
    }
    return "other";
}

void pv_tune_db_describe(const pv_device_info *info, pv_tune_db_device *device)
{
    memset(device, 0, sizeof *device);
    snprintf(device->name, sizeof device->name, "%s", info->name);
    snprintf(device->vendor, sizeof device->vendor, "%s", info->vendor);
    snprintf(device->type, sizeof device->type, "%s", type_word(info->type));
    snprintf(device->driver, sizeof device->driver, "%s", info->driver_version);
    device->local_memory = info->local_memory;
    device->max_work_group = info->max_work_group_size;
}

/* ------------------------------------------------------------------ lookup */

static pv_tune_db_level fit(const pv_tune_db_header *entry, const pv_tune_db_device *device)
{
    char entry_vendor[32], device_vendor[32], device_arch[64];
    pv_tune_db_vendor_key(entry->vendor, entry_vendor, sizeof entry_vendor);
    pv_tune_db_vendor_key(device->vendor, device_vendor, sizeof device_vendor);
    if (strcmp(entry_vendor, device_vendor) != 0 || strcmp(entry->type, device->type) != 0)
        return PV_TUNE_DB_NONE;
    if (strcmp(entry->device, device->name) == 0)
        return PV_TUNE_DB_DEVICE;
    pv_tune_db_arch_key(device->name, device_arch, sizeof device_arch);
    if (entry->arch[0] && strcmp(entry->arch, device_arch) == 0)
        return PV_TUNE_DB_ARCH;
    return PV_TUNE_DB_VENDOR;
}

static int within_limits(const pv_tune_db_header *entry, const pv_tune_db_device *device)
{
    return entry->local_memory <= device->local_memory &&
           entry->max_work_group <= device->max_work_group;
}

pv_tune_db_level pv_tune_db_select(const pv_tune_db_text *texts, size_t count,
                                   const pv_tune_db_device *device, pv_tune_param_known known,
                                   void *known_user, pv_tune_db_skip_note note, void *note_user,
                                   pv_tune_db_choice *choice)
{
    pv_tune_db_level best = PV_TUNE_DB_NONE;
    pv_tune_db_choice *candidate = malloc(sizeof *candidate);
    if (!candidate)
        return PV_TUNE_DB_NONE; /* the defaults: never worse than no database */
    for (size_t i = 0; i < count; i++) {
        const char *why = "";
        if (!pv_tune_parse_db(texts[i].text, strlen(texts[i].text), known, known_user,
                              &candidate->header, &candidate->params, &why)) {
            if (note)
                note(note_user, texts[i].name, why);
            continue;
        }
        pv_tune_db_level level = fit(&candidate->header, device);
        if (level <= best)
            continue;
        if (!within_limits(&candidate->header, device)) {
            if (note)
                note(note_user, texts[i].name, "measured on a device with more local memory or "
                                               "a larger work-group limit than this one");
            continue;
        }
        candidate->level = level;
        snprintf(candidate->name, sizeof candidate->name, "%s", texts[i].name);
        *choice = *candidate;
        best = level;
    }
    free(candidate);
    return best;
}

/* --------------------------------------------------------- the context's */

void pv_tune_db_note_source(pv_context *ctx, const char *source)
{
    snprintf(ctx->tune_source, sizeof ctx->tune_source, "%s", source);
}

#ifdef PV_HAVE_OPENCL

/* ctx's device, as described when ctx was made. */
static int context_device_info(pv_context *ctx, pv_device_info *info)
{
    if (ctx->device_index < 0)
        return 0;
    *info = ctx->device;
    return 1;
}

static void log_skipped(void *user, const char *name, const char *why)
{
    pv_log(user, "tune: database entry %s skipped: %s", name, why);
}

void pv_tune_db_after_cache(pv_context *ctx, int cache_applied)
{
    pv_device_info info;
    pv_tune_db_device device;
    pv_tune_db_choice *choice = NULL;
    if (cache_applied > 0) {
        pv_tune_db_note_source(ctx, "cache");
        return;
    }
    pv_tune_db_note_source(ctx, "defaults");
    if (!context_device_info(ctx, &info) || !(choice = malloc(sizeof *choice))) {
        pv_log(ctx, "tune: the tuning database was not consulted; the defaults apply");
        free(choice);
        return;
    }
    pv_tune_db_describe(&info, &device);
    pv_tune_db_level level = pv_tune_db_select(pv_tune_db_texts, pv_tune_db_text_count, &device,
                                               pv_tune_knows_param, ctx, log_skipped, ctx, choice);
    if (level == PV_TUNE_DB_NONE)
        pv_log(ctx, "tune: no tuning cache or database entry for %s: the defaults apply", info.name);
    else if (pv_tune_apply_file(ctx, &choice->params) != PV_OK) {
        pv_tune_reset_families(ctx);
        pv_log(ctx, "tune: database entry %s could not be applied: the defaults apply",
               choice->name);
    } else {
        char source[sizeof ctx->tune_source];
        snprintf(source, sizeof source, "database: %s (%s match)", choice->name,
                 pv_tune_db_level_name(level));
        pv_tune_db_note_source(ctx, source);
        pv_log(ctx, "tune: applied %d parameter(s) for %s from the tuning %s", choice->params.count,
               info.name, source);
    }
    free(choice);
}

/* ------------------------------------------------------------------ export */

/* The cache's entries for the device described by info. */
static pv_status read_cache(pv_context *ctx, const pv_device_info *info, pv_tune_file *file)
{
    char path[4200];
    size_t size = 0;
    pv_tune_identity id;
    /* the identity as lib/tune/tune.c writes it: the driver string's start */
    snprintf(id.name, sizeof id.name, "%s", info->name);
    snprintf(id.driver, sizeof id.driver, "%.*s", (int)sizeof id.driver - 1, info->driver_version);
    pv_status status = pv_tune_cache_path(ctx, path, sizeof path);
    if (status != PV_OK)
        return status;
    char *text = pv_tune_read_text(path, &size);
    if (!text)
        return pv_fail(ctx, PV_ERR_IO, "pv_tune_export: no tuning cache %s for %s (run parvis tune)",
                       path, info->name);
    const char *why = "";
    int ok = pv_tune_parse_file(text, size, &id, pv_tune_knows_param, ctx, file, &why);
    free(text);
    if (!ok || file->count == 0)
        return pv_fail(ctx, PV_ERR_IO, "pv_tune_export: the tuning cache %s is unusable: %s", path,
                       ok ? "it holds no parameters" : why);
    return PV_OK;
}

static void header_for(const pv_device_info *info, pv_tune_db_header *header)
{
    memset(header, 0, sizeof *header);
    snprintf(header->vendor, sizeof header->vendor, "%s", info->vendor);
    snprintf(header->type, sizeof header->type, "%s", type_word(info->type));
    pv_tune_db_arch_key(info->name, header->arch, sizeof header->arch);
    snprintf(header->device, sizeof header->device, "%s", info->name);
    snprintf(header->driver, sizeof header->driver, "%s", info->driver_version);
    snprintf(header->parvis, sizeof header->parvis, "%s", PV_VERSION_STRING);
    header->local_memory = info->local_memory;
    header->max_work_group = info->max_work_group_size;
}

static pv_status export_unlocked(pv_context *ctx, char *text, size_t size)
{
    pv_device_info info;
    pv_tune_db_header header;
    size_t used = 0;
    if (!context_device_info(ctx, &info))
        return pv_fail(ctx, PV_ERR_NO_DEVICE, "pv_tune_export: cannot identify the device");
    pv_tune_file *file = malloc(sizeof *file);
    char *entry = malloc(PV_TUNE_MAX_FILE);
    pv_status status = file && entry ? read_cache(ctx, &info, file)
                                     : pv_fail(ctx, PV_ERR_NOMEM, "pv_tune_export: out of memory");
    if (status == PV_OK) {
        header_for(&info, &header);
        if (!pv_tune_db_format(&header, file, entry, PV_TUNE_MAX_FILE, &used) || used >= size)
            status = pv_fail(ctx, PV_ERR_INVALID, "pv_tune_export: the entry needs %zu bytes, "
                                                  "text has %zu", used + 1, size);
        else
            memcpy(text, entry, used + 1);
    }
    free(file);
    free(entry);
    return status;
}

#else /* no OpenCL: no device, nothing tuned */

void pv_tune_db_after_cache(pv_context *ctx, int cache_applied)
{
    (void)cache_applied;
    pv_tune_db_note_source(ctx, "defaults");
}

static pv_status export_unlocked(pv_context *ctx, char *text, size_t size)
{
    (void)text;
    (void)size;
    return pv_fail(ctx, PV_ERR_UNSUPPORTED, "pv_tune_export: built without OpenCL");
}

#endif

/* --------------------------------------------------------------------- API */

static int has_launch_params(const pv_context *ctx)
{
    return ctx->backend == PV_BACKEND_OPENCL;
}

pv_status pv_tune_source(pv_context *ctx, char *source, size_t size)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_tune_source: ctx is NULL");
    if (!source || size == 0)
        return pv_fail(ctx, PV_ERR_INVALID, "pv_tune_source: source is NULL or size is 0");
    pv_context_lock(ctx);
    const char *text = "none";
    if (has_launch_params(ctx)) {
        pv_tune_autoload(ctx); /* what the next tunable call would run with */
        text = ctx->tune_source[0] ? ctx->tune_source : "defaults";
    }
    pv_status status = PV_OK;
    if (strlen(text) >= size)
        status = pv_fail(ctx, PV_ERR_INVALID, "pv_tune_source: %zu bytes are too few for '%s'",
                         size, text);
    else
        memcpy(source, text, strlen(text) + 1);
    pv_context_unlock(ctx);
    return status;
}

pv_status pv_tune_export(pv_context *ctx, char *text, size_t size)
{
    pv_status status = pv_tune_check_text_call(ctx, "pv_tune_export", "text", text, size);
    if (status != PV_OK)
        return status;
    pv_context_lock(ctx);
    status = export_unlocked(ctx, text, size);
    pv_context_unlock(ctx);
    return status;
}
