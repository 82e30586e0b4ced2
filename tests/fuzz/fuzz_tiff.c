/* TIFF through libtiff: the input read as an image (its first page) and
 * as a multi-page volume, classic and BigTIFF, either byte order. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const magics[] = {"II*", "II+", "MM", NULL};
    if (fuzz_image_target(data, size, "input.tif", magics) != 0)
        return -1;
    pv_volume v;
    if (pv_volume_read_tiff(fuzz_file("volume.tif", data, size), &v) == PV_OK) {
        fuzz_check_volume(&v);
        pv_volume_free(&v);
    }
    return 0;
}
