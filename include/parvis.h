/* parvis: parallel vision on OpenCL and OpenMP/FFTW backends.
 * Umbrella header: include this one. */
#ifndef PARVIS_H
#define PARVIS_H

#include "parvis/core.h"
#include "parvis/io.h"
#include "parvis/filter.h"
#include "parvis/stereo.h"
#include "parvis/register.h"
#include "parvis/octreg.h"
#include "parvis/tune.h"
#include "parvis/flow.h"
#include "parvis/volume_io.h"
#include "parvis/features.h"
#include "parvis/colour.h"
#include "parvis/geometry.h"
#include "parvis/multi.h"
#include "parvis/params.h"
#include "parvis/config.h"
#include "parvis/progress.h"
#include "parvis/async.h"

#endif
