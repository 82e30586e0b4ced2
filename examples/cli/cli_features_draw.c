/* parvis match --draw: both images side by side in grey, a line per
 * match, and a homography's picture of the first image's outline. */
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* The outline's colour: white, apart from the match lines' map. */
static const unsigned char outline_colour[3] = {255, 255, 255};

static void put_pixel(pv_image *canvas, int x, int y, const unsigned char rgb[3])
{
    /* RGB8: stride counts pixels of three bytes */
    unsigned char *p = (unsigned char *)canvas->data + ((ptrdiff_t)y * canvas->stride + x) * 3;
    memcpy(p, rgb, 3);
}

/* Liang-Barsky: shrinks the segment p0 + t (p1 - p0), t in [lo, hi], to
 * the part where 0 <= q + t dq <= limit.  0 when nothing is left. */
static int clip_axis(double q, double dq, double limit, double *lo, double *hi)
{
    if (dq == 0.0)
        return q >= 0.0 && q <= limit;
    double ta = (0.0 - q) / dq, tb = (limit - q) / dq;
    if (ta > tb) {
        double swap = ta;
        ta = tb;
        tb = swap;
    }
    if (ta > *lo)
        *lo = ta;
    if (tb < *hi)
        *hi = tb;
    return *lo <= *hi;
}

/* A segment, clipped to the canvas first so that a far end point (a
 * homography can send a corner anywhere) costs no more than the canvas. */
static void draw_line(pv_image *canvas, double x0, double y0, double x1, double y1,
                      const unsigned char rgb[3])
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    double lo = 0.0, hi = 1.0, dx = x1 - x0, dy = y1 - y0;
    if (!clip_axis(x0, dx, canvas->width - 1, &lo, &hi) ||
        !clip_axis(y0, dy, canvas->height - 1, &lo, &hi))
        return;
    double ax = x0 + lo * dx, ay = y0 + lo * dy, bx = x0 + hi * dx, by = y0 + hi * dy;
    double span = fmax(fabs(bx - ax), fabs(by - ay));
    int steps = (int)ceil(span);
    for (int i = 0; i <= steps; i++) {
        double t = steps ? (double)i / steps : 0.0;
        int x = (int)lround(ax + t * (bx - ax)), y = (int)lround(ay + t * (by - ay));
        if (x >= 0 && x < canvas->width && y >= 0 && y < canvas->height)
            put_pixel(canvas, x, y, rgb);
    }
}

/* Grey image `image` into the canvas from column x0 on. */
static void paste_grey(pv_image *canvas, const pv_image *image, int x0)
{
    for (int y = 0; y < image->height; y++) {
        const unsigned char *row = (const unsigned char *)image->data + (ptrdiff_t)y * image->stride;
        for (int x = 0; x < image->width; x++) {
            const unsigned char grey[3] = {row[x], row[x], row[x]};
            put_pixel(canvas, x0 + x, y, grey);
        }
    }
}

/* H applied to (x, y); 0 when the point maps to infinity or behind. */
static int map_point(const double *h, double x, double y, double *mx, double *my)
{
    double w = h[6] * x + h[7] * y + h[8];
    if (!(w > 1e-12))
        return 0;
    *mx = (h[0] * x + h[1] * y + h[2]) / w;
    *my = (h[3] * x + h[4] * y + h[5]) / w;
    return 1;
}

/* The first image's border (pixel centres at its corners) through H,
 * in the second image's half of the canvas. */
static void draw_outline(pv_image *canvas, const double *h, int width, int height, int offset)
{
    const double corners[4][2] = {{0, 0}, {width - 1, 0}, {width - 1, height - 1}, {0, height - 1}};
    double mapped[4][2];
    for (int i = 0; i < 4; i++)
        if (!map_point(h, corners[i][0], corners[i][1], &mapped[i][0], &mapped[i][1]))
            return; /* the outline crosses the horizon: no quadrilateral to draw */
    for (int i = 0; i < 4; i++) {
        const double *p = mapped[i], *q = mapped[(i + 1) % 4];
        draw_line(canvas, p[0] + offset, p[1], q[0] + offset, q[1], outline_colour);
    }
}

static int compose(const cli_match_drawing *d, const pv_image pair[2], pv_image *canvas)
{
    if (pair[0].width > INT_MAX - pair[1].width)
        return cli_fail("--draw: the images are too wide to stand side by side");
    int width = pair[0].width + pair[1].width;
    int height = pair[0].height > pair[1].height ? pair[0].height : pair[1].height;
    pv_status status = pv_image_alloc(canvas, width, height, PV_PIXEL_RGB8);
    if (status != PV_OK)
        return cli_fail_status(status, "--draw");
    memset(canvas->data, 0, (size_t)canvas->stride * (size_t)height * 3);
    paste_grey(canvas, &pair[0], 0);
    paste_grey(canvas, &pair[1], pair[0].width);
    for (int i = 0, drawn = 0; i < d->count; i++) {
        if (d->keep && !d->keep[i])
            continue;
        const float *s = d->segments[i];
        unsigned char rgb[3];
        /* colours spread over the map so that neighbouring lines differ */
        cli_colormap_turbo(0.15f + 0.7f * (float)((drawn++ * 37) % 64) / 63.0f, rgb);
        draw_line(canvas, s[0], s[1], s[2] + pair[0].width, s[3], rgb);
    }
    if (d->homography)
        draw_outline(canvas, d->homography, pair[0].width, pair[0].height, pair[0].width);
    return 0;
}

int cli_draw_matches(const char *path, const cli_match_drawing *drawing)
{
    const char *target = cli_output_path(path);
    if (!target)
        return 1;
    pv_image pair[2], canvas;
    if (cli_read_image_pair(drawing->images, PV_PIXEL_U8, 0, pair))
        return 1;
    int rc = compose(drawing, pair, &canvas);
    cli_free_image_pair(pair);
    if (rc)
        return rc;
    /* PNG whatever the name ends in, as stereo --png: /dev/null included */
    pv_status status = pv_image_write_png(target, &canvas);
    pv_image_free(&canvas);
    return status == PV_OK ? 0 : cli_fail_status(status, path);
}
