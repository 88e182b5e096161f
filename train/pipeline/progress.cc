#include "train/pipeline/progress.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_format.h"

namespace invariant::train {

Progress::Progress(std::string stage, int64_t total)
    : stage_(std::move(stage)),
      total_(total),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Advance(int64_t rows) {
  done_ += rows;
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  const double s = seconds();
  const double rate = s > 0 ? done_ / s : 0;
  if (total_ > 0 && rate > 0) {
    std::fprintf(stderr, "\r%-10s %lld/%lld rows  %.0f rows/s  ETA %.0fs   ", stage_.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_), rate,
                 (total_ - done_) / rate);
  } else {
    std::fprintf(stderr, "\r%-10s %lld rows  %.0f rows/s   ", stage_.c_str(),
                 static_cast<long long>(done_), rate);
  }
}

double Progress::Finish() {
  const double s = seconds();
  if (tty_) std::fprintf(stderr, "\r");
  if (done_ > 0) {
    std::fprintf(stderr, "%-10s %lld rows in %.2fs (%.0f rows/s)%s\n", stage_.c_str(),
                 static_cast<long long>(done_), s, s > 0 ? done_ / s : 0.0, tty_ ? "        " : "");
  } else {
    std::fprintf(stderr, "%-10s done in %.2fs%s\n", stage_.c_str(), s, tty_ ? "             " : "");
  }
  return s;
}

double Progress::Finish(const std::string& line) {
  const double s = seconds();
  if (tty_) std::fprintf(stderr, "\r");
  std::fprintf(stderr, "%s%s\n", line.c_str(), tty_ ? "        " : "");
  return s;
}

std::string FeaturizeLine(int64_t rows, double features, double accumulate, double stage) {
  return absl::StrFormat(
      "featurize %lld training rows: features %.2fs (%.0f rows/s), accumulate Phi'Phi and Phi'Y "
      "%.2fs; stage %.2fs",
      static_cast<long long>(rows), features, features > 0 ? rows / features : 0.0, accumulate,
      stage);
}

}  // namespace invariant::train
