/* The shortest useful parvis program: a disparity map from a rectified
 * stereo pair by SAD block matching, with the call's time.
 *
 *     usage: sad_example LEFT RIGHT OUT.pfm
 *
 * Every call is checked: on any failure the program prints the library's
 * message (pv_last_error: the last failure on this thread, whichever call
 * it was) and exits 1, so a missing or unreadable input never passes for a
 * result.  README.md shows this file and how to build it with pkg-config. */
#include <parvis.h>
#include <stdio.h>

/* Print why a call failed; returns the exit status to use. */
static int report_failure(const char *what, pv_status status)
{
    fprintf(stderr, "sad_example: %s: %s (%s)\n", what, pv_last_error(),
            pv_status_string(status));
    return 1;
}

/* SAD stereo of left/right into disparity on ctx, then its timing. */
static int match_pair(pv_context *ctx, const pv_image *left, const pv_image *right,
                      pv_image *disparity)
{
    pv_sad_params params;
    pv_sad_params_default(&params);
    params.ndisp = 16;   /* disparities 0..15, enough for Tsukuba */
    params.window = 9;
    params.subpixel = 1;
    pv_status status = pv_stereo_sad(ctx, left, right, &params, disparity);
    if (status != PV_OK)
        return report_failure("stereo", status);

    pv_timing timing;
    status = pv_context_last_timing(ctx, &timing);
    if (status != PV_OK)
        return report_failure("timing", status);
    /* On the CPU backend there is no device: kernel_ms is the whole call. */
    printf("%.3f ms end to end, %.3f ms on the device\n", timing.total_ms, timing.kernel_ms);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s LEFT RIGHT OUT.pfm\n", argv[0]);
        return 2;
    }
    pv_context *ctx = NULL;
    pv_image left = {0}, right = {0}, disparity = {0};
    int exit_status = 1;
    pv_status status = pv_context_create(&ctx, NULL); /* AUTO: a GPU if any, else CPU */
    if (status != PV_OK) {
        report_failure("context", status);
        return 1;
    }
    printf("running on %s (%s)\n", pv_context_device_name(ctx), pv_context_selection_note(ctx));

    if ((status = pv_image_read(argv[1], PV_PIXEL_U8, &left)) != PV_OK)
        report_failure("left image", status);
    else if ((status = pv_image_read(argv[2], PV_PIXEL_U8, &right)) != PV_OK)
        report_failure("right image", status);
    else if ((status = pv_image_alloc(&disparity, left.width, left.height, PV_PIXEL_F32)) !=
             PV_OK)
        report_failure("disparity image", status);
    else if (match_pair(ctx, &left, &right, &disparity) == 0) {
        if ((status = pv_image_write_pfm(argv[3], &disparity)) != PV_OK)
            report_failure("writing the disparity", status);
        else
            exit_status = 0;
    }

    pv_image_free(&left);
    pv_image_free(&right);
    pv_image_free(&disparity);
    pv_context_destroy(ctx);
    return exit_status;
}
