#!/usr/bin/env python3
"""research/results/spoken_digits.md from the CSV of research/repro/spoken_digits.sh.

Usage: report.py CSV MD PLOT_CSV TOTAL_S LOAD_BEFORE LOAD_AFTER SHIFTS_CSV

Every number in the Markdown comes from CSV (collect.py's columns) or
SHIFTS_CSV (file, cents); the reference figures are quoted as such. Writes
PLOT_CSV (templates, bins, accuracy_pct of the patch encoder's CDF sweep on
the standard split) for research/repro/plot.sh, empty when the sweep was not
run. Appends research/notes/spoken_digits.md when present. The run's date is
today's, or RUN_DATE (YYYY-MM-DD) when the report is rebuilt later from an
older run's CSV.
"""
import csv
import datetime
import math
import os
import statistics
import sys

LABEL = {"plain_rf": "plain RF (r = 1)", "lgika_rf": "LGIKA-RF (r = 40)",
         "plain_cdf": "plain CDF (r = 1)", "cdf": "CDF pooling over G (r = 20)",
         "tf_patch": "TF patches pooled over pitch (M = 512)",
         "tf_patch_tempo": "TF patches + tempo copies (M = 512, r = 3)",
         "tf_patch_cq": "TF patches, constant-Q + pitch alignment (M = 512)",
         "tf_patch_cqt": "TF patches 48 × 8, constant-Q + pitch and tempo alignment, stride 2 (M = 512)",
         "tf_patch_cqt_bands": "TF patches 32 × 8 in 2 frequency bands, constant-Q + pitch and tempo "
                               "alignment, stride 2 (M = 384)",
         "tf_patch_cdf": "TF patches, CDF response"}
ORDER = ["plain_rf", "lgika_rf", "plain_cdf", "cdf", "tf_patch", "tf_patch_tempo", "tf_patch_cq",
         "tf_patch_cqt", "tf_patch_cqt_bands"]
# Written by hand for the trainer that made the LOSO rows (see the LOSO section).
LOSO_CAVEAT = ("none left for the rows here: they were made by a trainer with leak-free "
               "cross-validation (train/pipeline/cv_rounds.h, commit 4b83ee7 on): each round "
               "builds its own feature map from its three training speakers only (the centring "
               "mean, the CDF templates drawn from data, the patch statistics, whitening and "
               "k-means), so nothing of the held-out speaker is fitted, not even unlabelled. "
               "Before it (results up to 2026-11-25) they came from all 2,000 clips. The cost: "
               "five feature maps and five featurize passes instead of one, and every round "
               "solves on its own features.")
# The methods' CDF settings outside the sweeps (M = 400, N = 10).
MAIN = {"plain_cdf": ("400", "10"), "cdf": ("400", "10")}


def pct(v):
    return f"{100 * float(v):.1f}"


def name(row):
    label = LABEL[row["method"]]
    if row["method"].endswith("cdf"):
        label += f", M = {row['templates']}, N = {row['bins']}"
    return label


def fe(row):
    """The front end as frame/hop samples (bins × frames), "CQ" for the
    constant-Q bank with the pitch alignment."""
    hop, grid = row["front_end"].split(" ")[:2]
    cq = " CQ aligned" if row["front_end"].endswith(" cq") else ""
    return f"{hop} ({grid.replace('x', ' × ')}){cq}"


def met(ok):
    return "**met**" if ok else "**not met**"


def pairs_table(path, methods):
    """The pairs certificates of the mismatch models: relative mean
    discrepancy over (recorded, sox-shifted) clips of the held-out speaker,
    the mean over the held-out speakers, and its ratio to plain RF's."""
    if not path or not os.path.exists(path):
        return []
    rows = list({(r["method"], r["held_out"], r["direction"]): r
                 for r in csv.DictReader(open(path))}.values())  # a rerun's row wins
    mean = {}
    for method in methods:
        for d in ("up", "down"):
            got = [float(r["relative_mean_discrepancy"]) for r in rows
                   if r["method"] == method and r["direction"] == d]
            if got:
                mean[(method, d)] = (statistics.mean(got), len(got))
    if not mean:
        return []
    out = ["", "Pairs certificate (`invariant-train certify --pairs`): the relative mean "
           "discrepancy of the model trained for the recorded test set over the held-out "
           "speaker's (recorded, shifted) clips, mean over the held-out speakers; 0 for a "
           "model the real shift does not move, about 1 when it moves the scores as far as "
           "another clip does. Issue 31 asks for at most a third of plain RF's.", "",
           "| method | speakers | up | down | up / plain RF | down / plain RF |",
           "|---|---|---|---|---|---|"]
    for method in methods:
        if (method, "up") not in mean or (method, "down") not in mean:
            continue
        (up, n), (down, _) = mean[(method, "up")], mean[(method, "down")]
        ratio = ["—", "—"]
        if ("plain_rf", "up") in mean and ("plain_rf", "down") in mean:
            ratio = [f"{up / mean[('plain_rf', 'up')][0]:.2f}",
                     f"{down / mean[('plain_rf', 'down')][0]:.2f}"]
        out.append(f"| {LABEL.get(method, method)} | {n} | {up:.3f} | {down:.3f} | "
                   f"{ratio[0]} | {ratio[1]} |")
    return out


def voices_section(rows):
    """The training-voices curve: accuracy on a held-out voice against the
    number of voices trained on, and a power law fitted to the error."""
    if not rows:
        return []
    out = ["## Training voices: accuracy on a voice never heard against the voices heard", "",
           "`PROTOCOLS=voices`: every speaker held out in turn and tested as recorded (500 "
           "clips), trained on every non-empty set of the other speakers (all their clips, "
           "450 a voice train and 50 validate), one training per set. Mean test accuracy % "
           "over the (held-out speaker, training set) pairs; in brackets the lowest–highest and the "
           "number of pairs.", ""]
    def accuracy_by_voices(rs):  # number of training voices -> accuracies
        by = {}
        for r in rs:
            by.setdefault(len(r["test_set"].split("+")), []).append(float(r["accuracy"]))
        return by

    ks = sorted(accuracy_by_voices(rows))
    out += ["| method | " + " | ".join(f"{k} voice{'s' if k > 1 else ''}" for k in ks) +
            " | error ≈ a · k^−α | 90 % at k ≈ |", "|---|" + "---|" * (len(ks) + 2)]
    for method in ORDER:
        mine = [r for r in rows if r["method"] == method]
        if not mine:
            continue
        cells, means, by = [], [], accuracy_by_voices(mine)
        for k in ks:
            acc = by.get(k)
            if acc:
                means.append((k, statistics.mean(acc)))
                cells.append(f"**{pct(means[-1][1])}** ({pct(min(acc))}–{pct(max(acc))}, "
                             f"{len(acc)})")
            else:
                cells.append("—")
        fit, reach = "—", "—"
        if len(means) >= 2 and all(m < 1 for _, m in means):
            # Least squares on log(error) = log(a) − α·log(k).
            xs = [math.log(k) for k, _ in means]
            ys = [math.log(1 - m) for _, m in means]
            mx, my = statistics.mean(xs), statistics.mean(ys)
            alpha = -sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum(
                (x - mx) ** 2 for x in xs)
            a = math.exp(my + alpha * mx)
            fit = f"a = {a:.3f}, α = {alpha:.2f}"
            if alpha > 0:
                reach = f"{(a / 0.10) ** (1 / alpha):.1f}"
        out.append(f"| {name(mine[0])} | " + " | ".join(cells) + f" | {fit} | {reach} |")
    held = sorted({r["held_out"] for r in rows})
    out += ["", "Per held-out speaker (mean over the training sets of each size):", "",
            "| method | held out | " + " | ".join(str(k) for k in ks) + " |",
            "|---|---|" + "---|" * len(ks)]
    for method in ORDER:
        for h in held:
            mine = [r for r in rows if r["method"] == method and r["held_out"] == h]
            if not mine:
                continue
            by = accuracy_by_voices(mine)
            cells = [pct(statistics.mean(by[k])) if k in by else "—" for k in ks]
            out.append(f"| {name(mine[0])} | {h} | " + " | ".join(cells) + " |")
    out += ["", "The fit is an extrapolation from the sizes measured, not a measurement; "
            "\"90 % at k\" is where the fitted mean error reaches 10 %.", ""]
    return out


def main():
    csv_path, md_path, plot_path, total, load0, load1, shifts_path = sys.argv[1:8]
    pairs_path = sys.argv[8] if len(sys.argv) > 8 else ""
    rows = list(csv.DictReader(open(csv_path)))
    # A rerun (APPEND=1) replaces the earlier row of the same run in the tables.
    last = {}
    for r in rows:
        last[(r["protocol"], r["method"], r["templates"], r["bins"], r["held_out"],
              r["test_set"])] = r
    rows = list(last.values())
    std = [r for r in rows if r["protocol"] == "standard"]
    loso = [r for r in rows if r["protocol"] == "loso"]
    mis = [r for r in rows if r["protocol"] == "mismatch"]
    shifts = list(csv.DictReader(open(shifts_path)))
    up = [float(r["cents"]) for r in shifts]
    down = [float(r["cents_down"]) for r in shifts]

    def find(rs, method, templates=None, bins=None, **kw):
        if templates is None:
            templates, bins = MAIN.get(method, (None, None))
        for r in rs:
            if (r["method"] == method and (templates is None or r["templates"] == templates) and
                    (not bins or r["bins"] == bins) and
                    all(r[k] == v for k, v in kw.items())):
                return r
        return None

    loso_bins = sorted({r["binary"] for r in loso})
    out = ["# Spoken digits (FSDD): spectrogram patch features, CDF pooling and LGIKA-RF over "
           "pitch, tempo and time shifts vs plain random features",
           "",
           "The speech experiment of Mroueh, Voinea, Poggio, *Learning with Group Invariant "
           "Features: A Kernel Perspective* (NIPS 2015, §6, Fig. 3 and Appendix D.2), which used "
           "TIDIGITS (not freely available), redone on four speakers of the Free Spoken Digit "
           "Dataset (FSDD: george, jackson, nicolas, yweweler; 2,000 clips, 50 takes of every "
           "digit per speaker, 8 kHz), with the time–frequency patch encoder of issue 31 beside "
           "the earlier methods.",
           "",
           "Command: `research/repro/spoken_digits.sh /path/to/fsdd/recordings` (the script takes "
           "the data folder as its argument; nothing from it is committed). Every model is one "
           "`build/bin/invariant-train` run under `/usr/bin/time -v`; the configs, manifests, "
           "shifted clips, models and logs are in the script's OUT_DIR. Run on "
           f"{os.environ.get('RUN_DATE') or datetime.date.today()}, one training at a time on a 2-core machine shared with "
           f"other jobs (load average {load0} before, {load1} after): **{total} s in total** "
           f"({int(total) / 60:.1f} min; the wall times below are each training's, inflated when the "
           "other jobs were busy). Trainer: built from commit "
           + "; ".join(f"{b} ({', '.join(sorted({r['protocol'] for r in rows if r['binary'] == b}))})"
                       for b in sorted({r["binary"] for r in rows})) +
           " (the `binary` column of the CSV: the last commit touching core/, train/ or proto/ "
           "when the row was made; the standard rows include the sweep). "
           "Data: [spoken_digits.csv](spoken_digits.csv).",
           "",
           "**Recordings as people make them** (noise, trailing noise, other rates; six voices, "
           "issue 46): [spoken_digits_robustness.md](spoken_digits_robustness.md).",
           "",
           "## Setup",
           "",
           "* Front ends (stored in every model; the `front end` column gives frame/hop samples "
           "and the rows' shape): 1 s clips at 8 kHz, silence trimmed, peak-normalised, centred; "
           "Hann frames every 128 samples; 64 log-frequency bins from 100 Hz, 12 per octave; "
           "`log1p(10 · magnitude)`, each bin's mean over time subtracted (docs/math.md §9). "
           "**256/128** (256-sample frames: 64 × 61 = 3,904 values) for plain RF, LGIKA-RF, "
           "plain CDF and CDF, whose rows are then centred on the training mean and "
           "L2-normalised; **128/128** (16 ms frames: 64 × 62, the harmonics blur into the "
           "spectral envelope, which a pitch shift translates) for the patch encoder, without "
           "centring (a per-pixel mean is not shift-invariant).",
           "* G, the audio group, applied to the input (`placement: PLACEMENT_INPUT`): pitch "
           "shifts uniform in ±400 cents (±4 bins), tempo factors log-normal (σ = 0.35), time "
           "shifts uniform in ±8 frames; r draws (40 for LGIKA-RF, 20 for CDF), fixed when "
           "the model is made (encoder seed 11).",
           "* Methods: **plain RF**: 1,500 random Fourier frequencies, Gaussian kernel σ = 1, "
           "identity group (3,000 features); **LGIKA-RF**: the same, each frequency averaged "
           "over the r = 40 elements of G (Raj et al. 2017); **plain CDF**: CDF pooling "
           "(Mroueh et al. 2015) of M templates drawn from the training clips, N bins "
           "(2N + 1 thresholds in [−1, 1]), identity group; **CDF**: the same over the 20 "
           "elements of G, M (2N + 1) features. **TF patches** (docs/math.md §11): the "
           "spectrogram read as a 64 × 62 × 1 image; M = 512 templates of 56 bins × 8 frames "
           "(whitened, contrast-normalised training patches, 10 rounds of spherical k-means) "
           "correlated with it at every frequency offset from −8 to +16 bins (8 bins of zero "
           "padding above and below) and every frame; soft-threshold responses (two per "
           "template) pooled over every frequency offset and over 6 time segments: "
           "512 · 2 · 6 = 6,144 features, exactly invariant to integer pitch-bin shifts away "
           "from the edges by construction. **TF patches + tempo copies**: every template also "
           "warped in time by 0.8 and 1.25, the responses pooled over the 3 copies (3× the "
           "compute). **TF patches, CDF response** (the sweep): the same patches with the CDF "
           "response (N bins over [−2, 2]), M (2N + 1) · 6 features. **TF patches, constant-Q "
           "+ pitch alignment** (`tf_patch_cq`; docs/math.md §9): the "
           "front end's STFT replaced by a constant-Q bank of Gaussian bands 1/12 octave wide "
           "(standard deviation), and the compressed spectrogram translated along frequency so "
           "that the centroid of its time-averaged bins sits on the middle bin (invariant to "
           "translations that keep the content inside the band, by a canonical representative "
           "rather than a pool); the TF patches over 8 time segments: 8,192 features. Its "
           "certificates against G, pitch and the enumerated shifts act on the aligned rows, "
           "so they measure the encoder alone; the pairs certificate (mismatch) is end to end. "
           "**TF patches, constant-Q + pitch and tempo alignment, stride 2** (`tf_patch_cqt`): "
           "the same, with the frames that hold the clip's content "
           "(after the silence is trimmed) stretched over all 62 frames (`align_time`: a "
           "tempo change of the content gives the same row up to the interpolation, a "
           "canonical representative of the tempo orbit), and patches of 48 bins × 8 frames "
           "without padding read at every second frequency offset and frame (9 × 28 "
           "positions of 384 values instead of 25 × 55 of 448: 0.16× the products). "
           "**TF patches 32 × 8 in 2 frequency bands** (`tf_patch_cqt_bands`, the shipped "
           "config): the same front end; M = 384 templates of 32 bins × 8 frames with 4 bins "
           "of zero padding above and below, read at stride 2 (21 × 28 positions of 256 "
           "values), pooled in 2 frequency bands × 4 time segments: 384 · 2 · 8 = 6,144 "
           "features.",
           "* Learner: RIDGE (regularised least squares, one-vs-all ±1 targets), λ chosen on "
           "validation from 1e-8 … 1 in decades, extended while the choice is at an end "
           "(`extend_lambda_grid`). **ID rel.** = a certificate: mean |f(x) − f(g·x)| over the "
           "mean |f(x) − f(x′)| between different clips (`relative_mean_discrepancy`, 0 for an "
           "invariant f, about 1 when g moves f as far as another clip does), on 50 test clips "
           "× 16 elements. *vs G*: the training job's, against G (with the model's frame "
           "count) for every model, plain ones too; *vs pitch*: `invariant-train certify` "
           "against pitch shifts alone (uniform ±400 cents, so mostly fractional bins, "
           "interpolated); *vs enum*: against every integer pitch-bin shift in ±4 × frame "
           "shift in ±8 (`enumerate: true`: 153 elements, so exhaustive), patch models only, "
           "\"refused\" when the trainer does not enumerate audio groups; *vs enum pitch*: every "
           "integer pitch-bin shift in ±4 alone (9 elements).",
           "* Protocols. **Standard**: takes 0–4 of every speaker are the test set (200 "
           "clips), the other 1,800 are split 1,600 train / 200 validation (seed 1). "
           "**Leave-one-speaker-out (LOSO)**: `split { leave_one_group_out: true }`: each round "
           "tests on one speaker (500 clips), chooses λ by an inner leave-one-speaker-out over "
           "the other three and refits on them. **Pitch mismatch**: train on three speakers "
           "(1,350 train / 150 validation), test on the fourth speaker's 500 clips as recorded, "
           "shifted up and shifted down (one training per test set, the same training data and "
           f"seed), every speaker held out in turn. Up: {min(up):.0f}–{max(up):.0f} cents per "
           f"clip (mean {statistics.mean(up):.0f}); down: {min(down):.0f} to {max(down):.0f} "
           f"(mean {statistics.mean(down):.0f}); both uniform in 300–600 cents, seed 1 (the up "
           "shifts drawn first, as before the down ones existed); `sox -R -G IN OUT pitch CENTS` "
           "(repeatable dither; the rows up to stop 39 were made without -R, so their "
           "shifted clips differ from a new run's in the last bit), "
           "duration kept. About a third of the shifts each way go beyond G's ±400 cents; the "
           "patch encoder's zero padding of 8 bins covers up to 800 cents.",
           f"* Caveat (LOSO): {LOSO_CAVEAT}",
           ""]

    # ---- standard split ----
    if std:
        out += ["## Standard split (takes 0–4 of every speaker as the test set)", "",
                "| method | front end | features | test accuracy % | λ | ID rel. vs G | "
                "vs pitch | vs enum | vs enum pitch | featurize s | wall s | peak RSS MiB |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for method in ORDER:
            r = find(std, method)
            if r:
                out.append(f"| {name(r)} | {fe(r)} | {int(r['feature_dim']):,} | "
                           f"**{pct(r['accuracy'])}** | {float(r['lambda']):.0e} | "
                           f"{r['id_rel_mean']} | {r['id_rel_pitch'] or '—'} | "
                           f"{r['id_rel_enum'] or '—'} | {r['id_rel_enum_pitch'] or '—'} | "
                           f"{r['featurize_s']} | "
                           f"{r['wall_s']} | {r['peak_rss_mib']} |")
        out.append("")

    def sweep_tables(method, title, intro):
        sweep = [r for r in std if r["method"] == method]
        ms = sorted({int(r["templates"]) for r in sweep})
        ns = sorted({int(r["bins"]) for r in sweep})
        if len(sweep) < 2:
            return [], []
        t = [title, "", intro, "",
             "| templates M | " + " | ".join(f"N = {n}" for n in ns) + " |",
             "|---|" + "---|" * len(ns)]
        for m in ms:
            cells = []
            for n in ns:
                r = find(sweep, method, str(m), str(n))
                cells.append(pct(r["accuracy"]) if r else "—")
            t.append(f"| {m} | " + " | ".join(cells) + " |")
        t += ["", "Wall seconds / peak RSS MiB / features / solver / ID rel. vs enum pitch of "
              "each point:", "",
              "| templates M | " + " | ".join(f"N = {n}" for n in ns) + " |",
              "|---|" + "---|" * len(ns)]
        for m in ms:
            cells = []
            for n in ns:
                r = find(sweep, method, str(m), str(n))
                cells.append(f"{r['wall_s']} s / {r['peak_rss_mib']} / {int(r['feature_dim']):,}"
                             f" / {r['solver']} / {r['id_rel_enum_pitch'] or '—'}" if r else "—")
            t.append(f"| {m} | " + " | ".join(cells) + " |")
        t.append("")
        return t, sweep

    table, sweep = sweep_tables(
        "tf_patch_cdf",
        "## Fig. 3 analogue: TF patches with the CDF response, templates × bins (standard split)",
        "Test accuracy % (200 clips, so one clip is 0.5 points); one set of templates per "
        "point (Mroueh et al. average 30). The patches, padding and pooling of TF patches; "
        "the CDF response with N bins over [−2, 2] instead of the soft threshold.\n\n"
        "![accuracy vs templates, one line per number of bins](spoken_digits.png)")
    out += table
    with open(plot_path, "w") as f:
        if sweep:
            f.write("templates,bins,accuracy_pct\n")
            for n in sorted({int(r["bins"]) for r in sweep}):
                for m in sorted({int(r["templates"]) for r in sweep}):
                    r = find(sweep, "tf_patch_cdf", str(m), str(n))
                    if r:
                        f.write(f"{m},N = {n},{100 * float(r['accuracy']):.2f}\n")
    table, _ = sweep_tables(
        "cdf", "## CDF pooling over G, templates × bins (standard split)",
        "Test accuracy % of the earlier Fig. 3 analogue (`PROTOCOLS=cdf_sweep`).")
    out += table

    # ---- LOSO ----
    speakers = sorted({r["held_out"] for r in loso if r["held_out"] != "mean"} |
                      {r["held_out"] for r in mis})
    loso_runs = [r for r in loso if r["held_out"] == "mean"]
    loso_folds = {}
    for mean in loso_runs:
        loso_folds[mean["run"]] = {r["held_out"]: float(r["accuracy"]) for r in loso
                                   if r["run"] == mean["run"] and r["held_out"] != "mean"}
    if loso_runs:
        out += ["## Leave-one-speaker-out", "",
                "Test accuracy % on the held-out speaker (500 clips each); mean ± sample std over "
                f"the 4 rounds. Trainer: commit {', '.join(loso_bins)}.", "",
                "| method | front end | features | " + " | ".join(speakers) +
                " | mean ± std | wall s | peak RSS MiB |",
                "|---|---|---|" + "---|" * len(speakers) + "---|---|---|"]
        for mean in sorted(loso_runs, key=lambda r: (ORDER.index(r["method"]),
                                                      int(r["templates"] or 0))):
            folds = loso_folds[mean["run"]]
            cells = [pct(folds[s]) if s in folds else "—" for s in speakers]
            out.append(f"| {name(mean)} | {fe(mean)} | {int(mean['feature_dim']):,} | " +
                       " | ".join(cells) +
                       f" | **{pct(mean['accuracy'])}** ± {pct(mean['accuracy_std'])} | "
                       f"{mean['wall_s']} | {mean['peak_rss_mib']} |")
        out.append("")

    # ---- pitch mismatch ----
    lost = {}  # (method, "up"/"down") -> mean points lost
    if mis:
        held = sorted({r["held_out"] for r in mis})
        methods = [m for m in ORDER if any(r["method"] == m for r in mis)]
        out += ["## Pitch mismatch, up and down", "",
                "Trained on the other three speakers; test accuracy % on the held-out speaker "
                "as recorded → shifted up 300–600 cents / shifted down 300–600 cents.", "",
                "| method | front end | " + " | ".join(held) + " |",
                "|---|---|" + "---|" * len(held)]
        summary = []
        for method in methods:
            cells, acc = [], {"plain": [], "up": [], "down": []}
            for s in held:
                got = {t: find(mis, method, held_out=s, test_set=t) for t in acc}
                if all(got.values()):
                    for t in acc:
                        acc[t].append(float(got[t]["accuracy"]))
                cells.append(" → ".join(
                    [pct(got["plain"]["accuracy"]) if got["plain"] else "—",
                     " / ".join(pct(got[t]["accuracy"]) if got[t] else "—"
                                for t in ("up", "down"))]))
            row = find(mis, method)
            out.append(f"| {name(row)} | {fe(row)} | " + " | ".join(cells) + " |")
            if acc["plain"]:
                mp, mu, md = (statistics.mean(acc[t]) for t in ("plain", "up", "down"))
                lost[(method, "up")], lost[(method, "down")] = mp - mu, mp - md
                summary.append(f"| {name(row)} | {len(acc['plain'])} | {pct(mp)} | {pct(mu)} | "
                               f"{pct(md)} | **{100 * (mp - mu):.1f}** | "
                               f"**{100 * (mp - md):.1f}** |")
        out += ["", "Means over the held-out speakers (speakers with all three test sets):", "",
                "| method | speakers | as recorded | up | down | points lost up | "
                "points lost down |", "|---|---|---|---|---|---|---|"] + summary
        out += pairs_table(pairs_path, methods)
        mis_wall = sum(float(r["wall_s"]) for r in mis)
        mis_rss = max(float(r["peak_rss_mib"]) for r in mis)
        out += ["", f"{len(mis)} trainings, {mis_wall:.0f} s of wall time in all, peak RSS up to "
                f"{mis_rss:.0f} MiB (per run in the CSV).", ""]

    out += voices_section([r for r in rows if r["protocol"] == "voices"])

    # ---- targets ----
    out += ["## Issue 31's targets", "",
            "Per method: standard split ≥ 99 %; LOSO mean ≥ 90 % and every held-out speaker "
            "≥ 85 %; at most 5 points lost (mean over the held-out speakers) to the shifts up "
            "and to the shifts down. \"—\": not run.", "",
            "| method | standard ≥ 99 % | LOSO mean ≥ 90 % | every speaker ≥ 85 % | "
            "lost up ≤ 5 | lost down ≤ 5 | all |", "|---|---|---|---|---|---|---|"]
    for method in ORDER:
        cells, oks = [], []
        r = find(std, method)
        if r:
            oks.append(float(r["accuracy"]) >= 0.99)
            cells.append(f"{pct(r['accuracy'])}: {met(oks[-1])}")
        else:
            cells.append("—")
        mean = find(loso_runs, method)
        if mean:
            folds = loso_folds[mean["run"]]
            oks.append(float(mean["accuracy"]) >= 0.9)
            cells.append(f"{pct(mean['accuracy'])}: {met(oks[-1])}")
            low = min(folds, key=folds.get)
            oks.append(all(v >= 0.85 for v in folds.values()))
            cells.append(f"lowest {low} {pct(folds[low])}: {met(oks[-1])}")
        else:
            cells += ["—", "—"]
        for way in ("up", "down"):
            if (method, way) in lost:
                oks.append(lost[(method, way)] <= 0.05)
                cells.append(f"{100 * lost[(method, way)]:.1f}: {met(oks[-1])}")
            else:
                cells.append("—")
        if not oks:
            continue
        verdict = met(all(oks)) if len(oks) == 6 else (
            "**not met**" if not all(oks) else "(incomplete)")
        row = r or mean or find(mis, method)
        out.append(f"| {name(row)} | " + " | ".join(cells) + f" | {verdict} |")
    out.append("")

    out += ["## Reference figures (different data: not comparable number for number)", "",
            "* Kymatio's 1-D example \"Classification of spoken digit recordings\" (`examples/1d/plot_classif_torch.py`): log-scattering "
            "coefficients + logistic regression, **98.0 %** test accuracy on FSDD's standard "
            "split (takes 0–4 as the test set) with all **six** speakers (3,000 clips); ours "
            "has four speakers.",
            "* Mroueh et al. 2015 §6 / Fig. 3 and Appendix D.2 (Figs. 6–8), **TIDIGITS**: 326 "
            "speakers (men, women, children), isolated digits, 10-way RLS classification on CDF "
            "features whose random templates are pitch-shifted up and down by 400 cents and "
            "played at half and double speed; mean accuracy over 30 random template sets as a "
            "function of templates m and bins n, for the splits *Speaker* (test on unseen "
            "speakers), *Gender* (\"we test on a new gender\": \"an extreme train/test "
            "mismatch\"), *Utterance* (same speakers, new utterances: \"the easiest dataset … "
            "quite good even for a small number of bins\"), *Age (Women)* (train on women, "
            "test on children: \"performance remains strong\") and *Age (Men)* (train on men, "
            "test on children: \"the weakest performance … much worse than\" Age (Women)). "
            "The text extraction of the paper we have holds these figures only "
            "as images, so their accuracies are not quoted here: only the protocol and the "
            "captions' statements. Our *standard* split is their *Utterance* split's analogue, "
            "LOSO their *Speaker* split's (with 3 training speakers instead of hundreds), and "
            "the pitch mismatch a controlled stand-in for their *Gender* and *Age* mismatches.",
            ""]
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "notes",
                         "spoken_digits.md")
    if os.path.exists(notes):
        out += [open(notes).read().rstrip(), ""]
    open(md_path, "w").write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
