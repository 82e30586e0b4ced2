#include "colormap.h"

/* Anchors of the map, evenly spaced over [0, 1] and joined linearly.
 * They follow turbo's path (a perceptually ordered rainbow whose ends are
 * dark, so that neither end vanishes against black invalid pixels) by
 * eye; the exact published curve is not needed for a picture. */
static const unsigned char turbo_anchors[][3] = {
    {48, 18, 59},   /* dark indigo */
    {70, 107, 227}, /* blue */
    {41, 187, 236}, /* cyan */
    {42, 239, 161}, /* aquamarine */
    {164, 252, 60}, /* yellow-green */
    {237, 208, 58}, /* yellow */
    {251, 128, 34}, /* orange */
    {210, 48, 5},   /* red */
    {122, 4, 3},    /* dark red */
};

void cli_colormap_turbo(float t, unsigned char rgb[3])
{
    const int last = (int)(sizeof turbo_anchors / sizeof turbo_anchors[0]) - 1;
    if (!(t > 0.0f)) /* NaN too */
        t = 0.0f;
    if (t > 1.0f)
        t = 1.0f;
    float position = t * (float)last;
    int lower = (int)position;
    if (lower >= last)
        lower = last - 1;
    float weight = position - (float)lower;
    for (int c = 0; c < 3; c++) {
        float a = turbo_anchors[lower][c], b = turbo_anchors[lower + 1][c];
        rgb[c] = (unsigned char)(a + (b - a) * weight + 0.5f);
    }
}
