#!/usr/bin/env python3
"""Markdown tables of ratios from an invariant-bench-audio JSON file.

  build/bin/invariant-bench-audio --benchmark_repetitions=5 --benchmark_min_time=0.2 \
      --benchmark_out=audio.json --benchmark_out_format=json
  python3 bench/audio/audio_table.py audio.json

Uses the fastest repetition of each benchmark (on a shared machine the
others are slowed by other processes; † marks a fastest run whose calling
thread still got < 75 % of a core; only the front-end rows, which run on
that one thread, are marked). Every ratio is of two times measured in
the same run (the front end's also in CPU time of its one thread, which a
preempted run inflates less): the front end against KissFFT + the filter bank of the same
61 frames, the feature map against the sgemm of the encoder's shape.
"""
import os
import sys

# The fastest repetition of each benchmark, keyed as the encoder tables key it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "encoders"))
from performance_table import load  # noqa: E402


def ms(b):
    """Real time of one iteration in milliseconds."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return b["real_time"] * scale


def cpu_us(b):
    """CPU time of the calling thread per iteration, µs (the fastest repetition's)."""
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    return b["cpu_time"] * scale


def mark(b):
    """† (single-threaded benchmarks) when the thread got < 75 % of a core."""
    return " †" if b["real_time"] > b["cpu_time"] / 0.75 else ""


def main():
    runs = load(sys.argv[1])
    get = runs.get
    print("#### Front end, one 1 s clip (61 frames of 256 samples → 64 × 61)\n")
    print("| benchmark | µs per clip | / FFT + filter bank | CPU µs | CPU / FFT + filter bank |")
    print("|---|---|---|---|---|")
    ref = get(("FftFilterBank", ()))
    for key, label in [(("KissFft", ()), "KissFFT real FFTs alone (61 × 256)"),
                       (("FftFilterBank", ()), "window + FFT + magnitude + filter bank"),
                       (("FrontEnd", (8000,)), "AudioFrontEnd::Apply, 8 kHz clip"),
                       (("FrontEnd", (16000,)), "AudioFrontEnd::Apply, 16 kHz clip (resampled)")]:
        b = get(key)
        if b is None or ref is None:
            continue
        print(f"| {label} | {ms(b) * 1e3:.1f}{mark(b)} | {ms(b) / ms(ref):.2f}× | "
              f"{cpu_us(b):.1f} | {cpu_us(b) / cpu_us(ref):.2f}× |")

    print("\n#### Feature map (front end + preprocess + random Fourier, s = 1500, "
          "r = 20 on the input, d = 3904)\n")
    print("| batch | sgemm (n·r)×d·d×s ms | sgemm 1 thread ms | encoder ms | feature map 8 kHz ms | "
          "feature map 16 kHz ms | encoder / sgemm | feature map / sgemm | "
          "front end share (8 kHz) | ms per clip (8 kHz) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (1, 64):
        g, e = get(("Sgemm", (n,))), get(("Encoder", (n,)))
        g1 = get(("SgemmOneThread", (n,)))
        f8, f16 = get(("FeatureMap", (8000, n))), get(("FeatureMap", (16000, n)))
        if None in (g, e, f8, f16):
            continue
        fe = get(("FrontEnd", (8000,)))
        share = n * ms(fe) / ms(f8) if fe else float("nan")
        one = f"{ms(g1):.3f}" if g1 else "–"
        print(f"| {n} | {ms(g):.3f} | {one} | {ms(e):.3f} | {ms(f8):.3f} | {ms(f16):.3f} | "
              f"{ms(e) / ms(g):.2f}× | {ms(f8) / ms(g):.2f}× | {share:.0%} | {ms(f8) / n:.3f} |")
    p = get(("Predict", (8000, 1)))
    if p:
        print(f"\nPredict, one 8 kHz clip (feature map + 10-class head): {ms(p):.3f} ms.")


if __name__ == "__main__":
    main()
