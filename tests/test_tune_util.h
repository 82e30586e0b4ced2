/* What the tuner's two suites (test_tune, test_tune_db) share: a scratch
 * tuning cache directory under the build tree. */
#ifndef TEST_TUNE_UTIL_H
#define TEST_TUNE_UTIL_H

#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The scratch directory `name` (made if needed) into dir, and
 * PARVIS_TUNE_DIR pointing at it, so no test reads or writes the user's
 * cache. */
static inline void tt_use_scratch_cache(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "%s", tu_tmp_path(name));
    mkdir(dir, 0755);
    setenv("PARVIS_TUNE_DIR", dir, 1);
}

#endif
