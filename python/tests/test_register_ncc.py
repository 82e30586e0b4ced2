"""Masked normalised cross-correlation (Context.normxcorr2_masked) and NCC
batches (Context.normxcorr2_batch): a template found through a masked-out
distractor, all-valid masks equal to ncc bit for bit, a double-precision
brute force on small random inputs (tolerance 2e-5: float rounding of
direct sums over at most 42 pixels), the backends within 1e-5, OpenCV's
masked matchTemplate (TM_CCOEFF_NORMED) as a cross-check where cv2 is
installed (within 1e-3: OpenCV sums by float DFTs), batches equal to
single calls, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

import parvis
from conftest import texture


def blob(shape):
    """A bright checkerboard of the given shape, its phase tied to its corner."""
    return np.where(np.indices(shape).sum(axis=0) % 2 == 1, 20.0, -20.0).astype(np.float32)


def test_distractor_masked_out(ctx):
    image = texture((40, 48), seed=3)
    template = image[22:32, 30:42].copy()
    template[3:8, 4:9] += blob((5, 5))
    image[8:13, 10:15] += blob((5, 5))
    mask = np.ones(template.shape, dtype=bool)
    mask[3:8, 4:9] = False
    plain = ctx.ncc(template, image, min_overlap=40, compute_map=False)
    assert (plain.x, plain.y) == (6, 5)
    r = ctx.normxcorr2_masked(template, image, mask, min_overlap=40)
    assert (r.x, r.y) == (30, 22)
    assert 0.9999 < r.coefficient <= 1.0
    assert r.map.shape == (49, 59) and r.map.dtype == np.float32
    assert np.all(np.isfinite(r.map)) and np.abs(r.map).max() <= 1.0


def test_all_valid_masks_are_ncc(ctx):
    image, template = texture((40, 48), seed=4), texture((10, 12), seed=5)
    plain = ctx.ncc(template, image, min_overlap=5)
    for image_mask in (None, np.full(image.shape, 3, dtype=np.int32)):
        r = ctx.normxcorr2_masked(template, image, np.ones(template.shape), image_mask,
                                  min_overlap=5)
        assert np.array_equal(r.map, plain.map)
        assert r[1:] == plain[1:]


def brute_masked(t, tm, im, imk, min_overlap):
    """The documented masked NCC map in double, inputs normalised over their
    masks as the library does (the flatness floor is relative to them)."""
    def normalised(a, m):
        a = a.astype(np.float64)
        mean = a[m].mean()
        return np.where(m, (a - mean) / np.sqrt(((a[m] - mean) ** 2).mean()), 0.0)
    t, im = normalised(t, tm), normalised(im, imk)
    th, tw = t.shape
    ih, iw = im.shape
    out = np.zeros((ih + th - 1, iw + tw - 1))
    for v in range(out.shape[0]):
        for u in range(out.shape[1]):
            oy, ox = v - th + 1, u - tw + 1
            y0, y1, x0, x1 = max(0, -oy), min(th, ih - oy), max(0, -ox), min(tw, iw - ox)
            both = tm[y0:y1, x0:x1] & imk[y0 + oy:y1 + oy, x0 + ox:x1 + ox]
            n = both.sum()
            if n < 1 or n < min_overlap:
                continue
            a = t[y0:y1, x0:x1][both]
            b = im[y0 + oy:y1 + oy, x0 + ox:x1 + ox][both]
            va, vb = ((a - a.mean()) ** 2).sum(), ((b - b.mean()) ** 2).sum()
            if va <= 1e-5 * (a * a).sum() or vb <= 1e-5 * (b * b).sum():
                continue
            out[v, u] = np.clip(((a - a.mean()) * (b - b.mean())).sum() / np.sqrt(va * vb),
                                -1, 1)
    return out


def test_brute_force(ctx):
    rng = np.random.default_rng(6)
    template, image = texture((6, 7), seed=7), texture((16, 20), seed=8)
    tm, imk = rng.random(template.shape) < 0.7, rng.random(image.shape) < 0.8
    for min_overlap in (0, 12):
        got = ctx.normxcorr2_masked(template, image, tm, imk, min_overlap=min_overlap).map
        want = brute_masked(template, tm, image, imk, min_overlap)
        assert np.abs(got - want).max() <= 2e-5


def test_backends_agree(cpu, opencl):
    rng = np.random.default_rng(9)
    template, image = texture((12, 16), seed=10), texture((48, 64), seed=11)
    tm, imk = rng.random(template.shape) < 0.7, rng.random(image.shape) < 0.85
    a = cpu.normxcorr2_masked(template, image, tm, imk, min_overlap=20)
    b = opencl.normxcorr2_masked(template, image, tm, imk, min_overlap=20)
    assert np.abs(a.map - b.map).max() <= 1e-5
    assert (a.x, a.y) == (b.x, b.y)


def test_opencv_masked_match_template(ctx):
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(12)
    template, image = texture((10, 12), seed=13), texture((40, 48), seed=14)
    mask = (rng.random(template.shape) < 0.7).astype(np.uint8)
    got = ctx.normxcorr2_masked(template, image, mask).map
    want = cv2.matchTemplate(image, template, cv2.TM_CCOEFF_NORMED, mask=mask)
    # OpenCV's map holds the positions with the template wholly inside.
    inside = got[template.shape[0] - 1:image.shape[0], template.shape[1] - 1:image.shape[1]]
    assert inside.shape == want.shape
    assert np.abs(inside - want).max() <= 1e-3


def test_masked_bad_input(cpu):
    image, template = texture((40, 48), seed=15), texture((10, 12), seed=16)
    ok = np.ones(template.shape, dtype=bool)
    with pytest.raises(parvis.InvalidArgument, match="template_mask: shape"):
        cpu.normxcorr2_masked(template, image, np.ones((10, 11)))
    with pytest.raises(parvis.InvalidArgument, match="image_mask: shape"):
        cpu.normxcorr2_masked(template, image, ok, ok)
    with pytest.raises(parvis.InvalidArgument, match="no valid"):
        cpu.normxcorr2_masked(template, image, np.zeros(template.shape))
    with pytest.raises(parvis.InvalidArgument, match="no valid"):
        cpu.normxcorr2_masked(template, image, ok, np.zeros(image.shape, dtype=np.uint8))
    with pytest.raises(parvis.InvalidArgument, match="2D"):
        cpu.normxcorr2_masked(template, image, np.ones((2, 10, 12)))
    with pytest.raises(parvis.InvalidArgument, match="numeric or bool"):
        cpu.normxcorr2_masked(template, image, np.full(template.shape, "a"))
    with pytest.raises(parvis.InvalidArgument, match="min_overlap"):
        cpu.normxcorr2_masked(template, image, ok, min_overlap=-1)
    out = np.zeros((49, 58), np.float32)
    with pytest.raises(parvis.InvalidArgument, match="shape"):
        cpu.normxcorr2_masked(template, image, ok, out=out)


def test_batch_equals_single_calls(ctx):
    images = [texture((32, 40), seed=s) for s in range(20, 24)]
    images[2] = (images[2] * 255).astype(np.uint8)
    images[3][:] = 0.5  # no texture
    template = images[1][6:15, 11:20].copy()
    results = ctx.normxcorr2_batch(template, images, min_overlap=10)
    assert len(results) == 4
    for image, r in zip(images, results):
        single = ctx.ncc(template, image, min_overlap=10)
        assert np.array_equal(r.map, single.map)
        assert r[1:] == single[1:]
    assert (results[1].x, results[1].y) == (11, 6)
    assert results[3].flags & parvis.NO_TEXTURE
    stack = np.stack([images[0], images[1]])
    bare = ctx.normxcorr2_batch(template, stack, min_overlap=10, compute_maps=False)
    assert [r.map for r in bare] == [None, None]
    assert [r[1:] for r in bare] == [r[1:] for r in results[:2]]


def test_batch_bad_input(cpu):
    template = texture((9, 9), seed=30)
    with pytest.raises(parvis.InvalidArgument, match="empty"):
        cpu.normxcorr2_batch(template, [])
    with pytest.raises(parvis.InvalidArgument, match="one shape"):
        cpu.normxcorr2_batch(template, [texture((32, 40)), texture((32, 41))])
    with pytest.raises(parvis.InvalidArgument, match="sequence"):
        cpu.normxcorr2_batch(template, 3)
    bad = texture((32, 40))
    bad[2, 2] = np.nan
    with pytest.raises(parvis.InvalidArgument, match="NaN"):
        cpu.normxcorr2_batch(template, [texture((32, 40)), bad])
