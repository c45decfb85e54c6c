# png_colors.py -- what a PNG screenshot shows, with the standard library
# only (zlib, struct): prints its width, height, the number of distinct
# colours and the fraction of the pixels that are not white, the right
# 24 columns (where a scroll bar may be) left out.
# An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes).
# usage: python3 tests/png_colors.py FILE.png
import struct
import sys
import zlib


def decode(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('%s: not a PNG' % path)
    pos, idat, head = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            head = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
    w, h, depth, ctype, _, _, lace = head
    if depth != 8 or ctype not in (2, 6) or lace:
        sys.exit('%s: not an 8-bit RGB(A) non-interlaced PNG' % path)
    return w, h, 3 if ctype == 2 else 4, zlib.decompress(b''.join(idat))


def unfilter(f, cur, prev, bpp):
    n = len(cur)
    if f == 1:
        for i in range(bpp, n):
            cur[i] = (cur[i] + cur[i - bpp]) & 255
    elif f == 2:
        for i in range(n):
            cur[i] = (cur[i] + prev[i]) & 255
    elif f == 3:
        for i in range(n):
            a = cur[i - bpp] if i >= bpp else 0
            cur[i] = (cur[i] + ((a + prev[i]) >> 1)) & 255
    elif f == 4:
        for i in range(n):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            cur[i] = (cur[i] + (a if pa <= pb and pa <= pc
                                else b if pb <= pc else c)) & 255


def main():
    w, h, bpp, raw = decode(sys.argv[1])
    stride = w * bpp
    prev = bytearray(stride)
    colors, inked = set(), 0
    for y in range(h):
        off = y * (stride + 1)
        cur = bytearray(raw[off + 1:off + 1 + stride])
        unfilter(raw[off], cur, prev, bpp)
        rgb = list(zip(cur[0::bpp], cur[1::bpp], cur[2::bpp]))
        colors.update(rgb)
        inked += sum(px != (255, 255, 255) for px in rgb[:w - 24])
        prev = cur
    print(w, h, len(colors), '%.4f' % (inked / (h * (w - 24))))


main()
