/* Builds the JPEG fixtures of tests/test_cli.sh from the Tsukuba PGMs:
 *     cc make_jpeg.c -ljpeg -o make_jpeg
 *     ./make_jpeg ../stereo/tsukuba/left.pgm tsukuba-left.jpg
 *     ./make_jpeg ../stereo/tsukuba/right.pgm tsukuba-right.jpg
 * Each is a colour picture (R = g, G = g, B = g / 2 of the grey value g),
 * quality 95, baseline, so that reading it exercises both the JPEG decoder
 * and the conversion of colour to grey.  Not part of the build: the
 * fixtures are committed. */
#include <stdio.h>
#include <stdlib.h>

#include "../../jpeg_encode.h"

/* The next header number, skipping white space and '#' comment lines. */
static int header_number(FILE *f, int *value)
{
    int ch;
    while ((ch = fgetc(f)) != EOF && (ch == '#' || ch == ' ' || ch == '\n' || ch == '\r' ||
                                      ch == '\t'))
        if (ch == '#')
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
    return ch != EOF && ungetc(ch, f) != EOF && fscanf(f, "%d", value) == 1 ? 0 : -1;
}

static unsigned char *read_pgm(const char *path, int *width, int *height)
{
    FILE *f = fopen(path, "rb");
    int maxval = 0;
    if (!f || fgetc(f) != 'P' || fgetc(f) != '5' || header_number(f, width) ||
        header_number(f, height) || header_number(f, &maxval) || maxval != 255 ||
        *width < 1 || *height < 1 || fgetc(f) == EOF) {
        if (f)
            fclose(f);
        return NULL;
    }
    size_t n = (size_t)*width * (size_t)*height;
    unsigned char *grey = malloc(n);
    if (grey && fread(grey, 1, n, f) != n) {
        free(grey);
        grey = NULL;
    }
    fclose(f);
    return grey;
}

int main(int argc, char **argv)
{
    int width = 0, height = 0;
    unsigned char *grey = argc == 3 ? read_pgm(argv[1], &width, &height) : NULL;
    FILE *out = grey ? fopen(argv[2], "wb") : NULL;
    unsigned char *row = grey ? malloc((size_t)width * 3) : NULL;
    if (!out || !row) {
        fprintf(stderr, "usage: make_jpeg IN.pgm OUT.jpg (8-bit binary PGM)\n");
        return 1;
    }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    jpeg_encode_begin(&c, &err, out, width, height, 3, 95);
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            unsigned char g = grey[(size_t)y * width + x];
            row[3 * x] = g;
            row[3 * x + 1] = g;
            row[3 * x + 2] = (unsigned char)(g / 2);
        }
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&c, rows, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(out);
    free(row);
    free(grey);
    return 0;
}
