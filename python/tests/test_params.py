"""The operations' parameters: one declaration in C, the same in Python and
on the command line.

For every declared operation (walked from the library, not listed here):
the Python keywords, their defaults and the generated docstring lines of
every method that takes the operation's parameters are the declaration's;
the declared defaults are the C default function's; the command line's
`parvis params --json` (when the build's CLI is there) prints the same
declarations; and a value outside a declared range is refused by the
library with its message, leaving nothing half set."""
from __future__ import annotations

import inspect
import json
import math
import subprocess
from typing import Any, Dict, List

import numpy as np
import pytest

import parvis
from parvis import _params as P
from parvis._native import ffi, lib

from conftest import CLI

# Each declared operation's Python entry points: (object, method name, the
# declared keywords the method takes explicitly or defaults itself).
ENTRY_POINTS: Dict[str, List[Any]] = {
    "sad": [(parvis.Context, "stereo_sad", {})],
    "bp": [(parvis.Context, "stereo_bp", {"disc_max": None}),
           (parvis.DeviceGroup, "stereo_bp", {"disc_max": None})],
    "sgm": [(parvis.Context, "stereo_sgm", {}), (parvis.Context, "stereo_sgm_batch", {}),
            (parvis.DeviceGroup, "stereo_sgm", {})],
    "sift": [(parvis.Context, "sift", "all None"), (parvis.Context, "sift_plan", "all None")],
    "match": [(parvis.Context, "match", {})],
    "ransac": [(parvis, "find_homography", {}), (parvis, "find_fundamental", {})],
    "octreg": [(parvis.Context, "octreg", {}), (parvis.Context, "octreg_plan", {}),
               (parvis.DeviceGroup, "octreg_sequence", {})],
    "flow": [(parvis.Context, "flow3d", {}), (parvis.Context, "flow2d", "all None"),
             (parvis.Context, "flow_plan", "all None"),
             (parvis.DeviceGroup, "flow3d_sequence", {})],
    # phase correlation's Python form is upsample / subpixel / pad / window:
    # checked below against the declaration's choices.
    "phasecorr": [],
    "phasecorr_masked": [(parvis.Context, "phase_correlate_masked", {})],
}
DEFAULT_FUNCTIONS = {
    "sad": lib.pv_sad_params_default, "bp": lib.pv_bp_params_default,
    "sgm": lib.pv_sgm_params_default, "sift": lib.pv_sift_params_default,
    "match": lib.pv_sift_match_params_default, "ransac": lib.pv_ransac_params_default,
    "phasecorr": lib.pv_phasecorr_options_default,
    "phasecorr_masked": lib.pv_phasecorr_masked_params_default, "octreg": lib.pv_octreg_options_default,
    "flow": lib.pv_flow_params_default,
}


def test_every_operation_has_its_python_entry_points():
    assert sorted(P.operations()) == sorted(ENTRY_POINTS)


@pytest.mark.parametrize("op", sorted(ENTRY_POINTS))
def test_declared_defaults_are_the_c_defaults(op):
    info = ffi.new("pv_op_info *")
    number = ffi.new("int *")
    assert lib.pv_op_find(op.encode(), number) == lib.PV_OK
    assert lib.pv_op_get(number[0], info) == lib.PV_OK
    ctype = ffi.string(info.params_type).decode()
    struct = ffi.new(ctype + " *")
    DEFAULT_FUNCTIONS[op](struct)
    for p in P.declared(op):
        value = getattr(struct, p.name)
        if p.type == "choice" and isinstance(p.default, str):
            assert p.choices[p.default] == value, (op, p.name)
        elif p.type == "real":
            assert value == pytest.approx(p.default, rel=1e-6), (op, p.name)
        else:
            assert value == p.default, (op, p.name)


@pytest.mark.parametrize("op, owner, name, own", [
    (op, owner, name, own) for op, entries in sorted(ENTRY_POINTS.items())
    for owner, name, own in entries])
def test_python_keywords_are_the_declarations(op, owner, name, own):
    method = getattr(owner, name)
    parameters = inspect.signature(method).parameters
    doc = method.__doc__ or ""
    for p in P.declared(op):
        assert p.keyword in parameters, f"{name} lacks {p.keyword}"
        default = parameters[p.keyword].default
        if own == "all None":
            assert default is None, (name, p.keyword)
        elif p.keyword in own:
            assert default == own[p.keyword], (name, p.keyword)
        else:
            assert default == p.default, (name, p.keyword, default, p.default)
        assert p.describe() in doc, f"{name}'s docstring lacks {p.keyword}"


def test_phasecorr_python_form_takes_the_declared_choices(cpu):
    declared = {p.name: p for p in P.declared("phasecorr")}
    image = np.random.default_rng(3).random((32, 32)).astype(np.float32)
    moved = np.roll(image, (2, 3), axis=(0, 1))
    for field in ("pad", "window", "subpixel"):
        for choice in declared[field].choices:
            kwargs = {field: choice}
            if field == "subpixel" and choice == "upsample":
                kwargs["upsample"] = 10
            shift = cpu.phase_correlate(image, moved, **kwargs).shift
            assert np.all(np.isfinite(shift)), kwargs
    low, high = int(declared["upsample"].min), int(declared["upsample"].max)
    cpu.phase_correlate(image, moved, upsample=high)
    for bad in (0, -4, high + 1):
        with pytest.raises(parvis.InvalidArgument, match=f"in {low}..{high}"):
            cpu.phase_correlate(image, moved, upsample=bad)


@pytest.mark.parametrize("op", sorted(ENTRY_POINTS))
def test_out_of_range_values_are_refused_by_the_library(op):
    for p in P.declared(op):
        if p.type == "choice":
            with pytest.raises(parvis.InvalidArgument, match=p.name):
                P.make(op, {p.keyword: "no-such-choice"})
            continue
        if p.type == "bool":
            with pytest.raises(parvis.InvalidArgument, match=p.keyword):
                P.make(op, {p.keyword: 2})
            continue
        below = p.min - (1 if p.type == "int" else max(1e-3, abs(p.min) * 1e-3))
        with pytest.raises(parvis.InvalidArgument, match=p.name):
            P.make(op, {p.keyword: below})
        with pytest.raises(parvis.InvalidArgument):
            P.make(op, {p.keyword: math.nan})
        if p.max < 1e15:
            above = p.max + (1 if p.type == "int" else max(1e-3, p.max * 1e-3))
            with pytest.raises(parvis.InvalidArgument, match=p.name):
                P.make(op, {p.keyword: above})
    with pytest.raises(TypeError, match="unexpected keyword"):
        P.make(op, {"no_such_parameter": 1})


def test_make_sets_through_the_library():
    struct = P.make("sgm", {"ndisp": 128, "paths": 4, "median": True, "census_width": 7,
                            "census_height": 7, "uniqueness": 0.9})
    assert (struct.ndisp, struct.paths, struct.median) == (128, 4, 1)
    assert struct.uniqueness == pytest.approx(0.9)
    assert P.make("bp", {"lambda_": 0.5, "message_update": "cooperative"}).message_update == \
        lib.PV_BP_UPDATE_COOPERATIVE
    huge = 2**64 - 1  # size_t and uint64_t take their whole range, exactly
    assert P.make("sgm", {"memory_budget": huge}).memory_budget == huge
    assert P.make("ransac", {"seed": 2**64 - 5}).seed == 2**64 - 5
    with pytest.raises(parvis.InvalidArgument, match="expected True or False"):
        P.make("sgm", {"median": 3})
    with pytest.raises(parvis.InvalidArgument, match="expected an integer"):
        P.make("sgm", {"ndisp": 12.5})


@pytest.mark.skipif(not CLI.exists(), reason="the build's parvis CLI is not there")
def test_the_command_line_prints_the_same_declarations():
    printed = json.loads(subprocess.run([str(CLI), "params", "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    assert [op["name"] for op in printed] == P.operations()
    for op in printed:
        python = P.declared(op["name"])
        assert [p["name"] for p in op["params"]] == [p.name for p in python]
        for c, p in zip(op["params"], python):
            assert (c["type"], c["help"], c["unit"]) == (p.type, p.help, p.unit)
            assert (c["min"], c["max"]) == (p.min, p.max)
            if p.type == "choice":
                assert c["choices"] == "|".join(f"{k}={v}" for k, v in p.choices.items())
