/* Semi-global matching over a device group: the image cut into one band of
 * rows per member, each band run by pv_stereo_sgm on its member's context
 * with PV_SGM_GROUP_OVERLAP rows of context above and below, and the
 * band's own rows kept.
 *
 * SGM's vertical and diagonal paths cross the bands: a band starts its
 * paths at its padded edge instead of the image's, so rows near a cut see
 * different sums than one context's run would give them.  The overlap
 * keeps every kept row at least that many rows from a cut, where the
 * paths' memory of their start has faded (each step adds at most P2 over
 * the minimum, so an old start stops deciding a winner); the tolerance
 * this leaves is stated in include/parvis/multi.h and tested in
 * tests/test_multi.c. */
#include "multidevice_internal.h"
#include "../stereo/stereo_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct sgm_band {
    int out_y, out_rows;   /* the rows this band writes */
    int in_y, in_rows;     /* the rows it reads (with the overlap) */
} sgm_band;

typedef struct sgm_shared {
    const pv_image *left, *right;
    const pv_sgm_params *params;
    const sgm_band *bands;
    pv_image assembled;    /* the whole map, each band's rows written once */
} sgm_shared;

/* Rows y0 .. y0 + rows - 1 of image, without a copy. */
static pv_image row_view(const pv_image *image, int y0, int rows)
{
    pv_image view = *image;
    view.height = rows;
    view.data = (char *)image->data + (size_t)y0 * (size_t)image->stride * pv_pixel_size(image->type);
    return view;
}

static pv_status sgm_item(member_run *m, int item)
{
    sgm_shared *s = m->task->shared;
    const sgm_band *band = &s->bands[item];
    pv_image left = row_view(s->left, band->in_y, band->in_rows);
    pv_image right = row_view(s->right, band->in_y, band->in_rows);
    pv_image out;
    pv_status status = pv_image_alloc(&out, left.width, band->in_rows, PV_PIXEL_F32);
    if (status != PV_OK)
        return pv_fail(m->ctx, PV_ERR_NOMEM, "stereo_sgm: no memory for a band's map");
    status = pv_stereo_sgm(m->ctx, &left, &right, s->params, &out);
    if (status == PV_OK) {
        pv_image kept = row_view(&out, band->out_y - band->in_y, band->out_rows);
        pv_image into = row_view(&s->assembled, band->out_y, band->out_rows);
        for (int y = 0; y < band->out_rows; y++)
            memcpy((float *)into.data + (ptrdiff_t)y * into.stride,
                   (const float *)kept.data + (ptrdiff_t)y * kept.stride,
                   (size_t)kept.width * sizeof(float));
    }
    pv_image_free(&out);
    return status;
}

/* count bands of nearly equal height, each padded by the overlap within
 * the image. */
static void cut_bands(int height, int count, sgm_band *bands)
{
    for (int b = 0; b < count; b++) {
        int y0 = (int)((long long)height * b / count);
        int y1 = (int)((long long)height * (b + 1) / count);
        int in0 = y0 - PV_SGM_GROUP_OVERLAP > 0 ? y0 - PV_SGM_GROUP_OVERLAP : 0;
        int in1 = y1 + PV_SGM_GROUP_OVERLAP < height ? y1 + PV_SGM_GROUP_OVERLAP : height;
        bands[b] = (sgm_band){y0, y1 - y0, in0, in1 - in0};
    }
}

static pv_status check_sgm_group_args(pv_device_group *group, const pv_image *left,
                                      const pv_image *right, const pv_sgm_params *params,
                                      const pv_image *disparity)
{
    const char *op = "pv_stereo_sgm_group";
    pv_status status = pv_group_check(group, op);
    if (status == PV_OK)
        status = pv_stereo_check_images(NULL, op, left, right, disparity);
    if (status == PV_OK && !params)
        status = pv_fail(NULL, PV_ERR_INVALID, "%s: params is NULL", op);
    /* the whole image's range and settings; each band's call checks again */
    if (status == PV_OK && pv_sgm_memory_estimate(left->width, left->height, params) == 0)
        status = pv_fail(NULL, PV_ERR_INVALID,
                         "%s: params are out of range for a %dx%d pair (see pv_sgm_params)", op,
                         left->width, left->height);
    return status;
}

pv_status pv_stereo_sgm_group(pv_device_group *group, const pv_image *left, const pv_image *right,
                              const pv_sgm_params *params, pv_image *disparity)
{
    pv_status status = check_sgm_group_args(group, left, right, params, disparity);
    if (status != PV_OK)
        return status;
    int count = group->size < left->height ? group->size : left->height;
    sgm_band bands[PV_DEVICE_GROUP_MAX];
    cut_bands(left->height, count, bands);
    sgm_shared shared = {left, right, params, bands, {0, 0, 0, PV_PIXEL_F32, NULL}};
    status = pv_image_alloc(&shared.assembled, left->width, left->height, PV_PIXEL_F32);
    if (status != PV_OK)
        return pv_fail(NULL, PV_ERR_NOMEM, "pv_stereo_sgm_group: no memory for the map");
    group_task task = {"pv_stereo_sgm_group", count, &shared, NULL, sgm_item, NULL};
    status = pv_group_run_task(group, &task);
    if (status == PV_OK)
        for (int y = 0; y < left->height; y++)
            memcpy((float *)disparity->data + (ptrdiff_t)y * disparity->stride,
                   (const float *)shared.assembled.data + (ptrdiff_t)y * shared.assembled.stride,
                   (size_t)left->width * sizeof(float));
    pv_image_free(&shared.assembled);
    return status;
}
