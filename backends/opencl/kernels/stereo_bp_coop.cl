/* The cooperative message update (PV_BP_UPDATE_COOPERATIVE), included by
 * stereo_bp.cl after stereo_bp_send.cl (msg_t, load_msg, store_msg) and
 * backends/common/bp_scan_math.h (the exact chains and jumps).
 *
 * One work-group updates COOP_PIXELS pixels of one row and colour, with
 * COOP_LANES work-items per pixel: lane l holds the COOP_VALUES consecutive
 * disparities from l * COOP_VALUES of all four outgoing messages, in
 * registers (the last lane padded with +INFINITY).  The data costs and the
 * four incoming vectors are read once for the four messages.  Work-items
 * of neighbouring pixels (local id 0) read neighbouring addresses of each
 * disparity plane, so with COOP_PIXELS >= 8 (float) or 16 (half) every
 * 32-byte sector read is used whole.
 *
 * Per message, as in the CPU oracle's send_min: h = data + the three
 * incoming messages; the forward and the backward pass each run as lane
 * chains, a Hillis-Steele scan of the lanes' ends through local memory
 * (pv_bp_carry) and the lane chains again from the true carries, which
 * gives the serial passes' bits; the minimum of h rides along the two
 * scans (prefix and suffix minima, exact in any order); the output is
 * min(m, min_h + disc_max) - min_h.  A scan reaches COOP_SCAN_LANES lanes
 * back (forward) or ahead (backward), a power of two <= COOP_LANES that
 * the host chose so that a value from further away would arrive above the
 * truncation min_h + disc_max (pv_bp_scan_lanes in bp_scan_math.h): the
 * output's bits are those of the whole scan.  When it reaches less than
 * all lanes, the scans' minima cover a window of lanes around each lane,
 * and the backward scan's last exchange gathers min_h from a few lanes
 * whose windows cover them all.  Barriers: log2(COOP_SCAN_LANES) + 1 per
 * pass, the exchange buffers alternate so that one barrier per step
 * suffices (a buffer is written again only after everyone passed the
 * barrier behind the reads of it); a pixel's two passes use them an even
 * number of times, so the next pixel of a group (COOP_ROWS > 1) starts
 * again from buffer 0 with the same guarantee.
 *
 * A level's first round (bp_round_coop_first) reads the coarser level's
 * messages itself instead of a hand-down launch.  The cooperative path
 * also has its own data-cost kernels (one value per work-item) and
 * disparity read-out (the argmin spread over the lanes); see
 * docs/bp-at-scale.md. */

#define COOP_PIXELS BP_COOP_PIXELS
#define COOP_LANES BP_COOP_LANES
#define COOP_VALUES BP_COOP_VALUES
#define COOP_ROWS BP_COOP_ROWS
#define COOP_SCAN_LANES BP_COOP_SCAN_LANES
/* A lane's scanned minima cover lanes [lane - COOP_SCAN_LANES + 1, lane +
 * COOP_SCAN_LANES - 1]: the windows of lanes COOP_SCAN_LANES - 1, that
 * plus COOP_WINDOW, ... (the last one clamped) cover every lane. */
#define COOP_WINDOW (2 * COOP_SCAN_LANES - 1)

/* Exchange slot: buffer (0, 1), quantity (0 lane ends, 1 minima),
 * direction, lane, pixel. */
int coop_slot(int buffer, int quantity, int dir, int lane, int p)
{
    return (((buffer * 2 + quantity) * 4 + dir) * COOP_LANES + lane) * COOP_PIXELS + p;
}

/* (Every loop over the directions or the scan's steps is unrolled, so
 * that the per-direction arrays stay in registers.) */

/* Inclusive scan of the lanes' ends (and of their minima) over the
 * COOP_SCAN_LANES lanes up to each one, backwards (forward) or onwards
 * (backward); then every lane's carry is the scanned end of the lane just
 * before (after) it.  With `gather` (the backward scan, spread[] holding
 * the forward scan's minima), the last exchange also carries each lane's
 * minima over its window both ways and leaves in spread[] the minima over
 * all lanes. */
void coop_scan(float *ends, float *lows, float *carries, int forward, __local float *xs,
               int lane, int p, int *buffer, int gather, float *spread)
{
#pragma unroll
    for (int offset = 1; offset < COOP_SCAN_LANES; offset <<= 1) {
#pragma unroll
        for (int dir = 0; dir < 4; dir++) {
            xs[coop_slot(*buffer, 0, dir, lane, p)] = ends[dir];
            xs[coop_slot(*buffer, 1, dir, lane, p)] = lows[dir];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int other = forward ? lane - offset : lane + offset;
        const int inside = other >= 0 && other < COOP_LANES;
#pragma unroll
        for (int dir = 0; dir < 4; dir++) {
            if (!inside)
                continue;
            ends[dir] = pv_bp_carry(ends[dir], xs[coop_slot(*buffer, 0, dir, other, p)],
                                    COOP_VALUES * offset);
            const float low = xs[coop_slot(*buffer, 1, dir, other, p)];
            lows[dir] = low < lows[dir] ? low : lows[dir];
        }
        *buffer ^= 1;
    }
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        xs[coop_slot(*buffer, 0, dir, lane, p)] = ends[dir];
        if (gather)
            xs[coop_slot(*buffer, 1, dir, lane, p)] = lows[dir] < spread[dir] ? lows[dir]
                                                                           : spread[dir];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int before = forward ? lane - 1 : lane + 1;
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        carries[dir] = before >= 0 && before < COOP_LANES
                           ? xs[coop_slot(*buffer, 0, dir, before, p)]
                           : INFINITY;
        if (!gather)
            continue;
        float all = INFINITY;
#pragma unroll
        for (int c = COOP_SCAN_LANES - 1; c < COOP_LANES + COOP_SCAN_LANES - 1; c += COOP_WINDOW) {
            const float low = xs[coop_slot(*buffer, 1, dir, c < COOP_LANES ? c : COOP_LANES - 1, p)];
            all = low < all ? low : all;
        }
        spread[dir] = all;
    }
    *buffer ^= 1;
}

/* The lane's inputs of a pixel: in[0] the data costs (stride `plane`; from
 * the images with `fine`, for tile pixel (x, y)), in[1 .. 4] the incoming vectors from up, down, left and right (stride
 * `in_plane`: the coarser level's, when they are read straight from it);
 * a vector whose bit in `present` (bit dir: the vector from the neighbour
 * in direction dir) is clear is read as zeros without touching memory.
 * Nothing is read past NDISP or for a work-item without a pixel. */
void coop_load(__global const float *cost, int plane, __global const msg_t *from_up,
               __global const msg_t *from_down, __global const msg_t *from_left,
               __global const msg_t *from_right, int in_plane, int present, int lane,
               int active, const fine_costs *fine, int x, int y, float in[5][COOP_VALUES])
{
    int xa = 0, row = 0;
    const float value = fine && active ? fine_value(fine, x, y, &xa, &row) : 0.0f;
#pragma unroll
    for (int k = 0; k < COOP_VALUES; k++) {
        const int d = lane * COOP_VALUES + k;
        if (active && d < NDISP) {
            const int i = d * in_plane;
            in[0][k] = fine ? fine_cost(fine, xa, row, value, d) : cost[d * plane];
            in[1][k] = (present >> DIR_UP) & 1 ? load_msg(from_up, i) : 0.0f;
            in[2][k] = (present >> DIR_DOWN) & 1 ? load_msg(from_down, i) : 0.0f;
            in[3][k] = (present >> DIR_LEFT) & 1 ? load_msg(from_left, i) : 0.0f;
            in[4][k] = (present >> DIR_RIGHT) & 1 ? load_msg(from_right, i) : 0.0f;
        }
    }
}

/* h of the four outgoing messages for the lane's disparities from the
 * inputs of coop_load: data + the three incoming vectors that do not come
 * from the message's direction, in the order up, down, left, right
 * (send_four's); +INFINITY past NDISP or for a work-item without a pixel. */
void coop_combine(float in[5][COOP_VALUES], int lane, int active, float h[4][COOP_VALUES])
{
#pragma unroll
    for (int k = 0; k < COOP_VALUES; k++) {
        const int d = lane * COOP_VALUES + k;
        if (active && d < NDISP) {
            const float data = in[0][k], up = in[1][k], down = in[2][k];
            const float left = in[3][k], right = in[4][k];
            h[DIR_UP][k] = data + down + left + right;
            h[DIR_DOWN][k] = data + up + left + right;
            h[DIR_LEFT][k] = data + up + down + right;
            h[DIR_RIGHT][k] = data + up + down + left;
        } else {
#pragma unroll
            for (int dir = 0; dir < 4; dir++)
                h[dir][k] = INFINITY;
        }
    }
}

/* The passes of the four messages whose h the group's work-items hold
 * (every work-item takes part, with or without a pixel: the scans have
 * barriers), and the messages in the directions of `sends` written to
 * the pixel's slot `own` of colour `colour`. */
void coop_send_four(__global msg_t *msgs, level_geometry g, int colour, int own, int sends,
                    float h[4][COOP_VALUES], float disc_max, __local float *xs, int lane, int p)
{
    float ends[4], lows[4], carries[4], lows_after[4];
    int buffer = 0;
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        float low = INFINITY;
#pragma unroll
        for (int k = 0; k < COOP_VALUES; k++)
            low = h[dir][k] < low ? h[dir][k] : low;
        lows[dir] = lows_after[dir] = low;
        ends[dir] = pv_bp_forward_chain(h[dir], COOP_VALUES, INFINITY);
    }
    coop_scan(ends, lows, carries, 1, xs, lane, p, &buffer, 0, 0);
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        pv_bp_forward_chain(h[dir], COOP_VALUES, carries[dir]);
        /* the padding must not feed the backward pass */
#pragma unroll
        for (int k = 0; k < COOP_VALUES; k++)
            if (lane * COOP_VALUES + k >= NDISP)
                h[dir][k] = INFINITY;
        ends[dir] = pv_bp_backward_chain(h[dir], COOP_VALUES, INFINITY);
    }
    /* a partial scan's minima cover a window of lanes: min_h is gathered */
    const int gather = COOP_SCAN_LANES < COOP_LANES;
    float spread[4];
#pragma unroll
    for (int dir = 0; dir < 4; dir++)
        spread[dir] = lows[dir];
    coop_scan(ends, lows_after, carries, 0, xs, lane, p, &buffer, gather, spread);

#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        pv_bp_backward_chain(h[dir], COOP_VALUES, carries[dir]);
        if (!((sends >> dir) & 1))
            continue;
        const float min_h = gather ? spread[dir]
                                   : lows[dir] < lows_after[dir] ? lows[dir] : lows_after[dir];
        __global msg_t *out = message_plane(msgs, g, dir, colour) + own;
#pragma unroll
        for (int k = 0; k < COOP_VALUES; k++) {
            const int d = lane * COOP_VALUES + k;
            if (d < NDISP)
                store_msg(out, d * g.plane, pv_bp_min_normalised(h[dir][k], min_h, disc_max));
        }
    }
}

/* The lane's inputs of pixel (2 j + parity, y) of `colour` in a round
 * after the first (the other colour's messages of the level); whether the
 * pixel is in the level is returned. */
int coop_load_pixel(__global const msg_t *msgs, __global const float *cost, level_geometry g,
                    int colour, int j, int y, int lane, const fine_costs *fine,
                    float in[5][COOP_VALUES])
{
    const int x = 2 * j + ((y + colour) & 1);
    const int active = x < g.width && y < g.height;
    const int other = colour ^ 1, own = active ? slot_of(g, x, y) : 0;
    /* inactive items read nothing; their pointers stay in the buffer */
    const int column = active ? (x >> 1) + 1 : 1, row = active ? y : 0;
    __global const msg_t *from_up =
        msgs + message_plane_offset(g, DIR_DOWN, other) + row * g.pitch + column;
    __global const msg_t *from_down =
        msgs + message_plane_offset(g, DIR_UP, other) + (row + 2) * g.pitch + column;
    __global const msg_t *from_left =
        msgs + message_plane_offset(g, DIR_RIGHT, other) + (row + 1) * g.pitch + (active ? (x + 1) >> 1 : 0);
    __global const msg_t *from_right =
        msgs + message_plane_offset(g, DIR_LEFT, other) + (row + 1) * g.pitch + (active ? ((x + 1) >> 1) + 1 : 0);
    coop_load(cost + own, g.plane, from_up, from_down, from_left, from_right, g.plane, 15, lane,
              active, fine, x, y, in);
    return active;
}

/* Where the last round of the finest level writes the disparities of the
 * pixels it updates (bp_round_coop_readout): the tile's output rectangle
 * (out_x, out_y, relative to the tile), the tile's place in the image and
 * the image-wide f32 map. */
typedef struct coop_readout {
    int out_x, out_y, out_width, out_height, tile_x, tile_y, image_width, min_disp;
    __global float *disparity;
} coop_readout;

/* Whether belief v at disparity d comes before (value, index) best:
 * smaller, or as small at a lower disparity, so that the lanes can be
 * folded in any order and still give best_index's first smallest. */
int coop_before(float v, int d, float best_value, int best)
{
    return v < best_value || (v == best_value && d < best);
}

/* Lanes folded per work-item in coop_best's first step. */
#define COOP_FOLD (COOP_LANES < 8 ? COOP_LANES : 8)

/* best_index of the pixel whose lane inputs `in` are (in a round, a
 * pixel's four incoming vectors are the ones the read-out would read: the
 * other colour's, which this round does not write): each lane's first
 * smallest belief (data + up + down + left + right, best_index's order of
 * additions), then lanes 0 .. COOP_FOLD - 1 fold every COOP_FOLD-th lane
 * and lane 0 folds theirs; the answer is lane 0's.  It runs before the
 * pixel's scans and exchanges through buffer 1 only: the scans' first step
 * writes buffer 0, and their second one writes buffer 1 after a barrier
 * that every work-item reaches only once its reads here are done.  A
 * previous pixel's scans (row > 0) last read buffer 1, hence the barrier
 * before the writes then. */
int coop_best(float in[5][COOP_VALUES], int lane, int active, __local float *xs, int p, int row)
{
    float best_value = INFINITY;
    int best = 0;
#pragma unroll
    for (int k = 0; k < COOP_VALUES; k++) {
        const int d = lane * COOP_VALUES + k;
        if (active && d < NDISP) {
            const float v = in[0][k] + in[1][k] + in[2][k] + in[3][k] + in[4][k];
            if (v < best_value) {
                best_value = v;
                best = d;
            }
        }
    }
    if (row > 0)
        barrier(CLK_LOCAL_MEM_FENCE);
    xs[coop_slot(1, 0, 0, lane, p)] = best_value;
    xs[coop_slot(1, 0, 1, lane, p)] = (float)best;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane < COOP_FOLD) {
        for (int other = lane + COOP_FOLD; other < COOP_LANES; other += COOP_FOLD) {
            const float v = xs[coop_slot(1, 0, 0, other, p)];
            const int d = (int)xs[coop_slot(1, 0, 1, other, p)];
            if (coop_before(v, d, best_value, best)) {
                best_value = v;
                best = d;
            }
        }
        xs[coop_slot(1, 1, 0, lane, p)] = best_value;
        xs[coop_slot(1, 1, 1, lane, p)] = (float)best;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0)
        for (int other = 1; other < COOP_FOLD; other++) {
            const float v = xs[coop_slot(1, 1, 0, other, p)];
            const int d = (int)xs[coop_slot(1, 1, 1, other, p)];
            if (coop_before(v, d, best_value, best)) {
                best_value = v;
                best = d;
            }
        }
    return best;
}

/* One checkerboard round of a level after its first, cooperatively: a
 * group updates COOP_PIXELS pixels (j = get_global_id(0)) of COOP_ROWS
 * consecutive rows from get_group_id(1) * COOP_ROWS, one row after the
 * other; the next row's loads are issued before this row's scans, so that
 * they are in flight while the scans run (with COOP_ROWS = 1 there is no
 * next row).  The next row's loads may come before this row's stores:
 * they read the other colour's planes and the data costs, which a round
 * never writes.  With `out` (the finest level's last round), the
 * disparities of the pixels updated are written too, from the inputs
 * already in registers, so that the read-out only reads the other
 * colour's pixels. */
void coop_round(__global msg_t *msgs, __global const float *data, int data_offset_, int width,
                int height, int colour, float disc_max, __local float *xs,
                const fine_costs *fine, const coop_readout *out)
{
    const int p = get_local_id(0), lane = get_local_id(1);
    const int j = get_global_id(0), first_row = get_group_id(1) * COOP_ROWS;
    const level_geometry g = geometry_of(width, height);
    __global const float *cost = data + data_offset_ + colour * NDISP * g.plane;
    float in[5][COOP_VALUES];
    int active = coop_load_pixel(msgs, cost, g, colour, j, first_row, lane, fine, in);
    for (int r = 0; r < COOP_ROWS; r++) {
        const int y = first_row + r, x = 2 * j + ((y + colour) & 1);
        float h[4][COOP_VALUES];
        coop_combine(in, lane, active, h);
        if (out) {
            const int best = coop_best(in, lane, active, xs, p, r);
            if (lane == 0 && active && x >= out->out_x && x < out->out_x + out->out_width &&
                y >= out->out_y && y < out->out_y + out->out_height)
                out->disparity[(out->tile_y + y) * out->image_width + out->tile_x + x] =
                    (float)(out->min_disp + best);
        }
        const int sends = active ? sent_mask(x, y, width, height) : 0;
        const int own = active ? slot_of(g, x, y) : 0;
        if (r + 1 < COOP_ROWS)
            active = coop_load_pixel(msgs, cost, g, colour, j, y + 1, lane, fine, in);
        coop_send_four(msgs, g, colour, own, sends, h, disc_max, xs, lane, p);
    }
}

/* Global size (COOP_PIXELS-rounded half width) x (ceil(height /
 * COOP_ROWS) * COOP_LANES). */
__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop(__global msg_t *msgs, __global const float *data, int data_offset_, int width,
                   int height, int colour, float disc_max)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    coop_round(msgs, data, data_offset_, width, height, colour, disc_max, xs, 0, 0);
}

/* bp_round_coop at the finest level: the data costs from the images (the
 * fine_costs fields as arguments; `data` is not read). */
__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop_fine(__global msg_t *msgs, __global const float *data, int data_offset_,
                        int width, int height, int colour, float disc_max,
                        __global const cost_input_t *left, __global const cost_input_t *right,
                        int image_width, int tile_x, int tile_y, int min_disp, float lambda,
                        float data_max)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    const fine_costs fine = {left, right, image_width, tile_x, tile_y, min_disp, lambda, data_max};
    coop_round(msgs, data, data_offset_, width, height, colour, disc_max, xs, &fine, 0);
}

/* bp_round_coop_fine with the disparities of the pixels it updates
 * (coop_readout's fields as arguments, then the images, lambda and
 * data_max). */
__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop_readout(__global msg_t *msgs, __global const float *data, int data_offset_,
                           int width, int height, int colour, float disc_max, int out_x,
                           int out_y, int out_width, int out_height, int tile_x, int tile_y,
                           int image_width, int min_disp, __global float *disparity,
                           __global const cost_input_t *left, __global const cost_input_t *right,
                           float lambda, float data_max)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    const coop_readout out = {out_x, out_y, out_width, out_height, tile_x, tile_y, image_width,
                              min_disp, disparity};
    const fine_costs fine = {left, right, image_width, tile_x, tile_y, min_disp, lambda, data_max};
    coop_round(msgs, data, data_offset_, width, height, colour, disc_max, xs, &fine, &out);
}

/* The lane's disparities of slot (column, row) of colour c, in the
 * directions of mask (bit dir): what bp_messages_start writes there, the
 * coarse parent's values when there is a coarser level (from_coarse) and
 * the slot holds a pixel of the level, else zeros. */
void coop_inherit(__global const msg_t *coarse, level_geometry cg, __global msg_t *msgs,
                  level_geometry g, int column, int row, int c, int from_coarse, int mask,
                  int lane)
{
    const int y = row - 1, x = 2 * (column - 1) + ((y + c) & 1);
    const int real = from_coarse && row >= 1 && row <= g.height && column >= 1 && x < g.width;
    const int source = real ? slot_of(cg, x >> 1, y >> 1) : 0;
    const int source_colour = real ? ((x >> 1) + (y >> 1)) & 1 : 0;
    const int target = row * g.pitch + column;
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        if (!((mask >> dir) & 1))
            continue;
        __global const msg_t *from = coarse + (dir * 2 + source_colour) * NDISP * cg.plane + source;
        __global msg_t *to = message_plane(msgs, g, dir, c) + target;
#pragma unroll
        for (int k = 0; k < COOP_VALUES; k++) {
            const int d = lane * COOP_VALUES + k;
            if (d < NDISP)
                store_msg(to, d * g.plane, real ? load_msg(from, d * cg.plane) : 0.0f);
        }
    }
}

/* A level's first round (colour 1) fused with the hand-down of its
 * messages: from the coarser level (from_coarse), or zeros at the
 * coarsest.  bp_messages_start would write every slot of both colours
 * (the parent's vectors, zeros on the borders) and the first round read
 * the colour-0 ones; here a colour-1 pixel reads its neighbours' vectors
 * straight from the coarser level (the same values, so the same bits),
 * and what the later rounds, the finer level or the disparities read
 * before any round writes it is written as bp_messages_start would:
 * borders and slots without a pixel (zeros), the directions a colour-1
 * pixel does not send, and of colour 0 the directions its pixel does not
 * send (all four when there is no later round to send them, rounds < 2).
 * One slot (column, row) per COOP_LANES work-items over all of the
 * level's planes: global size (pitch rounded up to COOP_PIXELS) x
 * ((height + 2) * COOP_LANES); column = get_global_id(0), row =
 * get_group_id(1).  With `fine` (the finest level) the data costs come
 * from the images. */
void coop_first(__global const msg_t *coarse, __global msg_t *msgs, __global const float *data,
                int data_offset_, int width, int height, float disc_max, int from_coarse,
                int rounds, const fine_costs *fine, __local float *xs)
{
    const int p = get_local_id(0), lane = get_local_id(1);
    const level_geometry g = geometry_of(width, height), cg = coarser(g);
    const int column = get_global_id(0), row = get_group_id(1);
    const int in_planes = column < g.pitch;
    const int y = row - 1, x = 2 * (column - 1) + ((y + 1) & 1);
    const int active = in_planes && row >= 1 && row <= height && column >= 1 && x < width;
    const int own = active ? slot_of(g, x, y) : 0;
    const int sends = active ? sent_mask(x, y, width, height) : 0;
    /* the neighbours inside the level are the ones it sends to */
    const int present = from_coarse ? sends : 0;
    float in[5][COOP_VALUES], h[4][COOP_VALUES];
    coop_load(data + data_offset_ + NDISP * g.plane + own, g.plane,
              inherited(coarse, cg, g, DIR_DOWN, x, y - 1),
              inherited(coarse, cg, g, DIR_UP, x, y + 1),
              inherited(coarse, cg, g, DIR_RIGHT, x - 1, y),
              inherited(coarse, cg, g, DIR_LEFT, x + 1, y), cg.plane, present, lane, active, fine,
              x, y, in);
    coop_combine(in, lane, active, h);
    coop_send_four(msgs, g, 1, own, sends, h, disc_max, xs, lane, p);
    if (!in_planes)
        return;
    coop_inherit(coarse, cg, msgs, g, column, row, 1, from_coarse, 15 & ~sends, lane);
    const int x0 = 2 * (column - 1) + (y & 1);
    const int real0 = row >= 1 && row <= height && column >= 1 && x0 < width;
    const int later = real0 && rounds >= 2 ? sent_mask(x0, y, width, height) : 0;
    coop_inherit(coarse, cg, msgs, g, column, row, 0, from_coarse, 15 & ~later, lane);
}

__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop_first(__global const msg_t *coarse, __global msg_t *msgs,
                         __global const float *data, int data_offset_, int width, int height,
                         float disc_max, int from_coarse, int rounds)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    coop_first(coarse, msgs, data, data_offset_, width, height, disc_max, from_coarse, rounds, 0,
               xs);
}

/* bp_round_coop_first at the finest level (the fine_costs fields as
 * arguments; `data` is not read). */
__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop_first_fine(__global const msg_t *coarse, __global msg_t *msgs,
                              __global const float *data, int data_offset_, int width,
                              int height, float disc_max, int from_coarse, int rounds,
                              __global const cost_input_t *left,
                              __global const cost_input_t *right, int image_width, int tile_x,
                              int tile_y, int min_disp, float lambda, float data_max)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    const fine_costs fine = {left, right, image_width, tile_x, tile_y, min_disp, lambda, data_max};
    coop_first(coarse, msgs, data, data_offset_, width, height, disc_max, from_coarse, rounds,
               &fine, xs);
}

/* ---------------------------------------------- data costs, one value each */

/* The level below the finest of a tile (the finest is not stored: the
 * rounds compute its costs, fine_costs): one work-item per pixel (cx, cy)
 * and disparity d (get_global_id(2)), the sum of its up to four
 * children's bp_data_cost values in coarsen_value's order (the same float
 * additions of the same values).  The work-items of neighbouring cx write
 * neighbouring addresses, and nothing is read back. */
__kernel void bp_data_second_level(__global const cost_input_t *left,
                                   __global const cost_input_t *right, int width, int tile_x,
                                   int tile_y, int tile_width, int tile_height, int min_disp,
                                   float lambda, float data_max, __global float *data,
                                   int coarse_offset)
{
    const int cx = get_global_id(0), cy = get_global_id(1), d = get_global_id(2);
    const level_geometry fg = geometry_of(tile_width, tile_height), cg = coarser(fg);
    if (cx >= cg.width || cy >= cg.height || d >= NDISP)
        return;
    float acc = 0.0f;
    for (int c = 0; c < 4; c++) {
        const int fx = 2 * cx + (c & 1), fy = 2 * cy + (c >> 1);
        if (fx >= fg.width || fy >= fg.height)
            continue;
        const int xa = tile_x + fx, row = (tile_y + fy) * width;
        acc += pixel_cost(right, row, width, xa, convert_float(left[row + xa]), min_disp + d,
                          lambda, data_max);
    }
    data[coarse_offset + (((cx + cy) & 1) * NDISP + d) * cg.plane + slot_of(cg, cx, cy)] = acc;
}

/* One coarser level from the level above it: one work-item per coarse
 * pixel and disparity (get_global_id(2)), coarsen_value's sum. */
__kernel void bp_data_halve(__global float *data, int fine_offset, int fine_width,
                            int fine_height, int coarse_offset)
{
    const level_geometry fg = geometry_of(fine_width, fine_height), cg = coarser(fg);
    const int x = get_global_id(0), y = get_global_id(1), d = get_global_id(2);
    if (x < cg.width && y < cg.height && d < NDISP)
        coarsen_value(data + fine_offset, fg, data + coarse_offset, cg, x, y, d);
}

/* ------------------------------------------------------------- disparities */

/* The disparities of the tile's output rectangle (out_x, out_y: relative
 * to the tile), as f32 into an image-wide buffer: one work-item per pixel
 * running best_index (the lowest disparity among the smallest beliefs;
 * the data costs from the images, then lambda and data_max, `data` not
 * read),
 * laid out by colour: global row 2 r + c is output row r, colour c, and
 * work-item j of it takes pixel x = 2 j + parity from out_x / 2 on, so
 * that consecutive work-items read consecutive slots of the colour's
 * planes and every load of a warp is one contiguous run of each plane.
 * only_colour >= 0: that colour's pixels only (global row r is output row
 * r), the other's having been written by bp_round_coop_readout.
 * (Spreading a pixel's disparities over lanes instead read short runs of
 * many planes at once and took 1.5 times as long on an H100.) */
__kernel void bp_disparity_coop(__global const msg_t *msgs, __global const float *data, int width,
                                int height, int out_x, int out_y, int out_width, int out_height,
                                int tile_x, int tile_y, int image_width, int min_disp,
                                __global float *disparity, int only_colour,
                                __global const cost_input_t *left,
                                __global const cost_input_t *right, float lambda, float data_max)
{
    const int both = only_colour < 0;
    const int r = both ? (int)get_global_id(1) >> 1 : (int)get_global_id(1);
    const int colour = both ? (int)get_global_id(1) & 1 : only_colour;
    const int y = out_y + r;
    const int x = 2 * ((out_x >> 1) + (int)get_global_id(0)) + ((y + colour) & 1);
    if (r >= out_height || x < out_x || x >= out_x + out_width)
        return;
    const fine_costs fine = {left, right, image_width, tile_x, tile_y, min_disp, lambda, data_max};
    const int best = best_index(msgs, data, &fine, geometry_of(width, height), x, y);
    disparity[(tile_y + y) * image_width + tile_x + x] = (float)(min_disp + best);
}
