"""The public surface: contexts, properties, defaults equal to the C
library's, documentation, typing marker."""
from __future__ import annotations

import inspect
import pathlib

import numpy as np
import pytest

import parvis
from parvis._native import ffi, lib
from conftest import texture


def test_version_and_devices():
    assert parvis.__version__ == parvis.version()
    assert parvis.__version__.count(".") == 2
    for d in parvis.devices():
        assert isinstance(d, parvis.DeviceInfo) and d.name and d.global_memory > 0


def test_context_properties(ctx):
    assert ctx.backend in ("cpu", "opencl")
    assert ctx.device_name
    assert ctx.selection_note
    assert not ctx.closed
    ctx.gaussian_blur(np.ones((16, 16), np.float32), 1.0)
    t = ctx.last_timing
    assert set(t) == {"kernel", "upload", "download", "total"}
    assert t["total"] > 0 and t["kernel"] >= 0
    assert ctx.fft_engine in ("FFTW", "clFFT", "VkFFT")
    assert repr(ctx).startswith("<parvis.Context")


def test_crosscheck_flag():
    with parvis.Context("cpu", crosscheck=True) as c:
        assert c.crosscheck
        c.crosscheck = False
        assert not c.crosscheck


def test_kernel_timing_setting():
    with parvis.Context("cpu") as c:
        assert c.kernel_timing == "runs"
        c.kernel_timing = "each"
        assert c.kernel_timing == "each"
        with pytest.raises(parvis.InvalidArgument):
            c.kernel_timing = "sometimes"
        assert c.kernel_timing == "each"
        c.kernel_timing = "RUNS"
        assert c.kernel_timing == "runs"


def test_close_is_idempotent_and_final():
    c = parvis.Context("cpu")
    plan = c.phasecorr_plan(np.random.default_rng(0).random((16, 16)).astype(np.float32))
    c.close()
    c.close()
    assert c.closed and plan.closed
    with pytest.raises(parvis.ClosedError):
        c.stereo_sad(np.zeros((8, 8), np.uint8), np.zeros((8, 8), np.uint8), 4)
    with pytest.raises(parvis.ClosedError):
        plan.correlate(np.zeros((16, 16), np.float32))
    with pytest.raises(ValueError):
        c.backend


def test_plan_closed_explicitly(cpu):
    plan = cpu.sift_plan((32, 32))
    plan.close()
    plan.close()
    with pytest.raises(parvis.ClosedError, match="closed"):
        plan.detect(np.zeros((32, 32), np.uint8))


def c_struct(name, default_fn):
    s = ffi.new(name + " *")
    default_fn(s)
    return s


def signature_defaults(fn):
    return {k: p.default for k, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty}


@pytest.mark.parametrize("method, struct, default_fn, rename", [
    ("stereo_sad", "pv_sad_params", lib.pv_sad_params_default, {}),
    ("stereo_bp", "pv_bp_params", lib.pv_bp_params_default, {"lambda_": "lambda"}),
    ("match", "pv_sift_match_params", lib.pv_sift_match_params_default, {}),
    ("octreg_plan", "pv_octreg_options", lib.pv_octreg_options_default, {}),
    ("flow3d", "pv_flow_params", lib.pv_flow_params_default, {}),
])
def test_defaults_are_the_c_defaults(method, struct, default_fn, rename):
    """Every keyword default of a method equals the C params_default value."""
    c = c_struct(struct, default_fn)
    defaults = signature_defaults(getattr(parvis.Context, method))
    enums = {"pad": {"none": 0, "fft": 1, "linear": 2},
             "gradient": {"central": 0, "forward": 1},
             "message_precision": {"f32": 0, "f16": 1},
             "message_update": {"serial": 0, "cooperative": 1}}
    checked = 0
    for py_name, value in defaults.items():
        c_name = rename.get(py_name, py_name)
        if c_name not in dir(c[0]) or value is None:  # None: derived from other arguments
            continue
        c_value = getattr(c, c_name)
        if c_name in enums:
            value = enums[c_name][value]
        if isinstance(value, bool):  # C flags are ints; newer pytest's approx keeps bools apart
            value = int(value)
        assert c_value == pytest.approx(value, rel=1e-6), py_name
        checked += 1
    assert checked >= len(dir(c[0])) - 1
    if method in ("stereo_sad", "stereo_bp"):
        assert defaults.get("ndisp", inspect.signature(
            getattr(parvis.Context, method)).parameters["ndisp"].default) == c.ndisp


def test_bp_disc_max_default_scales_with_the_range():
    """disc_max=None is max(1.7, ndisp / 7.5), as the CLI's BP default."""
    assert signature_defaults(parvis.Context.stereo_bp)["disc_max"] is None
    assert lib.pv_bp_recommended_disc_max(16) == pytest.approx(16 / 7.5)
    left = texture((40, 64), seed=5)
    right = np.roll(left, -3, axis=1)
    with parvis.Context("cpu") as ctx:
        for ndisp in (8, 32):
            derived = ctx.stereo_bp(left, right, ndisp, levels=2, iterations=2)
            explicit = ctx.stereo_bp(left, right, ndisp, levels=2, iterations=2,
                                     disc_max=max(1.7, ndisp / 7.5))
            np.testing.assert_array_equal(derived, explicit)


def test_phasecorr_defaults_match_c():
    c = c_struct("pv_phasecorr_options", lib.pv_phasecorr_options_default)
    d = signature_defaults(parvis.Context.phase_correlate)
    assert (c.pad, c.window, c.subpixel) == (0, 0, 0)
    assert (d["pad"], d["window"], d["upsample"]) == ("none", "none", 1)


def test_docstrings_explain_parameters():
    for name in ["stereo_sad", "stereo_bp", "sift", "match", "phase_correlate",
                 "phase_correlate_masked", "ncc", "normxcorr2_masked", "normxcorr2_batch",
                 "octreg", "flow3d", "gaussian_blur", "gradients", "phasecorr_plan",
                 "sift_plan", "octreg_plan", "flow_plan"]:
        doc = inspect.getdoc(getattr(parvis.Context, name))
        assert doc and len(doc) > 80, name
    doc = inspect.getdoc(parvis.Context.stereo_sad)
    for word in ["window", "min_disp", "inf", "left", "subpixel", "uniqueness"]:
        assert word in doc
    assert "GIL" in inspect.getdoc(parvis.Context)


def test_package_is_typed():
    assert (pathlib.Path(parvis.__file__).parent / "py.typed").exists()
    hints = inspect.signature(parvis.Context.stereo_sad).return_annotation
    assert "ndarray" in str(hints)


def test_device_by_name_unknown():
    with pytest.raises(parvis.InvalidArgument, match="no OpenCL device"):
        parvis.Context("opencl", device="no such device name")


def test_sift_presets_are_the_c_presets(cpu):
    """sift()'s defaults come from the reference preset, which is the C
    default; preset="fast" gives the C fast preset; other arguments
    override the preset; unknown names are refused."""
    from parvis._context import _sift_preset
    c = c_struct("pv_sift_params", lib.pv_sift_params_default)
    reference = _sift_preset("reference")
    for name, value in reference.items():
        assert getattr(c, name) == pytest.approx(value, rel=1e-6), name
    assert _sift_preset("fast")["first_octave"] == 0
    assert _sift_preset("fast")["peak_thresh"] == pytest.approx(0.01)
    image = np.random.default_rng(3).random((48, 64)).astype(np.float32)
    with cpu.sift_plan(image.shape, preset="fast") as plan:
        assert plan.octaves == 2  # 48 px: floor(log2 48) - 3
    with cpu.sift_plan(image.shape, preset="fast", first_octave=-1) as plan:
        assert plan.octaves == 3  # upsampled: one octave more
    with pytest.raises(parvis.InvalidArgument):
        cpu.sift(image, preset="slow")
