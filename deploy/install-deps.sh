#!/usr/bin/env bash
# Installs every Debian 12 package that invariant-serve needs to build, test and
# benchmark. Idempotent: packages already present are left alone.
#
#   deploy/install-deps.sh            everything CI and developers need: build,
#                                     tests, benchmarks, deploy checks, container test,
#                                     sanitizer and fuzz builds, FFTW for the opt-in
#                                     -DINVARIANT_FFT=FFTW and the tests on both FFTs
#   deploy/install-deps.sh --build    only what compiling the default build needs (the
#                                     image's builder stage; no FFTW)
#   deploy/install-deps.sh --quickstart  what compiling needs plus curl: the quick start
#                                     (deploy/quickstart.sh); deploy/test.sh adds the rest
#   deploy/install-deps.sh --runtime  only the shared libraries the binaries load
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev libopenblas-dev
  prometheus-cpp-dev libboost-dev libcurl4-openssl-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev rapidjson-dev
  libsndfile1-dev libsoxr-dev  # core/audio: WAV decoding, resampling
  libkissfft-dev  # core/audio's FFTs (BSD-3-Clause; also bench/audio's FFT correlation)
  libturbojpeg0-dev libspng-dev  # core/image: JPEG (TurboJPEG's API) and PNG decoding, no longjmp
)
# FFTW (GPL-2.0-or-later) is linked only by the opt-in -DINVARIANT_FFT=FFTW
# build and by the tests and bench that run core/audio on both FFT libraries
# (audio_fftw_test, invariant-bench-fft; skipped when it is missing): not by
# the default build, so not in --build, --quickstart or the image.
FFTW_PKGS=(libfftw3-dev)
# Sanitizer and fuzz builds (tests/sanitizers/ci.sh, bench/fuzz/run.sh): clang 14
# with its ASan/UBSan/TSan/libFuzzer runtimes, llvm-symbolizer for the reports.
# clang-format: the formatting check (tests/lint/check_format.sh, ctest label lint).
CHECK_PKGS=(clang libclang-rt-14-dev llvm clang-format)
TEST_PKGS=(
  openssl prometheus curl jq python3 python3-yaml yamllint gnuplot-nox dataset-fashion-mnist
  podman runc debootstrap uidmap python3-grpcio python3-grpc-tools python3-numpy python3-protobuf python3-pytest python3-venv python3-pip python3-setuptools python3-wheel
  libevent-dev libevhtp-dev wrk  # research/http_frontends: the other HTTP front ends, the load
  espeak-ng sox  # tests speak their own digits; research/repro/spoken_digits.sh shifts a voice's pitch
  python3-pil  # tests/python/test_image_reference.py: Pillow, the reference for decoding and resizing
  chromium  # model_page_browser_test opens the model page (report.html) in headless Chromium
)
RUNTIME_PKGS=(
  libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libopenblas0-pthread
  libprometheus-cpp-core1.0 libcurl4 zlib1g ca-certificates
  libsndfile1 libsoxr0 libkissfft-float131  # KissFFT: the default build links no FFTW
  libturbojpeg0 libspng0
)

case "${1:-}" in
  "") pkgs=("${BUILD_PKGS[@]}" "${FFTW_PKGS[@]}" "${TEST_PKGS[@]}" "${CHECK_PKGS[@]}") ;;
  --build) pkgs=("${BUILD_PKGS[@]}") ;;
  --quickstart) pkgs=("${BUILD_PKGS[@]}" curl) ;;
  --runtime) pkgs=("${RUNTIME_PKGS[@]}") ;;
  *) echo "install-deps: unknown argument '$1' (expected --build, --quickstart or --runtime)" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
