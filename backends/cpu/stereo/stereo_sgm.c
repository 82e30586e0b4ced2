/* CPU semi-global matching: the oracle for kernels/stereo_sgm.cl, and a
 * usable matcher in its own right.
 *
 * Steps (include/parvis/stereo.h states the contract; the integer rules
 * live in backends/common/sgm_math.h, one text with the kernels):
 *   census   u64 strings of both images (sgm_census.c);
 *   costs    the Hamming cost of every (pixel, candidate) as one byte
 *            (at most 62 bits): computed once per row, right before that
 *            row's horizontal paths, and read by every path;
 *   paths    16-bit path costs L_r, summed into a 16-bit S per (pixel,
 *            candidate); the front end bounds P2 so that the sum of all
 *            paths fits.  Horizontal paths run one row per thread; the
 *            vertical and diagonal ones sweep the image in strips of
 *            columns, one a thread, keeping the previous row's path costs
 *            (the diagonals wait only on the neighbouring strips);
 *   winner   per pixel from S: best, uniqueness, confidence, sub-pixel;
 *            the right image's disparities from the same S for the
 *            left-right check (sgm_winner.c); then the optional 3x3
 *            median.
 * The d loops run in SSE2 16-bit lanes where the compiler targets SSE2,
 * with a scalar tail and fallback. */
#include "../cpu.h"
#include "stereo_sgm.h"
#include "sgm_census.h"
#include "sgm_volume.h"
#include "sgm_winner.h"
#include "../../common/sgm_math.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------- costs */

/* The Hamming costs of row y.  Without a popcount instruction in the
 * baseline flags, __builtin_popcountll is a library call per candidate;
 * cost_row_popcnt is the same text compiled for the instruction, chosen at
 * run time where the processor has it. */
#define SGM_COST_ROW_BODY                                                                    \
    const int width = v->width, ndisp = v->ndisp;                                            \
    const uint64_t *cl = v->census_left + (size_t)y * (size_t)width;                         \
    const uint64_t *cr = v->census_right + (size_t)y * (size_t)width;                        \
    for (int x = 0; x < width; x++) {                                                        \
        uint8_t *out = v->cost + ((size_t)y * (size_t)width + (size_t)x) * (size_t)ndisp;    \
        const int lo = sgm_first_valid(x, width, v->min_disp);                               \
        const int hi = sgm_last_valid(x, v->min_disp, ndisp);                                \
        for (int k = 0; k < ndisp; k++)                                                      \
            out[k] = (uint8_t)cbits;                                                         \
        for (int k = lo; k <= hi; k++)                                                       \
            out[k] = (uint8_t)__builtin_popcountll(cl[x] ^ cr[x - v->min_disp - k]);         \
    }

static void cost_row(const sgm_volume *v, int y, int cbits)
{
    SGM_COST_ROW_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SGM_HAVE_POPCNT_ROW 1
__attribute__((target("popcnt"))) static void cost_row_popcnt(const sgm_volume *v, int y,
                                                               int cbits)
{
    SGM_COST_ROW_BODY
}
#endif

/* Whether cost_row_popcnt may run here. */
static int have_popcnt(void)
{
#ifdef SGM_HAVE_POPCNT_ROW
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
#else
    return 0;
#endif
}

static void costs_of_row(const sgm_volume *v, int y, int cbits, int popcnt)
{
#ifdef SGM_HAVE_POPCNT_ROW
    if (popcnt) {
        cost_row_popcnt(v, y, cbits);
        return;
    }
#endif
    (void)popcnt;
    cost_row(v, y, cbits);
}

/* ------------------------------------------------------------------- paths */

/* Path costs of one pixel with its sentinels: [0] and [ndisp + 1] hold
 * SGM_SENTINEL, [1 + k] candidate k. */
typedef struct path_state {
    uint16_t *values;
    int min;
} path_state;

static void path_reset(path_state *s, int ndisp)
{
    memset(s->values + 1, 0, (size_t)ndisp * sizeof *s->values);
    s->values[0] = s->values[ndisp + 1] = SGM_SENTINEL;
    s->min = 0; /* all zero: the first step gives L = C */
}

/* One step along a path: next from prev and the costs, added into sum.
 * L(k) = C(k) + min(L'(k), L'(k-1) + P1, L'(k+1) + P1, min L' + P2) - min L'.
 * Every path value is at most bits + P2 < 2^15 (the front end's bound), so
 * the SSE2 version works in signed 16-bit lanes: the sentinel plus P1
 * saturates at 0x7fff and still loses every comparison, and S wraps as the
 * scalar uint16_t sum does. */
static int path_step_scalar(const uint16_t *pv, const uint8_t *cost, int k, int ndisp, int p1,
                            int m, int jump, uint16_t *nv, uint16_t *sum, int best)
{
    for (; k < ndisp; k++) {
        int a = pv[k + 1], b = pv[k] + p1, c = pv[k + 2] + p1;
        int low = a < b ? a : b;
        low = low < c ? low : c;
        low = low < jump ? low : jump;
        int value = low - m + cost[k];
        nv[k] = (uint16_t)value;
        sum[k] = (uint16_t)(sum[k] + value);
        best = value < best ? value : best;
    }
    return best;
}

#ifdef __SSE2__
/* Eight candidates a step; returns the smallest new value (0x7fff if none). */
static int path_step_sse2(const uint16_t *pv, const uint8_t *cost, int ndisp, int p1, int m,
                          int jump, uint16_t *nv, uint16_t *sum, int *done)
{
    const __m128i vp1 = _mm_set1_epi16((short)p1), vjump = _mm_set1_epi16((short)jump);
    const __m128i vm = _mm_set1_epi16((short)m), zero = _mm_setzero_si128();
    __m128i vbest = _mm_set1_epi16(0x7fff);
    int k = 0;
    for (; k + 8 <= ndisp; k += 8) {
        __m128i a = _mm_loadu_si128((const __m128i *)(pv + k + 1));
        __m128i b = _mm_adds_epi16(_mm_loadu_si128((const __m128i *)(pv + k)), vp1);
        __m128i c = _mm_adds_epi16(_mm_loadu_si128((const __m128i *)(pv + k + 2)), vp1);
        __m128i low = _mm_min_epi16(_mm_min_epi16(a, b), _mm_min_epi16(c, vjump));
        __m128i ck = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(cost + k)), zero);
        __m128i value = _mm_add_epi16(_mm_sub_epi16(low, vm), ck);
        _mm_storeu_si128((__m128i *)(nv + k), value);
        __m128i s = _mm_loadu_si128((const __m128i *)(sum + k));
        _mm_storeu_si128((__m128i *)(sum + k), _mm_add_epi16(s, value));
        vbest = _mm_min_epi16(vbest, value);
    }
    vbest = _mm_min_epi16(vbest, _mm_srli_si128(vbest, 8));
    vbest = _mm_min_epi16(vbest, _mm_srli_si128(vbest, 4));
    vbest = _mm_min_epi16(vbest, _mm_srli_si128(vbest, 2));
    *done = k;
    return _mm_extract_epi16(vbest, 0);
}
#endif

static void path_step(const path_state *prev, const uint8_t *cost, int ndisp, int p1, int p2,
                      path_state *next, uint16_t *sum)
{
    const uint16_t *pv = prev->values;
    uint16_t *nv = next->values + 1;
    const int m = prev->min, jump = m + p2;
    int best = 0xffff, k = 0;
#ifdef __SSE2__
    best = path_step_sse2(pv, cost, ndisp, p1, m, jump, nv, sum, &k);
#endif
    best = path_step_scalar(pv, cost, k, ndisp, p1, m, jump, nv, sum, best);
    next->values[0] = next->values[ndisp + 1] = SGM_SENTINEL;
    next->min = best;
}

static int step_p2(const sgm_volume *v, const pv_sgm_params *p, int x, int y, int px, int py)
{
    if (!p->p2_adaptive)
        return p->p2;
    const int32_t *in = v->intensity;
    int64_t di = (int64_t)in[(size_t)y * v->width + x] - in[(size_t)py * v->width + px];
    return sgm_adaptive_p2(p->p1, p->p2, di > 0x7fffffff || di < -0x7fffffff ? 0x7fffffff : (int)di);
}

/* Both horizontal paths of row y, with four scratch states (two a path).
 * They run first and zero the row's sums themselves: the volume comes from
 * malloc, so its pages are first touched here by writes, in the thread that
 * owns the row.  (A calloc'd volume first read by the path steps took twice
 * the page faults, and the horizontal paths four times as long: 142 ms
 * against 26 ms on the motorcycle pair, two threads.)  The two paths step
 * in turn, left to right at x = i and right to left at x = w - 1 - i: each
 * step waits on its own path's previous minimum, so two independent chains
 * keep the core busy where one left it waiting.  The sums are additions
 * modulo 2^16, so their order does not change them. */
static void horizontal_row(const sgm_volume *v, const pv_sgm_params *p, int y, path_state *s)
{
    const int w = v->width, nd = v->ndisp;
    memset(v->sum + cell(v, 0, y), 0, (size_t)w * (size_t)nd * sizeof *v->sum);
    path_reset(&s[0], nd);
    path_reset(&s[2], nd);
    for (int i = 0; i < w; i++) {
        const int now = i & 1, next = (i + 1) & 1, xl = i, xr = w - 1 - i;
        const int p2l = i == 0 ? p->p2 : step_p2(v, p, xl, y, xl - 1, y);
        const int p2r = i == 0 ? p->p2 : step_p2(v, p, xr, y, xr + 1, y);
        path_step(&s[now], v->cost + cell(v, xl, y), nd, p->p1, p2l, &s[next],
                  v->sum + cell(v, xl, y));
        path_step(&s[2 + now], v->cost + cell(v, xr, y), nd, p->p1, p2r, &s[2 + next],
                  v->sum + cell(v, xr, y));
    }
}

/* Scratch of the row sweeps: per thread four states for the horizontal
 * paths; for the sweeps, two rows (previous, current) of states per
 * direction and a zero state for paths entering the image. */
typedef struct sweep_progress sweep_progress;

typedef struct sgm_paths {
    int dirs;              /* directions per sweep: 1 (4 paths) or 3 (8 paths) */
    uint16_t *storage;
    path_state *row_states; /* [parity][dir][x] */
    path_state *thread_states;
    path_state zero;
    sweep_progress *progress; /* per thread, in a sweep */
} sgm_paths;

static path_state *row_state(const sgm_volume *v, const sgm_paths *w, int parity, int dir, int x)
{
    return &w->row_states[((size_t)parity * (size_t)w->dirs + (size_t)dir) * (size_t)v->width +
                          (size_t)x];
}

/* The paths of one sweep (dy = 1: downwards, -1: upwards) at row i of it. */
static void sweep_pixel(const sgm_volume *v, const pv_sgm_params *p, const sgm_paths *w, int dy,
                        int i, int x)
{
    const int y = dy > 0 ? i : v->height - 1 - i;
    for (int dir = 0; dir < w->dirs; dir++) {
        const int dx = w->dirs == 1 ? 0 : dir - 1, px = x - dx, py = y - dy;
        const int enters = i == 0 || px < 0 || px >= v->width;
        const path_state *prev = enters ? &w->zero : row_state(v, w, (i + 1) & 1, dir, px);
        const int p2 = enters ? p->p2 : step_p2(v, p, x, y, px, py);
        path_step(prev, v->cost + cell(v, x, y), v->ndisp, p->p1, p2, row_state(v, w, i & 1, dir, x),
                  v->sum + cell(v, x, y));
    }
}

/* The rows a thread has finished in the current sweep, one counter a
 * cache line. */
struct sweep_progress {
    atomic_int rows;
    char pad[64 - sizeof(atomic_int)];
};

static void pause_briefly(unsigned int spins)
{
#ifdef __SSE2__
    _mm_pause();
#endif
    if (spins % 256 == 0)
        sched_yield(); /* a neighbour descheduled on a shared machine */
}

/* Waits until strip t's neighbours have finished `rows` rows of the sweep:
 * their states of row rows - 1 are then written (the diagonals read the
 * state just across the strip's edge), and they are done reading those of
 * row rows - 2, whose slot (the same parity) strip t writes next. */
static void wait_for_neighbours(sweep_progress *progress, int t, int strips, int rows)
{
    for (int n = t - 1; n <= t + 1; n += 2) {
        if (n < 0 || n >= strips)
            continue;
        for (unsigned int spins = 1;
             atomic_load_explicit(&progress[n].rows, memory_order_acquire) < rows; spins++)
            pause_briefly(spins);
    }
}

/* One sweep (dy = 1: downwards, -1: upwards), each thread sweeping a strip
 * of columns from the first row to the last.  A vertical path stays in its
 * column, so with 4 paths the strips never wait; the diagonals cross into
 * the neighbouring strips, so with 8 a strip waits for its two neighbours
 * to finish the previous row: a wavefront, instead of a barrier of the
 * whole team after every row. */
static void sweep(const sgm_volume *v, const pv_sgm_params *p, const sgm_paths *w, int dy)
{
    const int width = v->width, height = v->height;
    #pragma omp parallel num_threads(v->threads)
    {
        int team = 1;
#ifdef _OPENMP
        team = omp_get_num_threads();
#endif
        const int t = pv_cpu_thread_index(), strips = team < width ? team : width;
        const int x0 = (int)((int64_t)width * t / strips);
        const int x1 = t < strips ? (int)((int64_t)width * (t + 1) / strips) : x0;
        atomic_store_explicit(&w->progress[t].rows, 0, memory_order_relaxed);
        #pragma omp barrier
        for (int i = 0; i < height && t < strips; i++) {
            if (w->dirs > 1)
                wait_for_neighbours(w->progress, t, strips, i);
            for (int x = x0; x < x1; x++)
                sweep_pixel(v, p, w, dy, i, x);
            atomic_store_explicit(&w->progress[t].rows, i + 1, memory_order_release);
        }
    }
}

/* Each row's costs are computed right before its horizontal paths read
 * them, while they are still in the cache (a separate pass over the volume
 * cost about 4 ms more of the motorcycle pair's 71 ms, two threads). */
static void aggregate(const sgm_volume *v, const pv_sgm_params *p, const sgm_paths *w, int cbits)
{
    const int height = v->height, popcnt = have_popcnt();
    #pragma omp parallel num_threads(v->threads)
    {
        path_state *mine = &w->thread_states[4 * pv_cpu_thread_index()];
        #pragma omp for schedule(static)
        for (int y = 0; y < height; y++) {
            costs_of_row(v, y, cbits, popcnt);
            horizontal_row(v, p, y, mine);
        }
    }
    sweep(v, p, w, 1);
    sweep(v, p, w, -1);
}

/* Every state starts on a cache line of its own, so that the states of
 * different threads (the horizontal paths' scratch, the sweeps' columns at
 * the edges of the threads' shares) never share a line. */
#define SGM_LINE_VALUES 32 /* 16-bit values in 64 bytes */

static size_t state_stride(int ndisp)
{
    return ((size_t)ndisp + 2 + SGM_LINE_VALUES - 1) / SGM_LINE_VALUES * SGM_LINE_VALUES;
}

static void bind_states(path_state *states, size_t count, uint16_t *storage, int ndisp)
{
    for (size_t i = 0; i < count; i++)
        states[i].values = storage + i * state_stride(ndisp);
}

static int paths_alloc(sgm_paths *w, int width, int ndisp, int paths, int threads)
{
    w->dirs = paths == 8 ? 3 : 1;
    const size_t rows = 2 * (size_t)w->dirs * (size_t)width, per_thread = 4 * (size_t)threads;
    const size_t count = rows + per_thread + 1, stride = state_stride(ndisp);
    w->storage = aligned_alloc(64, count * stride * sizeof *w->storage);
    w->row_states = malloc(rows * sizeof *w->row_states);
    w->thread_states = malloc(per_thread * sizeof *w->thread_states);
    w->progress = aligned_alloc(64, (size_t)threads * sizeof *w->progress);
    if (!w->storage || !w->row_states || !w->thread_states || !w->progress)
        return 0;
    bind_states(w->row_states, rows, w->storage, ndisp);
    bind_states(w->thread_states, per_thread, w->storage + rows * stride, ndisp);
    w->zero.values = w->storage + (rows + per_thread) * stride;
    path_reset(&w->zero, ndisp);
    return 1;
}

static void paths_free(sgm_paths *w)
{
    free(w->storage);
    free(w->row_states);
    free(w->thread_states);
    free(w->progress);
}

/* ------------------------------------------------------------------ median */

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}


static float median9(float *a)
{
    for (int i = 1; i < 9; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            float t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    return a[4];
}

/* out(x, y) = the 3x3 median of in (dense width x height), borders
 * replicated; INFINITY sorts above every number. */
static void median_into(const float *in, int width, int height, pv_image *out, int threads)
{
    #pragma omp parallel for num_threads(threads) schedule(static)
    for (int y = 0; y < height; y++) {
        float *row = (float *)out->data + (ptrdiff_t)y * out->stride;
        for (int x = 0; x < width; x++) {
            float a[9];
            for (int i = 0; i < 9; i++)
                a[i] = in[(size_t)clamp_int(y + i / 3 - 1, 0, height - 1) * width +
                          clamp_int(x + i % 3 - 1, 0, width - 1)];
            row[x] = median9(a);
        }
    }
}

static void copy_into(const float *in, int width, int height, pv_image *out)
{
    for (int y = 0; y < height; y++)
        memcpy((float *)out->data + (ptrdiff_t)y * out->stride, in + (size_t)y * width,
               (size_t)width * sizeof *in);
}

/* ------------------------------------------------------------------- entry */

typedef struct sgm_work {
    sgm_volume v;
    sgm_paths paths;
    int16_t *right_rows; /* per thread: the right row's indices, then scratch */
    float *disp, *conf;
} sgm_work;

static void work_free(sgm_work *w)
{
    free(w->v.census_left);
    free(w->v.census_right);
    free(w->v.intensity);
    free(w->v.cost);
    free(w->v.sum);
    paths_free(&w->paths);
    free(w->right_rows);
    free(w->disp);
    free(w->conf);
}

static int work_alloc(sgm_work *w, const pv_image *left, const pv_sgm_params *p, int threads)
{
    const size_t pixels = (size_t)left->width * (size_t)left->height;
    const size_t cells = pixels * (size_t)p->ndisp;
    sgm_volume *v = &w->v;
    *v = (sgm_volume){left->width, left->height, p->ndisp, p->min_disp, threads,
                      NULL, NULL, NULL, NULL, NULL};
    v->census_left = malloc(pixels * sizeof *v->census_left);
    v->census_right = malloc(pixels * sizeof *v->census_right);
    v->intensity = p->p2_adaptive ? malloc(pixels * sizeof *v->intensity) : NULL;
    v->cost = malloc(cells);
    v->sum = malloc(cells * sizeof *v->sum); /* zeroed by horizontal_row */
    w->right_rows = malloc(2 * (size_t)threads * (size_t)left->width * sizeof *w->right_rows);
    w->disp = malloc(pixels * sizeof *w->disp);
    w->conf = malloc(pixels * sizeof *w->conf);
    int ok = paths_alloc(&w->paths, left->width, p->ndisp, p->paths, threads);
    return ok && v->census_left && v->census_right && (v->intensity || !p->p2_adaptive) &&
           v->cost && v->sum && w->right_rows && w->disp && w->conf;
}

pv_status pv_cpu_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                     const pv_sgm_params *params, pv_image *disparity, pv_image *confidence)
{
    sgm_work w;
    memset(&w, 0, sizeof w);
    const int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    if (!work_alloc(&w, left, params, threads)) {
        work_free(&w);
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_sgm: no memory for the cost volume and sums");
    }
    if (!sgm_census_image(left, params, w.v.census_left, threads) ||
        !sgm_census_image(right, params, w.v.census_right, threads)) {
        work_free(&w);
        return pv_fail(ctx, PV_ERR_NOMEM, "stereo_sgm: no memory for the census");
    }
    if (params->p2_adaptive)
        sgm_fill_intensity(left, w.v.intensity);
    aggregate(&w.v, params, &w.paths,
              sgm_census_bits(params->census_width, params->census_height,
                              params->census_symmetric));
    sgm_choose_all(&w.v, params, w.right_rows, w.disp, w.conf);
    if (params->median)
        median_into(w.disp, left->width, left->height, disparity, threads);
    else
        copy_into(w.disp, left->width, left->height, disparity);
    if (confidence)
        copy_into(w.conf, left->width, left->height, confidence);
    work_free(&w);
    return PV_OK;
}
