/* Freeing several images in one call, for the tests and parvis-bench
 * (plain C, no test framework). */
#ifndef PV_TEST_IMAGE_LIST_H
#define PV_TEST_IMAGE_LIST_H

#include "parvis.h"

/* pv_image_free on each image of a NULL-ended list. */
void image_list_free(pv_image *first, ...);

#endif
