/* Device-buffer form of the normxcorr2 batch (include/parvis/interop.h):
 * one template against many images in caller's buffers.  The host batch
 * gives, image by image, exactly pv_normxcorr2's maps and peaks, so the
 * device form runs pv_normxcorr2_cl (lib/interop/interop_register.c) on
 * each image in turn: the statistics, the centred copies, the map and its
 * peak stay on the device, and the results equal the host batch's bit for
 * bit.  The first image's call waits for the caller's wait list; each
 * call waits for its statistics and peak before the next starts, and the
 * last one's event is handed back.  The results are written only when
 * every image has succeeded. */
#include "interop_internal.h"

#include <stdlib.h>
#include <string.h>

#define OP "normxcorr2_batch_cl"

/* What can be refused before any image runs: the arrays, the sizes and
 * the maps' type and size. */
static pv_status check_batch(pv_context *ctx, const pv_buffer *templ, const pv_buffer *images,
                             int count, const pv_buffer *maps, const pv_ncc_result *results)
{
    if (!ctx)
        return pv_fail(NULL, PV_ERR_INVALID, OP ": ctx is NULL");
    if (!templ || !images || count < 1)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": templ or images is NULL, or count %d < 1",
                       count);
    if (!maps && !results)
        return pv_fail(ctx, PV_ERR_INVALID, OP ": maps and results are both NULL");
    for (int i = 0; i < count; i++) {
        if (images[i].width != images[0].width || images[i].height != images[0].height)
            return pv_fail(ctx, PV_ERR_INVALID, OP ": images[%d] is %dx%d but images[0] is %dx%d",
                           i, images[i].width, images[i].height, images[0].width,
                           images[0].height);
        if (maps && (maps[i].type != PV_PIXEL_F32 ||
                     maps[i].width != images[0].width + templ->width - 1 ||
                     maps[i].height != images[0].height + templ->height - 1))
            return pv_fail(ctx, PV_ERR_INVALID,
                           OP ": maps[%d] must be an F32 buffer of %dx%d", i,
                           images[0].width + templ->width - 1,
                           images[0].height + templ->height - 1);
    }
    return PV_OK;
}

pv_status pv_normxcorr2_batch_cl(pv_context *ctx, const pv_buffer *templ,
                                 const pv_buffer *images, int count, int min_overlap,
                                 const pv_buffer *maps, pv_ncc_result *results,
                                 cl_uint wait_count, const cl_event *wait_list, cl_event *done)
{
    pv_status status = check_batch(ctx, templ, images, count, maps, results);
    if (status != PV_OK)
        return status;
    pv_ncc_result *found = results ? calloc((size_t)count, sizeof *found) : NULL;
    if (results && !found)
        return pv_fail(ctx, PV_ERR_NOMEM, OP ": out of memory");
    for (int i = 0; status == PV_OK && i < count; i++)
        status = pv_normxcorr2_cl(ctx, templ, &images[i], min_overlap, maps ? &maps[i] : NULL,
                                  found ? &found[i] : NULL, i == 0 ? wait_count : 0,
                                  i == 0 ? wait_list : NULL, i == count - 1 ? done : NULL);
    if (status == PV_OK && results)
        memcpy(results, found, (size_t)count * sizeof *found);
    free(found);
    return status;
}
