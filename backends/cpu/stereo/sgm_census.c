/* The census transform of the CPU semi-global matching (stereo_sgm.c),
 * bit for bit the one of kernels/stereo_sgm.cl, and the left image's
 * integer intensities for the adaptive P2. */
#include "../cpu.h"
#include "sgm_census.h"
#include "../../common/sgm_math.h"

#include <stdint.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static double pixel_value(const pv_image *image, int x, int y)
{
    ptrdiff_t i = (ptrdiff_t)y * image->stride + x;
    switch (image->type) {
    case PV_PIXEL_U8: return ((const uint8_t *)image->data)[i];
    case PV_PIXEL_U16: return ((const uint16_t *)image->data)[i];
    default: return ((const float *)image->data)[i];
    }
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The image as floats with borders replicated: pad columns on each side
 * and pad rows above and below, so that the census reads its window without
 * clamping or a switch on the pixel type.  Every u8, u16 and f32 value is
 * exactly a float, so comparisons are the kernel's comparisons of the raw
 * values; floats rather than doubles give four lanes a compare. */
typedef struct padded_image {
    float *data;
    int stride, pad_x, pad_y;
} padded_image;

static int pad_image(const pv_image *image, int pad_x, int pad_y, padded_image *out)
{
    const int stride = image->width + 2 * pad_x, rows = image->height + 2 * pad_y;
    out->data = malloc((size_t)stride * (size_t)rows * sizeof *out->data);
    if (!out->data)
        return 0;
    out->stride = stride;
    out->pad_x = pad_x;
    out->pad_y = pad_y;
    for (int r = 0; r < rows; r++) {
        float *row = out->data + (size_t)r * (size_t)stride;
        const int y = clamp_int(r - pad_y, 0, image->height - 1);
        for (int c = 0; c < stride; c++)
            row[c] = (float)pixel_value(image, clamp_int(c - pad_x, 0, image->width - 1), y);
    }
    return 1;
}

/* Bit order (both backends): window positions in row-major order; plain:
 * each position but the centre against the centre; symmetric: position i
 * of the first half against its mirror n - 1 - i.  Earlier positions end
 * in higher bits.  offsets[i] is position i relative to the centre.
 * pairs_of lists the comparisons in that order: first[j] > second[j]. */
typedef struct census_pairs {
    ptrdiff_t first[64], second[64];
    int count;
} census_pairs;

static void pairs_of(const int *window, const ptrdiff_t *offsets, int symmetric,
                     census_pairs *out)
{
    const int n = window[0] * window[1];
    out->count = 0;
    for (int i = 0; i < (symmetric ? n / 2 : n); i++) {
        if (!symmetric && i == n / 2)
            continue;
        out->first[out->count] = offsets[i];
        out->second[out->count++] = symmetric ? offsets[n - 1 - i] : 0;
    }
}

static uint64_t census_at(const float *centre, const census_pairs *pairs)
{
    uint64_t code = 0;
    for (int j = 0; j < pairs->count; j++)
        code = (code << 1) | (uint64_t)(centre[pairs->first[j]] > centre[pairs->second[j]]);
    return code;
}

#ifdef __SSE2__
/* Four pixels at a time.  The codes (up to 62 bits) are built as two
 * 32-bit halves in the lanes: the comparisons before the last 32 shift
 * into the high half, the last 32 into the low half. */
static int census_row_sse2(const float *row, const census_pairs *pairs, int width,
                           uint64_t *out)
{
    const __m128i one = _mm_set1_epi32(1);
    const int split = pairs->count > 32 ? pairs->count - 32 : 0;
    int x = 0;
    for (; x + 4 <= width; x += 4) {
        const float *c = row + x;
        __m128i high = _mm_setzero_si128(), low = _mm_setzero_si128();
        for (int j = 0; j < pairs->count; j++) {
            __m128 gt = _mm_cmpgt_ps(_mm_loadu_ps(c + pairs->first[j]),
                                     _mm_loadu_ps(c + pairs->second[j]));
            __m128i bit = _mm_and_si128(_mm_castps_si128(gt), one);
            if (j < split)
                high = _mm_or_si128(_mm_slli_epi32(high, 1), bit);
            else
                low = _mm_or_si128(_mm_slli_epi32(low, 1), bit);
        }
        _mm_storeu_si128((__m128i *)(out + x), _mm_unpacklo_epi32(low, high));
        _mm_storeu_si128((__m128i *)(out + x + 2), _mm_unpackhi_epi32(low, high));
    }
    return x;
}
#endif

int sgm_census_image(const pv_image *image, const pv_sgm_params *p, uint64_t *out,
                        int threads)
{
    const int w = p->census_width, h = p->census_height, n = w * h, width = image->width;
    padded_image pad;
    if (!pad_image(image, w / 2, h / 2, &pad))
        return 0;
    ptrdiff_t offsets[64];
    for (int i = 0; i < n; i++)
        offsets[i] = (ptrdiff_t)(i / w - h / 2) * pad.stride + (i % w - w / 2);
    census_pairs pairs;
    pairs_of((const int[]){w, h}, offsets, p->census_symmetric, &pairs);
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < image->height; y++) {
        const float *row = pad.data + (size_t)(y + pad.pad_y) * (size_t)pad.stride + pad.pad_x;
        uint64_t *codes = out + (size_t)y * (size_t)width;
        int x = 0;
#ifdef __SSE2__
        x = census_row_sse2(row, &pairs, width, codes);
#endif
        for (; x < width; x++)
            codes[x] = census_at(row + x, &pairs);
    }
    free(pad.data);
    return 1;
}

static int32_t intensity_at(const pv_image *image, int x, int y)
{
    if (image->type == PV_PIXEL_F32)
        return sgm_intensity_f32(((const float *)image->data)[(ptrdiff_t)y * image->stride + x]);
    return (int32_t)pixel_value(image, x, y);
}

void sgm_fill_intensity(const pv_image *left, int32_t *out)
{
    for (int y = 0; y < left->height; y++)
        for (int x = 0; x < left->width; x++)
            out[(size_t)y * left->width + x] = intensity_at(left, x, y);
}
