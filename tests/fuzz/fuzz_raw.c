/* Raw float32 volumes: the first three bytes choose the size asked for
 * (1 to 16 a side), the rest is the file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return -1;
    int nx = 1 + data[0] % 16, ny = 1 + data[1] % 16, nz = 1 + data[2] % 16;
    const char *path = fuzz_file("input.raw", data + 3, size - 3);
    pv_volume v;
    if (pv_volume_read_raw(path, nx, ny, nz, &v) == PV_OK) {
        if (v.nx != nx || v.ny != ny || v.nz != nz)
            __builtin_trap();
        fuzz_check_volume(&v);
        pv_volume_free(&v);
    }
    return 0;
}
