/* JPEG through libjpeg: baseline and progressive, grey and colour. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const magics[] = {"\xff\xd8\xff", NULL};
    return fuzz_image_target(data, size, "input.jpg", magics);
}
