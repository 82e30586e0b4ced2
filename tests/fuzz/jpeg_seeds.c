/* Writes small JPEG seeds with libjpeg's encoder into the directory named
 * by argv[1]: grey and colour, baseline and progressive, 4:4:4 and 4:2:0,
 * with a restart interval in one of them.  Used by make_corpus.py. */
#include <stdio.h>
#include <stdlib.h>

#include "../jpeg_encode.h"

static int write_one(const char *dir, const char *name, int components, int progressive,
                     int subsample, int restart)
{
    enum { W = 19, H = 13 };
    unsigned char pixels[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        pixels[i] = (unsigned char)((i * 37) ^ (i >> 3));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.jpg", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    jpeg_encode_begin(&c, &err, f, W, H, components, 75);
    if (components == 3 && !subsample)
        c.comp_info[0].h_samp_factor = c.comp_info[0].v_samp_factor = 1;
    if (progressive)
        jpeg_simple_progression(&c);
    c.restart_interval = (unsigned)restart;
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < H; y++) {
        JSAMPROW row = pixels + (size_t)y * W * components;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    return write_one(argv[1], "grey", 1, 0, 0, 0) | write_one(argv[1], "grey_progressive", 1, 1, 0, 0) |
           write_one(argv[1], "colour_444", 3, 0, 0, 0) | write_one(argv[1], "colour_420", 3, 0, 1, 1) |
           write_one(argv[1], "colour_progressive", 3, 1, 1, 0);
}
