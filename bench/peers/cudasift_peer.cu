/* cudasift_peer: times CudaSift (a CUDA SIFT, github.com/Celebrandil/CudaSift)
 * on parvis-bench's inputs, as a peer for the sift cases and for the
 * homography RANSAC case.  Not part of parvis: it is built only where
 * nvcc and a CudaSift source tree exist, by bench/peers/build-cudasift.sh.
 *
 *   cudasift_peer --image PATH --tile WxH [--case NAME] [--thresh T]
 *                 [--octaves N] [--runs N] [--warmup N]
 *   cudasift_peer --ransac N [--outliers F] [--loops N] [--runs N]
 *   cudasift_peer --chain --image PATH --tile WxH [--case NAME] [--loops N] ...
 *
 * SIFT: the 8-bit PGM at PATH is mirror-tiled to WxH the way
 * bench/bench_features.c builds its inputs, uploaded once (as floats, as
 * CudaSift expects), then each timed run is ExtractSift (detection,
 * orientation, descriptors, and CudaSift's own copy of the points to host
 * memory), wall clock, after --warmup untimed runs: parvis-bench's e2e-up.
 * Defaults are CudaSift's demo settings: threshold 3.0, 5 octaves, initial
 * blur 1.0, no up-sampling.
 *
 * RANSAC: N synthetic matches, a fraction F of them outliers, the rest
 * mapped by a known homography with 0.3 px of uniform noise; each timed
 * run is FindHomography (its own sampling, scoring on the GPU and the copy
 * of the best model back), threshold 1 px.  The row reports the largest
 * corner error of the found model against the truth.
 *
 * Chain (parvis-bench's sift-chain-720p / -1080p, bench/bench_sift_chain.c):
 * frame 1 is the PGM mirror-tiled to WxH with a tenth of a lattice texture
 * (its scene()), frame 2 the same scene turned
 * 0.1 rad and scaled 0.9 about the centre and shifted (12, -8) px
 * (bilinear, rounded to 8 bits), as parvis-bench builds them.  Each timed
 * run is CudaSift's demo chain from host images to a homography in host
 * memory: both uploads, ExtractSift twice, MatchSiftData, FindHomography
 * with 10000 loops (--loops N to change), min score 0, max ambiguity 0.8,
 * threshold 5 px, wall clock to a device synchronisation.  The row reports
 * both keypoint counts, the inliers and the largest corner error of the
 * model against the truth (FindHomography's, before the demo's
 * ImproveHomography, which is not timed or run).
 *
 * Prints one JSON line in bench/peers/peers.py's row format. */
#include "cudaImage.h"
#include "cudaSift.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Options {
    const char *image = nullptr;
    const char *name = nullptr;
    int width = 0, height = 0;
    float thresh = 3.0f;
    int octaves = 5;
    int runs = 50, warmup = 5;
    int ransac = 0;
    float outliers = 0.5f;
    int loops = 1024;
    bool loops_given = false;
    bool chain = false;
};

static double now_ms()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void print_row(const char *op, const char *name, const std::vector<double> &samples,
                      const char *extra)
{
    printf("{\"op\": \"%s\", \"case\": \"%s\", \"peer\": \"cudasift\", \"path\": \"cuda\", "
           "\"ms\": %.4f, \"runs\": %zu, \"samples\": [",
           op, name, median(samples), samples.size());
    for (size_t i = 0; i < samples.size(); i++)
        printf("%s%.4f", i ? ", " : "", samples[i]);
    printf("]%s}\n", extra);
}

/* A binary 8-bit PGM (P5, maxval < 256); comments allowed in the header. */
static bool read_pgm(const char *path, std::vector<unsigned char> &pixels, int &w, int &h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char magic[3] = {0};
    int values[3], got = 0;
    bool ok = fscanf(f, "%2s", magic) == 1 && strcmp(magic, "P5") == 0;
    while (ok && got < 3) {
        int c = fgetc(f);
        if (c == '#') {
            while (c != '\n' && c != EOF)
                c = fgetc(f);
        } else if (c >= '0' && c <= '9') {
            ungetc(c, f);
            ok = fscanf(f, "%d", &values[got++]) == 1;
        } else if (c == EOF) {
            ok = false;
        }
    }
    fgetc(f); /* the single white-space byte before the pixels */
    ok = ok && values[0] > 0 && values[1] > 0 && values[2] > 0 && values[2] < 256;
    if (ok) {
        w = values[0];
        h = values[1];
        pixels.resize((size_t)w * h);
        ok = fread(pixels.data(), 1, pixels.size(), f) == pixels.size();
    }
    fclose(f);
    return ok;
}

static int mirror(int i, int n)
{
    int period = 2 * n;
    i %= period;
    return i < n ? i : period - 1 - i;
}

static int run_sift(const Options &o)
{
    std::vector<unsigned char> src;
    int sw = 0, sh = 0;
    if (!read_pgm(o.image, src, sw, sh)) {
        fprintf(stderr, "cudasift_peer: cannot read %s as an 8-bit PGM\n", o.image);
        return 1;
    }
    int w = o.width ? o.width : sw, h = o.height ? o.height : sh;
    std::vector<float> tiled((size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            tiled[(size_t)y * w + x] = src[(size_t)mirror(y, sh) * sw + mirror(x, sw)];

    InitCuda(0);
    CudaImage img;
    img.Allocate(w, h, iAlignUp(w, 128), false, NULL, tiled.data());
    img.Download();
    SiftData data;
    InitSiftData(data, 262144, true, true);
    float *scratch = AllocSiftTempMemory(w, h, o.octaves, false);
    for (int i = 0; i < o.warmup; i++)
        ExtractSift(data, img, o.octaves, 1.0, o.thresh, 0.0f, false, scratch);
    std::vector<double> samples;
    for (int i = 0; i < o.runs; i++) {
        double start = now_ms();
        ExtractSift(data, img, o.octaves, 1.0, o.thresh, 0.0f, false, scratch);
        cudaDeviceSynchronize();
        samples.push_back(now_ms() - start);
    }
    char extra[256], name[64];
    snprintf(extra, sizeof extra, ", \"keypoints\": %d, \"note\": \"threshold %.2f, %d octaves\"",
             data.numPts, o.thresh, o.octaves);
    snprintf(name, sizeof name, "%s", o.name ? o.name : "sift");
    print_row("sift", name, samples, extra);
    FreeSiftTempMemory(scratch);
    FreeSiftData(data);
    return 0;
}

/* xorshift32, so that the inputs are the same from run to run. */
static unsigned next_random(unsigned &s)
{
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

static float uniform(unsigned &s) { return (float)(next_random(s) >> 8) / 16777216.0f; }

static void apply(const double H[9], double x, double y, double &u, double &v)
{
    double d = H[6] * x + H[7] * y + H[8];
    u = (H[0] * x + H[1] * y + H[2]) / d;
    v = (H[3] * x + H[4] * y + H[5]) / d;
}

static int run_ransac(const Options &o)
{
    const double truth[9] = {0.95, 0.08, 25.0, -0.06, 1.02, 12.0, 2e-5, -1e-5, 1.0};
    const int n = o.ransac;
    InitCuda(0);
    SiftData data;
    InitSiftData(data, n, true, true);
    unsigned seed = 12345;
    for (int i = 0; i < n; i++) {
        SiftPoint &p = data.h_data[i];
        memset(&p, 0, sizeof p);
        p.xpos = 1920.0f * uniform(seed);
        p.ypos = 1080.0f * uniform(seed);
        double u, v;
        apply(truth, p.xpos, p.ypos, u, v);
        if (uniform(seed) < o.outliers) {
            u = 1920.0f * uniform(seed);
            v = 1080.0f * uniform(seed);
        } else {
            u += 0.6 * (uniform(seed) - 0.5);
            v += 0.6 * (uniform(seed) - 0.5);
        }
        p.match_xpos = (float)u;
        p.match_ypos = (float)v;
        p.score = 1.0f;
        p.ambiguity = 0.5f;
    }
    data.numPts = n;
    cudaMemcpy(data.d_data, data.h_data, sizeof(SiftPoint) * n, cudaMemcpyHostToDevice);
    float H[9];
    int inliers = 0;
    for (int i = 0; i < o.warmup; i++)
        FindHomography(data, H, &inliers, o.loops, 0.0f, 1.0f, 1.0f);
    std::vector<double> samples;
    for (int i = 0; i < o.runs; i++) {
        double start = now_ms();
        FindHomography(data, H, &inliers, o.loops, 0.0f, 1.0f, 1.0f);
        samples.push_back(now_ms() - start);
    }
    double found[9] = {H[0], H[1], H[2], H[3], H[4], H[5], H[6], H[7], 1.0};
    double worst = 0.0;
    const double corners[4][2] = {{0, 0}, {1919, 0}, {0, 1079}, {1919, 1079}};
    for (auto &c : corners) {
        double u0, v0, u1, v1;
        apply(truth, c[0], c[1], u0, v0);
        apply(found, c[0], c[1], u1, v1);
        worst = std::max(worst, std::hypot(u1 - u0, v1 - v0));
    }
    char extra[256], name[64];
    snprintf(extra, sizeof extra,
             ", \"inliers\": %d, \"corner_error_px\": %.3f, \"note\": \"%d hypotheses, no refinement\"",
             inliers, worst, o.loops);
    snprintf(name, sizeof name, "homography-%dk-%d%%", n / 1000, (int)lround(o.outliers * 100));
    print_row("ransac", name, samples, extra);
    FreeSiftData(data);
    return 0;
}

/* mirror() for any integer, negative ones included (the warped frame
 * samples outside the first tile). */
static int mirror_any(int i, int n)
{
    int period = 2 * n;
    i %= period;
    if (i < 0)
        i += period;
    return i < n ? i : period - 1 - i;
}

/* The true homography of the chain's frame 2 against frame 1
 * (bench/bench_sift_chain.c's chain_truth). */
static void chain_truth(int w, int h, double H[9])
{
    const double c = 0.9 * cos(0.1), s = 0.9 * sin(0.1);
    const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
    const double m[9] = {c, -s, cx + 12.0 - c * cx + s * cy,
                         s, c,  cy - 8.0 - s * cx - c * cy,
                         0.0, 0.0, 1.0};
    memcpy(H, m, sizeof m);
}

/* The lattice texture parvis-bench adds to the tiling (a tenth, on an
 * 8 px lattice; bench/bench_sift_chain.c's scene()), so the frames have no
 * repeats for the ratio test to drop. */
static double lattice(int ix, int iy)
{
    unsigned h = ((unsigned)ix * 0x8da6b343u) ^ ((unsigned)iy * 0xd8163841u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(h & 255u);
}

/* Frame 1 (warped false) or frame 2, as floats of 8-bit values. */
static void chain_frame(const std::vector<unsigned char> &src, int sw, int sh, int w, int h,
                        bool warped, std::vector<float> &out)
{
    double H[9];
    chain_truth(w, h, H);
    const double det = H[0] * H[4] - H[1] * H[3];
    auto at = [&](int x, int y) {
        return (double)src[(size_t)mirror_any(y, sh) * sw + mirror_any(x, sw)];
    };
    auto bilinear = [](auto &&f, double x, double y) {
        const int x0 = (int)floor(x), y0 = (int)floor(y);
        const double fx = x - x0, fy = y - y0;
        return (f(x0, y0) * (1 - fx) + f(x0 + 1, y0) * fx) * (1 - fy) +
               (f(x0, y0 + 1) * (1 - fx) + f(x0 + 1, y0 + 1) * fx) * fy;
    };
    auto scene = [&](double x, double y) {
        return (1.0 - 0.1) * bilinear(at, x, y) + 0.1 * bilinear(lattice, x / 8.0, y / 8.0);
    };
    out.resize((size_t)w * h);
    for (int v = 0; v < h; v++)
        for (int u = 0; u < w; u++) {
            double value;
            if (warped) {
                const double px = u - H[2], py = v - H[5];
                value = scene((H[4] * px - H[1] * py) / det, (-H[3] * px + H[0] * py) / det);
            } else {
                value = scene(u, v);
            }
            out[(size_t)v * w + u] = (float)(unsigned char)(value + 0.5 > 255.0 ? 255.0 : value + 0.5);
        }
}

static int run_chain(const Options &o)
{
    std::vector<unsigned char> src;
    int sw = 0, sh = 0;
    if (!read_pgm(o.image, src, sw, sh)) {
        fprintf(stderr, "cudasift_peer: cannot read %s as an 8-bit PGM\n", o.image);
        return 1;
    }
    const int w = o.width ? o.width : sw, h = o.height ? o.height : sh;
    const int loops = o.loops_given ? o.loops : 10000;
    std::vector<float> frame1, frame2;
    chain_frame(src, sw, sh, w, h, false, frame1);
    chain_frame(src, sw, sh, w, h, true, frame2);

    InitCuda(0);
    CudaImage img1, img2;
    img1.Allocate(w, h, iAlignUp(w, 128), false, NULL, frame1.data());
    img2.Allocate(w, h, iAlignUp(w, 128), false, NULL, frame2.data());
    SiftData data1, data2;
    InitSiftData(data1, 32768, true, true);
    InitSiftData(data2, 32768, true, true);
    float *scratch = AllocSiftTempMemory(w, h, o.octaves, false);
    float H[9];
    int inliers = 0;
    auto chain = [&]() {
        img1.Download(); /* CudaSift's name for the copy to the device */
        img2.Download();
        ExtractSift(data1, img1, o.octaves, 1.0, o.thresh, 0.0f, false, scratch);
        ExtractSift(data2, img2, o.octaves, 1.0, o.thresh, 0.0f, false, scratch);
        MatchSiftData(data1, data2);
        FindHomography(data1, H, &inliers, loops, 0.00f, 0.80f, 5.0f);
        cudaDeviceSynchronize();
    };
    for (int i = 0; i < o.warmup; i++)
        chain();
    std::vector<double> samples;
    for (int i = 0; i < o.runs; i++) {
        double start = now_ms();
        chain();
        samples.push_back(now_ms() - start);
    }
    double truth[9], found[9];
    chain_truth(w, h, truth);
    const double scale = fabs(H[8]) > 1e-12 ? H[8] : 1.0;
    for (int i = 0; i < 9; i++)
        found[i] = H[i] / scale;
    double worst = 0.0;
    const double corners[4][2] = {{0, 0}, {(double)w - 1, 0}, {0, (double)h - 1},
                                  {(double)w - 1, (double)h - 1}};
    for (auto &c : corners) {
        double u0, v0, u1, v1;
        apply(truth, c[0], c[1], u0, v0);
        apply(found, c[0], c[1], u1, v1);
        worst = std::max(worst, std::hypot(u1 - u0, v1 - v0));
    }
    char extra[320], name[64];
    snprintf(extra, sizeof extra,
             ", \"keypoints\": %d, \"keypoints2\": %d, \"inliers\": %d, "
             "\"corner_error_px\": %.3f, \"note\": \"upload + ExtractSift x2 + MatchSiftData + "
             "FindHomography %d loops; threshold %.2f, %d octaves\"",
             data1.numPts, data2.numPts, inliers, worst, loops, o.thresh, o.octaves);
    snprintf(name, sizeof name, "%s", o.name ? o.name : "sift-chain");
    print_row("sift", name, samples, extra);
    FreeSiftTempMemory(scratch);
    FreeSiftData(data1);
    FreeSiftData(data2);
    return 0;
}

int main(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!strcmp(a, "--chain")) {
            o.chain = true;
            continue;
        }
        bool used = true;
        if (!strcmp(a, "--image") && v) o.image = v;
        else if (!strcmp(a, "--case") && v) o.name = v;
        else if (!strcmp(a, "--tile") && v) used = sscanf(v, "%dx%d", &o.width, &o.height) == 2;
        else if (!strcmp(a, "--thresh") && v) o.thresh = (float)atof(v);
        else if (!strcmp(a, "--octaves") && v) o.octaves = atoi(v);
        else if (!strcmp(a, "--runs") && v) o.runs = atoi(v);
        else if (!strcmp(a, "--warmup") && v) o.warmup = atoi(v);
        else if (!strcmp(a, "--ransac") && v) o.ransac = atoi(v);
        else if (!strcmp(a, "--outliers") && v) o.outliers = (float)atof(v);
        else if (!strcmp(a, "--loops") && v) { o.loops = atoi(v); o.loops_given = true; }
        else used = false;
        if (!used) {
            fprintf(stderr, "usage: cudasift_peer --image PGM --tile WxH [--case NAME] [--thresh T] "
                            "[--octaves N] [--runs N] [--warmup N]\n"
                            "       cudasift_peer --ransac N [--outliers F] [--loops N] [--runs N]\n"
                            "       cudasift_peer --chain --image PGM --tile WxH [--case NAME] "
                            "[--loops N] [--runs N] [--warmup N]\n");
            return 2;
        }
        i++;
    }
    if (o.runs < 1 || o.warmup < 0)
        return 2;
    if (o.ransac > 0)
        return run_ransac(o);
    if (!o.image)
        return 2;
    return o.chain ? run_chain(o) : run_sift(o);
}
