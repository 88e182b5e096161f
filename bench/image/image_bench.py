#!/usr/bin/python3
"""Image front end speed against Pillow + numpy, and the served latency of one JPEG.

  /usr/bin/python3 bench/image/image_bench.py [--build=build] [--out=DIR] [--served]

1. Writes photo-like JPEGs (smooth seeded noise, quality 90): 64 of 32 x 32 and
   32 of 224 x 224, named SIDE_N.jpg, in OUT/files.
2. In one run, on the same files: build/bin/invariant-bench-image (decode,
   EXIF orientation, RGB, ImageOps.fit to 32 x 32 by the antialiased bilinear
   filter, b / 255: core/image/front_end.h, one thread) and Pillow + numpy
   doing the same (Image.open, exif_transpose, convert("RGB"), ImageOps.fit,
   np.asarray(float32) / 255, one thread). Prints images per second of each and
   the ratio ours / Pillow.
3. With --served: trains train/configs/image_folder.textproto on 300 such
   files in three classes (OUT/train), serves the model with invariant-server
   on loopback and sends one 224 x 224 JPEG per Predict call from the Python
   client, 200 calls after 20 warm-up ones: prints p50 and p99 in ms.
"""
import argparse
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageOps

ROOT = pathlib.Path(__file__).resolve().parents[2]


def photo(side, seed):
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (max(2, side // 8), max(2, side // 8), 3), dtype=np.uint8)
    im = Image.fromarray(small).resize((side, side), Image.Resampling.BICUBIC)
    noise = rng.integers(-12, 13, (side, side, 3))
    return Image.fromarray(np.clip(np.asarray(im, np.int16) + noise, 0, 255).astype(np.uint8))


def jpeg(im):
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90)
    return buf.getvalue()


def pillow_rate(files, seconds=2.0):
    """Images per second of Pillow + numpy doing the front end, cycling over `files`."""
    n, start, i = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        im = ImageOps.exif_transpose(Image.open(io.BytesIO(files[i % len(files)])))
        im = ImageOps.fit(im.convert("RGB"), (32, 32), Image.Resampling.BILINEAR)
        row = np.asarray(im, np.float32) / 255.0
        row.sum()
        n += 1
        i += 1
    return n / (time.perf_counter() - start)


def ours(build, folder):
    out = subprocess.run([str(build / "bin/invariant-bench-image"), f"--image_dir={folder}",
                          "--benchmark_format=json", "--benchmark_min_time=2"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"].split("/")[1]: b["items_per_second"] for b in json.loads(out)["benchmarks"]}


def served(build, out, files_224):
    import invariant_serve  # noqa: F401  (PYTHONPATH=build/python)
    from invariant_serve import Client

    train = out / "train"
    for k in range(3):
        for i in range(100):
            d = train / "train" / f"class{k}"
            d.mkdir(parents=True, exist_ok=True)
            im = photo(48, 1000 * k + i)
            a = np.asarray(im).copy()
            a[:, :, k] = np.clip(a[:, :, k].astype(int) + 60, 0, 255)  # a colour cast per class
            (d / f"{i}.jpg").write_bytes(jpeg(Image.fromarray(a)))
    config = out / "image_folder.textproto"
    config.write_text((ROOT / "train/configs/image_folder.textproto").read_text()
                      .replace("IMAGES_DIR", str(train)).replace("validation: 300", "validation: 30"))
    models = out / "models"
    start = time.perf_counter()
    subprocess.run([str(build / "bin/invariant-train"), f"--config={config}",
                    f"--models={models}", "--name=photos"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"image_bench: trained image_folder.textproto on 300 files in "
          f"{time.perf_counter() - start:.0f} s")
    server = subprocess.Popen([str(build / "bin/invariant-server"), f"--models={models}",
                               "--host=127.0.0.1", "--port=0", "--metrics_port=0"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = server.stdout.readline().decode()
        port = dict(p.split("=", 1) for p in line.split() if "=" in p)["grpc_port"]
        with Client(f"127.0.0.1:{port}", timeout=30) as client:
            one = files_224[0]
            for _ in range(20):
                client.predict("photos", images=one)
            times = []
            for _ in range(200):
                t = time.perf_counter()
                client.predict("photos", images=one)
                times.append(1000 * (time.perf_counter() - t))
        print(f"image_bench: served Predict of one 224 x 224 JPEG ({len(one)} bytes), batch 1: "
              f"p50 {np.percentile(times, 50):.2f} ms, p99 {np.percentile(times, 99):.2f} ms")
    finally:
        server.terminate()
        server.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=str(ROOT / "build"))
    p.add_argument("--out", default=None)
    p.add_argument("--served", action="store_true")
    a = p.parse_args()
    build = pathlib.Path(a.build)
    out = pathlib.Path(a.out or tempfile.mkdtemp(prefix="image-bench."))
    folder = out / "files"
    folder.mkdir(parents=True, exist_ok=True)
    files = {32: [], 224: []}
    for side, count in ((32, 64), (224, 32)):
        for i in range(count):
            data = jpeg(photo(side, side * 1000 + i))
            (folder / f"{side}_{i}.jpg").write_bytes(data)
            files[side].append(data)
    rates = ours(build, folder)
    for side in (32, 224):
        theirs = pillow_rate(files[side])
        mine = rates[str(side)]
        print(f"image_bench: {side} x {side} JPEG -> 32 x 32 x 3 row: invariant {mine:,.0f}/s, "
              f"Pillow + numpy {theirs:,.0f}/s, ratio {mine / theirs:.2f}")
    if a.served:
        sys.path.insert(0, str(build / "python"))
        served(build, out, files[224])


if __name__ == "__main__":
    main()
