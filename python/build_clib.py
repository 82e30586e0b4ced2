"""Build the C library from source for a self-contained Python package.

Used by setup.py when no installed libparvis is wanted or found (see
``library_mode`` in build_ffi.py).  The C source tree is either the
repository around python/ (a checkout) or ``_csource/`` next to setup.py (an
sdist made by setup.py's sdist command).  It is copied into a build
directory, ``autoreconf`` runs there when the copy has no configure script,
and the library alone (not the CLI, bench or tests) is configured, built and
installed into a staging prefix whose headers and shared library the cffi
extension is compiled against.  Output of configure and make is passed
through, so ``pip -v`` shows the progress.
"""
from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import subprocess
import sys
from typing import Iterable, List, Optional

#: Folder that carries the C sources inside an sdist.
SOURCE_IN_SDIST = "_csource"
#: Extra configure arguments (e.g. "--disable-opencl"), split like a shell.
CONFIGURE_FLAGS_ENV = "PARVIS_CONFIGURE_FLAGS"
#: Parallel make jobs for the C build (default: the number of CPUs).
JOBS_ENV = "PARVIS_BUILD_JOBS"

# Never copied into an sdist or a build: build outputs, caches, the Python
# package itself (the sdist carries it already).
_SKIPPED_NAMES = {".git", "python", "autom4te.cache", ".libs", ".deps", "venv",
                  "config.status", "config.log", "libtool", "__pycache__"}
_SKIPPED_SUFFIXES = (".o", ".lo", ".la", ".a", ".so", ".pyc")
_INSTALL_TARGETS = ["install-libLTLIBRARIES", "install-includeHEADERS",
                    "install-parvisincludeHEADERS", "install-nodist_parvisincludeHEADERS"]


def log(message: str) -> None:
    """One progress line on stderr (pip shows it with -v)."""
    print(f"parvis: {message}", file=sys.stderr, flush=True)


def find_c_source(package_root: pathlib.Path) -> pathlib.Path:
    """The C source tree: the sdist's copy first, else the enclosing checkout."""
    for candidate in (package_root / SOURCE_IN_SDIST, package_root.parent):
        if (candidate / "configure.ac").is_file() and (candidate / "lib").is_dir():
            return candidate
    raise SystemExit(
        f"parvis: no C source tree found (looked for {package_root / SOURCE_IN_SDIST} "
        f"and {package_root.parent}); build from the repository or from an sdist, "
        "or set PARVIS_PYTHON_LIBRARY=system to use an installed library.")


def source_version(source: pathlib.Path) -> str:
    """The version in configure.ac's AC_INIT([parvis], [VERSION], ...)."""
    for line in (source / "configure.ac").read_text().splitlines():
        if line.startswith("AC_INIT("):
            fields = [f.strip().strip("[]") for f in line[len("AC_INIT("):].split(",")]
            if len(fields) >= 2 and fields[1]:
                return fields[1]
    raise SystemExit(f"parvis: no version in {source / 'configure.ac'}")


def _tracked_files(source: pathlib.Path) -> Optional[List[str]]:
    """Files git tracks in source (None when it is not a git checkout)."""
    if not (source / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode().split("\0") if p]


def _walked_files(source: pathlib.Path) -> List[str]:
    """Files under source less build outputs (a tree without git)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = [d for d in dirnames
                       if d not in _SKIPPED_NAMES and not d.startswith("_build")]
        for name in filenames:
            if name not in _SKIPPED_NAMES and not name.endswith(_SKIPPED_SUFFIXES):
                found.append(os.path.relpath(os.path.join(dirpath, name), source))
    return found


def _wanted(relpath: str) -> bool:
    first = relpath.split("/", 1)[0]
    return first not in _SKIPPED_NAMES and not first.startswith("_build")


def copy_c_source(source: pathlib.Path, dest: pathlib.Path) -> int:
    """Copy the C tree (git's tracked files, or a filtered walk) into dest.

    Modification times are kept, so an incremental make in a reused build
    directory recompiles only what changed.  Returns the number of files.
    """
    files = _tracked_files(source)
    if files is None:
        files = _walked_files(source)
    files = [f for f in files if _wanted(f)]
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if (source / rel).is_file():
            shutil.copy2(source / rel, target)
    return len(files)


def _run(args: Iterable[str], cwd: pathlib.Path) -> None:
    args = list(args)
    log("running " + " ".join(shlex.quote(a) for a in args))
    try:
        subprocess.run(args, cwd=cwd, check=True, stdout=sys.stderr)
    except FileNotFoundError as err:
        raise SystemExit(f"parvis: {args[0]} not found: install the build dependencies "
                         "(build-aux/debian-packages.txt)") from err
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"parvis: building the C library failed: {err}") from err


def ensure_configure_script(tree: pathlib.Path) -> None:
    """Generate configure with autoreconf when the tree has none (a checkout)."""
    if not (tree / "configure").is_file():
        log(f"generating configure in {tree} (autoreconf)")
        _run(["autoreconf", "-fi"], tree)
        shutil.rmtree(tree / "autom4te.cache", ignore_errors=True)


def _configure(src: pathlib.Path, obj: pathlib.Path, stage: pathlib.Path) -> None:
    flags = [f"--prefix={stage}", "--disable-static"]
    flags += shlex.split(os.environ.get(CONFIGURE_FLAGS_ENV, ""))
    stamp = obj / ".parvis-configure-flags"
    if (obj / "Makefile").is_file() and stamp.is_file() and stamp.read_text() == repr(flags):
        return
    shutil.rmtree(obj, ignore_errors=True)
    obj.mkdir(parents=True)
    log("configuring the C library")
    _run([str(src / "configure"), *flags], obj)
    stamp.write_text(repr(flags))


def build_c_library(source: pathlib.Path, work: pathlib.Path) -> pathlib.Path:
    """Configure, build and stage libparvis; return the staging prefix.

    ``work`` holds the copied sources (src/), the build (obj/) and the
    staging prefix (stage/, with include/ and lib/).
    """
    src, obj, stage = work / "src", work / "obj", work / "stage"
    log(f"copying the C sources from {source} to {src}")
    count = copy_c_source(source, src)
    log(f"{count} files copied")
    ensure_configure_script(src)
    _configure(src, obj, stage)
    jobs = os.environ.get(JOBS_ENV) or str(os.cpu_count() or 1)
    log(f"building libparvis (make -j{jobs}; this takes a few minutes)")
    _run(["make", f"-j{jobs}", "libparvis.la"], obj)
    shutil.rmtree(stage / "lib", ignore_errors=True)
    _run(["make", *_INSTALL_TARGETS], obj)
    log(f"libparvis staged in {stage}")
    return stage


def shared_library_soname_file(libdir: pathlib.Path) -> pathlib.Path:
    """The staged libparvis.so.N (the name the extension records as NEEDED)."""
    names = sorted(p for p in libdir.glob("libparvis.so.*") if p.name.count(".") == 2)
    if not names:
        raise SystemExit(f"parvis: no libparvis.so.N in {libdir}")
    return names[0]
