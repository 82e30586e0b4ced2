/* Internal: the tuning database, launch parameters measured on known
 * devices and shipped inside the library (lib/tune/tune_db/<vendor>-<device>.txt,
 * embedded at build time by build-aux/embed-tune-db.sh).  A context whose
 * device has no usable local tuning cache starts from the entry that fits
 * it best: the same device name, else the same architecture, else the same
 * vendor; with none, the built-in defaults.  docs/tuning.md describes the
 * format and how an entry is contributed.  Not installed. */
#ifndef PV_TUNE_DB_H
#define PV_TUNE_DB_H

#include "tune_lookup.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- format
 * An entry is the cache file's line format with a longer header:
 *     parvis-tune-db 1
 *     vendor <CL_DEVICE_VENDOR>
 *     type cpu|gpu|accelerator|other
 *     arch <architecture key, e.g. hopper or skylake-avx512; may be empty>
 *     device <CL_DEVICE_NAME>
 *     driver <CL_DRIVER_VERSION it was tuned with>
 *     parvis <version it was tuned with>
 *     local_memory <CL_DEVICE_LOCAL_MEM_SIZE in bytes>
 *     max_work_group <CL_DEVICE_MAX_WORK_GROUP_SIZE>
 *     param <family> <NAME> <value>      (any number of lines)
 *     end <FNV-1a 64 of every byte before this line, 16 hex digits>
 * Driver and parvis version are recorded, not matched.  The two limits
 * are matched: an entry is only applied to a device that has at least the
 * local memory and work-group size of the device it was measured on, so
 * no shared entry can ask for more than a device gives. */

#define PV_TUNE_DB_MAGIC "parvis-tune-db 1"

typedef struct pv_tune_db_header {
    char vendor[128];
    char type[16];
    char arch[64];
    char device[128];
    char driver[256];
    char parvis[32];
    uint64_t local_memory;
    int max_work_group;
} pv_tune_db_header;

/* One embedded file: its name (the file's base name without ".txt") and
 * its text. */
typedef struct pv_tune_db_text {
    const char *name;
    const char *text;
} pv_tune_db_text;

/* The embedded database (generated: tune_db_embedded.c), sorted by name. */
extern const pv_tune_db_text pv_tune_db_texts[];
extern const size_t pv_tune_db_text_count;

/* 1 with the header and entries when all `size` bytes of text are a valid
 * database entry whose every parameter `known` accepts; otherwise 0 with
 * *why saying what is wrong.  Lives beside pv_tune_parse_file
 * (lib/tune/tune_file.c) and shares its line rules; makes no OpenCL call.
 * pv_tune_db_format, its inverse, lives there too. */
int pv_tune_parse_db(const char *text, size_t size, pv_tune_param_known known, void *user,
                     pv_tune_db_header *header, pv_tune_file *file, const char **why);

/* The text of an entry (the format above) into text; 1 on success, 0 when
 * it does not fit in size bytes.  *used receives its length. */
int pv_tune_db_format(const pv_tune_db_header *header, const pv_tune_file *file, char *text,
                      size_t size, size_t *used);

/* ----------------------------------------------------------------- lookup */

/* How well an entry fits a device, best last. */
typedef enum pv_tune_db_level {
    PV_TUNE_DB_NONE = 0,
    PV_TUNE_DB_VENDOR = 1,
    PV_TUNE_DB_ARCH = 2,
    PV_TUNE_DB_DEVICE = 3
} pv_tune_db_level;

const char *pv_tune_db_level_name(pv_tune_db_level level);

/* The words a device is matched by, derived from what OpenCL reports. */
typedef struct pv_tune_db_device {
    char name[128];
    char vendor[128];
    char type[16];
    char driver[256];
    uint64_t local_memory;
    int max_work_group;
} pv_tune_db_device;

void pv_tune_db_describe(const pv_device_info *info, pv_tune_db_device *device);

/* A vendor string reduced to one lower-case word ("nvidia", "amd",
 * "intel", "apple", else its first word), so that the names one company's
 * drivers use compare equal. */
void pv_tune_db_vendor_key(const char *vendor, char *key, size_t size);

/* The architecture key of a device from its name: PoCL's CPU ISA
 * ("pthread-skylake-avx512-AMD EPYC" gives "skylake-avx512"), NVIDIA's
 * architecture from the product name ("NVIDIA H100 80GB HBM3" gives
 * "hopper"); "" when the name says nothing known. */
void pv_tune_db_arch_key(const char *device_name, char *key, size_t size);

/* The entry chosen for a device. */
typedef struct pv_tune_db_choice {
    pv_tune_db_level level;
    char name[64];                 /* the file it came from */
    pv_tune_db_header header;
    pv_tune_file params;
} pv_tune_db_choice;

/* Report of an entry skipped while choosing (may be NULL). */
typedef void (*pv_tune_db_skip_note)(void *user, const char *name, const char *why);

/* The best entry of texts[0..count) for device: an exact device name
 * first, then the same architecture key, then the same vendor key, each
 * of the same device type and within the device's limits; among equals,
 * the first in texts' order.  Entries that do not parse, or name a
 * parameter `known` refuses, are skipped (and noted).  Returns the level
 * found (PV_TUNE_DB_NONE: choice untouched). */
pv_tune_db_level pv_tune_db_select(const pv_tune_db_text *texts, size_t count,
                                   const pv_tune_db_device *device, pv_tune_param_known known,
                                   void *known_user, pv_tune_db_skip_note note, void *note_user,
                                   pv_tune_db_choice *choice);

/* ------------------------------------------------------------------- hook */

/* Called by pv_tune_autoload once the local cache has been tried:
 * cache_applied > 0 records "cache" as the source; otherwise the embedded
 * database's best entry for ctx's device is applied and named as the
 * source, or "defaults" when none fits.  Never fails: an entry that
 * cannot be applied leaves the defaults, logged. */
void pv_tune_db_after_cache(pv_context *ctx, int cache_applied);

/* Record where ctx's launch parameters came from (see pv_tune_source). */
void pv_tune_db_note_source(pv_context *ctx, const char *source);

#endif
