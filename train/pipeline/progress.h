// progress.h: progress of long training stages on stderr.
//
// On a terminal a single line is redrawn with rows done, rate and ETA; when
// stderr is not a terminal (CI, logs) only one line per finished stage is
// printed. Not thread-safe: one Progress per stage, driven by one thread.
#ifndef INVARIANT_TRAIN_PIPELINE_PROGRESS_H_
#define INVARIANT_TRAIN_PIPELINE_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace invariant::train {

class Progress {
 public:
  // `total` rows expected (0 = unknown).
  Progress(std::string stage, int64_t total);
  // Adds `rows` done; redraws at most a few times a second on a terminal.
  void Advance(int64_t rows);
  // Prints the stage's final line ("featurize N rows in Xs (R rows/s)") and
  // returns its seconds.
  double Finish();
  // The same with the caller's final line instead (without the newline),
  // when the stage's rows/s would mislead (e.g. featurize with accumulation).
  double Finish(const std::string& line);
  double seconds() const;

 private:
  std::string stage_;
  int64_t total_;
  int64_t done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// The featurize stage's last line: the feature map's rate alone, the
// accumulation apart, and the whole stage (also reading the rows), e.g.
// "featurize 10000 training rows: features 5.10s (1961 rows/s), accumulate
// Phi'Phi and Phi'Y 28.29s; stage 33.39s".
std::string FeaturizeLine(int64_t rows, double features, double accumulate, double stage);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_PROGRESS_H_
