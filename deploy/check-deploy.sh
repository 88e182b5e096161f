#!/usr/bin/env bash
# Static checks of everything under deploy/ plus the Dockerfile; no cluster,
# container engine or network needed. Prints one PASS/FAIL line per check and
# exits non-zero if any check failed.
#   promtool check config / check rules / test rules (with synthetic series)
#   tests/deploy/check_k8s.py     Kubernetes manifests: fields, probes, sizing,
#                                 selectors, HPA target, the sharded Indexed Job
#                                 (its memory limit against invariant-train plan),
#                                 ports, images
#   tests/deploy/check_compose.py compose.yaml: training before serving, ports, scrape target
#   tests/deploy/test_check_k8s.py the checkers reject broken copies of the manifests
#   Dockerfile essentials, shell syntax, yamllint (when installed)
# Needs: prometheus (promtool), python3, python3-yaml, a built invariant-train
# (build/bin, or INVARIANT_TRAIN); yamllint optional.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 2
FAILED=0
LOG="$(mktemp /tmp/check-deploy.XXXXXX)"
trap 'rm -f "$LOG"' EXIT

# run NAME COMMAND...: one PASS/FAIL line; the command's output only on failure.
run() {
  local name="$1"
  shift
  if "$@" >"$LOG" 2>&1; then
    echo "PASS $name"
  else
    echo "FAIL $name"
    sed 's/^/    /' "$LOG"
    FAILED=1
  fi
}
# run_lines NAME COMMAND...: the command prints its own PASS/FAIL lines.
run_lines() {
  local name="$1"
  shift
  if ! "$@"; then
    echo "FAIL $name (see FAIL lines above)"
    FAILED=1
  fi
}

if command -v promtool >/dev/null; then
  run "promtool check config deploy/prometheus/prometheus.yml" \
    promtool check config deploy/prometheus/prometheus.yml
  run "promtool check rules deploy/prometheus/{recording,alert}_rules.yml" \
    promtool check rules deploy/prometheus/recording_rules.yml deploy/prometheus/alert_rules.yml
  run "promtool test rules tests/deploy/prometheus_rules_test.yml" \
    promtool test rules tests/deploy/prometheus_rules_test.yml
else
  echo "FAIL promtool not installed (apt-get install prometheus)"
  FAILED=1
fi

# The sharded Job's memory limit is checked against `invariant-train plan` on
# its config: the built trainer (ctest sets INVARIANT_TRAIN).
export INVARIANT_TRAIN="${INVARIANT_TRAIN:-$REPO/build/bin/invariant-train}"
if [[ ! -x "$INVARIANT_TRAIN" ]]; then
  echo "FAIL invariant-train not built at $INVARIANT_TRAIN (build it, or set INVARIANT_TRAIN)"
  FAILED=1
fi
if python3 -c 'import yaml' 2>/dev/null; then
  run_lines "k8s manifests" python3 tests/deploy/check_k8s.py --dockerfile=Dockerfile \
    --train_bin="$INVARIANT_TRAIN" deploy/k8s
  run_lines "compose" python3 tests/deploy/check_compose.py deploy/compose.yaml deploy/prometheus/prometheus.yml
  run "checkers reject broken manifests (tests/deploy/test_check_k8s.py)" python3 tests/deploy/test_check_k8s.py
else
  echo "FAIL python3-yaml not installed (apt-get install python3-yaml)"
  FAILED=1
fi

dockerfile_has() { grep -Eq -e "$1" Dockerfile; }
run "Dockerfile: stages builder, runtime-base, runtime-prebuilt, runtime (last = default)" \
  bash -c 'grep -E "^FROM " Dockerfile | awk "{print \$NF}" | tr "\n" " " | grep -qx "builder runtime-base runtime-prebuilt runtime "'
run "Dockerfile: builder disables tests and benchmarks" \
  dockerfile_has '-DINVARIANT_BUILD_TESTS=OFF -DINVARIANT_BUILD_BENCH=OFF'
run "Dockerfile: runtime installs only runtime libraries" dockerfile_has 'install-deps.sh --runtime'
# The image links KissFFT (BSD-3-Clause) and no FFTW (GPL-2.0-or-later): the
# builder configures INVARIANT_FFT=KISSFFT, and neither the packages it
# installs (--build) nor the runtime ones (--runtime) name FFTW.
pkg_list() { sed -n "/^$1=(/,/^)/p" deploy/install-deps.sh | sed 's/#.*//'; }
run "Dockerfile: KissFFT, no FFTW (GPL) in the image's packages" \
  bash -c "grep -q -- '-DINVARIANT_FFT=KISSFFT' Dockerfile &&
    $(declare -f pkg_list); pkg_list RUNTIME_PKGS | grep -qw libkissfft-float131 &&
    ! pkg_list RUNTIME_PKGS | grep -qi fftw && ! pkg_list BUILD_PKGS | grep -qi fftw"
run "Dockerfile: non-root USER" bash -c 'grep -E "^USER " Dockerfile | grep -vqE "^USER (root|0)(:|$)"'
run "Dockerfile: HEALTHCHECK via invariant-client health" \
  bash -c 'grep -A1 "^HEALTHCHECK " Dockerfile | grep -q "invariant-client health --target=127.0.0.1:\${INVARIANT_GRPC_PORT}" && grep -q "^ENV INVARIANT_GRPC_PORT=8500" Dockerfile'
run "Dockerfile: EXPOSE 8500 8501 9100, VOLUME /models" \
  bash -c 'grep -Eq "^EXPOSE 8500 8501 9100" Dockerfile && grep -Eq "^VOLUME \[\"/models\"\]" Dockerfile'
run ".dockerignore excludes .git and build dirs" \
  bash -c 'grep -qx ".git" .dockerignore && grep -qx "build" .dockerignore && grep -qx "build-\*" .dockerignore'

run "bash -n deploy/*.sh" bash -c 'for f in deploy/*.sh; do bash -n "$f" || exit 1; done'
if command -v shellcheck >/dev/null; then
  run "shellcheck deploy/*.sh" shellcheck -S warning deploy/*.sh
fi
if command -v yamllint >/dev/null; then
  run "yamllint deploy/ tests/deploy/" yamllint -s -c tests/deploy/yamllint.yml deploy tests/deploy
else
  echo "INFO yamllint not installed: YAML style not linted (apt-get install yamllint)"
fi

if [[ $FAILED == 0 ]]; then echo "check-deploy: ALL PASS"; else echo "check-deploy: FAILURES above"; fi
exit $FAILED
