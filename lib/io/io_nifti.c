/* NIfTI-1 (and ANALYZE 7.5) reading without niftilib.
 *
 * niftilib allocates whatever a header claims before anything can be
 * checked, reads a short file as zeros and prints its diagnostics, so the
 * 348-byte header is parsed here and every field that decides an
 * allocation is checked against the bytes the file really holds:
 *  - uncompressed data: vox_offset + all the data the dims announce must
 *    lie inside the file;
 *  - gzip data: those bytes must not exceed PV_IO_MAX_DEFLATE_RATIO times
 *    the compressed size, and the stream must really deliver them.
 * Only the first volume (of a 4D file, or the first component of a vector
 * field) is decoded, straight into the float output in small chunks, so
 * the memory a read takes is the output volume plus one chunk.
 *
 * zlib never prints. */
#include "io.h"

#ifdef PV_HAVE_NIFTI

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define NIFTI1_HEADER_BYTES 348
/* A single-file NIfTI-1 has the header and the 4-byte extension flag
 * before its data. */
#define NIFTI1_MIN_SINGLE_OFFSET 352
#define READ_CHUNK_BYTES 65536

static const char read_op[] = "pv_volume_read_nifti";

/* ================================================================ files */

/* A file read as it is, or through inflate when it starts with the gzip
 * magic.  inflate is driven here rather than through zlib's gz* layer,
 * which reports a stream cut just after the last data byte as a clean
 * end: this reader knows whether the stream really reached its end. */
typedef struct nifti_stream {
    const char *path;
    FILE *file;
    uint64_t file_bytes;        /* on disk */
    int compressed;
    int inflating;              /* z is initialised */
    int stream_end;             /* inflate met the end of the gzip stream */
    z_stream z;
    uint64_t position;          /* (decompressed) bytes consumed */
    unsigned char *input;       /* compressed bytes, READ_CHUNK_BYTES */
} nifti_stream;

static pv_status stream_open(nifti_stream *s, const char *path)
{
    s->path = path;
    int opened = pv_open_regular(path, &s->file, &s->file_bytes);
    if (opened == PV_NOT_REGULAR)
        return pv_fail(NULL, PV_ERR_IO, "%s: '%s' is not a regular file", read_op, path);
    if (opened != 0)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot open '%s': %s", read_op, path,
                       pv_open_regular_reason(opened));
    int first = getc(s->file), second = getc(s->file);
    s->compressed = first == 0x1f && second == 0x8b;
    rewind(s->file);
    if (!s->compressed)
        return PV_OK;
    memset(&s->z, 0, sizeof s->z);
    s->input = malloc(READ_CHUNK_BYTES);
    if (!s->input || inflateInit2(&s->z, 15 + 16) != Z_OK) /* gzip wrapper only */
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': cannot start zlib", read_op, path);
    s->inflating = 1;
    return PV_OK;
}

static void stream_close(nifti_stream *s)
{
    if (s->inflating)
        inflateEnd(&s->z);
    if (s->file)
        fclose(s->file);
    free(s->input);
    s->input = NULL;
    s->inflating = 0;
    s->file = NULL;
}

static pv_status truncated(const nifti_stream *s, const char *what)
{
    if (ferror(s->file))
        return pv_fail(NULL, PV_ERR_IO, "%s: '%s': read error in %s", read_op, s->path, what);
    return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': truncated: the %sfile ends in %s", read_op,
                   s->path, s->compressed ? "decompressed " : "", what);
}

/* Inflate into out until it is full or the stream ends. */
static pv_status inflate_into(nifti_stream *s, unsigned char *out, size_t count, const char *what,
                              size_t *produced)
{
    s->z.next_out = out;
    s->z.avail_out = (uInt)count;
    while (s->z.avail_out > 0 && !s->stream_end) {
        if (s->z.avail_in == 0) {
            size_t got = fread(s->input, 1, READ_CHUNK_BYTES, s->file);
            if (got == 0)
                return truncated(s, what);
            s->z.next_in = s->input;
            s->z.avail_in = (uInt)got;
        }
        int result = inflate(&s->z, Z_NO_FLUSH);
        if (result == Z_STREAM_END)
            s->stream_end = 1;
        else if (result != Z_OK && result != Z_BUF_ERROR)
            return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': corrupt compressed data in %s (%s)",
                           read_op, s->path, what, s->z.msg ? s->z.msg : "zlib error");
    }
    *produced = count - s->z.avail_out;
    return PV_OK;
}

static pv_status stream_read(nifti_stream *s, void *buffer, size_t count, const char *what)
{
    unsigned char *out = buffer;
    while (count > 0) {
        size_t want = count > READ_CHUNK_BYTES ? READ_CHUNK_BYTES : count, got = 0;
        if (!s->compressed) {
            got = fread(out, 1, want, s->file);
            if (got != want)
                return truncated(s, what);
        } else {
            pv_status status = inflate_into(s, out, want, what, &got);
            if (status != PV_OK)
                return status;
            if (got != want)
                return truncated(s, what);
        }
        out += got;
        count -= got;
        s->position += got;
    }
    return PV_OK;
}

/* Move forward to `offset` (reading, so gzip streams are checked too). */
static pv_status stream_skip_to(nifti_stream *s, uint64_t offset, const char *what)
{
    unsigned char scratch[4096];
    while (s->position < offset) {
        uint64_t left = offset - s->position;
        size_t want = left < sizeof scratch ? (size_t)left : sizeof scratch;
        pv_status status = stream_read(s, scratch, want, what);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

/* ============================================================== header */

typedef struct nifti_layout {
    int swapped;                /* the header (and data) are big-endian */
    int single_file;            /* "n+1": data in the header's file */
    int ndim;
    int dim[8];                 /* dim[1..7]; those past ndim are 1 */
    int datatype;
    int voxel_bytes;
    uint64_t vox_offset;
    double slope, inter;        /* identity when the file has no scaling */
} nifti_layout;

static uint32_t load_u32(const unsigned char *p, int big_endian)
{
    if (big_endian)
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int16_t load_i16(const unsigned char *p, int big_endian)
{
    uint16_t bits = big_endian ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
    return (int16_t)bits;
}

static float load_f32(const unsigned char *p, int big_endian)
{
    uint32_t bits = load_u32(p, big_endian);
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Bytes per voxel of the datatypes read here, 0 for the others (complex,
 * RGB, float128). */
static int datatype_bytes(int datatype)
{
    switch (datatype) {
    case 2: case 256: return 1;                 /* uint8, int8 */
    case 4: case 512: return 2;                 /* int16, uint16 */
    case 8: case 768: case 16: return 4;        /* int32, uint32, float32 */
    case 64: case 1024: case 1280: return 8;    /* float64, int64, uint64 */
    default: return 0;
    }
}

static pv_status header_error(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static pv_status header_error(const char *path, const char *fmt, ...)
{
    char detail[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
    return pv_fail(NULL, PV_ERR_FORMAT, "%s: '%s': bad NIfTI header: %s", read_op, path, detail);
}

/* sizeof_hdr is 348 in the writer's byte order: that is how the order is
 * found (NIfTI-1 and ANALYZE 7.5 alike). */
static pv_status parse_byte_order(const unsigned char *h, const char *path, nifti_layout *l)
{
    if (load_u32(h, 0) == NIFTI1_HEADER_BYTES)
        l->swapped = 0;
    else if (load_u32(h, 1) == NIFTI1_HEADER_BYTES)
        l->swapped = 1;
    else
        return header_error(path, "sizeof_hdr is %u, not 348 (not a NIfTI-1 or ANALYZE file)",
                            (unsigned)load_u32(h, 0));
    return PV_OK;
}

static pv_status parse_dims(const unsigned char *h, const char *path, nifti_layout *l)
{
    l->ndim = load_i16(h + 40, l->swapped);
    if (l->ndim < 1 || l->ndim > 7)
        return header_error(path, "dim[0] is %d, not 1 to 7", l->ndim);
    for (int i = 1; i <= 7; i++) {
        int value = load_i16(h + 40 + 2 * i, l->swapped);
        if (i <= l->ndim && value < 1)
            return header_error(path, "dim[%d] is %d, not positive", i, value);
        l->dim[i] = i <= l->ndim ? value : 1;
    }
    l->dim[0] = l->ndim;
    return PV_OK;
}

static pv_status parse_datatype(const unsigned char *h, const char *path, nifti_layout *l)
{
    l->datatype = load_i16(h + 70, l->swapped);
    int bitpix = load_i16(h + 72, l->swapped);
    l->voxel_bytes = datatype_bytes(l->datatype);
    if (l->voxel_bytes == 0)
        return header_error(path, "datatype %d is not a real scalar type this reader converts",
                            l->datatype);
    if (bitpix != 8 * l->voxel_bytes)
        return header_error(path, "bitpix is %d but datatype %d has %d bits", bitpix,
                            l->datatype, 8 * l->voxel_bytes);
    return PV_OK;
}

static pv_status parse_offset(const unsigned char *h, const char *path, nifti_layout *l)
{
    const unsigned char *magic = h + 344;
    float offset = load_f32(h + 108, l->swapped);
    l->single_file = memcmp(magic, "n+1", 4) == 0;
    /* Offsets past 2^53 bytes would not be exact and no file is that big. */
    if (!(offset >= 0.0f) || offset > 9.0e15f || offset != floorf(offset))
        return header_error(path, "vox_offset %g is not a whole number of bytes",
                            (double)offset);
    l->vox_offset = (uint64_t)offset;
    if (l->single_file && l->vox_offset < NIFTI1_MIN_SINGLE_OFFSET)
        return header_error(path, "vox_offset %g lies inside the header (a .nii file's data "
                            "starts at 352 or later)", (double)offset);
    return PV_OK;
}

/* scl_slope 0 means "no scaling" (NIfTI-1); ANALYZE's funused1 sits at
 * the same place and means the same to the tools that set it. */
static pv_status parse_scaling(const unsigned char *h, const char *path, nifti_layout *l)
{
    float slope = load_f32(h + 112, l->swapped);
    float inter = load_f32(h + 116, l->swapped);
    if (!isfinite(slope))
        return header_error(path, "scl_slope is not finite");
    if (slope != 0.0f && !isfinite(inter))
        return header_error(path, "scl_inter is not finite");
    l->slope = slope != 0.0f ? slope : 1.0;
    l->inter = slope != 0.0f ? inter : 0.0;
    return PV_OK;
}

static pv_status parse_header(const unsigned char *h, const char *path, nifti_layout *l)
{
    pv_status status = parse_byte_order(h, path, l);
    if (status == PV_OK)
        status = parse_dims(h, path, l);
    if (status == PV_OK)
        status = parse_datatype(h, path, l);
    if (status == PV_OK)
        status = parse_offset(h, path, l);
    if (status == PV_OK)
        status = parse_scaling(h, path, l);
    return status;
}

/* Bytes of the first volume and of all the data the dims announce; 0 for
 * the latter when it does not even fit in 64 bits. */
static void data_sizes(const nifti_layout *l, uint64_t *first, uint64_t *total)
{
    uint64_t bytes = (uint64_t)l->voxel_bytes;
    for (int i = 1; i <= 3; i++)
        bytes *= (uint64_t)l->dim[i]; /* < 2^3 * 2^45: cannot overflow */
    *first = bytes;
    for (int i = 4; i <= 7 && bytes != 0; i++)
        bytes = bytes > UINT64_MAX / (uint64_t)l->dim[i] ? 0 : bytes * (uint64_t)l->dim[i];
    *total = bytes;
}

/* The data the header announces must be in the file (or, compressed, no
 * more than deflate can produce from it), before anything is allocated. */
static pv_status check_data_fits(const nifti_layout *l, const nifti_stream *data)
{
    uint64_t first, total;
    data_sizes(l, &first, &total);
    uint64_t end = total != 0 && total <= UINT64_MAX - l->vox_offset ? l->vox_offset + total : 0;
    uint64_t capacity = data->file_bytes;
    if (data->compressed)
        capacity = capacity > UINT64_MAX / PV_IO_MAX_DEFLATE_RATIO
                       ? UINT64_MAX
                       : capacity * PV_IO_MAX_DEFLATE_RATIO;
    if (end == 0 || end > capacity)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "%s: '%s': the header's dim (%dx%dx%dx%dx%dx%dx%d) and datatype %d need "
                       "data from vox_offset %llu to byte %llu%s, but the %sfile holds %llu "
                       "bytes",
                       read_op, data->path, l->dim[1], l->dim[2], l->dim[3], l->dim[4],
                       l->dim[5], l->dim[6], l->dim[7], l->datatype,
                       (unsigned long long)l->vox_offset, (unsigned long long)end,
                       end == 0 ? " (more than 2^64)" : "",
                       data->compressed ? "compressed " : "", (unsigned long long)data->file_bytes);
    return PV_OK;
}

/* ================================================================ data */

static double voxel_value(const unsigned char *p, int datatype, int big_endian)
{
    unsigned char v[8];
    int bytes = datatype_bytes(datatype);
    for (int i = 0; i < bytes; i++)
        v[i] = p[big_endian ? bytes - 1 - i : i]; /* little-endian in v */
    uint64_t bits = 0;
    for (int i = bytes - 1; i >= 0; i--)
        bits = bits << 8 | v[i];
    switch (datatype) {
    case 2: return (double)(uint8_t)bits;
    case 256: return (double)(int8_t)(uint8_t)bits;
    case 4: return (double)(int16_t)(uint16_t)bits;
    case 512: return (double)(uint16_t)bits;
    case 8: return (double)(int32_t)(uint32_t)bits;
    case 768: return (double)(uint32_t)bits;
    case 1024: return (double)(int64_t)bits;
    case 1280: return (double)bits;
    case 16: {
        uint32_t word = (uint32_t)bits;
        float value;
        memcpy(&value, &word, sizeof value);
        return value;
    }
    default: {
        double value;
        memcpy(&value, &bits, sizeof value);
        return value;
    }
    }
}

static pv_status read_first_volume(nifti_stream *s, const nifti_layout *l, pv_volume *volume)
{
    unsigned char *chunk = malloc(READ_CHUNK_BYTES);
    if (!chunk)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: '%s': no memory for a read buffer", read_op,
                       s->path);
    size_t count = (size_t)l->dim[1] * (size_t)l->dim[2] * (size_t)l->dim[3], done = 0;
    size_t per_chunk = READ_CHUNK_BYTES / (size_t)l->voxel_bytes;
    pv_status status = stream_skip_to(s, l->vox_offset, "the bytes before vox_offset");
    while (status == PV_OK && done < count) {
        size_t n = count - done < per_chunk ? count - done : per_chunk;
        status = stream_read(s, chunk, n * (size_t)l->voxel_bytes, "the voxel data");
        for (size_t i = 0; status == PV_OK && i < n; i++) {
            double value = voxel_value(chunk + i * (size_t)l->voxel_bytes, l->datatype,
                                       l->swapped);
            if (volume->type == PV_VOLUME_U16)
                volume->data_u16[done + i] = (uint16_t)value;   /* kept as stored */
            else
                volume->data[done + i] = (float)(value * l->slope + l->inter);
        }
        done += n;
    }
    free(chunk);
    return status;
}

/* When the volume read is all the data, a compressed file is inflated to
 * the end of its stream so that zlib checks the gzip trailer's CRC and
 * length: damaged or cut data is refused rather than returned.  (A file of
 * many volumes is not decompressed to its end for one of them.) */
static pv_status check_gzip_end(nifti_stream *s, const nifti_layout *l)
{
    uint64_t first, total;
    data_sizes(l, &first, &total);
    if (!s->compressed || total != first)
        return PV_OK;
    unsigned char extra[256];
    size_t produced = 0;
    while (!s->stream_end) {
        pv_status status = inflate_into(s, extra, sizeof extra, "the gzip trailer", &produced);
        if (status != PV_OK)
            return status;
    }
    return PV_OK;
}

/* ============================================================== naming */

/* The companion of a .hdr/.img file name: `from` (".hdr" or ".img") is
 * replaced by `to`, keeping a ".gz" tail; "" when path is not such a name
 * or the result does not fit. */
static void companion_name(const char *path, const char *from, const char *to, int gz,
                           char *out, size_t size)
{
    out[0] = '\0';
    size_t n = strlen(path), tail = pv_ends_with_ignoring_case(path, ".gz") ? 3 : 0;
    if (n < tail + 4 || !pv_ends_with_ignoring_case(path, tail ? (from[1] == 'h' ? ".hdr.gz" : ".img.gz") : from))
        return;
    int length = snprintf(out, size, "%.*s%s%s", (int)(n - tail - 4), path, to, gz ? ".gz" : "");
    if (length < 0 || (size_t)length >= size)
        out[0] = '\0';
}

static int is_file(const char *path)
{
    struct stat info;
    return path[0] != '\0' && stat(path, &info) == 0 && S_ISREG(info.st_mode);
}

/* For a .hdr/.img name, its .hdr (header) and .img (data) files; the
 * companion may be compressed or not, whatever the name given. */
static pv_status pair_names(const char *path, char *header, char *data, size_t size)
{
    int is_image = pv_ends_with_ignoring_case(path, ".img") || pv_ends_with_ignoring_case(path, ".img.gz");
    char *other = is_image ? header : data;
    snprintf(is_image ? data : header, size, "%s", path);
    for (int gz = 0; gz <= 1; gz++) {
        companion_name(path, is_image ? ".img" : ".hdr", is_image ? ".hdr" : ".img",
                       pv_ends_with_ignoring_case(path, ".gz") ? !gz : gz, other, size);
        if (is_file(other))
            return PV_OK;
    }
    return pv_fail(NULL, PV_ERR_FORMAT,
                   "%s: '%s' is not a single-file NIfTI-1 (magic \"n+1\") and has no %s file "
                   "beside it", read_op, path, is_image ? ".hdr" : ".img");
}

/* ================================================================ read */

static pv_status read_header(const char *path, nifti_layout *layout, nifti_stream *stream)
{
    unsigned char header[NIFTI1_HEADER_BYTES];
    pv_status status = stream_open(stream, path);
    if (status == PV_OK)
        status = stream_read(stream, header, sizeof header, "the header");
    if (status == PV_OK)
        status = parse_header(header, path, layout);
    return status;
}

/* NIFTI_TYPE_UINT16 without scaling: its samples are the values. */
static int holds_plain_u16(const nifti_layout *l)
{
    return l->datatype == 512 && l->slope == 1.0 && l->inter == 0.0;
}

static pv_status read_data(nifti_stream *data, const nifti_layout *layout, int keep_u16,
                           pv_volume *out)
{
    pv_volume volume = {0};
    pv_status status = check_data_fits(layout, data);
    const int *d = layout->dim;
    if (status == PV_OK && keep_u16 && holds_plain_u16(layout))
        status = pv_volume_alloc_u16(&volume, d[1], d[2], d[3]);
    else if (status == PV_OK)
        status = pv_volume_alloc(&volume, d[1], d[2], d[3]);
    if (status == PV_OK)
        status = read_first_volume(data, layout, &volume);
    if (status == PV_OK)
        status = check_gzip_end(data, layout);
    if (status != PV_OK) {
        pv_volume_free(&volume);
        return status;
    }
    *out = volume;
    return PV_OK;
}

static pv_status read_nifti(const char *path, int keep_u16, pv_volume *out)
{
    if (!path || !out)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: path or out is NULL", read_op);
    char header_path[4096], data_path[4096];
    nifti_layout layout;
    nifti_stream header, data;
    memset(&layout, 0, sizeof layout);
    memset(&header, 0, sizeof header);
    memset(&data, 0, sizeof data);
    int is_image = pv_ends_with_ignoring_case(path, ".img") || pv_ends_with_ignoring_case(path, ".img.gz");
    pv_status status = PV_OK;
    if (is_image)
        status = pair_names(path, header_path, data_path, sizeof header_path);
    if (status == PV_OK)
        status = read_header(is_image ? header_path : path, &layout, &header);
    if (status == PV_OK && !layout.single_file) {
        if (!is_image)
            status = pair_names(path, header_path, data_path, sizeof header_path);
        if (status == PV_OK)
            status = stream_open(&data, data_path);
    }
    if (status == PV_OK)
        status = read_data(layout.single_file ? &header : &data, &layout, keep_u16, out);
    stream_close(&header);
    stream_close(&data);
    return status;
}

pv_status pv_volume_read_nifti(const char *path, pv_volume *out)
{
    return read_nifti(path, 0, out);
}

pv_status pv_volume_read_nifti_native(const char *path, pv_volume *out)
{
    return read_nifti(path, 1, out);
}

#else /* !PV_HAVE_NIFTI */

pv_status pv_volume_read_nifti(const char *path, pv_volume *out)
{
    (void)path;
    (void)out;
    return pv_fail(NULL, PV_ERR_UNSUPPORTED,
                   "pv_volume_read_nifti: this build has no NIfTI support (configure with "
                   "zlib, Debian package zlib1g-dev)");
}

pv_status pv_volume_read_nifti_native(const char *path, pv_volume *out)
{
    return pv_volume_read_nifti(path, out);
}

#endif /* PV_HAVE_NIFTI */
