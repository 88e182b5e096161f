#!/usr/bin/env bash
# Reproduces Raj et al. (AISTATS 2017), Fig. 1: the normalised kernel
# approximation error ‖K̂ − K‖/‖K‖ (spectral and Frobenius norms) of the local
# group-invariant random Fourier map ψ (LGIKA-RF) versus the number of random
# features s, for r = 20 and r = 40 group elements, against the orbit kernel
# K estimated from 70 sampled group elements; on synthetic Coulomb matrices
# (noisy-sort permutations, and uniform permutations) and on Xperm (block
# permutations).
#
# Writes research/results/kernel_approx.md (protocol, the paper's reported
# behaviour beside ours, deviations, tables, the command and its run time),
# kernel_approx.csv (mean and std over seeds), kernel_approx_runs.csv (one row
# per seed) and kernel_approx.png (gnuplot; without it the script says so and
# keeps the tables).
#
# Run time with the defaults: 2.5–6 minutes on the shared 2-core machine
# (one BLAS thread). Environment variables scale it up:
#   POINTS (500)  SEEDS (5)  S_VALUES (16,32,...,4096)  GROUP_COUNTS (20,40,all)
#   SIGMA_SCALES (1,0.25)  DATASETS (coulomb,coulomb-uniform,xperm)  NOISY_SORT_SIGMA (1)
#   BUILD (build directory, default build/)
# e.g. POINTS=1000 SEEDS=10 S_VALUES=16,64,256,1024,4096,16384 research/repro/kernel_approx.sh
# Extra arguments are passed to invariant-repro-kernel-approx.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/research/results}"
mkdir -p "$OUT"
# shellcheck source=research/repro/lib/build.sh
source "$ROOT/research/repro/lib/build.sh"
repro_build invariant-repro-kernel-approx
export OPENBLAS_NUM_THREADS=1  # timings are single-core

FLAGS=(
  --points="${POINTS:-500}"
  --seeds="${SEEDS:-5}"
  --s_values="${S_VALUES:-16,32,64,128,256,512,1024,2048,4096}"
  --group_counts="${GROUP_COUNTS:-20,40,all}"
  --sigma_scales="${SIGMA_SCALES:-1,0.25}"
  --datasets="${DATASETS:-coulomb,coulomb-uniform,xperm}"
  --noisy_sort_sigma="${NOISY_SORT_SIGMA:-1}"
  "$@"
)
start=$(date +%s)
"$BUILD/bin/invariant-repro-kernel-approx" --out_dir="$OUT" "${FLAGS[@]}" >/dev/null
seconds=$(($(date +%s) - start))
CMD="research/repro/kernel_approx.sh"
for v in POINTS SEEDS S_VALUES GROUP_COUNTS SIGMA_SCALES DATASETS NOISY_SORT_SIGMA; do
  [[ -n "${!v:-}" ]] && CMD="$v=${!v} $CMD"
done
[[ $# -gt 0 ]] && CMD="$CMD $*"

# ---- Plot: one panel per (σ scale, r); per data set the spectral (solid) and
# Frobenius (dashed) error against the 70-element reference, ± std over seeds,
# and its s → ∞ floor ‖K_r − K‖/‖K‖ (dotted, same colour).
plot() {
  local tmp
  tmp=$(mktemp -d)
  awk -F, -v dir="$tmp" '
    NR == 1 { next }
    $4 ~ /^sampled-/ && $3 !~ /^all-/ {
      key = $2 "_" $3
      if (!(key in seen)) { seen[key] = 1; print $2, $3 > (dir "/panels.unsorted") }
      f = dir "/" key "_" $1 "_" $5
      if ($6 == "inf") print $7 > (f ".floor")
      else print $6, $7, $8 > (f ".dat")
    }' "$OUT/kernel_approx.csv"
  sort -k1,1gr -k2,2n "$tmp/panels.unsorted" >"$tmp/panels"  # median σ first, r ascending
  local npanels scales rcount
  npanels=$(wc -l <"$tmp/panels")
  scales=$(cut -d' ' -f1 "$tmp/panels" | sort -u | wc -l)
  rcount=$(( (npanels + scales - 1) / scales ))
  local smin smax
  smin=$(echo "${S_VALUES:-16,32,64,128,256,512,1024,2048,4096}" | tr ',' '\n' | sort -n | head -1)
  smax=$(echo "${S_VALUES:-16,32,64,128,256,512,1024,2048,4096}" | tr ',' '\n' | sort -n | tail -1)
  {
    if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
      echo "set terminal pngcairo size $((560 * rcount)),$((420 * scales)) enhanced font ',10'"
    else
      echo "set terminal png size $((560 * rcount)),$((420 * scales))"
    fi
    echo "set output '$OUT/kernel_approx.png'"
    echo "set multiplot layout $scales,$rcount title 'LGIKA-RF kernel approximation (Raj et al. 2017, Fig. 1): ‖K̂ − K‖/‖K‖ vs s, K from 70 sampled elements; dotted: s → ∞ floor ‖K_r − K‖/‖K‖' noenhanced"
    echo "set logscale xy"
    echo "set grid"
    echo "set xrange [$smin * 0.8:$smax * 1.25]"
    echo "set xlabel 'random features s (ψ has 2s reals)' noenhanced"
    echo "set ylabel 'normalised error' noenhanced"
    echo "set key top right box opaque noenhanced font ',9'"
    local colors=("#0072B2" "#D55E00" "#009E73" "#CC79A7")
    while read -r scale r; do
      local sigma_note="median-heuristic σ"
      [[ "$scale" != 1 ]] && sigma_note="σ = $scale × median heuristic"
      echo "set title 'r = $r, $sigma_note' noenhanced"
      local parts=() i=0
      for ds in $(ls "$tmp" | sed -n "s/^${scale}_${r}_\\(.*\\)_spectral\\.dat$/\\1/p"); do
        local c=${colors[$((i % 4))]}
        for norm in spectral frobenius; do
          local f="$tmp/${scale}_${r}_${ds}_${norm}"
          local dt=1 pt=7
          [[ $norm == frobenius ]] && dt=2 pt=5
          parts+=("'$f.dat' using 1:2:3 with yerrorlines lw 2 dt $dt pt $pt ps 0.6 lc rgb '$c' title '$ds $norm'")
          if [[ -f "$f.floor" ]]; then
            parts+=("$(cat "$f.floor") with lines lw 1 dt 3 lc rgb '$c' notitle")
          fi
        done
        i=$((i + 1))
      done
      local joined="" part
      for part in "${parts[@]}"; do joined+="${joined:+, }$part"; done
      echo "plot $joined"
    done <"$tmp/panels"
    echo "unset multiplot"
  } >"$tmp/plot.gp"
  gnuplot "$tmp/plot.gp" || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  echo "wrote $OUT/kernel_approx.png"
}
if command -v gnuplot >/dev/null 2>&1; then
  plot
else
  echo "gnuplot not found: skipped $OUT/kernel_approx.png (apt-get install -y gnuplot-nox)"
fi

{
  cat <<EOF
# Kernel approximation of LGIKA-RF vs the number of random features (Raj et al. 2017, Fig. 1)

Reproduction of Raj, Kumar, Mroueh, Fletcher, Schölkopf, *Local Group
Invariant Representations via Orbit Embeddings* (AISTATS 2017), Fig. 1:
normalised kernel-approximation error ‖K̂ − K‖/‖K‖ in spectral and Frobenius
norm versus the number of random features s, for r = 20 and r = 40 group
transformations, where K is the orbit-distribution kernel
k_{q,G}(x, x') = (1/70²) Σ_{g,g'} k(g·x, g'·x') estimated from 70 sampled
transformations (Gaussian base kernel k) and K̂_ij = ⟨ψ(x_i), ψ(x_j)⟩ with
ψ(x) = 1/(r√s)·[Σ_k exp(−i⟨ω_j, g_k·x⟩)]_j (Eq. 7), served as 2s reals.

Command: \`${CMD}\` (driver \`build/bin/invariant-repro-kernel-approx\`, source
\`research/repro/kernel_approx_main.cc\`; flags \`${FLAGS[*]}\`). Run on
$(date -u +%Y-%m-%d), one BLAS thread, on a 2-core machine shared with other
jobs: ${seconds} s.

![error vs s](kernel_approx.png)

## Protocol: the paper's and ours

| | Raj et al. 2017, Fig. 1 (§4.1 text) | here |
|---|---|---|
| data | QM7 Coulomb matrices (7,165 molecules, 23 × 23); how many enter the kernel matrix is not stated | (a) **coulomb** and **coulomb-uniform**: the first N = ${POINTS:-500} molecules of the synthetic generator \`train/data/coulomb.h\` (4–23 atoms, seed 2, as \`research/repro/coulomb/\`), 529 inputs; (b) **xperm**: N = ${POINTS:-500} random rows of Xperm (\`train/data/xperm.h\`), 40 inputs |
| group distribution | Fig. 1's paragraph: "70 group elements randomly sampled from the permutation group"; the QM7 features of §4.1 sample permutations "using the same scheme as in [28]" (Montavon et al.'s noisy sort). Which of the two Fig. 1 used is not stated | coulomb: the noisy sort, rows ordered by ‖row‖ + N(0, ν²), ν = ${NOISY_SORT_SIGMA:-1} (Montavon's and Raj's value), input dependent: 70 draws per molecule for K, ψ draws its r per molecule seeded by the row (Placement input, as served); **coulomb-uniform**: the same molecules, uniform row/column permutations of the 23 × 23 matrix, 70 draws shared by all molecules for K, ψ's r draws moved onto the frequencies; xperm: uniform over the 120 permutations of the 5 blocks, 70 draws shared by all rows for K, ψ's r draws moved onto the frequencies |
| "true" kernel K | 70 sampled group elements, Gaussian base kernel | the same: (1/70²) Σ_{a,b} exp(−‖g_a·x − g'_b·x'‖²/2σ²), one draw of the 70 per data set; on xperm also the **exact** kernel over all 120 permutations |
| bandwidth σ | not stated | the median of ‖g·x_i − g'·x_j‖ over pairs (the median heuristic) and a quarter of it (SIGMA_SCALES): at the median heuristic the kernel matrices are close to rank one (‖K‖₂ ≈ ‖K‖_F), at a quarter they are not, except on coulomb-uniform (‖K‖₂ and ‖K‖_F under each heading below) |
| ψ | Eq. 7, r = 20 and 40 elements drawn from q | the production LGIKA-RF encoder: an \`invariant.v1.EncoderSpec\` (random_fourier + group) drawn by its kind (\`core/model/encoder_kinds.h\`) and rebuilt by \`MakeFeaturizer\` (\`core/model/featurizer_factory.h\`), as \`invariant-train\` and the server do; r = 20 and 40, and on xperm also r = all 120 permutations (\`group.enumerate\`; not plotted) |
| s | not stated (the x axis of Fig. 1) | ${S_VALUES:-16,32,64,128,256,512,1024,2048,4096}; within one seed the frequencies and ψ's elements are nested (one growing feature set) |
| repetitions | not stated (one curve per setting) | ${SEEDS:-5} seeds (frequencies and ψ's r elements redrawn; K fixed); mean ± std over seeds |
| norms | spectral and Frobenius of K̂ − K, divided by the same norm of K | the same; spectral norm = the largest absolute eigenvalue of the symmetric K̂ − K (Eigen SelfAdjointEigenSolver) |

Beyond the paper, for every seed the driver also computes K_r = (1/r²) Σ
k(g_a·x, g'_b·x') over **ψ's own r elements** (redrawn exactly as the
encoder draws them), the limit of K̂ as s → ∞. ‖K̂ − K_r‖ is the
random-frequency error alone, and ‖K_r − K‖ (row "∞" / the dotted lines) is
the floor the paper's curves approach: the group-sampling error that more
features cannot remove (the 1/r term of Theorem 3.1). On xperm the exact
kernel K_G over all 120 permutations is a third reference, and r = all puts
every permutation into ψ, so that K_r = K_G and K̂ converges to K_G with no
floor (the ctest smoke test asserts this on a small problem).

## The paper's reported behaviour beside ours

The seed text gives no numbers for Fig. 1, only its caption and one
sentence: "The normalized error for all the cases goes down with the number
of random Fourier features which is in line with our theoretical convergence
results." Ours, on the mean over seeds against the 70-element reference:

| | Raj et al. 2017 | here |
|---|---|---|
EOF
  awk '/^\* error at s/ { sub(/^\* /, ""); print "| error goes down with s (both norms, every r) | yes, \"for all the cases\" (r = 20, 40) | " $0 " curves |" }
       /^\* falls at every step/ { sub(/^\* /, ""); print "| monotone in s | not stated | " $0 " curves (mean over seeds) |" }
       /^\* still above its/ { sub(/^\* /, ""); print "| limit as s → ∞ | Theorem 3.1: sup error ≤ ε + 1/r, a floor from sampling r elements | " $0 " curves; the floors are in the summary below |" }
       /^\* the larger r/ { sub(/^\* /, ""); print "| r = 40 vs r = 20 | two panels, not compared in the text | " $0 " |" }' \
    "$OUT/kernel_approx_summary.md"
  cat <<EOF

Summary against the paper's reference K (70 sampled elements); "s → ∞" is
‖K_r − K‖/‖K‖ for ψ's own r elements; slope = least-squares slope of
log(mean error) against log s (−0.5 is the Monte Carlo rate):

EOF
  sed -n '/^| data/,/^$/p' "$OUT/kernel_approx_summary.md"
  cat <<EOF

## Findings

* **The paper's behaviour holds.** Against the 70-element reference the
  error falls with s in both norms for r = 20 and r = 40 on every data set
  and bandwidth, at close to the Monte Carlo rate s^(−1/2) (slopes in the
  summary) until it nears its floor.
* **Two errors, only one of which s removes.** Against K_r (ψ's own r
  elements) the error is the random-frequency error alone and falls like
  s^(−1/2) without a floor (the "limit-r" tables). What remains as s → ∞ is
  ‖K_r − K‖, the group-sampling error, the 1/r term of Theorem 3.1: it is
  smaller for r = 40 than for r = 20 in every case, and it is where the
  Frobenius curves of xperm at a quarter of the median bandwidth flatten
  (r = 20).
* **The noisy sort at ν = 1 hardly samples.** The row norms of different
  atoms mostly differ by far more than 1 (a sulphur diagonal alone is
  0.5·16^2.4 ≈ 388; the zero rows of the padding tie, but permuting them
  changes nothing), so noise of 1 swaps few rows: the 70 draws and ψ's r
  draws are nearly the same permutation, ‖K_r − K‖ is a fifth or less of
  the error at the largest s, and the noisy-sort Coulomb curves are mostly
  random-Fourier error. With uniform permutations (coulomb-uniform) the
  floor is larger and r = 40 about halves the error at the largest s.
* **Bandwidth sets the difficulty.** At the median heuristic the kernels
  are close to rank one and every error is small; at a quarter of it the
  same s gives errors several times larger and the group-sampling floor
  becomes visible.

## Deviations from the paper

* **Data.** QM7 is not available to this repository; the Coulomb matrices
  come from the synthetic generator of \`train/data/coulomb.h\` (random
  molecules of the same size range and charges). Xperm is an extra data set
  with a small, exactly enumerable group.
* **Unstated parameters chosen here:** the number of points N, the values of
  s, the bandwidth σ (median heuristic and a quarter of it), the number of
  repetitions. The paper's figure may have used others; its curves' values
  cannot be compared, only their behaviour.
* **Reference kernel drawn once.** K uses one draw of the 70 elements
  (\`--kernel_seed\`); the ± covers ψ's randomness only.
* **Nested s.** Within one seed the frequencies for s are the first s of
  those for the largest s (the encoder draws them from one seeded stream),
  as one growing feature set; seeds are independent.
* **The reference itself is an estimate.** On xperm, where the exact
  kernel K_G is computable, the 70-element K differs from K_G (the line
  "The sampled-70 reference against it" under each xperm heading): little
  at the median-heuristic σ, much more at a quarter of it. For
  a uniform q, k(g_a·x, g_b·x') = k(x, g_a⁻¹g_b·x'), and the relative
  element g_a⁻¹g_b is the identity for the 70 pairs a = b (and for repeated
  draws), so K weighs the identity by about 1/70 + 1/120 instead of 1/120
  (the 1/r term of Theorem 3.1 at r = 70); with a narrow kernel, where
  k(x, h·x') falls off fast with the blocks h moves, that bias is large on
  the diagonal. Hence ψ with all 120 permutations (r = all) converges to
  K_G, not to K, and keeps an error against K that no number of features
  removes.

## Detailed tables

Three references per data set: the paper's K (70 sampled elements), the
exact kernel K_G (xperm only) and K_r (ψ's own r elements, its s → ∞ limit).

EOF
  cat "$OUT/kernel_approx_tables.md"
} >"$OUT/kernel_approx.md"
rm -f "$OUT/kernel_approx_tables.md" "$OUT/kernel_approx_summary.md"
echo "wrote $OUT/kernel_approx.md, kernel_approx.csv and kernel_approx_runs.csv"
