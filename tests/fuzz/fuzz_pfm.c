/* PFM, grey and colour, either byte order. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!(fuzz_starts_with(data, size, "Pf", 2) || fuzz_starts_with(data, size, "PF", 2)))
        return -1;
    fuzz_read_image(fuzz_file("input.pfm", data, size));
    return 0;
}
