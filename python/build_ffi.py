"""Build the parvis._native extension with cffi in API mode.

The declarations below are compiled against the library's headers
(``#include <parvis.h>``), so any drift between them and the C library is a
build error, not a crash.  Where the library comes from is chosen by the
environment variable PARVIS_PYTHON_LIBRARY:

* ``system``: an installed libparvis, found through ``pkg-config parvis``
  (set PKG_CONFIG_PATH for a non-standard prefix); its directory is
  recorded as the extension's run path.
* ``bundled``: the C library is built from the source tree (build_clib.py)
  and shipped inside the package as ``parvis/_lib/libparvis.so.N``; the
  extension's run path is ``$ORIGIN/_lib``, so nothing needs installing
  and no LD_LIBRARY_PATH is needed.
* ``auto`` (the default): ``system`` when pkg-config finds parvis, else
  ``bundled``.
"""
from __future__ import annotations

import os
import pathlib
import shlex
import subprocess
import sys

from cffi import FFI

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_clib  # noqa: E402

#: Chooses the library the extension links: "auto", "system" or "bundled".
MODE_ENV = "PARVIS_PYTHON_LIBRARY"
#: The folder holding setup.py (and, in an sdist, _csource/).
PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent
#: Where the bundled build copies, builds and stages the C library.
CLIB_WORK = PACKAGE_ROOT / "build" / "parvis-clib"
#: The package's folder for the bundled shared library (the run path's target).
BUNDLED_LIB_DIR = "_lib"

CDEF = r"""
typedef enum pv_status {
    PV_OK = 0, PV_ERR_INVALID = -1, PV_ERR_NOMEM = -2, PV_ERR_IO = -3,
    PV_ERR_FORMAT = -4, PV_ERR_UNSUPPORTED = -5, PV_ERR_OPENCL = -6,
    PV_ERR_BUILD = -7, PV_ERR_NO_DEVICE = -8, PV_ERR_MISMATCH = -9,
    PV_ERR_DEVICE_MEMORY = -10, PV_ERR_CANCELLED = -11
} pv_status;
const char *pv_status_string(pv_status status);
const char *pv_last_error(void);
const char *pv_version(void);

typedef enum pv_pixel_type {
    PV_PIXEL_U8 = 1, PV_PIXEL_F32 = 2, PV_PIXEL_U16 = 3, PV_PIXEL_RGB8 = 4, PV_PIXEL_RGB16 = 5
} pv_pixel_type;
typedef struct pv_image {
    int width; int height; ptrdiff_t stride; pv_pixel_type type; void *data;
} pv_image;
typedef struct pv_volume {
    int nx, ny, nz; ptrdiff_t stride_y; ptrdiff_t stride_z; float *data;
} pv_volume;
void pv_image_free(pv_image *image);
void pv_volume_free(pv_volume *volume);

typedef enum pv_backend_kind {
    PV_BACKEND_AUTO = 0, PV_BACKEND_CPU = 1, PV_BACKEND_OPENCL = 2
} pv_backend_kind;
const char *pv_backend_name(pv_backend_kind kind);
#define PV_CONTEXT_CROSSCHECK ...
typedef struct pv_context_options {
    pv_backend_kind backend; int device_index; unsigned flags; int cpu_threads;
} pv_context_options;
typedef struct pv_context pv_context;
void pv_context_options_default(pv_context_options *options);
pv_status pv_context_create(pv_context **out, const pv_context_options *options);
void pv_context_destroy(pv_context *ctx);
pv_backend_kind pv_context_backend(const pv_context *ctx);
const char *pv_context_device_name(const pv_context *ctx);
const char *pv_context_selection_note(const pv_context *ctx);
const char *pv_context_last_error(const pv_context *ctx);
pv_status pv_context_set_crosscheck(pv_context *ctx, int enabled);

typedef int (*pv_progress_fn)(void *user, const char *op, double done, double total);
pv_status pv_context_set_progress(pv_context *ctx, pv_progress_fn fn, void *user);
extern "Python" int _parvis_progress(void *user, const char *op, double done, double total);
typedef struct pv_config_entry_info {
    const char *name; const char *kind; const char *default_value; const char *meaning;
    int is_set; char value[4096];
} pv_config_entry_info;
int pv_config_count(void);
pv_status pv_config_entry(int index, pv_config_entry_info *entry);
int pv_context_crosscheck(const pv_context *ctx);
int pv_context_cpu_threads(const pv_context *ctx);
typedef struct pv_timing {
    double kernel_ms; double total_ms; double upload_ms; double download_ms;
} pv_timing;
pv_status pv_context_last_timing(const pv_context *ctx, pv_timing *timing);
typedef enum pv_kernel_timing {
    PV_KERNEL_TIMING_RUNS = 0, PV_KERNEL_TIMING_EACH = 1
} pv_kernel_timing;
pv_status pv_context_set_kernel_timing(pv_context *ctx, pv_kernel_timing timing);
pv_kernel_timing pv_context_kernel_timing(const pv_context *ctx);

typedef enum pv_device_type {
    PV_DEVICE_GPU = 1, PV_DEVICE_CPU = 2, PV_DEVICE_ACCELERATOR = 3, PV_DEVICE_OTHER = 4
} pv_device_type;
typedef struct pv_device_info {
    int index; char name[128]; char vendor[128]; char platform[128];
    char driver_version[256]; char opencl_version[256]; pv_device_type type;
    uint64_t global_memory; uint64_t max_alloc; uint64_t local_memory;
    int compute_units; int max_work_group_size;
} pv_device_info;
pv_status pv_device_list(pv_device_info *devices, int capacity, int *count);
const char *pv_device_type_name(pv_device_type type);

/* io.h, volume_io.h */
pv_status pv_image_read(const char *path, pv_pixel_type type, pv_image *out);
pv_status pv_image_write(const char *path, const pv_image *image);
pv_status pv_volume_read_raw(const char *path, int nx, int ny, int nz, pv_volume *out);
pv_status pv_volume_write_raw(const char *path, const pv_volume *volume);
int pv_volume_io_has_nifti(void);
pv_status pv_volume_read_nifti(const char *path, pv_volume *out);
pv_status pv_volume_write_nifti(const char *path, const pv_volume *volume);

/* filter.h */
pv_status pv_gaussian_blur(pv_context *ctx, const pv_image *src, pv_image *dst,
                           float sigma, int taps);
pv_status pv_gaussian_blur3d(pv_context *ctx, const pv_volume *src, pv_volume *dst,
                             float sigma, int taps);
typedef enum pv_gradient_scheme {
    PV_GRADIENT_CENTRAL = 0, PV_GRADIENT_FORWARD = 1
} pv_gradient_scheme;
pv_status pv_gradient(pv_context *ctx, const pv_image *src, pv_image *gx, pv_image *gy,
                      pv_gradient_scheme scheme);
pv_status pv_gradient3d(pv_context *ctx, const pv_volume *src, pv_volume *gx,
                        pv_volume *gy, pv_volume *gz, pv_gradient_scheme scheme);

/* stereo.h */
typedef struct pv_sad_params {
    int min_disp; int ndisp; int window; int subpixel; int lr_check;
    float lr_max_diff; float uniqueness;
} pv_sad_params;
void pv_sad_params_default(pv_sad_params *params);
pv_status pv_stereo_sad(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_sad_params *params, pv_image *disparity);
pv_status pv_disparity_error(const pv_image *disparity, const pv_image *ground_truth,
                             float gt_scale, float threshold, int border, double *bad_fraction);
typedef enum pv_bp_message_precision {
    PV_BP_MESSAGES_F32 = 0, PV_BP_MESSAGES_F16 = 1
} pv_bp_message_precision;
typedef enum pv_bp_message_update {
    PV_BP_UPDATE_SERIAL = 0, PV_BP_UPDATE_COOPERATIVE = 1
} pv_bp_message_update;
typedef struct pv_bp_params {
    int min_disp; int ndisp; int levels; int iterations; float lambda; float data_max;
    float disc_max; float sigma; int tile_width; int tile_height; int tile_padding;
    size_t memory_budget; pv_bp_message_precision message_precision;
    pv_bp_message_update message_update;
} pv_bp_params;
void pv_bp_params_default(pv_bp_params *params);
float pv_bp_recommended_disc_max(int ndisp);
pv_status pv_stereo_bp(pv_context *ctx, const pv_image *left, const pv_image *right,
                       const pv_bp_params *params, pv_image *disparity);
#define PV_SGM_MAX_NDISP ...
typedef struct pv_sgm_params {
    int min_disp; int ndisp; int census_width; int census_height; int census_symmetric;
    int p1; int p2; int p2_adaptive; int paths; float uniqueness; int lr_check;
    int lr_max_diff; int subpixel; int median; size_t memory_budget;
} pv_sgm_params;
void pv_sgm_params_default(pv_sgm_params *params);
size_t pv_sgm_memory_estimate(int width, int height, const pv_sgm_params *params);
pv_status pv_stereo_sgm(pv_context *ctx, const pv_image *left, const pv_image *right,
                        const pv_sgm_params *params, pv_image *disparity);
pv_status pv_stereo_sgm_confidence(pv_context *ctx, const pv_image *left,
                                   const pv_image *right, const pv_sgm_params *params,
                                   pv_image *disparity, pv_image *confidence);
pv_status pv_stereo_sgm_batch(pv_context *ctx, const pv_image *lefts, const pv_image *rights,
                              int count, const pv_sgm_params *params, pv_image *disparities,
                              pv_image *confidences);

/* features.h */
#define PV_SIFT_DESCRIPTOR_SIZE ...
typedef struct pv_sift_params {
    int first_octave; int octaves; int levels; float sigma0; float sigma_input;
    float peak_thresh; float edge_thresh; float orientation_window;
    float orientation_peak; float magnif; int max_keypoints;
} pv_sift_params;
void pv_sift_params_default(pv_sift_params *params);
typedef enum pv_sift_preset {
    PV_SIFT_PRESET_REFERENCE = 0, PV_SIFT_PRESET_FAST = 1
} pv_sift_preset;
pv_status pv_sift_params_preset(pv_sift_params *params, pv_sift_preset preset);
typedef struct pv_sift_keypoint {
    float x, y; float sigma; float angle; float response; int octave; float scale;
} pv_sift_keypoint;
typedef struct pv_sift_features {
    int count; pv_sift_keypoint *keypoints; float *descriptors;
    uint8_t *descriptors_u8; int capacity;
} pv_sift_features;
void pv_sift_features_free(pv_sift_features *features);
pv_status pv_to_grey(pv_context *ctx, const pv_image *in, pv_image *out);
typedef struct pv_sift_plan pv_sift_plan;
pv_status pv_sift_plan_create(pv_context *ctx, int width, int height,
                              const pv_sift_params *params, pv_sift_plan **plan);
void pv_sift_plan_destroy(pv_sift_plan *plan);
int pv_sift_plan_octaves(const pv_sift_plan *plan);
pv_status pv_sift_detect(pv_sift_plan *plan, const pv_image *image, pv_sift_features *features);
pv_status pv_sift_detect_into(pv_sift_plan *plan, const pv_image *image,
                              pv_sift_features *features);
pv_status pv_sift_detect_batch(pv_sift_plan *plan, const pv_image *images, int count,
                               pv_sift_features *results);
typedef struct pv_sift_match_params { float ratio; int mutual; } pv_sift_match_params;
void pv_sift_match_params_default(pv_sift_match_params *params);
typedef struct pv_sift_pair { int query; int train; float distance; float second; } pv_sift_pair;
typedef struct pv_sift_matches { int count; pv_sift_pair *pairs; } pv_sift_matches;
void pv_sift_matches_free(pv_sift_matches *matches);
pv_status pv_sift_match(pv_context *ctx, const pv_sift_features *query,
                        const pv_sift_features *train, const pv_sift_match_params *params,
                        pv_sift_matches *matches);

/* register.h */
#define PV_REGISTER_NO_TEXTURE ...
#define PV_REGISTER_AT_EDGE ...
typedef enum pv_pad_mode { PV_PAD_NONE = 0, PV_PAD_FFT = 1, PV_PAD_LINEAR = 2 } pv_pad_mode;
typedef enum pv_window_kind { PV_WINDOW_NONE = 0, PV_WINDOW_HANN = 1 } pv_window_kind;
typedef enum pv_subpixel_method {
    PV_SUBPIXEL_NONE = 0, PV_SUBPIXEL_UPSAMPLE = 1, PV_SUBPIXEL_PARABOLIC = 2
} pv_subpixel_method;
typedef struct pv_phasecorr_options {
    pv_pad_mode pad; pv_window_kind window; pv_subpixel_method subpixel; int upsample;
} pv_phasecorr_options;
void pv_phasecorr_options_default(pv_phasecorr_options *options);
typedef struct pv_shift { double dx, dy, dz; double peak; unsigned flags; } pv_shift;
typedef enum pv_fft_engine {
    PV_FFT_AUTO = 0, PV_FFT_CLFFT = 1, PV_FFT_VKFFT = 2, PV_FFT_FFTW = 3
} pv_fft_engine;
const char *pv_fft_engine_name(pv_fft_engine engine);
int pv_fft_engine_available(pv_fft_engine engine);
pv_status pv_context_set_fft_engine(pv_context *ctx, pv_fft_engine engine);
pv_status pv_context_fft_engine(pv_context *ctx, pv_fft_engine *engine);
pv_status pv_phase_correlate(pv_context *ctx, const pv_image *reference, const pv_image *moving,
                             const pv_phasecorr_options *options, pv_shift *shift);
pv_status pv_phase_correlate3d(pv_context *ctx, const pv_volume *reference,
                               const pv_volume *moving, const pv_phasecorr_options *options,
                               pv_shift *shift);
typedef struct pv_phasecorr_plan pv_phasecorr_plan;
pv_status pv_phasecorr_plan_create(pv_context *ctx, const pv_image *reference,
                                   const pv_phasecorr_options *options, int max_batch,
                                   pv_phasecorr_plan **plan);
pv_status pv_phasecorr_plan_create3d(pv_context *ctx, const pv_volume *reference,
                                     const pv_phasecorr_options *options, int max_batch,
                                     pv_phasecorr_plan **plan);
void pv_phasecorr_plan_destroy(pv_phasecorr_plan *plan);
pv_status pv_phasecorr_plan_set_reference(pv_phasecorr_plan *plan, const pv_image *reference);
pv_status pv_phasecorr_plan_set_reference3d(pv_phasecorr_plan *plan,
                                            const pv_volume *reference);
pv_status pv_phasecorr_plan_correlate(pv_phasecorr_plan *plan, const pv_image *movers, int count,
                                      pv_shift *shifts);
pv_status pv_phasecorr_plan_correlate3d(pv_phasecorr_plan *plan, const pv_volume *movers,
                                        int count, pv_shift *shifts);
pv_status pv_phasecorr_plan_fft_size(const pv_phasecorr_plan *plan, int size[3]);
typedef struct pv_ncc_result {
    int x, y; float coefficient; double sub_x, sub_y; unsigned flags;
} pv_ncc_result;
pv_status pv_normxcorr2(pv_context *ctx, const pv_image *templ, const pv_image *image,
                        int min_overlap, pv_image *out, pv_ncc_result *result);

/* octreg.h */
typedef struct pv_octreg_options {
    int stripes; int stripe_width; int subvolume_width; int subvolume_step;
    double coarse_tolerance; double tolerance; pv_pad_mode pad; int subpixel; int batch;
} pv_octreg_options;
void pv_octreg_options_default(pv_octreg_options *options);
typedef struct pv_octreg_shift { double dx, dy, dz; double peak; int valid; } pv_octreg_shift;
typedef struct pv_octreg_info {
    int stripes; int good_stripes; int valid_bscans; int subvolumes;
} pv_octreg_info;
typedef struct pv_octreg_plan pv_octreg_plan;
pv_status pv_octreg_plan_create(pv_context *ctx, const pv_volume *reference,
                                const pv_octreg_options *options, pv_octreg_plan **plan);
void pv_octreg_plan_destroy(pv_octreg_plan *plan);
pv_status pv_octreg_register(pv_octreg_plan *plan, const pv_volume *target,
                             pv_octreg_shift *shifts, pv_octreg_info *info);
pv_status pv_octreg_reconstruct(pv_octreg_plan *plan, const pv_volume *target,
                                const pv_octreg_shift *shifts, float gap_value,
                                pv_volume *registered, pv_image *enface, pv_image *slow,
                                float *coverage);
typedef struct pv_octreg_synth_params {
    int size[3]; uint32_t seed; double noise; double drift[3]; double tremor;
    int saccades; double saccade_size; double start[3]; int integer_shifts;
} pv_octreg_synth_params;
void pv_octreg_synth_params_default(pv_octreg_synth_params *params);
pv_status pv_octreg_synthesize(const pv_octreg_synth_params *params, pv_volume *reference,
                               pv_volume *target, pv_octreg_shift *trace);

/* flow.h */
typedef struct pv_flow_params {
    float alpha; float beta; float rho; int kernel_size; int warps; int iterations;
    int levels; float spacing; pv_gradient_scheme gradient; float tolerance; int check_every;
} pv_flow_params;
void pv_flow_params_default(pv_flow_params *params);
typedef struct pv_flow_field { pv_volume u, v, w; } pv_flow_field;
typedef struct pv_flow_stats {
    double pyramid_ms; double gradient_ms; double resample_ms; double tensor_ms;
    double jacobi_ms; int iterations;
} pv_flow_stats;
typedef struct pv_flow_plan pv_flow_plan;
pv_status pv_flow_plan_create(pv_context *ctx, int nx, int ny, int nz,
                              const pv_flow_params *params, pv_flow_plan **plan);
void pv_flow_plan_destroy(pv_flow_plan *plan);
pv_status pv_flow_plan_run(pv_flow_plan *plan, const pv_volume *fixed, const pv_volume *moving,
                           pv_flow_field *flow);
pv_status pv_flow_plan_stats(const pv_flow_plan *plan, pv_flow_stats *stats);
pv_status pv_flow3d(pv_context *ctx, const pv_volume *fixed, const pv_volume *moving,
                    const pv_flow_params *params, pv_flow_field *flow);
pv_status pv_flow_warp(pv_context *ctx, const pv_volume *moving, const pv_flow_field *flow,
                       pv_volume *warped);
pv_status pv_flow_write_nifti(const char *path, const pv_flow_field *flow);

/* multi.h */
#define PV_DEVICE_GROUP_MAX ...
#define PV_DEVICE_GROUP_WHOLE ...
typedef struct pv_device_group pv_device_group;
pv_status pv_device_group_create(pv_device_group **out, const pv_context_options *base,
                                 const int *device_indices, int count);
void pv_device_group_destroy(pv_device_group *group);
int pv_device_group_size(const pv_device_group *group);
pv_context *pv_device_group_context(pv_device_group *group, int index);
pv_status pv_device_group_last_timing(const pv_device_group *group, int index,
                                      pv_timing *timing);
int pv_device_group_last_items(const pv_device_group *group, int index);
pv_status pv_octreg_register_sequence(pv_device_group *group, const pv_volume *reference,
                                      const pv_volume *targets, int count,
                                      const pv_octreg_options *options,
                                      pv_octreg_shift *shifts, pv_octreg_info *infos);
pv_status pv_flow3d_sequence(pv_device_group *group, const pv_volume *frames, int count,
                             const pv_flow_params *params, pv_flow_field *flows);
pv_status pv_stereo_bp_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                             const pv_bp_params *params, pv_image *disparity);
pv_status pv_stereo_sgm_group(pv_device_group *group, const pv_image *left,
                              const pv_image *right, const pv_sgm_params *params,
                              pv_image *disparity);

/* tune.h */
#define PV_TUNE_MAX_PARAMS ...
struct pv_tune_result;
typedef struct pv_tune_options {
    const char *op; int max_candidates; int runs; int width, height; int ndisp;
    int write_cache;
    void (*progress)(void *user, const struct pv_tune_result *result); void *progress_user;
    double budget_s;
} pv_tune_options;
const char *pv_tune_family_name(int index);
void pv_tune_options_default(pv_tune_options *options);
typedef struct pv_tune_param { char name[48]; int value; } pv_tune_param;
typedef struct pv_tune_result {
    char op[16]; int tried; int rejected; int pruned; double search_ms;
    double default_ms; double best_ms; int param_count;
    pv_tune_param params[...];   /* PV_TUNE_MAX_PARAMS */
} pv_tune_result;
pv_status pv_tune(pv_context *ctx, const pv_tune_options *options, pv_tune_result *results,
                  int capacity, int *count);
pv_status pv_tune_load(pv_context *ctx, int *applied);
pv_status pv_tune_set(pv_context *ctx, const char *family, const char *name, int value);
pv_status pv_tune_get(pv_context *ctx, const char *family, const char *name, int *value);
pv_status pv_tune_use_defaults(pv_context *ctx);
pv_status pv_tune_list(pv_context *ctx, const char *family, pv_tune_param *params, int capacity,
                       int *count);
pv_status pv_tune_cache_path(pv_context *ctx, char *path, size_t size);
pv_status pv_tune_check_cache_writable(pv_context *ctx);
pv_status pv_tune_source(pv_context *ctx, char *source, size_t size);

/* geometry.h */
#define PV_HOMOGRAPHY_SAMPLE 4
#define PV_FUNDAMENTAL_SAMPLE 8
#define PV_RANSAC_BATCH 256
#define PV_RANSAC_MAX_ITERATIONS ...
typedef enum pv_geometry_model {
    PV_GEOMETRY_HOMOGRAPHY = 0, PV_GEOMETRY_FUNDAMENTAL = 1
} pv_geometry_model;
typedef struct pv_ransac_params {
    int iterations; float threshold; double confidence; uint64_t seed; int refine;
} pv_ransac_params;
void pv_ransac_params_default(pv_ransac_params *params);
typedef struct pv_geometry_result {
    double model[9]; int inlier_count; int hypotheses; int best_hypothesis;
    int best_sample_inliers;
} pv_geometry_result;
pv_status pv_find_homography(pv_context *ctx, const float *points1, const float *points2,
                             int count, const pv_ransac_params *params,
                             pv_geometry_result *result, uint8_t *inliers);
pv_status pv_find_fundamental(pv_context *ctx, const float *points1, const float *points2,
                              int count, const pv_ransac_params *params,
                              pv_geometry_result *result, uint8_t *inliers);

/* flow.h: 2D flow defaults and Middlebury .flo files */
void pv_flow_params_default_2d(pv_flow_params *params);
void pv_flow_field_free(pv_flow_field *field);
pv_status pv_flow_read_flo(const char *path, pv_flow_field *field);
pv_status pv_flow_write_flo(const char *path, const pv_flow_field *field);
"""


def pkg_config(*args: str) -> list[str]:
    """Run pkg-config for the installed parvis library and split its output."""
    try:
        out = subprocess.run(["pkg-config", *args, "parvis"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise SystemExit(
            "parvis: pkg-config could not find the installed C library "
            f"({err}). Run 'make install' first and point PKG_CONFIG_PATH at "
            "<prefix>/lib/pkgconfig, or unset PARVIS_PYTHON_LIBRARY to build "
            "the library into the package.") from err
    return shlex.split(out)


def _system_library_found() -> bool:
    try:
        return subprocess.run(["pkg-config", "--exists", "parvis"]).returncode == 0
    except OSError:
        return False


def library_mode() -> str:
    """"system" or "bundled", from PARVIS_PYTHON_LIBRARY (see the module doc)."""
    wanted = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "system", "bundled"):
        raise SystemExit(f"parvis: {MODE_ENV}={wanted!r}: use auto, system or bundled")
    if wanted == "auto":
        return "system" if _system_library_found() else "bundled"
    return wanted


def library_version() -> str:
    """The C library's version, which is also the package's."""
    if library_mode() == "system":
        return pkg_config("--modversion")[0]
    return build_clib.source_version(build_clib.find_c_source(PACKAGE_ROOT))


def _system_link_options() -> dict:
    include_dirs = [f[2:] for f in pkg_config("--cflags-only-I")]
    library_dirs = [f[2:] for f in pkg_config("--libs-only-L")]
    libraries = [f[2:] for f in pkg_config("--libs-only-l")]
    libdir = pkg_config("--variable=libdir")
    rpath = [f"-Wl,-rpath,{d}" for d in (libdir + library_dirs) if d]
    return dict(include_dirs=include_dirs, library_dirs=library_dirs, libraries=libraries,
                extra_link_args=list(dict.fromkeys(rpath)))


def _bundled_link_options() -> dict:
    # The staging prefix is filled by setup.py's build_ext before the
    # extension compiles; only its paths are needed here.
    stage = CLIB_WORK / "stage"
    return dict(include_dirs=[str(stage / "include")], library_dirs=[str(stage / "lib")],
                libraries=["parvis"],
                extra_link_args=[f"-Wl,-rpath,$ORIGIN/{BUNDLED_LIB_DIR}"])


def make_builder() -> FFI:
    options = _system_link_options() if library_mode() == "system" else _bundled_link_options()
    builder = FFI()
    builder.cdef(CDEF)
    builder.set_source(
        "parvis._native",
        "#include <parvis.h>\n",
        extra_compile_args=["-std=c11"] if os.name == "posix" else [],
        **options,
    )
    return builder


ffibuilder = make_builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
