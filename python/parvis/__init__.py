"""parvis: stereo, SIFT, registration and 3D optical flow on OpenCL and
OpenMP/FFTW backends, with numpy arrays in and out.

    import parvis
    with parvis.Context(backend="auto") as ctx:
        disparity = ctx.stereo_sad(left, right, ndisp=64, window=5)
        print(ctx.device_name, ctx.last_timing["total"], "ms")

Start with help(parvis.Context); parvis.DeviceGroup spreads a sequence of
items over several devices.  Images are 2D arrays (rows, columns),
volumes 3D arrays (z, y, x); coordinates and shifts are given x first, as
in the C library.  Errors raise parvis.Error subclasses
(parvis.InvalidArgument is also a ValueError).  Licence: BSD-3-Clause.
"""
from . import _icd  # noqa: F401  (before any OpenCL call: may choose the PoCL wheel)
from ._errors import (BuildError, Cancelled, ClosedError, DeviceMemoryError, Error, FileError,
                      ForkedError, FormatError, InvalidArgument, Mismatch, NoDevice,
                      OpenCLError, OutOfMemory, Unsupported)
from ._context import Context
from ._features import SiftChainResult, SiftPlan
from ._flow import FlowPlan
from ._octreg import OctregPlan
from ._register import PhaseCorrPlan
from ._interop_plan import OctregAverage, PhaseCorrPlanCL
from ._group import DeviceGroup
from ._geometry import (GeometryResult, find_fundamental, find_homography,
                        matched_points)
from ._io import (DeviceInfo, devices, disparity_error, has_nifti, has_tiff, imread,
                  imwrite, read_flo, read_volume, synthesize_oct, version, write_flo,
                  write_flow, write_volume)
from ._results import (AT_EDGE, NO_TEXTURE, Flow, Matches, NCCResult, OctregResult,
                       PhaseCorrelation, PhaseCorrelationBatch, SiftFeatures, SyntheticOct,
                       TuneParam, TuneResult)

__version__ = version()

__all__ = [
    "Context", "DeviceGroup", "SiftPlan", "PhaseCorrPlan", "PhaseCorrPlanCL", "OctregPlan", "FlowPlan",
    "Error", "InvalidArgument", "OutOfMemory", "FileError", "FormatError", "Unsupported",
    "OpenCLError", "BuildError", "NoDevice", "Mismatch", "DeviceMemoryError", "Cancelled", "ClosedError",
    "ForkedError",
    "DeviceInfo", "devices", "version", "imread", "imwrite", "read_volume", "write_volume",
    "write_flow", "read_flo", "write_flo", "has_nifti", "has_tiff", "disparity_error", "synthesize_oct",
    "SiftFeatures", "SiftChainResult", "Matches", "PhaseCorrelation", "PhaseCorrelationBatch", "NCCResult",
    "OctregResult", "OctregAverage", "Flow", "SyntheticOct", "TuneParam", "TuneResult", "NO_TEXTURE", "AT_EDGE",
    "find_homography", "find_fundamental", "matched_points", "GeometryResult",
    "__version__",
]
