/* Synthetic point matches for the geometry module's tests and bench: the
 * arrays a RANSAC call takes, what made each match, and the homography
 * arithmetic both use to make matches and to score an estimate.  Plain C
 * (no test framework), so parvis-bench links it too. */
#ifndef PV_TEST_MATCH_SET_H
#define PV_TEST_MATCH_SET_H

#include <stdint.h>

typedef struct match_set {
    int count;
    float *p1, *p2;  /* x, y pairs in image 1 and image 2 */
    uint8_t *truth;  /* 1: made by the model, 0: an outlier */
    double *clean2;  /* noise-free image-2 point of each match */
    void *block;     /* the one allocation the arrays above are carved from */
} match_set;

/* Room for count matches; 0, or -1 with m zeroed when out of memory. */
int match_set_alloc(match_set *m, int count);
void match_set_free(match_set *m);

/* Match i: (x1, y1) in image 1, its noise-free image-2 point clean, whether
 * the model made it, and the image-2 point the caller observed. */
void match_set_put(match_set *m, int i, double x1, double y1, const double clean[2], int inlier,
                   double x2, double y2);

/* out = h (row-major 3 x 3) applied to (x, y). */
void match_apply_h(const double *h, double x, double y, double *out);

/* Largest distance between the images under estimate and truth of a 9 x 9
 * grid spanning a width x height image 1. */
double match_homography_error(const double *estimate, const double *truth, double width,
                              double height);

#endif
