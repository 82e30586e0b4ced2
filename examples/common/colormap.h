/* Colour maps for the pictures the command-line programs write: a value
 * in [0, 1] to an RGB triple.  One place, so that every picture of the
 * same quantity reads the same way. */
#ifndef PV_COLORMAP_H
#define PV_COLORMAP_H

/* A turbo-like rainbow: dark blue at 0 through cyan, green, yellow and
 * orange to dark red at 1.  t outside [0, 1] is clamped; NaN gives 0's
 * colour.  Writes rgb[0..2]. */
void cli_colormap_turbo(float t, unsigned char rgb[3]);

#endif
