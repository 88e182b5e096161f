#!/usr/bin/python3
"""Writes the seed corpus of image_fuzz (tests/fuzz/image_fuzz.cc) into a folder.

  /usr/bin/python3 tests/fuzz/make_image_corpus.py tests/fuzz/corpus/image_fuzz

Tiny files made with Pillow (python3-pil) and by hand: JPEGs (baseline,
progressive, grey, EXIF orientation 6, CMYK, truncated) and PNGs (grey at 1, 8
and 16 bits, grey+alpha, RGB, RGBA, a 4-bit palette, a palette with tRNS,
truncated, a bad CRC, an IHDR declaring 30,000 x 30,000), and bytes that are
no image. Pillow writes no interlaced PNG: the unit tests make those with
libspng's encoder (tests/test_models/test_images.h). Deterministic: the same
files every run.
"""
import io
import os
import struct
import sys
import zlib

from PIL import Image


def noise(mode, size, seed):
    import random
    rng = random.Random(seed)
    im = Image.new(mode, size)
    bands = len(im.getbands())
    if mode == "1":
        im.putdata([rng.randrange(2) * 255 for _ in range(size[0] * size[1])])
    elif mode in ("I;16",):
        im.putdata([rng.randrange(65536) for _ in range(size[0] * size[1])])
    elif bands == 1:
        im.putdata([rng.randrange(256) for _ in range(size[0] * size[1])])
    else:
        im.putdata([tuple(rng.randrange(256) for _ in range(bands))
                    for _ in range(size[0] * size[1])])
    return im


def save(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def main(out):
    os.makedirs(out, exist_ok=True)
    files = {
        "jpeg_baseline": save(noise("RGB", (9, 7), 1), "JPEG", quality=90),
        "jpeg_progressive": save(noise("RGB", (16, 12), 2), "JPEG", progressive=True),
        "jpeg_grey": save(noise("L", (8, 5), 3), "JPEG"),
        "jpeg_cmyk": save(noise("CMYK", (6, 6), 4), "JPEG"),
        "png_grey8": save(noise("L", (5, 4), 5), "PNG"),
        "png_grey1": save(noise("1", (11, 3), 6), "PNG"),
        "png_grey16": save(noise("I;16", (4, 4), 7), "PNG"),
        "png_grey_alpha": save(noise("LA", (4, 3), 8), "PNG"),
        "png_rgb": save(noise("RGB", (6, 5), 9), "PNG"),
        "png_rgba": save(noise("RGBA", (3, 7), 10), "PNG"),
        "png_palette_4bit": save(noise("RGB", (8, 8), 11).quantize(colors=16), "PNG", bits=4),
    }
    pal = noise("RGB", (6, 6), 12).quantize(colors=4)
    files["png_palette_trns"] = save(pal, "PNG", transparency=1)
    exif = Image.Exif()
    exif[0x0112] = 6
    files["jpeg_exif_6"] = save(noise("RGB", (8, 4), 13), "JPEG", exif=exif.tobytes())
    files["jpeg_truncated"] = files["jpeg_progressive"][: len(files["jpeg_progressive"]) // 2]
    files["png_truncated"] = files["png_rgb"][:40]
    bad_crc = bytearray(files["png_rgb"])
    bad_crc[-20] ^= 0x55
    files["png_bad_crc"] = bytes(bad_crc)
    ihdr = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)
    files["png_bomb_30000"] = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                               chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))
    files["not_an_image"] = b"GIF89a not an image"
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
