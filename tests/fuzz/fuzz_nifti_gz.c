/* .nii.gz files as they come: the gzip container and deflate stream
 * themselves (cut, damaged, over-long), then the header inside. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_starts_with(data, size, "\x1f\x8b", 2))
        return -1;
    pv_volume v;
    if (pv_volume_read_nifti(fuzz_file("input.nii.gz", data, size), &v) == PV_OK) {
        fuzz_check_volume(&v);
        pv_volume_free(&v);
    }
    return 0;
}
