/* Image I/O: round trips through PGM, PFM and PNG, hand-made files of every
 * supported variant checked against values worked out by hand, a real
 * Middlebury image, and malformed files that must fail cleanly without
 * touching the output. */
#include "test_util.h"
#include "io_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef PV_HAVE_JPEG
#include "jpeg_encode.h"
#endif

/* ------------------------------------------------------------ helpers */

/* The whole file into a malloc'ed buffer. */
static uint8_t *slurp(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    uint8_t *bytes = malloc((size_t)size + 1);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *length = (size_t)size;
    return bytes;
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static pv_image sentinel_image(void)
{
    static char somewhere;
    pv_image image;
    memset(&image, 0, sizeof image);
    image.width = 7;
    image.height = 9;
    image.stride = 11;
    image.type = PV_PIXEL_F32;
    image.data = &somewhere;
    return image;
}

/* The read fails with `expected`, leaves the output alone and names the
 * file in its message. */
static void expect_read_failure(const char *path, pv_pixel_type type, pv_status expected)
{
    pv_image out = sentinel_image();
    pv_image before = out;
    pv_status status = pv_image_read(path, type, &out);
    if (status != expected)
        fail_msg("%s: got %s, expected %s (%s)", path, pv_status_string(status),
                 pv_status_string(expected), pv_last_error());
    assert_memory_equal(&out, &before, sizeof out);
    assert_non_null(strstr(pv_last_error(), path));
}

static void read_ok(const char *path, pv_pixel_type type, pv_image *out)
{
    pv_status status = pv_image_read(path, type, out);
    if (status != PV_OK)
        fail_msg("reading %s: %s", path, pv_last_error());
    assert_int_equal(out->type, type);
    assert_true(out->stride >= out->width);
}

/* path, read back as type, holds source's size and pixels exactly. */
static void expect_copy(const char *path, pv_pixel_type type, const pv_image *source)
{
    pv_image back;
    read_ok(path, type, &back);
    assert_int_equal(back.width, source->width);
    assert_int_equal(back.height, source->height);
    for (int y = 0; y < source->height; y++)
        for (int x = 0; x < source->width; x++)
            assert_true(pv_image_get(&back, x, y) == pv_image_get(source, x, y));
    pv_image_free(&back);
}

static void expect_pixels(const pv_image *image, const float *expected, float tolerance)
{
    for (int y = 0; y < image->height; y++)
        for (int x = 0; x < image->width; x++) {
            float want = expected[y * image->width + x];
            float got = pv_image_get(image, x, y);
            if (!(fabsf(got - want) <= tolerance) && !(isinf(want) && got == want))
                fail_msg("pixel (%d, %d): got %.6g, expected %.6g", x, y, (double)got,
                         (double)want);
        }
}

/* Reads `path` as u8 and as f32 and compares both with expectations. */
static void expect_file_pixels(const char *path, int width, int height, const float *u8,
                               const float *f32, float f32_tolerance)
{
    pv_image image;
    read_ok(path, PV_PIXEL_U8, &image);
    assert_int_equal(image.width, width);
    assert_int_equal(image.height, height);
    expect_pixels(&image, u8, 0.0f);
    pv_image_free(&image);
    read_ok(path, PV_PIXEL_F32, &image);
    assert_int_equal(image.width, width);
    assert_int_equal(image.height, height);
    expect_pixels(&image, f32, f32_tolerance);
    pv_image_free(&image);
}

typedef pv_status (*image_writer)(const char *path, const pv_image *image);

/* image written by write as the file `name`, read back as u8 and f32. */
static void expect_written_pixels(const char *name, image_writer write, const pv_image *image,
                                  const float *u8, const float *f32)
{
    const char *path = tu_tmp_path(name);
    assert_int_equal(write(path, image), PV_OK);
    expect_file_pixels(path, image->width, image->height, u8, f32, 0.0f);
}

/* ------------------------------------------- hand-made PNG files */

typedef struct byte_buffer {
    uint8_t data[16384];
    size_t length;
} byte_buffer;

static void put_bytes(byte_buffer *b, const void *bytes, size_t length)
{
    assert_true(b->length + length <= sizeof b->data);
    memcpy(b->data + b->length, bytes, length);
    b->length += length;
}

static void put_byte(byte_buffer *b, uint8_t value)
{
    put_bytes(b, &value, 1);
}

static void put_be32(byte_buffer *b, uint32_t value)
{
    uint8_t bytes[4] = {(uint8_t)(value >> 24), (uint8_t)(value >> 16), (uint8_t)(value >> 8),
                        (uint8_t)value};
    put_bytes(b, bytes, 4);
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        crc ^= bytes[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc;
}

static uint32_t adler32(const uint8_t *bytes, size_t length)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < length; i++) {
        a = (a + bytes[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return b << 16 | a;
}

static void put_chunk(byte_buffer *png, const char *type, const uint8_t *data, size_t length)
{
    put_be32(png, (uint32_t)length);
    put_bytes(png, type, 4);
    if (length)
        put_bytes(png, data, length);
    uint32_t crc = crc32_update(0xFFFFFFFFu, (const uint8_t *)type, 4);
    crc = crc32_update(crc, data, length);
    put_be32(png, crc ^ 0xFFFFFFFFu);
}

/* A zlib stream of one stored (uncompressed) deflate block. */
static void zlib_stored(const uint8_t *raw, size_t length, byte_buffer *out)
{
    assert_true(length <= 65535);
    put_byte(out, 0x78);
    put_byte(out, 0x01);
    put_byte(out, 0x01);
    put_byte(out, (uint8_t)length);
    put_byte(out, (uint8_t)(length >> 8));
    put_byte(out, (uint8_t)~length);
    put_byte(out, (uint8_t)(~length >> 8));
    put_bytes(out, raw, length);
    put_be32(out, adler32(raw, length));
}

typedef struct png_spec {
    uint32_t width, height;
    uint8_t depth, color, interlace;
    const uint8_t *palette;
    size_t palette_bytes;
    const uint8_t *transparency;
    size_t transparency_bytes;
} png_spec;

/* A PNG of the given filtered scanlines (filter type 0 bytes included). */
static void build_png(byte_buffer *png, const png_spec *spec, const uint8_t *scanlines,
                      size_t length)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    byte_buffer header = {{0}, 0}, idat = {{0}, 0};
    png->length = 0;
    put_bytes(png, signature, sizeof signature);
    put_be32(&header, spec->width);
    put_be32(&header, spec->height);
    put_byte(&header, spec->depth);
    put_byte(&header, spec->color);
    put_byte(&header, 0);
    put_byte(&header, 0);
    put_byte(&header, spec->interlace);
    put_chunk(png, "IHDR", header.data, header.length);
    if (spec->palette)
        put_chunk(png, "PLTE", spec->palette, spec->palette_bytes);
    if (spec->transparency)
        put_chunk(png, "tRNS", spec->transparency, spec->transparency_bytes);
    zlib_stored(scanlines, length, &idat);
    put_chunk(png, "IDAT", idat.data, idat.length);
    put_chunk(png, "IEND", NULL, 0);
}

static void write_png_file(const char *path, const png_spec *spec, const uint8_t *scanlines,
                           size_t length)
{
    byte_buffer png = {{0}, 0};
    build_png(&png, spec, scanlines, length);
    tu_write_file(path, png.data, png.length);
}

/* The 3x2 colour test card and its luma, worked out by hand:
 * 0.299 R + 0.587 G + 0.114 B. */
static const uint8_t card_rgb[6][3] = {
    {255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {10, 20, 30}, {100, 150, 200}, {255, 255, 255}};
static const float card_luma[6] = {76.245f, 149.685f, 29.07f, 18.15f, 140.75f, 255.0f};
static const float card_luma_u8[6] = {76, 150, 29, 18, 141, 255};

/* ------------------------------------------------------ PGM / PPM */

static void test_pgm_u8_round_trip(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("round_trip_u8.pgm");
    pv_image source;
    tu_guarded_alloc(&source, 37, 23, PV_PIXEL_U8, 3); /* stride wider than the rows */
    tu_fill_random(&source, 42);
    assert_int_equal(pv_image_write_pgm(path, &source), PV_OK);

    expect_copy(path, PV_PIXEL_U8, &source);
    expect_copy(path, PV_PIXEL_F32, &source);
    assert_true(tu_guard_intact(&source, 3));
    tu_guarded_free(&source, 3);
}

static void test_pgm_header_written_as_netpbm_says(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("header.pgm");
    uint8_t pixels[6] = {0, 1, 2, 253, 254, 255};
    pv_image image = pv_image_wrap(pixels, 3, 2, PV_PIXEL_U8);
    assert_int_equal(pv_image_write_pgm(path, &image), PV_OK);
    size_t length;
    uint8_t *bytes = slurp(path, &length);
    static const char expected[] = "P5\n3 2\n255\n\x00\x01\x02\xfd\xfe\xff";
    assert_int_equal(length, sizeof expected - 1);
    assert_memory_equal(bytes, expected, length);
    free(bytes);
}

static void test_pgm_f32_write_clamps_and_rounds(void **state)
{
    (void)state;
    float values[8] = {-5.0f, 0.4f, 0.5f, 127.49f, 254.6f, 300.0f, NAN, INFINITY};
    const float expected[8] = {0, 0, 1, 127, 255, 255, 0, 255};
    pv_image image = pv_image_wrap(values, 4, 2, PV_PIXEL_F32);
    expect_written_pixels("clamped.pgm", pv_image_write_pgm, &image, expected, expected);
}

static void test_pgm_16bit_read(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("deep.pgm");
    /* Comments anywhere in the header; samples big-endian; maxval 1000. */
    static const char file[] = "P5\n# a comment\n3 # width\n2\n# maxval next\n1000\n"
                               "\x00\x00\x03\xe8\x01\xf4" /* 0 1000 500 */
                               "\x01\x01\x03\xe7\x00\x01"; /* 257 999 1 */
    tu_write_file(path, file, sizeof file - 1);
    const float f32[6] = {0, 1000, 500, 257, 999, 1};
    /* u8: round(v * 255 / 1000) */
    const float u8[6] = {0, 255, 128, 66, 255, 0};
    expect_file_pixels(path, 3, 2, u8, f32, 0.0f);
}

static void test_pgm_small_maxval_kept_as_is(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("maxval15.pgm");
    static const char file[] = "P5 2 2 15\n\x00\x05\x0a\x0f";
    tu_write_file(path, file, sizeof file - 1);
    const float values[4] = {0, 5, 10, 15};
    expect_file_pixels(path, 2, 2, values, values, 0.0f);
}

static void test_ppm_colour_to_luma(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("card.ppm");
    uint8_t file[64];
    int header = snprintf((char *)file, sizeof file, "P6\n3 2\n255\n");
    memcpy(file + header, card_rgb, sizeof card_rgb);
    tu_write_file(path, file, (size_t)header + sizeof card_rgb);
    expect_file_pixels(path, 3, 2, card_luma_u8, card_luma, 1e-3f);
}

static void test_ppm_16bit_colour_to_luma(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("deep.ppm");
    static const char file[] = "P6\n2 1\n65535\n"
                               "\xff\xff\x00\x00\x00\x00"  /* pure red at full scale */
                               "\x80\x00\x80\x00\x80\x00"; /* grey 32768 */
    tu_write_file(path, file, sizeof file - 1);
    const float f32[2] = {0.299f * 65535.0f, 32768.0f};
    /* u8: luma * 255 / 65535 -> 76.245 and 127.50 */
    const float u8[2] = {76, 128};
    expect_file_pixels(path, 2, 1, u8, f32, 1e-2f);
}

static void test_ascii_pgm_and_ppm(void **state)
{
    (void)state;
    const char *pgm = tu_tmp_path("plain.pgm");
    static const char grey[] = "P2\n# plain\n3 2\n300\n0 150 300\n  299\n\n1 2";
    tu_write_file(pgm, grey, sizeof grey - 1);
    const float grey_f32[6] = {0, 150, 300, 299, 1, 2};
    const float grey_u8[6] = {0, 128, 255, 254, 1, 2}; /* round(v * 255 / 300) */
    expect_file_pixels(pgm, 3, 2, grey_u8, grey_f32, 0.0f);

    const char *ppm = tu_tmp_path("plain.ppm");
    char text[256];
    int length = snprintf(text, sizeof text, "P3 3 2 255\n");
    for (int i = 0; i < 6; i++)
        length += snprintf(text + length, sizeof text - (size_t)length, "%d %d %d\n",
                           card_rgb[i][0], card_rgb[i][1], card_rgb[i][2]);
    tu_write_file(ppm, text, (size_t)length);
    expect_file_pixels(ppm, 3, 2, card_luma_u8, card_luma, 1e-3f);
}

/* ------------------------------------------------------------- PFM */

static void put_le_float(uint8_t *out, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(bits >> (8 * i));
}

static void put_be_float(uint8_t *out, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(bits >> (24 - 8 * i));
}

static void test_pfm_round_trip_with_infinity(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("round_trip.pfm");
    float values[6] = {1.5f, -INFINITY, 1e-30f, INFINITY, -2.25f, 123456.789f};
    pv_image image = pv_image_wrap(values, 3, 2, PV_PIXEL_F32);
    assert_int_equal(pv_image_write_pfm(path, &image), PV_OK);

    /* The file: header, then the bottom row first, little-endian. */
    uint8_t expected[12 + 24];
    memcpy(expected, "Pf\n3 2\n-1\n", 10);
    size_t header = 10;
    for (int i = 0; i < 3; i++) {
        put_le_float(expected + header + 4 * i, values[3 + i]);
        put_le_float(expected + header + 12 + 4 * i, values[i]);
    }
    size_t length;
    uint8_t *bytes = slurp(path, &length);
    assert_int_equal(length, header + 24);
    assert_memory_equal(bytes, expected, length);
    free(bytes);

    pv_image back;
    read_ok(path, PV_PIXEL_F32, &back);
    assert_int_equal(back.width, 3);
    assert_int_equal(back.height, 2);
    for (int i = 0; i < 6; i++) {
        float got = pv_image_get(&back, i % 3, i / 3);
        assert_memory_equal(&got, &values[i], sizeof got);
    }
    pv_image_free(&back);
}

static void test_pfm_big_endian_rows_bottom_up(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("big_endian.pfm");
    /* Positive scale: big-endian.  File rows [1 2] then [3 4]: the image's
     * top row is the file's last. */
    uint8_t file[32] = "Pf\n2 2\n1.0\n";
    size_t header = strlen((const char *)file);
    const float stored[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++)
        put_be_float(file + header + 4 * i, stored[i]);
    tu_write_file(path, file, header + 16);
    const float image[4] = {3, 4, 1, 2};
    expect_file_pixels(path, 2, 2, image, image, 0.0f);
}

static void test_pfm_colour_little_endian_to_luma(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("colour.pfm");
    uint8_t file[128] = "PF\n3 1\n-0.5\n";
    size_t header = strlen((const char *)file);
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 3; c++)
            put_le_float(file + header + 12 * i + 4 * c, card_rgb[i][c]);
    tu_write_file(path, file, header + 36);
    expect_file_pixels(path, 3, 1, card_luma_u8, card_luma, 1e-3f);
}

static void test_pfm_to_u8_rounds_and_clamps(void **state)
{
    (void)state;
    float values[6] = {-1.0f, 2.5f, 254.4f, 1000.0f, INFINITY, -INFINITY};
    const float u8[6] = {0, 3, 254, 255, 255, 0};
    pv_image image = pv_image_wrap(values, 6, 1, PV_PIXEL_F32);
    expect_written_pixels("to_u8.pfm", pv_image_write_pfm, &image, u8, values);
}

static void test_pfm_of_u8_image_keeps_values(void **state)
{
    (void)state;
    uint8_t values[4] = {0, 7, 128, 255};
    const float expected[4] = {0, 7, 128, 255};
    pv_image image = pv_image_wrap(values, 2, 2, PV_PIXEL_U8);
    expect_written_pixels("from_u8.pfm", pv_image_write_pfm, &image, expected, expected);
}

/* ------------------------------------------------------------- PNG */

static void test_png_grey_round_trip(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("round_trip.png");
    pv_image source;
    tu_guarded_alloc(&source, 61, 17, PV_PIXEL_U8, 2);
    tu_fill_random(&source, 7);
    assert_int_equal(pv_image_write_png(path, &source), PV_OK);
    expect_copy(path, PV_PIXEL_U8, &source);
    tu_guarded_free(&source, 2);
}

static void test_png_of_f32_clamps_and_rounds(void **state)
{
    (void)state;
    float values[6] = {-3.0f, 0.5f, 99.5f, 254.5f, 1e9f, NAN};
    const float expected[6] = {0, 1, 100, 255, 255, 0};
    pv_image image = pv_image_wrap(values, 3, 2, PV_PIXEL_F32);
    expect_written_pixels("clamped.png", pv_image_write_png, &image, expected, expected);
}

static void test_png_rgb_and_rgba(void **state)
{
    (void)state;
    uint8_t rgb[2 * (1 + 9)], rgba[2 * (1 + 12)];
    for (int y = 0; y < 2; y++) {
        rgb[y * 10] = 0;
        rgba[y * 13] = 0;
        for (int x = 0; x < 3; x++) {
            memcpy(rgb + y * 10 + 1 + 3 * x, card_rgb[3 * y + x], 3);
            memcpy(rgba + y * 13 + 1 + 4 * x, card_rgb[3 * y + x], 3);
            rgba[y * 13 + 1 + 4 * x + 3] = (uint8_t)(40 * (3 * y + x)); /* alpha is dropped */
        }
    }
    png_spec spec = {3, 2, 8, 2, 0, NULL, 0, NULL, 0};
    const char *path = tu_tmp_path("rgb.png");
    write_png_file(path, &spec, rgb, sizeof rgb);
    expect_file_pixels(path, 3, 2, card_luma_u8, card_luma, 1e-3f);

    spec.color = 6;
    path = tu_tmp_path("rgba.png");
    write_png_file(path, &spec, rgba, sizeof rgba);
    expect_file_pixels(path, 3, 2, card_luma_u8, card_luma, 1e-3f);
}

static void test_png_grey_alpha_and_palette(void **state)
{
    (void)state;
    const uint8_t grey_alpha[] = {0, 10, 255, 200, 0, 30, 7};
    png_spec spec = {3, 1, 8, 4, 0, NULL, 0, NULL, 0};
    const char *path = tu_tmp_path("grey_alpha.png");
    write_png_file(path, &spec, grey_alpha, sizeof grey_alpha);
    const float grey[3] = {10, 200, 30};
    expect_file_pixels(path, 3, 1, grey, grey, 0.0f);

    uint8_t palette[6 * 3];
    memcpy(palette, card_rgb, sizeof palette);
    const uint8_t indices[] = {0, 0, 5, 3, 0, 0, 1, 2, 3, 3};
    spec = (png_spec){4, 2, 8, 3, 0, palette, sizeof palette, NULL, 0};
    path = tu_tmp_path("palette.png");
    write_png_file(path, &spec, indices, sizeof indices);
    const float u8[8] = {76, 255, 18, 76, 150, 29, 18, 18};
    const float f32[8] = {76.245f, 255.0f, 18.15f, 76.245f, 149.685f, 29.07f, 18.15f, 18.15f};
    expect_file_pixels(path, 4, 2, u8, f32, 1e-3f);

    /* A tRNS chunk makes libpng add alpha while expanding the palette. */
    const uint8_t transparency[3] = {0, 128, 255};
    spec.transparency = transparency;
    spec.transparency_bytes = sizeof transparency;
    path = tu_tmp_path("palette_trns.png");
    write_png_file(path, &spec, indices, sizeof indices);
    expect_file_pixels(path, 4, 2, u8, f32, 1e-3f);
}

static void test_png_16bit_and_1bit_grey(void **state)
{
    (void)state;
    const uint8_t deep[] = {0, 0x00, 0x00, 0xff, 0xff, 0x64, 0x64, 0x03, 0xe8};
    png_spec spec = {4, 1, 16, 0, 0, NULL, 0, NULL, 0};
    const char *path = tu_tmp_path("grey16.png");
    write_png_file(path, &spec, deep, sizeof deep);
    const float f32[4] = {0, 65535, 25700, 1000};
    const float u8[4] = {0, 255, 100, 4}; /* round(v * 255 / 65535) */
    expect_file_pixels(path, 4, 1, u8, f32, 0.0f);

    /* Two rows of 9 one-bit pixels: 101100000 and 010000000. */
    const uint8_t rows[2 * 3] = {0, 0xb0, 0x00, 0, 0x40, 0x00};
    spec = (png_spec){9, 2, 1, 0, 0, NULL, 0, NULL, 0};
    path = tu_tmp_path("grey1.png");
    write_png_file(path, &spec, rows, sizeof rows);
    const float expanded[18] = {255, 0, 255, 255, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0};
    expect_file_pixels(path, 9, 2, expanded, expanded, 0.0f);
}

/* Adam7 scanlines of an 8-bit grey image (filter bytes included). */
static size_t adam7_scanlines(const uint8_t *pixels, int width, int height, uint8_t *out)
{
    static const int start_x[7] = {0, 4, 0, 2, 0, 1, 0}, start_y[7] = {0, 0, 4, 0, 2, 0, 1};
    static const int step_x[7] = {8, 8, 4, 4, 2, 2, 1}, step_y[7] = {8, 8, 8, 4, 4, 2, 2};
    size_t length = 0;
    for (int pass = 0; pass < 7; pass++) {
        if (start_x[pass] >= width)
            continue;
        for (int y = start_y[pass]; y < height; y += step_y[pass]) {
            out[length++] = 0;
            for (int x = start_x[pass]; x < width; x += step_x[pass])
                out[length++] = pixels[y * width + x];
        }
    }
    return length;
}

static void test_png_interlaced(void **state)
{
    (void)state;
    enum { W = 11, H = 9 };
    uint8_t pixels[W * H], scanlines[2 * W * H];
    float expected[W * H];
    for (int i = 0; i < W * H; i++) {
        pixels[i] = (uint8_t)(i * 37 + 5);
        expected[i] = pixels[i];
    }
    size_t length = adam7_scanlines(pixels, W, H, scanlines);
    png_spec spec = {W, H, 8, 0, 1, NULL, 0, NULL, 0};
    const char *path = tu_tmp_path("interlaced.png");
    write_png_file(path, &spec, scanlines, length);
    expect_file_pixels(path, W, H, expected, expected, 0.0f);
}

static void test_png_truncated(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("whole.png");
    pv_image source;
    assert_int_equal(pv_image_alloc(&source, 64, 64, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&source, 99); /* noise: the IDAT stays large */
    assert_int_equal(pv_image_write_png(path, &source), PV_OK);
    pv_image_free(&source);
    size_t length;
    uint8_t *bytes = slurp(path, &length);
    assert_true(length > 4096);
    const size_t cuts[] = {8, 12, 20, 33, 40, length / 2, length - 13, length - 1};
    const char *cut_path = tu_tmp_path("truncated.png");
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tu_write_file(cut_path, bytes, cuts[i]);
        expect_read_failure(cut_path, PV_PIXEL_U8, PV_ERR_FORMAT);
        expect_read_failure(cut_path, PV_PIXEL_F32, PV_ERR_FORMAT);
    }
    free(bytes);
}

static void test_png_corrupt(void **state)
{
    (void)state;
    const uint8_t rows[] = {0, 1, 2, 0, 3, 4};
    png_spec spec = {2, 2, 8, 0, 0, NULL, 0, NULL, 0};
    byte_buffer png = {{0}, 0};
    const char *path = tu_tmp_path("corrupt.png");

    build_png(&png, &spec, rows, sizeof rows);
    png.data[29] ^= 0x01; /* the IHDR CRC */
    tu_write_file(path, png.data, png.length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);

    build_png(&png, &spec, rows, sizeof rows);
    png.data[33 + 8] = 0x00; /* the zlib header of the IDAT (CRC fixed below) */
    uint32_t crc = crc32_update(0xFFFFFFFFu, png.data + 37, 4 + 2 + 5 + 6 + 4) ^ 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++)
        png.data[37 + 4 + 17 + i] = (uint8_t)(crc >> (24 - 8 * i));
    tu_write_file(path, png.data, png.length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);

    /* Too few rows in the image data. */
    build_png(&png, &spec, rows, 3);
    tu_write_file(path, png.data, png.length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);

    /* A header claiming 10^6 x 10^6 (libpng's own limit) on a file of a
     * few dozen bytes: refused before a terabyte is asked for. */
    spec.width = spec.height = 1000000;
    build_png(&png, &spec, rows, sizeof rows);
    tu_write_file(path, png.data, png.length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);

    /* Bit depth 16 is not allowed with a palette. */
    spec = (png_spec){2, 2, 16, 3, 0, NULL, 0, NULL, 0};
    build_png(&png, &spec, rows, sizeof rows);
    tu_write_file(path, png.data, png.length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);
}

/* ------------------------------------------- PNG allocation bounds */

static void file_chunk(FILE *f, const char *type, const uint8_t *data, size_t length)
{
    uint8_t be[4] = {(uint8_t)(length >> 24), (uint8_t)(length >> 16), (uint8_t)(length >> 8),
                     (uint8_t)length};
    assert_int_equal(fwrite(be, 1, 4, f), 4);
    assert_int_equal(fwrite(type, 1, 4, f), 4);
    if (length)
        assert_int_equal(fwrite(data, 1, length, f), length);
    uint32_t crc = crc32_update(0xFFFFFFFFu, (const uint8_t *)type, 4);
    crc = crc32_update(crc, data, length) ^ 0xFFFFFFFFu;
    uint8_t c[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8),
                    (uint8_t)crc};
    assert_int_equal(fwrite(c, 1, 4, f), 4);
}

/* A 16000x16000 8-bit grey PNG header (256 Mpixel: 1 GB as f32) with
 * `idat` bytes of image data and `after` bytes of junk after IEND. */
static void write_inflated_png(const char *path, const uint8_t *idat, size_t idat_length,
                               size_t after)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const uint8_t ihdr[13] = {0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80, 8, 0, 0, 0, 0};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(signature, 1, 8, f), 8);
    file_chunk(f, "IHDR", ihdr, sizeof ihdr);
    file_chunk(f, "IDAT", idat, idat_length);
    file_chunk(f, "IEND", NULL, 0);
    for (size_t i = 0; i < after; i++)
        putc((int)(i * 7919 % 251), f);
    assert_int_equal(fclose(f), 0);
}

typedef struct limited_image_read {
    const char *path;
    pv_pixel_type type;
} limited_image_read;

static pv_status read_image_into_sentinel(const void *arg, int *untouched)
{
    const limited_image_read *read = arg;
    pv_image out = sentinel_image(), before = out;
    pv_status status = pv_image_read(read->path, read->type, &out);
    *untouched = memcmp(&out, &before, sizeof out) == 0;
    return status;
}

/* The read fails with a format error naming `what` while its address space
 * may grow by 64 MiB only. */
static void expect_bounded_refusal(const char *path, const char *what)
{
    for (int t = 0; t < 2; t++) {
        limited_image_read read = {path, t ? PV_PIXEL_F32 : PV_PIXEL_U8};
        io_limited_result r;
        io_run_limited(read_image_into_sentinel, &read, 64, &r);
        if (r.status != PV_ERR_FORMAT || !strstr(r.message, what))
            fail_msg("%s: got %s (%s), expected a format error naming '%s'", path,
                     pv_status_string(r.status), r.message, what);
        assert_true(r.untouched);
    }
}

/* Before: the bound used the whole file's size, so 300 KB of junk after
 * IEND let a header claim 256 Mpixels (1 GB as f32) that were allocated
 * before libpng found the data missing. */
static void test_png_bound_by_idat_not_file_size(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("inflated.png");
    const uint8_t tiny[] = {0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff, 0, 0, 0, 1};
    write_inflated_png(path, tiny, sizeof tiny, 300000);
    expect_bounded_refusal(path, "IDAT");
}

/* 300 KB of junk inside the IDAT passes the ratio bound; the output grows
 * only as rows decode, so the junk costs a few rows, not the image. */
static void test_png_junk_idat_costs_only_rows(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("junk_idat.png");
    uint8_t *junk = malloc(300000);
    assert_non_null(junk);
    junk[0] = 0x78;
    junk[1] = 0x01;
    for (size_t i = 2; i < 300000; i++)
        junk[i] = (uint8_t)(i * 2654435761u >> 13);
    write_inflated_png(path, junk, 300000, 0);
    free(junk);
    expect_bounded_refusal(path, path);
}

/* ---------------------------------------------------------------- JPEG */

#ifdef PV_HAVE_JPEG

/* A JPEG made by libjpeg's encoder: quality 100 (all quantisers 1),
 * 4:4:4 sampling, so flat 8x8 blocks decode to their exact value. */
static void write_jpeg(const char *path, const uint8_t *pixels, int width, int height,
                       int components, int progressive)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    jpeg_encode_begin(&c, &err, f, width, height, components, 100);
    for (int i = 0; i < c.num_components; i++)
        c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < height; y++) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)y * width * components);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    assert_int_equal(fclose(f), 0);
}

/* libjpeg's own RGB decode of a file, folded with the documented weights:
 * the reference the reader's f32 output must equal. */
static void reference_luma(const char *path, float *out, int width, int height)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr err;
    d.err = jpeg_std_error(&err);
    jpeg_create_decompress(&d);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    jpeg_stdio_src(&d, f);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_RGB;
    jpeg_start_decompress(&d);
    assert_int_equal(d.output_width, width);
    uint8_t *row = malloc((size_t)width * 3);
    assert_non_null(row);
    for (int y = 0; y < height; y++) {
        jpeg_read_scanlines(&d, &row, 1);
        for (int x = 0; x < width; x++)
            out[y * width + x] =
                (float)(0.299 * row[3 * x] + 0.587 * row[3 * x + 1] + 0.114 * row[3 * x + 2]);
    }
    free(row);
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    fclose(f);
}

/* Two flat 8x8 blocks, 100 and 200: exact at quality 100, baseline and
 * progressive alike. */
static void test_jpeg_grey_known_values(void **state)
{
    (void)state;
    uint8_t pixels[16 * 8];
    float expected[16 * 8];
    for (int i = 0; i < 16 * 8; i++)
        expected[i] = pixels[i] = (uint8_t)(i % 16 < 8 ? 100 : 200);
    for (int progressive = 0; progressive <= 1; progressive++) {
        const char *path = tu_tmp_path(progressive ? "grey_p.jpg" : "grey.jpg");
        write_jpeg(path, pixels, 16, 8, 1, progressive);
        expect_file_pixels(path, 16, 8, expected, expected, 0.0f);
    }
}

/* A flat colour: the luma of the decoded RGB, 0.299 R + 0.587 G + 0.114 B
 * (the original (200, 100, 50) gives 124.2; the YCbCr round trip moves
 * each channel by at most 1, so the luma by at most 1), and exactly the
 * luma of libjpeg's own RGB decode. */
static void test_jpeg_colour_to_luma(void **state)
{
    (void)state;
    enum { W = 24, H = 16 };
    static uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H; i++) {
        rgb[3 * i] = 200;
        rgb[3 * i + 1] = 100;
        rgb[3 * i + 2] = 50;
    }
    const char *path = tu_tmp_path("colour.jpg");
    write_jpeg(path, rgb, W, H, 3, 0);
    static float reference[W * H], near[W * H], rounded[W * H];
    reference_luma(path, reference, W, H);
    for (int i = 0; i < W * H; i++) {
        near[i] = 124.2f;
        rounded[i] = (float)(int)(reference[i] + 0.5f);
    }
    pv_image image;
    read_ok(path, PV_PIXEL_F32, &image);
    expect_pixels(&image, near, 1.0f);
    expect_pixels(&image, reference, 1e-4f);
    pv_image_free(&image);
    read_ok(path, PV_PIXEL_U8, &image);
    expect_pixels(&image, rounded, 0.0f);
    pv_image_free(&image);

    pv_image_info info;
    assert_int_equal(pv_image_read_info(path, &info), PV_OK);
    assert_int_equal(info.format, PV_IMAGE_FORMAT_JPEG);
    assert_int_equal(info.width, W);
    assert_int_equal(info.height, H);
    assert_int_equal(info.channels, 3);
    assert_int_equal(info.bits, 8);
}

static uint8_t *noise_jpeg(const char *path, size_t *length)
{
    enum { W = 64, H = 48 };
    static uint8_t rgb[W * H * 3];
    uint32_t seed = 17;
    for (size_t i = 0; i < sizeof rgb; i++)
        rgb[i] = (uint8_t)(tu_rand(&seed) >> 24);
    write_jpeg(path, rgb, W, H, 3, 0);
    return slurp(path, length);
}

/* Cut anywhere, with a lying frame header, or with junk in place of
 * markers: refused, never decoded into grey blocks, never printed. */
static void test_jpeg_damaged(void **state)
{
    (void)state;
    size_t length;
    uint8_t *bytes = noise_jpeg(tu_tmp_path("noise.jpg"), &length);
    const char *path = tu_tmp_path("damaged.jpg");
    const size_t cuts[] = {3, 20, 200, length / 2, length - 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tu_write_file(path, bytes, cuts[i]);
        expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);
        expect_read_failure(path, PV_PIXEL_F32, PV_ERR_FORMAT);
    }
    /* The SOF0 frame claims 65000 x 65000 (4 Gpixel) in a few KB. */
    size_t sof = 2;
    while (sof + 9 < length && !(bytes[sof] == 0xFF && bytes[sof + 1] == 0xC0))
        sof++;
    assert_true(sof + 9 < length);
    uint8_t *lying = malloc(length);
    assert_non_null(lying);
    memcpy(lying, bytes, length);
    lying[sof + 5] = lying[sof + 7] = 0xFD;
    lying[sof + 6] = lying[sof + 8] = 0xE8;
    tu_write_file(path, lying, length);
    expect_read_failure(path, PV_PIXEL_F32, PV_ERR_FORMAT);
    assert_non_null(strstr(pv_last_error(), "65000x65000"));
    pv_image_info info = {PV_IMAGE_FORMAT_PGM, 1, 2, 3, 4}, before = info;
    assert_int_equal(pv_image_read_info(path, &info), PV_ERR_FORMAT);
    assert_memory_equal(&info, &before, sizeof info);
    /* Junk bytes between the header and the scan data. */
    memcpy(lying, bytes, length);
    for (size_t i = sof; i < sof + 40 && i < length; i++)
        lying[i] = 0x55;
    tu_write_file(path, lying, length);
    expect_read_failure(path, PV_PIXEL_U8, PV_ERR_FORMAT);
    free(lying);
    free(bytes);
}

static void bad_jpeg_reads(const void *arg)
{
    (void)arg;
    size_t length;
    uint8_t *bytes = noise_jpeg(tu_tmp_path("noise.jpg"), &length);
    const char *path = tu_tmp_path("quiet.jpg");
    pv_image out;
    for (size_t cut = 3; cut < length; cut += length / 17) {
        tu_write_file(path, bytes, cut);
        (void)pv_image_read(path, PV_PIXEL_U8, &out);
    }
    for (size_t i = length / 2; i < length / 2 + 8; i++)
        bytes[i] = 0xFF;
    tu_write_file(path, bytes, length);
    if (pv_image_read(path, PV_PIXEL_U8, &out) == PV_OK)
        pv_image_free(&out);
    free(bytes);
}

static void test_jpeg_never_prints(void **state)
{
    (void)state;
    assert_int_equal(io_stderr_bytes_during(bad_jpeg_reads, NULL), 0);
}

#endif /* PV_HAVE_JPEG */

/* -------------------------------------------------------------- info */

static void expect_info(const char *path, pv_image_format format, int width, int height,
                        int channels, int bits)
{
    pv_image_info info;
    if (pv_image_read_info(path, &info) != PV_OK)
        fail_msg("%s: %s", path, pv_last_error());
    assert_int_equal(info.format, format);
    assert_int_equal(info.width, width);
    assert_int_equal(info.height, height);
    assert_int_equal(info.channels, channels);
    assert_int_equal(info.bits, bits);
}

static void test_image_read_info(void **state)
{
    (void)state;
    tu_write_file(tu_tmp_path("i16.pgm"), "P5 2 1 65535\n\0\1\2\3", 17);
    expect_info(tu_tmp_path("i16.pgm"), PV_IMAGE_FORMAT_PGM, 2, 1, 1, 16);
    tu_write_file(tu_tmp_path("i.ppm"), "P3 1 1 15\n1 2 3\n", 16);
    expect_info(tu_tmp_path("i.ppm"), PV_IMAGE_FORMAT_PPM, 1, 1, 3, 4);
    tu_write_file(tu_tmp_path("i.pfm"), "PF 1 1 -1\n\0\0\0\0\0\0\0\0\0\0\0\0", 22);
    expect_info(tu_tmp_path("i.pfm"), PV_IMAGE_FORMAT_PFM, 1, 1, 3, 32);
    const uint8_t rgba[] = {0, 1, 2, 3, 4};
    png_spec spec = {1, 1, 8, 6, 0, NULL, 0, NULL, 0};
    write_png_file(tu_tmp_path("i.png"), &spec, rgba, sizeof rgba);
    expect_info(tu_tmp_path("i.png"), PV_IMAGE_FORMAT_PNG, 1, 1, 4, 8);
    const uint8_t palette[6] = {0, 0, 0, 255, 255, 255}, index[2] = {0, 0x80};
    spec = (png_spec){2, 1, 1, 3, 0, palette, 6, NULL, 0};
    write_png_file(tu_tmp_path("p.png"), &spec, index, sizeof index);
    expect_info(tu_tmp_path("p.png"), PV_IMAGE_FORMAT_PNG, 2, 1, 3, 1);

    pv_image_info info = {PV_IMAGE_FORMAT_PGM, 1, 2, 3, 4}, before = info;
    assert_int_equal(pv_image_read_info(NULL, &info), PV_ERR_INVALID);
    assert_int_equal(pv_image_read_info(tu_tmp_path("i.png"), NULL), PV_ERR_INVALID);
    tu_write_file(tu_tmp_path("huge.pgm"), "P5 100000 100000 255\n\0", 22);
    assert_int_equal(pv_image_read_info(tu_tmp_path("huge.pgm"), &info), PV_ERR_FORMAT);
    assert_int_equal(pv_image_read_info(tu_tmp_path("absent.pgm"), &info), PV_ERR_IO);
    assert_memory_equal(&info, &before, sizeof info);
    assert_int_equal(pv_image_io_has_jpeg(),
#ifdef PV_HAVE_JPEG
                     1
#else
                     0
#endif
    );
}

/* ------------------------------------------------------ a real image */

static void test_venus_left(void **state)
{
    (void)state;
    const char *path = tu_data_path("stereo/venus/left.pgm");
    pv_image u8, f32;
    read_ok(path, PV_PIXEL_U8, &u8);
    assert_int_equal(u8.width, 434);
    assert_int_equal(u8.height, 383);
    /* Worked out from the raw bytes after the 46-byte header. */
    const int probes[7][3] = {{0, 0, 66},     {1, 0, 65},     {433, 0, 81},  {0, 382, 131},
                              {433, 382, 104}, {200, 150, 140}, {100, 300, 116}};
    for (int i = 0; i < 7; i++)
        assert_true(pv_image_get(&u8, probes[i][0], probes[i][1]) == (float)probes[i][2]);
    read_ok(path, PV_PIXEL_F32, &f32);
    for (int y = 0; y < u8.height; y++)
        for (int x = 0; x < u8.width; x++)
            assert_true(pv_image_get(&f32, x, y) == pv_image_get(&u8, x, y));
    image_list_free(&u8, &f32, NULL);
}

/* ------------------------------------------------------ by extension */

static void test_write_by_extension(void **state)
{
    (void)state;
    float values[4] = {0.25f, 10.0f, 200.0f, INFINITY};
    pv_image image = pv_image_wrap(values, 2, 2, PV_PIXEL_F32);
    static const char *const names[3] = {"ext.PGM", "ext.Pfm", "ext.png"};
    static const char *const magics[3] = {"P5", "Pf", "\x89PNG"};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", tu_tmp_path(names[i]));
        assert_int_equal(pv_image_write(path, &image), PV_OK);
        size_t length;
        uint8_t *bytes = slurp(path, &length);
        assert_true(length > 4);
        assert_memory_equal(bytes, magics[i], strlen(magics[i]));
        free(bytes);
    }
    const float rounded[4] = {0, 10, 200, 255};
    expect_file_pixels(tu_tmp_path("ext.png"), 2, 2, rounded, rounded, 0.0f);

    static const char *const bad[4] = {"ext.jpg", "no_extension", "dir.pgm/name", "ext.pgmx"};
    for (int i = 0; i < 4; i++) {
        const char *path = tu_tmp_path(bad[i]);
        assert_int_equal(pv_image_write(path, &image), PV_ERR_INVALID);
        assert_false(file_exists(path));
    }
    assert_int_equal(pv_image_write(NULL, &image), PV_ERR_INVALID);
}

/* --------------------------------------------------------- bad input */

static void test_write_bad_arguments(void **state)
{
    (void)state;
    typedef pv_status (*writer)(const char *, const pv_image *);
    const writer writers[4] = {pv_image_write_pgm, pv_image_write_pfm, pv_image_write_png,
                               pv_image_write};
    uint8_t pixels[16] = {0};
    pv_image good = pv_image_wrap(pixels, 4, 4, PV_PIXEL_U8);
    pv_image bad[5] = {good, good, good, good, good};
    bad[0].data = NULL;
    bad[1].width = 0;
    bad[2].height = -1;
    bad[3].stride = 3;
    bad[4].type = (pv_pixel_type)7;
    const char *path = tu_tmp_path("never_written.pgm");
    remove(path);
    for (int w = 0; w < 4; w++) {
        assert_int_equal(writers[w](NULL, &good), PV_ERR_INVALID);
        assert_int_equal(writers[w](path, NULL), PV_ERR_INVALID);
        for (int i = 0; i < 5; i++)
            assert_int_equal(writers[w](path, &bad[i]), PV_ERR_INVALID);
        assert_false(file_exists(path));
    }
}

static void test_write_failure_is_io(void **state)
{
    (void)state;
    uint8_t pixels[4096] = {0};
    pv_image image = pv_image_wrap(pixels, 64, 64, PV_PIXEL_U8);
    const char *missing = tu_tmp_path("no_such_dir/out.pgm");
    assert_int_equal(pv_image_write_pgm(missing, &image), PV_ERR_IO);
    assert_non_null(strstr(pv_last_error(), missing));
    assert_int_equal(pv_image_write_pfm(missing, &image), PV_ERR_IO);
    assert_int_equal(pv_image_write_png(missing, &image), PV_ERR_IO);
    /* Not as root: were the library ever to remove the device after the
     * failed write (it must only remove regular files), root could. */
    if (geteuid() != 0 && access("/dev/full", W_OK) == 0) {
        /* Writing succeeds into the stdio buffer; the flush fails. */
        assert_int_equal(pv_image_write_pgm("/dev/full", &image), PV_ERR_IO);
        assert_int_equal(pv_image_write_pfm("/dev/full", &image), PV_ERR_IO);
        assert_int_equal(pv_image_write_png("/dev/full", &image), PV_ERR_IO);
        assert_true(file_exists("/dev/full"));
    }
}

/* A file-size limit makes writes fail part way, as a full disk would:
 * the half-written file must not be left behind. */
static void test_failed_write_removes_partial_file(void **state)
{
    (void)state;
    pv_image image;
    assert_int_equal(pv_image_alloc(&image, 64, 64, PV_PIXEL_U8), PV_OK);
    tu_fill_random(&image, 3); /* noise: the PNG stays large too */
    struct rlimit saved, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small = saved;
    small.rlim_cur = 1000;
    void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    static const char *const names[3] = {"limited.pgm", "limited.pfm", "limited.png"};
    pv_status statuses[3];
    for (int i = 0; i < 3; i++)
        statuses[i] = pv_image_write(tu_tmp_path(names[i]), &image);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, saved_handler);
    pv_image_free(&image);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(statuses[i], PV_ERR_IO);
        assert_false(file_exists(tu_tmp_path(names[i])));
    }
}

static void test_read_bad_arguments(void **state)
{
    (void)state;
    const char *path = tu_data_path("stereo/venus/left.pgm");
    pv_image out = sentinel_image(), before = out;
    assert_int_equal(pv_image_read(NULL, PV_PIXEL_U8, &out), PV_ERR_INVALID);
    assert_int_equal(pv_image_read(path, PV_PIXEL_U8, NULL), PV_ERR_INVALID);
    assert_int_equal(pv_image_read(path, (pv_pixel_type)0, &out), PV_ERR_INVALID);
    assert_int_equal(pv_image_read(path, (pv_pixel_type)3, &out), PV_ERR_INVALID);
    assert_memory_equal(&out, &before, sizeof out);
}

static void test_unreadable_paths_are_io_errors(void **state)
{
    (void)state;
    expect_read_failure(tu_tmp_path("does_not_exist.pgm"), PV_PIXEL_U8, PV_ERR_IO);
    expect_read_failure("/nonexistent-dir/x.png", PV_PIXEL_F32, PV_ERR_IO);
    tu_tmp_path("x"); /* creates tests/tmp */
    expect_read_failure("tests/tmp", PV_PIXEL_U8, PV_ERR_IO);
}

typedef struct malformed_case {
    const char *name;
    const char *bytes;
    size_t length;
} malformed_case;

#define MALFORMED(name, literal) {name, literal, sizeof(literal) - 1}

static const malformed_case malformed_cases[] = {
    MALFORMED("empty", ""),
    MALFORMED("one_byte", "P"),
    MALFORMED("bad_magic", "XY\n1 1\n255\n\x01"),
    MALFORMED("bitmap_p4", "P4\n8 1\n\xff"),
    MALFORMED("pam_p7", "P7\nWIDTH 1\nHEIGHT 1\nENDHDR\n\x01"),
    MALFORMED("png_signature_cut", "\x89PNG\r"),
    MALFORMED("png_signature_only", "\x89PNG\r\n\x1a\n"),
    MALFORMED("p5_truncated", "P5\n4 4\n255\n0123456789"),
    MALFORMED("p5_16bit_truncated", "P5\n2 1\n65535\n\x01\x02\x03"),
    MALFORMED("p6_truncated", "P6\n2 1\n255\n\x01\x02\x03\x04\x05"),
    MALFORMED("p5_huge", "P5\n100000 100000\n255\n\x01\x02\x03"),
    MALFORMED("p5_absurd", "P5\n2147483647 2147483647\n255\n\x01"),
    MALFORMED("pfm_absurd", "Pf\n2147483647 2147483647\n-1\n\x00\x00\x80\x3f"),
    MALFORMED("p6_size_overflow", "P6\n2147483647 2147483647\n65535\n\x01"),
    MALFORMED("width_over_int", "P5\n2147483648 1\n255\n\x01"),
    MALFORMED("width_many_digits", "P5\n99999999999999999999999 1\n255\n\x01"),
    MALFORMED("maxval_zero", "P5\n1 1\n0\n\x00"),
    MALFORMED("maxval_65536", "P5\n1 1\n65536\n\x00\x00"),
    MALFORMED("negative_width", "P5\n-1 1\n255\n\x01"),
    MALFORMED("zero_width", "P5\n0 1\n255\n\x01"),
    MALFORMED("zero_height", "P5\n1 0\n255\n\x01"),
    MALFORMED("garbage_height", "P5\n1 x\n255\n\x01"),
    MALFORMED("glued_tokens", "P5\n1x1\n255\n\x01"),
    MALFORMED("no_space_after_maxval", "P5\n1 1\n255x"),
    MALFORMED("header_cut", "P5\n1 1\n255"),
    MALFORMED("comment_to_end", "P5\n1 1 # no maxval"),
    MALFORMED("sample_over_maxval", "P5\n2 1\n100\n\x10\xc8"),
    MALFORMED("sample16_over_maxval", "P5\n1 1\n1000\n\x03\xe9"),
    MALFORMED("ascii_truncated", "P2\n2 2\n255\n1 2 3"),
    MALFORMED("ascii_ends_early", "P2\n2 2\n255\n1 2 3          "),
    MALFORMED("ascii_garbage", "P2\n2 1\n255\n1 x\n"),
    MALFORMED("ascii_negative", "P2\n2 1\n255\n1 -2\n"),
    MALFORMED("ascii_over_maxval", "P2\n2 1\n10\n1 11\n"),
    MALFORMED("ascii_huge", "P3\n100000 100000\n255\n1 2 3\n"),
    MALFORMED("pfm_scale_zero", "Pf\n1 1\n0.0\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_minus_zero", "Pf\n1 1\n-0\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_garbage", "Pf\n1 1\nabc\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_nan", "Pf\n1 1\nnan\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_inf", "Pf\n1 1\n-inf\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_junk", "Pf\n1 1\n-1.0x\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_scale_long", "Pf\n1 1\n-1.00000000000000000000000000000000000000000000000000"
                                "000000000000000000000000000\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_no_scale", "Pf\n1 1\n"),
    MALFORMED("pfm_truncated", "Pf\n2 2\n-1\n\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x80"),
    MALFORMED("pfm_colour_truncated", "PF\n1 1\n-1\n\x00\x00\x80\x3f\x00\x00\x80\x3f"),
    MALFORMED("pfm_huge", "PF\n100000 100000\n-1\n\x00\x00\x80\x3f"),
    MALFORMED("pfm_zero_height", "Pf\n1 0\n-1\n\x00\x00\x80\x3f"),
};

static void test_malformed_files(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("malformed");
    for (size_t i = 0; i < sizeof malformed_cases / sizeof malformed_cases[0]; i++) {
        const malformed_case *c = &malformed_cases[i];
        tu_write_file(path, c->bytes, c->length);
        pv_image out = sentinel_image(), before = out;
        for (int t = 0; t < 2; t++) {
            pv_pixel_type type = t ? PV_PIXEL_F32 : PV_PIXEL_U8;
            pv_status status = pv_image_read(path, type, &out);
            if (status != PV_ERR_FORMAT)
                fail_msg("%s: got %s, expected format error", c->name, pv_status_string(status));
            assert_memory_equal(&out, &before, sizeof out);
            assert_non_null(strstr(pv_last_error(), path));
        }
    }
}

/* The same well-formed variants the malformed cases distort are accepted. */
static void test_header_edge_cases_accepted(void **state)
{
    (void)state;
    const char *path = tu_tmp_path("edge.pgm");
    /* Whitespace of every kind, a comment right after the magic, CR line
     * ends, and trailing bytes after the raster (a second image). */
    static const char file[] = "P5#c\r\n\t2\v\f1\r255\r\x07\x08P5 1 1 255 \x01";
    tu_write_file(path, file, sizeof file - 1);
    const float values[2] = {7, 8};
    expect_file_pixels(path, 2, 1, values, values, 0.0f);

    /* The byte after maxval may itself be a '#': it is pixel data. */
    static const char hash[] = "P5 1 1 255\n#";
    tu_write_file(path, hash, sizeof hash - 1);
    const float hash_value[1] = {'#'};
    expect_file_pixels(path, 1, 1, hash_value, hash_value, 0.0f);

    /* Scales of any non-zero size and an exponent; a '+' sign is big-endian. */
    const char *pfm = tu_tmp_path("edge.pfm");
    uint8_t bytes[64] = "Pf 1 1 +2.5e-3\n";
    size_t header = strlen((const char *)bytes);
    put_be_float(bytes + header, 42.0f);
    tu_write_file(pfm, bytes, header + 4);
    const float answer[1] = {42};
    expect_file_pixels(pfm, 1, 1, answer, answer, 0.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pgm_u8_round_trip),
        cmocka_unit_test(test_pgm_header_written_as_netpbm_says),
        cmocka_unit_test(test_pgm_f32_write_clamps_and_rounds),
        cmocka_unit_test(test_pgm_16bit_read),
        cmocka_unit_test(test_pgm_small_maxval_kept_as_is),
        cmocka_unit_test(test_ppm_colour_to_luma),
        cmocka_unit_test(test_ppm_16bit_colour_to_luma),
        cmocka_unit_test(test_ascii_pgm_and_ppm),
        cmocka_unit_test(test_pfm_round_trip_with_infinity),
        cmocka_unit_test(test_pfm_big_endian_rows_bottom_up),
        cmocka_unit_test(test_pfm_colour_little_endian_to_luma),
        cmocka_unit_test(test_pfm_to_u8_rounds_and_clamps),
        cmocka_unit_test(test_pfm_of_u8_image_keeps_values),
        cmocka_unit_test(test_png_grey_round_trip),
        cmocka_unit_test(test_png_of_f32_clamps_and_rounds),
        cmocka_unit_test(test_png_rgb_and_rgba),
        cmocka_unit_test(test_png_grey_alpha_and_palette),
        cmocka_unit_test(test_png_16bit_and_1bit_grey),
        cmocka_unit_test(test_png_interlaced),
        cmocka_unit_test(test_png_truncated),
        cmocka_unit_test(test_png_corrupt),
        cmocka_unit_test(test_png_bound_by_idat_not_file_size),
        cmocka_unit_test(test_png_junk_idat_costs_only_rows),
#ifdef PV_HAVE_JPEG
        cmocka_unit_test(test_jpeg_grey_known_values),
        cmocka_unit_test(test_jpeg_colour_to_luma),
        cmocka_unit_test(test_jpeg_damaged),
        cmocka_unit_test(test_jpeg_never_prints),
#endif
        cmocka_unit_test(test_image_read_info),
        cmocka_unit_test(test_venus_left),
        cmocka_unit_test(test_write_by_extension),
        cmocka_unit_test(test_write_bad_arguments),
        cmocka_unit_test(test_write_failure_is_io),
        cmocka_unit_test(test_failed_write_removes_partial_file),
        cmocka_unit_test(test_read_bad_arguments),
        cmocka_unit_test(test_unreadable_paths_are_io_errors),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_header_edge_cases_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
