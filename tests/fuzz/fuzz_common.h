/* Shared by the fuzz targets: the readers take paths, so each input is
 * written to a file in a private temporary directory (under $TMPDIR, else
 * /dev/shm when it exists, else /tmp) and read back through the public
 * API.  A successful read is checked for the API's promises (sizes
 * positive, stride >= width) and every pixel is touched, so that the
 * sanitizers see any out-of-bounds or uninitialised result; a broken
 * promise traps, which libFuzzer reports as a crash. */
#ifndef PV_FUZZ_COMMON_H
#define PV_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parvis.h"

static const char *fuzz_directory(void)
{
    static char dir[4096];
    if (dir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        if (!base || !*base)
            base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/parvis-fuzz-XXXXXX", base);
        if (!mkdtemp(dir))
            __builtin_trap();
    }
    return dir;
}

/* The file `name` in the private directory, holding data. */
static const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[2][4200];
    static int next;
    char *slot = path[next++ & 1];
    snprintf(slot, sizeof path[0], "%s/%s", fuzz_directory(), name);
    FILE *f = fopen(slot, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        __builtin_trap();
    return slot;
}

static volatile float fuzz_sink;

static void fuzz_check_image(const pv_image *image, pv_pixel_type type)
{
    if (image->width < 1 || image->height < 1 || image->stride < image->width ||
        image->type != type || !image->data)
        __builtin_trap();
    float sum = 0.0f;
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++)
            sum += pv_image_get(image, x, y);
    fuzz_sink = sum;
}

/* Reads the file as u8 and f32 and its header alone. */
static void fuzz_read_image(const char *path)
{
    static const pv_pixel_type types[2] = {PV_PIXEL_U8, PV_PIXEL_F32};
    for (int t = 0; t < 2; t++) {
        pv_image image;
        if (pv_image_read(path, types[t], &image) == PV_OK) {
            fuzz_check_image(&image, types[t]);
            pv_image_free(&image);
        }
    }
    pv_image_info info;
    if (pv_image_read_info(path, &info) == PV_OK &&
        (info.width < 1 || info.height < 1 || info.channels < 1 || info.channels > 4 ||
         info.bits < 1 || info.bits > 32))
        __builtin_trap();
}

static void fuzz_check_volume(const pv_volume *v)
{
    if (v->nx < 1 || v->ny < 1 || v->nz < 1 || v->stride_y < v->nx ||
        v->stride_z < v->stride_y * v->ny || !v->data)
        __builtin_trap();
    float sum = 0.0f;
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++)
                sum += v->data[x + y * v->stride_y + z * v->stride_z];
    fuzz_sink = sum;
}

/* An image target: inputs that do not start with one of `magics` (each
 * given with its length) are left to the other targets. */
static int fuzz_starts_with(const uint8_t *data, size_t size, const char *magic, size_t length)
{
    return size >= length && memcmp(data, magic, length) == 0;
}

/* The whole of an image format's target: an input that starts with none
 * of the format's magic strings (a NULL-ended list) is refused, so that it
 * stays out of the corpus; any other is read back as the file `name`. */
static int fuzz_image_target(const uint8_t *data, size_t size, const char *name,
                             const char *const *magics)
{
    for (int i = 0; magics[i]; i++)
        if (fuzz_starts_with(data, size, magics[i], strlen(magics[i]))) {
            fuzz_read_image(fuzz_file(name, data, size));
            return 0;
        }
    return -1;
}

#endif
