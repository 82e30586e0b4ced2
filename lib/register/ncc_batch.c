/* Front end of the normxcorr2 batch (pv_normxcorr2_batch): one template
 * against many images of one size in one call.  Every image is checked
 * before any work; each is centred and scaled exactly as the single call
 * does, and the backend runs the whole chunk of textured images at once
 * (on OpenCL: the template uploaded and transformed once, every image's
 * work queued, one wait).  Chunks bound the working copies' memory;
 * ordinary batches are one chunk. */
#include "ncc_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP "normxcorr2_batch"

/* The working copies (and scratch maps) one backend call may hold. */
#define NCC_BATCH_CHUNK_BYTES ((size_t)256 << 20)

/* Whether an output shares memory with any input or another output
 * (pv_batch_outputs_overlap). */
static pv_status check_overlaps(pv_context *ctx, const pv_image *templ, const pv_image *images,
                                int count, const pv_image *outs)
{
    if (!outs)
        return PV_OK;
    const size_t n = 2 * (size_t)count + 1;
    const pv_image **items = malloc(n * sizeof *items);
    unsigned char *is_output = calloc(n, 1);
    pv_status status = items && is_output ? PV_OK : PV_ERR_NOMEM;
    if (status == PV_OK) {
        items[0] = templ;
        for (int i = 0; i < count; i++) {
            items[1 + 2 * (size_t)i] = &images[i];
            items[2 + 2 * (size_t)i] = &outs[i];
            is_output[2 + 2 * (size_t)i] = 1;
        }
    }
    int shared = 0;
    if (status == PV_OK)
        status = pv_batch_outputs_overlap(items, is_output, n, &shared);
    free(items);
    free(is_output);
    if (status != PV_OK)
        return pv_fail(ctx, PV_ERR_NOMEM, OP ": out of memory");
    return shared ? pv_fail(ctx, PV_ERR_INVALID,
                            OP ": an output shares memory with an input or another output")
                  : PV_OK;
}

static pv_status check_image(pv_context *ctx, const pv_image *templ, const pv_image *images,
                             int i, const pv_image *outs, int map_w, int map_h)
{
    char name[32];
    snprintf(name, sizeof name, "images[%d]", i);
    pv_status status = pv_reg_check_image(ctx, OP, name, &images[i]);
    if (status != PV_OK)
        return status;
    if (images[i].width != images[0].width || images[i].height != images[0].height)
        return pv_fail(ctx, PV_ERR_INVALID,
                       OP ": images[%d] is %dx%d but images[0] is %dx%d; a batch holds images "
                       "of one size",
                       i, images[i].width, images[i].height, images[0].width, images[0].height);
    if (outs && (status = pv_ncc_check_output(ctx, OP, templ, &images[i], &outs[i], map_w,
                                              map_h)) != PV_OK) {
        char message[256];
        const char *text = pv_context_last_error(ctx), *prefix = OP ": ";
        if (strncmp(text, prefix, strlen(prefix)) == 0)
            text += strlen(prefix);
        snprintf(message, sizeof message, "%s", text);
        return pv_fail(ctx, status, OP ": outs[%d]: %s", i, message);
    }
    if (!pv_ncc_is_finite(ctx, &images[i]))
        return pv_fail(ctx, PV_ERR_INVALID, OP ": images[%d] contains NaN or Inf", i);
    return PV_OK;
}

static pv_status check_batch(pv_context *ctx, const pv_image *templ, const pv_image *images,
                             int count, int min_overlap, const pv_image *outs,
                             const pv_ncc_result *results)
{
    pv_status status = pv_reg_check_ctx(ctx, OP);
    if (status == PV_OK && !images)
        status = pv_fail(ctx, PV_ERR_INVALID, OP ": images is NULL");
    if (status == PV_OK && count < 1)
        status = pv_fail(ctx, PV_ERR_INVALID, OP ": count %d is not positive", count);
    if (status == PV_OK && !outs && !results)
        status = pv_fail(ctx, PV_ERR_INVALID, OP ": outs and results are both NULL");
    int map_w = 0, map_h = 0;
    if (status == PV_OK)
        status = pv_ncc_check_inputs(ctx, OP, templ, &images[0], min_overlap, &map_w, &map_h);
    if (status == PV_OK && !pv_ncc_is_finite(ctx, templ))
        status = pv_fail(ctx, PV_ERR_INVALID, OP ": templ contains NaN or Inf");
    for (int i = 0; status == PV_OK && i < count; i++)
        status = check_image(ctx, templ, images, i, outs, map_w, map_h);
    if (status == PV_OK)
        status = check_overlaps(ctx, templ, images, count, outs);
    return status;
}

/* One chunk's images, by index into the caller's arrays, and its work. */
typedef struct batch_chunk {
    int *index;          /* the chunk's textured images */
    int count;
    pv_image *copies;    /* their centred, scaled copies */
    pv_image *maps;      /* their maps: the caller's outs or scratch */
} batch_chunk;

static pv_status run_chunk(pv_context *ctx, const pv_image *templ, const pv_image *images,
                           const pv_ncc_job *shape, batch_chunk *c, const pv_image *outs,
                           pv_ncc_result *found)
{
    pv_status status = PV_OK;
    for (int k = 0; status == PV_OK && k < c->count; k++) {
        const pv_image *image = &images[c->index[k]];
        status = pv_ncc_normalized_copy(ctx, OP, image, pv_ncc_image_stats(image),
                                        &c->copies[k]);
        if (status == PV_OK && outs)
            c->maps[k] = outs[c->index[k]];
        else if (status == PV_OK &&
                 pv_image_alloc(&c->maps[k], image->width + templ->width - 1,
                                image->height + templ->height - 1, PV_PIXEL_F32) != PV_OK)
            status = pv_fail(ctx, PV_ERR_NOMEM, OP ": no memory for a map");
    }
    pv_ncc_batch_job job = {shape->templ, c->copies, c->count, {shape->fft[0], shape->fft[1]},
                            shape->min_overlap, shape->templ_floor, shape->image_floor};
    if (status == PV_OK)
        status = ctx->ops->reg->normxcorr2_batch(ctx, &job, c->maps);
    for (int k = 0; status == PV_OK && pv_crosscheck_wanted(ctx) && k < c->count; k++) {
        pv_ncc_job single = *shape;
        single.image = c->copies[k];
        status = pv_ncc_crosscheck(ctx, OP, &single, &c->maps[k]);
    }
    for (int k = 0; status == PV_OK && k < c->count; k++)
        pv_ncc_peak(&c->maps[k], templ->width, templ->height, &found[c->index[k]]);
    for (int k = 0; k < c->count; k++) {
        pv_image_free(&c->copies[k]);
        if (!outs)
            pv_image_free(&c->maps[k]);
    }
    return status;
}

/* Images per backend call: as many as NCC_BATCH_CHUNK_BYTES holds. */
static int chunk_capacity(const pv_image *templ, const pv_image *image, int with_maps)
{
    size_t per_image = (size_t)image->width * image->height * sizeof(float);
    if (with_maps)
        per_image += ((size_t)image->width + templ->width - 1) *
                     ((size_t)image->height + templ->height - 1) * sizeof(float);
    size_t capacity = NCC_BATCH_CHUNK_BYTES / per_image;
    return capacity < 1 ? 1 : capacity > INT32_MAX ? INT32_MAX : (int)capacity;
}

/* Textured images through the backend chunk by chunk; the others get the
 * textureless answer.  found[i] receives image i's peak. */
static pv_status run_batch(pv_context *ctx, const pv_image *templ, const pv_image *images,
                           int count, int min_overlap, pv_image *outs, pv_ncc_result *found)
{
    pv_ncc_job shape;
    pv_status status = pv_ncc_job_shape(ctx, OP, templ, &images[0], min_overlap, &shape);
    if (status != PV_OK)
        return status;
    pv_ncc_stats t_stats = pv_ncc_image_stats(templ);
    const int textured_templ = t_stats.deviation > 0.0;
    if (textured_templ)
        status = pv_ncc_normalized_copy(ctx, OP, templ, t_stats, &shape.templ);
    const int capacity = chunk_capacity(templ, &images[0], outs == NULL);
    const int per_chunk = capacity < count ? capacity : count;
    batch_chunk c = {malloc((size_t)per_chunk * sizeof(int)), 0,
                     calloc((size_t)per_chunk, sizeof(pv_image)),
                     calloc((size_t)per_chunk, sizeof(pv_image))};
    if (status == PV_OK && (!c.index || !c.copies || !c.maps))
        status = pv_fail(ctx, PV_ERR_NOMEM, OP ": out of memory");
    for (int i = 0; status == PV_OK && i < count; i++) {
        if (!textured_templ || !(pv_ncc_image_stats(&images[i]).deviation > 0.0)) {
            pv_ncc_no_texture(outs ? &outs[i] : NULL, &found[i]);
        } else {
            c.index[c.count++] = i;
        }
        if (c.count == per_chunk || (i == count - 1 && c.count > 0)) {
            status = run_chunk(ctx, templ, images, &shape, &c, outs, found);
            c.count = 0;
        }
    }
    free(c.index);
    free(c.copies);
    free(c.maps);
    pv_image_free(&shape.templ);
    return status;
}

pv_status pv_normxcorr2_batch(pv_context *ctx, const pv_image *templ, const pv_image *images,
                              int count, int min_overlap, pv_image *outs,
                              pv_ncc_result *results)
{
    pv_status status = check_batch(ctx, templ, images, count, min_overlap, outs, results);
    if (status != PV_OK)
        return status;
    pv_ncc_result *found = malloc((size_t)count * sizeof *found);
    if (!found)
        return pv_fail(ctx, PV_ERR_NOMEM, OP ": out of memory");
    status = pv_call_begin(ctx);
    if (status == PV_OK) {
        status = run_batch(ctx, templ, images, count, min_overlap, outs, found);
        if (status != PV_OK && outs) /* no half-finished map may pass for a result */
            for (int i = 0; i < count; i++)
                pv_ncc_no_texture(&outs[i], NULL);
    }
    if (status == PV_OK && results)
        memcpy(results, found, (size_t)count * sizeof *found);
    pv_call_end(ctx);
    free(found);
    return status;
}
