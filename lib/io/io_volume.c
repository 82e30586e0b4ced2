/* Volume I/O: raw little-endian float32 and, when built with zlib
 * (PV_HAVE_NIFTI), NIfTI-1 writing of scalar volumes and vector fields
 * (reading is io_nifti.c's).  Nothing here prints: failures are reported
 * through pv_last_error() like every other call. */
#include "../core/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef PV_HAVE_NIFTI
#include <zlib.h>
#endif

/* ------------------------------------------------------------------- raw */

static float float_from_le(const unsigned char b[4])
{
    uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                    (uint32_t)b[3] << 24;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void float_to_le(float value, unsigned char b[4])
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(bits >> (8 * i));
}

/* Bytes in an open file, or -1. */
static long long file_bytes(FILE *f)
{
    struct stat info;
    if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode))
        return -1;
    return (long long)info.st_size;
}

/* The file's samples (little-endian float32 or uint16, as volume->type
 * says) into the dense volume, in chunks. */
static pv_status read_raw_values(FILE *f, const char *op, const char *path, pv_volume *volume)
{
    unsigned char chunk[4096];
    const size_t sample = pv_volume_sample_size(volume->type);
    size_t count = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz, done = 0;
    while (done < count) {
        size_t want = count - done < sizeof chunk / sample ? count - done : sizeof chunk / sample;
        if (fread(chunk, sample, want, f) != want)
            return pv_fail(NULL, PV_ERR_IO, "%s: %s: read failed", op, path);
        for (size_t i = 0; i < want; i++) {
            if (volume->type == PV_VOLUME_U16)
                volume->data_u16[done + i] =
                    (uint16_t)(chunk[2 * i] | (unsigned)chunk[2 * i + 1] << 8);
            else
                volume->data[done + i] = float_from_le(chunk + 4 * i);
        }
        done += want;
    }
    return PV_OK;
}

static pv_status read_raw(const char *op, const char *path, int nx, int ny, int nz,
                          pv_volume_type type, pv_volume *out)
{
    const size_t sample = pv_volume_sample_size(type);
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path or out is NULL", op);
    if (sample == 0)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: unknown sample type %d", op, (int)type);
    if (nx < 1 || ny < 1 || nz < 1)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: size %dx%dx%d is not positive", op, nx, ny, nz);
    size_t count, bytes;
    if (!pv_size_mul((size_t)nx * (size_t)ny, (size_t)nz, &count) ||
        !pv_size_mul(count, sample, &bytes) || bytes > (size_t)LLONG_MAX)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: size %dx%dx%d overflows", op, nx, ny, nz);
    FILE *f = NULL;
    int opened = pv_open_regular(path, &f, NULL);
    if (opened != 0)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot open %s: %s", op, path,
                       pv_open_regular_reason(opened));
    long long size = file_bytes(f);
    pv_status status = PV_OK;
    if (size != (long long)bytes)
        status = pv_fail(NULL, PV_ERR_FORMAT,
                         "%s: %s holds %lld bytes, a %dx%dx%d %s volume needs %zu", op, path,
                         size, nx, ny, nz, type == PV_VOLUME_U16 ? "uint16" : "float32", bytes);
    pv_volume volume = {0};
    if (status == PV_OK)
        status = type == PV_VOLUME_U16 ? pv_volume_alloc_u16(&volume, nx, ny, nz)
                                       : pv_volume_alloc(&volume, nx, ny, nz);
    if (status == PV_OK)
        status = read_raw_values(f, op, path, &volume);
    fclose(f);
    if (status != PV_OK) {
        pv_volume_free(&volume);
        return status;
    }
    *out = volume;
    return PV_OK;
}

pv_status pv_volume_read_raw(const char *path, int nx, int ny, int nz, pv_volume *out)
{
    return read_raw("pv_volume_read_raw", path, nx, ny, nz, PV_VOLUME_F32, out);
}

pv_status pv_volume_read_raw_typed(const char *path, int nx, int ny, int nz,
                                   pv_volume_type type, pv_volume *out)
{
    return read_raw("pv_volume_read_raw_typed", path, nx, ny, nz, type, out);
}

/* Row `y, z` of v as little-endian samples of its own type into bytes
 * (nx * sample bytes). */
static void row_to_le(const pv_volume *v, int y, int z, int x0, int n, unsigned char *bytes)
{
    const ptrdiff_t start = (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z + x0;
    for (int i = 0; i < n; i++) {
        if (v->type == PV_VOLUME_U16) {
            bytes[2 * i] = (unsigned char)(v->data_u16[start + i] & 0xff);
            bytes[2 * i + 1] = (unsigned char)(v->data_u16[start + i] >> 8);
        } else {
            float_to_le(v->data[start + i], bytes + 4 * i);
        }
    }
}

pv_status pv_volume_write_raw(const char *path, const pv_volume *volume)
{
    if (!path || !pv_volume_is_valid_any_type(volume))
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_write_raw: path is NULL or volume invalid");
    FILE *f = fopen(path, "wb");
    if (!f)
        return pv_fail(NULL, PV_ERR_IO, "pv_volume_write_raw: cannot create %s: %s", path,
                       strerror(errno));
    int ok = 1;
    unsigned char row[4096];
    const size_t sample = pv_volume_sample_size(volume->type);
    const int per_chunk = (int)(sizeof row / sample);
    for (int z = 0; z < volume->nz && ok; z++)
        for (int y = 0; y < volume->ny && ok; y++)
            for (int x = 0; x < volume->nx && ok; x += per_chunk) {
                int n = volume->nx - x < per_chunk ? volume->nx - x : per_chunk;
                row_to_le(volume, y, z, x, n, row);
                ok = fwrite(row, sample, (size_t)n, f) == (size_t)n;
            }
    ok = fclose(f) == 0 && ok;
    return ok ? PV_OK : pv_fail(NULL, PV_ERR_IO, "pv_volume_write_raw: writing %s failed", path);
}

/* ----------------------------------------------------------------- NIfTI */

#ifdef PV_HAVE_NIFTI

int pv_volume_io_has_nifti(void)
{
    return 1;
}

int pv_ends_with_ignoring_case(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++) {
        char c = text[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return 0;
    }
    return 1;
}

/* How a NIfTI-1 file name is written: one file (plain or gzip), or a
 * .hdr header beside an .img data file. */
typedef enum nifti_target { TARGET_NONE, TARGET_NII, TARGET_NII_GZ, TARGET_PAIR } nifti_target;

/* Only the documented names are taken (niftilib used to append ".nii" to
 * any other, so "x.txt" became "x.txt.nii"); the name before the
 * extension must not be empty. */
static nifti_target target_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t name = strlen(slash ? slash + 1 : path);
    if (pv_ends_with_ignoring_case(path, ".nii.gz"))
        return name > 7 ? TARGET_NII_GZ : TARGET_NONE;
    if (pv_ends_with_ignoring_case(path, ".nii"))
        return name > 4 ? TARGET_NII : TARGET_NONE;
    if (pv_ends_with_ignoring_case(path, ".hdr"))
        return name > 4 ? TARGET_PAIR : TARGET_NONE;
    return TARGET_NONE;
}

/* NIfTI-1 stores each size in 16 bits. */
static pv_status check_write_target(const char *op, const char *path, int nx, int ny, int nz)
{
    if (target_of(path) == TARGET_NONE)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: '%s' does not end in .nii, .nii.gz or .hdr", op, path);
    if (nx > INT16_MAX || ny > INT16_MAX || nz > INT16_MAX)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: %dx%dx%d: NIfTI-1 sizes are at most 32767 a side", op, nx, ny, nz);
    return PV_OK;
}

static void put_le16(unsigned char *p, int value)
{
    p[0] = (unsigned char)value;
    p[1] = (unsigned char)((unsigned)value >> 8);
}

#define NIFTI_HEADER_BYTES 348
#define NIFTI_SINGLE_OFFSET 352
#define NIFTI_INTENT_VECTOR_CODE 1007
#define NIFTI_FLOAT32 16
#define NIFTI_UINT16 512

/* A little-endian float32 NIfTI-1 header of unit voxels (and 4 zero
 * extension bytes), written here rather than by niftilib, which prints
 * its failures on stderr. */
static void build_header(unsigned char h[NIFTI_SINGLE_OFFSET], const pv_volume *v, int components,
                         int single_file)
{
    memset(h, 0, NIFTI_SINGLE_OFFSET);
    h[0] = NIFTI_HEADER_BYTES & 0xff;
    h[1] = NIFTI_HEADER_BYTES >> 8;
    h[38] = 'r'; /* ANALYZE's "regular" */
    int dims[8] = {components > 1 ? 5 : 3, v->nx, v->ny, v->nz, 1, components, 1, 1};
    for (int i = 0; i < 8; i++)
        put_le16(h + 40 + 2 * i, dims[i]);
    if (components > 1)
        put_le16(h + 68, NIFTI_INTENT_VECTOR_CODE);
    put_le16(h + 70, v->type == PV_VOLUME_U16 ? NIFTI_UINT16 : NIFTI_FLOAT32);
    put_le16(h + 72, v->type == PV_VOLUME_U16 ? 16 : 32);
    for (int i = 0; i < 8; i++)
        float_to_le(1.0f, h + 76 + 4 * i); /* pixdim[0] = qfac, then unit voxels */
    float_to_le(single_file ? (float)NIFTI_SINGLE_OFFSET : 0.0f, h + 108);
    float_to_le(1.0f, h + 112);  /* scl_slope: values as stored */
    memcpy(h + 344, single_file ? "n+1" : "ni1", 4);
}

/* An output that is a stdio file or a gzip stream. */
typedef struct nifti_output {
    FILE *file;
    gzFile gz;
    const char *path;
} nifti_output;

static int open_output(nifti_output *out, const char *path, int compressed)
{
    out->path = path;
    out->file = NULL;
    out->gz = NULL;
    if (compressed)
        out->gz = gzopen(path, "wb6");
    else
        out->file = fopen(path, "wb");
    return out->gz || out->file;
}

static int put_bytes(nifti_output *out, const void *bytes, size_t count)
{
    if (out->file)
        return fwrite(bytes, 1, count, out->file) == count;
    return count <= INT_MAX && gzwrite(out->gz, bytes, (unsigned)count) == (int)count;
}

/* Close; 1 when everything reached the file. */
static int close_output(nifti_output *out)
{
    if (out->file)
        return fclose(out->file) == 0;
    return out->gz ? gzclose_w(out->gz) == Z_OK : 0;
}

static int put_volume(nifti_output *out, const pv_volume *v)
{
    unsigned char row[4096];
    const int per_chunk = (int)(sizeof row / pv_volume_sample_size(v->type));
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x += per_chunk) {
                int n = v->nx - x < per_chunk ? v->nx - x : per_chunk;
                row_to_le(v, y, z, x, n, row);
                if (!put_bytes(out, row, pv_volume_sample_size(v->type) * (size_t)n))
                    return 0;
            }
    return 1;
}

/* The data file of a .hdr name: the same name ending in .img. */
static int image_name(const char *path, char *out, size_t size)
{
    int n = snprintf(out, size, "%.*s.img", (int)(strlen(path) - 4), path);
    return n > 0 && (size_t)n < size;
}

/* Writes the header and the volumes (components of a vector field one
 * after the other); a failed write removes what it created. */
static pv_status write_nifti(const char *op, const char *path, const pv_volume *const *volumes,
                             int components)
{
    nifti_target target = target_of(path);
    char data_path[4096] = "";
    if (target == TARGET_PAIR && !image_name(path, data_path, sizeof data_path))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: '%s': name too long", op, path);
    unsigned char header[NIFTI_SINGLE_OFFSET];
    build_header(header, volumes[0], components, target != TARGET_PAIR);
    nifti_output out, data = {NULL, NULL, NULL};
    int ok = open_output(&out, path, target == TARGET_NII_GZ);
    int error = errno;
    if (ok)
        ok = put_bytes(&out, header, target == TARGET_PAIR ? NIFTI_HEADER_BYTES : sizeof header);
    nifti_output *sink = &out;
    if (ok && target == TARGET_PAIR) {
        ok = close_output(&out) && open_output(&data, data_path, 0);
        error = errno;
        out.file = NULL; /* closed */
        sink = &data;
    }
    for (int c = 0; ok && c < components; c++)
        ok = put_volume(sink, volumes[c]);
    if (ok)
        error = errno;
    if (sink->file || sink->gz)
        ok = close_output(sink) && ok;
    if (!ok) {
        remove(path);
        if (data_path[0])
            remove(data_path);
        return pv_fail(NULL, PV_ERR_IO, "%s: writing '%s' failed: %s", op, path,
                       error ? strerror(error) : "I/O error");
    }
    return PV_OK;
}

pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume)
{
    const char *op = "pv_volume_write_nifti";
    if (!path || !pv_volume_is_valid_any_type(volume))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL or volume invalid", op);
    pv_status status = check_write_target(op, path, volume->nx, volume->ny, volume->nz);
    if (status != PV_OK)
        return status;
    const pv_volume *volumes[1] = {volume};
    return write_nifti(op, path, volumes, 1);
}

pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow)
{
    const char *op = "pv_flow_write_nifti";
    if (!path || !flow || !pv_volume_is_valid(&flow->u) || !pv_volume_is_valid(&flow->v) ||
        !pv_volume_is_valid(&flow->w) || !pv_volumes_same_size(&flow->u, &flow->v) ||
        !pv_volumes_same_size(&flow->u, &flow->w))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL or flow is not a valid field", op);
    const pv_volume *u = &flow->u;
    pv_status status = check_write_target(op, path, u->nx, u->ny, u->nz);
    if (status != PV_OK)
        return status;
    const pv_volume *volumes[3] = {&flow->u, &flow->v, &flow->w};
    return write_nifti(op, path, volumes, 3);
}

#else /* !PV_HAVE_NIFTI */

int pv_volume_io_has_nifti(void)
{
    return 0;
}

static pv_status no_nifti(const char *op)
{
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "%s: this build has no NIfTI support (configure with zlib, Debian "
                   "package zlib1g-dev)",
                   op);
}

pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume)
{
    (void)path;
    (void)volume;
    return no_nifti("pv_volume_write_nifti");
}

pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow)
{
    (void)path;
    (void)flow;
    return no_nifti("pv_flow_write_nifti");
}

#endif
