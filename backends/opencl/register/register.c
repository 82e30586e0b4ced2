/* OpenCL register module: host side of kernels/register.cl.
 *
 * A phase-correlation plan keeps on the device the reference's unit-phase
 * spectrum, its count of empty bins, the batch's transform buffers and the
 * reduction buffers, so a correlation costs one upload per mover, a
 * batched R2C, the cross-power kernel, a batched C2R and a single-pass
 * arg-max (64-bit atomics; two stages on devices without them) with a
 * tiny record kernel: one read of 8 words per mover is the only host
 * synchronization.  One-shot calls use transient plans whose buffers are
 * the context's scratch slots, and do not wait between the reference and
 * the mover.  FFTs go through fft.c (clFFT or VkFFT).  normxcorr2 and
 * its batch and masked forms are in ncc.c. */
#include "register_shared.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default register_defaults[] = {
    {"PC_WG", 256},           /* element-wise kernels                        */
    {"PC_PAD_WG_X", 32},      /* padding kernel work-group shape             */
    {"PC_PAD_WG_Y", 8},
    {"PC_REDUCE_WG", 256},    /* arg-max work-group size (power of two)      */
    {"PC_REDUCE_GROUPS", 1024}, /* arg-max groups per map (enough work items
                                 * in flight to stream a 256^3 map) */
    {"PC_REDUCE_ATOMIC", 1},  /* 1: single-pass arg-max when the device has
                               * cl_khr_int64_extended_atomics; 0: two stages */
    {"PC_DFT_WG", 64},        /* upsampled-DFT contraction work-group size   */
    {"NCC_SCAN_WG", 256},     /* integral-image row scan (power of two)      */
    {"NCC_COL_WG", 64},       /* integral-image column sums                  */
    {"NCC_WG_X", 16},         /* coefficient kernels' work-group shape (normxcorr2, masked) */
    {"NCC_WG_Y", 16},
};

const pv_cl_param_family pv_cl_params_register = {
    "register", register_defaults, sizeof register_defaults / sizeof register_defaults[0]};

#define PC_RECORD 8 /* words per mover: peak value, six neighbours, index */

typedef struct cl_pc_plan {
    pv_pc_geometry g;
    pv_cl_fft *fft;
    size_t input_count;  /* nx * ny * nz */
    size_t real_count;   /* transform grid points per mover */
    size_t complex_count;/* half-spectrum points per mover */
    int direct;          /* not centred, not padded: movers land in the transform input */
    int groups;          /* arg-max groups per map */
    int atomic_max;      /* single-pass arg-max (64-bit atomics) */
    cl_mem reference, staging, real, spectra, kept, windows, part_values, part_indices, records,
        peak_keys, empty;
    cl_uint *host_records;
} cl_pc_plan;

/* ================================================================ helpers */

static int param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "register", name, 1);
}

/* Drain the queue (keeping the first error) and count the FFTs' time. */
static pv_status finish(pv_context *ctx, pv_cl_fft *fft, pv_status status)
{
    status = pv_cl_finish_after(ctx, status);
    pv_cl_fft_collect(ctx, fft);
    return status;
}

static pv_status launch_1d(pv_context *ctx, const char *name, const kernel_arg *args, int count,
                           size_t items)
{
    size_t global[1] = {items}, local[1] = {(size_t)param(ctx, "PC_WG")};
    return pv_cl_run(ctx, "register", "register", name, args, count, 1, global, local);
}

/* Copy a possibly strided volume densely to buffer at byte offset. */
static pv_status upload_volume_at(pv_context *ctx, cl_mem buffer, size_t offset,
                                  const pv_volume *v)
{
    size_t row = (size_t)v->nx, count = row * v->ny * v->nz, at;
    cl_mem caller;
    /* u16: 16 bits uploaded, converted on the device; a caller's buffer
     * (a device-buffer call): copied on the device with its pitches. */
    if (v->type == PV_VOLUME_U16 || pv_cl_bound_buffer(ctx, v->data, &caller, &at))
        return pv_cl_write_volume_at(ctx, buffer, offset / sizeof(float), v);
    if (v->stride_y == v->nx && (v->nz == 1 || v->stride_z == (ptrdiff_t)row * v->ny))
        return pv_cl_write(ctx, buffer, offset, count * sizeof(float), v->data);
    float *dense = malloc(count * sizeof *dense);
    if (!dense)
        return pv_fail(ctx, PV_ERR_NOMEM, "no memory to pack a %dx%dx%d volume for upload",
                       v->nx, v->ny, v->nz);
    for (int z = 0; z < v->nz; z++)
        for (int y = 0; y < v->ny; y++)
            memcpy(dense + ((size_t)z * v->ny + y) * row, v->data + z * v->stride_z + y * v->stride_y,
                   row * sizeof(float));
    pv_status status = pv_cl_write(ctx, buffer, offset, count * sizeof(float), dense);
    free(dense);
    return status;
}

/* dst[dst_offset ..] <- src[src_offset ..] less mean, padded to the grid
 * fft and weighted by the windows when windowed. */
static pv_status pad_into(pv_context *ctx, const pad_job *j)
{
    cl_int n[6] = {j->size[0], j->size[1], j->size[2], j->fft[0], j->fft[1], j->fft[2]};
    kernel_arg args[] = {
        {sizeof j->src, &j->src}, {sizeof j->src_offset, &j->src_offset},
        {sizeof j->dst, &j->dst}, {sizeof j->dst_offset, &j->dst_offset},
        {sizeof n[0], &n[0]},     {sizeof n[1], &n[1]}, {sizeof n[2], &n[2]},
        {sizeof n[3], &n[3]},     {sizeof n[4], &n[4]}, {sizeof n[5], &n[5]},
        {sizeof j->mean, &j->mean}, {sizeof j->windows, &j->windows},
        {sizeof j->windowed, &j->windowed}};
    size_t global[3] = {(size_t)j->fft[0], (size_t)j->fft[1], (size_t)j->fft[2]};
    size_t local[3] = {(size_t)param(ctx, "PC_PAD_WG_X"), (size_t)param(ctx, "PC_PAD_WG_Y"), 1};
    return pv_cl_run(ctx, "register", "register", "pc_pad", args, PV_CL_ARG_COUNT(args), 3, global,
                     local);
}

/* ========================================================== plan buffers */

/* Transient plans borrow the context's scratch slots; others own theirs. */
static pv_status plan_buffer(pv_context *ctx, const cl_pc_plan *p, const char *slot, size_t bytes,
                             cl_mem *out)
{
    if (p->g.transient)
        return pv_cl_scratch(ctx, slot, bytes, out);
    return pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, out);
}

static void release_buffers(cl_pc_plan *p)
{
    if (p->g.transient)
        return;
    cl_mem *owned[] = {&p->reference, &p->staging, &p->real, &p->spectra, &p->kept,
                       &p->windows, &p->part_values, &p->part_indices, &p->records,
                       &p->peak_keys, &p->empty};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (!(p->direct && owned[i] == &p->staging))
            pv_cl_release(owned[i]);
}

/* Frees a plan, also one whose set-up stopped part way. */
static void discard_plan(pv_context *ctx, void *plan)
{
    cl_pc_plan *p = plan;
    (void)ctx;
    if (!p)
        return;
    release_buffers(p);
    pv_cl_fft_release(p->fft);
    free(p->host_records);
    free(p);
}

static pv_status upload_windows(pv_context *ctx, cl_pc_plan *p)
{
    size_t count = (size_t)p->g.size[0] + p->g.size[1] + p->g.size[2];
    pv_status status = plan_buffer(ctx, p, "pc.windows", count * sizeof(float), &p->windows);
    if (status != PV_OK || !p->g.window[0])
        return status;
    size_t at = 0;
    for (int a = 0; status == PV_OK && a < 3; a++) {
        status = pv_cl_write(ctx, p->windows, at * sizeof(float),
                             (size_t)p->g.size[a] * sizeof(float), p->g.window[a]);
        at += (size_t)p->g.size[a];
    }
    return status;
}

static pv_status transform_buffers(pv_context *ctx, cl_pc_plan *p)
{
    size_t batch = (size_t)p->g.batch, spectrum = p->complex_count * 2 * sizeof(float);
    pv_status status = plan_buffer(ctx, p, "pc.reference", spectrum, &p->reference);
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.real", batch * p->real_count * sizeof(float), &p->real);
    if (status == PV_OK && !p->direct)
        status = plan_buffer(ctx, p, "pc.staging", batch * p->input_count * sizeof(float),
                             &p->staging);
    if (status == PV_OK && p->direct)
        p->staging = p->real;
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.spectra", batch * spectrum, &p->spectra);
    if (status == PV_OK && p->g.keep_spectra)
        status = plan_buffer(ctx, p, "pc.kept", batch * spectrum, &p->kept);
    return status;
}

static pv_status reduction_buffers(pv_context *ctx, cl_pc_plan *p)
{
    size_t batch = (size_t)p->g.batch, parts = batch * (size_t)p->groups;
    pv_status status = plan_buffer(ctx, p, "pc.part_values", parts * sizeof(float),
                                   &p->part_values);
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.part_indices", parts * sizeof(cl_uint),
                             &p->part_indices);
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.records", batch * PC_RECORD * sizeof(cl_uint),
                             &p->records);
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.peak_keys", batch * sizeof(cl_ulong), &p->peak_keys);
    if (status == PV_OK)
        status = plan_buffer(ctx, p, "pc.empty", sizeof(cl_int), &p->empty);
    p->host_records = malloc(batch * PC_RECORD * sizeof(cl_uint));
    if (status == PV_OK && !p->host_records)
        status = pv_fail(ctx, PV_ERR_NOMEM, "phase correlation plan: out of memory");
    return status;
}

/* The single-pass arg-max needs 64-bit atomic max (an OpenCL 1.2
 * extension); the launch parameter can turn it off for comparison. */
static int has_atomic_max(pv_context *ctx)
{
    char extensions[8192] = "";
    if (!param(ctx, "PC_REDUCE_ATOMIC") ||
        clGetDeviceInfo(pv_cl_device(ctx), CL_DEVICE_EXTENSIONS, sizeof extensions - 1,
                        extensions, NULL) != CL_SUCCESS)
        return 0;
    return strstr(extensions, "cl_khr_int64_extended_atomics") != NULL;
}

static int reduction_groups(pv_context *ctx, size_t points)
{
    size_t per_group = (size_t)param(ctx, "PC_REDUCE_WG");
    size_t needed = (points + per_group - 1) / per_group;
    size_t most = (size_t)param(ctx, "PC_REDUCE_GROUPS");
    return (int)(needed < most ? (needed ? needed : 1) : most);
}

static pv_status pv_cl_pc_create(pv_context *ctx, const pv_pc_geometry *geometry, void **plan)
{
    cl_pc_plan *p = pv_plan_new(ctx, sizeof *p, "phase correlation plan");
    if (!p)
        return PV_ERR_NOMEM;
    p->g = *geometry;
    p->input_count = (size_t)geometry->size[0] * geometry->size[1] * geometry->size[2];
    p->direct = !geometry->centered && memcmp(geometry->size, geometry->fft,
                                              sizeof geometry->size) == 0;
    pv_status status = pv_cl_fft_acquire(ctx, geometry->fft, geometry->batch, &p->fft);
    if (status == PV_OK) {
        p->real_count = pv_cl_fft_real_count(p->fft);
        p->complex_count = pv_cl_fft_complex_count(p->fft);
        /* The element-wise kernels index a whole batch with 32-bit integers. */
        if (p->real_count * (size_t)geometry->batch > UINT32_MAX)
            status = pv_fail(ctx, PV_ERR_UNSUPPORTED,
                             "phase correlation: a batch of %d transforms of %zu points "
                             "exceeds 2^32 points; use a smaller max_batch",
                             geometry->batch, p->real_count);
    }
    if (status == PV_OK) {
        p->groups = reduction_groups(ctx, p->real_count);
        p->atomic_max = has_atomic_max(ctx);
        status = transform_buffers(ctx, p);
    }
    if (status == PV_OK)
        status = reduction_buffers(ctx, p);
    if (status == PV_OK)
        status = upload_windows(ctx, p);
    status = finish(ctx, p->fft, status);
    return pv_plan_hand_over(ctx, status, p, discard_plan, plan);
}

/* A transient plan's call may have stopped between its reference and its
 * mover: drain what it enqueued so its time stays in this call. */
static void pv_cl_pc_destroy(pv_context *ctx, void *plan)
{
    cl_pc_plan *p = plan;
    if (p && p->g.transient)
        (void)finish(ctx, p->fft, PV_OK);
    discard_plan(ctx, p);
}

static pv_status pv_cl_pc_time_fft(pv_context *ctx, void *plan)
{
    cl_pc_plan *p = plan;
    pv_status status = pv_cl_fft_forward(ctx, p->fft, p->real, p->spectra);
    if (status == PV_OK)
        status = pv_cl_fft_inverse(ctx, p->fft, p->spectra, p->real);
    return finish(ctx, p->fft, status);
}

/* ============================================================ correlation */

/* Movers (or the reference) into the first `count` transform inputs. */
static pv_status load_inputs(pv_context *ctx, cl_pc_plan *p, const pv_volume *volumes,
                             const float *means, int count)
{
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++)
        status = upload_volume_at(ctx, p->staging, (size_t)i * p->input_count * sizeof(float),
                                  &volumes[i]);
    for (int i = 0; status == PV_OK && !p->direct && i < count; i++) {
        pad_job job = {p->staging, p->real, (cl_ulong)i * p->input_count,
                       (cl_ulong)i * p->real_count, p->g.size, p->g.fft, means[i], p->windows,
                       p->g.window[0] != NULL};
        status = pad_into(ctx, &job);
    }
    return status;
}

/* Unit phases of slot 0's spectrum into the reference, counting the empty
 * bins into p->empty. */
static pv_status reference_phases(pv_context *ctx, cl_pc_plan *p, float floor)
{
    cl_int zero = 0, nyquist = p->g.fft[0] % 2 == 0 ? p->g.fft[0] / 2 : -1;
    cl_uint count = (cl_uint)p->complex_count, kx = (cl_uint)(p->g.fft[0] / 2 + 1);
    cl_float limit = floor > FLT_MIN ? floor : FLT_MIN;
    kernel_arg args[] = {{sizeof p->spectra, &p->spectra}, {sizeof p->reference, &p->reference},
                         {sizeof count, &count}, {sizeof kx, &kx}, {sizeof nyquist, &nyquist},
                         {sizeof limit, &limit}, {sizeof p->empty, &p->empty}};
    pv_status status = pv_cl_write(ctx, p->empty, 0, sizeof zero, &zero);
    if (status == PV_OK)
        status = launch_1d(ctx, "pc_unit_phase", args, PV_CL_ARG_COUNT(args), count);
    return status;
}

/* The empty-bin count stays on the device (pc_cross_power reads it), so a
 * one-shot call goes on to its mover without waiting; a plan's reference
 * is finished here, so that its errors and time belong to this call. */
static pv_status pv_cl_pc_reference(pv_context *ctx, void *plan, const pv_volume *reference,
                             float mean, float floor)
{
    cl_pc_plan *p = plan;
    /* The batched transform also runs over the other slots; only slot 0 is used. */
    pv_status status = load_inputs(ctx, p, reference, &mean, 1);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, p->fft, p->real, p->spectra);
    if (status == PV_OK)
        status = reference_phases(ctx, p, floor);
    if (p->g.transient && status == PV_OK)
        return PV_OK;
    return finish(ctx, p->fft, status);
}

static pv_status cross_power(pv_context *ctx, cl_pc_plan *p, int count)
{
    cl_uint per = (cl_uint)p->complex_count, total = per * (cl_uint)count;
    cl_uint points = (cl_uint)p->real_count, maps = (cl_uint)count;
    cl_int keep = p->kept != NULL;
    cl_mem kept = keep ? p->kept : p->spectra;
    kernel_arg args[] = {{sizeof p->spectra, &p->spectra}, {sizeof p->reference, &p->reference},
                         {sizeof kept, &kept},           {sizeof keep, &keep},
                         {sizeof per, &per},             {sizeof total, &total},
                         {sizeof p->empty, &p->empty},   {sizeof points, &points},
                         {sizeof p->peak_keys, &p->peak_keys}, {sizeof maps, &maps}};
    /* Enough items to clear every map's key even for tiny spectra. */
    return launch_1d(ctx, "pc_cross_power", args, PV_CL_ARG_COUNT(args),
                     total > maps ? total : maps);
}

/* Two stages: per-group partial maxima, then one group per map. */
static pv_status max_two_stage(pv_context *ctx, cl_pc_plan *p, int count)
{
    cl_uint points = (cl_uint)p->real_count, groups = (cl_uint)p->groups;
    cl_int n[3] = {p->g.fft[0], p->g.fft[1], p->g.fft[2]};
    size_t wg = (size_t)param(ctx, "PC_REDUCE_WG");
    size_t local[2] = {wg, 1};
    size_t partial[2] = {groups * wg, (size_t)count}, final[2] = {wg, (size_t)count};
    kernel_arg first[] = {{sizeof p->real, &p->real}, {sizeof points, &points},
                          {sizeof groups, &groups}, {sizeof p->part_values, &p->part_values},
                          {sizeof p->part_indices, &p->part_indices}};
    kernel_arg second[] = {{sizeof p->part_values, &p->part_values},
                           {sizeof p->part_indices, &p->part_indices},
                           {sizeof groups, &groups}, {sizeof p->real, &p->real},
                           {sizeof points, &points}, {sizeof n[0], &n[0]},
                           {sizeof n[1], &n[1]}, {sizeof n[2], &n[2]},
                           {sizeof p->records, &p->records}};
    pv_status status = pv_cl_run(ctx, "register", "register", "argmax_partial", first,
                                 PV_CL_ARG_COUNT(first), 2,
                                 partial, local);
    if (status == PV_OK)
        status = pv_cl_run(ctx, "register", "register", "pc_max_final", second,
                           PV_CL_ARG_COUNT(second), 2, final, local);
    return status;
}

/* One pass with a 64-bit atomic max per group, then one record per map. */
static pv_status max_atomic(pv_context *ctx, cl_pc_plan *p, int count)
{
    cl_uint points = (cl_uint)p->real_count, groups = (cl_uint)p->groups, maps = (cl_uint)count;
    cl_int n[3] = {p->g.fft[0], p->g.fft[1], p->g.fft[2]};
    size_t wg = (size_t)param(ctx, "PC_REDUCE_WG");
    size_t local[2] = {wg, 1}, global[2] = {groups * wg, (size_t)count};
    size_t record_global[1] = {(size_t)count};
    kernel_arg reduce[] = {{sizeof p->real, &p->real}, {sizeof points, &points},
                           {sizeof groups, &groups}, {sizeof p->peak_keys, &p->peak_keys}};
    kernel_arg record[] = {{sizeof p->peak_keys, &p->peak_keys}, {sizeof p->real, &p->real},
                           {sizeof points, &points}, {sizeof maps, &maps},
                           {sizeof n[0], &n[0]}, {sizeof n[1], &n[1]}, {sizeof n[2], &n[2]},
                           {sizeof p->records, &p->records}};
    pv_status status = pv_cl_run(ctx, "register", "register", "pc_max_atomic", reduce,
                                 PV_CL_ARG_COUNT(reduce), 2,
                                 global, local);
    if (status == PV_OK)
        status = pv_cl_run(ctx, "register", "register", "pc_peak_record", record,
                           PV_CL_ARG_COUNT(record), 1,
                           record_global, NULL);
    return status;
}

static pv_status find_peaks(pv_context *ctx, cl_pc_plan *p, int count)
{
    pv_status status = p->atomic_max ? max_atomic(ctx, p, count) : max_two_stage(ctx, p, count);
    if (status == PV_OK)
        status = pv_cl_read(ctx, p->records, 0, (size_t)count * PC_RECORD * sizeof(cl_uint),
                            p->host_records);
    return status;
}

static float record_float(cl_uint bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static void unpack_peak(const cl_pc_plan *p, int i, pv_pc_peak *peak)
{
    const cl_uint *record = p->host_records + (size_t)i * PC_RECORD;
    const size_t at = record[7], px = (size_t)p->g.fft[0], py = (size_t)p->g.fft[1];
    peak->value = record_float(record[0]);
    peak->index[0] = (int)(at % px);
    peak->index[1] = (int)(at / px % py);
    peak->index[2] = (int)(at / (px * py));
    for (int a = 0; a < 3; a++) {
        peak->neighbors[a][0] = record_float(record[1 + 2 * a]);
        peak->neighbors[a][1] = record_float(record[2 + 2 * a]);
    }
}

static pv_status pv_cl_pc_correlate(pv_context *ctx, void *plan, const pv_volume *movers,
                             const float *means, int count, pv_pc_peak *peaks)
{
    cl_pc_plan *p = plan;
    pv_status status = load_inputs(ctx, p, movers, means, count);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, p->fft, p->real, p->spectra);
    if (status == PV_OK)
        status = cross_power(ctx, p, count);
    if (status == PV_OK)
        status = pv_cl_fft_inverse(ctx, p->fft, p->spectra, p->real);
    if (status == PV_OK)
        status = find_peaks(ctx, p, count);
    status = finish(ctx, p->fft, status);
    for (int i = 0; status == PV_OK && i < count; i++)
        unpack_peak(p, i, &peaks[i]);
    return status;
}

/* ========================================================= upsampled DFT */

static pv_status contract(pv_context *ctx, cl_mem in, cl_ulong in_offset, cl_uint outer,
                          cl_int stored, cl_mem table, cl_int count, cl_mem out)
{
    kernel_arg args[] = {{sizeof in, &in},         {sizeof in_offset, &in_offset},
                         {sizeof outer, &outer},   {sizeof stored, &stored},
                         {sizeof table, &table},   {sizeof count, &count},
                         {sizeof out, &out}};
    size_t global[2] = {outer, (size_t)count}, local[2] = {(size_t)param(ctx, "PC_DFT_WG"), 1};
    return pv_cl_run(ctx, "register", "register", "pc_dft_contract", args, PV_CL_ARG_COUNT(args),
                     2, global, local);
}

static pv_status upload_tables(pv_context *ctx, const cl_pc_plan *p, const pv_dft_window *window,
                               cl_mem tables[3])
{
    static const char *const slots[3] = {"pc.dft.tx", "pc.dft.ty", "pc.dft.tz"};
    pv_status status = PV_OK;
    for (int a = 0; status == PV_OK && a < 3; a++) {
        size_t stored = a == 0 ? (size_t)p->g.fft[0] / 2 + 1 : (size_t)p->g.fft[a];
        size_t bytes = stored * (size_t)window->count[a] * 2 * sizeof(float);
        status = pv_cl_scratch(ctx, slots[a], bytes, &tables[a]);
        if (status == PV_OK)
            status = pv_cl_write(ctx, tables[a], 0, bytes, window->table[a]);
    }
    return status;
}

static pv_status read_real_parts(pv_context *ctx, cl_mem buffer, size_t count, float *values)
{
    float *complex_values = malloc(2 * count * sizeof *complex_values);
    if (!complex_values)
        return pv_fail(ctx, PV_ERR_NOMEM, "upsampled DFT: out of memory");
    pv_status status = pv_cl_read(ctx, buffer, 0, 2 * count * sizeof(float), complex_values);
    for (size_t i = 0; status == PV_OK && i < count; i++)
        values[i] = complex_values[2 * i];
    free(complex_values);
    return status;
}

static pv_status pv_cl_pc_upsample(pv_context *ctx, void *plan, int mover, const pv_dft_window *window,
                            float *values)
{
    cl_pc_plan *p = plan;
    const int *n = p->g.fft, *c = window->count;
    size_t a_count = (size_t)c[0] * n[2] * n[1], b_count = (size_t)c[1] * c[0] * n[2],
           v_count = (size_t)c[2] * c[1] * c[0];
    cl_mem tables[3], a, b, v;
    pv_status status = upload_tables(ctx, p, window, tables);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "pc.dft.a", 2 * a_count * sizeof(float), &a);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "pc.dft.b", 2 * b_count * sizeof(float), &b);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "pc.dft.v", 2 * v_count * sizeof(float), &v);
    if (status == PV_OK)
        status = contract(ctx, p->kept, (cl_ulong)mover * p->complex_count,
                          (cl_uint)((size_t)n[2] * n[1]), n[0] / 2 + 1, tables[0], c[0], a);
    if (status == PV_OK)
        status = contract(ctx, a, 0, (cl_uint)((size_t)c[0] * n[2]), n[1], tables[1], c[1], b);
    if (status == PV_OK)
        status = contract(ctx, b, 0, (cl_uint)((size_t)c[1] * c[0]), n[2], tables[2], c[2], v);
    if (status == PV_OK)
        status = read_real_parts(ctx, v, v_count, values);
    return finish(ctx, NULL, status);
}

/* =================================================================== NCC */

/* normxcorr2, its batch and its masked form live in ncc.c. */
static pv_status pv_cl_normxcorr2(pv_context *ctx, const pv_ncc_job *job, pv_image *map)
{
    return pv_cl_ncc(ctx, job, map);
}

static pv_status pv_cl_normxcorr2_batch(pv_context *ctx, const pv_ncc_batch_job *job,
                                        pv_image *maps)
{
    return pv_cl_ncc_batch(ctx, job, maps);
}

static pv_status pv_cl_normxcorr2_masked(pv_context *ctx, const pv_ncc_masked_job *job,
                                         pv_image *map)
{
    return pv_cl_ncc_masked(ctx, job, map);
}

/* ============================================== masked phase correlation */

#define PCM_MAPS 6

typedef struct pcm_buffers {
    cl_mem staging, maps, spectra, part_values, part_indices, record;
} pcm_buffers;

static pv_status pcm_scratch(pv_context *ctx, const pv_pcm_job *job, const pv_cl_fft *fft,
                             int groups, pcm_buffers *b)
{
    size_t input = (size_t)job->size[0] * job->size[1] * job->size[2] * sizeof(float);
    size_t real = pv_cl_fft_real_count(fft) * sizeof(float);
    size_t spec = pv_cl_fft_complex_count(fft) * 2 * sizeof(float);
    struct { const char *slot; size_t bytes; cl_mem *buffer; } wanted[] = {
        {"pcm.staging", 4 * input, &b->staging},
        {"pcm.maps", PCM_MAPS * real, &b->maps},
        {"pcm.spectra", PCM_MAPS * spec, &b->spectra},
        {"pcm.part_values", (size_t)groups * sizeof(cl_float), &b->part_values},
        {"pcm.part_indices", (size_t)groups * sizeof(cl_uint), &b->part_indices},
        {"pcm.record", 4 * sizeof(cl_uint), &b->record}};
    pv_status status = PV_OK;
    for (size_t i = 0; status == PV_OK && i < sizeof wanted / sizeof wanted[0]; i++)
        status = pv_cl_scratch(ctx, wanted[i].slot, wanted[i].bytes, wanted[i].buffer);
    return status;
}

static pv_status pcm_load(pv_context *ctx, const pv_pcm_job *job, pcm_buffers *b)
{
    size_t input = (size_t)job->size[0] * job->size[1] * job->size[2] * sizeof(float);
    const float *parts[4] = {job->reference, job->reference_mask, job->moving, job->moving_mask};
    pv_status status = PV_OK;
    for (int k = 0; status == PV_OK && k < 4; k++) {
        cl_mem staged;
        size_t at;
        /* a device-buffer call's part, made on the device: copied there */
        const pv_volume dense = pv_volume_wrap((float *)parts[k], job->size[0], job->size[1],
                                               job->size[2]);
        status = pv_cl_bound_buffer(ctx, parts[k], &staged, &at)
                     ? pv_cl_write_volume_at(ctx, b->staging, (size_t)k * input / sizeof(float),
                                             &dense)
                     : pv_cl_write(ctx, b->staging, (size_t)k * input, input, parts[k]);
    }
    if (status != PV_OK)
        return status;
    cl_int n[6] = {job->size[0], job->size[1], job->size[2], job->fft[0], job->fft[1], job->fft[2]};
    kernel_arg args[] = {PV_CL_ARG(b->staging), PV_CL_ARG(b->maps), PV_CL_ARG(n[0]),
                         PV_CL_ARG(n[1]),       PV_CL_ARG(n[2]),    PV_CL_ARG(n[3]),
                         PV_CL_ARG(n[4]),       PV_CL_ARG(n[5])};
    size_t global[3] = {(size_t)n[3], (size_t)n[4], (size_t)n[5]};
    size_t local[3] = {(size_t)param(ctx, "PC_PAD_WG_X"), (size_t)param(ctx, "PC_PAD_WG_Y"), 1};
    return pv_cl_run(ctx, "register", "register", "pcm_load", args, PV_CL_ARG_COUNT(args), 3,
                     global, local);
}

/* The arg-max of slot 0 of the maps into record[slot], record[slot + 1]. */
static pv_status pcm_argmax(pv_context *ctx, pcm_buffers *b, cl_uint points, cl_uint groups,
                            cl_uint slot)
{
    size_t wg = (size_t)param(ctx, "PC_REDUCE_WG");
    size_t local[2] = {wg, 1}, partial[2] = {groups * wg, 1}, final[1] = {wg};
    kernel_arg first[] = {PV_CL_ARG(b->maps), PV_CL_ARG(points), PV_CL_ARG(groups),
                          PV_CL_ARG(b->part_values), PV_CL_ARG(b->part_indices)};
    kernel_arg second[] = {PV_CL_ARG(b->part_values), PV_CL_ARG(b->part_indices),
                           PV_CL_ARG(groups), PV_CL_ARG(b->record), PV_CL_ARG(slot)};
    pv_status status = pv_cl_run(ctx, "register", "register", "argmax_partial", first,
                                 PV_CL_ARG_COUNT(first), 2, partial, local);
    if (status == PV_OK)
        status = pv_cl_run(ctx, "register", "register", "pcm_max_final", second,
                           PV_CL_ARG_COUNT(second), 1, final, local);
    return status;
}

static pv_status pcm_correlate(pv_context *ctx, const pv_pcm_job *job, pv_cl_fft *fft,
                               pcm_buffers *b, cl_uint groups)
{
    cl_uint points = (cl_uint)pv_cl_fft_real_count(fft);
    cl_uint bins = (cl_uint)pv_cl_fft_complex_count(fft);
    cl_float scale = (cl_float)(1.0 / (double)points);
    cl_float ratio = job->overlap_ratio, mfloor = job->moving_floor,
             ffloor = job->reference_floor;
    kernel_arg products[] = {PV_CL_ARG(b->spectra), PV_CL_ARG(bins), PV_CL_ARG(scale)};
    kernel_arg scores[] = {PV_CL_ARG(b->maps), PV_CL_ARG(points), PV_CL_ARG(b->record),
                           PV_CL_ARG(ratio),   PV_CL_ARG(mfloor), PV_CL_ARG(ffloor)};
    pv_status status = pcm_load(ctx, job, b);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, fft, b->maps, b->spectra);
    if (status == PV_OK)
        status = launch_1d(ctx, "pcm_products", products, PV_CL_ARG_COUNT(products), bins);
    if (status == PV_OK)
        status = pv_cl_fft_inverse(ctx, fft, b->spectra, b->maps);
    if (status == PV_OK)
        status = pcm_argmax(ctx, b, points, groups, 0);
    if (status == PV_OK)
        status = launch_1d(ctx, "pcm_scores", scores, PV_CL_ARG_COUNT(scores), points);
    if (status == PV_OK)
        status = pcm_argmax(ctx, b, points, groups, 2);
    return status;
}

static pv_status pv_cl_pc_masked(pv_context *ctx, const pv_pcm_job *job, pv_pcm_peak *peak)
{
    pv_cl_fft *fft = NULL;
    pcm_buffers b;
    cl_uint record[4] = {0, 0, 0, 0};
    pv_status status = pv_cl_fft_acquire(ctx, job->fft, PCM_MAPS, &fft);
    if (status != PV_OK)
        return status;
    int groups = reduction_groups(ctx, pv_cl_fft_real_count(fft));
    status = pcm_scratch(ctx, job, fft, groups, &b);
    if (status == PV_OK)
        status = pcm_correlate(ctx, job, fft, &b, (cl_uint)groups);
    if (status == PV_OK)
        status = pv_cl_read(ctx, b.record, 0, sizeof record, record);
    status = finish(ctx, fft, status);
    pv_cl_fft_release(fft);
    if (status != PV_OK)
        return status;
    const cl_uint px = (cl_uint)job->fft[0], py = (cl_uint)job->fft[1], at = record[3];
    pv_pcm_peak found;
    found.max_count = rintf(record_float(record[0]));
    found.value = record_float(record[2]);
    found.index[0] = (int)(at % px);
    found.index[1] = (int)(at / px % py);
    found.index[2] = (int)(at / (px * py));
    *peak = found;
    return PV_OK;
}

/* ================================================ shared with ncc.c */

int pv_cl_register_param(pv_context *ctx, const char *name)
{
    return param(ctx, name);
}

pv_status pv_cl_register_finish(pv_context *ctx, pv_cl_fft *fft, pv_status status)
{
    return finish(ctx, fft, status);
}

pv_status pv_cl_register_launch_1d(pv_context *ctx, const char *name, const kernel_arg *args,
                                   int count, size_t items)
{
    return launch_1d(ctx, name, args, count, items);
}

pv_status pv_cl_register_pad(pv_context *ctx, const pad_job *job)
{
    return pad_into(ctx, job);
}

const pv_register_ops pv_cl_register_ops = {PV_REGISTER_SLOTS(PV_OPS_BIND, pv_cl_)};
