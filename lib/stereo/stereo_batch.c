/* What the stereo batches share (pv_stereo_sgm_batch in stereo_sgm.c and
 * pv_stereo_sad_batch in stereo.c): the check that no output of one pair
 * shares memory with an image of another, a pair's message naming the
 * pair, and the reset of the outputs after a failure during the work. */
#include "stereo_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch_span {
    uintptr_t start, end;
    int output;
} batch_span;

static int span_order(const void *a, const void *b)
{
    const batch_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The spans sorted by start, each compared with the furthest end reached
 * so far by an output and by any image, so that the check takes n log n
 * time however long the batch. */
pv_status pv_stereo_batch_overlaps(pv_context *ctx, const char *op, const pv_image *lefts,
                                   const pv_image *rights, int count,
                                   const pv_image *disparities, const pv_image *confidences)
{
    const int per_pair = confidences ? 4 : 3;
    batch_span *spans = malloc((size_t)count * (size_t)per_pair * sizeof *spans);
    if (!spans)
        return pv_fail(ctx, PV_ERR_NOMEM, "%s: out of memory", op);
    size_t n = 0;
    for (int i = 0; i < count; i++) {
        const pv_image *images[4] = {&lefts[i], &rights[i], &disparities[i],
                                     confidences ? &confidences[i] : NULL};
        for (int k = 0; k < per_pair; k++)
            spans[n++] = (batch_span){(uintptr_t)images[k]->data,
                                      (uintptr_t)images[k]->data + pv_image_span(images[k]),
                                      k >= 2};
    }
    qsort(spans, n, sizeof *spans, span_order);
    uintptr_t any_end = 0, output_end = 0;
    int shared = 0;
    for (size_t i = 0; i < n && !shared; i++) {
        shared = spans[i].start < output_end || (spans[i].output && spans[i].start < any_end);
        any_end = spans[i].end > any_end ? spans[i].end : any_end;
        if (spans[i].output && spans[i].end > output_end)
            output_end = spans[i].end;
    }
    free(spans);
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
