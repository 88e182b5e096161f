#!/usr/bin/env python3
"""Spoken digits as people record them: leave one FSDD speaker out, train on the others
with a config, then send the held-out speaker's clips to the real invariant-server
(invariant-client predict, a folder of WAV files) as recorded and changed: white or
pink noise at an SNR (the clip's mean square against the noise's) with 0, 1.5 or 3 s
more of that noise after the word; resampled to 16 and 44.1 kHz; pitch shifted by a
seeded 300-600 cents up or down (sox). A clip answered "no speech" counts as wrong.

  /usr/bin/python3 research/repro/spoken_digits/robustness.py --fsdd DIR/recordings \\
      --bin build/bin --config train/configs/spoken_digits.textproto --out /tmp/rob \\
      [--speakers george,jackson] [--conditions clean,white20_1.5,pink10_1.5,...] [--tag NAME]

Appends to OUT/robustness.csv (tag, speaker, condition, clips, accuracy, no_speech,
train_s) and prints each figure; `robustness.py --report OUT/robustness.csv` prints the
Markdown tables (one per tag: conditions × speakers, the mean and its gap to clean). Conditions: clean; {white,pink}{SNR}_{TRAIL} (e.g. white20_1.5);
rate16000, rate44100; pitch_up, pitch_down.
"""

import argparse
import csv
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import wave

import numpy as np

SPEAKERS = ("george", "jackson", "lucas", "nicolas", "theo", "yweweler")
DEFAULT_CONDITIONS = ("clean", "white20_0", "white20_1.5", "white10_1.5", "pink20_1.5",
                      "pink10_1.5", "white5_1.5", "white20_3", "rate16000", "rate44100",
                      "pitch_up", "pitch_down")


def read_wav(path):
    with wave.open(path, "rb") as w:
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64)
        return data / 32768.0, w.getframerate()


def write_wav(path, x, rate):
    pcm = np.round(np.clip(x, -1, 32767 / 32768) * 32768).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def coloured_noise(n, colour, rng):
    white = rng.standard_normal(n)
    if colour == "white":
        return white
    spectrum = np.fft.rfft(white)
    f = np.arange(spectrum.size, dtype=np.float64)
    f[0] = 1.0
    spectrum /= np.sqrt(f)  # 1/f power
    return np.fft.irfft(spectrum, n)


def noisy(x, rate, colour, snr_db, trail_s, rng):
    y = np.concatenate([x, np.zeros(int(round(trail_s * rate)))])
    noise = coloured_noise(y.size, colour, rng)
    power = np.mean(x ** 2)
    noise *= np.sqrt(power / 10 ** (snr_db / 10) / np.mean(noise ** 2))
    return y + noise


def make_condition(condition, clips, out_dir, seed):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    match = re.fullmatch(r"(white|pink)(\d+)_([\d.]+)", condition)
    for path in clips:
        name = os.path.basename(path)
        target = os.path.join(out_dir, name)
        if condition == "clean":
            shutil.copy(path, target)
        elif match:
            x, rate = read_wav(path)
            write_wav(target, noisy(x, rate, match.group(1), float(match.group(2)),
                                    float(match.group(3)), rng), rate)
        elif condition.startswith("rate"):
            subprocess.run(["sox", path, "-r", condition[4:], target], check=True)
        elif condition in ("pitch_up", "pitch_down"):
            cents = rng.uniform(300, 600) * (1 if condition == "pitch_up" else -1)
            subprocess.run(["sox", path, target, "pitch", f"{cents:.0f}"], check=True)
        else:
            sys.exit(f"unknown condition {condition}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train(args, speaker, models):
    text = open(args.config).read().replace("FSDD_DIR", args.fsdd)
    text = re.sub(r"split\s*\{[^}]*\}", f'split {{ test_groups: "{speaker}" seed: 1 }}', text)
    text = re.sub(r"certificate\s*\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}", "", text)
    config = os.path.join(args.out, f"{args.tag}_{speaker}.textproto")
    open(config, "w").write(text)
    start = time.time()
    subprocess.run([os.path.join(args.bin, "invariant-train"), f"--config={config}",
                    f"--models={models}", f"--name={speaker}"], check=True,
                   stdout=subprocess.DEVNULL)
    return time.time() - start


def predict(args, port, speaker, folder):
    out = subprocess.run([os.path.join(args.bin, "invariant-client"), "predict", speaker,
                          f"--input={folder}", f"--target=127.0.0.1:{port}"],
                         check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(out.splitlines()))
    right = sum(r["predicted_class"] == r["id"].split("_")[0] for r in rows)
    silent = sum(r.get("clip_status", "ok") == "no_speech" for r in rows)
    return len(rows), right / max(1, len(rows)), silent


COLUMNS = ["tag", "speaker", "condition", "clips", "accuracy", "no_speech", "train_s"]


def open_results(out):
    """OUT/robustness.csv for appending, its header written when new: (file, writer)."""
    path = os.path.join(out, "robustness.csv")
    new = not os.path.exists(path)
    f = open(path, "a", newline="")
    writer = csv.writer(f)
    if new:
        writer.writerow(COLUMNS)
    return f, writer


def record(f, writer, args, port, model, speaker, condition, folder, seconds):
    """Sends `folder` to model `model`, appends its row and prints it."""
    n, accuracy, silent = predict(args, port, model, folder)
    writer.writerow([args.tag, speaker, condition, n, f"{accuracy:.4f}", silent, f"{seconds:.0f}"])
    f.flush()
    print(f"{args.tag} {speaker} {condition}: {accuracy:.3f} ({silent} no speech)", flush=True)


def report(path):
    rows = list(csv.DictReader(open(path)))
    for tag in dict.fromkeys(r["tag"] for r in rows):
        mine = [r for r in rows if r["tag"] == tag]
        speakers = list(dict.fromkeys(r["speaker"] for r in mine))
        conditions = list(dict.fromkeys(r["condition"] for r in mine))
        table = {(r["speaker"], r["condition"]): float(r["accuracy"]) for r in mine}
        print(f"\n**{tag}**\n")
        print("| condition | " + " | ".join(speakers) + " | mean | vs clean |")
        print("|---" * (len(speakers) + 3) + "|")
        clean = None
        for c in conditions:
            values = [table.get((s, c)) for s in speakers]
            known = [v for v in values if v is not None]
            mean = 100 * sum(known) / len(known)
            clean = mean if c == "clean" else clean
            gap = "" if clean is None or c == "clean" else f"{mean - clean:+.1f}"
            cells = " | ".join("" if v is None else f"{100 * v:.1f}" for v in values)
            print(f"| {c} | {cells} | {mean:.1f} | {gap} |")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        return report(sys.argv[2])
    parser = argparse.ArgumentParser()
    parser.add_argument("--fsdd", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--speakers", default=",".join(SPEAKERS))
    parser.add_argument("--conditions", default=",".join(DEFAULT_CONDITIONS))
    parser.add_argument("--tag", default="run")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    models = os.path.join(args.out, f"models_{args.tag}")
    f, writer = open_results(args.out)
    with f:
        for speaker in args.speakers.split(","):
            seconds = train(args, speaker, models)
            clips = sorted(os.path.join(args.fsdd, n) for n in os.listdir(args.fsdd)
                           if n.split("_")[1:2] == [speaker])
            port = free_port()
            server = subprocess.Popen([os.path.join(args.bin, "invariant-server"),
                                       f"--models={models}", f"--port={port}"],
                                      stderr=subprocess.DEVNULL)
            try:
                time.sleep(3)
                for c, condition in enumerate(args.conditions.split(",")):
                    folder = os.path.join(args.out, "clips", speaker, condition)
                    if not os.path.isdir(folder):
                        make_condition(condition, clips, folder, seed=1000 + c)
                    record(f, writer, args, port, speaker, speaker, condition, folder, seconds)
            finally:
                server.terminate()
                server.wait()


if __name__ == "__main__":
    main()
