/* Internal: the backend dispatch table.  The front end (lib/) validates
 * arguments once and calls through this table; backends trust their input.
 * Each backend fills one table, one entry per operation. */
#ifndef PV_BACKEND_H
#define PV_BACKEND_H

#include "parvis.h"

/* register: phase correlation runs on a backend plan of fixed geometry.
 * The front end owns padding sizes, window weights and the sub-pixel
 * search (it builds the DFT tables in double), so both backends compute
 * on identical numbers. */
typedef struct pv_pc_geometry {
    int size[3];            /* input extent nx, ny, nz (nz = 1 for images) */
    int fft[3];             /* transform extent, >= size (zero padded) */
    int batch;              /* movers per pc_correlate call, >= 1 */
    int keep_spectra;       /* keep each mover's cross-power spectrum for pc_upsample */
    int transient;          /* one-shot plan: may use the context's scratch buffers */
    int centered;           /* subtract each input's mean before padding / windowing */
    const float *window[3]; /* per-axis weights (size[a] values each), or all NULL */
} pv_pc_geometry;

/* The correlation c = IDFT(R) with R = (M / |M|) conj(F / |F|) / n, where
 * reference bins of power |F|^2 <= floor count as empty (R = 0 there) and
 * n is the number of the full spectrum's non-empty reference bins, so two
 * identical inputs give c = 1 at 0. */
typedef struct pv_pc_peak {
    float value;            /* the largest c (first in memory order on ties) */
    int index[3];           /* its position in the transform grid */
    float neighbors[3][2];  /* c at index - 1 and index + 1 per axis (wrapped) */
} pv_pc_peak;

/* An upsampled-DFT window: count[a] points per axis; table[a] holds
 * count[a] rows of K_a interleaved complex weights, K = fft[0] / 2 + 1,
 * fft[1], fft[2].  values[(wz * count[1] + wy) * count[0] + wx] =
 * Re(sum_k Tz[wz][kz] Ty[wy][ky] Tx[wx][kx] R[kz][ky][kx]). */
typedef struct pv_dft_window {
    int count[3];
    const float *table[3];
} pv_dft_window;

/* normxcorr2 inputs, prepared by the front end: dense f32 template and
 * image (each centred on its mean and scaled to unit variance), the
 * transform extent (>= the map size), and the variance floors below which
 * an overlap counts as textureless. */
typedef struct pv_ncc_job {
    pv_image templ;
    pv_image image;
    int fft[2];
    int min_overlap;
    float templ_floor;
    float image_floor;
} pv_ncc_job;

/* stereo_bp: BP over a list of tiles, prepared by the front end.  Each
 * tile runs BP on its region (x, y, width, height of the full image, data
 * costs at full-image coordinates) and writes the disparities of its out_
 * rectangle (inside the region) to the output. */
typedef struct pv_bp_tile {
    int x, y, width, height;
    int out_x, out_y, out_width, out_height;
    int levels;             /* pyramid levels for this region */
} pv_bp_tile;

typedef struct pv_bp_job {
    int min_disp, ndisp, iterations;
    float lambda, data_max, disc_max;
    float inv_ndisp;        /* 1 / ndisp, so both backends normalise alike */
    const float *weights;   /* smoothing taps (2 * radius + 1), or NULL: none */
    int radius;
    const pv_bp_tile *tiles;
    int tile_count;
} pv_bp_job;

/* flow: a plan of fixed pyramid geometry (level 0 finest).  The front end
 * computes the level sizes, the Gaussian taps and the coefficients in
 * float, so both backends compute on identical numbers. */
typedef struct pv_flow_setup {
    int levels;
    int size[PV_FLOW_MAX_LEVELS][3]; /* nx, ny, nz per level */
    const float *weights;            /* 2 * radius + 1 taps of K_rho */
    int radius;
    float smooth;                    /* alpha / h^2 */
    float divergence;                /* beta / h^2 (0: plain CLG) */
    pv_gradient_scheme scheme;
} pv_flow_setup;

/* features (SIFT): the front end fixes the octave geometry and the
 * Gaussian taps, so both backends blur with identical weights.  Level l
 * (1 .. levels + 2) of an octave is its base level blurred by
 * level_weights + level_offset[l], radius level_radius[l]. */
typedef struct pv_sift_geometry {
    int width, height;                       /* input image */
    int octaves;                             /* >= 1 */
    int octave_width[PV_SIFT_MAX_OCTAVES];   /* first octave: input (x2 when upsampled) */
    int octave_height[PV_SIFT_MAX_OCTAVES];
    int base_radius;                         /* blur of the first base; 0: none */
    const float *base_weights;               /* 2 base_radius + 1 taps */
    int level_radius[PV_SIFT_MAX_LEVELS + 3];
    int level_offset[PV_SIFT_MAX_LEVELS + 3];
    int level_taps;                          /* total taps of all levels */
    const float *level_weights;
    pv_sift_params params;                   /* resolved (octaves filled in) */
} pv_sift_geometry;

/* A backend's detection result (malloc'ed by the backend, room for
 * `capacity` >= count entries each, capacity 0 meaning count): key =
 * ((((octave index * 16 + level) * 65536 + extremum y) * 65536 + extremum
 * x) * 4 + orientation index), unique per keypoint.  descriptors_u8 may
 * stay NULL (the front end derives it).  The spare arrays, with room for
 * spare_capacity keypoints each, are an earlier result's that a backend
 * may take over (moving them into the result and setting them to NULL)
 * instead of allocating; the front end frees what is left of them. */
typedef struct pv_sift_raw {
    int count;
    int capacity;
    pv_sift_keypoint *keypoints;
    uint64_t *keys;
    float *descriptors;                      /* 128 per keypoint */
    uint8_t *descriptors_u8;
    pv_sift_keypoint *spare_keypoints;
    float *spare_descriptors;
    uint8_t *spare_u8;
    int spare_capacity;
} pv_sift_raw;

/* The conventional u8 form of a descriptor value: min(512 v, 255),
 * truncated (VLFeat's and Lowe's); two selects, so that loops over it
 * vectorise. */
static inline uint8_t pv_sift_descriptor_u8(float v)
{
    float scaled = 512.0f * v;
    scaled = scaled < 255.0f ? scaled : 255.0f;
    return (uint8_t)(scaled > 0.0f ? scaled : 0.0f);
}

/* octreg: AO-OCT stripe-wise registration (lib/octreg.c).  Volumes have
 * nx = depth, ny = A-lines, nz = B-scans ("planes").  The front end fixes
 * the geometry and the tables, and runs the spike detection, prediction and
 * filtering on the small arrays the backends return. */
typedef struct pv_oct_geometry {
    int size[3];            /* depth, A-lines, planes of every volume */
    int fft[2];             /* padded depth and A-lines of each plane's transform */
    int coarse_depth;       /* y extent of the coarse transform (>= size[2]) */
    int stripe_width;       /* planes per coarse stripe */
    int sub_width;          /* planes per reference sub-volume (its y extent) */
    int sub_count;
    const int *sub_start;   /* first reference plane of each sub-volume */
    int coarse_batch;       /* stripes per coarse transform batch */
    int fine_batch;         /* planes per fine transform batch */
    const float *twiddle;   /* [p][ky] complex exp(-2 pi i ky p / coarse_depth),
                               p < stripe_width, ky < coarse_depth */
} pv_oct_geometry;

typedef struct pv_oct_plane_stats {
    float mean, energy;     /* mean, and sum of (v - mean)^2 */
    float lo, hi;
    int finite;             /* 0 when the plane holds NaN or Inf */
} pv_oct_plane_stats;

/* Reconstruction: reference plane j gathers entries plane_start[j] ..
 * plane_start[j + 1] - 1, each a target plane, its y weight and its sample
 * offsets (depth, A-line): weight * target_plane(d + offset[0], a + offset[1]),
 * bilinear, where the sample lies inside the plane. */
typedef struct pv_oct_placement {
    const int *plane_start;
    const int *plane;
    const float *weight;
    const float *offset;
    int entries;
} pv_oct_placement;

typedef struct pv_backend_ops {
    const char *name;

    /* Set up ctx->backend_state for device_index (-1: choose); fills
     * ctx->device_name.  NULL when the backend needs no state. */
    pv_status (*init)(pv_context *ctx, int device_index);
    void (*release)(pv_context *ctx);

    /* filter: weights has 2 * radius + 1 taps; dst is f32. */
    pv_status (*gaussian2d)(pv_context *ctx, const pv_image *src, pv_image *dst,
                            const float *weights, int radius);
    pv_status (*gaussian3d)(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                            const float *weights, int radius);
    pv_status (*gradient2d)(pv_context *ctx, const pv_image *src, pv_image *gx,
                            pv_image *gy, pv_gradient_scheme scheme);
    pv_status (*gradient3d)(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                            pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

    /* stereo */
    pv_status (*stereo_sad)(pv_context *ctx, const pv_image *left, const pv_image *right,
                            const pv_sad_params *params, pv_image *disparity);

    /* register: movers[] and reference are f32 volumes of geometry.size. */
    pv_status (*pc_create)(pv_context *ctx, const pv_pc_geometry *geometry, void **plan);
    void (*pc_destroy)(pv_context *ctx, void *plan);
    pv_status (*pc_reference)(pv_context *ctx, void *plan, const pv_volume *reference,
                              float mean, float floor);
    /* means[i]: subtracted from movers[i] when geometry.centered. */
    pv_status (*pc_correlate)(pv_context *ctx, void *plan, const pv_volume *movers,
                              const float *means, int count, pv_pc_peak *peaks);
    pv_status (*pc_upsample)(pv_context *ctx, void *plan, int mover,
                             const pv_dft_window *window, float *values);
    /* map: f32, (image + templ - 1) per axis. */
    pv_status (*normxcorr2)(pv_context *ctx, const pv_ncc_job *job, pv_image *map);

    /* features: image is u8 or f32 of the geometry's size; nearest fills,
     * for each query row, the index of the nearest train row and the
     * squared distances to the nearest and second nearest (INFINITY when
     * missing); ties go to the lower index. */
    pv_status (*sift_create)(pv_context *ctx, const pv_sift_geometry *geometry, void **plan);
    void (*sift_destroy)(pv_context *ctx, void *plan);
    pv_status (*sift_detect)(pv_context *ctx, void *plan, const pv_image *image, pv_sift_raw *raw);
    pv_status (*sift_nearest)(pv_context *ctx, const float *query, int query_count,
                              const float *train, int train_count, int *best, float *best_d2,
                              float *second_d2);

    /* flow: stages on plan-owned buffers, driven by lib/flow.c.  load:
     * upload both volumes and build the pyramids; begin_level: the flow of
     * `level` (zero at the coarsest, else up-sampled from level + 1);
     * jacobi: `count` iterations, and when change is not NULL the relative
     * change ||w_k - w_k-1|| / ||w_k|| of the last one; read: the level-0
     * flow. */
    pv_status (*flow_create)(pv_context *ctx, const pv_flow_setup *setup, void **plan);
    void (*flow_destroy)(pv_context *ctx, void *plan);
    pv_status (*flow_load)(pv_context *ctx, void *plan, const pv_volume *fixed,
                           const pv_volume *moving);
    pv_status (*flow_begin_level)(pv_context *ctx, void *plan, int level);
    pv_status (*flow_gradients)(pv_context *ctx, void *plan, int level);
    pv_status (*flow_resample)(pv_context *ctx, void *plan, int level);
    pv_status (*flow_tensor)(pv_context *ctx, void *plan, int level);
    pv_status (*flow_jacobi)(pv_context *ctx, void *plan, int level, int count, double *change);
    pv_status (*flow_read)(pv_context *ctx, void *plan, pv_flow_field *flow);
    pv_status (*flow_warp)(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                           pv_volume *warped);

    /* stereo_bp: left/right as the caller gave them; disparity f32. */
    pv_status (*stereo_bp)(pv_context *ctx, const pv_image *left, const pv_image *right,
                           const pv_bp_job *job, pv_image *disparity);
    /* octreg: load makes `volume` the plan's current volume and returns its
     * per-plane stats; reference turns the current volume into the unit-phase
     * spectra of the whole (floors[0]) and of each sub-volume (floors[1 + s]),
     * each plane less its mean; spectra transforms the current volume's planes
     * as a target; coarse correlates target stripes starting at start[i] with
     * the whole reference; fine correlates target plane k with sub-volume
     * sub[k]; place accumulates the current volume per the placement; read
     * writes the accumulated reconstruction (any output may be NULL). */
    pv_status (*oct_create)(pv_context *ctx, const pv_oct_geometry *geometry, void **plan);
    void (*oct_destroy)(pv_context *ctx, void *plan);
    pv_status (*oct_load)(pv_context *ctx, void *plan, const pv_volume *volume,
                          pv_oct_plane_stats *stats);
    pv_status (*oct_reference)(pv_context *ctx, void *plan, const float *floors);
    pv_status (*oct_spectra)(pv_context *ctx, void *plan);
    pv_status (*oct_coarse)(pv_context *ctx, void *plan, const int *start, int count,
                            pv_pc_peak *peaks);
    pv_status (*oct_fine)(pv_context *ctx, void *plan, const int *sub, pv_pc_peak *peaks);
    pv_status (*oct_place)(pv_context *ctx, void *plan, const pv_oct_placement *placement,
                           int reset);
    pv_status (*oct_read)(pv_context *ctx, void *plan, float gap, pv_volume *registered,
                          pv_image *enface, pv_image *slow);

    /* Device-to-device copy bandwidth (pv_context_copy_bandwidth): bytes
     * read plus written per second / 1e9, bytes > 0. */
    pv_status (*copy_bandwidth)(pv_context *ctx, size_t bytes, double *gb_per_s);
} pv_backend_ops;

extern const pv_backend_ops pv_cpu_backend;
#ifdef PV_HAVE_OPENCL
extern const pv_backend_ops pv_opencl_backend;
/* Device enumeration lives with the OpenCL runtime. */
pv_status pv_opencl_list_devices(pv_device_info *devices, int capacity, int *count);
#endif

#endif
