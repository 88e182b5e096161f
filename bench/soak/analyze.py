#!/usr/bin/python3
"""Bookkeeping for bench/soak/soak.sh.

  analyze.py minute --dir=D --minute=M --rss_kib=R --threads=T --fds=F --versions=V
      reads D/unary.json, D/stream.json (invariant-loadgen) and D/chaos.json
      (chaos.py), writes D/counts.json ({category: {code: n}}) and prints the
      minute's CSV row (the columns of soak.sh's header).
  analyze.py verdict --out=OUT --minutes=N
      sums the counts into OUT/summary.json, prints minute 1, the last minute
      and the counts, and exits 1 when a request was lost, a bad request was
      accepted, a minute is missing, or RSS / threads / fds grew without bound
      (the rule is in soak.sh's header).
"""
import argparse
import csv
import json
import os
import sys

VALID = ("loadgen_unary", "loadgen_stream", "valid_unary", "valid_stream", "infer")
BAD = ("bad_request", "bad_stream")
RSS_SLACK_RATIO, RSS_SLACK_MIB, THREAD_SLACK, FD_SLACK = 1.25, 64, 16, 32


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def loadgen_counts(report):
    if report is None:
        return {"NO_REPORT": 1}
    counts = dict(report.get("errors", {}))
    if report["requests"]["ok"]:
        counts["OK"] = report["requests"]["ok"]
    return counts


def minute(args):
    unary, stream, chaos = (load(os.path.join(args.dir, f)) for f in
                            ("unary.json", "stream.json", "chaos.json"))
    counts = {"loadgen_unary": loadgen_counts(unary), "loadgen_stream": loadgen_counts(stream)}
    counts.update(chaos["counts"] if chaos else {"valid_unary": {"NO_REPORT": 1}})
    with open(os.path.join(args.dir, "counts.json"), "w") as f:
        json.dump(counts, f)
    sent = sum(sum(c.values()) for c in counts.values())
    ok = sum(c.get("OK", 0) for c in counts.values())
    lost = sum(n for cat in VALID for code, n in counts.get(cat, {}).items() if code != "OK")
    bad_accepted = sum(counts.get(cat, {}).get("OK", 0) for cat in BAD)
    p99 = lambda r: r["latency_us"]["p99"] if r else -1
    row = [args.minute, round(args.rss_kib / 1024, 1), args.threads, args.fds, p99(unary),
           p99(stream), round(chaos["valid_p99_us"], 1) if chaos else -1, sent, ok, lost,
           bad_accepted, args.versions]
    print(",".join(str(x) for x in row))


def verdict(args):
    rows = list(csv.DictReader(open(os.path.join(args.out, "soak.csv"))))
    totals = {}
    for m in range(1, len(rows) + 1):
        counts = load(os.path.join(args.out, "minutes", str(m), "counts.json")) or {}
        for cat, codes in counts.items():
            for code, n in codes.items():
                totals.setdefault(cat, {}).setdefault(code, 0)
                totals[cat][code] += n
    failures = []
    if len(rows) < args.minutes:
        failures.append(f"only {len(rows)} of {args.minutes} minutes completed")
    lost = sum(int(r["lost"]) for r in rows)
    bad_ok = sum(int(r["bad_accepted"]) for r in rows)
    if lost:
        failures.append(f"{lost} valid requests were lost (not OK)")
    if bad_ok:
        failures.append(f"{bad_ok} bad requests were answered OK")
    if len(rows) >= 4:
        def col(name):
            return [float(r[name]) for r in rows]
        half = len(rows) // 2
        for name, slack in (("rss_mib", None), ("threads", THREAD_SLACK), ("fds", FD_SLACK)):
            values = col(name)
            base = max(values[1:half + 1])  # after the warm-up minute, first half
            limit = base * RSS_SLACK_RATIO + RSS_SLACK_MIB if slack is None else base + slack
            if values[-1] > limit:
                failures.append(f"{name} grew from {values[1]} (minute 2) and {base} (first-half "
                                f"max) to {values[-1]} (minute {len(rows)}), limit {limit:.1f}")
    summary = {"minutes": len(rows), "first": rows[0] if rows else None,
               "last": rows[-1] if rows else None, "counts": totals, "failures": failures}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    if rows:
        print("soak: minute 1:", dict(rows[0]))
        print(f"soak: minute {len(rows)}:", dict(rows[-1]))
    print("soak: requests by category and code:", json.dumps(totals, sort_keys=True))
    print("soak: sent", sum(int(r["sent"]) for r in rows), "ok", sum(int(r["ok"]) for r in rows),
          "lost", lost, "bad accepted", bad_ok)
    for failure in failures:
        print("soak: FAIL:", failure)
    if not failures:
        print("soak: PASS")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["minute", "verdict"])
    parser.add_argument("--dir")
    parser.add_argument("--minute", type=int)
    parser.add_argument("--rss_kib", type=float)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--fds", type=int)
    parser.add_argument("--versions", type=int)
    parser.add_argument("--out")
    parser.add_argument("--minutes", type=int)
    args = parser.parse_args()
    if args.mode == "minute":
        minute(args)
        return 0
    return verdict(args)


if __name__ == "__main__":
    sys.exit(main())
