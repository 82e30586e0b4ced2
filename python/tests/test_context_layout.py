"""The layout of Context over the library's modules: one mixin file per
module, the plans with their module, and every operation on Context's own
page of the API reference."""
from __future__ import annotations

import inspect
import pathlib

import parvis
from parvis import _context

#: The plans and the file of the module each belongs to.
PLAN_MODULES = {"SiftPlan": "parvis._features", "PhaseCorrPlan": "parvis._register",
                "OctregPlan": "parvis._octreg", "FlowPlan": "parvis._flow"}


def test_operations_are_named_on_context_itself() -> None:
    # The same function objects as the mixins', so that pdoc lists them on
    # Context (docs/python-api.sh) and calls behave as through inheritance.
    names = []
    for mixin in _context._OPERATION_MIXINS:
        assert issubclass(parvis.Context, mixin)
        for name, value in vars(mixin).items():
            if not name.startswith("_"):
                assert vars(parvis.Context)[name] is value
                names.append(name)
    assert len(names) == len(set(names)), "two modules define the same operation"
    for known in ("gaussian_blur", "to_grey", "stereo_sgm", "sift", "phase_correlate",
                  "octreg", "flow3d", "tune"):
        assert known in names


def test_plans_live_with_their_module() -> None:
    for name, module in PLAN_MODULES.items():
        assert getattr(parvis, name).__module__ == module


def test_no_package_file_over_700_lines() -> None:
    folder = pathlib.Path(inspect.getfile(parvis)).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in folder.rglob("*.py")}
    assert len(sizes) > 10
    assert {n: s for n, s in sizes.items() if s > 700} == {}
