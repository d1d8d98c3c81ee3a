#!/usr/bin/env python3
"""PNG pixels for knee report's browser test, with the standard library only (zlib): decode
Chromium's screenshot, count the coloured pixels inside a box (a chart that drew nothing has
only white, grey grid lines and black text), and crop a box into a new PNG (README pictures).

  report_png.py count SHOT.png X,Y,W,H...     one count per box, on one line
  report_png.py crop SHOT.png X,Y,W,H OUT.png
"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs (got {depth}/{ctype}/{interlace})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def coloured(rows, bpp, x, y, w, h, width, height):
    """Pixels in the box whose channels differ by more than 60: a series, a heat cell, a marker
    colour — not white, grey or black."""
    n = 0
    for yy in range(max(0, y), min(height, y + h)):
        r = rows[yy]
        for xx in range(max(0, x), min(width, x + w)):
            o = xx * bpp
            a, b, c = r[o], r[o + 1], r[o + 2]
            if max(a, b, c) - min(a, b, c) > 60:
                n += 1
    return n


def write_png(path, width, height, rows):
    raw = b"".join(b"\x00" + r for r in rows)
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    width, height, bpp, rows = read_png(path)
    if cmd == "count":
        out = []
        for box in sys.argv[3:]:
            x, y, w, h = (int(v) for v in box.split(","))
            out.append(str(coloured(rows, bpp, x, y, w, h, width, height)))
        print(" ".join(out))
    elif cmd == "crop":
        x, y, w, h = (int(v) for v in sys.argv[3].split(","))
        w, h = min(w, width - x), min(h, height - y)
        crop = [bytes(b for i in range(x, x + w) for b in rows[yy][i * bpp:i * bpp + 3]) for yy in range(y, y + h)]
        write_png(sys.argv[4], w, h, crop)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
