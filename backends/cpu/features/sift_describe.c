/* CPU SIFT: orientations and descriptors of refined keypoints (see
 * sift_describe.h).  Every function reads one Gaussian level and writes only
 * its own outputs, so keypoints can be described on any thread. */
#include "sift_describe.h"

#include <math.h>
#include <string.h>

#define TWO_PI_F 6.2831853071795864769f
#define ORI_BINS 36
#define DESC_BINS 4
#define DESC_ORIS 8

/* ------------------------------------------------------------- gradients */

/* Central differences inside, one-sided at the borders (VLFeat). */
static void gradient_at(const float *level, int w, int h, int x, int y, float *mod, float *ang)
{
    const float *p = level + (size_t)y * w + x;
    float gx = x == 0 ? p[1] - p[0] : x == w - 1 ? p[0] - p[-1] : 0.5f * (p[1] - p[-1]);
    float gy = y == 0 ? p[w] - p[0] : y == h - 1 ? p[0] - p[-w] : 0.5f * (p[w] - p[-w]);
    float a = atan2f(gy, gx);
    *mod = sqrtf(gx * gx + gy * gy);
    *ang = a < 0.0f ? a + TWO_PI_F : a;
}

/* ----------------------------------------------------------- orientation */

static void smooth_histogram(float *hist)
{
    for (int iter = 0; iter < 6; iter++) {
        float prev = hist[ORI_BINS - 1], first = hist[0];
        int i;
        for (i = 0; i < ORI_BINS - 1; i++) {
            float next = (prev + hist[i] + hist[i + 1]) / 3.0f;
            prev = hist[i];
            hist[i] = next;
        }
        hist[i] = (prev + hist[i] + first) / 3.0f;
    }
}

static void orientation_histogram(const pv_cpu_sift_level *at, const pv_sift_params *params,
                                  const pv_cpu_sift_refined *k, float *hist)
{
    const int w = at->width, h = at->height;
    const float *level = at->plane;
    const int xi = (int)(k->x + 0.5f), yi = (int)(k->y + 0.5f);
    const float sigmaw = params->orientation_window * k->sigma;
    const int W = (int)fmaxf(floorf(3.0f * sigmaw), 1.0f);
    const float limit = (float)(W * W) + 0.6f, denom = 2.0f * sigmaw * sigmaw;
    for (int i = 0; i < ORI_BINS; i++)
        hist[i] = 0.0f;
    for (int ys = -W > -yi ? -W : -yi; ys <= W && ys <= h - 1 - yi; ys++)
        for (int xs = -W > -xi ? -W : -xi; xs <= W && xs <= w - 1 - xi; xs++) {
            float dx = (float)(xi + xs) - k->x, dy = (float)(yi + ys) - k->y;
            float r2 = dx * dx + dy * dy;
            if (r2 >= limit)
                continue;
            float mod, ang;
            gradient_at(level, w, h, xi + xs, yi + ys, &mod, &ang);
            float wgt = expf(-r2 / denom) * mod;
            float fbin = (float)ORI_BINS * ang / TWO_PI_F;
            int bin = (int)floorf(fbin - 0.5f);
            float rbin = fbin - (float)bin - 0.5f;
            hist[(bin + ORI_BINS) % ORI_BINS] += (1.0f - rbin) * wgt;
            hist[(bin + 1) % ORI_BINS] += rbin * wgt;
        }
    smooth_histogram(hist);
}

int pv_cpu_sift_orientations(const pv_cpu_sift_level *level, const pv_sift_params *params,
                             const pv_cpu_sift_refined *k, float *angles)
{
    float hist[ORI_BINS], maxh = 0.0f;
    orientation_histogram(level, params, k, hist);
    for (int i = 0; i < ORI_BINS; i++)
        maxh = fmaxf(maxh, hist[i]);
    const float floor_h = params->orientation_peak * maxh;
    int n = 0;
    for (int i = 0; i < ORI_BINS && n < PV_CPU_SIFT_MAX_ORIENTATIONS; i++) {
        float h0 = hist[i], hm = hist[(i + ORI_BINS - 1) % ORI_BINS], hp = hist[(i + 1) % ORI_BINS];
        if (h0 > floor_h && h0 > hm && h0 > hp) {
            float di = -0.5f * (hp - hm) / (hp + hm - 2.0f * h0);
            angles[n++] = TWO_PI_F * ((float)i + di + 0.5f) / (float)ORI_BINS;
        }
    }
    return n;
}

/* ------------------------------------------------------------ descriptor */

static void normalize_descriptor(float *d)
{
    float sum = 0.0f;
    for (int i = 0; i < PV_SIFT_DESCRIPTOR_SIZE; i++)
        sum += d[i] * d[i];
    float norm = sqrtf(sum) + 1.1920929e-7f;
    for (int i = 0; i < PV_SIFT_DESCRIPTOR_SIZE; i++)
        d[i] /= norm;
}

/* One gradient sample spread over its 8 neighbouring bins. */
static void add_sample(float *d, float nx, float ny, float nt, float weight)
{
    const int binx = (int)floorf(nx - 0.5f), biny = (int)floorf(ny - 0.5f), bint = (int)floorf(nt);
    const float rx = nx - ((float)binx + 0.5f), ry = ny - ((float)biny + 0.5f), rt = nt - (float)bint;
    for (int dbx = 0; dbx < 2; dbx++) {
        int bx = binx + dbx;
        if (bx < -DESC_BINS / 2 || bx >= DESC_BINS / 2)
            continue;
        for (int dby = 0; dby < 2; dby++) {
            int by = biny + dby;
            if (by < -DESC_BINS / 2 || by >= DESC_BINS / 2)
                continue;
            float wxy = weight * fabsf(1.0f - (float)dbx - rx) * fabsf(1.0f - (float)dby - ry);
            float *cell = d + (by + DESC_BINS / 2) * DESC_BINS * DESC_ORIS + (bx + DESC_BINS / 2) * DESC_ORIS;
            cell[(bint + DESC_ORIS) % DESC_ORIS] += wxy * (1.0f - rt);
            cell[(bint + 1) % DESC_ORIS] += wxy * rt;
        }
    }
}

void pv_cpu_sift_describe(const pv_cpu_sift_level *at, const pv_sift_params *params,
                          const pv_cpu_sift_refined *k, float angle, float *d)
{
    const int w = at->width, h = at->height;
    const float *level = at->plane;
    const int xi = (int)(k->x + 0.5f), yi = (int)(k->y + 0.5f);
    const float st = sinf(angle), ct = cosf(angle);
    const float sbp = params->magnif * k->sigma;
    const int W = (int)floorf(1.41421356f * sbp * (float)(DESC_BINS + 1) / 2.0f + 0.5f);
    const float wdenom = 2.0f * (DESC_BINS / 2) * (DESC_BINS / 2);
    memset(d, 0, PV_SIFT_DESCRIPTOR_SIZE * sizeof(float));
    for (int dyi = -W > 1 - yi ? -W : 1 - yi; dyi <= W && dyi <= h - yi - 2; dyi++)
        for (int dxi = -W > 1 - xi ? -W : 1 - xi; dxi <= W && dxi <= w - xi - 2; dxi++) {
            float mod, ang;
            gradient_at(level, w, h, xi + dxi, yi + dyi, &mod, &ang);
            float theta = ang - angle;
            theta = theta < 0.0f ? theta + TWO_PI_F : theta;
            float dx = (float)(xi + dxi) - k->x, dy = (float)(yi + dyi) - k->y;
            float nx = (ct * dx + st * dy) / sbp, ny = (-st * dx + ct * dy) / sbp;
            float nt = (float)DESC_ORIS * theta / TWO_PI_F;
            float win = expf(-(nx * nx + ny * ny) / wdenom);
            add_sample(d, nx, ny, nt, win * mod);
        }
    normalize_descriptor(d);
    for (int i = 0; i < PV_SIFT_DESCRIPTOR_SIZE; i++)
        d[i] = fminf(d[i], 0.2f);
    normalize_descriptor(d);
}
