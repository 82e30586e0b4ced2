/* Belief-propagation distance-transform math shared by the CPU backend
 * (backends/cpu/stereo/stereo_bp.c, C11) and the OpenCL program
 * (kernels/stereo_bp.cl, which includes this file; build-aux/
 * embed-kernels.sh inlines it), for the cooperative message update
 * (PV_BP_UPDATE_COOPERATIVE, include/parvis/stereo.h).
 *
 * The forward pass of a message, m[d] = min(h[d], m[d - 1] + 1.0f), is a
 * chain of float additions.  Write x (+)^n for n successive roundings of
 * "+ 1.0f".  Rounding is monotone, so min(a, b) (+) = min(a (+), b (+)),
 * and (+)^a then (+)^b is (+)^(a + b).  Hence a vector split into lanes of
 * L consecutive values can be processed exactly in parallel: each lane
 * runs its chain from +INFINITY (pv_bp_forward_chain), a scan over the
 * lanes combines the lanes' last values with pv_bp_carry (the carry pushed
 * through the L steps of a lane in one pv_bp_jump), and each lane runs its
 * chain once more from its true incoming carry, which gives the serial
 * chain's bits.  The backward pass is the same, mirrored.
 *
 * pv_bp_jump(x, n) is x (+)^n, bit for bit, in a few steps: inside a
 * binade whose ulp is at most 1, adding 1 is exact until the next power of
 * two, so those steps are one exact addition; the step across the power
 * of two is an ordinary rounded one.
 *
 * Plain C that is also valid OpenCL C: no library calls; the binade of a
 * float comes from its bits (PV_BP_FLOAT_BITS).  Loops over a lane's
 * values carry PV_BP_UNROLL so that the kernel keeps them in registers. */
#ifndef PV_BACKENDS_BP_SCAN_MATH_H
#define PV_BACKENDS_BP_SCAN_MATH_H

#ifdef __OPENCL_C_VERSION__
#define PV_BP_UNROLL _Pragma("unroll")
#define PV_BP_INFINITY INFINITY
static inline float pv_bp_exponent_only(float x)
{
    return as_float(as_uint(x) & 0x7f800000u);
}
#else
#include <math.h>
#include <stdint.h>
#define PV_BP_UNROLL
#define PV_BP_INFINITY INFINITY
static inline float pv_bp_exponent_only(float x)
{
    union {
        float f;
        uint32_t u;
    } bits = {x};
    bits.u &= 0x7f800000u;
    return bits.f;
}
#endif

/* One step of a pass: min(m, prev + 1.0f), the prev + 1 rounded once. */
static inline float pv_bp_relax(float m, float prev)
{
    const float v = prev + 1.0f;
    return v < m ? v : m;
}

/* x (+)^n: n successive float additions of 1.0f, in O(binades) steps.
 * 1 <= x < 2^24 lies in [2^e, 2^(e+1)) with ulp 2^(e-23) <= 1: x and every
 * integer are multiples of the ulp, so x + k is exact while it stays below
 * 2^(e+1), i.e. for k <= ceil(2^(e+1) - x) - 1 (2^(e+1) - x itself is
 * exact, Sterbenz).  Below 1 and from 2^24 up the steps are taken one at a
 * time; from 2^24 up, once x + 1 rounds back to x, x stays (so do
 * infinities). */
static inline float pv_bp_jump(float x, int n)
{
    while (n > 0) {
        if (!(x >= 1.0f && x < 16777216.0f)) {
            const float next = x + 1.0f;
            if (next == x)
                return x;
            x = next;
            n--;
            continue;
        }
        const float room = 2.0f * pv_bp_exponent_only(x) - x; /* exact, in (0, 2^23] */
        const int whole = (int)room;
        const int exact_steps = (float)whole == room ? whole - 1 : whole;
        const int k = n < exact_steps ? n : exact_steps;
        if (k > 0) {
            x = x + (float)k;
            n -= k;
        }
        if (n > 0) {
            x = x + 1.0f; /* across the power of two: rounded like the chain */
            n--;
        }
    }
    return x;
}

/* The most steps for which pv_bp_jump_reaches may answer: its bound below
 * holds for n <= 2^11. */
#define PV_BP_BOUND_STEPS 2048

/* 1 when x (+)^n >= bound for sure (x >= 0), without the jump.  Each
 * rounded addition loses at most a relative 2^-24, so x (+)^n >=
 * (x + n)(1 - 2^-24)^n >= (x + n)(1 - 2^-13) for n <= 2^11; the two float
 * operations below round up by at most (1 + 2^-24)^2, so
 * fl(fl(x + n) (1 - 2^-12)) stays under (x + n)(1 - 2^-13).  (An infinite
 * x gives infinity: reached.) */
static inline int pv_bp_jump_reaches(float x, int n, float bound)
{
    return n <= PV_BP_BOUND_STEPS && (x + (float)n) * 0.999755859375f >= bound;
}

/* A lane's carry after a scan step: its own value, or the value `lanes`
 * lanes before it pushed through their `steps` chain steps.  Most pushed
 * values land far above the lane's own (the lanes' ends differ by much
 * less than the steps between them), and then the bound decides without
 * the jump's loop: the same result, much less work. */
static inline float pv_bp_carry(float own, float earlier, int steps)
{
    if (pv_bp_jump_reaches(earlier, steps, own))
        return own;
    const float pushed = pv_bp_jump(earlier, steps);
    return pushed < own ? pushed : own;
}

/* Forward chain over v[0 .. count - 1] in place, starting from carry
 * (+INFINITY: none); returns the last value. */
static inline float pv_bp_forward_chain(float *v, int count, float carry)
{
    PV_BP_UNROLL
    for (int k = 0; k < count; k++)
        carry = v[k] = pv_bp_relax(v[k], carry);
    return carry;
}

/* Backward chain over v[count - 1 .. 0] in place, from carry; returns the
 * first value. */
static inline float pv_bp_backward_chain(float *v, int count, float carry)
{
    PV_BP_UNROLL
    for (int k = count - 1; k >= 0; k--)
        carry = v[k] = pv_bp_relax(v[k], carry);
    return carry;
}

/* The cooperative update's output value: the passes' result m capped at
 * min_h + disc_max, less min_h (one rounding). */
static inline float pv_bp_min_normalised(float m, float min_h, float disc_max)
{
    const float cap = min_h + disc_max;
    return (cap < m ? cap : m) - min_h;
}

#ifndef __OPENCL_C_VERSION__
/* How far back (forward pass) or ahead (backward pass) a lanes' scan must
 * reach, in lanes of `values` values: the smallest power of two S <=
 * lanes, and at least lanes / 4 (fewer lanes to gather min_h from, see
 * stereo_bp_coop.cl), for which a value coming from further away cannot
 * change a message.  Such a value travels at least n = values S + 1 chain
 * steps from some h[s] >= min_h, so (pv_bp_jump_reaches's bound, and
 * monotony beyond PV_BP_BOUND_STEPS) it is at least (min_h + n)(1 -
 * 2^-13), while the truncation min_h + disc_max rounds to at most (min_h +
 * disc_max)(1 + 2^-24).  When the first exceeds the second, the message
 * min(m, min_h + disc_max) - min_h is the same whether m saw that value or
 * not: if it is m's minimum, both sides truncate.  (The backward pass adds
 * steps, never removes them, so the same holds for values that reach it
 * through the forward pass.)  The difference of the two sides falls as
 * min_h grows, so it is checked at h_bound, a bound on every h (data cost
 * plus three messages).  No S short of `lanes` passes when h_bound is so
 * large that adding 1 hardly moves it; then the scan reaches every lane. */
static inline int pv_bp_scan_lanes(int lanes, int values, double h_bound, double disc_max)
{
    int reach = lanes / 4 > 1 ? lanes / 4 : 1;
    for (; reach < lanes; reach *= 2) {
        double n = (double)values * reach + 1.0;
        if (n > PV_BP_BOUND_STEPS)
            n = PV_BP_BOUND_STEPS;
        const double arrives = (h_bound + n) * (1.0 - 0x1p-13);
        const double truncation = (h_bound + disc_max) * (1.0 + 0x1p-23);
        if (arrives > truncation)
            break;
    }
    return reach < lanes ? reach : lanes;
}
#endif

#endif
