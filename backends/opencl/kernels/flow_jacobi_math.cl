/* parvis flow: the Jacobi update's arithmetic per voxel, one text for the
 * single step (flow.cl) and the blocked steps (flow_block.cl), so that k
 * blocked iterations compute the same float operations in the same order
 * as k single steps and give bit-identical results.  Only where the
 * previous iterate's values come from differs (global memory there, local
 * memory and registers here); the including file reads them.
 *
 * Point-coupled Jacobi, derived in backends/cpu/flow/flow.c: per voxel the
 * 3x3 system with diagonal Jkk + a |N| + d |N_k| and right-hand side
 * a s + d s_k + d (mixed derivatives) + b_k, s the sum of the in-volume
 * 6-neighbours and s_k of those along axis k, all from the previous
 * iteration.  Built with FP_CONTRACT OFF by the including file. */

typedef struct sums {
    float s[3];
    int n[3];
} sums;

/* The in-volume neighbours' sum and count along one axis: the lower one,
 * then the upper one.  LOWER and UPPER are read only when they exist. */
#define FLOW_AXIS_SUM(r, axis, pos, len, LOWER, UPPER)                                          \
    do {                                                                                      \
        (r).s[axis] = 0.0f;                                                                   \
        (r).n[axis] = 0;                                                                      \
        if ((pos) > 0) {                                                                      \
            (r).s[axis] += (LOWER);                                                           \
            (r).n[axis]++;                                                                    \
        }                                                                                     \
        if ((pos) < (len) - 1) {                                                              \
            (r).s[axis] += (UPPER);                                                           \
            (r).n[axis]++;                                                                    \
        }                                                                                     \
    } while (0)

/* A mixed derivative's reach along one axis: its lower and upper samples
 * (central, one-sided at the faces, clamped into the volume) as offsets
 * from the voxel, and the difference's scale (0 on a flat axis). */
typedef struct reach {
    int lo, hi;
    float scale;
} reach;

static inline reach reach_of(int pos, int len)
{
    const int lo = max(pos - 1, 0), hi = min(pos + 1, len - 1);
    reach r;
    r.lo = lo - pos;
    r.hi = hi - pos;
    r.scale = hi - lo == 2 ? 0.5f : hi == lo ? 0.0f : 1.0f;
    return r;
}

/* Da Db f from its four samples (h: upper, l: lower; along a, then b). */
static inline float mixed_of(float hh, float hl, float lh, float ll, reach ra, reach rb)
{
    return ((hh - hl) - (lh - ll)) * (ra.scale * rb.scale);
}

typedef struct flow3 {
    float u, v, w;
} flow3;

/* The divergence term's mixed derivatives of each equation, from the six
 * mixed derivatives (f_ab: Da Db f). */
static inline flow3 divergence_terms(float u_01, float u_02, float v_01, float v_12,
                                     float w_02, float w_12)
{
    flow3 r;
    r.u = v_01 + w_02;
    r.v = u_01 + w_12;
    r.w = u_02 + v_12;
    return r;
}

static float diagonal(float a, float d, sums ns, int axis)
{
    const int count = ns.n[0] + ns.n[1] + ns.n[2];
    float diag = a * (float)count;
    if (d != 0.0f)
        diag = diag + d * (float)ns.n[axis];
    return diag;
}

static float neighbour_rhs(float a, float d, sums ns, int axis, float rhs, float divergence)
{
    const float s = (ns.s[0] + ns.s[1]) + ns.s[2];
    float r = a * s + rhs;
    if (d != 0.0f)
        r = (r + d * ns.s[axis]) + d * divergence;
    return r;
}

/* The voxel's symmetric 3x3 system, solved with the adjugate. */
static flow3 solve3(float m11, float m12, float m13, float m22, float m23, float m33, float r0,
                    float r1, float r2)
{
    const float c11 = m22 * m33 - m23 * m23;
    const float c12 = m13 * m23 - m12 * m33;
    const float c13 = m12 * m23 - m13 * m22;
    const float c22 = m11 * m33 - m13 * m13;
    const float c23 = m12 * m13 - m11 * m23;
    const float c33 = m11 * m22 - m12 * m12;
    const float det = (m11 * c11 + m12 * c12) + m13 * c13;
    flow3 r;
    r.u = ((c11 * r0 + c12 * r1) + c13 * r2) / det;
    r.v = ((c12 * r0 + c22 * r1) + c23 * r2) / det;
    r.w = ((c13 * r0 + c23 * r1) + c33 * r2) / det;
    return r;
}

/* One voxel's update: t its nine tensor components (J11 J12 J13 J22 J23
 * J33 b1 b2 b3), su sv sw the neighbour sums of u, v, w, div the mixed
 * terms (zeros and d == 0 without the divergence term). */
static flow3 jacobi_update(const float t[9], float a, float d, sums su, sums sv, sums sw,
                           flow3 div)
{
    return solve3(t[0] + diagonal(a, d, su, 0), t[1], t[2], t[3] + diagonal(a, d, sv, 1), t[4],
                  t[5] + diagonal(a, d, sw, 2), neighbour_rhs(a, d, su, 0, t[6], div.u),
                  neighbour_rhs(a, d, sv, 1, t[7], div.v),
                  neighbour_rhs(a, d, sw, 2, t[8], div.w));
}
