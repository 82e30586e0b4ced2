/* Hierarchical belief-propagation stereo (include/parvis/stereo.h), host
 * side in ../stereo_bp.c, CPU oracle in ../../cpu/stereo_bp.c: the same
 * float operations in the same order, so both give the same bits.
 *
 * Defines from the host:
 *   launch parameters (family "bp", as the host resolved them for this
 *     job's ndisp): BP_WG_X, BP_WG_Y (work-group shape), BP_REG_VALUES,
 *     BP_LOCAL_VALUES (message-array split caps), BP_SMALL_LEVEL_PIXELS
 *     (host only), BP_FUSED_PASSES (five passes over the message array
 *     instead of eight, stereo_bp_send.cl), BP_DIR_ITEMS (1, or 4: bp_round
 *     with one work-item per pixel and direction);
 *   per job: BP_HALF_MESSAGES: messages stored as half (stereo_bp_send.cl);
 *     with the cooperative update (PV_BP_UPDATE_COOPERATIVE) only:
 *     BP_COOP_PIXELS, BP_COOP_LANES (launch parameters: pixels per group,
 *     work-items per pixel) and BP_COOP_VALUES (values per work-item), for
 *     bp_round_coop (stereo_bp_coop.cl);
 *   per program: BP_NDISP; BP_NREG, BP_NLOC, BP_NPRIV: how the message
 *     array being computed is split (the paper's hybrid): the first NREG
 *     values in a private array whose loops are fully unrolled (registers),
 *     the next NLOC in local memory (NLOC values per work-item), the last
 *     NPRIV in a private array indexed in a loop (spilled to the device's
 *     per-thread memory); BP_PIXEL_U8: input pixel type; BP_COST_FROM_RAW:
 *     the data costs read the input pixels (no smoothing).
 *
 * Layout (colour-split, so that the work-items of one checkerboard colour
 * read and write contiguous memory): a level of w x h pixels keeps, per
 * colour c = (x + y) & 1, planes of pitch = (w + 1) / 2 + 2 columns and
 * h + 2 rows; pixel (x, y) sits at row y + 1, column (x >> 1) + 1 of its
 * colour's planes.  The border of zeros stands for the messages from
 * outside the image.  Data costs: plane (c * NDISP + d); messages, stored
 * at the sender (what it sends towards dir): plane ((dir * 2 + c) * NDISP
 * + d), in msg_t (float or half).  A round updates one colour and reads
 * only the other. */
#pragma OPENCL FP_CONTRACT OFF

#define NDISP BP_NDISP
#define NREG BP_NREG
#define NLOC BP_NLOC
#define NPRIV BP_NPRIV
#define GROUP_ITEMS (BP_WG_X * BP_WG_Y)

#define DIR_UP 0
#define DIR_DOWN 1
#define DIR_LEFT 2
#define DIR_RIGHT 3

#if BP_PIXEL_U8
typedef uchar pixel_t;
#else
typedef float pixel_t;
#endif

/* ---------------------------------------------------------------- geometry */

typedef struct level_geometry {
    int width, height;
    int pitch;   /* (width + 1) / 2 + 2 */
    int plane;   /* pitch * (height + 2) */
} level_geometry;

level_geometry geometry_of(int width, int height)
{
    level_geometry g;
    g.width = width;
    g.height = height;
    g.pitch = (width + 1) / 2 + 2;
    g.plane = g.pitch * (height + 2);
    return g;
}

level_geometry coarser(level_geometry g)
{
    return geometry_of((g.width + 1) / 2, (g.height + 1) / 2);
}

int slot_of(level_geometry g, int x, int y)
{
    return (y + 1) * g.pitch + (x >> 1) + 1;
}

/* Offset of a level's data costs in the pyramid buffer. */
int data_offset(level_geometry g, int level)
{
    int offset = 0;
    for (int l = 0; l < level; l++) {
        offset += 2 * NDISP * g.plane;
        g = coarser(g);
    }
    return offset;
}

/* ------------------------------------------------------------ image set-up */

/* Row pass of the smoothing, both images (tmp holds two images). */
__kernel void bp_smooth_rows(__global const pixel_t *left, __global const pixel_t *right,
                             __global float *tmp, __constant float *weights, int radius,
                             int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    const int row = y * width;
    float acc_left = 0.0f, acc_right = 0.0f;
    for (int k = 0; k <= 2 * radius; k++) {
        const int xs = clamp(x + k - radius, 0, width - 1);
        acc_left += weights[k] * convert_float(left[row + xs]);
        acc_right += weights[k] * convert_float(right[row + xs]);
    }
    tmp[row + x] = acc_left;
    tmp[width * height + row + x] = acc_right;
}

__kernel void bp_smooth_cols(__global const float *tmp, __global float *left_out,
                             __global float *right_out, __constant float *weights, int radius,
                             int width, int height)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    __global const float *tmp_right = tmp + width * height;
    float acc_left = 0.0f, acc_right = 0.0f;
    for (int k = 0; k <= 2 * radius; k++) {
        const int i = clamp(y + k - radius, 0, height - 1) * width + x;
        acc_left += weights[k] * tmp[i];
        acc_right += weights[k] * tmp_right[i];
    }
    left_out[y * width + x] = acc_left;
    right_out[y * width + x] = acc_right;
}

/* -------------------------------------------------------------- data costs */

/* The data costs read the smoothed f32 images, or, without smoothing
 * (BP_COST_FROM_RAW), the caller's pixels directly (the same values). */
#if BP_COST_FROM_RAW
typedef pixel_t cost_input_t;
#else
typedef float cost_input_t;
#endif

/* Finest-level cost of pixel (x, y) of the tile (in range) at disparity
 * index d; `value` is the left pixel, row the image row's start. */
float pixel_cost(__global const cost_input_t *right, int row, int width, int xa, float value,
                 int disparity, float lambda, float data_max)
{
    const int xr = clamp(xa - disparity, 0, width - 1);
    float diff = fabs(value - convert_float(right[row + xr]));
    diff = diff < data_max ? diff : data_max;
    return lambda * diff;
}

/* The finest level's costs computed where they are used instead of read
 * from the pyramid (the cooperative update stores no finest level): the
 * images, the image's width, the tile's place, the range's start, lambda
 * and data_max.  A pixel's costs then cost one left pixel and a run of
 * the right image's row, which neighbouring pixels share in the caches,
 * instead of NDISP floats of the pyramid each; the values are
 * pixel_cost's, the ones bp_data_cost stores. */
typedef struct fine_costs {
    __global const cost_input_t *left, *right;
    int image_width, tile_x, tile_y, min_disp;
    float lambda, data_max;
} fine_costs;

/* The left pixel of tile pixel (x, y) and its image row's start. */
float fine_value(const fine_costs *f, int x, int y, int *xa, int *row)
{
    *xa = f->tile_x + x;
    *row = (f->tile_y + y) * f->image_width;
    return convert_float(f->left[*row + *xa]);
}

/* Cost at disparity index d of the pixel of fine_value. */
float fine_cost(const fine_costs *f, int xa, int row, float value, int d)
{
    return pixel_cost(f->right, row, f->image_width, xa, value, f->min_disp + d, f->lambda,
                      f->data_max);
}

/* Finest level of a tile at (tile_x, tile_y) of an image `width` wide. */
__kernel void bp_data_cost(__global const cost_input_t *left, __global const cost_input_t *right,
                           int width, int tile_x, int tile_y, int tile_width, int tile_height,
                           int min_disp, float lambda, float data_max, __global float *data)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= tile_width || y >= tile_height)
        return;
    const level_geometry g = geometry_of(tile_width, tile_height);
    const int xa = tile_x + x, row = (tile_y + y) * width;
    const float value = convert_float(left[row + xa]);
    __global float *out = data + ((x + y) & 1) * NDISP * g.plane + slot_of(g, x, y);
    for (int d = 0; d < NDISP; d++)
        out[d * g.plane] = pixel_cost(right, row, width, xa, value, min_disp + d, lambda, data_max);
}

/* Disparity d of coarse pixel (x, y): the sum of its 2x2 children in
 * raster order. */
void coarsen_value(__global const float *fine, level_geometry fg, __global float *coarse,
                   level_geometry cg, int x, int y, int d)
{
    float acc = 0.0f;
    for (int c = 0; c < 4; c++) {
        const int fx = 2 * x + (c & 1), fy = 2 * y + (c >> 1);
        if (fx < fg.width && fy < fg.height)
            acc += fine[(((fx + fy) & 1) * NDISP + d) * fg.plane + slot_of(fg, fx, fy)];
    }
    coarse[(((x + y) & 1) * NDISP + d) * cg.plane + slot_of(cg, x, y)] = acc;
}

void coarsen_pixel(__global const float *fine, level_geometry fg, __global float *coarse,
                   level_geometry cg, int x, int y)
{
    for (int d = 0; d < NDISP; d++)
        coarsen_value(fine, fg, coarse, cg, x, y, d);
}

__kernel void bp_data_coarsen(__global float *data, int fine_offset, int fine_width,
                              int fine_height, int coarse_offset)
{
    const level_geometry fg = geometry_of(fine_width, fine_height), cg = coarser(fg);
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < cg.width && y < cg.height)
        coarsen_pixel(data + fine_offset, fg, data + coarse_offset, cg, x, y);
}

/* The finest level and the next `fused` coarser ones in one launch.  A
 * work-group is a square block of 2^fused x 2^fused finest pixels (block
 * edges fall on every fused level's 2x2 blocks): each item stores its
 * pixel's costs, then, level by level, the group's items share the sums
 * of the block's level-l pixels (one pixel and disparity each, children in
 * coarsen_value's order), read back from global memory, which the barrier
 * makes visible inside the group. */
__kernel void bp_data_pyramid(__global const cost_input_t *left,
                              __global const cost_input_t *right, int width, int tile_x,
                              int tile_y, int tile_width, int tile_height, int min_disp,
                              float lambda, float data_max, __global float *data, int fused)
{
    const int x = get_global_id(0), y = get_global_id(1);
    level_geometry g = geometry_of(tile_width, tile_height);
    if (x < tile_width && y < tile_height) {
        const int xa = tile_x + x, row = (tile_y + y) * width;
        const float value = convert_float(left[row + xa]);
        __global float *out = data + ((x + y) & 1) * NDISP * g.plane + slot_of(g, x, y);
        for (int d = 0; d < NDISP; d++)
            out[d * g.plane] = pixel_cost(right, row, width, xa, value, min_disp + d, lambda, data_max);
    }
    const int items = get_local_size(0) * get_local_size(1);
    const int lid = get_local_id(1) * get_local_size(0) + get_local_id(0);
    int offset = 0;
    for (int l = 1; l <= fused; l++) {
        barrier(CLK_GLOBAL_MEM_FENCE);
        const level_geometry cg = coarser(g);
        const int next = offset + 2 * NDISP * g.plane;
        const int side = (int)get_local_size(0) >> l, count = side * side;
        const int bx = (int)get_group_id(0) * side, by = (int)get_group_id(1) * side;
        /* the block's level-l pixels times the disparities, over all items */
        for (int i = lid; i < count * NDISP; i += items) {
            const int p = i % count, cx = bx + p % side, cy = by + p / side;
            if (cx < cg.width && cy < cg.height)
                coarsen_value(data + offset, g, data + next, cg, cx, cy, i / count);
        }
        offset = next;
        g = cg;
    }
}

/* ---------------------------------------------------------------- messages */

#include "stereo_bp_send.cl"

/* Slot (column, row) of colour c of a level, the directions in dir_mask
 * (bit dir): zero, or the coarse parent's messages when it holds a pixel. */
void inherit_colour(__global const msg_t *coarse, level_geometry cg, __global msg_t *fine,
                    level_geometry fg, int column, int row, int from_coarse, int c, int dir_mask)
{
    const int y = row - 1, x = 2 * (column - 1) + ((y + c) & 1);
    const int real = from_coarse && row >= 1 && row <= fg.height && column >= 1 &&
                     x < fg.width;
    const int source = real ? slot_of(cg, x >> 1, y >> 1) : 0;
    const int source_colour = ((x >> 1) + (y >> 1)) & 1;
    for (int dir = 0; dir < 4; dir++) {
        if (!((dir_mask >> dir) & 1))
            continue;
        for (int d = 0; d < NDISP; d++) {
            const int target = ((dir * 2 + c) * NDISP + d) * fg.plane + row * fg.pitch + column;
            store_msg(fine, target,
                      real ? load_msg(coarse, ((dir * 2 + source_colour) * NDISP + d) * cg.plane +
                                                  source)
                           : 0.0f);
        }
    }
}

/* Slot (column, row) of both colours of a level, all four directions. */
void inherit_slot(__global const msg_t *coarse, level_geometry cg, __global msg_t *fine,
                  level_geometry fg, int column, int row, int from_coarse)
{
    for (int c = 0; c < 2; c++)
        inherit_colour(coarse, cg, fine, fg, column, row, from_coarse, c, 15);
}

/* Messages of a level: from its coarser level, or zero (from_coarse = 0). */
__kernel void bp_messages_start(__global const msg_t *coarse, __global msg_t *fine, int width,
                                int height, int from_coarse)
{
    const level_geometry fg = geometry_of(width, height), cg = coarser(fg);
    const int column = get_global_id(0), row = get_global_id(1);
    if (column < fg.pitch && row < fg.height + 2)
        inherit_slot(coarse, cg, fine, fg, column, row, from_coarse);
}

/* Offset of the plane of direction dir, colour colour, disparity 0. */
int message_plane_offset(level_geometry g, int dir, int colour)
{
    return (dir * 2 + colour) * NDISP * g.plane;
}

__global msg_t *message_plane(__global msg_t *msgs, level_geometry g, int dir, int colour)
{
    return msgs + message_plane_offset(g, dir, colour);
}

/* Directions in which the pixel (x, y) of a w x h level sends (bit dir):
 * not towards outside the level. */
int sent_mask(int x, int y, int width, int height)
{
    return (y > 0) << DIR_UP | (y < height - 1) << DIR_DOWN | (x > 0) << DIR_LEFT |
           (x < width - 1) << DIR_RIGHT;
}

/* Pixel (x, y) of colour `colour` at slot `own` sends its messages in the
 * directions of dirs (bit dir) that stay inside the level, from the
 * incoming vectors from_* (stride in_plane): towards dir, the three that
 * do not come from dir, in the order up, down, left, right. */
void send_four(__global msg_t *msgs, __global const float *cost, __global const msg_t *from_up,
               __global const msg_t *from_down, __global const msg_t *from_left,
               __global const msg_t *from_right, int in_plane, level_geometry g, int colour,
               int x, int y, int own, int dirs, float disc_max, float inv_n, __local float *lm,
               int lid, int lstride)
{
    const int sends = dirs & sent_mask(x, y, g.width, g.height);
#pragma unroll
    for (int dir = 0; dir < 4; dir++) {
        if (!((sends >> dir) & 1))
            continue;
        __global const msg_t *a = dir == DIR_UP ? from_down : from_up;
        __global const msg_t *b = dir <= DIR_DOWN ? from_left : from_down;
        __global const msg_t *c = dir <= DIR_LEFT ? from_right : from_left;
        send_message(cost, a, b, c, message_plane(msgs, g, dir, colour) + own, g.plane, in_plane,
                     disc_max, inv_n, lm, lid, lstride);
    }
}

/* Pixel (2j + parity, y) of colour `colour` sends its four messages. */
void update_pixel(__global msg_t *msgs, __global const float *data, level_geometry g, int colour,
                  int j, int y, int dirs, float disc_max, float inv_n, __local float *lm, int lid,
                  int lstride)
{
    const int x = 2 * j + ((y + colour) & 1);
    if (x >= g.width || y >= g.height)
        return;
    const int other = colour ^ 1, own = slot_of(g, x, y);
    __global const msg_t *from_up = message_plane(msgs, g, DIR_DOWN, other) + y * g.pitch + (x >> 1) + 1;
    __global const msg_t *from_down =
        message_plane(msgs, g, DIR_UP, other) + (y + 2) * g.pitch + (x >> 1) + 1;
    __global const msg_t *from_left =
        message_plane(msgs, g, DIR_RIGHT, other) + (y + 1) * g.pitch + ((x + 1) >> 1);
    __global const msg_t *from_right =
        message_plane(msgs, g, DIR_LEFT, other) + (y + 1) * g.pitch + ((x + 1) >> 1) + 1;
    __global const float *cost = data + colour * NDISP * g.plane + own;
    send_four(msgs, cost, from_up, from_down, from_left, from_right, g.plane, g, colour, x, y, own,
              dirs, disc_max, inv_n, lm, lid, lstride);
}

/* One checkerboard round of a level: one work-item per pixel of `colour`,
 * or, with BP_DIR_ITEMS = 4, four, one per direction (get_global_id(2)):
 * four times the work-items, each with a quarter of the serial work. */
__kernel __attribute__((reqd_work_group_size(BP_WG_X, BP_WG_Y, 1)))
void bp_round(__global msg_t *msgs, __global const float *data, int data_offset_, int width,
              int height, int colour, float disc_max, float inv_n)
{
    __local float lm[(NLOC > 0 ? NLOC : 1) * GROUP_ITEMS];
    const int lid = get_local_id(1) * BP_WG_X + get_local_id(0), lstride = GROUP_ITEMS;
    const int dirs = BP_DIR_ITEMS == 4 ? 1 << get_global_id(2) : 15;
    update_pixel(msgs, data + data_offset_, geometry_of(width, height), colour, get_global_id(0),
                 get_global_id(1), dirs, disc_max, inv_n, lm, lid, lstride);
}

/* What pixel (x, y) of a level holds in direction dir right after the
 * hand-down from its coarser level: its parent's vector in coarse, or, for
 * a position outside the level, the coarse level's slot 0 (a border slot:
 * zeros in every plane). */
__global const msg_t *inherited(__global const msg_t *coarse, level_geometry cg,
                                level_geometry fg, int dir, int x, int y)
{
    if (x < 0 || y < 0 || x >= fg.width || y >= fg.height)
        return coarse;
    const int colour = ((x >> 1) + (y >> 1)) & 1;
    return coarse + (dir * 2 + colour) * NDISP * cg.plane + slot_of(cg, x >> 1, y >> 1);
}

/* Slot (column, row) of colour 0 at the hand-down: all four directions, or,
 * when a later round (rounds >= 2) overwrites the ones its pixel sends
 * before anything reads them, only the others (the finer level may still
 * inherit those). */
void inherit_colour0(__global const msg_t *coarse, level_geometry cg, __global msg_t *msgs,
                     level_geometry g, int column, int row, int rounds)
{
    const int y = row - 1, x = 2 * (column - 1) + (y & 1);
    const int real = row >= 1 && row <= g.height && column >= 1 && x < g.width;
    const int mask = real && rounds >= 2 ? 15 & ~sent_mask(x, y, g.width, g.height) : 15;
    if (mask)
        inherit_colour(coarse, cg, msgs, g, column, row, 1, 0, mask);
}

/* bp_messages_start (from a coarser level) fused with the level's first
 * round (colour 1): one work-item per slot (column, row).  Colour 0 and the
 * borders get the handed-down messages (inherit_colour0); a colour-1 pixel
 * sends its messages from the handed-down ones of its neighbours, read
 * straight from the coarse level (the same values, so the same bits), and
 * keeps the handed-down vectors of the directions it does not send. */
__kernel __attribute__((reqd_work_group_size(BP_WG_X, BP_WG_Y, 1)))
void bp_round_inherit(__global const msg_t *coarse, __global msg_t *msgs,
                      __global const float *data, int data_offset_, int width, int height,
                      float disc_max, float inv_n, int rounds)
{
    __local float lm[(NLOC > 0 ? NLOC : 1) * GROUP_ITEMS];
    const int lid = get_local_id(1) * BP_WG_X + get_local_id(0), lstride = GROUP_ITEMS;
    const level_geometry g = geometry_of(width, height), cg = coarser(g);
    const int column = get_global_id(0), row = get_global_id(1);
    if (column >= g.pitch || row >= g.height + 2)
        return;
    inherit_colour0(coarse, cg, msgs, g, column, row, rounds);
    const int y = row - 1, x = 2 * (column - 1) + ((y + 1) & 1);
    if (row < 1 || row > g.height || column < 1 || x >= g.width) {
        inherit_colour(coarse, cg, msgs, g, column, row, 1, 1, 15);
        return;
    }
    const int sent = sent_mask(x, y, g.width, g.height);
    if (sent != 15)
        inherit_colour(coarse, cg, msgs, g, column, row, 1, 1, 15 & ~sent);
    const int own = slot_of(g, x, y);
    send_four(msgs, data + data_offset_ + NDISP * g.plane + own,
              inherited(coarse, cg, g, DIR_DOWN, x, y - 1), inherited(coarse, cg, g, DIR_UP, x, y + 1),
              inherited(coarse, cg, g, DIR_RIGHT, x - 1, y),
              inherited(coarse, cg, g, DIR_LEFT, x + 1, y), cg.plane, g, 1, x, y, own, 15, disc_max,
              inv_n, lm, lid, lstride);
}

/* The coarse levels small enough for one work-group: all of their rounds
 * (and the hand-over between them) in one launch, levels `coarsest` down
 * to `finest`, with messages in msgs0 (even levels) and msgs1 (odd).  Its
 * group is one row of as many work-items as the host found the compiled
 * kernel, the device and the local memory allow (not the rounds' shape);
 * lm holds NLOC values per item. */
__kernel void bp_small_levels(__global msg_t *msgs0, __global msg_t *msgs1,
                              __global const float *data, int width, int height, int coarsest,
                              int finest, int rounds, float disc_max, float inv_n,
                              __local float *lm)
{
    const int lid = get_local_id(0), lstride = get_local_size(0);
    const level_geometry top = geometry_of(width, height);
    for (int level = coarsest; level >= finest; level--) {
        level_geometry g = top;
        for (int l = 0; l < level; l++)
            g = coarser(g);
        __global msg_t *msgs = (level & 1) ? msgs1 : msgs0;
        __global const msg_t *parent = (level & 1) ? msgs0 : msgs1;
        const level_geometry cg = coarser(g);
        for (int i = lid; i < g.pitch * (g.height + 2); i += lstride)
            inherit_slot(parent, cg, msgs, g, i % g.pitch, i / g.pitch, level < coarsest);
        barrier(CLK_GLOBAL_MEM_FENCE);
        __global const float *cost = data + data_offset(top, level);
        const int half_width = (g.width + 1) / 2;
        for (int t = 0; t < rounds; t++) {
            for (int i = lid; i < half_width * g.height; i += lstride)
                update_pixel(msgs, cost, g, (t + 1) & 1, i % half_width, i / half_width, 15,
                             disc_max, inv_n, lm, lid, lstride);
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
    }
}

/* ------------------------------------------------------------- disparities */

/* argmin over d of data + the four incoming messages of pixel (x, y)
 * (ties: the smaller d); the data costs from the pyramid, or with `fine`
 * (the finest level of the cooperative update) from the images. */
int best_index(__global const msg_t *msgs, __global const float *data, const fine_costs *fine,
               level_geometry g, int x, int y)
{
    const int colour = (x + y) & 1, other = colour ^ 1;
    __global const float *cost = data + colour * NDISP * g.plane + slot_of(g, x, y);
    __global const msg_t *from_up =
        msgs + (DIR_DOWN * 2 + other) * NDISP * g.plane + y * g.pitch + (x >> 1) + 1;
    __global const msg_t *from_down =
        msgs + (DIR_UP * 2 + other) * NDISP * g.plane + (y + 2) * g.pitch + (x >> 1) + 1;
    __global const msg_t *from_left =
        msgs + (DIR_RIGHT * 2 + other) * NDISP * g.plane + (y + 1) * g.pitch + ((x + 1) >> 1);
    __global const msg_t *from_right =
        msgs + (DIR_LEFT * 2 + other) * NDISP * g.plane + (y + 1) * g.pitch + ((x + 1) >> 1) + 1;
    int xa = 0, row = 0;
    const float value = fine ? fine_value(fine, x, y, &xa, &row) : 0.0f;
    int best = 0;
    float best_value = INFINITY;
    /* unrolled so that several disparities' loads are in flight at once;
     * the comparisons stay in disparity order */
#pragma unroll 8
    for (int d = 0; d < NDISP; d++) {
        const int i = d * g.plane;
        const float data_cost = fine ? fine_cost(fine, xa, row, value, d) : cost[i];
        const float v = data_cost + load_msg(from_up, i) + load_msg(from_down, i) +
                        load_msg(from_left, i) + load_msg(from_right, i);
        if (v < best_value) {
            best_value = v;
            best = d;
        }
    }
    return best;
}

/* The disparities of the tile's output rectangle (out_x, out_y: relative
 * to the tile), as f32 into an image-wide buffer. */
__kernel void bp_disparity(__global const msg_t *msgs, __global const float *data, int width,
                           int height, int out_x, int out_y, int out_width, int out_height,
                           int tile_x, int tile_y, int image_width, int min_disp,
                           __global float *disparity)
{
    const int x = out_x + get_global_id(0), y = out_y + get_global_id(1);
    if (get_global_id(0) >= out_width || get_global_id(1) >= out_height)
        return;
    const int best = best_index(msgs, data, 0, geometry_of(width, height), x, y);
    disparity[(tile_y + y) * image_width + tile_x + x] = (float)(min_disp + best);
}

/* The cooperative update's kernels, compiled only for jobs that use it
 * (after best_index, which its read-out calls). */
#ifdef BP_COOP_LANES
#include "../../common/bp_scan_math.h"
#include "stereo_bp_coop.cl"
#endif
