/* PGM and PPM, binary and ASCII, 8 and 16 bits. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const magics[] = {"P2", "P3", "P5", "P6", NULL};
    return fuzz_image_target(data, size, "input.pnm", magics);
}
