/* Masked phase correlation (Padfield 2012): pv_phase_correlate_masked and
 * its 3D form.  The front end checks the arguments, reads every input
 * and mask once into dense f32 arrays (inputs less their masked means and
 * 0 outside their masks, masks as 0 / 1), decides the transform size and
 * the variance floors, and hands the job to the backend's pc_masked slot;
 * the backend returns the best score's grid index, which becomes the
 * signed shift here.  Cross-checked against the CPU backend (the same
 * integer shift, peaks within PV_TOL_PCM_PEAK). */
#include "register_internal.h"
#include "../core/tolerance.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative floor of an overlap's variance sum, against the side's whole
 * masked energy (register.h). */
#define PCM_FLOOR 1e-4

void pv_phasecorr_masked_params_default(pv_phasecorr_masked_params *params)
{
    if (params)
        pv_decl_defaults(&pv_phasecorr_masked_decl, params);
}

/* An image or a volume, read as one: element (x, y, z) as a float. */
typedef struct pcm_input {
    const pv_image *image;    /* set for 2D */
    const pv_volume *volume;  /* set for 3D */
} pcm_input;

static int input_present(pcm_input in)
{
    return in.image || in.volume;
}

static void input_size(pcm_input in, int size[3])
{
    if (in.image) {
        size[0] = in.image->width;
        size[1] = in.image->height;
        size[2] = 1;
    } else {
        size[0] = in.volume->nx;
        size[1] = in.volume->ny;
        size[2] = in.volume->nz;
    }
}

/* Row (y, z) of the input as floats into out (nx values). */
static void input_row(pcm_input in, int y, int z, float *out)
{
    if (in.volume) {
        const ptrdiff_t start = z * in.volume->stride_z + y * in.volume->stride_y;
        for (int x = 0; x < in.volume->nx; x++)
            out[x] = pv_volume_value(in.volume, start + x);
        return;
    }
    const pv_image *im = in.image;
    const uint8_t *base = (const uint8_t *)im->data;
    if (im->type == PV_PIXEL_F32) {
        memcpy(out, (const float *)im->data + (ptrdiff_t)y * im->stride,
               (size_t)im->width * sizeof *out);
    } else {
        const uint8_t *row = base + (ptrdiff_t)y * im->stride;
        for (int x = 0; x < im->width; x++)
            out[x] = (float)row[x];
    }
}

static pv_status check_input(pv_context *ctx, const char *op, const char *name, pcm_input in,
                             int dims)
{
    return dims == 2 ? pv_reg_check_image(ctx, op, name, in.image)
                     : pv_reg_check_volume(ctx, op, name, in.volume);
}

static pv_status check_size(pv_context *ctx, const char *op, const char *name, pcm_input in,
                            const int expected[3], int dims)
{
    int size[3];
    input_size(in, size);
    if (memcmp(size, expected, sizeof size) == 0)
        return PV_OK;
    if (dims == 2)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%d but the reference is %dx%d", op,
                       name, size[0], size[1], expected[0], expected[1]);
    return pv_fail(ctx, PV_ERR_INVALID, "%s: %s is %dx%dx%d but the reference is %dx%dx%d", op,
                   name, size[0], size[1], size[2], expected[0], expected[1], expected[2]);
}

/* The four inputs (moving_mask already resolved) and the result pointer. */
static pv_status check_args(pv_context *ctx, const char *op, int dims, const pcm_input in[4],
                            const pv_phasecorr_masked_params *params, const pv_shift *shift)
{
    static const char *const names[4] = {"reference", "moving", "reference_mask",
                                         "moving_mask"};
    pv_status status = pv_reg_check_ctx(ctx, op);
    for (int k = 0; status == PV_OK && k < 4; k++)
        status = check_input(ctx, op, names[k], in[k], dims);
    if (status != PV_OK)
        return status;
    int size[3];
    input_size(in[0], size);
    /* As phase correlation: a one-sample x axis has no shift to find, and
     * an OpenCL FFT engine may refuse its transform. */
    if (size[0] < 2)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: reference is %d sample(s) wide; masked phase correlation needs at "
                       "least 2 along x",
                       op, size[0]);
    for (int k = 1; status == PV_OK && k < 4; k++)
        status = check_size(ctx, op, names[k], in[k], size, dims);
    if (status == PV_OK && !shift)
        status = pv_fail(ctx, PV_ERR_INVALID, "%s: shift is NULL", op);
    if (status == PV_OK && params)
        status = pv_decl_check(ctx, op, &pv_phasecorr_masked_decl, params);
    return status;
}

/* One side's dense arrays and what the front end learns reading them. */
typedef struct pcm_side {
    float *values;   /* input less its masked mean, 0 outside the mask */
    float *mask;     /* 0 / 1 */
    size_t valid;    /* pixels in the mask */
    int finite;      /* input and mask hold no NaN / Inf */
    int textured;    /* the masked values are not all equal */
    double energy;   /* sum over the mask of (value - mean)^2 */
    pv_reg_masked device; /* a device-buffer call's: values and mask staged there */
} pcm_side;

/* One row's share of read_side's first pass. */
typedef struct row_stats {
    double sum;
    size_t valid;
    float lo, hi;
    int finite;
} row_stats;

/* Row r (= z * ny + y) of the input and of its mask into the side's
 * copies, the mask made 0 / 1, and the row's statistics over its mask. */
static row_stats read_row(pcm_input input, pcm_input mask, const int size[3], long r,
                          pcm_side *side)
{
    const size_t row = (size_t)size[0];
    const int y = (int)(r % size[1]), z = (int)(r / size[1]);
    float *v = side->values + (size_t)r * row, *m = side->mask + (size_t)r * row;
    row_stats st = {0.0, 0, INFINITY, -INFINITY, 1};
    input_row(input, y, z, v);
    input_row(mask, y, z, m);
    for (size_t x = 0; x < row; x++) {
        if (!isfinite(v[x]) || !isfinite(m[x]))
            st.finite = 0;
        m[x] = m[x] != 0.0f ? 1.0f : 0.0f;
        if (m[x] == 0.0f)
            continue;
        st.valid++;
        st.sum += v[x];
        st.lo = v[x] < st.lo ? v[x] : st.lo;
        st.hi = v[x] > st.hi ? v[x] : st.hi;
    }
    return st;
}

/* Row r centred on the masked mean and zeroed outside the mask; its
 * energy. */
static double centre_row(pcm_side *side, size_t row, long r, float mean)
{
    float *v = side->values + (size_t)r * row;
    const float *m = side->mask + (size_t)r * row;
    double energy = 0.0;
    for (size_t x = 0; x < row; x++) {
        const float c = m[x] != 0.0f ? v[x] - mean : 0.0f;
        v[x] = c;
        energy += (double)c * c;
    }
    return energy;
}

/* The side's finiteness and valid count refused as the host pass refuses
 * them. */
static pv_status check_side(pv_context *ctx, const char *op, const char *name,
                            const pcm_side *side)
{
    if (!side->finite)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: the %s or its mask contains NaN or Inf", op,
                       name);
    if (side->valid == 0)
        return pv_fail(ctx, PV_ERR_INVALID,
                       "%s: the %s's mask has no valid (non-zero) pixel", op, name);
    return PV_OK;
}

/* A device-buffer call's side: the passes run on the device
 * (lib/register/register_device.c), the copies stay there. */
static pv_status read_side_device(pv_context *ctx, const char *op, const char *name,
                                  pcm_input input, pcm_input mask, pcm_side *side)
{
    memset(side, 0, sizeof *side);
    pv_status status = pv_reg_device_masked(ctx, input.image, input.volume, mask.image,
                                            mask.volume, &side->device);
    side->finite = side->device.finite;
    side->valid = side->device.valid;
    side->textured = side->device.textured;
    side->energy = side->device.energy;
    side->values = side->device.values.data;
    side->mask = side->device.mask.data;
    return status == PV_OK ? check_side(ctx, op, name, side) : status;
}

/* The two passes run over rows in parallel (the call's CPU threads) and
 * their per-row results are added in row order, so the mean and the
 * energies do not depend on the number of threads. */
static pv_status read_side(pv_context *ctx, const char *op, const char *name, pcm_input input,
                           pcm_input mask, const int size[3], pcm_side *side)
{
    if (ctx->device_call)
        return read_side_device(ctx, op, name, input, mask, side);
    const size_t row = (size_t)size[0];
    const long rows = (long)size[1] * size[2];
    const int threads = pv_reg_threads(ctx);
    memset(side, 0, sizeof *side);
    side->values = malloc((size_t)rows * row * sizeof(float));
    side->mask = malloc((size_t)rows * row * sizeof(float));
    row_stats *stats = malloc((size_t)rows * sizeof *stats);
    double *energy = malloc((size_t)rows * sizeof *energy);
    if (!side->values || !side->mask || !stats || !energy) {
        free(stats);
        free(energy);
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: no memory for the %s's masked copy", op, name);
    }
#pragma omp parallel for num_threads(threads) schedule(static) if ((double)rows * row > 65536.0)
    for (long r = 0; r < rows; r++)
        stats[r] = read_row(input, mask, size, r, side);
    double sum = 0.0;
    float lo = INFINITY, hi = -INFINITY;
    side->finite = 1;
    for (long r = 0; r < rows; r++) {
        side->finite &= stats[r].finite;
        side->valid += stats[r].valid;
        sum += stats[r].sum;
        lo = stats[r].lo < lo ? stats[r].lo : lo;
        hi = stats[r].hi > hi ? stats[r].hi : hi;
    }
    pv_status status = check_side(ctx, op, name, side);
    if (status == PV_OK) {
        side->textured = lo < hi;
        const float mean = (float)(sum / (double)side->valid);
#pragma omp parallel for num_threads(threads) schedule(static) if ((double)rows * row > 65536.0)
        for (long r = 0; r < rows; r++)
            energy[r] = centre_row(side, row, r, mean);
        for (long r = 0; r < rows; r++)
            side->energy += energy[r];
    }
    free(stats);
    free(energy);
    return status;
}

static void free_side(pcm_side *side)
{
    if (side->device.values.ctx) { /* a device-buffer call's placeholders */
        pv_reg_copy_free(&side->device.values);
        pv_reg_copy_free(&side->device.mask);
        return;
    }
    free(side->values);
    free(side->mask);
}

static pv_status transform_size(pv_context *ctx, const char *op, const int size[3], int fft[3])
{
    size_t points = 1;
    for (int a = 0; a < 3; a++) {
        fft[a] = size[a] == 1 ? 1 : size[a] > INT32_MAX / 2 ? 0
                                                            : pv_fft_friendly_size(2LL * size[a] - 1);
        if (fft[a] == 0 || !pv_size_mul(points, (size_t)fft[a], &points) ||
            points > PV_PC_MAX_POINTS)
            return pv_fail(ctx, PV_ERR_INVALID,
                           "%s: the linear correlation of %dx%dx%d inputs needs more than 2^32 "
                           "transform points",
                           op, size[0], size[1], size[2]);
    }
    return PV_OK;
}

static pv_status crosscheck(pv_context *ctx, const char *op, const pv_pcm_job *job,
                            const pv_pcm_peak *peak)
{
    pv_oracle oracle;
    pv_pcm_peak ref;
    pv_oracle_begin(ctx, op, &oracle);
    pv_status status = pv_cpu_backend.reg->pc_masked(ctx, job, &ref);
    if (status == PV_OK &&
        (memcmp(ref.index, peak->index, sizeof ref.index) != 0 ||
         !(fabs((double)ref.value - peak->value) <= PV_TOL_PCM_PEAK)))
        status = pv_fail(ctx, PV_ERR_MISMATCH,
                         "%s cross-check: peak %g at (%d, %d, %d), the CPU's %g at (%d, %d, %d) "
                         "(tolerance %g)",
                         op, peak->value, peak->index[0], peak->index[1], peak->index[2],
                         ref.value, ref.index[0], ref.index[1], ref.index[2], PV_TOL_PCM_PEAK);
    return pv_oracle_end(ctx, &oracle, status, PV_ORACLE_COMPARED_BY_CALLER);
}

/* The masked correlation of the two read sides (inside the call's lock
 * and timing). */
static pv_status run(pv_context *ctx, const char *op, const int size[3], const pcm_side *ref,
                     const pcm_side *mov, double overlap_ratio, pv_shift *shift)
{
    pv_shift found = {0.0, 0.0, 0.0, 0.0, 0u};
    if (!ref->textured || !mov->textured) {
        found.flags = PV_REGISTER_NO_TEXTURE;
        *shift = found;
        return PV_OK;
    }
    pv_pcm_job job;
    memset(&job, 0, sizeof job);
    memcpy(job.size, size, sizeof job.size);
    pv_status status = transform_size(ctx, op, size, job.fft);
    if (status != PV_OK)
        return status;
    job.reference = ref->values;
    job.reference_mask = ref->mask;
    job.moving = mov->values;
    job.moving_mask = mov->mask;
    job.overlap_ratio = (float)overlap_ratio;
    job.reference_floor = (float)(PCM_FLOOR * ref->energy);
    job.moving_floor = (float)(PCM_FLOOR * mov->energy);
    pv_pcm_peak peak;
    status = ctx->ops->reg->pc_masked(ctx, &job, &peak);
    if (status == PV_OK && pv_crosscheck_wanted(ctx))
        status = crosscheck(ctx, op, &job, &peak);
    if (status != PV_OK)
        return status;
    double d[3];
    for (int a = 0; a < 3; a++)
        d[a] = peak.index[a] < size[a] ? peak.index[a] : peak.index[a] - job.fft[a];
    found.dx = d[0];
    found.dy = d[1];
    found.dz = d[2];
    found.peak = peak.value;
    *shift = found;
    return PV_OK;
}

static pv_status correlate_masked(pv_context *ctx, const char *op, int dims, pcm_input in[4],
                                  const pv_phasecorr_masked_params *params, pv_shift *shift)
{
    if (!input_present(in[3]))
        in[3] = in[2];
    pv_status status = check_args(ctx, op, dims, in, params, shift);
    if (status != PV_OK)
        return status;
    pv_phasecorr_masked_params resolved;
    if (params)
        resolved = *params;
    else
        pv_phasecorr_masked_params_default(&resolved);
    int size[3];
    input_size(in[0], size);
    pcm_side ref, mov;
    memset(&ref, 0, sizeof ref);
    memset(&mov, 0, sizeof mov);
    /* The call's time includes the masked copies, as phase correlation's
     * includes its conversions. */
    status = pv_call_begin(ctx);
    if (status == PV_OK)
        status = read_side(ctx, op, "reference", in[0], in[2], size, &ref);
    if (status == PV_OK)
        status = read_side(ctx, op, "moving input", in[1], in[3], size, &mov);
    if (status == PV_OK)
        status = run(ctx, op, size, &ref, &mov, resolved.overlap_ratio, shift);
    pv_call_end(ctx);
    free_side(&ref);
    free_side(&mov);
    return status;
}

pv_status pv_phase_correlate_masked(pv_context *ctx, const pv_image *reference,
                                    const pv_image *moving, const pv_image *reference_mask,
                                    const pv_image *moving_mask,
                                    const pv_phasecorr_masked_params *params, pv_shift *shift)
{
    pcm_input in[4] = {{reference, NULL}, {moving, NULL}, {reference_mask, NULL},
                       {moving_mask, NULL}};
    return correlate_masked(ctx, "phase_correlate_masked", 2, in, params, shift);
}

pv_status pv_phase_correlate_masked3d(pv_context *ctx, const pv_volume *reference,
                                      const pv_volume *moving, const pv_volume *reference_mask,
                                      const pv_volume *moving_mask,
                                      const pv_phasecorr_masked_params *params, pv_shift *shift)
{
    pcm_input in[4] = {{NULL, reference}, {NULL, moving}, {NULL, reference_mask},
                       {NULL, moving_mask}};
    return correlate_masked(ctx, "phase_correlate_masked3d", 3, in, params, shift);
}
