/* PNG through libpng: every colour type and depth, interlaced or not. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_starts_with(data, size, "\x89PNG\r\n\x1a\n", 8))
        return -1;
    fuzz_read_image(fuzz_file("input.png", data, size));
    return 0;
}
