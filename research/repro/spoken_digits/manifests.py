#!/usr/bin/env python3
"""The manifests of research/repro/spoken_digits.sh, and the pitch-shifted clips.

Usage: manifests.py DATA_DIR OUT_DIR [SEED]

DATA_DIR holds the FSDD recordings, digit_speaker_take.wav. Writes, under
OUT_DIR/manifests/ (CSV: path,label,group[,split]; paths absolute):
  standard.csv             every clip; takes 0-4 of every speaker are the test
                           part (split=test), the others train; group = speaker
  all.csv                  every clip, group = speaker (leave-one-group-out)
  mismatch_<S>_plain.csv   the other speakers' clips train, speaker S's clips,
                           as recorded, test
  mismatch_<S>_shifted.csv the same training clips; S's clips shifted up by
                           their own seeded random 300-600 cents test
  mismatch_<S>_down.csv    the same training clips; S's clips shifted down by
                           their own seeded random 300-600 cents test
  pairs_<S>_up.csv, pairs_<S>_down.csv  (original, transformed): speaker
                           S's clips as recorded and shifted, for
                           `invariant-train certify --pairs`
  voices_<S>_<V1+V2...>.csv  for every non-empty set of the other speakers
                           (names sorted, joined by +): those speakers'
                           clips train, speaker S's clips as recorded test
                           (the training-voices curve; the set of all the
                           others is mismatch_<S>_plain.csv's rows)
and OUT_DIR/shifted/<name>.wav (up), OUT_DIR/shifted_down/<name>.wav (down),
made by `sox -R -G IN OUT pitch CENTS` (-R: repeatable dither, so a new
OUT_DIR gets the same bits) and kept between runs when present, with
OUT_DIR/manifests/shifts.csv (file, cents, cents_down: the signed shifts).
The up shifts are drawn first, in file-name order, then the down shifts from
the same generator, so the up shifts (and the cached up files) are those of
the runs before the down shifts existed.
Prints the speakers, one a line. Errors (no clips, a file name that is not
digit_speaker_take.wav, sox failing) exit with status 1 and a message.
"""
import csv
import itertools
import os
import random
import re
import subprocess
import sys

NAME = re.compile(r"^(\d)_([A-Za-z]+)_(\d+)\.wav$")


def fail(message):
    print(f"manifests.py: {message}", file=sys.stderr)
    sys.exit(1)


def write(path, rows, with_split):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["path", "label", "group"] + (["split"] if with_split else []))
        for row in rows:
            w.writerow(row if with_split else row[:3])


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: manifests.py DATA_DIR OUT_DIR [SEED]")
    data, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) == 4 else 1
    clips = []  # (file, digit, speaker, take)
    for name in sorted(os.listdir(data)):
        if not name.endswith(".wav"):
            continue
        m = NAME.match(name)
        if not m:
            fail(f"{name}: not digit_speaker_take.wav")
        clips.append((name, m.group(1), m.group(2), int(m.group(3))))
    if not clips:
        fail(f"no .wav files in {data}")
    speakers = sorted({c[2] for c in clips})
    os.makedirs(f"{out}/manifests", exist_ok=True)
    os.makedirs(f"{out}/shifted", exist_ok=True)
    os.makedirs(f"{out}/shifted_down", exist_ok=True)

    rows = [(f"{data}/{f}", d, s, "test" if t < 5 else "train") for f, d, s, t in clips]
    write(f"{out}/manifests/standard.csv", rows, True)
    write(f"{out}/manifests/all.csv", rows, False)

    # One seeded shift per clip, drawn in file-name order, whatever is held
    # out: first every up shift (as before the down shifts existed), then
    # every down shift from the same generator.
    rng = random.Random(seed)
    cents = {f: round(rng.uniform(300, 600), 1) for f, _, _, _ in clips}
    cents_down = {f: -round(rng.uniform(300, 600), 1) for f, _, _, _ in clips}
    with open(f"{out}/manifests/shifts.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["file", "cents", "cents_down"])
        for name in sorted(cents):
            w.writerow([name, cents[name], cents_down[name]])
    for folder, table in (("shifted", cents), ("shifted_down", cents_down)):
        for f, _, _, _ in clips:
            target = f"{out}/{folder}/{f}"
            if os.path.exists(target):
                continue
            # -G: guard against clipping (the front end peak-normalises anyway).
            done = subprocess.run(["sox", "-R", "-G", f"{data}/{f}", target + ".tmp.wav", "pitch",
                                   str(table[f])], capture_output=True, text=True)
            if done.returncode != 0:
                fail(f"sox on {f}: {done.stderr.strip()}")
            os.replace(target + ".tmp.wav", target)

    for held in speakers:
        train = [(f"{data}/{f}", d, s, "train") for f, d, s, _ in clips if s != held]
        plain = [(f"{data}/{f}", d, s, "test") for f, d, s, _ in clips if s == held]
        shifted = [(f"{out}/shifted/{f}", d, s, "test") for f, d, s, _ in clips if s == held]
        down = [(f"{out}/shifted_down/{f}", d, s, "test") for f, d, s, _ in clips if s == held]
        write(f"{out}/manifests/mismatch_{held}_plain.csv", train + plain, True)
        write(f"{out}/manifests/mismatch_{held}_shifted.csv", train + shifted, True)
        write(f"{out}/manifests/mismatch_{held}_down.csv", train + down, True)
        for name, moved in (("up", shifted), ("down", down)):
            with open(f"{out}/manifests/pairs_{held}_{name}.csv", "w", newline="") as f:
                rows = csv.writer(f)
                rows.writerow(["original", "transformed"])
                rows.writerows((a[0], b[0]) for a, b in zip(plain, moved))
        others = [v for v in speakers if v != held]
        for k in range(1, len(others) + 1):
            for voices in itertools.combinations(others, k):
                train = [(f"{data}/{f}", d, s, "train") for f, d, s, _ in clips if s in voices]
                write(f"{out}/manifests/voices_{held}_{'+'.join(voices)}.csv", train + plain, True)
    print("\n".join(speakers))


if __name__ == "__main__":
    main()
