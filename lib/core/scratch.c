/* Several working arrays carved from one allocation (internal.h). */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Round size up to the next multiple of PV_SCRATCH_ALIGN; 0 on overflow. */
static int round_to_alignment(size_t size, size_t *out)
{
    const size_t mask = PV_SCRATCH_ALIGN - 1;
    if (size > SIZE_MAX - mask)
        return 0;
    *out = (size + mask) & ~mask;
    return 1;
}

void *pv_scratch_take(pv_scratch *scratch, size_t count, size_t element_size)
{
    size_t bytes, rounded;
    if (!scratch)
        return NULL;
    if (!pv_size_mul(count, element_size, &bytes) || !round_to_alignment(bytes, &rounded) ||
        rounded > SIZE_MAX - scratch->size) {
        scratch->overflow = 1;
        return NULL;
    }
    void *array = scratch->block ? scratch->block + scratch->size : NULL;
    scratch->size += rounded;
    return array;
}

pv_status pv_scratch_carve(pv_scratch *scratch, pv_scratch_layout *lay_out, void *arrays,
                           int zeroed)
{
    if (!scratch || !lay_out || !arrays)
        return PV_ERR_INVALID;
    pv_scratch measured = {NULL, 0, 0};
    lay_out(&measured, arrays);
    /* aligned_alloc wants a size that is a multiple of the alignment and,
     * here, at least one line, so that even an empty layout owns a block. */
    const size_t size = measured.size > 0 ? measured.size : PV_SCRATCH_ALIGN;
    unsigned char *block = measured.overflow ? NULL : aligned_alloc(PV_SCRATCH_ALIGN, size);
    if (!block) {
        lay_out(&measured, arrays); /* leaves every array NULL */
        return PV_ERR_NOMEM;
    }
    if (zeroed)
        memset(block, 0, size);
    *scratch = (pv_scratch){block, 0, 0};
    lay_out(scratch, arrays);
    return PV_OK;
}

void pv_scratch_free(pv_scratch *scratch)
{
    if (!scratch)
        return;
    free(scratch->block);
    *scratch = (pv_scratch){NULL, 0, 0};
}
