#!/usr/bin/python3
"""Writes CIFAR-10 or MNIST images as image files, with a manifest in record order.

  write_files.py cifar CIFAR10_DIR OUT [--format=png|jpeg] [--limit=N] [--folder=TRAIN,TEST]
  write_files.py mnist MNIST_DIR OUT [--format=png|jpeg] [--limit=N] [--folder=TRAIN,TEST]

CIFAR10_DIR holds data_batch_N.bin[.gz] (the records of every batch present,
in order); MNIST_DIR holds train-images-idx3-ubyte[.gz] and
train-labels-idx1-ubyte[.gz]. Writes OUT/CLASS/NNNNN.png (or .jpg at quality
95) and OUT/manifest.csv (path,label), one row per record in record order,
so a manifest source gives the trainer the records in the binary reader's
order (and the same seeded split). PNG is lossless: a 32 x 32 (28 x 28) PNG
decodes to the record's bytes exactly. With --folder=TRAIN,TEST the first
TRAIN records go to OUT/train/CLASS/ and the next TEST to OUT/test/CLASS/
(torchvision's ImageFolder layout, no manifest). Needs numpy and Pillow
(python3-pil).
"""
import argparse
import csv
import gzip
import os

import numpy as np
from PIL import Image

CIFAR_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                 "ship", "truck"]


def read(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            opener = gzip.open if p.endswith(".gz") else open
            with opener(p, "rb") as f:
                return f.read()
    raise SystemExit(f"write_files: no {path} (or {path}.gz)")


def cifar(folder, limit):
    images, labels = [], []
    for n in range(1, 6):
        name = os.path.join(folder, f"data_batch_{n}.bin")
        if not (os.path.exists(name) or os.path.exists(name + ".gz")):
            continue
        records = np.frombuffer(read(name), np.uint8).reshape(-1, 3073)
        labels.extend(CIFAR_CLASSES[int(b)] for b in records[:, 0])
        images.extend(records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return images[:limit], labels[:limit]


def mnist(folder, limit):
    raw = read(os.path.join(folder, "train-images-idx3-ubyte"))
    n, rows, cols = np.frombuffer(raw[4:16], ">u4")
    images = np.frombuffer(raw[16:], np.uint8).reshape(n, rows, cols)
    labels = np.frombuffer(read(os.path.join(folder, "train-labels-idx1-ubyte"))[8:], np.uint8)
    return list(images[:limit]), [str(int(v)) for v in labels[:limit]]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["cifar", "mnist"])
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--format", choices=["png", "jpeg"], default="png")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--folder", default=None)
    a = parser.parse_args()
    images, labels = (cifar if a.kind == "cifar" else mnist)(a.data, a.limit)
    ext = "png" if a.format == "png" else "jpg"
    if a.folder:
        train, test = (int(v) for v in a.folder.split(","))
        for i in range(train + test):
            part = "train" if i < train else "test"
            folder = os.path.join(a.out, part, labels[i])
            os.makedirs(folder, exist_ok=True)
            im = Image.fromarray(images[i])
            if a.format == "png":
                im.save(os.path.join(folder, f"{i:05d}.png"), "PNG")
            else:
                im.save(os.path.join(folder, f"{i:05d}.jpg"), "JPEG", quality=95)
        print(f"write_files: {train} + {test} {a.kind} images as {a.format} in {a.out}")
        return
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "manifest.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["path", "label"])
        for i, (pixels, label) in enumerate(zip(images, labels)):
            os.makedirs(os.path.join(a.out, label), exist_ok=True)
            path = f"{label}/{i:05d}.{ext}"
            im = Image.fromarray(pixels)
            if a.format == "png":
                im.save(os.path.join(a.out, path), "PNG")
            else:
                im.save(os.path.join(a.out, path), "JPEG", quality=95)
            w.writerow([path, label])
    print(f"write_files: {len(images)} {a.kind} images as {a.format} in {a.out}")


if __name__ == "__main__":
    main()
