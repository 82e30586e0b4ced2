/* JPEG through libjpeg: baseline and progressive, grey and colour. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_starts_with(data, size, "\xff\xd8\xff", 3))
        return -1;
    fuzz_read_image(fuzz_file("input.jpg", data, size));
    return 0;
}
