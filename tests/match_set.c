#include "match_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int match_set_alloc(match_set *m, int count)
{
    memset(m, 0, sizeof *m);
    /* Doubles first so every array stays aligned for its type. */
    const size_t n = (size_t)count;
    const size_t bytes = 2 * n * sizeof(double) + 4 * n * sizeof(float) + n;
    char *block = malloc(bytes > 0 ? bytes : 1);
    if (!block)
        return -1;
    m->block = block;
    m->count = count;
    m->clean2 = (double *)block;
    m->p1 = (float *)(block + 2 * n * sizeof(double));
    m->p2 = m->p1 + 2 * n;
    m->truth = (uint8_t *)(m->p2 + 2 * n);
    return 0;
}

void match_set_free(match_set *m)
{
    free(m->block);
    memset(m, 0, sizeof *m);
}

void match_set_put(match_set *m, int i, double x1, double y1, const double clean[2], int inlier,
                   double x2, double y2)
{
    m->p1[2 * i] = (float)x1;
    m->p1[2 * i + 1] = (float)y1;
    m->clean2[2 * i] = clean[0];
    m->clean2[2 * i + 1] = clean[1];
    m->truth[i] = (uint8_t)(inlier != 0);
    m->p2[2 * i] = (float)x2;
    m->p2[2 * i + 1] = (float)y2;
}

void match_apply_h(const double *h, double x, double y, double *out)
{
    double w = h[6] * x + h[7] * y + h[8];
    out[0] = (h[0] * x + h[1] * y + h[2]) / w;
    out[1] = (h[3] * x + h[4] * y + h[5]) / w;
}

double match_homography_error(const double *estimate, const double *truth, double width,
                              double height)
{
    double worst = 0.0;
    for (int gy = 0; gy <= 8; gy++)
        for (int gx = 0; gx <= 8; gx++) {
            double x = width * gx / 8.0, y = height * gy / 8.0, a[2], b[2];
            match_apply_h(estimate, x, y, a);
            match_apply_h(truth, x, y, b);
            worst = fmax(worst, hypot(a[0] - b[0], a[1] - b[1]));
        }
    return worst;
}
