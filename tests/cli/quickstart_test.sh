#!/usr/bin/env bash
# Runs deploy/quickstart.sh end to end (minus package install and build) in a
# temporary work directory, twice (it must be idempotent), and checks its
# output; then checks that it fails cleanly on bad arguments and a missing
# training config. Needs BUILD_DIR/bin/{invariant-train,invariant-server,invariant-client}.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$REPO/build}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/quickstart-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
FAILED=0
verdict() {  # verdict NAME COMMAND...: PASS when the command succeeds
  local name="$1"; shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; FAILED=1; return 1; fi
}
check() {  # check NAME FILE PATTERN: the file holds a line matching the fixed string
  if grep -qF -- "$3" "$2"; then echo "PASS $1"; else echo "FAIL $1: no '$3' in output"; FAILED=1; fi
}

bash "$REPO/deploy/quickstart.sh" --skip-deps --skip-build --workdir="$WORK/w" >"$WORK/run1.out" 2>&1
rc=$?
verdict "first run exits 0 (got $rc)" test "$rc" -eq 0 || cat "$WORK/run1.out"
check "trained" "$WORK/run1.out" "training the default model"
check "ready line" "$WORK/run1.out" "invariant-server ready grpc_port="
check "health" "$WORK/run1.out" "SERVING"
check "metadata" "$WORK/run1.out" "model_name,default"
check "featurize header" "$WORK/run1.out" "f_0,f_1,f_2"
check "predict header" "$WORK/run1.out" "predicted_class,predicted_index,score_negative,score_positive"
# 4 rows from invariant-client predict, 1 from the REST call
check "predict rows metric" "$WORK/run1.out" 'invariant_rows_total{method="Predict",model="default"} 5'
check "featurize rows metric" "$WORK/run1.out" 'invariant_rows_total{method="Featurize",model="default"} 4'
check "REST infer agrees with the client" "$WORK/run1.out" "(the same as invariant-client predict)"
check "ready line has the REST port" "$WORK/run1.out" " http_port="
check "ok line" "$WORK/run1.out" "quickstart: OK"
check "the model page is served" "$WORK/run1.out" "bytes of HTML with its plots"
check "the model page's address" "$WORK/run1.out" "/models/default/1/report.html"
# What the quick start writes into its work directory (the repository root by
# default) must be ignored by git, so a clone stays clean after it.
WRITTEN="$(cd "$WORK/w" && ls -A | tr '\n' ' ')"
verdict "work directory holds only models/ and quickstart-* (got: $WRITTEN)" \
  test "$WRITTEN" = "models quickstart-rows.csv quickstart-server.log "
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  for f in models/default/1/model.bundle quickstart-rows.csv quickstart-server.log; do
    verdict "git ignores $f" git -C "$REPO" check-ignore -q "$f"
  done
fi
verdict "model in the work directory" test -f "$WORK/w/models/default/1/model.bundle"

# The server was stopped: its port no longer answers.
PORT="$(sed -n 's/.*invariant-server ready grpc_port=\([0-9]*\).*/\1/p' "$WORK/run1.out" | head -1)"
if [[ -n "$PORT" ]] && ! "$BUILD_DIR/bin/invariant-client" health --target="127.0.0.1:$PORT" --timeout=2 >/dev/null 2>&1; then
  echo "PASS server stopped"
else
  echo "FAIL server on port '$PORT' still answers"; FAILED=1
fi

bash "$REPO/deploy/quickstart.sh" --skip-deps --skip-build --workdir="$WORK/w" >"$WORK/run2.out" 2>&1
rc=$?
verdict "second run exits 0 (got $rc)" test "$rc" -eq 0 || cat "$WORK/run2.out"
check "second run reuses the model" "$WORK/run2.out" "default model: reusing"
verdict "no second model version" test ! -d "$WORK/w/models/default/2"

bash "$REPO/deploy/quickstart.sh" --bogus >"$WORK/bad.out" 2>&1
rc=$?
verdict "unknown argument exits 2 (got $rc)" test "$rc" -eq 2
TRAIN_CONFIG="$WORK/missing.textproto" bash "$REPO/deploy/quickstart.sh" --skip-deps --skip-build \
  --workdir="$WORK/fresh" >"$WORK/missing.out" 2>&1
rc=$?
verdict "missing config fails (got $rc)" test "$rc" -ne 0
check "missing config named" "$WORK/missing.out" "missing.textproto missing"

exit $FAILED
