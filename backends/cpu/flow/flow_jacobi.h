/* Internal to the CPU backend: the flow module's Jacobi solver
 * (flow_jacobi.c), called by backends/cpu/flow/flow.c.  The derivation of the
 * update is at the top of backends/cpu/flow/flow.c. */
#ifndef PV_CPU_FLOW_JACOBI_H
#define PV_CPU_FLOW_JACOBI_H

#include <stddef.h>

#define TENSOR_COMPONENTS 9 /* J11 J12 J13 J22 J23 J33, then J14 J24 J34 -> b */

typedef struct jacobi_grid {
    int nx, ny, nz;
    ptrdiff_t sy, sz;
    float a, d; /* alpha / h^2, beta / h^2 */
} jacobi_grid;

typedef struct jacobi_fields {
    const float *in[3];
    float *out[3];
    const float *t[TENSOR_COMPONENTS];
} jacobi_fields;

/* One point-coupled Jacobi iteration: f->in to f->out.  The 2D sweep is
 * the same update for nz = 1 without the divergence term (d = 0). */
void pv_cpu_jacobi_sweep(const jacobi_grid *g, const jacobi_fields *f, int threads);
void pv_cpu_jacobi_sweep_2d(const jacobi_grid *g, const jacobi_fields *f, int threads);

/* ||new - old|| / ||new|| over all three components, independent of the
 * thread count (INFINITY when no memory: not converged). */
double pv_cpu_flow_relative_change(float *const old[3], float *const new_[3], const int n[3],
                                   int threads);

#endif
