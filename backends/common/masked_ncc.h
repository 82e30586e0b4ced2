/* The score of one shift of the masked phase correlation, shared by the
 * CPU backend (backends/cpu/register/register.c, compiled as C11) and the
 * OpenCL program (kernels/register.cl, which includes this file;
 * build-aux/embed-kernels.sh inlines it into the embedded source), so the
 * two backends apply the same rule in the same operand order.
 *
 * At one point of the six correlation maps (lib/core/ops_register.h,
 * pv_pcm_job): count, the overlap's pixels before rounding; sum_m and
 * sum_f, the moving and reference sums over the overlap; cross, their
 * product sum; sum_m2 and sum_f2, their square sums.  threshold is
 * overlap_ratio times the largest rounded count.
 *
 * The includer defines first:
 *   PCM_SQRT(x)      the square root of a float
 *   PCM_RINT(x)      a float rounded to the nearest integer
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls. */
#ifndef PV_BACKENDS_MASKED_NCC_H
#define PV_BACKENDS_MASKED_NCC_H

static inline float pcm_score(float count, float sum_m, float sum_f, float cross, float sum_m2,
                              float sum_f2, float threshold, float moving_floor,
                              float reference_floor)
{
    const float n = PCM_RINT(count);
    if (n < 0.5f || n < threshold)
        return 0.0f;
    const float inv_n = 1.0f / n;
    const float var_m = sum_m2 - sum_m * sum_m * inv_n;
    const float var_f = sum_f2 - sum_f * sum_f * inv_n;
    if (!(var_m > moving_floor) || !(var_f > reference_floor))
        return 0.0f;
    const float c = (cross - sum_m * sum_f * inv_n) / PCM_SQRT(var_m * var_f);
    return c > 1.0f ? 1.0f : c < -1.0f ? -1.0f : c;
}

#endif
