#include "image_list.h"

#include <stdarg.h>

void image_list_free(pv_image *first, ...)
{
    va_list rest;
    va_start(rest, first);
    for (pv_image *image = first; image; image = va_arg(rest, pv_image *))
        pv_image_free(image);
    va_end(rest);
}
