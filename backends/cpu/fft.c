/* The CPU FFT layer: FFTW3f R2C/C2R plan pairs, cached per (size, threads)
 * for the whole process behind one mutex. */
#include "fft.h"

#include <errno.h>
#include <fftw3.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Unused plans kept for later calls; more are destroyed, oldest first. */
#define PV_FFT_CACHE_IDLE_MAX 16

struct pv_cpu_fft {
    int size[3];
    int threads;
    fftwf_plan forward;
    fftwf_plan inverse;
    size_t real_count;
    size_t complex_count;
    int users;
    unsigned long last_use;
    struct pv_cpu_fft *next;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pv_cpu_fft *cache_head;
static unsigned long use_clock;
static int fftw_ready;

/* ----------------------------------------------------------- FFTW set-up */

/* Planner effort.  FFTW_MEASURE finds plans up to 3x faster than
 * FFTW_ESTIMATE on some sizes, but it times candidate algorithms, and on
 * sizes with large prime factors that takes seconds (587x485: over 5 s to
 * plan a 30 ms correlation) or minutes (512^3).  So by default nothing is
 * measured: a size uses measured plans only when wisdom for it is on disk
 * (from an earlier process run with PARVIS_FFTW_PLANNER=measure or
 * patient), else estimated ones, and the first call never costs seconds.
 * Explicit "measure" measures up to PV_FFT_MEASURE_MAX points and
 * estimates larger sizes; "patient" has no limit. */
#define PV_FFT_MEASURE_MAX ((size_t)1 << 24)

typedef enum planner_effort {
    EFFORT_DEFAULT,   /* stored wisdom, else estimate */
    EFFORT_ESTIMATE,
    EFFORT_MEASURE,
    EFFORT_PATIENT
} planner_effort;

static planner_effort requested_effort(void)
{
    if (pv_config_is(PV_CONFIG_FFTW_PLANNER, "estimate"))
        return EFFORT_ESTIMATE;
    if (pv_config_is(PV_CONFIG_FFTW_PLANNER, "measure"))
        return EFFORT_MEASURE;
    if (pv_config_is(PV_CONFIG_FFTW_PLANNER, "patient"))
        return EFFORT_PATIENT;
    return EFFORT_DEFAULT;
}

/* The wisdom file: PARVIS_FFTW_WISDOM (a path, or "off"), else
 * $XDG_CACHE_HOME/parvis/fftw3f.wisdom, else ~/.cache/parvis/...; 0 when
 * there is none.  The directories are created on demand. */
static int wisdom_path(char *path, size_t size)
{
    char own[PV_CONFIG_VALUE_MAX + 1];
    if (pv_config_get(PV_CONFIG_FFTW_WISDOM, own, sizeof own)) {
        if (strcmp(own, "off") == 0)
            return 0;
        int n = snprintf(path, size, "%s", own);
        return n > 0 && (size_t)n < size;
    }
    char dir[3072];
    if (!pv_cache_root(dir, sizeof dir))
        return 0;
    int n = snprintf(path, size, "%s/parvis/fftw3f.wisdom", dir);
    return n > 0 && (size_t)n < size;
}

/* mkdir -p of the cache directory part of a default wisdom path (the
 * cache root and its parvis/ below). */
static void make_parent_dirs(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    char *parent = strrchr(dir, '/');
    if (parent && parent != dir) {
        *parent = '\0';
        mkdir(dir, 0755);
        *parent = '/';
    }
    mkdir(dir, 0755);
}

/* Wisdom files are small (FFTW's text, a few hundred bytes a size):
 * anything larger is not ours, and reading it would cost seconds a call. */
#define WISDOM_MAX_BYTES ((uint64_t)16 << 20)

/* Import the wisdom at path when it is a regular file of at most
 * WISDOM_MAX_BYTES (a FIFO or a device would block or never end).  1 when
 * path is such a file or absent (so that saving may create it), 0 when
 * something else is there. */
static int import_wisdom(const char *path)
{
    FILE *file = NULL;
    uint64_t size = 0;
    int opened = pv_open_regular(path, &file, &size);
    if (opened == ENOENT)
        return 1;
    if (opened != 0) {
        pv_log(NULL, "FFTW wisdom '%s' ignored: %s", path, pv_open_regular_reason(opened));
        return 0;
    }
    if (size <= WISDOM_MAX_BYTES)
        fftwf_import_wisdom_from_file(file); /* foreign or corrupt: ignored */
    else
        pv_log(NULL, "FFTW wisdom '%s' ignored: %llu bytes, more than %llu", path,
               (unsigned long long)size, (unsigned long long)WISDOM_MAX_BYTES);
    fclose(file);
    return 1;
}

/* Write the process's wisdom (merged with what the file holds now, which
 * another process may have added) through a temporary file renamed over
 * the old one, so a reader never sees half a file.  Failures only cost
 * the saving. */
static void save_wisdom(void)
{
    char path[4096], temp[4200];
    if (!wisdom_path(path, sizeof path))
        return;
    make_parent_dirs(path);
    if (!import_wisdom(path))
        return; /* never rename over a FIFO or a device */
    snprintf(temp, sizeof temp, "%s.XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0)
        return;
    FILE *out = fdopen(fd, "w");
    if (!out) {
        close(fd);
        unlink(temp);
        return;
    }
    fftwf_export_wisdom_to_file(out);
    int ok = fflush(out) == 0 && !ferror(out);
    ok = (fclose(out) == 0) && ok;
    if (!ok || rename(temp, path) != 0)
        unlink(temp);
}

/* Called with cache_lock held. */
static void prepare_fftw(void)
{
    if (fftw_ready)
        return;
    fftwf_init_threads();
    /* Other FFTW users in the process may plan without our lock. */
    fftwf_make_planner_thread_safe();
    char path[4096];
    if (requested_effort() != EFFORT_ESTIMATE && wisdom_path(path, sizeof path))
        import_wisdom(path);
    fftw_ready = 1;
}

/* --------------------------------------------------------------- planning */

/* FFTW wants the slowest axis first; leading (slowest) 1s are dropped so a
 * 2D image gets a 2D plan. */
static int fftw_dims(const int size[3], int n[3])
{
    int rank = size[2] > 1 ? 3 : size[1] > 1 ? 2 : 1;
    for (int i = 0; i < rank; i++)
        n[i] = size[rank - 1 - i];
    return rank;
}

static void destroy_pair(pv_cpu_fft *fft)
{
    if (fft->forward)
        fftwf_destroy_plan(fft->forward);
    if (fft->inverse)
        fftwf_destroy_plan(fft->inverse);
    fft->forward = fft->inverse = NULL;
}

static int plan_pair(pv_cpu_fft *fft, float *real, float *spectrum, unsigned flags)
{
    int n[3];
    int rank = fftw_dims(fft->size, n);
    fftwf_plan_with_nthreads(fft->threads);
    fft->forward = fftwf_plan_dft_r2c(rank, n, real, (fftwf_complex *)spectrum, flags);
    fft->inverse = fftwf_plan_dft_c2r(rank, n, (fftwf_complex *)spectrum, real, flags);
    if (fft->forward && fft->inverse)
        return 1;
    destroy_pair(fft);
    return 0;
}

/* The flags of an explicit effort (EFFORT_DEFAULT is handled apart). */
static unsigned effort_flags(planner_effort effort, size_t points)
{
    if (effort == EFFORT_PATIENT)
        return FFTW_PATIENT;
    if (effort == EFFORT_MEASURE && points <= PV_FFT_MEASURE_MAX)
        return FFTW_MEASURE;
    return FFTW_ESTIMATE;
}

/* Plans on scratch arrays because FFTW_MEASURE overwrites what it is given. */
static int make_plans(pv_cpu_fft *fft)
{
    float *real = pv_cpu_fft_alloc(fft->real_count);
    float *spectrum = pv_cpu_fft_alloc(2 * fft->complex_count);
    planner_effort effort = requested_effort();
    int ok = 0;
    if (real && spectrum) {
        if (effort == EFFORT_DEFAULT)
            /* A measured plan from stored wisdom costs no measuring; FFTW
             * gives NULL when the wisdom does not cover this size. */
            ok = plan_pair(fft, real, spectrum, FFTW_MEASURE | FFTW_WISDOM_ONLY) ||
                 plan_pair(fft, real, spectrum, FFTW_ESTIMATE);
        else {
            unsigned flags = effort_flags(effort, fft->real_count);
            ok = plan_pair(fft, real, spectrum, flags);
            if (ok && flags != FFTW_ESTIMATE)
                save_wisdom();
        }
    }
    pv_cpu_fft_free(real);
    pv_cpu_fft_free(spectrum);
    return ok;
}

static void destroy_entry(pv_cpu_fft *fft)
{
    destroy_pair(fft);
    free(fft);
}

/* ------------------------------------------------------------------ cache */

static pv_cpu_fft *find_entry(const int size[3], int threads)
{
    for (pv_cpu_fft *e = cache_head; e; e = e->next)
        if (memcmp(e->size, size, sizeof e->size) == 0 && e->threads == threads)
            return e;
    return NULL;
}

static int idle_count(void)
{
    int count = 0;
    for (pv_cpu_fft *e = cache_head; e; e = e->next)
        count += e->users == 0;
    return count;
}

static void evict_idle_beyond(int keep)
{
    while (idle_count() > keep) {
        pv_cpu_fft *oldest = NULL;
        for (pv_cpu_fft *e = cache_head; e; e = e->next)
            if (e->users == 0 && (!oldest || e->last_use < oldest->last_use))
                oldest = e;
        PV_LIST_UNLINK(pv_cpu_fft, &cache_head, oldest);
        destroy_entry(oldest);
    }
}

static pv_status new_entry(pv_context *ctx, const int size[3], int threads, pv_cpu_fft **out)
{
    pv_cpu_fft *fft = calloc(1, sizeof *fft);
    if (!fft)
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT plan cache: out of memory");
    memcpy(fft->size, size, sizeof fft->size);
    fft->threads = threads;
    if (!pv_r2c_counts(size, 1, &fft->real_count, &fft->complex_count)) {
        free(fft);
        return pv_fail(ctx, PV_ERR_NOMEM, "FFT of %dx%dx%d: size overflows", size[0], size[1],
                       size[2]);
    }
    if (!make_plans(fft)) {
        free(fft);
        return pv_fail(ctx, PV_ERR_NOMEM, "FFTW could not plan a %dx%dx%d real transform",
                       size[0], size[1], size[2]);
    }
    fft->next = cache_head;
    cache_head = fft;
    *out = fft;
    return PV_OK;
}

/* One user fewer; idle plans beyond the cache's keep are freed, the least
 * recently used first.  Called with cache_lock held. */
static void drop_user(void *entry)
{
    pv_cpu_fft *fft = entry;
    fft->users--;
    evict_idle_beyond(PV_FFT_CACHE_IDLE_MAX);
}

pv_status pv_cpu_fft_acquire(pv_context *ctx, const int size[3], pv_cpu_fft **out)
{
    int threads = ctx->cpu_threads > 0 ? ctx->cpu_threads : 1;
    pthread_mutex_lock(&cache_lock);
    prepare_fftw();
    pv_cpu_fft *fft = find_entry(size, threads);
    pv_status status = fft ? PV_OK : new_entry(ctx, size, threads, &fft);
    if (status == PV_OK) {
        fft->users++;
        fft->last_use = ++use_clock;
        *out = fft;
    }
    pthread_mutex_unlock(&cache_lock);
    return status;
}

void pv_cpu_fft_release(pv_cpu_fft *fft)
{
    pv_cache_release(&cache_lock, fft, drop_user);
}

/* Plans still cached at unload are freed so leak checkers see a clean exit. */
__attribute__((destructor)) static void free_cache_at_exit(void)
{
    pthread_mutex_lock(&cache_lock);
    evict_idle_beyond(0);
    if (fftw_ready && !cache_head) {
        fftwf_cleanup_threads();
        fftw_ready = 0;
    }
    pthread_mutex_unlock(&cache_lock);
}

/* -------------------------------------------------------------- execution */

size_t pv_cpu_fft_real_count(const pv_cpu_fft *fft)
{
    return fft->real_count;
}

size_t pv_cpu_fft_complex_count(const pv_cpu_fft *fft)
{
    return fft->complex_count;
}

float *pv_cpu_fft_alloc(size_t count)
{
    size_t bytes;
    if (!pv_size_mul(count ? count : 1, sizeof(float), &bytes))
        return NULL;
    return fftwf_malloc(bytes);
}

void pv_cpu_fft_free(float *buffer)
{
    if (buffer)
        fftwf_free(buffer);
}

/* Every slice starts a whole number of these floats into its block: 64
 * bytes, at least the alignment FFTW's SIMD code asks of fftwf_malloc. */
#define SLICE_ALIGN_FLOATS ((size_t)16)

/* count rounded up to whole alignment units; 0 when that overflows. */
static int slice_span(size_t count, size_t *span)
{
    if (count > SIZE_MAX - (SLICE_ALIGN_FLOATS - 1))
        return 0;
    *span = (count + SLICE_ALIGN_FLOATS - 1) / SLICE_ALIGN_FLOATS * SLICE_ALIGN_FLOATS;
    return 1;
}

float *pv_cpu_fft_alloc_slices(const pv_cpu_slice *slices, size_t n)
{
    size_t total = 0, span;
    for (size_t i = 0; i < n; i++) {
        if (!slice_span(slices[i].count, &span) || span > SIZE_MAX - total)
            return NULL;
        total += span;
    }
    float *block = pv_cpu_fft_alloc(total);
    if (!block)
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        slice_span(slices[i].count, &span);
        *slices[i].array = block + at;
        at += span;
    }
    return block;
}

/* The plans were made on fftwf_malloc'ed arrays (alignment offset 0). */
int pv_cpu_fft_can_read(const pv_cpu_fft *fft, const float *data)
{
    (void)fft;
    return fftwf_alignment_of((float *)data) == 0;
}

void pv_cpu_fft_forward(const pv_cpu_fft *fft, float *real, float *spectrum)
{
    fftwf_execute_dft_r2c(fft->forward, real, (fftwf_complex *)spectrum);
}

void pv_cpu_fft_inverse(const pv_cpu_fft *fft, float *spectrum, float *real)
{
    fftwf_execute_dft_c2r(fft->inverse, (fftwf_complex *)spectrum, real);
}
