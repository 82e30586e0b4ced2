#!/usr/bin/env python3
"""Write binary PGMs as an uncompressed grey TIFF, one page per PGM, for
tests/test_cli_tiff.sh (the library only reads TIFF).

    tiff_write.py OUT.tif [--bits 8|16|32] [--big-endian] IN.pgm...
    tiff_write.py OUT.tif --raw NXxNYxNZ IN.raw

--bits 16 stores each 8-bit value v as v * 257, --bits 32 as float v / 4;
--raw writes a little-endian float32 volume (x fastest) as NZ float pages
of NY rows, values as they are.  The samples of one strip a page follow
the header, then the IFDs."""
import struct
import sys


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P5" or int(fields[3]) > 255:
        raise SystemExit(f"{path}: not an 8-bit binary PGM")
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[pos + 1:pos + 1 + width * height]


def read_raw(size, path):
    nx, ny, nz = (int(n) for n in size.split("x"))
    with open(path, "rb") as f:
        data = f.read()
    if len(data) != nx * ny * nz * 4:
        raise SystemExit(f"{path}: not {size} float32 values")
    page = nx * ny * 4
    values = struct.unpack(f"<{nx * ny * nz}f", data)
    return [(nx, ny, values[k * nx * ny:(k + 1) * nx * ny]) for k in range(nz)], page


def samples(pixels, bits, order, raw=False):
    if raw:
        return struct.pack(f"{order}{len(pixels)}f", *pixels)
    if bits == 8:
        return bytes(pixels)
    if bits == 16:
        return struct.pack(f"{order}{len(pixels)}H", *(v * 257 for v in pixels))
    return struct.pack(f"{order}{len(pixels)}f", *(v / 4.0 for v in pixels))


def ifd(order, width, height, bits, offset, count, next_ifd):
    short, long_ = 3, 4
    entries = [(256, long_, width), (257, long_, height), (258, short, bits),
               (259, short, 1), (262, short, 1), (273, long_, offset),
               (277, short, 1), (278, long_, height), (279, long_, count),
               (339, short, 3 if bits == 32 else 1)]
    out = struct.pack(f"{order}H", len(entries))
    for tag, kind, value in entries:
        packed = struct.pack(f"{order}H", value) + b"\0\0" if kind == short else \
            struct.pack(f"{order}I", value)
        out += struct.pack(f"{order}HHI", tag, kind, 1) + packed
    return out + struct.pack(f"{order}I", next_ifd)


def main(argv):
    bits, order, inputs, out, raw = 8, "<", [], None, None
    args = iter(argv)
    for arg in args:
        if arg == "--bits":
            bits = int(next(args))
        elif arg == "--raw":
            raw = next(args)
        elif arg == "--big-endian":
            order = ">"
        elif out is None:
            out = arg
        else:
            inputs.append(arg)
    if out is None or not inputs or bits not in (8, 16, 32):
        raise SystemExit(__doc__)
    if raw:
        if len(inputs) != 1:
            raise SystemExit(__doc__)
        pages, _ = read_raw(raw, inputs[0])
        bits = 32
    else:
        pages = [read_pgm(p) for p in inputs]
    data = [samples(p[2], bits, order, raw is not None) for p in pages]
    body = bytearray(b"II*\0" if order == "<" else b"MM\0*")
    body += b"\0\0\0\0"                     # first IFD, filled in below
    offsets = []
    for d in data:
        offsets.append(len(body))
        body += d + (b"\0" if len(d) % 2 else b"")
    ifd_size = 2 + 10 * 12 + 4
    first = len(body)
    struct.pack_into(f"{order}I", body, 4, first)
    for i, (page, d) in enumerate(zip(pages, data)):
        nxt = first + (i + 1) * ifd_size if i + 1 < len(pages) else 0
        body += ifd(order, page[0], page[1], bits, offsets[i], len(d), nxt)
    with open(out, "wb") as f:
        f.write(body)


if __name__ == "__main__":
    main(sys.argv[1:])
