#!/usr/bin/env bash
# check_format.sh: every tracked C++ file (*.cc, *.h) of a git checkout is as
# clang-format formats it with the repository's .clang-format. Prints each
# file that differs and exits 1; exits 2 when clang-format is missing
# (deploy/install-deps.sh installs it).
#
#   tests/lint/check_format.sh REPO          the check
#   tests/lint/check_format.sh --self-test   proves the check finds a planted
#                                            unformatted file and passes a clean one
set -uo pipefail
command -v clang-format >/dev/null || { echo "check_format: clang-format not found" >&2; exit 2; }

check() {
  local repo="$1" bad
  git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    { echo "check_format: $repo is not a git checkout (the check reads its tracked files)" >&2; return 2; }
  # One clang-format call per 200 files; each file that differs is named by
  # its first "file:line:col: error:" line.
  bad="$(cd "$repo" && git ls-files -z '*.cc' '*.h' |
    xargs -0 -n 200 clang-format --dry-run -Werror --style=file 2>&1 |
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)"
  [[ -z "$bad" ]] && return 0
  sed 's/.*/check_format: & differs from clang-format (run: clang-format -i &)/' <<<"$bad"
  return 1
}

if [[ "${1:-}" == "--self-test" ]]; then
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  git -C "$tmp" init -q
  cp "$here/.clang-format" "$tmp/"
  printf 'int f(int x) { return x + 1; }\n' >"$tmp/clean.cc"
  git -C "$tmp" add clean.cc
  check "$tmp" >/dev/null || { echo "self-test: a clean file was refused"; exit 1; }
  printf 'int   g( int x ){return x;}\n' >"$tmp/messy.h"
  git -C "$tmp" add messy.h
  out="$(check "$tmp")" && { echo "self-test: an unformatted file passed"; exit 1; }
  [[ "$out" == *"messy.h differs"* && "$out" != *clean.cc* ]] || { echo "self-test: wrong report: $out"; exit 1; }
  echo "self-test: ok"
  exit 0
fi
check "${1:?usage: $0 REPO | --self-test}"
