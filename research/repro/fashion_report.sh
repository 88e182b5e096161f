#!/usr/bin/env bash
# fashion_report.sh CSV: the Markdown of research/results/fashion.md from the CSV
# that research/repro/fashion.sh writes (plan read from the environment). Every
# number in it comes from the CSV; the paper's numbers are quoted as such.
set -euo pipefail
CSV="$1"

table=$(awk -F, 'NR > 1 {
  printf "| %s | %s | %s | %s | **%.2f** | %.0e | %.3g | %.3g | %.1f | %.3g | %.1f | %.3g | %.1f | %.0f | %.1f | %.0f |\n",
    $1, $2, $3, $4, 100 * $5, $6, $7, $8, 100 * $10, $12, 100 * $13, $14, $15, $16, $17, $18 }' "$CSV")

# The issue's targets: LGIKA-RF ≥ raw RF + 10 points at the same s (r = R);
# CDF pooling above raw RF at comparable size (best of each); the rotation
# discrepancy of every invariant model far below raw RF's.
targets=$(awk -F, -v R="$R" 'NR > 1 {
    if ($1 == "raw RF") { raw[$2] = $5; if ($5 > rawbest) rawbest = $5; if ($7 > rawid) rawid = $7
      if ($8 > rawmean) rawmean = $8; if (rawagree == "" || $10 < rawagree) rawagree = $10 }
    else {
      if ($1 == "LGIKA-RF" && $3 == R) { lg[$2] = $5; order[++n] = $2 }
      if ($1 == "CDF" && $5 > cdfbest) cdfbest = $5
      if ($7 > invid) { invid = $7; invname = $1 " " $2 " r=" $3 }
      if ($8 > invmean) { invmean = $8; meanname = $1 " " $2 " r=" $3 }
      if (invagree == "" || $10 < invagree) { invagree = $10; agreename = $1 " " $2 " r=" $3 }
    } }
  END {
    printf "* LGIKA-RF (r = %s) at least 10 points above raw RF with the same s:", R
    for (i = 1; i <= n; ++i) { s = order[i]; if (s in raw) {
      d = lg[s] - raw[s]; printf " s = %s: %+.2f points, %s;", s, 100 * d, (d >= 0.10 ? "yes" : "**no**") } }
    printf "\n* CDF pooling above raw RF (best of each): %.2f %% vs %.2f %%: %s.\n",
      100 * cdfbest, 100 * rawbest, (cdfbest > rawbest ? "yes" : "**no**")
    printf "* Rotation discrepancy, max: largest of any invariant model %.3g (%s) vs raw RF up to %.3g; mean: largest %.3g (%s) vs raw RF up to %.3g (ratio %.2f); label agreement: lowest %.1f %% (%s) vs raw RF down to %.1f %%.\n",
      invid, invname, rawid, invmean, meanname, rawmean, invmean / rawmean, 100 * invagree, agreename, 100 * rawagree }' "$CSV")

cat <<EOF
# Rotated Fashion-MNIST: LGIKA-RF, LGIKA-Nyström, CDF pooling and a second layer vs plain random Fourier features

The Rotated MNIST protocol of Raj, Kumar, Mroueh, Fletcher, Schölkopf,
*Local Group Invariant Representations via Orbit Embeddings* (AISTATS 2017,
§5), applied to Fashion-MNIST (Debian's \`dataset-fashion-mnist\`): every image
is rotated about its centre by its own angle uniform in [0, 2π) (bilinear,
train/data/rotated.h); the group is the rotations, uniform in [0, 2π), moved
onto the templates (docs/math.md §1–4).

Command: \`research/repro/fashion.sh\` with its default plan: SIZES="$SIZES",
NYS_SIZES="$NYS_SIZES", CDF_SIZES="$CDF_SIZES", R=$R, R_SWEEP="$R_SWEEP",
SECOND="$SECOND", SIGMA=$SIGMA, CDF_RANGE=$CDF_RANGE. Every model is one
\`build/bin/invariant-train\` run on a config derived from
\`train/configs/rotated_fashion_*.textproto\` (same data, split,
preprocessing and learner; the encoder of the row). Run on
$(date -u +%Y-%m-%d), one BLAS thread, on a 2-core machine shared with other
jobs: **${TOTAL} s in total** (the per-model times are in the table).

## Protocol and deviations from Raj et al.

* Train: 12,000 rotated images from the Fashion-MNIST training part; λ chosen
  on 2,000 further rotated training images (grid 1e-8..1 in decades); test:
  the 10,000 rotated Fashion-MNIST test images. (Rotated MNIST: 12k = 10k
  train + 2k validation, 50k test.) Fashion-MNIST is harder than MNIST, so
  only the gaps, not the absolute numbers, compare with Raj's.
* Inputs L2-normalised (CDF: centred, then normalised). Gaussian kernel
  bandwidth σ = $SIGMA for every RF and Nyström model: picked on the
  validation split from {0.3, 0.4, 0.6, 0.8, 1.0} with raw RF and LGIKA-RF at
  s = 1,000 (0.4 is best for both; the shipped configs had 0.6).
* raw RF: plain random Fourier features at the identity (r = 1, 2s
  features). LGIKA-RF: the same frequencies, each moved by r rotations, cos/sin
  sums (2s features). LGIKA-Nyström: s landmarks drawn from the training
  images, r rotations each, K_ZZ⁺ factor (≤ s features). CDF: m templates
  uniform on the sphere, r rotations, n = 10 (21 thresholds) over range
  $CDF_RANGE (picked from {0.06, 0.1, 0.15, 0.5} on validation; 0.5 wasted most
  bins because projections of a unit image on a random unit template have
  standard deviation ≈ 1/28). Second layer: a Gaussian random Fourier map
  (s2 frequencies, bandwidth σ2 picked from {0.05, 0.1, 0.2, 0.4, 0.8} at
  s = 1,000) on the LGIKA-RF features (Raj Remark 3), 2·s2 features.
* Raj used a von Mises distribution (κ = 0.2) over angles with r = 100 and
  s = 7,000 (second layer 17,000); here rotations are uniform with r = $R
  (plus the r sweep) and s ≤ 4,000, to keep the run short.
* Invariance discrepancy: **ID_rot** = max |f(x) − f(g·x)| over the first 200
  rotated test images × 16 rotations uniform in [0, 2π) × all 10 scores, the
  same group for every model (\`build/bin/invariant-repro-discrepancy\`);
  mean = the mean over those (the CSV also has rel = max / max |f|);
  **agree** = the fraction of such (x, g) pairs whose predicted class does
  not change. **ID_90 / agree_90**: the same for the rotations by 90°, 180°
  and 270°, which move pixels exactly (no interpolation, no lost corners), so
  what remains there is the model's own lack of invariance. **ID_own** is the training
  job's own certificate against the config's group (0 for raw RF, whose
  config group is the identity). Random-rotation features are only invariant
  up to the Monte-Carlo error of r draws (docs/math.md §3: ε + 1/r), hence ID > 0.

## Results

Featurize time and rows/s are the training job's (12,000 training rows);
total s is the whole invariant-train run (data, bank, featurize, solve,
evaluate on 2,000 + 10,000 rows, certificate).

| method | s or m | r | features | test acc % | λ | ID_rot max | ID_rot mean | agree % | ID_90 mean | agree_90 % | ID_own | featurize s | rows/s | solve s | total s |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
$table

Targets (issue 3), computed from the table:

$targets

For comparison, Raj et al. on Rotated MNIST (s = 7k, r = 100): raw RF
87.75 %, LGIKA-RF 96.83 %, LGIKA-RF + second layer 97.18 %, GICDF (CDF
pooling) 93.81 %: the invariant features gain 9.1 points over raw RF, the
second layer adds 0.35, and CDF pooling lands between raw RF and LGIKA-RF.
EOF
