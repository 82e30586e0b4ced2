/* The winner step of the CPU semi-global matching (stereo_sgm.c): per
 * pixel from the summed path costs S the best candidate, the uniqueness
 * test, the confidence and the sub-pixel parabola, and the right image's
 * disparities from the same S for the left-right check. */
#include "../cpu.h"
#include "sgm_volume.h"
#include "sgm_winner.h"
#include "../../common/sgm_math.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct sgm_choice {
    float disparity;   /* INFINITY when rejected */
    float confidence;
} sgm_choice;

#ifdef __SSE2__
/* SSE2 has only signed 16-bit minima and comparisons: flipping the top bit
 * maps the unsigned order of the sums onto the signed one. */
#define SGM_FLIP ((short)0x8000)

/* 8 lanes in reverse order. */
static __m128i reverse_epi16(__m128i v)
{
    v = _mm_shufflelo_epi16(v, _MM_SHUFFLE(0, 1, 2, 3));
    v = _mm_shufflehi_epi16(v, _MM_SHUFFLE(0, 1, 2, 3));
    return _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2));
}

/* Eight candidates k .. k + 7 of column x at once: they belong to the right
 * columns xr .. xr - 7, so the sums are reversed to line up with them. */
static int right_step_sse2(const uint16_t *s, int k, int hi, int xr, int16_t *right,
                           uint16_t *best)
{
    const __m128i flip = _mm_set1_epi16(SGM_FLIP);
    const __m128i ramp = _mm_setr_epi16(7, 6, 5, 4, 3, 2, 1, 0);
    for (; k + 8 <= hi + 1; k += 8, xr -= 8) {
        __m128i v = reverse_epi16(_mm_loadu_si128((const __m128i *)(s + k)));
        v = _mm_xor_si128(v, flip);
        __m128i *b = (__m128i *)(best + xr - 7), *r = (__m128i *)(right + xr - 7);
        __m128i old = _mm_loadu_si128(b), lower = _mm_cmplt_epi16(v, old);
        __m128i idx = _mm_add_epi16(_mm_set1_epi16((short)k), ramp);
        _mm_storeu_si128(b, _mm_min_epi16(v, old));
        __m128i was = _mm_loadu_si128(r);
        _mm_storeu_si128(r, _mm_or_si128(_mm_and_si128(lower, idx), _mm_andnot_si128(lower, was)));
    }
    return k;
}
#endif

/* Columns whose every candidate sum is 0xffff keep -1 in the pass below;
 * a running argmin from above 0xffff takes their first candidate. */
static void right_fixup(const sgm_volume *v, int16_t *right)
{
    const int w = v->width, nd = v->ndisp;
    for (int xr = 0; xr < w; xr++) {
        for (int k = 0; right[xr] < 0 && k < nd; k++) {
            const int x = xr + v->min_disp + k;
            if (x >= 0 && x < w && k >= sgm_first_valid(x, w, v->min_disp) &&
                k <= sgm_last_valid(x, v->min_disp, nd))
                right[xr] = (int16_t)k;
        }
    }
}

/* The right image's disparity index at every column x' of row y: the
 * argmin over k of S(x' + min_disp + k, k), ties to the smaller k.  One
 * pass over the row's sums in memory order: for a fixed x' the candidates
 * k arrive in increasing order (x grows with k), so a strict comparison
 * keeps the smaller k on ties.  best is scratch of width entries, holding
 * the sums with the top bit flipped (SSE2's signed order). */
static void right_row(const sgm_volume *v, int y, int16_t *right, uint16_t *best)
{
    const int w = v->width, nd = v->ndisp;
    for (int xr = 0; xr < w; xr++) {
        right[xr] = -1;
        best[xr] = 0x7fff; /* 0xffff flipped */
    }
    for (int x = 0; x < w; x++) {
        const uint16_t *s = v->sum + cell(v, x, y);
        const int lo = sgm_first_valid(x, w, v->min_disp);
        const int hi = sgm_last_valid(x, v->min_disp, nd);
        int k = lo;
#ifdef __SSE2__
        k = right_step_sse2(s, k, hi, x - v->min_disp - k, right, best);
#endif
        for (; k <= hi; k++) {
            const int xr = x - v->min_disp - k;
            const uint16_t flipped = (uint16_t)(s[k] ^ 0x8000u);
            if ((int16_t)flipped < (int16_t)best[xr]) {
                best[xr] = flipped;
                right[xr] = (int16_t)k;
            }
        }
    }
    right_fixup(v, right);
}

/* The smallest of s[from .. to - 1]; 0xffff for an empty range. */
static unsigned int min_sum(const uint16_t *s, int from, int to)
{
    unsigned int m = 0xffff;
    int k = from;
#ifdef __SSE2__
    const __m128i flip = _mm_set1_epi16(SGM_FLIP);
    __m128i vm = _mm_set1_epi16(0x7fff);
    for (; k + 8 <= to; k += 8)
        vm = _mm_min_epi16(vm, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s + k)), flip));
    vm = _mm_min_epi16(vm, _mm_srli_si128(vm, 8));
    vm = _mm_min_epi16(vm, _mm_srli_si128(vm, 4));
    vm = _mm_min_epi16(vm, _mm_srli_si128(vm, 2));
    m = (unsigned int)(_mm_extract_epi16(vm, 0) ^ 0x8000);
#endif
    for (; k < to; k++)
        m = s[k] < m ? s[k] : m;
    return m;
}

/* The first k in [from, to) with s[k] == value (one is known to exist). */
static int first_equal(const uint16_t *s, int from, int to, unsigned int value)
{
    int k = from;
#ifdef __SSE2__
    const __m128i want = _mm_set1_epi16((short)value);
    for (; k + 8 <= to; k += 8) {
        int mask = _mm_movemask_epi8(
            _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(s + k)), want));
        if (mask)
            return k + __builtin_ctz((unsigned int)mask) / 2;
    }
#endif
    (void)to;
    while (s[k] != value)
        k++;
    return k;
}

static sgm_choice choose(const sgm_volume *v, const pv_sgm_params *p, unsigned int u, int x,
                         int y, const int16_t *right)
{
    const sgm_choice none = {INFINITY, 0.0f};
    const uint16_t *s = v->sum + cell(v, x, y);
    const int lo = sgm_first_valid(x, v->width, v->min_disp);
    const int hi = sgm_last_valid(x, v->min_disp, v->ndisp);
    if (lo > hi)
        return none;
    /* Branch-free minima first, then the first index holding the minimum:
     * the same winner (ties: smaller k) as a running argmin, in loops the
     * compiler vectorises. */
    const unsigned int least = min_sum(s, lo, hi + 1);
    const int best = first_equal(s, lo, hi + 1, least);
    const int has_second = lo < best - 1 || best + 1 < hi;
    unsigned int second = min_sum(s, lo, best - 1);
    const unsigned int above = min_sum(s, best + 2, hi + 1);
    second = above < second ? above : second;
    second = has_second ? second : 0xffffffffu;
    if (has_second && !sgm_is_unique(s[best], second, u))
        return none;
    const int d = v->min_disp + best;
    if (p->lr_check) {
        int dr = v->min_disp + right[x - d];
        if (abs(dr - d) > p->lr_max_diff)
            return none;
    }
    sgm_choice c = {(float)d, sgm_confidence(s[best], second, has_second)};
    if (p->subpixel && best > lo && best < hi)
        c.disparity = (float)d + sgm_parabola(s[best - 1], s[best], s[best + 1]);
    return c;
}

void sgm_choose_all(const sgm_volume *v, const pv_sgm_params *p, int16_t *right_rows,
                       float *disp, float *conf)
{
    const unsigned int u = sgm_uniqueness_fixed(p->uniqueness);
    const int width = v->width;
    #pragma omp parallel for num_threads(v->threads) schedule(static)
    for (int y = 0; y < v->height; y++) {
        int16_t *right = right_rows + 2 * (size_t)pv_cpu_thread_index() * (size_t)width;
        if (p->lr_check)
            right_row(v, y, right, (uint16_t *)(right + width));
        for (int x = 0; x < width; x++) {
            sgm_choice c = choose(v, p, u, x, y, right);
            disp[(size_t)y * width + x] = c.disparity;
            conf[(size_t)y * width + x] = c.confidence;
        }
    }
}
