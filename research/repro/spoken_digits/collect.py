#!/usr/bin/env python3
"""CSV rows of one invariant-train run of research/repro/spoken_digits.sh.

Usage: collect.py REPORT_JSON TIME_V PROTOCOL METHOD TEMPLATES BINS R HELD_OUT TEST_SET RUN
                  FRONT_END BINARY [--cert-pitch=BASE] [--cert-enum=BASE] [--cert-enum_pitch=BASE]

REPORT_JSON is the run's report.json, TIME_V the output of /usr/bin/time -v
around it, FRONT_END a label of the front end ("256/128 64x61": frame/hop
samples, bins x frames), BINARY the trainer's commit. --cert-KIND=BASE:
BASE.json holds `invariant-train certify`'s JSON and BASE.err its stderr;
the column id_rel_KIND gets its relative_mean_discrepancy, or "refused"
when the trainer refused the group (BASE.err's last line goes to stderr). Prints (no header; the columns are HEADER):
  a one-split run (standard, mismatch): one row;
  a leave-one-group-out run: one row per round (held_out = the round's
  group, accuracy = its test accuracy; no times), then one row held_out =
  "mean" with the mean and sample std over the rounds, the pooled accuracy,
  and the run's times and memory.
`--header` prints the header.
"""
import json
import os
import re
import sys

HEADER = ("protocol,method,templates,bins,r,held_out,test_set,feature_dim,accuracy,"
          "accuracy_std,accuracy_pooled,lambda,id_rel_mean,featurize_s,wall_s,peak_rss_mib,"
          "solver,run,front_end,binary,id_rel_pitch,id_rel_enum,id_rel_enum_pitch")


def time_v(path):
    text = open(path).read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)", text)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if not wall or not rss:
        sys.exit(f"collect.py: {path} is not /usr/bin/time -v output")
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return seconds, int(rss.group(1)) / 1024


def cert(base):
    """relative_mean_discrepancy of a certify run, or "refused"."""
    try:
        return f"{json.load(open(base + '.json'))['relative_mean_discrepancy']:.4g}"
    except (OSError, ValueError, KeyError):
        err = open(base + ".err").read().strip().splitlines() if os.path.exists(base + ".err") else []
        print(f"collect.py: certify {base}: {err[-1] if err else 'no output'}", file=sys.stderr)
        return "refused"


def main():
    if sys.argv[1:] == ["--header"]:
        print(HEADER)
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--cert-")]
    certs = dict(a[len("--cert-"):].split("=", 1) for a in sys.argv[1:] if a.startswith("--cert-"))
    if len(args) != 12:
        sys.exit("usage: collect.py REPORT_JSON TIME_V PROTOCOL METHOD TEMPLATES BINS R "
                 "HELD_OUT TEST_SET RUN FRONT_END BINARY [--cert-pitch=BASE] [--cert-enum=BASE] [--cert-enum_pitch=BASE]")
    (report_path, time_path, protocol, method, templates, bins, r, held, test_set, run,
     front_end, binary) = args
    tail = [front_end, binary] + [cert(certs[k]) if k in certs else "" for k in ("pitch", "enum", "enum_pitch")]
    rep = json.load(open(report_path))
    wall, rss = time_v(time_path)
    common = [protocol, method, templates, bins, r]
    id_rel = rep["invariance"]["relative_mean_discrepancy"]
    times = [f"{rep['featurize_seconds']:.2f}", f"{wall:.1f}", f"{rss:.0f}",
             rep["solver"]["kind"], run] + tail
    cv = rep.get("cross_validation")
    if cv is None:
        print(",".join(str(v) for v in common + [held, test_set, rep["feature_dim"],
                                                 rep["test"]["accuracy"], "", "", rep["lambda"],
                                                 f"{id_rel:.4g}"] + times))
        return
    for fold in cv["folds"]:
        print(",".join(str(v) for v in common + [fold.get("group", ""), "speaker",
                                                 rep["feature_dim"], fold["test"]["accuracy"],
                                                 "", "", fold["lambda"], "", "", "", "", "",
                                                 run, front_end, binary, "", "", ""]))
    print(",".join(str(v) for v in common + ["mean", "speaker", rep["feature_dim"],
                                             cv["mean"]["accuracy"], cv["std"]["accuracy"],
                                             cv["pooled"]["accuracy"], rep["lambda"],
                                             f"{id_rel:.4g}"] + times))


if __name__ == "__main__":
    main()
