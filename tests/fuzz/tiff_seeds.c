/* Writes small TIFF seeds with libtiff's encoder into the directory named
 * by argv[1]: grey 8-bit strips, 16-bit LZW big-endian, float tiled with
 * deflate, RGB PackBits, RGBA, three pages, and BigTIFF.  Used by
 * make_corpus.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

typedef struct seed {
    const char *name, *mode;
    int samples, bits, is_float, tile, compression, pages;
} seed;

static void fill(uint8_t *buffer, size_t bytes, int page)
{
    for (size_t i = 0; i < bytes; i++)
        buffer[i] = (uint8_t)((i * 37) ^ (i >> 3) ^ (size_t)page * 11);
    if (bytes % 4 == 0)     /* finite floats: clear every exponent's top bit */
        for (size_t i = 3; i < bytes; i += 4)
            buffer[i] &= 0x3F;
}

static int write_page(TIFF *t, const seed *s, int page)
{
    enum { W = 19, H = 13 };
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)W);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)H);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)s->samples);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)s->bits);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                 (uint16_t)(s->is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
                 (uint16_t)(s->samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, (uint16_t)s->compression);
    if (s->samples == 4) {
        uint16_t extra = EXTRASAMPLE_ASSOCALPHA;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    size_t pixel = (size_t)s->samples * (size_t)(s->bits / 8);
    uint8_t buffer[16 * 16 * 4 * 4];
    if (s->tile) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, 16u);
        TIFFSetField(t, TIFFTAG_TILELENGTH, 16u);
        for (uint32_t y = 0; y < H; y += 16)
            for (uint32_t x = 0; x < W; x += 16) {
                fill(buffer, 16 * 16 * pixel, page + (int)x);
                if (TIFFWriteTile(t, buffer, x, y, 0, 0) < 0)
                    return 1;
            }
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 4u);
        for (uint32_t y = 0; y < H; y++) {
            fill(buffer, W * pixel, page + (int)y);
            if (TIFFWriteScanline(t, buffer, y, 0) != 1)
                return 1;
        }
    }
    return TIFFWriteDirectory(t) != 1;
}

int main(int argc, char **argv)
{
    static const seed seeds[] = {
        {"grey8", "wl", 1, 8, 0, 0, COMPRESSION_NONE, 1},
        {"grey16_lzw_be", "wb", 1, 16, 0, 0, COMPRESSION_LZW, 1},
        {"float_tiled_deflate", "wl", 1, 32, 1, 1, COMPRESSION_ADOBE_DEFLATE, 1},
        {"rgb8_packbits", "wb", 3, 8, 0, 0, COMPRESSION_PACKBITS, 1},
        {"rgba16_tiled", "wl", 4, 16, 0, 1, COMPRESSION_NONE, 1},
        {"pages3_u16", "wl", 1, 16, 0, 0, COMPRESSION_LZW, 3},
        {"bigtiff_grey8", "w8l", 1, 8, 0, 0, COMPRESSION_NONE, 2},
    };
    if (argc != 2)
        return 2;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.tif", argv[1], seeds[i].name);
        TIFF *t = TIFFOpen(path, seeds[i].mode);
        if (!t)
            return 1;
        for (int p = 0; p < seeds[i].pages; p++)
            if (write_page(t, &seeds[i], p))
                return 1;
        TIFFClose(t);
    }
    return 0;
}
