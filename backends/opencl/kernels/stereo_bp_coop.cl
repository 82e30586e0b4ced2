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
 * min(m, min_h + disc_max) - min_h.  Barriers: log2(COOP_LANES) + 1 per
 * pass, the exchange buffers alternate so that one barrier per step
 * suffices (a buffer is written again only after everyone passed the
 * barrier behind the reads of it). */

#define COOP_PIXELS BP_COOP_PIXELS
#define COOP_LANES BP_COOP_LANES
#define COOP_VALUES BP_COOP_VALUES

/* Exchange slot: buffer (0, 1), quantity (0 lane ends, 1 minima),
 * direction, lane, pixel. */
int coop_slot(int buffer, int quantity, int dir, int lane, int p)
{
    return (((buffer * 2 + quantity) * 4 + dir) * COOP_LANES + lane) * COOP_PIXELS + p;
}

/* (Every loop over the directions or the scan's steps is unrolled, so
 * that the per-direction arrays stay in registers.) */

/* Inclusive scan of the lanes' ends (and of their minima) over the lanes
 * before (forward) or after (backward) each one; then every lane's carry
 * is the scanned end of the lane just before (after) it. */
void coop_scan(float *ends, float *lows, float *carries, int forward, __local float *xs,
               int lane, int p, int *buffer)
{
#pragma unroll
    for (int offset = 1; offset < COOP_LANES; offset <<= 1) {
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
    for (int dir = 0; dir < 4; dir++)
        xs[coop_slot(*buffer, 0, dir, lane, p)] = ends[dir];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int before = forward ? lane - 1 : lane + 1;
#pragma unroll
    for (int dir = 0; dir < 4; dir++)
        carries[dir] = before >= 0 && before < COOP_LANES
                           ? xs[coop_slot(*buffer, 0, dir, before, p)]
                           : INFINITY;
    *buffer ^= 1;
}

/* h of the four outgoing messages for the lane's disparities: data + the
 * three incoming vectors that do not come from the message's direction,
 * in the order up, down, left, right (send_four's); +INFINITY past NDISP
 * or for a work-item without a pixel. */
void coop_gather(__global const float *cost, __global const msg_t *from_up,
                 __global const msg_t *from_down, __global const msg_t *from_left,
                 __global const msg_t *from_right, int plane, int lane, int active,
                 float h[4][COOP_VALUES])
{
#pragma unroll
    for (int k = 0; k < COOP_VALUES; k++) {
        const int d = lane * COOP_VALUES + k;
        if (active && d < NDISP) {
            const int i = d * plane;
            const float data = cost[i];
            const float up = load_msg(from_up, i), down = load_msg(from_down, i);
            const float left = load_msg(from_left, i), right = load_msg(from_right, i);
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

/* One checkerboard round of a level, cooperatively: global size
 * (COOP_PIXELS-rounded half width) x (height * COOP_LANES); pixel
 * (2 j + parity, y) with j = get_global_id(0), y = get_group_id(1). */
__kernel __attribute__((reqd_work_group_size(COOP_PIXELS, COOP_LANES, 1)))
void bp_round_coop(__global msg_t *msgs, __global const float *data, int data_offset_, int width,
                   int height, int colour, float disc_max)
{
    __local float xs[2 * 2 * 4 * COOP_LANES * COOP_PIXELS];
    const int p = get_local_id(0), lane = get_local_id(1);
    const int y = get_group_id(1), x = 2 * (int)get_global_id(0) + ((y + colour) & 1);
    const level_geometry g = geometry_of(width, height);
    const int active = x < width && y < height;
    const int other = colour ^ 1, own = active ? slot_of(g, x, y) : 0;
    /* inactive items read nothing; their pointers stay in the buffer */
    const int column = active ? (x >> 1) + 1 : 1, row = active ? y : 0;
    __global const msg_t *from_up = message_plane(msgs, g, DIR_DOWN, other) + row * g.pitch + column;
    __global const msg_t *from_down =
        message_plane(msgs, g, DIR_UP, other) + (row + 2) * g.pitch + column;
    __global const msg_t *from_left =
        message_plane(msgs, g, DIR_RIGHT, other) + (row + 1) * g.pitch + (active ? (x + 1) >> 1 : 0);
    __global const msg_t *from_right =
        message_plane(msgs, g, DIR_LEFT, other) + (row + 1) * g.pitch + (active ? ((x + 1) >> 1) + 1 : 0);
    float h[4][COOP_VALUES];
    coop_gather(data + data_offset_ + colour * NDISP * g.plane + own, from_up, from_down,
                from_left, from_right, g.plane, lane, active, h);

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
    coop_scan(ends, lows, carries, 1, xs, lane, p, &buffer);
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
    coop_scan(ends, lows_after, carries, 0, xs, lane, p, &buffer);

    const int sends = active ? sent_mask(x, y, width, height) : 0;
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        pv_bp_backward_chain(h[dir], COOP_VALUES, carries[dir]);
        if (!((sends >> dir) & 1))
            continue;
        const float min_h = lows[dir] < lows_after[dir] ? lows[dir] : lows_after[dir];
        __global msg_t *out = message_plane(msgs, g, dir, colour) + own;
#pragma unroll
        for (int k = 0; k < COOP_VALUES; k++) {
            const int d = lane * COOP_VALUES + k;
            if (d < NDISP)
                store_msg(out, d * g.plane, pv_bp_min_normalised(h[dir][k], min_h, disc_max));
        }
    }
}
