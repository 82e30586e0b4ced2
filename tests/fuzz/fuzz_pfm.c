/* PFM, grey and colour, either byte order. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const magics[] = {"Pf", "PF", NULL};
    return fuzz_image_target(data, size, "input.pfm", magics);
}
