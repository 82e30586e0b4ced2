#!/usr/bin/env python3
"""2D and 3D registration of a shifted pair: prints the shift it was given
and the shift phase correlation recovers.

    python register_shift.py [--shift DX DY DZ] [--size N] [--upsample F]
                             [--backend auto|cpu|opencl]

The 2D pair is a bundled image and a copy moved by (DX, DY) with a Fourier
shift (fractions allowed); the 3D pair a smooth random volume moved by
(DX, DY, DZ)."""
from __future__ import annotations

import argparse
import pathlib

import numpy as np

import parvis

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "stereo"


def fourier_shift(a: np.ndarray, shift_xyz: np.ndarray) -> np.ndarray:
    """a moved by shift (x along the last axis), periodic, sub-pixel exact."""
    spectrum = np.fft.fftn(a)
    phase = 0.0
    for axis, s in zip(range(a.ndim - 1, -1, -1), shift_xyz):
        k = np.fft.fftfreq(a.shape[axis]).reshape([-1 if i == axis else 1
                                                   for i in range(a.ndim)])
        phase = phase + k * s
    return np.fft.ifftn(spectrum * np.exp(-2j * np.pi * phase)).real.astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shift", type=float, nargs=3, default=[3.25, -5.5, 2.0],
                    metavar=("DX", "DY", "DZ"))
    ap.add_argument("--size", type=int, default=64, help="side of the 2D crop and the volume")
    ap.add_argument("--upsample", type=int, default=20)
    ap.add_argument("--backend", choices=["auto", "cpu", "opencl"], default="auto")
    args = ap.parse_args()
    shift = np.array(args.shift)
    n = args.size

    image = parvis.imread(DATA / "venus" / "left.pgm", np.float32)[:n, :n] / 255.0
    rng = np.random.default_rng(1)
    volume = rng.random((n, n, n)).astype(np.float32)
    with parvis.Context(args.backend) as ctx:
        volume = ctx.gaussian_blur(volume, 1.5)
        r2 = ctx.phase_correlate(image, fourier_shift(image, shift[:2]), args.upsample,
                                 window="hann")
        r3 = ctx.phase_correlate(volume, fourier_shift(volume, shift), args.upsample)
        print(f"on {ctx.backend} ({ctx.device_name})")
    print(f"2D given     dx {shift[0]:+.3f} dy {shift[1]:+.3f}")
    print(f"2D recovered dx {r2.shift[0]:+.3f} dy {r2.shift[1]:+.3f}  peak {r2.peak:.3f}")
    print(f"3D given     dx {shift[0]:+.3f} dy {shift[1]:+.3f} dz {shift[2]:+.3f}")
    print(f"3D recovered dx {r3.shift[0]:+.3f} dy {r3.shift[1]:+.3f} dz {r3.shift[2]:+.3f}"
          f"  peak {r3.peak:.3f}")


if __name__ == "__main__":
    main()
