/* Synthetic AO-OCT volumes with a known eye-motion trace (octreg.h).
 *
 * The scene is a continuous function of (z, x, y), so a B-scan displaced by
 * a fractional shift is sampled exactly, not interpolated:
 *   - retinal layers: Gaussian bands along depth on a surface that tilts and
 *     bends slowly across x and y;
 *   - photoreceptor layers modulated by a cone mosaic: Gaussian spots on a
 *     hexagonal lattice with per-cone jitter and brightness;
 *   - speckle: smooth value noise (smoothstep-interpolated lattice values)
 *     multiplying everything;
 *   - independent additive noise in the reference and the target.
 * Every random value comes from a hash of its lattice coordinates and the
 * seed, so the volumes do not depend on the thread count. */
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

#define SYNTH_LAYERS 5
#define CONE_SPACING 4.0     /* voxels between neighbouring cones */
#define CONE_RADIUS 1.1      /* Gaussian sigma of a cone spot */
#define SPECKLE_GRAIN 1.0    /* voxels per speckle lattice cell: fully developed speckle */

void pv_octreg_synth_params_default(pv_octreg_synth_params *params)
{
    if (!params)
        return;
    memset(params, 0, sizeof *params);
    params->size[0] = 64;
    params->size[1] = 48;
    params->size[2] = 40;
    params->seed = 1;
    params->noise = 0.05;
    params->drift[0] = 4.0;
    params->drift[1] = 2.0;
    params->drift[2] = 1.5;
    params->tremor = 0.4;
    params->saccades = 2;
    params->saccade_size = 6.0;
}

/* ================================================================ hashing */

static uint32_t mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

static uint32_t hash4(uint32_t seed, int a, int b, int c)
{
    uint32_t h = mix(seed ^ 0x9e3779b9u);
    h = mix(h ^ (uint32_t)a);
    h = mix(h ^ (uint32_t)b * 0x85ebca6bu);
    return mix(h ^ (uint32_t)c * 0xc2b2ae35u);
}

/* Uniform in [0, 1). */
static double unit_hash(uint32_t seed, int a, int b, int c)
{
    return (hash4(seed, a, b, c) >> 8) * (1.0 / 16777216.0);
}

/* Roughly normal, unit variance (sum of four uniforms). */
static double normal_hash(uint32_t seed, int a, int b, int c)
{
    double sum = 0.0;
    for (int i = 0; i < 4; i++)
        sum += unit_hash(seed + 0x1000193u * (uint32_t)(i + 1), a, b, c);
    return (sum - 2.0) * 1.7320508075688772;
}

/* ================================================================== scene */

typedef struct scene {
    uint32_t seed;
    double depth;                  /* volume depth in voxels */
    double offset[SYNTH_LAYERS];   /* layer depths below the surface */
    double width[SYNTH_LAYERS];
    double gain[SYNTH_LAYERS];
    int cones[SYNTH_LAYERS];       /* 1: modulated by the cone mosaic */
} scene;

static scene make_scene(const pv_octreg_synth_params *p)
{
    /* Relative depths of RNFL, IPL, IS/OS, COST and RPE-like bands. */
    static const double offset[SYNTH_LAYERS] = {0.00, 0.14, 0.36, 0.44, 0.55};
    static const double width[SYNTH_LAYERS] = {2.2, 1.6, 0.9, 0.9, 1.8};
    static const double gain[SYNTH_LAYERS] = {0.55, 0.35, 1.0, 0.8, 0.6};
    static const int cones[SYNTH_LAYERS] = {0, 0, 1, 1, 0};
    scene s;
    s.seed = p->seed;
    s.depth = p->size[0];
    for (int l = 0; l < SYNTH_LAYERS; l++) {
        s.offset[l] = offset[l] * p->size[0];
        s.width[l] = width[l] * (p->size[0] >= 64 ? p->size[0] / 64.0 : 1.0);
        s.gain[l] = gain[l];
        s.cones[l] = cones[l];
    }
    return s;
}

/* Depth of the inner surface: tilted and gently curved across x and y. */
static double surface(const scene *s, double x, double y)
{
    return s->depth * (0.2 + 0.04 * sin(x * 0.021 + 0.7) + 0.03 * cos(y * 0.017 + 0.3)) +
           0.02 * x + 0.01 * y;
}

/* Cone mosaic brightness at (x, y): spots on a jittered hexagonal lattice. */
static double cone_mosaic(const scene *s, double x, double y)
{
    const double row_step = CONE_SPACING * 0.8660254037844386;
    int row0 = (int)floor(y / row_step);
    double total = 0.0;
    for (int row = row0 - 1; row <= row0 + 2; row++) {
        double shift = (row & 1) ? 0.5 * CONE_SPACING : 0.0;
        int col0 = (int)floor((x - shift) / CONE_SPACING);
        for (int col = col0 - 1; col <= col0 + 2; col++) {
            double cx = col * CONE_SPACING + shift +
                        0.6 * (unit_hash(s->seed, col, row, 11) - 0.5) * CONE_SPACING;
            double cy = row * row_step + 0.6 * (unit_hash(s->seed, col, row, 12) - 0.5) *
                                             CONE_SPACING;
            double bright = 0.4 + 0.6 * unit_hash(s->seed, col, row, 13);
            double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
            total += bright * exp(-r2 / (2.0 * CONE_RADIUS * CONE_RADIUS));
        }
    }
    return 0.25 + total;
}

static double smooth(double t)
{
    return t * t * (3.0 - 2.0 * t);
}

/* Value noise in [0, 1] on a lattice of SPECKLE_GRAIN voxels, C1 smooth. */
static double speckle(const scene *s, double z, double x, double y)
{
    double u = z / SPECKLE_GRAIN, v = x / SPECKLE_GRAIN, w = y / SPECKLE_GRAIN;
    int iu = (int)floor(u), iv = (int)floor(v), iw = (int)floor(w);
    double fu = smooth(u - iu), fv = smooth(v - iv), fw = smooth(w - iw);
    double value = 0.0;
    for (int c = 0; c < 8; c++) {
        int du = c & 1, dv = (c >> 1) & 1, dw = (c >> 2) & 1;
        double weight = (du ? fu : 1.0 - fu) * (dv ? fv : 1.0 - fv) * (dw ? fw : 1.0 - fw);
        value += weight * unit_hash(s->seed ^ 0x5bd1e995u, iu + du, iv + dv, iw + dw);
    }
    return value;
}

/* One A-line of the scene at lateral position (x, y), depths 0 .. n - 1
 * shifted by dz: out[z] = scene(z - dz, x, y). */
static void scene_aline(const scene *s, double x, double y, double dz, int n, float *out)
{
    double top = surface(s, x, y), cones = cone_mosaic(s, x, y);
    for (int z = 0; z < n; z++) {
        double depth = z - dz, value = 0.02;
        for (int l = 0; l < SYNTH_LAYERS; l++) {
            double t = (depth - top - s->offset[l]) / s->width[l];
            if (fabs(t) < 6.0)
                value += s->gain[l] * exp(-0.5 * t * t) * (s->cones[l] ? cones : 1.0);
        }
        out[z] = (float)(value * (0.35 + 1.3 * speckle(s, depth, x, y)));
    }
}

/* ================================================================= motion */

/* Smooth tremor: two sinusoids of periods 3..9 B-scans per axis. */
static double tremor(const pv_octreg_synth_params *p, int axis, int k)
{
    double value = 0.0;
    for (int i = 0; i < 2; i++) {
        double period = 3.0 + 6.0 * unit_hash(p->seed, axis, i, 21);
        double phase = 2.0 * PV_PI * unit_hash(p->seed, axis, i, 22);
        value += 0.5 * sin(2.0 * PV_PI * k / period + phase);
    }
    return p->tremor * value;
}

/* The B-scan where saccade i happens, spread over the middle of the volume. */
static int saccade_at(const pv_octreg_synth_params *p, int i)
{
    double base = (i + 1.0) / (p->saccades + 1.0);
    double jitter = (unit_hash(p->seed, i, 0, 31) - 0.5) * 0.5 / (p->saccades + 1.0);
    return (int)floor((base + jitter) * p->size[2]);
}

/* Jump of saccade i: mostly lateral, a little in depth. */
static void saccade_step(const pv_octreg_synth_params *p, int i, double step[3])
{
    double angle = 2.0 * PV_PI * unit_hash(p->seed, i, 1, 32);
    step[0] = p->saccade_size * cos(angle);
    step[1] = p->saccade_size * 0.6 * sin(angle);
    step[2] = p->saccade_size * 0.25 * (unit_hash(p->seed, i, 2, 33) - 0.5);
}

static void motion_trace(const pv_octreg_synth_params *p, pv_octreg_shift *trace)
{
    int planes = p->size[2];
    for (int k = 0; k < planes; k++) {
        double t = planes > 1 ? (double)k / (planes - 1) : 0.0, d[3];
        for (int a = 0; a < 3; a++)
            d[a] = p->start[a] + p->drift[a] * (0.7 * t + 0.3 * sin(1.5 * PV_PI * t)) +
                   tremor(p, a, k);
        for (int i = 0; i < p->saccades; i++) {
            double step[3];
            saccade_step(p, i, step);
            for (int a = 0; k >= saccade_at(p, i) && a < 3; a++)
                d[a] += step[a];
        }
        for (int a = 0; p->integer_shifts && a < 3; a++)
            d[a] = floor(d[a] + 0.5);
        double position = k - d[1];
        trace[k] = (pv_octreg_shift){d[0], d[1], d[2], 0.0,
                                     position >= -0.5 && position <= planes - 0.5};
    }
}

/* ============================================================== volumes */

static void add_noise(const pv_octreg_synth_params *p, uint32_t stream, int k, int x, float *line)
{
    for (int z = 0; z < p->size[0]; z++)
        line[z] += (float)(p->noise * normal_hash(p->seed ^ stream, z, x, k));
}

static void fill_volume(const pv_octreg_synth_params *p, const scene *s,
                        const pv_octreg_shift *trace, uint32_t stream, pv_volume *out)
{
    const int nx = p->size[1], planes = p->size[2];
#pragma omp parallel for schedule(static)
    for (long row = 0; row < (long)planes * nx; row++) {
        int k = (int)(row / nx), x = (int)(row % nx);
        double dx = trace ? trace[k].dx : 0.0, dy = trace ? trace[k].dy : 0.0;
        double dz = trace ? trace[k].dz : 0.0;
        float *line = out->data + k * out->stride_z + x * out->stride_y;
        scene_aline(s, x - dx, k - dy, dz, p->size[0], line);
        add_noise(p, stream, k, x, line);
    }
}

static pv_status check_synth(const pv_octreg_synth_params *p, const pv_volume *reference,
                             const pv_volume *target)
{
    const char *op = "octreg_synthesize";
    if (!p || !pv_volume_is_valid(reference) || !pv_volume_is_valid(target))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: params, reference or target is NULL or invalid",
                       op);
    for (int a = 0; a < 3; a++)
        if (p->size[a] < 1)
            return pv_fail(NULL, PV_ERR_INVALID, "%s: params.size[%d] = %d < 1", op, a,
                           p->size[a]);
    if (reference->nx != p->size[0] || reference->ny != p->size[1] ||
        reference->nz != p->size[2] || !pv_volumes_same_size(reference, target))
        return pv_fail(NULL, PV_ERR_INVALID, "%s: reference and target must be %dx%dx%d", op,
                       p->size[0], p->size[1], p->size[2]);
    double values[] = {p->noise, p->drift[0], p->drift[1], p->drift[2], p->tremor,
                       p->saccade_size, p->start[0], p->start[1], p->start[2]};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (!isfinite(values[i]) || fabs(values[i]) > 1e6)
            return pv_fail(NULL, PV_ERR_INVALID, "%s: a motion or noise parameter is not finite",
                           op);
    if (p->noise < 0.0 || p->tremor < 0.0 || p->saccades < 0 || p->saccades > 1000)
        return pv_fail(NULL, PV_ERR_INVALID,
                       "%s: noise and tremor must be >= 0 and saccades in 0..1000", op);
    return PV_OK;
}

pv_status pv_octreg_synthesize(const pv_octreg_synth_params *params, pv_volume *reference,
                               pv_volume *target, pv_octreg_shift *trace)
{
    pv_status status = check_synth(params, reference, target);
    if (status != PV_OK)
        return status;
    pv_octreg_shift *motion = malloc((size_t)params->size[2] * sizeof *motion);
    if (!motion)
        return pv_fail(NULL, PV_ERR_NOMEM, "octreg_synthesize: out of memory");
    scene s = make_scene(params);
    motion_trace(params, motion);
    fill_volume(params, &s, NULL, 0x1234567u, reference);
    fill_volume(params, &s, motion, 0x7654321u, target);
    if (trace)
        memcpy(trace, motion, (size_t)params->size[2] * sizeof *trace);
    free(motion);
    return PV_OK;
}
