#!/usr/bin/env python3
"""A Markdown table of the patch encoder's ratios from an invariant-bench-encoders JSON file.

  build/bin/invariant-bench-encoders --benchmark_filter=BM_Patch --benchmark_repetitions=5 --benchmark_min_time=0.3 \
      --benchmark_out=patch.json --benchmark_out_format=json
  python3 bench/encoders/patch_table.py patch.json

Uses the fastest repetition of each benchmark (performance_table's load: on
a shared machine the others are slowed by other processes). Every ratio is
of two times per image measured in the same run, same {r, batch}: the
encoder (THRESHOLD, and FOURIER and CDF when present) against PackedDot alone on the
im2col matrix, and against OpenBLAS sgemm of the same product.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from performance_table import load  # noqa: E402


def ms_per_image(b, batch):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return b["real_time"] * scale / batch


def main():
    runs = load(sys.argv[1])
    shapes = sorted({args for (_, args) in runs})
    print("| r | batch | PackedDot ms/image | sgemm ms/image | THRESHOLD ms/image | "
          "THRESHOLD / PackedDot | THRESHOLD / sgemm | FOURIER / PackedDot | CDF (n = 2) / PackedDot |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r, batch in shapes:
        def t(name):
            b = runs.get((name, (r, batch)))
            return ms_per_image(b, batch) if b else None
        dot, gemm, thr, fou, cdf = (t("PatchPackedDot"), t("PatchSgemm"), t("PatchThreshold"),
                                    t("PatchFourier"), t("PatchCdf"))
        cell = lambda v: "—" if v is None else f"{v:.2f}"  # noqa: E731
        ratio = lambda a, b: "—" if a is None or b is None else f"{a / b:.2f}"  # noqa: E731
        print(f"| {r} | {batch} | {cell(dot)} | {cell(gemm)} | {cell(thr)} | {ratio(thr, dot)} | "
              f"{ratio(thr, gemm)} | {ratio(fou, dot)} | {ratio(cdf, dot)} |")


if __name__ == "__main__":
    main()
