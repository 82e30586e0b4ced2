/* Middlebury .flo flow files and the colour coding of a 2D flow field.
 *
 * .flo layout (all little-endian): the float 202021.25 (the bytes "PIEH"),
 * int32 width, int32 height, then height rows of width (u, v) float32
 * pairs.  The reader trusts nothing: the magic, positive sizes, and a file
 * size equal to exactly what the header announces are checked before any
 * allocation. */
#include "../core/internal.h"

#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLO_MAGIC 202021.25f
#define PI_D 3.14159265358979323846
#define FLO_HEADER_BYTES 12
/* Flow components above this magnitude mark unknown pixels (Middlebury). */
#define FLO_UNKNOWN 1e9f

static uint32_t load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void store_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static float load_float(const unsigned char *p)
{
    uint32_t bits = load_le32(p);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void store_float(unsigned char *p, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    store_le32(p, bits);
}

/* Bytes of the whole file, or -1. */
static long file_size(FILE *f)
{
    if (fseek(f, 0, SEEK_END) != 0)
        return -1;
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0)
        return -1;
    return size;
}

static pv_status check_flo_header(const char *path, const unsigned char *head, long size,
                                  int *width, int *height)
{
    if (load_float(head) != FLO_MAGIC)
        return pv_fail(NULL, PV_ERR_FORMAT, "%s: not a .flo file (magic is not 202021.25)", path);
    int32_t w = (int32_t)load_le32(head + 4), h = (int32_t)load_le32(head + 8);
    size_t pixels, bytes;
    if (w < 1 || h < 1 || !pv_size_mul((size_t)w, (size_t)h, &pixels) ||
        !pv_size_mul(pixels, 8, &bytes) || bytes > (size_t)size - FLO_HEADER_BYTES ||
        pixels > (size_t)INT32_MAX)
        return pv_fail(NULL, PV_ERR_FORMAT, "%s: size %dx%d does not fit the file's %ld bytes",
                       path, (int)w, (int)h, size);
    if (bytes != (size_t)size - FLO_HEADER_BYTES)
        return pv_fail(NULL, PV_ERR_FORMAT,
                       "%s: %ld bytes, but a %dx%d field takes exactly %zu", path, size, (int)w,
                       (int)h, bytes + FLO_HEADER_BYTES);
    *width = (int)w;
    *height = (int)h;
    return PV_OK;
}

/* Rows of (u, v) pairs into the field. */
static pv_status read_flo_rows(FILE *f, const char *path, pv_flow_field *field)
{
    const int width = field->u.nx;
    unsigned char *row = malloc((size_t)width * 8);
    if (!row)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: no memory for a row", path);
    pv_status status = PV_OK;
    for (int y = 0; y < field->u.ny && status == PV_OK; y++) {
        if (fread(row, 8, (size_t)width, f) != (size_t)width) {
            status = pv_fail(NULL, PV_ERR_IO, "%s: read failed at row %d", path, y);
            break;
        }
        float *u = field->u.data + (ptrdiff_t)y * field->u.stride_y;
        float *v = field->v.data + (ptrdiff_t)y * field->v.stride_y;
        for (int x = 0; x < width; x++) {
            u[x] = load_float(row + 8 * (size_t)x);
            v[x] = load_float(row + 8 * (size_t)x + 4);
        }
    }
    free(row);
    return status;
}

pv_status pv_flow_read_flo(const char *path, pv_flow_field *field)
{
    if (!path || !field)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_read_flo: NULL argument");
    FILE *f = NULL;
    int opened = pv_open_regular(path, &f, NULL);
    if (opened != 0)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot open: %s", path,
                       pv_open_regular_reason(opened));
    unsigned char head[FLO_HEADER_BYTES];
    long size = file_size(f);
    int width = 0, height = 0;
    pv_status status = PV_OK;
    if (size < FLO_HEADER_BYTES || fread(head, 1, sizeof head, f) != sizeof head)
        status = pv_fail(NULL, PV_ERR_FORMAT, "%s: shorter than a .flo header", path);
    if (status == PV_OK)
        status = check_flo_header(path, head, size, &width, &height);
    pv_flow_field out;
    if (status == PV_OK)
        status = pv_flow_field_alloc(&out, width, height, 1);
    if (status == PV_OK) {
        status = read_flo_rows(f, path, &out);
        if (status == PV_OK)
            *field = out;
        else
            pv_flow_field_free(&out);
    }
    fclose(f);
    return status;
}

static pv_status check_2d_field(const char *what, const pv_flow_field *field)
{
    if (!field || !field->u.data || !field->v.data)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: field is NULL or empty", what);
    if (field->u.nz != 1 || field->v.nx != field->u.nx || field->v.ny != field->u.ny ||
        field->v.nz != 1 || field->u.nx < 1 || field->u.ny < 1)
        return pv_fail(NULL, PV_ERR_INVALID, "%s: needs a 2D field (nz = 1), got %dx%dx%d", what,
                       field->u.nx, field->u.ny, field->u.nz);
    return PV_OK;
}

pv_status pv_flow_write_flo(const char *path, const pv_flow_field *field)
{
    if (!path)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_write_flo: path is NULL");
    pv_status status = check_2d_field("flow_write_flo", field);
    if (status != PV_OK)
        return status;
    const int width = field->u.nx;
    unsigned char *row = malloc((size_t)width * 8);
    if (!row)
        return pv_fail(NULL, PV_ERR_NOMEM, "%s: no memory for a row", path);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(row);
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot create", path);
    }
    unsigned char head[FLO_HEADER_BYTES];
    store_float(head, FLO_MAGIC);
    store_le32(head + 4, (uint32_t)width);
    store_le32(head + 8, (uint32_t)field->u.ny);
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head;
    for (int y = 0; ok && y < field->u.ny; y++) {
        const float *u = field->u.data + (ptrdiff_t)y * field->u.stride_y;
        const float *v = field->v.data + (ptrdiff_t)y * field->v.stride_y;
        for (int x = 0; x < width; x++) {
            store_float(row + 8 * (size_t)x, u[x]);
            store_float(row + 8 * (size_t)x + 4, v[x]);
        }
        ok = fwrite(row, 8, (size_t)width, f) == (size_t)width;
    }
    free(row);
    ok = fclose(f) == 0 && ok;
    return ok ? PV_OK : pv_fail(NULL, PV_ERR_IO, "%s: write failed", path);
}

/* ------------------------------------------------------------ evaluation */

static int known_vector(float u, float v)
{
    return isfinite(u) && isfinite(v) && fabsf(u) < FLO_UNKNOWN && fabsf(v) < FLO_UNKNOWN;
}

/* Angle in degrees between (u1, v1, 1) and (u2, v2, 1) (Barron et al.). */
static double angular_error(double u1, double v1, double u2, double v2)
{
    double dot = u1 * u2 + v1 * v2 + 1.0;
    double norms = sqrt((u1 * u1 + v1 * v1 + 1.0) * (u2 * u2 + v2 * v2 + 1.0));
    double c = dot / norms;
    return acos(c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c) * (180.0 / PI_D);
}

pv_status pv_flow_error_2d(const pv_flow_field *estimate, const pv_flow_field *truth, int border,
                           pv_flow_error *error)
{
    pv_status status = check_2d_field("flow_error_2d", estimate);
    if (status == PV_OK)
        status = check_2d_field("flow_error_2d", truth);
    if (status != PV_OK)
        return status;
    if (!error || border < 0 || estimate->u.nx != truth->u.nx || estimate->u.ny != truth->u.ny)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_error_2d: sizes differ, bad border or NULL");
    pv_flow_error e = {0.0, 0.0, 0.0, 0};
    double epe_sum = 0.0, ae_sum = 0.0;
    for (int y = border; y < truth->u.ny - border; y++)
        for (int x = border; x < truth->u.nx - border; x++) {
            const ptrdiff_t ti = (ptrdiff_t)y * truth->u.stride_y + x;
            const ptrdiff_t ei = (ptrdiff_t)y * estimate->u.stride_y + x;
            const float tu = truth->u.data[ti], tv = truth->v.data[(ptrdiff_t)y * truth->v.stride_y + x];
            const float eu = estimate->u.data[ei];
            const float ev = estimate->v.data[(ptrdiff_t)y * estimate->v.stride_y + x];
            if (!known_vector(tu, tv))
                continue;
            double epe = hypot((double)eu - tu, (double)ev - tv);
            epe_sum += epe;
            ae_sum += angular_error(eu, ev, tu, tv);
            if (epe > e.max_endpoint)
                e.max_endpoint = epe;
            e.known++;
        }
    if (e.known == 0)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_error_2d: no known truth inside the border");
    e.mean_endpoint = epe_sum / (double)e.known;
    e.mean_angular_deg = ae_sum / (double)e.known;
    *error = e;
    return PV_OK;
}

/* ----------------------------------------------------------- colour coding
 *
 * The Baker et al. (Middlebury) coding: the direction picks a hue on a
 * wheel of 55 steps through red, yellow, green, cyan, blue and magenta
 * (15, 6, 4, 11, 13 and 6 steps), the magnitude (relative to max_radius)
 * the saturation: zero flow is white, max_radius a full colour, beyond it
 * the colour darkened to 75%. */

static const int wheel_steps[6] = {15, 6, 4, 11, 13, 6};
#define WHEEL_SIZE 55

/* Colour of wheel position k (0..54), components 0..1. */
static void wheel_colour(int k, float rgb[3])
{
    /* each segment: which channel is full, which ramps, and the direction */
    static const int full[6] = {0, 1, 1, 2, 2, 0}, ramp[6] = {1, 0, 2, 1, 0, 2};
    static const int rising[6] = {1, 0, 1, 0, 1, 0};
    int segment = 0;
    while (segment < 5 && k >= wheel_steps[segment]) {
        k -= wheel_steps[segment];
        segment++;
    }
    float t = (float)k / (float)wheel_steps[segment];
    rgb[0] = rgb[1] = rgb[2] = 0.0f;
    rgb[full[segment]] = 1.0f;
    rgb[ramp[segment]] = rising[segment] ? t : 1.0f - t;
}

static void flow_colour(float u, float v, float max_radius, unsigned char out[3])
{
    if (!known_vector(u, v)) {
        out[0] = out[1] = out[2] = 0;
        return;
    }
    float fu = u / max_radius, fv = v / max_radius;
    float radius = sqrtf(fu * fu + fv * fv);
    float angle = atan2f(-fv, -fu) / (float)PI_D; /* -1..1 */
    float position = (angle + 1.0f) / 2.0f * (float)(WHEEL_SIZE - 1);
    int k0 = (int)position, k1 = (k0 + 1) % WHEEL_SIZE;
    float f = position - (float)k0, c0[3], c1[3];
    wheel_colour(k0 % WHEEL_SIZE, c0);
    wheel_colour(k1, c1);
    for (int c = 0; c < 3; c++) {
        float value = (1.0f - f) * c0[c] + f * c1[c];
        value = radius <= 1.0f ? 1.0f - radius * (1.0f - value) : value * 0.75f;
        out[c] = (unsigned char)(255.0f * value + 0.5f);
    }
}

static float largest_known_radius(const pv_flow_field *field)
{
    float largest = 0.0f;
    for (int y = 0; y < field->u.ny; y++)
        for (int x = 0; x < field->u.nx; x++) {
            float u = field->u.data[(ptrdiff_t)y * field->u.stride_y + x];
            float v = field->v.data[(ptrdiff_t)y * field->v.stride_y + x];
            if (known_vector(u, v) && hypotf(u, v) > largest)
                largest = hypotf(u, v);
        }
    return largest > 0.0f ? largest : 1.0f;
}

typedef struct rgb_writer {
    png_structp png;
    png_infop info;
    FILE *file;
    unsigned char *pixels;
    int width, height;
    char message[256];
} rgb_writer;

static void record_write_error(png_structp png, png_const_charp message)
{
    rgb_writer *w = png_get_error_ptr(png);
    snprintf(w->message, sizeof w->message, "%s", message);
    png_longjmp(png, 1);
}

/* Separate from the caller so that setjmp guards only libpng's calls. */
static int encode_rgb(rgb_writer *w)
{
    if (setjmp(png_jmpbuf(w->png)))
        return -1;
    png_init_io(w->png, w->file);
    png_set_IHDR(w->png, w->info, (png_uint_32)w->width, (png_uint_32)w->height, 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(w->png, w->info);
    for (int y = 0; y < w->height; y++)
        png_write_row(w->png, w->pixels + (size_t)y * (size_t)w->width * 3);
    png_write_end(w->png, NULL);
    return 0;
}

static pv_status write_rgb_png(const char *path, unsigned char *pixels, int width, int height)
{
    rgb_writer w;
    memset(&w, 0, sizeof w);
    w.pixels = pixels;
    w.width = width;
    w.height = height;
    w.file = fopen(path, "wb");
    if (!w.file)
        return pv_fail(NULL, PV_ERR_IO, "%s: cannot create", path);
    w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, record_write_error, NULL);
    w.info = w.png ? png_create_info_struct(w.png) : NULL;
    int failed = !w.info || encode_rgb(&w) != 0;
    png_destroy_write_struct(&w.png, w.info ? &w.info : NULL);
    failed = fclose(w.file) != 0 || failed;
    if (failed)
        return pv_fail(NULL, PV_ERR_IO, "%s: PNG write failed%s%s", path, w.message[0] ? ": " : "",
                       w.message);
    return PV_OK;
}

pv_status pv_flow_write_color_png(const char *path, const pv_flow_field *field, float max_radius)
{
    if (!path)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_write_color_png: path is NULL");
    pv_status status = check_2d_field("flow_write_color_png", field);
    if (status != PV_OK)
        return status;
    if (!isfinite(max_radius) || max_radius < 0.0f)
        return pv_fail(NULL, PV_ERR_INVALID, "flow_write_color_png: max_radius %g",
                       (double)max_radius);
    float radius = max_radius > 0.0f ? max_radius : largest_known_radius(field);
    size_t bytes;
    if (!pv_size_mul((size_t)field->u.nx * 3, (size_t)field->u.ny, &bytes))
        return pv_fail(NULL, PV_ERR_NOMEM, "flow_write_color_png: size overflows");
    unsigned char *pixels = malloc(bytes);
    if (!pixels)
        return pv_fail(NULL, PV_ERR_NOMEM, "flow_write_color_png: no memory");
    for (int y = 0; y < field->u.ny; y++)
        for (int x = 0; x < field->u.nx; x++)
            flow_colour(field->u.data[(ptrdiff_t)y * field->u.stride_y + x],
                        field->v.data[(ptrdiff_t)y * field->v.stride_y + x], radius,
                        pixels + ((size_t)y * (size_t)field->u.nx + (size_t)x) * 3);
    status = write_rgb_png(path, pixels, field->u.nx, field->u.ny);
    free(pixels);
    return status;
}
