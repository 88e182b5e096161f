#!/usr/bin/env python3
"""CSV rows of one invariant-train run of bench/repro/spoken_digits.sh.

Usage: collect.py REPORT_JSON TIME_V PROTOCOL METHOD TEMPLATES BINS R HELD_OUT TEST_SET RUN

REPORT_JSON is the run's report.json, TIME_V the output of /usr/bin/time -v
around it. Prints (no header; the columns are HEADER):
  a one-split run (standard, mismatch): one row;
  a leave-one-group-out run: one row per round (held_out = the round's
  group, accuracy = its test accuracy; no times), then one row held_out =
  "mean" with the mean and sample std over the rounds, the pooled accuracy,
  and the run's times and memory.
`--header` prints the header.
"""
import json
import re
import sys

HEADER = ("protocol,method,templates,bins,r,held_out,test_set,feature_dim,accuracy,"
          "accuracy_std,accuracy_pooled,lambda,id_rel_mean,featurize_s,wall_s,peak_rss_mib,"
          "solver,run")


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


def main():
    if sys.argv[1:] == ["--header"]:
        print(HEADER)
        return
    if len(sys.argv) != 11:
        sys.exit("usage: collect.py REPORT_JSON TIME_V PROTOCOL METHOD TEMPLATES BINS R "
                 "HELD_OUT TEST_SET RUN")
    report_path, time_path, protocol, method, templates, bins, r, held, test_set, run = sys.argv[1:]
    rep = json.load(open(report_path))
    wall, rss = time_v(time_path)
    common = [protocol, method, templates, bins, r]
    id_rel = rep["invariance"]["relative_mean_discrepancy"]
    times = [f"{rep['featurize_seconds']:.2f}", f"{wall:.1f}", f"{rss:.0f}",
             rep["solver"]["kind"], run]
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
                                                 run]))
    print(",".join(str(v) for v in common + ["mean", "speaker", rep["feature_dim"],
                                             cv["mean"]["accuracy"], cv["std"]["accuracy"],
                                             cv["pooled"]["accuracy"], rep["lambda"],
                                             f"{id_rel:.4g}"] + times))


if __name__ == "__main__":
    main()
