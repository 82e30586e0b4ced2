/* vlfeat_sift_peer: times VLFeat's SIFT (detection, orientations and
 * descriptors) with parvis's SIFT parameters, as a peer for parvis-bench's
 * sift cases.
 *
 *   vlfeat_sift_peer --image PATH [--tile WxH] [--case NAME]
 *                    [--runs N] [--warmup N] [--budget SECONDS]
 *                    [--first-octave N] [--peak-thresh T] [--features OUT]
 *
 * The image is read with parvis's I/O; --tile mirror-tiles it to WxH the
 * way bench/bench_features.c builds its inputs (the bench uses the bundled
 * Venus left image).  Parameters are pv_sift_params_default's (first
 * octave -1, 3 levels, peak threshold 0 on [0, 1] values, edge
 * threshold 10, descriptor magnification 3, and parvis's octave count);
 * --first-octave and --peak-thresh replace those two (VLFeat's own
 * defaults are first octave -1 in its `sift` program, 0 in vl_sift, and
 * peak threshold 0).  Each timed
 * run converts the 8-bit image to floats (as pv_sift_detect does) and
 * computes every keypoint's orientations and descriptors; the filter is
 * made once, untimed, like a parvis plan.  VLFeat runs on one thread.
 *
 * Prints one JSON line in bench/peers/peers.py's row format:
 *   {"op": "sift", "case": ..., "peer": "vlfeat", "path": "cpu", "ms": ...,
 *    "runs": ..., "samples": [...], "note": ..., "keypoints": ...}
 *
 * --features OUT also writes the last run's oriented keypoints for
 * bench/peers/sift_accuracy.py: one record per descriptor of 132 float32
 * in the machine's byte order, x y sigma angle (VLFeat's frame: pixels,
 * origin at the centre of the top-left pixel, angle as VLFeat gives it)
 * then the 128 descriptor values.  Runs default to 1 and warm-up to 0
 * then. */
#include <parvis.h>

#include <vl/sift.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RUNS 1000

typedef struct options {
    const char *image;
    const char *name;
    int width, height;  /* 0: the image's own size */
    int runs, warmup;
    double budget_s;
    int first_octave;       /* -2: pv_sift_params_default's */
    float peak_thresh;      /* < 0: pv_sift_params_default's */
    const char *features;   /* where to write the keypoints, or NULL */
} options;

static int usage(void)
{
    fputs("usage: vlfeat_sift_peer --image PATH [--tile WxH] [--case NAME]\n"
          "                        [--runs N] [--warmup N] [--budget SECONDS]\n"
          "                        [--first-octave N] [--peak-thresh T] [--features OUT]\n",
          stderr);
    return 2;
}

static int parse(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (i + 1 >= argc)
            return 1;
        const char *value = argv[++i];
        char *end = NULL;
        if (strcmp(arg, "--image") == 0)
            o->image = value;
        else if (strcmp(arg, "--case") == 0)
            o->name = value;
        else if (strcmp(arg, "--tile") == 0) {
            if (sscanf(value, "%dx%d", &o->width, &o->height) != 2 || o->width < 16 ||
                o->height < 16 || o->width > 65536 || o->height > 65536)
                return 1;
        } else if (strcmp(arg, "--runs") == 0) {
            o->runs = (int)strtol(value, &end, 10);
            if (*end || o->runs < 1 || o->runs > MAX_RUNS)
                return 1;
        } else if (strcmp(arg, "--warmup") == 0) {
            o->warmup = (int)strtol(value, &end, 10);
            if (*end || o->warmup < 0 || o->warmup > MAX_RUNS)
                return 1;
        } else if (strcmp(arg, "--budget") == 0) {
            o->budget_s = strtod(value, &end);
            if (*end || !(o->budget_s > 0.0))
                return 1;
        } else if (strcmp(arg, "--first-octave") == 0) {
            o->first_octave = (int)strtol(value, &end, 10);
            if (*end || o->first_octave < -1 || o->first_octave > 8)
                return 1;
        } else if (strcmp(arg, "--peak-thresh") == 0) {
            o->peak_thresh = strtof(value, &end);
            if (*end || !(o->peak_thresh >= 0.0f) || !isfinite(o->peak_thresh))
                return 1;
        } else if (strcmp(arg, "--features") == 0)
            o->features = value;
        else
            return 1;
    }
    return o->image == NULL;
}

static int mirror(int i, int n)
{
    int period = 2 * n;
    i %= period;
    return i < n ? i : period - 1 - i;
}

/* The image, mirror-tiled to width x height (or as read), 8-bit, dense. */
static uint8_t *load(const options *o, int *width, int *height)
{
    pv_image source;
    if (pv_image_read(o->image, PV_PIXEL_U8, &source) != PV_OK) {
        fprintf(stderr, "vlfeat_sift_peer: %s: %s\n", o->image, pv_last_error());
        return NULL;
    }
    int w = o->width ? o->width : source.width, h = o->height ? o->height : source.height;
    uint8_t *pixels = malloc((size_t)w * (size_t)h);
    if (pixels)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                pixels[(size_t)y * w + x] =
                    ((const uint8_t *)source.data)[(ptrdiff_t)mirror(y, source.height) * source.stride +
                                                   mirror(x, source.width)];
    pv_image_free(&source);
    *width = w;
    *height = h;
    return pixels;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int floor_log2(int n)
{
    int k = 0;
    while (n >>= 1)
        k++;
    return k;
}

typedef struct sift_run {
    VlSiftFilt *filter;
    const uint8_t *pixels;
    float *image;
    size_t count;
    float *descriptors;     /* grown as needed */
    float *frames;          /* x y sigma angle of each descriptor, grown with them */
    size_t capacity;        /* descriptors it holds */
    int keypoints;          /* detected */
    int oriented;           /* with descriptors (one per orientation) */
} sift_run;

static int describe(sift_run *r, const VlSiftKeypoint *k)
{
    double angles[4];
    int n = vl_sift_calc_keypoint_orientations(r->filter, angles, k);
    for (int a = 0; a < n; a++) {
        if ((size_t)r->oriented == r->capacity) {
            size_t grown = r->capacity ? 2 * r->capacity : 4096;
            float *more = realloc(r->descriptors, grown * 128 * sizeof(float));
            if (!more)
                return 1;
            r->descriptors = more;
            float *frames = realloc(r->frames, grown * 4 * sizeof(float));
            if (!frames)
                return 1;
            r->frames = frames;
            r->capacity = grown;
        }
        float *frame = r->frames + (size_t)r->oriented * 4;
        frame[0] = k->x;
        frame[1] = k->y;
        frame[2] = k->sigma;
        frame[3] = (float)angles[a];
        vl_sift_calc_keypoint_descriptor(r->filter, r->descriptors + (size_t)r->oriented * 128, k,
                                         angles[a]);
        r->oriented++;
    }
    return 0;
}

/* One detect + describe over the whole image. */
static int run_once(sift_run *r)
{
    for (size_t i = 0; i < r->count; i++)
        r->image[i] = (float)r->pixels[i] * (1.0f / 255.0f);
    r->keypoints = r->oriented = 0;
    for (int err = vl_sift_process_first_octave(r->filter, r->image); err != VL_ERR_EOF;
         err = vl_sift_process_next_octave(r->filter)) {
        vl_sift_detect(r->filter);
        const VlSiftKeypoint *k = vl_sift_get_keypoints(r->filter);
        int n = vl_sift_get_nkeypoints(r->filter);
        r->keypoints += n;
        for (int i = 0; i < n; i++)
            if (describe(r, &k[i]))
                return 1;
    }
    return 0;
}

/* The last run's records (frame, then descriptor) for the accuracy script. */
static int write_features(const char *path, const sift_run *r)
{
    FILE *out = fopen(path, "wb");
    int failed = out == NULL;
    for (int i = 0; i < r->oriented && !failed; i++)
        failed = fwrite(r->frames + (size_t)i * 4, sizeof(float), 4, out) != 4 ||
                 fwrite(r->descriptors + (size_t)i * 128, sizeof(float), 128, out) != 128;
    if (out && fclose(out) != 0)
        failed = 1;
    if (failed)
        fprintf(stderr, "vlfeat_sift_peer: cannot write %s\n", path);
    return failed;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    options o = {NULL, NULL, 0, 0, -1, -1, 60.0, -2, -1.0f, NULL};
    if (parse(argc, argv, &o))
        return usage();
    if (o.runs < 0)
        o.runs = o.features ? 1 : 11;
    if (o.warmup < 0)
        o.warmup = o.features ? 0 : 3;
    int width = 0, height = 0;
    uint8_t *pixels = load(&o, &width, &height);
    if (!pixels)
        return 1;
    pv_sift_params p;
    pv_sift_params_default(&p);
    if (o.first_octave >= -1)
        p.first_octave = o.first_octave;
    if (o.peak_thresh >= 0.0f)
        p.peak_thresh = o.peak_thresh;
    int octaves = floor_log2(width < height ? width : height) - p.first_octave - 3;
    if (octaves < 1)
        octaves = 1;
    sift_run r = {NULL, pixels, NULL, (size_t)width * (size_t)height, NULL, NULL, 0, 0, 0};
    r.image = malloc(r.count * sizeof(float));
    r.filter = r.image ? vl_sift_new(width, height, octaves, p.levels, p.first_octave) : NULL;
    double *samples = malloc(MAX_RUNS * sizeof(double));
    if (!r.filter || !samples) {
        fputs("vlfeat_sift_peer: out of memory\n", stderr);
        return 1;
    }
    vl_sift_set_peak_thresh(r.filter, p.peak_thresh);
    vl_sift_set_edge_thresh(r.filter, p.edge_thresh);
    vl_sift_set_magnif(r.filter, p.magnif);

    int rc = 0;
    double start = now_ms();
    for (int i = 0; i < o.warmup && rc == 0; i++) {
        rc = run_once(&r);
        if (now_ms() - start > o.budget_s * 1e3)
            break;
    }
    int runs = 0;
    start = now_ms();
    while (rc == 0 && runs < o.runs) {
        double t0 = now_ms();
        rc = run_once(&r);
        samples[runs++] = now_ms() - t0;
        if (now_ms() - start > o.budget_s * 1e3)
            break;
    }
    if (rc) {
        fputs("vlfeat_sift_peer: out of memory for descriptors\n", stderr);
        return 1;
    }
    if (o.features && write_features(o.features, &r))
        return 1;
    double *sorted = malloc((size_t)runs * sizeof(double));
    if (!sorted)
        return 1;
    memcpy(sorted, samples, (size_t)runs * sizeof(double));
    qsort(sorted, (size_t)runs, sizeof(double), compare);
    double median = runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);

    char name[64];
    if (o.name)
        snprintf(name, sizeof name, "%s", o.name);
    else
        snprintf(name, sizeof name, "%dx%d", width, height);
    char note[256];
    snprintf(note, sizeof note,
             "vl_sift %dx%d, first octave %d, %d octaves, %d levels, peak %.3g, edge %.3g, "
             "magnif %.3g, one thread; %d keypoints, %d descriptors",
             width, height, p.first_octave, octaves, p.levels, (double)p.peak_thresh,
             (double)p.edge_thresh, (double)p.magnif, r.keypoints, r.oriented);
    printf("{\"op\": \"sift\", \"case\": ");
    json_string(name);
    printf(", \"peer\": \"vlfeat\", \"path\": \"cpu\", \"ms\": %.6f, \"runs\": %d, \"samples\": [",
           median, runs);
    for (int i = 0; i < runs; i++)
        printf("%s%.4f", i ? ", " : "", samples[i]);
    printf("], \"note\": ");
    json_string(note);
    printf(", \"keypoints\": %d, \"descriptors\": %d}\n", r.keypoints, r.oriented);

    free(sorted);
    free(samples);
    vl_sift_delete(r.filter);
    free(r.descriptors);
    free(r.frames);
    free(r.image);
    free(pixels);
    return 0;
}
