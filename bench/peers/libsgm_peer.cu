/* libsgm_peer: times libSGM (a CUDA semi-global matching library,
 * github.com/fixstars/libSGM) on the same stereo pair as parvis-bench's
 * sgm cases, as a peer.  Not part of parvis: it is built only where nvcc
 * and a libSGM source tree exist, by bench/peers/build-libsgm.sh.
 *
 *   libsgm_peer --left L.pgm --right R.pgm [--width W --height H]
 *               [--ndisp N] [--paths 4|8] [--gt GT.pfm] [--case NAME]
 *               [--runs N] [--warmup N]
 *   libsgm_peer --synthetic --width W --height H [--ndisp N] ...
 *
 * The 8-bit PGMs are mirror-tiled to W x H when a size is given, else used
 * as they are.  --synthetic makes parvis-bench's synthetic pair of that
 * size instead (bench/bench_stereo.c's bench_synthetic_stereo: the same
 * random dots and the same three bands of known disparity), so that the
 * bench's sgm-WxH rows and this peer time the same images.
 * Settings are libSGM's defaults (symmetric 9x7 census, P1 10, P2 120,
 * uniqueness 0.95, LR max diff 1) with sub-pixel output, which is what
 * parvis's pv_sgm_params_default sets (libSGM always applies its 3x3
 * median; parvis's bench rows name whether they do).
 *
 * Two timings, each the median of --runs after --warmup untimed runs:
 *   d2d: images already on the device, disparity left on the device
 *        (EXECUTE_INOUT_CUDA2CUDA), CUDA events around execute();
 *   h2h: host images in, host disparity out (EXECUTE_INOUT_HOST2HOST),
 *        wall clock around execute().
 * With --gt (a PFM, INFINITY = unknown) the share of known pixels off by
 * more than 2 px is reported, invalid output counted as bad, a 10-pixel
 * border left out (docs/sgm.md's figure).
 *
 * Prints one JSON line. */
#include "libsgm.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Options {
    bool synthetic = false;
    const char *left = nullptr, *right = nullptr, *gt = nullptr;
    const char *name = "pair";
    int width = 0, height = 0;
    int ndisp = 128, paths = 8;
    int runs = 30, warmup = 5;
};

struct Grey {
    int width = 0, height = 0;
    std::vector<uint8_t> pixels;
};

static void die(const char *what)
{
    std::fprintf(stderr, "libsgm_peer: %s\n", what);
    std::exit(2);
}

static void check_cuda(cudaError_t status, const char *what)
{
    if (status != cudaSuccess) {
        std::fprintf(stderr, "libsgm_peer: %s: %s\n", what, cudaGetErrorString(status));
        std::exit(2);
    }
}

/* Skips white space and '#' comments of a PNM header. */
static void skip_space(FILE *f)
{
    int c;
    while ((c = std::fgetc(f)) != EOF) {
        if (c == '#') {
            while ((c = std::fgetc(f)) != EOF && c != '\n') {
            }
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            std::ungetc(c, f);
            return;
        }
    }
}

static Grey read_pgm(const char *path)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die("cannot open an input PGM");
    char magic[3] = {0};
    int maxval = 0;
    Grey g;
    if (std::fread(magic, 1, 2, f) != 2 || std::strcmp(magic, "P5") != 0)
        die("input is not a binary PGM");
    skip_space(f);
    if (std::fscanf(f, "%d", &g.width) != 1)
        die("bad PGM width");
    skip_space(f);
    if (std::fscanf(f, "%d", &g.height) != 1)
        die("bad PGM height");
    skip_space(f);
    if (std::fscanf(f, "%d", &maxval) != 1 || maxval != 255)
        die("only 8-bit PGMs are read");
    std::fgetc(f);
    g.pixels.resize((size_t)g.width * g.height);
    if (std::fread(g.pixels.data(), 1, g.pixels.size(), f) != g.pixels.size())
        die("truncated PGM");
    std::fclose(f);
    return g;
}

/* A PFM's floats, top row first (PFM stores the bottom row first). */
static std::vector<float> read_pfm(const char *path, int width, int height)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die("cannot open the ground truth");
    char magic[3] = {0};
    int w = 0, h = 0;
    double scale = 0;
    if (std::fread(magic, 1, 2, f) != 2 || std::strcmp(magic, "Pf") != 0)
        die("ground truth is not a grey PFM");
    if (std::fscanf(f, "%d %d %lf", &w, &h, &scale) != 3 || w != width || h != height || scale >= 0)
        die("ground truth: size differs or not little-endian");
    std::fgetc(f);
    std::vector<float> rows((size_t)w * h), out((size_t)w * h);
    if (std::fread(rows.data(), sizeof(float), rows.size(), f) != rows.size())
        die("truncated PFM");
    std::fclose(f);
    for (int y = 0; y < h; y++)
        std::memcpy(&out[(size_t)y * w], &rows[(size_t)(h - 1 - y) * w], sizeof(float) * w);
    return out;
}

static int mirror(int i, int n)
{
    int period = 2 * n;
    i %= period;
    if (i < 0)
        i += period;
    return i < n ? i : period - 1 - i;
}

static Grey tile_to(const Grey &g, int width, int height)
{
    Grey t;
    t.width = width;
    t.height = height;
    t.pixels.resize((size_t)width * height);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
            t.pixels[(size_t)y * width + x] =
                g.pixels[(size_t)mirror(y, g.height) * g.width + mirror(x, g.width)];
    return t;
}

/* bench_synthetic_stereo's generator, step for step. */
static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

static int band_disparity(int x, int width, int ndisp)
{
    int band = 3 * x / width;
    return (ndisp - 1) * (band + 1) / 4 + 1;
}

static void synthetic_pair(int width, int height, int ndisp, Grey &left, Grey &right)
{
    left.width = right.width = width;
    left.height = right.height = height;
    left.pixels.resize((size_t)width * height);
    right.pixels.resize((size_t)width * height);
    uint32_t state = 12345u;
    for (size_t i = 0; i < left.pixels.size(); i++)
        left.pixels[i] = (uint8_t)(next_random(&state) >> 24);
    for (int y = 0; y < height; y++)
        for (int xr = 0; xr < width; xr++) {
            int d = band_disparity(xr, width, ndisp);
            int xl = xr + d < width ? xr + d : width - 1;
            right.pixels[(size_t)y * width + xr] = left.pixels[(size_t)y * width + xl];
        }
}

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

static Options parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--synthetic") {
            o.synthetic = true;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!v)
            die("an option lacks its value");
        if (a == "--left") o.left = v;
        else if (a == "--right") o.right = v;
        else if (a == "--gt") o.gt = v;
        else if (a == "--case") o.name = v;
        else if (a == "--width") o.width = std::atoi(v);
        else if (a == "--height") o.height = std::atoi(v);
        else if (a == "--ndisp") o.ndisp = std::atoi(v);
        else if (a == "--paths") o.paths = std::atoi(v);
        else if (a == "--runs") o.runs = std::atoi(v);
        else if (a == "--warmup") o.warmup = std::atoi(v);
        else die("unknown option");
        i++;
    }
    if (o.synthetic ? (o.width < 1 || o.height < 1) : (!o.left || !o.right))
        die("give --left and --right, or --synthetic with --width and --height");
    if (o.runs < 1 || o.warmup < 0 || (o.paths != 4 && o.paths != 8))
        die("bad --runs, --warmup or --paths");
    return o;
}

static sgm::StereoSGM::Parameters parameters(const Options &o)
{
    sgm::StereoSGM::Parameters p;
    p.subpixel = true;
    p.path_type = o.paths == 8 ? sgm::PathType::SCAN_8PATH : sgm::PathType::SCAN_4PATH;
    return p;
}

/* Share of known pixels off by more than 2 px, border 10, invalid = bad. */
static double bad2(const std::vector<uint16_t> &disp, int invalid, const std::vector<float> &gt,
                   int width, int height)
{
    long known = 0, bad = 0;
    for (int y = 10; y < height - 10; y++)
        for (int x = 10; x < width - 10; x++) {
            float truth = gt[(size_t)y * width + x];
            if (!std::isfinite(truth))
                continue;
            known++;
            int raw = (int16_t)disp[(size_t)y * width + x];
            if (raw == invalid || std::fabs(raw / 16.0f - truth) > 2.0f)
                bad++;
        }
    return known ? 100.0 * bad / known : 0.0;
}

int main(int argc, char **argv)
{
    Options o = parse(argc, argv);
    Grey left, right;
    if (o.synthetic) {
        synthetic_pair(o.width, o.height, o.ndisp, left, right);
    } else {
        left = read_pgm(o.left);
        right = read_pgm(o.right);
    }
    if (left.width != right.width || left.height != right.height)
        die("the two images differ in size");
    if (!o.synthetic && o.width > 0 && o.height > 0) {
        left = tile_to(left, o.width, o.height);
        right = tile_to(right, o.width, o.height);
    }
    const int w = left.width, h = left.height;
    const size_t n = (size_t)w * h;
    sgm::StereoSGM::Parameters p = parameters(o);

    /* Host to host. */
    std::vector<uint16_t> disp(n);
    sgm::StereoSGM h2h(w, h, o.ndisp, 8, 16, sgm::EXECUTE_INOUT_HOST2HOST, p);
    std::vector<double> h2h_ms;
    for (int r = 0; r < o.warmup + o.runs; r++) {
        double t0 = now_ms();
        h2h.execute(left.pixels.data(), right.pixels.data(), disp.data());
        check_cuda(cudaDeviceSynchronize(), "host to host");
        if (r >= o.warmup)
            h2h_ms.push_back(now_ms() - t0);
    }
    double quality = o.gt ? bad2(disp, h2h.get_invalid_disparity(), read_pfm(o.gt, w, h), w, h) : -1;

    /* Device to device. */
    void *d_left = nullptr, *d_right = nullptr, *d_disp = nullptr;
    check_cuda(cudaMalloc(&d_left, n), "cudaMalloc");
    check_cuda(cudaMalloc(&d_right, n), "cudaMalloc");
    check_cuda(cudaMalloc(&d_disp, n * sizeof(uint16_t)), "cudaMalloc");
    check_cuda(cudaMemcpy(d_left, left.pixels.data(), n, cudaMemcpyHostToDevice), "upload");
    check_cuda(cudaMemcpy(d_right, right.pixels.data(), n, cudaMemcpyHostToDevice), "upload");
    sgm::StereoSGM d2d(w, h, o.ndisp, 8, 16, sgm::EXECUTE_INOUT_CUDA2CUDA, p);
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "event");
    check_cuda(cudaEventCreate(&stop), "event");
    std::vector<double> d2d_ms;
    for (int r = 0; r < o.warmup + o.runs; r++) {
        check_cuda(cudaEventRecord(start), "event");
        d2d.execute(d_left, d_right, d_disp);
        check_cuda(cudaEventRecord(stop), "event");
        check_cuda(cudaEventSynchronize(stop), "device to device");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, start, stop), "event time");
        if (r >= o.warmup)
            d2d_ms.push_back(ms);
    }
    cudaDeviceProp prop;
    check_cuda(cudaGetDeviceProperties(&prop, 0), "device");
    std::printf("{\"peer\": \"libSGM\", \"case\": \"%s\", \"device\": \"%s\", \"width\": %d, "
                "\"height\": %d, \"ndisp\": %d, \"paths\": %d, \"d2d_ms\": %.4f, \"h2h_ms\": %.4f, "
                "\"h2h_fps\": %.1f, \"bad2_percent\": %.3f, \"runs\": %d}\n",
                o.name, prop.name, w, h, o.ndisp, o.paths, median(d2d_ms), median(h2h_ms),
                1000.0 / median(h2h_ms), quality, o.runs);
    cudaFree(d_left);
    cudaFree(d_right);
    cudaFree(d_disp);
    return 0;
}
