/* multi cases: device groups scaling from 1 to N OpenCL devices.
 *
 * Three operations over independent items, each timed on groups of the
 * first 1, 2, ..., N devices of --devices (default: every device of the
 * chosen OpenCL device's platform):
 *   multi-octreg  a sequence of synthetic AO-OCT targets against one
 *                 reference (8 x 256^3; 4 x 64^3 in the quick suite);
 *   multi-flow    3D flow between consecutive frames of a moving texture
 *                 (9 frames of 128^3, the paper's setting; 5 of 24^3 quick);
 *   multi-bp      BP of a synthetic 1920x1080 pair, 64 disparities, in 8
 *                 bands of rows (320x240, 16 disparities, 4 bands quick);
 *   multi-sgm     SGM of the same pair with 128 disparities (16 quick), cut
 *                 by pv_stereo_sgm_group into one overlapping band of rows
 *                 per device.
 * Every group size runs the same items, so the rows compare like with like
 * (SGM's bands follow the group size; multi.h's tolerance applies).
 *
 * Row columns: "cpu ms" holds the one-device group's wall time, the
 * baseline, so x(e2e) is the speedup over one device; e2e ms is the group
 * call's wall time, kernel ms the busiest device's summed kernel time;
 * agree is the share of outputs (B-scans, voxels, pixels) identical to the
 * one-device result, which must be all of them (for SGM, at least
 * multi.h's share).  size = devices. */
#include "bench.h"
#include "../tests/image_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MULTI_MAX_DEVICES CLI_MAX_DEVICES

typedef struct multi_family multi_family;

/* One operation on a group.  run writes its output into the family's
 * current buffers; keep_baseline copies them aside after the one-device
 * run; agreement compares the current output with that baseline. */
struct multi_family {
    const char *name;      /* "multi-octreg" */
    const char *variant;   /* its plot series */
    char params[32];
    pv_status (*run)(pv_device_group *group, multi_family *f);
    void (*keep_baseline)(multi_family *f);
    double (*agreement)(const multi_family *f);
    void (*release)(multi_family *f);
    void *state;
    double threshold;      /* the agreement a row needs (1.0: every output) */
};

/* ------------------------------------------------------------ devices */

/* The device the bench's OpenCL context takes (bench_open_contexts). */
static int chosen_device(const bench_config *config, int count)
{
    if (config->device.device_index >= 0)
        return config->device.device_index < count ? config->device.device_index : -1;
    return bench_first_gpu();
}

/* --devices LIST as given, or every device of the chosen one's platform
 * (the library's 'all'), so the first k can form the k-device group. */
static int device_indices(const bench_config *config, int *indices, int *count)
{
    const char *devices = config->devices ? config->devices : "all";
    if (cli_parse_devices(devices, indices, MULTI_MAX_DEVICES, count) != 0)
        return cli_fail("--devices '%s': expected 'all' or indices such as 0,1", devices);
    if (*count > 0)
        return 0;
    pv_device_info listed[MULTI_MAX_DEVICES];
    int found = 0;
    if (pv_device_list(listed, MULTI_MAX_DEVICES, &found) != PV_OK)
        return cli_fail("cannot list the OpenCL devices: %s", pv_last_error());
    if (found > MULTI_MAX_DEVICES)
        found = MULTI_MAX_DEVICES;
    int chosen = chosen_device(config, found);
    for (int i = 0; chosen >= 0 && i < found; i++)
        if (strcmp(listed[i].platform, listed[chosen].platform) == 0)
            indices[(*count)++] = i;
    return *count > 0 ? 0 : cli_fail("no OpenCL device for the multi cases");
}

static pv_device_group *open_group(const int *indices, int count)
{
    pv_context_options options;
    pv_context_options_default(&options);
    options.backend = PV_BACKEND_OPENCL;
    pv_device_group *group = NULL;
    pv_status status = pv_device_group_create(&group, &options, indices, count);
    if (status != PV_OK)
        cli_fail_status(status, "device group");
    return group;
}

/* ------------------------------------------------------------- timing */

typedef struct multi_timing {
    double wall_ms;          /* the group call, end to end */
    double busiest_kernel_ms;
    double upload_ms, download_ms;   /* summed over devices */
} multi_timing;

static double busiest_kernel(const pv_device_group *group)
{
    double most = 0.0;
    for (int i = 0; i < pv_device_group_size(group); i++) {
        pv_timing t;
        if (pv_device_group_last_timing(group, i, &t) == PV_OK && t.kernel_ms > most)
            most = t.kernel_ms;
    }
    return most;
}

/* Warm up, then the medians of `runs` timed group calls; every sample
 * goes to *series. */
static pv_status time_group(const bench_config *config, pv_device_group *group,
                            multi_family *f, multi_timing *median, bench_series *series)
{
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < config->warmup; i++)
        status = f->run(group, f);
    int runs = config->runs < 1 ? 1 : config->runs > BENCH_MAX_SAMPLES ? BENCH_MAX_SAMPLES
                                                                         : config->runs;
    memset(series, 0, sizeof *series);
    for (int i = 0; status == PV_OK && i < runs; i++) {
        status = f->run(group, f);
        pv_timing whole;
        pv_device_group_last_timing(group, PV_DEVICE_GROUP_WHOLE, &whole);
        series->total_ms[i] = whole.total_ms;
        series->kernel_ms[i] = busiest_kernel(group);
        series->upload_ms[i] = whole.upload_ms;
        series->download_ms[i] = whole.download_ms;
        series->count = i + 1;
    }
    if (status != PV_OK)
        return status;
    pv_timing medians;
    bench_series_medians(series, &medians);
    median->wall_ms = medians.total_ms;
    median->busiest_kernel_ms = medians.kernel_ms;
    median->upload_ms = medians.upload_ms;
    median->download_ms = medians.download_ms;
    return PV_OK;
}

/* ------------------------------------------------------------- rows */

/* The "cpu" side of a multi row is the one-device run (the baseline its
 * speedup is quoted against); the "opencl" side is this row's group. */
static void fill_row(const multi_family *f, int devices, const bench_series *baseline,
                     double baseline_ms, const multi_timing *t, const bench_series *series,
                     double agreement, bench_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "multi");
    snprintf(r->name, sizeof r->name, "%s/%ddev", f->name, devices);
    snprintf(r->params, sizeof r->params, "%s", f->params);
    snprintf(r->variant, sizeof r->variant, "%s", f->variant);
    r->cpu_ms = baseline_ms;
    r->cpu_samples = *baseline;
    r->cl_samples = *series;
    r->have_opencl = 1;
    r->cl_total_ms = t->wall_ms;
    r->cl_kernel_ms = t->busiest_kernel_ms;
    r->cl_upload_ms = t->upload_ms;
    r->cl_download_ms = t->download_ms;
    r->agreement = agreement;
    /* a device changes the time, never the result (SGM's bands: almost never) */
    r->threshold = f->threshold;
    r->cpu_quality = -1.0;
    r->size = devices;
}

/* Groups of the first 1 .. count devices; one row each. */
static int scale_family(const bench_config *config, const int *indices, int count,
                        multi_family *f, bench_rows *rows)
{
    double baseline_ms = 0.0;
    bench_series baseline, series;
    for (int k = 1; k <= count; k++) {
        pv_device_group *group = open_group(indices, k);
        if (!group)
            return 1;
        multi_timing t;
        pv_status status = time_group(config, group, f, &t, &series);
        pv_device_group_destroy(group);
        if (status != PV_OK)
            return cli_fail_status(status, f->name);
        if (k == 1) {
            baseline_ms = t.wall_ms;
            baseline = series;
            f->keep_baseline(f);
        }
        bench_result row;
        fill_row(f, k, &baseline, baseline_ms, &t, &series, k == 1 ? 1.0 : f->agreement(f), &row);
        if (bench_add_row(rows, &row))
            return 1;
    }
    return 0;
}

/* ============================================================== octreg */

typedef struct octreg_state {
    int volumes, n;
    pv_volume reference;
    pv_volume *targets;
    pv_octreg_shift *shifts, *baseline;
} octreg_state;

/* One scene (one seed, so one reference), a different motion per target. */
static int synthesize_targets(octreg_state *s)
{
    pv_octreg_synth_params p;
    pv_octreg_synth_params_default(&p);
    p.size[0] = p.size[1] = p.size[2] = s->n;
    p.integer_shifts = 1;
    pv_volume scratch;
    if (pv_volume_alloc(&scratch, s->n, s->n, s->n) != PV_OK)
        return cli_fail("no memory for a %d^3 volume", s->n);
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < s->volumes; i++) {
        p.start[0] = 0.5 * (i % 3);
        p.start[1] = 1.0 + i % 4;
        for (int a = 0; a < 3; a++)
            p.drift[a] = (a == 1 ? 2.0 : 4.0) * s->n / 64.0 * (1.0 + 0.1 * i);
        status = pv_octreg_synthesize(&p, i == 0 ? &s->reference : &scratch, &s->targets[i],
                                      NULL);
    }
    pv_volume_free(&scratch);
    return status == PV_OK ? 0 : cli_fail_status(status, "synthetic AO-OCT volumes");
}

static pv_status octreg_run(pv_device_group *group, multi_family *f)
{
    octreg_state *s = f->state;
    return pv_octreg_register_sequence(group, &s->reference, s->targets, s->volumes, NULL,
                                       s->shifts, NULL);
}

static size_t octreg_entries(const octreg_state *s)
{
    return (size_t)s->volumes * (size_t)s->n;
}

static void octreg_keep(multi_family *f)
{
    octreg_state *s = f->state;
    memcpy(s->baseline, s->shifts, octreg_entries(s) * sizeof *s->shifts);
}

static double octreg_agreement(const multi_family *f)
{
    const octreg_state *s = f->state;
    size_t same = 0;
    for (size_t i = 0; i < octreg_entries(s); i++) {
        const pv_octreg_shift *a = &s->shifts[i], *b = &s->baseline[i];
        same += a->dx == b->dx && a->dy == b->dy && a->dz == b->dz && a->valid == b->valid &&
                a->peak == b->peak;
    }
    return (double)same / (double)octreg_entries(s);
}

static void octreg_release(multi_family *f)
{
    octreg_state *s = f->state;
    if (!s)
        return;
    pv_volume_free(&s->reference);
    for (int i = 0; s->targets && i < s->volumes; i++)
        pv_volume_free(&s->targets[i]);
    free(s->targets);
    free(s->shifts);
    free(s->baseline);
    free(s);
    f->state = NULL;
}

static int octreg_prepare(const bench_config *config, multi_family *f)
{
    octreg_state *s = calloc(1, sizeof *s);
    *f = (multi_family){"multi-octreg", "octreg", "", octreg_run, octreg_keep,
                        octreg_agreement, octreg_release, s, 1.0};
    if (!s)
        return cli_fail("out of memory");
    s->volumes = config->quick ? 4 : 8;
    s->n = config->quick ? 64 : 256;
    snprintf(f->params, sizeof f->params, "%d vols %d^3", s->volumes, s->n);
    s->targets = calloc((size_t)s->volumes, sizeof *s->targets);
    s->shifts = calloc(octreg_entries(s), sizeof *s->shifts);
    s->baseline = calloc(octreg_entries(s), sizeof *s->baseline);
    if (!s->targets || !s->shifts || !s->baseline ||
        pv_volume_alloc(&s->reference, s->n, s->n, s->n) != PV_OK)
        return cli_fail("out of memory");
    for (int i = 0; i < s->volumes; i++)
        if (pv_volume_alloc(&s->targets[i], s->n, s->n, s->n) != PV_OK)
            return cli_fail("no memory for %d volumes of %d^3", s->volumes, s->n);
    return synthesize_targets(s);
}

/* ================================================================ flow */

typedef struct flow_state {
    int frames, n;
    pv_flow_params params;
    pv_volume *volumes;
    pv_flow_field *flows, *baseline;
} flow_state;

/* A smooth texture drifting a fraction of a voxel per frame. */
static void fill_frame(pv_volume *v, int t)
{
    float k = 6.2831853f / 24.0f;
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            for (int x = 0; x < v->nx; x++) {
                float px = (float)x - 0.4f * (float)t, py = (float)y + 0.3f * (float)t;
                float pz = (float)z - 0.2f * (float)t;
                v->data[x + y * v->stride_y + z * v->stride_z] =
                    0.5f + 0.2f * sinf(k * px) * cosf(0.8f * k * py) +
                    0.15f * sinf(0.7f * k * pz + 0.5f * k * px);
            }
}

static pv_status flow_run(pv_device_group *group, multi_family *f)
{
    flow_state *s = f->state;
    return pv_flow3d_sequence(group, s->volumes, s->frames, &s->params, s->flows);
}

static size_t flow_voxels(const flow_state *s)
{
    return (size_t)s->n * (size_t)s->n * (size_t)s->n;
}

static void flow_keep(multi_family *f)
{
    flow_state *s = f->state;
    for (int i = 0; i < s->frames - 1; i++) {
        memcpy(s->baseline[i].u.data, s->flows[i].u.data, flow_voxels(s) * sizeof(float));
        memcpy(s->baseline[i].v.data, s->flows[i].v.data, flow_voxels(s) * sizeof(float));
        memcpy(s->baseline[i].w.data, s->flows[i].w.data, flow_voxels(s) * sizeof(float));
    }
}

static double flow_agreement(const multi_family *f)
{
    const flow_state *s = f->state;
    size_t same = 0, voxels = flow_voxels(s);
    for (int i = 0; i < s->frames - 1; i++) {
        const pv_flow_field *a = &s->flows[i], *b = &s->baseline[i];
        for (size_t j = 0; j < voxels; j++)
            same += a->u.data[j] == b->u.data[j] && a->v.data[j] == b->v.data[j] &&
                    a->w.data[j] == b->w.data[j];
    }
    return (double)same / ((double)voxels * (s->frames - 1));
}

static void flow_release(multi_family *f)
{
    flow_state *s = f->state;
    if (!s)
        return;
    for (int i = 0; s->volumes && i < s->frames; i++)
        pv_volume_free(&s->volumes[i]);
    for (int i = 0; s->flows && s->baseline && i < s->frames - 1; i++) {
        pv_flow_field_free(&s->flows[i]);
        pv_flow_field_free(&s->baseline[i]);
    }
    free(s->volumes);
    free(s->flows);
    free(s->baseline);
    free(s);
    f->state = NULL;
}

static int flow_prepare(const bench_config *config, multi_family *f)
{
    flow_state *s = calloc(1, sizeof *s);
    *f = (multi_family){"multi-flow", "flow", "", flow_run, flow_keep, flow_agreement,
                        flow_release, s, 1.0};
    if (!s)
        return cli_fail("out of memory");
    s->frames = config->quick ? 5 : 9;
    s->n = config->quick ? 24 : 128;
    pv_flow_params_default(&s->params);   /* the paper's setting */
    if (config->quick) {
        s->params.rho = 1.0f;
        s->params.kernel_size = 5;
        s->params.warps = 2;
        s->params.iterations = 10;
    }
    snprintf(f->params, sizeof f->params, "%d pairs %d^3", s->frames - 1, s->n);
    s->volumes = calloc((size_t)s->frames, sizeof *s->volumes);
    s->flows = calloc((size_t)s->frames - 1, sizeof *s->flows);
    s->baseline = calloc((size_t)s->frames - 1, sizeof *s->baseline);
    if (!s->volumes || !s->flows || !s->baseline)
        return cli_fail("out of memory");
    for (int i = 0; i < s->frames; i++) {
        if (pv_volume_alloc(&s->volumes[i], s->n, s->n, s->n) != PV_OK)
            return cli_fail("no memory for %d frames of %d^3", s->frames, s->n);
        fill_frame(&s->volumes[i], i);
    }
    for (int i = 0; i < s->frames - 1; i++)
        if (pv_flow_field_alloc(&s->flows[i], s->n, s->n, s->n) != PV_OK ||
            pv_flow_field_alloc(&s->baseline[i], s->n, s->n, s->n) != PV_OK)
            return cli_fail("no memory for %d flow fields of %d^3", s->frames - 1, s->n);
    return 0;
}

/* ================================================================== BP */

typedef struct bp_state {
    pv_image left, right, disparity, baseline;
    pv_bp_params params;
} bp_state;

/* Smoothed noise, seen by the right camera shifted by a disparity that
 * steps across the image (planes at different depths). */
static void fill_pair(pv_image *left, pv_image *right, int ndisp)
{
    int w = left->width, h = left->height;
    unsigned char *l = left->data, *r = right->data;
    uint32_t state = 12345u;
    for (int i = 0; i < w * h; i++) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        l[i] = (unsigned char)(state >> 24);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int d = 2 + (ndisp - 4) * ((x / (w / 4 + 1) + y / (h / 3 + 1)) % 4) / 3;
            int from = x + d < w ? x + d : w - 1;
            r[y * w + x] = l[y * w + from];
        }
}

static pv_status bp_run(pv_device_group *group, multi_family *f)
{
    bp_state *s = f->state;
    return pv_stereo_bp_group(group, &s->left, &s->right, &s->params, &s->disparity);
}

static void bp_keep(multi_family *f)
{
    bp_state *s = f->state;
    memcpy(s->baseline.data, s->disparity.data,
           (size_t)s->disparity.width * (size_t)s->disparity.height * sizeof(float));
}

static double bp_agreement(const multi_family *f)
{
    const bp_state *s = f->state;
    size_t pixels = (size_t)s->disparity.width * (size_t)s->disparity.height, same = 0;
    const float *a = s->disparity.data, *b = s->baseline.data;
    for (size_t i = 0; i < pixels; i++)
        same += a[i] == b[i];
    return (double)same / (double)pixels;
}

static void bp_release(multi_family *f)
{
    bp_state *s = f->state;
    if (!s)
        return;
    image_list_free(&s->left, &s->right, &s->disparity, &s->baseline, NULL);
    free(s);
    f->state = NULL;
}

static int bp_prepare(const bench_config *config, multi_family *f)
{
    bp_state *s = calloc(1, sizeof *s);
    *f = (multi_family){"multi-bp", "bp", "", bp_run, bp_keep, bp_agreement, bp_release, s, 1.0};
    if (!s)
        return cli_fail("out of memory");
    int w = config->quick ? 320 : 1920, h = config->quick ? 240 : 1080;
    int bands = config->quick ? 4 : 8;
    pv_bp_params_default(&s->params);
    s->params.ndisp = config->quick ? 16 : 64;
    s->params.disc_max = pv_bp_recommended_disc_max(s->params.ndisp);
    /* fixed bands: every group size runs the same tiles */
    s->params.tile_height = (h + bands - 1) / bands;
    snprintf(f->params, sizeof f->params, "%dx%d/%d %d bands", w, h, s->params.ndisp, bands);
    if (pv_image_alloc(&s->left, w, h, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&s->right, w, h, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&s->disparity, w, h, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&s->baseline, w, h, PV_PIXEL_F32) != PV_OK)
        return cli_fail("no memory for a %dx%d pair", w, h);
    fill_pair(&s->left, &s->right, s->params.ndisp);
    return 0;
}

/* ================================================================= SGM */

/* include/parvis/multi.h: a banded run's integer disparities equal one
 * context's on at least this share of pixels (sub-pixel values may move
 * a little more where a band's sums differ, so the rows run without). */
#define SGM_GROUP_SAME_SHARE 0.99

typedef struct sgm_state {
    pv_image left, right, disparity, baseline;
    pv_sgm_params params;
} sgm_state;

static pv_status sgm_run(pv_device_group *group, multi_family *f)
{
    sgm_state *s = f->state;
    return pv_stereo_sgm_group(group, &s->left, &s->right, &s->params, &s->disparity);
}

static void sgm_keep(multi_family *f)
{
    sgm_state *s = f->state;
    memcpy(s->baseline.data, s->disparity.data,
           (size_t)s->disparity.width * (size_t)s->disparity.height * sizeof(float));
}

static double sgm_agreement(const multi_family *f)
{
    const sgm_state *s = f->state;
    size_t pixels = (size_t)s->disparity.width * (size_t)s->disparity.height, same = 0;
    const float *a = s->disparity.data, *b = s->baseline.data;
    for (size_t i = 0; i < pixels; i++)
        same += a[i] == b[i] || (isinf(a[i]) && isinf(b[i]));
    return (double)same / (double)pixels;
}

static void sgm_release(multi_family *f)
{
    sgm_state *s = f->state;
    if (!s)
        return;
    image_list_free(&s->left, &s->right, &s->disparity, &s->baseline, NULL);
    free(s);
    f->state = NULL;
}

static int sgm_prepare(const bench_config *config, multi_family *f)
{
    sgm_state *s = calloc(1, sizeof *s);
    *f = (multi_family){"multi-sgm", "sgm", "", sgm_run, sgm_keep, sgm_agreement, sgm_release, s,
                        SGM_GROUP_SAME_SHARE};
    if (!s)
        return cli_fail("out of memory");
    int w = config->quick ? 320 : 1920, h = config->quick ? 240 : 1080;
    pv_sgm_params_default(&s->params);
    s->params.ndisp = config->quick ? 16 : 128;
    s->params.subpixel = 0;
    snprintf(f->params, sizeof f->params, "%dx%d/%d bands", w, h, s->params.ndisp);
    if (pv_image_alloc(&s->left, w, h, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&s->right, w, h, PV_PIXEL_U8) != PV_OK ||
        pv_image_alloc(&s->disparity, w, h, PV_PIXEL_F32) != PV_OK ||
        pv_image_alloc(&s->baseline, w, h, PV_PIXEL_F32) != PV_OK)
        return cli_fail("no memory for a %dx%d pair", w, h);
    fill_pair(&s->left, &s->right, s->params.ndisp);
    return 0;
}

/* =============================================================== cases */

typedef int (*multi_prepare_fn)(const bench_config *config, multi_family *f);

static int run_family(const bench_config *config, const char *name, multi_prepare_fn prepare,
                      bench_rows *rows)
{
    if (!bench_wants(config, "multi", name, 1))
        return 0;
    int indices[MULTI_MAX_DEVICES], count = 0;
    if (device_indices(config, indices, &count))
        return 1;
    multi_family f;
    memset(&f, 0, sizeof f);
    int rc = prepare(config, &f);
    if (rc == 0)
        rc = scale_family(config, indices, count, &f, rows);
    if (f.release)
        f.release(&f);
    return rc;
}

int bench_multi_cases(const bench_config *config, const bench_contexts *contexts,
                      bench_result *results, int max, int *count)
{
    /* device groups are OpenCL: nothing to scale on a CPU-only run */
    if (!contexts->opencl || config->device.backend == PV_BACKEND_CPU)
        return 0;
    bench_rows rows = {results, max, count};
    int rc = run_family(config, "multi-octreg", octreg_prepare, &rows);
    if (rc == 0)
        rc = run_family(config, "multi-flow", flow_prepare, &rows);
    if (rc == 0)
        rc = run_family(config, "multi-bp", bp_prepare, &rows);
    if (rc == 0)
        rc = run_family(config, "multi-sgm", sgm_prepare, &rows);
    return rc;
}
