/* PGM and PPM, binary and ASCII, 8 and 16 bits. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!(fuzz_starts_with(data, size, "P2", 2) || fuzz_starts_with(data, size, "P3", 2) ||
          fuzz_starts_with(data, size, "P5", 2) || fuzz_starts_with(data, size, "P6", 2)))
        return -1;
    fuzz_read_image(fuzz_file("input.pnm", data, size));
    return 0;
}
