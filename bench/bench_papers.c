/* --paper NAME: one paper's cases run at the paper's sizes and parameters,
 * printed beside the figures the paper publishes.
 *
 * The published figures below are typed from the paper texts in the
 * project's papers directory, each with the table or figure (or section)
 * it comes from.  Only figures stated in the texts are here; where a paper
 * shows a number only in a plot, it is left out.  Paper GPU figures are
 * set beside our OpenCL end-to-end time, paper CPU figures beside our CPU
 * backend's time. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum paper_side { PAPER_GPU, PAPER_CPU } paper_side;

typedef struct paper_figure {
    const char *paper;     /* --paper name */
    const char *source;    /* "Table 1", "Fig. 8", "Sec. 6" */
    const char *our_case;  /* the bench case it is set beside */
    const char *setting;   /* the paper's case: size, parameters, implementation */
    const char *device;
    paper_side side;
    double ms;
} paper_figure;

#define GPU PAPER_GPU
#define CPU PAPER_CPU

static const paper_figure figures[] = {
    /* sad-stereo-opencl-streaming: Venus, 64 disparities, 5x5, work-group 512 (Sec. VII). */
    {"sad", "Fig. 8", "venus-paper", "Venus 434x383 d64 5x5, global memory", "GeForce 940M", GPU, 18.03},
    {"sad", "Fig. 8", "venus-paper", "Venus 434x383 d64 5x5, centralized local", "GeForce 940M", GPU, 18.01},
    {"sad", "Fig. 8", "venus-paper", "Venus 434x383 d64 5x5, distributed local", "GeForce 940M", GPU, 4.88},

    /* belief-propagation-stereo-autotuning: 5 levels, 10 iterations, lambda 0.07,
     * data_max 15, disc_max 1.7, sigma 1.0. */
    {"bp", "Table 1", "bp-paper-tsukuba", "Tsukuba 384x288 d0..14, initial CUDA", "GTX 285", GPU, 47.0},
    {"bp", "Table 1", "bp-paper-tsukuba", "Tsukuba 384x288 d0..14, registers", "GTX 285", GPU, 24.3},
    {"bp", "Table 1", "bp-paper-tsukuba", "Tsukuba 384x288 d0..14, shared memory", "GTX 285", GPU, 25.4},
    {"bp", "Sec. 6", "bp-paper-cones-quarter", "Cones 450x375 d0..64, initial CUDA", "GTX 285", GPU, 420.0},
    {"bp", "Sec. 6", "bp-paper-cones-quarter", "Cones 450x375 d0..64, registers", "GTX 285", GPU, 300.0},
    {"bp", "Table 2", "bp-paper-cones-quarter", "Cones 450x375 d0..64, hybrid best", "GTX 285", GPU, 238.0},
    {"bp", "Table 2", "bp-paper-cones-quarter", "Cones 450x375 d0..64, hybrid best", "Tesla C870", GPU, 840.2},
    {"bp", "Table 2", "bp-paper-cones-quarter", "Cones 450x375 d0..64, hybrid best", "GTX 470 (L1)", GPU, 231.2},
    {"bp", "Table 2", "bp-paper-cones-quarter", "Cones 450x375 d0..64, hybrid best", "GTX 470 (shared)", GPU, 189.6},
    {"bp", "Table 3", "bp-paper-cones-quarter", "Cones 450x375 d0..64, auto-tuned", "GTX 285", GPU, 238.3},
    {"bp", "Table 3", "bp-paper-cones-quarter", "Cones 450x375 d0..64, auto-tuned", "Tesla C870", GPU, 797.7},
    {"bp", "Table 3", "bp-paper-cones-quarter", "Cones 450x375 d0..64, auto-tuned", "GTX 470 (L1)", GPU, 227.6},
    {"bp", "Table 3", "bp-paper-cones-quarter", "Cones 450x375 d0..64, auto-tuned", "GTX 470 (shared)", GPU, 188.0},
    {"bp", "Table 4", "bp-paper-cones-half", "Cones 900x750 d0..128, 3 partitions", "GTX 285", GPU, 3120.0},
    {"bp", "Table 4", "bp-paper-cones-half", "Cones 900x750 d0..128, 3 partitions", "Tesla C870", GPU, 8260.0},
    {"bp", "Table 4", "bp-paper-cones-half", "Cones 900x750 d0..128, 3 partitions", "GTX 470 (L1)", GPU, 1980.0},
    {"bp", "Table 4", "bp-paper-cones-half", "Cones 900x750 d0..128, 3 partitions", "GTX 470 (shared)", GPU, 1940.0},
    {"bp", "Table 4", "bp-paper-cones-full", "Cones 1800x1500 d0..255, 25 partitions", "GTX 285", GPU, 31500.0},
    {"bp", "Table 4", "bp-paper-cones-full", "Cones 1800x1500 d0..255, 25 partitions", "Tesla C870", GPU, 74900.0},
    {"bp", "Table 4", "bp-paper-cones-full", "Cones 1800x1500 d0..255, 25 partitions", "GTX 470 (L1)", GPU, 18600.0},
    {"bp", "Table 4", "bp-paper-cones-full", "Cones 1800x1500 d0..255, 25 partitions", "GTX 470 (shared)", GPU, 18500.0},

    /* sift-gpu-realtime: the text states two of its plotted figures. */
    {"sift", "Fig. 12", "sift-paper-720p", "1280x720 SIFT (PSIFT), \"nearly 2.5 ms\"", "NVIDIA GPU (Tesla C2075 in phase 1)", GPU, 2.5},
    {"sift", "Fig. 8", "sift-paper-8k", "8K scale space + extrema only (PSSED), \"less than 16 ms\"", "Tesla C2075", GPU, 16.0},

    /* aooct-registration-phase-correlation-ncc: one target volume registered
     * against a pre-computed reference, mean of 10 runs (seconds in the text). */
    {"oct", "Table 9.1", "oct 64^3", "64x64x64 registration", "Titan X (CUDA)", GPU, 40.0},
    {"oct", "Table 9.1", "oct 64^3", "64x64x64 registration", "i7-5930K (MATLAB)", CPU, 730.0},
    {"oct", "Table 9.1", "oct 128^3", "128x128x128 registration", "Titan X (CUDA)", GPU, 170.0},
    {"oct", "Table 9.1", "oct 128^3", "128x128x128 registration", "i7-5930K (MATLAB)", CPU, 3250.0},
    {"oct", "Table 9.1", "oct 256^3", "256x256x256 registration", "Titan X (CUDA)", GPU, 800.0},
    {"oct", "Table 9.1", "oct 256^3", "256x256x256 registration", "i7-5930K (MATLAB)", CPU, 21630.0},
    {"oct", "Table 9.1", "oct 512x256x256", "512x256x256 registration", "Titan X (CUDA)", GPU, 1460.0},
    {"oct", "Table 9.1", "oct 512x256x256", "512x256x256 registration", "i7-5930K (MATLAB)", CPU, 43220.0},
    {"oct", "Table 9.1", "oct 256x512x256", "256x512x256 registration", "Titan X (CUDA)", GPU, 1540.0},
    {"oct", "Table 9.1", "oct 256x512x256", "256x512x256 registration", "i7-5930K (MATLAB)", CPU, 43890.0},
    {"oct", "Table 9.1", "oct 256x256x512", "256x256x512 registration", "Titan X (CUDA)", GPU, 1600.0},
    {"oct", "Table 9.1", "oct 256x256x512", "256x256x512 registration", "i7-5930K (MATLAB)", CPU, 43650.0},
    {"oct", "Table 9.1", "oct 512^3", "512x512x512 registration", "Titan X (CUDA)", GPU, 5930.0},
    {"oct", "Table 9.1", "oct 512^3", "512x512x512 registration", "i7-5930K (MATLAB)", CPU, 199300.0},

    /* motion-estimation-3d-gpu: raw runtimes, cubes of the given edge. */
#define FLOW_C1060(edge, cpu, shared, plain)                                                     \
    {"flow", "Table 2", "flow3d-" #edge, #edge "^3", "C1060 host CPU", CPU, cpu},                \
    {"flow", "Table 2", "flow3d-" #edge, #edge "^3, shared memory", "Tesla C1060", GPU, shared}, \
    {"flow", "Table 2", "flow3d-" #edge, #edge "^3, no shared memory", "Tesla C1060", GPU, plain}
#define FLOW_GTX480(edge, cpu, shared, plain, no_l1)                                             \
    {"flow", "Table 3", "flow3d-" #edge, #edge "^3", "GTX480 host CPU", CPU, cpu},               \
    {"flow", "Table 3", "flow3d-" #edge, #edge "^3, shared memory", "GTX480", GPU, shared},      \
    {"flow", "Table 3", "flow3d-" #edge, #edge "^3, no shared memory", "GTX480", GPU, plain},    \
    {"flow", "Table 3", "flow3d-" #edge, #edge "^3, L1 off", "GTX480", GPU, no_l1}
    FLOW_C1060(50, 1272, 86, 96),        FLOW_C1060(75, 4457, 245, 257),
    FLOW_C1060(100, 11362, 355, 443),    FLOW_C1060(125, 21112, 531, 771),
    FLOW_C1060(150, 45101, 895, 1123),   FLOW_C1060(175, 62310, 1147, 1594),
    FLOW_C1060(200, 96703, 3036, 2856),  FLOW_C1060(225, 134668, 3473, 3834),
    FLOW_C1060(250, 176238, 4261, 6016),
    FLOW_GTX480(50, 671, 49, 26, 49),        FLOW_GTX480(75, 2379, 155, 83, 155),
    FLOW_GTX480(100, 5788, 272, 150, 265),   FLOW_GTX480(125, 11338, 440, 240, 435),
    FLOW_GTX480(150, 23714, 677, 373, 671),  FLOW_GTX480(175, 31369, 955, 554, 942),
    FLOW_GTX480(200, 47914, 2037, 1101, 1999), FLOW_GTX480(225, 66870, 2357, 1275, 2312),
    FLOW_GTX480(250, 91610, 2864, 1564, 2823),
#undef FLOW_C1060
#undef FLOW_GTX480
};

#undef GPU
#undef CPU

/* --------------------------------------------------------- our cases */

typedef enum paper_kind { KIND_SAD, KIND_BP, KIND_SIFT, KIND_OCT, KIND_FLOW } paper_kind;

typedef struct paper_case {
    const char *paper;
    const char *name;
    paper_kind kind;
    int size[3];           /* SIFT width, height; octreg volume; flow edge */
    /* BP: set, upsampling, ground-truth frame, range, partitions */
    const char *set;
    int upsample;
    float gt_scale;
    int border;
    int ndisp;
    int tiles_x, tiles_y;
} paper_case;

static const paper_case paper_cases[] = {
    {"sad", "venus-paper", KIND_SAD, {0, 0, 0}, "venus", 1, 8.0f, 10, 64, 0, 0},
    {"bp", "bp-paper-tsukuba", KIND_BP, {0, 0, 0}, "tsukuba", 1, 16.0f, 18, 15, 0, 0},
    {"bp", "bp-paper-cones-quarter", KIND_BP, {0, 0, 0}, "cones-quarter", 1, 4.0f, 10, 65, 0, 0},
    {"bp", "bp-paper-cones-half", KIND_BP, {0, 0, 0}, "cones-quarter", 2, 2.0f, 20, 129, 1, 3},
    {"bp", "bp-paper-cones-full", KIND_BP, {0, 0, 0}, "cones-quarter", 4, 1.0f, 40, 256, 5, 5},
    {"sift", "sift-paper-720p", KIND_SIFT, {1280, 720, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"sift", "sift-paper-8k", KIND_SIFT, {7680, 4320, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 64^3", KIND_OCT, {64, 64, 64}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 128^3", KIND_OCT, {128, 128, 128}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 256^3", KIND_OCT, {256, 256, 256}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 512x256x256", KIND_OCT, {512, 256, 256}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 256x512x256", KIND_OCT, {256, 512, 256}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 256x256x512", KIND_OCT, {256, 256, 512}, NULL, 0, 0, 0, 0, 0, 0},
    {"oct", "oct 512^3", KIND_OCT, {512, 512, 512}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-50", KIND_FLOW, {50, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-75", KIND_FLOW, {75, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-100", KIND_FLOW, {100, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-125", KIND_FLOW, {125, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-150", KIND_FLOW, {150, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-175", KIND_FLOW, {175, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-200", KIND_FLOW, {200, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-225", KIND_FLOW, {225, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
    {"flow", "flow3d-250", KIND_FLOW, {250, 0, 0}, NULL, 0, 0, 0, 0, 0, 0},
};

static const char *const paper_titles[][2] = {
    {"sad", "sad-stereo-opencl-streaming (SAD stereo, OpenCL local-memory streaming)"},
    {"bp", "belief-propagation-stereo-autotuning (hierarchical BP, CUDA, auto-tuning)"},
    {"sift", "sift-gpu-realtime (SIFT on GPUs for high-resolution images)"},
    {"oct", "aooct-registration-phase-correlation-ncc (AO-OCT volume registration)"},
    {"flow", "motion-estimation-3d-gpu (3D motion estimation on GPUs)"},
};

#define PAPER_COUNT (sizeof paper_titles / sizeof paper_titles[0])

int bench_paper_known(const char *name)
{
    for (size_t i = 0; i < PAPER_COUNT; i++)
        if (strcmp(paper_titles[i][0], name) == 0)
            return 1;
    return 0;
}

const char *bench_paper_names(void)
{
    return "sad, bp, sift, oct, flow";
}

static const char *paper_title(const char *name)
{
    for (size_t i = 0; i < PAPER_COUNT; i++)
        if (strcmp(paper_titles[i][0], name) == 0)
            return paper_titles[i][1];
    return name;
}

/* --------------------------------------------------------- running */

static const char *paper_op(paper_kind kind)
{
    static const char *const ops[] = {"sad", "bp", "sift", "octreg", "flow"};
    return ops[kind];
}

/* Rough host bytes a case needs (inputs, outputs and the backend's
 * working set), to skip what this machine cannot hold. */
static double host_bytes_needed(const paper_case *c)
{
    switch (c->kind) {
    case KIND_BP: {
        /* The bundled quarter-size Cones is 450x375. */
        int width = 450 * c->upsample, height = 375 * c->upsample;
        int tile_w = c->tiles_x ? width / c->tiles_x + 40 : width;
        int tile_h = c->tiles_y ? height / c->tiles_y + 40 : height;
        return (double)pv_bp_memory_estimate(tile_w, tile_h, c->ndisp, 5) +
               16.0 * width * height;
    }
    case KIND_SIFT: return 64.0 * c->size[0] * c->size[1];
    case KIND_OCT: return 48.0 * c->size[0] * c->size[1] * c->size[2];
    case KIND_FLOW: return 160.0 * c->size[0] * c->size[0] * c->size[0];
    default: return 0.0;
    }
}

static int fits_machine(const paper_case *c)
{
    double physical = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double need = host_bytes_needed(c);
    if (physical <= 0.0 || need <= 0.5 * physical)
        return 1;
    printf("%s %s: skipped, needs about %.1f GiB of memory and this machine has %.1f GiB\n",
           paper_op(c->kind), c->name, need / 1073741824.0, physical / 1073741824.0);
    return 0;
}

/* The BP paper's parameters (its Sec. 3): pv_bp_params_default holds them. */
static void bp_spec(const paper_case *c, bench_bp_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->name = c->name;
    spec->set = c->set;
    spec->upsample = c->upsample;
    spec->gt_scale = c->gt_scale;
    spec->border = c->border;
    pv_bp_params_default(&spec->params);
    spec->params.ndisp = c->ndisp;
    spec->params.tile_padding = 20;
    if (c->tiles_x > 0) {
        int width = 450 * c->upsample, height = 375 * c->upsample;
        spec->params.tile_width = (width + c->tiles_x - 1) / c->tiles_x;
        spec->params.tile_height = (height + c->tiles_y - 1) / c->tiles_y;
    }
    spec->tuned = 1;
}

static int run_paper_case(const bench_config *config, const bench_contexts *contexts,
                          const paper_case *c, bench_rows *rows)
{
    switch (c->kind) {
    case KIND_SAD: {
        bench_sad_spec spec = {c->name, c->set, 0, 0, c->ndisp, 5};
        return bench_sad_case(config, contexts, &spec, rows);
    }
    case KIND_BP: {
        bench_bp_spec spec;
        bp_spec(c, &spec);
        return bench_bp_case(config, contexts, &spec, rows);
    }
    case KIND_SIFT:
        return bench_sift_case(config, contexts, c->name, c->size[0], c->size[1], rows);
    case KIND_OCT:
        return bench_octreg_case(config, contexts, c->size, rows);
    case KIND_FLOW:
        return bench_flow_case(config, contexts, c->size[0], rows);
    }
    return cli_fail("unknown paper case kind");
}

/* --------------------------------------------------------- comparison */

static const bench_result *find_row(const bench_result *results, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (strcmp(results[i].name, name) == 0)
            return &results[i];
    return NULL;
}

static void print_figure(const paper_figure *f, const bench_result *ours)
{
    printf("%-9s %-24s %-46s %-22s %10.2f", f->source, f->our_case, f->setting, f->device, f->ms);
    if (!ours) {
        printf("  (not run)\n");
        return;
    }
    double mine = f->side == PAPER_CPU ? ours->cpu_ms : ours->have_opencl ? ours->cl_total_ms : -1;
    if (mine <= 0) {
        printf("  (no OpenCL device)\n");
        return;
    }
    printf(" %10.2f %-6s %8.2fx\n", mine, f->side == PAPER_CPU ? "cpu" : "cl e2e", f->ms / mine);
}

/* The paper's figures beside ours; nothing when no case ran (the counting
 * pass, or a --case filter that kept none). */
static void print_comparison(const char *paper, const bench_result *results, int count)
{
    if (count == 0)
        return;
    printf("\n%s\npublished figures (typed from the paper) beside ours on this machine; "
           "paper GPU figures against our OpenCL end to end, paper CPU figures against our "
           "CPU backend; x = paper ms / ours\n",
           paper_title(paper));
    printf("%-9s %-24s %-46s %-22s %10s %10s %-6s %9s\n", "source", "our case", "paper's case",
           "paper's device", "paper ms", "ours ms", "", "x");
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (strcmp(figures[i].paper, paper) == 0)
            print_figure(&figures[i], find_row(results, count, figures[i].our_case));
    fflush(stdout);
}

int bench_paper_run(const bench_config *config, const bench_contexts *contexts,
                    bench_result *results, int max, int *count)
{
    bench_rows rows = {results, max, count};
    int first = *count;
    for (size_t i = 0; i < sizeof paper_cases / sizeof paper_cases[0]; i++) {
        const paper_case *c = &paper_cases[i];
        if (strcmp(c->paper, config->paper) != 0 ||
            !bench_wants(config, paper_op(c->kind), c->name, 0) || !fits_machine(c))
            continue;
        if (run_paper_case(config, contexts, c, &rows))
            return 1;
    }
    print_comparison(config->paper, results + first, *count - first);
    return 0;
}
