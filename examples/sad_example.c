/* The shortest useful parvis program: a disparity map from a stereo pair.
 * usage: sad_example LEFT RIGHT OUT.pfm */
#include <parvis.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LEFT RIGHT OUT.pfm\n", argv[0]);
        return 2;
    }
    pv_context *ctx = NULL;
    pv_image left = {0}, right = {0}, disparity = {0};
    pv_status status = pv_context_create(&ctx, NULL); /* GPU if any, else CPU */
    if (status == PV_OK)
        status = pv_image_read(argv[1], PV_PIXEL_U8, &left);
    if (status == PV_OK)
        status = pv_image_read(argv[2], PV_PIXEL_U8, &right);
    if (status == PV_OK)
        status = pv_image_alloc(&disparity, left.width, left.height, PV_PIXEL_F32);
    if (status == PV_OK) {
        pv_sad_params params;
        pv_sad_params_default(&params);
        params.ndisp = 16;
        params.window = 9;
        status = pv_stereo_sad(ctx, &left, &right, &params, &disparity);
    }
    if (status == PV_OK)
        status = pv_image_write_pfm(argv[3], &disparity);
    if (status == PV_OK)
        printf("disparity written on %s\n", pv_context_device_name(ctx));
    else
        fprintf(stderr, "error: %s\n", pv_last_error());
    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
    pv_context_destroy(ctx);
    return status == PV_OK ? 0 : 1;
}
