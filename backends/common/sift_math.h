/* SIFT keypoint refinement math shared by the CPU backend
 * (backends/cpu/features/features.c, compiled as C11) and the OpenCL program
 * (kernels/features.cl, which includes this file and is inlined into the
 * embedded source by build-aux/embed-kernels.sh).  One text for both keeps
 * the two backends' float operations the same and in the same order, so
 * that a candidate is kept or dropped alike on both (the OpenCL program
 * turns FP_CONTRACT off).
 *
 * Plain C that is also valid OpenCL C: no includes on the device, no
 * library calls but the absolute value (PV_SM_FABS).  The DoG samples are
 * read from global memory on the device (PV_SM_GLOBAL); the fit and the
 * offset live in private memory. */
#ifndef PV_BACKENDS_SIFT_MATH_H
#define PV_BACKENDS_SIFT_MATH_H

#ifdef __OPENCL_C_VERSION__
#define PV_SM_FABS(x) fabs(x)
#define PV_SM_GLOBAL __global
typedef long pv_sm_index;
#else
#include <math.h>
#include <stddef.h>
#define PV_SM_FABS(x) fabsf(x)
#define PV_SM_GLOBAL
typedef ptrdiff_t pv_sm_index;
#endif

/* The DoG around an octave position, and its derivatives there. */
typedef struct pv_sm_dog_fit {
    float v, dx, dy, ds, dxx, dyy, dss, dxy, dxs, dys;
} pv_sm_dog_fit;

/* The fit at d, the DoG sample of the position, in a stack of planes of
 * `plane` samples and rows of w samples (central differences). */
static inline pv_sm_dog_fit pv_sm_fit_at(PV_SM_GLOBAL const float *d, pv_sm_index plane, int w)
{
#define AT(X, Y, S) d[(pv_sm_index)(S) * plane + (pv_sm_index)(Y) * w + (X)]
    pv_sm_dog_fit f;
    f.v = AT(0, 0, 0);
    f.dx = 0.5f * (AT(1, 0, 0) - AT(-1, 0, 0));
    f.dy = 0.5f * (AT(0, 1, 0) - AT(0, -1, 0));
    f.ds = 0.5f * (AT(0, 0, 1) - AT(0, 0, -1));
    f.dxx = AT(1, 0, 0) + AT(-1, 0, 0) - 2.0f * f.v;
    f.dyy = AT(0, 1, 0) + AT(0, -1, 0) - 2.0f * f.v;
    f.dss = AT(0, 0, 1) + AT(0, 0, -1) - 2.0f * f.v;
    f.dxy = 0.25f * (AT(1, 1, 0) + AT(-1, -1, 0) - AT(-1, 1, 0) - AT(1, -1, 0));
    f.dxs = 0.25f * (AT(1, 0, 1) + AT(-1, 0, -1) - AT(-1, 0, 1) - AT(1, 0, -1));
    f.dys = 0.25f * (AT(0, 1, 1) + AT(0, -1, -1) - AT(0, -1, 1) - AT(0, 1, -1));
#undef AT
    return f;
}

/* Solve H b = -grad by Gaussian elimination with partial pivoting (as
 * VLFeat); b = 0 when H is singular. */
static inline void pv_sm_solve_offset(const pv_sm_dog_fit *f, float b[3])
{
    float a[3][3] = {{f->dxx, f->dxy, f->dxs}, {f->dxy, f->dyy, f->dys}, {f->dxs, f->dys, f->dss}};
    b[0] = -f->dx;
    b[1] = -f->dy;
    b[2] = -f->ds;
    for (int j = 0; j < 3; j++) {
        int pivot = j;
        float best = 0.0f;
        for (int i = j; i < 3; i++)
            if (PV_SM_FABS(a[i][j]) > best) {
                best = PV_SM_FABS(a[i][j]);
                pivot = i;
            }
        if (best < 1e-10f) {
            b[0] = b[1] = b[2] = 0.0f;
            return;
        }
        const float p = a[pivot][j];
        for (int jj = j; jj < 3; jj++) {
            const float t = a[pivot][jj];
            a[pivot][jj] = a[j][jj];
            a[j][jj] = t / p;
        }
        const float t = b[pivot];
        b[pivot] = b[j];
        b[j] = t / p;
        for (int i = j + 1; i < 3; i++) {
            const float x = a[i][j];
            for (int jj = j; jj < 3; jj++)
                a[i][jj] -= x * a[j][jj];
            b[i] -= x * b[j];
        }
    }
    for (int i = 2; i > 0; i--)
        for (int ii = i - 1; ii >= 0; ii--)
            b[ii] -= b[i] * a[ii][i];
}

#endif
