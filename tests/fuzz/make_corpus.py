#!/usr/bin/python3
"""Write the fuzz targets' seed corpora under tests/fuzz/corpus/<target>/.

Small valid files of every variant each reader handles, plus a few edge
cases made by hand (truncations, lying headers).  JPEG seeds come from
libjpeg's encoder through jpeg_seeds.c (compiled here with cc -ljpeg), TIFF
seeds from libtiff's through tiff_seeds.c (cc -ltiff).
Run from anywhere: python3 tests/fuzz/make_corpus.py
"""
import gzip
import os
import re
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def pnm_seeds() -> Dict[str, bytes]:
    """PGM/PPM, binary and ASCII, 8 and 16 bits, comments, edge cases."""
    grey = bytes(range(0, 240, 20))
    return {
        "p5_4x3": b"P5\n4 3\n255\n" + grey,
        "p5_comment": b"P5 # c\n2 1\n# m\n255\n\x01\x02",
        "p5_16bit": b"P5 2 2 65535\n" + struct.pack(">4H", 0, 1, 32768, 65535),
        "p5_maxval_1000": b"P5 3 1 1000\n" + struct.pack(">3H", 0, 500, 1000),
        "p6_2x2": b"P6 2 2 255\n" + bytes(range(12)),
        "p6_16bit": b"P6 1 1 65535\n" + struct.pack(">3H", 1, 2, 3),
        "p2_ascii": b"P2\n3 2\n15\n0 1 2\n3 4 15\n",
        "p3_ascii": b"P3 1 2 255 1 2 3 4 5 6\n",
        "p5_truncated": b"P5 4 4 255\n\x00\x01",
        "p5_huge": b"P5 100000 100000 255\n\x00",
    }


def pfm_seeds() -> Dict[str, bytes]:
    """PFM grey and colour, both byte orders."""
    return {
        "pf_le": b"Pf\n2 2\n-1.0\n" + struct.pack("<4f", 0.0, 1.5, -2.0, float("inf")),
        "pf_be": b"Pf 1 2 1\n" + struct.pack(">2f", 3.0, 4.0),
        "pF_colour": b"PF 1 1 -0.5\n" + struct.pack("<3f", 1.0, 2.0, 3.0),
        "pf_truncated": b"Pf 2 2 -1\n\x00\x00\x80\x3f",
    }


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, depth: int, colour: int, rows: bytes,
        interlace: int = 0, extra: List[bytes] = ()) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    body = png_chunk(b"IHDR", ihdr)
    for chunk in extra:
        body += chunk
    body += png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def png_seeds() -> Dict[str, bytes]:
    """Grey, grey+alpha, RGB, RGBA, palette (+tRNS), 1/16 bits, Adam7."""
    plte = png_chunk(b"PLTE", bytes([0, 0, 0, 255, 0, 0, 0, 255, 0]))
    trns = png_chunk(b"tRNS", bytes([255, 0, 128]))
    return {
        "grey8": png(3, 2, 8, 0, b"\x00\x01\x02\x03\x01\x04\x05\x06"),
        "grey16": png(2, 1, 16, 0, b"\x00\x00\x01\xff\xff"),
        "grey1": png(9, 1, 1, 0, b"\x00\xb0\x80"),
        "grey_alpha": png(1, 1, 8, 4, b"\x00\x10\x20"),
        "rgb": png(2, 1, 8, 2, b"\x00" + bytes(range(6))),
        "rgba16": png(1, 1, 16, 6, b"\x00" + bytes(range(8))),
        "palette_trns": png(3, 1, 2, 3, b"\x00\x18", extra=[plte, trns]),
        "interlaced": png(9, 9, 8, 0, bytes(200), interlace=1),
        "junk_after_iend": png(1, 1, 8, 0, b"\x00\x07") + bytes(64),
    }


def nifti_header(dims: List[int], datatype: int, bitpix: int, vox_offset: float,
                 magic: bytes, endian: str = "<", slope: float = 0.0,
                 inter: float = 0.0) -> bytes:
    """The 348 NIfTI-1 header bytes (all fields not given are zero)."""
    h = bytearray(348)
    struct.pack_into(endian + "i", h, 0, 348)
    struct.pack_into(endian + "8h", h, 40, *(dims + [1] * (8 - len(dims))))
    struct.pack_into(endian + "hh", h, 70, datatype, bitpix)
    struct.pack_into(endian + "8f", h, 76, *([1.0] * 8))
    struct.pack_into(endian + "fff", h, 108, vox_offset, slope, inter)
    h[344:348] = magic.ljust(4, b"\0")
    return bytes(h)


def nifti_seeds() -> Dict[str, bytes]:
    """Single files of several datatypes and orders, 2D/4D, scaled, cut."""
    f32 = struct.pack("<8f", *range(8))
    return {
        "f32_2x2x2": nifti_header([3, 2, 2, 2], 16, 32, 352, b"n+1") + bytes(4) + f32,
        "u8_4d": nifti_header([4, 2, 2, 1, 3], 2, 8, 352, b"n+1") + bytes(4) + bytes(range(12)),
        "i16_be_scaled": nifti_header([3, 2, 1, 1], 4, 16, 352, b"n+1", ">", 0.5, 3.0)
        + bytes(4) + struct.pack(">2h", -7, 300),
        "f64_2d": nifti_header([2, 2, 1], 64, 64, 352, b"n+1") + bytes(4)
        + struct.pack("<2d", 1.25, -8.0),
        "analyze_pair": nifti_header([3, 1, 1, 2], 512, 16, 0, b"") + struct.pack("<2H", 1, 65535),
        "u64_offset_400": nifti_header([3, 1, 1, 1], 1280, 64, 400, b"n+1") + bytes(52)
        + struct.pack("<Q", 12345),
        "header_only_huge": nifti_header([3, 1000, 1000, 1000], 16, 32, 352, b"n+1") + bytes(4),
        "data_cut": nifti_header([3, 2, 2, 2], 16, 32, 352, b"n+1") + bytes(4) + f32[:13],
    }


def nifti_gz_seeds() -> Dict[str, bytes]:
    """The NIfTI seeds gzip-compressed, plus a cut and a damaged stream."""
    seeds = {name: gzip.compress(data, 6, mtime=0) for name, data in nifti_seeds().items()}
    whole = seeds["f32_2x2x2"]
    seeds["gz_cut"] = whole[: len(whole) - 9]
    damaged = bytearray(whole)
    damaged[len(damaged) // 2] ^= 0x55
    seeds["gz_damaged"] = bytes(damaged)
    return seeds


def raw_seeds() -> Dict[str, bytes]:
    """Three size bytes (each 1 + b % 16), then the file."""
    return {
        "2x2x1": bytes([1, 1, 0]) + struct.pack("<4f", 1, 2, 3, 4),
        "1x1x1": bytes([0, 0, 0]) + struct.pack("<f", float("nan")),
        "wrong_size": bytes([3, 3, 3]) + bytes(10),
    }


def jpeg_seeds() -> Dict[str, bytes]:
    """Grey/colour, baseline/progressive, 4:4:4/4:2:0, from libjpeg's encoder."""
    with tempfile.TemporaryDirectory() as tmp:
        tool = Path(tmp) / "jpeg_seeds"
        subprocess.run(["cc", "-O1", "-o", str(tool), str(HERE / "jpeg_seeds.c"), "-ljpeg"],
                       check=True)
        subprocess.run([str(tool), tmp], check=True)
        return {p.stem: p.read_bytes() for p in Path(tmp).glob("*.jpg")}


def tiff_seeds() -> Dict[str, bytes]:
    """Strips and tiles, 8/16-bit and float, grey/RGB/RGBA, compressed,
    both byte orders, several pages, BigTIFF, from libtiff's encoder; a
    truncation and a header that claims a huge page."""
    with tempfile.TemporaryDirectory() as tmp:
        tool = Path(tmp) / "tiff_seeds"
        subprocess.run(["cc", "-O1", "-o", str(tool), str(HERE / "tiff_seeds.c"), "-ltiff"],
                       check=True)
        subprocess.run([str(tool), tmp], check=True)
        seeds = {p.stem: p.read_bytes() for p in Path(tmp).glob("*.tif")}
    seeds["pages3_cut"] = seeds["pages3_u16"][: len(seeds["pages3_u16"]) // 2]
    entries = [(256, 100000), (257, 100000), (258, 8), (259, 1), (262, 1), (273, 8),
               (278, 100000), (279, 1)]
    ifd = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHII", tag, 4, 1, value) for tag, value in entries) + bytes(4)
    seeds["huge_claim"] = b"II*\0" + struct.pack("<I", 8) + ifd
    return seeds


def parvis_version() -> str:
    """The version configure.ac gives (the tuning file names it)."""
    text = (HERE.parent.parent / "configure.ac").read_text()
    return re.search(r"AC_INIT\(\[parvis\], \[([^\]]+)\]", text).group(1)


def fnv1a(data: bytes) -> int:
    """FNV-1a 64, the checksum of both cache formats."""
    value = 14695981039346656037
    for byte in data:
        value = ((value ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return value


def with_end(body: bytes) -> bytes:
    """body closed by the "end <checksum>" line the tuning parsers check."""
    return body + b"end %016x\n" % fnv1a(body)


def tune_seeds() -> Dict[str, bytes]:
    """Tuning cache files for fuzz_tune_cache's identity."""
    head = ("parvis-tune 1\ndevice fuzz device\ndriver fuzz driver 1.0\n"
            f"parvis {parvis_version()}\n").encode()
    params = b"param bp BP_WG_X 32\nparam bp BP_WG_Y 8\nparam sad SAD_WG_X 16\n"
    valid = with_end(head + params)
    return {
        "valid": valid,
        "empty": with_end(head),
        "bad_checksum": head + params + b"end 0000000000000000\n",
        "truncated": valid[: len(valid) - 10],
        "other_device": with_end(head.replace(b"fuzz device", b"another")),
    }


def tune_db_seeds() -> Dict[str, bytes]:
    """Tuning database entries (lib/tune/tune_db.h's format)."""
    head = ("parvis-tune-db 1\nvendor NVIDIA Corporation\ntype gpu\narch hopper\n"
            "device NVIDIA H100 80GB HBM3\ndriver 550.54.15\n"
            f"parvis {parvis_version()}\nlocal_memory 49152\nmax_work_group 1024\n").encode()
    params = b"param bp BP_WG_X 32\nparam bp BP_WG_Y 4\nparam sad SAD_WG_X 64\n"
    valid = with_end(head + params)
    return {
        "valid": valid,
        "no_arch": with_end(head.replace(b"arch hopper", b"arch ") + params),
        "empty": with_end(head),
        "bad_checksum": head + params + b"end 0000000000000000\n",
        "truncated": valid[: len(valid) - 10],
        "bad_type": with_end(head.replace(b"type gpu", b"type fpga") + params),
        "cache_file": with_end(b"parvis-tune 1\ndevice fuzz device\ndriver 1.0\n"
                               + f"parvis {parvis_version()}\n".encode() + params),
    }


def binary_cache_seeds() -> Dict[str, bytes]:
    """Binary-cache entries for fuzz_binary_cache's key (host byte order)."""
    key = 0x5056434C42494E31
    binary = bytes(range(64)) * 4

    def entry(size: int, checksum: int, body: bytes) -> bytes:
        return b"PVCLBIN1" + struct.pack("=QQQ", key, size, checksum) + body

    return {
        "valid": entry(len(binary), fnv1a(binary), binary),
        "short": entry(len(binary), fnv1a(binary), binary[:100]),
        "claims_1gib": entry((1 << 30) - 1, 0, binary),
        "bad_checksum": entry(len(binary), 1, binary),
    }


def fft_cache_seeds() -> Dict[str, bytes]:
    """FFT-cache entries for fuzz_fft_cache's key (host byte order)."""
    key = 0x5056464654433031
    programs = [(11, bytes(range(48))), (22, b"kernel\x00binary" * 3), (33, b"\x00")]

    def payload(records) -> bytes:
        return b"".join(struct.pack("=QQ", h, len(b)) + b for h, b in records)

    def entry(count: int, body: bytes, checksum=None) -> bytes:
        check = fnv1a(body) if checksum is None else checksum
        return b"PVFFTC01" + struct.pack("=QQQQ", key, count, len(body), check) + body

    whole = payload(programs)
    return {
        "valid": entry(len(programs), whole),
        "one_program": entry(1, payload(programs[:1])),
        "count_too_high": entry(len(programs) + 1, whole),
        "record_overruns": entry(1, struct.pack("=QQ", 1, 1 << 40) + b"x"),
        "bad_checksum": entry(len(programs), whole, 1),
        "short": entry(len(programs), whole)[:-5],
    }


def write(target: str, seeds: Dict[str, bytes]) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (folder / name).write_bytes(data)


def main() -> None:
    write("fuzz_pnm", pnm_seeds())
    write("fuzz_pfm", pfm_seeds())
    write("fuzz_png", png_seeds())
    write("fuzz_nifti", nifti_seeds())
    write("fuzz_nifti_gz", nifti_gz_seeds())
    write("fuzz_raw", raw_seeds())
    write("fuzz_tune_cache", tune_seeds())
    write("fuzz_tune_db", tune_db_seeds())
    write("fuzz_binary_cache", binary_cache_seeds())
    write("fuzz_fft_cache", fft_cache_seeds())
    jpegs = jpeg_seeds()
    whole = jpegs["colour_420"]
    jpegs["colour_cut"] = whole[: len(whole) // 2]
    write("fuzz_jpeg", jpegs)
    write("fuzz_tiff", tiff_seeds())


if __name__ == "__main__":
    main()
