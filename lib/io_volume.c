/* Volume I/O: raw little-endian float32 and, when configured with
 * niftilib (PV_HAVE_NIFTI), NIfTI-1 scalar volumes and vector fields.
 * niftilib's own diagnostics are switched off (debug level 0): failures are
 * reported through pv_last_error() like every other call. */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef PV_HAVE_NIFTI
#include <nifti1_io.h>
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

static pv_status read_raw_values(FILE *f, const char *path, pv_volume *volume)
{
    unsigned char chunk[4096];
    size_t count = (size_t)volume->nx * (size_t)volume->ny * (size_t)volume->nz, done = 0;
    while (done < count) {
        size_t want = count - done < sizeof chunk / 4 ? count - done : sizeof chunk / 4;
        if (fread(chunk, 4, want, f) != want)
            return pv_fail(NULL, PV_ERR_IO, "pv_volume_read_raw: %s: read failed", path);
        for (size_t i = 0; i < want; i++)
            volume->data[done + i] = float_from_le(chunk + 4 * i);
        done += want;
    }
    return PV_OK;
}

pv_status pv_volume_read_raw(const char *path, int nx, int ny, int nz, pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_read_raw: path or out is NULL");
    if (nx < 1 || ny < 1 || nz < 1)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_read_raw: size %dx%dx%d is not positive",
                       nx, ny, nz);
    size_t count, bytes;
    if (!pv_size_mul((size_t)nx * (size_t)ny, (size_t)nz, &count) ||
        !pv_size_mul(count, 4, &bytes) || bytes > (size_t)LLONG_MAX)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_read_raw: size %dx%dx%d overflows", nx,
                       ny, nz);
    FILE *f = fopen(path, "rb");
    if (!f)
        return pv_fail(NULL, PV_ERR_IO, "pv_volume_read_raw: cannot open %s: %s", path,
                       strerror(errno));
    long long size = file_bytes(f);
    pv_status status = PV_OK;
    if (size != (long long)bytes)
        status = pv_fail(NULL, PV_ERR_FORMAT,
                         "pv_volume_read_raw: %s holds %lld bytes, a %dx%dx%d float32 volume "
                         "needs %zu",
                         path, size, nx, ny, nz, bytes);
    pv_volume volume = {0, 0, 0, 0, 0, NULL};
    if (status == PV_OK)
        status = pv_volume_alloc(&volume, nx, ny, nz);
    if (status == PV_OK)
        status = read_raw_values(f, path, &volume);
    fclose(f);
    if (status != PV_OK) {
        pv_volume_free(&volume);
        return status;
    }
    *out = volume;
    return PV_OK;
}

pv_status pv_volume_write_raw(const char *path, const pv_volume *volume)
{
    if (!path || !pv_volume_is_valid(volume))
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_write_raw: path is NULL or volume invalid");
    FILE *f = fopen(path, "wb");
    if (!f)
        return pv_fail(NULL, PV_ERR_IO, "pv_volume_write_raw: cannot create %s: %s", path,
                       strerror(errno));
    int ok = 1;
    unsigned char b[4];
    for (int z = 0; z < volume->nz && ok; z++)
        for (int y = 0; y < volume->ny && ok; y++) {
            const float *row = volume->data + (ptrdiff_t)y * volume->stride_y +
                               (ptrdiff_t)z * volume->stride_z;
            for (int x = 0; x < volume->nx && ok; x++) {
                float_to_le(row[x], b);
                ok = fwrite(b, 4, 1, f) == 1;
            }
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

/* Voxel i of the file's data as float, or 0 with *known = 0 for a
 * datatype this reader does not convert. */
static double nifti_value(const nifti_image *nim, size_t i, int *known)
{
    *known = 1;
    switch (nim->datatype) {
    case DT_UINT8: return ((const uint8_t *)nim->data)[i];
    case DT_INT8: return ((const int8_t *)nim->data)[i];
    case DT_INT16: return ((const int16_t *)nim->data)[i];
    case DT_UINT16: return ((const uint16_t *)nim->data)[i];
    case DT_INT32: return ((const int32_t *)nim->data)[i];
    case DT_UINT32: return ((const uint32_t *)nim->data)[i];
    case DT_FLOAT32: return ((const float *)nim->data)[i];
    case DT_FLOAT64: return ((const double *)nim->data)[i];
    default: *known = 0; return 0.0;
    }
}

static pv_status nifti_to_volume(const nifti_image *nim, const char *path, pv_volume *out)
{
    if (nim->nx < 1 || nim->ny < 1 || nim->nz < 1 || !nim->data)
        return pv_fail(NULL, PV_ERR_FORMAT, "pv_volume_read_nifti: %s has no voxel data", path);
    pv_volume volume;
    pv_status status = pv_volume_alloc(&volume, nim->nx, nim->ny, nim->nz);
    if (status != PV_OK)
        return status;
    const double slope = nim->scl_slope != 0.0f ? nim->scl_slope : 1.0;
    const double inter = nim->scl_slope != 0.0f ? nim->scl_inter : 0.0;
    size_t count = (size_t)nim->nx * (size_t)nim->ny * (size_t)nim->nz;
    int known = 1;
    for (size_t i = 0; i < count && known; i++)
        volume.data[i] = (float)(nifti_value(nim, i, &known) * slope + inter);
    if (!known) {
        pv_volume_free(&volume);
        return pv_fail(NULL, PV_ERR_FORMAT, "pv_volume_read_nifti: %s: datatype %d unsupported",
                       path, nim->datatype);
    }
    *out = volume;
    return PV_OK;
}

pv_status pv_volume_read_nifti(const char *path, pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "pv_volume_read_nifti: path or out is NULL");
    nifti_set_debug_level(0);
    nifti_image *nim = nifti_image_read(path, 1);
    if (!nim)
        return pv_fail(NULL, PV_ERR_FORMAT, "pv_volume_read_nifti: cannot read %s as NIfTI", path);
    pv_status status = nifti_to_volume(nim, path, out);
    nifti_image_free(nim);
    return status;
}

/* Write nim to path; niftilib's writer reports nothing, so success is the
 * file existing with at least header + data bytes. */
static pv_status write_nim(nifti_image *nim, const char *path, const char *op)
{
    if (nifti_set_filenames(nim, path, 0, 1) != 0)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: %s is not a NIfTI file name", op, path);
    remove(nim->fname);
    nifti_image_write(nim);
    struct stat info;
    int compressed = strstr(nim->fname, ".gz") != NULL;
    if (stat(nim->fname, &info) != 0 ||
        (!compressed && (size_t)info.st_size < nim->nvox * (size_t)nim->nbyper))
        return pv_fail(NULL, PV_ERR_IO, "%s: writing %s failed", op, path);
    return PV_OK;
}

static nifti_image *new_float_nim(int nx, int ny, int nz, int components)
{
    int dims[8] = {components > 1 ? 5 : 3, nx, ny, nz, 1, components, 1, 1};
    nifti_image *nim = nifti_make_new_nim(dims, DT_FLOAT32, 1);
    if (nim && components > 1)
        nim->intent_code = NIFTI_INTENT_VECTOR;
    return nim;
}

static void copy_into(float *dst, const pv_volume *v)
{
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            memcpy(dst + ((size_t)z * v->ny + y) * v->nx,
                   v->data + (ptrdiff_t)y * v->stride_y + (ptrdiff_t)z * v->stride_z,
                   (size_t)v->nx * sizeof(float));
}

pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume)
{
    const char *op = "pv_volume_write_nifti";
    if (!path || !pv_volume_is_valid(volume))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL or volume invalid", op);
    nifti_set_debug_level(0);
    nifti_image *nim = new_float_nim(volume->nx, volume->ny, volume->nz, 1);
    if (!nim)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: no memory for the NIfTI image", op);
    copy_into(nim->data, volume);
    pv_status status = write_nim(nim, path, op);
    nifti_image_free(nim);
    return status;
}

pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow)
{
    const char *op = "pv_flow_write_nifti";
    if (!path || !flow || !pv_volume_is_valid(&flow->u) || !pv_volume_is_valid(&flow->v) ||
        !pv_volume_is_valid(&flow->w) || !pv_volumes_same_size(&flow->u, &flow->v) ||
        !pv_volumes_same_size(&flow->u, &flow->w))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path is NULL or flow is not a valid field", op);
    nifti_set_debug_level(0);
    const pv_volume *u = &flow->u;
    nifti_image *nim = new_float_nim(u->nx, u->ny, u->nz, 3);
    if (!nim)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: no memory for the NIfTI image", op);
    size_t volume_count = (size_t)u->nx * (size_t)u->ny * (size_t)u->nz;
    copy_into((float *)nim->data, &flow->u);
    copy_into((float *)nim->data + volume_count, &flow->v);
    copy_into((float *)nim->data + 2 * volume_count, &flow->w);
    pv_status status = write_nim(nim, path, op);
    nifti_image_free(nim);
    return status;
}

#else /* !PV_HAVE_NIFTI */

int pv_volume_io_has_nifti(void)
{
    return 0;
}

static pv_status no_nifti(const char *op)
{
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "%s: this build has no NIfTI support (configure with niftilib, Debian "
                   "package libnifti2-dev)",
                   op);
}

pv_status pv_volume_read_nifti(const char *path, pv_volume *out)
{
    (void)path;
    (void)out;
    return no_nifti("pv_volume_read_nifti");
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
