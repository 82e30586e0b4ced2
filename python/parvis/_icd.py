"""Point the OpenCL ICD loader at the PoCL wheel where no system driver exists.

The self-contained wheel bundles the ocl-icd loader (libOpenCL.so.1), which
reads the drivers listed in /etc/OpenCL/vendors.  A machine without any
OpenCL driver can get a CPU device from PyPI: ``pip install parvis[pocl]``
installs the ``pocl-binary-distribution`` wheel, which ships libpocl under
``pyopencl/.libs``.  When that wheel is installed, no driver is registered
in the vendors directory and the user has not chosen one (OCL_ICD_VENDORS
unset), this module sets OCL_ICD_VENDORS to the PoCL library's path, which
ocl-icd then loads as the only driver.  It must run before the first OpenCL
call (the loader reads its environment once), so parvis/__init__ imports it
first.  PARVIS_POCL_WHEEL=0 turns this off; =1 uses the PoCL wheel even
where system drivers exist.
"""
from __future__ import annotations

import glob
import importlib.util
import os
from typing import Optional

_VENDORS_DIR = "/etc/OpenCL/vendors"
_chosen: Optional[str] = None


def _pocl_wheel_library() -> Optional[str]:
    """libpocl*.so of the pocl-binary-distribution wheel, if installed."""
    spec = importlib.util.find_spec("pocl_binary_distribution")
    if spec is None or not spec.origin:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(site, "pyopencl", ".libs", "libpocl*.so*")))
    return found[0] if found else None


def _system_drivers() -> bool:
    vendors = os.environ.get("OPENCL_VENDOR_PATH", _VENDORS_DIR)
    return bool(glob.glob(os.path.join(vendors, "*.icd")))


def use_pocl_wheel_if_needed() -> None:
    """Set OCL_ICD_VENDORS to the PoCL wheel's driver when appropriate."""
    global _chosen
    wanted = os.environ.get("PARVIS_POCL_WHEEL", "auto")
    if wanted == "0" or os.environ.get("OCL_ICD_VENDORS"):
        return
    if wanted != "1" and _system_drivers():
        return
    library = _pocl_wheel_library()
    if library:
        os.environ["OCL_ICD_VENDORS"] = library
        _chosen = library


def note() -> str:
    """One line for ``python -m parvis`` when the PoCL wheel was chosen."""
    return f"PoCL wheel's driver {_chosen} (OCL_ICD_VENDORS set by parvis)" if _chosen else ""


use_pocl_wheel_if_needed()
