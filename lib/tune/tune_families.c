/* The tunable families: the one list of them, on the lookup's side (the
 * cache file, the database and the parameter calls check family names
 * against it without knowing the search).  Each is named as the op whose
 * launch parameters it holds, in the backend table's order.  ("fft" holds
 * the FFT engine, the caller's choice: not a family.)  The search has one
 * search per family (tune_search.c); tests/test_tune.c checks both lists
 * name the same families. */
#include "tune_lookup.h"

#include <string.h>

static const char *const families[] = {
    "filter", "sad", "bp", "register", "flow", "features", "octreg", "geometry", "sgm",
};

#define FAMILY_COUNT ((int)(sizeof families / sizeof families[0]))

const char *pv_tune_family(int index)
{
    return index >= 0 && index < FAMILY_COUNT ? families[index] : NULL;
}

const char *pv_tune_family_name(int index)
{
    return pv_tune_family(index);
}

int pv_tune_family_known(const char *family)
{
    for (int i = 0; family && i < FAMILY_COUNT; i++)
        if (strcmp(families[i], family) == 0)
            return 1;
    return 0;
}
