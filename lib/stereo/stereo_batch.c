/* What the stereo batches share (pv_stereo_sgm_batch in stereo_sgm.c and
 * pv_stereo_sad_batch in stereo.c): the check that no output of one pair
 * shares memory with an image of another, a pair's message naming the
 * pair, and the reset of the outputs after a failure during the work. */
#include "stereo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

pv_status pv_stereo_batch_overlaps(pv_context *ctx, const char *op, const pv_image *lefts,
                                   const pv_image *rights, int count,
                                   const pv_image *disparities, const pv_image *confidences)
{
    const size_t per_pair = confidences ? 4 : 3, n = (size_t)count * per_pair;
    const pv_image **items = malloc(n * sizeof *items);
    unsigned char *is_output = malloc(n);
    pv_status status = items && is_output ? PV_OK : PV_ERR_NOMEM;
    for (size_t i = 0; i < (size_t)count && status == PV_OK; i++) {
        const pv_image *pair[4] = {&lefts[i], &rights[i], &disparities[i],
                                   confidences ? &confidences[i] : NULL};
        for (size_t k = 0; k < per_pair; k++) {
            items[i * per_pair + k] = pair[k];
            is_output[i * per_pair + k] = k >= 2;
        }
    }
    int shared = 0;
    if (status == PV_OK)
        status = pv_batch_outputs_overlap(items, is_output, n, &shared);
    free(items);
    free(is_output);
    if (status != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    if (shared)
        return pv_fail(ctx, PV_ERR_INVALID, "%s: an output shares memory with an image of the batch",
                       op);
    return PV_OK;
}

pv_status pv_stereo_batch_pair_failed(pv_context *ctx, const char *op, const char *single_op,
                                      pv_status status, int pair)
{
    char message[512];
    const char *text = pv_context_last_error(ctx);
    const size_t prefix = strlen(single_op);
    if (strncmp(text, single_op, prefix) == 0 && strncmp(text + prefix, ": ", 2) == 0)
        text += prefix + 2;
    snprintf(message, sizeof message, "%s", text);
    return pv_fail(ctx, status, "%s: pair %d: %s", op, pair, message);
}

pv_status pv_stereo_batch_same_kind(pv_context *ctx, const char *op, const pv_image *lefts,
                                    int pair)
{
    if (pv_images_same_size(&lefts[pair], &lefts[0]) && lefts[pair].type == lefts[0].type)
        return PV_OK;
    return pv_fail(ctx, PV_ERR_INVALID,
                   "%s: pair %d is %dx%d of another pixel type or size than pair 0 (%dx%d); a "
                   "batch holds pairs of one size and type",
                   op, pair, lefts[pair].width, lefts[pair].height, lefts[0].width,
                   lefts[0].height);
}

static void fill_image(pv_image *image, float value)
{
    for (int y = 0; y < image->height; y++) {
        float *row = (float *)image->data + (ptrdiff_t)y * image->stride;
        for (int x = 0; x < image->width; x++)
            row[x] = value;
    }
}

void pv_stereo_batch_reset(int count, pv_image *disparities, pv_image *confidences)
{
    for (int i = 0; i < count; i++) {
        fill_image(&disparities[i], INFINITY);
        if (confidences)
            fill_image(&confidences[i], 0.0f);
    }
}
