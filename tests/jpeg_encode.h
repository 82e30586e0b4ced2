/* The libjpeg set-up the JPEG writers of the tests share (test_io.c and
 * the stand-alone fixture programs tests/data/cli/make_jpeg.c and
 * tests/fuzz/jpeg_seeds.c), so the one function lives in this header. */
#ifndef PV_TEST_JPEG_ENCODE_H
#define PV_TEST_JPEG_ENCODE_H

#include <stdio.h>

#include <jpeglib.h>

/* Compress a width x height picture of `components` samples a pixel (1:
 * grey, 3: RGB) into f at `quality`, with libjpeg's defaults otherwise;
 * the caller may change c's settings before jpeg_start_compress. */
static void jpeg_encode_begin(struct jpeg_compress_struct *c, struct jpeg_error_mgr *err, FILE *f,
                              int width, int height, int components, int quality)
{
    c->err = jpeg_std_error(err);
    jpeg_create_compress(c);
    jpeg_stdio_dest(c, f);
    c->image_width = (JDIMENSION)width;
    c->image_height = (JDIMENSION)height;
    c->input_components = components;
    c->in_color_space = components == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(c);
    jpeg_set_quality(c, quality, TRUE);
}

#endif
