#!/usr/bin/env python3
"""Spoken digits in voices no FSDD speaker has: train a config on all six FSDD
speakers (90 % of the clips; 150 left out to validate and test), then send the ten
digits said by espeak-ng voices (other accents, and espeak's `-p` pitch and `-s`
speed settings) to the real invariant-server (invariant-client predict, a folder
of WAV files at espeak's 22,050 Hz) as synthesised and with white noise 20 dB
under the word and 1.5 s more of it after. A clip answered "no speech" counts as
wrong.

  /usr/bin/python3 research/repro/spoken_digits/espeak_voices.py --fsdd DIR/recordings \\
      --bin build/bin --config train/configs/spoken_digits.textproto --out /tmp/espeak \\
      [--voices en-us,en-gb-scotland,...] [--tag NAME]

Appends to OUT/robustness.csv in robustness.py's columns (the speaker column holds
the espeak voice) and prints each figure; `robustness.py --report OUT/robustness.csv`
prints the tables.
"""

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import robustness  # noqa: E402

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
VOICES = ("en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan",
          "en-gb-x-gbcwmd", "en-029")
# (pitch 0-99, words per minute): espeak's default is 50, 175.
SETTINGS = ((25, 130), (50, 175), (75, 150), (90, 200))


def train_on_all(args, models):
    text = open(args.config).read().replace("FSDD_DIR", args.fsdd)
    text = re.sub(r"split\s*\{[^}]*\}", "split { train: 2850 validation: 75 seed: 1 }", text)
    text = re.sub(r"certificate\s*\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}", "", text)
    config = os.path.join(args.out, f"{args.tag}_all.textproto")
    open(config, "w").write(text)
    start = time.time()
    subprocess.run([os.path.join(args.bin, "invariant-train"), f"--config={config}",
                    f"--models={models}", "--name=all"], check=True, stdout=subprocess.DEVNULL)
    return time.time() - start


def synthesise(voice, folder):
    os.makedirs(folder, exist_ok=True)
    for d, word in enumerate(DIGITS):
        for pitch, speed in SETTINGS:
            path = os.path.join(folder, f"{d}_{voice}_p{pitch}_s{speed}.wav")
            if not os.path.exists(path):
                subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", str(speed),
                                "-w", path, word], check=True)
    return sorted(os.path.join(folder, n) for n in os.listdir(folder))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fsdd", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--voices", default=",".join(VOICES))
    parser.add_argument("--tag", default="espeak")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    models = os.path.join(args.out, f"models_{args.tag}")
    seconds = train_on_all(args, models)
    port = robustness.free_port()
    server = subprocess.Popen([os.path.join(args.bin, "invariant-server"), f"--models={models}",
                               f"--port={port}", "--metrics_port=0"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        f, writer = robustness.open_results(args.out)
        with f:
            for voice in args.voices.split(","):
                clips = synthesise(voice, os.path.join(args.out, "espeak", voice, "clean"))
                for c, condition in enumerate(("clean", "white20_1.5")):
                    folder = os.path.join(args.out, "espeak", voice, condition)
                    if condition != "clean" and not os.path.isdir(folder):
                        robustness.make_condition(condition, clips, folder, seed=2000 + c)
                    robustness.record(f, writer, args, port, "all", voice, condition, folder,
                                      seconds)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
