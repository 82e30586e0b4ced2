/* OpenCL octreg module: host side of kernels/octreg.cl.
 *
 * A plan keeps on the device the current volume (the reference while the
 * plan is made, then each target), its per-plane statistics, the unit-phase
 * spectra of the whole reference and of every reference sub-volume, the 2D
 * spectra of the target's planes, the batch buffers of the coarse and fine
 * transforms and the reconstruction accumulators.  After a target's upload
 * only small arrays cross the bus: its plane statistics, the stripes' and
 * the planes' peak records (7 floats and an index each) and the sub-volume
 * choice (an int per plane).  Batches are enqueued back to back; the host
 * waits once per step.  FFTs go through fft.c.  With OCT_FINE_2D the
 * sub-volume references are stored with their ky axis already inverted, and
 * the fine maps come from 2D inverse transforms (docs/octreg.md). */
#include "../opencl.h"
#include "../fft/fft.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

static const pv_cl_param_default octreg_defaults[] = {
    {"OCT_WG", 256},         /* element-wise kernels                      */
    {"OCT_PAD_WG_X", 32},    /* padding and gather work-group shape       */
    {"OCT_PAD_WG_Y", 8},
    {"OCT_STATS_WG", 256},   /* per-plane statistics (power of two)       */
    {"OCT_REDUCE_WG", 256},  /* arg-max work-group size (power of two)    */
    {"OCT_REDUCE_GROUPS", 2048}, /* arg-max first-stage groups per launch,
                                  * spread over the batch's maps: enough to
                                  * fill a large GPU several times over
                                  * whether the batch holds one map or many */
    {"OCT_FINE_2D", 1},      /* 1: fine maps by 2D inverse transforms of
                              * the ky-inverted references (docs/octreg.md);
                              * 0: by 3D inverse transforms */
};

const pv_cl_param_family pv_cl_params_octreg = {
    "octreg", octreg_defaults, sizeof octreg_defaults / sizeof octreg_defaults[0]};

#define OCT_RECORD 7  /* peak value and six neighbours */
#define OCT_STATS 5   /* mean, energy, lo, hi, finite */

typedef struct cl_oct_plan {
    pv_oct_geometry g;
    pv_cl_fft *fft[PV_OCT_TRANSFORMS];
    pv_cl_fft *fine_2d;         /* fine maps' 2D inverse (OCT_FINE_2D), or NULL */
    size_t half_points[PV_OCT_TRANSFORMS];  /* half-spectrum points */
    size_t grid_points[PV_OCT_TRANSFORMS];  /* transform grid points */
    int groups;                 /* first-stage arg-max groups per launch */
    int records;                /* record slots: max(planes, stripes) */
    cl_mem volume, stats, plane_input, target, ref_full, ref_sub;
    cl_mem full_input, full_spectra, sub_input, sub_spectra;
    cl_mem sub_index, starts, twiddle, part_values, part_indices, peaks, peak_indices;
    cl_mem sum, weight;         /* reconstruction accumulators (made on use) */
    float *host_records;    /* one allocation, also holding the two below */
    float *host_stats;
    cl_uint *host_indices;
} cl_oct_plan;

/* ================================================================ helpers */

/* The runtime's kernel argument (runtime.h), under this file's short name. */
typedef pv_cl_kernel_arg kernel_arg;

#define ARG(x) {sizeof(x), &(x)}

static int param(pv_context *ctx, const char *name)
{
    return pv_cl_param(ctx, "octreg", name, 1);
}

/* 1D over items x `rows` (the second dimension indexes batch slots). */
static pv_status launch_rows(pv_context *ctx, const char *name, const kernel_arg *args, int count,
                             size_t items, size_t rows)
{
    size_t global[2] = {items, rows}, local[2] = {(size_t)param(ctx, "OCT_WG"), 1};
    return pv_cl_run(ctx, "octreg", "octreg", name, args, count, 2, global, local);
}

static pv_status launch_grid(pv_context *ctx, const char *name, const kernel_arg *args,
                             int count, size_t nx, size_t ny, size_t nz)
{
    size_t global[3] = {nx, ny, nz};
    size_t local[3] = {(size_t)param(ctx, "OCT_PAD_WG_X"), (size_t)param(ctx, "OCT_PAD_WG_Y"), 1};
    return pv_cl_run(ctx, "octreg", "octreg", name, args, count, 3, global, local);
}

/* Drain the queue (keeping the first error) and count the FFTs' time. */
static pv_status finish(pv_context *ctx, cl_oct_plan *p, pv_status status)
{
    status = pv_cl_finish_after(ctx, status);
    for (int t = 0; t < PV_OCT_TRANSFORMS; t++)
        if (p->fft[t])
            pv_cl_fft_collect(ctx, p->fft[t]);
    if (p->fine_2d)
        pv_cl_fft_collect(ctx, p->fine_2d);
    return status;
}

static size_t plane_points(const cl_oct_plan *p)
{
    return (size_t)p->g.size[0] * (size_t)p->g.size[1];
}

/* ========================================================== plan lifetime */

static void pv_cl_oct_destroy(pv_context *ctx, void *plan)
{
    cl_oct_plan *p = plan;
    (void)ctx;
    cl_mem *owned[] = {&p->volume, &p->stats, &p->plane_input, &p->target, &p->ref_full,
                       &p->ref_sub, &p->full_input, &p->full_spectra, &p->sub_input,
                       &p->sub_spectra, &p->sub_index, &p->starts, &p->twiddle,
                       &p->part_values, &p->part_indices, &p->peaks, &p->peak_indices,
                       &p->sum, &p->weight};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        pv_cl_release(owned[i]);
    for (int t = 0; t < PV_OCT_TRANSFORMS; t++)
        pv_cl_fft_release(p->fft[t]);
    pv_cl_fft_release(p->fine_2d);
    free(p->host_records);
    free(p);
}

static pv_status acquire_transforms(pv_context *ctx, cl_oct_plan *p)
{
    for (int t = 0; t < PV_OCT_TRANSFORMS; t++) {
        const pv_oct_transform_shape shape = pv_oct_transform_shape_of(&p->g, t);
        pv_status status = pv_cl_fft_acquire(ctx, shape.size, shape.batch, &p->fft[t]);
        if (status != PV_OK)
            return status;
        p->half_points[t] = pv_cl_fft_complex_count(p->fft[t]);
        p->grid_points[t] = pv_cl_fft_real_count(p->fft[t]);
    }
    if (!param(ctx, "OCT_FINE_2D"))
        return PV_OK;
    /* One 2D transform per ky slice of every map of a fine batch: the same
     * dense layouts as the 3D batch. */
    const int size[3] = {p->g.fft[0], p->g.fft[1], 1};
    return pv_cl_fft_acquire(ctx, size, p->g.fine_batch * p->g.sub_width, &p->fine_2d);
}

static pv_status data_buffers(pv_context *ctx, cl_oct_plan *p)
{
    const size_t planes = (size_t)p->g.size[2], complex = 2 * sizeof(float);
    const size_t fine = (size_t)p->g.fine_batch, coarse = (size_t)p->g.coarse_batch;
    const pv_cl_buffer_spec specs[] = {
        {&p->volume, plane_points(p) * planes * sizeof(float)},
        {&p->stats, planes * OCT_STATS * sizeof(float)},
        {&p->plane_input, p->grid_points[PV_OCT_PLANE] * planes * sizeof(float)},
        {&p->target, p->half_points[PV_OCT_PLANE] * planes * complex},
        {&p->ref_full, p->half_points[PV_OCT_FULL] * complex},
        {&p->ref_sub, p->half_points[PV_OCT_SUB] * (size_t)p->g.sub_count * complex},
        {&p->full_input, p->grid_points[PV_OCT_FULL] * coarse * sizeof(float)},
        {&p->full_spectra, p->half_points[PV_OCT_FULL] * coarse * complex},
        {&p->sub_input, p->grid_points[PV_OCT_SUB] * fine * sizeof(float)},
        {&p->sub_spectra, p->half_points[PV_OCT_SUB] * fine * complex},
    };
    return pv_cl_buffers(ctx, specs, sizeof specs / sizeof specs[0]);
}

static pv_status table_buffers(pv_context *ctx, cl_oct_plan *p)
{
    const size_t planes = (size_t)p->g.size[2], records = (size_t)p->records;
    const size_t maps = (size_t)(p->g.fine_batch > p->g.coarse_batch ? p->g.fine_batch
                                                                     : p->g.coarse_batch);
    const size_t twiddles = 2 * (size_t)p->g.stripe_width * (size_t)p->g.coarse_depth;
    const pv_cl_buffer_spec specs[] = {
        {&p->sub_index, planes * sizeof(cl_int)},
        {&p->starts, records * sizeof(cl_int)},
        {&p->twiddle, twiddles * sizeof(float)},
        {&p->part_values, (maps + (size_t)p->groups) * sizeof(float)},
        {&p->part_indices, (maps + (size_t)p->groups) * sizeof(cl_uint)},
        {&p->peaks, records * OCT_RECORD * sizeof(float)},
        {&p->peak_indices, records * sizeof(cl_uint)},
    };
    pv_status status = pv_cl_buffers(ctx, specs, sizeof specs / sizeof specs[0]);
    if (status == PV_OK)
        status = pv_cl_write(ctx, p->twiddle, 0, twiddles * sizeof(float), p->g.twiddle);
    /* The host copies share one allocation: floats first, then indices. */
    const size_t floats = records * OCT_RECORD + planes * OCT_STATS;
    p->host_records = malloc(floats * sizeof(float) + records * sizeof(cl_uint));
    if (p->host_records) {
        p->host_stats = p->host_records + records * OCT_RECORD;
        p->host_indices = (cl_uint *)(p->host_stats + planes * OCT_STATS);
    }
    if (status == PV_OK && !p->host_records)
        status = pv_fail(ctx, PV_ERR_NOMEM, "octreg plan: out of memory");
    return status;
}

static pv_status pv_cl_oct_create(pv_context *ctx, const pv_oct_geometry *geometry, void **plan)
{
    cl_oct_plan *p = pv_plan_new(ctx, sizeof *p, "octreg plan");
    if (!p)
        return PV_ERR_NOMEM;
    p->g = *geometry;
    p->groups = param(ctx, "OCT_REDUCE_GROUPS");
    p->records = geometry->size[2];
    pv_status status = acquire_transforms(ctx, p);
    if (status == PV_OK)
        status = data_buffers(ctx, p);
    if (status == PV_OK)
        status = table_buffers(ctx, p);
    status = finish(ctx, p, status);
    return pv_plan_hand_over(ctx, status, p, pv_cl_oct_destroy, plan);
}

/* =========================================================== load, stats */

static void unpack_stats(const float *record, pv_oct_plane_stats *s)
{
    s->mean = record[0];
    s->energy = record[1];
    s->lo = record[2];
    s->hi = record[3];
    s->finite = record[4] > 0.0f;
}

static pv_status pv_cl_oct_load(pv_context *ctx, void *plan, const pv_volume *volume,
                         pv_oct_plane_stats *stats)
{
    cl_oct_plan *p = plan;
    cl_uint points = (cl_uint)plane_points(p);
    const size_t planes = (size_t)p->g.size[2];
    kernel_arg args[] = {ARG(p->volume), ARG(points), ARG(p->stats)};
    size_t global[2] = {(size_t)param(ctx, "OCT_STATS_WG"), planes};
    size_t local[2] = {global[0], 1};
    pv_status status = pv_cl_write_volume(ctx, p->volume, volume);
    if (status == PV_OK)
        status = pv_cl_run(ctx, "octreg", "octreg", "oct_stats", args, PV_CL_ARG_COUNT(args), 2,
                           global, local);
    if (status == PV_OK)
        status = pv_cl_read(ctx, p->stats, 0, planes * OCT_STATS * sizeof(float), p->host_stats);
    status = finish(ctx, p, status);
    for (size_t k = 0; status == PV_OK && k < planes; k++)
        unpack_stats(p->host_stats + k * OCT_STATS, &stats[k]);
    return status;
}

/* ================================================================ spectra */

typedef struct pad_job {
    int first, count, planes_out;
    cl_mem dst;
    cl_ulong dst_offset;
} pad_job;

static pv_status pad(pv_context *ctx, cl_oct_plan *p, pad_job j)
{
    cl_int depth = p->g.size[0], alines = p->g.size[1], pd = p->g.fft[0], pa = p->g.fft[1];
    kernel_arg args[] = {ARG(p->volume), ARG(p->stats), ARG(depth), ARG(alines),
                         ARG(j.first), ARG(j.count), ARG(pd), ARG(pa), ARG(j.planes_out),
                         ARG(j.dst), ARG(j.dst_offset)};
    return launch_grid(ctx, "oct_pad", args, PV_CL_ARG_COUNT(args), (size_t)pd, (size_t)pa,
                       (size_t)j.planes_out);
}

static pv_status unit_phase(pv_context *ctx, cl_mem in, size_t in_offset, cl_mem out,
                            size_t out_offset, size_t count, float floor)
{
    cl_ulong in_at = in_offset, out_at = out_offset;
    cl_uint n = (cl_uint)count;
    cl_float limit = floor > FLT_MIN ? floor : FLT_MIN;
    kernel_arg args[] = {ARG(in), ARG(in_at), ARG(out), ARG(out_at), ARG(n), ARG(limit)};
    return launch_rows(ctx, "oct_unit_phase", args, PV_CL_ARG_COUNT(args), count, 1);
}

static pv_status full_reference(pv_context *ctx, cl_oct_plan *p, float floor)
{
    /* The batched transform also runs over the other slots; slot 0 is used. */
    pad_job job = {0, p->g.size[2], p->g.coarse_depth, p->full_input, 0};
    pv_status status = pad(ctx, p, job);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, p->fft[PV_OCT_FULL], p->full_input, p->full_spectra);
    if (status == PV_OK)
        status = unit_phase(ctx, p->full_spectra, 0, p->ref_full, 0, p->half_points[PV_OCT_FULL],
                            floor);
    return status;
}

/* The unit-phase spectrum at sub_spectra + in_at, its ky axis inverted,
 * into ref_sub + out_at (complex offsets). */
static pv_status ky_inverse(pv_context *ctx, cl_oct_plan *p, size_t in_at, size_t out_at)
{
    cl_ulong in_offset = in_at, out_offset = out_at;
    cl_uint plane_bins = (cl_uint)p->half_points[PV_OCT_PLANE];
    cl_int width = p->g.sub_width;
    kernel_arg args[] = {ARG(p->sub_spectra), ARG(in_offset), ARG(plane_bins), ARG(width),
                         ARG(p->ref_sub), ARG(out_offset)};
    size_t wg = (size_t)param(ctx, "OCT_WG");
    size_t global[2] = {(plane_bins + wg - 1) / wg * wg, (size_t)width}, local[2] = {wg, 1};
    return pv_cl_run(ctx, "octreg", "octreg", "oct_sub_ky_inverse", args, PV_CL_ARG_COUNT(args), 2,
                     global, local);
}

/* Sub-volumes first .. first + count - 1 through one batched transform. */
static pv_status sub_references(pv_context *ctx, cl_oct_plan *p, int first, int count,
                                const float *floors)
{
    pv_status status = PV_OK;
    for (int i = 0; status == PV_OK && i < count; i++) {
        pad_job job = {p->g.sub_start[first + i], p->g.sub_width, p->g.sub_width, p->sub_input,
                       (cl_ulong)i * p->grid_points[PV_OCT_SUB]};
        status = pad(ctx, p, job);
    }
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, p->fft[PV_OCT_SUB], p->sub_input, p->sub_spectra);
    const size_t bins = p->half_points[PV_OCT_SUB];
    for (int i = 0; status == PV_OK && i < count; i++) {
        if (!p->fine_2d) {
            status = unit_phase(ctx, p->sub_spectra, (size_t)i * bins, p->ref_sub,
                                (size_t)(first + i) * bins, bins, floors[1 + first + i]);
            continue;
        }
        status = unit_phase(ctx, p->sub_spectra, (size_t)i * bins, p->sub_spectra,
                            (size_t)i * bins, bins, floors[1 + first + i]);
        if (status == PV_OK)
            status = ky_inverse(ctx, p, (size_t)i * bins, (size_t)(first + i) * bins);
    }
    return status;
}

static pv_status pv_cl_oct_reference(pv_context *ctx, void *plan, const float *floors)
{
    cl_oct_plan *p = plan;
    pv_status status = full_reference(ctx, p, floors[0]);
    for (int s = 0; status == PV_OK && s < p->g.sub_count; s += p->g.fine_batch) {
        int count = p->g.sub_count - s < p->g.fine_batch ? p->g.sub_count - s : p->g.fine_batch;
        status = sub_references(ctx, p, s, count, floors);
    }
    return finish(ctx, p, status);
}

static pv_status pv_cl_oct_spectra(pv_context *ctx, void *plan)
{
    cl_oct_plan *p = plan;
    pad_job job = {0, p->g.size[2], p->g.size[2], p->plane_input, 0};
    pv_status status = pad(ctx, p, job);
    if (status == PV_OK)
        status = pv_cl_fft_forward(ctx, p->fft[PV_OCT_PLANE], p->plane_input, p->target);
    return status;   /* the coarse step waits for it on the in-order queue */
}

/* ================================================================ peaks */

typedef struct max_job {
    cl_mem maps;
    size_t count;     /* points per map */
    int n[3];         /* map extent */
    int maps_used;
    int first;        /* record slot of map 0 */
} max_job;

/* First-stage groups per map: the launch's share (at most p->groups + maps
 * partials in all, the buffers' size), and no more than the map has quads
 * for, so that no group is idle. */
static cl_uint groups_per_map(const cl_oct_plan *p, max_job j, size_t wg)
{
    size_t share = ((size_t)p->groups + (size_t)j.maps_used - 1) / (size_t)j.maps_used;
    size_t useful = ((j.count + 3) / 4 + wg - 1) / wg;
    size_t groups = share < useful ? share : useful;
    return (cl_uint)(groups > 0 ? groups : 1);
}

static pv_status find_peaks(pv_context *ctx, cl_oct_plan *p, max_job j)
{
    size_t wg = (size_t)param(ctx, "OCT_REDUCE_WG");
    cl_uint count = (cl_uint)j.count, groups = groups_per_map(p, j, wg);
    cl_int nx = j.n[0], ny = j.n[1], nz = j.n[2], first = j.first;
    kernel_arg partial[] = {ARG(j.maps), ARG(count), ARG(groups), ARG(p->part_values),
                            ARG(p->part_indices)};
    size_t global1[2] = {groups * wg, (size_t)j.maps_used}, local[2] = {wg, 1};
    pv_status status = pv_cl_run(ctx, "octreg", "octreg", "oct_max_partial", partial,
                                 PV_CL_ARG_COUNT(partial), 2,
                                 global1, local);
    kernel_arg final[] = {ARG(p->part_values), ARG(p->part_indices), ARG(groups), ARG(j.maps),
                          ARG(count), ARG(nx), ARG(ny), ARG(nz), ARG(first), ARG(p->peaks),
                          ARG(p->peak_indices)};
    size_t global2[2] = {wg, (size_t)j.maps_used};
    if (status == PV_OK)
        status = pv_cl_run(ctx, "octreg", "octreg", "oct_max_final", final, PV_CL_ARG_COUNT(final),
                           2, global2, local);
    return status;
}

/* Records 0 .. count - 1 into peaks (n: the maps' extent). */
static pv_status read_peaks(pv_context *ctx, cl_oct_plan *p, int count, const int n[3],
                            pv_status status, pv_pc_peak *peaks)
{
    if (status == PV_OK)
        status = pv_cl_read(ctx, p->peaks, 0, (size_t)count * OCT_RECORD * sizeof(float),
                            p->host_records);
    if (status == PV_OK)
        status = pv_cl_read(ctx, p->peak_indices, 0, (size_t)count * sizeof(cl_uint),
                            p->host_indices);
    status = finish(ctx, p, status);
    for (int i = 0; status == PV_OK && i < count; i++) {
        const float *r = p->host_records + (size_t)i * OCT_RECORD;
        cl_uint at = p->host_indices[i];
        peaks[i].value = r[0];
        peaks[i].index[0] = (int)(at % (cl_uint)n[0]);
        peaks[i].index[1] = (int)(at / (cl_uint)n[0] % (cl_uint)n[1]);
        peaks[i].index[2] = (int)(at / ((cl_uint)n[0] * (cl_uint)n[1]));
        for (int a = 0; a < 3; a++) {
            peaks[i].neighbors[a][0] = r[1 + 2 * a];
            peaks[i].neighbors[a][1] = r[2 + 2 * a];
        }
    }
    return status;
}

/* =========================================================== correlation */

/* After a batch's cross-power spectra (status: how they went): the
 * correlation maps, by transform t's inverse, and their peaks into the
 * records from slot first on. */
static pv_status batch_peaks(pv_context *ctx, cl_oct_plan *p, pv_oct_transform t, int first,
                             int count, pv_status status)
{
    cl_mem spectra = t == PV_OCT_FULL ? p->full_spectra : p->sub_spectra;
    cl_mem maps = t == PV_OCT_FULL ? p->full_input : p->sub_input;
    const pv_oct_transform_shape shape = pv_oct_transform_shape_of(&p->g, t);
    pv_cl_fft *inverse = t == PV_OCT_SUB && p->fine_2d ? p->fine_2d : p->fft[t];
    if (status == PV_OK)
        status = pv_cl_fft_inverse(ctx, inverse, spectra, maps);
    max_job job = {maps, p->grid_points[t], {shape.size[0], shape.size[1], shape.size[2]}, count,
                   first};
    if (status == PV_OK)
        status = find_peaks(ctx, p, job);
    return status;
}

static pv_status coarse_batch(pv_context *ctx, cl_oct_plan *p, int first, int count)
{
    cl_uint plane_bins = (cl_uint)p->half_points[PV_OCT_PLANE];
    cl_uint bins = (cl_uint)p->half_points[PV_OCT_FULL];
    cl_int planes = p->g.size[2], width = p->g.stripe_width, depth = p->g.coarse_depth;
    cl_int at = first;
    cl_float scale = (cl_float)(1.0 / (double)p->grid_points[PV_OCT_FULL]);
    kernel_arg args[] = {ARG(p->target), ARG(plane_bins), ARG(planes), ARG(p->starts), ARG(at),
                         ARG(width), ARG(p->twiddle), ARG(depth), ARG(p->ref_full), ARG(bins),
                         ARG(scale), ARG(p->full_spectra)};
    size_t wg = (size_t)param(ctx, "OCT_WG");
    size_t global[3] = {(plane_bins + wg - 1) / wg * wg, (size_t)depth, (size_t)count};
    size_t local[3] = {wg, 1, 1};
    pv_status status = pv_cl_run(ctx, "octreg", "octreg", "oct_stripe_power", args,
                                 PV_CL_ARG_COUNT(args), 3, global,
                                 local);
    return batch_peaks(ctx, p, PV_OCT_FULL, first, count, status);
}

static pv_status pv_cl_oct_coarse(pv_context *ctx, void *plan, const int *start, int count,
                           pv_pc_peak *peaks)
{
    cl_oct_plan *p = plan;
    const int n[3] = {p->g.fft[0], p->g.fft[1], p->g.coarse_depth};
    if (count > p->records)
        return pv_fail(ctx, PV_ERR_INVALID, "octreg: %d stripes exceed the plan's %d", count,
                       p->records);
    pv_status status = pv_cl_write(ctx, p->starts, 0, (size_t)count * sizeof(cl_int), start);
    for (int i = 0; status == PV_OK && i < count; i += p->g.coarse_batch) {
        int n_batch = count - i < p->g.coarse_batch ? count - i : p->g.coarse_batch;
        status = coarse_batch(ctx, p, i, n_batch);
    }
    return read_peaks(ctx, p, count, n, status, peaks);
}

static pv_status fine_batch(pv_context *ctx, cl_oct_plan *p, int first, int count)
{
    cl_uint plane_bins = (cl_uint)p->half_points[PV_OCT_PLANE];
    cl_uint bins = (cl_uint)p->half_points[PV_OCT_SUB];
    cl_int at = first, slots = count, ky_inverted = p->fine_2d != NULL;
    cl_float scale = (cl_float)(1.0 / (double)p->grid_points[PV_OCT_SUB]);
    kernel_arg args[] = {ARG(p->target), ARG(plane_bins), ARG(p->sub_index), ARG(at), ARG(slots),
                         ARG(p->ref_sub), ARG(bins), ARG(scale), ARG(ky_inverted),
                         ARG(p->sub_spectra)};
    pv_status status = launch_rows(ctx, "oct_plane_power", args, PV_CL_ARG_COUNT(args), bins, 1);
    return batch_peaks(ctx, p, PV_OCT_SUB, first, count, status);
}

static pv_status pv_cl_oct_fine(pv_context *ctx, void *plan, const int *sub, pv_pc_peak *peaks)
{
    cl_oct_plan *p = plan;
    const int planes = p->g.size[2], n[3] = {p->g.fft[0], p->g.fft[1], p->g.sub_width};
    pv_status status = pv_cl_write(ctx, p->sub_index, 0, (size_t)planes * sizeof(cl_int), sub);
    for (int k = 0; status == PV_OK && k < planes; k += p->g.fine_batch) {
        int count = planes - k < p->g.fine_batch ? planes - k : p->g.fine_batch;
        status = fine_batch(ctx, p, k, count);
    }
    return read_peaks(ctx, p, planes, n, status, peaks);
}

/* ========================================================= reconstruction */

static pv_status ensure_accumulators(pv_context *ctx, cl_oct_plan *p)
{
    size_t bytes = plane_points(p) * (size_t)p->g.size[2] * sizeof(float);
    pv_status status = PV_OK;
    if (!p->sum)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &p->sum);
    if (status == PV_OK && !p->weight)
        status = pv_cl_buffer(ctx, CL_MEM_READ_WRITE, bytes, &p->weight);
    return status;
}

typedef struct placement_buffers {
    cl_mem start, plane, weight, offset;
} placement_buffers;

/* The tables in scratch slots (at least one element each). */
static pv_status upload_placement(pv_context *ctx, const cl_oct_plan *p,
                                  const pv_oct_placement *t, placement_buffers *b)
{
    size_t entries = t->entries > 0 ? (size_t)t->entries : 1, planes = (size_t)p->g.size[2];
    pv_status status = pv_cl_scratch(ctx, "oct.place_start", (planes + 1) * sizeof(cl_int),
                                     &b->start);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "oct.place_plane", entries * sizeof(cl_int), &b->plane);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "oct.place_weight", entries * sizeof(float), &b->weight);
    if (status == PV_OK)
        status = pv_cl_scratch(ctx, "oct.place_offset", 2 * entries * sizeof(float), &b->offset);
    if (status == PV_OK)
        status = pv_cl_write(ctx, b->start, 0, (planes + 1) * sizeof(cl_int), t->plane_start);
    if (status == PV_OK && t->entries > 0) {
        size_t n = (size_t)t->entries;
        status = pv_cl_write(ctx, b->plane, 0, n * sizeof(cl_int), t->plane);
        if (status == PV_OK)
            status = pv_cl_write(ctx, b->weight, 0, n * sizeof(float), t->weight);
        if (status == PV_OK)
            status = pv_cl_write(ctx, b->offset, 0, 2 * n * sizeof(float), t->offset);
    }
    return status;
}

static pv_status pv_cl_oct_place(pv_context *ctx, void *plan, const pv_oct_placement *placement,
                          int reset)
{
    cl_oct_plan *p = plan;
    placement_buffers b;
    cl_int depth = p->g.size[0], alines = p->g.size[1], planes = p->g.size[2], clear = reset;
    pv_status status = ensure_accumulators(ctx, p);
    if (status == PV_OK)
        status = upload_placement(ctx, p, placement, &b);
    kernel_arg args[] = {ARG(p->volume), ARG(depth), ARG(alines), ARG(planes), ARG(b.start),
                         ARG(b.plane), ARG(b.weight), ARG(b.offset), ARG(clear), ARG(p->sum),
                         ARG(p->weight)};
    if (status == PV_OK)
        status = launch_grid(ctx, "oct_place", args, PV_CL_ARG_COUNT(args), (size_t)depth,
                             (size_t)alines,
                             (size_t)planes);
    return finish(ctx, p, status);
}

static pv_status normalize_volume(pv_context *ctx, cl_oct_plan *p, float gap, cl_mem *dense)
{
    size_t count = plane_points(p) * (size_t)p->g.size[2];
    cl_uint n = (cl_uint)count;
    pv_status status = pv_cl_scratch(ctx, "oct.out", count * sizeof(float), dense);
    kernel_arg args[] = {ARG(p->sum), ARG(p->weight), ARG(n), ARG(gap), ARG(*dense)};
    return status == PV_OK ? launch_rows(ctx, "oct_normalize", args, PV_CL_ARG_COUNT(args), count,
                                         1) : status;
}

static pv_status make_enface(pv_context *ctx, cl_oct_plan *p, float gap, cl_mem *dense)
{
    cl_int depth = p->g.size[0];
    cl_uint lines = (cl_uint)((size_t)p->g.size[1] * p->g.size[2]);
    pv_status status = pv_cl_scratch(ctx, "oct.enface", lines * sizeof(float), dense);
    kernel_arg args[] = {ARG(p->sum), ARG(p->weight), ARG(depth), ARG(lines), ARG(gap),
                         ARG(*dense)};
    return status == PV_OK ? launch_rows(ctx, "oct_enface", args, PV_CL_ARG_COUNT(args), lines,
                                         1) : status;
}

static pv_status make_slow(pv_context *ctx, cl_oct_plan *p, float gap, cl_mem *dense)
{
    cl_int depth = p->g.size[0], alines = p->g.size[1], planes = p->g.size[2];
    size_t cells = (size_t)depth * planes;
    pv_status status = pv_cl_scratch(ctx, "oct.slow", cells * sizeof(float), dense);
    kernel_arg args[] = {ARG(p->sum), ARG(p->weight), ARG(depth), ARG(alines), ARG(planes),
                         ARG(gap), ARG(*dense)};
    return status == PV_OK ? launch_rows(ctx, "oct_slow", args, PV_CL_ARG_COUNT(args), cells,
                                         1) : status;
}

/* An f32 image downloaded into a host temporary shaped like `like`. */
static pv_status download_staged(pv_context *ctx, cl_mem dense, const pv_image *like,
                                 pv_image *staged)
{
    if (pv_image_alloc_like(staged, like, PV_PIXEL_F32) != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "octreg: no host memory to stage a download");
    pv_status status = pv_cl_download_image(ctx, dense, staged);
    if (status != PV_OK)
        pv_image_free(staged);
    return status;
}

static void copy_image(const pv_image *from, pv_image *to)
{
    for (int y = 0; y < from->height; y++)
        memcpy((float *)to->data + (size_t)y * to->stride,
               (const float *)from->data + (size_t)y * from->stride,
               (size_t)from->width * sizeof(float));
}

/* A device-buffer call's outputs (lib/interop/interop.c): placeholders
 * bound to the caller's buffers, which the runtime's downloads fill on the
 * device, queued after every output is computed; no host staging (a
 * placeholder's pixels cannot be written on the host). */
static pv_status read_bound_outputs(pv_context *ctx, cl_mem dense_volume, pv_volume *registered,
                                    cl_mem dense_enface, pv_image *enface, cl_mem dense_slow,
                                    pv_image *slow)
{
    pv_status status = enface ? pv_cl_download_image(ctx, dense_enface, enface) : PV_OK;
    if (status == PV_OK && slow)
        status = pv_cl_download_image(ctx, dense_slow, slow);
    if (status == PV_OK && registered)
        status = pv_cl_download_volume(ctx, dense_volume, registered);
    return status;
}

/* All or nothing: every requested output is computed on the device first;
 * the two images are downloaded into host temporaries, the volume last
 * and straight into the caller's, and the images are copied out only
 * when every download has succeeded. */
static pv_status read_outputs(pv_context *ctx, cl_oct_plan *p, float gap, pv_volume *registered,
                              pv_image *enface, pv_image *slow)
{
    cl_mem dense_volume = NULL, dense_enface = NULL, dense_slow = NULL;
    pv_status status = registered ? normalize_volume(ctx, p, gap, &dense_volume) : PV_OK;
    if (status == PV_OK && enface)
        status = make_enface(ctx, p, gap, &dense_enface);
    if (status == PV_OK && slow)
        status = make_slow(ctx, p, gap, &dense_slow);
    if (status == PV_OK && ctx->device_call)
        return read_bound_outputs(ctx, dense_volume, registered, dense_enface, enface, dense_slow,
                                  slow);
    pv_image staged_enface = {0}, staged_slow = {0};
    if (status == PV_OK && enface)
        status = download_staged(ctx, dense_enface, enface, &staged_enface);
    if (status == PV_OK && slow)
        status = download_staged(ctx, dense_slow, slow, &staged_slow);
    if (status == PV_OK && registered)
        status = pv_cl_download_volume(ctx, dense_volume, registered);
    if (status == PV_OK && enface)
        copy_image(&staged_enface, enface);
    if (status == PV_OK && slow)
        copy_image(&staged_slow, slow);
    pv_image_free(&staged_enface);
    pv_image_free(&staged_slow);
    return status;
}

static pv_status pv_cl_oct_read(pv_context *ctx, void *plan, float gap, pv_volume *registered,
                         pv_image *enface, pv_image *slow)
{
    cl_oct_plan *p = plan;
    if (!p->sum || !p->weight)
        return pv_fail(ctx, PV_ERR_INVALID, "octreg: nothing was reconstructed yet");
    return finish(ctx, p, read_outputs(ctx, p, gap, registered, enface, slow));
}

const pv_octreg_ops pv_cl_octreg_ops = {PV_OCTREG_SLOTS(PV_OPS_BIND, pv_cl_oct_)};
