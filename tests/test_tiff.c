/* TIFF reading: files written here by libtiff itself (8/16-bit, float,
 * RGB, tiled, big-endian, compressed, multi-page) read back through
 * pv_image_read and pv_volume_read_tiff with known values; truncated,
 * corrupt, oversize and inconsistent files refused cleanly, silently and
 * with the output untouched.  Skipped (77) without libtiff. */
#include "test_util.h"
#include "io_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PV_HAVE_TIFF

#include <tiffio.h>

/* ------------------------------------------------------------ writing */

typedef struct tiff_spec {
    int width, height, samples, bits, is_float;
    int tile;               /* tile side (a multiple of 16), 0 for strips */
    int rows_per_strip;     /* 0: libtiff's default */
    int compression;        /* COMPRESSION_* (0: none) */
    int big_endian;         /* 0 little, 1 big; 2, 3: the same as BigTIFF */
} tiff_spec;

/* Sample i of a page: a pattern that differs per page, channel and
 * position, exact in every sample type. */
static double pattern(const tiff_spec *s, int page, int x, int y, int c)
{
    if (s->is_float)
        return (x - 2 * y) * 0.5 + c * 100.25 + page * 1000.0;
    int max = s->bits == 8 ? 256 : 65536;
    return (double)((x * 7 + y * 31 + c * 50 + page * 13) * (s->bits == 8 ? 1 : 251) % max);
}

static void fill_row(const tiff_spec *s, int page, int y, int x0, int width, uint8_t *row)
{
    for (int x = 0; x < width; x++)
        for (int c = 0; c < s->samples; c++) {
            double v = pattern(s, page, x0 + x, y, c);
            size_t i = (size_t)x * s->samples + c;
            if (s->bits == 8) {
                row[i] = (uint8_t)v;
            } else if (s->bits == 16) {
                uint16_t u = (uint16_t)v;
                memcpy(row + 2 * i, &u, 2);
            } else {
                float f = (float)v;
                memcpy(row + 4 * i, &f, 4);
            }
        }
}

static void set_page_tags(TIFF *t, const tiff_spec *s)
{
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, (uint32_t)s->width);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, (uint32_t)s->height);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)s->samples);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)s->bits);
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                 (uint16_t)(s->is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
                 (uint16_t)(s->samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION,
                 (uint16_t)(s->compression ? s->compression : COMPRESSION_NONE));
    if (s->samples == 4) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (s->tile) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, (uint32_t)s->tile);
        TIFFSetField(t, TIFFTAG_TILELENGTH, (uint32_t)s->tile);
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP,
                     (uint32_t)(s->rows_per_strip ? s->rows_per_strip : 3));
    }
}

static void write_tiles(TIFF *t, const tiff_spec *s, int page)
{
    size_t pixel = (size_t)s->samples * (s->bits / 8);
    uint8_t *tile = calloc((size_t)s->tile * s->tile, pixel);
    assert_non_null(tile);
    for (int ty = 0; ty < s->height; ty += s->tile)
        for (int tx = 0; tx < s->width; tx += s->tile) {
            memset(tile, 0xA5, (size_t)s->tile * s->tile * pixel);  /* padding */
            for (int y = 0; y < s->tile && ty + y < s->height; y++) {
                int w = s->width - tx < s->tile ? s->width - tx : s->tile;
                fill_row(s, page, ty + y, tx, w, tile + (size_t)y * s->tile * pixel);
            }
            assert_true(TIFFWriteTile(t, tile, (uint32_t)tx, (uint32_t)ty, 0, 0) > 0);
        }
    free(tile);
}

static void write_page(TIFF *t, const tiff_spec *s, int page)
{
    set_page_tags(t, s);
    if (s->tile) {
        write_tiles(t, s, page);
    } else {
        uint8_t *row = malloc((size_t)s->width * s->samples * (s->bits / 8));
        assert_non_null(row);
        for (int y = 0; y < s->height; y++) {
            fill_row(s, page, y, 0, s->width, row);
            assert_int_equal(TIFFWriteScanline(t, row, (uint32_t)y, 0), 1);
        }
        free(row);
    }
    assert_int_equal(TIFFWriteDirectory(t), 1);
}

/* `pages` pages; page `odd` (if >= 0) is one pixel wider. */
static void write_tiff_pages(const char *path, const tiff_spec *s, int pages, int odd)
{
    static const char *const modes[4] = {"wl", "wb", "w8l", "w8b"};
    TIFF *t = TIFFOpen(path, modes[s->big_endian]);
    assert_non_null(t);
    for (int p = 0; p < pages; p++) {
        tiff_spec page = *s;
        if (p == odd)
            page.width++;
        write_page(t, &page, p);
    }
    TIFFClose(t);
}

static const char *tmp(const char *name, char *buffer, size_t size)
{
    snprintf(buffer, size, "%s", tu_tmp_path(name));
    return buffer;
}

/* ------------------------------------------------------------ reading */

static void expect_f32(const char *path, const tiff_spec *s)
{
    pv_image image;
    if (pv_image_read(path, PV_PIXEL_F32, &image) != PV_OK)
        fail_msg("%s: %s", path, pv_last_error());
    assert_int_equal(image.width, s->width);
    assert_int_equal(image.height, s->height);
    for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++) {
            double want = pattern(s, 0, x, y, 0);
            if (s->samples >= 3)
                want = (float)(0.299 * pattern(s, 0, x, y, 0) + 0.587 * pattern(s, 0, x, y, 1) +
                               0.114 * pattern(s, 0, x, y, 2));
            float got = *tu_fpixel(&image, x, y);
            if (fabs(got - want) > 1e-3 * (1 + fabs(want)))
                fail_msg("%s (%d,%d): %g, expected %g", path, x, y, got, want);
        }
    pv_image_free(&image);
}

static void check_variant(const char *name, tiff_spec s)
{
    char path[4096];
    tmp(name, path, sizeof path);
    write_tiff_pages(path, &s, 1, -1);
    expect_f32(path, &s);
    pv_image_info info;
    assert_int_equal(pv_image_read_info(path, &info), PV_OK);
    assert_int_equal(info.format, PV_IMAGE_FORMAT_TIFF);
    assert_int_equal(info.width, s.width);
    assert_int_equal(info.height, s.height);
    assert_int_equal(info.channels, s.samples);
    assert_int_equal(info.bits, s.bits);
}

static void test_tiff_variants(void **state)
{
    (void)state;
    check_variant("g8.tif", (tiff_spec){13, 7, 1, 8, 0, 0, 0, 0, 0});
    check_variant("g16.tif", (tiff_spec){13, 7, 1, 16, 0, 0, 2, 0, 0});
    check_variant("f32.tif", (tiff_spec){13, 7, 1, 32, 1, 0, 0, 0, 0});
    check_variant("rgb8.tif", (tiff_spec){9, 5, 3, 8, 0, 0, 0, 0, 0});
    check_variant("rgba16.tif", (tiff_spec){9, 5, 4, 16, 0, 0, 0, 0, 0});
    check_variant("tiled8.tif", (tiff_spec){37, 21, 1, 8, 0, 16, 0, 0, 0});
    check_variant("tiled_rgb16.tif", (tiff_spec){20, 33, 3, 16, 0, 16, 0, 0, 0});
    check_variant("be16.tif", (tiff_spec){11, 6, 1, 16, 0, 0, 0, 0, 1});
    check_variant("be_f32_tiled.tif", (tiff_spec){17, 18, 1, 32, 1, 16, 0, 0, 1});
    check_variant("lzw16.tif", (tiff_spec){31, 12, 1, 16, 0, 0, 4, COMPRESSION_LZW, 0});
    check_variant("deflate_rgb.tif", (tiff_spec){31, 12, 3, 8, 0, 0, 0, COMPRESSION_ADOBE_DEFLATE, 1});
    check_variant("bigtiff_le.tif", (tiff_spec){9, 4, 1, 16, 0, 0, 0, 0, 2});
    check_variant("bigtiff_be_rgb.tif", (tiff_spec){9, 4, 3, 8, 0, 16, 0, COMPRESSION_LZW, 3});
    check_variant("packbits.tif", (tiff_spec){31, 12, 1, 8, 0, 16, 0, COMPRESSION_PACKBITS, 0});
}

/* The conversion rules of parvis/io.h for each pixel type. */
static void test_tiff_pixel_types(void **state)
{
    (void)state;
    char path[4096];
    tiff_spec s16 = {5, 3, 1, 16, 0, 0, 0, 0, 0};
    write_tiff_pages(tmp("t16.tif", path, sizeof path), &s16, 1, -1);
    pv_image image;
    assert_int_equal(pv_image_read(path, PV_PIXEL_U16, &image), PV_OK);
    for (int x = 0; x < 5; x++)     /* kept as 16 bits */
        assert_int_equal(((uint16_t *)image.data)[x], (int)pattern(&s16, 0, x, 0, 0));
    pv_image_free(&image);
    assert_int_equal(pv_image_read(path, PV_PIXEL_U8, &image), PV_OK);
    for (int x = 0; x < 5; x++)     /* scaled by 255 / 65535, half up */
        assert_int_equal(((uint8_t *)image.data)[x],
                         (int)(pattern(&s16, 0, x, 0, 0) * 255.0 / 65535.0 + 0.5));
    pv_image_free(&image);

    tiff_spec sf = {4, 1, 1, 32, 1, 0, 0, 0, 0};
    write_tiff_pages(tmp("tf.tif", path, sizeof path), &sf, 1, -1);
    assert_int_equal(pv_image_read(path, PV_PIXEL_U8, &image), PV_OK);
    const uint8_t u8[4] = {0, 1, 1, 2};   /* 0, 0.5, 1, 1.5 rounded half up */
    assert_memory_equal(image.data, u8, 4);
    pv_image_free(&image);
    assert_int_equal(pv_image_read(path, PV_PIXEL_U16, &image), PV_OK);
    for (int x = 0; x < 4; x++)     /* times 257, rounded half up, as PFM */
        assert_int_equal(((uint16_t *)image.data)[x], (int)(x * 0.5 * 257 + 0.5));
    pv_image_free(&image);

    tiff_spec rgb = {3, 2, 3, 8, 0, 0, 0, 0, 0};
    write_tiff_pages(tmp("trgb.tif", path, sizeof path), &rgb, 1, -1);
    assert_int_equal(pv_image_read(path, PV_PIXEL_RGB8, &image), PV_OK);
    for (int x = 0; x < 3; x++)
        for (int c = 0; c < 3; c++)
            assert_int_equal(((uint8_t *)image.data)[3 * x + c], (int)pattern(&rgb, 0, x, 0, c));
    pv_image_free(&image);
    assert_int_equal(pv_image_read(path, PV_PIXEL_RGB16, &image), PV_OK);
    assert_int_equal(((uint16_t *)image.data)[1], (int)pattern(&rgb, 0, 0, 0, 1) * 257);
    pv_image_free(&image);
}

static void test_tiff_volume(void **state)
{
    (void)state;
    char path[4096];
    tiff_spec s = {6, 5, 1, 16, 0, 0, 2, COMPRESSION_LZW, 1};
    write_tiff_pages(tmp("vol.tif", path, sizeof path), &s, 4, -1);
    pv_volume v;
    if (pv_volume_read_tiff(path, &v) != PV_OK)
        fail_msg("%s", pv_last_error());
    assert_int_equal(v.nx, 6);
    assert_int_equal(v.ny, 5);
    assert_int_equal(v.nz, 4);
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 6; x++)
                assert_float_equal(v.data[z * v.stride_z + y * v.stride_y + x],
                                   pattern(&s, z, x, y, 0), 0);
    pv_volume_free(&v);

    tiff_spec f = {16, 16, 1, 32, 1, 16, 0, 0, 0};
    write_tiff_pages(tmp("volf.tif", path, sizeof path), &f, 2, -1);
    assert_int_equal(pv_volume_read_tiff(path, &v), PV_OK);
    assert_int_equal(v.nz, 2);
    assert_float_equal(v.data[v.stride_z + 3 * v.stride_y + 2], pattern(&f, 1, 2, 3, 0), 0);
    pv_volume_free(&v);
}

/* 16-bit pages kept as a U16 volume by pv_volume_read_tiff_native, their
 * samples exactly; 8-bit and float pages still give F32. */
static void test_tiff_volume_native(void **state)
{
    (void)state;
    char path[4096];
    tiff_spec s = {6, 5, 1, 16, 0, 0, 2, COMPRESSION_LZW, 1};
    write_tiff_pages(tmp("vol16.tif", path, sizeof path), &s, 4, -1);
    pv_volume v;
    if (pv_volume_read_tiff_native(path, &v) != PV_OK)
        fail_msg("%s", pv_last_error());
    assert_int_equal(v.type, PV_VOLUME_U16);
    assert_int_equal(v.nz, 4);
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 6; x++)
                assert_int_equal(v.data_u16[z * v.stride_z + y * v.stride_y + x],
                                 (int)pattern(&s, z, x, y, 0));
    pv_volume_free(&v);
    tiff_spec b = {6, 5, 1, 8, 0, 0, 0, 0, 0};
    write_tiff_pages(tmp("vol8n.tif", path, sizeof path), &b, 2, -1);
    assert_int_equal(pv_volume_read_tiff_native(path, &v), PV_OK);
    assert_int_equal(v.type, PV_VOLUME_F32);
    assert_float_equal(v.data[v.stride_z + 2 * v.stride_y + 3], pattern(&b, 1, 3, 2, 0), 0);
    pv_volume_free(&v);
    /* A page that differs is refused as by pv_volume_read_tiff. */
    write_tiff_pages(tmp("vol16_odd.tif", path, sizeof path), &s, 3, 1);
    pv_volume out, before;
    memset(&out, 0, sizeof out);    /* the padding too: compared below */
    out.nx = 7;
    before = out;
    assert_int_equal(pv_volume_read_tiff_native(path, &out), PV_ERR_FORMAT);
    assert_memory_equal(&out, &before, sizeof out);
}

static void expect_volume_failure(const char *path)
{
    pv_volume v;
    memset(&v, 0, sizeof v);        /* the padding too: compared below */
    v.nx = 7;
    v.ny = 8;
    v.nz = 9;
    v.stride_y = 10;
    v.stride_z = 11;
    pv_volume before = v;
    pv_status status = pv_volume_read_tiff(path, &v);
    if (status != PV_ERR_FORMAT)
        fail_msg("%s: got %s (%s)", path, pv_status_string(status), pv_last_error());
    assert_memory_equal(&v, &before, sizeof v);
    assert_non_null(strstr(pv_last_error(), path));
}

static void expect_image_failure(const char *path)
{
    static char somewhere;
    pv_image out;
    memset(&out, 0, sizeof out);
    out.width = 7;
    out.height = 9;
    out.stride = 11;
    out.type = PV_PIXEL_F32;
    out.data = &somewhere;
    pv_image before = out;
    pv_status status = pv_image_read(path, PV_PIXEL_F32, &out);
    if (status != PV_ERR_FORMAT)
        fail_msg("%s: got %s (%s)", path, pv_status_string(status), pv_last_error());
    assert_memory_equal(&out, &before, sizeof out);
    assert_non_null(strstr(pv_last_error(), path));
}

static void test_tiff_volume_refusals(void **state)
{
    (void)state;
    char path[4096];
    tiff_spec s = {6, 5, 1, 8, 0, 0, 0, 0, 0};
    write_tiff_pages(tmp("vol_odd.tif", path, sizeof path), &s, 3, 2);
    expect_volume_failure(path);
    assert_non_null(strstr(pv_last_error(), "page 3"));
    tiff_spec rgb = {6, 5, 3, 8, 0, 0, 0, 0, 0};
    write_tiff_pages(tmp("vol_rgb.tif", path, sizeof path), &rgb, 2, -1);
    expect_volume_failure(path);
}

static uint8_t *slurp(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    uint8_t *bytes = malloc((size_t)size);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *length = (size_t)size;
    return bytes;
}

/* Either a clean PV_ERR_FORMAT or (damage that libtiff cannot see, in
 * pixel values or past the part read) success. */
static void expect_ok_or_format(const char *path)
{
    pv_image image;
    pv_status status = pv_image_read(path, PV_PIXEL_F32, &image);
    if (status == PV_OK)
        pv_image_free(&image);
    else if (status != PV_ERR_FORMAT)
        fail_msg("%s: %s", path, pv_last_error());
    pv_volume v;
    status = pv_volume_read_tiff(path, &v);
    if (status == PV_OK)
        pv_volume_free(&v);
    else if (status != PV_ERR_FORMAT)
        fail_msg("%s: %s", path, pv_last_error());
}

/* Every truncation of a small two-page file, and single-byte damage
 * across it. */
static void damaged_reads(const void *arg)
{
    (void)arg;
    char good[4096], bad[4096];
    tiff_spec s = {8, 6, 1, 16, 0, 0, 2, COMPRESSION_LZW, 0};
    write_tiff_pages(tmp("good.tif", good, sizeof good), &s, 2, -1);
    size_t length;
    uint8_t *bytes = slurp(good, &length);
    tmp("bad.tif", bad, sizeof bad);
    tu_write_file(bad, bytes, 16);
    expect_image_failure(bad);
    expect_volume_failure(bad);
    for (size_t cut = 4; cut < length; cut++) {
        tu_write_file(bad, bytes, cut);
        expect_ok_or_format(bad);
    }
    for (size_t i = 4; i < length; i++) {
        uint8_t saved = bytes[i];
        bytes[i] ^= 0x5A;
        tu_write_file(bad, bytes, length);
        expect_ok_or_format(bad);
        bytes[i] = saved;
    }
    free(bytes);
}

static void test_tiff_damaged_is_silent(void **state)
{
    (void)state;
    assert_int_equal(io_stderr_bytes_during(damaged_reads, NULL), 0);
}

/* A hand-made little-endian header whose only IFD claims width x height
 * 8-bit grey pixels in one uncompressed strip of 1 byte. */
static void write_claiming(const char *path, uint32_t width, uint32_t height)
{
    uint8_t b[8 + 2 + 8 * 12 + 4 + 1];
    memset(b, 0, sizeof b);
    memcpy(b, "II*\0\x08\0\0\0", 8);
    b[8] = 8;                           /* entries */
    const uint16_t tags[8] = {256, 257, 258, 259, 262, 273, 278, 279};
    const uint32_t values[8] = {width, height, 8, 1, 1, sizeof b - 1, height, 1};
    for (int i = 0; i < 8; i++) {
        uint8_t *e = b + 10 + 12 * i;
        e[0] = (uint8_t)tags[i];
        e[1] = (uint8_t)(tags[i] >> 8);
        e[2] = 4;                       /* LONG */
        e[4] = 1;                       /* count */
        for (int k = 0; k < 4; k++)
            e[8 + k] = (uint8_t)(values[i] >> (8 * k));
    }
    tu_write_file(path, b, sizeof b);
}

static void test_tiff_oversize_dimensions(void **state)
{
    (void)state;
    char path[4096];
    tmp("huge.tif", path, sizeof path);
    write_claiming(path, 100000, 100000);
    expect_image_failure(path);
    expect_volume_failure(path);
    pv_image_info info;
    assert_int_equal(pv_image_read_info(path, &info), PV_ERR_FORMAT);
    write_claiming(path, 0x80000000u, 1);
    expect_image_failure(path);
    write_claiming(path, 1, 1);         /* the same header, honest */
    pv_image image;
    assert_int_equal(pv_image_read(path, PV_PIXEL_U8, &image), PV_OK);
    pv_image_free(&image);
}

/* Separate sample planes are refused, not misread. */
static void test_tiff_separate_planes(void **state)
{
    (void)state;
    char path[4096];
    TIFF *t = TIFFOpen(tmp("planes.tif", path, sizeof path), "wl");
    assert_non_null(t);
    tiff_spec s = {4, 2, 3, 8, 0, 0, 0, 0, 0};
    set_page_tags(t, &s);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, (uint16_t)PLANARCONFIG_SEPARATE);
    uint8_t row[4] = {1, 2, 3, 4};
    for (uint16_t plane = 0; plane < 3; plane++)
        for (uint32_t y = 0; y < 2; y++)
            assert_int_equal(TIFFWriteScanline(t, row, y, plane), 1);
    assert_int_equal(TIFFWriteDirectory(t), 1);
    TIFFClose(t);
    expect_image_failure(path);
    assert_non_null(strstr(pv_last_error(), "separate sample planes"));
}

static void test_tiff_garbage(void **state)
{
    (void)state;
    char path[4096];
    tmp("garbage.tif", path, sizeof path);
    tu_write_file(path, "II*\0\xff\xff\xff\x7f junk", 13);
    expect_image_failure(path);
    expect_volume_failure(path);
    tu_write_file(path, "MM\0*", 4);
    expect_image_failure(path);
    tu_write_file(path, "not a tiff", 10);
    expect_volume_failure(path);
    assert_int_equal(pv_image_io_has_tiff(), 1);
    assert_int_equal(pv_volume_io_has_tiff(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiff_variants),
        cmocka_unit_test(test_tiff_pixel_types),
        cmocka_unit_test(test_tiff_volume),
        cmocka_unit_test(test_tiff_volume_native),
        cmocka_unit_test(test_tiff_volume_refusals),
        cmocka_unit_test(test_tiff_damaged_is_silent),
        cmocka_unit_test(test_tiff_oversize_dimensions),
        cmocka_unit_test(test_tiff_separate_planes),
        cmocka_unit_test(test_tiff_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !PV_HAVE_TIFF */

int main(void)
{
    /* Built without libtiff: the readers say so, and the test is skipped. */
    pv_image image;
    if (pv_image_io_has_tiff() || pv_volume_io_has_tiff())
        return 1;
    tu_write_file(tu_tmp_path("notiff.tif"), "II*\0\x08\0\0\0", 8);
    if (pv_image_read(tu_tmp_path("notiff.tif"), PV_PIXEL_U8, &image) != PV_ERR_UNSUPPORTED)
        return 1;
    return 77;
}

#endif
