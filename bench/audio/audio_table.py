#!/usr/bin/env python3
"""Markdown tables of ratios from an invariant-bench-audio JSON file.

  build/bin/invariant-bench-audio --benchmark_repetitions=5 --benchmark_min_time=0.2 \
      --benchmark_out=audio.json --benchmark_out_format=json
  python3 bench/audio/audio_table.py audio.json

Uses the fastest repetition of each benchmark (on a shared machine the
others are slowed by other processes; † marks a fastest run whose calling
thread still got < 75 % of a core; only the single-threaded rows are
marked). Every ratio is of two times measured in the same run:

* the front end against KissFFT + the filter bank of the same 62 frames;
* featurize throughput of 1 s clips as a multiple of real time (clips per
  second × 1 s) at batch 1 / 8 / 64, for the whole feature map (front end +
  encoder, what a served Featurize does) and for the encoder alone on rows,
  against the issue-31 target of 2,000× real time;
* the encoder's time against the sgemm of its shape ((588·N) × 256 times
  256 × 384) and against the FFT correlation of the same work (384
  templates over the padded 72 × 62 plane through KissFFT), with the
  decision it implies: an FFT path for the encoder is worth having only if
  the FFT correlation is faster than the encoder at this shape.
"""
import os
import sys

# The fastest repetition of each benchmark, keyed as the encoder tables key it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "encoders"))
from performance_table import load  # noqa: E402

CLIP_SECONDS = 1.0
TARGET_REAL_TIME = 2000.0
BATCHES = (1, 8, 64)


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


def real_time_multiple(b, n):
    """Clips per second × the clip's length: how many times faster than real time."""
    return n / (ms(b) / 1e3) * CLIP_SECONDS


def cell(b, fmt="{:.2f}", single=False):
    if b is None:
        return "–"
    return fmt.format(ms(b)) + (mark(b) if single else "")


def main():
    runs = load(sys.argv[1])
    get = runs.get
    print("#### Front end, one 1 s clip (62 frames of 128 samples → 64 × 62)\n")
    print("| benchmark | µs per clip | / FFT + filter bank | CPU µs | CPU / FFT + filter bank |")
    print("|---|---|---|---|---|")
    ref = get(("FftFilterBank", ()))
    # (key, label, single-threaded): the constant-Q front end runs its bands
    # on the pool, so its CPU µs are the calling thread's share.
    pooled = " (bands on the pool; CPU: the calling thread's)"
    for key, label, single in [
            (("KissFft", ()), "KissFFT real FFTs alone (62 × 128)", True),
            (("FftFilterBank", ()), "window + FFT + magnitude + filter bank", True),
            (("FrontEndStft", (8000,)), "STFT front end (no alignment), 8 kHz clip", True),
            (("FrontEndStft", (16000,)), "STFT front end (no alignment), 16 kHz clip", True),
            (("FrontEnd", (8000,)),
             "AudioFrontEnd::Apply (constant-Q, aligned), 8 kHz clip" + pooled, False),
            (("FrontEnd", (16000,)),
             "AudioFrontEnd::Apply (constant-Q, aligned), 16 kHz clip (resampled)" + pooled,
             False)]:
        b = get(key)
        if b is None or ref is None:
            continue
        print(f"| {label} | {ms(b) * 1e3:.1f}{mark(b) if single else ''} | "
              f"{ms(b) / ms(ref):.2f}× | {cpu_us(b):.1f} | {cpu_us(b) / cpu_us(ref):.2f}× |")

    print("\n#### Featurize throughput, 1 s clips at 8 kHz (× real time = clips/s × 1 s; "
          f"target ≥ {TARGET_REAL_TIME:,.0f}×)\n")
    print("| batch | feature map ms | ms per clip | feature map × real time | "
          "encoder ms | encoder × real time | predict ms | predict × real time | target met |")
    print("|---|---|---|---|---|---|---|---|---|")
    multiples = []
    for n in BATCHES:
        f, e, p = get(("FeatureMap", (8000, n))), get(("Encoder", (n,))), get(("Predict", (8000, n)))
        if f is None or e is None:
            continue
        x = real_time_multiple(f, n)
        multiples.append(x)
        px = f"{real_time_multiple(p, n):,.0f}×" if p else "–"
        print(f"| {n} | {ms(f):.2f} | {ms(f) / n:.3f} | **{x:,.0f}×** | {ms(e):.2f} | "
              f"{real_time_multiple(e, n):,.0f}× | {cell(p)} | {px} | "
              f"{'yes' if x >= TARGET_REAL_TIME else 'no'} |")
    f16 = get(("FeatureMap", (16000, 1)))
    if f16:
        print(f"\nA 16 kHz clip (resampled by the front end), batch 1: {ms(f16):.2f} ms, "
              f"{real_time_multiple(f16, 1):,.0f}× real time.")

    print("\n#### The encoder against the bare work of its shape "
          "(588 positions × 256 values × 384 templates per clip, stride 2)\n")
    print("| batch | sgemm ms | sgemm 1 thread ms | FFT correlation ms | FFT 1 thread ms | "
          "encoder ms | encoder / sgemm | encoder / sgemm 1 thread | encoder / FFT | "
          "encoder / FFT 1 thread |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    fft_ratios = []
    for n in BATCHES:
        g, g1 = get(("Sgemm", (n,))), get(("SgemmOneThread", (n,)))
        t, t1 = get(("FftCorrelation", (n,))), get(("FftCorrelationOneThread", (n,)))
        e = get(("Encoder", (n,)))
        if e is None:
            continue

        def ratio(ref):
            return f"{ms(e) / ms(ref):.2f}×" if ref else "–"

        if t:
            fft_ratios.append((n, ms(e) / ms(t)))
        print(f"| {n} | {cell(g)} | {cell(g1, single=True)} | {cell(t)} | "
              f"{cell(t1, single=True)} | {ms(e):.2f} | {ratio(g)} | {ratio(g1)} | "
              f"{ratio(t)} | {ratio(t1)} |")

    print()
    if multiples:
        best = max(multiples)
        verdict = "met" if min(multiples) >= TARGET_REAL_TIME else (
            "met at some batches only" if best >= TARGET_REAL_TIME else "not met")
        print(f"Target featurize ≥ {TARGET_REAL_TIME:,.0f}× real time: **{verdict}** "
              f"(feature map {', '.join(f'{x:,.0f}×' for x in multiples)} at batch "
              f"{' / '.join(str(n) for n in BATCHES[:len(multiples)])}).")
    if fft_ratios:
        worst = min(r for _, r in fft_ratios)
        listed = ", ".join(f"{r:.2f}× at batch {n}" for n, r in fft_ratios)
        if max(r for _, r in fft_ratios) < 1.0:
            print(f"FFT path: **no**. The encoder takes {listed} the time of the KissFFT "
                  "correlation of the same work: the GEMM is faster at this shape.")
        elif worst > 1.0:
            print(f"FFT path: **worth having**. The encoder takes {listed} the time of the "
                  "KissFFT correlation of the same work: the FFT is faster at this shape.")
        else:
            print(f"FFT path: **undecided**. The encoder takes {listed} the time of the "
                  "KissFFT correlation: neither is faster at every batch.")


if __name__ == "__main__":
    main()
