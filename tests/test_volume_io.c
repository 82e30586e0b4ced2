/* Volume I/O: raw float32 and NIfTI-1 round trips, hand-made NIfTI-1 and
 * ANALYZE files checked against values worked out by hand, and hostile
 * files (headers that claim more data than the file holds, truncated or
 * corrupt gzip streams, nonsense fields) that must be refused with the
 * offending field named, within a bounded amount of memory and without a
 * byte printed. */
#include "test_util.h"
#include "io_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PV_HAVE_NIFTI
#include <zlib.h>
#endif

/* Hostile reads run with this much room over the test's own address
 * space: far below what any of the claimed sizes would take. */
#define HEADROOM_MIB 64

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static void expect_volume_equal(const pv_volume *a, const float *expected, int nx, int ny, int nz)
{
    assert_int_equal(a->nx, nx);
    assert_int_equal(a->ny, ny);
    assert_int_equal(a->nz, nz);
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float got = a->data[x + y * a->stride_y + z * a->stride_z];
                float want = expected[x + nx * (y + ny * z)];
                if (got != want)
                    fail_msg("voxel (%d,%d,%d): got %.9g, expected %.9g", x, y, z, (double)got,
                             (double)want);
            }
}

/* ------------------------------------------------------------------ raw */

static void test_raw_round_trip_and_size_check(void **state)
{
    (void)state;
    pv_volume v = tu_random_volume(5, 4, 3, 7);
    const char *path = tu_tmp_path("vol.raw");
    assert_int_equal(pv_volume_write_raw(path, &v), PV_OK);
    pv_volume back;
    assert_int_equal(pv_volume_read_raw(path, 5, 4, 3, &back), PV_OK);
    expect_volume_equal(&back, v.data, 5, 4, 3);
    pv_volume_free(&back);
    /* The file must be exactly the size asked for: one byte short or a
     * size far larger than the file is refused before allocating. */
    pv_volume untouched = {1, 2, 3, 4, 5, {NULL}, PV_VOLUME_F32}, before = untouched;
    assert_int_equal(pv_volume_read_raw(path, 5, 4, 4, &untouched), PV_ERR_FORMAT);
    assert_int_equal(pv_volume_read_raw(path, 30000, 30000, 30000, &untouched), PV_ERR_FORMAT);
    assert_non_null(strstr(pv_last_error(), "240 bytes"));
    assert_memory_equal(&untouched, &before, sizeof before);
    pv_volume_free(&v);
}

#ifdef PV_HAVE_NIFTI

/* ------------------------------------------------ hand-made NIfTI files */

typedef struct nifti_spec {
    int sizeof_hdr;             /* 348 unless a test wants it wrong */
    short dim[8];
    short datatype, bitpix;
    float vox_offset, slope, inter;
    const char *magic;          /* "n+1", "ni1" or "" (ANALYZE 7.5) */
    int big_endian;
} nifti_spec;

static void put16(uint8_t *p, int value, int big_endian)
{
    uint16_t bits = (uint16_t)value;
    p[big_endian ? 0 : 1] = (uint8_t)(bits >> 8);
    p[big_endian ? 1 : 0] = (uint8_t)bits;
}

static void put32(uint8_t *p, uint32_t bits, int big_endian)
{
    for (int i = 0; i < 4; i++)
        p[big_endian ? 3 - i : i] = (uint8_t)(bits >> (8 * i));
}

static void put_float(uint8_t *p, float value, int big_endian)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    put32(p, bits, big_endian);
}

/* The 352 bytes of a NIfTI-1 header and extension flag (all zero). */
static void build_header(uint8_t h[352], const nifti_spec *s)
{
    memset(h, 0, 352);
    put32(h, (uint32_t)(s->sizeof_hdr ? s->sizeof_hdr : 348), s->big_endian);
    for (int i = 0; i < 8; i++)
        put16(h + 40 + 2 * i, s->dim[i], s->big_endian);
    put16(h + 70, s->datatype, s->big_endian);
    put16(h + 72, s->bitpix, s->big_endian);
    for (int i = 0; i < 8; i++)
        put_float(h + 76 + 4 * i, 1.0f, s->big_endian);
    put_float(h + 108, s->vox_offset, s->big_endian);
    put_float(h + 112, s->slope, s->big_endian);
    put_float(h + 116, s->inter, s->big_endian);
    memcpy(h + 344, s->magic, strlen(s->magic) + 1);
}

/* A single file: header, then `data` at vox_offset. */
static void write_nii(const char *path, const nifti_spec *s, const void *data, size_t length)
{
    uint8_t bytes[4096];
    size_t offset = (size_t)s->vox_offset < 352 ? 352 : (size_t)s->vox_offset;
    assert_true(offset + length <= sizeof bytes);
    memset(bytes, 0, sizeof bytes);
    build_header(bytes, s);
    if (length)
        memcpy(bytes + offset, data, length);
    tu_write_file(path, bytes, offset + length);
}

static void write_gz(const char *path, const void *bytes, size_t length)
{
    gzFile gz = gzopen(path, "wb9");
    assert_non_null(gz);
    if (length)
        assert_int_equal(gzwrite(gz, bytes, (unsigned)length), (int)length);
    assert_int_equal(gzclose(gz), Z_OK);
}

static pv_volume sentinel_volume(void)
{
    static float somewhere;
    pv_volume v = {3, 4, 5, 6, 7, {&somewhere}, PV_VOLUME_F32};
    return v;
}

static pv_volume read_nifti_ok(const char *path)
{
    pv_volume v;
    pv_status status = pv_volume_read_nifti(path, &v);
    if (status != PV_OK)
        fail_msg("reading %s: %s", path, pv_last_error());
    return v;
}

/* ----------------------------------------------------------- round trips */

static void test_nifti_round_trips(void **state)
{
    (void)state;
    pv_volume v = tu_random_volume(6, 5, 4, 3);
    static const char *const names[] = {"rt.nii", "rt.nii.gz", "rt.hdr", "RT.NII"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", tu_tmp_path(names[i]));
        assert_int_equal(pv_volume_write_nifti(path, &v), PV_OK);
        pv_volume back = read_nifti_ok(path);
        expect_volume_equal(&back, v.data, 6, 5, 4);
        pv_volume_free(&back);
    }
    /* The pair's data file names it too. */
    pv_volume back = read_nifti_ok(tu_tmp_path("rt.img"));
    expect_volume_equal(&back, v.data, 6, 5, 4);
    pv_volume_free(&back);

    /* A flow field reads back as its first component, u. */
    pv_flow_field flow;
    assert_int_equal(pv_volume_alloc(&flow.u, 6, 5, 4), PV_OK);
    assert_int_equal(pv_volume_alloc(&flow.v, 6, 5, 4), PV_OK);
    assert_int_equal(pv_volume_alloc(&flow.w, 6, 5, 4), PV_OK);
    tu_fill_random_volume(&flow.u, 11);
    tu_fill_random_volume(&flow.v, 12);
    tu_fill_random_volume(&flow.w, 13);
    assert_int_equal(pv_flow_write_nifti(tu_tmp_path("flow.nii.gz"), &flow), PV_OK);
    back = read_nifti_ok(tu_tmp_path("flow.nii.gz"));
    expect_volume_equal(&back, flow.u.data, 6, 5, 4);
    pv_volume_free(&back);
    pv_volume_free(&flow.u);
    pv_volume_free(&flow.v);
    pv_volume_free(&flow.w);
    pv_volume_free(&v);
}

/* Big-endian int16 with scaling; 4D uint8 of which only the first volume
 * is read; a 2D file; a .hdr/.img pair and an ANALYZE 7.5 pair. */
static void test_nifti_known_values(void **state)
{
    (void)state;
    const int16_t raw[6] = {-4, 0, 2, 100, 32767, -32768};
    uint8_t be[12];
    for (int i = 0; i < 6; i++)
        put16(be + 2 * i, raw[i], 1);
    nifti_spec s = {0, {3, 3, 2, 1, 1, 1, 1, 1}, 4, 16, 352, 0.5f, 10.0f, "n+1", 1};
    write_nii(tu_tmp_path("be16.nii"), &s, be, sizeof be);
    float expected[6];
    for (int i = 0; i < 6; i++)
        expected[i] = (float)(raw[i] * 0.5 + 10.0);
    pv_volume v = read_nifti_ok(tu_tmp_path("be16.nii"));
    expect_volume_equal(&v, expected, 3, 2, 1);
    pv_volume_free(&v);

    /* 2x2x1 x 3 volumes of uint8, vox_offset 400: volume t holds 10t + i. */
    uint8_t frames[12];
    for (int i = 0; i < 12; i++)
        frames[i] = (uint8_t)(10 * (i / 4) + i % 4);
    nifti_spec four = {0, {4, 2, 2, 1, 3, 1, 1, 1}, 2, 8, 400, 0, 0, "n+1", 0};
    write_nii(tu_tmp_path("t4.nii"), &four, frames, sizeof frames);
    const float first[4] = {0, 1, 2, 3};
    v = read_nifti_ok(tu_tmp_path("t4.nii"));
    expect_volume_equal(&v, first, 2, 2, 1);
    pv_volume_free(&v);

    /* 2D, float64, little-endian, gzip-compressed. */
    const double d[4] = {1.5, -2.25, 1e-3, 4096.0};
    nifti_spec two = {0, {2, 2, 2, 0, 0, 0, 0, 0}, 64, 64, 352, 0, 0, "n+1", 0};
    uint8_t bytes[352 + sizeof d];
    build_header(bytes, &two);
    memcpy(bytes + 352, d, sizeof d);
    write_gz(tu_tmp_path("d2.nii.gz"), bytes, sizeof bytes);
    const float fd[4] = {1.5f, -2.25f, 1e-3f, 4096.0f};
    v = read_nifti_ok(tu_tmp_path("d2.nii.gz"));
    expect_volume_equal(&v, fd, 2, 2, 1);
    pv_volume_free(&v);

    /* A pair with magic "ni1", then an ANALYZE 7.5 pair (no magic,
     * big-endian), data at offset 0 of the .img. */
    const uint16_t u16[2] = {65535, 7};
    for (int analyze = 0; analyze <= 1; analyze++) {
        nifti_spec pair = {0, {3, 1, 2, 1, 1, 1, 1, 1}, 512, 16, 0, 0, 0,
                           analyze ? "" : "ni1", analyze};
        uint8_t h[352], img[4];
        build_header(h, &pair);
        for (int i = 0; i < 2; i++)
            put16(img + 2 * i, u16[i], analyze);
        tu_write_file(tu_tmp_path("pair.hdr"), h, 348);
        tu_write_file(tu_tmp_path("pair.img"), img, sizeof img);
        const float want[2] = {65535, 7};
        v = read_nifti_ok(tu_tmp_path("pair.hdr"));
        expect_volume_equal(&v, want, 1, 2, 1);
        pv_volume_free(&v);
    }
}

/* ------------------------------------------------------- hostile files */

typedef struct hostile_case {
    const char *name;           /* file name (its extension matters) */
    const char *field;          /* what the error message must name */
    size_t length;              /* bytes of `bytes` written (0: all built) */
    int gzip;                   /* write the bytes gzip-compressed */
    nifti_spec spec;
    size_t data_bytes;          /* zero bytes of data after vox_offset */
} hostile_case;

static pv_status read_into_sentinel(const void *arg, int *untouched)
{
    pv_volume out = sentinel_volume(), before = out;
    pv_status status = pv_volume_read_nifti(arg, &out);
    *untouched = memcmp(&out, &before, sizeof out) == 0;
    return status;
}

static void expect_refused(const char *path, const char *field)
{
    io_limited_result r;
    io_run_limited(read_into_sentinel, path, HEADROOM_MIB, &r);
    /* The message names the file (a pair's .img when its data is short). */
    char stem[4096];
    snprintf(stem, sizeof stem, "%s", path);
    char *dot = strchr(strrchr(stem, '/') ? strrchr(stem, '/') : stem, '.');
    if (dot)
        *dot = '\0';
    if (r.status != PV_ERR_FORMAT || !strstr(r.message, field) || !strstr(r.message, stem))
        fail_msg("%s: got %s (%s), expected a format error naming '%s'", path,
                 pv_status_string(r.status), r.message, field);
    assert_true(r.untouched);
}

static void write_case(const char *path, const hostile_case *c)
{
    uint8_t bytes[2048];
    memset(bytes, 0, sizeof bytes);
    build_header(bytes, &c->spec);
    size_t length = c->length ? c->length : 352 + c->data_bytes;
    assert_true(length <= sizeof bytes);
    if (c->gzip)
        write_gz(path, bytes, length);
    else
        tu_write_file(path, bytes, length);
}

#define CUBE(n, type, bits) {3, n, n, n, 1, 1, 1, 1}, type, bits

static const hostile_case hostile_cases[] = {
    /* A header alone that claims 1000^3 float32 (4 GB). */
    {"header_only.nii", "holds 352 bytes", 0, 0, {0, CUBE(1000, 16, 32), 352, 0, 0, "n+1", 0}, 0},
    /* The same compressed to a few dozen bytes. */
    {"header_only.nii.gz", "compressed", 0, 1, {0, CUBE(1000, 16, 32), 352, 0, 0, "n+1", 0}, 0},
    /* 365 bytes whose data would start inside the header. */
    {"self.nii", "vox_offset", 365, 0, {0, CUBE(450, 2, 8), 0, 0, 0, "n+1", 0}, 13},
    /* Byte-swapped ANALYZE asking for 32767^3 int16 (70 TB). */
    {"swapped.hdr", "holds", 348, 0, {0, CUBE(32767, 4, 16), 0, 0, 0, "", 1}, 0},
    /* dims whose product does not fit in 64 bits. */
    {"huge.nii", "2^64", 0, 0, {0, {7, 32767, 32767, 32767, 32767, 32767, 32767, 32767}, 16, 32,
                                352, 0, 0, "n+1", 0}, 0},
    /* 4D: 32767 volumes of 64^3 float32 announced, one volume present. */
    {"many.nii", "holds", 0, 0, {0, {4, 64, 64, 64, 32767, 1, 1, 1}, 16, 32, 352, 0, 0, "n+1", 0},
     1024},
    /* A gzip stream that ends before the data the header needs. */
    {"short.nii.gz", "truncated", 0, 1, {0, CUBE(8, 16, 32), 352, 0, 0, "n+1", 0}, 100},
    /* Data cut short in a plain file. */
    {"short.nii", "holds 372 bytes", 0, 0, {0, CUBE(2, 16, 32), 352, 0, 0, "n+1", 0}, 20},
    {"sizeof.nii", "sizeof_hdr", 0, 0, {1, CUBE(2, 16, 32), 352, 0, 0, "n+1", 0}, 32},
    {"ndim.nii", "dim[0]", 0, 0, {0, {0, 2, 2, 2, 1, 1, 1, 1}, 16, 32, 352, 0, 0, "n+1", 0}, 32},
    {"ndim8.nii", "dim[0]", 0, 0, {0, {8, 2, 2, 2, 1, 1, 1, 1}, 16, 32, 352, 0, 0, "n+1", 0}, 32},
    {"negdim.nii", "dim[2]", 0, 0, {0, {3, 2, -2, 2, 1, 1, 1, 1}, 16, 32, 352, 0, 0, "n+1", 0}, 32},
    {"complex.nii", "datatype 32", 0, 0, {0, CUBE(2, 32, 64), 352, 0, 0, "n+1", 0}, 64},
    {"bitpix.nii", "bitpix", 0, 0, {0, CUBE(2, 16, 16), 352, 0, 0, "n+1", 0}, 32},
    {"offset.nii", "vox_offset", 0, 0, {0, CUBE(2, 16, 32), 352.5f, 0, 0, "n+1", 0}, 40},
    {"negoffset.nii", "vox_offset", 0, 0, {0, CUBE(2, 16, 32), -8, 0, 0, "n+1", 0}, 40},
    {"slope.nii", "scl_slope", 0, 0, {0, CUBE(2, 16, 32), 352, NAN, 0, "n+1", 0}, 32},
    {"inter.nii", "scl_inter", 0, 0, {0, CUBE(2, 16, 32), 352, 2, INFINITY, "n+1", 0}, 32},
    /* Not NIfTI at all, and a pair header without its .img. */
    {"text.nii", "the header", 40, 0, {1, CUBE(2, 16, 32), 352, 0, 0, "", 0}, 0},
    {"lonely.hdr", ".img", 348, 0, {0, CUBE(2, 16, 32), 0, 0, 0, "ni1", 0}, 0},
    {"empty.nii", "truncated", 1, 0, {0, CUBE(2, 16, 32), 352, 0, 0, "n+1", 0}, 0},
};

static void test_nifti_hostile_headers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hostile_cases / sizeof hostile_cases[0]; i++) {
        const hostile_case *c = &hostile_cases[i];
        char path[4096];
        snprintf(path, sizeof path, "%s", tu_tmp_path(c->name));
        if (strstr(c->name, ".hdr"))
            remove(tu_tmp_path("lonely.img"));
        write_case(path, c);
        if (strcmp(c->name, "swapped.hdr") == 0)
            tu_write_file(tu_tmp_path("swapped.img"), "\0\0\0\0", 4);
        expect_refused(path, c->field);
    }
}

/* A valid compressed file cut short, or with bytes flipped in the middle
 * of its deflate stream, is refused (never zeros). */
static void test_nifti_damaged_gzip(void **state)
{
    (void)state;
    pv_volume v = tu_random_volume(32, 32, 16, 5);
    const char *good = tu_tmp_path("damaged_src.nii.gz");
    assert_int_equal(pv_volume_write_nifti(good, &v), PV_OK);
    pv_volume_free(&v);
    FILE *f = fopen(good, "rb");
    assert_non_null(f);
    static uint8_t bytes[1 << 17];
    size_t length = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    assert_true(length > 20000 && length < sizeof bytes);
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_tmp_path("damaged.nii.gz"));
    const size_t cuts[] = {10, 30, length / 2, length - 9};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tu_write_file(path, bytes, cuts[i]);
        expect_refused(path, path);
    }
    for (size_t i = length / 3; i < length / 3 + 64; i++)
        bytes[i] ^= 0x5a;
    tu_write_file(path, bytes, length);
    expect_refused(path, "corrupt");
}

/* A file announcing 32767 volumes, all present: only the first is read
 * (the bounded child would not hold 32767 of them as floats). */
static void test_nifti_reads_first_volume_only(void **state)
{
    (void)state;
    const int n = 16, volumes = 32767;
    size_t per = (size_t)n * n * n, total = per * volumes; /* 134 MB of uint8 */
    const char *path = tu_tmp_path("t32767.nii.gz");
    nifti_spec s = {0, {4, (short)n, (short)n, (short)n, (short)volumes, 1, 1, 1}, 2, 8, 352, 0, 0,
                    "n+1", 0};
    uint8_t header[352];
    build_header(header, &s);
    gzFile gz = gzopen(path, "wb1");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, header, sizeof header), (int)sizeof header);
    static uint8_t block[1 << 16];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (uint8_t)(i % 251);
    for (size_t done = 0; done < total;) {
        size_t n_bytes = total - done < sizeof block ? total - done : sizeof block;
        assert_int_equal(gzwrite(gz, block, (unsigned)n_bytes), (int)n_bytes);
        done += n_bytes;
    }
    assert_int_equal(gzclose(gz), Z_OK);
    io_limited_result r;
    io_run_limited(read_into_sentinel, path, HEADROOM_MIB, &r);
    if (r.status != PV_OK)
        fail_msg("%s: %s", path, r.message);
    pv_volume v = read_nifti_ok(path);
    assert_int_equal(v.nx, n);
    assert_int_equal(v.nz, n);
    for (size_t i = 0; i < per; i++)
        assert_true(v.data[i] == (float)((i % sizeof block) % 251));
    pv_volume_free(&v);
    remove(path);
}

/* ---------------------------------------------------------------- names */

static void test_nifti_write_names(void **state)
{
    (void)state;
    float values[8] = {0};
    pv_volume v = pv_volume_wrap(values, 2, 2, 2);
    static const char *const bad[] = {"x.txt", "x", "x.gz", "x.img", ".nii.gz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[4096], appended[4200];
        snprintf(path, sizeof path, "%s", tu_tmp_path(bad[i]));
        snprintf(appended, sizeof appended, "%s.nii", path);
        remove(appended);
        remove(path);
        assert_int_equal(pv_volume_write_nifti(path, &v), PV_ERR_INVALID);
        assert_non_null(strstr(pv_last_error(), ".nii.gz"));
        assert_false(file_exists(appended));
        assert_false(file_exists(path));
    }
    /* NIfTI-1 sizes are 16-bit. */
    float *wide = calloc(32768, sizeof(float));
    assert_non_null(wide);
    pv_volume too_wide = pv_volume_wrap(wide, 32768, 1, 1);
    assert_int_equal(pv_volume_write_nifti(tu_tmp_path("wide.nii"), &too_wide), PV_ERR_INVALID);
    free(wide);
}

/* ------------------------------------------------------------ no output */

static void bad_nifti_calls(const void *arg)
{
    (void)arg;
    pv_volume out;
    for (size_t i = 0; i < sizeof hostile_cases / sizeof hostile_cases[0]; i++)
        (void)pv_volume_read_nifti(tu_tmp_path(hostile_cases[i].name), &out);
    (void)pv_volume_read_nifti(tu_tmp_path("no_such_file.nii"), &out);
    float values[8] = {0};
    pv_volume v = pv_volume_wrap(values, 2, 2, 2);
    (void)pv_volume_write_nifti(tu_tmp_path("no_such_dir/x.nii"), &v);
    (void)pv_volume_write_nifti(tu_tmp_path("no_such_dir/x.nii.gz"), &v);
    (void)pv_volume_write_nifti(tu_tmp_path("no_such_dir/x.hdr"), &v);
    (void)pv_volume_write_nifti(tu_tmp_path("x.txt"), &v);
}

static void test_nifti_never_prints(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hostile_cases / sizeof hostile_cases[0]; i++)
        write_case(tu_tmp_path(hostile_cases[i].name), &hostile_cases[i]);
    size_t printed = io_stderr_bytes_during(bad_nifti_calls, NULL);
    assert_int_equal(printed, 0);
}

#endif /* PV_HAVE_NIFTI */

static void test_nifti_bad_arguments(void **state)
{
    (void)state;
    pv_volume out = {0};
    pv_status expected = pv_volume_io_has_nifti() ? PV_ERR_INVALID : PV_ERR_UNSUPPORTED;
    assert_int_equal(pv_volume_read_nifti(NULL, &out), expected);
    assert_int_equal(pv_volume_read_nifti("x.nii", NULL), expected);
    assert_int_equal(pv_volume_write_nifti(NULL, NULL), expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raw_round_trip_and_size_check),
        cmocka_unit_test(test_nifti_bad_arguments),
#ifdef PV_HAVE_NIFTI
        cmocka_unit_test(test_nifti_round_trips),
        cmocka_unit_test(test_nifti_known_values),
        cmocka_unit_test(test_nifti_hostile_headers),
        cmocka_unit_test(test_nifti_damaged_gzip),
        cmocka_unit_test(test_nifti_reads_first_volume_only),
        cmocka_unit_test(test_nifti_write_names),
        cmocka_unit_test(test_nifti_never_prints),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
