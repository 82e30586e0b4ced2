/* PNG through libpng: every colour type and depth, interlaced or not. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const magics[] = {"\x89PNG\r\n\x1a\n", NULL};
    return fuzz_image_target(data, size, "input.png", magics);
}
