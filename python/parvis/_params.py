"""Operation parameters as the C library declares them (include/parvis/params.h).

Every operation with a parameter structure (SGM, SIFT, flow, ...) declares
its fields once, in C: name, type, default, range, unit and help.  This
module reads those declarations and builds the C structures from Python
keywords, so that the keywords, their defaults, their checks and their
documentation are the library's own:

* :func:`declared` lists an operation's parameters (:class:`Param`);
* :func:`make` builds a checked C structure from keyword values, each set
  through the library (an out-of-range value raises
  :class:`~parvis.InvalidArgument` with the library's message);
* :func:`declared_keywords` is a decorator that gives a method taking
  ``**params`` the declared keywords in its signature and a generated
  "Declared parameters" section in its docstring.

A declared name that is a Python keyword (BP's ``lambda``) is spelled with
a trailing underscore (``lambda_``).  A BOOL takes ``True``/``False``, a
CHOICE its name (``"hann"``) or value.
"""
from __future__ import annotations

import functools
import inspect
import keyword
import math
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, \
    TypeVar

from ._errors import invalid
from ._native import ffi, lib

__all__ = ["Param", "operations", "declared", "default_of", "make", "declared_keywords",
           "python_name"]

_TYPES = {1: "int", 2: "real", 3: "bool", 4: "choice"}


class Param(NamedTuple):
    """One declared parameter of an operation."""

    #: The C field's name (the command line spells it with '-' for '_').
    name: str
    #: "int", "real", "bool" or "choice".
    type: str
    #: The declared default: an int, float, bool or choice name.
    default: Any
    #: The accepted range (inclusive; see min_exclusive).
    min: float
    max: float
    min_exclusive: bool
    #: For a choice: its names and values, in declaration order.
    choices: Optional[Dict[str, int]]
    unit: str
    help: str

    @property
    def keyword(self) -> str:
        """The Python keyword: the name, with '_' added to a Python keyword."""
        return python_name(self.name)

    def describe(self) -> str:
        """One line for a docstring: keyword, type, default, range, help."""
        if self.type == "choice" and self.choices:
            kind = " | ".join(repr(int(c)) if c.lstrip("-").isdigit() else repr(c)
                              for c in self.choices)
        elif self.type == "bool":
            kind = "bool"
        else:
            kind = f"{self.type}, {_range_text(self)}"
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{self.keyword} ({kind}; default {self.default!r}): {self.help}{unit}."


def python_name(name: str) -> str:
    """The Python keyword for a declared name (``lambda`` -> ``lambda_``)."""
    return name + "_" if keyword.iskeyword(name) else name


def _range_text(p: Param) -> str:
    lower = ">" if p.min_exclusive else ">="
    if p.type == "int" and p.max >= 9e15:
        return f">= {int(p.min)}"
    if p.type == "int":
        return f"{int(p.min)}..{int(p.max)}"
    if p.max >= 1e30:
        return f"{lower} {p.min:g}"
    return f"{lower} {p.min:g} and <= {p.max:g}"


def _text(ptr: Any) -> str:
    return ffi.string(ptr).decode() if ptr != ffi.NULL else ""


def _choices(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for item in text.split("|"):
        name, _, value = item.partition("=")
        out[name] = int(value)
    return out


def _default(kind: str, value: float, choices: Optional[Dict[str, int]]) -> Any:
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    if kind == "choice" and choices:
        for name, v in choices.items():
            if v == value:
                # numeric choices (SGM's paths 4|8) read as the numbers they are
                return int(name) if name.lstrip("-").isdigit() else name
    return float(value)


def _op_number(op: str) -> int:
    number = ffi.new("int *")
    if lib.pv_op_find(op.encode(), number) != lib.PV_OK:
        raise invalid(f"no operation named {op!r} declares parameters "
                      f"(declared: {', '.join(operations())})")
    return int(number[0])


def operations() -> List[str]:
    """The names of every operation with declared parameters."""
    info = ffi.new("pv_op_info *")
    names = []
    for op in range(int(lib.pv_op_count())):
        if lib.pv_op_get(op, info) == lib.PV_OK:
            names.append(_text(info.name))
    return names


@functools.lru_cache(maxsize=None)
def declared(op: str) -> Tuple[Param, ...]:
    """The parameters operation `op` declares ("sgm", "sift", ...), in order."""
    number = _op_number(op)
    info = ffi.new("pv_op_info *")
    if lib.pv_op_get(number, info) != lib.PV_OK:
        raise invalid(f"{op}: no description")
    params = []
    p = ffi.new("pv_param_info *")
    for k in range(int(info.param_count)):
        if lib.pv_op_param(number, k, p) != lib.PV_OK:
            raise invalid(f"{op}: parameter {k} has no description")
        kind = _TYPES.get(int(p.type), "real")
        choices = _choices(_text(p.choices)) if p.choices != ffi.NULL else None
        params.append(Param(
            name=_text(p.name), type=kind, default=_default(kind, p.default_value, choices),
            min=float(p.min), max=float(p.max),
            min_exclusive=bool(p.flags & lib.PV_PARAM_MIN_EXCLUSIVE), choices=choices,
            unit=_text(p.unit), help=_text(p.help)))
    return tuple(params)


def default_of(op: str, name: str) -> Any:
    """The declared default of parameter `name` of operation `op`."""
    for p in declared(op):
        if p.name == name:
            return p.default
    raise invalid(f"{op}: no parameter {name!r}")


@functools.lru_cache(maxsize=None)
def _structure(op: str) -> Tuple[int, str, int]:
    """Operation op's number, its C structure's type and that type's size."""
    number = _op_number(op)
    info = ffi.new("pv_op_info *")
    lib.pv_op_get(number, info)
    ctype = _text(info.params_type)
    return number, ctype, ffi.sizeof(ctype)


def _set(op: int, struct: Any, size: int, p: Param, value: Any) -> None:
    """One field through the library: numbers with pv_params_set, names of
    choices with pv_params_parse; anything else refused here."""
    name = p.name.encode()
    if p.type == "int" and hasattr(value, "__index__") and not isinstance(value, bool) and \
            abs(int(value)) > 2**53:
        # beyond a double's exact integers (size_t budgets, 64-bit seeds): the
        # field written as the integer it is, after the declared range
        number = int(value)
        if not p.min <= number <= p.max:
            raise invalid(f"{p.keyword}: {number} is out of range ({_range_text(p)})")
        setattr(struct, p.name, number)
        return
    if p.type == "choice" and isinstance(value, str):
        status = lib.pv_params_parse(op, struct, size, name, value.encode())
    elif isinstance(value, (bool, int, float)) or hasattr(value, "__index__") or \
            hasattr(value, "__float__"):
        if p.type == "bool" and not isinstance(value, bool) and value not in (0, 1):
            raise invalid(f"{p.keyword}: expected True or False, got {value!r}")
        if p.type in ("int", "choice") and isinstance(value, float) and not value.is_integer():
            raise invalid(f"{p.keyword}: expected an integer, got {value!r}")
        number = float(value)
        status = lib.pv_params_set(op, struct, size, name, number) if math.isfinite(number) \
            else lib.PV_ERR_INVALID
        if status != lib.PV_OK and not math.isfinite(number):
            raise invalid(f"{p.keyword}: {value!r} is not a finite number")
    else:
        raise invalid(f"{p.keyword}: expected a {p.type}, got {value!r}")
    if status != lib.PV_OK:
        message = ffi.string(lib.pv_last_error()).decode(errors="replace")
        raise invalid(f"{p.keyword}: {message}")


def make(op: str, values: Mapping[str, Any], base: Any = None) -> Any:
    """A C parameter structure of operation `op`: the declared defaults (or a
    copy of `base`, a structure of the same type), then each keyword of
    `values` set through the library.  Keys are the Python keywords
    (:attr:`Param.keyword`); a value of None leaves the field as it is.
    Raises TypeError for an unknown keyword, InvalidArgument for a refused
    value."""
    number, ctype, size = _structure(op)
    struct = ffi.new(ctype + " *")
    if base is not None:
        ffi.memmove(struct, base, size)
    elif lib.pv_params_init(number, struct, size) != lib.PV_OK:
        raise invalid(f"{op}: {ffi.string(lib.pv_last_error()).decode()}")
    by_keyword = {p.keyword: p for p in declared(op)}
    for key, value in values.items():
        p = by_keyword.get(key)
        if p is None:  # as Python itself does for an unexpected keyword
            raise TypeError(f"{op}: unexpected keyword argument {key!r} (declared: "
                            f"{', '.join(by_keyword)})")
        if value is not None:
            _set(number, struct, size, p, value)
    return struct


F = TypeVar("F", bound=Callable[..., Any])


def _annotation(p: Param) -> Any:
    if p.type == "choice":
        return int if isinstance(p.default, int) else str
    return {"int": int, "real": float, "bool": bool}[p.type]


def declared_keywords(op: str, *, exclude: Sequence[str] = (),
                      defaults: Optional[Mapping[str, Any]] = None) -> Callable[[F], F]:
    """Decorate a method taking ``**params`` for operation `op`: its
    signature gains the declared keywords (keyword-only, with their declared
    defaults, or those of `defaults` where the method documents its own
    rule), and its docstring a "Declared parameters" section generated from
    the declarations.  Keywords in `exclude` are left out (the method
    takes them explicitly).  The method itself receives only the keywords
    the caller gave."""
    own_defaults = dict(defaults or {})

    def decorate(func: F) -> F:
        params = [p for p in declared(op) if p.keyword not in exclude]
        signature = inspect.signature(func)
        kept = [q for q in signature.parameters.values() if q.kind is not q.VAR_KEYWORD]
        taken = {q.name for q in kept}
        extra = [inspect.Parameter(p.keyword, inspect.Parameter.KEYWORD_ONLY,
                                   default=own_defaults.get(p.keyword, p.default),
                                   annotation=_annotation(p))
                 for p in params if p.keyword not in taken]
        positional = [q for q in kept if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        keyword_only = [q for q in kept if q.kind is q.KEYWORD_ONLY]
        func.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=positional + keyword_only + extra)
        lines = [p.describe() for p in params]
        section = ("\n\nDeclared parameters (from the C library's declaration of "
                   f"{op!r}; `parvis params {op}` prints the same):\n\n"
                   + "\n".join("    " + line for line in lines))
        func.__doc__ = (func.__doc__ or "").rstrip() + section
        return func
    return decorate
