/* NIfTI-1 / ANALYZE headers and data: the input read as a .nii file, the
 * same bytes gzip-compressed as a .nii.gz (so that header fields, not
 * the deflate stream, are what the mutations reach), and split after the
 * 348-byte header into a .hdr/.img pair. */
#include "fuzz_common.h"

#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_volume(const char *path)
{
    pv_volume v;
    if (pv_volume_read_nifti(path, &v) == PV_OK) {
        fuzz_check_volume(&v);
        pv_volume_free(&v);
    }
}

static void write_gzip(const char *path, const uint8_t *data, size_t size)
{
    gzFile gz = gzopen(path, "wb1");
    if (!gz || (size && gzwrite(gz, data, (unsigned)size) != (int)size) || gzclose(gz) != Z_OK)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return -1;
    read_volume(fuzz_file("input.nii", data, size));
    char gz_path[4200];
    snprintf(gz_path, sizeof gz_path, "%s/input.nii.gz", fuzz_directory());
    write_gzip(gz_path, data, size);
    read_volume(gz_path);
    if (size >= 348) {
        fuzz_file("pair.img", data + 348, size - 348);
        read_volume(fuzz_file("pair.hdr", data, 348));
    }
    return 0;
}
