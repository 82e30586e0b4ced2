/* Internal, ground floor: the library's configuration, the PARVIS_*
 * environment variables, read into one snapshot (lib/core/configuration.c).
 *
 * PV_CONFIG_VARIABLES is the one table: each variable's name (after
 * "PARVIS_"), its kind of value, its default (what holds when it is unset)
 * and its meaning.  The enum of identifiers, the reading, the public
 * listing (pv_config_entry) and docs/configuration.md's check
 * (tests/test_config_docs.sh) all come from it.
 *
 * The snapshot is read from the environment when the first context is made
 * (or the first value is asked for, whichever comes first) and read again
 * by every pv_context_create: a variable changed between two contexts takes
 * effect from the second one on, for the whole process.  Nothing calls
 * getenv for a PARVIS_* variable anywhere else. */
#ifndef PV_CONFIGURATION_H
#define PV_CONFIGURATION_H

#include "parvis.h"

#include <stddef.h>

/* X(name, kind, default, meaning) */
#define PV_CONFIG_VARIABLES(X)                                                                \
    X(BACKEND, "choice", "the program's choice",                                              \
      "auto, cpu or opencl: overrides the backend the program asks for")                      \
    X(DEVICE, "index or name", "first GPU, else the first device",                            \
      "OpenCL device index (as parvis devices prints) or a substring of its name; a device "  \
      "group becomes that one device")                                                        \
    X(CROSSCHECK, "flag", "off",                                                              \
      "1: every call also runs on the CPU backend and fails with PV_ERR_MISMATCH beyond the " \
      "operation's tolerance")                                                                \
    X(KERNEL_TIMING, "choice", "runs",                                                        \
      "runs: a run of kernels timed as one span; each: every kernel launch timed on its own") \
    X(LOG, "flag", "off",                                                                     \
      "1: log device selection, errors and profiles to stderr (when no log callback is set)") \
    X(PROFILE, "level", "off",                                                                \
      "1: per-kernel times and a wait timeline when an OpenCL context is released; 2: also "  \
      "every command")                                                                        \
    X(FFT, "choice", "vkfft when built with VkFFT, else clfft",                               \
      "clfft or vkfft: the OpenCL FFT engine")                                                \
    X(FFTW_PLANNER, "choice", "measured plans from the wisdom file, else estimated",          \
      "estimate, measure or patient: how the CPU backend's FFTW plans are made")              \
    X(FFTW_WISDOM, "path", "$XDG_CACHE_HOME/parvis/fftw3f.wisdom",                            \
      "the FFTW wisdom file of the CPU backend; off: none read or written")                   \
    X(NO_BINARY_CACHE, "flag", "off",                                                         \
      "1: neither read nor write the OpenCL program binary cache nor the FFT kernel cache")   \
    X(NO_FFT_CACHE, "flag", "off", "1: neither read nor write the FFT kernel cache")          \
    X(PINNED_MIN, "bytes", "4194304",                                                         \
      "OpenCL transfers of at least this many bytes go through pinned staging buffers; 0 "    \
      "turns staging off")                                                                    \
    X(NO_TUNE, "flag", "off",                                                                 \
      "1: default launch parameters, neither the tuning cache nor the tuning database")       \
    X(TUNE_DIR, "path", "$XDG_CACHE_HOME/parvis", "directory of the tuning cache")            \
    X(MEMORY_LIMIT, "bytes", "no cap below the machine's own",                                \
      "bytes (suffix K, M, G) a BP or SGM call may plan for")                                 \
    X(SGM_SHUFFLE, "flag", "on (NVIDIA devices)",                                             \
      "0: SGM's OpenCL kernels use the portable local-memory exchange, no warp shuffles")     \
    X(FAULT, "list", "off",                                                                   \
      "alloc:N, build:N or enqueue:N, comma-separated: the OpenCL context's N-th such call "  \
      "fails (fault-injection tests)")                                                        \
    X(CL_OPTIONS_LOG, "path", "nothing logged",                                        \
      "a file to which every OpenCL program built from source appends its name and build "    \
      "options")

#define PV_CONFIG_ENUM_ENTRY(name, kind, fallback, meaning) PV_CONFIG_##name,
typedef enum pv_config_id {
    PV_CONFIG_VARIABLES(PV_CONFIG_ENUM_ENTRY) PV_CONFIG_COUNT
} pv_config_id;
#undef PV_CONFIG_ENUM_ENTRY

/* The longest value kept, in bytes without the terminator; a longer one
 * makes pv_config_refresh fail (context creation refuses it). */
#define PV_CONFIG_VALUE_MAX 4095

/* Read every variable from the environment again.  PV_ERR_INVALID naming
 * the variable when a value is longer than PV_CONFIG_VALUE_MAX (it is then
 * kept as unset).  Thread-safe.  Context creation calls it; tests that
 * change a variable under a living context call it too. */
pv_status pv_config_refresh(void);

/* The variable's value into value (size bytes, at most
 * PV_CONFIG_VALUE_MAX + 1 needed): 1 when it is set and not empty, else 0
 * with value "" (value may be NULL to ask only whether it is set).  A value
 * that does not fit is cut; callers that need it whole pass a buffer of
 * PV_CONFIG_VALUE_MAX + 1. */
int pv_config_get(pv_config_id id, char *value, size_t size);

/* 1 when the variable is set to exactly text ("1" for the flags). */
int pv_config_is(pv_config_id id, const char *text);

/* A variable's value as a struct, for messages:
 * pv_config_text(PV_CONFIG_MEMORY_LIMIT).text. */
typedef struct pv_config_value {
    char text[PV_CONFIG_VALUE_MAX + 1];
} pv_config_value;
pv_config_value pv_config_text(pv_config_id id);

/* PARVIS_MEMORY_LIMIT: bytes (suffix K, M or G: binary multiples) that cap
 * what BP and SGM take as available.  0 with *limit SIZE_MAX when unset,
 * 0 with the cap, or -1 when the value is not such a count. */
int pv_config_memory_limit(size_t *limit);

/* PARVIS_LOG=1, read without a lock (pv_log asks on every line). */
int pv_config_log_enabled(void);

#endif
