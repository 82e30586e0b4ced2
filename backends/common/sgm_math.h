/* Integer rules of semi-global matching shared by the CPU backend
 * (backends/cpu/stereo/stereo_sgm.c, C11) and the OpenCL program
 * (kernels/stereo_sgm.cl, which includes this file; build-aux/
 * embed-kernels.sh inlines it).  One text keeps the census bit order, the
 * adaptive P2, the candidate range, the uniqueness test and the sub-pixel
 * parabola the same in both backends, so that their integer disparities
 * agree to the bit.
 *
 * Plain C that is also valid OpenCL C: no includes, no library calls. */
#ifndef PV_BACKENDS_SGM_MATH_H
#define PV_BACKENDS_SGM_MATH_H

#ifdef __OPENCL_VERSION__
typedef ulong sgm_u64;
#else
typedef unsigned long long sgm_u64;
#endif

/* A path value larger than any real one (L_r <= Cmax + P2 < 2^15): the
 * neighbour of the first and last disparity, which never wins a min. */
#define SGM_SENTINEL 0x7fff

/* Uniqueness is compared as S(best) * 2^16 <= U * S(second). */
#define SGM_UNIQUENESS_ONE 65536

/* Bits of one census string: every window pixel but the centre, or one
 * per mirrored pair (half of them) when centre-symmetric. */
static inline int sgm_census_bits(int width, int height, int symmetric)
{
    return symmetric ? (width * height - 1) / 2 : width * height - 1;
}

/* P2 of one step of a path whose intensities differ by |di| (integers):
 * p2 / |di| but at least p1; p2 where they are equal. */
static inline int sgm_adaptive_p2(int p1, int p2, int di)
{
    int a = di < 0 ? -di : di;
    if (a == 0)
        return p2;
    int q = p2 / a;
    return q > p1 ? q : p1;
}

/* Candidates k (disparity min_disp + k) of left column x whose right
 * column x - min_disp - k lies in [0, width): k_lo .. k_hi (empty when
 * k_lo > k_hi). */
static inline int sgm_first_valid(int x, int width, int min_disp)
{
    int k = x - min_disp - width + 1;
    return k > 0 ? k : 0;
}

static inline int sgm_last_valid(int x, int min_disp, int ndisp)
{
    int k = x - min_disp;
    return k < ndisp - 1 ? k : ndisp - 1;
}

/* The winner is unique when S(best) <= uniqueness * S(second), exactly:
 * uniqueness is the fixed-point fraction u / 2^16. */
static inline int sgm_is_unique(unsigned int best, unsigned int second, unsigned int u)
{
    return (sgm_u64)best * SGM_UNIQUENESS_ONE <= (sgm_u64)u * second;
}

/* The parabola's offset from the winner through S(k-1), S(k), S(k+1). */
static inline float sgm_parabola(int below, int centre, int above)
{
    int curvature = below + above - 2 * centre;
    if (curvature <= 0)
        return 0.0f;
    return (float)(below - above) / (float)(2 * curvature);
}

/* Confidence: 1 - S(best) / S(second); 1 without a second, 0 for 0 / 0. */
static inline float sgm_confidence(unsigned int best, unsigned int second, int has_second)
{
    if (!has_second)
        return 1.0f;
    if (second == 0)
        return 0.0f;
    return 1.0f - (float)best / (float)second;
}

/* The integer intensity of an f32 pixel for the adaptive P2: floor of the
 * value clamped to +-2^30 (u8 and u16 pixels are their own). */
static inline int sgm_intensity_f32(float v)
{
    const float limit = 1073741824.0f;
    float c = v < -limit ? -limit : v > limit ? limit : v;
    int t = (int)c;
    return (float)t > c ? t - 1 : t;
}

#ifndef __OPENCL_VERSION__
/* uniqueness in (0, 1] as the fixed-point u of sgm_is_unique (host side). */
static inline unsigned int sgm_uniqueness_fixed(float uniqueness)
{
    return (unsigned int)((double)uniqueness * SGM_UNIQUENESS_ONE + 0.5);
}
#endif

#endif
