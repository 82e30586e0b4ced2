/* Tests of the tuning database (lib/tune/tune_db.h, docs/tuning.md).
 *
 *   - the words a device is matched by: vendor keys and architecture keys
 *     of real OpenCL device names, against known answers;
 *   - the entry format: what pv_tune_db_format writes, pv_tune_parse_db
 *     reads back field for field; every truncation and a changed byte are
 *     refused;
 *   - the lookup order with test entries: the same device name wins over
 *     the same architecture, which wins over the same vendor, which wins
 *     over nothing (the defaults); other vendors, other device types and
 *     entries measured on a device with larger limits never apply;
 *     corrupt and foreign entries (garbage, a cache file, a bad checksum,
 *     an unknown parameter, a value out of range) are skipped and noted;
 *   - on the OpenCL device (PoCL here): every embedded entry names only
 *     parameters the library has; a fresh context with no local cache
 *     runs with the entry the lookup picks for its device (values read
 *     back with pv_tune_get, the source with pv_tune_source), and where
 *     the database holds this very device, that entry at "device" level;
 *     a valid local cache wins over the database, a corrupt one does not;
 *     PARVIS_NO_TUNE=1 and pv_tune_use_defaults give the defaults;
 *     pv_tune_export turns the cache into an entry that the lookup takes
 *     for this device;
 *   - a concurrent first use: threads creating contexts at once (each
 *     reads the cache and the database as it is made), and threads
 *     reading one shared context at once, all see one source and one set
 *     of values, the lookup's;
 *   - bad arguments of pv_tune_source and pv_tune_export.
 *
 * OpenCL parts are skipped without an OpenCL device or with
 * PARVIS_TEST_SKIP_OPENCL=1. */
#include "test_tune_util.h"

#include "tune_db.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[4096];

static int group_setup(void **state)
{
    (void)state;
    tt_use_scratch_cache(g_dir, sizeof g_dir, "tune_db");
    unsetenv("PARVIS_NO_TUNE");
    return 0;
}

static pv_context *new_opencl_or_skip(void)
{
    if (tu_skip_opencl() || !tu_have_opencl())
        skip();
    pv_context *ctx = tu_context(PV_BACKEND_OPENCL);
    if (!ctx)
        skip();
    if (pv_context_backend(ctx) != PV_BACKEND_OPENCL) {
        pv_context_destroy(ctx);
        skip();
    }
    return ctx;
}

/* ------------------------------------------------------------- test entries */

/* A test device: the words the lookup matches on. */
static pv_tune_db_device test_device(const char *name, const char *vendor, const char *type)
{
    pv_tune_db_device device;
    memset(&device, 0, sizeof device);
    snprintf(device.name, sizeof device.name, "%s", name);
    snprintf(device.vendor, sizeof device.vendor, "%s", vendor);
    snprintf(device.type, sizeof device.type, "%s", type);
    snprintf(device.driver, sizeof device.driver, "%s", "1.0");
    device.local_memory = 48 * 1024;
    device.max_work_group = 1024;
    return device;
}

/* Any parameter of the two tuned families whose name starts with the
 * family's prefix (the lookup's own logic, without a device). */
static int test_known(void *user, const char *family, const char *name)
{
    (void)user;
    return (strcmp(family, "bp") == 0 && strncmp(name, "BP_", 3) == 0) ||
           (strcmp(family, "sad") == 0 && strncmp(name, "SAD_", 4) == 0);
}

typedef struct test_entry {
    char name[32];
    char text[2048];
} test_entry;

/* An entry for a device like `device`, measured with limits `local` and
 * `group`, whose one parameter BP_WG_Y is `marker` (so that the test can
 * tell which entry the lookup chose). */
static void make_entry(test_entry *entry, const char *name, const char *device, const char *vendor,
                       const char *type, const char *arch, uint64_t local, int group, int marker)
{
    pv_tune_db_header header;
    memset(&header, 0, sizeof header);
    snprintf(header.vendor, sizeof header.vendor, "%s", vendor);
    snprintf(header.type, sizeof header.type, "%s", type);
    snprintf(header.arch, sizeof header.arch, "%s", arch);
    snprintf(header.device, sizeof header.device, "%s", device);
    snprintf(header.driver, sizeof header.driver, "%s", "535.1");
    snprintf(header.parvis, sizeof header.parvis, "%s", pv_version());
    header.local_memory = local;
    header.max_work_group = group;
    pv_tune_file file = {.count = 2};
    snprintf(file.entries[0].family, sizeof file.entries[0].family, "bp");
    snprintf(file.entries[0].name, sizeof file.entries[0].name, "BP_WG_Y");
    file.entries[0].value = marker;
    snprintf(file.entries[1].family, sizeof file.entries[1].family, "sad");
    snprintf(file.entries[1].name, sizeof file.entries[1].name, "SAD_WG_X");
    file.entries[1].value = 16;
    size_t used = 0;
    snprintf(entry->name, sizeof entry->name, "%s", name);
    assert_true(pv_tune_db_format(&header, &file, entry->text, sizeof entry->text, &used));
    assert_int_equal(used, strlen(entry->text));
}

typedef struct notes {
    int count;
    char last[64];
} notes;

static void count_note(void *user, const char *name, const char *why)
{
    notes *n = user;
    assert_non_null(why);
    assert_true(why[0] != '\0');
    n->count++;
    snprintf(n->last, sizeof n->last, "%s", name);
}

/* The lookup over entries[0..count): the chosen level, and the marker of
 * the chosen entry in *marker (-1 for none). */
static pv_tune_db_level lookup(const test_entry *entries, size_t count,
                               const pv_tune_db_device *device, int *marker, notes *skipped)
{
    pv_tune_db_text texts[16];
    assert_true(count <= 16);
    for (size_t i = 0; i < count; i++) {
        texts[i].name = entries[i].name;
        texts[i].text = entries[i].text;
    }
    pv_tune_db_choice choice;
    memset(&choice, 0, sizeof choice);
    notes ignored = {0, ""};
    pv_tune_db_level level = pv_tune_db_select(texts, count, device, test_known, NULL, count_note,
                                               skipped ? skipped : &ignored, &choice);
    *marker = -1;
    if (level != PV_TUNE_DB_NONE) {
        assert_int_equal(choice.level, level);
        assert_int_equal(choice.params.count, 2);
        *marker = choice.params.entries[0].value;
    }
    return level;
}

/* ------------------------------------------------------------------- keys */

/* Vendor keys (V) and architecture keys (A), each case with its
 * expected key. */
static void test_keys(void **state)
{
    (void)state;
    static const struct {
        char kind;
        const char *from, *key;
    } cases[] = {
        {'V', "NVIDIA Corporation", "nvidia"},
        {'V', "Advanced Micro Devices, Inc.", "amd"},
        {'V', "AuthenticAMD", "amd"},
        {'V', "GenuineIntel", "intel"},
        {'V', "Intel(R) Corporation", "intel"},
        {'V', "Apple", "apple"},
        {'V', "Qualcomm Technologies, Inc", "qualcomm"},
        {'V', "", ""},
        {'A', "pthread-skylake-avx512-AMD EPYC", "skylake-avx512"},
        {'A', "cpu-x86-64-v3-13th Gen Intel(R) Core(TM) i7-13700", "x86-64-v3"},
        {'A', "cpu-znver3-AMD Ryzen 9 5950X 16-Core Processor", "znver3"},
        {'A', "pthread-haswell-Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", "haswell"},
        {'A', "NVIDIA H100 80GB HBM3", "hopper"},
        {'A', "NVIDIA H100 PCIe", "hopper"},
        {'A', "NVIDIA H200", "hopper"},
        {'A', "NVIDIA GH200 480GB", "hopper"},
        {'A', "NVIDIA A100-SXM4-80GB", "ampere"},
        {'A', "NVIDIA A100 80GB PCIe", "ampere"},
        {'A', "NVIDIA GeForce RTX 4090", "ada"},
        {'A', "NVIDIA GeForce RTX 3060 Ti", "ampere"},
        {'A', "NVIDIA GeForce GTX 1080", "pascal"},
        {'A', "Tesla V100-SXM2-16GB", "volta"},
        {'A', "Tesla T4", "turing"},
        {'A', "gfx90a:sramecc+:xnack-", "gfx90a"},
        {'A', "Intel(R) UHD Graphics 770", ""},
        {'A', "", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[64];
        if (cases[i].kind == 'V')
            pv_tune_db_vendor_key(cases[i].from, key, sizeof key);
        else
            pv_tune_db_arch_key(cases[i].from, key, sizeof key);
        assert_string_equal(key, cases[i].key);
    }
}

/* ----------------------------------------------------------------- format */

static void test_format_round_trip(void **state)
{
    (void)state;
    test_entry entry;
    make_entry(&entry, "e", "NVIDIA H100 PCIe", "NVIDIA Corporation", "gpu", "hopper", 49152, 1024,
               4);
    pv_tune_db_header header;
    pv_tune_file file;
    const char *why = NULL;
    size_t size = strlen(entry.text);
    assert_true(pv_tune_parse_db(entry.text, size, test_known, NULL, &header, &file, &why));
    assert_string_equal(header.vendor, "NVIDIA Corporation");
    assert_string_equal(header.type, "gpu");
    assert_string_equal(header.arch, "hopper");
    assert_string_equal(header.device, "NVIDIA H100 PCIe");
    assert_string_equal(header.driver, "535.1");
    assert_string_equal(header.parvis, pv_version());
    assert_int_equal(header.local_memory, 49152);
    assert_int_equal(header.max_work_group, 1024);
    assert_int_equal(file.count, 2);
    assert_string_equal(file.entries[0].family, "bp");
    assert_string_equal(file.entries[0].name, "BP_WG_Y");
    assert_int_equal(file.entries[0].value, 4);

    for (size_t cut = 0; cut < size; cut++) {
        why = NULL;
        assert_false(pv_tune_parse_db(entry.text, cut, test_known, NULL, &header, &file, &why));
        assert_non_null(why);
    }
    /* one byte changed after the checksum was made: BP_WG_Y 4 -> 5 */
    char *value = strstr(entry.text, "BP_WG_Y 4");
    assert_non_null(value);
    value[8] = '5';
    assert_false(pv_tune_parse_db(entry.text, size, test_known, NULL, &header, &file, &why));
    /* an empty architecture is allowed, a missing header line is not */
    make_entry(&entry, "e", "Some GPU", "Vendor X", "gpu", "", 1024, 64, 1);
    assert_true(pv_tune_parse_db(entry.text, strlen(entry.text), test_known, NULL, &header, &file,
                                 &why));
    assert_string_equal(header.arch, "");
    /* the text is too small for the entry: refused */
    size_t used = 0;
    char small[64];
    assert_false(pv_tune_db_format(&header, &file, small, sizeof small, &used));
}

/* ----------------------------------------------------------- lookup order */

static void test_fallback_order(void **state)
{
    (void)state;
    test_entry entries[3];
    make_entry(&entries[0], "nvidia-a100", "NVIDIA A100 80GB PCIe", "NVIDIA Corporation", "gpu",
               "ampere", 32768, 1024, 1);
    make_entry(&entries[1], "nvidia-h100-pcie", "NVIDIA H100 PCIe", "NVIDIA Corporation", "gpu",
               "hopper", 32768, 1024, 2);
    make_entry(&entries[2], "nvidia-h200", "NVIDIA H200", "NVIDIA Corporation", "gpu", "hopper",
               32768, 1024, 3);
    pv_tune_db_device h200 = test_device("NVIDIA H200", "NVIDIA Corporation", "gpu");
    int marker;

    /* all three: the device itself; each one removed, the next level */
    assert_int_equal(lookup(entries, 3, &h200, &marker, NULL), PV_TUNE_DB_DEVICE);
    assert_int_equal(marker, 3);
    assert_int_equal(lookup(entries, 2, &h200, &marker, NULL), PV_TUNE_DB_ARCH);
    assert_int_equal(marker, 2);
    assert_int_equal(lookup(entries, 1, &h200, &marker, NULL), PV_TUNE_DB_VENDOR);
    assert_int_equal(marker, 1);
    assert_int_equal(lookup(entries, 0, &h200, &marker, NULL), PV_TUNE_DB_NONE);
    assert_int_equal(marker, -1);

    /* order in the list does not beat the level: the device entry first */
    test_entry reversed[3] = {entries[2], entries[1], entries[0]};
    assert_int_equal(lookup(reversed, 3, &h200, &marker, NULL), PV_TUNE_DB_DEVICE);
    assert_int_equal(marker, 3);
    /* the same architecture under another name (the H100 SXM) */
    pv_tune_db_device h100 = test_device("NVIDIA H100 80GB HBM3", "NVIDIA Corporation", "gpu");
    assert_int_equal(lookup(entries, 3, &h100, &marker, NULL), PV_TUNE_DB_ARCH);
    assert_int_equal(marker, 2); /* the first of the two hopper entries */
    /* no architecture in common: the first entry of the vendor */
    pv_tune_db_device l4 = test_device("NVIDIA L4", "NVIDIA Corporation", "gpu");
    assert_int_equal(lookup(reversed, 3, &l4, &marker, NULL), PV_TUNE_DB_VENDOR);
    assert_int_equal(marker, 3);

    /* another vendor, or the same vendor's CPU, is never matched */
    pv_tune_db_device amd = test_device("NVIDIA H200", "Advanced Micro Devices, Inc.", "gpu");
    assert_int_equal(lookup(entries, 3, &amd, &marker, NULL), PV_TUNE_DB_NONE);
    pv_tune_db_device cpu = test_device("NVIDIA H200", "NVIDIA Corporation", "cpu");
    assert_int_equal(lookup(entries, 3, &cpu, &marker, NULL), PV_TUNE_DB_NONE);
}

/* An entry measured on a device with more local memory or a larger
 * work-group limit is not applied: the next fitting one is. */
static void test_limits(void **state)
{
    (void)state;
    test_entry entries[2];
    make_entry(&entries[0], "big", "NVIDIA H200", "NVIDIA Corporation", "gpu", "hopper",
               228 * 1024, 1024, 7);
    make_entry(&entries[1], "small", "NVIDIA A100 80GB PCIe", "NVIDIA Corporation", "gpu",
               "ampere", 16 * 1024, 256, 8);
    pv_tune_db_device h200 = test_device("NVIDIA H200", "NVIDIA Corporation", "gpu");
    int marker;
    notes skipped = {0, ""};
    assert_int_equal(lookup(entries, 2, &h200, &marker, &skipped), PV_TUNE_DB_VENDOR);
    assert_int_equal(marker, 8);
    assert_int_equal(skipped.count, 1);
    assert_string_equal(skipped.last, "big");
    h200.local_memory = 228 * 1024;
    assert_int_equal(lookup(entries, 2, &h200, &marker, NULL), PV_TUNE_DB_DEVICE);
    assert_int_equal(marker, 7);
    h200.max_work_group = 128;
    assert_int_equal(lookup(entries, 2, &h200, &marker, NULL), PV_TUNE_DB_NONE);
}

/* Corrupt and foreign entries are skipped, each with a note, and do not
 * hide a valid entry behind them. */
static void test_corrupt_and_foreign_entries(void **state)
{
    (void)state;
    enum { COUNT = 9 };
    test_entry entries[COUNT];
    const char *const device = "NVIDIA H200", *const vendor = "NVIDIA Corporation";
    /* 0: garbage */
    snprintf(entries[0].name, sizeof entries[0].name, "garbage");
    snprintf(entries[0].text, sizeof entries[0].text, "\x7f" "ELF\n\x01\x02 not an entry\n");
    /* 1: a local cache file pasted as it is (the cache's own header) */
    snprintf(entries[1].name, sizeof entries[1].name, "cache-file");
    snprintf(entries[1].text, sizeof entries[1].text,
             "parvis-tune 1\ndevice %s\ndriver 535.1\nparvis %s\nparam bp BP_WG_Y 9\n"
             "end 0000000000000000\n", device, pv_version());
    /* 2: a value changed after the checksum */
    make_entry(&entries[2], "edited", device, vendor, "gpu", "hopper", 1024, 64, 4);
    char *value = strstr(entries[2].text, "BP_WG_Y 4");
    assert_non_null(value);
    value[8] = '9';
    /* 3: a parameter this library does not have */
    make_entry(&entries[3], "unknown-param", device, vendor, "gpu", "hopper", 1024, 64, 4);
    value = strstr(entries[3].text, "SAD_WG_X");
    assert_non_null(value);
    memcpy(value, "XYZ_WG_X", 8);
    /* 4: a family this library does not have (a later parvis's) */
    make_entry(&entries[4], "unknown-family", device, vendor, "gpu", "hopper", 1024, 64, 4);
    value = strstr(entries[4].text, "param sad");
    assert_non_null(value);
    memcpy(value, "param zzz", 9);
    /* 5: a value out of range, 6: a device type no OpenCL device has,
     * 7: truncated before its end line */
    make_entry(&entries[5], "negative", device, vendor, "gpu", "hopper", 1024, 64, 4);
    value = strstr(entries[5].text, "BP_WG_Y 4");
    assert_non_null(value);
    value[8] = '-';
    make_entry(&entries[6], "bad-type", device, vendor, "fpga", "hopper", 1024, 64, 4);
    make_entry(&entries[7], "truncated", device, vendor, "gpu", "hopper", 1024, 64, 4);
    *strstr(entries[7].text, "end ") = '\0';
    /* 8: the one valid entry, at vendor level only */
    make_entry(&entries[8], "valid", "NVIDIA L4", vendor, "gpu", "ada", 1024, 64, 6);

    /* The checksums of 3, 4 and 5 no longer match either; so that the
     * entry checks behind the checksum are what refuses them, they are
     * signed again. */
    for (int i = 3; i <= 5; i++) {
        char *end = strstr(entries[i].text, "end ");
        size_t body = (size_t)(end - entries[i].text);
        snprintf(end, sizeof entries[i].text - body, "end %016llx\n",
                 (unsigned long long)pv_tune_fnv1a(PV_TUNE_FNV_START, entries[i].text, body));
    }
    pv_tune_db_device h200 = test_device(device, vendor, "gpu");
    int marker;
    notes skipped = {0, ""};
    assert_int_equal(lookup(entries, COUNT, &h200, &marker, &skipped), PV_TUNE_DB_VENDOR);
    assert_int_equal(marker, 6);
    assert_int_equal(skipped.count, COUNT - 1);
    /* with the valid one gone, nothing */
    assert_int_equal(lookup(entries, COUNT - 1, &h200, &marker, NULL), PV_TUNE_DB_NONE);
}

/* ------------------------------------------------------- on the device */

static void device_info(pv_context *ctx, pv_device_info *info)
{
    pv_device_info devices[16];
    int count = 0;
    assert_int_equal(pv_device_list(devices, 16, &count), PV_OK);
    const char *name = pv_context_device_name(ctx);
    for (int i = 0; i < count && i < 16; i++)
        if (strcmp(devices[i].name, name) == 0) {
            *info = devices[i];
            return;
        }
    fail_msg("the context's device %s is not listed", name);
}

/* Whether the context has the parameter (pv_tune_get knows it). */
static int context_known(void *user, const char *family, const char *name)
{
    int value;
    return pv_tune_get(user, family, name, &value) == PV_OK;
}

static int param_value(pv_context *ctx, const char *family, const char *name)
{
    int value = -1;
    assert_int_equal(pv_tune_get(ctx, family, name, &value), PV_OK);
    return value;
}

/* The values of every bp and sad parameter, in pv_tune_list's order. */
typedef struct value_set {
    pv_tune_param bp[PV_TUNE_MAX_PARAMS], sad[PV_TUNE_MAX_PARAMS];
    int bp_count, sad_count;
    char source[128];
} value_set;

static pv_status read_values(pv_context *ctx, value_set *values)
{
    memset(values, 0, sizeof *values);
    pv_status status = pv_tune_source(ctx, values->source, sizeof values->source);
    if (status == PV_OK)
        status = pv_tune_list(ctx, "bp", values->bp, PV_TUNE_MAX_PARAMS, &values->bp_count);
    if (status == PV_OK)
        status = pv_tune_list(ctx, "sad", values->sad, PV_TUNE_MAX_PARAMS, &values->sad_count);
    return status;
}

/* The embedded entry the lookup takes for ctx's device. */
static pv_tune_db_level expected_choice(pv_context *ctx, pv_tune_db_choice *choice)
{
    pv_device_info info;
    pv_tune_db_device device;
    device_info(ctx, &info);
    pv_tune_db_describe(&info, &device);
    return pv_tune_db_select(pv_tune_db_texts, pv_tune_db_text_count, &device, context_known, ctx,
                             NULL, NULL, choice);
}

static void remove_cache(pv_context *ctx)
{
    char path[4096];
    assert_int_equal(pv_tune_cache_path(ctx, path, sizeof path), PV_OK);
    remove(path);
}

static void test_embedded_entries_are_valid(void **state)
{
    (void)state;
    pv_context *ctx = new_opencl_or_skip();
    for (size_t i = 0; i < pv_tune_db_text_count; i++) {
        pv_tune_db_header header;
        pv_tune_file file;
        const char *why = "";
        const char *text = pv_tune_db_texts[i].text;
        if (!pv_tune_parse_db(text, strlen(text), context_known, ctx, &header, &file, &why))
            fail_msg("database entry %s: %s", pv_tune_db_texts[i].name, why);
        assert_true(file.count > 0);
        char arch[64];
        pv_tune_db_arch_key(header.device, arch, sizeof arch);
        assert_string_equal(arch, header.arch); /* the key the lookup derives */
        if (i > 0)
            assert_true(strcmp(pv_tune_db_texts[i - 1].name, pv_tune_db_texts[i].name) < 0);
    }
    pv_context_destroy(ctx);
}

/* A fresh context with no local cache runs with the database's entry. */
static void test_database_applied_without_cache(void **state)
{
    (void)state;
    pv_context *probe = new_opencl_or_skip();
    remove_cache(probe);
    pv_tune_db_choice choice;
    pv_tune_db_level level = expected_choice(probe, &choice);
    pv_device_info info;
    device_info(probe, &info);
    pv_context_destroy(probe);

    pv_context *ctx = new_opencl_or_skip();
    char source[128], expected[128];
    assert_int_equal(pv_tune_source(ctx, source, sizeof source), PV_OK);
    if (level == PV_TUNE_DB_NONE) {
        assert_string_equal(source, "defaults");
    } else {
        snprintf(expected, sizeof expected, "database: %s (%s match)", choice.name,
                 pv_tune_db_level_name(level));
        assert_string_equal(source, expected);
        for (int i = 0; i < choice.params.count; i++)
            assert_int_equal(param_value(ctx, choice.params.entries[i].family,
                                         choice.params.entries[i].name),
                             choice.params.entries[i].value);
    }
    /* where the database holds this very device, it is that entry */
    for (size_t i = 0; i < pv_tune_db_text_count; i++) {
        char line[160];
        snprintf(line, sizeof line, "\ndevice %s\n", info.name);
        if (strstr(pv_tune_db_texts[i].text, line)) {
            snprintf(expected, sizeof expected, "database: %s (device match)",
                     pv_tune_db_texts[i].name);
            assert_string_equal(source, expected);
        }
    }
    pv_context_destroy(ctx);
}

/* A cache file for ctx's device (valid checksum) holding file's entries. */
static void write_cache_entries(pv_context *ctx, const pv_tune_file *file)
{
    pv_device_info info;
    device_info(ctx, &info);
    char path[4096], text[8192];
    assert_int_equal(pv_tune_cache_path(ctx, path, sizeof path), PV_OK);
    int n = snprintf(text, sizeof text, "parvis-tune 1\ndevice %s\ndriver %.63s\nparvis %s\n",
                     info.name, info.driver_version, pv_version());
    for (int i = 0; i < file->count && n > 0 && (size_t)n < sizeof text; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "param %s %s %d\n",
                      file->entries[i].family, file->entries[i].name, file->entries[i].value);
    assert_true(n > 0 && (size_t)n < sizeof text - 32);
    snprintf(text + n, sizeof text - (size_t)n, "end %016llx\n",
             (unsigned long long)pv_tune_fnv1a(PV_TUNE_FNV_START, text, (size_t)n));
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_true(fputs(text, out) >= 0);
    assert_int_equal(fclose(out), 0);
}

/* A cache file for ctx's device holding the two values. */
static void write_cache(pv_context *ctx, int bp_wg_y, int sad_wg_x)
{
    pv_tune_file file = {.count = 2};
    file.entries[0] = (pv_tune_entry){"bp", "BP_WG_Y", bp_wg_y};
    file.entries[1] = (pv_tune_entry){"sad", "SAD_WG_X", sad_wg_x};
    write_cache_entries(ctx, &file);
}

/* The values of the test cache. */
enum { CACHE_BP_WG_Y = 2, CACHE_SAD_WG_X = 64 };

static void test_local_cache_wins(void **state)
{
    (void)state;
    pv_context *probe = new_opencl_or_skip();
    write_cache(probe, CACHE_BP_WG_Y, CACHE_SAD_WG_X);
    pv_context_destroy(probe);

    pv_context *ctx = new_opencl_or_skip();
    char source[128];
    assert_int_equal(pv_tune_source(ctx, source, sizeof source), PV_OK);
    assert_string_equal(source, "cache");
    assert_int_equal(param_value(ctx, "bp", "BP_WG_Y"), CACHE_BP_WG_Y);
    assert_int_equal(param_value(ctx, "sad", "SAD_WG_X"), CACHE_SAD_WG_X);
    pv_context_destroy(ctx);

    /* a corrupt cache (one value changed) does not win over the database;
     * a context reads it when it is made */
    char path[4096];
    probe = new_opencl_or_skip();
    assert_int_equal(pv_tune_cache_path(probe, path, sizeof path), PV_OK);
    pv_context_destroy(probe);
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    char text[2048];
    size_t size = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[size] = '\0';
    char *value = strstr(text, "BP_WG_Y 2");
    assert_non_null(value);
    value[8] = '4';
    file = fopen(path, "wb");
    assert_non_null(file);
    assert_true(fputs(text, file) >= 0);
    assert_int_equal(fclose(file), 0);
    ctx = new_opencl_or_skip();
    assert_int_equal(pv_tune_source(ctx, source, sizeof source), PV_OK);
    assert_true(strcmp(source, "cache") != 0);
    assert_true(strncmp(source, "database: ", 10) == 0 || strcmp(source, "defaults") == 0);
    pv_context_destroy(ctx);
    remove(path);
}

static void test_defaults_when_asked(void **state)
{
    (void)state;
    pv_context *reference = new_opencl_or_skip();
    remove_cache(reference);
    assert_int_equal(pv_tune_use_defaults(reference), PV_OK);
    value_set defaults, values;
    assert_int_equal(read_values(reference, &defaults), PV_OK);
    assert_string_equal(defaults.source, "defaults");
    pv_context_destroy(reference);

    setenv("PARVIS_NO_TUNE", "1", 1);
    pv_context *ctx = new_opencl_or_skip();
    pv_status status = read_values(ctx, &values);
    unsetenv("PARVIS_NO_TUNE");
    assert_int_equal(status, PV_OK);
    assert_string_equal(values.source, "defaults");
    assert_memory_equal(values.bp, defaults.bp, sizeof values.bp);
    assert_memory_equal(values.sad, defaults.sad, sizeof values.sad);
    pv_context_destroy(ctx);

    /* the CPU backend has no launch parameters */
    pv_context *cpu = tu_context(PV_BACKEND_CPU);
    assert_non_null(cpu);
    char source[16];
    assert_int_equal(pv_tune_source(cpu, source, sizeof source), PV_OK);
    assert_string_equal(source, "none");
    char text[64] = "untouched";
    assert_int_equal(pv_tune_export(cpu, text, sizeof text), PV_ERR_UNSUPPORTED);
    assert_string_equal(text, "untouched");
    pv_context_destroy(cpu);
}

/* The exported entry is one the lookup takes for this device, with the
 * cache's values. */
static void test_export(void **state)
{
    (void)state;
    pv_context *ctx = new_opencl_or_skip();
    remove_cache(ctx);
    char text[8192] = "untouched";
    assert_int_equal(pv_tune_export(ctx, text, sizeof text), PV_ERR_IO); /* no cache yet */
    assert_string_equal(text, "untouched");
    write_cache(ctx, CACHE_BP_WG_Y, CACHE_SAD_WG_X);
    assert_int_equal(pv_tune_export(ctx, text, 32), PV_ERR_INVALID); /* too small */
    assert_string_equal(text, "untouched");
    assert_int_equal(pv_tune_export(ctx, text, sizeof text), PV_OK);

    pv_device_info info;
    pv_tune_db_device device;
    device_info(ctx, &info);
    pv_tune_db_describe(&info, &device);
    pv_tune_db_text entry = {"exported", text};
    pv_tune_db_choice choice;
    assert_int_equal(pv_tune_db_select(&entry, 1, &device, context_known, ctx, NULL, NULL, &choice),
                     PV_TUNE_DB_DEVICE);
    assert_string_equal(choice.header.device, info.name);
    assert_string_equal(choice.header.driver, info.driver_version);
    assert_string_equal(choice.header.parvis, pv_version());
    assert_int_equal(choice.params.count, 2);
    assert_string_equal(choice.params.entries[0].name, "BP_WG_Y");
    assert_int_equal(choice.params.entries[0].value, CACHE_BP_WG_Y);
    assert_string_equal(choice.params.entries[1].name, "SAD_WG_X");
    assert_int_equal(choice.params.entries[1].value, CACHE_SAD_WG_X);
    remove_cache(ctx);
    pv_context_destroy(ctx);
}

/* A cache holding every parameter of every tunable family (each value
 * moved off its default) is exported as one entry, and that entry, taken
 * by the lookup and applied to a fresh context, gives it every value. */
static void test_export_every_family(void **state)
{
    (void)state;
    pv_context *ctx = new_opencl_or_skip();
    remove_cache(ctx);
    pv_tune_file *written = calloc(1, sizeof *written);
    assert_non_null(written);
    int families = 0;
    for (int f = 0; pv_tune_family_name(f); f++, families++) {
        pv_tune_param params[PV_TUNE_MAX_PARAMS];
        int count = 0;
        assert_int_equal(pv_tune_list(ctx, pv_tune_family_name(f), params, PV_TUNE_MAX_PARAMS,
                                      &count), PV_OK);
        assert_true(count >= 1);
        for (int i = 0; i < count; i++) {
            assert_true(written->count < PV_TUNE_MAX_ENTRIES);
            pv_tune_entry *e = &written->entries[written->count++];
            snprintf(e->family, sizeof e->family, "%.31s", pv_tune_family_name(f));
            snprintf(e->name, sizeof e->name, "%.47s", params[i].name);
            e->value = params[i].value + 1 + written->count;
        }
    }
    assert_int_equal(families, 9);
    write_cache_entries(ctx, written);
    char *text = malloc(16384);
    assert_non_null(text);
    assert_int_equal(pv_tune_export(ctx, text, 16384), PV_OK);
    for (int f = 0; pv_tune_family_name(f); f++) { /* every family in the text */
        char word[64];
        snprintf(word, sizeof word, "param %s ", pv_tune_family_name(f));
        assert_non_null(strstr(text, word));
    }

    pv_device_info info;
    pv_tune_db_device device;
    device_info(ctx, &info);
    pv_tune_db_describe(&info, &device);
    pv_tune_db_text entry = {"exported", text};
    pv_tune_db_choice *choice = malloc(sizeof *choice);
    assert_non_null(choice);
    assert_int_equal(pv_tune_db_select(&entry, 1, &device, context_known, ctx, NULL, NULL, choice),
                     PV_TUNE_DB_DEVICE);
    assert_int_equal(choice->params.count, written->count);
    remove_cache(ctx);
    pv_context *fresh = new_opencl_or_skip();
    assert_int_equal(pv_tune_use_defaults(fresh), PV_OK);
    assert_int_equal(pv_tune_apply_file(fresh, &choice->params), PV_OK);
    for (int i = 0; i < written->count; i++)
        assert_int_equal(param_value(fresh, written->entries[i].family, written->entries[i].name),
                         written->entries[i].value);
    pv_context_destroy(fresh);
    pv_context_destroy(ctx);
    free(choice);
    free(text);
    free(written);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    char text[16] = "untouched";
    assert_int_equal(pv_tune_source(NULL, text, sizeof text), PV_ERR_INVALID);
    assert_int_equal(pv_tune_export(NULL, text, sizeof text), PV_ERR_INVALID);
    pv_context *cpu = tu_context(PV_BACKEND_CPU);
    assert_non_null(cpu);
    assert_int_equal(pv_tune_source(cpu, NULL, 16), PV_ERR_INVALID);
    assert_int_equal(pv_tune_source(cpu, text, 0), PV_ERR_INVALID);
    assert_int_equal(pv_tune_source(cpu, text, 3), PV_ERR_INVALID); /* "none" needs 5 */
    assert_int_equal(pv_tune_export(cpu, NULL, 16), PV_ERR_INVALID);
    assert_int_equal(pv_tune_export(cpu, text, 0), PV_ERR_INVALID);
    assert_string_equal(text, "untouched");
    pv_context_destroy(cpu);
}

/* ---------------------------------------------------- concurrent first use */

enum { THREADS = 6 };

typedef struct first_use {
    pthread_barrier_t *start;
    pv_context *shared;   /* NULL: each thread makes its own context */
    value_set values;
    pv_status status;
} first_use;

static void *first_use_thread(void *arg)
{
    first_use *job = arg;
    pthread_barrier_wait(job->start);
    pv_context *ctx = job->shared;
    job->status = PV_ERR_NO_DEVICE;
    if (!ctx) {
        pv_context_options options;
        pv_context_options_default(&options);
        options.backend = PV_BACKEND_OPENCL;
        if (pv_context_create(&ctx, &options) != PV_OK)
            return NULL;
    }
    job->status = read_values(ctx, &job->values);
    if (!job->shared)
        pv_context_destroy(ctx);
    return NULL;
}

static void run_first_use(pv_context *shared, first_use *jobs)
{
    pthread_barrier_t start;
    pthread_t threads[THREADS];
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].start = &start;
        jobs[i].shared = shared;
        assert_int_equal(pthread_create(&threads[i], NULL, first_use_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(jobs[i].status, PV_OK);
        assert_string_equal(jobs[i].values.source, jobs[0].values.source);
        assert_int_equal(jobs[i].values.bp_count, jobs[0].values.bp_count);
        assert_memory_equal(&jobs[i].values, &jobs[0].values, sizeof jobs[0].values);
    }
}

static void test_concurrent_first_use(void **state)
{
    (void)state;
    pv_context *probe = new_opencl_or_skip();
    remove_cache(probe);
    pv_tune_db_choice choice;
    pv_tune_db_level level = expected_choice(probe, &choice);
    pv_context_destroy(probe);

    static first_use own[THREADS], shared_jobs[THREADS];
    run_first_use(NULL, own); /* contexts made at once */
    pv_context *shared = new_opencl_or_skip();
    run_first_use(shared, shared_jobs); /* one context read at once */
    pv_context_destroy(shared);
    assert_memory_equal(&own[0].values, &shared_jobs[0].values, sizeof own[0].values);
    if (level == PV_TUNE_DB_NONE)
        assert_string_equal(own[0].values.source, "defaults");
    else
        assert_true(strstr(own[0].values.source, choice.name) != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_fallback_order),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_corrupt_and_foreign_entries),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_embedded_entries_are_valid),
        cmocka_unit_test(test_database_applied_without_cache),
        cmocka_unit_test(test_local_cache_wins),
        cmocka_unit_test(test_defaults_when_asked),
        cmocka_unit_test(test_export),
        cmocka_unit_test(test_export_every_family),
        cmocka_unit_test(test_concurrent_first_use),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
