/* The SIFT program's keypoint stages: orientation, descriptors and
 * matching.  Not a program of its own: features.cl includes it (and, before
 * it, the headers it uses), so that build-aux/embed-kernels.sh, which
 * expands one level of includes, inlines everything into one program. */

/* -------------------------------------------------------------- keypoints */

/* sift_math.h (VLFeat-faithful helpers shared with the CPU backend) is
 * included by features.cl just before this file. */



/* ------------------------------------------------------ orientation
 * One group of SIFT_ORI_WG items per candidate.  Every item refines the
 * candidate (same loads, same arithmetic: the result is uniform over the
 * group, so no barrier is needed to share it).  The window's samples are
 * dealt to the items in turn (sample i to item i mod SIFT_ORI_WG, so
 * neighbouring items read neighbouring pixels); each item adds its
 * samples, in raster order, to its own histogram column in local memory,
 * and bin b is then the sum of the columns in item order.  A fixed
 * grouping of the serial loop's terms: deterministic, and within float
 * rounding of the CPU's histogram, while the window's work is spread over
 * the group instead of one work item. */
#define ORI_LANES SIFT_ORI_WG
#define ORI_PITCH (ORI_LANES + 1) /* a row per bin, padded: the column sums hit all banks */

typedef struct refined_point {
    float4 geom;   /* x, y, sigma (octave pixels), response */
    float scale;   /* level + offset */
} refined_point;

/* Refinement (up to 5 moves), contrast and edge tests; 0 if rejected. */
static int refine(__global const float *dog, __constant pv_sift_octave_info *octaves, int4 cand,
                  pv_sift_settings set, refined_point *out)
{
    const int o = cand.w, level = cand.z;
    const int w = octaves[o].w, h = octaves[o].h;
    const long plane = (long)w * (long)h;
    __global const float *d = dog + octaves[o].dog_offset + (long)level * plane;
    int x = cand.x, y = cand.y, dx = 0, dy = 0;
    pv_sm_dog_fit f;
    float b[3];
    for (int step = 0; step < 5; step++) {
        x += dx;
        y += dy;
        f = pv_sm_fit_at(d + (long)y * w + x, plane, w);
        pv_sm_solve_offset(&f, b);
        dx = (b[0] > 0.6f && x < w - 2) - (b[0] < -0.6f && x > 1);
        dy = (b[1] > 0.6f && y < h - 2) - (b[1] < -0.6f && y > 1);
        if (dx == 0 && dy == 0)
            break;
    }
    const float te = set.edge_thresh;
    const float val = f.v + 0.5f * (f.dx * b[0] + f.dy * b[1] + f.ds * b[2]);
    const float tr = f.dxx + f.dyy, det = f.dxx * f.dyy - f.dxy * f.dxy;
    const float score = tr * tr / det;
    const float xn = (float)x + b[0], yn = (float)y + b[1], sn = (float)level + b[2];
    const int good = fabs(val) > set.peak_thresh && score < (te + 1.0f) * (te + 1.0f) / te &&
                     score >= 0.0f && fabs(b[0]) < 1.5f && fabs(b[1]) < 1.5f &&
                     fabs(b[2]) < 1.5f && xn >= 0.0f && xn <= (float)(w - 1) && yn >= 0.0f &&
                     yn <= (float)(h - 1) && sn >= 0.0f && sn <= (float)(set.levels + 2);
    out->geom = (float4)(xn, yn, set.sigma0 * exp2(sn / (float)set.levels), val);
    out->scale = sn;
    return good;
}

/* The raw 36-bin histogram of the window around p into hist. */
static void orientation_bins(__global const float2 *grad, int w, int h, float4 p,
                             float window, __local float *columns, __local float *hist)
{
    const int lid = get_local_id(0);
    const float x = p.x, y = p.y;
    const int xi = (int)(x + 0.5f), yi = (int)(y + 0.5f);
    const float sigmaw = window * p.z;
    const int W = (int)fmax(floor(3.0f * sigmaw), 1.0f);
    const float limit = (float)(W * W) + 0.6f, denom = 2.0f * sigmaw * sigmaw;
    const int ys0 = max(-W, -yi), ys1 = min(W, h - 1 - yi);
    const int xs0 = max(-W, -xi), xs1 = min(W, w - 1 - xi);
    const int cols = xs1 - xs0 + 1, count = cols * (ys1 - ys0 + 1);
    __local float *mine = columns + lid;
    for (int b = 0; b < ORI_BINS; b++)
        mine[b * ORI_PITCH] = 0.0f;
    for (int i = lid; i < count; i += ORI_LANES) {
        const int xs = xs0 + i % cols, ys = ys0 + i / cols;
        const float dx = (float)(xi + xs) - x, dy = (float)(yi + ys) - y;
        const float r2 = dx * dx + dy * dy;
        if (r2 >= limit)
            continue;
        const float2 grd = grad[(size_t)(yi + ys) * (size_t)w + (size_t)(xi + xs)];
        const float wgt = exp(-r2 / denom) * grd.x;
        const float fbin = (float)ORI_BINS * grd.y / TWO_PI_F;
        const int bin = (int)floor(fbin - 0.5f);
        const float rbin = fbin - (float)bin - 0.5f;
        mine[((bin + ORI_BINS) % ORI_BINS) * ORI_PITCH] += (1.0f - rbin) * wgt;
        mine[((bin + 1) % ORI_BINS) * ORI_PITCH] += rbin * wgt;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = lid; b < ORI_BINS; b += ORI_LANES) {
        __local const float *row = columns + b * ORI_PITCH;
        float sum = row[0];
        for (int l = 1; l < ORI_LANES; l++)
            sum += row[l];
        hist[b] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Six passes of the circular 3-tap box filter over hist (in place), each
 * bin from the previous pass's values as the serial loop computes it:
 * ((h[i-1] + h[i]) + h[i+1]) / 3. */
static void smooth_bins(__local float *hist, __local float *spare)
{
    const int lid = get_local_id(0);
    __local float *from = hist, *to = spare;
    for (int iter = 0; iter < 6; iter++) {
        for (int i = lid; i < ORI_BINS; i += ORI_LANES)
            to[i] = (from[(i + ORI_BINS - 1) % ORI_BINS] + from[i] + from[(i + 1) % ORI_BINS]) /
                    3.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local float *t = from;
        from = to;
        to = t;
    }
    /* six passes: the result is back in hist */
}

/* Up to 4 orientations from the smoothed histogram (peaks >= ori_peak of
 * the maximum, parabolic interpolation). */
static int histogram_peaks(__local const float *hist, float ori_peak, float4 *angles)
{
    float maxh = 0.0f;
    for (int i = 0; i < ORI_BINS; i++)
        maxh = fmax(maxh, hist[i]);
    const float floor_h = ori_peak * maxh;
    float found[MAX_ORIENTATIONS] = {0.0f, 0.0f, 0.0f, 0.0f};
    int n = 0;
    for (int i = 0; i < ORI_BINS && n < MAX_ORIENTATIONS; i++) {
        const float h0 = hist[i], hm = hist[(i + ORI_BINS - 1) % ORI_BINS];
        const float hp = hist[(i + 1) % ORI_BINS];
        if (h0 > floor_h && h0 > hm && h0 > hp) {
            const float di = -0.5f * (hp - hm) / (hp + hm - 2.0f * h0);
            found[n++] = TWO_PI_F * ((float)i + di + 0.5f) / (float)ORI_BINS;
        }
    }
    *angles = (float4)(found[0], found[1], found[2], found[3]);
    return n;
}

/* Moves a kernel's candidate lists and counters to those of image `image`
 * of a batch (each image's lists `capacity` entries apart, its two
 * counters side by side): one text for the kernels that take them all,
 * whatever their constness. */
#define CANDIDATES_OF_IMAGE(image, capacity)                                   \
    do {                                                                       \
        candidates += (image) * (capacity);                                    \
        counters += 2 * (image);                                               \
        cand_geom += (image) * (capacity);                                     \
        cand_scale += (image) * (capacity);                                    \
        cand_angles += (image) * (capacity);                                   \
        cand_count += (image) * (capacity);                                    \
    } while (0)

/* Candidates c = group, group + groups, ... of the ordered list (length
 * min(counters[0], capacity)): refinement, then up to 4 orientations.
 * Writes cand_count[c] (0 .. 4) for every candidate and the keypoint data
 * for those with any.  Walking the list with a fixed number of groups
 * avoids launching one (mostly idle) group per slot of the capacity.
 * Global size: (groups * SIFT_ORI_WG, images). */
__kernel __attribute__((reqd_work_group_size(SIFT_ORI_WG, 1, 1)))
void sift_orient(__global const float *dog, __global const float2 *grad,
                 __constant pv_sift_octave_info *octaves, __global const int4 *candidates,
                 __global const uint *counters, uint capacity, pv_sift_settings set,
                 __global float4 *cand_geom, __global float *cand_scale,
                 __global float4 *cand_angles, __global uint *cand_count, ulong dog_stride,
                 ulong gauss_stride)
{
    const ulong image = get_group_id(1);
    dog += image * dog_stride;
    grad += image * gauss_stride;
    CANDIDATES_OF_IMAGE(image, capacity);
    __local float columns[ORI_BINS * ORI_PITCH];
    __local float hist[ORI_BINS], spare[ORI_BINS];
    const uint count = min(counters[0], capacity);
    const int lid = get_local_id(0);
    for (uint c = get_group_id(0); c < count; c += get_num_groups(0)) {
        const int4 cand = candidates[c];
        refined_point p;
        int n = 0;
        if (refine(dog, octaves, cand, set, &p)) {
            const int o = cand.w, w = octaves[o].w, h = octaves[o].h;
            const size_t plane =
                octaves[o].gauss_offset + (size_t)(cand.z - 1) * (size_t)w * (size_t)h;
            float4 angles;
            orientation_bins(grad + plane, w, h, p.geom, set.ori_window, columns, hist);
            smooth_bins(hist, spare);
            n = histogram_peaks(hist, set.ori_peak, &angles);
            if (lid == 0 && n > 0) {
                cand_geom[c] = p.geom;
                cand_scale[c] = p.scale;
                cand_angles[c] = angles;
            }
            barrier(CLK_LOCAL_MEM_FENCE); /* hist is reused by the next candidate */
        }
        if (lid == 0)
            cand_count[c] = (uint)n;
    }
}

/* Per group of SIFT_KP_WG candidates: the sum of their keypoint counts
 * (block_sums), which sift_scan turns into the groups' first output slots.
 * Global size: (a multiple of SIFT_KP_WG covering the capacity, images);
 * the capacity is a multiple of SIFT_KP_WG. */
__kernel __attribute__((reqd_work_group_size(SIFT_KP_WG, 1, 1)))
void sift_block_counts(__global const uint *counters, uint capacity,
                       __global const uint *cand_count, __global uint *block_sums)
{
    const ulong image = get_group_id(1);
    counters += 2 * image;
    cand_count += image * capacity;
    block_sums += image * (capacity / SIFT_KP_WG);
    __local uint buf[2 * SIFT_KP_WG];
    const uint c = get_global_id(0), count = min(counters[0], capacity);
    uint total;
    group_scan(buf, c < count ? cand_count[c] : 0u, get_local_id(0), SIFT_KP_WG, &total);
    if (get_local_id(0) == 0)
        block_sums[get_group_id(0)] = total;
}

/* The keypoints in key order: candidate c's keypoints go to its group's
 * offset (block_offsets, scanned) plus the counts of the group's earlier
 * candidates.  Writes the caller's record layout (pv_sift_keypoint: x, y,
 * sigma in input pixels, angle, response, octave, scale; 7 words), the
 * sort key, and the descriptor kernel's geometry (octave pixels, angle).
 * xper = 2^(o + first_octave) exactly (ldexp), as the CPU backend scales.
 * Same launch shape as sift_block_counts. */
__kernel __attribute__((reqd_work_group_size(SIFT_KP_WG, 1, 1)))
void sift_scatter(__global const int4 *candidates, __global const uint *counters, uint capacity,
                  __global const float4 *cand_geom, __global const float *cand_scale,
                  __global const float4 *cand_angles, __global const uint *cand_count,
                  __global const uint *block_offsets, uint kp_capacity, int first_octave,
                  __global float *records, __global ulong *kp_key, __global float4 *kp_geom)
{
    const ulong image = get_group_id(1);
    CANDIDATES_OF_IMAGE(image, capacity);
    block_offsets += image * (capacity / SIFT_KP_WG);
    records += image * kp_capacity * 7;
    kp_key += image * kp_capacity;
    kp_geom += image * kp_capacity;
    __local uint buf[2 * SIFT_KP_WG];
    const uint c = get_global_id(0), count = min(counters[0], capacity);
    const uint n = c < count ? cand_count[c] : 0u;
    uint total;
    uint k = block_offsets[get_group_id(0)] + group_scan(buf, n, get_local_id(0), SIFT_KP_WG, &total);
    if (n == 0)
        return;
    const int4 cand = candidates[c];
    const float4 geom = cand_geom[c];
    const float scale = cand_scale[c];
    const float angles[MAX_ORIENTATIONS] = {cand_angles[c].x, cand_angles[c].y, cand_angles[c].z,
                                            cand_angles[c].w};
    const float xper = ldexp(1.0f, cand.w + first_octave);
    const ulong key = ((((ulong)cand.w * 16u + (ulong)cand.z) * 65536u + (ulong)cand.y) * 65536u +
                       (ulong)cand.x) * 4u;
    for (uint i = 0; i < n; i++, k++) {
        if (k >= kp_capacity)
            return;
        __global float *r = records + (size_t)k * 7;
        r[0] = geom.x * xper;
        r[1] = geom.y * xper;
        r[2] = geom.z * xper;
        r[3] = angles[i];
        r[4] = geom.w;
        r[5] = as_float(cand.w + first_octave);
        r[6] = scale;
        kp_key[k] = key + i;
        kp_geom[k] = (float4)(geom.x, geom.y, geom.z, angles[i]);
    }
}

/* ------------------------------------------------------------ descriptors
 * One work group per keypoint: 16 spatial cells x SIFT_DESC_SPLIT items.
 * Each item gathers, for its cell, the samples of every SIFT_DESC_SPLIT-th
 * row of the cell's support (a rotated 2x2-bin square, scanned through its
 * bounding box), with VLFeat's trilinear weights, into 8 private bins; the
 * partial histograms are summed in a fixed order, so the result does not
 * depend on scheduling.  No atomics: deterministic.  Global size:
 * (kp_capacity * DESC_WG, images). */
#define DESC_WG (DESC_CELLS * SIFT_DESC_SPLIT)

/* DEFINE_GROUP_SUM: group_sum.cl, included by features.cl. */
/* The descriptor's squared norm, summed over the group in a fixed order. */
DEFINE_GROUP_SUM(descriptor_sum, float, DESC_WG)

static float cell_weight(float n, int cell)
{
    const int bin = (int)floor(n - 0.5f);
    const float r = n - ((float)bin + 0.5f);
    return cell == bin ? 1.0f - r : cell == bin + 1 ? r : 0.0f;
}

/* The part of range (integer offsets t) where lo < a t + b < hi can hold:
 * a row's crossing of one cell's support, widened by a pixel against
 * rounding (the loop still applies the exact weight test).  For a near 0
 * the value hardly changes along the row: the whole range. */
static int2 crossing(float a, float b, float lo, float hi, int2 range)
{
    if (fabs(a) < 1e-4f)
        return range;
    const float t0 = (lo - b) / a, t1 = (hi - b) / a;
    return (int2)(max(range.x, (int)floor(fmin(t0, t1)) - 1),
                  min(range.y, (int)ceil(fmax(t0, t1)) + 1));
}

__kernel __attribute__((reqd_work_group_size(DESC_WG, 1, 1)))
void sift_descriptors(__global const float2 *grad, __constant pv_sift_octave_info *octaves,
                      __global const float4 *kp_geom, __global const ulong *kp_key, float magnif,
                      __global const uint *counters, uint kp_capacity, __global float *descriptors,
                      ulong gauss_stride)
{
    /* keypoint k of image `image`: its slot in the image's lists */
    const ulong image = get_group_id(1);
    descriptors += image * kp_capacity * DESC_SIZE;
    __local float partial[SIFT_DESC_SPLIT][DESC_SIZE];
    __local float desc[DESC_SIZE];
    __local float norm_parts[DESC_WG];
    const int lid = get_local_id(0), cell = lid % DESC_CELLS, part = lid / DESC_CELLS;
    const size_t k = get_group_id(0), slot = image * kp_capacity + k;
    if (k >= min(counters[2 * image + 1], kp_capacity))
        return;
    const float4 geom = kp_geom[slot];
    const ulong key = kp_key[slot];
    const int level = (int)((key >> 34) & 15u), o = (int)(key >> 38);
    const int w = octaves[o].w, h = octaves[o].h;
    const size_t plane = octaves[o].gauss_offset + (size_t)(level - 1) * (size_t)w * (size_t)h;
    __global const float2 *gr = grad + image * gauss_stride + plane;
    const float x = geom.x, y = geom.y, angle = geom.w;
    const int xi = (int)(x + 0.5f), yi = (int)(y + 0.5f);
    const float st = sin(angle), ct = cos(angle), sbp = magnif * geom.z;
    const int W = (int)floor(1.41421356f * sbp * 5.0f / 2.0f + 0.5f);
    /* The cell's support: |n - centre| < 1 bin on both axes, i.e. a square
     * of side 2 sbp around the cell centre, rotated by angle. */
    const int cx = cell % 4 - 2, cy = cell / 4 - 2;
    const float ccx = ((float)cx + 0.5f) * sbp, ccy = ((float)cy + 0.5f) * sbp;
    const float px = ct * ccx - st * ccy + x, py = st * ccx + ct * ccy + y;
    const int reach = (int)ceil(1.41421356f * sbp) + 1;
    const int y_lo = max(max(-W, 1 - yi), (int)floor(py) - reach - yi);
    const int y_hi = min(min(W, h - yi - 2), (int)ceil(py) + reach - yi);
    const int x_lo = max(max(-W, 1 - xi), (int)floor(px) - reach - xi);
    const int x_hi = min(min(W, w - xi - 2), (int)ceil(px) + reach - xi);
    float bins[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    /* A cell's weight is non-zero for n in (cell - 0.5, cell + 1.5) on both
     * axes: each row is walked only where it crosses that rotated square
     * (about half of the bounding box), in the same order as before. */
    const float ox = (float)xi - x;
    for (int dyi = y_lo + part; dyi <= y_hi; dyi += SIFT_DESC_SPLIT) {
        const float dyr = (float)(yi + dyi) - y;
        int2 span = crossing(ct, ct * ox + st * dyr, sbp * ((float)cx - 0.5f),
                             sbp * ((float)cx + 1.5f), (int2)(x_lo, x_hi));
        span = crossing(-st, ct * dyr - st * ox, sbp * ((float)cy - 0.5f),
                        sbp * ((float)cy + 1.5f), span);
        for (int dxi = span.x; dxi <= span.y; dxi++) {
            const float dx = (float)(xi + dxi) - x, dy = (float)(yi + dyi) - y;
            const float nx = (ct * dx + st * dy) / sbp, ny = (-st * dx + ct * dy) / sbp;
            const float wx = cell_weight(nx, cx), wy = cell_weight(ny, cy);
            if (wx == 0.0f || wy == 0.0f)
                continue;
            const float2 grd = gr[(size_t)(yi + dyi) * (size_t)w + (size_t)(xi + dxi)];
            const float mod = grd.x;
            float theta = grd.y - angle;
            theta = theta < 0.0f ? theta + TWO_PI_F : theta;
            const float nt = 8.0f * theta / TWO_PI_F;
            const float win = exp(-(nx * nx + ny * ny) / 8.0f);
            const int bint = (int)floor(nt);
            const float rt = nt - (float)bint;
            const float wxy = win * mod * fabs(wx) * fabs(wy);
            /* Fixed indices keep the bins in registers; adding 0 to the
             * other six leaves them exactly as they were. */
            const int b0 = (bint + 8) % 8, b1 = (bint + 1) % 8;
            const float v0 = wxy * (1.0f - rt), v1 = wxy * rt;
#pragma unroll
            for (int t = 0; t < 8; t++)
                bins[t] += t == b0 ? v0 : t == b1 ? v1 : 0.0f;
        }
    }
    for (int t = 0; t < 8; t++)
        partial[part][((cy + 2) * 4 + (cx + 2)) * 8 + t] = bins[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < DESC_SIZE; i += DESC_WG) {
        float sum = 0.0f;
        for (int p = 0; p < SIFT_DESC_SPLIT; p++)
            sum += partial[p][i];
        desc[i] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Normalise, clamp at 0.2, normalise again; norms by a fixed-order
     * reduction. */
    for (int round = 0; round < 2; round++) {
        float sq = 0.0f;
        for (int i = lid; i < DESC_SIZE; i += DESC_WG)
            sq += desc[i] * desc[i];
        const float norm = sqrt(descriptor_sum(norm_parts, sq)) + 1.1920929e-7f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = lid; i < DESC_SIZE; i += DESC_WG) {
            const float v = desc[i] / norm;
            desc[i] = round == 0 ? fmin(v, 0.2f) : v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = lid; i < DESC_SIZE; i += DESC_WG)
        descriptors[k * DESC_SIZE + i] = desc[i];
}

/* --------------------------------------------------------------- matching
 * Nearest and second nearest train descriptor of each query (squared L2,
 * summed in element order as on the CPU; ties keep the lower index).
 * Work group (qx, chunk): SIFT_MATCH_WG queries (one per item, held in
 * registers as float4) against the train rows [chunk * per_chunk, ...);
 * the train rows are staged SIFT_MATCH_TILE at a time in local memory and
 * read as float4 by all items at the same address (broadcast).  Splitting
 * the train set over chunks keeps the whole device busy on small sets;
 * partial[chunk * nq + q] = (best, d1, d2) and sift_nearest_merge folds
 * the chunks in order, which gives exactly the serial scan's answer.
 * Global size: (ceil(nq / SIFT_MATCH_WG) * SIFT_MATCH_WG, chunks). */
#define DESC_VEC (DESC_SIZE / 4)

/* One work group's share (sift_nearest's body; the chain's
 * sift_chain_nearest reads nt from the device); tile: the group's local
 * SIFT_MATCH_TILE * DESC_VEC float4. */
static void nearest_of_chunk(__global const float4 *query, int nq, __global const float4 *train,
                             int nt, int per_chunk, __global int *best, __global float *best_d2,
                             __global float *second_d2, __local float4 *tile)
{
    const int q = get_global_id(0), lid = get_local_id(0), chunk = get_group_id(1);
    const int t_lo = chunk * per_chunk, t_hi = min(nt, t_lo + per_chunk);
    float4 a[DESC_VEC];
    for (int k = 0; k < DESC_VEC; k++)
        a[k] = q < nq ? query[(size_t)q * DESC_VEC + k] : (float4)(0.0f);
    float d1 = INFINITY, d2 = INFINITY;
    int b1 = -1;
    for (int t0 = t_lo; t0 < t_hi; t0 += SIFT_MATCH_TILE) {
        const int n = min(SIFT_MATCH_TILE, t_hi - t0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = lid; i < n * DESC_VEC; i += SIFT_MATCH_WG)
            tile[i] = train[(size_t)t0 * DESC_VEC + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = 0; t < n; t++) {
            __local const float4 *b = tile + t * DESC_VEC;
            float acc = 0.0f;
            for (int k = 0; k < DESC_VEC; k++) {
                const float4 diff = a[k] - b[k];
                acc += diff.x * diff.x;
                acc += diff.y * diff.y;
                acc += diff.z * diff.z;
                acc += diff.w * diff.w;
            }
            if (acc < d1) {
                d2 = d1;
                d1 = acc;
                b1 = t0 + t;
            } else if (acc < d2) {
                d2 = acc;
            }
        }
    }
    if (q < nq) {
        const size_t at = (size_t)chunk * (size_t)nq + (size_t)q;
        best[at] = b1;
        best_d2[at] = d1;
        second_d2[at] = d2;
    }
}

__kernel __attribute__((reqd_work_group_size(SIFT_MATCH_WG, 1, 1)))
void sift_nearest(__global const float4 *query, int nq, __global const float4 *train, int nt,
                  int per_chunk, __global int *best, __global float *best_d2,
                  __global float *second_d2)
{
    __local float4 tile[SIFT_MATCH_TILE * DESC_VEC];
    nearest_of_chunk(query, nq, train, nt, per_chunk, best, best_d2, second_d2, tile);
}

/* Fold the chunks' (best, d1, d2) in chunk order into one record per query:
 * out = [best (nq ints) | d1 (nq) | d2 (nq)], read back in one copy.
 * Global size: nq rounded up to SIFT_MATCH_WG. */
__kernel __attribute__((reqd_work_group_size(SIFT_MATCH_WG, 1, 1)))
void sift_nearest_merge(__global const int *best, __global const float *best_d2,
                        __global const float *second_d2, int nq, int chunks, __global int *out)
{
    const int q = get_global_id(0);
    if (q >= nq)
        return;
    int b1 = best[q];
    float d1 = best_d2[q], d2 = second_d2[q];
    for (int c = 1; c < chunks; c++) {
        const size_t at = (size_t)c * (size_t)nq + (size_t)q;
        const float e1 = best_d2[at];
        if (e1 < d1) {
            d2 = fmin(d1, second_d2[at]);
            d1 = e1;
            b1 = best[at];
        } else if (e1 < d2) {
            d2 = e1;
        }
    }
    out[q] = b1;
    out[nq + q] = as_int(d1);
    out[2 * nq + q] = as_int(d2);
}
