"""Produce the cffi declarations (the ``cdef``) from the C library's headers.

build_ffi.py used to carry a hand-copied list of declarations; it now asks
this module for them at build time, so that a change to a public header
reaches Python with no edit here or in build_ffi.py.  The steps:

1. The C preprocessor (``$CC``, else ``cc``) runs over ``#include
   <parvis.h>`` with ``-dD``, which keeps every ``#define`` in place, and
   with its line markers on, which say which file each line came from.
2. Only lines from the library's own headers are kept: the umbrella
   ``parvis.h`` and the files under a ``parvis/`` folder of the include
   directories.  What the system headers declare (``size_t``,
   ``uint8_t``, ``FILE``...) cffi knows already.
3. What cffi's parser cannot take is rewritten: ``__attribute__((...))``
   (``PV_API`` expands to one) is dropped, an ``inline`` function's body
   becomes a plain declaration (API mode compiles the call against the
   header), ``_Static_assert`` is dropped.
4. Object-like macros become declarations cffi reads from the compiled
   header: an integer expression ``#define NAME ...``, a floating-point
   one ``static const double NAME;``, a string ``static const char *const
   NAME;``.  Include guards, ``PV_API``, function-like macros and macros
   of another shape (a type, an expression over names that are not
   constants) are left out, and listed in a comment at the top of the
   result.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

#: The umbrella header that includes every public header.
UMBRELLA = "parvis.h"
#: The folder, inside an include directory, that holds the public headers.
HEADER_FOLDER = "parvis"

_LINE_MARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"')
_DEFINE = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)(\(?)(.*)$")
_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
_FLOATING = re.compile(r"^(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[fFlL]?$")
_STRING = re.compile(r'^"(?:[^"\\]|\\.)*"$')
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*|(?:\d[\w.]*?|\.\d+)[eE][+-]\d+\w*'
                    r'|\d[\w.]*|\.\d\w*|<<|>>|\S')
_OPERATORS = set("()+-*/%<>&|^~!?:") | {"<<", ">>"}


class CdefError(RuntimeError):
    """The headers could not be preprocessed or turned into declarations."""


def _owned(path: str, include_dirs: Sequence[pathlib.Path]) -> bool:
    """Whether a file named by a line marker is one of the library's headers."""
    if path.startswith("<"):
        return False
    resolved = pathlib.Path(path).resolve()
    for directory in include_dirs:
        if resolved == directory / UMBRELLA:
            return True
        if (directory / HEADER_FOLDER) in resolved.parents:
            return True
    return False


def preprocess(include_dirs: Sequence[pathlib.Path], compiler: Optional[str] = None,
               header: str = UMBRELLA) -> str:
    """The preprocessed header (the umbrella by default), with line markers
    and #defines."""
    command = shlex.split(compiler or os.environ.get("CC") or "cc")
    flags = [f"-I{d}" for d in include_dirs]
    with tempfile.TemporaryDirectory(prefix="parvis-cdef-") as tmp:
        unit = pathlib.Path(tmp) / "cdef.c"
        unit.write_text(f"#include <{header}>\n")
        args = [*command, "-E", "-dD", "-std=c11", *flags, str(unit)]
        try:
            done = subprocess.run(args, check=True, capture_output=True, text=True)
        except FileNotFoundError as err:
            raise CdefError(f"no C compiler to preprocess the headers ({command[0]}): "
                            "set CC") from err
        except subprocess.CalledProcessError as err:
            raise CdefError(f"preprocessing {UMBRELLA} failed:\n{err.stderr}") from err
    return done.stdout


def split_owned(preprocessed: str, include_dirs: Sequence[pathlib.Path],
                only: Optional[str] = None) -> Tuple[List[str], List[str]]:
    """The library's own code lines and #define lines, system headers left
    out (and, with only, every file but the one of that name)."""
    dirs = [pathlib.Path(d).resolve() for d in include_dirs]
    code: List[str] = []
    defines: List[str] = []
    keep = False
    for line in preprocessed.splitlines():
        marker = _LINE_MARKER.match(line)
        if marker:
            path = marker.group(2)
            keep = _owned(path, dirs) and (only is None or pathlib.Path(path).name == only)
            continue
        if not keep:
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            if _DEFINE.match(stripped):
                defines.append(stripped)
            continue  # #undef, #pragma: nothing cffi needs
        if stripped:
            code.append(line)
    if not code:
        raise CdefError(f"no declarations came from {UMBRELLA} in {', '.join(map(str, dirs))}")
    return code, defines


def _skip_balanced(text: str, start: int, opening: str, closing: str) -> int:
    """The index just past the bracket that closes the one at text[start]."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    raise CdefError(f"unbalanced {opening}{closing} in the preprocessed headers")


def _drop_calls(text: str, keyword: str) -> str:
    """Remove every `keyword(...)` (balanced parentheses) from text."""
    pattern = re.compile(r"\b" + re.escape(keyword) + r"\s*\(")
    while True:
        found = pattern.search(text)
        if not found:
            return text
        end = _skip_balanced(text, found.end() - 1, "(", ")")
        if keyword == "_Static_assert" and text[end:].lstrip().startswith(";"):
            end = text.index(";", end) + 1
        text = text[:found.start()] + text[end:]


_INLINE = re.compile(r"\b(?:static\s+)?(?:__inline__|__inline|inline)\b(?:\s+static\b)?")


def _inline_to_declarations(text: str) -> str:
    """Turn each inline function definition into a declaration of it."""
    while True:
        found = _INLINE.search(text)
        if not found:
            return text
        body = text.find("{", found.end())
        stop = text.find(";", found.end())
        if body < 0 or (0 <= stop < body):
            text = text[:found.start()] + text[found.end():]  # an inline declaration
            continue
        end = _skip_balanced(text, body, "{", "}")
        text = text[:found.start()] + text[found.end():body].rstrip() + ";" + text[end:]


def clean_code(code: Sequence[str]) -> str:
    """The library's declarations in a form cffi's parser accepts."""
    text = "\n".join(code)
    for keyword in ("__attribute__", "__declspec", "_Static_assert"):
        text = _drop_calls(text, keyword)
    text = re.sub(r"\b(?:__extension__|__restrict__|__restrict|restrict)\b", "", text)
    return _inline_to_declarations(text)


def _classify(body: str, integers: Dict[str, str]) -> Optional[str]:
    """"int", "double" or "string" for a macro's body, None when unknown."""
    body = body.strip()
    if not body:
        return None
    if _STRING.match(body):
        return "string"
    kind = "int"
    for token in _TOKEN.findall(body):
        if token in _OPERATORS or _INTEGER.match(token) or integers.get(token) == "int":
            continue
        if integers.get(token) == "double" or _FLOATING.match(token):
            kind = "double"
            continue
        return None
    return kind


def macro_declarations(defines: Sequence[str]) -> Tuple[List[str], List[str]]:
    """cffi declarations for the object-like macros, and the names left out."""
    kinds: Dict[str, str] = {}
    order: List[str] = []
    skipped: List[str] = []
    for line in defines:
        match = _DEFINE.match(line)
        assert match is not None  # split_owned kept only matching lines
        name, function_like, body = match.group(1), match.group(2), match.group(3)
        kind = None if function_like else _classify(body, kinds)
        if kind is None:
            if body.strip() and name != "PV_API":
                skipped.append(name)  # guards and PV_API are not worth a mention
            kinds.pop(name, None)
            continue
        if name not in kinds:
            order.append(name)
        kinds[name] = kind
    templates = {"int": "#define {} ...", "double": "static const double {};",
                 "string": "static const char *const {};"}
    return [templates[kinds[n]].format(n) for n in order if n in kinds], skipped


def generate_cdef(include_dirs: Sequence[pathlib.Path], compiler: Optional[str] = None) -> str:
    """The full cdef for the headers found through include_dirs (first wins)."""
    code, defines = split_owned(preprocess(include_dirs, compiler), include_dirs)
    constants, skipped = macro_declarations(defines)
    note = f"/* macros left out: {', '.join(skipped)} */\n" if skipped else ""
    return note + "\n".join(constants) + "\n" + clean_code(code) + "\n"


#: The header of the device-buffer calls, installed with the OpenCL backend only.
INTEROP_HEADER = HEADER_FOLDER + "/interop.h"

#: The OpenCL types that parvis/interop.h takes from <CL/cl.h>, which cffi
#: does not read (a system header): the handles are pointers to incomplete
#: structs there, and cl_uint an unsigned integer of the platform's size.
OPENCL_TYPES = """
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;
typedef int... cl_uint;
"""


def has_interop(include_dirs: Sequence[pathlib.Path]) -> bool:
    """Whether the headers include the device-buffer calls' (OpenCL builds)."""
    return any((pathlib.Path(d) / INTEROP_HEADER).is_file() for d in include_dirs)


def generate_interop_cdef(include_dirs: Sequence[pathlib.Path],
                          compiler: Optional[str] = None) -> str:
    """The cdef of parvis/interop.h alone (to follow generate_cdef's), with
    the OpenCL types it names; empty when the headers lack it."""
    if not has_interop(include_dirs):
        return ""
    text = preprocess(include_dirs, compiler, INTEROP_HEADER)
    code, defines = split_owned(text, include_dirs, only="interop.h")
    constants, _ = macro_declarations(defines)
    return OPENCL_TYPES + "\n".join(constants) + "\n" + clean_code(code) + "\n"


if __name__ == "__main__":
    import sys
    print(generate_cdef([pathlib.Path(a) for a in sys.argv[1:]] or
                        [pathlib.Path(__file__).resolve().parent.parent / "include"]))
