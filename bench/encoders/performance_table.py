#!/usr/bin/env python3
"""Markdown tables from an invariant-bench-encoders JSON file.

  invariant-bench-encoders --benchmark_repetitions=5 --benchmark_min_time=0.2 \
      --benchmark_out=bench.json --benchmark_out_format=json
  python3 bench/encoders/performance_table.py bench.json

Uses the fastest repetition of each benchmark (on a shared machine the
others are slowed by other processes; † marks a fastest run that was still
slowed). Ratios are against
BM_Sgemm (OpenBLAS with as many threads as the pool) of the same shape, and
batch-1 times against BM_ReadBank (one pass over the bank on all threads).
"""
import json
import sys

ROWS = ["SgemmAllCores", "Sgemm", "PackedDot", "PackedDotBf16", "Cdf", "RandomFourier",
        "RandomFourierBf16", "Nystrom", "SecondLayer", "ChainPreprocessCdf"]


def load(path):
    runs = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        parts = name.split("/")
        key = (parts[0][3:], tuple(int(p) for p in parts[1:]))
        if key not in runs or b["real_time"] < runs[key]["real_time"]:
            runs[key] = b
    return runs


def Contended(b):
    """† when the calling thread got < 75 % of a core: another process ran."""
    return " †" if b["real_time"] > b["cpu_time"] / 0.75 else ""


def main():
    runs = load(sys.argv[1])
    for bank in (10000, 100000):
        print(f"\n#### Bank {bank} × 784 ({bank * 784 * 4 / 1e6:.1f} MB)\n")
        print("| benchmark | batch 1 | batch 16 | batch 64 | batch 256 |")
        print("|---|---|---|---|---|")
        for row in ROWS:
            cells = []
            for batch in (1, 16, 64, 256):
                b = runs.get((row, (bank, batch)))
                ref = runs.get(("Sgemm", (bank, batch)))
                if b is None:
                    cells.append("–")
                    continue
                rps = b["rows_per_second"]
                ratio = f" ({rps / ref['rows_per_second']:.0%})" if ref and row != "Sgemm" else ""
                cells.append(f"{rps:,.0f}{ratio}{Contended(b)}")
            print(f"| {row} | " + " | ".join(cells) + " |")
        read = runs.get(("ReadBank", (bank,)))
        if read:
            t0 = read["real_time"]
            print(f"\nBatch 1 time / one all-thread pass over the bank "
                  f"({t0:.3f} ms{Contended(read)}):\n")
            print("| benchmark | batch-1 time (ms) | × read pass |")
            print("|---|---|---|")
            for row in ROWS[2:]:
                b = runs.get((row, (bank, 1)))
                if b:
                    print(f"| {row} | {b['real_time']:.3f}{Contended(b)} | {b['real_time'] / t0:.2f} |")


if __name__ == "__main__":
    main()
